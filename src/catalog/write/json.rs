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

/// serde_json's compact formatter with Go's string escaping: U+2028 and U+2029 are written as
/// `\u2028`/`\u2029` (Go does it even with HTML escaping off); `<`, `>` and `&` stay raw.
/// Control characters are escaped as Go 1.22 and later do (`\b`, `\f`, `\n`, `\r`, `\t`, else
/// `\u00xx`), which is what serde_json already does.
struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let esc = match c {
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..i])?;
            writer.write_all(esc.as_bytes())?;
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let s: &[u8] = match char_escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(b) => {
                let buf = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 0xf) as usize],
                ];
                return writer.write_all(&buf);
            }
        };
        writer.write_all(s)
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
    let mut in_string = false;
    let mut escaped = false;
    let newline = |dst: &mut Vec<u8>, depth: usize| {
        dst.push(b'\n');
        for _ in 0..depth {
            dst.extend_from_slice(indent.as_bytes());
        }
    };
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        i += 1;
        if in_string {
            if escaped {
                dst.push(c);
                escaped = false;
                continue;
            }
            if c == b'\\' {
                dst.push(c);
                escaped = true;
                continue;
            }
            if c == b'"' {
                dst.push(c);
                in_string = false;
                continue;
            }
            // Copy the rest of the plain run up to the next quote or backslash at once.
            let start = i - 1;
            while i < src.len() && src[i] != b'"' && src[i] != b'\\' {
                i += 1;
            }
            dst.extend_from_slice(&src[start..i]);
            continue;
        }
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
                in_string = true;
                dst.push(c);
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
