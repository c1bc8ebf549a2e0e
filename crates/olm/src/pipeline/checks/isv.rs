//! The `isv` suite (certified-operators and redhat-marketplace; operator-pipelines'
//! `operatorcert/static_tests/isv/bundle.py`).

use super::super::finding::Finding;
use super::super::repo::Bundle;
use super::Target;

/// The bundle checks, alphabetically.
pub fn bundle(t: &Target<'_>, b: &Bundle, out: &mut Vec<Finding>) {
    check_marketplace_annotation(t, b, out);
    if !t.operator.fbc_enabled() {
        check_pruned_graph(t, b, out);
    }
}

const ID_MARKETPLACE: &str = "check_marketplace_annotation";

fn check_marketplace_annotation(t: &Target<'_>, b: &Bundle, out: &mut Vec<Finding>) {
    if t.repo.organization() != Some("redhat-marketplace") {
        return;
    }
    let package = b
        .annotation(olmpack_ground::bundle_keys::PACKAGE)
        .unwrap_or("None");
    for (key, page) in [
        ("marketplace.openshift.io/remote-workflow", "pricing"),
        ("marketplace.openshift.io/support-workflow", "support"),
    ] {
        let expected = format!(
            "https://marketplace.redhat.com/en-us/operators/{package}/{page}?utm_source=openshift_console"
        );
        let keys = ["metadata", "annotations", key];
        let actual = b.csv_text(&keys);
        if actual != Some(expected.as_str()) {
            out.push(
                Finding::error(
                    ID_MARKETPLACE,
                    format!(
                        "CSV {key} annotation is set to '{}'. Expected value is {expected}. To fix this issue define the annotation in 'manifests/*.clusterserviceversion.yaml' file.",
                        actual.unwrap_or("None")
                    ),
                )
                .at(&b.csv_file(), b.csv_line(&keys)),
            );
        }
    }
}

const ID_PRUNED: &str = "check_pruned_graph";

const PRUNED_GRAPH_ERROR: &str = "olm.skipRange annotation is set but replaces field is not set in the CSV. The definition may lead to unintentional pruning of the update graph. https://olm.operatorframework.io/docs/concepts/olm-architecture/operator-catalog/creating-an-update-graph/#skiprange. If this is intentional, you can skip the check by adding `/test skip check_pruned_graph` comment to a pull request.";

fn check_pruned_graph(t: &Target<'_>, b: &Bundle, out: &mut Vec<Finding>) {
    let keys = ["metadata", "annotations", "olm.skipRange"];
    let has_range = b.csv_text(&keys).is_some_and(|s| !s.is_empty());
    let has_replaces = b
        .csv_text(&["spec", "replaces"])
        .is_some_and(|s| !s.is_empty());
    if !has_range || has_replaces {
        return;
    }
    for channel in b.channels() {
        if t.operator.channel_bundles(&channel).len() != 1 {
            out.push(
                Finding::warning(ID_PRUNED, PRUNED_GRAPH_ERROR)
                    .at(&b.csv_file(), b.csv_line(&keys)),
            );
        }
    }
}
