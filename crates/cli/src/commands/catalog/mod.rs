//! `olmpack catalog …`: one module per subcommand.

pub mod add;
pub mod build;
pub mod cache;
pub mod convert_template;
pub mod diff;
pub mod filter;
pub mod generate_dockerfile;
pub mod graph;
pub mod init;
pub mod matrix;
pub mod mirror;
pub mod mirror_prune;
pub mod onboard;
pub mod query;
pub mod render;
pub mod serve;
pub mod template;
pub mod validate;

// What every subcommand module reaches as `super::…`.
use super::{
    EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome, build_exit, color_on, error_chain, flags,
    print_build_event, write_output,
};
