//! `olmpack bundle build`.

use super::{Failure, Outcome};

/// Arguments of `olmpack bundle build`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `olmpack bundle build`.
pub fn run(_args: &Args) -> Outcome {
    Err(Failure::usage(
        "olmpack bundle build is not available in this build yet",
    ))
}
