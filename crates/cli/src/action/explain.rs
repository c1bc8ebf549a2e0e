//! `explain`: one rule's record as text (what it checks, why, an example and its repair), as
//! `ruff rule` prints one, and the close matches for an id that names no rule. The command
//! prints what this writes.

use crate::findings::Rule;
use crate::findings::rules::Subject;
use std::io::Write;

/// An id that names no rule; the message lists the closest ids and where the full lists are.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UnknownRule(String);

/// The rule an id (as printed in reports, surrounding blanks ignored) names.
pub fn lookup(id: &str) -> Result<Rule, UnknownRule> {
    Rule::from_id(id.trim()).ok_or_else(|| UnknownRule(unknown(id)))
}

/// The message for an id that names no rule: the closest ids, and where the full lists are.
fn unknown(typed: &str) -> String {
    let close = Rule::close_matches(typed);
    let hint = match close.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        many => format!("; did you mean one of: {}?", many.join(", ")),
    };
    format!(
        "unknown rule \"{typed}\"{hint} (`olmpack bundle validate --list-rules` and `olmpack catalog validate --list-rules` list every rule)"
    )
}

/// Writes the explanation of one rule (the text `explain` prints).
pub fn write_explanation(rule: Rule, out: &mut dyn Write) -> std::io::Result<()> {
    let r = rule.record();
    writeln!(out, "# {}", r.id)?;
    writeln!(out)?;
    let group = if r.group.name() == "default" {
        String::new()
    } else {
        format!(
            ", optional group {} (--select-optional {})",
            r.group.name(),
            r.group.name()
        )
    };
    writeln!(
        out,
        "{} rule, {} by default{group}, since olmpack {}.",
        capitalised(r.subject.name()),
        r.severity.as_str(),
        r.since
    )?;
    if r.subject == Subject::Catalog {
        match r.opm_since {
            Some(since) => writeln!(out, "opm validate checks it: {since}.")?,
            None => writeln!(
                out,
                "opm validate does not check it (olmpack only; a warning, an error under --strict)."
            )?,
        }
    }
    writeln!(out)?;
    writeln!(out, "## What it checks")?;
    writeln!(out)?;
    writeln!(out, "{}", r.summary)?;
    writeln!(out)?;
    writeln!(out, "## Why")?;
    writeln!(out)?;
    writeln!(out, "{}", r.why)?;
    writeln!(out)?;
    writeln!(out, "## Example")?;
    writeln!(out)?;
    indented(r.example.bad, out)?;
    writeln!(out)?;
    writeln!(out, "Instead:")?;
    writeln!(out)?;
    indented(r.example.fix, out)
}

fn indented(text: &str, out: &mut dyn Write) -> std::io::Result<()> {
    for line in text.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_explains_itself() {
        for rule in Rule::ALL {
            let mut out = Vec::new();
            write_explanation(*rule, &mut out).expect("write");
            let text = String::from_utf8(out).expect("utf-8");
            assert!(text.starts_with(&format!("# {}\n", rule.id())), "{text}");
            assert!(text.contains("## Why\n\n"), "{text}");
            assert!(text.contains(rule.summary()), "{text}");
        }
    }

    #[test]
    fn unknown_ids_get_close_matches() {
        let message = lookup("csv/mising").expect_err("no such rule").to_string();
        assert!(message.contains("did you mean csv/missing?"), "{message}");
    }
}
