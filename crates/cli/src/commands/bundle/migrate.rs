//! `olmpack bundle migrate PACKAGE-DIR --output-dir OUT`: a package-manifest package to one
//! registry+v1 bundle folder per version.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::bundle_migrate::{self, MigrateFailed};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `olmpack bundle migrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The package-manifest folder (`<package>.package.yaml` and one folder per version).
    #[arg(value_name = "PACKAGE-DIR")]
    pub dir: PathBuf,
    /// Where to write the bundles (one folder per version). Must not exist, or be empty:
    /// nothing is ever overwritten.
    #[arg(long = "output-dir", value_name = "OUT")]
    pub output_dir: PathBuf,
    /// Write nothing unless every bundle passes `bundle validate` (by default a bundle whose
    /// copied manifests have errors, e.g. v1beta1 CRDs, is written and its errors reported).
    #[arg(long)]
    pub strict: bool,
}

/// Runs `olmpack bundle migrate`.
pub fn run(args: &Args) -> Outcome {
    let done = match bundle_migrate::migrate(&args.dir, &args.output_dir, args.strict) {
        Ok(done) => done,
        Err(MigrateFailed::Invalid { findings, message }) => {
            let mut err = std::io::stderr().lock();
            for f in &findings {
                let _ = writeln!(err, "{f}");
            }
            return Err(Failure::with_code(EXIT_FINDINGS, message));
        }
        Err(other) => return Err(Failure::usage(super::error_chain(&other))),
    };
    let mut out = std::io::stdout().lock();
    for line in &done.written {
        let _ = writeln!(out, "{line}");
    }
    let mut err = std::io::stderr().lock();
    for line in &done.notes {
        let _ = writeln!(err, "{line}");
    }
    Ok(EXIT_OK)
}
