//! What a pipeline check reports: the pipeline's own check id and verdict, so a finding reads as
//! the pull request's status would, plus what the pipeline lacks (the file, the line, a fix).

use std::fmt;

/// The pipeline's verdict: `Fail` blocks the pull request, `Warn` is shown and passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// operator-pipelines' `Fail`, reported as `error`.
    Error,
    /// operator-pipelines' `Warn`, reported as `warning`.
    Warning,
}

impl Verdict {
    /// The word the pipeline's JSON output uses (`error`, `warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Error => "error",
            Verdict::Warning => "warning",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding of one pipeline check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The pipeline's check id (`check_operator_name`, ...): what `/test skip` and the
    /// repository's `config.yaml` ignore lists name.
    pub check: &'static str,
    /// Failure or warning, as the pipeline reports it.
    pub verdict: Verdict,
    /// The pipeline's message (kept word for word where the pipeline has one).
    pub message: String,
    /// The file it points at, relative to the repository root with `/` separators.
    pub file: Option<String>,
    /// 1-based line in that file, when known.
    pub line: Option<usize>,
    /// What to change to make the check pass.
    pub fix: &'static str,
}

impl Finding {
    /// A failure of `check` with its standard fix.
    pub fn error(check: &'static str, message: impl Into<String>) -> Self {
        Self::new(check, Verdict::Error, message)
    }

    /// A warning of `check` with its standard fix.
    pub fn warning(check: &'static str, message: impl Into<String>) -> Self {
        Self::new(check, Verdict::Warning, message)
    }

    fn new(check: &'static str, verdict: Verdict, message: impl Into<String>) -> Self {
        Finding {
            check,
            verdict,
            message: message.into(),
            file: None,
            line: None,
            fix: super::fixes::fix_for(check),
        }
    }

    /// Points the finding at a file and (when known) a line.
    pub fn at(mut self, file: &str, line: Option<usize>) -> Self {
        self.file = Some(file.to_string());
        self.line = line;
        self
    }

    /// Whether it fails the pipeline.
    pub fn is_error(&self) -> bool {
        self.verdict == Verdict::Error
    }

    /// `file:line`, `file` or an empty string.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => String::new(),
        }
    }
}
