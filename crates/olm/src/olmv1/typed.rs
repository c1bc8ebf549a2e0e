//! Kubernetes objects as OLM v1 sees them after decoding into Go types: unknown fields dropped,
//! absent fields written as Go's zero values (`resources: {}`, `status: {}`, `rules: null`),
//! quantities canonical, `omitempty`/`omitzero` applied. operator-controller converts each
//! bundle object with `runtime.DefaultUnstructuredConverter` into a typed struct and writes it
//! back with `encoding/json`, so a byte-for-byte render has to replay that round trip.
//!
//! The shapes come from a table generated from the Kubernetes Go sources
//! (`k8s_types.txt`, by `scripts/gen-k8s-types.py`): per struct, its JSON field names, Go types
//! and tags. The round trip is then one generic walk over that table.

use crate::gocompat::quantity;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A Go type as far as its JSON form is concerned.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `string` and string-based types.
    Str,
    /// Integer types.
    Int,
    /// `float64`.
    Float,
    /// `bool`.
    Bool,
    /// `[]byte` (base64 text in JSON).
    Bytes,
    /// `resource.Quantity`.
    Quantity,
    /// `intstr.IntOrString`.
    IntOrStr,
    /// `metav1.Time`.
    Time,
    /// Raw JSON (`runtime.RawExtension`, `apiextensionsv1.JSON`, `interface{}`).
    Raw,
    /// `JSONSchemaPropsOrArray`.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool`.
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray`.
    SchemaOrStrings,
    /// A pointer.
    Ptr(Box<Ty>),
    /// A slice.
    Slice(Box<Ty>),
    /// A map with string keys.
    Map(Box<Ty>),
    /// A named struct.
    Struct(String),
}

/// One struct field.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    ty: Ty,
    omitempty: bool,
    omitzero: bool,
}

/// One field as written in the table: name, type text, omitempty, omitzero.
type RawField = (String, String, bool, bool);

/// The struct table.
#[derive(Debug, Default)]
pub struct Types {
    structs: HashMap<String, Vec<Field>>,
}

/// Why a value does not decode into its Go type (what the converter refuses).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct TypeError {
    /// Dotted path of the value.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn parse_ty(text: &str) -> Ty {
    if let Some(rest) = text.strip_prefix('*') {
        return Ty::Ptr(Box::new(parse_ty(rest)));
    }
    if let Some(rest) = text.strip_prefix("[]") {
        return Ty::Slice(Box::new(parse_ty(rest)));
    }
    if let Some(rest) = text.strip_prefix("map[") {
        return Ty::Map(Box::new(parse_ty(rest.strip_suffix(']').unwrap_or(rest))));
    }
    match text {
        "string" => Ty::Str,
        "int" => Ty::Int,
        "float" => Ty::Float,
        "bool" => Ty::Bool,
        "bytes" => Ty::Bytes,
        "quantity" => Ty::Quantity,
        "intorstr" => Ty::IntOrStr,
        "time" => Ty::Time,
        "raw" => Ty::Raw,
        "schemaorarray" => Ty::SchemaOrArray,
        "schemaorbool" => Ty::SchemaOrBool,
        "schemaorstrings" => Ty::SchemaOrStrings,
        other => Ty::Struct(other.to_string()),
    }
}

/// The table, parsed once.
pub fn types() -> &'static Types {
    static TYPES: OnceLock<Types> = OnceLock::new();
    TYPES.get_or_init(|| {
        let mut raw: Vec<(String, Vec<RawField>)> = Vec::new();
        for line in include_str!("k8s_types.txt").lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            if let Some(name) = line.strip_prefix("type ") {
                raw.push((name.trim().to_string(), Vec::new()));
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(name), Some(ty)) = (parts.next(), parts.next()) else {
                continue;
            };
            let flags: Vec<&str> = parts.collect();
            if let Some((_, fields)) = raw.last_mut() {
                fields.push((
                    name.to_string(),
                    ty.to_string(),
                    flags.contains(&"omitempty"),
                    flags.contains(&"omitzero"),
                ));
            }
        }
        let by_name: HashMap<&str, &Vec<RawField>> =
            raw.iter().map(|(n, f)| (n.as_str(), f)).collect();
        fn expand(
            by_name: &HashMap<&str, &Vec<RawField>>,
            fields: &[RawField],
            out: &mut Vec<Field>,
            depth: usize,
        ) {
            for (name, ty, omitempty, omitzero) in fields {
                if name == "..." {
                    if let Some(inner) = by_name.get(ty.as_str())
                        && depth < 8
                    {
                        expand(by_name, inner, out, depth + 1);
                    }
                    continue;
                }
                out.push(Field {
                    name: name.clone(),
                    ty: parse_ty(ty),
                    omitempty: *omitempty,
                    omitzero: *omitzero,
                });
            }
        }
        let mut structs = HashMap::new();
        for (name, fields) in &raw {
            let mut out = Vec::new();
            expand(&by_name, fields, &mut out, 0);
            structs.insert(name.clone(), out);
        }
        Types { structs }
    })
}

/// A decoded Go value: its JSON form and whether `omitempty`/`omitzero` would drop it.
struct Conv {
    json: Value,
    empty: bool,
    zero: bool,
}

impl Conv {
    fn new(json: Value, empty: bool, zero: bool) -> Conv {
        Conv { json, empty, zero }
    }
}

impl Types {
    /// Decodes `value` (None: absent) into the struct `name` and writes it back as
    /// `encoding/json` would, keys sorted.
    pub fn round_trip(&self, name: &str, value: Option<&Value>) -> Result<Value, TypeError> {
        let mut path = String::new();
        Ok(self
            .conv(&Ty::Struct(name.to_string()), value, &mut path)?
            .json)
    }

    /// Decodes `value` into the type `ty` and writes it back.
    pub fn round_trip_ty(&self, ty: &Ty, value: Option<&Value>) -> Result<Value, TypeError> {
        let mut path = String::new();
        Ok(self.conv(ty, value, &mut path)?.json)
    }

    /// The fields of a struct in Go declaration order (for encoders that must keep it).
    pub fn field_order(&self, name: &str) -> Vec<(&str, &Ty, bool)> {
        self.structs
            .get(name)
            .map(|f| {
                f.iter()
                    .map(|f| (f.name.as_str(), &f.ty, f.omitempty))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn conv(&self, ty: &Ty, value: Option<&Value>, path: &mut String) -> Result<Conv, TypeError> {
        let value = value.filter(|v| !v.is_null());
        let err = |path: &str, message: String| TypeError {
            path: path.trim_start_matches('.').to_string(),
            message,
        };
        let Some(v) = value else {
            return Ok(match ty {
                Ty::Str => Conv::new(Value::String(String::new()), true, true),
                Ty::Int => Conv::new(Value::from(0), true, true),
                Ty::Float => Conv::new(Value::from(0), true, true),
                Ty::Bool => Conv::new(Value::Bool(false), true, true),
                Ty::Quantity => Conv::new(Value::String("0".into()), false, true),
                Ty::IntOrStr => Conv::new(Value::from(0), false, true),
                Ty::Time | Ty::Raw => Conv::new(Value::Null, false, true),
                Ty::Struct(name) => {
                    let c = self.conv_struct(name, None, path)?;
                    Conv::new(c, false, true)
                }
                _ => Conv::new(Value::Null, true, true),
            });
        };
        Ok(match ty {
            Ty::Str => match v {
                Value::String(s) => Conv::new(v.clone(), s.is_empty(), s.is_empty()),
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to string", go_kind(other)),
                    ));
                }
            },
            Ty::Int => match v {
                Value::Number(n) if n.is_i64() || n.is_u64() => {
                    let zero = n.as_i64() == Some(0);
                    Conv::new(v.clone(), zero, zero)
                }
                Value::Number(n) => match n.as_f64() {
                    Some(f) if f.fract() == 0.0 => {
                        Conv::new(Value::from(f as i64), f == 0.0, f == 0.0)
                    }
                    _ => return Err(err(path, "cannot convert float64 to int".into())),
                },
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to int", go_kind(other)),
                    ));
                }
            },
            Ty::Float => match v {
                Value::Number(n) => {
                    let zero = n.as_f64() == Some(0.0);
                    Conv::new(v.clone(), zero, zero)
                }
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to float64", go_kind(other)),
                    ));
                }
            },
            Ty::Bool => match v {
                Value::Bool(b) => Conv::new(v.clone(), !b, !b),
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to bool", go_kind(other)),
                    ));
                }
            },
            Ty::Bytes | Ty::Time => match v {
                Value::String(s) => Conv::new(v.clone(), s.is_empty(), false),
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to string", go_kind(other)),
                    ));
                }
            },
            Ty::Quantity => {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => {
                        return Err(err(
                            path,
                            format!("cannot convert {} to quantity", go_kind(other)),
                        ));
                    }
                };
                let canonical = quantity::canonical(&text).map_err(|e| err(path, e.to_string()))?;
                Conv::new(Value::String(canonical), false, false)
            }
            Ty::IntOrStr => match v {
                Value::String(_) | Value::Number(_) => Conv::new(v.clone(), false, false),
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to IntOrString", go_kind(other)),
                    ));
                }
            },
            Ty::Raw => Conv::new(v.clone(), false, false),
            Ty::SchemaOrArray => match v {
                Value::Array(items) if !items.is_empty() => {
                    let t = Ty::Slice(Box::new(Ty::Struct("apiext.JSONSchemaProps".into())));
                    self.conv(&t, Some(v), path)?
                }
                Value::Array(_) => Conv::new(Value::Null, false, false),
                _ => {
                    let c = self.conv_struct("apiext.JSONSchemaProps", Some(v), path)?;
                    Conv::new(c, false, false)
                }
            },
            Ty::SchemaOrBool => match v {
                Value::Bool(b) => Conv::new(Value::Bool(*b), false, false),
                _ => {
                    let c = self.conv_struct("apiext.JSONSchemaProps", Some(v), path)?;
                    Conv::new(c, false, false)
                }
            },
            Ty::SchemaOrStrings => match v {
                Value::Array(items) if !items.is_empty() => {
                    let t = Ty::Slice(Box::new(Ty::Str));
                    self.conv(&t, Some(v), path)?
                }
                Value::Array(_) => Conv::new(Value::Null, false, false),
                _ => {
                    let c = self.conv_struct("apiext.JSONSchemaProps", Some(v), path)?;
                    Conv::new(c, false, false)
                }
            },
            Ty::Ptr(inner) => {
                let c = self.conv(inner, Some(v), path)?;
                Conv::new(c.json, false, false)
            }
            Ty::Slice(inner) => match v {
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        let len = path.len();
                        path.push_str(&format!("[{i}]"));
                        out.push(self.conv(inner, Some(item), path)?.json);
                        path.truncate(len);
                    }
                    let empty = out.is_empty();
                    Conv::new(Value::Array(out), empty, false)
                }
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to slice", go_kind(other)),
                    ));
                }
            },
            Ty::Map(inner) => match v {
                Value::Object(entries) => {
                    let mut out = Map::new();
                    for (k, item) in entries {
                        let len = path.len();
                        path.push('.');
                        path.push_str(k);
                        out.insert(k.clone(), self.conv(inner, Some(item), path)?.json);
                        path.truncate(len);
                    }
                    let empty = out.is_empty();
                    Conv::new(Value::Object(out), empty, false)
                }
                other => {
                    return Err(err(
                        path,
                        format!("cannot convert {} to map", go_kind(other)),
                    ));
                }
            },
            Ty::Struct(name) => {
                if !v.is_object() {
                    return Err(err(
                        path,
                        format!("cannot convert {} to struct", go_kind(v)),
                    ));
                }
                let c = self.conv_struct(name, Some(v), path)?;
                Conv::new(c, false, false)
            }
        })
    }

    fn conv_struct(
        &self,
        name: &str,
        value: Option<&Value>,
        path: &mut String,
    ) -> Result<Value, TypeError> {
        let fields = self.structs.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let input = value.and_then(Value::as_object);
        let mut out = Map::new();
        for f in fields {
            let len = path.len();
            path.push('.');
            path.push_str(&f.name);
            let c = self.conv(&f.ty, input.and_then(|m| m.get(&f.name)), path)?;
            path.truncate(len);
            if (f.omitempty && c.empty) || (f.omitzero && c.zero) {
                continue;
            }
            out.insert(f.name.clone(), c.json);
        }
        Ok(Value::Object(out))
    }
}

fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn container_round_trip_keeps_go_zero_values() {
        let t = types();
        let v = t
            .round_trip(
                "core.Container",
                Some(&json!({"name": "m", "bogus": 1, "resources": {"limits": {"cpu": "2000m"}}})),
            )
            .unwrap();
        assert_eq!(
            v,
            json!({"name": "m", "resources": {"limits": {"cpu": "2"}}})
        );
        let v = t.round_trip("core.Container", Some(&json!({}))).unwrap();
        assert_eq!(v, json!({"name": "", "resources": {}}));
    }

    #[test]
    fn policy_rule_writes_null_verbs() {
        let v = types()
            .round_trip("rbac.PolicyRule", Some(&json!({"apiGroups": [""]})))
            .unwrap();
        assert_eq!(v, json!({"apiGroups": [""], "verbs": null}));
    }
}
