//! opm's JSON output, byte for byte.
//!
//! Why a custom writer: opm writes each blob with Go's `json.Encoder` (`SetIndent("", "    ")`,
//! `SetEscapeHTML(false)`). That is a compact `json.Marshal` followed by Go's `json.Indent`, and
//! both differ from serde_json's pretty printer: Go escapes U+2028 and U+2029, keeps the bytes of
//! raw property values (`json.RawMessage`) as they were and only re-indents them, and writes empty
//! objects and arrays as `{}` and `[]`. Catalogs are diffed and checked in, so every byte counts.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io;

pub use crate::gocompat::escape::{GoEscape, go_escape};

/// serde_json's compact formatter with Go's string escaping ([`go_escape`], HTML escaping off):
/// serde_json already escapes quotes, backslashes and control characters; Go also escapes U+2028
/// and U+2029, which serde_json passes to [`Formatter::write_string_fragment`].
struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
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

    fn write_char_escape<W: ?Sized + io::Write>(
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
        match go_escape(c, false) {
            Some(esc) => writer.write_all(esc.as_bytes()),
            None => {
                let mut buf = [0; 4];
                writer.write_all(c.encode_utf8(&mut buf).as_bytes())
            }
        }
    }
}

/// Compact JSON as Go's `json.Marshal` with HTML escaping off writes it (struct field order from
/// the model's `Serialize`, raw values verbatim).
pub fn to_compact<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    value.serialize(&mut ser)?;
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

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
