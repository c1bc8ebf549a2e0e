//! A fast path for the YAML that catalogs are made of: block mappings and sequences with plain,
//! quoted and literal block scalars, exactly the style opm (go-yaml v2) writes. It builds the
//! same positioned tree as [`crate::bundle::yaml`] and gives up (`None`) on anything outside that
//! subset — flow collections other than `[]`/`{}`, anchors, tags, comments, tabs, folded scalars,
//! duplicate keys — so the general parser handles every other input and every error. A test
//! checks that both parsers build identical trees for every document of the real catalogs.
//!
//! Why: the general event parser runs at under 20 MB/s, far below the 250 MB/s goal, and real
//! catalogs are almost entirely this subset.

use crate::bundle::yaml::{Document, Key, MAX_DEPTH, MAX_NODES, Node, ScalarKind, Value};

#[derive(Clone, Copy)]
struct Line<'a> {
    /// Spaces before the content.
    indent: usize,
    /// The rest of the line, without the line break and trailing spaces.
    text: &'a str,
    /// The rest of the line with its trailing spaces (block scalars keep them).
    full: &'a str,
    /// 1-based line number.
    no: usize,
}

impl Line<'_> {
    fn blank(&self) -> bool {
        self.text.is_empty()
    }
}

/// Parses a whole stream of the subset: documents separated by lines that are exactly `---`.
/// `None` means "use the general parser" for the whole stream: any other marker or directive
/// (`--- x`, `...`, `%`), an empty or null document (libyaml counts those in a special way), a
/// document outside the subset, or a stream large enough to approach the node limit.
pub(crate) fn parse_stream(text: &str) -> Option<Vec<Document>> {
    if !printable(text) {
        return fail(line!());
    }
    let mut docs = Vec::new();
    let mut nodes = 0usize;
    let mut piece_start = 0usize;
    let mut piece_line = 1usize;
    let mut first_piece = true;
    let mut offset = 0usize;
    let mut finish = |piece: &str, first_line: usize, first: bool, last: bool| -> Option<()> {
        if piece.bytes().all(|b| b == b' ' || b == b'\n') {
            // Blank lines before the first `---` make no document, and a blank document at the
            // end is a null one libyaml drops; anywhere else an empty document is counted by
            // libyaml, so leave it to the general parser.
            return if first || last {
                Some(())
            } else {
                fail(line!())
            };
        }
        let mut root = parse_printable(piece)?;
        if root.is_null() {
            return fail(line!());
        }
        nodes += super::count_nodes(&root);
        if nodes > MAX_NODES / 2 {
            return fail(line!());
        }
        if first_line > 1 {
            shift_lines(&mut root, first_line - 1);
        }
        // Every earlier piece made a document (empty ones went to the general parser).
        let index = docs.len();
        docs.push(Document { index, root });
        Some(())
    };
    for (line_no, raw) in (1usize..).zip(text.split_inclusive('\n')) {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        if line.starts_with("---") || line.starts_with("...") || line.starts_with('%') {
            if line != "---" {
                return fail(line!());
            }
            let piece = text.get(piece_start..offset)?;
            // Text before the first marker is a document only if it is not blank.
            finish(piece, piece_line, first_piece, false)?;
            first_piece = false;
            piece_start = offset + raw.len();
            piece_line = line_no + 1;
        }
        offset += raw.len();
    }
    let piece = text.get(piece_start..)?;
    // Without any `---` the only piece is the whole text: a blank one goes to libyaml.
    finish(piece, piece_line, false, !first_piece)?;
    Some(docs)
}

/// Whether every character is one libyaml reads as ordinary text: no control characters (libyaml
/// rejects them, with its own message), no tab or CR (they change columns and line ends), no
/// byte-order mark and none of the Unicode line breaks libyaml counts as new lines (U+0085,
/// U+2028, U+2029).
fn printable(text: &str) -> bool {
    // One pass over the bytes of valid UTF-8: ASCII must be a line feed or visible/space; of the
    // multi-byte characters only C1 controls (C2 80..9F), U+2028/U+2029 (E2 80 A8/A9), U+FEFF
    // (EF BB BF) and U+FFFE/U+FFFF (EF BF BE/BF) are refused.
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let refused = match c {
            b'\n' | 0x20..=0x7e => false,
            0x00..=0x7f => true,
            0xc2 => b.get(i + 1).is_none_or(|n| *n < 0xa0),
            0xe2 => b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9)),
            0xef => matches!(
                (b.get(i + 1), b.get(i + 2)),
                (Some(0xbb), Some(0xbf)) | (Some(0xbf), Some(0xbe | 0xbf))
            ),
            _ => false,
        };
        if refused {
            return false;
        }
    }
    true
}

/// Moves a tree parsed from a piece of a stream to the piece's place in the stream.
fn shift_lines(node: &mut Node, shift: usize) {
    node.line += shift;
    match &mut node.value {
        Value::Scalar(..) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| shift_lines(n, shift)),
        Value::Map(entries) => {
            for (k, v) in entries {
                k.line += shift;
                shift_lines(v, shift);
            }
        }
    }
}

/// Parses one document of the subset; `None` means "use the general parser".
pub(crate) fn parse(chunk: &str) -> Option<Node> {
    if !printable(chunk) {
        return fail(line!());
    }
    parse_printable(chunk)
}

/// [`parse`] for text already checked with [`printable`].
fn parse_printable(chunk: &str) -> Option<Node> {
    let mut lines = Vec::with_capacity(chunk.len() / 24);
    for (i, raw) in chunk.split('\n').enumerate() {
        let trimmed = raw.trim_end_matches(' ');
        let text = trimmed.trim_start_matches(' ');
        let indent = trimmed.len() - text.len();
        lines.push(Line {
            indent: if text.is_empty() { 0 } else { indent },
            text,
            full: if text.is_empty() { raw } else { &raw[indent..] },
            no: i + 1,
        });
    }
    let mut p = P { lines, depth: 0 };
    let start = p.skip_blank(0);
    let first = *p.lines.get(start)?;
    if first.indent != 0 {
        return fail(line!());
    }
    let (node, next) = p.block(start, None)?;
    if p.skip_blank(next) != p.lines.len() {
        return fail(line!());
    }
    Some(node)
}

struct P<'a> {
    lines: Vec<Line<'a>>,
    /// Collections open around the current line; deep nesting goes to the general parser,
    /// which reports it (and the recursion here stays bounded).
    depth: usize,
}

/// Where `key: value` splits, if the line is a mapping entry with a simple plain key.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let (key, rest) = match text.find(": ") {
        Some(i) => (&text[..i], &text[i + 2..]),
        None => (text.strip_suffix(':')?, ""),
    };
    if key.is_empty()
        || key == "<<"
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'))
        || key.starts_with(['-', '.'])
    {
        return fail(line!());
    }
    Some((key, rest.trim_start_matches(' ')))
}

fn is_dash(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

impl<'a> P<'a> {
    fn skip_blank(&self, mut i: usize) -> usize {
        while self.lines.get(i).is_some_and(Line::blank) {
            i += 1;
        }
        i
    }

    /// A block node starting at line `i`; `parent` is the indent of the enclosing collection.
    fn block(&mut self, i: usize, parent: Option<usize>) -> Option<(Node, usize)> {
        let line = *self.lines.get(i)?;
        if parent.is_some_and(|p| line.indent < p) || line.text.starts_with('#') {
            return fail(line!());
        }
        if is_dash(line.text) {
            self.sequence(i)
        } else if split_key(line.text).is_some() {
            self.mapping(i)
        } else {
            let floor = parent.unwrap_or(0);
            self.value(line.text, line.no, line.indent + 1, i, floor)
        }
    }

    fn sequence(&mut self, i: usize) -> Option<(Node, usize)> {
        self.nested(i, Self::sequence_items)
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

    fn sequence_items(&mut self, mut i: usize) -> Option<(Node, usize)> {
        let first = *self.lines.get(i)?;
        let n = first.indent;
        let mut items = Vec::new();
        while let Some(line) = self.lines.get(i).copied() {
            if line.indent != n || !is_dash(line.text) {
                break;
            }
            let rest = line.text[1..].trim_start_matches(' ');
            if rest.is_empty() {
                let j = self.skip_blank(i + 1);
                let next = *self.lines.get(j)?;
                if next.indent <= n {
                    return fail(line!());
                }
                let (node, after) = self.block(j, Some(n + 1))?;
                items.push(node);
                i = self.skip_blank(after);
            } else {
                let offset = line.text.len() - rest.len();
                // The item's content as a line of its own, indented where it starts.
                self.lines[i] = Line {
                    indent: n + offset,
                    text: rest,
                    full: &line.full[offset..],
                    no: line.no,
                };
                let (node, after) = self.block(i, Some(n + 1))?;
                self.lines[i] = line;
                items.push(node);
                i = self.skip_blank(after);
            }
        }
        let node = Node {
            value: Value::Seq(items),
            line: first.no,
            col: n + 1,
        };
        Some((node, i))
    }

    fn mapping(&mut self, i: usize) -> Option<(Node, usize)> {
        self.nested(i, Self::mapping_entries)
    }

    fn mapping_entries(&mut self, mut i: usize) -> Option<(Node, usize)> {
        let first = *self.lines.get(i)?;
        let n = first.indent;
        let mut entries: Vec<(Key, Node)> = Vec::new();
        // Keys seen, for the duplicate check once a mapping is too large for a linear scan.
        let mut keys: Vec<&'a str> = Vec::new();
        let mut seen: std::collections::HashSet<&'a str> = std::collections::HashSet::new();
        while let Some(line) = self.lines.get(i).copied() {
            if line.indent != n {
                if line.indent > n {
                    return fail(line!());
                }
                break;
            }
            let Some((key, rest)) = split_key(line.text) else {
                if is_dash(line.text) {
                    break;
                }
                return fail(line!());
            };
            let duplicate = if keys.len() < 32 {
                keys.contains(&key)
            } else {
                if seen.is_empty() {
                    seen.extend(keys.iter().copied());
                }
                !seen.insert(key)
            };
            keys.push(key);
            if duplicate {
                return fail(line!());
            }
            let k = Key {
                text: key.to_string(),
                line: line.no,
                col: n + 1,
            };
            let (value, after) = if rest.is_empty() {
                let j = self.skip_blank(i + 1);
                let next = *self.lines.get(j)?;
                if next.indent > n || (next.indent == n && is_dash(next.text)) {
                    self.block(j, Some(n))?
                } else {
                    return fail(line!());
                }
            } else {
                let col = n + 1 + (line.text.len() - rest.len());
                self.value(rest, line.no, col, i, n)?
            };
            entries.push((k, value));
            i = self.skip_blank(after);
        }
        let node = Node {
            value: Value::Map(entries),
            line: first.no,
            col: n + 1,
        };
        Some((node, i))
    }

    /// A scalar (or `[]`/`{}`) starting on line `i` at `col`; continuation lines must be
    /// indented more than `floor`.
    fn value(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let scalar = |s: String, kind: ScalarKind| Node {
            value: Value::Scalar(s, kind),
            line: no,
            col,
        };
        match text.as_bytes().first()? {
            b'|' => self.literal(text, no, col, i, floor),
            b'\'' => self.single_quoted(text, no, col, i, floor),
            b'"' => match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(body) if !body.ends_with('\\') || body.ends_with("\\\\") => {
                    Some((scalar(unescape_double(body)?, ScalarKind::Str), i + 1))
                }
                _ => self.double_quoted_lines(no, col, i, floor),
            },
            b'[' if text == "[]" => Some((
                Node {
                    value: Value::Seq(Vec::new()),
                    line: no,
                    col,
                },
                i + 1,
            )),
            b'{' if text == "{}" => Some((
                Node {
                    value: Value::Map(Vec::new()),
                    line: no,
                    col,
                },
                i + 1,
            )),
            b'[' | b'{' | b']' | b'}' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b'>' | b'?'
            | b',' | b'#' | b':' => None,
            b'-' if text.len() == 1 || text.as_bytes().get(1) == Some(&b' ') => None,
            _ => self.plain(text, no, col, i, floor),
        }
    }

    fn plain(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let ok = |t: &str| !(t.contains(": ") || t.contains(" #") || t.ends_with(':'));
        if !ok(text) {
            return fail(line!());
        }
        let mut out = String::from(text);
        let mut j = i + 1;
        let mut blanks = 0;
        while let Some(line) = self.lines.get(j) {
            if line.blank() {
                blanks += 1;
                j += 1;
                continue;
            }
            if line.indent <= floor {
                break;
            }
            if !ok(line.text) || line.text.starts_with('#') {
                return fail(line!());
            }
            if blanks == 0 {
                out.push(' ');
            } else {
                out.extend(std::iter::repeat_n('\n', blanks));
            }
            out.push_str(line.text);
            blanks = 0;
            j += 1;
        }
        let end = j - blanks;
        let kind = if end == i + 1 {
            resolve_plain(&out)
        } else {
            // A multi-line plain scalar is almost always text; let the general parser decide.
            match resolve_plain(&out) {
                ScalarKind::Str => ScalarKind::Str,
                _ => return None,
            }
        };
        Some((
            Node {
                value: Value::Scalar(out, kind),
                line: no,
                col,
            },
            end,
        ))
    }

    fn single_quoted(
        &mut self,
        text: &'a str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let mut out = String::new();
        let mut j = i;
        let mut body = &text[1..];
        loop {
            // Scan this line's part for the closing quote.
            let mut chars = body.char_indices().peekable();
            let mut closed = None;
            let mut seg = String::new();
            while let Some((k, c)) = chars.next() {
                if c == '\'' {
                    if chars.peek().map(|(_, c)| *c) == Some('\'') {
                        chars.next();
                        seg.push('\'');
                    } else {
                        closed = Some(k);
                        break;
                    }
                } else {
                    seg.push(c);
                }
            }
            match closed {
                Some(k) => {
                    if !body[k + 1..].is_empty() {
                        return fail(line!());
                    }
                    out.push_str(if j == i {
                        &seg
                    } else {
                        seg.trim_start_matches(' ')
                    });
                    break;
                }
                None => {
                    let seg = if j == i {
                        seg.trim_end_matches(' ').to_string()
                    } else {
                        seg.trim_matches(' ').to_string()
                    };
                    out.push_str(&seg);
                    // Fold the line break: blank lines become newlines, else one space.
                    let mut blanks = 0;
                    j += 1;
                    while self.lines.get(j).is_some_and(Line::blank) {
                        blanks += 1;
                        j += 1;
                    }
                    let line = self.lines.get(j)?;
                    if line.indent <= floor {
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
            Node {
                value: Value::Scalar(out, ScalarKind::Str),
                line: no,
                col,
            },
            j + 1,
        ))
    }

    fn literal(
        &mut self,
        header: &str,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let mut chomp = 'c';
        let mut explicit: Option<usize> = None;
        for c in header[1..].chars() {
            match c {
                '-' | '+' if chomp == 'c' => chomp = c,
                '1'..='9' if explicit.is_none() => explicit = Some(c as usize - '0' as usize),
                _ => return None,
            }
        }
        // Content indentation: explicit, or the first non-blank line's.
        let mut j = i + 1;
        let content_indent = match explicit {
            Some(d) => floor + d,
            None => {
                let k = self.skip_blank(j);
                match self.lines.get(k) {
                    Some(l) if l.indent > floor => l.indent,
                    _ => {
                        // Empty block scalar.
                        return Some((
                            Node {
                                value: Value::Scalar(String::new(), ScalarKind::Str),
                                line: no,
                                col,
                            },
                            j,
                        ));
                    }
                }
            }
        };
        let mut out = String::new();
        let mut trailing = 0usize;
        let mut any = false;
        while let Some(line) = self.lines.get(j) {
            if line.blank() {
                // Blank lines only (no spaces at all): whitespace-only lines are left to the
                // general parser.
                let raw_len = line.full.len();
                if raw_len != 0 {
                    return fail(line!());
                }
                trailing += 1;
                j += 1;
                continue;
            }
            if line.indent < content_indent {
                break;
            }
            if any || trailing > 0 {
                out.extend(std::iter::repeat_n('\n', trailing + usize::from(any)));
            }
            trailing = 0;
            out.extend(std::iter::repeat_n(' ', line.indent - content_indent));
            out.push_str(line.full);
            any = true;
            j += 1;
        }
        // A last line without a line break (the end of the text) is chomped differently by
        // libyaml; leave it to the general parser.
        if any && j == self.lines.len() && !self.lines.last().is_some_and(Line::blank) {
            return fail(line!());
        }
        if any {
            match chomp {
                '-' => {}
                '+' => out.extend(std::iter::repeat_n('\n', trailing + 1)),
                _ => out.push('\n'),
            }
        }
        // Trailing blank lines belong to what follows unless kept.
        let end = j - trailing;
        if chomp == '+' && trailing > 0 {
            return fail(line!());
        }
        Some((
            Node {
                value: Value::Scalar(out, ScalarKind::Str),
                line: no,
                col,
            },
            end,
        ))
    }
}

impl P<'_> {
    /// A double-quoted scalar folded over several lines, as go-yaml writes long ones: a line
    /// break is a space (blank lines are newlines), and a break after `\\` is nothing.
    fn double_quoted_lines(
        &mut self,
        no: usize,
        col: usize,
        i: usize,
        floor: usize,
    ) -> Option<(Node, usize)> {
        let mut out = String::new();
        let mut j = i;
        let mut first = true;
        loop {
            let line = *self.lines.get(j)?;
            if !first && line.indent <= floor {
                return fail(line!());
            }
            let start = (col - 1).saturating_sub(line.indent) + 1;
            let raw = if first {
                line.full.get(start..)?
            } else {
                line.full
            };
            let raw = if first {
                raw
            } else {
                raw.trim_start_matches(' ')
            };
            // Find the closing quote (not escaped).
            let mut escaped = false;
            let mut close = None;
            for (k, c) in raw.char_indices() {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    close = Some(k);
                    break;
                }
            }
            if let Some(k) = close {
                if !raw[k + 1..].trim_end_matches(' ').is_empty() {
                    return fail(line!());
                }
                out.push_str(&unescape_double(&raw[..k])?);
                break;
            }
            // An escaped line break joins without a space.
            let (part, joined) = match raw.strip_suffix('\\') {
                Some(p) if !escaped_at_end(p) => (p, true),
                _ => (raw.trim_end_matches(' '), false),
            };
            if escaped && !joined {
                return fail(line!());
            }
            out.push_str(&unescape_double(part)?);
            j += 1;
            let mut blanks = 0;
            while self.lines.get(j).is_some_and(Line::blank) {
                blanks += 1;
                j += 1;
            }
            if joined {
                out.extend(std::iter::repeat_n('\n', blanks));
            } else if blanks == 0 {
                out.push(' ');
            } else {
                out.extend(std::iter::repeat_n('\n', blanks));
            }
            first = false;
        }
        Some((
            Node {
                value: Value::Scalar(out, ScalarKind::Str),
                line: no,
                col,
            },
            j + 1,
        ))
    }
}

/// Whether text ends inside an escape (an odd number of trailing backslashes).
fn escaped_at_end(text: &str) -> bool {
    text.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

#[cfg(test)]
thread_local! {
    /// The source line of the last refusal, for the real-catalog test's statistics.
    static LAST_REFUSAL: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Gives up on the fast path.
#[cfg_attr(not(test), allow(unused_variables))]
fn fail<T>(at: u32) -> Option<T> {
    #[cfg(test)]
    LAST_REFUSAL.with(|c| c.set(at));
    None
}

fn unescape_double(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => {
                let e = chars.next()?;
                let hex = |chars: &mut std::str::Chars, n: usize| -> Option<char> {
                    let s: String = chars.by_ref().take(n).collect();
                    if s.len() != n {
                        return fail(line!());
                    }
                    char::from_u32(u32::from_str_radix(&s, 16).ok()?)
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
                    _ => return None,
                });
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// The same resolution as the general parser (go-yaml v2's rules for plain scalars, as
/// `crate::bundle::yaml` applies them; the real-catalog test compares both).
fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarKind::Null,
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "y" | "Y" => {
            return ScalarKind::Bool(true);
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "n" | "N" => {
            return ScalarKind::Bool(false);
        }
        _ => {}
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
    super::resolve_plain(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::yaml::parse_stream;

    fn same(text: &str) {
        let fast = parse(text).unwrap_or_else(|| panic!("fast path refused:\n{text}"));
        let slow = parse_stream(text).expect("yaml").remove(0).root;
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
            "a: &x 1\nb: *x\n",
            "a: [1, 2]\n",
            "a: 1 # c\n",
            "# c\na: 1\n",
            "a: >\n  folded\n",
            "a: 1\na: 2\n",
            "a:\tb\n",
            "a:\n",
            "a: b: c\n",
        ] {
            assert!(parse(text).is_none(), "{text}");
        }
    }

    /// Every document of the real catalogs parses to the same tree (values and positions) as
    /// with the general parser.
    #[test]
    fn real_catalogs_match_the_general_parser() {
        let root =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/catalogs/fbc");
        let Ok(repos) = std::fs::read_dir(&root) else {
            eprintln!("SKIPPED: no catalogs at {}", root.display());
            return;
        };
        let mut checked = 0;
        let mut refused = 0;
        let mut reasons = std::collections::BTreeMap::new();
        for repo in repos.flatten() {
            let Ok(pkgs) = std::fs::read_dir(repo.path().join("catalogs/v4.18")) else {
                continue;
            };
            for pkg in pkgs.flatten() {
                let text = std::fs::read_to_string(pkg.path().join("catalog.yaml")).expect("read");
                for chunk in text.split("\n---\n") {
                    let chunk = chunk.strip_prefix("---\n").unwrap_or(chunk);
                    match parse(chunk) {
                        Some(fast) => {
                            let slow = parse_stream(chunk).expect("yaml").remove(0).root;
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
        eprintln!(
            "{checked} documents identical, {refused} left to the general parser (refused at source lines {reasons:?})"
        );
        assert!(
            checked > 0 && refused * 100 <= checked,
            "{refused} refused of {checked}"
        );
    }
}
