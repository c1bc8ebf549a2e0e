//! `catalog filter`: read a catalog from any source, filter it as catalog-filter v0.0.5 does
//! ([`crate::catalog::filter`]), check that what remains is a catalog opm accepts, and write it
//! as `catalog render` writes a catalog.
//!
//! Why the check: catalog-filter's output can hold what opm refuses (a deprecation naming a
//! channel the range emptied, a channel whose head is no longer unique). The filtered catalog is
//! written, read back and run through every `catalog validate` rule; any error refuses the
//! filter with the rule's message, so a filtered catalog is never published broken.

use crate::action::catalog_render::{RenderError, RenderOptions, load_source};
use crate::catalog::filter::config::{self, ConfigError, FilterConfig};
use crate::catalog::filter::{FilterError, filter};
use crate::catalog::load;
use crate::catalog::model::DeclarativeConfig;
use crate::catalog::write::{self, Format};
use crate::errors::error_chain;
use crate::findings::Severity;
use crate::location::Location;
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
    /// Writing failed.
    #[error("{0}")]
    Write(String),
}

impl FilterCatalogError {
    /// Whether this is a verdict about the catalog and filter (exit 1) rather than a usage or
    /// I/O problem (exit 2).
    pub fn is_verdict(&self) -> bool {
        matches!(
            self,
            FilterCatalogError::Invalid(_) | FilterCatalogError::Filter(FilterError::Catalog(_))
        )
    }
}

/// Reads the configuration (`opts.config`, with `opts.full` added).
pub fn read_config(opts: &FilterOptions) -> Result<FilterConfig, ConfigError> {
    let mut fc = config::read(&opts.config, opts.catalog.as_deref())?;
    fc.full |= opts.full;
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

/// `catalog filter SOURCE`: loads the source and filters it.
pub fn filter_catalog(
    source: &Location,
    opts: &FilterOptions,
) -> Result<FilterOutput, FilterCatalogError> {
    let fc = read_config(opts)?;
    let render = RenderOptions {
        format: opts.format,
        registry: opts.registry.clone(),
        ..Default::default()
    };
    // A filter naming packages needs only those (and the names of the others, for its
    // messages): a catalog folder is loaded keeping only them.
    let (cfg, mut warnings) = if fc.packages.is_empty() {
        load_source(source, &render)?
    } else {
        let wanted: std::collections::HashSet<&str> =
            fc.packages.iter().map(|p| p.name.value.as_str()).collect();
        crate::action::catalog_render::load_source_keeping(source, &render, &|p| {
            wanted.contains(p)
        })?
    };
    let mut out = filter_config(cfg, &fc, opts.format)?;
    warnings.append(&mut out.warnings);
    out.warnings = warnings;
    Ok(out)
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
        return Err(FilterCatalogError::Write(format!(
            "--output-dir {} is not empty: give a new or empty folder",
            dir.display()
        )));
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
                .map_err(|e| FilterCatalogError::Write(error_chain(&e)))?,
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
                .map_err(|e| FilterCatalogError::Write(error_chain(&e)))?,
        );
    }
    for s in staged {
        s.commit()
            .map_err(|e| FilterCatalogError::Write(error_chain(&e)))?;
    }
    Ok(())
}
