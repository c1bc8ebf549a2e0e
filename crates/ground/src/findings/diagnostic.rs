//! Findings as data: a rule, a severity, a message and the place it points at. Renderers and the
//! exit-code policy read only this, so the human, JSON and test views can never disagree.

use super::rules::{Rule, Stage};
use std::fmt;

/// Severity is its own module (rules name a default one, findings carry one); re-exported here
/// where callers have always found it.
pub use super::severity::Severity;

/// One finding of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule that produced it (its id is stable across releases).
    pub rule: Rule,
    /// Severity, normally the rule's default; some rules raise it (e.g. `--k8s-version`).
    pub severity: Severity,
    /// What is wrong and what to do about it.
    pub message: String,
    /// The file it points at, relative to the bundle root with `/` separators.
    pub file: Option<String>,
    /// 1-based line in that file, when known.
    pub line: Option<usize>,
    /// The `--target`s this finding applies to (`ocp-4.16`, `olmv1`, ...): `None` when no
    /// target was named, an empty list when it applies to none of those named. Why: one run
    /// against several clusters must say which of them a problem breaks.
    pub targets: Option<Vec<String>>,
}

impl Diagnostic {
    /// A finding with the rule's default severity and no location yet.
    pub fn new(rule: Rule, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            severity: rule.default_severity(),
            message: message.into(),
            file: None,
            line: None,
            targets: None,
        }
    }

    /// Says which of the named targets the finding applies to.
    pub fn for_targets(mut self, targets: Vec<String>) -> Self {
        self.targets = Some(targets);
        self
    }

    /// Points the finding at a file.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Points the finding at a file and line.
    pub fn at(mut self, file: impl Into<String>, line: usize) -> Self {
        self.file = Some(file.into());
        self.line = Some(line);
        self
    }

    /// Points the finding at a file and line, where line 0 means "no line known" (the
    /// package-manifest reader passes the line it has, which is 0 for a file it could not parse).
    pub fn near(mut self, file: impl Into<String>, line: usize) -> Self {
        self.file = Some(file.into());
        self.line = (line > 0).then_some(line);
        self
    }

    /// Whether it fails validation whatever the options.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Overrides the severity (used by rules whose severity depends on options).
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// `file:line`, `file` or an empty string, for the human renderer.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => String::new(),
        }
    }
}

/// `severity[rule] file:line: message`, the text renderer's line without colour or typed
/// paths, for messages that quote findings (an error saying why a package cannot be rendered).
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = self.location();
        if location.is_empty() {
            write!(f, "{}[{}]: {}", self.severity, self.rule, self.message)
        } else {
            write!(
                f,
                "{}[{}] {location}: {}",
                self.severity, self.rule, self.message
            )
        }
    }
}

/// All findings for one subject: a bundle folder or image, or a catalog folder.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What was checked, as the user named it: a folder path as typed (finding paths are
    /// relative to it), or an image reference with its digest.
    pub subject: String,
    /// The folder finding paths are relative to, as the user typed it; `None` when the subject
    /// is not a folder the user can open (an image).
    pub root: Option<String>,
    /// Findings in a stable order: by file, line, rule.
    pub diagnostics: Vec<Diagnostic>,
    /// Advice about the findings as a whole (e.g. "these errors come from .git/: add a
    /// .indexignore"), printed after them; not findings themselves, so they never change a
    /// verdict.
    pub hints: Vec<String>,
}

impl Report {
    /// A report without hints.
    pub fn new(subject: impl Into<String>, diagnostics: Vec<Diagnostic>) -> Self {
        let subject = subject.into();
        Report {
            root: Some(subject.clone()),
            subject,
            diagnostics,
            hints: Vec::new(),
        }
    }

    /// The path of a finding's file as the user would type it: the subject folder joined with
    /// the file (`DIR/manifests/x.yaml`), the file alone for an image, `None` when the finding
    /// names no file.
    pub fn path_of(&self, d: &Diagnostic) -> Option<String> {
        let file = d.file.as_deref()?;
        let root = self.root.as_deref().unwrap_or("");
        Some(if root.is_empty() || root == "." {
            file.to_string()
        } else if root.ends_with('/') {
            format!("{root}{file}")
        } else {
            format!("{root}/{file}")
        })
    }

    /// Number of error findings.
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// Number of warning findings.
    pub fn warning_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.error_count() > 0
    }

    /// The verdict: no errors, and under `strict` no warnings either.
    pub fn passed(&self, strict: bool) -> bool {
        let blocking_warnings = strict && self.warning_count() > 0;
        !self.has_errors() && !blocking_warnings
    }

    /// Whether a rule fired (used by tests and by callers that gate on one rule).
    pub fn has_rule(&self, rule: Rule) -> bool {
        self.diagnostics.iter().any(|d| d.rule == rule)
    }

    /// Sorts findings so output is stable: errors first, then by file, line and rule id.
    pub fn sort(&mut self) {
        self.sort_by_stage(false);
    }

    /// Sorts as [`Report::sort`], but loading problems (a syntax error, an unreadable file)
    /// before the findings they cause (a blob lost to the syntax error is then "missing"): the
    /// first error a user reads is the one to fix first.
    pub fn sort_root_causes_first(&mut self) {
        self.sort_by_stage(true);
    }

    fn sort_by_stage(&mut self, by_stage: bool) {
        self.diagnostics
            .sort_by(|a, b| sort_key(a, by_stage).cmp(&sort_key(b, by_stage)));
        self.diagnostics.dedup();
    }
}

/// The order of findings in a report: severity, then (for root-causes-first) the stage, then
/// file, line, rule id and message.
fn sort_key(
    d: &Diagnostic,
    by_stage: bool,
) -> (
    Severity,
    Option<Stage>,
    &Option<String>,
    Option<usize>,
    &'static str,
    &str,
) {
    let stage = by_stage.then(|| d.rule.stage());
    (d.severity, stage, &d.file, d.line, d.rule.id(), &d.message)
}
