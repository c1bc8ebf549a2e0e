//! Text and JSON output for package-manifest validation, in the shape `bundle validate` prints
//! for bundles (`severity[rule] file:line: message`, then a verdict; JSON with `passed` and
//! `outputs`), so scripts need not tell the two layouts apart.

use super::validate::Report;
use crate::findings::Severity;
use serde_json::json;
use std::io::{self, Write};

/// Whether the report passes (no errors; no warnings either under `strict`).
pub fn passed(report: &Report, strict: bool) -> bool {
    !report.has_errors() && (!strict || report.findings.is_empty())
}

/// Writes one package's findings and its verdict line (`<label> (package manifest): valid …`).
pub fn text(report: &Report, label: &str, strict: bool, out: &mut dyn Write) -> io::Result<()> {
    for f in &report.findings {
        writeln!(out, "{f}")?;
    }
    let errors = report.errors().count();
    let warnings = report.findings.len() - errors;
    writeln!(
        out,
        "{label} (package manifest): {} ({errors} error{}, {warnings} warning{})",
        if passed(report, strict) {
            "valid"
        } else {
            "invalid"
        },
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
    )
}

/// operator-sdk's json-alpha1 shape plus `rule`, `file`, `line` and `layout`.
pub fn json_value(report: &Report, strict: bool) -> serde_json::Value {
    let outputs: Vec<serde_json::Value> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "type": match f.rule.severity() { Severity::Error => "error", Severity::Warning => "warning" },
                "rule": f.rule.id(),
                "message": f.message,
                "file": f.file,
                "line": f.line,
            })
        })
        .collect();
    json!({ "passed": passed(report, strict), "layout": "package-manifest", "outputs": outputs })
}
