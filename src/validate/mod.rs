//! The registry+v1 rules and the renderers for their findings.
//!
//! Each rule family lives in its own module and pushes [`Diagnostic`]s into a shared [`Ctx`]; the
//! registry in [`rules`] gives every rule its stable id and severity. [`validate`] runs the
//! families that apply to a loaded [`Bundle`] and returns a sorted [`Report`].

pub mod batch;
mod crd;
mod csv;
mod dockerfile;
mod format;
pub mod image;
mod metadata;
pub mod names;
mod objects;
mod optional;
pub mod render;
mod size;

pub use crate::findings::{Diagnostic, Group, Report, Rule, Severity, diagnostic, rules};

use crate::bundle::Bundle;

/// What to check beyond the default rules.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Optional rule groups to run in addition to the default ones.
    pub optional: Vec<Group>,
    /// Target Kubernetes version: APIs removed at or before it become errors.
    pub k8s_version: Option<semver::Version>,
}

impl Options {
    /// Whether an optional group was selected.
    pub fn selected(&self, group: Group) -> bool {
        group == Group::Default || self.optional.contains(&group)
    }
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
    let mut report = Report {
        bundle: bundle.root.display().to_string(),
        diagnostics: ctx.out,
    };
    report.sort();
    report
}
