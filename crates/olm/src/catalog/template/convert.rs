//! `opm alpha convert-template basic|substitutes` (operator-registry #1335): a catalog file
//! turned into a template that renders back to it.
//!
//! Why: a package maintained as plain FBC moves to templates once; the template must render to
//! the catalog it came from. opm reads each blob as `declcfg.Meta` (re-encoded from a Go map:
//! keys sorted, no HTML escaping), for `basic` cuts every `olm.bundle` down to
//! `{schema, image}`, and prints `json.MarshalIndent(template, "", "    ")` (which escapes
//! `<>&` inside the blobs) or that JSON as YAML after `---`, with a final newline.

use crate::catalog::load::file_metas;
use crate::catalog::model::SCHEMA_BUNDLE;
use crate::gocompat::json::go_indent;

/// The template a catalog is converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertType {
    /// `olm.template.basic`: bundles become `{schema, image}` and are rendered again.
    Basic,
    /// `olm.template.substitutes`: the blobs as they are, no substitutions.
    Substitutes,
}

/// Converts one catalog file's bytes; `yaml` selects opm's YAML output. Errors name the
/// document's line.
pub fn convert(bytes: &[u8], to: ConvertType, yaml: bool) -> Result<Vec<u8>, String> {
    let metas = file_metas(bytes)?;
    let mut compact = String::new();
    compact.push_str("{\"schema\":");
    compact.push_str(match to {
        ConvertType::Basic => "\"olm.template.basic\"",
        ConvertType::Substitutes => "\"olm.template.substitutes\"",
    });
    compact.push_str(",\"entries\":");
    if metas.is_empty() {
        compact.push_str("null");
    } else {
        compact.push('[');
        for (i, m) in metas.iter().enumerate() {
            if i > 0 {
                compact.push(',');
            }
            if to == ConvertType::Basic && m.schema == SCHEMA_BUNDLE {
                compact.push_str(&basic_bundle(&m.blob)?);
            } else {
                compact.push_str(&m.blob);
            }
        }
        compact.push(']');
    }
    if to == ConvertType::Substitutes {
        compact.push_str(",\"substitutions\":[]");
    }
    compact.push('}');
    // json.Marshal escapes these inside raw messages too; outside strings they cannot occur.
    let escaped = compact
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
    let mut out = Vec::with_capacity(escaped.len() * 2);
    if yaml {
        out.extend_from_slice(b"---\n");
        crate::gocompat::goyaml::emit::json_text_to_yaml(&mut out, escaped.as_bytes())
            .map_err(|e| format!("writing YAML: {e}"))?;
    } else {
        go_indent(&mut out, escaped.as_bytes(), "    ");
    }
    out.push(b'\n');
    Ok(out)
}

/// opm's `declcfg.Bundle{Schema, Image}` marshalled: `{"schema":…,"image":…}`.
fn basic_bundle(blob: &str) -> Result<String, String> {
    let v: serde_json::Value =
        serde_json::from_str(blob).map_err(|e| format!("parse bundle: {e}"))?;
    let field = |name: &str| -> Result<String, String> {
        match crate::gocompat::marshal::get_ci(&v, name) {
            None | Some(serde_json::Value::Null) => Ok(String::new()),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!(
                "parse bundle: json: cannot unmarshal {other} into Go struct field Bundle.{name} of type string"
            )),
        }
    };
    let mut out = String::from("{\"schema\":");
    crate::gocompat::marshal::write_str(&mut out, &field("schema")?, false);
    out.push_str(",\"image\":");
    crate::gocompat::marshal::write_str(&mut out, &field("image")?, false);
    out.push('}');
    Ok(out)
}
