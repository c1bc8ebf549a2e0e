//! Go `encoding/json` output for data opm marshals itself: compact, map keys sorted, and (for
//! `json.Marshal`) `<`, `>`, `&` escaped. Used for the `olm.bundle.object` payloads (opm marshals
//! each manifest as an `unstructured.Unstructured`) and for property values read from YAML.

use crate::gocompat::escape::go_escape;
use serde_json::Value;

/// Appends `s` as a Go JSON string (escapes from [`go_escape`], shared with the writers).
/// `html` selects `json.Marshal` (escapes `<>&`) over an encoder with `SetEscapeHTML(false)`.
pub fn write_str(out: &mut String, s: &str, html: bool) {
    out.push('"');
    for c in s.chars() {
        match go_escape(c, html) {
            Some(esc) => out.push_str(esc.as_str()),
            None => out.push(c),
        }
    }
    out.push('"');
}

/// Go's float64 JSON form: shortest digits, `%e` style below 1e-6 and from 1e21 (with Go's
/// exponent clean-up, `1e-07` becomes `1e-7`).
pub fn format_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sci = format!("{f:e}");
        let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{}", exp.abs());
    }
    format!("{f}")
}

/// Appends a number as it comes out of opm: manifests go YAML → JSON → `unstructured` (which
/// decodes integers as int64 and the rest as float64), so integral values that fit an int64 are
/// written as integers and everything else as a Go float64.
pub fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&format_float(u as f64));
    } else {
        let f = n.as_f64().unwrap_or(0.0);
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            out.push_str(&(f as i64).to_string());
        } else {
            out.push_str(&format_float(f));
        }
    }
}

/// Appends `v` as Go's `json.Marshal` of the same data held in maps (keys sorted by bytes).
pub fn marshal(out: &mut String, v: &Value, html: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s, html),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                marshal(out, item, html);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k, html);
                out.push(':');
                marshal(out, item, html);
            }
            out.push('}');
        }
    }
}

/// `json.Marshal(v)` as a new string.
pub fn marshal_string(v: &Value, html: bool) -> String {
    let mut out = String::new();
    marshal(&mut out, v, html);
    out
}

/// Looks a key up as Go's `encoding/json` matches struct fields: case-insensitively, the last
/// matching key in input order winning (input here is a sorted map, as opm's own marshalled
/// JSON is sorted).
pub fn get_ci<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    let map = v.as_object()?;
    if let Some(exact) = map.get(key)
        && !map.keys().any(|k| k != key && k.eq_ignore_ascii_case(key))
    {
        return Some(exact);
    }
    map.iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marshals_like_go() {
        let v = json!({"b": "<a&b>", "a": [1, 2.5, 1e22, 3.0], "c": "\u{2028}\u{1}"});
        assert_eq!(
            marshal_string(&v, true),
            r#"{"a":[1,2.5,1e+22,3],"b":"\u003ca\u0026b\u003e","c":"\u2028\u0001"}"#
        );
        assert_eq!(format_float(1e-7), "1e-7");
        assert_eq!(format_float(0.000001), "0.000001");
    }
}
