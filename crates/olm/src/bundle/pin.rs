//! Where a CSV names images, and rewriting those names in the CSV's own text: what
//! `bundle pin` needs from the bundle model, without any notion of registries (the digests
//! come from the caller).
//!
//! The places ([`image_sites`]) are the ones the issue and OLM name: the install deployments'
//! containers and init containers (matched with opm's key rules, as
//! [`super::images::operator_images`] reads them), their `RELATED_IMAGE_*` environment values
//! (what operator-sdk and OLM's downstream tooling read as related images), `spec.relatedImages`
//! and the `metadata.annotations.containerImage` annotation.
//!
//! The rewrite ([`rewrite`]) edits the text at each scalar's position and nowhere else: the file
//! is never re-serialized, so comments, key order, quoting and line endings stay as written. Each
//! edit checks that the text at the position is the scalar it replaces (plain, single- or
//! double-quoted, on one line); anything else (a block scalar, an escape, an alias) is refused
//! with its line rather than guessed. New `spec.relatedImages` entries are inserted as text in
//! the style of the existing entries (or of the file's other sequences).

use crate::bundle::images::Tree;
use crate::yaml::Node;

/// Which kind of place names the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteKind {
    /// `containers[].image` of an install deployment.
    Container,
    /// `initContainers[].image` of an install deployment.
    InitContainer,
    /// The value of a `RELATED_IMAGE_*` environment variable of a container.
    Env,
    /// `spec.relatedImages[].image`.
    RelatedImage,
    /// `metadata.annotations.containerImage`.
    Annotation,
}

impl SiteKind {
    /// How messages name it.
    pub fn label(self) -> &'static str {
        match self {
            SiteKind::Container => "container image",
            SiteKind::InitContainer => "init container image",
            SiteKind::Env => "RELATED_IMAGE environment value",
            SiteKind::RelatedImage => "spec.relatedImages entry",
            SiteKind::Annotation => "containerImage annotation",
        }
    }
}

/// One place the CSV names an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSite {
    /// What kind of place.
    pub kind: SiteKind,
    /// The container's, variable's or entry's name (empty when absent).
    pub name: String,
    /// The image as written.
    pub image: String,
    /// 1-based line of the scalar.
    pub line: usize,
    /// 1-based column of the scalar.
    pub col: usize,
}

fn site(kind: SiteKind, name: &str, node: &Node) -> Option<ImageSite> {
    let image = node.scalar_text()?;
    Some(ImageSite {
        kind,
        name: name.to_string(),
        image: image.to_string(),
        line: node.line,
        col: node.col,
    })
}

fn text_of<'a>(node: &'a Node, key: &str) -> &'a str {
    node.field(key).and_then(Tree::text).unwrap_or_default()
}

/// Every place `csv` (the CSV document's root) names an image, in document order of kinds:
/// the annotation, the deployments' containers (with their `RELATED_IMAGE_*` values) and init
/// containers, then `spec.relatedImages`.
pub fn image_sites(csv: &Node) -> Vec<ImageSite> {
    let mut out = Vec::new();
    if let Some(n) = csv.path(&["metadata", "annotations", "containerImage"]) {
        out.extend(site(SiteKind::Annotation, "", n));
    }
    let install = csv.member("spec").and_then(|s| s.field("install"));
    let deployment = install
        .and_then(|i| i.field("strategy"))
        .and_then(Tree::text)
        == Some("deployment");
    let deployments = install
        .and_then(|i| i.field("spec"))
        .and_then(|s| s.field("deployments"));
    if deployment {
        for d in deployments.map(Tree::items).unwrap_or_default() {
            let pod = d
                .field("spec")
                .and_then(|s| s.field("template"))
                .and_then(|t| t.field("spec"));
            for (list, kind) in [
                ("containers", SiteKind::Container),
                ("initContainers", SiteKind::InitContainer),
            ] {
                for c in pod
                    .and_then(|p| p.field(list))
                    .map(Tree::items)
                    .unwrap_or_default()
                {
                    let name = text_of(c, "name");
                    if let Some(n) = c.field("image") {
                        out.extend(site(kind, name, n));
                    }
                    for e in c.field("env").map(Tree::items).unwrap_or_default() {
                        let var = text_of(e, "name");
                        if var.starts_with("RELATED_IMAGE_")
                            && let Some(v) = e.field("value")
                        {
                            out.extend(site(SiteKind::Env, var, v));
                        }
                    }
                }
            }
        }
    }
    for r in csv
        .member("spec")
        .and_then(|s| s.member("relatedImages"))
        .map(Tree::items)
        .unwrap_or_default()
    {
        if let Some(n) = r.field("image") {
            out.extend(site(SiteKind::RelatedImage, text_of(r, "name"), n));
        }
    }
    out
}

/// The `spec.relatedImages` name a site suggests for an image it adds: the container's name,
/// or the variable's name without `RELATED_IMAGE_`, lowercased with `-` for `_` (what
/// operator-sdk's generator writes).
pub fn suggested_name(site: &ImageSite) -> String {
    let raw = match site.kind {
        SiteKind::Env => site.name.trim_start_matches("RELATED_IMAGE_").to_string(),
        SiteKind::Annotation => "operator".to_string(),
        _ => site.name.clone(),
    };
    let name: String = raw
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "image".to_string()
    } else {
        name
    }
}

/// One scalar replaced: the image at `line`:`col` (as [`ImageSite`] gives it) becomes `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// 1-based line of the scalar.
    pub line: usize,
    /// 1-based column of the scalar.
    pub col: usize,
    /// The image as written (checked against the text).
    pub old: String,
    /// What replaces it.
    pub new: String,
}

/// A `spec.relatedImages` entry to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRelatedImage {
    /// `name`.
    pub name: String,
    /// `image`.
    pub image: String,
}

/// Why the text cannot be edited safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct EditError {
    /// 1-based line.
    pub line: usize,
    /// What stops the edit.
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> EditError {
    EditError {
        line,
        message: message.into(),
    }
}

/// The byte offsets where each line starts.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The byte offset of 1-based `line`:`col` (columns count characters, as libyaml's marks do).
pub(crate) fn offset(text: &str, starts: &[usize], line: usize, col: usize) -> Option<usize> {
    let start = *starts.get(line.checked_sub(1)?)?;
    let rest = &text[start..];
    let skip = col.checked_sub(1)?;
    rest.char_indices()
        .nth(skip)
        .map(|(i, _)| start + i)
        .or((rest.chars().count() == skip).then_some(text.len()))
}

/// The byte range of the scalar's content at `at` when it is exactly `old` written plainly or
/// in quotes on one line; `what` names the value in messages (`the image`).
pub(crate) fn scalar_span(
    text: &str,
    at: usize,
    old: &str,
    line: usize,
    what: &str,
) -> Result<(usize, usize), EditError> {
    let rest = &text[at..];
    let eol = rest.find(['\n', '\r']).unwrap_or(rest.len());
    let this_line = &rest[..eol];
    match this_line.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let inner = &this_line[1..];
            let close = inner.find(q).ok_or_else(|| {
                err(
                    line,
                    format!(
                        "{what} is quoted over more than one line; only one-line scalars are edited"
                    ),
                )
            })?;
            if &inner[..close] != old || (q == '\'' && inner[close + 1..].starts_with('\'')) {
                return Err(err(
                    line,
                    format!(
                        "the quoted scalar here is not written as {old:?} (escapes are not edited)"
                    ),
                ));
            }
            Ok((at + 1, at + 1 + old.len()))
        }
        Some('|' | '>') => Err(err(
            line,
            format!("{what} is a block scalar; only one-line scalars are edited"),
        )),
        Some('&' | '*' | '!') => Err(err(
            line,
            format!("{what} is written with an anchor, alias or tag; those are not edited"),
        )),
        _ => {
            if !this_line.starts_with(old) {
                return Err(err(
                    line,
                    format!("the text here is not {what} {old:?} (a multi-line plain scalar?)"),
                ));
            }
            let after = this_line[old.len()..].trim_end_matches('\r');
            let rest_of_line = after.trim_start();
            let ends = rest_of_line.is_empty()
                || (after.starts_with([' ', '\t']) && rest_of_line.starts_with('#'))
                || rest_of_line.starts_with([',', ']', '}']);
            if !ends {
                return Err(err(
                    line,
                    format!("the scalar here is longer than {what} {old:?}"),
                ));
            }
            if rest_of_line.is_empty() && continues(text, at) {
                return Err(err(
                    line,
                    format!("{what} continues on the next line; only one-line scalars are edited"),
                ));
            }
            Ok((at, at + old.len()))
        }
    }
}

/// Whether a plain scalar ending its line at `at` goes on: the next non-blank line is indented
/// deeper than the mapping or sequence entry it is the value of.
fn continues(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let head = &text[line_start..at];
    // The column of the entry: past the indentation and any `- ` markers.
    let mut entry = head.len() - head.trim_start_matches(' ').len();
    let mut h = &head[entry..];
    while let Some(r) = h.strip_prefix("- ") {
        let pad = r.len() - r.trim_start_matches(' ').len();
        entry += 2 + pad;
        h = &r[pad..];
    }
    let after = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
    text[after..]
        .lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| {
            let indent = l.len() - l.trim_start_matches(' ').len();
            indent > entry && !l.trim_start().starts_with('#')
        })
}

/// `text` with every edit applied and `added` inserted as `spec.relatedImages` entries of the
/// CSV whose root is `csv` (parsed from `text`); nothing else changes.
pub fn rewrite(
    text: &str,
    csv: &Node,
    edits: &[Edit],
    added: &[NewRelatedImage],
) -> Result<String, EditError> {
    let starts = line_starts(text);
    let mut changes: Vec<(usize, usize, String)> = Vec::new();
    for e in edits {
        let at = offset(text, &starts, e.line, e.col)
            .ok_or_else(|| err(e.line, format!("no column {} on this line", e.col)))?;
        let (from, to) = scalar_span(text, at, &e.old, e.line, "the image")?;
        changes.push((from, to, e.new.clone()));
    }
    if !added.is_empty() {
        changes.push(insertion(text, &starts, csv, added)?);
    }
    splice(text, changes).ok_or_else(|| err(0, "two edits overlap"))
}

/// `text` with each `(from, to, with)` change made (byte ranges of `text`), in place order;
/// `None` when two ranges overlap. The one splice of the edits that keep the rest of a CSV
/// byte for byte (`bundle pin`, `bundle release`).
pub(crate) fn splice(text: &str, mut changes: Vec<(usize, usize, String)>) -> Option<String> {
    changes.sort_by_key(|c| c.0);
    if changes.windows(2).any(|w| w[0].1 > w[1].0) {
        return None;
    }
    let added: usize = changes.iter().map(|c| c.2.len()).sum();
    let mut out = String::with_capacity(text.len() + added);
    let mut at = 0;
    for (from, to, with) in changes {
        out.push_str(&text[at..from]);
        out.push_str(&with);
        at = to;
    }
    out.push_str(&text[at..]);
    Some(out)
}

pub(crate) fn line_text<'a>(text: &'a str, starts: &[usize], line: usize) -> &'a str {
    let Some(&s) = starts.get(line.wrapping_sub(1)) else {
        return "";
    };
    let rest = &text[s..];
    let l = &rest[..rest.find('\n').unwrap_or(rest.len())];
    l.strip_suffix('\r').unwrap_or(l)
}

pub(crate) fn indent_of(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

/// The last line of `node`'s subtree (keys and values), then any following lines indented
/// deeper than `indent` (continuations of its last scalar), blank lines only between them.
pub(crate) fn end_line(text: &str, starts: &[usize], node: &Node, indent: usize) -> usize {
    fn max_line(n: &Node) -> usize {
        match &n.value {
            crate::yaml::Value::Map(m) => m
                .iter()
                .map(|(k, v)| k.line.max(max_line(v)))
                .max()
                .unwrap_or(n.line),
            crate::yaml::Value::Seq(s) => s.iter().map(max_line).max().unwrap_or(n.line),
            crate::yaml::Value::Scalar(..) => n.line,
        }
    }
    let mut last = max_line(node);
    let mut probe = last + 1;
    while probe <= starts.len() {
        let l = line_text(text, starts, probe);
        if l.trim().is_empty() {
            probe += 1;
            continue;
        }
        if indent_of(l) > indent && !l.trim_start().starts_with('#') {
            last = probe;
            probe += 1;
        } else {
            break;
        }
    }
    last
}

pub(crate) fn newline_of(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// The block-sequence style of the file: how far a `- ` sits right of its parent key (0 for
/// `key:\n- item`, 2 for `key:\n  - item`), read from the first sequence of mappings in `spec`.
fn sequence_offset(text: &str, starts: &[usize], spec: &Node) -> usize {
    for (k, v) in spec.as_map().unwrap_or(&[]) {
        if let Some(first) = v.as_seq().and_then(|s| s.first())
            && first.as_map().is_some()
        {
            let l = line_text(text, starts, first.line);
            if let Some(dash) = l.find("- ") {
                return dash.saturating_sub(k.col - 1);
            }
        }
    }
    0
}

fn render(
    added: &[NewRelatedImage],
    first_prefix: &str,
    rest_indent: usize,
    image_first: bool,
    nl: &str,
) -> String {
    let mut out = String::new();
    for a in added {
        let (k1, v1, k2, v2) = if image_first {
            ("image", &a.image, "name", &a.name)
        } else {
            ("name", &a.name, "image", &a.image)
        };
        out.push_str(&format!(
            "{first_prefix}{k1}: {v1}{nl}{}{k2}: {v2}{nl}",
            " ".repeat(rest_indent)
        ));
    }
    out
}

fn insertion(
    text: &str,
    starts: &[usize],
    csv: &Node,
    added: &[NewRelatedImage],
) -> Result<(usize, usize, String), EditError> {
    let nl = newline_of(text);
    let spec = csv
        .get("spec")
        .filter(|s| s.as_map().is_some())
        .ok_or_else(|| {
            err(
                csv.line,
                "the CSV has no spec mapping to add relatedImages to",
            )
        })?;
    let flow = |n: &Node| {
        line_text(text, starts, n.line)[..]
            .chars()
            .nth(n.col - 1)
            .is_some_and(|c| c == '{' || c == '[')
    };
    if flow(spec) {
        return Err(err(
            spec.line,
            "spec is written in flow style (JSON?); pin cannot add relatedImages to it",
        ));
    }
    let line_start = |line: usize| starts.get(line - 1).copied().unwrap_or(text.len());
    let after_line = |line: usize| -> (usize, &'static str) {
        match starts.get(line) {
            Some(&s) => (s, ""),
            None => (text.len(), if text.ends_with('\n') { "" } else { "\n" }),
        }
    };
    match spec.get("relatedImages") {
        Some(list) if list.as_seq().is_some_and(|s| !s.is_empty()) && !flow(list) => {
            let items = list.as_seq().unwrap_or(&[]);
            let first = &items[0];
            if first.as_map().is_none() || flow(first) {
                return Err(err(
                    first.line,
                    "spec.relatedImages entries are not block mappings; pin cannot add to them",
                ));
            }
            let first_line = line_text(text, starts, first.line);
            let key_col = first.col - 1;
            let prefix: String = first_line.chars().take(key_col).collect();
            if !prefix.trim_start().starts_with('-') {
                return Err(err(
                    first.line,
                    "cannot tell how spec.relatedImages entries are indented",
                ));
            }
            let dash_indent = indent_of(&prefix);
            let image_first = first
                .as_map()
                .and_then(|m| m.iter().position(|(k, _)| k.text == "image"))
                .zip(
                    first
                        .as_map()
                        .and_then(|m| m.iter().position(|(k, _)| k.text == "name")),
                )
                .is_none_or(|(i, n)| i < n);
            let last = items.last().unwrap_or(first);
            let end = end_line(text, starts, last, dash_indent);
            let (at, lead) = after_line(end);
            let lead = if lead.is_empty() { "" } else { nl };
            Ok((
                at,
                at,
                format!("{lead}{}", render(added, &prefix, key_col, image_first, nl)),
            ))
        }
        Some(list) if !list.is_null() && !(list.as_seq().is_some_and(<[Node]>::is_empty)) => {
            Err(err(
                list.line,
                "spec.relatedImages is not a block sequence; pin cannot add to it",
            ))
        }
        Some(list) => Err(err(
            list.line,
            "spec.relatedImages is empty or null; write its entries as a block sequence or remove the key",
        )),
        None => {
            let entries = spec.as_map().unwrap_or(&[]);
            let key_col = entries.first().map_or(0, |(k, _)| k.col - 1);
            let seq = sequence_offset(text, starts, spec);
            let indent = " ".repeat(key_col);
            let dash = format!("{}- ", " ".repeat(key_col + seq));
            let body = render(added, &dash, key_col + seq + 2, true, nl);
            let block = format!("{indent}relatedImages:{nl}{body}");
            // Kept in key order when the keys are sorted (as operator-sdk writes them).
            match entries
                .iter()
                .find(|(k, _)| k.text.as_str() > "relatedImages")
            {
                Some((k, _)) => {
                    let at = line_start(k.line);
                    Ok((at, at, block))
                }
                None => {
                    let (k, v) = entries
                        .last()
                        .ok_or_else(|| err(spec.line, "spec is empty"))?;
                    let end = end_line(text, starts, v, key_col).max(k.line);
                    let (at, lead) = after_line(end);
                    let lead = if lead.is_empty() { "" } else { nl };
                    Ok((at, at, format!("{lead}{block}")))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
