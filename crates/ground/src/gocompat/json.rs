//! Go's `encoding/json` output, byte for byte, from serde types: the one formatter every writer
//! of Go's JSON uses.
//!
//! Why here: two outputs must be Go's bytes. opm writes catalog blobs with a `json.Encoder`
//! (`SetIndent("", "    ")`, `SetEscapeHTML(false)`): a compact `json.Marshal` followed by Go's
//! `json.Indent`, keeping the bytes of raw property values (`json.RawMessage`) and only
//! re-indenting them, writing empty objects and arrays as `{}` and `[]`. And opm writes its
//! serve cache with `json.Marshal` (HTML escaping on), whose digest covers those bytes. Both differ
//! from serde_json only in string escaping (Go also escapes U+2028 and U+2029, and `<`, `>`, `&`
//! when HTML escaping is on, in raw values too) and in indentation; field order, `omitempty` and
//! sorted map keys are the types' business (serde derives, `BTreeMap`).

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io::{self, Write};

pub use crate::gocompat::escape::{GoEscape, go_escape};

/// The name Go's `encoding/json` gives a value's kind in its unmarshal errors ("cannot
/// unmarshal array into ..."): one table for every reader that repeats those errors.
pub fn kind_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// serde_json's compact formatter with Go's string escaping ([`go_escape`]).
///
/// `html: false` is an encoder with `SetEscapeHTML(false)` (opm's catalog writer): strings escape
/// U+2028/U+2029 besides what serde_json escapes, raw values are copied as they are.
/// `html: true` is `json.Marshal` (the serve cache): `<`, `>`, `&`, U+2028 and U+2029 are escaped
/// in strings and in raw values alike.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoFormatter {
    /// Go's `escapeHTML`: `json.Marshal` sets it, opm's catalog encoder clears it.
    pub html: bool,
}

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

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if self.html {
            return write_html_escaped(writer, fragment);
        }
        // serde_json hands over fragments without quotes, backslashes or control characters;
        // only U+2028/U+2029 (lead byte 0xE2) can still need an escape.
        if memchr::memchr(0xE2, fragment.as_bytes()).is_none() {
            return writer.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let Some(esc) = go_escape(c, false) else {
                continue;
            };
            writer.write_all(fragment.as_bytes().get(start..i).unwrap_or_default())?;
            writer.write_all(esc.as_bytes())?;
            start = i + c.len_utf8();
        }
        writer.write_all(fragment.as_bytes().get(start..).unwrap_or_default())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        let c = match char_escape {
            CharEscape::Quote => '"',
            CharEscape::ReverseSolidus => '\\',
            CharEscape::Solidus => return writer.write_all(b"/"),
            CharEscape::Backspace => '\u{8}',
            CharEscape::FormFeed => '\u{c}',
            CharEscape::LineFeed => '\n',
            CharEscape::CarriageReturn => '\r',
            CharEscape::Tab => '\t',
            CharEscape::AsciiControl(b) => char::from(b),
        };
        match go_escape(c, self.html) {
            Some(esc) => writer.write_all(esc.as_bytes()),
            None => {
                let mut buf = [0; 4];
                writer.write_all(c.encode_utf8(&mut buf).as_bytes())
            }
        }
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if self.html {
            write_html_escaped(writer, fragment)
        } else {
            writer.write_all(fragment.as_bytes())
        }
    }
}

/// Compact JSON as Go's `json.Marshal` with HTML escaping off writes it (struct field order from
/// the model's `Serialize`, raw values verbatim): what opm's catalog encoder writes before
/// indenting.
pub fn to_compact<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter { html: false });
    value.serialize(&mut ser)?;
    Ok(out)
}

/// `json.Marshal(value)`: compact, HTML-escaped, in the types' field order.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter { html: true });
    value.serialize(&mut ser)?;
    Ok(out)
}

/// [`to_vec`] as a `String` (the output is always UTF-8).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let bytes = to_vec(value)?;
    // serde_json only ever writes UTF-8, and the escapes above are ASCII.
    String::from_utf8(bytes).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// Appends `src` (any valid JSON text) re-indented as Go's `json.Indent(dst, src, "", indent)`:
/// insignificant whitespace dropped, one member or element per line, `": "` after keys, and
/// `{}`/`[]` kept on one line when empty. String contents are copied byte for byte.
pub fn go_indent(dst: &mut Vec<u8>, src: &[u8], indent: &str) {
    let mut depth = 0usize;
    let mut need_indent = false;
    let newline = |dst: &mut Vec<u8>, depth: usize| {
        dst.push(b'\n');
        for _ in 0..depth {
            dst.extend_from_slice(indent.as_bytes());
        }
    };
    // The output is the input plus indentation: one reservation covers most blobs.
    dst.reserve(src.len() + src.len() / 8);
    let mut i = 0;
    while let Some(&c) = src.get(i) {
        i += 1;
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        if need_indent && c != b'}' && c != b']' {
            need_indent = false;
            depth += 1;
            newline(dst, depth);
        }
        match c {
            b'"' => {
                // A whole string, escapes included, is copied in one piece.
                let end = string_end(src, i);
                dst.extend_from_slice(src.get(i - 1..end).unwrap_or_default());
                i = end;
            }
            b'{' | b'[' => {
                need_indent = true;
                dst.push(c);
            }
            b',' => {
                dst.push(c);
                newline(dst, depth);
            }
            b':' => {
                dst.push(b':');
                dst.push(b' ');
            }
            b'}' | b']' => {
                if need_indent {
                    need_indent = false;
                } else {
                    depth = depth.saturating_sub(1);
                    newline(dst, depth);
                }
                dst.push(c);
            }
            _ => dst.push(c),
        }
    }
}

/// The index just past the closing quote of the JSON string whose contents start at `from`
/// (the end of `src` when it is not closed).
fn string_end(src: &[u8], mut from: usize) -> usize {
    while let Some(n) = src
        .get(from..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        let at = from + n;
        if src.get(at) == Some(&b'"') {
            return at + 1;
        }
        // A backslash: the byte after it is part of the escape, whatever it is.
        from = at + 2;
    }
    src.len()
}

/// Appends one blob as opm's `json.Encoder.Encode` writes it: 4-space indented, then `\n`.
pub fn write_json_blob<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    let compact = to_compact(value)?;
    go_indent(out, &compact, "    ");
    out.push(b'\n');
    Ok(())
}

/// Go's `json.Compact` (HTML escaping off): insignificant whitespace removed, everything else
/// byte for byte; `None` when `text` is not one JSON value.
pub fn compact(text: &str) -> Option<String> {
    serde_json::from_str::<&serde_json::value::RawValue>(text).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    Some(out)
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

    #[test]
    fn one_go_escape_for_writer_and_render() {
        let mut marshal = String::new();
        crate::gocompat::marshal::write_str(&mut marshal, "a<\u{2028}\u{1}\"\\\n", true);
        assert_eq!(marshal, "\"a\\u003c\\u2028\\u0001\\\"\\\\\\n\"");
        let mut encoder = String::new();
        crate::gocompat::marshal::write_str(&mut encoder, "a<\u{2028}\u{1}", false);
        let compact = to_compact("a<\u{2028}\u{1}").unwrap();
        assert_eq!(encoder.as_bytes(), compact.as_slice());
        assert_eq!(encoder, "\"a<\\u2028\\u0001\"");
    }
    use serde_json::value::RawValue;

    #[test]
    fn indents_like_go() {
        let raw = RawValue::from_string(
            r#"{"a" : [ ], "b":{},"c":[1,{"d":"x,y:{z}\"q"}],"e":"<&>"}"#.to_string(),
        )
        .unwrap();
        let mut out = Vec::new();
        write_json_blob(&mut out, &raw).unwrap();
        let want = "{\n    \"a\": [],\n    \"b\": {},\n    \"c\": [\n        1,\n        {\n            \"d\": \"x,y:{z}\\\"q\"\n        }\n    ],\n    \"e\": \"<&>\"\n}\n";
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn escapes_line_separators_and_controls_as_go() {
        let s = "a\u{2028}b\u{2029}c\u{1}\u{8}\t<>&\u{7f}";
        let out = to_compact(s).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\u2028b\\u2029c\\u0001\\b\\t<>&\u{7f}\""
        );
    }
}
