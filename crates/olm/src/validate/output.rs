//! How validation reports are printed: one line per finding for people (colour only on a
//! terminal), and three machine shapes. Named "output", not "render": in olmpack "render" means
//! opm's `render` (a bundle or catalog turned into FBC blobs).
//!
//! The shapes (docs/guide/output.md documents each):
//! - text: `severity[rule] path:line: message` per finding, a verdict line per subject, and a
//!   `total:` line for several. With several folders a path is the one the user would type
//!   (`DIR/manifests/x.yaml:14`); with one it is relative to the folder, as operator-sdk prints.
//! - JSON for one bundle: operator-sdk's json-alpha1 `{"passed", "outputs"}` (plus `rule`,
//!   `file`, `line`), since users parse it; for several bundles `{"passed", "bundles": [...]}`.
//! - JSON for catalogs, any number: `{"passed", "subjects": [SUBJECT...]}`, neutral keys.
//! - JSON Lines (`-o jsonl`) for bundles and catalogs alike: one SUBJECT object per line, the
//!   stable machine format for many subjects.
//!
//! SUBJECT is `{"subject", "kind", "passed", "errors", "warnings", "outputs": [{"type", "rule",
//! "message", "file", "line", "path"}], "hints"}`. With `--target`, every output also has
//! `"targets"`: the targets named that the finding affects.

use super::{Report, Severity};
use crate::findings::rules::Subject;
use serde_json::json;
use std::io::{self, Write};

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const GREEN: &str = "\x1b[1;32m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Writes `severity[rule] file:line: message` lines and a summary line for one subject
/// (verdict without `--strict`, paths relative to the subject).
pub fn human(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    human_with(report, out, color, false, false)
}

/// Like [`human`], with the verdict computed under `strict`, and with each finding's path as
/// the user would type it (the subject folder joined with the file) when `typed_paths`.
pub fn human_with(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    strict: bool,
    typed_paths: bool,
) -> io::Result<()> {
    for d in &report.diagnostics {
        let (c, word) = match d.severity {
            Severity::Error => (RED, "error"),
            Severity::Warning => (YELLOW, "warning"),
        };
        let location = match (typed_paths, report.path_of(d)) {
            (true, Some(path)) => match d.line {
                Some(line) => format!("{path}:{line}"),
                None => path,
            },
            _ => d.location(),
        };
        let location = if location.is_empty() {
            String::new()
        } else {
            format!(" {location}:")
        };
        let targets = match &d.targets {
            None => String::new(),
            Some(t) if t.is_empty() => " (targets: none of those named)".to_string(),
            Some(t) => format!(" (targets: {})", t.join(", ")),
        };
        if color {
            writeln!(
                out,
                "{c}{word}{RESET}{DIM}[{}]{RESET}{location} {}{DIM}{targets}{RESET}",
                d.rule.id(),
                d.message
            )?;
        } else {
            writeln!(
                out,
                "{word}[{}]{location} {}{targets}",
                d.rule.id(),
                d.message
            )?;
        }
    }
    for hint in &report.hints {
        if color {
            writeln!(out, "{DIM}hint:{RESET} {hint}")?;
        } else {
            writeln!(out, "hint: {hint}")?;
        }
    }
    summary(report, out, color, strict)
}

/// The closing line for one subject: its verdict and counts.
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
        writeln!(out, "{}: {c}{verdict}{RESET} ({counts})", report.subject)
    } else {
        writeln!(out, "{}: {verdict} ({counts})", report.subject)
    }
}

/// The text report of a whole run: each report as [`human_with`] (paths as typed when there
/// are several), then, for more than one, a `total:` line counting them as bundles or
/// catalogs, so `bundle validate` and `catalog validate` print the same shape.
pub fn text(
    reports: &[Report],
    kind: Subject,
    strict: bool,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let several = reports.len() > 1;
    for report in reports {
        human_with(report, out, color, strict, several)?;
    }
    if several {
        let failed = reports.iter().filter(|r| !r.passed(strict)).count();
        let errors: usize = reports.iter().map(Report::error_count).sum();
        let warnings: usize = reports.iter().map(Report::warning_count).sum();
        writeln!(
            out,
            "total: {} {}{}, {} valid, {} invalid, {errors} error{}, {warnings} warning{}",
            reports.len(),
            kind.name(),
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

/// The operator-sdk JSON value for one bundle: `{"passed", "outputs": [{type, rule, message,
/// file, line}]}`.
pub fn json_value(report: &Report, strict: bool) -> serde_json::Value {
    json!({ "passed": report.passed(strict), "outputs": outputs(report, false) })
}

/// The findings of a report as JSON objects, with the path as typed when `with_path`.
fn outputs(report: &Report, with_path: bool) -> Vec<serde_json::Value> {
    report
        .diagnostics
        .iter()
        .map(|d| {
            let mut value = json!({
                "type": d.severity.as_str(),
                "rule": d.rule.id(),
                "message": d.message,
                "file": d.file,
                "line": d.line,
            });
            if with_path && let Some(obj) = value.as_object_mut() {
                obj.insert("path".into(), json!(report.path_of(d)));
            }
            if let (Some(targets), Some(obj)) = (&d.targets, value.as_object_mut()) {
                obj.insert("targets".into(), json!(targets));
            }
            value
        })
        .collect()
}

/// What JSON names a subject by: the folder as typed when there is one (a package manifest's
/// text label, `DIR (package manifest)`, is for people), else the subject (an image reference).
fn subject_key(report: &Report) -> &str {
    report.root.as_deref().unwrap_or(&report.subject)
}

/// The neutral object for one subject (a line of JSON Lines, an element of the catalogs'
/// `subjects`): what was checked, its kind, verdict, counts, findings with the path as typed,
/// and hints.
pub fn subject_value(report: &Report, kind: Subject, strict: bool) -> serde_json::Value {
    json!({
        "subject": subject_key(report),
        "kind": kind.key(),
        "passed": report.passed(strict),
        "errors": report.error_count(),
        "warnings": report.warning_count(),
        "outputs": outputs(report, true),
        "hints": report.hints,
    })
}

/// JSON for a run. Bundles: operator-sdk's shape for one (the shape its users parse) or, for
/// several, the overall verdict and one entry per bundle (`{"passed", "bundles": [{"bundle",
/// "passed", "outputs"}]}`). Catalogs, any number: `{"passed", "subjects": [...]}` of
/// [`subject_value`]s.
pub fn json(
    reports: &[Report],
    kind: Subject,
    strict: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let passed = reports.iter().all(|r| r.passed(strict));
    let value = match (kind, reports) {
        (Subject::Bundle, [one]) => json_value(one, strict),
        // Package manifests: the bundle shape, tagged so scripts can tell the layouts apart.
        (Subject::PackageManifest, [one]) => {
            let mut v = json_value(one, strict);
            if let Some(obj) = v.as_object_mut() {
                obj.insert("layout".into(), json!("package-manifest"));
            }
            v
        }
        (Subject::Bundle | Subject::PackageManifest, _) => {
            let bundles: Vec<serde_json::Value> = reports
                .iter()
                .map(|r| {
                    let mut v = json_value(r, strict);
                    if let Some(obj) = v.as_object_mut() {
                        obj.insert("bundle".into(), json!(subject_key(r)));
                    }
                    v
                })
                .collect();
            json!({ "passed": passed, "bundles": bundles })
        }
        (Subject::Catalog | Subject::Repository, _) => {
            let subjects: Vec<serde_json::Value> = reports
                .iter()
                .map(|r| subject_value(r, kind, strict))
                .collect();
            json!({ "passed": passed, "subjects": subjects })
        }
    };
    serde_json::to_writer_pretty(&mut *out, &value).map_err(io_error)?;
    writeln!(out)
}

/// JSON Lines: one compact [`subject_value`] per line, in the order given.
pub fn jsonl(
    reports: &[Report],
    kind: Subject,
    strict: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    for report in reports {
        serde_json::to_writer(&mut *out, &subject_value(report, kind, strict)).map_err(io_error)?;
        writeln!(out)?;
    }
    Ok(())
}

/// Keeps the I/O error's kind: callers treat a closed pipe (`| head`) as a normal end.
fn io_error(e: serde_json::Error) -> io::Error {
    match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    }
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
        let err = json(&reports, Subject::Bundle, false, &mut ClosedPipe)
            .expect_err("the pipe is closed");
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }

    fn report(name: &str, diagnostics: Vec<Diagnostic>) -> Report {
        Report::new(name, diagnostics)
    }

    #[test]
    fn text_names_the_noun_in_the_total() {
        let reports = [
            report("a", Vec::new()),
            report("b", vec![Diagnostic::new(Rule::FileUnreadable, "gone")]),
        ];
        let mut out = Vec::new();
        text(&reports, Subject::Catalog, false, false, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.ends_with("total: 2 catalogs, 1 valid, 1 invalid, 1 error, 0 warnings\n"),
            "{out}"
        );
        let mut one = Vec::new();
        text(&reports[..1], Subject::Bundle, false, false, &mut one).unwrap();
        assert_eq!(
            String::from_utf8(one).unwrap(),
            "a: valid (0 errors, 0 warnings)\n"
        );
    }

    #[test]
    fn several_subjects_print_paths_as_typed() {
        let reports = [
            report(
                "dirs/a/",
                vec![Diagnostic::new(Rule::CsvMissing, "no csv").at("manifests/x.yaml", 14)],
            ),
            report(
                "b",
                vec![
                    Diagnostic::new(Rule::FileUnreadable, "gone"),
                    Diagnostic::new(Rule::CsvMissing, "no csv").in_file("manifests/"),
                ],
            ),
        ];
        let mut out = Vec::new();
        text(&reports, Subject::Bundle, false, false, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("error[csv/missing] dirs/a/manifests/x.yaml:14: no csv\n"),
            "{out}"
        );
        assert!(out.contains("error[file/unreadable] gone\n"), "{out}");
        assert!(
            out.contains("error[csv/missing] b/manifests/: no csv\n"),
            "{out}"
        );
        // One subject keeps paths relative to it, as operator-sdk prints them.
        let mut one = Vec::new();
        text(&reports[..1], Subject::Bundle, false, false, &mut one).unwrap();
        let one = String::from_utf8(one).unwrap();
        assert!(
            one.starts_with("error[csv/missing] manifests/x.yaml:14: no csv\n"),
            "{one}"
        );
    }

    #[test]
    fn json_lines_hold_one_neutral_object_per_subject() {
        let mut with_hint = report(
            "cat",
            vec![Diagnostic::new(Rule::CatalogSyntax, "bad").at(".git/HEAD", 1)],
        );
        with_hint.hints.push("add a .indexignore".into());
        let reports = [with_hint, report("ok", vec![])];
        let mut out = Vec::new();
        jsonl(&reports, Subject::Catalog, false, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            json!({
                "subject": "cat", "kind": "catalog", "passed": false, "errors": 1, "warnings": 0,
                "outputs": [{"type": "error", "rule": "catalog/syntax", "message": "bad",
                             "file": ".git/HEAD", "line": 1, "path": "cat/.git/HEAD"}],
                "hints": ["add a .indexignore"],
            })
        );
        assert_eq!(lines[1]["passed"], true);
    }

    #[test]
    fn catalogs_get_neutral_json_keys_and_one_bundle_keeps_operator_sdk_shape() {
        let mut out = Vec::new();
        json(&[report("c", vec![])], Subject::Catalog, false, &mut out).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["subjects"][0]["subject"], "c");
        assert!(value.get("bundles").is_none() && value.get("outputs").is_none());
        let mut out = Vec::new();
        json(&[report("b", vec![])], Subject::Bundle, false, &mut out).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value, json!({"passed": true, "outputs": []}));
    }
}
