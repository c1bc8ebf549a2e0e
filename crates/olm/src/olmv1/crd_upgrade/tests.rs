//! operator-controller v1.11.0's `crdupgradesafety_test.go` cases, on its own test manifests
//! (`testdata/crd-upgrade/upstream/`), with its expectations: the error contains each expected
//! text byte for byte (its `require.ErrorContains`), or there is no error.

use super::*;
use crate::yaml::{Document, parse_stream};

fn docs(name: &str) -> Vec<Document> {
    let path = format!(
        "{}/../../testdata/crd-upgrade/upstream/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("test manifest");
    parse_stream(&text).expect("parses")
}

/// The whole preflight error for an upgrade from `old` to `new` (`None`: upgrade allowed).
/// Without `old` the CRD is new on the cluster: nothing to break.
fn preflight(old: Option<&str>, new: &str) -> Option<String> {
    let old_docs = old.map(docs).unwrap_or_default();
    let new_docs = docs(new);
    let olds = crds_of(old_docs.iter().map(|d| (&d.root, "old")));
    let news = crds_of(new_docs.iter().map(|d| (&d.root, "new")));
    let mut messages = Vec::new();
    for (name, n) in &news {
        if let Some(o) = olds.get(name) {
            let v = check(o, n);
            if !v.is_empty() {
                messages.push(preflight_message(name, &v));
            }
        }
    }
    (!messages.is_empty()).then(|| messages.join("\n"))
}

fn assert_contains(err: &Option<String>, wants: &[&str]) {
    let err = err.as_deref().expect("an error");
    for w in wants {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn release_with_no_crd_objects() {
    assert_eq!(preflight(Some("old-crd.json"), "no-crds.json"), None);
}

#[test]
fn old_crd_not_found_is_an_install() {
    assert_eq!(preflight(None, "crd-valid-upgrade.json"), None);
}

#[test]
fn valid_upgrade() {
    assert_eq!(
        preflight(Some("old-crd.json"), "crd-valid-upgrade.json"),
        None
    );
}

#[test]
fn all_validation_failures_except_field_removal() {
    let err = preflight(Some("old-crd.json"), "crd-invalid-upgrade.json");
    assert_contains(
        &err,
        &[
            "scope:",
            "storedVersionRemoval:",
            "enum:",
            "required:",
            "maximum:",
            "maxItems:",
            "maxLength:",
            "maxProperties:",
            "minimum:",
            "minItems:",
            "minLength:",
            "minProperties:",
            "default:",
        ],
    );
}

#[test]
fn existing_field_removal() {
    let err = preflight(Some("old-crd.json"), "crd-field-removed.json");
    assert_contains(&err, &["existingFieldRemoval:"]);
}

#[test]
fn webhook_conversion_strategy_exists() {
    assert_eq!(
        preflight(
            Some("crd-conversion-webhook-old.json"),
            "crd-conversion-webhook.json"
        ),
        None
    );
}

#[test]
fn missing_conversion_strategy_and_enum_values_removed() {
    let err = preflight(
        Some("crd-conversion-webhook-old.json"),
        "crd-conversion-no-webhook.json",
    );
    assert_contains(
        &err,
        &[
            r#"validating upgrade for CRD "crontabs.stable.example.com": v1 -> v2: ^.spec.foobarbaz: enum: allowed enum values removed"#,
        ],
    );
}

#[test]
fn description_changes_do_not_fail() {
    assert_eq!(
        preflight(Some("old-crd.json"), "crd-description-changed.json"),
        None
    );
}

#[test]
fn same_validation_issues_in_old_and_new() {
    assert_eq!(
        preflight(
            Some("crd-conversion-no-webhook.json"),
            "crd-conversion-no-webhook.json"
        ),
        None
    );
}

#[test]
fn same_issues_plus_a_new_one() {
    let err = preflight(
        Some("crd-conversion-no-webhook.json"),
        "crd-conversion-no-webhook-extra-issue.json",
    );
    assert_contains(
        &err,
        &[
            r#"validating upgrade for CRD "crontabs.stable.example.com":"#,
            r#"v1 -> v2: ^.spec.extraField: type: type changed : "boolean" -> "string""#,
        ],
    );
    assert!(
        !err.unwrap()
            .contains("v1 -> v2: ^.spec.foobarbaz: enum: allowed enum values removed")
    );
}

#[test]
fn optional_field_addition() {
    assert_eq!(
        preflight(
            Some("crd-optional-field-old.json"),
            "crd-optional-field-new.json"
        ),
        None
    );
}

#[test]
fn complex_breaking_changes() {
    let err = preflight(
        Some("crd-complex-breaking-changes-old.json"),
        "crd-complex-breaking-changes-new.json",
    );
    assert_contains(
        &err,
        &[
            r#"validating upgrade for CRD "services.networking.example.com""#,
            "type: type changed",
            "nullable: nullable added",
            "oneOf: oneOf constraint added",
        ],
    );
}

#[test]
fn one_of_removed() {
    let err = preflight(
        Some("crd-oneof-removed-old.json"),
        "crd-oneof-removed-new.json",
    );
    assert_contains(&err, &["oneOf: allowed oneOf schemas removed"]);
}

#[test]
fn one_of_added() {
    let err = preflight(
        Some("crd-oneof-safe-addition-old.json"),
        "crd-oneof-safe-addition-new.json",
    );
    assert_contains(&err, &["oneOf: oneOf constraint added"]);
    let err = err.unwrap();
    assert!(!err.contains("unhandled"), "{err}");
    assert!(!err.contains("type:"), "{err}");
}

#[test]
fn unhandled_changes_default_policy() {
    let err = preflight(Some("crd-unhandled-old.json"), "crd-unhandled-new.json");
    assert_contains(
        &err,
        &["unhandled changes found", "Format \"\" -> \"email\""],
    );
    assert!(!err.unwrap().contains("v1.JSONSchemaProps"));
}

/// `TestConciseUnhandledMessage_SingleChange`: the summary of one changed field.
#[test]
fn concise_unhandled_single_change() {
    let err = preflight(Some("crd-unhandled-old.json"), "crd-unhandled-new.json").unwrap();
    assert!(
        err.contains(r#"unhandled: unhandled changes found (Format "" -> "email")"#),
        "{err}"
    );
}

#[test]
fn go_float_matches_fmt_v() {
    // Printed by Go's fmt.Printf("%v") for the same values.
    let want = "10|1e+06|123456|1.234567e+06|1e+20|1e+21|0.5|1e-05|2.5e-05";
    let got: Vec<String> = [
        10.0, 1e6, 123456.0, 1234567.0, 1e20, 1e21, 0.5, 0.00001, 2.5e-5,
    ]
    .iter()
    .map(|f| property::go_float(*f))
    .collect();
    assert_eq!(got.join("|"), want);
}

#[test]
fn kube_version_order() {
    let mut v = vec![
        "v2", "v1", "foo", "v1beta1", "v1alpha1", "bar", "v1beta2", "v10",
    ];
    v.sort_by(|a, b| kube_version_cmp(a, b));
    assert_eq!(
        v,
        [
            "foo", "bar", "v1alpha1", "v1beta1", "v1beta2", "v1", "v2", "v10"
        ]
    );
}
