//! Package-manifest folders: `<package>.package.yaml` listing channels by their head
//! `currentCSV`, and one folder per version holding a CSV and its CRDs. Read the way opm's sqlite
//! `DirectoryLoader` reads them (every non-hidden file of the tree, first YAML document only, a
//! bundle = all objects of a CSV's folder), with file and line kept for every finding, so the
//! same reading feeds validation ([`validate`]), the loader emulation ([`graph`]) and the bundle
//! migration ([`migrate`]).

pub mod catalog;
pub mod graph;
pub mod migrate;
pub mod validate;

use crate::bundle::model::Object;
use crate::findings::{Diagnostic, Rule};
use crate::yaml::{self, Node, Value};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files above this size are not read (real package files stay far below it).
pub const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// Why a package-manifest folder could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The folder does not exist.
    #[error("package-manifest folder {0} does not exist")]
    NotFound(PathBuf),
    /// The path is not a folder.
    #[error(
        "{0} is not a folder: pass the package folder (the one holding <package>.package.yaml)"
    )]
    NotADirectory(PathBuf),
    /// The folder could not be listed.
    #[error("cannot read package-manifest folder {path}: {source}")]
    Unreadable {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// One channel as the package file declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelDecl {
    /// Channel name.
    pub name: String,
    /// The channel head (`currentCSV`).
    pub current_csv: String,
    /// Line of the channel entry.
    pub line: usize,
}

/// The package file (`<package>.package.yaml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    /// File relative to the package folder.
    pub file: String,
    /// `packageName`.
    pub name: String,
    /// Channels in file order.
    pub channels: Vec<ChannelDecl>,
    /// `defaultChannel` as written (None when absent or empty).
    pub default_channel: Option<String>,
    /// Line of `defaultChannel`, or of the document.
    pub default_line: usize,
    /// Line of the document.
    pub line: usize,
}

impl PackageFile {
    /// opm's `GetDefaultChannel`: `defaultChannel` if set, else the only channel, else none.
    pub fn effective_default(&self) -> Option<&str> {
        match &self.default_channel {
            Some(d) => Some(d),
            None if self.channels.len() == 1 => Some(&self.channels[0].name),
            None => None,
        }
    }
}

/// A file of the tree, decoded as opm decodes it (first document only).
#[derive(Debug, Clone)]
pub struct TreeFile {
    /// Path relative to the package folder (`/` separators).
    pub file: String,
    /// The folder it is in, relative to the package folder (`""` for the root).
    pub dir: String,
    /// File name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// The first document, when the file parsed and has one.
    pub first: Option<Node>,
}

/// One version: a CSV and the other objects of its folder, as opm's `loadBundle` makes it.
#[derive(Debug, Clone)]
pub struct Version {
    /// Folder relative to the package folder.
    pub dir: String,
    /// CSV name (`metadata.name`).
    pub name: String,
    /// `spec.version` (empty when absent).
    pub version: String,
    /// `spec.replaces` (empty when absent).
    pub replaces: String,
    /// `spec.skips`.
    pub skips: Vec<String>,
    /// The `olm.skipRange` annotation (empty when absent).
    pub skip_range: String,
    /// Index of the CSV in `objects`.
    pub csv: usize,
    /// Every object of the folder in file-name order, other CSVs left out (as opm stores them).
    pub objects: Vec<Object>,
    /// The names of the files of the folder (each object's file is among them).
    pub files: Vec<String>,
}

impl Version {
    /// The CSV object.
    pub fn csv(&self) -> &Object {
        &self.objects[self.csv]
    }

    /// The typed view of the CSV, what its fields are read through.
    pub fn csv_view(&self) -> crate::bundle::Csv<'_> {
        crate::bundle::Csv { object: self.csv() }
    }
}

/// A package-manifest folder as read.
#[derive(Debug, Clone)]
pub struct PackageDir {
    /// The folder as given.
    pub root: PathBuf,
    /// The package file, when one was found and decoded.
    pub package: Option<PackageFile>,
    /// Every version (one per CSV), in tree order.
    pub versions: Vec<Version>,
    /// Every file read.
    pub files: Vec<TreeFile>,
    /// Findings from reading (syntax errors, shapes); validation adds the rest.
    pub findings: Vec<Diagnostic>,
}

/// Whether `dir` looks like a package-manifest package: a folder without `metadata/` or
/// `manifests/` whose top level holds a package file, i.e. a small YAML or JSON file whose first
/// document declares `packageName` and has no `schema` (which would make it a file-based catalog
/// blob). Reads only top-level files under 1 MiB that mention `packageName`.
pub fn is_package_manifest_dir(dir: &Path) -> bool {
    if !dir.is_dir() || dir.join("metadata").is_dir() || dir.join("manifests").is_dir() {
        return false;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
        if name.starts_with('.')
            || !(name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json"))
            || !entry
                .metadata()
                .is_ok_and(|m| m.is_file() && m.len() < 1024 * 1024)
        {
            continue;
        }
        // `<package>.package.yaml` by name: a package file even when it does not parse (so
        // the user hears about its syntax), unless it is a catalog blob.
        let named = name.ends_with("package.yaml")
            || name.ends_with("package.yml")
            || name.ends_with("package.json");
        let Ok(bytes) = fs::read(entry.path()) else {
            continue;
        };
        if !named {
            let Some(package_name_at) = memchr::memmem::find(&bytes, b"packageName") else {
                continue;
            };
            // A catalog blob file names its schema before any `packageName` (which its
            // olm.package properties carry): no need to parse it, which would cost catalog
            // render a second parse of every catalog file.
            if [&b"schema:"[..], &b"\"schema\""[..]]
                .iter()
                .filter_map(|k| memchr::memmem::find(&bytes, k))
                .any(|at| at < package_name_at)
            {
                continue;
            }
        }
        let parsed = String::from_utf8(bytes)
            .ok()
            .and_then(|text| yaml::parse_stream_lenient(&text).ok());
        let Some((docs, _)) = parsed else {
            if named {
                return true;
            }
            continue;
        };
        if let Some(root) = docs.first().map(|d| &d.root)
            && root.get("schema").is_none()
            && (named
                || root
                    .get("packageName")
                    .and_then(Node::as_str)
                    .is_some_and(|s| !s.is_empty()))
        {
            return true;
        }
    }
    false
}

impl PackageDir {
    /// Reads a package folder. Only a folder that cannot be listed at all is an error; every
    /// other problem is a finding (so one run reports everything).
    pub fn read(root: &Path) -> Result<PackageDir, ReadError> {
        let meta = match fs::metadata(root) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReadError::NotFound(root.to_path_buf()));
            }
            Err(source) => {
                return Err(ReadError::Unreadable {
                    path: root.to_path_buf(),
                    source,
                });
            }
        };
        if !meta.is_dir() {
            return Err(ReadError::NotADirectory(root.to_path_buf()));
        }
        fs::read_dir(root).map_err(|source| ReadError::Unreadable {
            path: root.to_path_buf(),
            source,
        })?;
        let mut pkg = PackageDir {
            root: root.to_path_buf(),
            package: None,
            versions: Vec::new(),
            files: Vec::new(),
            findings: Vec::new(),
        };
        pkg.walk(root, "");
        pkg.find_package_file();
        pkg.collect_versions();
        Ok(pkg)
    }

    /// Walks the tree in Go's `filepath.Walk` order (lexical), skipping dot-files and dot-dirs.
    fn walk(&mut self, dir: &Path, rel: &str) {
        let mut entries: Vec<(String, PathBuf)> = match fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect(),
            Err(e) => {
                self.findings.push(
                    Diagnostic::new(Rule::PmUnreadable, format!("cannot list folder: {e}"))
                        .near(display_dir(rel), 0),
                );
                return;
            }
        };
        entries.sort();
        for (name, path) in entries {
            if name.starts_with('.') {
                continue;
            }
            let file = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let meta = match fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    self.findings.push(
                        Diagnostic::new(Rule::PmUnreadable, format!("cannot read: {e}"))
                            .near(file, 0),
                    );
                    continue;
                }
            };
            if meta.is_dir() {
                self.walk(&path, &file);
            } else if meta.is_file() {
                let first = self.read_file(&path, &file, meta.len());
                self.files.push(TreeFile {
                    file,
                    dir: rel.to_string(),
                    name,
                    size: meta.len(),
                    first,
                });
            }
        }
    }

    fn read_file(&mut self, path: &Path, file: &str, size: u64) -> Option<Node> {
        let _reading = crate::guard::reading(path);
        if size > MAX_FILE_SIZE {
            self.findings.push(
                Diagnostic::new(
                    Rule::PmUnreadable,
                    format!(
                        "file is {} MiB; olmpack reads files up to {} MiB",
                        size / (1024 * 1024),
                        MAX_FILE_SIZE / (1024 * 1024)
                    ),
                )
                .near(file, 0),
            );
            return None;
        }
        let mut bytes = Vec::new();
        if let Err(e) =
            fs::File::open(path).and_then(|f| f.take(MAX_FILE_SIZE + 1).read_to_end(&mut bytes))
        {
            self.findings.push(
                Diagnostic::new(Rule::PmUnreadable, format!("cannot read: {e}")).near(file, 0),
            );
            return None;
        }
        if bytes.is_empty() {
            self.findings.push(
                Diagnostic::new(
                    Rule::PmEmptyFile,
                    "empty file: opm's loader cannot decode it and refuses the package; delete it",
                )
                .near(file, 0),
            );
            return None;
        }
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count();
                self.findings.push(
                    Diagnostic::new(
                        Rule::PmYamlSyntax,
                        format!("not UTF-8 text (invalid byte at offset {at}); opm's loader refuses the package"),
                    )
                    .near(file, line),
                );
                return None;
            }
        };
        // opm decodes the first chunk as Kubernetes' YAMLReader cuts it (up to the first `---`
        // after content): a file whose first chunk is only comments has no object.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let first_chunk = match crate::catalog::render::bundle::k8s_first_chunk(text) {
            Ok(chunk) => chunk,
            Err(why) => {
                self.findings.push(
                    Diagnostic::new(
                        Rule::PmYamlSyntax,
                        format!("{why}; opm's loader refuses the package"),
                    )
                    .near(file, 0),
                );
                return None;
            }
        };
        match yaml::parse_stream_lenient(text) {
            Ok((docs, _duplicates)) => {
                if first_chunk.len() != text.len() {
                    // The first chunk's lines, in the whole file's numbering.
                    let start =
                        (first_chunk.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
                    let end_line = 1 + text
                        .as_bytes()
                        .iter()
                        .take(start + first_chunk.len())
                        .filter(|b| **b == b'\n')
                        .count();
                    let first = docs
                        .first()
                        .filter(|d| d.root.line <= end_line && first_chunk.trim() != "")
                        .map(|d| d.root.clone());
                    if docs.len() > 1 {
                        self.findings.push(
                            Diagnostic::new(
                                Rule::PmMultiDocument,
                                format!("{} YAML documents; opm reads only the first", docs.len()),
                            )
                            .near(file, docs[1].root.line),
                        );
                    }
                    return first;
                }
                if docs.len() > 1 {
                    self.findings.push(
                        Diagnostic::new(
                            Rule::PmMultiDocument,
                            format!(
                                "{} YAML documents; opm reads only the first (line {})",
                                docs.len(),
                                docs[0].root.line
                            ),
                        )
                        .near(file, docs[1].root.line),
                    );
                }
                docs.into_iter().next().map(|d| d.root)
            }
            Err(e) => {
                self.findings.push(
                    Diagnostic::new(
                        Rule::PmYamlSyntax,
                        format!(
                            "invalid YAML: {} (column {}); opm's loader refuses the package",
                            e.message, e.col
                        ),
                    )
                    .near(file, e.line),
                );
                None
            }
        }
    }

    /// Pass 2 of opm's loader: every file is decoded as a package manifest; those with a
    /// `packageName` are package files.
    fn find_package_file(&mut self) {
        let mut found: Vec<PackageFile> = Vec::new();
        let mut findings = Vec::new();
        for f in &self.files {
            let Some(root) = &f.first else { continue };
            match decode_package(root) {
                Ok(Some(pf)) => found.push(PackageFile {
                    file: f.file.clone(),
                    ..pf
                }),
                Ok(None) => {}
                Err((line, why)) => findings.push(
                    Diagnostic::new(
                        Rule::PmPackageDecode,
                        format!("opm's loader decodes every file as a package manifest and refuses this one: {why}"),
                    )
                    .near(f.file.clone(), line),
                ),
            }
        }
        self.findings.extend(findings);
        if found.len() > 1 {
            let names: Vec<&str> = found.iter().map(|p| p.file.as_str()).collect();
            for extra in &found[1..] {
                self.findings.push(
                    Diagnostic::new(
                        Rule::PmPackageFileMultiple,
                        format!(
                            "several files declare a package ({}): keep one package file",
                            names.join(", ")
                        ),
                    )
                    .near(extra.file.clone(), extra.line),
                );
            }
        }
        if found.is_empty() && !self.findings.iter().any(|f| f.is_error()) {
            self.findings.push(
                Diagnostic::new(
                    Rule::PmPackageFileMissing,
                    "no file declares a packageName: add <package>.package.yaml with packageName, channels and defaultChannel",
                )
                .near(".", 0),
            );
        }
        self.package = found.into_iter().next();
    }

    /// Pass 1 of opm's loader: every file whose first document is a CSV makes a bundle of the
    /// objects of its folder.
    fn collect_versions(&mut self) {
        let mut dirs: Vec<String> = Vec::new();
        for f in &self.files {
            if !dirs.contains(&f.dir) {
                dirs.push(f.dir.clone());
            }
        }
        for dir in dirs {
            let in_dir: Vec<&TreeFile> = self.files.iter().filter(|f| f.dir == dir).collect();
            let objects: Vec<Object> = in_dir.iter().filter_map(|f| object_of(f)).collect();
            let csvs: Vec<&Object> = objects.iter().filter(|o| o.is_csv()).collect();
            if csvs.is_empty() {
                let is_version_dir = !dir.is_empty() && !dir.contains('/');
                if is_version_dir {
                    self.findings.push(
                        Diagnostic::new(
                            Rule::PmVersionNoCsv,
                            "folder holds no ClusterServiceVersion: opm ignores its files and operator-sdk refuses the package",
                        )
                        .near(format!("{dir}/"), 0),
                    );
                }
                continue;
            }
            if csvs.len() > 1 {
                let files: Vec<&str> = csvs.iter().map(|o| o.file.as_str()).collect();
                self.findings.push(
                    Diagnostic::new(
                        Rule::PmVersionMultipleCsvs,
                        format!(
                            "{} ClusterServiceVersions in one version folder ({}): a bundle holds exactly one; move each into its own folder",
                            csvs.len(),
                            files.join(", ")
                        ),
                    )
                    .near(display_dir(&dir), 0),
                );
            }
            let files: Vec<String> = in_dir.iter().map(|f| f.file.clone()).collect();
            for csv in &csvs {
                let Some(name) = csv.name.clone().filter(|n| !n.is_empty()) else {
                    self.findings.push(
                        Diagnostic::new(
                            Rule::PmCsvNameMissing,
                            "ClusterServiceVersion has no metadata.name (opm: csv name not found)",
                        )
                        .near(csv.file.clone(), csv.line()),
                    );
                    continue;
                };
                let mine: Vec<Object> = objects
                    .iter()
                    .filter(|o| !o.is_csv() || o.name.as_deref() == Some(name.as_str()))
                    .cloned()
                    .collect();
                let Some(csv_index) = mine.iter().position(|o| o.file == csv.file) else {
                    continue;
                };
                let mut version = Version {
                    dir: dir.clone(),
                    name,
                    version: String::new(),
                    replaces: String::new(),
                    skips: Vec::new(),
                    skip_range: String::new(),
                    csv: csv_index,
                    objects: mine,
                    files: files.clone(),
                };
                self.csv_fields(&mut version);
                self.versions.push(version);
            }
        }
    }

    /// Reads the CSV fields opm's loader stores; a wrong type is what makes opm refuse.
    fn csv_fields(&mut self, v: &mut Version) {
        let csv = v.objects[v.csv].clone();
        let spec = csv.root.get("spec");
        let mut wrong = |field: &str, node: &Node, want: &str| {
            self.findings.push(
                Diagnostic::new(
                    Rule::PmCsvField,
                    format!("spec.{field} is a {} but opm reads a {want}; the loader refuses the bundle", node.kind_name()),
                )
                .near(csv.file.clone(), node.line),
            );
        };
        if let Some(spec) = spec {
            if let Some(n) = spec.get("version").filter(|n| !n.is_null()) {
                match n.as_str() {
                    Some(s) => v.version = s.to_string(),
                    None => wrong("version", n, "string"),
                }
            }
            if let Some(n) = spec.get("replaces").filter(|n| !n.is_null()) {
                match n.as_str() {
                    Some(s) => v.replaces = s.to_string(),
                    None => wrong("replaces", n, "string"),
                }
            }
            if let Some(n) = spec.get("skips").filter(|n| !n.is_null()) {
                match n.as_seq() {
                    Some(items) => {
                        for item in items {
                            match item.as_str() {
                                Some(s) => v.skips.push(s.to_string()),
                                None if item.is_null() => v.skips.push(String::new()),
                                None => wrong("skips", item, "string"),
                            }
                        }
                    }
                    None => wrong("skips", n, "list of strings"),
                }
            }
        }
        if let Some(n) = csv.root.path(&[
            "metadata",
            "annotations",
            crate::bundle::keys::OLM_PROPERTIES,
        ]) && let Some(text) = n.scalar_text()
            && serde_json::from_str::<Vec<serde_json::Map<String, serde_json::Value>>>(text)
                .is_err()
        {
            self.findings.push(
                Diagnostic::new(
                    Rule::PmCsvField,
                    "the olm.properties annotation is not a JSON list of {type, value} objects; opm's loader refuses the bundle",
                )
                .near(csv.file.clone(), n.line),
            );
        }
        if let Some(s) = csv
            .root
            .path(&["metadata", "annotations", crate::bundle::keys::SKIP_RANGE])
            .and_then(Node::scalar_text)
        {
            v.skip_range = s.to_string();
        }
    }

    /// Every finding that makes opm's loader refuse the package, or that the API validator
    /// rejects, so far.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.findings.iter().filter(|f| f.is_error())
    }

    /// The version whose CSV is named `name`.
    pub fn version(&self, name: &str) -> Option<&Version> {
        self.versions.iter().find(|v| v.name == name)
    }
}

fn display_dir(rel: &str) -> String {
    if rel.is_empty() {
        ".".into()
    } else {
        format!("{rel}/")
    }
}

/// The object of a file's first document, when it is a mapping with a string `kind`.
fn object_of(f: &TreeFile) -> Option<Object> {
    let root = f.first.as_ref()?;
    let kind = root.get("kind")?.as_str()?.to_string();
    let api_version = root
        .get("apiVersion")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string();
    let name = root
        .path(&["metadata", "name"])
        .and_then(Node::as_str)
        .map(str::to_string);
    Some(Object {
        file: f.file.clone(),
        doc: 0,
        root: root.clone(),
        api_version,
        kind,
        name,
    })
}

/// Decodes a document as opm decodes it into `PackageManifest`: `Ok(None)` when it is not a
/// package file (no `packageName`), `Err((line, why))` when Go's decoder would fail.
fn decode_package(root: &Node) -> Result<Option<PackageFile>, (usize, String)> {
    let entries = match &root.value {
        Value::Map(entries) => entries,
        Value::Scalar(_, yaml::ScalarKind::Null) => return Ok(None),
        _ => {
            return Err((
                root.line,
                format!(
                    "the document is a {}, not a mapping (is this file YAML at all?)",
                    root.kind_name()
                ),
            ));
        }
    };
    let field = |key: &str| {
        entries
            .iter()
            .rev()
            .find(|(k, _)| k.text.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    };
    let string = |key: &str| -> Result<Option<(String, usize)>, (usize, String)> {
        match field(key) {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => match n.as_str() {
                Some(s) => Ok(Some((s.to_string(), n.line))),
                None => Err((
                    n.line,
                    format!("{key} is a {}, not a string", n.kind_name()),
                )),
            },
        }
    };
    let name = string("packageName")?;
    let default = string("defaultChannel")?;
    let mut channels = Vec::new();
    if let Some(n) = field("channels").filter(|n| !n.is_null()) {
        let Some(items) = n.as_seq() else {
            return Err((
                n.line,
                format!("channels is a {}, not a list", n.kind_name()),
            ));
        };
        for item in items {
            if item.is_null() {
                channels.push(ChannelDecl {
                    name: String::new(),
                    current_csv: String::new(),
                    line: item.line,
                });
                continue;
            }
            if item.as_map().is_none() {
                return Err((
                    item.line,
                    format!("a channel is a {}, not a mapping", item.kind_name()),
                ));
            }
            let get = |key: &str| -> Result<String, (usize, String)> {
                match item.as_map().and_then(|m| {
                    m.iter()
                        .rev()
                        .find(|(k, _)| k.text.eq_ignore_ascii_case(key))
                }) {
                    None => Ok(String::new()),
                    Some((_, v)) if v.is_null() => Ok(String::new()),
                    Some((_, v)) => v.as_str().map(str::to_string).ok_or((
                        v.line,
                        format!("channel {key} is a {}, not a string", v.kind_name()),
                    )),
                }
            };
            channels.push(ChannelDecl {
                name: get("name")?,
                current_csv: get("currentCSV")?,
                line: item.line,
            });
        }
    }
    let Some((name, _)) = name.filter(|(n, _)| !n.is_empty()) else {
        return Ok(None);
    };
    Ok(Some(PackageFile {
        file: String::new(),
        name,
        channels,
        default_line: default.as_ref().map_or(root.line, |(_, l)| *l),
        default_channel: default.map(|(d, _)| d).filter(|d| !d.is_empty()),
        line: root.line,
    }))
}
