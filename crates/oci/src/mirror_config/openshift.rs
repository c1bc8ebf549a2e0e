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
use crate::yaml;
use serde_json::Value;
use std::path::Path;

/// The rules of an IDMS / ITMS / ICSP file.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Rule>, String> {
    let docs = yaml::parse_stream(text).map_err(|e| e.to_string())?;
    let mut rules = Vec::new();
    for doc in docs {
        if doc.root.is_null() {
            continue;
        }
        let line = doc.root.line;
        object(&doc.root.to_json(), path, line, &mut rules)?;
    }
    if rules.is_empty() {
        return Err(
            "no mirror rules: expected an ImageDigestMirrorSet, ImageTagMirrorSet or ImageContentSourcePolicy (YAML), or a registries.conf (TOML)"
                .to_string(),
        );
    }
    Ok(rules)
}

fn object(v: &Value, path: &Path, line: usize, rules: &mut Vec<Rule>) -> Result<(), String> {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    let (list_key, used_for) = match kind {
        "List" => {
            for item in v
                .get("items")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                object(item, path, line, rules)?;
            }
            return Ok(());
        }
        "ImageDigestMirrorSet" => ("imageDigestMirrors", MirrorUse::DigestOnly),
        "ImageTagMirrorSet" => ("imageTagMirrors", MirrorUse::TagOnly),
        "ImageContentSourcePolicy" => ("repositoryDigestMirrors", MirrorUse::DigestOnly),
        other => {
            return Err(format!(
                "document at line {line}: kind {other:?} is not ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy or List"
            ));
        }
    };
    let entries = v.pointer(&format!("/spec/{list_key}"));
    let entries = match entries {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(format!(
                "{kind} at line {line}: spec.{list_key} is not a list"
            ));
        }
    };
    for (i, e) in entries.iter().enumerate() {
        let at = format!("{kind} at line {line}: spec.{list_key}[{i}]");
        let Some(map) = e.as_object() else {
            return Err(format!("{at} is not a mapping"));
        };
        let allowed: &[&str] = if kind == "ImageContentSourcePolicy" {
            &["source", "mirrors"]
        } else {
            &["source", "mirrors", "mirrorSourcePolicy"]
        };
        if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!("{at}: field {k:?} is not understood"));
        }
        let source = map
            .get("source")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{at}: source is missing or not a string"))?;
        let source = clean_location(source, "source").map_err(|m| format!("{at}: {m}"))?;
        if source.is_empty() {
            return Err(format!("{at}: source is empty"));
        }
        let blocked = match map.get("mirrorSourcePolicy").and_then(Value::as_str) {
            None | Some("AllowContactingSource") => false,
            Some("NeverContactSource") => true,
            Some(other) => {
                return Err(format!(
                    "{at}: mirrorSourcePolicy {other:?} is not AllowContactingSource or NeverContactSource"
                ));
            }
        };
        let mut mirrors = Vec::new();
        for m in map
            .get("mirrors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let m = m
                .as_str()
                .ok_or_else(|| format!("{at}: a mirror is not a string"))?;
            let location = clean_location(m, "mirror").map_err(|e| format!("{at}: {e}"))?;
            if location.is_empty() || location.starts_with("*.") {
                return Err(format!("{at}: mirror {m:?} is not a registry location"));
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
