//! Bundle folder → [`Image`]: the layers, config and manifest of a bundle image, with every
//! choice that affects the digest made here or in [`super::layer`].
//!
//! This knows bundles only as "a root, a manifests folder, a metadata folder and the
//! annotations", so it does not depend on the bundle model or the validator; the command glues
//! those in. It reads nothing but the bundle and writes nothing but spool files.

use super::config::{Platform, canonical_json, config_json};

use super::error::BuildError;
use super::layer::{LayerBlob, write_layer};
use super::manifest::{Format, manifest_json};
use super::model::{Blob, BlobSource, Descriptor, Image};
use super::walk::{Entry, Walker};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Annotation naming the manifests folder (relative to the bundle root).
pub const ANNOTATION_MANIFESTS: &str = crate::bundle_keys::MANIFESTS;
/// Annotation naming the metadata folder (relative to the bundle root).
pub const ANNOTATION_METADATA: &str = crate::bundle_keys::METADATA;
/// Label that tells scorecard where its config is in the image; its presence is what makes the
/// `tests/scorecard/` folder part of the image, as in operator-sdk's bundle.Dockerfile.
pub const LABEL_SCORECARD_CONFIG: &str = crate::bundle_keys::TEST_CONFIG;
/// Where the scorecard folder is, both in the bundle and in the image.
pub const SCORECARD_DIR: &str = "tests/scorecard";

/// What the builder needs to know about a bundle: where its folders are and its annotations.
#[derive(Debug, Clone)]
pub struct BundleInput {
    /// The bundle root (the folder holding `manifests/` and `metadata/`).
    pub root: PathBuf,
    /// The manifests folder in the bundle; stored at `/manifests/` in the image.
    pub manifests_dir: PathBuf,
    /// The metadata folder in the bundle; stored at `/metadata/` in the image.
    pub metadata_dir: PathBuf,
    /// Every annotation of `metadata/annotations.yaml` (empty when there is none).
    pub annotations: BTreeMap<String, String>,
}

impl BundleInput {
    /// Takes folder paths found by someone else (the bundle loader), checking that both are
    /// inside `root` (lexically: no `..`, not elsewhere), since they come from annotations.
    pub fn new(
        root: &Path,
        manifests_dir: PathBuf,
        metadata_dir: PathBuf,
        annotations: BTreeMap<String, String>,
    ) -> Result<Self, BuildError> {
        for (dir, role) in [(&manifests_dir, "manifests"), (&metadata_dir, "metadata")] {
            let inside = dir.strip_prefix(root).is_ok_and(|rel| {
                rel.components()
                    .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
            });
            if !inside {
                return Err(BuildError::FolderOutsideBundle {
                    role,
                    value: dir.display().to_string(),
                });
            }
        }
        Ok(BundleInput {
            root: root.to_path_buf(),
            manifests_dir,
            metadata_dir,
            annotations,
        })
    }

    /// Locates the folders from the annotations (`manifests/` and `metadata/` by default), the
    /// way `bundle.Dockerfile` copies them. Refuses an annotation naming a folder outside the
    /// bundle (absolute, or with `..`).
    pub fn from_annotations(
        root: &Path,
        annotations: BTreeMap<String, String>,
    ) -> Result<Self, BuildError> {
        let folder = |key: &str, role: &'static str, default: &str| {
            let value = annotations.get(key).map_or(default, String::as_str);
            let rel = Path::new(value.trim());
            let inside = rel
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            if !inside || rel.as_os_str().is_empty() {
                return Err(BuildError::FolderOutsideBundle {
                    role,
                    value: value.to_string(),
                });
            }
            Ok(root.join(rel))
        };
        Ok(BundleInput {
            manifests_dir: folder(ANNOTATION_MANIFESTS, "manifests", "manifests/")?,
            metadata_dir: folder(ANNOTATION_METADATA, "metadata", "metadata/")?,
            root: root.to_path_buf(),
            annotations,
        })
    }
}

/// How to build: everything that is not the bundle itself.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// OCI or Docker v2-2 media types.
    pub format: Format,
    /// The platform the config claims (default linux/amd64).
    pub platform: Platform,
    /// Labels added to the annotations (`--label`); one that contradicts an annotation is refused.
    pub extra_labels: BTreeMap<String, String>,
    /// Put every folder in one layer instead of one layer per folder.
    pub single_layer: bool,
    /// Seconds since the epoch for every mtime and the config's `created`; `None` means 0.
    /// The command takes it from `SOURCE_DATE_EPOCH` ([`source_date_epoch_from_env`]).
    pub source_date_epoch: Option<u64>,
}

/// Something the build did not put in the image that the user may care about. The build still
/// succeeds; the command prints these on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildWarning {
    /// An OCI whiteout file (`.wh.*`) was skipped: in a layer it would delete a file instead of
    /// adding one.
    WhiteoutSkipped {
        /// The file.
        path: PathBuf,
    },
    /// A top-level entry of the bundle folder is not part of the image (only the manifests,
    /// metadata and scorecard folders are, as with bundle.Dockerfile).
    NotPackaged {
        /// The entry.
        path: PathBuf,
    },
    /// The scorecard label is set but the bundle has no `tests/scorecard/` folder.
    ScorecardFolderMissing {
        /// The folder that was expected.
        path: PathBuf,
    },
    /// The bundle has `tests/scorecard/` but the scorecard label is not set, so it is left out.
    ScorecardLabelMissing {
        /// The folder left out.
        path: PathBuf,
    },
}

impl fmt::Display for BuildWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildWarning::WhiteoutSkipped { path } => write!(
                f,
                "skipped {}: OCI whiteout files (.wh.*) would delete files from the image",
                path.display()
            ),
            BuildWarning::NotPackaged { path } => write!(
                f,
                "{} is not part of the image (only the manifests, metadata and tests/scorecard folders are)",
                path.display()
            ),
            BuildWarning::ScorecardFolderMissing { path } => write!(
                f,
                "label {LABEL_SCORECARD_CONFIG} is set but {} does not exist",
                path.display()
            ),
            BuildWarning::ScorecardLabelMissing { path } => write!(
                f,
                "{} is left out of the image because the label {LABEL_SCORECARD_CONFIG} is not set",
                path.display()
            ),
        }
    }
}

/// An image whose layer blobs live in a temporary folder that is deleted when this is dropped.
/// Keep it alive while a sink (layout, archive, registry push) streams the blobs.
#[derive(Debug)]
pub struct BuiltImage {
    /// The image.
    pub image: Image,
    /// What the build left out, for the user.
    pub warnings: Vec<BuildWarning>,
    /// The spool folder holding the layer files.
    pub spool: tempfile::TempDir,
}

/// Builds into a fresh temporary spool folder (under the system temp dir).
pub fn build(input: &BundleInput, options: &BuildOptions) -> Result<BuiltImage, BuildError> {
    let spool = crate::interrupt::temp_dir("olmpack-build-")
        .map_err(|e| BuildError::io("create a temporary folder in", std::env::temp_dir(), e))?;
    let (image, warnings) = build_in(input, options, spool.path())?;
    Ok(BuiltImage {
        image,
        warnings,
        spool,
    })
}

/// Builds with layer files written into `spool` (which must exist); the caller owns their
/// lifetime. Returns the image and the warnings.
pub fn build_in(
    input: &BundleInput,
    options: &BuildOptions,
    spool: &Path,
) -> Result<(Image, Vec<BuildWarning>), BuildError> {
    let labels = merge_labels(&input.annotations, &options.extra_labels)?;
    let mtime = options.source_date_epoch.unwrap_or(0);
    let mut warnings = Vec::new();
    let mut walker = Walker::new(&input.root)?;

    for (dir, role) in [
        (&input.manifests_dir, "manifests"),
        (&input.metadata_dir, "metadata"),
    ] {
        if fs::symlink_metadata(dir).is_err() {
            return Err(BuildError::MissingFolder {
                role,
                path: dir.clone(),
                root: input.root.clone(),
            });
        }
    }

    // The folders, in the order bundle.Dockerfile copies them.
    let mut folders: Vec<(PathBuf, &str)> = vec![
        (input.manifests_dir.clone(), "manifests/"),
        (input.metadata_dir.clone(), "metadata/"),
    ];
    let scorecard = input.root.join(SCORECARD_DIR);
    let has_scorecard = fs::symlink_metadata(&scorecard).is_ok();
    match (has_scorecard, labels.contains_key(LABEL_SCORECARD_CONFIG)) {
        (true, true) => folders.push((scorecard, "tests/scorecard/")),
        (true, false) => warnings.push(BuildWarning::ScorecardLabelMissing { path: scorecard }),
        (false, true) => warnings.push(BuildWarning::ScorecardFolderMissing { path: scorecard }),
        (false, false) => {}
    }

    let mut groups: Vec<Vec<Entry>> = Vec::new();
    for (dir, prefix) in &folders {
        if options.single_layer && !groups.is_empty() {
            let last = groups.len() - 1;
            walker.add_folder(dir, prefix, &mut groups[last])?;
        } else {
            let mut entries = Vec::new();
            walker.add_folder(dir, prefix, &mut entries)?;
            groups.push(entries);
        }
    }
    warnings.extend(
        walker
            .whiteouts
            .drain(..)
            .map(|w| BuildWarning::WhiteoutSkipped { path: w.path }),
    );
    // A scorecard folder left out already has its own warning.
    let mut taken: Vec<PathBuf> = folders.iter().map(|(dir, _)| dir.clone()).collect();
    if has_scorecard {
        taken.push(input.root.join(SCORECARD_DIR));
    }
    warnings.extend(not_packaged(&input.root, &taken)?);

    let mut layers = Vec::with_capacity(groups.len());
    for (i, entries) in groups.iter().enumerate() {
        layers.push(write_layer(
            entries,
            mtime,
            &spool.join(format!("layer-{i}.tar.gz")),
        )?);
    }
    Ok((assemble(&layers, &labels, options), warnings))
}

/// Annotations plus extras; an extra may repeat an annotation but not contradict it.
fn merge_labels(
    annotations: &BTreeMap<String, String>,
    extras: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, BuildError> {
    let mut labels = annotations.clone();
    for (key, value) in extras {
        match annotations.get(key) {
            Some(existing) if existing != value => {
                return Err(BuildError::LabelConflict {
                    key: key.clone(),
                    annotation: existing.clone(),
                    extra: value.clone(),
                });
            }
            _ => {
                labels.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(labels)
}

/// Top-level entries of the bundle root that no layer takes.
fn not_packaged(root: &Path, folders: &[PathBuf]) -> Result<Vec<BuildWarning>, BuildError> {
    let taken: Vec<std::ffi::OsString> = folders
        .iter()
        .filter_map(|dir| dir.strip_prefix(root).ok())
        .filter_map(|rel| rel.components().next())
        .map(|c| c.as_os_str().to_os_string())
        .collect();
    let mut names = Vec::new();
    for item in fs::read_dir(root).map_err(|e| BuildError::io("list", root, e))? {
        let item = item.map_err(|e| BuildError::io("list", root, e))?;
        if !taken.contains(&item.file_name()) {
            names.push(item.file_name());
        }
    }
    names.sort();
    Ok(names
        .into_iter()
        .map(|n| BuildWarning::NotPackaged { path: root.join(n) })
        .collect())
}

/// Config and manifest around the written layers.
fn assemble(
    layers: &[LayerBlob],
    labels: &BTreeMap<String, String>,
    options: &BuildOptions,
) -> Image {
    let format = options.format;
    let diff_ids: Vec<String> = layers.iter().map(|l| l.diff_id.clone()).collect();
    let config_bytes = canonical_json(&config_json(
        labels,
        &options.platform,
        &diff_ids,
        options.source_date_epoch.unwrap_or(0),
    ));
    let config = Blob::memory(format.config_media_type(), config_bytes);
    let layer_blobs: Vec<Blob> = layers
        .iter()
        .map(|l| Blob {
            descriptor: Descriptor {
                media_type: format.layer_media_type().to_string(),
                digest: l.digest.clone(),
                size: l.size,
            },
            source: BlobSource::File(l.path.clone()),
        })
        .collect();
    let layer_descs: Vec<Descriptor> = layer_blobs.iter().map(|b| b.descriptor.clone()).collect();
    let manifest_bytes = canonical_json(&manifest_json(format, &config.descriptor, &layer_descs));
    let manifest = Blob::memory(format.manifest_media_type(), manifest_bytes);
    Image {
        manifest,
        config,
        layers: layer_blobs,
    }
}

/// Why `SOURCE_DATE_EPOCH` was refused.
#[derive(Debug, thiserror::Error)]
#[error("SOURCE_DATE_EPOCH={0:?} is not a non-negative whole number of seconds")]
pub struct EpochError(pub String);

/// Reads `SOURCE_DATE_EPOCH` (the reproducible-builds.org convention) when set and not empty.
pub fn source_date_epoch_from_env() -> Result<Option<u64>, EpochError> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => v.trim().parse::<u64>().map(Some).map_err(|_| EpochError(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(EpochError(v.to_string_lossy().into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_may_repeat_but_not_contradict() {
        let mut ann = BTreeMap::new();
        ann.insert("a".to_string(), "1".to_string());
        let mut extra = BTreeMap::new();
        extra.insert("a".to_string(), "1".to_string());
        extra.insert("b".to_string(), "2".to_string());
        let merged = merge_labels(&ann, &extra).unwrap();
        assert_eq!(merged.len(), 2);
        extra.insert("a".to_string(), "other".to_string());
        let err = merge_labels(&ann, &extra).unwrap_err();
        assert!(err.to_string().contains("contradicts"), "{err}");
    }

    #[test]
    fn folders_outside_the_bundle_are_refused() {
        let mut ann = BTreeMap::new();
        ann.insert(
            ANNOTATION_MANIFESTS.to_string(),
            "../elsewhere/".to_string(),
        );
        assert!(BundleInput::from_annotations(Path::new("/b"), ann.clone()).is_err());
        ann.insert(ANNOTATION_MANIFESTS.to_string(), "/abs/".to_string());
        assert!(BundleInput::from_annotations(Path::new("/b"), ann.clone()).is_err());
        ann.insert(
            ANNOTATION_MANIFESTS.to_string(),
            "deploy/manifests/".to_string(),
        );
        let input = BundleInput::from_annotations(Path::new("/b"), ann).unwrap();
        assert_eq!(input.manifests_dir, Path::new("/b/deploy/manifests/"));
        assert_eq!(input.metadata_dir, Path::new("/b/metadata/"));
    }
}
