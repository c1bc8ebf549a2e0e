//! `catalog matrix --offline`: which bundle folder of the repository (`operators/<package>/<version>/`)
//! holds the content of each image a template names.
//!
//! Why: templates name published images, often by digest, and the repository keeps each
//! bundle's source beside them. A reference is placed by, in order: an explicit `--bundle-map`
//! line (handled by the caller), a tag that names a version (`…:v1.2.3`), or a checked-in catalog
//! that already lists the image with its `olm.package` version. A version is placed on the folder
//! of that name (with or without a leading `v`), else on the folder whose CSV has that
//! `spec.version`.

use crate::catalog::model::{SCHEMA_BUNDLE, property_type};
use crate::catalog::repo_layout::RepoLayout;
use crate::yaml;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How a reference was placed, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlacedBy {
    /// The image tag names the version.
    Tag,
    /// A checked-in catalog lists the image with its version.
    Catalog,
}

/// The bundle folders of one operator and what the repository says about its images.
#[derive(Debug)]
pub struct Placement {
    operator: String,
    folders: Vec<(String, PathBuf)>,
    /// image → (version, catalog file that lists it).
    listed: HashMap<String, (String, PathBuf)>,
    /// CSV `spec.version` → folder, read on first need.
    csv_versions: OnceLock<BTreeMap<String, PathBuf>>,
}

/// Where a reference's content is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The bundle folder.
    pub folder: PathBuf,
    /// The version the reference was read as.
    pub version: String,
    /// How.
    pub by: PlacedBy,
}

impl Placement {
    /// Reads the operator's bundle folders and, from every checked-in catalog of it, the image
    /// and `olm.package` version of each bundle (identical files are read once).
    pub fn read(layout: &RepoLayout, operator: &str) -> Placement {
        let mut listed = HashMap::new();
        let mut seen: Vec<Vec<u8>> = Vec::new();
        for ocp in layout.catalog_folders_of(operator) {
            let file = layout.catalog_file(&ocp, operator);
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            if seen.contains(&bytes) {
                continue;
            }
            if let Ok(text) = std::str::from_utf8(&bytes) {
                for (image, version) in bundle_versions(text) {
                    listed
                        .entry(image)
                        .or_insert_with(|| (version, file.clone()));
                }
            }
            seen.push(bytes);
        }
        Placement {
            operator: operator.to_string(),
            folders: layout.bundle_dirs(operator),
            listed,
            csv_versions: OnceLock::new(),
        }
    }

    /// Places `image`, or says why it cannot (naming the image and what was tried).
    pub fn place(&self, image: &str) -> Result<Placed, String> {
        let mut tried = Vec::new();
        if let Some(version) = tag_version(image) {
            if let Some(folder) = self.folder_of(&version) {
                return Ok(Placed {
                    folder,
                    version,
                    by: PlacedBy::Tag,
                });
            }
            tried.push(format!(
                "its tag names version {version}, which no bundle folder holds"
            ));
        }
        if let Some((version, file)) = self.listed.get(image) {
            if let Some(folder) = self.folder_of(version) {
                return Ok(Placed {
                    folder,
                    version: version.clone(),
                    by: PlacedBy::Catalog,
                });
            }
            tried.push(format!(
                "{} lists it as version {version}, which no bundle folder holds",
                file.display()
            ));
        }
        if tried.is_empty() {
            tried.push("no tag names a version and no checked-in catalog lists it".to_string());
        }
        Err(format!(
            "{image}: cannot place it on a bundle folder of operators/{}/ ({}); add it to --bundle-map",
            self.operator,
            tried.join("; ")
        ))
    }

    /// The folder holding `version`: by name, then by the CSV's `spec.version`.
    pub fn folder_of(&self, version: &str) -> Option<PathBuf> {
        let by_name = self
            .folders
            .iter()
            .find(|(name, _)| name == version || name.strip_prefix('v') == Some(version));
        if let Some((_, path)) = by_name {
            return Some(path.clone());
        }
        self.csv_versions
            .get_or_init(|| {
                self.folders
                    .iter()
                    .filter_map(|(_, p)| csv_version(p).map(|v| (v, p.clone())))
                    .collect()
            })
            .get(version)
            .cloned()
    }
}

/// The version a tag names: `v1.2.3` or `1.2.3` (a digest-only reference names none).
pub fn tag_version(image: &str) -> Option<String> {
    let name = image.split_once('@').map_or(image, |(n, _)| n);
    if image.contains('@') {
        return None;
    }
    let last = name.rsplit('/').next()?;
    let (_, tag) = last.rsplit_once(':')?;
    let v = tag.strip_prefix('v').unwrap_or(tag);
    semver::Version::parse(v).ok()?;
    Some(v.to_string())
}

/// `(image, olm.package version)` of every `olm.bundle` document of a catalog file.
fn bundle_versions(text: &str) -> Vec<(String, String)> {
    let Ok(docs) = yaml::parse_stream(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for doc in &docs {
        let root = &doc.root;
        if root.get("schema").and_then(yaml::Node::as_str) != Some(SCHEMA_BUNDLE) {
            continue;
        }
        let Some(image) = root.get("image").and_then(yaml::Node::as_str) else {
            continue;
        };
        let version = root
            .get("properties")
            .and_then(yaml::Node::as_seq)
            .unwrap_or_default()
            .iter()
            .find(|p| p.get("type").and_then(yaml::Node::as_str) == Some(property_type::PACKAGE))
            .and_then(|p| p.path(&["value", "version"]))
            .and_then(yaml::Node::scalar_text);
        if let Some(v) = version {
            out.push((image.to_string(), v.to_string()));
        }
    }
    out
}

/// The `spec.version` of the CSV in a bundle folder's `manifests/`.
fn csv_version(bundle: &Path) -> Option<String> {
    let dir = std::fs::read_dir(bundle.join("manifests")).ok()?;
    let mut files: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if !text.contains("ClusterServiceVersion") {
            continue;
        }
        let Ok(docs) = yaml::parse_stream(&text) else {
            continue;
        };
        for d in &docs {
            if d.root.get("kind").and_then(yaml::Node::as_str) == Some("ClusterServiceVersion") {
                return d
                    .root
                    .path(&["spec", "version"])
                    .and_then(yaml::Node::scalar_text)
                    .map(String::from);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_versions_digests_do_not() {
        assert_eq!(tag_version("quay.io/a/b:v1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(
            tag_version("quay.io/a/b:1.2.3-rc.1").as_deref(),
            Some("1.2.3-rc.1")
        );
        assert_eq!(tag_version("quay.io/a/b@sha256:00"), None);
        assert_eq!(tag_version("quay.io/a/b:latest"), None);
        assert_eq!(tag_version("localhost:5000/a/b"), None);
    }
}
