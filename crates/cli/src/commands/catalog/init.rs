//! `olmpack catalog init PACKAGE`: print the `olm.package` blob opm init prints.

use super::flags::CatalogFormat as OutputFormat;
use super::{EXIT_OK, Failure, Outcome};
use crate::action::catalog_init;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `olmpack catalog init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Package name (a DNS-1123 label).
    #[arg(value_name = "PACKAGE")]
    pub package: String,
    /// The package's default channel (required: opm init writes `"defaultChannel": ""` without
    /// it, which opm validate then refuses with "default channel must be set").
    #[arg(short = 'c', long = "default-channel", value_name = "CHANNEL")]
    pub default_channel: String,
    /// File whose whole content becomes the package description.
    #[arg(short = 'd', long = "description", value_name = "FILE")]
    pub description: Option<PathBuf>,
    /// Icon file; its media type is detected from its content.
    #[arg(short = 'i', long = "icon", value_name = "FILE")]
    pub icon: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "json")]
    pub output: OutputFormat,
}

/// Runs `catalog init`.
pub fn run(args: &Args) -> Outcome {
    let out = catalog_init::init(
        &args.package,
        &args.default_channel,
        args.description.as_deref(),
        args.icon.as_deref(),
        args.output.into(),
    )?;
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    lock.write_all(&out)
        .and_then(|()| lock.flush())
        .map_err(|e| Failure::usage(format!("cannot write to standard output: {e}")))?;
    Ok(EXIT_OK)
}
