//! `olmpack bundle inspect`.

use super::{Failure, Outcome};

/// Arguments of `olmpack bundle inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `olmpack bundle inspect`.
pub fn run(_args: &Args) -> Outcome {
    Err(Failure::usage(
        "olmpack bundle inspect is not available in this build yet",
    ))
}
