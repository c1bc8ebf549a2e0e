//! crdify's property comparators, as operator-controller v1.11.0 configures them: each compares
//! one field of an old and a new schema, reports with crdify's words, and clears the field in
//! both so the final "unhandled" check sees only what no comparator owns. `description` runs
//! but never reports (OLM does not block on descriptions); `enum` allows added values.

use super::schema::{Props, go_marshal};
use crate::gocompat::quote::go_quote;
use serde_json::Value;
use std::collections::BTreeSet;

/// One comparator: crdify's validation name and its check.
pub(crate) struct Comparator {
    /// crdify's name, which prefixes its messages (`enum: ...`).
    pub name: &'static str,
    /// Compares and clears; the error text, if any.
    pub compare: fn(&mut Props, &mut Props) -> Option<String>,
}

/// The property comparators, in the order this port reports them (crdify's runner iterates a
/// Go map, so upstream's order varies from run to run).
pub(crate) const COMPARATORS: &[Comparator] = &[
    Comparator {
        name: "default",
        compare: default,
    },
    Comparator {
        name: "description",
        compare: description,
    },
    Comparator {
        name: "enum",
        compare: enumeration,
    },
    Comparator {
        name: "maximum",
        compare: |a, b| max(a, b, "maximum"),
    },
    Comparator {
        name: "maxItems",
        compare: |a, b| max(a, b, "maxItems"),
    },
    Comparator {
        name: "maxLength",
        compare: |a, b| max(a, b, "maxLength"),
    },
    Comparator {
        name: "maxProperties",
        compare: |a, b| max(a, b, "maxProperties"),
    },
    Comparator {
        name: "minimum",
        compare: |a, b| min(a, b, "minimum"),
    },
    Comparator {
        name: "minItems",
        compare: |a, b| min(a, b, "minItems"),
    },
    Comparator {
        name: "minLength",
        compare: |a, b| min(a, b, "minLength"),
    },
    Comparator {
        name: "minProperties",
        compare: |a, b| min(a, b, "minProperties"),
    },
    Comparator {
        name: "nullable",
        compare: nullable,
    },
    Comparator {
        name: "oneOf",
        compare: one_of,
    },
    Comparator {
        name: "pattern",
        compare: pattern,
    },
    Comparator {
        name: "required",
        compare: required,
    },
    Comparator {
        name: "type",
        compare: type_,
    },
];

fn take(p: &mut Props, key: &str) -> Option<Value> {
    p.remove(key)
}

fn text(v: &Option<Value>) -> String {
    v.as_ref().and_then(Value::as_str).unwrap_or("").to_string()
}

fn default(a: &mut Props, b: &mut Props) -> Option<String> {
    let (old, new) = (take(a, "default"), take(b, "default"));
    match (&old, &new) {
        (None, Some(n)) => Some(format!(
            "default added when there was none previously : {}",
            go_quote(n.as_str().unwrap_or(""))
        )),
        (Some(o), None) => Some(format!(
            "default value removed : {}",
            go_quote(o.as_str().unwrap_or(""))
        )),
        (Some(o), Some(n)) if o != n => Some(format!(
            "default value changed : {} -> {}",
            go_quote(o.as_str().unwrap_or("")),
            go_quote(n.as_str().unwrap_or(""))
        )),
        _ => None,
    }
}

fn description(a: &mut Props, b: &mut Props) -> Option<String> {
    // Enforcement "None" in operator-controller: the field is cleared, nothing reported.
    take(a, "description");
    take(b, "description");
    None
}

/// Go's `%v` of a `[]string`: `[a b c]`.
pub(crate) fn go_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(" "))
}

fn raw_set(v: &Option<Value>) -> BTreeSet<String> {
    v.as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| e.as_str().unwrap_or("").to_string())
        .collect()
}

fn enumeration(a: &mut Props, b: &mut Props) -> Option<String> {
    let (old, new) = (raw_set(&take(a, "enum")), raw_set(&take(b, "enum")));
    let removed: Vec<&str> = old.difference(&new).map(String::as_str).collect();
    if old.is_empty() && !new.is_empty() {
        return Some(format!(
            "enum constraint added when there was none previously : {}",
            go_list(new.iter().map(String::as_str))
        ));
    }
    if !removed.is_empty() {
        return Some(format!(
            "allowed enum values removed : {}",
            go_list(removed)
        ));
    }
    // additionPolicy: Allow (operator-controller's configuration): added values are fine.
    None
}

/// Go's `%v` of a float64: `%g` with the shortest digits, exponent form below 1e-4 and from
/// 1e6 (`1e+06`, `1.234567e+06`, `0.5`, `10`).
pub(crate) fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        return sci_go(mant, exp);
    }
    format!("{f}")
}

fn sci_go(mant: &str, exp: i32) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}e{sign}{:02}", exp.abs())
}

fn number_text(key: &str, v: &Value) -> String {
    let f = v.as_f64().unwrap_or(0.0);
    if matches!(key, "maximum" | "minimum") {
        go_float(f)
    } else {
        format!("{}", f as i64)
    }
}

fn max(a: &mut Props, b: &mut Props, key: &str) -> Option<String> {
    let (old, new) = (take(a, key), take(b, key));
    match (&old, &new) {
        (None, Some(n)) => Some(format!(
            "maximum constraint added when there was none previously : {}",
            number_text(key, n)
        )),
        (Some(o), Some(n)) if n.as_f64() < o.as_f64() => Some(format!(
            "maximum decreased : {} -> {}",
            number_text(key, o),
            number_text(key, n)
        )),
        _ => None,
    }
}

fn min(a: &mut Props, b: &mut Props, key: &str) -> Option<String> {
    let (old, new) = (take(a, key), take(b, key));
    match (&old, &new) {
        (None, Some(n)) => Some(format!(
            "minimum constraint added when there was none previously : {}",
            number_text(key, n)
        )),
        (Some(o), Some(n)) if n.as_f64() > o.as_f64() => Some(format!(
            "minimum increased : {} -> {}",
            number_text(key, o),
            number_text(key, n)
        )),
        _ => None,
    }
}

fn nullable(a: &mut Props, b: &mut Props) -> Option<String> {
    let old = take(a, "nullable").is_some();
    let new = take(b, "nullable").is_some();
    match (old, new) {
        (false, true) => Some("nullable added : false -> true".into()),
        (true, false) => Some("nullable removed : true -> false".into()),
        _ => None,
    }
}

fn one_of(a: &mut Props, b: &mut Props) -> Option<String> {
    // Subschemas compared without description, title, example and externalDocs. crdify
    // prints them with Go's generated String(); this port prints their JSON.
    let set = |v: Option<Value>| -> BTreeSet<String> {
        v.as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|s| {
                let mut s = s.clone();
                if let Some(m) = s.as_object_mut() {
                    for k in ["description", "title", "example", "externalDocs"] {
                        m.remove(k);
                    }
                }
                go_marshal(&s)
            })
            .collect()
    };
    let (old, new) = (set(take(a, "oneOf")), set(take(b, "oneOf")));
    let removed: Vec<&str> = old.difference(&new).map(String::as_str).collect();
    let added: Vec<&str> = new.difference(&old).map(String::as_str).collect();
    // Operator-controller leaves oneOf's policies at their defaults: additions and removals
    // are both refused.
    if old.is_empty() && !new.is_empty() {
        Some(format!(
            "oneOf constraint added when there was none previously: {}",
            go_list(new.iter().map(String::as_str))
        ))
    } else if !removed.is_empty() {
        Some(format!(
            "allowed oneOf schemas removed: {}",
            go_list(removed)
        ))
    } else if !added.is_empty() {
        Some(format!("allowed oneOf schemas added: {}", go_list(added)))
    } else {
        None
    }
}

fn pattern(a: &mut Props, b: &mut Props) -> Option<String> {
    let (old, new) = (text(&take(a, "pattern")), text(&take(b, "pattern")));
    let (qo, qn) = (go_quote(&old), go_quote(&new));
    if old == new {
        None
    } else if old.is_empty() {
        Some(format!("pattern added : {qo} -> {qn}"))
    } else if new.is_empty() {
        Some(format!("pattern removed : {qo} -> {qn}"))
    } else {
        Some(format!("pattern changed : {qo} -> {qn}"))
    }
}

fn required(a: &mut Props, b: &mut Props) -> Option<String> {
    let (old, new) = (raw_set(&take(a, "required")), raw_set(&take(b, "required")));
    // crdify prints a Go set's unsorted list; sorted here so the text is stable.
    let added: Vec<&str> = new.difference(&old).map(String::as_str).collect();
    (!added.is_empty()).then(|| format!("new required fields: {}", go_list(added)))
}

fn type_(a: &mut Props, b: &mut Props) -> Option<String> {
    let (old, new) = (text(&take(a, "type")), text(&take(b, "type")));
    (old != new).then(|| format!("type changed : {} -> {}", go_quote(&old), go_quote(&new)))
}
