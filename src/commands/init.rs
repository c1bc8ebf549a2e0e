//! `olmpack bundle init`.

use super::{Failure, Outcome};

/// Arguments of `olmpack bundle init`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `olmpack bundle init`.
pub fn run(_args: &Args) -> Outcome {
    Err(Failure::usage(
        "olmpack bundle init is not available in this build yet",
    ))
}
