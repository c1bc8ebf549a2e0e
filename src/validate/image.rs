//! Rules that only apply to a bundle read from an image: its config labels must repeat the
//! bundle annotations (the on-cluster registry trusts annotations.yaml, off-cluster tools trust
//! labels; no upstream validator compares them, certification pipelines do).

use super::{Diagnostic, Report, Rule};
use crate::bundle::{Bundle, keys};
use std::collections::BTreeMap;

/// Adds `image/labels` findings: every `operators.operatorframework.io.bundle.*` key must have
/// the same value as a label and as an annotation. Other annotations are compared too when the
/// image carries a label of that name.
pub fn check_labels(report: &mut Report, bundle: &Bundle, labels: &BTreeMap<String, String>) {
    let Some(ann) = &bundle.annotations else {
        return;
    };
    let file = ann.file.clone();
    for a in &ann.entries {
        let value = a.value.trim();
        match labels.get(&a.key) {
            Some(label) if label.trim() == value => {}
            Some(label) => report.diagnostics.push(
                Diagnostic::new(
                    Rule::ImageLabels,
                    format!("image label {}=\"{label}\" differs from annotations.yaml \"{value}\" (annotations.yaml is what OLM uses): rebuild the image", a.key),
                )
                .at(&file, a.line),
            ),
            None if a.key.starts_with(keys::BUNDLE_PREFIX) => report.diagnostics.push(
                Diagnostic::new(
                    Rule::ImageLabels,
                    format!("image has no label {} (annotations.yaml has \"{value}\"): tools that read labels (opm render, catalogs) cannot see it", a.key),
                )
                .at(&file, a.line),
            ),
            None => {}
        }
    }
    for (key, label) in labels {
        if key.starts_with(keys::BUNDLE_PREFIX) && ann.get(key).is_none() {
            report.diagnostics.push(
                Diagnostic::new(
                    Rule::ImageLabels,
                    format!("image label {key}=\"{label}\" has no counterpart in annotations.yaml"),
                )
                .in_file(file.clone()),
            );
        }
    }
    report.sort();
}
