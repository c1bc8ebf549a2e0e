//! The `olm.template.basic` template (opm `alpha/template/basic/basic.go`).
//!
//! Why it matters: 120 of the 127 templates in community-operators-prod are basic. The template is
//! plain FBC whose bundles are written as `{schema: olm.bundle, image: …}`; rendering replaces
//! each such entry with the bundle rendered from its image and copies everything else unchanged
//! (no validation, as opm). Since opm v1.44.0 the blobs are wrapped in
//! `{schema: olm.template.basic, entries: […]}`; before, the template was the plain FBC stream.

use super::{BundleRenderer, Located, TemplateOptions, go_field, json_kind, render_all};
use crate::catalog::load::load_bytes;
use crate::catalog::model::{Bundle, DeclarativeConfig};
use crate::findings::Severity;
use crate::gocompat::decoded::canonical;
use crate::yaml::{Document, Node, ScalarKind, Value};
use std::collections::HashMap;

/// `schema` of a basic template.
pub const SCHEMA: &str = "olm.template.basic";

/// Renders a basic template.
pub(crate) fn render(
    docs: &[Document],
    options: &TemplateOptions,
    renderer: &dyn BundleRenderer,
) -> Result<DeclarativeConfig, Located> {
    let entries: Vec<&Node> = if options.compat.at_least(1, 44) {
        wrapped_entries(docs.first().map(|d| &d.root))?
    } else {
        docs.iter().map(|d| &d.root).collect()
    };
    let mut cfg = load_entries(&entries)?;

    // Every bundle entry must be a bare image reference.
    let mut refs: Vec<String> = Vec::new();
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for b in &cfg.bundles {
        let is_template = !b.schema.is_empty()
            && !b.image.is_empty()
            && b.package.is_empty()
            && b.properties.is_empty()
            && b.related_images.is_empty();
        if !is_template {
            return Err(Located::new(
                b.origin.line,
                "unexpected fields present in basic template bundle",
            ));
        }
        if !first_line.contains_key(&b.image) {
            first_line.insert(b.image.clone(), b.origin.line);
            refs.push(b.image.clone());
        }
    }
    let results = render_all(&refs, renderer, options.jobs);
    let mut rendered: HashMap<&str, Vec<Bundle>> = HashMap::new();
    for (reference, result) in refs.iter().zip(results) {
        let bundles = result.map_err(|e| {
            Located::new(first_line.get(reference).copied().unwrap_or(0), e.message)
        })?;
        rendered.insert(reference.as_str(), bundles);
    }
    let mut out = Vec::new();
    for b in &cfg.bundles {
        out.extend(rendered.get(b.image.as_str()).cloned().unwrap_or_default());
    }
    cfg.bundles = out;
    Ok(cfg)
}

/// One key and value of a YAML mapping.
pub(super) type Field = (crate::yaml::Key, Node);

/// opm's `parseSpec`: the first document decoded into `{schema, entries}` (keys matched
/// case-insensitively) and the schema checked.
fn wrapped_entries(root: Option<&Node>) -> Result<Vec<&Node>, Located> {
    wrapped_fields(root, SCHEMA, "basic.BasicTemplateData").map(|(entries, _)| entries)
}

/// A wrapped template's first document decoded as Go decodes `go_type` (`pkg.Struct`, which has
/// `schema` and `entries`), the schema checked against `want`; also returns all the document's
/// fields, for the template's other members.
pub(super) fn wrapped_fields<'a>(
    root: Option<&'a Node>,
    want: &str,
    go_type: &str,
) -> Result<(Vec<&'a Node>, &'a [Field]), Located> {
    let go_struct = go_type.rsplit('.').next().unwrap_or(go_type);
    let unmarshal = |node: &Node, what: String| {
        Located::new(
            node.line,
            format!("unmarshalling template: json: cannot unmarshal {what}"),
        )
    };
    let mut schema = String::new();
    let mut entries = Vec::new();
    let mut line = 0;
    let mut all: &[Field] = &[];
    if let Some(root) = root {
        line = root.line;
        let fields = match &root.value {
            Value::Map(fields) => fields.as_slice(),
            Value::Scalar(_, ScalarKind::Null) => &[],
            _ => {
                return Err(unmarshal(
                    root,
                    format!("{} into Go value of type {go_type}", json_kind(root)),
                ));
            }
        };
        all = fields;
        if let Some(node) = go_field(fields, "schema") {
            match &node.value {
                Value::Scalar(s, ScalarKind::Str) => schema = s.to_string(),
                Value::Scalar(_, ScalarKind::Null) => {}
                _ => {
                    return Err(unmarshal(
                        node,
                        format!(
                            "{} into Go struct field {go_struct}.schema of type string",
                            json_kind(node)
                        ),
                    ));
                }
            }
        }
        if let Some(node) = go_field(fields, "entries") {
            match &node.value {
                Value::Seq(items) => entries = items.iter().collect(),
                Value::Scalar(_, ScalarKind::Null) => {}
                _ => {
                    return Err(unmarshal(
                        node,
                        format!(
                            "{} into Go struct field {go_struct}.entries of type []*declcfg.Meta",
                            json_kind(node)
                        ),
                    ));
                }
            }
        }
    }
    if schema != want {
        return Err(Located::new(
            line,
            format!("template has unknown schema ({schema:?}), should be {want:?}"),
        ));
    }
    Ok((entries, all))
}

/// opm's `LoadSlice`: each entry becomes a blob exactly as the catalog loader reads it; the
/// first load error is the template's error, at the entry's line.
pub(super) fn load_entries(entries: &[&Node]) -> Result<DeclarativeConfig, Located> {
    let mut stream = String::new();
    for entry in entries {
        if !matches!(entry.value, Value::Map(_)) {
            return Err(Located::new(
                entry.line,
                format!(
                    "unmarshalling template: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_kind(entry)
                ),
            ));
        }
        let json = canonical(entry)
            .map_err(|e| Located::new(entry.line, format!("json: unsupported value: {}", e.0)))?;
        stream.push_str(&json);
        stream.push('\n');
    }
    let line_of = |synthetic: usize| -> usize {
        synthetic
            .checked_sub(1)
            .and_then(|i| entries.get(i))
            .map_or(0, |n| n.line)
    };
    let loaded = load_bytes("template", stream.as_bytes());
    if let Some(d) = loaded
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
    {
        return Err(Located::new(
            line_of(d.line.unwrap_or(0)),
            d.message.clone(),
        ));
    }
    let mut cfg = loaded.config;
    for b in &mut cfg.bundles {
        b.origin.line = line_of(b.origin.line);
    }
    for p in &mut cfg.packages {
        p.origin.line = line_of(p.origin.line);
    }
    for c in &mut cfg.channels {
        c.origin.line = line_of(c.origin.line);
    }
    Ok(cfg)
}
