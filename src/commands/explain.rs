//! `olmpack explain RULE`: print one rule's record (what it checks, why, an example and its
//! repair), as `ruff rule` does. One top-level command serves bundle and catalog rules alike:
//! ids are unique across both (catalog ids start with `catalog/`), and a user who copies an id
//! from any report should not need to know which half of olmpack printed it.

use super::{EXIT_OK, Failure, Outcome};
use crate::findings::Rule;
use crate::findings::rules::Subject;
use std::io::Write;

/// Arguments of `olmpack explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rule id as printed in reports, e.g. `csv/missing` or `catalog/stranded`.
    #[arg(value_name = "RULE")]
    pub rule: String,
}

/// Runs `olmpack explain`: exit 0 with the text, or 2 with close matches for an unknown id.
pub fn run(args: &Args) -> Outcome {
    let Some(rule) = Rule::from_id(args.rule.trim()) else {
        return Err(Failure::usage(unknown(&args.rule)));
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match write_explanation(rule, &mut out) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::usage(format!("cannot write output: {e}")))
        }
        _ => Ok(EXIT_OK),
    }
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
        let message = unknown("csv/mising");
        assert!(message.contains("did you mean csv/missing?"), "{message}");
    }
}
