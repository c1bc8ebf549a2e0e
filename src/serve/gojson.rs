//! Go's `encoding/json` output, byte for byte, from serde types.
//!
//! Why: opm writes its serve cache with `json.Marshal`, and the cache's digest covers those
//! bytes, so a cache olmpack writes must hold exactly what opm would have written for opm (and
//! users diffing caches) to see the same thing. `json.Marshal` differs from serde_json's default
//! output only in string escaping: it also escapes `<`, `>`, `&` (HTML-safe output) and U+2028 /
//! U+2029, and it re-escapes the raw JSON of `json.RawMessage` values the same way. Field order,
//! `omitempty` and sorted map keys are the types' business (serde derives, `BTreeMap`).

use serde::Serialize;
use std::io::{self, Write};

/// A serde_json formatter that escapes strings as Go's `json.Marshal` does (HTML escaping on).
#[derive(Debug, Clone, Copy, Default)]
pub struct GoFormatter;

/// Writes `fragment` with `<`, `>`, `&`, U+2028 and U+2029 escaped; everything else verbatim.
/// Valid JSON can only hold these characters inside strings, so this is also right for a whole
/// raw JSON text (what Go does to a `json.RawMessage` while marshalling).
fn write_html_escaped<W: ?Sized + Write>(writer: &mut W, fragment: &str) -> io::Result<()> {
    let bytes = fragment.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let esc: Option<(&[u8], usize)> = match bytes[i] {
            b'<' => Some((b"\\u003c", 1)),
            b'>' => Some((b"\\u003e", 1)),
            b'&' => Some((b"\\u0026", 1)),
            0xe2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xa8) => {
                Some((b"\\u2028", 3))
            }
            0xe2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xa9) => {
                Some((b"\\u2029", 3))
            }
            _ => None,
        };
        match esc {
            Some((text, len)) => {
                writer.write_all(&bytes[start..i])?;
                writer.write_all(text)?;
                i += len;
                start = i;
            }
            None => i += 1,
        }
    }
    writer.write_all(&bytes[start..])
}

impl serde_json::ser::Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_html_escaped(writer, fragment)
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_html_escaped(writer, fragment)
    }
}

/// `json.Marshal(value)`: compact, HTML-escaped, in the types' field order.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    value.serialize(&mut ser)?;
    Ok(out)
}

/// [`to_vec`] as a `String` (the output is always UTF-8).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let bytes = to_vec(value)?;
    // serde_json only ever writes UTF-8, and the escapes above are ASCII.
    String::from_utf8(bytes).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_go_marshal() {
        // Go 1.22+ json.Marshal: HTML characters and U+2028/9 as \u, \b and \f short, other
        // controls as \u00xx (lowercase hex), DEL and non-ASCII verbatim.
        let s = "a<b>&c\u{2028}\u{2029}\u{8}\u{c}\n\u{1}\"\\é\u{7f}";
        let want = "\"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\\b\\f\\n\\u0001\\\"\\\\é\u{7f}\"";
        assert_eq!(to_string(s).unwrap(), want);
    }

    #[test]
    fn raw_values_are_html_escaped() {
        let raw = serde_json::value::RawValue::from_string(r#"{"a":"<x>"}"#.into()).unwrap();
        assert_eq!(to_string(&raw).unwrap(), r#"{"a":"\u003cx\u003e"}"#);
    }
}
