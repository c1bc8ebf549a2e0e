//! Findings as shared vocabulary: the rule registry, severities, diagnostics and reports.
//!
//! Models (`bundle`, `catalog`) report what they could not load as findings, and the rule layer
//! (`validate`) adds its own; both sit above this module, so a model never depends on the rules
//! that judge it and the renderers read one shape for every kind of input.

pub mod diagnostic;
pub mod export;
pub mod rules;
pub mod severity;

pub use diagnostic::{Diagnostic, Report, Severity};
pub use rules::{Group, Rule};

/// The message of a finding that reports a failure (a bundle that cannot be loaded, a check
/// that cannot run): the error with its causes. A finding is text by design (printed, written
/// as JSON, SARIF or an annotation), so this is the one place inside the libraries where an
/// error becomes a finding's words.
pub fn message_of(error: &dyn std::error::Error) -> String {
    crate::errors::error_chain(error)
}
