//! Go's `encoding/json` output for decoded catalog data: opm keeps every blob as the map it
//! decoded, encoded again with sorted keys, no HTML escaping, and every number passed through a
//! `float64` (CATALOG.md A.5). Property values read from a catalog are slices of that text, so
//! render must see exactly these bytes.

use crate::yaml::{Node, ScalarKind, Value};
use std::fmt::Write as _;

/// Why a value cannot be encoded as Go would (Go's `json: unsupported value: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The compact, sorted-key JSON of a node, as Go re-encodes a `map[string]interface{}`.
pub fn canonical(node: &Node) -> Result<String, Unsupported> {
    let mut out = String::new();
    write(node, &mut out)?;
    Ok(out)
}

/// [`canonical`] as a raw JSON value, without parsing the text again to check it: [`write`]
/// only ever writes one well-formed JSON value (literals, finite numbers, escaped strings,
/// arrays and objects of those), with no surrounding whitespace.
pub fn canonical_raw(node: &Node) -> Result<Box<serde_json::value::RawValue>, Unsupported> {
    let text = canonical(node)?;
    // SAFETY: `text` is the output of `write`, which emits exactly one JSON value and nothing
    // around it (see its match arms); debug builds re-parse it to check.
    Ok(unsafe { serde_json::value::RawValue::from_string_unchecked(text) })
}

/// Appends the canonical JSON of `node` to `out`.
pub fn write(node: &Node, out: &mut String) -> Result<(), Unsupported> {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => out.push_str("null"),
        Value::Scalar(_, ScalarKind::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        Value::Scalar(text, ScalarKind::Int | ScalarKind::Float) => {
            write_float(number(node).unwrap_or(f64::NAN), text, out)?
        }
        Value::Scalar(text, ScalarKind::Str) => write_string(text, out),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out)?;
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            // Most maps come in key order already: write those without a sorted copy (one
            // allocation less per object).
            if entries.is_sorted_by(|a, b| a.0.text <= b.0.text) {
                for (i, (k, v)) in entries.iter().enumerate() {
                    write_member(i, &k.text, v, out)?;
                }
            } else {
                let mut sorted: Vec<(&str, &Node)> =
                    entries.iter().map(|(k, v)| (k.text.as_str(), v)).collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                for (i, (k, v)) in sorted.into_iter().enumerate() {
                    write_member(i, k, v, out)?;
                }
            }
            out.push('}');
        }
    }
    Ok(())
}

/// Appends member `i` of an object: a comma before all but the first, then `"key":value`.
fn write_member(i: usize, key: &str, value: &Node, out: &mut String) -> Result<(), Unsupported> {
    if i > 0 {
        out.push(',');
    }
    write_string(key, out);
    out.push(':');
    write(value, out)
}

/// The `float64` a numeric scalar decodes to (YAML 1.1 integer forms included).
pub fn number(node: &Node) -> Option<f64> {
    match &node.value {
        Value::Scalar(text, ScalarKind::Int) => match node.as_i64() {
            Some(i) => Some(i as f64),
            None => text.replace('_', "").parse::<f64>().ok(),
        },
        Value::Scalar(text, ScalarKind::Float) => {
            let t = text.trim_start_matches('+');
            match t {
                ".inf" | ".Inf" | ".INF" => Some(f64::INFINITY),
                "-.inf" | "-.Inf" | "-.INF" => Some(f64::NEG_INFINITY),
                ".nan" | ".NaN" | ".NAN" => Some(f64::NAN),
                _ => t.replace('_', "").parse::<f64>().ok(),
            }
        }
        _ => None,
    }
}

/// Go's `encoding/json` float64 format: shortest round-trip digits, exponent form below 1e-6 and
/// from 1e21, `e-7` rather than `e-07`.
pub fn write_float(f: f64, text: &str, out: &mut String) -> Result<(), Unsupported> {
    if !f.is_finite() {
        return Err(Unsupported(format!(
            "json: unsupported value: {} (the number {text} has no JSON form)",
            if f.is_nan() {
                "NaN"
            } else if f > 0.0 {
                "+Inf"
            } else {
                "-Inf"
            }
        )));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((mantissa, exp)) => {
                out.push_str(mantissa);
                out.push('e');
                if !exp.starts_with('-') {
                    out.push('+');
                }
                out.push_str(exp);
            }
            None => out.push_str(&s),
        }
    } else {
        let _ = write!(out, "{f}");
    }
    Ok(())
}

/// Bytes that may need an escape: controls, `"`, `\\`, and 0xE2 (the lead byte of U+2028/9).
static NEEDS_CHECK: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[0xe2] = true;
    t
};

/// Whether any of eight bytes is one [`NEEDS_CHECK`] flags (a control byte, `"`, `\\` or
/// 0xE2). Exact for "any": the per-byte flags may be off, but the caller rescans bytewise.
fn word_needs_check(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // Each term sets the high bit of (at least) the first byte that matches; one test of
    // their union instead of four branches.
    let zero = |v: u64| v.wrapping_sub(LO) & !v;
    let below_space = w.wrapping_sub(LO * 0x20) & !w;
    (below_space
        | zero(w ^ (LO * u64::from(b'"')))
        | zero(w ^ (LO * u64::from(b'\\')))
        | zero(w ^ (LO * 0xE2)))
        & HI
        != 0
}

/// A JSON string as Go writes it with `SetEscapeHTML(false)`.
pub fn write_string(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Skip the bytes that never need escaping: eight at a time, then one by one.
        while let Some(word) = bytes.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            if word_needs_check(u64::from_le_bytes(w)) {
                break;
            }
            i += 8;
        }
        while i < bytes.len() && !NEEDS_CHECK[usize::from(bytes[i])] {
            i += 1;
        }
        let Some(&b) = bytes.get(i) else { break };
        // Only control bytes, `"`, `\\` and U+2028/U+2029 (E2 80 A8/A9) are escaped.
        let escape: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0x00..=0x1f => None,
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                Some(if bytes.get(i + 2) == Some(&0xa8) {
                    "\\u2028"
                } else {
                    "\\u2029"
                })
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[start..i]);
        match escape {
            Some(e) => {
                out.push_str(e);
                i += if b == 0xe2 { 3 } else { 1 };
            }
            None => {
                let _ = write!(out, "\\u{:04x}", b);
                i += 1;
            }
        }
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream;

    fn canon(yaml: &str) -> String {
        let docs = parse_stream(yaml).expect("yaml");
        canonical(&docs[0].root).expect("encodable")
    }

    #[test]
    fn keys_sorted_numbers_as_go_float64() {
        assert_eq!(
            canon("b: 1\na: [1.0, 1.5, 0x10, 1e21, 0.0000001, 100000000000000000000, -0.0]\n"),
            r#"{"a":[1,1.5,16,1e+21,1e-7,100000000000000000000,-0],"b":1}"#
        );
        // Integers above 2^53 lose precision, as in opm.
        assert_eq!(canon("n: 9007199254740993\n"), r#"{"n":9007199254740992}"#);
    }

    #[test]
    fn strings_escape_as_go_without_html_escaping() {
        assert_eq!(
            canon("s: \"<a&b> \\\"q\\\" \\\\ \\n \\t \\b \\x01 \\u2028\"\n"),
            r#"{"s":"<a&b> \"q\" \\ \n \t \b \u0001 \u2028"}"#
        );
    }

    #[test]
    fn word_check_agrees_with_the_byte_table() {
        // Every byte value in every lane, among bytes that never need a check.
        for b in 0..=255u8 {
            for lane in 0..8 {
                let mut w = [b'a'; 8];
                w[lane] = b;
                assert_eq!(
                    word_needs_check(u64::from_le_bytes(w)),
                    NEEDS_CHECK[usize::from(b)],
                    "byte {b:#x} in lane {lane}"
                );
            }
        }
        let mut out = String::new();
        write_string(
            "abcdefgh\"ijklmnop\u{2028}qrstuvw\u{1}xyz\u{e9}\u{2027}",
            &mut out,
        );
        assert_eq!(
            out,
            "\"abcdefgh\\\"ijklmnop\\u2028qrstuvw\\u0001xyz\u{e9}\u{2027}\""
        );
    }

    #[test]
    fn infinity_is_unsupported() {
        let docs = parse_stream("a: .inf\n").expect("yaml");
        assert!(canonical(&docs[0].root).is_err());
    }
}
