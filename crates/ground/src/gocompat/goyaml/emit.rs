//! opm's YAML output, byte for byte: `sigs.k8s.io/yaml.JSONToYAML` on go-yaml v2.
//!
//! Why a port and not a YAML crate: opm turns each blob into JSON, lets go-yaml v2 read that
//! JSON back (which decides which numbers are ints or floats) and writes it with go-yaml v2's
//! emitter (a port of libyaml). The checked-in `catalog.yaml` files of the public catalogs are
//! that emitter's bytes: keys in go-yaml's "natural" order, `|`/`|-` blocks, strings quoted when
//! YAML 1.1 would read them as another type (`"2026-07-20T09:40:28Z"`, `"yes"`, `"1.0"`), and long
//! plain scalars folded after column 80. No Rust YAML writer reproduces those rules, so this
//! module re-implements the parts of the emitter that JSON input can reach (block mappings and
//! sequences, empty flow collections, the four scalar styles), reading its logic from go-yaml v2
//! (`emitterc.go`, `encode.go`, `resolve.go`, `sorter.go`).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::cmp::Ordering;

use super::resolve;

const BEST_WIDTH: usize = 80;
const BEST_INDENT: isize = 2;

/// Appends `value` as go-yaml v2 marshals the same data decoded from JSON (no leading `---`).
pub fn json_to_yaml(out: &mut Vec<u8>, value: &Value) {
    emit(out, &Tree::from_value(value));
}

/// Appends the go-yaml v2 form of the JSON text `json` (no leading `---`); `Err` when the text
/// is not JSON serde_json reads (then nothing is written).
///
/// Why not through [`serde_json::Value`]: a tree that borrows its strings from the text and keeps
/// members in a `Vec` costs one allocation per object or array instead of one per string and
/// per `BTreeMap` node, and most of a catalog's bytes are strings without escapes.
pub fn json_text_to_yaml(out: &mut Vec<u8>, json: &[u8]) -> Result<(), serde_json::Error> {
    // One UTF-8 check of the whole text instead of one per string.
    let tree: Tree = match std::str::from_utf8(json) {
        Ok(text) => serde_json::from_str(text)?,
        Err(_) => serde_json::from_slice(json)?,
    };
    emit(out, &tree);
    Ok(())
}

fn emit(out: &mut Vec<u8>, tree: &Tree) {
    let mut e = Emitter {
        out,
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
    };
    e.node(tree, Ctx::ROOT);
    // Document end: the emitter ends the last line.
    e.write_indent();
}

/// A JSON number as serde_json's `Number` keeps it (what go-yaml then formats).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    I64(i64),
    U64(u64),
    Float(f64),
}

/// A decoded JSON value, as [`serde_json::Value`] would hold it, with strings borrowed from the
/// text when they have no escapes and object members in go-yaml's key order. Members are
/// deduplicated as `serde_json::Map` does (the last value of a repeated key wins) and put in
/// byte order before go-yaml's sort, so the sort sees the same sequence as it would from a
/// `Value`'s map (go-yaml's order is not a total order on every input, so the input order of
/// the sort matters).
#[derive(Debug, Clone, PartialEq)]
enum Tree<'a> {
    Null,
    Bool(bool),
    Number(Num),
    Str(Cow<'a, str>),
    Array(Vec<Tree<'a>>),
    Object(Vec<(Cow<'a, str>, Tree<'a>)>),
}

impl<'a> Tree<'a> {
    fn from_value(v: &'a Value) -> Tree<'a> {
        match v {
            Value::Null => Tree::Null,
            Value::Bool(b) => Tree::Bool(*b),
            Value::Number(n) => Tree::Number(if let Some(i) = n.as_i64() {
                Num::I64(i)
            } else if let Some(u) = n.as_u64() {
                Num::U64(u)
            } else {
                Num::Float(n.as_f64().unwrap_or(0.0))
            }),
            Value::String(s) => Tree::Str(Cow::Borrowed(s)),
            Value::Array(items) => Tree::Array(items.iter().map(Tree::from_value).collect()),
            Value::Object(map) => {
                // The map iterates in byte order without repeats already.
                let mut entries: Vec<(Cow<str>, Tree)> = map
                    .iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Tree::from_value(v)))
                    .collect();
                entries.sort_by(|a, b| go_key_cmp(&a.0, &b.0));
                Tree::Object(entries)
            }
        }
    }
}

/// A string that borrows from the input when serde_json can hand it over unescaped.
struct Str<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Tree<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

/// serde_json's `ValueVisitor`, building a [`Tree`].
struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Tree<'de>, E> {
        Ok(Tree::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Tree<'de>, E> {
        Ok(Tree::Number(if i < 0 {
            Num::I64(i)
        } else {
            Num::U64(i as u64)
        }))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Tree<'de>, E> {
        Ok(Tree::Number(Num::U64(u)))
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Tree<'de>, E> {
        // serde_json's `Number::from_f64` refuses non-finite values: `Value::Null`.
        Ok(if f.is_finite() {
            Tree::Number(Num::Float(f))
        } else {
            Tree::Null
        })
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Tree<'de>, E> {
        Ok(Tree::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Tree<'de>, E> {
        Ok(Tree::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Tree<'de>, E> {
        Ok(Tree::Str(Cow::Owned(s)))
    }
    fn visit_none<E: de::Error>(self) -> Result<Tree<'de>, E> {
        Ok(Tree::Null)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Tree<'de>, E> {
        Ok(Tree::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree<'de>, D::Error> {
        Deserialize::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree<'de>, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Tree<'de>)> = Vec::new();
        while let Some(Str(k)) = map.next_key()? {
            let v: Tree = map.next_value()?;
            entries.push((k, v));
        }
        // `serde_json::Map` order first (bytes, last repeat wins), then go-yaml's.
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    std::mem::swap(later, kept);
                    true
                } else {
                    false
                }
            });
        }
        entries.sort_by(|a, b| go_key_cmp(&a.0, &b.0));
        Ok(Tree::Object(entries))
    }
}

#[derive(Clone, Copy)]
struct Ctx {
    sequence: bool,
    mapping: bool,
    simple_key: bool,
}

impl Ctx {
    const ROOT: Ctx = Ctx {
        sequence: false,
        mapping: false,
        simple_key: false,
    };
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter<'o> {
    out: &'o mut Vec<u8>,
    column: usize,
    indent: isize,
    indents: Vec<isize>,
    whitespace: bool,
    indention: bool,
}

/// The byte at `i`, or NUL past the end (libyaml's strings end with NUL).
fn at(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

fn width(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        1
    }
}

fn is_space(v: &[u8], i: usize) -> bool {
    at(v, i) == b' '
}

fn is_blank(v: &[u8], i: usize) -> bool {
    matches!(at(v, i), b' ' | b'\t')
}

fn is_break(v: &[u8], i: usize) -> bool {
    let c = at(v, i);
    c == b'\r'
        || c == b'\n'
        || (c == 0xC2 && at(v, i + 1) == 0x85)
        || (c == 0xE2 && at(v, i + 1) == 0x80 && (at(v, i + 2) == 0xA8 || at(v, i + 2) == 0xA9))
}

fn is_blankz(v: &[u8], i: usize) -> bool {
    is_blank(v, i) || is_break(v, i) || at(v, i) == 0
}

fn is_printable(v: &[u8], i: usize) -> bool {
    let c = at(v, i);
    let c1 = at(v, i + 1);
    let c2 = at(v, i + 2);
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (c == 0xC2 && c1 >= 0xA0)
        || (c > 0xC2 && c < 0xED)
        || (c == 0xED && c1 < 0xA0)
        || c == 0xEE
        || (c == 0xEF && !(c1 == 0xBB && c2 == 0xBF) && !(c1 == 0xBF && (c2 == 0xBE || c2 == 0xBF)))
}

/// go-yaml's `is_bom` looks at the start of the value whatever the index (kept as is).
fn starts_with_bom(v: &[u8]) -> bool {
    v.starts_with(&[0xEF, 0xBB, 0xBF])
}

#[cfg_attr(test, derive(Debug, PartialEq))]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// Eight bytes at `i` as one word (little-endian), `None` near the end.
fn word(v: &[u8], i: usize) -> Option<u64> {
    let bytes = v.get(i..i.checked_add(8)?)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    Some(u64::from_le_bytes(w))
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `w` is `b` (exact for "any").
fn has_byte(w: u64, b: u8) -> bool {
    let x = w ^ (LO * u64::from(b));
    (x.wrapping_sub(LO) & !x & HI) != 0
}

/// Eight ASCII bytes with no line break (and no space when `space_ends`): one column each.
fn line_ascii_word(w: u64, space_ends: bool) -> bool {
    let stops = w & HI != 0
        || has_byte(w, b'\n')
        || has_byte(w, b'\r')
        || (space_ends && has_byte(w, b' '));
    !stops
}

/// From `i`, the end of the run of bytes up to a line break (or a space when `space_ends`) and
/// the number of characters in it.
fn line_run(v: &[u8], i: usize, space_ends: bool) -> (usize, usize) {
    // Usually the run is ASCII up to the next '\n' (or space): found with memchr and counted
    // as one column per byte. Any other byte sends the run through the loop below.
    let rest = v.get(i..).unwrap_or_default();
    let stop = if space_ends {
        memchr::memchr3(b' ', b'\n', b'\r', rest)
    } else {
        memchr::memchr2(b'\n', b'\r', rest)
    }
    .unwrap_or(rest.len());
    if rest.get(..stop).is_some_and(<[u8]>::is_ascii) {
        return (i + stop, stop);
    }
    line_run_bytes(v, i, space_ends)
}

/// [`line_run`] a word or a byte at a time (non-ASCII text: characters are counted and
/// U+0085, U+2028 and U+2029 end the run).
fn line_run_bytes(v: &[u8], mut i: usize, space_ends: bool) -> (usize, usize) {
    let mut chars = 0;
    loop {
        while let Some(w) = word(v, i) {
            if !line_ascii_word(w, space_ends) {
                break;
            }
            i += 8;
            chars += 8;
        }
        match v.get(i) {
            None => break,
            Some(b' ') if space_ends => break,
            Some(&b) => {
                if is_break(v, i) {
                    break;
                }
                if b & 0xC0 != 0x80 {
                    chars += 1;
                }
                i += 1;
            }
        }
    }
    (i, chars)
}

/// Printable ASCII (space included) other than the two indicators checked after the first
/// position (`:` and `#`): inside a scalar, such a byte only sets the "previous character"
/// flags of [`analyze`].
fn is_text_ascii(b: u8) -> bool {
    (0x20..=0x7E).contains(&b) && b != b':' && b != b'#'
}

/// Whether all eight bytes of `w` are [`is_text_ascii`] (exact).
fn text_ascii_word(w: u64) -> bool {
    // Some byte below 0x20 (exact for "any": the borrow only runs into higher lanes).
    let below = w.wrapping_sub(LO * 0x20) & !w & HI != 0;
    // Some byte at or above 0x7F: adding 1 to the low seven bits reaches bit 7 exactly then.
    let above = ((w & !HI).wrapping_add(LO) | w) & HI != 0;
    !(below || above || has_byte(w, b':') || has_byte(w, b'#'))
}

/// `yaml_emitter_analyze_scalar` (block context only: flow scalars never occur).
fn analyze(v: &[u8]) -> Analysis {
    analyze_scan::<true>(v)
}

/// [`analyze`]'s loop; without `FAST` it is libyaml's loop one character at a time, the
/// reference the unit tests hold the fast path to (one loop, so the two cannot drift apart).
fn analyze_scan<const FAST: bool>(v: &[u8]) -> Analysis {
    if v.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = v.starts_with(b"---") || v.starts_with(b"...");
    let mut line_breaks = false;
    let mut special = false;
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let mut preceded_by_ws = true;
    let (mut prev_space, mut prev_break) = (false, false);
    let mut i = 0;
    while i < v.len() {
        // Fast path: after the first byte, a run of printable ASCII other than ':' and '#'
        // (spaces included) changes only what its first and last bytes decide, read here once
        // instead of byte by byte (most of a base64 payload or a description).
        if FAST && i > 0 && is_text_ascii(v[i]) {
            let start = i;
            while let Some(w) = word(v, i) {
                if !text_ascii_word(w) {
                    break;
                }
                i += 8;
            }
            while i < v.len() && is_text_ascii(v[i]) {
                i += 1;
            }
            // A space right after a line break; a space as the very last character.
            if prev_break && v[start] == b' ' {
                break_space = true;
            }
            let last_space = v[i - 1] == b' ';
            if last_space && i == v.len() {
                trailing_space = true;
            }
            prev_space = last_space;
            prev_break = false;
            preceded_by_ws = last_space;
            continue;
        }
        let w = width(v[i]);
        let followed_by_ws = i + w >= v.len() || is_blank(v, i + w);
        let c = v[i];
        if i == 0 {
            match c {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => block_indicators = true,
                b'?' | b':' | b'-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                b':' if followed_by_ws => block_indicators = true,
                b'#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(v, i) {
            special = true;
        }
        if is_space(v, i) {
            if i == 0 {
                leading_space = true;
            }
            if i + w == v.len() {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(v, i) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + w == v.len() {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = is_blankz(v, i);
        i += w;
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

impl Emitter<'_> {
    fn put(&mut self, b: u8) {
        self.out.push(b);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push(b'\n');
        self.column = 0;
    }

    /// Copies one character (all its bytes) and advances the column by one.
    fn write(&mut self, v: &[u8], i: &mut usize) {
        let w = width(v[*i]).min(v.len() - *i);
        self.out.extend_from_slice(&v[*i..*i + w]);
        self.column += 1;
        *i += w;
    }

    fn write_all(&mut self, s: &[u8]) {
        let mut i = 0;
        while i < s.len() {
            self.write(s, &mut i);
        }
    }

    fn write_break(&mut self, v: &[u8], i: &mut usize) {
        if v[*i] == b'\n' {
            self.put_break();
            *i += 1;
        } else {
            self.write(v, i);
            self.column = 0;
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        if self.column < indent {
            let n = indent - self.column;
            self.out.resize(self.out.len() + n, b' ');
            self.column = indent;
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &[u8], need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(b' ');
        }
        self.write_all(ind);
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn node(&mut self, v: &Tree, ctx: Ctx) {
        match v {
            Tree::Object(entries) if entries.is_empty() => self.empty_flow(b"{", b"}"),
            Tree::Array(items) if items.is_empty() => self.empty_flow(b"[", b"]"),
            Tree::Object(entries) => self.block_mapping(entries),
            Tree::Array(items) => self.block_sequence(items, ctx),
            Tree::Null => self.scalar("null", Style::Plain, ctx),
            Tree::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, ctx),
            Tree::Number(n) => {
                // serde_json's `Number::as_i64`, then `as_u64`, then the float.
                let text = match *n {
                    Num::I64(i) => i.to_string(),
                    Num::U64(u) => u.to_string(),
                    Num::Float(f) => go_format_float(f),
                };
                self.scalar(&text, Style::Plain, ctx)
            }
            Tree::Str(s) => self.scalar(s, string_style(s), ctx),
        }
    }

    fn empty_flow(&mut self, open: &[u8], close: &[u8]) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn block_sequence(&mut self, items: &[Tree], ctx: Ctx) {
        let indentless = ctx.mapping && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator(b"-", true, false, true);
            self.node(
                item,
                Ctx {
                    sequence: true,
                    mapping: false,
                    simple_key: false,
                },
            );
        }
        self.pop_indent();
    }

    fn block_mapping(&mut self, entries: &[(Cow<str>, Tree)]) {
        self.increase_indent(false, false);
        for (k, v) in entries {
            self.write_indent();
            let simple =
                k.len() <= 128 && !k.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']);
            let value_ctx = Ctx {
                sequence: false,
                mapping: true,
                simple_key: false,
            };
            if simple {
                self.scalar(
                    k,
                    string_style(k),
                    Ctx {
                        sequence: false,
                        mapping: true,
                        simple_key: true,
                    },
                );
                self.write_indicator(b":", false, false, false);
            } else {
                self.write_indicator(b"?", true, false, true);
                self.scalar(k, string_style(k), value_ctx);
                self.write_indent();
                self.write_indicator(b":", true, false, true);
            }
            self.node(v, value_ctx);
        }
        self.pop_indent();
    }

    fn scalar(&mut self, value: &str, requested: Style, ctx: Ctx) {
        let _ = ctx.sequence;
        let v = value.as_bytes();
        let a = analyze(v);
        let mut style = requested;
        if ctx.simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (v.is_empty() && ctx.simple_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || ctx.simple_key) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let allow_breaks = !ctx.simple_key;
        match style {
            Style::Plain => self.write_plain(v, allow_breaks),
            Style::Single => self.write_single(v, allow_breaks),
            Style::Double => self.write_double(v, allow_breaks),
            Style::Literal => self.write_literal(v),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, v: &[u8], allow_breaks: bool) {
        if !self.whitespace {
            self.put(b' ');
        }
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < v.len() {
            if is_space(v, i) {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !is_space(v, i + 1) {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(v, &mut i);
                }
                spaces = true;
            } else if is_break(v, i) {
                if !breaks && v[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(v, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(v, &mut i);
                // The rest of a run of ordinary characters is copied at once: each would only
                // be written and counted as one column.
                let start = i;
                let (end, chars) = line_run(v, i, true);
                i = end;
                self.out.extend_from_slice(&v[start..i]);
                self.column += chars;
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, v: &[u8], allow_breaks: bool) {
        self.write_indicator(b"'", true, false, false);
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < v.len() {
            if is_space(v, i) {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i < v.len() - 1
                    && !is_space(v, i + 1)
                {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(v, &mut i);
                }
                spaces = true;
            } else if is_break(v, i) {
                if !breaks && v[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(v, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if v[i] == b'\'' {
                    self.put(b'\'');
                }
                self.write(v, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator(b"'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double(&mut self, v: &[u8], allow_breaks: bool) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        let mut spaces = false;
        self.write_indicator(b"\"", true, false, false);
        let bom = starts_with_bom(v);
        let mut i = 0;
        while i < v.len() {
            if !is_printable(v, i) || bom || is_break(v, i) || v[i] == b'"' || v[i] == b'\\' {
                let octet = v[i];
                let (w, mut ch) = if octet & 0x80 == 0 {
                    (1, u32::from(octet & 0x7F))
                } else if octet & 0xE0 == 0xC0 {
                    (2, u32::from(octet & 0x1F))
                } else if octet & 0xF0 == 0xE0 {
                    (3, u32::from(octet & 0x0F))
                } else {
                    (4, u32::from(octet & 0x07))
                };
                for k in 1..w {
                    ch = (ch << 6) + u32::from(at(v, i + k) & 0x3F);
                }
                i += w;
                self.put(b'\\');
                let short = match ch {
                    0x00 => Some(b'0'),
                    0x07 => Some(b'a'),
                    0x08 => Some(b'b'),
                    0x09 => Some(b't'),
                    0x0A => Some(b'n'),
                    0x0B => Some(b'v'),
                    0x0C => Some(b'f'),
                    0x0D => Some(b'r'),
                    0x1B => Some(b'e'),
                    0x22 => Some(b'"'),
                    0x5C => Some(b'\\'),
                    0x85 => Some(b'N'),
                    0xA0 => Some(b'_'),
                    0x2028 => Some(b'L'),
                    0x2029 => Some(b'P'),
                    _ => None,
                };
                match short {
                    Some(c) => self.put(c),
                    None => {
                        let (letter, digits) = if ch <= 0xFF {
                            (b'x', 2)
                        } else if ch <= 0xFFFF {
                            (b'u', 4)
                        } else {
                            (b'U', 8)
                        };
                        self.put(letter);
                        for k in (0..digits).rev() {
                            self.put(HEX[((ch >> (k * 4)) & 0x0F) as usize]);
                        }
                    }
                }
                spaces = false;
            } else if is_space(v, i) {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i < v.len() - 1 {
                    self.write_indent();
                    if is_space(v, i + 1) {
                        self.put(b'\\');
                    }
                    i += 1;
                } else {
                    self.write(v, &mut i);
                }
                spaces = true;
            } else {
                self.write(v, &mut i);
                spaces = false;
            }
        }
        self.write_indicator(b"\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_block_hints(&mut self, v: &[u8]) {
        if is_space(v, 0) || is_break(v, 0) {
            self.write_indicator(b"2", false, false, false);
        }
        let chomp: Option<&[u8]> = if v.is_empty() {
            Some(b"-")
        } else {
            let mut i = v.len() - 1;
            while i > 0 && v[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            if !is_break(v, i) {
                Some(b"-")
            } else if i == 0 {
                Some(b"+")
            } else {
                i -= 1;
                while i > 0 && v[i] & 0xC0 == 0x80 {
                    i -= 1;
                }
                if is_break(v, i) { Some(b"+") } else { None }
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(c, false, false, false);
        }
    }

    fn write_literal(&mut self, v: &[u8]) {
        self.write_indicator(b"|", true, false, false);
        self.write_block_hints(v);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        let mut i = 0;
        while i < v.len() {
            if is_break(v, i) {
                self.write_break(v, &mut i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                // A whole line at once: characters up to the next break are only copied.
                let start = i;
                let (end, chars) = line_run(v, i, false);
                i = end;
                self.out.extend_from_slice(&v[start..i]);
                self.column += chars;
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// The style go-yaml v2's encoder asks for a string (`encoder.stringv`): a literal block when
/// it has a newline, plain when YAML 1.1 would read it back as the same string, else double
/// quotes. The emitter may still fall back to another style (`analyze`).
fn string_style(s: &str) -> Style {
    if s.contains('\n') {
        Style::Literal
    } else if resolve::resolves_to_string(s) && !resolve::is_base60_float(s) {
        Style::Plain
    } else {
        Style::Double
    }
}

/// Go `strconv.FormatFloat(f, 'g', -1, 64)` as go-yaml writes floats (`.inf`, `.nan`).
fn go_format_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    // Go's shortest 'g' uses %e when the exponent is < -4 or >= 6 (eprec = 6 when shortest).
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// go-yaml v2's map key order (`keyList.Less`): runs of digits compare as numbers, letters
/// sort after non-letters, otherwise by code point.
pub fn go_key_cmp(a: &str, b: &str) -> Ordering {
    if go_key_less(a, b) {
        Ordering::Less
    } else if go_key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn go_key_less(a: &str, b: &str) -> bool {
    // Keys are almost always ASCII: compare bytes without collecting the characters.
    if a.is_ascii() && b.is_ascii() {
        return key_less(a.as_bytes(), b.as_bytes());
    }
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    key_less(&ar, &br)
}

/// `keyList.Less` over the runes of two keys (bytes when both are ASCII, where they agree).
fn key_less<T: Copy + Into<char>>(ar: &[T], br: &[T]) -> bool {
    let ch = |s: &[T], i: usize| -> char { s.get(i).map_or('\0', |c| (*c).into()) };
    let digit = |c: char| c.is_ascii_digit();
    for i in 0..ar.len().min(br.len()) {
        let (ai_c, bi_c) = (ch(ar, i), ch(br, i));
        if ai_c == bi_c {
            continue;
        }
        let al = ai_c.is_alphabetic();
        let bl = bi_c.is_alphabetic();
        if al && bl {
            return ai_c < bi_c;
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ai_c == '0' || bi_c == '0' {
            let mut j = i;
            while j > 0 && digit(ch(ar, j - 1)) {
                j -= 1;
                if ch(ar, j) != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && digit(ch(ar, ai)) {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ch(ar, ai) as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && digit(ch(br, bi)) {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(ch(br, bi) as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ai_c < bi_c;
    }
    ar.len() < br.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn y(v: Value) -> String {
        let mut out = Vec::new();
        json_to_yaml(&mut out, &v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn quotes_what_yaml_1_1_would_retype() {
        let got = y(json!({
            "a": "2026-07-20T09:40:28Z", "b": "yes", "c": "1.0", "d": "", "e": "1:20",
            "f": "0x1F", "g": "1.2.3", "h": "- x", "i": "a: b", "j": "09", "k": "v1", "l": "~"
        }));
        assert_eq!(
            got,
            "a: \"2026-07-20T09:40:28Z\"\nb: \"yes\"\nc: \"1.0\"\nd: \"\"\ne: \"1:20\"\nf: \"0x1F\"\ng: 1.2.3\nh: '- x'\ni: 'a: b'\nj: \"09\"\nk: v1\nl: \"~\"\n"
        );
    }

    #[test]
    fn blocks_sequences_and_empty_collections() {
        let got = y(
            json!({"m": {"l": ["a\nb\n", "c\n\n", " d\ne"], "e": [], "o": {}}, "n": [{"x": 1, "y": [true, null]}]}),
        );
        assert_eq!(
            got,
            "m:\n  e: []\n  l:\n  - |\n    a\n    b\n  - |+\n    c\n\n  - |2-\n     d\n    e\n  o: {}\n\"n\":\n- x: 1\n  \"y\":\n  - true\n  - null\n"
        );
    }

    #[test]
    fn folds_long_plain_scalars_after_column_80() {
        let words = "word ".repeat(30);
        let got = y(json!({ "description": words.trim_end() }));
        let first = got.lines().next().unwrap();
        assert!(first.len() > 80 && first.len() < 90, "{first}");
        assert!(got.lines().nth(1).unwrap().starts_with("  word"));
    }

    #[test]
    fn word_predicates_agree_with_the_byte_checks() {
        for b in 0..=255u8 {
            for lane in 0..8 {
                let mut w = [b'a'; 8];
                w[lane] = b;
                let word = u64::from_le_bytes(w);
                let ascii_line = b < 0x80 && b != b'\n' && b != b'\r';
                assert_eq!(line_ascii_word(word, false), ascii_line, "{b:#x}@{lane}");
                assert_eq!(
                    line_ascii_word(word, true),
                    ascii_line && b != b' ',
                    "{b:#x}@{lane}"
                );
            }
        }
        let text = "abcdefghijkl\u{e9}mnopqrstuvwxyz0123 next\u{2028}x\nlast".as_bytes();
        for space_ends in [false, true] {
            for i in 0..text.len() {
                assert_eq!(
                    line_run(text, i, space_ends),
                    line_run_bytes(text, i, space_ends),
                    "{i} {space_ends}"
                );
            }
        }
        assert_eq!(line_run(text, 0, true), (32, 31));
        assert_eq!(line_run(text, 0, false), (37, 36));
        assert_eq!(line_run(text, 37, false), (37, 0));
        assert_eq!(line_run(text, 40, false), (41, 1));
    }

    #[test]
    fn text_path_writes_what_the_value_path_writes() {
        let texts = [
            r#"{"b":1,"a":[1.0,-2,18446744073709551615,1e300,0.5,-0.0,1e-7,"x"],"a10":{},"a9":[],"c":null,"d":true}"#,
            r#"{"k":1,"k":2,"K":3,"a":{"z":"\u2028\n","y":"quoted \"text\" \\ here","x":"1.0"}}"#,
            r#"[{"10":"a","9":"b","a_b":1,"ab":2,"\u00e4":3,"z":4,"a1":{"b":[{"c":"d\ne\n"}]}}]"#,
            r#"{"z":0,"y":0,"x":0,"w":0,"v":0,"u":0,"t":0,"s":0,"r":0,"q":0,"p":0,"o":0,"n":0,"m":0,"l":0,"k":0,"j":0,"i":0,"h":0,"g":0,"f":0,"e":0,"y":1}"#,
            r#""plain""#,
            "12",
            "-0",
            "123456789012345678901234567890",
            "-9223372036854775808",
        ];
        for t in texts {
            let v: Value = serde_json::from_str(t).unwrap();
            let mut want = Vec::new();
            json_to_yaml(&mut want, &v);
            let mut got = Vec::new();
            json_text_to_yaml(&mut got, t.as_bytes()).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap(),
                "{t}"
            );
        }
        assert!(json_text_to_yaml(&mut Vec::new(), b"{\"a\":").is_err());
    }

    #[test]
    fn analysis_fast_path_agrees_with_the_bytewise_loop() {
        let pieces = [
            "a",
            " ",
            "  ",
            ":",
            "#",
            "\n",
            "\r",
            "-",
            "?",
            "'",
            "\t",
            "\u{e9}",
            "\u{2028}",
            "\u{85}",
            "\u{feff}",
            "x: y",
            "a #b",
            "0123456789abcdef",
            "\u{1}",
            "~",
            "{",
        ];
        let mut cases: Vec<String> = vec![String::new()];
        for a in &pieces {
            for b in &pieces {
                for c in &pieces {
                    cases.push(format!("{a}{b}{c}"));
                    cases.push(format!("{a}plain text of some length{b} and more{c}"));
                    cases.push(format!("{b}{}{c}{a}", "long run ".repeat(3)));
                }
            }
        }
        for case in &cases {
            assert_eq!(
                analyze(case.as_bytes()),
                analyze_scan::<false>(case.as_bytes()),
                "{case:?}"
            );
        }
    }

    #[test]
    fn natural_key_order_and_floats() {
        assert_eq!(go_key_cmp("a10", "a9"), Ordering::Greater);
        assert_eq!(go_key_cmp("a_b", "ab"), Ordering::Less);
        assert_eq!(go_format_float(1e6), "1e+06");
        assert_eq!(go_format_float(123456.5), "123456.5");
        assert_eq!(go_format_float(0.5), "0.5");
        assert_eq!(go_format_float(1.5e-7), "1.5e-07");
    }
}
