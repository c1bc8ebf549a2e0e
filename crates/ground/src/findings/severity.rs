//! How serious a finding is: a rule record names its default, a finding carries its own. A
//! module of its own so the rule records and the findings both stand on it.

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
