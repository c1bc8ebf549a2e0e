//! `check`: the ecosystem's pull-request checks on a checkout (the pipeline module of the OLM
//! crate), and the four report forms a CI reads: text, JSON (one object per finding, the
//! pipeline's `check` and `type`), SARIF 2.1.0 and GitHub workflow annotations.

use crate::findings::export::{self, Item, Level, RuleInfo};
use crate::pipeline::{self, Finding, Verdict};
use std::fmt::Write as _;

pub use crate::pipeline::{Outcome, Profile, Request};

/// How a run is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportForm {
    /// For a terminal: one line per finding with its fix, then a verdict.
    Text,
    /// A JSON array, one object per finding.
    Json,
    /// A SARIF 2.1.0 log.
    Sarif,
    /// GitHub workflow annotations, one line per finding.
    Github,
}

/// Runs the profile the request names.
pub fn run(req: &Request) -> Result<Outcome, pipeline::RepoError> {
    pipeline::run(req)
}

fn level(f: &Finding) -> Level {
    match f.verdict {
        Verdict::Error => Level::Error,
        Verdict::Warning => Level::Warning,
    }
}

fn item(f: &Finding) -> Item<'_> {
    Item {
        rule: f.check,
        level: level(f),
        message: &f.message,
        file: f.file.as_deref(),
        line: f.line,
    }
}

/// The report of a run in the chosen form (ends with a newline).
pub fn render(outcome: &Outcome, profile: Profile, form: ReportForm) -> String {
    match form {
        ReportForm::Text => text(outcome, profile),
        ReportForm::Json => {
            let list: Vec<serde_json::Value> = outcome
                .findings
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "check": f.check,
                        "type": f.verdict.as_str(),
                        "message": f.message,
                        "file": f.file,
                        "line": f.line,
                        "fix": f.fix,
                    })
                })
                .collect();
            let mut s = serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".into());
            s.push('\n');
            s
        }
        ReportForm::Sarif => {
            let rules: Vec<RuleInfo<'_>> = pipeline::checks::CHECKS
                .iter()
                .map(|(id, help)| RuleInfo { id, help })
                .collect();
            let items: Vec<Item<'_>> = outcome.findings.iter().map(item).collect();
            let log = export::sarif(
                "olmpack",
                env!("CARGO_PKG_VERSION"),
                "https://github.com/redhat-openshift-ecosystem/operator-pipelines",
                &rules,
                &items,
            );
            let mut s = serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".into());
            s.push('\n');
            s
        }
        ReportForm::Github => {
            let mut s = String::new();
            for f in &outcome.findings {
                let _ = writeln!(s, "{}", export::github_annotation(&item(f)));
            }
            s
        }
    }
}

fn text(outcome: &Outcome, profile: Profile) -> String {
    let mut s = String::new();
    for f in &outcome.findings {
        let location = f.location();
        let at = if location.is_empty() {
            String::new()
        } else {
            format!(" {location}:")
        };
        let _ = writeln!(s, "{}[{}]{at} {}", f.verdict, f.check, f.message);
        if !f.fix.is_empty() {
            let _ = writeln!(s, "  fix: {}", f.fix);
        }
    }
    let errors = outcome.findings.iter().filter(|f| f.is_error()).count();
    let warnings = outcome.findings.len() - errors;
    let waived = if outcome.waived.is_empty() {
        String::new()
    } else {
        format!(", {} ignored by config.yaml", outcome.waived.len())
    };
    let what = match outcome.checked.as_slice() {
        [one] if !outcome.whole_repo => one.clone(),
        many => format!("{} operators", many.len()),
    };
    let verdict = if errors == 0 { "passed" } else { "failed" };
    let _ = writeln!(
        s,
        "{what}: {} profile {verdict}: {errors} error(s), {warnings} warning(s){waived}",
        profile.name()
    );
    s
}
