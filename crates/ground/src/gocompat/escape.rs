//! How Go's `encoding/json` escapes one character: shared by every writer that must produce Go's
//! bytes (the catalog writers, the marshal payloads, the serve cache), so a string never comes out
//! differently depending on which path wrote it.

/// How Go's `encoding/json` writes one character inside a string: `Some(escape)` when escaped,
/// `None` when written as it is. `html` selects `json.Marshal` (escapes `<`, `>`, `&`) over an
/// encoder with `SetEscapeHTML(false)`. Go escapes U+2028 and U+2029 in both modes, and control
/// characters as Go 1.22 and later do (`\b`, `\f`, `\n`, `\r`, `\t`, else `\u00xx`).
///
/// Why one function: the render payloads (`gocompat::marshal`) and the writers must escape the same
/// way, or a string would come out differently depending on which path wrote it.
pub fn go_escape(c: char, html: bool) -> Option<GoEscape> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let named = |s: &[u8]| {
        let mut e = GoEscape {
            buf: [0; 6],
            len: s.len(),
        };
        e.buf[..s.len()].copy_from_slice(s);
        Some(e)
    };
    let unicode = |c: u32| {
        let hex = |shift: u32| HEX[((c >> shift) & 0xf) as usize];
        Some(GoEscape {
            buf: [b'\\', b'u', hex(12), hex(8), hex(4), hex(0)],
            len: 6,
        })
    };
    match c {
        '"' => named(b"\\\""),
        '\\' => named(b"\\\\"),
        '\n' => named(b"\\n"),
        '\r' => named(b"\\r"),
        '\t' => named(b"\\t"),
        '\u{8}' => named(b"\\b"),
        '\u{c}' => named(b"\\f"),
        '<' | '>' | '&' if html => unicode(c as u32),
        '\u{2028}' | '\u{2029}' => unicode(c as u32),
        c if (c as u32) < 0x20 => unicode(c as u32),
        _ => None,
    }
}

/// The bytes of one escape from [`go_escape`] (at most `\uXXXX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoEscape {
    buf: [u8; 6],
    len: usize,
}

impl GoEscape {
    /// The escape as written, e.g. `\n` or `\u2028`.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&self.buf)
    }

    /// The escape as text (always ASCII).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}
