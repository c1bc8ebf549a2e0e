//! `catalog add`: put one rendered bundle into a package's catalog, with its channel entries.
//!
//! Why: `opm index add` did this for sqlite catalogs; nothing does it for file-based catalogs, so
//! people hand-edit YAML or regenerate everything. This module is the pure part: given the blobs
//! of the package's file and a rendered bundle, it returns the new blobs (or says the bundle is
//! already there). Reading, validating and the atomic write are in
//! `action::catalog_add`.

use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Origin, Package, SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
};
use crate::catalog::template::semver::package_property;
use crate::catalog::version_release::VersionRelease;
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
        AddMode::Semver => Some(version_release_of(b)?),
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
    let versions: Vec<(String, VersionRelease)> = match req.mode {
        AddMode::Semver => cfg
            .bundles
            .iter()
            .filter(|x| x.package == b.package)
            .filter_map(|x| version_release_of(x).ok().map(|v| (x.name.clone(), v)))
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

/// The version and release (opm's `VersionRelease`), after checking the version as before so
/// the error stays the same.
fn version_release_of(b: &Bundle) -> Result<VersionRelease, AddError> {
    version_of(b)?;
    crate::catalog::version_release::of_bundle(b).map_err(AddError::Version)
}

/// The entry the semver template would give the new bundle if it were the newest of its
/// Y-stream in this channel: `replaces` = the newest entry of the previous Y-stream of the same
/// X, `skips` = every other entry of the same X below it. Bundles order by version, then
/// release, so a rebuild of a version (a greater `release`) skips the earlier builds.
fn semver_entry(
    name: &str,
    v: &VersionRelease,
    entries: &[ChannelEntry],
    versions: &[(String, VersionRelease)],
) -> ChannelEntry {
    let version = |n: &str| versions.iter().find(|(x, _)| x == n).map(|(_, v)| v);
    let mut same_x: Vec<(&str, &VersionRelease)> = entries
        .iter()
        .filter_map(|e| version(&e.name).map(|ev| (e.name.as_str(), ev)))
        .filter(|(_, ev)| ev.version.major == v.version.major && ev.compare(v).is_lt())
        .collect();
    same_x.sort_by(|a, b| a.1.compare(b.1));
    let replaces = same_x
        .iter()
        .rfind(|(_, ev)| ev.version.minor < v.version.minor)
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

    /// The entry added last to the first channel (empty when there is none).
    fn last_entry(cfg: &DeclarativeConfig) -> ChannelEntry {
        cfg.channels
            .first()
            .and_then(|c| c.entries.as_ref())
            .and_then(|e| e.last())
            .cloned()
            .unwrap_or_default()
    }

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
        let e = last_entry(&cfg);
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
        let e = last_entry(&cfg);
        assert_eq!(e.replaces, "op.v1.1.0");
        assert_eq!(
            e.skips,
            vec!["op.v1.0.0".to_string(), "op.v1.0.1".to_string()]
        );
    }

    #[test]
    fn semver_mode_orders_releases_after_their_version() {
        let mut cfg = DeclarativeConfig::default();
        for v in ["1.0.0", "1.1.0"] {
            let r = req(v, &["stable-v1"], AddMode::Semver, CsvEdges::default());
            assert_eq!(add_bundle(&mut cfg, &r), Ok(AddOutcome::Added));
        }
        let mut rebuild = req(
            "1.1.0",
            &["stable-v1"],
            AddMode::Semver,
            CsvEdges::default(),
        );
        rebuild.bundle.name = "op-v1.1.0-2".into();
        rebuild.bundle.image = "img:1.1.0-2".into();
        rebuild.bundle.properties = vec![
            crate::catalog::model::Property::new(
                crate::catalog::model::property_type::PACKAGE,
                r#"{"packageName":"op","version":"1.1.0","release":"2"}"#.to_string(),
            )
            .unwrap_or_else(|_| panic!("test property")),
        ];
        assert_eq!(add_bundle(&mut cfg, &rebuild), Ok(AddOutcome::Added));
        let e = last_entry(&cfg);
        assert_eq!(e.name, "op-v1.1.0-2");
        assert_eq!(e.replaces, "op.v1.0.0");
        assert_eq!(e.skips, vec!["op.v1.1.0".to_string()]);
    }
}
