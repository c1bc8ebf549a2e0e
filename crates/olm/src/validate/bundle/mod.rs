//! The registry+v1 bundle rules, one module per concern (format, Dockerfile, CSV, CRDs, other
//! objects, metadata files, size, the optional groups, and the image-only checks).
//!
//! Each module pushes [`Diagnostic`]s into a shared [`Ctx`]; the records in
//! [`crate::findings::rules`] give every rule its stable id and severity. [`validate`] runs the
//! modules that apply to a loaded [`Bundle`] and returns a sorted [`Report`].

mod crd;
mod csv;
mod dockerfile;
mod format;
pub mod image;
mod metadata;
mod objects;
pub mod olmv1;
mod optional;
mod size;

use super::names;
use crate::findings::{Diagnostic, Group, Report, Rule, Severity};

use crate::bundle::Bundle;

/// What to check beyond the default rules.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Optional rule groups to run in addition to the default ones.
    pub optional: Vec<Group>,
    /// Target Kubernetes version: APIs removed at or before it become errors.
    pub k8s_version: Option<semver::Version>,
    /// Custom categories replacing the standard ones for `operatorhub/categories`: the
    /// contents of the JSON file `OPERATOR_BUNDLE_CATEGORIES` names, as operator-sdk reads it
    /// (`{"categories": [...]}`), so a private hub's own list validates the same in both.
    pub categories: Option<Vec<String>>,
    /// Where the bundle will run (`--target`): each finding then says which of these it
    /// affects, removed APIs are judged per target, and the kinds a target refuses are found.
    pub targets: Vec<super::target::Target>,
}

impl Options {
    /// Whether an optional group was selected.
    pub fn selected(&self, group: Group) -> bool {
        group == Group::Default || self.optional.contains(&group)
    }
}

/// The environment variable operator-sdk reads custom OperatorHub categories from.
pub const CATEGORIES_ENV: &str = "OPERATOR_BUNDLE_CATEGORIES";

/// Reads a custom categories file as operator-framework/api does: JSON
/// `{"categories": ["Cloud Pak", ...]}` (other keys ignored, no key = no category allowed).
/// The error names the file and says what is wrong with it.
pub fn read_custom_categories(path: &std::path::Path) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        categories: Vec<String>,
    }
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let file: File = serde_json::from_slice(&bytes).map_err(|e| {
        format!("{shown} is not a categories file ({{\"categories\": [\"...\"]}}): {e}")
    })?;
    Ok(file.categories)
}

/// Shared state handed to every rule family.
pub(crate) struct Ctx<'a> {
    pub bundle: &'a Bundle,
    pub opts: &'a Options,
    pub out: Vec<Diagnostic>,
}

impl Ctx<'_> {
    /// The Kubernetes version removed APIs are judged against: `--k8s-version`, else the CSV's
    /// `spec.minKubeVersion` (read tolerantly, as operator-framework/api does here).
    pub fn target_kube_version(&self) -> Option<semver::Version> {
        self.opts.k8s_version.clone().or_else(|| {
            let csv = self.bundle.csv()?;
            let text = csv
                .root
                .path(&["spec", "minKubeVersion"])
                .and_then(crate::yaml::Node::scalar_text)?;
            csv::parse_tolerant(text)
        })
    }

    /// A finding about an API removed in Kubernetes `1.removed_in`: an error when the judged
    /// version ([`Ctx::target_kube_version`]) has removed it; with targets, also when an
    /// OpenShift target has, and the targets it breaks are named
    /// ([`super::target::removed_api`]).
    pub fn removed_api(&mut self, d: Diagnostic, removed_in: u64) {
        let removed = semver::Version::new(1, removed_in, 0);
        let judged_breaks = self.target_kube_version().is_some_and(|t| t >= removed);
        let d = if self.opts.targets.is_empty() {
            d.with_severity(if judged_breaks {
                Severity::Error
            } else {
                Severity::Warning
            })
        } else {
            let (hit, severity) = super::target::removed_api(
                &self.opts.targets,
                removed_in,
                self.opts.k8s_version.as_ref(),
            );
            let severity = if judged_breaks {
                Severity::Error
            } else {
                severity
            };
            d.with_severity(severity).for_targets(hit)
        };
        self.push(d);
    }

    /// Records a finding, unless its rule's group was not selected.
    pub fn push(&mut self, d: Diagnostic) {
        if self.opts.selected(d.rule.group()) {
            self.out.push(d);
        }
    }
}

/// Runs every applicable rule on a loaded bundle.
pub fn validate(bundle: &Bundle, opts: &Options) -> Report {
    let mut ctx = Ctx {
        bundle,
        opts,
        out: bundle.load_findings.clone(),
    };
    format::check(&mut ctx);
    dockerfile::check(&mut ctx);
    csv::check(&mut ctx);
    crd::check(&mut ctx);
    objects::check(&mut ctx);
    metadata::check(&mut ctx);
    size::check(&mut ctx);
    optional::check(&mut ctx);
    if opts.selected(Group::Olmv1) {
        olmv1::check(&mut ctx);
    }
    if !opts.targets.is_empty() {
        for obj in &bundle.objects {
            for d in super::target::kind_findings(&opts.targets, &obj.api_version, &obj.kind) {
                ctx.push(d.at(&obj.file, obj.line_of(&["kind"])));
            }
        }
    }
    super::target::annotate(&mut ctx.out, &opts.targets);
    let mut report = Report::new(bundle.root.display().to_string(), ctx.out);
    report.sort();
    report
}

/// Bundle folders for the batch runner: a folder that cannot be loaded gets a report with one
/// `file/unreadable` finding (the command exits 2 on it).
struct Folders<'a>(&'a Options);

impl super::batch::Check for Folders<'_> {
    type Error = std::convert::Infallible;

    fn check(&self, dir: &std::path::Path, _inner_jobs: usize) -> Result<Report, Self::Error> {
        Ok(match Bundle::load(dir) {
            Ok(bundle) => validate(&bundle, self.0),
            Err(e) => Report::new(
                dir.display().to_string(),
                vec![Diagnostic::new(
                    Rule::FileUnreadable,
                    crate::findings::message_of(&e),
                )],
            ),
        })
    }
}

/// Validates bundle folders on up to `jobs` threads ([`super::batch::run`]); reports keep the
/// input order.
pub fn validate_dirs(
    dirs: &[std::path::PathBuf],
    opts: &Options,
    jobs: Option<usize>,
) -> Vec<Report> {
    super::batch::run(&Folders(opts), dirs, jobs)
        .into_iter()
        .map(|result| match result {
            Ok(report) => report,
            Err(never) => match never {},
        })
        .collect()
}
