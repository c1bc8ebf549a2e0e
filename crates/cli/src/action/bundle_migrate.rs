//! `bundle migrate`: a package-manifest package to one registry+v1 bundle folder per version,
//! each staged bundle validated; what the command prints is returned, so it only prints.

use crate::bundle::Bundle;
use crate::legacy::packagemanifest::migrate::{self, MigrateError};
use crate::legacy::packagemanifest::{PackageDir, validate as pmvalidate};
use crate::validate::{self, Options};
use std::path::Path;

/// Why nothing was migrated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateFailed {
    /// Not a package, unreadable, or the bundles could not be written (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The package could not be read.
    #[error(transparent)]
    Read(crate::legacy::packagemanifest::ReadError),
    /// The package's bundles could not be planned.
    #[error(transparent)]
    Plan(crate::legacy::packagemanifest::migrate::MigrateError),
    /// The package (or, under `--strict`, a bundle) is invalid (exit 1); `findings` are for
    /// stderr first.
    #[error("{message}")]
    Invalid {
        /// The findings that stopped it, one line each.
        findings: Vec<String>,
        /// The verdict.
        message: String,
    },
}

/// A migration done.
#[derive(Debug, Default)]
pub struct Migrated {
    /// `OUT/DIR CSV channels=a,b` per bundle written (stdout).
    pub written: Vec<String>,
    /// Skipped versions, bundles failing validation and the totals (stderr).
    pub notes: Vec<String>,
}

/// Migrates the package `dir` into `output_dir` (new or empty). With `strict`, nothing is
/// written unless every bundle passes `bundle validate`.
pub fn migrate(dir: &Path, output_dir: &Path, strict: bool) -> Result<Migrated, MigrateFailed> {
    if !super::source::is_package_manifest_dir(dir) {
        return Err(MigrateFailed::Usage(not_a_package(dir)));
    }
    let pkg = PackageDir::read(dir).map_err(MigrateFailed::Read)?;
    let checked = pmvalidate::validate(&pkg);
    // What stops a migration is what opm's loader refuses; a CRD's bundle-rule error
    // (crd/preserve-unknown-fields) is reported on each written bundle instead, as before.
    let stopping: Vec<_> = checked.loader_errors().collect();
    if !stopping.is_empty() {
        return Err(MigrateFailed::Invalid {
            findings: stopping.iter().map(|f| f.to_string()).collect(),
            message: MigrateError::Invalid(dir.to_path_buf(), stopping.len()).to_string(),
        });
    }
    let plan = migrate::plan(&pkg, &checked).map_err(MigrateFailed::Plan)?;
    let opts = Options::default();
    // Each staged bundle is validated; its errors come from the package's own files (migrate
    // copies manifests unchanged), so they are reported, and refused only under --strict.
    let mut invalid: Vec<(String, Vec<String>)> = Vec::new();
    migrate::write(&plan, output_dir, |b, root| {
        let bundle = Bundle::load(root).map_err(|e| MigrateError::BundleInvalid {
            bundle: b.dir.clone(),
            source_dir: b.source_dir.clone(),
            first: crate::findings::message_of(&e),
        })?;
        let r = validate::validate(&bundle, &opts);
        let errors: Vec<String> = r
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::findings::Severity::Error)
            .map(|d| format!("error[{}] {}: {}", d.rule.id(), d.location(), d.message))
            .collect();
        if let Some(first) = errors.first()
            && strict
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
        MigrateError::BundleInvalid { .. } => MigrateFailed::Invalid {
            findings: Vec::new(),
            message: e.to_string(),
        },
        other => MigrateFailed::Usage(other.to_string()),
    })?;
    let mut done = Migrated::default();
    for b in &plan.bundles {
        done.written.push(format!(
            "{} {} channels={}",
            output_dir.join(&b.dir).display(),
            b.csv,
            b.channels.join(",")
        ));
    }
    for (csv, why) in &plan.skipped {
        done.notes
            .push(format!("warning: {csv} not written: {why}"));
    }
    for (dir, errors) in &invalid {
        done.notes.push(format!(
            "warning: bundle {dir} fails `bundle validate` because of the package's own files ({} error{}; fix them in the package or the bundle):",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ));
        for e in errors {
            done.notes.push(format!("  {e}"));
        }
    }
    done.notes.push(format!(
        "{} of {} bundles pass bundle validate",
        plan.bundles.len() - invalid.len(),
        plan.bundles.len()
    ));
    done.notes.push(format!(
        "{} bundle{} written to {}",
        plan.bundles.len(),
        if plan.bundles.len() == 1 { "" } else { "s" },
        output_dir.display()
    ));
    Ok(done)
}

fn not_a_package(dir: &Path) -> String {
    if !dir.exists() {
        format!("{} does not exist", dir.display())
    } else if super::source::has_bundle_folder(dir) {
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
