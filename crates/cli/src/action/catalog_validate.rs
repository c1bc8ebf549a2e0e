//! `catalog validate`: file-based catalog folders checked in parallel (each isolated, see
//! [`crate::validate::catalog::validate_dirs`]), inputs of another kind named with the command
//! that reads them, the optional OLM v1 group run over the bundles, and opm's own output shape
//! (`opm validate -o json|yaml`) for pipelines that parse it.
//!
//! Why the "this is no catalog" hint lives here and not in `validate/`: what a path is (an
//! image, a bundle or package-manifest folder, an sqlite database) is decided once, by
//! [`super::source::not_a_catalog`], and `validate/` sits below `action/` (it may not ask the
//! opener). The rules never see such an input: the hint is about what the user typed, so the
//! action words it and records it as the folder's `catalog/unreadable` finding.

use crate::findings::rules::Subject;
use crate::findings::{Diagnostic, Report, Rule};
use crate::validate::catalog::validate_dirs_targeted;
use crate::validate::target::{self, CompatError, OpmRelease, Target, TargetError};
use std::path::PathBuf;

/// Options from the flags.
#[derive(Debug, Clone, Default)]
pub struct CatalogValidateOptions {
    /// Folders validated at once (`None`: the number of CPUs).
    pub jobs: Option<usize>,
    /// Drop `catalog/empty` (a catalog with no olm.* blob is accepted).
    pub allow_empty: bool,
    /// `--select-optional` groups, as typed (`olmv1` is the one catalogs have).
    pub select_optional: Vec<String>,
    /// The opm release that will load the catalog (`--opm-compat`): what it cannot load is an
    /// error (`catalog/opm-load`). `None`: current opm.
    pub opm_compat: Option<crate::catalog::OpmCompat>,
    /// `--target`s as typed: where the catalog will run (each finding names those it affects;
    /// `olmv1` runs the OLM v1 group; OpenShift 4.17+ adds `catalog/metadata-form`).
    pub targets: Vec<String>,
    /// `--compat opm=vX` as typed: the opm release whose `opm validate` verdict to reproduce.
    pub compat: Option<String>,
}

/// Why nothing was validated: a usage error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogValidateError {
    /// An optional group catalogs do not have.
    #[error("unknown optional rule group \"{0}\" for catalogs: choose olmv1")]
    UnknownGroup(String),
    /// A `--target` that is no known target.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A `--compat` that is not `opm=vX.Y[.Z]`.
    #[error(transparent)]
    Compat(#[from] CompatError),
}

/// The reports of one run (one per folder, in the order given), and how to judge them.
#[derive(Debug)]
pub struct Validated {
    /// One report per folder.
    pub reports: Vec<Report>,
    /// The report subject (catalogs).
    pub subject: Subject,
    /// The optional OLM v1 group ran: `readiness` holds its per-package report per folder.
    pub olmv1: bool,
    /// The OLM v1 readiness of each folder's packages, by folder as given.
    pub readiness: serde_json::Map<String, serde_json::Value>,
    /// The upgrade edges of each folder: how many, how many checked (both bundles carry their
    /// manifests), how many unsafe, by folder as given.
    pub upgrade_edges: serde_json::Map<String, serde_json::Value>,
    /// A folder could not be read, or was no catalog.
    pub io_failure: bool,
}

impl Validated {
    /// Whether olmpack could not finish its job on some folder (unreadable, no catalog, or
    /// olmpack failed on it internally): not a finding about the user's files, so exit 2.
    pub fn incomplete(&self) -> bool {
        self.io_failure || self.reports.iter().any(|r| r.has_rule(Rule::InternalError))
    }

    /// Whether every report passes (`strict`: warnings fail too).
    pub fn passed(&self, strict: bool) -> bool {
        self.reports.iter().all(|r| r.passed(strict))
    }

    /// What `opm validate -o json` (or `-o yaml`) prints for these reports, one result per
    /// folder.
    pub fn opm_output(&self, yaml: bool) -> String {
        let mut text = String::new();
        for r in &self.reports {
            let v = crate::validate::opm_output::result(r);
            if yaml {
                text.push_str(&crate::validate::opm_output::yaml(&v));
            } else {
                text.push_str(&crate::validate::opm_output::json(&v));
            }
        }
        text
    }
}

/// One line per catalog rule: id, default severity, the opm release that checks it, summary
/// (`--list-rules`).
pub fn rule_lines() -> Vec<String> {
    Rule::ALL
        .iter()
        .filter(|r| r.is_catalog())
        .map(|rule| {
            let opm = match rule.opm_since() {
                Some(since) => format!("opm {since}"),
                None => "olmpack only".to_string(),
            };
            format!(
                "{:<32} {:<8} {:<40} {}",
                rule.id(),
                rule.default_severity().as_str(),
                opm,
                rule.summary()
            )
        })
        .collect()
}

/// Validates `dirs`: inputs of another kind ([`super::source::not_a_catalog_message`]) are reported as unreadable
/// with the command that reads them, the rest are validated in parallel; with the `olmv1`
/// group, each catalog's bundles are checked against what OLM v1 refuses too.
pub fn validate(
    dirs: &[PathBuf],
    opts: &CatalogValidateOptions,
) -> Result<Validated, CatalogValidateError> {
    let mut olmv1 = false;
    for sel in &opts.select_optional {
        match sel.trim() {
            "olmv1" | "olm-v1" => olmv1 = true,
            other => return Err(CatalogValidateError::UnknownGroup(other.to_string())),
        }
    }
    let mut targets: Vec<Target> = Vec::new();
    for typed in &opts.targets {
        let t: Target = typed.parse()?;
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    olmv1 |= targets.contains(&Target::OlmV1);
    let compat: Option<OpmRelease> = opts.compat.as_deref().map(str::parse).transpose()?;
    // The release named loads the catalog too, where olmpack knows that release's loader.
    let opm_compat = opts.opm_compat.or_else(|| {
        let OpmRelease(major, minor, _) = compat?;
        let release =
            crate::catalog::OpmCompat::new(u32::try_from(major).ok()?, u32::try_from(minor).ok()?);
        (crate::catalog::OpmCompat::OLDEST..=crate::catalog::OpmCompat::NEWEST)
            .contains(&release)
            .then_some(release)
    });
    let mut io_failure = false;
    let mut readiness = serde_json::Map::new();
    let mut upgrade_edges = serde_json::Map::new();
    let wrong: Vec<Option<String>> = dirs
        .iter()
        .map(|d| super::source::not_a_catalog_message(d))
        .collect();
    let catalogs: Vec<PathBuf> = dirs
        .iter()
        .zip(&wrong)
        .filter(|(_, w)| w.is_none())
        .map(|(d, _)| d.clone())
        .collect();
    let mut validated =
        validate_dirs_targeted(&catalogs, opts.jobs, opm_compat, &targets).into_iter();
    let mut reports: Vec<Report> = Vec::with_capacity(dirs.len());
    for (dir, wrong) in dirs.iter().zip(&wrong) {
        let result = match wrong {
            Some(message) => Err(message.clone()),
            None => validated
                .next()
                .map(|r| r.map_err(|e| e.to_string()))
                .unwrap_or_else(|| Err("not validated".to_string())),
        };
        reports.push(match result {
            Ok(mut report) => {
                if opts.allow_empty {
                    report.diagnostics.retain(|d| d.rule != Rule::CatalogEmpty);
                }
                report
            }
            Err(message) => {
                io_failure = true;
                Report::new(
                    dir.display().to_string(),
                    vec![Diagnostic::new(Rule::CatalogUnreadable, message)],
                )
            }
        });
    }
    if olmv1 {
        for ((report, dir), wrong) in reports.iter_mut().zip(dirs).zip(&wrong) {
            if wrong.is_some() {
                continue;
            }
            let (found, packages, counts) = super::catalog_olmv1::check_dir(dir);
            upgrade_edges.insert(
                dir.display().to_string(),
                serde_json::to_value(counts).unwrap_or_default(),
            );
            report.diagnostics.extend(found);
            report.sort();
            readiness.insert(
                dir.display().to_string(),
                serde_json::to_value(packages).unwrap_or_default(),
            );
        }
    }
    for report in &mut reports {
        target::annotate(&mut report.diagnostics, &targets);
        if let Some(release) = compat {
            target::apply_compat(&mut report.diagnostics, release);
        }
    }
    Ok(Validated {
        reports,
        subject: Subject::Catalog,
        olmv1,
        readiness,
        upgrade_edges,
        io_failure,
    })
}
