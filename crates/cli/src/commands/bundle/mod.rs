//! `olmpack bundle …`: one module per subcommand.

pub mod build;
pub mod init;
pub mod inspect;
pub mod migrate;
pub mod pin;
pub mod pull;
pub mod render;
pub mod republish;
pub mod validate;

// What every subcommand module reaches as `super::…`.
use super::{
    EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome, build_exit, color_on, error_chain, flags,
    print_build_event,
};
