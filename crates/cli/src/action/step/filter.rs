//! The filter step: a catalog filtered as catalog-filter v0.0.5 does
//! ([`crate::catalog::filter`]), checked, and written as a folder a build step reads.
//! `catalog filter`, `catalog build --filter` and `catalog mirror --filter` share it.
//!
//! Why the check: catalog-filter's output can hold what opm refuses (a deprecation naming a
//! channel the range emptied, a channel whose head is no longer unique). The filtered catalog is
//! written, read back and run through every `catalog validate` rule; any error refuses the
//! filter with the rule's message, so a filtered catalog is never published broken.

use super::build::{CatalogBuildError, CatalogBuildRunError};
use crate::action::catalog_render::RenderError;
use crate::catalog::filter::config::{self, ConfigError, FilterConfig};
use crate::catalog::filter::{FilterError, filter};
use crate::catalog::load;
use crate::catalog::model::DeclarativeConfig;
use crate::catalog::write::{self, Format};
use crate::findings::Severity;
use crate::transport::RegistryOptions;
use std::path::{Path, PathBuf};

/// What `catalog filter` was asked for.
#[derive(Debug, Clone, Default)]
pub struct FilterOptions {
    /// The configuration file (`FilterConfiguration` or `ImageSetConfiguration`).
    pub config: PathBuf,
    /// `--catalog REF`: the `mirror.operators[]` entry of an `ImageSetConfiguration`.
    pub catalog: Option<String>,
    /// `--full`: every bundle of the selected channels.
    pub full: bool,
    /// Output format.
    pub format: Format,
    /// Registry access for image sources.
    pub registry: RegistryOptions,
    /// `--no-dependencies`: keep the selection without what its bundles require.
    pub no_dependencies: bool,
    /// The configuration already read (and narrowed: `catalog mirror --config --allow-missing`
    /// drops the packages a catalog lacks), used instead of reading `config` again.
    pub prepared: Option<FilterConfig>,
}

/// The filtered catalog, checked, and the notes for stderr.
#[derive(Debug, Default)]
pub struct FilterOutput {
    /// What remains.
    pub config: DeclarativeConfig,
    /// The bytes `catalog render` would write for it.
    pub bytes: Vec<u8>,
    /// Warnings: ignored configuration keys, bundles kept outside a range, validation warnings.
    pub warnings: Vec<String>,
    /// Bundles the dependency closure added, each with the bundle it was added for.
    pub added: Vec<crate::catalog::filter::dependencies::Added>,
}

/// Why `catalog filter` failed.
#[derive(Debug, thiserror::Error)]
pub enum FilterCatalogError {
    /// The configuration cannot be read or is wrong (file and line named).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The source cannot be read.
    #[error(transparent)]
    Source(#[from] RenderError),
    /// The filter cannot be applied to this catalog.
    #[error("{0}")]
    Filter(FilterError),
    /// The result would not be a valid catalog; the findings say why.
    #[error("the filtered catalog would not pass `catalog validate`, so nothing was written:\n{0}")]
    Invalid(String),
    /// The catalog could not be encoded.
    #[error("{0}")]
    Write(String),
    /// `--output-dir` already holds files.
    #[error("--output-dir {} is not empty: give a new or empty folder", .0.display())]
    NotEmpty(PathBuf),
    /// A file of the filtered catalog could not be written.
    #[error(transparent)]
    Output(crate::fsio::FsError),
}

impl FilterCatalogError {
    /// Whether this is a verdict about the catalog and filter (exit 1) rather than a usage or
    /// I/O problem (exit 2).
    pub fn is_verdict(&self) -> bool {
        matches!(
            self,
            FilterCatalogError::Invalid(_)
                | FilterCatalogError::Filter(FilterError::Catalog(_))
                | FilterCatalogError::Filter(FilterError::Dependencies(_))
        )
    }
}

/// Reads the configuration (`opts.config`, with `opts.full` added).
pub fn read_config(opts: &FilterOptions) -> Result<FilterConfig, ConfigError> {
    let mut fc = match &opts.prepared {
        Some(fc) => fc.clone(),
        None => config::read(&opts.config, opts.catalog.as_deref())?,
    };
    fc.full |= opts.full;
    fc.no_dependencies |= opts.no_dependencies;
    Ok(fc)
}

/// Filters an already loaded catalog and checks the result (see the module documentation).
pub fn filter_config(
    cfg: DeclarativeConfig,
    fc: &FilterConfig,
    format: Format,
) -> Result<FilterOutput, FilterCatalogError> {
    let mut warnings = fc.warnings.clone();
    let filtered = filter(cfg, fc).map_err(|e| match e {
        FilterError::Config(c) => FilterCatalogError::Config(c),
        other => FilterCatalogError::Filter(other),
    })?;
    warnings.extend(filtered.warnings);
    let mut bytes = Vec::new();
    write::write_config(&mut bytes, &filtered.config, format)
        .map_err(|e| FilterCatalogError::Write(e.to_string()))?;
    check(&bytes, format, &mut warnings)?;
    Ok(FilterOutput {
        config: filtered.config,
        bytes,
        warnings,
        added: filtered.added,
    })
}

/// The written catalog, read back and validated: errors refuse it, warnings are passed on.
fn check(
    bytes: &[u8],
    format: Format,
    warnings: &mut Vec<String>,
) -> Result<(), FilterCatalogError> {
    let name = match format {
        Format::Json => "filtered.json",
        Format::Yaml => "filtered.yaml",
    };
    let loaded = load::load_bytes(name, bytes);
    if !loaded.config.has_olm_blobs() {
        return Err(FilterCatalogError::Invalid(
            "nothing remains: the filter keeps no package".into(),
        ));
    }
    let mut diags = loaded.diagnostics;
    diags.extend(crate::validate::catalog::validate(&loaded.config));
    let mut errors = Vec::new();
    for d in diags {
        // A kept entry naming a bundle the filter left out is what filtering does, not news.
        if matches!(
            d.rule.id(),
            "catalog/replaces-unknown" | "catalog/skips-unknown"
        ) {
            continue;
        }
        let text = format!("{}[{}] {}", d.severity, d.rule.id(), d.message);
        match d.severity {
            Severity::Error => errors.push(text),
            _ => warnings.push(format!("filtered catalog: {text}")),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(FilterCatalogError::Invalid(errors.join("\n")))
    }
}

/// Writes the filtered catalog into `dir` as a catalog folder: `<package>/catalog.json` (or
/// `.yaml`) per package, each as `catalog render` writes it, every file staged first and
/// renamed into place only when all could be written. `dir` must be missing or empty, so no
/// file of another catalog is mixed in.
pub fn write_dir(
    dir: &Path,
    cfg: &DeclarativeConfig,
    format: Format,
) -> Result<(), FilterCatalogError> {
    if let Ok(mut entries) = std::fs::read_dir(dir)
        && entries.next().is_some()
    {
        return Err(FilterCatalogError::NotEmpty(dir.to_path_buf()));
    }
    let ext = match format {
        Format::Json => "json",
        Format::Yaml => "yaml",
    };
    let mut packages: Vec<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
    packages.sort_unstable();
    packages.dedup();
    let mut staged = Vec::new();
    for p in packages {
        let part = DeclarativeConfig {
            packages: cfg
                .packages
                .iter()
                .filter(|x| x.name == p)
                .cloned()
                .collect(),
            channels: cfg
                .channels
                .iter()
                .filter(|x| x.package == p)
                .cloned()
                .collect(),
            bundles: cfg
                .bundles
                .iter()
                .filter(|x| x.package == p)
                .cloned()
                .collect(),
            deprecations: cfg
                .deprecations
                .iter()
                .filter(|x| x.package == p)
                .cloned()
                .collect(),
            others: cfg
                .others
                .iter()
                .filter(|x| x.package == p)
                .cloned()
                .collect(),
        };
        let mut bytes = Vec::new();
        write::write_config(&mut bytes, &part, format)
            .map_err(|e| FilterCatalogError::Write(e.to_string()))?;
        let path = dir.join(p).join(format!("catalog.{ext}"));
        staged.push(
            crate::fsio::stage(&path, &bytes, crate::fsio::Options::edit(0o644))
                .map_err(FilterCatalogError::Output)?,
        );
    }
    let loose: Vec<_> = cfg
        .others
        .iter()
        .filter(|x| x.package.is_empty())
        .cloned()
        .collect();
    if !loose.is_empty() {
        let part = DeclarativeConfig {
            others: loose,
            ..Default::default()
        };
        let mut bytes = Vec::new();
        write::write_config(&mut bytes, &part, format)
            .map_err(|e| FilterCatalogError::Write(e.to_string()))?;
        let path = dir.join(format!("catalog.{ext}"));
        staged.push(
            crate::fsio::stage(&path, &bytes, crate::fsio::Options::edit(0o644))
                .map_err(FilterCatalogError::Output)?,
        );
    }
    for s in staged {
        s.commit().map_err(FilterCatalogError::Output)?;
    }
    Ok(())
}

/// Filters the catalog folder `dir` with `opts` into a new folder in `spool` (one file per
/// package, as `catalog filter --output-dir` writes it) and returns that folder and the
/// filter's warnings. A catalog image as source goes through [`super::build::from_image`] instead, which
/// calls [`filter_folder_with`] on the catalog it takes out of the image.
pub fn filter_folder(
    dir: &Path,
    opts: &FilterOptions,
    spool: &Path,
) -> Result<(PathBuf, Vec<String>), CatalogBuildRunError> {
    let wrap = |e: FilterCatalogError| CatalogBuildRunError::Filter {
        dir: dir.to_path_buf(),
        source: Box::new(e),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => {
            return Err(CatalogBuildRunError::Build {
                dir: dir.to_path_buf(),
                source: Box::new(CatalogBuildError::NotAFolder {
                    path: dir.to_path_buf(),
                    reason: "--filter takes a catalog folder or a catalog image".into(),
                }),
            });
        }
    }
    let fc = read_config(opts).map_err(|e| wrap(e.into()))?;
    let load = crate::catalog::load::LoadOptions::default();
    filter_folder_with(dir, &fc, opts.format, spool, dir, &load)
}

/// [`filter_folder`] with the configuration already read (an oc-mirror
/// `ImageSetConfiguration` entry a caller mapped itself, say); `shown` names the source in
/// errors (the folder, or the image the catalog came from); `load` says how the folder is read
/// (confined to it when it came out of an image).
pub fn filter_folder_with(
    dir: &Path,
    fc: &crate::catalog::filter::config::FilterConfig,
    format: crate::catalog::write::Format,
    spool: &Path,
    shown: &Path,
    load: &crate::catalog::load::LoadOptions,
) -> Result<(PathBuf, Vec<String>), CatalogBuildRunError> {
    let wrap = |e: FilterCatalogError| CatalogBuildRunError::Filter {
        dir: shown.to_path_buf(),
        source: Box::new(e),
    };
    let loaded = crate::catalog::load::load_dir_with(dir, load).map_err(|source| {
        CatalogBuildRunError::Validate {
            dir: shown.to_path_buf(),
            source: Box::new(source),
        }
    })?;
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::findings::Severity::Error)
        .map(|d| format!("{}[{}] {}", d.severity, d.rule.id(), d.message))
        .collect();
    if !errors.is_empty() {
        return Err(wrap(FilterCatalogError::Invalid(errors.join("\n"))));
    }
    let out = filter_config(loaded.config, fc, format).map_err(wrap)?;
    let target = spool.join("filtered");
    write_dir(&target, &out.config, format).map_err(wrap)?;
    let mut notes = out.warnings;
    notes.extend(out.added.iter().map(|a| a.to_string()));
    Ok((target, notes))
}
