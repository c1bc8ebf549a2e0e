//! Package manifests to registry+v1 bundle folders, one per version, with the package-level
//! data denormalized into each bundle's annotations (seed 004): the package name, **the channels
//! that version really belongs to** by opm's loader rule (the `replaces` chain from each channel
//! head plus one hop of `skips`, [`super::graph`]), and the default channel. operator-sdk's
//! `pkgman-to-bundle` gives every non-head version only the default channel; this does not.
//!
//! Nothing is written until every bundle has been staged and validated: the bundles are built in
//! a temporary folder beside the output folder, then that folder is renamed into place, so the
//! output appears whole or not at all, and an existing output is never touched.

use super::graph::Loaded;
use super::validate::Report;
use super::{PackageDir, Version};
use crate::bundle::keys;
use crate::bundle::metadata::annotations::{self, Entry};
use crate::bundle::metadata::dependencies;
use crate::fsio;
use std::fs;
use std::path::{Path, PathBuf};

/// Why a migration wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The package has errors (opm's loader refuses it); the findings say why.
    #[error("{0}: the package has {1} error(s); nothing was written")]
    Invalid(PathBuf, usize),
    /// The output folder exists and is not empty.
    #[error(
        "output folder {0} already exists and is not empty: choose a new folder (nothing was written)"
    )]
    OutputExists(PathBuf),
    /// A written bundle fails `bundle validate`.
    #[error(
        "bundle {bundle} made from {source_dir} fails validation: {first}; nothing was written"
    )]
    BundleInvalid {
        /// Bundle folder name.
        bundle: String,
        /// The version folder it came from.
        source_dir: String,
        /// The first error finding.
        first: String,
    },
    /// An I/O error while reading a source file or staging.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
}

/// One bundle folder to write.
#[derive(Debug, Clone)]
pub struct PlannedBundle {
    /// Folder name under the output folder.
    pub dir: String,
    /// The CSV name.
    pub csv: String,
    /// The version folder it came from (relative to the package folder).
    pub source_dir: String,
    /// Channels written into the annotations, in package-file order.
    pub channels: Vec<String>,
    /// Files (path relative to the bundle folder, bytes), in write order.
    pub files: Vec<(String, Vec<u8>)>,
}

/// What [`plan`] decided: the bundles, and the versions left out (in no channel) with the reason.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Bundles to write.
    pub bundles: Vec<PlannedBundle>,
    /// Versions not written, with why.
    pub skipped: Vec<(String, String)>,
}

/// Plans one bundle per version of a package that validated without errors.
pub fn plan(pkg: &PackageDir, report: &Report) -> Result<Plan, MigrateError> {
    let errors = report.loader_errors().count();
    let (Some(manifest), Some(loaded), 0) = (&pkg.package, &report.loaded, errors) else {
        return Err(MigrateError::Invalid(pkg.root.clone(), errors.max(1)));
    };
    let mut out = Plan::default();
    let mut used = std::collections::HashSet::new();
    for v in &pkg.versions {
        let channels = loaded.channels_of(&v.name);
        if channels.is_empty() {
            out.skipped.push((
                v.name.clone(),
                "in no channel: opm drops it from the catalog, and a bundle needs a channel".into(),
            ));
            continue;
        }
        let folder = v.dir.rsplit('/').next().unwrap_or_default();
        let mut dir =
            if folder.is_empty() || v.dir.contains('/') || !used.insert(folder.to_string()) {
                v.name.clone()
            } else {
                folder.to_string()
            };
        if dir.starts_with('.') {
            dir = v.name.clone();
        }
        used.insert(dir.clone());
        out.bundles.push(PlannedBundle {
            dir,
            csv: v.name.clone(),
            source_dir: v.dir.clone(),
            files: bundle_files(pkg, v, &manifest.name, &channels, loaded)?,
            channels,
        });
    }
    Ok(out)
}

/// The annotations of one version, in opm's LABEL order.
pub fn annotation_entries(package: &str, channels: &[String], default: &str) -> Vec<Entry> {
    let mut e = vec![
        (
            keys::MEDIATYPE,
            crate::bundle::MediaType::RegistryV1.to_string(),
        ),
        (keys::MANIFESTS, "manifests/".to_string()),
        (keys::METADATA, "metadata/".to_string()),
        (keys::PACKAGE, package.to_string()),
        (keys::CHANNELS, channels.join(",")),
    ];
    if !default.is_empty() {
        e.push((keys::DEFAULT_CHANNEL, default.to_string()));
    }
    e.into_iter()
        .map(|(key, value)| Entry {
            key: key.to_string(),
            value,
        })
        .collect()
}

fn bundle_files(
    pkg: &PackageDir,
    v: &Version,
    package: &str,
    channels: &[String],
    loaded: &Loaded,
) -> Result<Vec<(String, Vec<u8>)>, MigrateError> {
    let mut files = Vec::new();
    for o in &v.objects {
        let path = pkg.root.join(&o.file);
        let bytes = fsio::read(&path)?;
        let name = o.file.rsplit('/').next().unwrap_or(&o.file);
        files.push((format!("manifests/{name}"), first_document(bytes)));
    }
    let header = "# Written by `olmpack bundle migrate` from the package manifest: the channels are the ones\n# this version belongs to in opm's loader (the replaces chain of each channel head, plus skips).\n";
    let body = annotations::render(&annotation_entries(
        package,
        channels,
        &loaded.default_channel,
    ));
    let body: String = body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    files.push((
        "metadata/annotations.yaml".into(),
        format!("{header}{body}").into_bytes(),
    ));
    let (required, _notes) = crate::bundle::Csv::new(v.csv())
        .map(|csv| dependencies::required(&csv))
        .unwrap_or_default();
    if !required.is_empty() {
        let body: String = dependencies::render_new(&required)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let header = "# Written by `olmpack bundle migrate` from the CSV's required CRDs and API services.\n";
        files.push((
            "metadata/dependencies.yaml".into(),
            format!("{header}{body}").into_bytes(),
        ));
    }
    Ok(files)
}

/// Keeps only the first YAML document of a file, as opm's loader reads it, so the bundle holds
/// what the package meant (a bundle parser would read every document).
fn first_document(bytes: Vec<u8>) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return bytes;
    };
    let Ok((docs, _)) = crate::yaml::parse_stream_lenient(text) else {
        return bytes;
    };
    let Some(second) = docs.get(1) else {
        return bytes;
    };
    // Cut at the last `---` marker before the second document's first node.
    let mut offset = 0usize;
    let mut cut = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 >= second.root.line {
            break;
        }
        if line.starts_with("---") {
            cut = Some(offset);
        }
        offset += line.len();
    }
    match cut {
        Some(c) if c > 0 => text.as_bytes()[..c].to_vec(),
        _ => bytes,
    }
}

/// Stages every planned bundle in a temporary folder beside `out`, runs `check` on each staged
/// bundle folder (an error aborts, nothing written), then renames the staging folder to `out`.
/// `out` must not exist, or be an empty folder.
pub fn write(
    plan: &Plan,
    out: &Path,
    mut check: impl FnMut(&PlannedBundle, &Path) -> Result<(), MigrateError>,
) -> Result<(), MigrateError> {
    if let Ok(mut rd) = fs::read_dir(out) {
        if rd.next().is_some() {
            return Err(MigrateError::OutputExists(out.to_path_buf()));
        }
    } else if out.exists() {
        return Err(MigrateError::OutputExists(out.to_path_buf()));
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fsio::create_dir_all(&parent)?;
    let stage = tempfile::Builder::new()
        .prefix(".olmpack-migrate-")
        .tempdir_in(&parent)
        .map_err(|e| fsio::at("create a temporary folder in", &parent)(fsio::temp_error(e)))?;
    let _interrupt = crate::interrupt::register(stage.path());
    for b in &plan.bundles {
        let root = stage.path().join(&b.dir);
        for (rel, bytes) in &b.files {
            let path = root.join(rel);
            if let Some(dir) = path.parent() {
                fsio::create_dir_all(dir)?;
            }
            fs::write(&path, bytes).map_err(fsio::at("write", &path))?;
        }
        check(b, &root)?;
    }
    let staged = stage.keep();
    if out.is_dir() {
        // An empty folder the user made: rename(2) replaces it atomically.
        let _ = fs::remove_dir(out);
    }
    if let Err(e) = fs::rename(&staged, out) {
        let _ = fs::remove_dir_all(&staged);
        return Err(fsio::at("rename the staged bundles to", out)(e).into());
    }
    Ok(())
}
