//! `metadata/dependencies.yaml`: one `olm.gvk` entry per API the CSV requires.
//!
//! The file is the user's as soon as it exists: init only appends entries that are missing, as
//! text after the last entry, so comments, order and quoting stay as written. When the file's
//! shape does not allow a safe append (a flow list, `dependencies` not the last key), the file is
//! re-emitted from its parsed content, keeping every entry; a note says so.

use super::MetadataError;
use super::annotations::{yaml_key, yaml_quote};
use crate::bundle::Csv;
use crate::yaml::{self, Node, ScalarKind, Value};
use std::path::Path;

/// The template for a file with entries.
const TEMPLATE: &str = include_str!("../../../../../scaffolds/dependencies.yaml");
/// The commented example written when the CSV requires nothing. It ends in `dependencies: []`:
/// a metadata file holding only comments decodes to null, and operator-registry's
/// `ValidateBundleFormat` (run by `operator-sdk bundle validate` and `opm alpha bundle validate`)
/// dereferences that null and crashes.
pub const EXAMPLE: &str = include_str!("../../../../../scaffolds/dependencies.example.yaml");
/// The comments-only example earlier olmpack versions wrote; init replaces it by [`EXAMPLE`] so a
/// bundle scaffolded before the fix stops crashing the reference validator.
const COMMENTS_ONLY_EXAMPLE: &str =
    include_str!("../../../../../scaffolds/dependencies.example.comments-only.yaml");

/// An API (group, version, kind) the CSV requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gvk {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// The APIs a CSV requires: `spec.customresourcedefinitions.required` (group taken from the CRD
/// name after its first dot, as in `etcdclusters.etcd.database.coreos.com`) and
/// `spec.apiservicedefinitions.required`, in that order, without duplicates. Items missing a
/// field are returned as notes instead: an `olm.gvk` entry with an empty field fails validation.
pub fn required(csv: &Csv<'_>) -> (Vec<Gvk>, Vec<String>) {
    let mut out: Vec<Gvk> = Vec::new();
    let mut notes = Vec::new();
    let lists = [
        (
            "spec.customresourcedefinitions.required",
            csv.required_crds(),
        ),
        ("spec.apiservicedefinitions.required", csv.required_apis()),
    ];
    for (i, (path, items)) in lists.into_iter().enumerate() {
        for item in items {
            let group = if i == 0 {
                item.name.trim().split_once('.').map_or("", |(_, g)| g)
            } else {
                item.written_group.unwrap_or("").trim()
            };
            let gvk = Gvk {
                group: group.to_string(),
                version: item.version.trim().to_string(),
                kind: item.kind.trim().to_string(),
            };
            if gvk.group.is_empty() || gvk.version.is_empty() || gvk.kind.is_empty() {
                notes.push(format!(
                    "the CSV's {} entry on line {} lacks a {}; no dependency was written for it",
                    path,
                    item.pos.line,
                    if i == 0 {
                        "name with a group (plural.group), version or kind"
                    } else {
                        "group, version or kind"
                    }
                ));
                continue;
            }
            if !out.contains(&gvk) {
                out.push(gvk);
            }
        }
    }
    (out, notes)
}

/// Renders one `olm.gvk` list item at the given indent of its dash.
fn render_entry(gvk: &Gvk, indent: usize) -> String {
    let pad = " ".repeat(indent);
    format!(
        "{pad}- type: olm.gvk\n{pad}  value:\n{pad}    group: {}\n{pad}    version: {}\n{pad}    kind: {}\n",
        yaml_quote(&gvk.group),
        yaml_quote(&gvk.version),
        yaml_quote(&gvk.kind)
    )
}

/// The file for a bundle without one: entries from the template, or the commented example.
pub fn render_new(required: &[Gvk]) -> String {
    if required.is_empty() {
        return EXAMPLE.to_string();
    }
    let entries: String = required.iter().map(|g| render_entry(g, 2)).collect();
    TEMPLATE.replace("{{entries}}\n", &entries)
}

/// The `olm.gvk` entries a parsed dependencies document declares.
fn declared(root: &Node) -> Vec<Gvk> {
    let Some(items) = root.get("dependencies").and_then(Node::as_seq) else {
        return Vec::new();
    };
    items
        .iter()
        .filter(|i| i.get("type").and_then(Node::scalar_text) == Some("olm.gvk"))
        .filter_map(|i| i.get("value"))
        .map(|v| {
            let t = |k: &str| {
                v.get(k)
                    .and_then(Node::scalar_text)
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            Gvk {
                group: t("group"),
                version: t("version"),
                kind: t("kind"),
            }
        })
        .collect()
}

/// The merged file for an existing one: `None` when nothing is missing (the file stays
/// byte-identical), else the new text and, when the file had to be re-emitted, a note.
pub fn merge(
    path: &Path,
    text: &str,
    required: &[Gvk],
) -> Result<Option<(String, Option<String>)>, MetadataError> {
    let docs = yaml::parse_stream(text).map_err(|error| MetadataError::Yaml {
        path: path.to_path_buf(),
        error,
    })?;
    let root = docs.first().map(|d| d.root.clone());
    let have = root.as_ref().map(declared).unwrap_or_default();
    let missing: Vec<&Gvk> = required.iter().filter(|g| !have.contains(g)).collect();
    if missing.is_empty() {
        if text == COMMENTS_ONLY_EXAMPLE {
            return Ok(Some((EXAMPLE.to_string(), None)));
        }
        return Ok(None);
    }
    if text == EXAMPLE || text == COMMENTS_ONLY_EXAMPLE {
        let owned: Vec<Gvk> = missing.into_iter().cloned().collect();
        return Ok(Some((render_new(&owned), None)));
    }
    if let Some(appended) = try_append(text, root.as_ref(), &missing)
        && let Ok(new_docs) = yaml::parse_stream(&appended)
        && new_docs.len() == docs.len().max(1)
    {
        let mut want = have.clone();
        want.extend(missing.iter().map(|g| (*g).clone()));
        let same_rest = match (&root, new_docs.first()) {
            (Some(old), Some(new)) => other_keys_equal(old, &new.root),
            _ => true,
        };
        if new_docs.first().map(|d| declared(&d.root)) == Some(want) && same_rest {
            return Ok(Some((appended, None)));
        }
    }
    // Re-emit: every top-level key and every entry kept, the missing entries added.
    let mut out = String::new();
    let mut wrote_deps = false;
    if let Some(Value::Map(map)) = root.as_ref().map(|r| &r.value) {
        for (key, value) in map {
            if key.text == "dependencies" {
                out.push_str("dependencies:\n");
                if let Some(items) = value.as_seq() {
                    for item in items {
                        emit_item(item, 2, &mut out);
                    }
                }
                for g in &missing {
                    out.push_str(&render_entry(g, 2));
                }
                wrote_deps = true;
            } else {
                emit_entry(&key.text, value, 0, &mut out);
            }
        }
    }
    if !wrote_deps {
        out.push_str("dependencies:\n");
        for g in &missing {
            out.push_str(&render_entry(g, 2));
        }
    }
    Ok(Some((
        out,
        Some(format!(
            "{} was re-formatted to add the missing olm.gvk entries (comments dropped; every entry kept)",
            path.display()
        )),
    )))
}

/// Whether two documents agree on every top-level key except `dependencies`.
fn other_keys_equal(a: &Node, b: &Node) -> bool {
    let rest = |n: &Node| -> Vec<(String, serde_json::Value)> {
        n.as_map()
            .unwrap_or(&[])
            .iter()
            .filter(|(k, _)| k.text != "dependencies")
            .map(|(k, v)| (k.text.to_string(), v.to_json()))
            .collect()
    };
    rest(a) == rest(b)
}

/// Appends entries as text when `dependencies:` is the last top-level key and a block list (or
/// empty), or when the document is empty (comments only). The caller re-parses the result and
/// only uses it when it means exactly the old entries plus the new ones.
fn try_append(text: &str, root: Option<&Node>, missing: &[&Gvk]) -> Option<String> {
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let indent = match root {
        None => {
            out.push_str("dependencies:\n");
            2
        }
        Some(root) => {
            let map = root.as_map()?;
            let (last_key, value) = map.last()?;
            if last_key.text != "dependencies" || last_key.col != 1 {
                return None;
            }
            match &value.value {
                Value::Scalar(t, ScalarKind::Null) if t.is_empty() => 2,
                Value::Seq(items) if !items.is_empty() => {
                    // The dash of the first item: the last '-' before the item's column.
                    let line = text.lines().nth(items[0].line.checked_sub(1)?)?;
                    let upto: String = line.chars().take(items[0].col.saturating_sub(1)).collect();
                    let dash = upto.rfind('-')?;
                    if !upto[..dash].chars().all(|c| c == ' ') {
                        return None;
                    }
                    dash
                }
                _ => return None,
            }
        }
    };
    for g in missing {
        out.push_str(&render_entry(g, indent));
    }
    Some(out)
}

/// Writes `key: value` at an indent (block style).
fn emit_entry(key: &str, value: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match &value.value {
        Value::Scalar(..) => {
            out.push_str(&format!("{pad}{}: {}\n", yaml_key(key), scalar(value)));
        }
        Value::Map(m) if m.is_empty() => out.push_str(&format!("{pad}{}: {{}}\n", yaml_key(key))),
        Value::Seq(s) if s.is_empty() => out.push_str(&format!("{pad}{}: []\n", yaml_key(key))),
        Value::Map(m) => {
            out.push_str(&format!("{pad}{}:\n", yaml_key(key)));
            for (k, v) in m {
                emit_entry(&k.text, v, indent + 2, out);
            }
        }
        Value::Seq(items) => {
            out.push_str(&format!("{pad}{}:\n", yaml_key(key)));
            for item in items {
                emit_item(item, indent + 2, out);
            }
        }
    }
}

/// Writes one `- item` of a block list whose dash sits at `indent`.
fn emit_item(item: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match &item.value {
        Value::Map(m) if !m.is_empty() => {
            let mut first = String::new();
            emit_entry(&m[0].0.text, &m[0].1, indent + 2, &mut first);
            // Replace the first entry's indent with the dash.
            out.push_str(&pad);
            out.push_str("- ");
            out.push_str(&first[indent + 2..]);
            for (k, v) in &m[1..] {
                emit_entry(&k.text, v, indent + 2, out);
            }
        }
        Value::Seq(s) if !s.is_empty() => {
            out.push_str(&format!("{pad}-\n"));
            for i in s {
                emit_item(i, indent + 2, out);
            }
        }
        Value::Map(_) => out.push_str(&format!("{pad}- {{}}\n")),
        Value::Seq(_) => out.push_str(&format!("{pad}- []\n")),
        Value::Scalar(..) => out.push_str(&format!("{pad}- {}\n", scalar(item))),
    }
}

/// A scalar as written: strings quoted, other kinds (numbers, booleans, null) in plain text so
/// they keep their type.
fn scalar(node: &Node) -> String {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => "null".into(),
        Value::Scalar(t, ScalarKind::Str) => yaml_quote(t),
        Value::Scalar(t, _) => t.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gvk(g: &str, v: &str, k: &str) -> Gvk {
        Gvk {
            group: g.into(),
            version: v.into(),
            kind: k.into(),
        }
    }

    #[test]
    fn appends_after_the_last_entry_keeping_comments() {
        let text = "# mine\ndependencies:\n    - type: olm.package   # keep\n      value:\n        packageName: p\n        version: \">1.0.0\"\n";
        let (out, note) = merge(Path::new("d.yaml"), text, &[gvk("a.io", "v1", "A")])
            .expect("ok")
            .expect("changed");
        assert!(note.is_none());
        assert!(out.starts_with(text), "{out}");
        let docs = yaml::parse_stream(&out).expect("parses");
        assert_eq!(declared(&docs[0].root), vec![gvk("a.io", "v1", "A")]);
        assert_eq!(
            docs[0]
                .root
                .get("dependencies")
                .and_then(Node::as_seq)
                .map(<[Node]>::len),
            Some(2)
        );
    }

    #[test]
    fn nothing_missing_means_untouched() {
        let text = "dependencies:\n- type: olm.gvk\n  value: {group: a.io, version: v1, kind: A}\n";
        assert!(
            merge(Path::new("d.yaml"), text, &[gvk("a.io", "v1", "A")])
                .expect("ok")
                .is_none()
        );
    }

    #[test]
    fn flow_lists_are_re_emitted_with_every_entry() {
        let text = "dependencies: [{type: olm.package, value: {packageName: p, version: '>1.0.0'}}]\nother: 1\n";
        let (out, note) = merge(Path::new("d.yaml"), text, &[gvk("a.io", "v1", "A")])
            .expect("ok")
            .expect("changed");
        assert!(note.is_some());
        let docs = yaml::parse_stream(&out).expect("parses");
        let items = docs[0]
            .root
            .get("dependencies")
            .and_then(Node::as_seq)
            .expect("list");
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0]
                .path(&["value", "packageName"])
                .and_then(Node::as_str),
            Some("p")
        );
        assert_eq!(docs[0].root.get("other").and_then(Node::as_i64), Some(1));
    }
}
