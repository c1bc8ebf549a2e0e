//! Reads the manifests init starts from: either a bundle's `manifests/` folder or a flat folder of
//! manifests. Unlike [`crate::bundle::Bundle::load`], which turns every problem into a finding so
//! validation can report them all, init needs a yes/no answer (is there exactly one CSV?) before it
//! writes anything, so a broken YAML file here is an error naming the file and line.

use super::error::ScaffoldError;
use crate::bundle::{Csv, Object};
use crate::fsio;
use crate::yaml::{self, Node};
use std::fs;
use std::path::{Path, PathBuf};

/// One manifest file of the source folder.
#[derive(Debug, Clone)]
pub struct ManifestFile {
    /// File name (no folder).
    pub name: String,
    /// Full path.
    pub path: PathBuf,
    /// The file's bytes, so copies are byte-identical without a second read.
    pub bytes: Vec<u8>,
    /// Whether some document of the file has a `kind` (is a Kubernetes object).
    pub is_object: bool,
}

/// The manifests of the source folder and the one CSV among them.
#[derive(Debug, Clone)]
pub struct Manifests {
    /// YAML/JSON files in name order.
    pub files: Vec<ManifestFile>,
    /// Names of entries that were skipped (subfolders, hidden or non-YAML files), for a note.
    pub skipped: Vec<String>,
    /// The CSV document, as an object of the bundle model (file: [`Manifests::csv_file`]).
    pub csv: Object,
    /// The file holding the CSV.
    pub csv_file: String,
}

impl Manifests {
    /// The typed view of the CSV ([`Csv`]), what init reads it through.
    pub fn csv_view(&self) -> Csv<'_> {
        Csv { object: &self.csv }
    }
}

/// Whether a file name looks like a manifest (what opm and OLM read from `manifests/`).
fn is_manifest_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".yaml", ".yml", ".json"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Reads every manifest file at the top level of `dir` (subfolders are not read: OLM ignores
/// them) and finds the single ClusterServiceVersion.
pub fn read_manifests(dir: &Path) -> Result<Manifests, ScaffoldError> {
    let mut entries: Vec<(String, PathBuf)> = fsio::read_dir(dir)?
        .map(|e| {
            e.map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .map_err(|e| ScaffoldError::from(fsio::at("list", dir)(e)))
        })
        .collect::<Result<_, _>>()?;
    entries.sort();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut csvs: Vec<Object> = Vec::new();
    for (name, path) in entries {
        let meta = fs::metadata(&path).map_err(fsio::at("read", &path))?;
        if !meta.is_file() || name.starts_with('.') || !is_manifest_name(&name) {
            if meta.is_dir() {
                skipped.push(format!("{name}/"));
            } else {
                skipped.push(name);
            }
            continue;
        }
        let _reading = crate::guard::reading(&path);
        let bytes = fsio::read(&path)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| ScaffoldError::NotText(path.clone()))?;
        let docs = yaml::parse_stream_lenient(text)
            .map_err(|error| ScaffoldError::Yaml {
                path: path.clone(),
                error,
            })?
            .0;
        let mut is_object = false;
        let many = docs.len() > 1;
        for doc in docs {
            let kind = doc.root.get("kind").and_then(Node::scalar_text);
            is_object |= kind.is_some();
            if kind == Some("ClusterServiceVersion") {
                let label = if many {
                    format!("{} (document {})", path.display(), doc.index + 1)
                } else {
                    path.display().to_string()
                };
                let name = doc
                    .root
                    .path(&["metadata", "name"])
                    .and_then(Node::scalar_text)
                    .map(str::to_string);
                let api_version = doc
                    .root
                    .get("apiVersion")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default()
                    .to_string();
                csvs.push(Object {
                    file: label,
                    doc: doc.index,
                    root: doc.root,
                    api_version,
                    kind: "ClusterServiceVersion".to_string(),
                    name,
                });
            }
        }
        files.push(ManifestFile {
            name,
            path,
            bytes,
            is_object,
        });
    }
    let csv = match csvs.len() {
        1 => csvs.remove(0),
        0 => {
            return Err(ScaffoldError::NoCsv {
                dir: dir.to_path_buf(),
                hint: no_csv_hint(dir),
            });
        }
        _ => {
            return Err(ScaffoldError::ManyCsvs {
                files: csvs.into_iter().map(|o| o.file).collect(),
            });
        }
    };
    Ok(Manifests {
        files,
        skipped,
        csv_file: csv.file.clone(),
        csv,
    })
}

/// Points at a nested bundle (`bundle/manifests/`, the operator-sdk layout) when there is one.
fn no_csv_hint(dir: &Path) -> String {
    let nested = dir.join("bundle");
    if nested.join("manifests").is_dir() {
        format!(
            "; the bundle seems to be in {}: run init there",
            nested.display()
        )
    } else {
        "; init needs the operator's ClusterServiceVersion (kind: ClusterServiceVersion) among the YAML files".into()
    }
}

/// The package name a CSV name implies: `metadata.name` minus a `.vX.Y.Z` or `.X.Y.Z` suffix that
/// parses as semver (pre-release and build parts included), as `etcdoperator.v0.9.4` →
/// `etcdoperator`. `None` when there is no such suffix: guessing further would silently pick a
/// wrong package name, which OLM then treats as a different operator.
pub fn package_from_csv_name(name: &str) -> Option<&str> {
    name.match_indices('.').find_map(|(i, _)| {
        let (head, rest) = (&name[..i], &name[i + 1..]);
        let version = rest.strip_prefix('v').unwrap_or(rest);
        // `name.v1.0.77.0` must not become `name.v1`: a head ending in a number is part of a
        // longer, non-semver version.
        let last = head.rsplit('.').next().unwrap_or(head);
        let numeric = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let head_ok = !head.is_empty() && !numeric(last.strip_prefix('v').unwrap_or(last));
        (head_ok && semver::Version::parse(version).is_ok()).then_some(head)
    })
}

/// The package a `bundle.Dockerfile` names in its
/// `LABEL operators.operatorframework.io.bundle.package.v1=...`, looked for in the bundle
/// folder (where `bundle init --dockerfile` writes it) and in its parent (where operator-sdk
/// writes it); returns the package and the file it came from.
pub fn package_from_dockerfile(dir: &Path) -> Option<(String, PathBuf)> {
    let key = format!("{}=", crate::bundle::keys::PACKAGE);
    let parent = dir.canonicalize().ok()?.parent()?.to_path_buf();
    [
        dir.join("bundle.Dockerfile"),
        parent.join("bundle.Dockerfile"),
    ]
    .into_iter()
    .find_map(|file| {
        let text = fs::read_to_string(&file).ok()?;
        let value = text
            .lines()
            .filter(|l| l.trim_start().to_ascii_uppercase().starts_with("LABEL"))
            .find_map(|l| l.split_once(key.as_str()).map(|(_, v)| v))?;
        let value = value
            .split_whitespace()
            .next()?
            .trim_matches(|c| c == '"' || c == '\'');
        (!value.is_empty()).then(|| (value.to_string(), file))
    })
}

/// The package of a catalog-style layout, `<package>/<version>/manifests/` (as the
/// community-operators repositories keep bundles): the bundle folder is named by a version and
/// its parent by a package name (a DNS-1123 label). Returns the package and the parent folder.
pub fn package_from_layout(dir: &Path) -> Option<(String, PathBuf)> {
    let dir = dir.canonicalize().ok()?;
    let version = dir.file_name()?.to_str()?;
    let parent = dir.parent()?;
    let package = parent.file_name()?.to_str()?;
    let v = version.strip_prefix('v').unwrap_or(version);
    let is_version = semver::Version::parse(v).is_ok()
        || (!v.is_empty()
            && v.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())));
    let is_package = !package.is_empty()
        && package.len() <= 63
        && package
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !package.starts_with('-')
        && !package.ends_with('-');
    (is_version && is_package).then(|| (package.to_string(), parent.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::package_from_csv_name;

    #[test]
    fn package_names_drop_the_version_suffix() {
        assert_eq!(
            package_from_csv_name("etcdoperator.v0.9.4"),
            Some("etcdoperator")
        );
        assert_eq!(package_from_csv_name("foo.1.2.3"), Some("foo"));
        assert_eq!(
            package_from_csv_name("my.operator.v1.0.0-rc.1+build.5"),
            Some("my.operator")
        );
        assert_eq!(package_from_csv_name("foo.v1.0"), None);
        assert_eq!(package_from_csv_name("foo"), None);
        assert_eq!(package_from_csv_name("dx.1.0.77.0"), None);
        assert_eq!(package_from_csv_name("dxoperator.v1.0.77.0"), None);
        assert_eq!(package_from_csv_name(".v1.2.3"), None);
    }
}
