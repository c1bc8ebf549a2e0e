//! The two JSON schemas the pipeline validates (`ci.yaml` and `release-config.yaml`), written
//! here as data, and the subset of JSON Schema they use (type, enum, properties, required,
//! additionalProperties, items, minItems, uniqueItems) with python-jsonschema's messages, so
//! findings read as the pipeline's. Each error keeps the line of the value it is about.

use crate::yaml::{Node, ScalarKind, Value};

/// A schema node of the subset the two files use.
#[derive(Debug)]
pub enum Schema {
    /// A string, optionally one of a list.
    Str(Option<&'static [&'static str]>),
    /// A boolean.
    Bool,
    /// An array.
    Array {
        /// Schema of each item.
        items: Box<Schema>,
        /// `minItems`.
        min: Option<usize>,
        /// `uniqueItems`.
        unique: bool,
    },
    /// An object.
    Object {
        /// Known properties.
        props: Vec<(&'static str, Schema)>,
        /// Required properties.
        required: &'static [&'static str],
        /// `additionalProperties`.
        additional: bool,
    },
}

fn arr(items: Schema, min: Option<usize>, unique: bool) -> Schema {
    Schema::Array {
        items: Box::new(items),
        min,
        unique,
    }
}

/// operator-pipelines' `ci-schema.json`, as data.
pub fn ci_yaml() -> Schema {
    let mapping = Schema::Object {
        props: vec![
            ("template_name", Schema::Str(None)),
            ("catalog_names", arr(Schema::Str(None), Some(1), true)),
            (
                "type",
                Schema::Str(Some(&["olm.template.basic", "olm.semver"])),
            ),
        ],
        required: &["template_name", "type", "catalog_names"],
        additional: true,
    };
    Schema::Object {
        props: vec![
            (
                "updateGraph",
                Schema::Str(Some(&["replaces-mode", "semver-mode"])),
            ),
            ("reviewers", arr(Schema::Str(None), Some(1), false)),
            ("merge", Schema::Bool),
            ("cert_project_id", Schema::Str(None)),
            (
                "fbc",
                Schema::Object {
                    props: vec![
                        ("enabled", Schema::Bool),
                        (
                            "version_promotion_strategy",
                            Schema::Str(Some(&["review-needed", "always", "never"])),
                        ),
                        ("catalog_mapping", arr(mapping, None, false)),
                    ],
                    required: &[],
                    additional: false,
                },
            ),
        ],
        required: &[],
        additional: true,
    }
}

/// operator-pipelines' `release-config-schema.json`, as data.
pub fn release_config() -> Schema {
    let template = Schema::Object {
        props: vec![
            ("template_name", Schema::Str(None)),
            ("channels", arr(Schema::Str(None), Some(1), true)),
            ("defaultChannel", Schema::Str(None)),
            ("replaces", Schema::Str(None)),
            ("skips", arr(Schema::Str(None), Some(1), true)),
            ("skipRange", Schema::Str(None)),
        ],
        required: &["template_name", "channels"],
        additional: true,
    };
    Schema::Object {
        props: vec![
            ("merge", Schema::Bool),
            ("catalog_templates", arr(template, Some(1), true)),
        ],
        required: &["catalog_templates"],
        additional: false,
    }
}

/// Every violation of `schema` in `node`: (message, line), sorted by message as the pipeline
/// sorts them.
pub fn validate(schema: &Schema, node: &Node) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    walk(schema, node, &mut out);
    out.sort();
    out
}

fn walk(schema: &Schema, node: &Node, out: &mut Vec<(String, usize)>) {
    let mut err = |m: String| out.push((m, node.line));
    match schema {
        Schema::Str(allowed) => match (&node.value, allowed) {
            (Value::Scalar(text, ScalarKind::Str), Some(list))
                if !list.contains(&text.as_str()) =>
            {
                err(format!(
                    "{} is not one of {}",
                    py_repr(node),
                    super::py_list(list)
                ))
            }
            (Value::Scalar(_, ScalarKind::Str), _) => {}
            _ => err(format!("{} is not of type 'string'", py_repr(node))),
        },
        Schema::Bool => {
            if !matches!(node.value, Value::Scalar(_, ScalarKind::Bool(_))) {
                err(format!("{} is not of type 'boolean'", py_repr(node)))
            }
        }
        Schema::Array { items, min, unique } => {
            let Value::Seq(list) = &node.value else {
                return err(format!("{} is not of type 'array'", py_repr(node)));
            };
            if let Some(min) = min
                && list.len() < *min
            {
                if *min == 1 {
                    err(format!("{} should be non-empty", py_repr(node)));
                } else {
                    err(format!("{} is too short", py_repr(node)));
                }
            }
            if *unique {
                let reprs: Vec<String> = list.iter().map(|n| n.to_json().to_string()).collect();
                let mut sorted = reprs.clone();
                sorted.sort();
                sorted.dedup();
                if sorted.len() != reprs.len() {
                    err(format!("{} has non-unique elements", py_repr(node)));
                }
            }
            for item in list {
                walk(items, item, out);
            }
        }
        Schema::Object {
            props,
            required,
            additional,
        } => {
            let Value::Map(entries) = &node.value else {
                return err(format!("{} is not of type 'object'", py_repr(node)));
            };
            for name in *required {
                if !entries.iter().any(|(k, _)| k.text == *name) {
                    err(format!("'{name}' is a required property"));
                }
            }
            if !additional {
                let extra: Vec<String> = entries
                    .iter()
                    .filter(|(k, _)| !props.iter().any(|(p, _)| *p == k.text))
                    .map(|(k, _)| super::py_str(&k.text))
                    .collect();
                if !extra.is_empty() {
                    let verb = if extra.len() == 1 { "was" } else { "were" };
                    err(format!(
                        "Additional properties are not allowed ({} {verb} unexpected)",
                        extra.join(", ")
                    ));
                }
            }
            for (key, value) in entries {
                if let Some((_, sub)) = props.iter().find(|(p, _)| *p == key.text) {
                    walk(sub, value, out);
                }
            }
        }
    }
}

/// Python's `repr` of a YAML value as PyYAML loads it.
pub fn py_repr(node: &Node) -> String {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => "None".into(),
        Value::Scalar(_, ScalarKind::Bool(true)) => "True".into(),
        Value::Scalar(_, ScalarKind::Bool(false)) => "False".into(),
        Value::Scalar(text, ScalarKind::Int | ScalarKind::Float) => text.to_string(),
        Value::Scalar(text, ScalarKind::Str) => super::py_str(text),
        Value::Seq(items) => {
            let inner: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Map(entries) => {
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", super::py_str(&k.text), py_repr(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}
