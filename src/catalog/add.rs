//! `catalog add`: put one rendered bundle into a package's catalog, with its channel entries.
//!
//! Why: `opm index add` did this for sqlite catalogs; nothing does it for file-based catalogs, so
//! people hand-edit YAML or regenerate everything. This module is the pure part: given the blobs
//! of the package's file and a rendered bundle, it returns the new blobs (or says the bundle is
//! already there). Reading, validating and the atomic write are the command's library wrapper,
//! [`add_to_catalog`].

use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Origin, Package, SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
};
use crate::catalog::template::semver::package_property;
use semver::Version;
use std::collections::BTreeSet;

/// How the new channel entries get their edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AddMode {
    /// From the CSV: `spec.replaces`, `spec.skips`, the `olm.skipRange` annotation.
    #[default]
    Replaces,
    /// As the semver template (opm ≥ v1.61) would link it within each channel: the head of a
    /// Y-stream replaces the previous Y-stream's head and skips the earlier entries of its X.
    Semver,
}

/// The upgrade edges a CSV declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsvEdges {
    /// `spec.replaces`.
    pub replaces: String,
    /// `spec.skips`.
    pub skips: Vec<String>,
    /// `metadata.annotations["olm.skipRange"]`.
    pub skip_range: String,
}

impl CsvEdges {
    /// Reads the edges from a CSV's compact JSON (the rendered bundle's `csv_json`).
    pub fn from_csv_json(csv: &str) -> CsvEdges {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(csv) else {
            return CsvEdges::default();
        };
        let s = |p: &str| {
            v.pointer(p)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        CsvEdges {
            replaces: s("/spec/replaces"),
            skips: v
                .pointer("/spec/skips")
                .and_then(|x| x.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            skip_range: s("/metadata/annotations/olm.skipRange"),
        }
    }
}

/// What to add.
#[derive(Debug, Clone)]
pub struct AddRequest {
    /// The rendered bundle (name, package, image, properties set).
    pub bundle: Bundle,
    /// Channels to insert it into (at least one).
    pub channels: Vec<String>,
    /// Default channel for a package that does not exist yet, used when it is one of `channels`
    /// (else the first channel).
    pub default_channel: Option<String>,
    /// Edge rule.
    pub mode: AddMode,
    /// The CSV's edges (used in [`AddMode::Replaces`]).
    pub edges: CsvEdges,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddOutcome {
    /// The bundle and its entries were added.
    Added,
    /// The same bundle was already there, in every requested channel: nothing to write.
    AlreadyPresent,
}

/// Why the bundle cannot be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddError {
    /// A bundle of that name exists with other content.
    #[error(
        "bundle {name:?} is already in package {package:?} with different content (image {existing_image:?}); remove it first or give the new bundle another version"
    )]
    Conflict {
        /// Bundle name.
        name: String,
        /// Package.
        package: String,
        /// The image of the bundle already there.
        existing_image: String,
    },
    /// The rendered bundle has no name or package.
    #[error(
        "the rendered bundle has no {0} (is the CSV metadata.name and the package annotation set?)"
    )]
    Incomplete(&'static str),
    /// No channel was named and the bundle's annotations list none.
    #[error(
        "no channel: pass --channel or set operators.operatorframework.io.bundle.channels.v1 in the bundle's annotations"
    )]
    NoChannel,
    /// Semver mode needs a version.
    #[error("{0}")]
    Version(String),
}

/// Adds the bundle to `cfg` (the blobs of one package's file). Same bundle already present in
/// every requested channel → [`AddOutcome::AlreadyPresent`] and `cfg` unchanged.
pub fn add_bundle(cfg: &mut DeclarativeConfig, req: &AddRequest) -> Result<AddOutcome, AddError> {
    let b = &req.bundle;
    if b.name.is_empty() {
        return Err(AddError::Incomplete("name"));
    }
    if b.package.is_empty() {
        return Err(AddError::Incomplete("package"));
    }
    if req.channels.is_empty() {
        return Err(AddError::NoChannel);
    }
    let existing = cfg
        .bundles
        .iter()
        .find(|x| x.name == b.name && x.package == b.package);
    let bundle_present = match existing {
        Some(x) if same_bundle(x, b) => true,
        Some(x) => {
            return Err(AddError::Conflict {
                name: b.name.clone(),
                package: b.package.clone(),
                existing_image: x.image.clone(),
            });
        }
        None => false,
    };
    let in_channel = |cfg: &DeclarativeConfig, ch: &str| {
        cfg.channels.iter().any(|c| {
            c.package == b.package
                && c.name == ch
                && c.entries.iter().flatten().any(|e| e.name == b.name)
        })
    };
    if bundle_present && req.channels.iter().all(|c| in_channel(cfg, c)) {
        return Ok(AddOutcome::AlreadyPresent);
    }
    let version = match req.mode {
        AddMode::Semver => Some(version_of(b)?),
        AddMode::Replaces => None,
    };
    if !cfg.packages.iter().any(|p| p.name == b.package) {
        cfg.packages.push(Package {
            schema: SCHEMA_PACKAGE.to_string(),
            name: b.package.clone(),
            default_channel: req
                .default_channel
                .clone()
                .filter(|d| req.channels.contains(d))
                .or_else(|| req.channels.first().cloned())
                .unwrap_or_default(),
            icon: None,
            description: String::new(),
            properties: Vec::new(),
            origin: Origin::default(),
        });
    }
    let versions: Vec<(String, Version)> = match req.mode {
        AddMode::Semver => cfg
            .bundles
            .iter()
            .filter(|x| x.package == b.package)
            .filter_map(|x| version_of(x).ok().map(|v| (x.name.clone(), v)))
            .collect(),
        AddMode::Replaces => Vec::new(),
    };
    for ch in &req.channels {
        if in_channel(cfg, ch) {
            continue;
        }
        let index = match cfg
            .channels
            .iter()
            .position(|c| c.package == b.package && c.name == *ch)
        {
            Some(i) => i,
            None => {
                cfg.channels.push(Channel {
                    schema: SCHEMA_CHANNEL.to_string(),
                    name: ch.clone(),
                    package: b.package.clone(),
                    entries: Some(Vec::new()),
                    properties: Vec::new(),
                    origin: Origin::default(),
                });
                cfg.channels.len() - 1
            }
        };
        let Some(channel) = cfg.channels.get_mut(index) else {
            continue;
        };
        let entries = channel.entries.get_or_insert_with(Vec::new);
        let entry = match (&req.mode, &version) {
            (AddMode::Semver, Some(v)) => semver_entry(&b.name, v, entries, &versions),
            _ => ChannelEntry {
                name: b.name.clone(),
                replaces: req.edges.replaces.clone(),
                skips: req.edges.skips.clone(),
                skip_range: req.edges.skip_range.clone(),
                origin: Origin::default(),
            },
        };
        entries.push(entry);
    }
    if !bundle_present {
        cfg.bundles.push(b.clone());
    }
    Ok(AddOutcome::Added)
}

fn version_of(b: &Bundle) -> Result<Version, AddError> {
    let (_, text) = package_property(b).map_err(AddError::Version)?;
    Version::parse(&text).map_err(|e| {
        AddError::Version(format!(
            "bundle {:?} has invalid version {text:?}: {e}",
            b.name
        ))
    })
}

/// The entry the semver template would give the new bundle if it were the newest of its
/// Y-stream in this channel: `replaces` = the newest entry of the previous Y-stream of the same
/// X, `skips` = every other entry of the same X below it.
fn semver_entry(
    name: &str,
    v: &Version,
    entries: &[ChannelEntry],
    versions: &[(String, Version)],
) -> ChannelEntry {
    let version = |n: &str| versions.iter().find(|(x, _)| x == n).map(|(_, v)| v);
    let mut same_x: Vec<(&str, &Version)> = entries
        .iter()
        .filter_map(|e| version(&e.name).map(|ev| (e.name.as_str(), ev)))
        .filter(|(_, ev)| ev.major == v.major && ev.cmp_precedence(v).is_lt())
        .collect();
    same_x.sort_by(|a, b| a.1.cmp_precedence(b.1));
    let replaces = same_x
        .iter()
        .rfind(|(_, ev)| ev.minor < v.minor)
        .map(|(n, _)| n.to_string())
        .unwrap_or_default();
    let skips: BTreeSet<String> = same_x
        .iter()
        .map(|(n, _)| n.to_string())
        .filter(|n| *n != replaces)
        .collect();
    ChannelEntry {
        name: name.to_string(),
        replaces,
        skips: skips.into_iter().collect(),
        skip_range: String::new(),
        origin: Origin::default(),
    }
}

/// Same content as written: compares the serialized blobs.
fn same_bundle(a: &Bundle, b: &Bundle) -> bool {
    match (serde_json::to_string(a), serde_json::to_string(b)) {
        (Ok(x), Ok(y)) => canonical(&x) == canonical(&y),
        _ => false,
    }
}

/// Property values read from a file have sorted keys while freshly rendered ones keep struct
/// order, so compare through a key-sorted form.
fn canonical(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .map(|v| v.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::template::semver::tests::bundle;

    fn req(name_version: &str, channels: &[&str], mode: AddMode, edges: CsvEdges) -> AddRequest {
        AddRequest {
            bundle: bundle(
                &format!("op.v{name_version}"),
                "op",
                name_version,
                &format!("img:{name_version}"),
            ),
            channels: channels.iter().map(|c| c.to_string()).collect(),
            default_channel: None,
            mode,
            edges,
        }
    }

    #[test]
    fn replaces_mode_creates_package_and_is_idempotent() {
        let mut cfg = DeclarativeConfig::default();
        let r = req("1.0.0", &["stable"], AddMode::Replaces, CsvEdges::default());
        assert_eq!(add_bundle(&mut cfg, &r), Ok(AddOutcome::Added));
        assert_eq!(
            cfg.packages.first().map(|p| p.default_channel.as_str()),
            Some("stable")
        );
        assert_eq!(add_bundle(&mut cfg, &r), Ok(AddOutcome::AlreadyPresent));
        let edges = CsvEdges {
            replaces: "op.v1.0.0".into(),
            skips: vec![],
            skip_range: "<1.1.0".into(),
        };
        let r2 = req("1.1.0", &["stable", "fast"], AddMode::Replaces, edges);
        assert_eq!(add_bundle(&mut cfg, &r2), Ok(AddOutcome::Added));
        assert_eq!(cfg.bundles.len(), 2);
        assert_eq!(cfg.channels.len(), 2);
        let e = cfg
            .channels
            .first()
            .and_then(|c| c.entries.as_ref())
            .and_then(|e| e.last())
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            (e.replaces.as_str(), e.skip_range.as_str()),
            ("op.v1.0.0", "<1.1.0")
        );
        let mut other = req("1.1.0", &["stable"], AddMode::Replaces, CsvEdges::default());
        other.bundle.image = "elsewhere:1".into();
        assert!(matches!(
            add_bundle(&mut cfg, &other),
            Err(AddError::Conflict { .. })
        ));
    }

    #[test]
    fn semver_mode_links_like_the_template() {
        let mut cfg = DeclarativeConfig::default();
        for v in ["1.0.0", "1.0.1", "1.1.0"] {
            let r = req(v, &["stable-v1"], AddMode::Semver, CsvEdges::default());
            assert_eq!(add_bundle(&mut cfg, &r), Ok(AddOutcome::Added));
        }
        let r = req(
            "1.2.0",
            &["stable-v1"],
            AddMode::Semver,
            CsvEdges::default(),
        );
        assert_eq!(add_bundle(&mut cfg, &r), Ok(AddOutcome::Added));
        let e = cfg
            .channels
            .first()
            .and_then(|c| c.entries.as_ref())
            .and_then(|e| e.last())
            .cloned()
            .unwrap_or_default();
        assert_eq!(e.replaces, "op.v1.1.0");
        assert_eq!(
            e.skips,
            vec!["op.v1.0.0".to_string(), "op.v1.0.1".to_string()]
        );
    }
}

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
    ) -> Result<crate::catalog::source::SourceBundle, String>,
    options: &AddOptions,
) -> Result<AddReport, AddFileError> {
    use crate::catalog::render::MigrateLevel;
    use crate::catalog::write::{Format, write_config};
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
    let package = probe.bundle.package.clone();
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
    let in_file = |o: &Origin, f: &str| o.file == f;
    let (rel, mut file_cfg, format) = match file {
        Some(rel) => {
            let file_cfg = DeclarativeConfig {
                packages: all
                    .packages
                    .iter()
                    .filter(|x| in_file(&x.origin, &rel))
                    .cloned()
                    .collect(),
                channels: all
                    .channels
                    .iter()
                    .filter(|x| in_file(&x.origin, &rel))
                    .cloned()
                    .collect(),
                bundles: all
                    .bundles
                    .iter()
                    .filter(|x| in_file(&x.origin, &rel))
                    .cloned()
                    .collect(),
                deprecations: all
                    .deprecations
                    .iter()
                    .filter(|x| in_file(&x.origin, &rel))
                    .cloned()
                    .collect(),
                others: all
                    .others
                    .iter()
                    .filter(|x| in_file(&x.origin, &rel))
                    .cloned()
                    .collect(),
            };
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
    };
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
    let outcome = add_bundle(&mut file_cfg, &request)?;
    let report = AddReport {
        outcome,
        file: rel.clone(),
        bundle: rendered.bundle.name.clone(),
        channels,
        warnings: rendered.warnings.clone(),
    };
    if outcome == AddOutcome::AlreadyPresent {
        return Ok(report);
    }

    // Validate the whole catalog as it would be; refuse only problems the addition introduces.
    let errors = |cfg: &DeclarativeConfig| -> Vec<String> {
        crate::catalog::validate::validate(cfg)
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.message)
            .collect()
    };
    let before = errors(all);
    let mut after_cfg = DeclarativeConfig {
        packages: all
            .packages
            .iter()
            .filter(|x| !in_file(&x.origin, &rel))
            .cloned()
            .collect(),
        channels: all
            .channels
            .iter()
            .filter(|x| !in_file(&x.origin, &rel))
            .cloned()
            .collect(),
        bundles: all
            .bundles
            .iter()
            .filter(|x| !in_file(&x.origin, &rel))
            .cloned()
            .collect(),
        deprecations: all
            .deprecations
            .iter()
            .filter(|x| !in_file(&x.origin, &rel))
            .cloned()
            .collect(),
        others: all
            .others
            .iter()
            .filter(|x| !in_file(&x.origin, &rel))
            .cloned()
            .collect(),
    };
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
    if !new_errors.is_empty() {
        return Err(AddFileError::Invalid(new_errors.join("\n")));
    }

    let mut bytes = Vec::new();
    write_config(&mut bytes, &file_cfg, format).map_err(|e| AddFileError::Write {
        path: rel.clone(),
        message: e.to_string(),
    })?;
    write_atomic(&dir.join(&rel), &bytes).map_err(|message| AddFileError::Write {
        path: rel.clone(),
        message,
    })?;
    Ok(report)
}

/// Writes through a temp file in the same folder and a rename, so readers never see half a file.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".olmpack-add-")
        .tempfile_in(parent)
        .map_err(|e| e.to_string())?;
    tmp.write_all(bytes).map_err(|e| e.to_string())?;
    tmp.as_file().sync_all().map_err(|e| e.to_string())?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    } else {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| e.to_string())?;
    Ok(())
}
