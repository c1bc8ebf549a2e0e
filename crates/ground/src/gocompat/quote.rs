//! Go's `%q` (`strconv.Quote`) for the messages and graph texts that must read as Go's.
//!
//! Why one place: opm's serve errors, `opm alpha render-graph`'s Mermaid labels and
//! operator-controller's validator messages all quote names with `%q`, and olmpack reproduces
//! each of them; two copies of the escape table drift apart one character at a time.

use std::fmt::Write;

/// Go's `%q` of a string: double quotes, `\"` and `\\`, Go's short escapes (`\a \b \f \n \r \t
/// \v`), `\xNN` for the other ASCII controls and DEL, `\uNNNN` for the C1 controls; printable
/// Unicode is kept as it is.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // `char::is_control` is the Cc category: all of it lies below U+10000.
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The narrower `%q` the OLM v1 validator messages have always used: `\"`, `\\`, `\n`, `\t`,
/// `\r` and `\xNN` for every other ASCII control and DEL; C1 controls are kept as they are.
///
/// Why a second function: it differs from [`go_quote`] (and from Go) only for `\a \b \f \v` and
/// the C1 controls, which no package, channel or CRD name can hold; the OLM v1 messages keep
/// their bytes until that difference is settled against operator-controller.
pub fn go_quote_short(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(go_quote("\u{1}"), "\"\\x01\"");
        assert_eq!(go_quote("\u{7}\u{b}\u{85}"), "\"\\a\\v\\u0085\"");
        assert_eq!(go_quote("é"), "\"é\"");
    }

    #[test]
    fn the_short_form_differs_only_for_rare_controls() {
        for s in ["a\"b\\c\n", "\u{1}\t\r\u{7f}", "é", "plain-name.v1.2.3"] {
            assert_eq!(go_quote_short(s), go_quote(s), "{s:?}");
        }
        assert_eq!(go_quote_short("\u{7}\u{85}"), "\"\\x07\u{85}\"");
    }
}
