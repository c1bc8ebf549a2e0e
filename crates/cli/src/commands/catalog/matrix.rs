//! `olmpack catalog matrix`: every template of an operator rendered for every OpenShift catalog
//! its ci.yaml maps it to, written as the pipelines' `make catalogs` writes them, and the
//! consistency between those catalogs.

use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome, flags::RegistryArgs};
use crate::action::catalog_matrix::OpmCompat;
use crate::action::catalog_matrix::{self, MatrixRequest, OperatorReport};
use std::path::PathBuf;

/// Arguments of `olmpack catalog matrix`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Operators (folders under operators/) to render.
    #[arg(
        value_name = "OPERATOR",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub operators: Vec<String>,
    /// Every operator whose ci.yaml has an fbc.catalog_mapping.
    #[arg(long)]
    pub all: bool,
    /// The repository checkout (config.yaml, operators/, catalogs/).
    #[arg(long, value_name = "ROOT", default_value = ".")]
    pub repo: PathBuf,
    /// Write DIR/catalogs/<ocp>/<package>/catalog.yaml instead of into the repository.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Never contact a registry: each bundle is read from operators/<package>/<version>/ (placed
    /// by its tag, by a checked-in catalog listing it, or by --bundle-map).
    #[arg(long)]
    pub offline: bool,
    /// File of IMAGE-REF<TAB>SOURCE lines: the catalog keeps IMAGE-REF, the content is read from
    /// SOURCE (a bundle folder, oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE).
    #[arg(long, value_name = "FILE")]
    pub bundle_map: Option<PathBuf>,
    /// Reproduce this opm release for every target; default: the one that wrote each checked-in
    /// catalog (the operator's Makefile pin, else the pipelines' v1.71).
    #[arg(long, value_name = "VERSION")]
    pub opm_compat: Option<OpmCompat>,
    /// Render and compare only: write nothing, exit 1 if a catalog would change.
    #[arg(long)]
    pub check: bool,
    /// Operators rendered at once (default: the number of CPUs).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Registry options (for bundles read from their registries).
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Runs `olmpack catalog matrix`.
pub fn run(args: &Args) -> Outcome {
    let request = MatrixRequest {
        root: args.repo.clone(),
        operators: args.operators.clone(),
        all: args.all,
        output_dir: args.output_dir.clone(),
        offline: args.offline,
        bundle_map: args.bundle_map.clone(),
        compat: args.opm_compat,
        check: args.check,
        jobs: args.jobs,
        registry: args.registry.options(&[])?,
    };
    let progress = |r: &OperatorReport| eprintln!("{}", progress_line(r));
    let report = catalog_matrix::run(&request, &progress)
        .map_err(|e| Failure::usage(super::error_chain(&e)))?;
    let mut errors = 0usize;
    let mut changed = 0usize;
    for op in &report.operators {
        if let Some(e) = &op.error {
            eprintln!("error: {}", super::error_chain(e));
            continue;
        }
        for note in &op.notes {
            eprintln!("note: {note}");
        }
        for t in &op.targets {
            if t.status != catalog_matrix::TargetStatus::Unchanged {
                changed += 1;
            }
            println!(
                "{}\t{}\t{}\t{}\t{}",
                t.file.display(),
                t.status.word(),
                t.template,
                t.metadata_property(),
                t.writer
            );
        }
        for f in &op.findings {
            if f.is_error() {
                errors += 1;
            }
            println!("{f}");
        }
    }
    if report.failed() {
        return Ok(EXIT_USAGE);
    }
    if errors > 0 || (args.check && changed > 0) {
        return Ok(EXIT_FINDINGS);
    }
    Ok(EXIT_OK)
}

/// `kube-green: 7 catalogs (7 unchanged) from 1 template, 10 bundles, 0 findings, 0.4s`.
fn progress_line(r: &OperatorReport) -> String {
    let secs = r.elapsed.as_secs_f64();
    if r.error.is_some() {
        return format!("{}: failed, nothing written ({secs:.1}s)", r.operator);
    }
    let unchanged = r
        .targets
        .iter()
        .filter(|t| t.status == catalog_matrix::TargetStatus::Unchanged)
        .count();
    let templates: std::collections::BTreeSet<&str> =
        r.targets.iter().map(|t| t.template.as_str()).collect();
    format!(
        "{}: {} catalogs ({unchanged} unchanged) from {} template(s), {} bundles, {} findings, {secs:.1}s",
        r.operator,
        r.targets.len(),
        templates.len(),
        r.bundles,
        r.findings.len()
    )
}
