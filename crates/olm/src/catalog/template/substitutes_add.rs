//! One substitution added to an `olm.template.substitutes` template: the checks made before
//! anything is built or pushed, and the edit of the template's own text (`bundle republish`).
//!
//! Why checks of our own beside opm's: opm finds a reused base or substitute, or a substitute
//! that does not order after its base, only when the template is rendered, after the image is
//! out. Here they are refused first, with the line of the substitution already there, and a
//! cycle (A substitutes B, which substitutes A, through any chain) is named as one; opm's
//! ordering rule makes a cycle unrenderable, and this says why in the author's terms.
//!
//! Why a text edit: the template is the author's file under version control; it is never
//! re-serialized. The new item is appended to the `substitutions` list in the list's own style
//! (block items, or a flow/JSON list), or the list is created; the result is parsed again and
//! must read as the old substitutions plus the new one with the same entries.

use super::go_field;
use super::substitutes::{SCHEMA, Substitution, read_spec};
use crate::bundle::pin::{end_line, line_starts, newline_of, offset};
use crate::catalog::model::SCHEMA_BUNDLE;
use crate::yaml::{self, Node, ScalarKind, Value};
use std::collections::BTreeMap;

/// The substitution to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition {
    /// The substitute's pull spec (`name` in the template).
    pub name: String,
    /// The bundle it substitutes for (`base`).
    pub base: String,
    /// The substitute bundle's own name (what the catalog will call it).
    pub bundle: String,
}

/// Why a substitution cannot be added (the line is the template's, 0 for the whole file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if *line == 0 { String::new() } else { format!("line {line}: ") })]
pub struct AddError {
    /// 1-based line in the template.
    pub line: usize,
    /// What is refused and why.
    pub message: String,
}

fn refuse(line: usize, message: impl Into<String>) -> AddError {
    AddError {
        line,
        message: message.into(),
    }
}

/// What a template holds that the checks need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateFacts {
    /// The substitutions already there.
    pub substitutions: Vec<Substitution>,
    /// The names of the `olm.bundle` entries, with their lines.
    pub bundles: Vec<(String, usize)>,
}

/// Reads a substitutes template's substitutions and bundle names; any other template is
/// refused with what to do.
pub fn facts(text: &str) -> Result<TemplateFacts, AddError> {
    let (docs, _) = yaml::parse_stream_lenient(text).map_err(|e| refuse(e.line, e.message))?;
    let root = docs.first().map(|d| &d.root);
    let (_, substitutions) = read_spec(root).map_err(|message| {
        let hint = if message.contains("unknown schema") {
            format!(
                "; republish adds to an {SCHEMA} template (`olmpack catalog convert-template substitutes CATALOG` makes one from a catalog file)"
            )
        } else {
            String::new()
        };
        refuse(root.map_or(0, |r| r.line), format!("{message}{hint}"))
    })?;
    let mut bundles = Vec::new();
    let fields = root.and_then(Node::as_map).unwrap_or(&[]);
    for entry in go_field(fields, "entries")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        let entry_fields = entry.as_map().unwrap_or(&[]);
        let is_bundle =
            go_field(entry_fields, "schema").and_then(Node::as_str) == Some(SCHEMA_BUNDLE);
        if let (true, Some(name)) = (
            is_bundle,
            go_field(entry_fields, "name").and_then(Node::as_str),
        ) {
            bundles.push((name.to_string(), entry.line));
        }
    }
    Ok(TemplateFacts {
        substitutions,
        bundles,
    })
}

/// Refuses an addition opm would refuse when rendering, and a cycle. `bundle_of` gives the
/// bundle name each existing substitute's pull spec renders to (`None` when unknown).
pub fn check(
    facts: &TemplateFacts,
    bundle_of: &BTreeMap<String, String>,
    add: &Addition,
) -> Result<(), AddError> {
    if add.name == add.base || add.bundle == add.base {
        return Err(refuse(
            0,
            format!("{} cannot substitute for itself", add.bundle),
        ));
    }
    // A cycle: from the new bundle, the chain of existing substitutions leads back to the base.
    let next: BTreeMap<&str, (&str, usize)> = facts
        .substitutions
        .iter()
        .filter_map(|s| {
            bundle_of
                .get(&s.name)
                .map(|b| (s.base.as_str(), (b.as_str(), s.line)))
        })
        .collect();
    let mut chain = vec![add.base.as_str(), add.bundle.as_str()];
    let mut at = add.bundle.as_str();
    while let Some((to, line)) = next.get(at) {
        chain.push(to);
        if *to == add.base {
            return Err(refuse(
                *line,
                format!(
                    "refusing a cycle of substitutions: {}",
                    chain
                        .windows(2)
                        .map(|w| format!("{} is substituted by {}", w[0], w[1]))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if chain.len() > facts.substitutions.len() + 2 {
            break;
        }
        at = to;
    }
    // The first substitution the new one collides with, in the template's order; for each,
    // the same base, then the same name, then the same bundle.
    for s in &facts.substitutions {
        let why = if s.base == add.base {
            format!(
                "{} is already substituted (by {}): a bundle is substituted once; republish from the substitute's folder instead",
                add.base, s.name
            )
        } else if s.name == add.name {
            format!(
                "{} already substitutes for {}: push the new bundle under another reference",
                add.name, s.base
            )
        } else if bundle_of.get(&s.name) == Some(&add.bundle) {
            format!(
                "a bundle named {} is already in the template (substituted in as {}): choose another release",
                add.bundle, s.name
            )
        } else {
            continue;
        };
        return Err(refuse(s.line, why));
    }
    if let Some((_, line)) = facts.bundles.iter().find(|(n, _)| n == &add.bundle) {
        return Err(refuse(
            *line,
            format!(
                "a bundle named {} is already in the template's entries: choose another release",
                add.bundle
            ),
        ));
    }
    let known = facts.bundles.iter().any(|(n, _)| n == &add.base)
        || bundle_of.values().any(|b| b == &add.base);
    if !known {
        return Err(refuse(
            0,
            format!(
                "the base bundle {} is neither an entry of the template nor a substitute in it",
                add.base
            ),
        ));
    }
    Ok(())
}

/// `text` with `{name, base}` appended to its `substitutions`; nothing else changes.
pub fn append(text: &str, name: &str, base: &str) -> Result<String, AddError> {
    let (docs, _) = yaml::parse_stream_lenient(text).map_err(|e| refuse(e.line, e.message))?;
    let root = docs
        .first()
        .map(|d| &d.root)
        .ok_or_else(|| refuse(0, "the template is empty"))?;
    let fields = root
        .as_map()
        .ok_or_else(|| refuse(root.line, "the template is not a mapping"))?;
    let starts = line_starts(text);
    let nl = newline_of(text);
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let flow_item = format!("{{\"name\": {}, \"base\": {}}}", q(name), q(base));
    let at = |n: &Node| offset(text, &starts, n.line, n.col);
    let char_at = |n: &Node| at(n).and_then(|i| text[i..].chars().next());
    let key = fields
        .iter()
        .rev()
        .find(|(k, _)| k.text.eq_ignore_ascii_case("substitutions"));
    let out = match key {
        Some((key, value)) => match &value.value {
            Value::Seq(items) if char_at(value) == Some('[') => {
                let open = at(value).ok_or_else(|| refuse(value.line, "no such column"))?;
                let close = matching_close(text, open)
                    .ok_or_else(|| refuse(value.line, "the substitutions list does not end"))?;
                let end = text[..close].trim_end().len();
                let item = if items.is_empty() {
                    flow_item
                } else {
                    format!(", {flow_item}")
                };
                splice(text, end, end, &item)
            }
            Value::Seq(items) if char_at(value) == Some('-') => {
                let dash = value.col.saturating_sub(1);
                let last = items.last().unwrap_or(value);
                let line = end_line(text, &starts, last, dash).max(value.line);
                let block = block_item(dash, name, base, nl, &q);
                insert_after_line(text, &starts, line, &block, nl)
            }
            Value::Scalar(t, ScalarKind::Null) if !t.is_empty() => {
                let from = at(value).ok_or_else(|| refuse(value.line, "no such column"))?;
                splice(text, from, from + t.len(), &format!("[{flow_item}]"))
            }
            Value::Scalar(t, ScalarKind::Null) if t.is_empty() => {
                let indent = key.col.saturating_sub(1);
                let block = block_item(indent, name, base, nl, &q);
                insert_after_line(text, &starts, key.line, &block, nl)
            }
            _ => {
                return Err(refuse(
                    value.line,
                    "substitutions is not a list: fix the template first",
                ));
            }
        },
        None if char_at(root) == Some('{') => {
            let open = at(root).ok_or_else(|| refuse(root.line, "no such column"))?;
            let close = matching_close(text, open)
                .ok_or_else(|| refuse(root.line, "the template does not end"))?;
            let end = text[..close].trim_end().len();
            let comma = if fields.is_empty() { "" } else { "," };
            splice(
                text,
                end,
                end,
                &format!("{comma}{nl}  \"substitutions\": [{flow_item}]"),
            )
        }
        None => {
            if docs.len() > 1 {
                return Err(refuse(
                    root.line,
                    "the template has more than one document and no substitutions: add `substitutions: []` to the first by hand",
                ));
            }
            let indent = root.col.saturating_sub(1);
            let lead = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                nl
            };
            format!(
                "{text}{lead}{}substitutions:{nl}{}",
                " ".repeat(indent),
                block_item(indent, name, base, nl, &q)
            )
        }
    };
    verify(text, &out, name, base)?;
    Ok(out)
}

fn block_item(dash: usize, name: &str, base: &str, nl: &str, q: &dyn Fn(&str) -> String) -> String {
    format!(
        "{pad}- name: {}{nl}{pad}  base: {}{nl}",
        q(name),
        q(base),
        pad = " ".repeat(dash)
    )
}

fn splice(text: &str, from: usize, to: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..from], &text[to..])
}

/// `block` inserted at the start of the line after 1-based `line`.
fn insert_after_line(text: &str, starts: &[usize], line: usize, block: &str, nl: &str) -> String {
    match starts.get(line) {
        Some(&at) if at <= text.len() && text[..at].ends_with('\n') => splice(text, at, at, block),
        _ => {
            let lead = if text.ends_with('\n') { "" } else { nl };
            format!("{text}{lead}{block}")
        }
    }
}

/// The byte offset of the bracket closing the flow collection opened at `open`, skipping
/// quoted strings and comments.
fn matching_close(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'\''
                if i > 0
                    && matches!(
                        bytes[i - 1],
                        b' ' | b'\t' | b'[' | b'{' | b',' | b':' | b'\n'
                    ) =>
            {
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == b'\'' {
                        if bytes.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'#' if i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The edited text reads as the old template plus the one substitution.
fn verify(before: &str, after: &str, name: &str, base: &str) -> Result<(), AddError> {
    let read = |text: &str| -> Result<(usize, Vec<(String, String)>), String> {
        let (docs, _) = yaml::parse_stream_lenient(text).map_err(|e| e.to_string())?;
        let (entries, subs) = read_spec(docs.first().map(|d| &d.root))?;
        Ok((
            entries,
            subs.into_iter().map(|s| (s.name, s.base)).collect(),
        ))
    };
    let (n0, mut want) = read(before).map_err(|m| refuse(0, m))?;
    want.push((name.to_string(), base.to_string()));
    match read(after) {
        Ok((n1, got)) if n1 == n0 && got == want => Ok(()),
        Ok(_) => Err(refuse(
            0,
            "the edited template does not read back as the old one plus the substitution (a bug; nothing was written)",
        )),
        Err(e) => Err(refuse(
            0,
            format!("the edited template does not parse ({e}; a bug; nothing was written)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRIES: &str = "schema: olm.template.substitutes\nentries:\n- schema: olm.package\n  name: p\n- schema: olm.bundle\n  name: p.v1.0.0\n  image: r/p:1\n";

    fn sub(name: &str, base: &str, line: usize) -> Substitution {
        Substitution {
            name: name.into(),
            base: base.into(),
            line,
        }
    }

    #[test]
    fn appends_in_every_list_style() {
        let block = format!(
            "{ENTRIES}substitutions:\n  - name: r/p:1-1 # first\n    base: p.v1.0.0\n# trailing comment\n"
        );
        let out = append(&block, "r/p@sha256:aa", "p-v1.0.0-1").expect("block");
        assert_eq!(
            out,
            block.replace(
                "    base: p.v1.0.0\n",
                "    base: p.v1.0.0\n  - name: \"r/p@sha256:aa\"\n    base: \"p-v1.0.0-1\"\n"
            )
        );
        let absent = append(ENTRIES, "r/p:x", "p.v1.0.0").expect("absent");
        assert_eq!(
            absent,
            format!("{ENTRIES}substitutions:\n- name: \"r/p:x\"\n  base: \"p.v1.0.0\"\n")
        );
        let empty_flow = format!("{ENTRIES}substitutions: [] # none yet\n");
        assert_eq!(
            append(&empty_flow, "r/p:x", "p.v1.0.0").expect("flow"),
            format!(
                "{ENTRIES}substitutions: [{{\"name\": \"r/p:x\", \"base\": \"p.v1.0.0\"}}] # none yet\n"
            )
        );
        let null = format!("{ENTRIES}substitutions: null\n");
        assert!(append(&null, "r/p:x", "p.v1.0.0").is_ok());
        let bare = format!("{ENTRIES}substitutions:\nother: 1\n");
        assert_eq!(
            append(&bare, "r/p:x", "p.v1.0.0").expect("bare"),
            format!("{ENTRIES}substitutions:\n- name: \"r/p:x\"\n  base: \"p.v1.0.0\"\nother: 1\n")
        );
        let json = "{\n  \"schema\": \"olm.template.substitutes\",\n  \"entries\": [{\"schema\": \"olm.bundle\", \"name\": \"a]\"}],\n  \"substitutions\": [\n    {\"name\": \"x\", \"base\": \"a]\"}\n  ]\n}\n";
        let out = append(json, "r/p:y", "b").expect("json");
        assert_eq!(
            out,
            json.replace(
                "\"a]\"}\n  ]",
                "\"a]\"}, {\"name\": \"r/p:y\", \"base\": \"b\"}\n  ]"
            )
        );
        let json_none = "{\"schema\": \"olm.template.substitutes\", \"entries\": []}";
        assert!(append(json_none, "n", "b").is_ok());
        let wrong = format!("{ENTRIES}substitutions: 3\n");
        assert!(append(&wrong, "n", "b").is_err_and(|e| e.line == 8));
    }

    #[test]
    fn checks_refuse_reuse_cycles_and_unknown_bases() {
        let facts = facts(&format!(
            "{ENTRIES}substitutions:\n- name: r/p:1-1\n  base: p.v1.0.0\n"
        ))
        .expect("facts");
        assert_eq!(facts.bundles, vec![("p.v1.0.0".to_string(), 5)]);
        let names: BTreeMap<String, String> = [("r/p:1-1".to_string(), "p-v1.0.0-1".to_string())]
            .into_iter()
            .collect();
        let add = |name: &str, base: &str, bundle: &str| Addition {
            name: name.into(),
            base: base.into(),
            bundle: bundle.into(),
        };
        // A chain is fine: the substitute is substituted in turn.
        assert_eq!(
            check(&facts, &names, &add("r/p:1-2", "p-v1.0.0-1", "p-v1.0.0-2")),
            Ok(())
        );
        let msg = |a: Addition| check(&facts, &names, &a).map_err(|e| (e.line, e.message));
        assert!(
            msg(add("r/p:1-2", "p.v1.0.0", "p-v1.0.0-2"))
                .is_err_and(|(l, m)| l == 9 && m.contains("already substituted"))
        );
        assert!(
            msg(add("r/p:1-1", "p-v1.0.0-1", "p-v1.0.0-2"))
                .is_err_and(|(_, m)| m.contains("already substitutes"))
        );
        // B (p-v1.0.0-1) substitutes A (p.v1.0.0); A substituting B closes a cycle.
        assert!(
            msg(add("r/p:back", "p-v1.0.0-1", "p.v1.0.0")).is_err_and(|(l, m)| l == 9
                && m.contains("refusing a cycle")
                && m.contains(
                    "p-v1.0.0-1 is substituted by p.v1.0.0, p.v1.0.0 is substituted by p-v1.0.0-1"
                ))
        );
        assert!(msg(add("r/p:x", "p.v9", "p-v9-1")).is_err_and(|(_, m)| m.contains("neither")));
        assert!(msg(add("r/p:x", "p-v1.0.0-1", "p-v1.0.0-1")).is_err());
        // A longer cycle through two existing substitutions.
        let facts3 = TemplateFacts {
            substitutions: vec![sub("i/b", "a", 3), sub("i/c", "b", 4)],
            bundles: vec![("a".into(), 1)],
        };
        let names3: BTreeMap<String, String> = [("i/b", "b"), ("i/c", "c")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert!(
            check(&facts3, &names3, &add("i/a", "c", "a")).is_err_and(|e| e
                .message
                .contains("c is substituted by a, a is substituted by b, b is substituted by c"))
        );
        let basic = "schema: olm.template.basic\nentries: []\n";
        assert!(super::facts(basic).is_err_and(|e| e.message.contains("convert-template")));
    }

    #[test]
    fn flow_scanner_skips_strings_and_comments() {
        let t = "[a, \"]\", 'it''s ]', {b: [c]}, # ] here\n d]";
        assert_eq!(matching_close(t, 0), Some(t.len() - 1));
        assert_eq!(matching_close("[a, [b]", 0), None);
    }
}
