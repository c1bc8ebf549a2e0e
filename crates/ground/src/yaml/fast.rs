//! A fast path for the YAML that manifests and catalogs are made of: block mappings and
//! sequences with plain, quoted, literal and folded block scalars, flow collections of scalars
//! (`[a, "b"]`, `{k: v}`, over several lines when the breaks fall between tokens), simple or
//! quoted keys, comments, anchors and aliases in block context. It builds the same positioned
//! tree as [`crate::yaml`] and gives up (`None`) on anything outside that subset —
//! flow continuation lines not deeper than their block, tags, tabs outside
//! block scalars, directives, duplicate and merge keys, explicit keys, anything near a limit —
//! so the general parser handles every other input and every error. Tests
//! (tests/library/yaml_fast.rs, the fuzz harness) check that both parsers build identical trees.
//!
//! Why: the general event parser runs at under 20 MB/s, far below the 250 MB/s goal, and real
//! bundles and catalogs are almost entirely this subset.

use crate::gocompat::goyaml::resolve::resolve_plain_filtered as resolve_plain;
use crate::yaml::{Document, Key, MAX_DEPTH, MAX_NODES, Node, ScalarKind, Text, Value, YamlError};
use std::collections::HashMap;

#[derive(Clone, Copy)]
struct Line<'a> {
    /// Spaces before the content.
    indent: usize,
    /// The rest of the line, without the line break and trailing spaces.
    text: &'a str,
    /// The rest of the line with its trailing spaces (block scalars keep them).
    full: &'a str,
    /// 1-based line number in the whole stream.
    no: usize,
    /// Whether the line holds a tab: only block scalars read such lines (and comments, which
    /// are skipped); everything else leaves them to the general parser.
    tab: bool,
}

impl Line<'_> {
    fn blank(&self) -> bool {
        self.text.is_empty()
    }

    /// Blank or only a comment: nothing for the structure (block scalars and quoted scalars
    /// still read such lines as text).
    fn void(&self) -> bool {
        self.text.is_empty() || self.text.as_bytes().first() == Some(&b'#')
    }
}

/// Splits text at `\n` (as `str::split` does: a final line break leaves an empty last line),
/// numbering lines from 1. `tabs` says whether the text holds any tab at all, `newlines` how
/// many line feeds it has.
fn split_lines(text: &str, tabs: bool, newlines: usize) -> Option<Vec<Line<'_>>> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(newlines + 1);
    let mut start = 0usize;
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    for (no, end) in (1usize..).zip(ends) {
        let raw = bytes.get(start..end)?;
        // Trailing, then leading spaces (byte loops: the lines are short).
        let mut e = raw.len();
        while e > 0 && raw.get(e - 1) == Some(&b' ') {
            e -= 1;
        }
        let mut indent = 0usize;
        // Leading spaces eight at a time (manifests are deeply indented).
        while let Some(word) = raw.get(indent..indent + 8) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            let other = u64::from_le_bytes(bytes) ^ 0x2020_2020_2020_2020;
            if other != 0 {
                indent += (other.trailing_zeros() / 8) as usize;
                break;
            }
            indent += 8;
        }
        while raw.get(indent) == Some(&b' ') {
            indent += 1;
        }
        let indent = indent.min(e);
        let line = if indent == e {
            Line {
                indent: 0,
                text: "",
                full: text.get(start..end)?,
                no,
                tab: false,
            }
        } else {
            Line {
                indent,
                text: text.get(start + indent..start + e)?,
                full: text.get(start + indent..end)?,
                no,
                tab: tabs && memchr::memchr(b'\t', raw).is_some(),
            }
        };
        lines.push(line);
        start = end + 1;
    }
    Some(lines)
}

/// Parses a whole stream of the subset: documents separated by lines that are exactly `---`.
/// `None` means "use the general parser" for the whole stream: any other marker or directive
/// (`--- x`, `...`, `%`), an empty or null document (libyaml counts those in a special way), a
/// document outside the subset, or a stream large enough to approach the node limit.
pub(crate) fn parse_stream(text: &str) -> Option<(Vec<Document>, Vec<YamlError>)> {
    let Some((tabs, newlines)) = printable(text) else {
        return fail(line!());
    };
    let mut lines = split_lines(text, tabs, newlines)?;
    let mut docs = Vec::new();
    let mut duplicates = Vec::new();
    let mut nodes = 0usize;
    let mut piece_start = 0usize;
    let mut first_piece = true;
    let mut k = 0usize;
    while k <= lines.len() {
        let marker = match lines.get(k) {
            None => None,
            Some(l) if l.indent == 0 && l.full.starts_with(['-', '.', '%']) => {
                if l.full.starts_with("---") || l.full.starts_with("...") || l.full.starts_with('%')
                {
                    if l.full != "---" {
                        return fail(line!());
                    }
                    Some(())
                } else {
                    None
                }
            }
            Some(_) => {
                k += 1;
                continue;
            }
        };
        if marker.is_none() && k < lines.len() {
            k += 1;
            continue;
        }
        let last = k == lines.len();
        let piece = lines.get_mut(piece_start..k)?;
        if piece.iter().all(Line::void) {
            // Blank lines and comments before the first `---` make no document, and a blank
            // document at the end is a null one libyaml drops; anywhere else an empty document
            // is counted by libyaml, so leave it to the general parser. Without any `---` the
            // only piece is the whole text: a blank one goes to libyaml too.
            if first_piece == last {
                return fail(line!());
            }
        } else {
            let mut p = P::new(piece, last);
            let root = p.document()?;
            duplicates.append(&mut p.duplicates);
            nodes += p.nodes;
            if root.is_null() || nodes > MAX_NODES / 2 {
                return fail(line!());
            }
            // Every earlier piece made a document (empty ones went to the general parser).
            let index = docs.len();
            docs.push(Document { index, root });
        }
        first_piece = false;
        piece_start = k + 1;
        k += 1;
    }
    Some((docs, duplicates))
}

/// Whether every character is one libyaml reads as ordinary text (`Some`, with whether a tab
/// was seen and the number of line feeds, which sizes the line table): no control characters
/// but tab and line feed (libyaml rejects them, with its own message), no CR (it changes line
/// ends), no byte-order mark and none of the Unicode line breaks libyaml counts as new lines
/// (U+0085, U+2028, U+2029).
fn printable(text: &str) -> Option<(bool, usize)> {
    let b = text.as_bytes();
    let mut tab = false;
    let mut newlines = 0usize;
    let mut i = 0usize;
    // 32 bytes at a time, in a form the compiler turns into vector compares: any control
    // character other than line feed and tab, DEL or non-ASCII byte sends the block to the
    // byte-by-byte check.
    for block in b.chunks_exact(32) {
        let mut unusual = 0u8;
        let mut tabs = 0u8;
        let mut lines = 0u8;
        for &c in block {
            let control = c < 0x20 && c != b'\n' && c != b'\t';
            unusual |= u8::from(control || c >= 0x7f);
            tabs |= u8::from(c == b'\t');
            lines += u8::from(c == b'\n');
        }
        if unusual != 0 {
            for k in i..i + 32 {
                if !printable_byte(b, k, &mut tab) {
                    return None;
                }
            }
        }
        tab |= tabs != 0;
        newlines += usize::from(lines);
        i += 32;
    }
    while i < b.len() {
        if !printable_byte(b, i, &mut tab) {
            return None;
        }
        newlines += usize::from(b.get(i) == Some(&b'\n'));
        i += 1;
    }
    Some((tab, newlines))
}

/// [`printable`] for the byte at `i` (the first byte of a character, or a continuation byte
/// of a multi-byte one, which is always accepted).
fn printable_byte(b: &[u8], i: usize, tab: &mut bool) -> bool {
    match b.get(i).copied().unwrap_or(b' ') {
        b'\n' | 0x20..=0x7e => true,
        b'\t' => {
            *tab = true;
            true
        }
        0x00..=0x7f => false,
        0xc2 => b.get(i + 1).is_some_and(|n| *n >= 0xa0),
        0xe2 => !(b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9))),
        0xef => !matches!(
            (b.get(i + 1), b.get(i + 2)),
            (Some(0xbb), Some(0xbf)) | (Some(0xbf), Some(0xbe | 0xbf))
        ),
        _ => true,
    }
}

/// Parses one document of the subset; `None` means "use the general parser".
pub fn parse(chunk: &str) -> Option<Node> {
    let Some((tabs, newlines)) = printable(chunk) else {
        return fail(line!());
    };
    let mut lines = split_lines(chunk, tabs, newlines)?;
    let mut p = P::new(&mut lines, true);
    let root = p.document()?;
    // Duplicate keys are the general parser's to report to the catalog loader.
    if !p.duplicates.is_empty() {
        return fail(line!());
    }
    // A null root next to comments (`# c` then `~`) is a document the general parser drops;
    // the catalog loader reports it as such, so leave it to that parser (as before comments
    // were read here; a lone `~` stays as it was).
    if root.is_null() && chunk.contains('#') {
        return fail(line!());
    }
    Some(root)
}

struct P<'a, 's> {
    lines: &'s mut [Line<'a>],
    /// Collections open around the current line; deep nesting goes to the general parser,
    /// which reports it (and the recursion here stays bounded).
    depth: usize,
    /// Values and keys built so far (the general parser's count, for its node limit).
    nodes: usize,
    /// Whether the last line is the end of the text (no line break after it), not a line
    /// before a `---`.
    open_end: bool,
    /// Items, entries and keys of the collections being read, innermost last: each collection
    /// takes its own off the top when it ends, in one allocation of the exact size (no
    /// growing vectors per collection).
    items: Vec<Node>,
    entries: Vec<(Key, Node)>,
    keys: Vec<&'a str>,
    /// Anchored nodes of the document with their node count, depth and text bytes (as the
    /// general parser keeps them), and how many values and text bytes aliases copied so far.
    anchors: HashMap<&'a str, (Node, usize, usize, usize)>,
    aliased: usize,
    aliased_bytes: usize,
    /// Duplicate keys, reported as the general parser reports them.
    duplicates: Vec<YamlError>,
}

/// Key bytes of the simple plain keys the fast path reads.
fn key_byte(b: u8) -> bool {
    static TABLE: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0usize;
        while b < 256 {
            let c = b as u8;
            table[b] = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'/');
            b += 1;
        }
        table
    };
    TABLE[b as usize]
}

/// Where `key: value` splits, if the line is a mapping entry: the key's text, its width in
/// columns, and the value text (empty when only a comment or nothing follows). `None` for a
/// line that is no mapping entry, and a refusal for keys outside the subset.
fn split_key(text: &str) -> Option<(&str, usize, &str)> {
    let b = text.as_bytes();
    let (key, after) = match b.first() {
        Some(b'"' | b'\'') => {
            let (key, after) = quoted_key(text)?;
            (key, after)
        }
        _ => {
            let k = b.iter().position(|c| !key_byte(*c)).unwrap_or(b.len());
            if b.get(k) == Some(&b':') && matches!(b.get(k + 1), None | Some(b' ')) {
                let key = text.get(..k)?;
                if key.is_empty() || key.starts_with(['-', '.']) {
                    return fail(line!());
                }
                (key, k)
            } else if has_value_indicator(text) {
                return fail(line!());
            } else {
                return None;
            }
        }
    };
    let rest = text.get(after + 1..)?.trim_start_matches(' ');
    let rest = if rest.starts_with('#') { "" } else { rest };
    Some((key, after, rest))
}

/// A quoted key on one line (`"a b": v`, `'x': v`) without escapes: its text and the offset of
/// the `:` after it. A quoted scalar that is no key gives `None`; anything unclear is refused.
fn quoted_key(text: &str) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    let quote = *b.first()?;
    let close = memchr::memchr(quote, b.get(1..)?)? + 1;
    let body = text.get(1..close)?;
    let after = text.get(close + 1..)?;
    match after.as_bytes() {
        [b':'] | [b':', b' ', ..] => {}
        _ if after.trim_start_matches(' ').starts_with(':') => return fail(line!()),
        // A quoted scalar, not a key (the scalar readers check the rest of the line).
        _ => return None,
    }
    if body.contains(['\\', '\'', '"']) || body.is_empty() || body == "<<" {
        return fail(line!());
    }
    Some((body, close + 1))
}

/// Whether a line that does not start with a simple key still holds `: ` or ends with `:`
/// (a key outside the subset, or text libyaml reads as one).
fn has_value_indicator(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b':', b).any(|k| matches!(b.get(k + 1), None | Some(b' ')))
}

fn is_dash(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Number of characters (columns) in a prefix of a line.
fn width(prefix: &str) -> usize {
    if prefix.is_ascii() {
        prefix.len()
    } else {
        prefix.chars().count()
    }
}

/// The plain scalar text on one line up to a comment (` #`): the text and whether a comment
/// ended it; refused when the text holds `: ` or ends with `:` (a mapping libyaml would see).
fn plain_part(text: &str) -> Option<(&str, bool)> {
    let b = text.as_bytes();
    for k in memchr::memchr2_iter(b':', b'#', b) {
        if b.get(k) == Some(&b'#') {
            if k > 0 && b.get(k - 1) == Some(&b' ') {
                let body = text.get(..k)?.trim_end_matches(' ');
                if body.ends_with(':') {
                    return fail(line!());
                }
                return Some((body, true));
            }
        } else if matches!(b.get(k + 1), None | Some(b' ')) {
            return fail(line!());
        }
    }
    Some((text, false))
}

/// The name of an anchor or alias (`&name`, `*name`: letters, digits, `-`, `_`) and the text
/// after it, which must start with a space if any.
fn anchor_name(text: &str) -> Option<(&str, &str)> {
    let b = text.as_bytes();
    let end = b
        .iter()
        .skip(1)
        .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_')))
        .map_or(b.len(), |k| k + 1);
    let (name, rest) = (text.get(1..end)?, text.get(end..)?);
    if name.is_empty() || !(rest.is_empty() || rest.starts_with(' ')) {
        return fail(line!());
    }
    Some((name, rest))
}

/// Whether what follows a closed scalar or flow collection on its line is nothing or a comment
/// (libyaml also reads `"a"#c` as a comment; the fast path wants the space).
fn rest_is_void(rest: &str) -> bool {
    rest.is_empty()
        || (rest.starts_with(' ') && {
            let r = rest.trim_start_matches(' ');
            r.is_empty() || r.starts_with('#')
        })
}

impl<'a, 's> P<'a, 's> {
    /// A parser for one document's lines; `open_end` as the field says.
    fn new(lines: &'s mut [Line<'a>], open_end: bool) -> Self {
        P {
            lines,
            depth: 0,
            nodes: 0,
            open_end,
            items: Vec::new(),
            entries: Vec::new(),
            keys: Vec::new(),
            anchors: HashMap::new(),
            aliased: 0,
            aliased_bytes: 0,
            duplicates: Vec::new(),
        }
    }
}

impl<'a> P<'a, '_> {
    /// The root node of one document: the first non-void line at column 0, and nothing after.
    fn document(&mut self) -> Option<Node> {
        let start = self.skip_void(0);
        let first = *self.lines.get(start)?;
        if first.indent != 0 || first.text.starts_with('&') {
            return fail(line!());
        }
        let (node, next) = self.block(start, None)?;
        if self.skip_void(next) != self.lines.len() {
            return fail(line!());
        }
        Some(node)
    }

    /// The first line from `i` that is not blank or a comment.
    fn skip_void(&self, mut i: usize) -> usize {
        while self.lines.get(i).is_some_and(Line::void) {
            i += 1;
        }
        i
    }

    /// The first line from `i` that is not blank (comments are text in block scalars).
    fn skip_blank(&self, mut i: usize) -> usize {
        while self.lines.get(i).is_some_and(Line::blank) {
            i += 1;
        }
        i
    }

    /// A node is made: counted as the general parser counts them.
    fn node(&mut self, value: Value, line: usize, col: usize) -> Node {
        self.nodes += 1;
        Node { value, line, col }
    }

    /// A block node starting at line `i`; `parent` is the indent of the enclosing collection
    /// (libyaml's block indentation there: continuation lines must be deeper).
    fn block(&mut self, i: usize, parent: Option<usize>) -> Option<(Node, usize)> {
        let line = *self.lines.get(i)?;
        if parent.is_some_and(|p| line.indent < p) || line.void() || line.tab {
            return fail(line!());
        }
        if is_dash(line.text) {
            self.nested(i, Self::sequence_items)
        } else if split_key(line.text).is_some() {
            self.nested(i, Self::mapping_entries)
        } else {
            let floor = parent.unwrap_or(0);
            self.value(line.text, line.no, line.indent + 1, i, floor)
        }
    }

    /// One level deeper: refused past half of the general parser's depth limit (so the general
    /// parser, not this one, reports the limit), and the depth is restored on the way out.
    fn nested(
        &mut self,
        i: usize,
        items: fn(&mut Self, usize) -> Option<(Node, usize)>,
    ) -> Option<(Node, usize)> {
        self.depth += 1;
        if self.depth > MAX_DEPTH / 2 {
            return fail(line!());
        }
        let out = items(self, i);
        self.depth -= 1;
        out
    }

    /// The value of an entry or item whose line ends after `:` or `-` (or a comment): the
    /// block on the following lines when it is deeper than `n` (or, for a mapping, a sequence
    /// at `n`), else an empty (null) scalar at `line`/`col`, where libyaml puts it.
    fn value_below(
        &mut self,
        i: usize,
        n: usize,
        seq_allowed: bool,
        line: usize,
        col: usize,
    ) -> Option<(Node, usize)> {
        let j = self.skip_void(i + 1);
        match self.lines.get(j) {
            Some(next) if next.indent > n => self.block(j, Some(n)),
            Some(next) if seq_allowed && next.indent == n && is_dash(next.text) => {
                self.block(j, Some(n))
            }
            _ => {
                let node = self.node(Value::Scalar(Text::default(), ScalarKind::Null), line, col);
                Some((node, i + 1))
            }
        }
    }

    fn sequence_items(&mut self, mut i: usize) -> Option<(Node, usize)> {
        let first = *self.lines.get(i)?;
        let n = first.indent;
        let base = self.items.len();
        while let Some(line) = self.lines.get(i).copied() {
            if line.tab {
                return fail(line!());
            }
            if line.indent != n || !is_dash(line.text) {
                break;
            }
            let rest = line.text.get(1..)?.trim_start_matches(' ');
            let (node, after) = if rest.is_empty() || rest.starts_with('#') {
                self.value_below(i, n, false, line.no, n + 2)?
            } else {
                let offset = line.text.len() - rest.len();
                // The item's content as a line of its own, indented where it starts.
                let slot = self.lines.get_mut(i)?;
                *slot = Line {
                    indent: n + offset,
                    text: rest,
                    full: line.full.get(offset..)?,
                    no: line.no,
                    tab: line.tab,
                };
                let out = self.block(i, Some(n));
                if let Some(slot) = self.lines.get_mut(i) {
                    *slot = line;
                }
                out?
            };
            self.items.push(node);
            i = self.skip_void(after);
        }
        let items = self.items.drain(base..).collect();
        let node = self.node(Value::Seq(items), first.no, n + 1);
        Some((node, i))
    }

    fn mapping_entries(&mut self, mut i: usize) -> Option<(Node, usize)> {
        let first = *self.lines.get(i)?;
        let n = first.indent;
        let base = self.entries.len();
        let key_base = self.keys.len();
        // Keys seen, for the duplicate check once a mapping is too large for a linear scan.
        let mut seen: std::collections::HashSet<&'a str> = std::collections::HashSet::new();
        while let Some(line) = self.lines.get(i).copied() {
            if line.tab {
                return fail(line!());
            }
            if line.indent != n {
                if line.indent > n {
                    return fail(line!());
                }
                break;
            }
            let Some((key, colon, rest)) = split_key(line.text) else {
                if is_dash(line.text) {
                    break;
                }
                return fail(line!());
            };
            let keys = self.keys.get(key_base..)?;
            let duplicate = if keys.len() < 32 {
                keys.contains(&key)
            } else {
                if seen.is_empty() {
                    seen.extend(keys.iter().copied());
                }
                !seen.insert(key)
            };
            self.keys.push(key);
            // A duplicate is reported as the general parser reports it (naming the line of the
            // previous occurrence), before anything inside its value, and its entry is
            // replaced in place (the later key and value win).
            let slot = if duplicate {
                let at = self
                    .entries
                    .get(base..)?
                    .iter()
                    .position(|(k, _)| k.text == key)?;
                let previous = self.entries.get(base + at)?.0.line;
                self.duplicates.push(YamlError {
                    message: format!(
                        "duplicate key \"{key}\" at column {} (first defined on line {previous})",
                        n + 1
                    ),
                    line: line.no,
                    col: n + 1,
                    duplicate_key: true,
                });
                Some(base + at)
            } else {
                None
            };
            self.nodes += 1;
            let k = Key {
                text: Text::from(key),
                line: line.no,
                col: n + 1,
            };
            let (value, after) = if rest.is_empty() {
                // libyaml puts an empty value just after the `:`.
                let col = n + width(line.text.get(..colon)?) + 2;
                self.value_below(i, n, true, line.no, col)?
            } else {
                let col = n + 1 + width(line.text.get(..line.text.len() - rest.len())?);
                self.value(rest, line.no, col, i, n)?
            };
            match slot.and_then(|at| self.entries.get_mut(at)) {
                Some(entry) => *entry = (k, value),
                None => self.entries.push((k, value)),
            }
            i = self.skip_void(after);
        }
        self.keys.truncate(key_base);
        let entries = self.entries.drain(base..).collect();
        let node = self.node(Value::Map(entries), first.no, n + 1);
        Some((node, i))
    }

    /// A scalar or flow collection starting on line `i` at `col`; continuation lines
    /// must be indented more than `floor`.
    fn value(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        match text.as_bytes().first()? {
            b'|' => self.block_scalar(text, no, col, i, floor, false),
            b'>' => self.block_scalar(text, no, col, i, floor, true),
            b'\'' => self.single_quoted(text, no, col, i),
            b'"' => self.double_quoted(text, no, col, i),
            b'[' | b'{' => {
                let mut f = Flow {
                    text,
                    pos: 0,
                    line: no,
                    col0: col,
                    i,
                    floor,
                };
                let node = self.flow_node(&mut f)?;
                if !rest_is_void(f.text.get(f.pos..)?) {
                    return fail(line!());
                }
                Some((node, f.i + 1))
            }
            b'&' => self.anchored(text, no, col, i, floor),
            b'*' => {
                let (name, rest) = anchor_name(text)?;
                if !rest_is_void(rest) {
                    return fail(line!());
                }
                Some((self.alias(name, no, col)?, i + 1))
            }
            b']' | b'}' | b'!' | b'%' | b'@' | b'`' | b'?' | b',' | b'#' => fail(line!()),
            // `-` and (in block context) `:` start a plain scalar when no space follows
            // (`- :8081`, a port in slurm-operator's CSV), as libyaml reads them.
            b'-' | b':' if text.len() == 1 || text.as_bytes().get(1) == Some(&b' ') => {
                fail(line!())
            }
            _ => self.plain(text, no, col, i, floor),
        }
    }

    /// A value with an anchor (`&name value`, or `&name` with the value on the lines below):
    /// positioned at the `&`, as libyaml positions it, and remembered for aliases.
    fn anchored(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let (name, after) = anchor_name(text)?;
        let rest = after.trim_start_matches(' ');
        let (mut node, next) = if rest.is_empty() || rest.starts_with('#') {
            let j = self.skip_void(i + 1);
            match self.lines.get(j) {
                Some(next) if next.indent > floor => self.block(j, Some(floor))?,
                // A sequence at the same indentation is a mapping's value but ends a
                // sequence's item: leave that to libyaml.
                Some(next) if next.indent == floor && is_dash(next.text) => return fail(line!()),
                _ => {
                    let null = Value::Scalar(Text::default(), ScalarKind::Null);
                    (self.node(null, no, col), i + 1)
                }
            }
        } else if rest.starts_with(['&', '*', '!']) {
            return fail(line!());
        } else {
            let col = col + width(text.get(..text.len() - rest.len())?);
            self.value(rest, no, col, i, floor)?
        };
        node.line = no;
        node.col = col;
        let (size, depth, bytes) = (
            super::count_nodes(&node),
            super::node_depth(&node),
            super::text_bytes(&node),
        );
        self.anchors
            .insert(name, (node.clone(), size, depth, bytes));
        Some((node, next))
    }

    /// A copy of an anchored node at the alias's position, within the general parser's limits
    /// (anything near them is left to it, so it reports them).
    fn alias(&mut self, name: &str, no: usize, col: usize) -> Option<Node> {
        let Some((node, size, depth, bytes)) = self.anchors.get(name) else {
            return fail(line!());
        };
        let (size, depth, bytes) = (*size, *depth, *bytes);
        // Aliases that copy much text go to the general parser, which judges them by their
        // bytes (below the floor it accepts what this path accepts).
        self.aliased_bytes += bytes;
        if self.aliased_bytes > super::ALIAS_BYTES_FLOOR {
            return fail(line!());
        }
        if self.depth + depth >= MAX_DEPTH / 2 {
            return fail(line!());
        }
        // The general parser counts open collections when they start: ours are counted when
        // they end, so add the open ones.
        let decoded = self.nodes + self.depth + size;
        self.aliased += size;
        if super::excessive_aliasing(self.aliased, decoded) {
            return fail(line!());
        }
        let mut copy = node.clone();
        copy.line = no;
        copy.col = col;
        self.nodes += size;
        Some(copy)
    }

    fn plain(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let (first, mut commented) = plain_part(text)?;
        let mut j = i + 1;
        let mut blanks = 0;
        let mut out: Option<String> = None;
        while !commented {
            let Some(line) = self.lines.get(j) else { break };
            if line.blank() {
                blanks += 1;
                j += 1;
                continue;
            }
            if line.indent <= floor {
                break;
            }
            if line.void() {
                // A comment ends a plain scalar.
                commented = true;
                break;
            }
            if line.tab {
                return fail(line!());
            }
            let (part, ended) = plain_part(line.text)?;
            let out = out.get_or_insert_with(|| String::from(first));
            if blanks == 0 {
                out.push(' ');
            } else {
                out.extend(std::iter::repeat_n('\n', blanks));
            }
            out.push_str(part);
            commented = ended;
            blanks = 0;
            j += 1;
        }
        let end = j - blanks;
        if commented {
            // Without the comment libyaml would have read a deeper line as more of the scalar;
            // with it, that line is something else (an error): leave it to libyaml.
            let k = self.skip_void(end);
            if self.lines.get(k).is_some_and(|l| l.indent > floor) {
                return fail(line!());
            }
        }
        let (text, kind) = match out {
            None => (Text::from(first), resolve_plain(first)),
            // A multi-line plain scalar is almost always text; let the general parser decide.
            Some(out) => match resolve_plain(&out) {
                ScalarKind::Str => (Text::from(out), ScalarKind::Str),
                _ => return fail(line!()),
            },
        };
        Some((self.node(Value::Scalar(text, kind), no, col), end))
    }

    fn single_quoted(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
    ) -> Option<(Node, usize)> {
        let mut out = String::new();
        let mut j = i;
        let mut body = text.get(1..)?;
        loop {
            // This line's part up to the closing quote, with `''` read as `'`.
            let b = body.as_bytes();
            let mut closed = None;
            let mut from = 0usize;
            let mut k = 0usize;
            while let Some(q) = memchr::memchr(b'\'', b.get(k..)?) {
                let q = k + q;
                if b.get(q + 1) == Some(&b'\'') {
                    out.push_str(body.get(from..q + 1)?);
                    from = q + 2;
                    k = q + 2;
                } else {
                    closed = Some(q);
                    break;
                }
            }
            match closed {
                Some(q) => {
                    if !rest_is_void(body.get(q + 1..)?) {
                        return fail(line!());
                    }
                    out.push_str(body.get(from..q)?);
                    break;
                }
                None => {
                    // Lines have no leading or trailing spaces here: libyaml drops them.
                    out.push_str(body.get(from..)?);
                    // Fold the line break: blank lines become newlines, else one space.
                    let mut blanks = 0;
                    j += 1;
                    while self.lines.get(j).is_some_and(Line::blank) {
                        blanks += 1;
                        j += 1;
                    }
                    // libyaml reads continuation lines at any indentation.
                    let line = self.lines.get(j)?;
                    if line.tab {
                        return fail(line!());
                    }
                    if blanks == 0 {
                        out.push(' ');
                    } else {
                        out.extend(std::iter::repeat_n('\n', blanks));
                    }
                    body = line.text;
                }
            }
        }
        Some((
            self.node(Value::Scalar(out.into(), ScalarKind::Str), no, col),
            j + 1,
        ))
    }

    /// A block scalar (`|` literal or `>` folded) with its header `text` on line `i`.
    fn block_scalar(
        &mut self,
        text: &str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
        folded: bool,
    ) -> Option<(Node, usize)> {
        let (header, comment) = match text.find(' ') {
            Some(k) => (text.get(..k)?, text.get(k..)?),
            None => (text, ""),
        };
        if !rest_is_void(comment) {
            return fail(line!());
        }
        let mut chomp = 'c';
        let mut explicit: Option<usize> = None;
        for c in header.get(1..)?.chars() {
            match c {
                '-' | '+' if chomp == 'c' => chomp = c,
                '1'..='9' if explicit.is_none() => explicit = Some(c as usize - '0' as usize),
                _ => return fail(line!()),
            }
        }
        // Content indentation: explicit, or the first non-blank line's.
        let mut j = i + 1;
        let content_indent = match explicit {
            Some(d) => floor + d,
            None => {
                let k = self.skip_blank(j);
                match self.lines.get(k) {
                    Some(l) if l.indent > floor => {
                        // libyaml takes the longest leading run of spaces as the indentation
                        // when a blank line has more than the first text line, and refuses a
                        // tab there.
                        let longer = self
                            .lines
                            .get(j..k)?
                            .iter()
                            .any(|b| b.full.len() > l.indent);
                        if longer || l.text.starts_with('\t') {
                            return fail(line!());
                        }
                        l.indent
                    }
                    _ => {
                        // Empty block scalar (kept blank lines would be its text).
                        if chomp == '+' && k > j {
                            return fail(line!());
                        }
                        let node =
                            self.node(Value::Scalar(Text::default(), ScalarKind::Str), no, col);
                        return Some((node, j));
                    }
                }
            }
        };
        // The text's size, so it is allocated once: every line up to the first one less
        // indented than the content, with its line break.
        let capacity: usize = self
            .lines
            .get(j..)?
            .iter()
            .take_while(|l| l.blank() || l.indent >= content_indent)
            .map(|l| l.full.len() + 1 + l.indent.saturating_sub(content_indent))
            .sum();
        let mut out = String::with_capacity(capacity);
        let mut trailing = 0usize;
        let mut any = false;
        // Whether the previous content line was more indented (folding keeps its break).
        let mut prev_more = false;
        while let Some(line) = self.lines.get(j) {
            let (pad, content, more) = if line.blank() {
                // Spaces only: up to the indentation a blank line, past it text of spaces.
                let spaces = line.full.len();
                if spaces <= content_indent {
                    trailing += 1;
                    j += 1;
                    continue;
                }
                (spaces - content_indent, "", true)
            } else if line.indent < content_indent {
                if line.text.starts_with('\t') {
                    // A tab where libyaml expects indentation: an error.
                    return fail(line!());
                }
                break;
            } else {
                let pad = line.indent - content_indent;
                (pad, line.full, pad > 0 || line.text.starts_with('\t'))
            };
            if any && folded && !prev_more && !more {
                if trailing == 0 {
                    out.push(' ');
                } else {
                    out.extend(std::iter::repeat_n('\n', trailing));
                }
            } else if any || trailing > 0 {
                out.extend(std::iter::repeat_n('\n', trailing + usize::from(any)));
            }
            trailing = 0;
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(content);
            any = true;
            prev_more = more;
            j += 1;
        }
        let at_end = self.open_end && j == self.lines.len();
        // A last line without a line break (the end of the text) is chomped differently by
        // libyaml; leave it to the general parser.
        if any && at_end && !self.lines.last().is_some_and(|l| l.full.is_empty()) {
            return fail(line!());
        }
        if any {
            match chomp {
                '-' => {}
                '+' => {
                    // At the end of the text the last (empty) line is no line: the text ended
                    // with the line break before it.
                    let kept = if at_end {
                        trailing.saturating_sub(1)
                    } else {
                        trailing
                    };
                    out.extend(std::iter::repeat_n('\n', kept + 1));
                }
                _ => out.push('\n'),
            }
        }
        // Trailing blank lines belong to what follows unless kept.
        let end = j - trailing;
        Some((
            self.node(Value::Scalar(out.into(), ScalarKind::Str), no, col),
            end,
        ))
    }

    /// A double-quoted scalar: on one line, or folded over several as go-yaml writes long
    /// ones (a line break is a space, blank lines are newlines, a break after `\` is nothing).
    fn double_quoted(
        &mut self,
        text: &str,
        no: usize,
        col: usize,
        i: usize,
    ) -> Option<(Node, usize)> {
        let mut out = String::new();
        let mut j = i;
        // The first line with its trailing spaces (`\` then spaces is no escaped line break).
        let first = *self.lines.get(i)?;
        let mut raw = first
            .full
            .get(first.text.len().checked_sub(text.len())? + 1..)?;
        loop {
            match closing_double_quote(raw) {
                Some(k) => {
                    if !rest_is_void(raw.get(k + 1..)?) {
                        return fail(line!());
                    }
                    unescape_double_into(raw.get(..k)?, &mut out)?;
                    break;
                }
                None => {
                    // An escaped line break joins without a space.
                    let (part, joined) = match raw.strip_suffix('\\') {
                        Some(p) if !escaped_at_end(p) => (p, true),
                        _ => (raw.trim_end_matches(' '), false),
                    };
                    if escaped_at_end(part) {
                        return fail(line!());
                    }
                    unescape_double_into(part, &mut out)?;
                    j += 1;
                    let mut blanks = 0;
                    while self.lines.get(j).is_some_and(Line::blank) {
                        blanks += 1;
                        j += 1;
                    }
                    if joined || blanks > 0 {
                        out.extend(std::iter::repeat_n('\n', blanks));
                    } else {
                        out.push(' ');
                    }
                    // libyaml reads continuation lines at any indentation.
                    let line = *self.lines.get(j)?;
                    if line.tab {
                        return fail(line!());
                    }
                    raw = line.full;
                }
            }
        }
        Some((
            self.node(Value::Scalar(out.into(), ScalarKind::Str), no, col),
            j + 1,
        ))
    }
}

/// The byte offset of the first `"` not escaped by a `\`.
fn closing_double_quote(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut k = 0usize;
    while let Some(q) = memchr::memchr2(b'"', b'\\', b.get(k..)?) {
        let q = k + q;
        if b.get(q) == Some(&b'"') {
            return Some(q);
        }
        k = q + 2;
    }
    None
}

/// Whether text ends inside an escape (an odd number of trailing backslashes).
fn escaped_at_end(text: &str) -> bool {
    text.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// A flow collection being read, one line at a time.
struct Flow<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    pos: usize,
    line: usize,
    /// Column of the first character of `text`.
    col0: usize,
    /// Index of the current line in the parser's lines.
    i: usize,
    /// Continuation lines must be indented more than this (the enclosing block's indent).
    floor: usize,
}

impl<'a> Flow<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.pos += 1;
        }
    }

    fn col(&self) -> Option<usize> {
        Some(self.col0 + width(self.text.get(..self.pos)?))
    }

    /// A scalar item: plain (no indicators at all), single- or double-quoted on this line.
    fn scalar(&mut self) -> Option<(String, ScalarKind)> {
        let rest = self.text.get(self.pos..)?;
        let b = rest.as_bytes();
        match b.first()? {
            b'"' => {
                let body = rest.get(1..)?;
                let k = closing_double_quote(body)?;
                let mut out = String::with_capacity(k);
                unescape_double_into(body.get(..k)?, &mut out)?;
                self.pos += k + 2;
                Some((out, ScalarKind::Str))
            }
            b'\'' => {
                let mut out = String::new();
                let mut k = 1usize;
                loop {
                    let q = k + memchr::memchr(b'\'', b.get(k..)?)?;
                    out.push_str(rest.get(k..q)?);
                    if b.get(q + 1) == Some(&b'\'') {
                        out.push('\'');
                        k = q + 2;
                    } else {
                        self.pos += q + 1;
                        return Some((out, ScalarKind::Str));
                    }
                }
            }
            c if b"-?:,[]{}#&*!|>'\"%@`".contains(c)
                && !(*c == b'-' && b.get(1).is_some_and(|n| n.is_ascii_alphanumeric())) =>
            {
                fail(line!())
            }
            _ => {
                // Up to a flow indicator, or a `:` that libyaml reads as one (followed by a
                // space, the end or a flow indicator).
                let end = (0..b.len())
                    .find(|&k| match b.get(k) {
                        Some(b',' | b'[' | b']' | b'{' | b'}' | b'#') => true,
                        Some(b':') => matches!(
                            b.get(k + 1),
                            None | Some(b' ' | b',' | b'?' | b'[' | b']' | b'{' | b'}')
                        ),
                        _ => false,
                    })
                    .unwrap_or(b.len());
                if !matches!(b.get(end), Some(b',' | b']' | b'}')) {
                    return fail(line!());
                }
                let text = rest.get(..end)?.trim_end_matches(' ');
                self.pos += end;
                Some((text.to_string(), resolve_plain(text)))
            }
        }
    }
}

impl<'a> P<'a, '_> {
    /// Skips spaces between flow tokens and, at the end of a line (or at a comment after a
    /// space), goes on to the next line that is not blank or only a comment, as libyaml reads
    /// whitespace in flow context. Such lines must be indented more than the enclosing block
    /// and hold no tab; anything else is left to libyaml.
    fn flow_space(&self, f: &mut Flow<'a>) -> Option<()> {
        loop {
            f.skip_spaces();
            let at_comment = f.peek() == Some(b'#')
                && (f.pos == 0 || f.text.as_bytes().get(f.pos - 1) == Some(&b' '));
            if f.pos < f.text.len() && !at_comment {
                return Some(());
            }
            let j = self.skip_void(f.i + 1);
            let line = self.lines.get(j)?;
            if line.indent <= f.floor || line.tab {
                return fail(line!());
            }
            f.text = line.text;
            f.pos = 0;
            f.line = line.no;
            f.col0 = line.indent + 1;
            f.i = j;
        }
    }

    /// A flow node at the reader's position (a collection or a scalar).
    fn flow_node(&mut self, f: &mut Flow<'a>) -> Option<Node> {
        let line = f.line;
        let col = f.col()?;
        match f.peek()? {
            b'[' | b'{' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH / 2 {
                    return fail(line!());
                }
                let out = self.flow_collection(f, line, col);
                self.depth -= 1;
                out
            }
            _ => {
                let (text, kind) = f.scalar()?;
                Some(self.node(Value::Scalar(text.into(), kind), line, col))
            }
        }
    }

    fn flow_collection(&mut self, f: &mut Flow<'a>, line: usize, col: usize) -> Option<Node> {
        let map = f.peek()? == b'{';
        let close = if map { b'}' } else { b']' };
        f.pos += 1;
        let base = if map {
            self.entries.len()
        } else {
            self.items.len()
        };
        loop {
            self.flow_space(f)?;
            if f.peek()? == close {
                f.pos += 1;
                break;
            }
            if map {
                let (key_line, key_col) = (f.line, f.col()?);
                // Only plain keys of key bytes and quoted keys, followed by `: `.
                let text = if matches!(f.peek()?, b'"' | b'\'') {
                    f.scalar()?.0
                } else {
                    let rest = f.text.get(f.pos..)?;
                    let k = rest
                        .bytes()
                        .position(|c| !key_byte(c))
                        .unwrap_or(rest.len());
                    let key = rest.get(..k)?;
                    if key.is_empty() || key.starts_with(['-', '.']) {
                        return fail(line!());
                    }
                    f.pos += k;
                    key.to_string()
                };
                if text == "<<"
                    || self
                        .entries
                        .get(base..)?
                        .iter()
                        .any(|(k, _)| k.text == text)
                {
                    return fail(line!());
                }
                if f.text.get(f.pos..)?.starts_with(": ") {
                    f.pos += 2;
                    f.skip_spaces();
                } else {
                    return fail(line!());
                }
                self.nodes += 1;
                let key = Key {
                    text: text.into(),
                    line: key_line,
                    col: key_col,
                };
                let value = self.flow_node(f)?;
                self.entries.push((key, value));
            } else {
                let item = self.flow_node(f)?;
                self.items.push(item);
            }
            self.flow_space(f)?;
            match f.peek()? {
                b',' => f.pos += 1,
                c if c == close => {
                    f.pos += 1;
                    break;
                }
                _ => return fail(line!()),
            }
        }
        let value = if map {
            Value::Map(self.entries.drain(base..).collect())
        } else {
            Value::Seq(self.items.drain(base..).collect())
        };
        Some(self.node(value, line, col))
    }
}

thread_local! {
    /// The source line of the last refusal, for the differential tests' statistics (set only
    /// when the fast path gives up, so it costs nothing on the path that answers).
    static LAST_REFUSAL: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Gives up on the fast path.
#[cold]
fn fail<T>(at: u32) -> Option<T> {
    LAST_REFUSAL.with(|c| c.set(at));
    None
}

/// The source line in this file of the fast path's last refusal on this thread.
pub(crate) fn last_refusal() -> u32 {
    LAST_REFUSAL.with(std::cell::Cell::get)
}

/// Appends the decoded body of a double-quoted scalar (one line's part) to `out`.
fn unescape_double_into(body: &str, out: &mut String) -> Option<()> {
    let mut rest = body;
    while let Some(k) = memchr::memchr2(b'\\', b'"', rest.as_bytes()) {
        out.push_str(rest.get(..k)?);
        if rest.as_bytes().get(k) == Some(&b'"') {
            return fail(line!());
        }
        let mut chars = rest.get(k + 1..)?.chars();
        let e = chars.next()?;
        let hex = |chars: &mut std::str::Chars, n: usize| -> Option<char> {
            let s = chars.as_str().get(..n)?;
            if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
                return fail(line!());
            }
            *chars = chars.as_str().get(n..)?.chars();
            char::from_u32(u32::from_str_radix(s, 16).ok()?)
        };
        out.push(match e {
            '0' => '\0',
            'a' => '\u{7}',
            'b' => '\u{8}',
            't' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            ' ' => ' ',
            '"' => '"',
            '/' => '/',
            '\\' => '\\',
            'N' => '\u{85}',
            '_' => '\u{a0}',
            'L' => '\u{2028}',
            'P' => '\u{2029}',
            'x' => hex(&mut chars, 2)?,
            'u' => hex(&mut chars, 4)?,
            'U' => hex(&mut chars, 8)?,
            _ => return fail(line!()),
        });
        rest = chars.as_str();
    }
    out.push_str(rest);
    Some(())
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream_general;

    fn same(text: &str) {
        let fast = parse(text).unwrap_or_else(|| panic!("fast path refused:\n{text}"));
        let slow = parse_stream_general(text).expect("yaml").0.remove(0).root;
        assert_eq!(fast, slow, "{text}");
    }

    #[test]
    fn opm_style_documents_match_the_general_parser() {
        same(
            "schema: olm.bundle\nname: a\nproperties:\n- type: olm.gvk\n  value:\n    group: x\n    version: v1\n- type: olm.package\n  value:\n    packageName: a\n    version: 1.0.0\nrelatedImages:\n- image: quay.io/x\n  name: \"\"\n",
        );
        same(
            "a:\n  b: |-\n    line one\n      indented\n\n    after blank\n  c: |\n    kept\n  d: plain text that is\n    folded over lines\n  e: 'quoted ''text''\n    folded'\n  f: []\n  g: {}\n  h: '1.0'\n  i: 12\n  j: true\n  k: \"esc\\n\\u00e9\"\n",
        );
        same("list:\n- - nested\n  - seq\n-\n  k: v\n- x\n");
        same(
            "n: [.inf, -.Inf, .nan, 0x1F, 0o17, 017, 1_000, 1.5e3, +1, -2, 1.0.0, 1e, 12abc]\n"
                .replace("[", "\n- ")
                .replace(", ", "\n- ")
                .replace("]", "")
                .as_str(),
        );
        same("key: |2-\n    starts with spaces\n   less\nnext: 1\n");
        same(
            "d: \"long text with \\u00e9 that\n  is folded\\\n  \\ and joined\n\n  with blank\"\nb: |\n  trailing  \n  x\n",
        );
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        for text in [
            "a: b\u{0}\n",
            "a: b\u{85}c\n",
            "a: b\u{2028}c\n",
            "a: \u{feff}\n",
            "a: b\u{ffff}\n",
            "a: b\r\n",
            "a: &x 1\nb: [*x]\n",
            "<<: {a: 1}\n",
            "# c\n~\n",
            "null # c\n",
            "a: !!str 1\n",
            "a: 1 # c\n  b\n",
            "a: 1\na: 2\n",
            "a: {x: 1, x: 2}\n",
            "a:\tb\n",
            "a: b: c\n",
            "? a\n: b\n",
        ] {
            assert!(parse(text).is_none(), "{text}");
        }
        // A lone null document reads as before (the catalog loader relies on both answers).
        assert!(parse("~\n").is_some_and(|n| n.is_null()));
    }

    /// Every document of the real catalogs parses to the same tree (values and positions) as
    /// with the general parser.
    #[test]
    fn real_catalogs_match_the_general_parser() {
        // `$OLMPACK_CATALOGS`, `$OLMPACK_SHARED/catalogs` or `../shared/catalogs`, as
        // tests/support/shared.rs finds them; absent, a skip, and a failure in CI
        // (OLMPACK_REQUIRE_CORPUS=1 or OLMPACK_CI=1).
        let root = std::env::var_os("OLMPACK_CATALOGS")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("OLMPACK_SHARED")
                    .map(|shared| std::path::PathBuf::from(shared).join("catalogs"))
            })
            .unwrap_or_else(|| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../shared/catalogs")
            })
            .join("fbc");
        let ci = ["OLMPACK_REQUIRE_CORPUS", "OLMPACK_CI"]
            .iter()
            .any(|k| std::env::var(k).as_deref() == Ok("1"));
        let Ok(repos) = std::fs::read_dir(&root) else {
            assert!(!ci, "no catalogs at {} (CI requires them)", root.display());
            eprintln!("SKIPPED: no catalogs at {}", root.display());
            return;
        };
        let mut files = 0;
        let mut checked = 0;
        let mut refused = 0;
        let mut reasons = std::collections::BTreeMap::new();
        for repo in repos.flatten() {
            let Ok(pkgs) = std::fs::read_dir(repo.path().join("catalogs/v4.18")) else {
                continue;
            };
            for pkg in pkgs.flatten() {
                let text = std::fs::read_to_string(pkg.path().join("catalog.yaml")).expect("read");
                files += 1;
                for chunk in text.split("\n---\n") {
                    let chunk = chunk.strip_prefix("---\n").unwrap_or(chunk);
                    match parse(chunk) {
                        Some(fast) => {
                            let slow = parse_stream_general(chunk).expect("yaml").0.remove(0).root;
                            assert_eq!(fast, slow, "{}", pkg.path().display());
                            checked += 1;
                        }
                        None => {
                            refused += 1;
                            let at = LAST_REFUSAL.with(std::cell::Cell::get);
                            *reasons.entry(at).or_insert(0usize) += 1;
                        }
                    }
                }
            }
        }
        println!(
            "CASES yaml fast-path catalog files: {files} (floor 67); {checked} documents identical, {refused} left to the general parser (refused at source lines {reasons:?})"
        );
        if let Some(log) = std::env::var_os("OLMPACK_CASES_LOG") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
            {
                let _ = writeln!(
                    f,
                    "yaml fast-path catalog files (crates/ground/src/yaml/fast.rs)\t{files}\t67"
                );
            }
        }
        // Every shared catalog file was read (67 packages in the shared 4.18 catalogs).
        assert!(
            files >= 67,
            "only {files} catalog files under {}",
            root.display()
        );
        assert!(
            checked > 0 && refused * 100 <= checked,
            "{refused} refused of {checked}"
        );
    }
}
