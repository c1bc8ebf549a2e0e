//! `olmpack catalog diff OLD NEW`: what changed between two catalogs and which installed
//! versions lose their upgrade path; exit 1 when `--fail-on` names something that happened.

use super::flags::RegistryArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::catalog_diff::{DiffFormat, FailOn, diff_catalogs};
use std::io::Write;

/// Report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a terminal.
    Text,
    /// Stable keys, for tools.
    Json,
    /// A pull-request comment: a summary table, then per package the changes.
    Markdown,
}

/// What fails the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOnArg {
    /// An upgrade-path regression.
    Regression,
    /// Any change.
    Any,
}

/// Arguments of `olmpack catalog diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The catalog before: a folder or a catalog image (registry, oci:, oci-archive:,
    /// docker-archive:).
    #[arg(value_name = "OLD")]
    pub old: String,
    /// The catalog after.
    #[arg(value_name = "NEW")]
    pub new: String,
    /// Report format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Format,
    /// Exit 1 when this happened (default: exit 0 whatever changed).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub fail_on: Option<FailOnArg>,
    #[command(flatten)]
    /// Registry access for image sources.
    pub registry: RegistryArgs,
}

/// Runs `catalog diff`.
pub fn run(args: &Args) -> Outcome {
    let old = Location::parse(&args.old).map_err(|e| Failure::usage(e.to_string()))?;
    let new = Location::parse(&args.new).map_err(|e| Failure::usage(e.to_string()))?;
    let registry = if old.is_local() && new.is_local() {
        Default::default()
    } else {
        args.registry.options(&[&args.old, &args.new])?
    };
    let format = match args.output {
        Format::Text => DiffFormat::Text,
        Format::Json => DiffFormat::Json,
        Format::Markdown => DiffFormat::Markdown,
    };
    let fail_on = match args.fail_on {
        None => FailOn::Nothing,
        Some(FailOnArg::Regression) => FailOn::Regression,
        Some(FailOnArg::Any) => FailOn::Any,
    };
    let out = diff_catalogs(&old, &new, format, fail_on, &registry)
        .map_err(|e| Failure::usage(e.to_string()))?;
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    std::io::stdout()
        .write_all(out.text.as_bytes())
        .map_err(|e| Failure::usage(format!("cannot write to standard output: {e}")))?;
    Ok(if out.failed { EXIT_FINDINGS } else { EXIT_OK })
}
