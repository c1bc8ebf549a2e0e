//! `bundle validate`: bundle folders, package-manifest packages among them, or one bundle
//! image, each checked in isolation (the batch runner, [`crate::validate::batch`]): olmpack's
//! own failure on one input becomes that input's `internal/error` finding and every other input
//! keeps its full report. The options come from the flags here, so the command only prints.

use super::bundle_image::BundleImageError;
use crate::findings::rules::Subject;
use crate::legacy::packagemanifest::{PackageDir, validate as pmvalidate};
use crate::transport::RegistryOptions;
use crate::validate::batch::{self, Check, internal_error_report};
use crate::validate::{Diagnostic, Group, Report, Rule};

pub use crate::validate::Options;
use crate::validate::target::{Target, TargetError};
use std::path::{Path, PathBuf};

/// The reports of one run, and how to print and judge them.
#[derive(Debug)]
pub struct Validated {
    /// One report per input, in the order given.
    pub reports: Vec<Report>,
    /// What the inputs are (package manifests alone are counted and tagged as such).
    pub subject: Subject,
    /// Package-manifest packages were among the inputs (their report is printed without colour).
    pub packages: bool,
    /// An input could not be read, or olmpack failed on one: the run exits 2.
    pub io_failure: bool,
}

impl Validated {
    /// Whether every report passes (`strict`: warnings fail too).
    pub fn passed(&self, strict: bool) -> bool {
        self.reports.iter().all(|r| r.passed(strict))
    }
}

/// Validation options from the flags: `--select-optional` groups, `--k8s-version` (or
/// operator-sdk's `--optional-values k8s-version=...`), `--target`s (`olmv1` among them
/// selects the OLM v1 group), and the custom categories file `OPERATOR_BUNDLE_CATEGORIES`
/// names when the operatorhub group is selected.
pub fn options(
    select_optional: &[String],
    k8s_version: Option<&str>,
    optional_values: &[String],
    targets: &[String],
) -> Result<Options, String> {
    let targets = parse_targets(targets)?;
    let mut optional = Vec::new();
    if targets.contains(&Target::OlmV1) {
        optional.push(Group::Olmv1);
    }
    for sel in select_optional {
        for g in Group::parse_selection(sel)? {
            if !optional.contains(&g) {
                optional.push(g);
            }
        }
    }
    let mut k8s = k8s_version.map(str::to_string);
    for kv in optional_values {
        match kv.split_once('=') {
            Some(("k8s-version", v)) => k8s = Some(v.to_string()),
            Some((_, _)) => {}
            None => {
                return Err(format!("--optional-values expects key=value, got \"{kv}\""));
            }
        }
    }
    let k8s_version = match k8s {
        Some(text) => Some(parse_k8s_version(&text).ok_or_else(|| {
            format!("--k8s-version \"{text}\" is not a Kubernetes version such as 1.25 or v1.25.0")
        })?),
        None => None,
    };
    // operator-sdk replaces the standard categories with the file this names.
    let categories = match std::env::var_os(crate::validate::bundle::CATEGORIES_ENV) {
        Some(path) if !path.is_empty() && optional.contains(&Group::OperatorHub) => Some(
            crate::validate::bundle::read_custom_categories(Path::new(&path))
                .map_err(|e| format!("{}: {e}", crate::validate::bundle::CATEGORIES_ENV))?,
        ),
        _ => None,
    };
    Ok(Options {
        optional,
        k8s_version,
        categories,
        targets,
    })
}

/// `--target` values (comma-separated or repeated) parsed, duplicates dropped, in the order
/// given; the error names the value and the targets known.
pub fn parse_targets(typed: &[String]) -> Result<Vec<Target>, String> {
    let mut targets = Vec::new();
    for text in typed {
        let target: Target = text.parse().map_err(|e: TargetError| e.to_string())?;
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    Ok(targets)
}

fn parse_k8s_version(text: &str) -> Option<semver::Version> {
    let t = text.trim().trim_start_matches('v');
    let mut parts = t.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().unwrap_or("0").parse().ok()?;
    let patch = parts.next().unwrap_or("0").parse().ok()?;
    Some(semver::Version::new(major, minor, patch))
}

/// `--list-rules`: one line per bundle and package-manifest rule (id, severity, group,
/// summary).
pub fn rule_lines() -> Vec<String> {
    Rule::ALL
        .iter()
        .filter(|r| matches!(r.subject(), Subject::Bundle | Subject::PackageManifest))
        .map(|rule| {
            format!(
                "{:<40} {:<8} {:<15} {}",
                rule.id(),
                rule.default_severity().as_str(),
                rule.group().name(),
                rule.summary()
            )
        })
        .collect()
}

/// Validates folders on up to `jobs` threads: bundle folders, and package-manifest packages
/// (`<package>.package.yaml` and version folders) with the packagemanifest/* rules. A package
/// that cannot be read at all stops the run (its message, exit 2), as before anything is
/// printed.
pub fn validate_folders(
    dirs: &[PathBuf],
    opts: &Options,
    jobs: Option<usize>,
) -> Result<Validated, String> {
    let packages = dirs
        .iter()
        .any(|d| super::source::is_package_manifest_dir(d));
    if !packages {
        let mut reports = crate::validate::bundle::validate_dirs(dirs, opts, jobs);
        name_catalogs(dirs, &mut reports);
        // A folder that could not be loaded gets its finding outside the rules: it too says
        // which targets it affects (all of them).
        for report in &mut reports {
            crate::validate::target::annotate(&mut report.diagnostics, &opts.targets);
        }
        let io_failure = reports
            .iter()
            .any(|r| r.has_rule(Rule::FileUnreadable) || r.has_rule(Rule::InternalError));
        return Ok(Validated {
            reports,
            subject: Subject::Bundle,
            packages: false,
            io_failure,
        });
    }
    let mut reports = Vec::new();
    for result in batch::run(&Mixed(opts), dirs, jobs) {
        reports.push(result?);
    }
    name_catalogs(dirs, &mut reports);
    let io_failure = reports.iter().any(|r| {
        r.has_rule(Rule::FileUnreadable)
            || r.has_rule(Rule::InternalError)
            || r.has_rule(Rule::PmUnreadable)
    });
    // Package manifests alone are counted and tagged as such; mixed with bundles, as bundles.
    let all_packages = dirs
        .iter()
        .all(|d| super::source::is_package_manifest_dir(d));
    Ok(Validated {
        reports,
        subject: if all_packages {
            Subject::PackageManifest
        } else {
            Subject::Bundle
        },
        packages: true,
        io_failure,
    })
}

/// Replaces the report of each folder that is a file-based catalog ([`super::source::holds_catalog`])
/// with one `file/unreadable` finding naming the kind and the commands that read it: its
/// "no manifests/, no metadata/" errors would send the user after the wrong fix.
fn name_catalogs(dirs: &[PathBuf], reports: &mut [Report]) {
    for (dir, report) in dirs.iter().zip(reports.iter_mut()) {
        if !report.has_rule(Rule::ManifestsMissing) || !super::source::holds_catalog(dir) {
            continue;
        }
        let s = dir.display();
        *report = Report::new(
            s.to_string(),
            vec![Diagnostic::new(
                Rule::FileUnreadable,
                format!(
                    "{s} is a file-based catalog folder, not a bundle folder (it has no manifests/ or metadata/): `olmpack catalog validate {s}` checks it; `olmpack bundle render {s} --package NAME` renders one of its bundles"
                ),
            )],
        );
    }
}

/// Folders of either kind for the batch runner.
struct Mixed<'a>(&'a Options);

impl Check for Mixed<'_> {
    type Error = String;

    fn check(&self, dir: &Path, _inner_jobs: usize) -> Result<Report, String> {
        if super::source::is_package_manifest_dir(dir) {
            let pkg = PackageDir::read(dir).map_err(|e| e.to_string())?;
            return Ok(pmvalidate::validate(&pkg).to_report(&dir.display().to_string()));
        }
        let mut reports =
            crate::validate::bundle::validate_dirs(&[dir.to_path_buf()], self.0, Some(1));
        Ok(reports.pop().unwrap_or_default())
    }
}

/// `bundle validate --image REF`: the image validated ([`super::bundle_image::validate_image`],
/// named as `reference` was typed), isolated like a folder: olmpack's own failure on it becomes
/// its `internal/error` finding.
pub fn validate_image(
    location: &crate::location::Location,
    registry: &RegistryOptions,
    opts: &Options,
) -> Result<Validated, BundleImageError> {
    let reference = location.as_str();
    let report =
        match crate::guard::catch(|| super::bundle_image::validate_image(location, registry, opts))
        {
            Ok(report) => report?,
            Err(failure) => internal_error_report(reference, None, &failure),
        };
    let io_failure = report.has_rule(Rule::FileUnreadable) || report.has_rule(Rule::InternalError);
    Ok(Validated {
        reports: vec![report],
        subject: Subject::Bundle,
        packages: false,
        io_failure,
    })
}

/// `bundle validate NEW... --upgrade-from OLD`: OLM v1's CRD upgrade preflight on the upgrade
/// from `old` to each validated bundle folder, added to that folder's report (rules
/// `olmv1/crd-upgrade-*`). A bundle that cannot be loaded adds nothing here: its own report
/// already says why; an `old` that cannot be loaded is a usage error.
pub fn add_upgrade_checks(
    validated: &mut Validated,
    dirs: &[PathBuf],
    old: &Path,
) -> Result<(), String> {
    let old_bundle = crate::bundle::Bundle::load(old)
        .map_err(|e| format!("--upgrade-from {}: {e}", old.display()))?;
    if old_bundle.objects.is_empty() {
        return Err(format!(
            "--upgrade-from {}: no manifests found (is it a bundle folder?)",
            old.display()
        ));
    }
    for (dir, report) in dirs.iter().zip(validated.reports.iter_mut()) {
        let Ok(new_bundle) = crate::bundle::Bundle::load(dir) else {
            continue;
        };
        let edge = format!("{} -> {}", old.display(), dir.display());
        report
            .diagnostics
            .extend(crate::validate::crd_upgrade::bundle_pair(
                &old_bundle,
                &new_bundle,
                &edge,
            ));
        report.sort();
    }
    Ok(())
}
