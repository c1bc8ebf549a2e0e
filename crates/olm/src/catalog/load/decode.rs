//! Splits one catalog file into documents the way opm's decoder does (apimachinery's
//! `YAMLOrJSONDecoder`, CATALOG.md A.4), and turns each into a positioned tree.
//!
//! - If the first non-space byte is `{`, the file is a JSON stream: objects one after another.
//!   A JSON error after at most one object makes the newer decoder retry the whole file as YAML.
//! - Otherwise it is YAML, cut into documents on lines that start with `---`; after the `---`
//!   only spaces or a `#comment` may follow. Each piece is parsed on its own (so one bad document
//!   does not hide the others), and a piece holding only blanks or comments is a `null` document,
//!   which opm rejects as missing its schema.

use crate::yaml::{self, Key, Node, ScalarKind, Text, Value};

/// One decoded document: its tree (positions are lines of the whole file) or what went wrong.
#[derive(Debug)]
pub enum Doc {
    /// A parsed document.
    Ok(Node),
    /// A document that parsed to nothing (blank or comments only), at this 1-based line.
    Null(usize),
    /// A syntax error at a 1-based line and column.
    Err(DocError),
}

/// A decode failure with its position in the file.
#[derive(Debug, Clone)]
pub struct DocError {
    /// What is wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

/// What a file decodes to: its documents in order, plus exact duplicate keys (YAML; opm keeps the
/// last value silently).
#[derive(Debug, Default)]
pub struct Decoded {
    /// The documents, in file order.
    pub docs: Vec<Doc>,
    /// `(line, message)` of every repeated mapping key.
    pub duplicate_keys: Vec<(usize, String)>,
}

/// Decodes one file's text; YAML documents of a large file are parsed on up to `jobs` threads
/// (the result does not depend on it).
pub fn decode(text: &str, jobs: usize) -> Decoded {
    let first = text
        .bytes()
        .take(4096)
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    if first == Some(b'{') {
        let (docs, ok) = decode_json(text);
        if ok {
            return Decoded {
                docs,
                duplicate_keys: Vec::new(),
            };
        }
        let decoded_objects = docs.iter().filter(|d| matches!(d, Doc::Ok(_))).count();
        if decoded_objects >= 2 {
            return Decoded {
                docs,
                duplicate_keys: Vec::new(),
            };
        }
        // The newer decoder retries as YAML ("YAML that tastes like JSON"); when that fails
        // too, the JSON error is the one that explains the file.
        let yaml = decode_yaml(text, jobs);
        if yaml.docs.iter().all(|d| matches!(d, Doc::Ok(_))) {
            return yaml;
        }
        return Decoded {
            docs,
            duplicate_keys: Vec::new(),
        };
    }
    decode_yaml(text, jobs)
}

/// Byte offset → (line, col), both 1-based, counting from a known earlier point.
struct LineCounter<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
}

impl LineCounter<'_> {
    fn at(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.bytes.len());
        if offset >= self.pos {
            for i in memchr::memchr_iter(b'\n', &self.bytes[self.pos..offset]) {
                self.line += 1;
                self.line_start = self.pos + i + 1;
            }
            self.pos = offset;
        }
        let col = self.bytes[self.line_start..offset.max(self.line_start)]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count()
            + 1;
        (self.line, col)
    }
}

/// The JSON stream; `false` when it stopped on an error (the error is the last document).
fn decode_json(text: &str) -> (Vec<Doc>, bool) {
    let bytes = text.as_bytes();
    let mut counter = LineCounter {
        bytes,
        pos: 0,
        line: 1,
        line_start: 0,
    };
    let mut docs = Vec::new();
    let mut offset = 0usize;
    loop {
        while offset < bytes.len() && matches!(bytes[offset], b' ' | b'\t' | b'\r' | b'\n') {
            offset += 1;
        }
        if offset >= bytes.len() {
            return (docs, true);
        }
        let (line, col) = counter.at(offset);
        let mut stream =
            serde_json::Deserializer::from_slice(&bytes[offset..]).into_iter::<serde_json::Value>();
        match stream.next() {
            Some(Ok(value)) => {
                offset += stream.byte_offset();
                docs.push(Doc::Ok(from_json(value, line, col)));
            }
            Some(Err(e)) => {
                // serde_json positions are relative to the slice start.
                let err_line = line + e.line().saturating_sub(1);
                let err_col = if e.line() <= 1 {
                    col + e.column().saturating_sub(1)
                } else {
                    e.column()
                };
                docs.push(Doc::Err(DocError {
                    message: format!("invalid JSON: {}", strip_position(&e.to_string())),
                    line: err_line,
                    col: err_col.max(1),
                }));
                return (docs, false);
            }
            None => return (docs, true),
        }
    }
}

fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// A JSON value as a tree with every node at the document's position.
fn from_json(value: serde_json::Value, line: usize, col: usize) -> Node {
    use serde_json::Value as J;
    let value = match value {
        J::Null => Value::Scalar(Text::default(), ScalarKind::Null),
        J::Bool(b) => Value::Scalar(
            Text::from(if b { "true" } else { "false" }),
            ScalarKind::Bool(b),
        ),
        J::Number(n) => {
            let kind = if n.is_f64() {
                ScalarKind::Float
            } else {
                ScalarKind::Int
            };
            Value::Scalar(n.to_string().into(), kind)
        }
        J::String(s) => Value::Scalar(s.into(), ScalarKind::Str),
        J::Array(items) => Value::Seq(items.into_iter().map(|v| from_json(v, line, col)).collect()),
        J::Object(map) => Value::Map(
            map.into_iter()
                .map(|(k, v)| {
                    (
                        Key {
                            text: k.into(),
                            line,
                            col,
                        },
                        from_json(v, line, col),
                    )
                })
                .collect(),
        ),
    };
    Node { value, line, col }
}

/// Files above this size have their documents parsed in parallel.
const PARALLEL_BYTES: usize = 256 * 1024;

/// Multi-document YAML, split as apimachinery's `YAMLReader` splits it.
fn decode_yaml(text: &str, jobs: usize) -> Decoded {
    let mut pieces: Vec<(usize, usize, usize)> = Vec::new(); // (from, to, 1-based line)
    let mut stop: Option<Doc> = None;
    let mut chunk_start: Option<(usize, usize)> = None; // (byte offset, 1-based line)
    let mut offset = 0usize;
    let mut line_no = 1usize;
    while offset < text.len() {
        let end = memchr::memchr(b'\n', &text.as_bytes()[offset..])
            .map_or(text.len(), |i| offset + i + 1);
        let line = &text[offset..end];
        if let Some(rest) = line.strip_prefix("---") {
            let trimmed = rest.trim();
            if let Some((from, l)) = chunk_start.take() {
                pieces.push((from, offset, l));
            }
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                stop = Some(Doc::Err(DocError {
                    message: format!(
                        "invalid Yaml document separator: {trimmed} (after `---` only spaces or a #comment may follow; put the content on the next line)"
                    ),
                    line: line_no,
                    col: 4,
                }));
                // opm stops reading the file here.
                break;
            }
        } else if chunk_start.is_none() {
            chunk_start = Some((offset, line_no));
        }
        offset = end;
        line_no += 1;
    }
    if stop.is_none()
        && let Some((from, l)) = chunk_start.take()
    {
        pieces.push((from, text.len(), l));
    }
    let parse_range = |range: &[(usize, usize, usize)]| {
        let mut out = Decoded::default();
        for &(from, to, l) in range {
            if let Some(chunk) = text.get(from..to) {
                parse_chunk(&mut out, chunk, l);
            }
        }
        out
    };
    let workers = jobs.min(pieces.len());
    let mut out = if workers > 1 && text.len() > PARALLEL_BYTES {
        let per = pieces.len().div_ceil(workers);
        let parts: Vec<Decoded> = std::thread::scope(|s| {
            let handles: Vec<_> = pieces
                .chunks(per)
                .map(|range| s.spawn(move || parse_range(range)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let mut all = Decoded::default();
        for part in parts {
            all.docs.extend(part.docs);
            all.duplicate_keys.extend(part.duplicate_keys);
        }
        all
    } else {
        parse_range(&pieces)
    };
    if let Some(doc) = stop {
        out.docs.push(doc);
    }
    out
}

fn parse_chunk(out: &mut Decoded, chunk: &str, first_line: usize) {
    let shift = first_line - 1;
    if let Some(mut root) = yaml::fast::parse(chunk) {
        if shift > 0 {
            shift_lines(&mut root, shift);
        }
        out.docs.push(Doc::Ok(root));
        return;
    }
    // The fast path refused this chunk already: straight to the general parser.
    match yaml::parse_stream_general(chunk) {
        Ok((docs, duplicates)) => {
            for d in duplicates {
                out.duplicate_keys.push((d.line + shift, d.message));
            }
            // go-yaml reads the first document of a piece; more can only come from `...`.
            match docs.into_iter().next() {
                Some(doc) => {
                    let mut root = doc.root;
                    if shift > 0 {
                        shift_lines(&mut root, shift);
                    }
                    out.docs.push(Doc::Ok(root));
                }
                None => out.docs.push(Doc::Null(first_line)),
            }
        }
        Err(e) => {
            // An error at the end of a piece (an unclosed bracket) points at its last line.
            let last = first_line + chunk.trim_end_matches('\n').matches('\n').count();
            out.docs.push(Doc::Err(DocError {
                message: format!("invalid YAML: {}", e.message),
                line: (e.line + shift).min(last),
                col: e.col,
            }))
        }
    }
}

fn shift_lines(node: &mut Node, shift: usize) {
    node.line += shift;
    match &mut node.value {
        Value::Scalar(..) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| shift_lines(n, shift)),
        Value::Map(entries) => {
            for (k, v) in entries {
                k.line += shift;
                shift_lines(v, shift);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode1(text: &str) -> Decoded {
        decode(text, 1)
    }

    fn lines(d: &Decoded) -> Vec<String> {
        d.docs
            .iter()
            .map(|d| match d {
                Doc::Ok(n) => format!("ok@{}", n.line),
                Doc::Null(l) => format!("null@{l}"),
                Doc::Err(e) => format!("err@{}", e.line),
            })
            .collect()
    }

    #[test]
    fn yaml_documents_keep_file_lines() {
        let d = decode1("---\nschema: a\n---\n# note\nschema: b\nname: c\n");
        assert_eq!(lines(&d), ["ok@2", "ok@5"]);
    }

    #[test]
    fn comment_only_document_is_null() {
        let d = decode1("# header\n---\nschema: a\n");
        assert_eq!(lines(&d), ["null@1", "ok@3"]);
    }

    #[test]
    fn separator_with_content_stops_the_file() {
        let d = decode1("schema: a\n--- schema: b\nschema: c\n");
        assert_eq!(lines(&d), ["ok@1", "err@2"]);
        let d = decode1("schema: a\n---  # fine\nschema: c\n");
        assert_eq!(lines(&d), ["ok@1", "ok@3"]);
    }

    #[test]
    fn one_broken_yaml_document_does_not_hide_the_next() {
        let d = decode1("---\na: [1\n---\nb: 2\n");
        assert_eq!(lines(&d), ["err@2", "ok@4"]);
    }

    #[test]
    fn json_stream_positions() {
        let d = decode1("  {\"schema\":\"a\"}\n\n{\"schema\":\n \"b\"}");
        assert_eq!(lines(&d), ["ok@1", "ok@3"]);
        if let Doc::Ok(n) = &d.docs[0] {
            assert_eq!(n.col, 3);
        }
    }

    #[test]
    fn parallel_parsing_gives_the_same_documents() {
        let mut text = String::new();
        for i in 0..6000 {
            text.push_str(&format!(
                "---\nschema: olm.bundle\nname: b{i}\nbroken: {}\n",
                if i % 500 == 7 { "[" } else { "x" }
            ));
        }
        assert!(text.len() > PARALLEL_BYTES);
        assert_eq!(lines(&decode(&text, 1)), lines(&decode(&text, 3)));
    }

    #[test]
    fn json_that_is_yaml_falls_back() {
        let d = decode1("{schema: olm.package, name: foo}\n");
        assert_eq!(lines(&d), ["ok@1"]);
        let d = decode1("{\"schema\": \"a\"} {\"schema\": \"b\"} {bad");
        assert_eq!(lines(&d), ["ok@1", "ok@1", "err@1"]);
    }
}
