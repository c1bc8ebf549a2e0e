//! `olmpack explain RULE`: print one rule's record (what it checks, why, an example and its
//! repair), as `ruff rule` does. One top-level command serves bundle and catalog rules alike:
//! ids are unique across both (catalog ids start with `catalog/`), and a user who copies an id
//! from any report should not need to know which half of olmpack printed it. The text is
//! written by [`crate::action::explain`].

use super::{EXIT_OK, Failure, Outcome};
use crate::action::explain;

/// Arguments of `olmpack explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rule id as printed in reports, e.g. `csv/missing` or `catalog/stranded`.
    #[arg(value_name = "RULE")]
    pub rule: String,
}

/// Runs `olmpack explain`: exit 0 with the text, or 2 with close matches for an unknown id.
pub fn run(args: &Args) -> Outcome {
    let rule = explain::lookup(&args.rule).map_err(|e| Failure::usage(e.to_string()))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match explain::write_explanation(rule, &mut out) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::usage(format!("cannot write output: {e}")))
        }
        _ => Ok(EXIT_OK),
    }
}
