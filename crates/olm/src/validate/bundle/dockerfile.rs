//! `bundle.Dockerfile` LABELs against `metadata/annotations.yaml`. Users build with docker from
//! that file, and the two drift apart (operator-sdk#4992, #5002, #6787); the on-cluster registry
//! reads only annotations.yaml, so a mismatch ships an image whose labels lie about it.

use super::{Ctx, Diagnostic, Rule};
use crate::bundle::keys;
use std::collections::BTreeMap;

/// Dockerfile names looked for in the bundle folder.
const NAMES: [&str; 2] = ["bundle.Dockerfile", "Dockerfile"];

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let Some(ann) = &ctx.bundle.annotations else {
        return;
    };
    for name in NAMES {
        let path = ctx.bundle.root.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let labels = parse_labels(&text);
        if labels.is_empty() {
            continue;
        }
        for a in ann
            .entries
            .iter()
            .filter(|a| a.key.starts_with(keys::BUNDLE_PREFIX))
        {
            match labels.get(&a.key) {
                Some((value, _)) if value == a.value.trim() => {}
                Some((value, line)) => ctx.push(
                    Diagnostic::new(
                        Rule::DockerfileLabels,
                        format!("LABEL {}={value} differs from annotations.yaml (\"{}\"); images built from this file carry the wrong label", a.key, a.value.trim()),
                    )
                    .at(name, *line),
                ),
                None => ctx.push(
                    Diagnostic::new(
                        Rule::DockerfileLabels,
                        format!("no LABEL {} (annotations.yaml has \"{}\"); `olmpack bundle init --dockerfile` rewrites the file in sync", a.key, a.value.trim()),
                    )
                    .in_file(name),
                ),
            }
        }
        for (key, (value, line)) in &labels {
            if key.starts_with(keys::BUNDLE_PREFIX) && ann.get(key).is_none() {
                ctx.push(
                    Diagnostic::new(
                        Rule::DockerfileLabels,
                        format!("LABEL {key}={value} has no counterpart in annotations.yaml"),
                    )
                    .at(name, *line),
                );
            }
        }
        return; // the first Dockerfile found is the one users build with
    }
}

/// Collects `LABEL k=v ...` instructions (continuations joined, quotes removed), with the line of
/// each instruction.
pub(crate) fn parse_labels(text: &str) -> BTreeMap<String, (String, usize)> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    let mut start = 0;
    for (i, raw) in text.lines().enumerate() {
        if logical.is_empty() {
            start = i + 1;
        }
        let line = raw.trim_end();
        if let Some(body) = line.strip_suffix('\\') {
            logical.push_str(body);
            logical.push(' ');
            continue;
        }
        logical.push_str(line);
        let instruction = std::mem::take(&mut logical);
        let trimmed = instruction.trim_start();
        let Some(rest) = trimmed
            .get(..6)
            .filter(|p| p.eq_ignore_ascii_case("LABEL "))
            .map(|_| &trimmed[6..])
        else {
            continue;
        };
        for (k, v) in split_pairs(rest) {
            out.insert(k, (v, start));
        }
    }
    out
}

fn split_pairs(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let key = read_word(&mut chars, true);
        let value = if chars.next_if_eq(&'=').is_some() {
            read_word(&mut chars, false)
        } else {
            String::new()
        };
        if !key.is_empty() {
            pairs.push((key, value));
        }
    }
    pairs
}

fn read_word(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, key: bool) -> String {
    let mut out = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || (key && c == '=') {
            break;
        }
        chars.next();
        if c == '"' || c == '\'' {
            while let Some(n) = chars.next() {
                if n == '\\' && c == '"' {
                    if let Some(e) = chars.next() {
                        out.push(e);
                    }
                } else if n == c {
                    break;
                } else {
                    out.push(n);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse_labels;

    #[test]
    fn labels_with_quotes_and_continuations() {
        let labels =
            parse_labels("FROM scratch\nLABEL a=1 b=\"two words\" \\\n  c='x'\nlabel d=4\n");
        assert_eq!(labels.get("a").map(|v| v.0.as_str()), Some("1"));
        assert_eq!(labels.get("b").map(|v| v.0.as_str()), Some("two words"));
        assert_eq!(labels.get("c"), Some(&("x".to_string(), 2)));
        assert_eq!(labels.get("d").map(|v| v.1), Some(4));
    }
}
