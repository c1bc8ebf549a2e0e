//! Rules that only apply to a bundle read from an image: its config labels must repeat the
//! bundle annotations (the on-cluster registry trusts annotations.yaml, off-cluster tools trust
//! labels; no upstream validator compares them, certification pipelines do).

use super::{Diagnostic, Report, Rule};
use crate::bundle::{Bundle, keys};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The label/annotation prefix that must agree.
pub const BUNDLE_KEY_PREFIX: &str = keys::BUNDLE_PREFIX;

/// A label and annotation that disagree (or one of them is missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelMismatch {
    /// The key.
    pub key: String,
    /// The image label's value, if the label exists.
    pub label: Option<String>,
    /// The annotation's value, if the annotation exists.
    pub annotation: Option<String>,
}

impl fmt::Display for LabelMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.label, &self.annotation) {
            (Some(l), Some(a)) => write!(
                f,
                "{}: image label is {l:?} but metadata/annotations.yaml says {a:?} (annotations.yaml is what OLM uses: rebuild the image)",
                self.key
            ),
            (None, Some(a)) => write!(
                f,
                "{}: metadata/annotations.yaml sets {a:?} but the image has no such label (tools that read labels, such as opm render, cannot see it)",
                self.key
            ),
            (Some(l), None) => write!(
                f,
                "{}: the image label is {l:?} but metadata/annotations.yaml has no such key",
                self.key
            ),
            (None, None) => write!(f, "{}: missing on both sides", self.key),
        }
    }
}

/// Compares every `operators.operatorframework.io.bundle.*` key of the image labels and the
/// annotations (missing on either side or a different value), plus any other annotation the
/// image also carries as a label with a different value. Sorted by key.
pub fn compare_labels(
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) -> Vec<LabelMismatch> {
    let keys: BTreeSet<&String> = labels
        .keys()
        .chain(annotations.keys())
        .filter(|k| {
            k.starts_with(BUNDLE_KEY_PREFIX)
                || (labels.contains_key(*k) && annotations.contains_key(*k))
        })
        .collect();
    keys.into_iter()
        .filter_map(|k| {
            let (l, a) = (labels.get(k), annotations.get(k));
            let same = matches!((l, a), (Some(l), Some(a)) if l.trim() == a.trim());
            (!same).then(|| LabelMismatch {
                key: k.clone(),
                label: l.cloned(),
                annotation: a.cloned(),
            })
        })
        .collect()
}

/// Adds an `image/labels` error for every mismatch between the image labels and the bundle's
/// annotations, pointing at the annotation's line when there is one.
pub fn check_labels(report: &mut Report, bundle: &Bundle, labels: &BTreeMap<String, String>) {
    let Some(ann) = &bundle.annotations else {
        return;
    };
    for m in compare_labels(labels, &ann.labels()) {
        let d = Diagnostic::new(Rule::ImageLabels, m.to_string());
        let d = match ann.get(&m.key) {
            Some(a) => d.at(&ann.file, a.line),
            None => d.in_file(ann.file.clone()),
        };
        report.diagnostics.push(d);
    }
    report.sort();
}

/// Adds `image/shape` warnings (an index instead of a manifest, extra files, a runnable config).
pub fn check_shape(report: &mut Report, warnings: &[String]) {
    for w in warnings {
        report
            .diagnostics
            .push(Diagnostic::new(Rule::ImageShape, w.clone()));
    }
    report.sort();
}
