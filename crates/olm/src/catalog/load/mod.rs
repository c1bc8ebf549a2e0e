//! Loading a file-based catalog the way opm loads it (`declcfg.LoadFS`, CATALOG.md A), but with
//! every blob's file, line and column kept, every problem reported instead of the first, and a
//! deterministic result.
//!
//! - Which files: every file under the root in lexical order, with no extension filter, minus the
//!   `.indexignore` files and what they ignore ([`ignore`]).
//! - How a file is decoded: a JSON stream or multi-document YAML ([`decode`]).
//! - How a document becomes a blob: opm's `Meta` (case-folded keys, `schema`/`package`/`name` as
//!   strings), then the typed struct for its schema with Go's `encoding/json` rules ([`typed`]);
//!   unknown schemas are kept in `others`.
//! - `olm.bundle.object` data is decoded into `Bundle::objects` / `csv_json`; opm 1.26's
//!   `{"ref": path}` form is read from the file it names.
//!
//! Files are parsed on several threads; results are merged in file order, then document order,
//! so the output never depends on scheduling. A broken file never stops the others: what could
//! not be loaded becomes a [`Diagnostic`], and the caller decides (validate reports them all,
//! render refuses to write).

mod decode;
mod ignore;
mod typed;

use crate::catalog::model::{
    self, Bundle, Channel, DeclarativeConfig, Deprecation, Meta, Origin, Package, Property,
};
use crate::findings::{Diagnostic, Rule};
use crate::gocompat::decoded as json;
use crate::gocompat::json::kind_name as json_kind;
use crate::yaml::{Node, ScalarKind, Value};
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

/// A loaded catalog and everything that could not be loaded.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every blob that loaded, in file order and then document order.
    pub config: DeclarativeConfig,
    /// Problems found while loading, in file order (each with file and line).
    pub diagnostics: Vec<Diagnostic>,
    /// The files read (relative to the root, `/`-separated), in order; ignored files excluded.
    pub files: Vec<String>,
    /// Total bytes read.
    pub bytes: u64,
}

impl Loaded {
    /// Whether any load problem is an error (opm would have refused the catalog).
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == crate::findings::Severity::Error)
    }
}

/// Why a catalog folder could not be loaded at all (problems inside it are diagnostics).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The root does not exist or cannot be listed.
    #[error("{}: cannot read the catalog folder: {source}", path.display())]
    Unreadable {
        /// The root as given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The root is a file, not a folder (opm: `%q is not a directory`).
    #[error("{}: is not a directory (a catalog is a folder of JSON or YAML files)", path.display())]
    NotADirectory {
        /// The root as given.
        path: PathBuf,
    },
}

/// Loader settings.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Worker threads; `None` = one per CPU.
    pub jobs: Option<usize>,
    /// The folder came from an image (or another untrusted source): every file, `.indexignore`
    /// and `ref` is opened beneath the root ([`crate::fsio::untrusted`]), so a link in it can
    /// never make the loader read (and a render print, a build push, a server serve) a host
    /// file, and only regular files are read. A folder of the user's follows its links as opm
    /// does.
    pub confined: bool,
}

impl LoadOptions {
    /// The options for a catalog folder taken out of an image: [`LoadOptions::confined`].
    pub fn for_image() -> Self {
        LoadOptions {
            confined: true,
            ..LoadOptions::default()
        }
    }
}

/// The most bytes one catalog file (or `ref` object) of a confined load may hold: the unpack
/// limit of a whole image, so no real catalog meets it and `/dev/zero` cannot fill memory.
const CONFINED_FILE_LIMIT: u64 = 1 << 30;

/// The most bytes a `ref` object of a folder of the user's may hold (opm's objects are a few
/// hundred KiB; a link to a device must not fill memory).
const REF_LIMIT: u64 = 256 << 20;

/// Reads the catalog file `rel` of `root`: beneath the root when the load is confined.
fn read_catalog_file(root: &Path, rel: &str, confined: bool) -> Result<Vec<u8>, String> {
    if confined {
        crate::fsio::untrusted::read(root, Path::new(rel), CONFINED_FILE_LIMIT)
            .map_err(|e| e.to_string())
    } else {
        std::fs::read(root.join(rel)).map_err(|e| e.to_string())
    }
}

/// The files of a catalog folder opm reads (`fs.WalkDir` order, `.indexignore` honoured), as
/// paths relative to `root`, without parsing them: for a caller that reads only some blobs
/// (onboarding picks one package out of a whole index). An unreadable `.indexignore` is an
/// error here (opm fails on it too).
pub fn catalog_files(root: &Path) -> Result<Vec<String>, LoadError> {
    let unreadable = |source| LoadError::Unreadable {
        path: root.to_path_buf(),
        source,
    };
    if !std::fs::metadata(root).map_err(unreadable)?.is_dir() {
        return Err(LoadError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    let mut walk = Walk::default();
    walk.dir(root, "", &[]).map_err(unreadable)?;
    let mut matcher = ignore::Matcher::default();
    for (domain, rel) in &walk.ignore_files {
        let bytes = read_catalog_file(root, rel, true).map_err(|e| LoadError::Unreadable {
            path: root.join(rel),
            source: std::io::Error::other(e),
        })?;
        matcher.add_file(domain, &String::from_utf8_lossy(&bytes));
    }
    Ok(walk
        .files
        .into_iter()
        .map(|(rel, _)| rel)
        .filter(|rel| !matcher.is_ignored(rel))
        .collect())
}

/// Loads a catalog folder with one worker per CPU.
pub fn load_dir(root: &Path) -> Result<Loaded, LoadError> {
    load_dir_with(root, &LoadOptions::default())
}

/// Loads a catalog folder.
pub fn load_dir_with(root: &Path, opts: &LoadOptions) -> Result<Loaded, LoadError> {
    load_dir_inner(root, opts, None)
}

/// A caller's pass over each loaded bundle, run by the worker that parsed the bundle's file.
pub type BundlePass<'a> = &'a (dyn Fn(&mut Bundle) + Sync);

/// Loads a catalog folder, handing every bundle to `shrink` as soon as its file is parsed,
/// before the file's result waits for the others: a server can swap large properties for a
/// compact form of its own, so the whole catalog never sits in memory in full.
pub fn load_dir_shrinking(
    root: &Path,
    opts: &LoadOptions,
    shrink: BundlePass<'_>,
) -> Result<Loaded, LoadError> {
    load_dir_inner(root, opts, Some(shrink))
}

/// Which packages a caller needs, by name.
pub type PackageKeep<'a> = &'a (dyn Fn(&str) -> bool + Sync);

/// Loads a catalog folder keeping only the packages `keep` accepts: the channels, bundles,
/// deprecations and other blobs of every other package are dropped by the worker that parsed
/// their file, so a filter over a few packages of a big catalog never holds the whole of it.
/// Every package's `olm.package` blob stays, reduced to its name and default channel for the
/// packages not kept (a caller can still say which packages the catalog has); diagnostics are
/// those of the whole catalog.
pub fn load_dir_keeping(
    root: &Path,
    opts: &LoadOptions,
    keep: PackageKeep<'_>,
) -> Result<Loaded, LoadError> {
    let pass = |part: &mut FilePart| {
        part.channels.retain(|c| keep(&c.package));
        part.bundles.retain(|b| keep(&b.package));
        part.deprecations.retain(|d| keep(&d.package));
        part.others
            .retain(|o| o.package.is_empty() || keep(&o.package));
        for p in &mut part.packages {
            if !keep(&p.name) {
                p.icon = None;
                p.description = String::new();
                p.properties = Vec::new();
            }
        }
    };
    load_dir_parts(root, opts, None, Some(&pass))
}

fn load_dir_inner(
    root: &Path,
    opts: &LoadOptions,
    shrink: Option<BundlePass<'_>>,
) -> Result<Loaded, LoadError> {
    load_dir_parts(root, opts, shrink, None)
}

/// What a caller does to each file's result in the worker that parsed it.
type PartPass<'a> = &'a (dyn Fn(&mut FilePart) + Sync);

fn load_dir_parts(
    root: &Path,
    opts: &LoadOptions,
    shrink: Option<BundlePass<'_>>,
    part_pass: Option<PartPass<'_>>,
) -> Result<Loaded, LoadError> {
    let meta = std::fs::metadata(root).map_err(|source| LoadError::Unreadable {
        path: root.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(LoadError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    let mut walk = Walk::default();
    walk.dir(root, "", &[])
        .map_err(|source| LoadError::Unreadable {
            path: root.to_path_buf(),
            source,
        })?;
    let mut matcher = ignore::Matcher::default();
    for (domain, rel) in &walk.ignore_files {
        match read_catalog_file(root, rel, opts.confined) {
            Ok(bytes) => matcher.add_file(domain, &String::from_utf8_lossy(&bytes)),
            Err(e) => walk.diagnostics.push(
                Diagnostic::new(
                    Rule::CatalogUnreadable,
                    format!("cannot read this .indexignore ({e}); opm fails on it too"),
                )
                .in_file(rel.clone()),
            ),
        }
    }
    let files: Vec<(String, u64)> = walk
        .files
        .into_iter()
        .filter(|(rel, _)| !matcher.is_ignored(rel))
        .collect();
    let jobs = opts.jobs.unwrap_or_else(crate::parallel::cores).max(1);
    let parts = parse_files(root, &files, jobs, opts.confined, shrink, part_pass);
    let mut loaded = Loaded {
        diagnostics: walk.diagnostics,
        files: files.iter().map(|(rel, _)| rel.clone()).collect(),
        ..Loaded::default()
    };
    for part in parts {
        loaded.bytes += part.bytes;
        part.merge_into(&mut loaded);
    }
    Ok(loaded)
}

/// Loads one stream (a template's output, stdin). `name` is used in diagnostics; `ref` bundle
/// objects cannot be resolved and are reported.
pub fn load_bytes(name: &str, bytes: &[u8]) -> Loaded {
    let ctx = FileCtx {
        root: None,
        confined: false,
        rel: name,
        jobs: crate::parallel::cores(),
    };
    let part = parse_bytes(&ctx, bytes);
    let mut loaded = Loaded {
        files: vec![name.to_string()],
        ..Loaded::default()
    };
    loaded.bytes = part.bytes;
    part.merge_into(&mut loaded);
    loaded
}

/// Loads one file; `ref` bundle objects resolve relative to its folder (opm's `LoadFile`).
pub fn load_file(path: &Path) -> std::io::Result<Loaded> {
    let _reading = crate::guard::reading(path);
    let bytes = std::fs::read(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ctx = FileCtx {
        root: Some(dir),
        confined: false,
        rel: &name,
        jobs: crate::parallel::cores(),
    };
    let part = parse_bytes(&ctx, &bytes);
    let mut loaded = Loaded {
        files: vec![name.clone()],
        ..Loaded::default()
    };
    loaded.bytes = part.bytes;
    part.merge_into(&mut loaded);
    Ok(loaded)
}

// ---------------------------------------------------------------------------------------------
// Walking

#[derive(Default)]
struct Walk {
    /// Files to read (relative path, size), in lexical walk order.
    files: Vec<(String, u64)>,
    /// `.indexignore` files: (folder components, relative path), in walk order.
    ignore_files: Vec<(Vec<String>, String)>,
    diagnostics: Vec<Diagnostic>,
}

impl Walk {
    /// `fs.WalkDir` order: entries sorted by name, folders entered where they sort.
    fn dir(&mut self, abs: &Path, rel: &str, domain: &[String]) -> std::io::Result<()> {
        let mut entries: Vec<std::fs::DirEntry> =
            std::fs::read_dir(abs)?.collect::<Result<_, _>>()?;
        entries.sort_by(|a, b| {
            a.file_name()
                .as_encoded_bytes()
                .cmp(b.file_name().as_encoded_bytes())
        });
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(e) => {
                    self.unreadable(&child_rel, &e);
                    continue;
                }
            };
            if file_type.is_dir() {
                let mut sub = domain.to_vec();
                sub.push(name);
                if let Err(e) = self.dir(&entry.path(), &child_rel, &sub) {
                    self.unreadable(&child_rel, &e);
                }
            } else if name == ".indexignore" {
                self.ignore_files.push((domain.to_vec(), child_rel));
            } else if file_type.is_file() || file_type.is_symlink() {
                let size = entry.metadata().map_or(0, |m| m.len());
                self.files.push((child_rel, size));
            } else {
                self.diagnostics.push(
                    Diagnostic::new(
                        Rule::CatalogUnreadable,
                        "not a regular file (a socket, pipe or device): opm would try to read it; remove it or list it in .indexignore",
                    )
                    .in_file(child_rel),
                );
            }
        }
        Ok(())
    }

    fn unreadable(&mut self, rel: &str, e: &std::io::Error) {
        self.diagnostics.push(
            Diagnostic::new(
                Rule::CatalogUnreadable,
                format!("cannot read: {e}; fix its permissions or list it in .indexignore"),
            )
            .in_file(rel.to_string()),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// Everything one file contributed.
#[derive(Default)]
struct FilePart {
    packages: Vec<Package>,
    channels: Vec<Channel>,
    bundles: Vec<Bundle>,
    deprecations: Vec<Deprecation>,
    others: Vec<Meta>,
    diagnostics: Vec<Diagnostic>,
    bytes: u64,
}

impl FilePart {
    fn merge_into(self, loaded: &mut Loaded) {
        let c = &mut loaded.config;
        c.packages.extend(self.packages);
        c.channels.extend(self.channels);
        c.bundles.extend(self.bundles);
        c.deprecations.extend(self.deprecations);
        c.others.extend(self.others);
        loaded.diagnostics.extend(self.diagnostics);
    }
}

struct FileCtx<'a> {
    /// The catalog root, for `ref` bundle objects; `None` for streams.
    root: Option<&'a Path>,
    /// `ref` objects are read beneath the root ([`LoadOptions::confined`]).
    confined: bool,
    /// The file relative to the root.
    rel: &'a str,
    /// Threads for the documents of one large file (1 when files are already parsed in parallel).
    jobs: usize,
}

impl FileCtx<'_> {
    fn diag(&self, rule: Rule, line: usize, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(rule, message).at(self.rel.to_string(), line.max(1))
    }
}

fn parse_files(
    root: &Path,
    files: &[(String, u64)],
    jobs: usize,
    confined: bool,
    shrink: Option<BundlePass<'_>>,
    part_pass: Option<PartPass<'_>>,
) -> Vec<FilePart> {
    // One file (the usual catalog) gets every thread for its documents.
    let file_jobs = if files.len() == 1 { jobs } else { 1 };
    let parse = |rel: &str| -> FilePart {
        let ctx = FileCtx {
            root: Some(root),
            confined,
            rel,
            jobs: file_jobs,
        };
        match read_catalog_file(root, rel, confined) {
            Ok(bytes) => parse_bytes(&ctx, &bytes),
            Err(e) => FilePart {
                diagnostics: vec![
                    Diagnostic::new(
                        Rule::CatalogUnreadable,
                        format!("cannot read: {e}; opm fails on it too: fix it or list it in .indexignore"),
                    )
                    .in_file(rel.to_string()),
                ],
                ..FilePart::default()
            },
        }
    };
    // Each file is isolated: a bug hit while parsing it becomes its `internal/error` finding, and
    // the worker goes on with the next file, so no other file loses its result.
    let work = |rel: &str| -> FilePart {
        let path = root.join(rel);
        crate::guard::catch(|| {
            let _reading = crate::guard::reading(&path);
            let mut part = parse(rel);
            if let Some(pass) = part_pass {
                pass(&mut part);
            }
            if let Some(shrink) = shrink {
                part.bundles.iter_mut().for_each(shrink);
            }
            part
        })
        .unwrap_or_else(|failure| internal_failure_part(rel, &failure))
    };
    // Largest files first keeps the workers busy; results keep the file order.
    let sizes: Vec<u64> = files.iter().map(|(_, size)| *size).collect();
    crate::parallel::map_indexed(files.len(), jobs, Some(&sizes), |i| match files.get(i) {
        Some((rel, _)) => work(rel),
        None => FilePart::default(),
    })
}

/// The result of a file on which olmpack failed internally: one `internal/error` finding naming
/// it (the user's file is not blamed), nothing loaded from it.
fn internal_failure_part(rel: &str, failure: &crate::guard::InternalFailure) -> FilePart {
    FilePart {
        diagnostics: vec![
            Diagnostic::new(Rule::InternalError, failure.describe()).in_file(rel.to_string()),
        ],
        ..FilePart::default()
    }
}

fn parse_bytes(ctx: &FileCtx, bytes: &[u8]) -> FilePart {
    let mut part = FilePart {
        bytes: bytes.len() as u64,
        ..FilePart::default()
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            part.diagnostics.push(ctx.diag(
                Rule::CatalogSyntax,
                line,
                "not UTF-8 text: opm reads every file under the catalog; delete it or list it in .indexignore",
            ));
            return part;
        }
    };
    let decoded = decode::decode(text, ctx.jobs);
    for (line, message) in decoded.duplicate_keys {
        part.diagnostics.push(ctx.diag(
            Rule::CatalogYamlDuplicateKey,
            line,
            format!("{message}; opm keeps the last value silently: remove one"),
        ));
    }
    for doc in decoded.docs {
        match doc {
            decode::Doc::Ok(node) => add_blob(ctx, node, &mut part),
            decode::Doc::Null(line) => part.diagnostics.push(ctx.diag(
                Rule::CatalogMissingSchema,
                line,
                "this document holds only blanks or comments, which opm reads as `null` (object 'null' is missing root schema field): remove it or the `---` around it",
            )),
            decode::Doc::Err(e) => part.diagnostics.push(ctx.diag(
                Rule::CatalogSyntax,
                e.line,
                format!("{} (column {})", e.message, e.col),
            )),
        }
    }
    part.diagnostics.sort_by_key(|d| d.line);
    part
}

fn kind_phrase(node: &Node) -> &'static str {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => "null",
        Value::Scalar(_, ScalarKind::Bool(_)) => "a boolean",
        Value::Scalar(_, ScalarKind::Int | ScalarKind::Float) => "a number",
        Value::Scalar(_, ScalarKind::Str) => "a string",
        Value::Seq(_) => "a list",
        Value::Map(_) => "a mapping",
    }
}

/// Go's `%!t(…)`-style rendering of a non-string meta value, as opm's message shows it.
fn go_value(node: &Node) -> String {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => "%!t(<nil>): <nil>".to_string(),
        Value::Scalar(text, ScalarKind::Bool(b)) => {
            let _ = text;
            format!("{b}: {b}")
        }
        Value::Scalar(_, ScalarKind::Int | ScalarKind::Float) => {
            let mut n = String::new();
            let _ = json::write_float(json::number(node).unwrap_or(0.0), "", &mut n);
            format!("%!t(float64={n}): {n}")
        }
        Value::Scalar(text, ScalarKind::Str) => text.to_string(),
        Value::Seq(_) => "%!t([]interface {}=[…]): […]".to_string(),
        Value::Map(_) => "%!t(map[string]interface {}=map[…]): map[…]".to_string(),
    }
}

fn add_blob(ctx: &FileCtx, node: Node, part: &mut FilePart) {
    let line = node.line;
    let Value::Map(entries) = &node.value else {
        part.diagnostics.push(ctx.diag(
            Rule::CatalogBlobShape,
            line,
            format!(
                "a catalog document must be a mapping with a `schema` key, found {} (opm: json: cannot unmarshal into map[string]interface {{}})",
                kind_phrase(&node)
            ),
        ));
        return;
    };
    // Meta: keys folded; `schema`, `package`, `name` must be strings.
    let mut folded: Vec<(String, &str)> = entries
        .iter()
        .map(|(k, _)| (k.text.as_str().to_lowercase(), k.text.as_str()))
        .collect();
    folded.sort();
    let mut dup = false;
    for group in folded.chunk_by(|a, b| a.0 == b.0) {
        if group.len() > 1 {
            dup = true;
            let keys: Vec<&str> = group.iter().map(|(_, k)| *k).collect();
            part.diagnostics.push(ctx.diag(
                Rule::CatalogDuplicateKey,
                line,
                format!(
                    "duplicate keys for key {:?}: [{}]: opm matches keys case-insensitively; keep one",
                    group[0].0,
                    keys.join(" ")
                ),
            ));
        }
    }
    if dup {
        return;
    }
    let mut schema = String::new();
    let mut package = String::new();
    let mut name = String::new();
    for (k, v) in entries {
        let slot = match k.text.to_lowercase().as_str() {
            "schema" => &mut schema,
            "package" => &mut package,
            "name" => &mut name,
            _ => continue,
        };
        match &v.value {
            Value::Scalar(text, ScalarKind::Str) => text.as_str().clone_into(slot),
            _ => {
                part.diagnostics.push(ctx.diag(
                    Rule::CatalogMetaType,
                    v.line,
                    format!(
                        "expected value for key {:?} to be a string, got {}: quote it",
                        k.text,
                        go_value(v)
                    ),
                ));
                return;
            }
        }
    }
    let parse_error = |what: &str, errors: Vec<String>| {
        ctx.diag(
            Rule::CatalogFieldType,
            line,
            format!(
                "parse {what}: {}: give the field the type opm expects",
                errors.join("; ")
            ),
        )
    };
    match schema.as_str() {
        model::SCHEMA_PACKAGE => match typed::package(&node, ctx.rel) {
            Ok(p) => part.packages.push(p),
            Err(e) => part.diagnostics.push(parse_error("package", e)),
        },
        model::SCHEMA_CHANNEL => match typed::channel(&node, ctx.rel) {
            Ok(c) => part.channels.push(c),
            Err(e) => part.diagnostics.push(parse_error("channel", e)),
        },
        model::SCHEMA_BUNDLE => match typed::bundle(&node, ctx.rel) {
            Ok(mut b) => {
                read_bundle_objects(ctx, &mut b, &mut part.diagnostics);
                part.bundles.push(b);
            }
            Err(e) => part.diagnostics.push(parse_error("bundle", e)),
        },
        model::SCHEMA_DEPRECATIONS => match typed::deprecation(&node, ctx.rel) {
            Ok(d) => part.deprecations.push(d),
            Err(e) => part.diagnostics.push(parse_error("deprecation", e)),
        },
        "" => {
            let mut blob = json::canonical(&node).unwrap_or_default();
            if blob.len() > 200 {
                let mut cut = 200;
                while !blob.is_char_boundary(cut) {
                    cut -= 1;
                }
                blob.truncate(cut);
                blob.push('…');
            }
            part.diagnostics.push(ctx.diag(
                Rule::CatalogMissingSchema,
                line,
                format!(
                    "object '{blob}' is missing root schema field: add `schema:` (olm.package, olm.channel, olm.bundle or olm.deprecations)"
                ),
            ));
        }
        _ => match json::canonical(&node) {
            Ok(text) => match RawValue::from_string(text) {
                Ok(blob) => part.others.push(Meta {
                    schema,
                    package,
                    name,
                    blob,
                    origin: Origin {
                        file: ctx.rel.to_string(),
                        line,
                        col: node.col,
                    },
                }),
                Err(e) => part.diagnostics.push(ctx.diag(
                    Rule::CatalogBlobShape,
                    line,
                    format!("cannot encode this blob as JSON: {e}"),
                )),
            },
            Err(e) => part.diagnostics.push(ctx.diag(
                Rule::CatalogBlobShape,
                line,
                format!("{}: write the value as a string or a finite number", e.0),
            )),
        },
    }
}

/// opm's `readBundleObjects`: every `olm.bundle.object` decoded into `objects`, the first
/// ClusterServiceVersion into `csv_json`. opm 1.26's `{"ref": path}` is read and replaced by
/// `{"data": …}`, as opm 1.26 did.
fn read_bundle_objects(ctx: &FileCtx, b: &mut Bundle, out: &mut Vec<Diagnostic>) {
    let line = b.origin.line;
    let mut replacements: Vec<(usize, Property)> = Vec::new();
    // Go reuses one struct across properties, so a property without `data` repeats the last.
    let mut data: Vec<u8> = Vec::new();
    let result = bundle_objects(ctx, b, &mut data, &mut replacements);
    for (i, p) in replacements {
        if let Some(slot) = b.properties.get_mut(i) {
            *slot = p;
        }
    }
    if let Err(message) = result {
        out.push(ctx.diag(
            Rule::CatalogBundleObject,
            line,
            format!(
                "read bundle objects: package {:?}, bundle {:?}: {message}",
                b.package, b.name
            ),
        ));
    }
}

fn bundle_objects(
    ctx: &FileCtx,
    b: &mut Bundle,
    data: &mut Vec<u8>,
    replacements: &mut Vec<(usize, Property)>,
) -> Result<(), String> {
    use base64::Engine as _;
    for (i, prop) in b.properties.iter().enumerate() {
        if prop.type_ != model::property_type::BUNDLE_OBJECT {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(prop.value.get()) {
            Ok(v) => v,
            Err(e) => {
                return Err(format!("parse property at index {i} as bundle object: {e}"));
            }
        };
        let obj = match &value {
            serde_json::Value::Object(m) => Some(m),
            serde_json::Value::Null => None,
            other => {
                return Err(format!(
                    "parse property at index {i} as bundle object: json: cannot unmarshal {} into Go value of type property.BundleObject",
                    json_kind(other)
                ));
            }
        };
        let field = |name: &str| {
            obj.and_then(|m| {
                m.iter()
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v)
                    .next_back()
            })
        };
        let ref_path = obj.and_then(|m| m.get("ref"));
        match (field("data"), ref_path) {
            (Some(_), Some(_)) if obj.is_some_and(|m| m.contains_key("data")) => {
                return Err(format!(
                    "property at index {i}: fields 'ref' and 'data' are mutually exclusive: keep one"
                ));
            }
            (None, Some(serde_json::Value::String(path))) => match read_ref(ctx, path) {
                Ok(bytes) => {
                    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
                    let mut text = String::from("{\"data\":");
                    json::write_string(&encoded, &mut text);
                    text.push('}');
                    if let Ok(p) = Property::new(model::property_type::BUNDLE_OBJECT, text) {
                        replacements.push((i, p));
                    }
                    *data = bytes;
                }
                Err(message) => {
                    return Err(format!(
                        "get data for bundle object at index {i}: {message}"
                    ));
                }
            },
            (Some(serde_json::Value::String(s)), _) => {
                // Go's base64 decoder skips line breaks; real data has none, so it is decoded
                // in place and copied without them only when it has some.
                let cleaned: std::borrow::Cow<'_, [u8]> =
                    if memchr::memchr2(b'\r', b'\n', s.as_bytes()).is_some() {
                        s.bytes().filter(|c| !matches!(c, b'\r' | b'\n')).collect()
                    } else {
                        s.as_bytes().into()
                    };
                match base64::engine::general_purpose::STANDARD.decode(&cleaned) {
                    Ok(d) => *data = d,
                    Err(e) => {
                        return Err(format!(
                            "parse property at index {i} as bundle object: illegal base64 data ({e}): `data` must be standard base64 of the manifest"
                        ));
                    }
                }
            }
            (Some(serde_json::Value::Null), _) => data.clear(),
            (Some(other), _) => {
                return Err(format!(
                    "parse property at index {i} as bundle object: json: cannot unmarshal {} into Go struct field BundleObject.data of type []uint8",
                    json_kind(other)
                ));
            }
            (None, _) => {}
        }
        match object_json(data) {
            Ok((text, kind)) => {
                if b.csv_json.is_none() && kind.as_deref() == Some("ClusterServiceVersion") {
                    b.csv_json = Some(text.clone());
                }
                b.objects.push(text);
            }
            Err(message) => {
                return Err(format!(
                    "convert bundle object property at index {i} to JSON: {message}"
                ));
            }
        }
    }
    Ok(())
}

/// Reads a 1.26-style `ref`: a relative path from the folder of the catalog file, inside the root.
fn read_ref(ctx: &FileCtx, path: &str) -> Result<Vec<u8>, String> {
    let Some(root) = ctx.root else {
        return Err(format!(
            "ref {path:?} cannot be resolved when reading a stream: inline the object as `data`"
        ));
    };
    if path.starts_with('/') || Path::new(path).is_absolute() {
        return Err(format!("ref {path:?} must be a relative path"));
    }
    let mut parts: Vec<&str> = ctx.rel.split('/').collect();
    parts.pop();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!("ref {path:?} points outside the catalog folder"));
                }
            }
            c => parts.push(c),
        }
    }
    if ctx.confined {
        let rel: PathBuf = parts.iter().collect();
        return crate::fsio::untrusted::read(root, &rel, CONFINED_FILE_LIMIT)
            .map_err(|e| format!("cannot read ref {path:?}: {e}"));
    }
    let target = parts.iter().fold(root.to_path_buf(), |p, c| p.join(c));
    crate::fsio::untrusted::read_limited(&target, REF_LIMIT)
        .map_err(|e| format!("cannot read ref {path:?}: {e}"))
}

#[derive(serde::Deserialize)]
struct KindProbe {
    #[serde(default)]
    kind: Option<serde_json::Value>,
}

/// sigs.k8s.io/yaml `ToJSON` of an object's bytes, and its `kind`. JSON (what opm writes) is kept
/// as it is; YAML is converted.
fn object_json(data: &[u8]) -> Result<(String, Option<String>), String> {
    let trimmed = data.trim_ascii();
    if trimmed.is_empty() {
        return Ok(("null".to_string(), None));
    }
    if let Ok(text) = std::str::from_utf8(trimmed) {
        if matches!(trimmed.first(), Some(b'{' | b'[' | b'"')) || trimmed.starts_with(b"null") {
            if let Ok(probe) = serde_json::from_str::<KindProbe>(text) {
                let kind = probe.kind.and_then(|k| k.as_str().map(str::to_string));
                return Ok((text.to_string(), kind));
            }
            if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                return Ok((text.to_string(), None));
            }
        }
        let docs = crate::yaml::parse_stream_lenient(text)
            .map_err(|e| {
                format!(
                    "error converting YAML to JSON: yaml: line {}: {}",
                    e.line, e.message
                )
            })?
            .0;
        let Some(doc) = docs.into_iter().next() else {
            return Ok(("null".to_string(), None));
        };
        let value = doc.root.to_json();
        let kind = value
            .get("kind")
            .and_then(|k| k.as_str())
            .map(str::to_string);
        return Ok((value.to_string(), kind));
    }
    Err("the object is not UTF-8 text".to_string())
}

#[cfg(test)]
mod tests;

/// One blob of a catalog file as opm's `declcfg.Meta` holds it: what catalogd stores and serves
/// (its `Blob` is one line of `/api/v1/all`) and indexes (`schema`, `package`, `name`).
#[derive(Debug, Clone)]
pub struct MetaText {
    /// `schema` (keys matched case-insensitively, as opm does).
    pub schema: String,
    /// `package`, or empty.
    pub package: String,
    /// `name`, or empty.
    pub name: String,
    /// The blob re-encoded as Go does: compact, keys sorted at every level, no HTML escaping.
    pub blob: String,
}

/// Every document of one catalog file as a [`MetaText`], in file order, for the servers that
/// hand blobs out again (catalogd's API) without keeping the typed model. Fails on the first
/// document opm would refuse (the catalog is validated before serving, so that means the file
/// changed underneath).
pub fn file_metas(bytes: &[u8]) -> Result<Vec<MetaText>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
    let decoded = decode::decode(text, 1);
    let mut out = Vec::with_capacity(decoded.docs.len());
    for doc in decoded.docs {
        let node = match doc {
            decode::Doc::Ok(node) => node,
            decode::Doc::Null(line) => return Err(format!("line {line}: an empty document")),
            decode::Doc::Err(e) => return Err(format!("line {}: {}", e.line, e.message)),
        };
        let Value::Map(entries) = &node.value else {
            return Err(format!("line {}: a document is not a mapping", node.line));
        };
        let mut meta = MetaText {
            schema: String::new(),
            package: String::new(),
            name: String::new(),
            blob: String::new(),
        };
        for (k, v) in entries {
            let slot = match k.text.to_lowercase().as_str() {
                "schema" => &mut meta.schema,
                "package" => &mut meta.package,
                "name" => &mut meta.name,
                _ => continue,
            };
            if let Value::Scalar(text, ScalarKind::Str) = &v.value {
                text.as_str().clone_into(slot);
            }
        }
        meta.blob = json::canonical(&node)
            .map_err(|e| format!("line {}: json: unsupported value: {}", node.line, e.0))?;
        out.push(meta);
    }
    Ok(out)
}
