//! A CRD version's OpenAPI schema as operator-controller sees it after decoding it into the Go
//! type `apiextensionsv1.JSONSchemaProps`: only the fields that type has, Go's zero values
//! dropped (so `nullable: false` equals no `nullable`, and an empty list equals none, as
//! Kubernetes' semantic equality treats them), and every property flattened to its simple path
//! (`^.spec.size`), which is how crdify names what changed.
//!
//! Why a normal form and not the YAML: two CRDs that decode to the same Go value are the same
//! CRD to the checker, however their files are written.

use crate::gocompat::marshal::marshal_string;
use crate::yaml::{Node, Value as YValue};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How the Go type holds a field, which decides its zero value and its normal form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `string`: "" is absent.
    Str,
    /// `bool`: false is absent.
    Bool,
    /// `*bool`, `*float64`, `*int64`, `*string`: present even when zero.
    Ptr,
    /// `*JSON`: the raw JSON bytes as `json.Marshal` writes them.
    Json,
    /// `[]string`: empty is absent.
    StrList,
    /// `[]JSON`: each entry's raw bytes.
    JsonList,
    /// `[]JSONSchemaProps`.
    SchemaList,
    /// `*JSONSchemaProps`.
    Schema,
    /// `map[string]JSONSchemaProps`.
    SchemaMap,
    /// `*JSONSchemaPropsOrBool`.
    SchemaOrBool,
    /// `*JSONSchemaPropsOrArray`.
    SchemaOrArray,
    /// `JSONSchemaDependencies` (`map[string]JSONSchemaPropsOrStringArray`).
    Dependencies,
    /// `*ExternalDocumentation` and `ValidationRules`: plain data, kept as decoded.
    Data,
}

/// Every field of `JSONSchemaProps`, in the Go struct's order: (JSON key, Go field name, kind).
pub(crate) const FIELDS: &[(&str, &str, Kind)] = &[
    ("id", "ID", Kind::Str),
    ("$schema", "Schema", Kind::Str),
    ("$ref", "Ref", Kind::Ptr),
    ("description", "Description", Kind::Str),
    ("type", "Type", Kind::Str),
    ("format", "Format", Kind::Str),
    ("title", "Title", Kind::Str),
    ("default", "Default", Kind::Json),
    ("maximum", "Maximum", Kind::Ptr),
    ("exclusiveMaximum", "ExclusiveMaximum", Kind::Bool),
    ("minimum", "Minimum", Kind::Ptr),
    ("exclusiveMinimum", "ExclusiveMinimum", Kind::Bool),
    ("maxLength", "MaxLength", Kind::Ptr),
    ("minLength", "MinLength", Kind::Ptr),
    ("pattern", "Pattern", Kind::Str),
    ("maxItems", "MaxItems", Kind::Ptr),
    ("minItems", "MinItems", Kind::Ptr),
    ("uniqueItems", "UniqueItems", Kind::Bool),
    ("multipleOf", "MultipleOf", Kind::Ptr),
    ("enum", "Enum", Kind::JsonList),
    ("maxProperties", "MaxProperties", Kind::Ptr),
    ("minProperties", "MinProperties", Kind::Ptr),
    ("required", "Required", Kind::StrList),
    ("items", "Items", Kind::SchemaOrArray),
    ("allOf", "AllOf", Kind::SchemaList),
    ("oneOf", "OneOf", Kind::SchemaList),
    ("anyOf", "AnyOf", Kind::SchemaList),
    ("not", "Not", Kind::Schema),
    ("properties", "Properties", Kind::SchemaMap),
    (
        "additionalProperties",
        "AdditionalProperties",
        Kind::SchemaOrBool,
    ),
    ("patternProperties", "PatternProperties", Kind::SchemaMap),
    ("dependencies", "Dependencies", Kind::Dependencies),
    ("additionalItems", "AdditionalItems", Kind::SchemaOrBool),
    ("definitions", "Definitions", Kind::SchemaMap),
    ("externalDocs", "ExternalDocs", Kind::Data),
    ("example", "Example", Kind::Json),
    ("nullable", "Nullable", Kind::Bool),
    (
        "x-kubernetes-preserve-unknown-fields",
        "XPreserveUnknownFields",
        Kind::Ptr,
    ),
    (
        "x-kubernetes-embedded-resource",
        "XEmbeddedResource",
        Kind::Bool,
    ),
    ("x-kubernetes-int-or-string", "XIntOrString", Kind::Bool),
    ("x-kubernetes-list-map-keys", "XListMapKeys", Kind::StrList),
    ("x-kubernetes-list-type", "XListType", Kind::Ptr),
    ("x-kubernetes-map-type", "XMapType", Kind::Ptr),
    ("x-kubernetes-validations", "XValidations", Kind::Data),
];

/// One schema in normal form: JSON key → normal value, only the fields that are not Go's zero.
pub type Props = BTreeMap<&'static str, Value>;

/// The Go field name of a JSON key (for the concise "unhandled" summary).
pub(crate) fn go_name(key: &str) -> &'static str {
    FIELDS
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, g, _)| *g)
        .unwrap_or("")
}

/// The normal form of a whole schema node (children included).
pub fn normalize(node: &Node) -> Props {
    normalize_but(node, &[])
}

/// [`normalize`] without the fields `skip` (the flattened walk leaves out `properties` and
/// `items`, whose schemas are flattened on their own, instead of normalizing them at every
/// level).
fn normalize_but(node: &Node, skip: &[&str]) -> Props {
    let mut out = Props::new();
    let Some(map) = node.as_map() else {
        return out;
    };
    for (key, _, kind) in FIELDS {
        if skip.contains(key) {
            continue;
        }
        // Go's decoder matches keys case-insensitively; the last match wins.
        let Some(v) = map
            .iter()
            .rev()
            .find(|(k, _)| k.text.as_str() == *key)
            .or_else(|| {
                map.iter()
                    .rev()
                    .find(|(k, _)| k.text.eq_ignore_ascii_case(key))
            })
            .map(|(_, v)| v)
        else {
            continue;
        };
        if let Some(n) = normal_field(*kind, v) {
            out.insert(key, n);
        }
    }
    out
}

fn props_value(p: Props) -> Value {
    Value::Object(p.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn normal_field(kind: Kind, v: &Node) -> Option<Value> {
    let null = v.is_null();
    match kind {
        Kind::Str => {
            let s = v.scalar_text().unwrap_or("");
            (!null && !s.is_empty()).then(|| Value::String(s.to_string()))
        }
        Kind::Bool => (v.as_bool() == Some(true)).then_some(Value::Bool(true)),
        Kind::Ptr => (!null).then(|| match v.as_bool() {
            Some(b) => Value::Bool(b),
            None => match crate::gocompat::decoded::number(v) {
                Some(f) if !matches!(v.value, YValue::Scalar(_, crate::yaml::ScalarKind::Str)) => {
                    serde_json::Number::from_f64(f)
                        .map(Value::Number)
                        .unwrap_or(Value::Null)
                }
                _ => Value::String(v.scalar_text().unwrap_or("").to_string()),
            },
        }),
        Kind::Json => (!null).then(|| Value::String(marshal_string(&v.to_json(), true))),
        Kind::StrList => {
            let items: Vec<Value> = v
                .as_seq()?
                .iter()
                .map(|i| Value::String(i.scalar_text().unwrap_or("").to_string()))
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Kind::JsonList => {
            let items: Vec<Value> = v
                .as_seq()?
                .iter()
                .map(|i| Value::String(marshal_string(&i.to_json(), true)))
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Kind::SchemaList => {
            let items: Vec<Value> = v
                .as_seq()?
                .iter()
                .map(|i| props_value(normalize(i)))
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Kind::Schema => (!null && v.as_map().is_some()).then(|| props_value(normalize(v))),
        Kind::SchemaMap => {
            let m: Map<String, Value> = v
                .as_map()?
                .iter()
                .map(|(k, s)| (k.text.to_string(), props_value(normalize(s))))
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        Kind::SchemaOrBool => {
            if null {
                return None;
            }
            let mut m = Map::new();
            match v.as_bool() {
                Some(b) => {
                    m.insert("allows".into(), Value::Bool(b));
                }
                None => {
                    m.insert("allows".into(), Value::Bool(true));
                    m.insert("schema".into(), props_value(normalize(v)));
                }
            }
            Some(Value::Object(m))
        }
        Kind::SchemaOrArray => {
            if null {
                return None;
            }
            let mut m = Map::new();
            match v.as_seq() {
                Some(items) => {
                    let list: Vec<Value> =
                        items.iter().map(|i| props_value(normalize(i))).collect();
                    m.insert("jsonSchemas".into(), Value::Array(list));
                }
                None => {
                    m.insert("schema".into(), props_value(normalize(v)));
                }
            }
            Some(Value::Object(m))
        }
        Kind::Dependencies => {
            let m: Map<String, Value> = v
                .as_map()?
                .iter()
                .map(|(k, d)| {
                    let val = match d.as_seq() {
                        Some(items) => Value::Array(
                            items
                                .iter()
                                .map(|i| Value::String(i.scalar_text().unwrap_or("").into()))
                                .collect(),
                        ),
                        None => props_value(normalize(d)),
                    };
                    (k.text.to_string(), val)
                })
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        Kind::Data => {
            let j = v.to_json();
            let empty = match &j {
                Value::Null => true,
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            (!empty).then_some(j)
        }
    }
}

/// One flattened property: its normal form without children (crdify drops `properties` and
/// `items` before comparing, so a parent is not blamed for a child's change) and where it is.
#[derive(Debug, Clone)]
pub struct FlatProp {
    /// The schema without `properties` and `items`.
    pub props: Props,
    /// Its line in the CRD's file (1 in a catalog blob).
    pub line: usize,
}

/// Every schema under `root` by crdify's simple location (`^`, `^.spec`, `^.spec.items`,
/// `^.x.allOf[0]`, `^.m.additionalProperties`, `^.p.patternProperties[re]`), as its
/// `FlattenCRDVersion` walks them. A location reached twice keeps the later schema.
pub fn flatten(root: Option<&Node>) -> BTreeMap<String, FlatProp> {
    let mut out = BTreeMap::new();
    if let Some(root) = root
        && root.as_map().is_some()
    {
        walk(root, "^".to_string(), &mut out);
    }
    out
}

fn walk(node: &Node, path: String, out: &mut BTreeMap<String, FlatProp>) {
    let props = normalize_but(node, &["properties", "items"]);
    out.insert(
        path.clone(),
        FlatProp {
            props,
            line: node.line,
        },
    );
    let Some(map) = node.as_map() else {
        return;
    };
    let get = |k: &str| {
        map.iter()
            .rev()
            .find(|(key, _)| key.text.as_str() == k)
            .map(|(_, v)| v)
    };
    let is_schema = |n: &Node| n.as_map().is_some();
    if let Some(items) = get("items") {
        if is_schema(items) {
            walk(items, format!("{path}.items"), out);
        } else if let Some(list) = items.as_seq() {
            for (i, s) in list.iter().enumerate().filter(|(_, s)| is_schema(s)) {
                walk(s, format!("{path}.items[{i}]"), out);
            }
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = get(key).and_then(Node::as_seq) {
            for (i, s) in list.iter().enumerate() {
                walk(s, format!("{path}.{key}[{i}]"), out);
            }
        }
    }
    if let Some(n) = get("not").filter(|n| is_schema(n)) {
        walk(n, format!("{path}.not"), out);
    }
    if let Some(m) = get("properties").and_then(Node::as_map) {
        for (k, s) in m {
            walk(s, format!("{path}.{}", k.text), out);
        }
    }
    if let Some(n) = get("additionalProperties").filter(|n| is_schema(n)) {
        walk(n, format!("{path}.additionalProperties"), out);
    }
    if let Some(m) = get("patternProperties").and_then(Node::as_map) {
        for (k, s) in m {
            walk(s, format!("{path}.patternProperties[{}]", k.text), out);
        }
    }
    if let Some(n) = get("additionalItems").filter(|n| is_schema(n)) {
        walk(n, format!("{path}.additionalItems"), out);
    }
    if let Some(m) = get("definitions").and_then(Node::as_map) {
        for (k, s) in m {
            walk(s, format!("{path}.definitions[{}]", k.text), out);
        }
    }
    if let Some(m) = get("dependencies").and_then(Node::as_map) {
        for (k, s) in m.iter().filter(|(_, s)| is_schema(s)) {
            walk(s, format!("{path}.dependencies[{}]", k.text), out);
        }
    }
}

/// `json.Marshal` of a normal-form schema as Go writes the struct: fields in struct order,
/// zero values omitted (crdify's oneOf check compares subschemas by this text).
pub fn go_marshal(props: &Value) -> String {
    let mut out = String::new();
    write_schema(props, &mut out);
    out
}

fn write_schema(v: &Value, out: &mut String) {
    let Some(m) = v.as_object() else {
        out.push_str("{}");
        return;
    };
    out.push('{');
    let mut first = true;
    for (key, _, kind) in FIELDS {
        let Some(val) = m.get(*key) else { continue };
        if !first {
            out.push(',');
        }
        first = false;
        crate::gocompat::marshal::write_str(out, key, true);
        out.push(':');
        write_field(*kind, val, out);
    }
    out.push('}');
}

fn write_field(kind: Kind, v: &Value, out: &mut String) {
    match kind {
        Kind::Json => out.push_str(v.as_str().unwrap_or("null")),
        Kind::JsonList => {
            out.push('[');
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(item.as_str().unwrap_or("null"));
            }
            out.push(']');
        }
        Kind::SchemaList => {
            out.push('[');
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_schema(item, out);
            }
            out.push(']');
        }
        Kind::Schema => write_schema(v, out),
        Kind::SchemaMap => write_sorted_object(v, out, |value, out| {
            write_schema(value.unwrap_or(&Value::Null), out)
        }),
        Kind::SchemaOrBool => match v.get("schema") {
            Some(s) => write_schema(s, out),
            None => out.push_str(if v.get("allows") == Some(&Value::Bool(true)) {
                "true"
            } else {
                "false"
            }),
        },
        Kind::SchemaOrArray => match (v.get("schema"), v.get("jsonSchemas")) {
            (Some(s), _) => write_schema(s, out),
            (None, Some(list)) => write_field(Kind::SchemaList, list, out),
            _ => out.push_str("null"),
        },
        Kind::Dependencies => write_sorted_object(v, out, |value, out| match value {
            Some(a @ Value::Array(_)) => out.push_str(&marshal_string(a, true)),
            Some(s) => write_schema(s, out),
            None => out.push_str("null"),
        }),
        Kind::Ptr | Kind::Str | Kind::Bool | Kind::StrList => {
            out.push_str(&marshal_string(v, true))
        }
        Kind::Data => out.push_str(&marshal_string(v, true)),
    }
}

/// A JSON object written as Go's `encoding/json` writes a map: keys sorted by bytes, each value
/// by `value`.
fn write_sorted_object(v: &Value, out: &mut String, value: impl Fn(Option<&Value>, &mut String)) {
    out.push('{');
    let m = v.as_object();
    let mut keys: Vec<&String> = m.map(|m| m.keys().collect()).unwrap_or_default();
    keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::gocompat::marshal::write_str(out, k, true);
        out.push(':');
        value(m.and_then(|m| m.get(k)), out);
    }
    out.push('}');
}
