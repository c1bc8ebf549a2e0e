//! go-yaml v2's resolution of plain scalars (`resolve.go`): whether `yes`, `1.10`, `0755` or
//! `2026-07-20` is read back as a string, a bool, a number or null.
//!
//! Why one place: the positioned parser (`crate::yaml`, both its paths) decides the type of each
//! plain scalar it reads and the catalog emitter decides which strings it must quote, and a
//! string that one side calls a number and the other a string comes out changed. The keyword
//! table is shared; the parser and the emitter ask two different questions of it and keep their
//! own number rules, as before: the parser's [`resolve_plain`] accepts the YAML 1.1 number forms
//! manifests use, the emitter's [`resolves_to_string`] follows go-yaml's parsers to the letter
//! (timestamps, `<<`, `-0b` limits), because a string it leaves plain must read back as a string.

/// How a scalar was written: quoted and block scalars are always strings, plain ones are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// `null`, `~` or an empty value.
    Null,
    /// `true`/`false` and the YAML 1.1 forms Kubernetes' decoder accepts (`yes`, `on`, …).
    Bool(bool),
    /// An integer.
    Int,
    /// A floating-point number.
    Float,
    /// Anything else, and every quoted or block scalar.
    Str,
}

/// go-yaml v2's resolve table for the keywords: null (the empty text too) and the YAML 1.1
/// booleans Kubernetes' decoder accepts.
pub fn keyword(text: &str) -> Option<ScalarKind> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Some(ScalarKind::Null),
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "y" | "Y" => {
            Some(ScalarKind::Bool(true))
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "n" | "N" => {
            Some(ScalarKind::Bool(false))
        }
        _ => None,
    }
}

/// go-yaml v2's resolve table for the float keywords: the infinities and not-a-number.
pub fn float_keyword(text: &str) -> Option<f64> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => Some(f64::NAN),
        _ => None,
    }
}

/// Resolves a plain scalar the way go-yaml v2 (behind sigs.k8s.io/yaml) does for the shapes that
/// matter in manifests.
pub fn resolve_plain(text: &str) -> ScalarKind {
    if let Some(kind) = keyword(text) {
        return kind;
    }
    if parse_int(text).is_some() {
        ScalarKind::Int
    } else if parse_float(text).is_some() {
        ScalarKind::Float
    } else {
        ScalarKind::Str
    }
}

/// The value of a plain scalar [`resolve_plain`] calls an integer (YAML 1.1 forms: `_`
/// separators, `0x`, `0o`, `0b`, a leading `0` for octal).
pub fn parse_int(text: &str) -> Option<i64> {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match cleaned.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, cleaned.strip_prefix('+').unwrap_or(&cleaned)),
    };
    if body.is_empty() {
        return None;
    }
    let value = if let Some(hex) = body.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = body.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if let Some(bin) = body.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()?
    } else if body.len() > 1 && body.starts_with('0') && body.bytes().all(|b| b.is_ascii_digit()) {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else if body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<i64>().ok()?
    } else {
        return None;
    };
    Some(if neg { -value } else { value })
}

/// The value of a plain scalar [`resolve_plain`] calls a float (`.inf`, `.nan` and decimal forms).
pub fn parse_float(text: &str) -> Option<f64> {
    if let Some(f) = float_keyword(text) {
        return Some(f);
    }
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let first = body.chars().next()?;
    if !(first.is_ascii_digit() || first == '.') {
        return None;
    }
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+' | b'_'))
    {
        return None;
    }
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    cleaned.parse::<f64>().ok()
}

/// [`resolve_plain`] behind a cheap filter, for `crate::yaml`'s fast path: text that cannot be
/// a number by its first byte or its characters (or has two dots: versions are text) is a
/// string without parsing; otherwise [`resolve_plain`] decides. The filter can call a string
/// what [`resolve_plain`] reads as a number only for odd text (`_1`); the real-catalog test
/// compares both parsers.
pub fn resolve_plain_filtered(text: &str) -> ScalarKind {
    if let Some(kind) = keyword(text) {
        return kind;
    }
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return ScalarKind::Str;
    }
    let special = text.trim_start_matches(['+', '-']);
    let special = special.eq_ignore_ascii_case(".inf") || special.eq_ignore_ascii_case(".nan");
    // Integers and floats use only these characters, and at most one dot (versions are text).
    let numeric_chars = text.bytes().all(|b| {
        b.is_ascii_hexdigit() || matches!(b, b'x' | b'X' | b'o' | b'O' | b'_' | b'+' | b'-' | b'.')
    });
    let dots = text.bytes().filter(|b| *b == b'.').count();
    if !special && (!numeric_chars || dots > 1) {
        return ScalarKind::Str;
    }
    // Number-like text: the general parser's own resolution, so both always agree.
    resolve_plain(text)
}

/// The byte at `i`, or NUL past the end (libyaml's strings end with NUL).
fn at(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

/// go-yaml v2 `resolve("", s)` gives `!!str`: the emitter's exact question (timestamps, `<<`,
/// base-2 forms and Go's number parsers included), which decides whether a string may go plain.
pub fn resolves_to_string(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        return false; // "" is null
    };
    match first {
        b'+'
        | b'-'
        | b'0'..=b'9'
        | b'y'
        | b'Y'
        | b'n'
        | b'N'
        | b't'
        | b'T'
        | b'f'
        | b'F'
        | b'o'
        | b'O'
        | b'~'
        | b'.' => {}
        _ => return true,
    }
    if keyword(s).is_some() || float_keyword(s).is_some() || s == "<<" {
        return false;
    }
    match first {
        b'.' => go_parse_float(s).is_none(),
        b'+' | b'-' | b'0'..=b'9' => {
            if is_timestamp(s) {
                return false;
            }
            let plain = s.replace('_', "");
            if go_parse_int(&plain).is_some() || go_parse_uint(&plain, 0).is_some() {
                return false;
            }
            if yaml_style_float(&plain) && go_parse_float(&plain).is_some() {
                return false;
            }
            if let Some(rest) = plain.strip_prefix("0b") {
                if go_parse_uint(rest, 2).is_some() {
                    return false;
                }
            } else if let Some(rest) = plain.strip_prefix("-0b")
                && go_parse_uint(rest, 2).is_some_and(|u| u <= 1 << 63)
            {
                return false;
            }
            true
        }
        _ => true,
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if at(b, i) == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if at(b, i) == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(at(b, i), b'e' | b'E') {
        i += 1;
        if matches!(at(b, i), b'+' | b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$` (YAML 1.1 sexagesimal floats).
pub fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    // The cheap test first: most strings fail it without a scan for ':'.
    if !at(b, i).is_ascii_digit() || !s.contains(':') {
        return false;
    }
    while at(b, i).is_ascii_digit() || at(b, i) == b'_' {
        i += 1;
    }
    let mut groups = 0;
    while at(b, i) == b':' {
        i += 1;
        // [0-5]?[0-9]: one digit, or two with the first in 0-5.
        let d1 = at(b, i);
        let d2 = at(b, i + 1);
        if (b'0'..=b'5').contains(&d1) && d2.is_ascii_digit() {
            i += 2;
        } else if d1.is_ascii_digit() {
            i += 1;
        } else {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if at(b, i) == b'.' {
        i += 1;
        while at(b, i).is_ascii_digit() || at(b, i) == b'_' {
            i += 1;
        }
    }
    i == b.len()
}

/// Go `strconv.ParseUint(s, base, 64)` for base 0 (prefixes 0x/0o/0b, leading 0 octal) or 2.
fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (mut digits, mut radix) = (s, base);
    if base == 0 {
        radix = 10;
        if let Some(after_zero) = s.strip_prefix('0') {
            let lower = after_zero.bytes().next().map(|c| c.to_ascii_lowercase());
            let rest = after_zero.get(1..).unwrap_or("");
            (radix, digits) = match lower {
                Some(b'b') if s.len() >= 3 => (2, rest),
                Some(b'o') if s.len() >= 3 => (8, rest),
                Some(b'x') if s.len() >= 3 => (16, rest),
                _ => (8, after_zero),
            };
        }
    }
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix)?;
        n = n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let u = go_parse_uint(rest, 0)?;
    if neg {
        if u > 1 << 63 {
            None
        } else {
            Some((u as i64).wrapping_neg())
        }
    } else if u >= 1 << 63 {
        None
    } else {
        Some(u as i64)
    }
}

/// Go `strconv.ParseFloat(s, 64)` for the decimal forms YAML can reach; `None` on syntax
/// errors and on overflow (Go reports `ErrRange` there).
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let body = b
        .strip_prefix(b"+")
        .or_else(|| b.strip_prefix(b"-"))
        .unwrap_or(b);
    let lower = String::from_utf8_lossy(body).to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return Some(0.0);
    }
    if !body
        .iter()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(f)
}

fn days_in(month: u32, year: i64) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// go-yaml v2 `parseTimestamp`: a 4-digit year and `-`, then one of the layouts
/// `2006-1-2T15:4:5.999999999Z07:00` (or `t`), `2006-1-2 15:4:5.999999999`, `2006-1-2`, as Go's
/// `time.Parse` reads them (one or two digits per field, ranges checked).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    // Go getnum(value, false): one or two digits.
    fn num(b: &[u8], i: &mut usize) -> Option<u32> {
        let d0 = at(b, *i);
        if !d0.is_ascii_digit() {
            return None;
        }
        let d1 = at(b, *i + 1);
        if d1.is_ascii_digit() {
            *i += 2;
            Some(u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'))
        } else {
            *i += 1;
            Some(u32::from(d0 - b'0'))
        }
    }
    let year: i64 = s[..4].parse().unwrap_or(0);
    let mut i = 5;
    let Some(month) = num(b, &mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) || at(b, i) != b'-' {
        return false;
    }
    i += 1;
    let Some(day) = num(b, &mut i) else {
        return false;
    };
    if day < 1 || day > days_in(month, year) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let sep = b[i];
    if !matches!(sep, b'T' | b't' | b' ') {
        return false;
    }
    i += 1;
    let time = |i: &mut usize| -> bool {
        let Some(h) = num(b, i) else { return false };
        if h >= 24 || at(b, *i) != b':' {
            return false;
        }
        *i += 1;
        let Some(m) = num(b, i) else { return false };
        if m >= 60 || at(b, *i) != b':' {
            return false;
        }
        *i += 1;
        let Some(sec) = num(b, i) else { return false };
        if sec >= 60 {
            return false;
        }
        if matches!(at(b, *i), b'.' | b',') && at(b, *i + 1).is_ascii_digit() {
            *i += 1;
            while at(b, *i).is_ascii_digit() {
                *i += 1;
            }
        }
        true
    };
    if !time(&mut i) {
        return false;
    }
    if sep == b' ' {
        return i == b.len();
    }
    // Z07:00
    if at(b, i) == b'Z' {
        return i + 1 == b.len();
    }
    let tz = &b[i..];
    if tz.len() != 6 || tz[3] != b':' || !matches!(tz[0], b'+' | b'-') {
        return false;
    }
    let two = |x: &[u8]| -> Option<u32> {
        (x[0].is_ascii_digit() && x[1].is_ascii_digit())
            .then(|| u32::from(x[0] - b'0') * 10 + u32::from(x[1] - b'0'))
    };
    matches!((two(&tz[1..3]), two(&tz[4..6])), (Some(h), Some(m)) if h <= 24 && m <= 60)
}
