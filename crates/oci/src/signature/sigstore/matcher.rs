//! How a certificate identity or OIDC issuer is matched: exactly, or by a regular expression
//! with the meaning cosign gives it. cosign compiles `--certificate-identity-regexp` with Go's
//! `regexp` (RE2), where `\d \w \s \b` are ASCII; Rust's `regex` makes them Unicode, so a
//! pattern such as `^[\w.-]+@example\.com$` would let a certificate for `ʂomeone@example.com`
//! (a non-ASCII lookalike) through where cosign refuses it. [`Matcher::go_regexp`] rewrites
//! those classes into their ASCII sets before compiling, so both tools accept the same names.

use regex_syntax::ast::{self, Ast, ClassPerlKind, ClassSetItem, Span};

/// How an identity or issuer is matched: exactly, or by a Go-style unanchored regexp (cosign's
/// `--certificate-identity-regexp`, which uses `regexp.MatchString`).
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Equal to this string.
    Exact(String),
    /// Matched anywhere by this expression (anchor it with `^...$` to match whole values).
    Regex(regex::Regex),
}

impl Matcher {
    /// Whether `value` matches.
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::Exact(s) => s == value,
            Matcher::Regex(r) => r.is_match(value),
        }
    }

    /// Compiles `pattern` as Go's RE2 reads it: `\d \D \w \W \s \S` become their ASCII sets
    /// and `\b \B` ASCII word boundaries; Rust-only syntax RE2 refuses (`\b{start}`, `\<`) is
    /// refused here too. The error is the parser's message.
    pub fn go_regexp(pattern: &str) -> Result<Matcher, String> {
        let translated = go_to_rust(pattern)?;
        regex::Regex::new(&translated)
            .map(Matcher::Regex)
            .map_err(|e| e.to_string())
    }
}

impl std::fmt::Display for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::Exact(s) => write!(f, "{s:?}"),
            Matcher::Regex(r) => write!(f, "a match of /{}/", r.as_str()),
        }
    }
}

/// The ASCII sets RE2 gives its Perl classes (`syntax/perl_groups.go`).
fn ascii_class(kind: &ClassPerlKind, negated: bool) -> &'static str {
    match (kind, negated) {
        (ClassPerlKind::Digit, false) => "[0-9]",
        (ClassPerlKind::Digit, true) => "[^0-9]",
        (ClassPerlKind::Space, false) => "[\\t\\n\\f\\r ]",
        (ClassPerlKind::Space, true) => "[^\\t\\n\\f\\r ]",
        (ClassPerlKind::Word, false) => "[0-9A-Za-z_]",
        (ClassPerlKind::Word, true) => "[^0-9A-Za-z_]",
    }
}

/// Collects the spans to rewrite, with their replacement.
struct Rewrites(Vec<(Span, &'static str)>, Option<String>);

impl ast::Visitor for Rewrites {
    type Output = Vec<(Span, &'static str)>;
    type Err = String;

    fn finish(self) -> Result<Self::Output, String> {
        match self.1 {
            Some(e) => Err(e),
            None => Ok(self.0),
        }
    }

    fn visit_pre(&mut self, a: &Ast) -> Result<(), String> {
        match a {
            Ast::ClassPerl(c) => self.0.push((c.span, ascii_class(&c.kind, c.negated))),
            Ast::Assertion(x) => match x.kind {
                ast::AssertionKind::WordBoundary => self.0.push((x.span, "(?-u:\\b)")),
                ast::AssertionKind::NotWordBoundary => self.0.push((x.span, "(?-u:\\B)")),
                ast::AssertionKind::StartLine
                | ast::AssertionKind::EndLine
                | ast::AssertionKind::StartText
                | ast::AssertionKind::EndText => {}
                _ => {
                    self.1 = Some(format!(
                        "{:?} at offset {} is not RE2 syntax (cosign would refuse it)",
                        x.kind, x.span.start.offset
                    ))
                }
            },
            _ => {}
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), String> {
        if let ClassSetItem::Perl(c) = item {
            // A nested class is valid inside a bracket class too: `[\w.]` -> `[[0-9A-Za-z_].]`.
            self.0.push((c.span, ascii_class(&c.kind, c.negated)));
        }
        Ok(())
    }
}

/// `pattern` with RE2's ASCII meaning made explicit for Rust's `regex`.
fn go_to_rust(pattern: &str) -> Result<String, String> {
    let parsed = ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    let mut spans = ast::visit(&parsed, Rewrites(Vec::new(), None))?;
    spans.sort_by_key(|(s, _)| s.start.offset);
    let mut out = String::with_capacity(pattern.len() + 16 * spans.len());
    let mut at = 0;
    for (span, with) in spans {
        let (start, end) = (span.start.offset, span.end.offset);
        if start < at || end > pattern.len() {
            return Err("overlapping classes in the expression".into());
        }
        out.push_str(&pattern[at..start]);
        out.push_str(with);
        at = end;
    }
    out.push_str(&pattern[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, v: &str) -> bool {
        Matcher::go_regexp(p).unwrap().matches(v)
    }

    #[test]
    fn perl_classes_are_ascii_as_in_re2() {
        // Go: regexp.MustCompile(`^\w+@example\.com$`).MatchString("ʂomeone@example.com") == false
        assert!(m(r"^\w+@example\.com$", "someone@example.com"));
        assert!(!m(r"^\w+@example\.com$", "ʂomeone@example.com"));
        assert!(!m(r"^[\w.-]+@example\.com$", "jöhn@example.com"));
        assert!(m(r"^[\w.-]+@example\.com$", "j.o-hn@example.com"));
        assert!(!m(r"^\d+$", "١٢٣"));
        assert!(m(r"^\D+$", "١٢٣"));
        assert!(!m(r"^a\sb$", "a\u{2003}b"));
        assert!(m(r"^a\Sb$", "a\u{2003}b"));
        assert!(!m(r"^\W$", "_"));
        assert!(m(r"^[^\W]$", "_"));
        // ASCII word boundary: "é" is not a word character for RE2.
        assert!(m(r"\bx", "éx"));
        // Unanchored, like MatchString.
        assert!(m(r"olmpack/test/", "https://github.com/olmpack/test/x"));
        assert!(Matcher::go_regexp(r"\b{start}x").is_err());
        assert!(Matcher::go_regexp(r"(").is_err());
    }
}
