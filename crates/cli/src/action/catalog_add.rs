//! `catalog add` on a folder: find the package's file, render the bundle in the file's object
//! form, add it ([`crate::catalog::add::add_bundle`]), validate the whole catalog as it would be,
//! and rewrite the file atomically in opm's exact output form.

use crate::catalog::add::{AddError, AddRequest, CsvEdges, add_bundle};
/// The modes and outcomes of `catalog add`.
pub use crate::catalog::add::{AddMode, AddOutcome};
use crate::catalog::model::{DeclarativeConfig, Origin};
/// The migration applied to the bundle `catalog add` renders.
pub use crate::catalog::render::MigrateLevel;

/// Why `catalog add` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum AddFileError {
    /// The catalog folder cannot be read.
    #[error(transparent)]
    Load(#[from] crate::catalog::load::LoadError),
    /// The catalog does not load cleanly; olmpack will not rewrite a file it cannot read.
    #[error("the catalog does not load:\n{0}")]
    Broken(String),
    /// The bundle could not be rendered.
    #[error("{0}")]
    Render(String),
    /// The bundle cannot be added.
    #[error(transparent)]
    Add(#[from] AddError),
    /// The result would not validate.
    #[error("the catalog would not validate after adding the bundle; nothing was written:\n{0}")]
    Invalid(String),
    /// Writing failed.
    #[error("{path}")]
    Output {
        /// The file, relative to the catalog folder.
        path: String,
        /// Why.
        #[source]
        source: crate::fsio::FsError,
    },
    /// The file could not be encoded.
    #[error("{path}: {message}")]
    Write {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

/// What `catalog add` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddReport {
    /// Added or already present.
    pub outcome: AddOutcome,
    /// The catalog file (relative to the catalog folder).
    pub file: String,
    /// Bundle name.
    pub bundle: String,
    /// Channels it is in.
    pub channels: Vec<String>,
    /// Notes from rendering.
    pub warnings: Vec<String>,
}

/// Options of [`add_to_catalog`].
#[derive(Debug, Clone, Default)]
pub struct AddOptions {
    /// Channels (empty: from the bundle's annotations).
    pub channels: Vec<String>,
    /// Edge rule.
    pub mode: AddMode,
    /// Migration; `None` = match the package's file (csv.metadata form if its bundles use it).
    pub migrate: Option<crate::catalog::render::MigrateLevel>,
}

fn diag_text(d: &crate::findings::Diagnostic) -> String {
    match (&d.file, d.line) {
        (Some(f), Some(l)) => format!("{f}:{l}: {}", d.message),
        (Some(f), None) => format!("{f}: {}", d.message),
        _ => d.message.clone(),
    }
}

/// Adds a bundle to the catalog folder `dir`: the package's file is found by its blobs (or
/// `<package>/catalog.<ext>` is created, in the format the folder already uses), the bundle and
/// its channel entries are added, the whole catalog is validated, and the file is rewritten
/// atomically in opm's exact output form. `render` renders the bundle with a migration level.
pub fn add_to_catalog(
    dir: &std::path::Path,
    render: &dyn Fn(
        crate::catalog::render::MigrateLevel,
    ) -> Result<crate::action::bundle_source::SourceBundle, String>,
    options: &AddOptions,
) -> Result<AddReport, AddFileError> {
    use crate::catalog::render::MigrateLevel;
    use crate::catalog::write::write_config;
    use crate::findings::Severity;

    let loaded = crate::catalog::load::load_dir(dir)?;
    let load_errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(diag_text)
        .collect();
    if !load_errors.is_empty() {
        return Err(AddFileError::Broken(load_errors.join("\n")));
    }
    // Render once to learn the package, then again if the file's object form differs.
    let probe = render(options.migrate.unwrap_or_default()).map_err(AddFileError::Render)?;
    let all = &loaded.config;
    let (rel, mut file_cfg, format) = package_file(dir, &loaded, &probe.bundle.package);
    let file_migrate = file_cfg.bundles.iter().any(|b| {
        b.properties
            .iter()
            .any(|p| p.type_ == crate::catalog::model::property_type::CSV_METADATA)
    });
    let migrate = options.migrate.unwrap_or(if file_migrate {
        MigrateLevel::BundleObjectToCsvMetadata
    } else {
        MigrateLevel::None
    });
    let rendered = if migrate == options.migrate.unwrap_or_default() {
        probe
    } else {
        render(migrate).map_err(AddFileError::Render)?
    };
    let channels = if options.channels.is_empty() {
        rendered.channels.clone()
    } else {
        options.channels.clone()
    };
    let edges = rendered
        .bundle
        .csv_json
        .as_deref()
        .map(CsvEdges::from_csv_json)
        .unwrap_or_default();
    let request = AddRequest {
        bundle: rendered.bundle.clone(),
        channels: channels.clone(),
        default_channel: rendered.default_channel.clone(),
        mode: options.mode,
        edges,
    };
    let default_of = |cfg: &DeclarativeConfig| {
        cfg.packages
            .iter()
            .chain(all.packages.iter())
            .find(|p| p.name == rendered.bundle.package)
            .map(|p| p.default_channel.clone())
    };
    let package_before = default_of(&file_cfg);
    let outcome = add_bundle(&mut file_cfg, &request)?;
    let mut warnings = rendered.warnings.clone();
    warnings.extend(default_channel_warning(
        &rendered,
        package_before.is_some(),
        default_of(&file_cfg).as_deref(),
        &rel,
    ));
    let report = AddReport {
        outcome,
        file: rel.clone(),
        bundle: rendered.bundle.name.clone(),
        channels,
        warnings,
    };
    if outcome == AddOutcome::AlreadyPresent {
        return Ok(report);
    }
    check_addition(all, &file_cfg, &rel)?;
    let mut bytes = Vec::new();
    write_config(&mut bytes, &file_cfg, format).map_err(|e| AddFileError::Write {
        path: rel.clone(),
        message: e.to_string(),
    })?;
    write_atomic(&dir.join(&rel), &bytes).map_err(|source| AddFileError::Output {
        path: rel.clone(),
        source,
    })?;
    Ok(report)
}

/// The blobs of `all` that live in the file `rel` (`inside`), or everywhere else (`!inside`).
fn blobs_in(all: &DeclarativeConfig, rel: &str, inside: bool) -> DeclarativeConfig {
    let keep = |o: &Origin| (o.file == rel) == inside;
    DeclarativeConfig {
        packages: all
            .packages
            .iter()
            .filter(|x| keep(&x.origin))
            .cloned()
            .collect(),
        channels: all
            .channels
            .iter()
            .filter(|x| keep(&x.origin))
            .cloned()
            .collect(),
        bundles: all
            .bundles
            .iter()
            .filter(|x| keep(&x.origin))
            .cloned()
            .collect(),
        deprecations: all
            .deprecations
            .iter()
            .filter(|x| keep(&x.origin))
            .cloned()
            .collect(),
        others: all
            .others
            .iter()
            .filter(|x| keep(&x.origin))
            .cloned()
            .collect(),
    }
}

/// The file `package` lives in (the first of its blobs found), its blobs and its format; or
/// `<package>/catalog.<ext>` to create, in the format the folder already uses.
fn package_file(
    dir: &std::path::Path,
    loaded: &crate::catalog::load::Loaded,
    package: &str,
) -> (String, DeclarativeConfig, crate::catalog::write::Format) {
    use crate::catalog::write::Format;
    let all = &loaded.config;
    let file = all
        .packages
        .iter()
        .filter(|p| p.name == package)
        .map(|p| &p.origin.file)
        .chain(
            all.channels
                .iter()
                .filter(|c| c.package == package)
                .map(|c| &c.origin.file),
        )
        .chain(
            all.bundles
                .iter()
                .filter(|b| b.package == package)
                .map(|b| &b.origin.file),
        )
        .next()
        .cloned();
    match file {
        Some(rel) => {
            let file_cfg = blobs_in(all, &rel, true);
            let text = std::fs::read(dir.join(&rel)).unwrap_or_default();
            let json = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
            (
                rel,
                file_cfg,
                if json { Format::Json } else { Format::Yaml },
            )
        }
        None => {
            let yaml = loaded
                .files
                .iter()
                .any(|f| f.ends_with(".yaml") || f.ends_with(".yml"));
            let ext = if yaml { "yaml" } else { "json" };
            (
                format!("{package}/catalog.{ext}"),
                DeclarativeConfig::default(),
                if yaml { Format::Yaml } else { Format::Json },
            )
        }
    }
}

/// The package's default channel is the catalog's choice; says when it is not the one the
/// bundle's annotations name, so the difference is not silent.
fn default_channel_warning(
    rendered: &crate::action::bundle_source::SourceBundle,
    package_existed: bool,
    now: Option<&str>,
    rel: &str,
) -> Option<String> {
    let (Some(wanted), Some(now)) = (&rendered.default_channel, now) else {
        return None;
    };
    if wanted.is_empty() || wanted == now {
        return None;
    }
    Some(if package_existed {
        format!(
            "the bundle's default channel is {wanted:?}, but package {:?} keeps its default channel {now:?} (edit defaultChannel in {} to change it)",
            rendered.bundle.package, rel
        )
    } else {
        format!(
            "the bundle's default channel {wanted:?} is not one of the channels it was added to, so the new package {:?} gets default channel {now:?}",
            rendered.bundle.package
        )
    })
}

/// Validates the whole catalog as it would be with `file_cfg` as the file `rel`; refuses only
/// problems the addition introduces.
fn check_addition(
    all: &DeclarativeConfig,
    file_cfg: &DeclarativeConfig,
    rel: &str,
) -> Result<(), AddFileError> {
    let errors = |cfg: &DeclarativeConfig| -> Vec<String> {
        crate::validate::catalog::validate(cfg)
            .into_iter()
            .filter(|d| d.severity == crate::findings::Severity::Error)
            .map(|d| d.message)
            .collect()
    };
    let before = errors(all);
    let mut after_cfg = blobs_in(all, rel, false);
    after_cfg.packages.extend(file_cfg.packages.iter().cloned());
    after_cfg.channels.extend(file_cfg.channels.iter().cloned());
    after_cfg.bundles.extend(file_cfg.bundles.iter().cloned());
    after_cfg
        .deprecations
        .extend(file_cfg.deprecations.iter().cloned());
    after_cfg.others.extend(file_cfg.others.iter().cloned());
    let new_errors: Vec<String> = errors(&after_cfg)
        .into_iter()
        .filter(|e| !before.contains(e))
        .collect();
    if new_errors.is_empty() {
        Ok(())
    } else {
        Err(AddFileError::Invalid(new_errors.join("\n")))
    }
}

/// Writes through a temp file in the same folder and a rename, so readers never see half a file.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), crate::fsio::FsError> {
    crate::fsio::write(path, bytes, crate::fsio::Options::edit(0o644))
}
