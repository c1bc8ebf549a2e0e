//! `.indexignore` matching exactly as opm does it (joelanford/ignore on top of go-git's gitignore
//! patterns), quirks included, so olmpack reads the same files opm reads (CATALOG.md A.3):
//!
//! - every `.indexignore` in the tree counts, its patterns scoped to the folder holding it;
//! - patterns are tried from the last one read to the first, and the first that matches decides,
//!   so a deeper file overrides the root one inside its subtree;
//! - a pattern without `/` matches **any** component of the path, so `objects` ignores every file
//!   under any `objects` folder;
//! - folders are never pruned: only files are matched, so `!dir/keep.yaml` re-includes a file
//!   under an ignored `dir/` (git itself would not).
//!
//! The per-component glob (Go's `filepath.Match`) is `globset` with a literal separator, after the
//! Go-only syntax differences are translated (`[^…]` negation, no `{a,b}` alternation).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// One parsed pattern line (go-git `gitignore.pattern`).
#[derive(Debug)]
struct Pattern {
    /// The folder (relative to the catalog root, split on `/`) holding the `.indexignore`.
    domain: Vec<String>,
    /// `!pattern`: a match re-includes.
    inclusion: bool,
    /// Trailing `/`: only folders match (a file only through one of its parent folders).
    dir_only: bool,
    /// Contains a `/`: matched component by component from the domain, else by name anywhere.
    is_glob: bool,
    /// The components; `None` where the component is not a valid Go pattern (never matches).
    parts: Vec<Part>,
}

#[derive(Debug)]
enum Part {
    /// An empty component (a leading `/` or `//`).
    Empty,
    /// `**`.
    AnyDirs,
    /// A component that contains `**` among other text: go-git never matches it.
    Invalid,
    /// A `filepath.Match` pattern.
    Glob(Option<GlobSet>),
}

impl Part {
    fn matches(&self, name: &str) -> bool {
        match self {
            Part::Glob(Some(m)) => m.is_match(name),
            _ => false,
        }
    }
}

/// The matcher for a whole catalog tree.
#[derive(Debug, Default)]
pub struct Matcher {
    patterns: Vec<Pattern>,
}

/// Go's `filepath.Match` syntax as a globset pattern for a single path component.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        if in_class {
            match c {
                '^' | '!' if class_start => {
                    // Go negates with `^` only; a leading `!` is a literal.
                    if c == '^' {
                        out.push('!');
                    } else {
                        out.push_str("\\!");
                    }
                }
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push('\\');
                        out.push(n);
                    }
                }
                ']' if !class_start => {
                    in_class = false;
                    out.push(']');
                }
                _ => out.push(c),
            }
            class_start = false;
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                class_start = true;
                out.push('[');
            }
            '\\' => match chars.next() {
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push_str("\\\\"),
            },
            '{' | '}' | ',' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn compile(component: &str) -> Option<GlobSet> {
    // An unclosed class or a trailing backslash is ErrBadPattern in Go: never a match.
    if component.ends_with('\\') && !component.ends_with("\\\\") {
        return None;
    }
    let glob = GlobBuilder::new(&translate(component))
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()?;
    // A one-glob set, not `Glob::compile_matcher`: that panics when the regex outgrows the
    // regex crate's size limit (from about 138 KB of `*x*x…` in one line), where the set reports
    // an error (and matches a plain name as a literal, with no regex at all). Such a pattern
    // then never matches; Go's `filepath.Match` would still try it.
    GlobSetBuilder::new().add(glob).build().ok()
}

impl Pattern {
    /// go-git `ParsePattern`.
    fn parse(line: &str, domain: &[String]) -> Pattern {
        let mut p = line;
        let inclusion = p.starts_with('!');
        if inclusion {
            p = &p[1..];
        }
        if !p.ends_with("\\ ") {
            p = p.trim_end_matches(' ');
        }
        let dir_only = p.ends_with('/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        let is_glob = p.contains('/');
        let parts = p
            .split('/')
            .map(|c| {
                if c.is_empty() {
                    Part::Empty
                } else if c == "**" {
                    Part::AnyDirs
                } else if c.contains("**") {
                    Part::Invalid
                } else {
                    Part::Glob(compile(c))
                }
            })
            .collect();
        Pattern {
            domain: domain.to_vec(),
            inclusion,
            dir_only,
            is_glob,
            parts,
        }
    }

    /// go-git `pattern.Match` for a file (`isDir` false): `Some(inclusion)` on a match.
    fn matches(&self, path: &[&str]) -> Option<bool> {
        if path.len() <= self.domain.len() {
            return None;
        }
        if self.domain.iter().zip(path).any(|(d, p)| d != p) {
            return None;
        }
        let rest = &path[self.domain.len()..];
        let hit = if self.is_glob {
            self.glob_match(rest)
        } else {
            self.simple_name_match(rest)
        };
        hit.then_some(self.inclusion)
    }

    fn simple_name_match(&self, path: &[&str]) -> bool {
        let Some(part) = self.parts.first() else {
            return false;
        };
        for (i, name) in path.iter().enumerate() {
            if !part.matches(name) {
                continue;
            }
            // A dir-only pattern cannot match the file itself, only a folder above it.
            return !(self.dir_only && i == path.len() - 1);
        }
        false
    }

    fn glob_match(&self, mut path: &[&str]) -> bool {
        let mut matched = false;
        let mut can_traverse = false;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Empty => {
                    can_traverse = false;
                    continue;
                }
                Part::AnyDirs => {
                    if i == self.parts.len() - 1 {
                        break;
                    }
                    can_traverse = true;
                    continue;
                }
                Part::Invalid => return false,
                Part::Glob(_) => {}
            }
            let Some((first, _)) = path.split_first() else {
                return false;
            };
            if can_traverse {
                can_traverse = false;
                while let Some((e, tail)) = path.split_first() {
                    path = tail;
                    if part.matches(e) {
                        matched = true;
                        break;
                    } else if path.is_empty() {
                        matched = false;
                    }
                }
            } else {
                if !part.matches(first) {
                    return false;
                }
                matched = true;
                path = &path[1..];
            }
        }
        if matched && self.dir_only && path.is_empty() {
            matched = false;
        }
        matched
    }
}

impl Matcher {
    /// Adds the lines of one `.indexignore` found in folder `domain` (components relative to the
    /// root). Files must be added in walk order: the root first, then subfolders lexically.
    pub fn add_file(&mut self, domain: &[String], text: &str) {
        for line in text.split('\n') {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.patterns.push(Pattern::parse(line, domain));
        }
    }

    /// Whether a file (path relative to the root, `/`-separated) is ignored.
    pub fn is_ignored(&self, rel: &str) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let parts: Vec<&str> = rel.split('/').collect();
        for p in self.patterns.iter().rev() {
            if let Some(inclusion) = p.matches(&parts) {
                return !inclusion;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(files: &[(&str, &str)]) -> Matcher {
        let mut m = Matcher::default();
        for (dir, text) in files {
            let domain: Vec<String> = if dir.is_empty() {
                Vec::new()
            } else {
                dir.split('/').map(str::to_string).collect()
            };
            m.add_file(&domain, text);
        }
        m
    }

    #[test]
    fn canonical_example_from_opm() {
        let m = matcher(&[("", "*\n!*.json\n!*.yaml\nobjects/*.json\n")]);
        assert!(!m.is_ignored("catalog.json"));
        assert!(!m.is_ignored("pkg/catalog.yaml"));
        assert!(m.is_ignored("README.md"));
        assert!(m.is_ignored("objects/csv.json"));
        // `objects/*.json` is anchored at the .indexignore's folder.
        assert!(!m.is_ignored("pkg/objects/csv.json"));
    }

    #[test]
    fn plain_names_match_any_component() {
        let m = matcher(&[("", "objects\n")]);
        assert!(m.is_ignored("a/objects/b/c.yaml"));
        assert!(m.is_ignored("objects"));
        let m = matcher(&[("", "objects/\n")]);
        assert!(m.is_ignored("a/objects/c.yaml"));
        // A dir-only pattern never matches the file itself.
        assert!(!m.is_ignored("a/objects"));
    }

    #[test]
    fn re_inclusion_under_an_ignored_folder() {
        let m = matcher(&[("", "dir/\n!dir/keep.yaml\n")]);
        assert!(m.is_ignored("dir/other.yaml"));
        assert!(!m.is_ignored("dir/keep.yaml"));
    }

    #[test]
    fn deeper_files_override_and_are_scoped() {
        let m = matcher(&[("", "*.yaml\n"), ("sub", "!keep.yaml\n")]);
        assert!(m.is_ignored("a.yaml"));
        assert!(m.is_ignored("sub/b.yaml"));
        assert!(!m.is_ignored("sub/keep.yaml"));
        assert!(m.is_ignored("keep.yaml"));
        let m = matcher(&[("sub", "x.json\n")]);
        assert!(!m.is_ignored("x.json"));
        assert!(m.is_ignored("sub/deeper/x.json"));
    }

    #[test]
    fn anchoring_double_star_comments_and_spaces() {
        let m = matcher(&[("", "# comment\n\n  /top.yaml  \n**/deep.json\nlogs/**\n")]);
        assert!(m.is_ignored("top.yaml"));
        assert!(!m.is_ignored("a/top.yaml"));
        assert!(m.is_ignored("deep.json"));
        assert!(m.is_ignored("a/b/deep.json"));
        assert!(m.is_ignored("logs/x/y.yaml"));
        assert!(!m.is_ignored("# comment"));
    }

    #[test]
    fn go_glob_syntax() {
        let m = matcher(&[("", "[^a]*.yaml\nfile{1,2}\n[!x]\n")]);
        assert!(m.is_ignored("b.yaml"));
        assert!(!m.is_ignored("a.yaml"));
        // Braces and a leading `!` in a class are literal in Go.
        assert!(m.is_ignored("file{1,2}"));
        assert!(!m.is_ignored("file1"));
        assert!(m.is_ignored("!"));
        assert!(!m.is_ignored("y"));
        // A malformed pattern never matches.
        let m = matcher(&[("", "[abc\n")]);
        assert!(!m.is_ignored("a"));
    }

    /// Pattern lines too large for a regex (seen in fuzzing: a `.indexignore` re-encoded as
    /// UTF-16 with a giant string in it; testdata/catalogs/regressions/giant-ignore-pattern)
    /// never panic: a glob one never matches, a plain name still matches literally.
    #[test]
    fn giant_pattern_is_a_non_match_not_a_panic() {
        let literal = "x\u{0}".repeat(200_000);
        let glob = "*x".repeat(100_000);
        let m = matcher(&[("", &literal), ("", &glob)]);
        assert!(!m.is_ignored("catalog.yaml"));
        assert!(m.is_ignored(&format!("sub/{literal}")));
    }
}
