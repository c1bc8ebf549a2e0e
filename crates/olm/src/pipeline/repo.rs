//! A checkout laid out as community-operators-prod and certified-operators are, read as
//! operator-pipelines' `operator_repo` reads it: `config.yaml`, `operators/<package>/ci.yaml`,
//! `operators/<package>/<version>/{manifests,metadata}/`, `catalogs/<ocp>/<package>/catalog.*`.
//! Every YAML file keeps its positions, so findings can name a line.

use crate::catalog::model::SCHEMA_BUNDLE;
use crate::yaml::{self, Node};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// Why a checkout cannot be checked at all (a finding is not an error: these stop the run).
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The root has no `operators/` folder.
    #[error("{0} is not an operator repository: it has no operators/ folder (use --repo ROOT)")]
    NotARepo(PathBuf),
    /// The named operator has no folder.
    #[error(
        "operator {name} not found: {path} does not exist or holds neither ci.yaml nor a bundle"
    )]
    NoOperator {
        /// The package name asked for.
        name: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The named bundle version has no folder.
    #[error("bundle {operator}/{version} not found (versions: {known})")]
    NoBundle {
        /// The package.
        operator: String,
        /// The version asked for.
        version: String,
        /// The versions that exist.
        known: String,
    },
    /// The operator has no bundle at all and no version was named.
    #[error("operator {0} has no bundle folder (<version>/ with manifests/ and metadata/)")]
    NoBundles(String),
    /// `--target-index` does not name a folder.
    #[error("--target-index {}: not a folder (one FBC folder per OCP version, e.g. DIR/v4.18/)", .0.display())]
    NoTargetIndex(PathBuf),
    /// `--target-index` given to a profile without the pruning check: it would be ignored.
    #[error("--target-index applies to --profile konflux-fbc only (not {0})")]
    TargetIndexProfile(&'static str),
    /// A `--catalogs` entry is not `<ocp>/<package>`.
    #[error("--catalogs entry \"{0}\" is not <ocp>/<package>, e.g. v4.18/my-operator")]
    BadCatalog(String),
    /// A `--catalogs` entry names a folder with no catalog file.
    #[error(
        "--catalogs entry \"{entry}\": {path} holds no catalog.yaml, catalog.yml or catalog.json"
    )]
    NoCatalog {
        /// The entry as given.
        entry: String,
        /// The folder looked in.
        path: PathBuf,
    },
    /// A link in the checkout leads out of it (or a part of it cannot be listed): a pull
    /// request must not make the checker read a file of the machine it runs on.
    #[error("{}: {source}: refusing to read a checkout that links out of itself", root.display())]
    Escapes {
        /// The checkout.
        root: PathBuf,
        /// The link and where it leads.
        #[source]
        source: crate::fsio::untrusted::UntrustedReadError,
    },
    /// The repository's `config.yaml` cannot be read, or an ignore pattern in it is not a
    /// regular expression: its ignore lists would silently be empty.
    #[error("config.yaml{}: {reason}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Config {
        /// The line, when known.
        line: Option<usize>,
        /// What is wrong.
        reason: String,
    },
    /// A folder could not be listed.
    #[error(transparent)]
    Fs(#[from] crate::fsio::FsError),
}

/// The most olmpack reads of one file of a checkout (the largest published catalog.yaml files
/// are tens of MiB).
const MAX_FILE: u64 = 512 << 20;

/// Refuses `sub` (a part of the checkout about to be read) when it or a link under it leads out
/// of `root`.
fn confined(root: &Path, sub: &str) -> Result<(), RepoError> {
    crate::fsio::untrusted::confined(root, Path::new(sub)).map_err(|source| RepoError::Escapes {
        root: root.to_path_buf(),
        source,
    })
}

/// Reads a file of the checkout, every link on the way kept inside `root`, with a cap.
fn read_confined(root: &Path, rel: &str) -> Result<String, String> {
    let bytes =
        crate::fsio::untrusted::read(root, Path::new(rel), MAX_FILE).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| format!("{rel}: not UTF-8 text"))
}

/// A YAML file of the checkout: its path relative to the root, and its first document (or why it
/// could not be read; a check that needs it reports that).
#[derive(Debug, Clone)]
pub struct Doc {
    /// Relative path with `/` separators.
    pub file: String,
    /// The first document, or the parse error.
    pub root: Result<Node, String>,
    /// The line of a second document when the file holds more than one: the pipeline reads a
    /// manifest with PyYAML's `safe_load`, which fails on such a file, and reports that as the
    /// check's failure.
    pub second_document_line: Option<usize>,
}

impl Doc {
    fn load(root: &Path, rel: &str) -> Option<Doc> {
        let path = root.join(rel);
        if !path.is_file() {
            return None;
        }
        let mut second_document_line = None;
        let parsed = match read_confined(root, rel) {
            Err(e) => Err(e),
            Ok(text) => match yaml::parse_stream_lenient(&text) {
                Ok((docs, _)) => {
                    // An empty document before the first one still makes two for PyYAML.
                    second_document_line = match docs.as_slice() {
                        [_, second, ..] => Some(second.root.line),
                        [only] if only.index > 0 => Some(1),
                        _ => None,
                    };
                    Ok(docs.into_iter().next().map(|d| d.root).unwrap_or(Node {
                        value: yaml::Value::Map(Vec::new()),
                        line: 1,
                        col: 1,
                    }))
                }
                Err(e) => Err(e.to_string()),
            },
        };
        Some(Doc {
            file: rel.to_string(),
            root: parsed,
            second_document_line,
        })
    }

    /// The root node when it parsed.
    pub fn node(&self) -> Option<&Node> {
        self.root.as_ref().ok()
    }

    /// A node at a key path, when it exists.
    pub fn at(&self, keys: &[&str]) -> Option<&Node> {
        self.node().and_then(|n| n.path(keys))
    }

    /// The line of a key path, or of its deepest existing parent, or 1.
    pub fn line_of(&self, keys: &[&str]) -> Option<usize> {
        let mut node = self.node()?;
        let mut line = node.line;
        for key in keys {
            match node.get(key) {
                Some(next) => {
                    node = next;
                    line = next.line;
                }
                None => break,
            }
        }
        Some(line)
    }

    /// The text of a scalar at a key path (numbers and booleans as written).
    pub fn text(&self, keys: &[&str]) -> Option<&str> {
        self.at(keys).and_then(Node::scalar_text)
    }
}

/// The repository: its root, `config.yaml`, and the OCP versions its `catalogs/` holds.
#[derive(Debug)]
pub struct Repo {
    /// The checkout's root folder.
    pub root: PathBuf,
    /// `config.yaml` at the root, when present.
    pub config: Option<Doc>,
    /// The `catalogs/vX.Y` folders, newest first.
    pub ocp_versions: Vec<(u64, u64)>,
}

impl Repo {
    /// Opens a checkout (it must hold `operators/`).
    pub fn open(root: &Path) -> Result<Repo, RepoError> {
        if !root.join("operators").is_dir() {
            return Err(RepoError::NotARepo(root.to_path_buf()));
        }
        let mut ocp_versions = Vec::new();
        let catalogs = root.join("catalogs");
        if catalogs.is_dir() {
            for entry in crate::fsio::read_dir(&catalogs)?.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if entry.path().is_dir()
                    && let Some(v) = super::ocp::catalog_version(&name)
                {
                    ocp_versions.push(v);
                }
            }
        }
        ocp_versions.sort_unstable_by(|a, b| b.cmp(a));
        let config = Doc::load(root, "config.yaml");
        if let Some(Doc {
            root: Err(reason), ..
        }) = &config
        {
            return Err(RepoError::Config {
                line: None,
                reason: reason.clone(),
            });
        }
        Ok(Repo {
            root: root.to_path_buf(),
            config,
            ocp_versions,
        })
    }

    /// `organization` from `config.yaml` (community-operators, certified-operators, redhat-marketplace).
    pub fn organization(&self) -> Option<&str> {
        self.config.as_ref()?.text(&["organization"])
    }

    /// Every operator folder under `operators/`, sorted by name.
    pub fn operator_names(&self) -> Result<Vec<String>, RepoError> {
        let mut names = Vec::new();
        for entry in crate::fsio::read_dir(&self.root.join("operators"))?.flatten() {
            let path = entry.path();
            if is_operator_dir(&path) {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Loads one operator and all its bundles.
    pub fn operator(&self, name: &str) -> Result<Operator, RepoError> {
        let dir = self.root.join("operators").join(name);
        if !crate::catalog::repo_layout::is_plain_name(name) || !is_operator_dir(&dir) {
            return Err(RepoError::NoOperator {
                name: name.to_string(),
                path: dir,
            });
        }
        let rel = format!("operators/{name}");
        confined(&self.root, &rel)?;
        let mut bundles = Vec::new();
        for entry in crate::fsio::read_dir(&dir)?.flatten() {
            let path = entry.path();
            if is_bundle_dir(&path) {
                let version = entry.file_name().to_string_lossy().into_owned();
                bundles.push(Bundle::load(
                    &self.root,
                    &format!("{rel}/{version}"),
                    name,
                    &version,
                ));
            }
        }
        bundles.sort_by(|a, b| a.dir.cmp(&b.dir));
        Ok(Operator {
            name: name.to_string(),
            rel: rel.clone(),
            ci: Doc::load(&self.root, &format!("{rel}/ci.yaml")),
            bundles,
        })
    }

    /// The `catalogs/<ocp>/<package>` folders that hold a catalog file for `package`, oldest first.
    pub fn catalogs_of(&self, package: &str) -> Vec<String> {
        let mut found: Vec<(u64, u64, String)> = Vec::new();
        let catalogs = self.root.join("catalogs");
        let Ok(entries) = crate::fsio::read_dir(&catalogs) else {
            return Vec::new();
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if catalog_file(&entry.path().join(package)).is_some() {
                let (a, b) = super::ocp::catalog_version(&name).unwrap_or((u64::MAX, 0));
                found.push((a, b, format!("{name}/{package}")));
            }
        }
        found.sort();
        found.into_iter().map(|(_, _, n)| n).collect()
    }

    /// Every package folder name under `catalogs/<ocp>/`, over all OCP versions: the packages a
    /// fragment of this checkout can hold, so a released index is read for those only.
    pub fn catalog_packages(&self) -> std::collections::BTreeSet<String> {
        let mut names = std::collections::BTreeSet::new();
        let Ok(versions) = crate::fsio::read_dir(&self.root.join("catalogs")) else {
            return names;
        };
        for version in versions.flatten() {
            if let Ok(packages) = crate::fsio::read_dir(&version.path()) {
                for p in packages.flatten() {
                    names.insert(p.file_name().to_string_lossy().into_owned());
                }
            }
        }
        names
    }

    /// Opens `<ocp>/<package>` under `catalogs/`; an entry with no catalog file is an error
    /// (entries found by [`Repo::catalogs_of`] always have one; one given with `--catalogs` and
    /// missing is most likely mistyped).
    pub fn operator_catalog(&self, entry: &str) -> Result<Option<OperatorCatalog>, RepoError> {
        let Some((ocp, package)) = entry.split_once('/') else {
            return Err(RepoError::BadCatalog(entry.to_string()));
        };
        if ocp.is_empty()
            || package.is_empty()
            || package.contains('/')
            || ocp == ".."
            || package == ".."
        {
            return Err(RepoError::BadCatalog(entry.to_string()));
        }
        let dir = self.root.join("catalogs").join(ocp).join(package);
        confined(&self.root, &format!("catalogs/{ocp}/{package}"))?;
        let Some(file_name) = catalog_file(&dir) else {
            return Err(RepoError::NoCatalog {
                entry: entry.to_string(),
                path: dir,
            });
        };
        let rel = format!("catalogs/{ocp}/{package}/{file_name}");
        let blobs = match read_confined(&self.root, &rel) {
            Err(e) => Err(e),
            Ok(text) => yaml::parse_stream_lenient(&text)
                .map(|(docs, _)| docs.into_iter().map(|d| d.root).collect())
                .map_err(|e| e.to_string()),
        };
        Ok(Some(OperatorCatalog {
            ocp: ocp.to_string(),
            package: package.to_string(),
            file: rel,
            blobs,
        }))
    }
}

fn is_bundle_dir(path: &Path) -> bool {
    path.is_dir() && path.join("manifests").is_dir() && path.join("metadata").is_dir()
}

fn is_operator_dir(path: &Path) -> bool {
    if !path.is_dir() {
        return false;
    }
    if path.join("ci.yaml").is_file() {
        return true;
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().any(|e| is_bundle_dir(&e.path())))
        .unwrap_or(false)
}

fn catalog_file(dir: &Path) -> Option<&'static str> {
    ["catalog.yaml", "catalog.yml", "catalog.json"]
        .into_iter()
        .find(|name| dir.join(name).is_file())
}

/// One `catalogs/<ocp>/<package>/catalog.*` file.
#[derive(Debug)]
pub struct OperatorCatalog {
    /// The catalog folder name (`v4.18`).
    pub ocp: String,
    /// The package folder name.
    pub package: String,
    /// The catalog file, relative to the root.
    pub file: String,
    /// Its documents, or why it could not be read.
    pub blobs: Result<Vec<Node>, String>,
}

impl OperatorCatalog {
    /// `v4.18/<package>`, as the pipeline names it.
    pub fn name(&self) -> String {
        format!("{}/{}", self.ocp, self.package)
    }

    /// The `olm.bundle` blobs, in file order.
    pub fn bundles(&self) -> impl Iterator<Item = &Node> {
        self.blobs
            .as_ref()
            .map(|b| b.as_slice())
            .unwrap_or(&[])
            .iter()
            .filter(|b| b.get("schema").and_then(Node::as_str) == Some(SCHEMA_BUNDLE))
    }
}

/// An operator: its folder, `ci.yaml`, and bundles.
#[derive(Debug)]
pub struct Operator {
    /// The package folder name.
    pub name: String,
    /// `operators/<name>`.
    pub rel: String,
    /// `ci.yaml`, when present.
    pub ci: Option<Doc>,
    /// Every bundle folder, by folder name.
    pub bundles: Vec<Bundle>,
}

impl Operator {
    /// Whether `ci.yaml` says `fbc: enabled: true` (the pipeline then skips the non-FBC checks).
    pub fn fbc_enabled(&self) -> bool {
        self.ci
            .as_ref()
            .and_then(|c| c.at(&["fbc", "enabled"]))
            .and_then(Node::as_bool)
            .unwrap_or(false)
    }

    /// `updateGraph` from ci.yaml.
    pub fn update_graph_mode(&self) -> Option<&str> {
        self.ci.as_ref()?.text(&["updateGraph"])
    }

    /// The bundle in folder `version`.
    pub fn bundle(&self, version: &str) -> Option<&Bundle> {
        self.bundles.iter().find(|b| b.dir == version)
    }

    /// The newest bundle by CSV version (folder name when a CSV cannot be read).
    pub fn newest(&self) -> Option<&Bundle> {
        self.bundles.iter().max_by(|a, b| a.cmp_version(b))
    }

    /// The bundles of a channel, oldest first (the pipeline's `channel_bundles`).
    pub fn channel_bundles(&self, channel: &str) -> Vec<&Bundle> {
        let mut list: Vec<&Bundle> = self
            .bundles
            .iter()
            .filter(|b| b.channels().iter().any(|c| c == channel))
            .collect();
        list.sort_by(|a, b| a.cmp_version(b));
        list
    }
}

/// A bundle folder: its annotations, its CSV, and `release-config.yaml`.
#[derive(Debug)]
pub struct Bundle {
    /// The folder name (the pipeline's `operator_version`).
    pub dir: String,
    /// The package folder name.
    pub operator: String,
    /// `operators/<package>/<version>`.
    pub rel: String,
    /// `metadata/annotations.yaml`.
    pub annotations: Option<Doc>,
    /// The first `manifests/*.clusterserviceversion.yaml` (or `.yml`).
    pub csv: Option<Doc>,
    /// `release-config.yaml`, when present.
    pub release_config: Option<Doc>,
    /// The names of `manifests/*.yaml` and `*.yml`, sorted (read on demand: only the bundle
    /// under test needs its other manifests).
    pub manifest_names: Vec<String>,
    /// The repository root, to read the manifests from.
    root: PathBuf,
}

impl Bundle {
    fn load(root: &Path, rel: &str, operator: &str, dir: &str) -> Bundle {
        let mut names: Vec<String> = std::fs::read_dir(root.join(rel).join("manifests"))
            .map(|it| {
                it.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names.retain(|n| n.ends_with(".yaml") || n.ends_with(".yml"));
        let csv = [".clusterserviceversion.yaml", ".clusterserviceversion.yml"]
            .iter()
            .find_map(|suffix| names.iter().find(|n| n.ends_with(suffix)))
            .and_then(|n| Doc::load(root, &format!("{rel}/manifests/{n}")));
        Bundle {
            dir: dir.to_string(),
            operator: operator.to_string(),
            rel: rel.to_string(),
            annotations: Doc::load(root, &format!("{rel}/metadata/annotations.yaml")),
            csv,
            release_config: Doc::load(root, &format!("{rel}/release-config.yaml")),
            manifest_names: names,
            root: root.to_path_buf(),
        }
    }

    /// Every manifest file, parsed (first document of each).
    pub fn manifests(&self) -> Vec<Doc> {
        self.manifest_names
            .iter()
            .filter_map(|n| Doc::load(&self.root, &format!("{}/manifests/{n}", self.rel)))
            .collect()
    }

    /// `Bundle(<package>/<version>)`, as the pipeline's messages name a bundle.
    pub fn display(&self) -> String {
        format!("Bundle({}/{})", self.operator, self.dir)
    }

    /// An annotation's text from `metadata/annotations.yaml`.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.text(&["annotations", key])
    }

    /// The line of an annotation (or of `annotations:`).
    pub fn annotation_line(&self, key: &str) -> Option<usize> {
        self.annotations.as_ref()?.line_of(&["annotations", key])
    }

    /// The annotations file path (even when missing).
    pub fn annotations_file(&self) -> String {
        format!("{}/metadata/annotations.yaml", self.rel)
    }

    /// The package annotation (empty when missing, as the pipeline reads it); `None` when
    /// annotations.yaml is not a mapping (the pipeline cannot read it).
    pub fn metadata_operator_name(&self) -> Option<&str> {
        if self.annotations_invalid() {
            return None;
        }
        Some(
            self.annotation(olmpack_ground::bundle_keys::PACKAGE)
                .unwrap_or(""),
        )
    }

    /// Whether annotations.yaml exists but is neither a mapping nor empty.
    pub fn annotations_invalid(&self) -> bool {
        match self.annotations.as_ref().map(|a| &a.root) {
            Some(Err(_)) => true,
            Some(Ok(node)) => !matches!(node.value, yaml::Value::Map(_)) && !node.is_null(),
            None => false,
        }
    }

    /// The channels annotation, split on commas and trimmed.
    pub fn channels(&self) -> Vec<String> {
        self.annotation("operators.operatorframework.io.bundle.channels.v1")
            .map(|s| s.split(',').map(|c| c.trim().to_string()).collect())
            .unwrap_or_default()
    }

    /// The default channel annotation.
    pub fn default_channel(&self) -> Option<String> {
        self.annotation("operators.operatorframework.io.bundle.channel.default.v1")
            .map(|s| s.trim().to_string())
    }

    /// `metadata.name` of the CSV split at its first dot: (name, version without a leading `v`).
    pub fn csv_full_name(&self) -> Option<(&str, &str)> {
        let name = self.csv.as_ref()?.text(&["metadata", "name"])?;
        let (n, v) = name.split_once('.')?;
        Some((n, v.trim_start_matches('v')))
    }

    /// The CSV file (relative), or the folder where it was expected.
    pub fn csv_file(&self) -> String {
        self.csv
            .as_ref()
            .map(|c| c.file.clone())
            .unwrap_or_else(|| format!("{}/manifests", self.rel))
    }

    /// Text at a key path of the CSV.
    pub fn csv_text(&self, keys: &[&str]) -> Option<&str> {
        self.csv.as_ref()?.text(keys)
    }

    /// Line of a key path of the CSV.
    pub fn csv_line(&self, keys: &[&str]) -> Option<usize> {
        self.csv.as_ref()?.line_of(keys)
    }

    /// The version the pipeline orders bundles by (the CSV name's version, else the folder).
    pub fn sort_version(&self) -> &str {
        self.csv_full_name().map(|(_, v)| v).unwrap_or(&self.dir)
    }

    /// The pipeline's bundle order: CSV name, then semver, lexical when either is not semver.
    pub fn cmp_version(&self, other: &Bundle) -> Ordering {
        let name = |b: &Bundle| {
            b.csv_full_name()
                .map(|(n, _)| n.to_string())
                .unwrap_or_default()
        };
        name(self).cmp(&name(other)).then_with(|| {
            let (a, b) = (self.sort_version(), other.sort_version());
            match (semver::Version::parse(a), semver::Version::parse(b)) {
                (Ok(x), Ok(y)) => x.cmp_precedence(&y),
                _ => a.cmp(b),
            }
        })
    }
}
