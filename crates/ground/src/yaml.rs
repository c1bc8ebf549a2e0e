//! A YAML reader that keeps positions: every node remembers its line and column, duplicate keys
//! are errors (as kubectl's strict decoding makes them), and every document of a stream is kept.
//!
//! It is built on the event stream of libyaml itself (`unsafe-libyaml`, libyaml 0.2.5 translated
//! to Rust; the unsafe glue is confined to [`events`]). go-yaml v2, which Kubernetes and every
//! upstream bundle tool decode with, is a port of libyaml, so olmpack accepts exactly the YAML they
//! accept and reports the same positions (stricter YAML 1.2 parsers reject real bundles, e.g.
//! quoted scalars whose continuation lines are under-indented). The measurements behind this
//! choice are in docs/yaml-layer.md. A serde deserializer is not used because the
//! validator needs what serde hides: the position of every value, the original text of scalars
//! (an annotation `true` or a version `1.10` must be seen as written), and limits on nesting and
//! alias expansion so hostile input cannot exhaust the stack or memory.

mod events;
pub mod fast;

use crate::gocompat::goyaml::resolve::{parse_float, parse_int, resolve_plain};
use events::{Event, Events};
use std::collections::HashMap;
use std::fmt;

/// Deepest nesting accepted; real manifests stay far below (large CRD schemas reach ~40).
pub const MAX_DEPTH: usize = 512;
/// Upper bound on nodes created by one file, aliases included (guards against alias bombs). The
/// largest real CRD (2.6 MiB) has a few hundred thousand.
pub const MAX_NODES: usize = 3_000_000;

/// A parse failure with the position it was found at (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (line {line}, column {col})")]
pub struct YamlError {
    /// What is wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Whether the failure is a duplicate key (reported under its own rule).
    pub duplicate_key: bool,
}

pub use crate::gocompat::goyaml::resolve::ScalarKind;

/// One YAML value with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// 1-based line where the value starts.
    pub line: usize,
    /// 1-based column where the value starts.
    pub col: usize,
}

/// The text of keys and scalars: up to 24 bytes stored inline, so most keys and short values
/// (`type: string`, names, versions) cost no allocation. A manifest tree has one key and often
/// one scalar per line, and allocating and freeing them was a third of the parse.
pub type Text = compact_str::CompactString;

/// A mapping key with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The key as written (scalar text).
    pub text: Text,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

/// The shapes a YAML value can take.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar: its text exactly as decoded, and how it resolves.
    Scalar(Text, ScalarKind),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order.
    Map(Vec<(Key, Node)>),
}

impl Node {
    /// Looks up a key in a mapping; `None` for other shapes or a missing key.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.text == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Follows a path of mapping keys.
    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The text of a string scalar (quoted, block, or plain that resolves to a string).
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(text, ScalarKind::Str) => Some(text),
            _ => None,
        }
    }

    /// The text of any non-null scalar as written: how Kubernetes' string fields read
    /// `version: 1.0` or `enabled: true` when a string is expected.
    pub fn scalar_text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(_, ScalarKind::Null) => None,
            Value::Scalar(text, _) => Some(text),
            _ => None,
        }
    }

    /// The boolean value, if the node is a boolean scalar.
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar(_, ScalarKind::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// The integer value, if the node is an integer scalar that fits in i64.
    pub fn as_i64(&self) -> Option<i64> {
        match &self.value {
            Value::Scalar(text, ScalarKind::Int) => parse_int(text),
            _ => None,
        }
    }

    /// The elements of a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The entries of a mapping.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// Whether the node is null (or an empty value).
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Scalar(_, ScalarKind::Null))
    }

    /// A short name of the node's shape, for messages such as "expected a mapping, found a list".
    pub fn kind_name(&self) -> &'static str {
        match &self.value {
            Value::Scalar(_, ScalarKind::Null) => "null",
            Value::Scalar(_, ScalarKind::Bool(_)) => "boolean",
            Value::Scalar(_, ScalarKind::Int) => "integer",
            Value::Scalar(_, ScalarKind::Float) => "number",
            Value::Scalar(_, ScalarKind::Str) => "string",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }

    /// Converts to JSON the way Kubernetes' YAML decoder does (sigs.k8s.io/yaml), for checks that
    /// need plain data (alm-examples comparisons, size estimates).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Scalar(_, ScalarKind::Null) => J::Null,
            Value::Scalar(_, ScalarKind::Bool(b)) => J::Bool(*b),
            Value::Scalar(text, ScalarKind::Int) => match parse_int(text) {
                Some(i) => J::from(i),
                None => J::String(text.to_string()),
            },
            Value::Scalar(text, ScalarKind::Float) => parse_float(text)
                .and_then(serde_json::Number::from_f64)
                .map(J::Number)
                .unwrap_or_else(|| J::String(text.to_string())),
            Value::Scalar(text, ScalarKind::Str) => J::String(text.to_string()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.text.to_string(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Value::Scalar(text, _) => f.write_str(text),
            Value::Seq(items) => write!(f, "<list of {}>", items.len()),
            Value::Map(entries) => write!(f, "<mapping of {}>", entries.len()),
        }
    }
}

/// One document of a YAML stream, with the line of its first node.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// 0-based index of the document in the stream (empty documents are counted too).
    pub index: usize,
    /// The root node.
    pub root: Node,
}

/// Parses every non-empty document of a YAML stream. A UTF-8 byte-order mark is ignored; CRLF line
/// ends are accepted. Duplicate keys fail the parse; use [`parse_stream_lenient`] to keep going.
pub fn parse_stream(text: &str) -> Result<Vec<Document>, YamlError> {
    let (docs, mut duplicates) = parse_stream_lenient(text)?;
    match duplicates.is_empty() {
        true => Ok(docs),
        false => Err(duplicates.remove(0)),
    }
}

/// Like [`parse_stream`], but a duplicate key is not fatal: the later value wins (as in the
/// lenient decoders OLM uses) and every duplicate is returned so it can still be reported.
pub fn parse_stream_lenient(text: &str) -> Result<(Vec<Document>, Vec<YamlError>), YamlError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Most manifests are plain block YAML, which the fast path reads ~10x quicker; it answers
    // only when its tree is exactly libyaml's, and everything else (every error included) goes
    // to the general parser below.
    if let Some(parsed) = fast::parse_stream(text) {
        return Ok(parsed);
    }
    parse_stream_general(text)
}

/// The fast path alone: `Some` only for streams of the subset it reads exactly as libyaml does,
/// with the duplicate keys as [`parse_stream_general`] reports them. Public so the differential tests and the fuzz harness can compare it with
/// [`parse_stream_general`]; callers should use [`parse_stream`].
#[doc(hidden)]
pub fn parse_stream_fast(text: &str) -> Option<(Vec<Document>, Vec<YamlError>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    fast::parse_stream(text)
}

/// Where the fast path last gave up on this thread (a source line of its module), so the
/// differential tests can say which constructs still go to libyaml. Not an API.
#[doc(hidden)]
pub fn last_fast_refusal() -> u32 {
    fast::last_refusal()
}

/// The libyaml-based parser alone, without the fast path (same contract as
/// [`parse_stream_lenient`]). Public so tests can compare both paths.
#[doc(hidden)]
pub fn parse_stream_general(text: &str) -> Result<(Vec<Document>, Vec<YamlError>), YamlError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // The parser is translated C. A panic inside it (none is known; the fuzz harness hunts for
    // them) is not caught here: turning it into a YAML error would blame the user's file for our
    // bug. It unwinds to the per-input boundary (`guard::catch` around each bundle, catalog file
    // and command), which reports `internal/error` naming the file and exits 2.
    build(text)
}

/// The line where a second document of the stream starts, empty ones included (`a: 1\n---\n`
/// holds two), or `None` for a stream of at most one. Why: the pipelines load their one-document
/// files (`ci.yaml`, manifests) with PyYAML's `safe_load`, which fails on a second document even
/// when it is empty, while [`parse_stream`] returns only the non-empty ones.
pub fn second_document_line(text: &str) -> Result<Option<usize>, YamlError> {
    let mut events = Events::new(text).map_err(|f| failure_error(text, f))?;
    let mut starts = 0usize;
    loop {
        let (event, line, _) = events.next_event().map_err(|f| failure_error(text, f))?;
        match event {
            Event::StreamEnd => return Ok(None),
            Event::DocumentStart => {
                starts += 1;
                if starts == 2 {
                    return Ok(Some(one_based(line)));
                }
            }
            _ => {}
        }
    }
}

fn build(text: &str) -> Result<(Vec<Document>, Vec<YamlError>), YamlError> {
    let mut events = Events::new(text).map_err(|f| failure_error(text, f))?;
    let mut builder = Builder::default();
    let mut docs = Vec::new();
    let mut doc_index = 0usize;
    loop {
        let (event, line, col) = events.next_event().map_err(|f| failure_error(text, f))?;
        let (line, col) = (one_based(line), one_based(col));
        match event {
            Event::StreamEnd => break,
            Event::StreamStart => {}
            Event::DocumentStart => {
                builder.stack.clear();
                builder.doc_nodes = 0;
                builder.doc_aliased = 0;
                builder.doc_bytes = 0;
                builder.doc_aliased_bytes = 0;
            }
            Event::DocumentEnd => {
                if let Some(root) = builder.root.take()
                    && !root.is_null()
                {
                    docs.push(Document {
                        index: doc_index,
                        root,
                    });
                }
                doc_index += 1;
                builder.anchors.clear();
            }
            Event::Scalar {
                value,
                anchor,
                tag,
                plain,
            } => {
                let kind = match tag.as_deref() {
                    Some(
                        "tag:yaml.org,2002:str"
                        | "tag:yaml.org,2002:binary"
                        | "tag:yaml.org,2002:timestamp",
                    ) => ScalarKind::Str,
                    Some(t) if t.starts_with("tag:yaml.org,2002:") => resolve_plain(&value),
                    Some(_) => ScalarKind::Str,
                    None if plain => resolve_plain(&value),
                    None => ScalarKind::Str,
                };
                builder.scalar(value, kind, anchor, line, col)?;
            }
            Event::SequenceStart { anchor } => {
                builder.start(Value::Seq(Vec::new()), anchor, line, col)?
            }
            Event::MappingStart { anchor } => {
                builder.start(Value::Map(Vec::new()), anchor, line, col)?
            }
            Event::SequenceEnd | Event::MappingEnd => builder.end(line, col)?,
            Event::Alias { anchor } => builder.alias(&anchor, line, col)?,
        }
    }
    Ok((docs, builder.duplicates))
}

fn one_based(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX).saturating_add(1)
}

/// Positions a parser failure. Reader errors (control characters such as NUL) carry only a byte
/// offset, turned into a line and column here.
fn failure_error(text: &str, failure: events::Failure) -> YamlError {
    let (line, col) = match (failure.mark, failure.offset) {
        (Some((line, col)), _) => (one_based(line), one_based(col)),
        (None, Some(offset)) => {
            let offset = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(text.len());
            let before = text.get(..offset).unwrap_or(text);
            let line = before.bytes().filter(|b| *b == b'\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (line, col)
        }
        (None, None) => (1, 1),
    };
    YamlError {
        message: failure.message,
        line,
        col,
        duplicate_key: false,
    }
}

enum Frame {
    Seq {
        node: Node,
        anchor: Option<String>,
    },
    Map {
        node: Node,
        anchor: Option<String>,
        pending_key: Option<Key>,
        seen: HashMap<Text, usize>,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    /// Anchored nodes with their node count, nesting depth and text bytes, so an alias is
    /// checked against the limits before it is copied.
    anchors: HashMap<String, (Node, usize, usize, usize)>,
    nodes: usize,
    /// Values of the current document, and how many of them came from alias expansion: the
    /// ratio go-yaml v2 limits (see [`excessive_aliasing`]).
    doc_nodes: usize,
    doc_aliased: usize,
    /// Text bytes (scalars and keys) of the current document, and how many of them alias
    /// expansion copied: what [`excessive_alias_bytes`] limits, since one alias of a large
    /// scalar is one value but megabytes.
    doc_bytes: usize,
    doc_aliased_bytes: usize,
    duplicates: Vec<YamlError>,
}

impl Builder {
    fn scalar(
        &mut self,
        text: String,
        kind: ScalarKind,
        anchor: Option<String>,
        line: usize,
        col: usize,
    ) -> Result<(), YamlError> {
        let node = Node {
            value: Value::Scalar(text.into(), kind),
            line,
            col,
        };
        self.count(1, line, col)?;
        let bytes = text_bytes(&node);
        self.doc_bytes = self.doc_bytes.saturating_add(bytes);
        if let Some(anchor) = anchor {
            self.anchors.insert(anchor, (node.clone(), 1, 0, bytes));
        }
        self.add(node)
    }

    fn start(
        &mut self,
        value: Value,
        anchor: Option<String>,
        line: usize,
        col: usize,
    ) -> Result<(), YamlError> {
        self.push_frame(line, col)?;
        let node = Node { value, line, col };
        self.stack.push(match node.value {
            Value::Map(_) => Frame::Map {
                node,
                anchor,
                pending_key: None,
                seen: HashMap::new(),
            },
            _ => Frame::Seq { node, anchor },
        });
        Ok(())
    }

    fn end(&mut self, line: usize, col: usize) -> Result<(), YamlError> {
        let (node, anchor) = match self.stack.pop() {
            Some(Frame::Seq { node, anchor } | Frame::Map { node, anchor, .. }) => (node, anchor),
            None => return Err(err_at("unbalanced end of collection", line, col)),
        };
        if let Some(anchor) = anchor {
            let (size, depth, bytes) = (count_nodes(&node), node_depth(&node), text_bytes(&node));
            self.anchors
                .insert(anchor, (node.clone(), size, depth, bytes));
        }
        self.add(node)
    }

    fn alias(&mut self, anchor: &str, line: usize, col: usize) -> Result<(), YamlError> {
        let Some((_, size, depth, bytes)) = self.anchors.get(anchor) else {
            return Err(err_at(
                &format!("alias *{anchor} refers to an unknown anchor"),
                line,
                col,
            ));
        };
        let (size, depth, bytes) = (*size, *depth, *bytes);
        // Both limits are checked before the copy is made, so an alias can neither nest deeper
        // than MAX_DEPTH (a stack overflow later) nor allocate past MAX_NODES.
        if self.stack.len() + depth >= MAX_DEPTH {
            return Err(err_at(
                &format!("alias *{anchor} nests deeper than {MAX_DEPTH} levels"),
                line,
                col,
            ));
        }
        self.count(size, line, col)?;
        // go-yaml decodes the alias itself (a value, not an aliased one), then the anchored
        // value again (aliased): one alias of a scalar is two values, one of them aliased.
        self.doc_nodes = self.doc_nodes.saturating_add(1);
        self.doc_aliased = self.doc_aliased.saturating_add(size);
        if excessive_aliasing(self.doc_aliased, self.doc_nodes) {
            return Err(err_at(
                &format!(
                    "document contains excessive aliasing (alias bomb?): {} of its {} values come from aliases, more than Kubernetes' YAML decoder accepts",
                    self.doc_aliased, self.doc_nodes
                ),
                line,
                col,
            ));
        }
        // The bytes too: go-yaml counts values only (its strings are shared, not copied), and
        // a thousand aliases of a 1 MiB scalar are 2,000 values but a gigabyte here.
        self.doc_bytes = self.doc_bytes.saturating_add(bytes);
        self.doc_aliased_bytes = self.doc_aliased_bytes.saturating_add(bytes);
        if excessive_alias_bytes(self.doc_aliased_bytes, self.doc_bytes) {
            return Err(err_at(
                &format!(
                    "document contains excessive aliasing (alias bomb?): alias *{anchor} would bring the text copied by aliases to {} bytes of the document's {}, more than olmpack accepts",
                    self.doc_aliased_bytes, self.doc_bytes
                ),
                line,
                col,
            ));
        }
        let Some((node, _, _, _)) = self.anchors.get(anchor) else {
            return Err(err_at(
                &format!("alias *{anchor} refers to an unknown anchor"),
                line,
                col,
            ));
        };
        let node = Node {
            line,
            col,
            ..node.clone()
        };
        self.add(node)
    }

    fn push_frame(&mut self, line: usize, col: usize) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(err_at(
                &format!("nesting deeper than {MAX_DEPTH} levels"),
                line,
                col,
            ));
        }
        self.count(1, line, col)
    }

    fn count(&mut self, n: usize, line: usize, col: usize) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        self.doc_nodes = self.doc_nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(err_at(
                &format!("document expands to more than {MAX_NODES} values (alias bomb?)"),
                line,
                col,
            ));
        }
        Ok(())
    }

    fn add(&mut self, node: Node) -> Result<(), YamlError> {
        match self.stack.last_mut() {
            None => {
                self.root = Some(node);
                Ok(())
            }
            Some(Frame::Seq { node: seq, .. }) => {
                if let Value::Seq(items) = &mut seq.value {
                    items.push(node);
                }
                Ok(())
            }
            Some(Frame::Map {
                node: map,
                pending_key,
                seen,
                ..
            }) => match pending_key.take() {
                None => {
                    let text = match &node.value {
                        Value::Scalar(text, _) => text.clone(),
                        _ => {
                            return Err(err_at(
                                "complex mapping keys are not supported",
                                node.line,
                                node.col,
                            ));
                        }
                    };
                    if let Some(first) = seen.get(&text)
                        && text != "<<"
                    {
                        self.duplicates.push(YamlError {
                            message: format!(
                                "duplicate key \"{text}\" at column {} (first defined on line {first})", node.col
                            ),
                            line: node.line,
                            col: node.col,
                            duplicate_key: true,
                        });
                    }
                    seen.insert(text.clone(), node.line);
                    *pending_key = Some(Key {
                        text,
                        line: node.line,
                        col: node.col,
                    });
                    Ok(())
                }
                Some(key) => {
                    if let Value::Map(entries) = &mut map.value {
                        if key.text == "<<" {
                            merge_into(entries, node);
                        } else if let Some(slot) =
                            entries.iter_mut().find(|(k, _)| k.text == key.text)
                        {
                            // Only a merged-in entry can share the name: explicit keys win.
                            *slot = (key, node);
                        } else {
                            entries.push((key, node));
                        }
                    }
                    Ok(())
                }
            },
        }
    }
}

/// go-yaml v2's alias limit (`allowedAliasRatio`, since v2.2.8), so olmpack refuses exactly the
/// alias-heavy documents Kubernetes refuses, and an alias bomb stops after a few thousand copied
/// values instead of millions: once more than 100 values of a document came from aliases and it
/// has more than 1,000 in all, aliases may make up at most 99 % of them up to 400,000 values,
/// falling linearly to 10 % at 4,000,000.
fn excessive_aliasing(aliased: usize, decoded: usize) -> bool {
    if aliased <= 100 || decoded <= 1000 {
        return false;
    }
    aliased as f64 / decoded as f64 > allowed_alias_ratio(decoded, 400_000.0, 4_000_000.0)
}

/// go-yaml's `allowedAliasRatio` over a range `low..high` of decoded units: 99 % up to `low`,
/// falling linearly to 10 % at `high`.
fn allowed_alias_ratio(decoded: usize, low: f64, high: f64) -> f64 {
    let decoded = decoded as f64;
    if decoded <= low {
        0.99
    } else if decoded >= high {
        0.10
    } else {
        0.99 - 0.89 * ((decoded - low) / (high - low))
    }
}

/// Text bytes aliases may copy into one document before [`excessive_alias_bytes`] looks at
/// the ratio at all: below it, only go-yaml's own rule ([`excessive_aliasing`]) decides, so
/// ordinary anchors (a shared label set, a repeated spec) are judged exactly as Kubernetes
/// judges them. Also where the fast path hands a document to the general parser.
pub(crate) const ALIAS_BYTES_FLOOR: usize = 1 << 20;

/// go-yaml's alias rule, in bytes instead of values: once aliases copied more than
/// [`ALIAS_BYTES_FLOOR`] bytes of text (scalars and keys) into a document, they may make up
/// at most 99 % of its text up to 16 MiB, falling linearly to 10 % at 160 MiB. go-yaml's range
/// is 400,000 to 4,000,000 values; at 40 bytes a value (more than a typical manifest line
/// holds) that is this range, so documents of ordinary values meet go-yaml's limit first, and
/// this one stops only aliases of large text: a 1 MiB scalar copied by aliases stops after
/// about 21 copies, where go-yaml (whose strings are shared, and which Kubernetes then turns
/// into JSON) would let a thousand through and the JSON take a gigabyte.
fn excessive_alias_bytes(aliased: usize, decoded: usize) -> bool {
    const MIB: f64 = (1 << 20) as f64;
    aliased > ALIAS_BYTES_FLOOR
        && aliased as f64 / decoded.max(1) as f64
            > allowed_alias_ratio(decoded, 16.0 * MIB, 160.0 * MIB)
}

/// YAML merge keys (`<<: *base`): entries of the merged mappings fill keys not set explicitly.
fn merge_into(entries: &mut Vec<(Key, Node)>, merged: Node) {
    let sources = match merged.value {
        Value::Map(_) => vec![merged],
        Value::Seq(items) => items,
        Value::Scalar(..) => return,
    };
    for source in sources {
        if let Value::Map(extra) = source.value {
            for (k, v) in extra {
                if !entries.iter().any(|(existing, _)| existing.text == k.text) {
                    entries.push((k, v));
                }
            }
        }
    }
}

/// Nesting depth below a node (0 for a scalar); bounded by MAX_DEPTH, so the recursion is too.
fn node_depth(node: &Node) -> usize {
    match &node.value {
        Value::Scalar(..) => 0,
        Value::Seq(items) => 1 + items.iter().map(node_depth).max().unwrap_or(0),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|(_, v)| node_depth(v))
                .max()
                .unwrap_or(0)
        }
    }
}

/// Bytes of text a node holds: its scalars and keys, as an alias of it would copy them.
fn text_bytes(node: &Node) -> usize {
    match &node.value {
        Value::Scalar(text, _) => text.len(),
        Value::Seq(items) => items.iter().map(text_bytes).sum(),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| k.text.len() + text_bytes(v))
            .sum(),
    }
}

fn count_nodes(node: &Node) -> usize {
    match &node.value {
        Value::Scalar(..) => 1,
        Value::Seq(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|(_, v)| 1 + count_nodes(v))
                .sum::<usize>()
        }
    }
}

fn err_at(message: &str, line: usize, col: usize) -> YamlError {
    YamlError {
        message: message.to_string(),
        line,
        col,
        duplicate_key: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        let mut docs = parse_stream(text).expect("parses");
        assert_eq!(docs.len(), 1);
        docs.remove(0).root
    }

    #[test]
    fn positions_are_one_based() {
        let root = one("a: 1\nb:\n  c: hello\n");
        let c = root.path(&["b", "c"]).expect("c");
        assert_eq!((c.line, c.col), (3, 6));
        assert_eq!(c.as_str(), Some("hello"));
    }

    #[test]
    fn duplicate_keys_are_errors_with_position() {
        let err = parse_stream("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
        assert!(err.duplicate_key);
        assert_eq!((err.line, err.col), (3, 1));
        assert!(
            err.message.contains("first defined on line 1"),
            "{}",
            err.message
        );
    }

    #[test]
    fn scalars_keep_their_text_and_resolve_like_go_yaml() {
        let root = one("v: 1.10\nb: yes\nq: \"true\"\nn: ~\no: 0755\ns: 1.2.3\n");
        assert_eq!(root.get("v").and_then(Node::scalar_text), Some("1.10"));
        assert_eq!(root.get("b").and_then(Node::as_bool), Some(true));
        assert_eq!(root.get("q").and_then(Node::as_str), Some("true"));
        assert!(root.get("n").is_some_and(Node::is_null));
        assert_eq!(root.get("o").and_then(Node::as_i64), Some(493));
        assert_eq!(root.get("s").and_then(Node::as_str), Some("1.2.3"));
    }

    #[test]
    fn every_document_is_kept_and_empty_ones_skipped() {
        let docs = parse_stream("---\na: 1\n---\n# only a comment\n---\nb: 2\n").expect("parses");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].index, 0);
        assert_eq!(docs[1].index, 2);
        assert_eq!(docs[1].root.line, 6);
    }

    #[test]
    fn bom_and_crlf_are_tolerated() {
        let root = one("\u{feff}a: 1\r\nb: two\r\n");
        assert_eq!(root.get("b").and_then(Node::as_str), Some("two"));
    }

    #[test]
    fn aliases_and_merge_keys_expand() {
        let root = one("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n");
        let used = root.get("use").expect("use");
        assert_eq!(used.get("x").and_then(Node::as_i64), Some(1));
        assert_eq!(used.get("y").and_then(Node::as_i64), Some(3));
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let text = "[".repeat(100_000);
        let err = parse_stream(&text).expect_err("too deep");
        assert!(
            err.message.contains("nesting") || err.message.contains("recursion"),
            "{}",
            err.message
        );
    }

    #[test]
    fn deep_alias_chains_are_refused_not_a_stack_overflow() {
        let mut text = String::from("a0: &a0 x\n");
        for i in 1..40 {
            text.push_str(&format!(
                "a{i}: &a{i} {}*a{}{}\n",
                "[".repeat(500),
                i - 1,
                "]".repeat(500)
            ));
        }
        let err = parse_stream(&text).expect_err("too deep");
        assert!(err.message.contains("deeper"), "{}", err.message);
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            text.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = name;
        }
        let err = parse_stream(&text).expect_err("bomb");
        assert!(err.message.contains("alias bomb"), "{}", err.message);
        // Stopped by go-yaml's alias ratio long before the absolute cap: cheap to refuse.
        assert!(
            err.message.contains("excessive aliasing"),
            "{}",
            err.message
        );
    }

    #[test]
    fn ordinary_aliasing_is_accepted() {
        // One anchor reused many times, as CRD schemas and Helm-made CSVs do: about 85 % of the
        // values come from aliases, under go-yaml's 99 %.
        let mut text = String::from("base: &b {x: 1, y: 2, z: [a, b, c]}\nitems:\n");
        for i in 0..300 {
            text.push_str(&format!("  - {{name: n{i}, spec: *b}}\n"));
        }
        let root = one(&text);
        let items = root.get("items").and_then(Node::as_seq).expect("items");
        assert_eq!(items.len(), 300);
        assert_eq!(
            items[299]
                .path(&["spec", "z"])
                .and_then(Node::as_seq)
                .map(<[Node]>::len),
            Some(3)
        );
    }

    /// Aliases of large text are refused by their bytes, on the general path and through the
    /// fast path alike, at the alias that crosses the line; a thousand aliases of 1 KB text
    /// (go-yaml's rule alone decides below 1 MiB copied) are accepted by both.
    #[test]
    fn aliases_are_judged_by_the_bytes_they_copy() {
        let doc = |size: usize, aliases: usize| {
            format!(
                "big: &big {}\ncopies:\n{}",
                "A".repeat(size),
                "  - *big\n".repeat(aliases)
            )
        };
        let large = doc(1 << 20, 100);
        for (path, result) in [
            ("general", parse_stream_general(&large).map(|(d, _)| d)),
            ("fast then general", parse_stream(&large)),
        ] {
            let err = result.expect_err(path);
            assert!(err.message.contains("excessive aliasing"), "{path}: {err}");
            // 21 copies of 1 MiB are 22 MiB of a 23 MiB document: over the 98.4 % allowed
            // there; the 21st alias is on line 23.
            assert_eq!((err.line, err.col), (23, 5), "{path}: {err}");
        }
        let small = doc(1000, 1000);
        let both = parse_stream(&small).expect("accepted");
        let general = parse_stream_general(&small).expect("accepted");
        assert_eq!(both, general.0);
        let copies = general.0[0].root.get("copies").and_then(Node::as_seq);
        assert_eq!(copies.map(<[Node]>::len), Some(1000));
        assert!(!excessive_alias_bytes(
            ALIAS_BYTES_FLOOR,
            ALIAS_BYTES_FLOOR + 1
        ));
        assert!(excessive_alias_bytes(
            ALIAS_BYTES_FLOOR + 1,
            ALIAS_BYTES_FLOOR + 2
        ));
        assert!(!excessive_alias_bytes(10 << 20, 11 << 20));
        // From 160 MiB on, aliases may copy 10 % of a document's text.
        assert!(!excessive_alias_bytes(20 << 20, 200 << 20));
        assert!(excessive_alias_bytes(21 << 20, 200 << 20));
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let err = parse_stream("a: [1, 2\nb: 3\n").expect_err("bad");
        assert!(err.line >= 1);
        assert!(!err.duplicate_key);
    }

    #[test]
    fn block_scalar_cut_at_end_of_file_parses_as_go_yaml_does() {
        // percona-postgresql-operator 1.3.0/1.4.0: the CSV ends inside a block scalar with no
        // final newline (libyaml-safer 0.3.0 panicked here).
        let root = one("a: |\n  b");
        assert_eq!(root.get("a").and_then(Node::as_str), Some("b"));
        let root = one("a: >\n  b");
        assert_eq!(root.get("a").and_then(Node::as_str), Some("b"));
    }

    #[test]
    fn hostile_inputs_give_errors_or_trees_never_panics() {
        // The probe list of the project's before-stop hook, plus reader errors.
        let probes = [
            "a: |\n  b",
            "a: >\n  b",
            "a: \"b",
            "a: 'b",
            "a: [b",
            "a: {b: [",
            "- a\n-",
            "---\n---\n",
            "a: &x [*x]",
            "\u{feff}a: 1\n\u{feff}",
            "a: !!binary ====",
            "a:\t1",
            "? |\n  k\n: v",
            "a: 1\nb: \u{0}\n",
            "a: \"\\x\"",
        ];
        for probe in probes {
            let _ = parse_stream(probe);
        }
        let err = parse_stream("a: 1\nb: x\u{0}\n").expect_err("NUL is not YAML");
        assert_eq!(err.line, 2, "{err}");
    }

    #[test]
    fn json_conversion_matches_kubernetes_decoding() {
        let root = one("a: [1, 2.5, true, null, x]\n");
        assert_eq!(
            root.to_json(),
            serde_json::json!({"a": [1, 2.5, true, null, "x"]})
        );
    }
}
