//! `olmpack bundle migrate PACKAGE-DIR --output-dir OUT`: a package-manifest package to one
//! registry+v1 bundle folder per version.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::bundle::Bundle;
use crate::legacy::packagemanifest::migrate::{self, MigrateError};
use crate::legacy::packagemanifest::{self as pm, PackageDir, validate as pmvalidate};
use crate::validate::{self, Options};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    if !pm::is_package_manifest_dir(&args.dir) {
        return Err(Failure::usage(not_a_package(&args.dir)));
    }
    let pkg = PackageDir::read(&args.dir)?;
    let checked = pmvalidate::validate(&pkg);
    // What stops a migration is what opm's loader refuses; a CRD's bundle-rule error
    // (crd/preserve-unknown-fields) is reported on each written bundle instead, as before.
    let stopping: Vec<_> = checked.loader_errors().collect();
    if !stopping.is_empty() {
        let mut err = std::io::stderr().lock();
        for f in &stopping {
            let _ = writeln!(err, "{f}");
        }
        return Err(Failure::with_code(
            EXIT_FINDINGS,
            MigrateError::Invalid(args.dir.clone(), stopping.len()).to_string(),
        ));
    }
    let plan = migrate::plan(&pkg, &checked)?;
    let opts = Options::default();
    // Each staged bundle is validated; its errors come from the package's own files (migrate
    // copies manifests unchanged), so they are reported, and refused only under --strict.
    let mut invalid: Vec<(String, Vec<String>)> = Vec::new();
    migrate::write(&plan, &args.output_dir, |b, root| {
        let bundle = Bundle::load(root).map_err(|e| MigrateError::BundleInvalid {
            bundle: b.dir.clone(),
            source_dir: b.source_dir.clone(),
            first: crate::errors::error_chain(&e),
        })?;
        let r = validate::validate(&bundle, &opts);
        let errors: Vec<String> = r
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::findings::Severity::Error)
            .map(|d| format!("error[{}] {}: {}", d.rule.id(), d.location(), d.message))
            .collect();
        if let Some(first) = errors.first()
            && args.strict
        {
            return Err(MigrateError::BundleInvalid {
                bundle: b.dir.clone(),
                source_dir: b.source_dir.clone(),
                first: first.clone(),
            });
        }
        if !errors.is_empty() {
            invalid.push((b.dir.clone(), errors));
        }
        Ok(())
    })
    .map_err(|e| match e {
        MigrateError::BundleInvalid { .. } => Failure::with_code(EXIT_FINDINGS, e.to_string()),
        other => Failure::usage(other.to_string()),
    })?;
    let mut out = std::io::stdout().lock();
    for b in &plan.bundles {
        let _ = writeln!(
            out,
            "{} {} channels={}",
            args.output_dir.join(&b.dir).display(),
            b.csv,
            b.channels.join(",")
        );
    }
    let mut err = std::io::stderr().lock();
    for (csv, why) in &plan.skipped {
        let _ = writeln!(err, "warning: {csv} not written: {why}");
    }
    for (dir, errors) in &invalid {
        let _ = writeln!(
            err,
            "warning: bundle {dir} fails `bundle validate` because of the package's own files ({} error{}; fix them in the package or the bundle):",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        for e in errors {
            let _ = writeln!(err, "  {e}");
        }
    }
    let _ = writeln!(
        err,
        "{} of {} bundles pass bundle validate",
        plan.bundles.len() - invalid.len(),
        plan.bundles.len()
    );
    let _ = writeln!(
        err,
        "{} bundle{} written to {}",
        plan.bundles.len(),
        if plan.bundles.len() == 1 { "" } else { "s" },
        args.output_dir.display()
    );
    Ok(EXIT_OK)
}

fn not_a_package(dir: &Path) -> String {
    if !dir.exists() {
        format!("{} does not exist", dir.display())
    } else if dir.join("metadata").is_dir() || dir.join("manifests").is_dir() {
        format!(
            "{} is a bundle folder (it has manifests/ or metadata/), not a package-manifest package",
            dir.display()
        )
    } else {
        format!(
            "{} is not a package-manifest package: expected <package>.package.yaml and one folder per version",
            dir.display()
        )
    }
}
