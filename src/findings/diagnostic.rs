//! Findings as data: a rule, a severity, a message and the place it points at. Renderers and the
//! exit-code policy read only this, so the human, JSON and test views can never disagree.

use super::rules::Rule;
use std::fmt;

/// How serious a finding is. Errors fail validation; warnings fail it only under `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Fails validation.
    Error,
    /// Reported; fails validation only under `--strict`.
    Warning,
}

impl Severity {
    /// The word used in both output formats (`error` / `warning`, as operator-sdk's json-alpha1).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
        }
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

/// All findings for one bundle.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The bundle folder as the user named it.
    pub bundle: String,
    /// Findings in a stable order: by file, line, rule.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
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
        self.diagnostics.sort_by(|a, b| {
            (a.severity, &a.file, a.line, a.rule.id(), &a.message).cmp(&(
                b.severity,
                &b.file,
                b.line,
                b.rule.id(),
                &b.message,
            ))
        });
        self.diagnostics.dedup();
    }
}
