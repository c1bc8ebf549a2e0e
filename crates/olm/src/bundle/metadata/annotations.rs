//! `metadata/annotations.yaml`: reading what the user already has and rendering the file from
//! the `scaffolds/annotations.yaml` template.
//!
//! Format decisions (the file is read by opm, OLM and every bundle tool, so it stays plain):
//! - the six core keys come first, in opm's LABEL order (FIELD.md c.1's bundle.Dockerfile), then
//!   every other annotation the existing file had, in its order;
//! - keys are indented two spaces under `annotations:`; every value is double-quoted, so a value
//!   such as `true`, `1.10` or `0755` stays the string it is as an image label (operator-sdk's
//!   template writes them unquoted, and YAML then reads a boolean or a number);
//! - an existing value that YAML read as a boolean, number or null keeps its text and becomes a
//!   quoted string (`true` → `"true"`, null → `""`), which is what OLM sees as a label anyway.

use super::MetadataError;
use crate::bundle::keys;
use crate::yaml::{self, ScalarKind, Value};
use std::path::Path;

/// The template, embedded so the binary needs no data files.
const TEMPLATE: &str = include_str!("../../../../../scaffolds/annotations.yaml");

/// One annotation as init will write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The value, as the string an image label would carry.
    pub value: String,
}

/// An existing annotations file, read strictly.
#[derive(Debug, Clone)]
pub struct Existing {
    /// Entries in file order.
    pub entries: Vec<Entry>,
    /// Whether every value was written as a YAML string (not a boolean, number or null), so the
    /// file can be kept as is when its entries are the ones init would write.
    pub all_strings: bool,
}

impl Existing {
    /// The value of a key, when present.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.value.as_str())
    }
}

/// Parses an existing annotations file. Any shape init could not keep verbatim (a list or mapping
/// as a value, no `annotations:` mapping) is an error naming the line, so nothing the user wrote
/// is silently dropped.
pub fn parse(path: &Path, text: &str) -> Result<Existing, MetadataError> {
    let docs = yaml::parse_stream(text).map_err(|error| MetadataError::Yaml {
        path: path.to_path_buf(),
        error,
    })?;
    let shape = |line: usize, message: String| MetadataError::Annotations {
        path: path.to_path_buf(),
        line,
        message,
    };
    // An empty file (or one holding only comments) has nothing to keep: init fills it in.
    let Some(doc) = docs.first() else {
        return Ok(Existing {
            entries: Vec::new(),
            all_strings: true,
        });
    };
    let Some(node) = doc.root.get("annotations") else {
        return Err(shape(
            doc.root.line,
            "no top-level `annotations:` mapping: fix the file or delete it so init can write it"
                .into(),
        ));
    };
    let map = match &node.value {
        Value::Map(map) => map.as_slice(),
        Value::Scalar(_, ScalarKind::Null) => &[],
        _ => {
            return Err(shape(
                node.line,
                format!(
                    "`annotations` must be a mapping of key: value, found a {}",
                    node.kind_name()
                ),
            ));
        }
    };
    let mut all_strings = true;
    let mut entries = Vec::with_capacity(map.len());
    for (key, value) in map {
        let text = match &value.value {
            Value::Scalar(_, ScalarKind::Null) => {
                all_strings = false;
                String::new()
            }
            Value::Scalar(text, kind) => {
                all_strings &= *kind == ScalarKind::Str;
                text.to_string()
            }
            _ => {
                return Err(shape(
                    value.line,
                    format!(
                        "annotation {} is a {}; annotations are strings (image labels): write it as one quoted string",
                        key.text,
                        value.kind_name()
                    ),
                ));
            }
        };
        entries.push(Entry {
            key: key.text.to_string(),
            value: text,
        });
    }
    Ok(Existing {
        entries,
        all_strings,
    })
}

/// Whether two entry lists hold the same key/value pairs (YAML mappings have no order, so a file
/// sorted the way opm writes it is the same content).
pub fn same_content(a: &[Entry], b: &[Entry]) -> bool {
    let mut a: Vec<&Entry> = a.iter().collect();
    let mut b: Vec<&Entry> = b.iter().collect();
    a.sort_by(|x, y| x.key.cmp(&y.key));
    b.sort_by(|x, y| x.key.cmp(&y.key));
    a == b
}

/// Orders entries as init writes them: core keys in opm's order, then the others as given.
pub fn ordered(core: &[Entry], existing: Option<&Existing>) -> Vec<Entry> {
    let mut out: Vec<Entry> = keys::CORE_ORDER
        .iter()
        .filter_map(|k| core.iter().find(|e| e.key == *k).cloned())
        .collect();
    if let Some(existing) = existing {
        out.extend(
            existing
                .entries
                .iter()
                .filter(|e| !keys::CORE_ORDER.contains(&e.key.as_str()))
                .cloned(),
        );
    }
    out
}

/// Renders the annotations file from the template.
pub fn render(entries: &[Entry]) -> String {
    let lines: Vec<String> = entries
        .iter()
        .map(|e| format!("  {}: {}", yaml_key(&e.key), yaml_quote(&e.value)))
        .collect();
    TEMPLATE.replace("{{annotations}}", &lines.join("\n"))
}

/// A mapping key: plain when it only holds the characters label keys use, quoted otherwise.
pub fn yaml_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'))
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    if plain {
        key.to_string()
    } else {
        yaml_quote(key)
    }
}

/// A YAML double-quoted scalar holding exactly `value` (backslash, quote and control characters
/// escaped), so any string round-trips.
pub fn yaml_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Node;

    #[test]
    fn quoting_round_trips_through_the_parser() {
        for value in [
            "plain",
            "true",
            "1.10",
            "a \"b\" \\ c",
            "line\nbreak",
            "",
            "é ✓",
        ] {
            let text = format!("k: {}\n", yaml_quote(value));
            let docs = yaml::parse_stream(&text).expect("parses");
            assert_eq!(docs[0].root.get("k").and_then(Node::as_str), Some(value));
        }
    }

    #[test]
    fn rendered_file_parses_back_to_the_same_entries() {
        let entries = vec![
            Entry {
                key: keys::PACKAGE.into(),
                value: "p".into(),
            },
            Entry {
                key: "weird key:x".into(),
                value: "true".into(),
            },
        ];
        let text = render(&entries);
        let parsed = parse(Path::new("a.yaml"), &text).expect("parses");
        assert_eq!(parsed.entries, entries);
        assert!(parsed.all_strings);
    }
}
