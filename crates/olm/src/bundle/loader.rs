//! Reads a bundle folder into a [`Bundle`]. Loading never stops at the first bad file: every
//! problem becomes a finding so one run reports everything. Only a bundle root that cannot be
//! read at all is an error (exit 2).

use super::model::{Annotation, Annotations, Bundle, FileEntry, MetadataFile, Object, keys};
use crate::findings::{Diagnostic, Rule, Severity};
use crate::yaml::{self, Node, Value, YamlError};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files above this size are not read: real bundles stay under 3 MiB per file, and a bundle has to
/// fit a 1 MiB compressed ConfigMap anyway.
pub const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// File names that hold registry credentials (docker and containers auth files).
const CREDENTIAL_FILES: [&str; 4] = [
    "auth.json",
    "config.json",
    ".dockerconfigjson",
    ".dockercfg",
];

/// Why a bundle folder could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The folder does not exist.
    #[error("bundle folder {0} does not exist")]
    NotFound(PathBuf),
    /// The path is not a folder.
    #[error(
        "{0} is not a folder: pass the bundle folder (the one holding manifests/ and metadata/)"
    )]
    NotADirectory(PathBuf),
    /// The folder could not be listed.
    #[error("cannot read bundle folder {path}")]
    Unreadable {
        /// The folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl Bundle {
    /// Loads a bundle folder; see the module docs for what is an error and what is a finding.
    pub fn load(root: &Path) -> Result<Bundle, LoadError> {
        Self::load_with(root, true)
    }

    /// Loads only what packaging needs — the annotations and where the folders are — without
    /// reading the manifests, so `build --no-validate` uses memory independent of bundle size.
    pub fn load_layout(root: &Path) -> Result<Bundle, LoadError> {
        Self::load_with(root, false)
    }

    /// A bundle from manifests held in memory rather than in a folder: a catalog's
    /// `olm.bundle.object` properties, for example, so `bundle render --package` reads them
    /// without writing them out first. Each object is read as the folder loader reads a file
    /// (same parser, same findings) and named as it would be in a folder: the i-th object is
    /// `manifests/object-{i:03}.json` in `name`, the annotations are `metadata/annotations.yaml`
    /// with one entry a line in the order given.
    pub fn from_objects<'t>(
        name: &str,
        objects: impl IntoIterator<Item = &'t str>,
        annotations: &[(&str, &str)],
    ) -> Bundle {
        let root = PathBuf::from(name);
        let mut loader = Loader {
            bundle: Bundle {
                root: root.clone(),
                manifests_dir: Some("manifests".into()),
                metadata_dir: Some("metadata".into()),
                ..Bundle::default()
            },
            canonical_root: root.clone(),
        };
        loader.take_annotations_text(ANNOTATIONS_FILE, &annotations_text(annotations));
        let mut pending: Vec<(String, PathBuf, String)> = Vec::new();
        for (i, text) in objects.into_iter().enumerate() {
            let rel = format!("manifests/object-{i:03}.json");
            let size = text.len() as u64;
            loader.size_finding(&rel, size);
            if loader.too_large(&rel, size) {
                loader.bundle.unparsable_manifests.push(rel);
                continue;
            }
            loader.bundle.files.push(FileEntry {
                file: rel.clone(),
                size,
                in_manifests: true,
            });
            pending.push((rel.clone(), root.join(rel), text.to_string()));
        }
        let parsed = parse_many(&pending);
        for ((rel, path, text), parsed) in pending.iter().zip(parsed) {
            let _reading = crate::guard::reading(path);
            loader.take_manifest(rel, text, parsed);
        }
        loader.bundle
    }

    fn load_with(root: &Path, manifests: bool) -> Result<Bundle, LoadError> {
        let meta = match fs::metadata(root) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LoadError::NotFound(root.to_path_buf()));
            }
            Err(source) => {
                return Err(LoadError::Unreadable {
                    path: root.to_path_buf(),
                    source,
                });
            }
        };
        if !meta.is_dir() {
            return Err(LoadError::NotADirectory(root.to_path_buf()));
        }
        fs::read_dir(root).map_err(|source| LoadError::Unreadable {
            path: root.to_path_buf(),
            source,
        })?;
        let canonical_root = fs::canonicalize(root).map_err(|source| LoadError::Unreadable {
            path: root.to_path_buf(),
            source,
        })?;
        let mut loader = Loader {
            bundle: Bundle {
                root: root.to_path_buf(),
                ..Bundle::default()
            },
            canonical_root,
        };
        loader.load_metadata();
        if manifests {
            loader.load_manifests();
        } else {
            loader.resolve_manifests_dir();
        }
        Ok(loader.bundle)
    }
}

struct Loader {
    bundle: Bundle,
    canonical_root: PathBuf,
}

/// Where [`Bundle::from_objects`] says its annotations are.
const ANNOTATIONS_FILE: &str = "metadata/annotations.yaml";

/// An `annotations:` file holding `entries` in order, keys and values as double-quoted scalars
/// (JSON strings are valid YAML ones), so any text survives the parse unchanged.
fn annotations_text(entries: &[(&str, &str)]) -> String {
    let quote = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let mut text = String::from("annotations:\n");
    for (key, value) in entries {
        text.push_str(&format!("  {}: {}\n", quote(key), quote(value)));
    }
    text
}

/// What a directory entry turned out to be after following symlinks safely.
enum EntryKind {
    File(u64),
    Dir,
    Other,
}

impl Loader {
    fn finding(&mut self, d: Diagnostic) {
        self.bundle.load_findings.push(d);
    }

    fn rel(&self, path: &Path) -> String {
        let rel = path
            .strip_prefix(&self.bundle.root)
            .unwrap_or(path)
            .to_string_lossy();
        if cfg!(windows) {
            rel.replace('\\', "/")
        } else {
            rel.into_owned()
        }
    }

    /// Classifies a directory entry; symlinks must stay inside the bundle.
    fn classify(&mut self, path: &Path) -> Option<EntryKind> {
        let rel = self.rel(path);
        let link_meta = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) => {
                self.finding(
                    Diagnostic::new(Rule::FileUnreadable, format!("cannot read: {e}")).in_file(rel),
                );
                return None;
            }
        };
        let meta = if link_meta.file_type().is_symlink() {
            let target = match fs::canonicalize(path) {
                Ok(t) => t,
                Err(e) => {
                    self.finding(
                        Diagnostic::new(
                            Rule::FileSymlink,
                            format!("symlink cannot be followed ({e}); replace it with the file it should point to"),
                        )
                        .in_file(rel),
                    );
                    return None;
                }
            };
            if !target.starts_with(&self.canonical_root) {
                self.finding(
                    Diagnostic::new(
                        Rule::FileSymlink,
                        format!(
                            "symlink points outside the bundle (to {}); images cannot carry it: copy the file into the bundle",
                            target.display()
                        ),
                    )
                    .in_file(rel),
                );
                return None;
            }
            match fs::metadata(path) {
                Ok(m) => m,
                Err(e) => {
                    self.finding(
                        Diagnostic::new(Rule::FileUnreadable, format!("cannot read: {e}"))
                            .in_file(rel),
                    );
                    return None;
                }
            }
        } else {
            link_meta
        };
        Some(if meta.is_dir() {
            EntryKind::Dir
        } else if meta.is_file() {
            EntryKind::File(meta.len())
        } else {
            EntryKind::Other
        })
    }

    /// Lists a folder sorted by name; unreadable folders become findings.
    fn list(&mut self, dir: &Path) -> Vec<(String, PathBuf)> {
        match fs::read_dir(dir) {
            Ok(entries) => {
                let mut out: Vec<(String, PathBuf)> = entries
                    .filter_map(Result::ok)
                    .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                    .collect();
                out.sort();
                out
            }
            Err(e) => {
                let rel = self.rel(dir);
                self.finding(
                    Diagnostic::new(Rule::FileUnreadable, format!("cannot list folder: {e}"))
                        .in_file(rel),
                );
                Vec::new()
            }
        }
    }

    /// Reads a regular file as UTF-8 text within the size cap.
    fn read_text(&mut self, path: &Path, size: u64) -> Option<String> {
        let rel = self.rel(path);
        if self.too_large(&rel, size) {
            return None;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        let read =
            fs::File::open(path).and_then(|f| f.take(MAX_FILE_SIZE + 1).read_to_end(&mut bytes));
        if let Err(e) = read {
            self.finding(
                Diagnostic::new(Rule::FileUnreadable, format!("cannot read: {e}")).in_file(rel),
            );
            return None;
        }
        if bytes.len() as u64 > MAX_FILE_SIZE {
            self.finding(
                Diagnostic::new(
                    Rule::FileTooLarge,
                    "file grew beyond the size olmpack reads",
                )
                .in_file(rel),
            );
            return None;
        }
        if let Some(text) = decode_utf16(&bytes) {
            self.finding(
                Diagnostic::new(Rule::FileNotText, "file is UTF-16; Kubernetes tools accept it, but save it as UTF-8 for everything else")
                    .with_severity(crate::findings::Severity::Warning)
                    .in_file(rel),
            );
            return Some(text);
        }
        match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count();
                self.finding(
                    Diagnostic::new(
                        Rule::FileNotText,
                        format!(
                            "not UTF-8 text (invalid byte at offset {at}); is this a binary file?"
                        ),
                    )
                    .at(rel, line),
                );
                None
            }
        }
    }

    fn yaml_finding(&mut self, rel: &str, err: &YamlError) {
        let rule = if err.duplicate_key {
            Rule::YamlDuplicateKey
        } else {
            Rule::YamlSyntax
        };
        let message = if err.duplicate_key {
            format!(
                "{}; the later value is used (Kubernetes' strict decoding rejects the file): remove one of them",
                err.message
            )
        } else {
            format!("invalid YAML: {} (column {})", err.message, err.col)
        };
        self.finding(Diagnostic::new(rule, message).at(rel, err.line));
    }

    fn load_metadata(&mut self) {
        let dir = self.bundle.root.join("metadata");
        if fs::symlink_metadata(&dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return; // format/metadata-missing reports it
        }
        match self.classify(&dir) {
            Some(EntryKind::Dir) => self.bundle.metadata_dir = Some("metadata".into()),
            Some(_) => {
                self.finding(
                    Diagnostic::new(Rule::MetadataMissing, "metadata is not a folder")
                        .in_file("metadata"),
                );
                return;
            }
            None => return,
        }
        let mut annotation_candidates = Vec::new();
        // operator-registry's ValidateBundleFormat decodes the metadata files in name order until
        // one declares a dependency; a file without content before that point crashes it.
        let mut dependencies_seen = false;
        for (name, path) in self.list(&dir) {
            let _reading = crate::guard::reading(&path);
            let rel = self.rel(&path);
            let Some(size) = self.visible_file(
                &name,
                &path,
                "metadata/ holds a folder; OLM reads only files here",
                Severity::Warning,
            ) else {
                continue;
            };
            self.bundle.files.push(FileEntry {
                file: rel.clone(),
                size,
                in_manifests: false,
            });
            match name.as_str() {
                "annotations.yaml" | "annotations.yml" | "dependencies.yaml"
                | "dependencies.yml" | "properties.yaml" | "properties.yml" => {}
                _ => {
                    self.unknown_metadata_file(&name, &path, &rel, size, &mut dependencies_seen);
                    annotation_candidates.push((path, size));
                    continue;
                }
            }
            let Some(text) = self.read_text(&path, size) else {
                if name.starts_with("annotations") {
                    self.bundle.annotations_unparsable = true;
                }
                continue;
            };
            let docs = match yaml::parse_stream_lenient(&text) {
                Ok((docs, duplicates)) => {
                    for d in &duplicates {
                        self.yaml_finding(&rel, d);
                    }
                    docs
                }
                Err(e) => {
                    self.yaml_finding(&rel, &e);
                    if name.starts_with("annotations") {
                        self.bundle.annotations_unparsable = true;
                    }
                    continue;
                }
            };
            if !dependencies_seen {
                self.check_metadata_content(&rel, !text.is_empty(), &docs, &mut dependencies_seen);
            }
            if docs.len() > 1 {
                self.finding(
                    Diagnostic::new(
                        Rule::YamlMultiDocument,
                        "metadata files must hold one YAML document; only the first is read",
                    )
                    .in_file(rel.clone()),
                );
            }
            let root = docs.into_iter().next().map(|d| d.root).unwrap_or(Node {
                value: Value::Scalar(yaml::Text::default(), yaml::ScalarKind::Null),
                line: 1,
                col: 1,
            });
            self.keep_metadata_file(&name, rel, root);
        }
        self.annotations_from_other_files(annotation_candidates);
    }

    /// A metadata file OLM does not read: reported, with a hint for a likely misspelling, and
    /// decoded quietly while no dependency was seen, as the reference validators decode it.
    fn unknown_metadata_file(
        &mut self,
        name: &str,
        path: &Path,
        rel: &str,
        size: u64,
        dependencies_seen: &mut bool,
    ) {
        let hint = if name.starts_with("dependenc") {
            " (did you mean dependencies.yaml?)"
        } else if name.starts_with("annotations") {
            " (a backup copy? OLM reads only annotations.yaml)"
        } else {
            ""
        };
        self.finding(
            Diagnostic::new(
                Rule::MetadataUnknownFile,
                format!("OLM does not read this file{hint}"),
            )
            .in_file(rel.to_string()),
        );
        if !*dependencies_seen && size > 0 && size <= 1024 * 1024 {
            // Read quietly: OLM ignores this file, only the reference validators
            // decode it, so its other problems are not olmpack's to report.
            let docs = fs::read(path)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|t| yaml::parse_stream_lenient(&t).ok());
            if let Some((docs, _)) = docs {
                self.check_metadata_content(rel, true, &docs, dependencies_seen);
            }
        }
    }

    /// Keeps the first document of a metadata file OLM reads as the bundle's annotations,
    /// dependencies or properties (the first file of each kind wins; a second annotations file
    /// is reported).
    fn keep_metadata_file(&mut self, name: &str, rel: String, root: Node) {
        if name.starts_with("annotations") {
            if self.bundle.annotations.is_none() {
                self.bundle.annotations = self.parse_annotations(&rel, &root);
                if self.bundle.annotations.is_none() {
                    self.bundle.annotations_unparsable = true;
                } else if name != "annotations.yaml" {
                    self.finding(
                        Diagnostic::new(
                            Rule::AnnotationsFallback,
                            "annotations read from annotations.yml: opm accepts it, but OLM v1 reads only metadata/annotations.yaml: rename it",
                        )
                        .in_file(rel),
                    );
                }
            } else {
                self.finding(
                    Diagnostic::new(
                        Rule::AnnotationsFallback,
                        "ignored: metadata/annotations.yaml is the annotations file; delete this one so the two cannot disagree",
                    )
                    .in_file(rel),
                );
            }
        } else if name.starts_with("dependencies") {
            self.bundle
                .dependencies
                .get_or_insert(MetadataFile { file: rel, root });
        } else {
            self.bundle
                .properties
                .get_or_insert(MetadataFile { file: rel, root });
        }
    }

    /// opm accepts any metadata file holding an `annotations:` mapping; follow it, but say so.
    fn annotations_from_other_files(&mut self, candidates: Vec<(PathBuf, u64)>) {
        if self.bundle.annotations.is_some() || self.bundle.annotations_unparsable {
            return;
        }
        for (path, size) in candidates {
            let _reading = crate::guard::reading(&path);
            let rel = self.rel(&path);
            let Some(text) = self.read_text(&path, size) else {
                continue;
            };
            let Ok(docs) = yaml::parse_stream(&text) else {
                continue;
            };
            let Some(doc) = docs.into_iter().next() else {
                continue;
            };
            if doc.root.get("annotations").and_then(Node::as_map).is_some()
                && let Some(a) = self.parse_annotations(&rel, &doc.root)
            {
                self.finding(
                        Diagnostic::new(
                            Rule::AnnotationsFallback,
                            "annotations were read from this file because metadata/annotations.yaml is missing; rename it to annotations.yaml",
                        )
                        .in_file(rel),
                    );
                self.bundle.annotations = Some(a);
                break;
            }
        }
    }

    /// Reports a metadata file without YAML content (only comments, blank lines or `---`) that
    /// operator-registry's `ValidateBundleFormat` reaches: it decodes each metadata file, in name
    /// order, into a pointer that a null document sets to nil, then dereferences it, until a file
    /// declares at least one dependency. A zero-byte file leaves the pointer alone.
    fn check_metadata_content(
        &mut self,
        rel: &str,
        has_bytes: bool,
        docs: &[yaml::Document],
        dependencies_seen: &mut bool,
    ) {
        match docs.first() {
            None if has_bytes => self.finding(
                Diagnostic::new(
                    Rule::MetadataNoContent,
                    "file holds no YAML content (only comments, blank lines or `---`): `operator-sdk bundle validate` and `opm alpha bundle validate` crash on it with a nil-pointer panic (operator-registry's ValidateBundleFormat decodes every metadata file and dereferences the null it gets); give it content (for dependencies.yaml: `dependencies: []`) or delete it (an empty file is fine)",
                )
                .in_file(rel.to_string()),
            ),
            None => {}
            Some(doc) => {
                let declares = doc
                    .root
                    .get("dependencies")
                    .and_then(Node::as_seq)
                    .is_some_and(|items| !items.is_empty());
                *dependencies_seen |= declares;
            }
        }
    }

    fn parse_annotations(&mut self, rel: &str, root: &Node) -> Option<Annotations> {
        let Some(node) = root.get("annotations") else {
            self.finding(
                Diagnostic::new(
                    Rule::AnnotationsMissing,
                    "this file has no top-level `annotations:` mapping",
                )
                .at(rel, root.line),
            );
            return None;
        };
        let Some(map) = node.as_map() else {
            self.finding(
                Diagnostic::new(
                    Rule::AnnotationsMissing,
                    format!(
                        "`annotations` must be a mapping of key: value, found a {}",
                        node.kind_name()
                    ),
                )
                .at(rel, node.line),
            );
            return None;
        };
        let mut entries = Vec::with_capacity(map.len());
        for (key, value) in map {
            let text = match &value.value {
                Value::Scalar(t, yaml::ScalarKind::Null) if t == "~" || t == "null" => {
                    String::new()
                }
                Value::Scalar(t, _) => t.to_string(),
                _ => {
                    self.finding(
                        Diagnostic::new(
                            Rule::AnnotationNotString,
                            format!(
                                "annotation {} must be a string, found a {}",
                                key.text,
                                value.kind_name()
                            ),
                        )
                        .with_severity(crate::findings::Severity::Error)
                        .at(rel, value.line),
                    );
                    continue;
                }
            };
            entries.push(Annotation {
                key: key.text.to_string(),
                value: text,
                line: key.line,
                node: value.clone(),
            });
        }
        Some(Annotations {
            file: rel.to_string(),
            line: node.line,
            entries,
        })
    }

    /// Classifies an entry of manifests/ or metadata/: the size of a regular, visible file that
    /// should be read, or `None` after reporting what it is instead (a folder, a special file, a
    /// hidden file, a credential file).
    fn visible_file(
        &mut self,
        name: &str,
        path: &Path,
        folder_message: &str,
        folder_severity: Severity,
    ) -> Option<u64> {
        let rel = self.rel(path);
        let d = match self.classify(path)? {
            EntryKind::File(_) if CREDENTIAL_FILES.contains(&name) => Diagnostic::new(
                Rule::FileSecret,
                "this looks like a registry credential file; it would be published inside the bundle image: remove it and rotate the credential",
            ),
            EntryKind::File(_) if name.starts_with('.') => {
                self.hidden_file(name, rel);
                return None;
            }
            EntryKind::File(size) => return Some(size),
            EntryKind::Dir if name.ends_with(".yaml") || name.ends_with(".yml") => Diagnostic::new(
                Rule::FileNotText,
                "is a folder, but a YAML file is expected here",
            ),
            EntryKind::Dir => Diagnostic::new(Rule::FileSubdirectory, folder_message.to_string())
                .with_severity(folder_severity),
            EntryKind::Other => Diagnostic::new(
                Rule::FileNotText,
                "not a regular file (device, socket or pipe)",
            ),
        };
        self.finding(d.in_file(rel));
        None
    }

    fn hidden_file(&mut self, name: &str, rel: String) {
        let message = if name.starts_with(".wh.") {
            "OCI whiteout file (left over from unpacking an image layer); delete it".to_string()
        } else {
            "hidden file: opm skips it but docker builds copy it into the image; delete it or move it out of the bundle".to_string()
        };
        self.finding(Diagnostic::new(Rule::FileHidden, message).in_file(rel));
    }

    fn resolve_manifests_dir(&mut self) -> Option<PathBuf> {
        let root = self.bundle.root.clone();
        let from_annotation = self
            .bundle
            .annotations
            .as_ref()
            .and_then(|a| a.value(keys::MANIFESTS))
            .map(|v| v.trim_matches('/').to_string())
            .filter(|v| !v.is_empty() && !v.contains(".."));
        let mut candidates = Vec::new();
        if let Some(name) = from_annotation {
            candidates.push(name);
        }
        candidates.push("manifests".to_string());
        for name in candidates {
            let path = root.join(&name);
            if let Ok(meta) = fs::metadata(&path)
                && meta.is_dir()
            {
                self.bundle.manifests_dir = Some(name);
                return Some(path);
            }
        }
        let mut hint = String::new();
        if root.join("bundle").join("manifests").is_dir() {
            hint = format!(
                "; the bundle seems to be one level down: validate {}",
                root.join("bundle").display()
            );
        } else if let Ok(entries) = fs::read_dir(&root) {
            let top_level_manifests = entries.filter_map(Result::ok).any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .contains("clusterserviceversion")
            });
            if top_level_manifests {
                hint = "; the manifests sit at the top level: move them into manifests/ (or run `olmpack bundle init --output-dir`)".into();
            }
        }
        self.finding(Diagnostic::new(
            Rule::ManifestsMissing,
            format!("no manifests/ folder in {}{hint}", root.display()),
        ));
        None
    }

    fn load_manifests(&mut self) {
        let Some(dir) = self.resolve_manifests_dir() else {
            return;
        };
        let mut yaml_files = 0usize;
        let mut pending: Vec<(String, PathBuf, String)> = Vec::new();
        for (name, path) in self.list(&dir) {
            let _reading = crate::guard::reading(&path);
            let rel = self.rel(&path);
            let Some(size) = self.visible_file(
                &name,
                &path,
                "subfolder in manifests/: operator-framework/api (operator-sdk bundle validate) and `opm alpha bundle validate` reject it (\"bundle manifests dir contains directory\"), `opm render` silently drops its files, OLM v0's unpack job fails on it and OLM v1 refuses the bundle; move its files up into manifests/ or out of the bundle",
                Severity::Error,
            ) else {
                continue;
            };
            let lower = name.to_ascii_lowercase();
            let known_ext = [".yaml", ".yml", ".json"]
                .iter()
                .any(|e| lower.ends_with(e));
            if known_ext {
                yaml_files += 1;
            } else {
                self.finding(
                    Diagnostic::new(
                        Rule::FileExtension,
                        "file name does not end in .yaml, .yml or .json; OLM still reads it as a manifest",
                    )
                    .in_file(rel.clone()),
                );
            }
            self.size_finding(&rel, size);
            let Some(text) = self.read_text(&path, size) else {
                self.bundle.unparsable_manifests.push(rel);
                continue;
            };
            self.bundle.files.push(FileEntry {
                file: rel.clone(),
                size,
                in_manifests: true,
            });
            pending.push((rel, path, text));
        }
        // Parsing is most of the work: a large bundle's files are parsed on all cores, then
        // taken in file order, so objects and findings do not depend on the threads.
        let parsed = parse_many(&pending);
        for ((rel, path, text), parsed) in pending.iter().zip(parsed) {
            let _reading = crate::guard::reading(path);
            self.take_manifest(rel, text, parsed);
        }
        if yaml_files == 0
            && self.bundle.unparsable_manifests.is_empty()
            && self.bundle.objects.is_empty()
        {
            let rel = self.rel(&dir);
            self.finding(
                Diagnostic::new(
                    Rule::ManifestsEmpty,
                    "manifests folder contains no YAML files",
                )
                .in_file(format!("{rel}/")),
            );
        }
    }

    /// Whether a file is beyond what olmpack reads (and says so).
    fn too_large(&mut self, rel: &str, size: u64) -> bool {
        if size <= MAX_FILE_SIZE {
            return false;
        }
        self.finding(
            Diagnostic::new(
                Rule::FileTooLarge,
                format!(
                    "file is {} MiB; olmpack reads files up to {} MiB and OLM cannot install a bundle this large",
                    size / (1024 * 1024),
                    MAX_FILE_SIZE / (1024 * 1024)
                ),
            )
            .in_file(rel),
        );
        true
    }

    /// Says when a manifest is too large for OLM v0's ConfigMap uncompressed.
    fn size_finding(&mut self, rel: &str, size: u64) {
        if size > 1024 * 1024 && size <= MAX_FILE_SIZE {
            self.finding(
                Diagnostic::new(
                    Rule::FileNearConfigMapLimit,
                    format!(
                        "file is {:.1} MiB: OLM v0 can only store it compressed; keep single manifests under 1 MiB",
                        size as f64 / (1024.0 * 1024.0)
                    ),
                )
                .in_file(rel),
            );
        }
    }

    /// Reads annotations given as text (see [`Bundle::from_objects`]).
    fn take_annotations_text(&mut self, rel: &str, text: &str) {
        self.bundle.metadata_dir = Some("metadata".into());
        self.bundle.files.push(FileEntry {
            file: rel.to_string(),
            size: text.len() as u64,
            in_manifests: false,
        });
        match yaml::parse_stream_lenient(text) {
            Ok((docs, _)) => {
                if let Some(doc) = docs.first() {
                    self.bundle.annotations = self.parse_annotations(rel, &doc.root);
                }
            }
            Err(e) => self.yaml_finding(rel, &e),
        }
        if self.bundle.annotations.is_none() {
            self.bundle.annotations_unparsable = true;
        }
    }

    fn take_manifest(&mut self, rel: &str, text: &str, parsed: Parsed) {
        let docs = match parsed {
            Ok((docs, duplicates)) => {
                for d in &duplicates {
                    self.yaml_finding(rel, d);
                }
                docs
            }
            Err(e) => {
                self.yaml_finding(rel, &e);
                self.bundle.unparsable_manifests.push(rel.to_string());
                return;
            }
        };
        if docs.is_empty() {
            self.finding(
                Diagnostic::new(Rule::ObjectShape, "file holds no YAML document").in_file(rel),
            );
            return;
        }
        if let Some(separator_line) = empty_first_document(text) {
            let kind = docs
                .first()
                .and_then(|d| field_any_case(&d.root, "kind").0)
                .unwrap_or_default();
            let opm = if kind == "ClusterServiceVersion" {
                "`opm render` fails with \"no csv in bundle\" and OLM v0 cannot install the bundle"
            } else {
                "opm drops this object and OLM v0 does not install it"
            };
            self.finding(
                Diagnostic::new(
                    Rule::YamlFirstDocumentEmpty,
                    format!(
                        "the first YAML document (before the `---` on line {separator_line}) is empty or only comments and the object is in a later document: opm (every version) and OLM v0 read only the first document of each manifest file, so {opm}; only OLM v1 reads later documents. Delete the `---` line (comments may stay above the object)"
                    ),
                )
                .at(rel, separator_line),
            );
        }
        if docs.len() > 1 {
            self.finding(
                Diagnostic::new(
                    Rule::YamlMultiDocument,
                    format!(
                        "file holds {} YAML documents; OLM v0 and opm read only the first: split it into one file per object",
                        docs.len()
                    ),
                )
                .in_file(rel),
            );
        }
        for doc in docs {
            let root = doc.root;
            if root.as_map().is_none() {
                self.finding(
                    Diagnostic::new(
                        Rule::ObjectShape,
                        format!(
                            "document must be a Kubernetes object (a mapping), found a {}",
                            root.kind_name()
                        ),
                    )
                    .at(rel, root.line),
                );
                continue;
            }
            let (api_version, api_key) = field_any_case(&root, "apiVersion");
            let (kind, kind_key) = field_any_case(&root, "kind");
            for (wrong, right) in [(api_key, "apiVersion"), (kind_key, "kind")] {
                if let Some(key) = wrong.filter(|k| k.text != right) {
                    let (severity, message) = key_case(&key.text, right, kind.as_deref());
                    self.finding(
                        Diagnostic::new(Rule::ObjectShape, message)
                            .with_severity(severity)
                            .at(rel, key.line),
                    );
                }
            }
            let Some(kind) = kind else {
                let what = if api_version.is_none() {
                    "'apiVersion' and 'kind' are missing"
                } else {
                    "'kind' is missing"
                };
                self.finding(Diagnostic::new(Rule::ObjectShape, what).at(rel, root.line));
                continue;
            };
            let api_version = match api_version {
                Some(v) => v,
                None => {
                    // OLM v0 creates the kinds it supports by kind name (typed clients), so it copes;
                    // OLM v1, kubectl and the API server do not. CSVs and CRDs are decoded by type.
                    let (severity, why) =
                        if kind == "ClusterServiceVersion" || kind == "CustomResourceDefinition" {
                            (crate::findings::Severity::Error, "it is required")
                        } else {
                            (
                                crate::findings::Severity::Warning,
                                "OLM v0 installs this kind by name, but OLM v1 and kubectl need it",
                            )
                        };
                    self.finding(
                        Diagnostic::new(
                            Rule::ObjectShape,
                            format!("'apiVersion' is missing on this {kind}: {why}"),
                        )
                        .with_severity(severity)
                        .at(rel, root.line),
                    );
                    String::new()
                }
            };
            let name = root
                .path(&["metadata", "name"])
                .and_then(Node::scalar_text)
                .map(str::to_string);
            self.bundle.objects.push(Object {
                file: rel.to_string(),
                doc: doc.index,
                root,
                api_version,
                kind,
                name,
            });
        }
    }
}

/// How a top-level key spelled in another case (`Kind:`, `ApiVersion:`) is judged. opm's render
/// and operator-framework/api decode with Go's case-insensitive `encoding/json`, but
/// operator-sdk's first check, operator-registry's `ValidateBundleContent`, decodes each manifest
/// into an `unstructured.Unstructured`, whose `kind` and `apiVersion` are read case-sensitively:
/// no `kind` fails the decode ("Object 'Kind' is missing in ..."), a CSV without `apiVersion`
/// fails its CSV validator ("'apiVersion' is missing"), a CRD without it is "Unsupported api
/// version of CRD". Those are errors, as they are for the API server; another kind's
/// `apiVersion` only matters to OLM v1 and kubectl, a warning.
fn key_case(given: &str, right: &str, kind: Option<&str>) -> (crate::findings::Severity, String) {
    use crate::findings::Severity;
    let sdk = match (right, kind) {
        ("kind", _) => Some("Object 'Kind' is missing in '...'".to_string()),
        (_, Some("ClusterServiceVersion")) => Some("'apiVersion' is missing".to_string()),
        (_, Some("CustomResourceDefinition")) => {
            Some("Unsupported api version of CRD: ".to_string())
        }
        _ => None,
    };
    match sdk {
        Some(says) => (
            Severity::Error,
            format!(
                "key \"{given}\" should be \"{right}\": operator-sdk bundle validate decodes it case-sensitively and rejects the bundle (\"{says}\"), as the Kubernetes API server does; only opm's Go JSON decoding ignores the case. Rename the key to \"{right}\""
            ),
        ),
        None => (
            Severity::Warning,
            format!(
                "key \"{given}\" should be \"{right}\": Go's JSON decoding in opm and operator-sdk ignores the case, the Kubernetes API server does not"
            ),
        ),
    }
}

/// Finds a top-level string field, falling back to a case-insensitive match as Go's
/// `encoding/json` does; returns the value and the key it was found under.
fn field_any_case<'a>(root: &'a Node, name: &str) -> (Option<String>, Option<&'a yaml::Key>) {
    let entries = root.as_map().unwrap_or(&[]);
    let found = entries.iter().find(|(k, _)| k.text == name).or_else(|| {
        entries
            .iter()
            .find(|(k, _)| k.text.eq_ignore_ascii_case(name))
    });
    match found {
        Some((key, value)) => (value.scalar_text().map(str::to_string), Some(key)),
        None => (None, None),
    }
}

/// When the first document of `text`, cut as Kubernetes' apimachinery `YAMLReader` cuts it (the
/// reader opm and OLM v0 decode manifests with), holds nothing but blank lines and comments while
/// a later one follows, returns the 1-based line of the `---` that ends it. libyaml does not see
/// an empty document there (a comment before the first `---` is not a document to it), so this
/// follows the reader's rule instead: a line starting `---` followed only by spaces or a comment
/// separates documents, and separators before any other line are skipped.
fn empty_first_document(text: &str) -> Option<usize> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut buffered = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if rest.is_empty() || rest.starts_with('#') {
                if buffered {
                    return Some(i + 1);
                }
                continue;
            }
        }
        let trimmed = line.trim();
        if !trimmed.is_empty() && !trimmed.starts_with('#') {
            return None;
        }
        buffered = true;
    }
    None
}

/// Decodes UTF-16 text that starts with a byte-order mark (libyaml and go-yaml accept it).
fn decode_utf16(bytes: &[u8]) -> Option<String> {
    let little = match bytes {
        [0xff, 0xfe, ..] => true,
        [0xfe, 0xff, ..] => false,
        _ => return None,
    };
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|c| {
            if little {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        })
        .collect();
    String::from_utf16(&units).ok()
}

/// What parsing one manifest file gave: its documents and the duplicate keys found, or the error.
type Parsed = Result<(Vec<yaml::Document>, Vec<YamlError>), YamlError>;

/// Bundles with fewer bytes than this are parsed on the calling thread: a thread costs more.
const PARALLEL_FROM: usize = 1 << 20;

/// Parses manifest files, in parallel when there is enough text, results in input order. A panic
/// while parsing a file reaches the caller's isolation boundary naming that file, as it would
/// have on the calling thread.
fn parse_many(files: &[(String, PathBuf, String)]) -> Vec<Parsed> {
    let parse = |(_, path, text): &(String, PathBuf, String)| {
        let _parsing = crate::guard::parsing(path);
        yaml::parse_stream_lenient(text)
    };
    let bytes: usize = files.iter().map(|(_, _, t)| t.len()).sum();
    let threads = crate::parallel::cores()
        .min(files.len())
        .min(bytes / PARALLEL_FROM + 1);
    if threads <= 1 {
        return files.iter().map(parse).collect();
    }
    // Each file inside its own isolation boundary, so a failure keeps its message and file on
    // its way back to this thread.
    let parsed = crate::parallel::map_indexed(files.len(), threads, None, |i| {
        crate::guard::catch(|| files.get(i).map(parse))
    });
    parsed
        .into_iter()
        .map(|outcome| match outcome {
            Ok(Some(parsed)) => parsed,
            Ok(None) => Err(YamlError {
                message: "olmpack did not parse this file (internal error)".into(),
                line: 1,
                col: 1,
                duplicate_key: false,
            }),
            Err(failure) => crate::guard::rethrow(failure),
        })
        .collect()
}

#[cfg(test)]
mod from_objects_tests {
    use super::*;

    /// A bundle built from objects in memory is the bundle the loader reads from a folder
    /// holding the same objects under the same names: same objects, positions and findings.
    #[test]
    fn objects_in_memory_load_as_the_same_folder_does() {
        let objects = [
            r#"{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"op.v1"},"spec":{}}"#,
            "{\"apiVersion\":\"v1\",\n\"Kind\":\"Service\",\"metadata\":{\"name\":\"s\"}}",
            r#"{"apiVersion":"v1","metadata":{"name":"no-kind"}}"#,
            "{not json",
        ];
        let annotations = [
            (
                keys::MEDIATYPE,
                crate::bundle::MediaType::RegistryV1.as_str(),
            ),
            (keys::MANIFESTS, "manifests/"),
            (keys::METADATA, "metadata/"),
            (keys::PACKAGE, "op: \"quoted\""),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(dir.path().join("manifests")).expect("mkdir");
        fs::create_dir_all(dir.path().join("metadata")).expect("mkdir");
        for (i, o) in objects.iter().enumerate() {
            fs::write(dir.path().join(format!("manifests/object-{i:03}.json")), o).expect("write");
        }
        fs::write(
            dir.path().join(ANNOTATIONS_FILE),
            annotations_text(&annotations),
        )
        .expect("write");
        let folder = Bundle::load(dir.path()).expect("loads");
        let memory = Bundle::from_objects("op.v1", objects, &annotations);
        assert_eq!(memory.objects, folder.objects);
        assert_eq!(memory.load_findings, folder.load_findings);
        assert_eq!(memory.annotations, folder.annotations);
        assert_eq!(memory.files, folder.files);
        assert_eq!(memory.unparsable_manifests, folder.unparsable_manifests);
        assert_eq!(memory.manifests_dir, folder.manifests_dir);
        assert_eq!(memory.metadata_dir, folder.metadata_dir);
        assert_eq!(memory.package(), Some("op: \"quoted\""));
        assert_eq!(memory.objects.len(), 2);
    }
}
