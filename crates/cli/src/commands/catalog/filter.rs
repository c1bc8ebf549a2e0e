//! `olmpack catalog filter SOURCE --config FILE`: a smaller catalog, still valid, with
//! catalog-filter v0.0.5's semantics; printed as `catalog render` prints a catalog, or written
//! as a catalog folder with `--output-dir`.

use super::flags::{CatalogFormat as OutputFormat, RegistryArgs};
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::catalog_filter::{FilterOptions, filter_catalog, write_dir};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `olmpack catalog filter`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The catalog: a folder, or a catalog image (registry reference, oci:, oci-archive:,
    /// docker-archive:).
    #[arg(value_name = "SOURCE")]
    pub source: String,
    /// The filter: a FilterConfiguration (olm.operatorframework.io/filter/mirror/v1alpha1) or
    /// an oc-mirror ImageSetConfiguration.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Keep every bundle of the selected channels, not only their heads.
    #[arg(long)]
    pub full: bool,
    /// Keep the selection as it is: do not add the bundles its bundles require
    /// (olm.package.required, olm.gvk.required), as catalog-filter and oc-mirror do not.
    #[arg(long)]
    pub no_dependencies: bool,
    /// The mirror.operators[] entry of an ImageSetConfiguration, by its `catalog` (when it has
    /// several).
    #[arg(long, value_name = "REF")]
    pub catalog: Option<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "json")]
    pub output: OutputFormat,
    /// Write a catalog folder here (<package>/catalog.json|yaml) instead of printing; the
    /// folder must be new or empty.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    #[command(flatten)]
    /// Registry access for an image source.
    pub registry: RegistryArgs,
}

/// Runs `catalog filter`.
pub fn run(args: &Args) -> Outcome {
    let source = Location::parse(&args.source).map_err(|e| Failure::usage(e.to_string()))?;
    let registry = if source.is_local() {
        Default::default()
    } else {
        args.registry.options(&[&args.source])?
    };
    let opts = FilterOptions {
        config: args.config.clone(),
        catalog: args.catalog.clone(),
        full: args.full,
        format: args.output.into(),
        registry,
        no_dependencies: args.no_dependencies,
        prepared: None,
    };
    let out = filter_catalog(&source, &opts).map_err(|e| {
        let code = if e.is_verdict() {
            EXIT_FINDINGS
        } else {
            super::EXIT_USAGE
        };
        Failure::with_code(code, filter_text(&e))
    })?;
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    for a in &out.added {
        eprintln!("dependency: {a}");
    }
    match &args.output_dir {
        Some(dir) => {
            write_dir(dir, &out.config, opts.format).map_err(|e| Failure::usage(filter_text(&e)))?
        }
        None => std::io::stdout()
            .write_all(&out.bytes)
            .map_err(|e| Failure::usage(format!("cannot write to standard output: {e}")))?,
    }
    Ok(EXIT_OK)
}

/// A filter failure as one line: a file that could not be written with its cause, anything
/// else as it reads.
fn filter_text(e: &crate::action::catalog_filter::FilterCatalogError) -> String {
    match e {
        crate::action::catalog_filter::FilterCatalogError::Output(_) => super::error_chain(e),
        e => e.to_string(),
    }
}
