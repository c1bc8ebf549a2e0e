//! OpenShift's mirror sets, read as the Machine Config Operator turns them into
//! registries.conf rules (openshift/api `config/v1` `ImageDigestMirrorSet`,
//! `ImageTagMirrorSet`; `operator/v1alpha1` `ImageContentSourcePolicy`):
//!
//! - `spec.imageDigestMirrors[]` (IDMS): `source`, `mirrors[]`, `mirrorSourcePolicy`; the
//!   mirrors serve references by digest only;
//! - `spec.imageTagMirrors[]` (ITMS): the same fields; the mirrors serve references by tag only;
//! - `spec.repositoryDigestMirrors[]` (ICSP): `source`, `mirrors[]`; digest only, source allowed;
//! - `mirrorSourcePolicy: NeverContactSource` blocks the source (`AllowContactingSource`, the
//!   default, does not).
//!
//! A file may hold several documents and `kind: List` objects. Any other kind, or an entry
//! field not in the types above, is refused by name, so a file that means more than olmpack
//! reads is never half-applied.

use super::{Mirror, MirrorUse, Rule, clean_location};
use crate::yaml::{self, Node};
use std::path::Path;

/// The rules of an IDMS / ITMS / ICSP file. Every complaint names the line of what it is
/// about (the entry, the field or the mirror).
pub fn parse(text: &str, path: &Path) -> Result<Vec<Rule>, String> {
    let docs = yaml::parse_stream(text).map_err(|e| e.to_string())?;
    let mut rules = Vec::new();
    for doc in docs {
        if doc.root.is_null() {
            continue;
        }
        object(&doc.root, path, &mut rules)?;
    }
    if rules.is_empty() {
        return Err(
            "no mirror rules: expected an ImageDigestMirrorSet, ImageTagMirrorSet or ImageContentSourcePolicy (YAML), or a registries.conf (TOML)"
                .to_string(),
        );
    }
    Ok(rules)
}

fn object(v: &Node, path: &Path, rules: &mut Vec<Rule>) -> Result<(), String> {
    let line = v.line;
    let kind = v.get("kind").and_then(Node::as_str).unwrap_or_default();
    let (list_key, used_for) = match kind {
        "List" => {
            for item in v.get("items").and_then(Node::as_seq).into_iter().flatten() {
                object(item, path, rules)?;
            }
            return Ok(());
        }
        "ImageDigestMirrorSet" => ("imageDigestMirrors", MirrorUse::DigestOnly),
        "ImageTagMirrorSet" => ("imageTagMirrors", MirrorUse::TagOnly),
        "ImageContentSourcePolicy" => ("repositoryDigestMirrors", MirrorUse::DigestOnly),
        other => {
            return Err(format!(
                "line {line}: kind {other:?} is not ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy or List"
            ));
        }
    };
    let entries = match v.path(&["spec", list_key]) {
        None => return Ok(()),
        Some(n) if n.is_null() => return Ok(()),
        Some(n) => n
            .as_seq()
            .ok_or_else(|| format!("line {}: {kind} spec.{list_key} is not a list", n.line))?,
    };
    for (i, e) in entries.iter().enumerate() {
        let at = |line: usize| format!("line {line}: {kind} spec.{list_key}[{i}]");
        let Some(map) = e.as_map() else {
            return Err(format!("{} is not a mapping", at(e.line)));
        };
        let allowed: &[&str] = if kind == "ImageContentSourcePolicy" {
            &["source", "mirrors"]
        } else {
            &["source", "mirrors", "mirrorSourcePolicy"]
        };
        if let Some((k, _)) = map
            .iter()
            .find(|(k, _)| !allowed.contains(&k.text.as_str()))
        {
            return Err(format!(
                "{}: field {:?} is not understood",
                at(k.line),
                k.text
            ));
        }
        let source_node = e.get("source");
        let source = source_node
            .and_then(Node::as_str)
            .ok_or_else(|| format!("{}: source is missing or not a string", at(e.line)))?;
        let source_line = source_node.map_or(e.line, |n| n.line);
        let source =
            clean_location(source, "source").map_err(|m| format!("{}: {m}", at(source_line)))?;
        if source.is_empty() {
            return Err(format!("{}: source is empty", at(source_line)));
        }
        let policy = e.get("mirrorSourcePolicy");
        let blocked = match policy.map(|n| (n.as_str(), n.line)) {
            None | Some((Some("AllowContactingSource"), _)) => false,
            Some((Some("NeverContactSource"), _)) => true,
            Some((other, line)) => {
                return Err(format!(
                    "{}: mirrorSourcePolicy {:?} is not AllowContactingSource or NeverContactSource",
                    at(line),
                    other.unwrap_or_default()
                ));
            }
        };
        let mut mirrors = Vec::new();
        let listed = match e.get("mirrors") {
            None => &[][..],
            Some(n) if n.is_null() => &[][..],
            Some(n) => n
                .as_seq()
                .ok_or_else(|| format!("{}: mirrors is not a list", at(n.line)))?,
        };
        for m in listed {
            let text = m
                .as_str()
                .ok_or_else(|| format!("{}: a mirror is not a string", at(m.line)))?;
            let location =
                clean_location(text, "mirror").map_err(|e| format!("{}: {e}", at(m.line)))?;
            if location.is_empty() || location.starts_with("*.") {
                return Err(format!(
                    "{}: mirror {text:?} is not a registry location",
                    at(m.line)
                ));
            }
            mirrors.push(Mirror {
                location,
                insecure: false,
                used_for,
            });
        }
        // A wildcard source keeps the reference's own host as its location.
        let location = if source.starts_with("*.") {
            String::new()
        } else {
            source.clone()
        };
        rules.push(Rule {
            prefix: source,
            location,
            insecure: false,
            blocked,
            mirrors,
            file: path.to_path_buf(),
        });
    }
    Ok(())
}
