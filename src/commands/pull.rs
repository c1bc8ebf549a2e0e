//! `olmpack bundle pull`.

use super::{Failure, Outcome};

/// Arguments of `olmpack bundle pull`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `olmpack bundle pull`.
pub fn run(_args: &Args) -> Outcome {
    Err(Failure::usage(
        "olmpack bundle pull is not available in this build yet",
    ))
}
