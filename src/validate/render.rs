//! Renderers for reports: one line per finding for people (colour only on a terminal), and JSON
//! in operator-sdk's json-alpha1 shape plus `rule`, `file` and `line` for machines.

use super::{Report, Severity};
use serde_json::json;
use std::io::{self, Write};

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const GREEN: &str = "\x1b[1;32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Writes `severity[rule] file:line: message` lines and a summary line for one bundle
/// (verdict without `--strict`).
pub fn human(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    human_with(report, out, color, false)
}

/// Like [`human`], with the verdict computed under `strict`.
pub fn human_with(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    strict: bool,
) -> io::Result<()> {
    for d in &report.diagnostics {
        let (c, word) = match d.severity {
            Severity::Error => (RED, "error"),
            Severity::Warning => (YELLOW, "warning"),
        };
        let location = d.location();
        let location = if location.is_empty() {
            String::new()
        } else {
            format!(" {location}:")
        };
        if color {
            writeln!(
                out,
                "{c}{word}{RESET}{DIM}[{}]{RESET}{location} {}",
                d.rule.id(),
                d.message
            )?;
        } else {
            writeln!(out, "{word}[{}]{location} {}", d.rule.id(), d.message)?;
        }
    }
    summary(report, out, color, strict)
}

/// The closing line for one bundle: its verdict and counts.
pub fn summary(report: &Report, out: &mut dyn Write, color: bool, strict: bool) -> io::Result<()> {
    let (errors, warnings) = (report.error_count(), report.warning_count());
    let verdict = if report.passed(strict) {
        "valid"
    } else {
        "invalid"
    };
    let counts = format!(
        "{errors} error{}, {warnings} warning{}",
        plural(errors),
        plural(warnings)
    );
    if color {
        let c = if report.passed(strict) { GREEN } else { RED };
        writeln!(out, "{}: {c}{verdict}{RESET} ({counts})", report.bundle)
    } else {
        writeln!(out, "{}: {verdict} ({counts})", report.bundle)
    }
}

/// The text report of a whole run: each report as [`human_with`], then, for more than one, a
/// `total:` line counting them as `noun`s (`bundle`, `catalog`), so `bundle validate` and
/// `catalog validate` print the same shape.
pub fn text(
    reports: &[Report],
    noun: &str,
    strict: bool,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    for report in reports {
        human_with(report, out, color, strict)?;
    }
    if reports.len() > 1 {
        let failed = reports.iter().filter(|r| !r.passed(strict)).count();
        let errors: usize = reports.iter().map(Report::error_count).sum();
        let warnings: usize = reports.iter().map(Report::warning_count).sum();
        writeln!(
            out,
            "total: {} {noun}{}, {} valid, {} invalid, {errors} error{}, {warnings} warning{}",
            reports.len(),
            plural(reports.len()),
            reports.len() - failed,
            failed,
            plural(errors),
            plural(warnings)
        )?;
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The JSON value for one bundle: `{"passed", "outputs": [{type, rule, message, file, line}]}`.
pub fn json_value(report: &Report, strict: bool) -> serde_json::Value {
    let outputs: Vec<serde_json::Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            json!({
                "type": d.severity.as_str(),
                "rule": d.rule.id(),
                "message": d.message,
                "file": d.file,
                "line": d.line,
            })
        })
        .collect();
    json!({ "passed": report.passed(strict), "outputs": outputs })
}

/// JSON for one bundle (the shape operator-sdk users parse) or, for several, an object with the
/// overall verdict and one entry per bundle.
pub fn json(reports: &[Report], strict: bool, out: &mut dyn Write) -> io::Result<()> {
    let value = if let [one] = reports {
        json_value(one, strict)
    } else {
        let bundles: Vec<serde_json::Value> = reports
            .iter()
            .map(|r| {
                let mut v = json_value(r, strict);
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("bundle".into(), json!(r.bundle));
                }
                v
            })
            .collect();
        json!({ "passed": reports.iter().all(|r| r.passed(strict)), "bundles": bundles })
    };
    // Keep the I/O error's kind: callers treat a closed pipe (`| head`) as a normal end.
    serde_json::to_writer_pretty(&mut *out, &value).map_err(|e| match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    })?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Diagnostic, Rule};

    /// A reader that went away, as `olmpack ... | head` does.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_keeps_a_broken_pipe_recognisable() {
        let reports = vec![report("a", vec![]), report("b", vec![])];
        let err = json(&reports, false, &mut ClosedPipe).expect_err("the pipe is closed");
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }

    fn report(name: &str, diagnostics: Vec<Diagnostic>) -> Report {
        Report {
            bundle: name.into(),
            diagnostics,
        }
    }

    #[test]
    fn text_names_the_noun_in_the_total() {
        let reports = [
            report("a", Vec::new()),
            report("b", vec![Diagnostic::new(Rule::FileUnreadable, "gone")]),
        ];
        let mut out = Vec::new();
        text(&reports, "catalog", false, false, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.ends_with("total: 2 catalogs, 1 valid, 1 invalid, 1 error, 0 warnings\n"),
            "{out}"
        );
        let mut one = Vec::new();
        text(&reports[..1], "bundle", false, false, &mut one).unwrap();
        assert_eq!(
            String::from_utf8(one).unwrap(),
            "a: valid (0 errors, 0 warnings)\n"
        );
    }
}
