//! `olmpack bundle validate`.

use super::{Failure, Outcome};

/// Arguments of `olmpack bundle validate`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `olmpack bundle validate`.
pub fn run(_args: &Args) -> Outcome {
    Err(Failure::usage(
        "olmpack bundle validate is not available in this build yet",
    ))
}
