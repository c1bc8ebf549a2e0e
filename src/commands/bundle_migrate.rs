//! `olmpack bundle migrate PACKAGE-DIR --output-dir OUT`: a package-manifest package to one
//! registry+v1 bundle folder per version; and `bundle validate` on package-manifest folders.

use super::validate::OutputFormat;
use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome};
use crate::bundle::Bundle;
use crate::legacy::packagemanifest::migrate::{self, MigrateError};
use crate::legacy::packagemanifest::{self as pm, PackageDir, report, validate as pmvalidate};
use crate::validate::{self, Options, render};
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
    if checked.has_errors() {
        let mut err = std::io::stderr().lock();
        for f in checked.errors() {
            let _ = writeln!(err, "{f}");
        }
        return Err(Failure::with_code(
            EXIT_FINDINGS,
            MigrateError::Invalid(args.dir.clone(), checked.errors().count()).to_string(),
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

/// `bundle validate` when some of the folders are package-manifest packages: each is checked
/// with the package-manifest rules, the others as bundles; one report per folder, then a total.
pub fn validate_dirs(
    dirs: &[PathBuf],
    output: OutputFormat,
    strict: bool,
    opts: &Options,
) -> Outcome {
    enum One {
        Pm(String, pmvalidate::Report),
        Bundle(Box<validate::Report>),
    }
    let mut results = Vec::new();
    let mut io_failure = false;
    for dir in dirs {
        if pm::is_package_manifest_dir(dir) {
            match PackageDir::read(dir) {
                Ok(pkg) => {
                    let r = crate::guard::catch(|| pmvalidate::validate(&pkg))
                        .map_err(|f| Failure::usage(f.describe()))?;
                    io_failure |= r
                        .findings
                        .iter()
                        .any(|f| f.rule == pm::rules::PmRule::Unreadable);
                    results.push(One::Pm(dir.display().to_string(), r));
                }
                Err(e) => return Err(Failure::usage(e.to_string())),
            }
        } else {
            let mut reports =
                crate::validate::batch::validate_dirs(std::slice::from_ref(dir), opts, Some(1));
            if let Some(r) = reports.pop() {
                io_failure |= r.has_rule(validate::Rule::FileUnreadable)
                    || r.has_rule(validate::Rule::InternalError);
                results.push(One::Bundle(Box::new(r)));
            }
        }
    }
    let passed = |o: &One| match o {
        One::Pm(_, r) => report::passed(r, strict),
        One::Bundle(r) => r.passed(strict),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written: std::io::Result<()> = (|| {
        match output {
            OutputFormat::Text => {
                let (mut errors, mut warnings) = (0usize, 0usize);
                for o in &results {
                    match o {
                        One::Pm(label, r) => {
                            report::text(r, label, strict, &mut out)?;
                            let e = r.errors().count();
                            errors += e;
                            warnings += r.findings.len() - e;
                        }
                        One::Bundle(r) => {
                            render::human_with(r, &mut out, false, strict)?;
                            errors += r.error_count();
                            warnings += r.warning_count();
                        }
                    }
                }
                if results.len() > 1 {
                    let failed = results.iter().filter(|o| !passed(o)).count();
                    writeln!(
                        out,
                        "total: {} folders, {} valid, {failed} invalid, {errors} errors, {warnings} warnings",
                        results.len(),
                        results.len() - failed
                    )?;
                }
            }
            OutputFormat::Json => {
                let values: Vec<serde_json::Value> = results
                    .iter()
                    .map(|o| match o {
                        One::Pm(label, r) => {
                            let mut v = report::json_value(r, strict);
                            v["bundle"] = serde_json::Value::from(label.as_str());
                            v
                        }
                        One::Bundle(r) => {
                            let mut v = render::json_value(r, strict);
                            v["bundle"] = serde_json::Value::from(r.bundle.as_str());
                            v
                        }
                    })
                    .collect();
                let value = match values.as_slice() {
                    [one] => one.clone(),
                    _ => serde_json::json!({
                        "passed": results.iter().all(passed),
                        "bundles": values,
                    }),
                };
                serde_json::to_writer_pretty(&mut out, &value)?;
                writeln!(out)?;
            }
        }
        out.flush()
    })();
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::usage(format!("cannot write output: {e}")));
    }
    if io_failure {
        Ok(EXIT_USAGE)
    } else if results.iter().all(passed) {
        Ok(EXIT_OK)
    } else {
        Ok(EXIT_FINDINGS)
    }
}
