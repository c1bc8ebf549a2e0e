//! OLM v1's CRD upgrade preflight before the cluster (`olmv1/crd-upgrade-*`): `bundle validate
//! NEW --upgrade-from OLD` on crafted bundles (testdata/crd-upgrade/bundles: v1.0.0, a safe
//! v1.1.0, an unsafe v1.2.0), `catalog validate --select-optional olmv1` on a catalog of the
//! three (testdata/crd-upgrade/catalog), every rule fired by operator-controller's own test
//! manifests (testdata/crd-upgrade/upstream) put into bundles, and the real catalogs of
//! ../shared/catalogs whose bundles carry their manifests.

use crate::support::cmd::run;
use crate::support::fixtures::{testdata, valid_basic};
use crate::support::fs::copy_dir;
use crate::support::shared::{cases, shared_catalogs};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn bundles(v: &str) -> String {
    testdata(&format!("crd-upgrade/bundles/{v}"))
        .display()
        .to_string()
}

/// `catalog validate DIR --select-optional olmv1 -o json`: the olmv1 upgrade-edge check's
/// report, which both the testdata and the real-catalog tests read.
fn validate_olmv1(dir: &str) -> std::process::Output {
    run(&[
        "catalog",
        "validate",
        dir,
        "--select-optional",
        "olmv1",
        "-o",
        "json",
    ])
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every finding of a JSON report as (rule, file, line, message).
fn findings(json: &str) -> Vec<(String, String, u64, String)> {
    let v: Value = serde_json::from_str(json).expect("JSON report");
    let mut out = Vec::new();
    fn walk(x: &Value, out: &mut Vec<(String, String, u64, String)>) {
        match x {
            Value::Object(m) => {
                if let (Some(Value::String(r)), Some(Value::String(msg))) =
                    (m.get("rule"), m.get("message"))
                {
                    out.push((
                        r.clone(),
                        m.get("file")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        m.get("line").and_then(Value::as_u64).unwrap_or(0),
                        msg.clone(),
                    ));
                }
                m.values().for_each(|v| walk(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    walk(&v, &mut out);
    out
}

#[test]
fn unsafe_bundle_upgrade_is_refused_with_upstream_messages_at_the_new_crd_lines() {
    let (old, new) = (bundles("v1.1.0"), bundles("v1.2.0"));
    let out = run(&[
        "bundle",
        "validate",
        &new,
        "--upgrade-from",
        &old,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let got: Vec<_> = findings(&stdout(&out))
        .into_iter()
        .filter(|f| f.0.starts_with("olmv1/crd-upgrade-"))
        .collect();
    const CRD: &str = "manifests/kvstore.example.com_kvclusters.yaml";
    let edge = format!("upgrade {old} -> {new}: CRD \"kvclusters.kvstore.example.com\": ");
    let want: Vec<(&str, u64, &str)> = vec![
        (
            "olmv1/crd-upgrade-field-removal",
            22,
            "existingFieldRemoval: removed field : v1.^.spec.storageClass",
        ),
        (
            "olmv1/crd-upgrade-field-removal",
            22,
            "existingFieldRemoval: removed field : v1.^.spec.version",
        ),
        (
            "olmv1/crd-upgrade-required",
            22,
            "v1: ^.spec: required: new required fields: [tier]",
        ),
        (
            "olmv1/crd-upgrade-type",
            22,
            "v1: ^.spec.storageClass: type: type changed : \"string\" -> \"\"",
        ),
        (
            "olmv1/crd-upgrade-minimum",
            27,
            "v1: ^.spec.replicas: minimum: minimum increased : 1 -> 3",
        ),
        (
            "olmv1/crd-upgrade-type",
            22,
            "v1: ^.spec.version: type: type changed : \"string\" -> \"\"",
        ),
        (
            "olmv1/crd-upgrade-unhandled",
            33,
            "v1: ^.status: unhandled: unhandled changes found (Format \"\" -> \"byte\"; XPreserveUnknownFields &true -> nil) [in full: format: (none) -> \"byte\"; x-kubernetes-preserve-unknown-fields: true -> (none)]",
        ),
    ];
    let mut got_sorted: Vec<(String, u64, String)> = got
        .iter()
        .map(|f| (f.0.clone(), f.2, f.3.clone()))
        .collect();
    got_sorted.sort();
    let mut want_sorted: Vec<(String, u64, String)> = want
        .iter()
        .map(|(r, l, m)| (r.to_string(), *l, format!("{edge}{m}")))
        .collect();
    want_sorted.sort();
    assert_eq!(got_sorted, want_sorted);
    assert!(got.iter().all(|f| f.1 == CRD), "{got:?}");
}

#[test]
fn safe_bundle_upgrade_passes() {
    let out = run(&[
        "bundle",
        "validate",
        &bundles("v1.1.0"),
        "--upgrade-from",
        &bundles("v1.0.0"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(!stdout(&out).contains("olmv1/crd-upgrade"));
}

#[test]
fn upgrade_from_a_folder_that_is_no_bundle_is_a_usage_error() {
    let temp = tempfile::tempdir().expect("temp dir");
    let out = run(&[
        "bundle",
        "validate",
        &bundles("v1.1.0"),
        "--upgrade-from",
        &temp.path().display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--upgrade-from"), "{err}");
    assert!(err.contains(&temp.path().display().to_string()), "{err}");
}

#[test]
fn catalog_validate_olmv1_checks_every_edge_and_names_it() {
    let dir = testdata("crd-upgrade/catalog").display().to_string();
    let plain = run(&["catalog", "validate", &dir]);
    assert_eq!(plain.status.code(), Some(0), "{}", stdout(&plain));
    let out = validate_olmv1(&dir);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let v: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        v["olmv1UpgradeEdges"][&dir],
        serde_json::json!({"edges": 3, "checked": 3, "unsafe_edges": 2})
    );
    let f = findings(&text);
    let upgrade: Vec<_> = f
        .iter()
        .filter(|f| f.0.starts_with("olmv1/crd-upgrade-"))
        .collect();
    // Both edges into v1.2.0 (replaces and skipRange from v1.1.0, skipRange from v1.0.0), each
    // finding at the v1.2.0 blob; none for the safe v1.0.0 -> v1.1.0.
    assert!(
        upgrade
            .iter()
            .all(|f| f.1 == "kvstore-operator/catalog.yaml" && f.2 == 97),
        "{upgrade:?}"
    );
    assert!(upgrade.iter().any(|f| f.3.starts_with(
        "upgrade kvstore-operator.v1.1.0 -> kvstore-operator.v1.2.0 (stable: replaces, stable: skipRange): CRD \"kvclusters.kvstore.example.com\": v1: ^.spec.replicas: minimum: minimum increased : 1 -> 3"
    )));
    assert!(upgrade.iter().any(|f| f.3.starts_with(
        "upgrade kvstore-operator.v1.0.0 -> kvstore-operator.v1.2.0 (stable: skipRange): "
    )));
    assert!(
        !upgrade
            .iter()
            .any(|f| f.3.contains("-> kvstore-operator.v1.1.0 "))
    );
    assert_eq!(upgrade.len(), 12, "{upgrade:#?}");
}

/// A bundle folder holding `crd` (a file of operator-controller's test manifests, or a path)
/// instead of valid-basic's CRD.
fn bundle_with_crd(into: &Path, crd_text: &str) {
    copy_dir(&valid_basic(), into);
    fs::remove_file(into.join("manifests/kvstore.example.com_kvclusters.yaml")).expect("rm crd");
    fs::write(into.join("manifests/crd.json"), crd_text).expect("write crd");
}

/// Every `olmv1/crd-upgrade-*` rule fires: operator-controller's own upgrade test pairs as
/// bundle folders, and a pattern added to the crafted bundle (no upstream case changes one).
#[test]
fn every_crd_upgrade_rule_fires() {
    let up = testdata("crd-upgrade/upstream");
    let pairs = [
        ("old-crd.json", "crd-invalid-upgrade.json"),
        ("old-crd.json", "crd-field-removed.json"),
        (
            "crd-complex-breaking-changes-old.json",
            "crd-complex-breaking-changes-new.json",
        ),
        ("crd-unhandled-old.json", "crd-unhandled-new.json"),
    ];
    let temp = tempfile::tempdir().expect("temp dir");
    let mut fired: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (old, new)) in pairs.iter().enumerate() {
        let (o, n) = (
            temp.path().join(format!("{i}-old")),
            temp.path().join(format!("{i}-new")),
        );
        bundle_with_crd(&o, &fs::read_to_string(up.join(old)).expect("old"));
        bundle_with_crd(&n, &fs::read_to_string(up.join(new)).expect("new"));
        let out = run(&[
            "bundle",
            "validate",
            &n.display().to_string(),
            "--upgrade-from",
            &o.display().to_string(),
            "-o",
            "json",
        ]);
        for f in findings(&stdout(&out)) {
            if f.0.starts_with("olmv1/crd-upgrade-") {
                assert_eq!(f.1, "manifests/crd.json");
                *fired.entry(f.0).or_default() += 1;
            }
        }
    }
    let patterned: PathBuf = temp.path().join("pattern");
    copy_dir(&testdata("crd-upgrade/bundles/v1.1.0"), &patterned);
    let crd = patterned.join("manifests/kvstore.example.com_kvclusters.yaml");
    let text = fs::read_to_string(&crd).expect("crd").replace(
        "                  description: The key-value store version to run.\n",
        "                  description: The key-value store version to run.\n                  pattern: '^[0-9.]+$'\n",
    );
    fs::write(&crd, text).expect("write");
    let out = run(&[
        "bundle",
        "validate",
        &patterned.display().to_string(),
        "--upgrade-from",
        &bundles("v1.1.0"),
        "-o",
        "json",
    ]);
    let f = findings(&stdout(&out));
    assert!(
        f.iter().any(|f| f.0 == "olmv1/crd-upgrade-pattern"
            && f.3
                .ends_with("v1: ^.spec.version: pattern: pattern added : \"\" -> \"^[0-9.]+$\"")),
        "{f:?}"
    );
    *fired.entry("olmv1/crd-upgrade-pattern".into()).or_default() += 1;
    for id in [
        "olmv1/crd-upgrade-scope",
        "olmv1/crd-upgrade-stored-version-removal",
        "olmv1/crd-upgrade-field-removal",
        "olmv1/crd-upgrade-type",
        "olmv1/crd-upgrade-enum",
        "olmv1/crd-upgrade-required",
        "olmv1/crd-upgrade-default",
        "olmv1/crd-upgrade-maximum",
        "olmv1/crd-upgrade-minimum",
        "olmv1/crd-upgrade-pattern",
        "olmv1/crd-upgrade-nullable",
        "olmv1/crd-upgrade-oneof",
        "olmv1/crd-upgrade-unhandled",
    ] {
        assert!(fired.contains_key(id), "{id} never fired: {fired:?}");
    }
}

/// The real catalogs whose bundles carry their manifests (OpenShift 4.12 to 4.16): every edge
/// is checked, and the unsafe edges looked at by hand are reported with upstream's words.
#[test]
fn real_catalogs_every_edge_checked() {
    let Some(root) = shared_catalogs("versions") else {
        return;
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        for v in 12..=16 {
            let d = root.join(format!("versions/{repo}/v4.{v}"));
            if d.is_dir() {
                dirs.push(d);
            }
        }
    }
    let (mut edges, mut checked, mut unsafe_edges) = (0, 0, 0);
    let mut all = Vec::new();
    for d in &dirs {
        let dir = d.display().to_string();
        let out = validate_olmv1(&dir);
        let text = stdout(&out);
        let v: Value = serde_json::from_str(&text).expect("json");
        let c = &v["olmv1UpgradeEdges"][&dir];
        edges += c["edges"].as_u64().unwrap_or(0);
        checked += c["checked"].as_u64().unwrap_or(0);
        unsafe_edges += c["unsafe_edges"].as_u64().unwrap_or(0);
        all.extend(findings(&text));
    }
    println!("real catalogs: {edges} edges, {checked} checked, {unsafe_edges} unsafe");
    cases(
        "crd-upgrade real catalog edges checked",
        checked as usize,
        100,
    );
    assert_eq!(
        edges, checked,
        "every bundle of these catalogs carries its manifests"
    );
    // Looked at by hand: stackable's commons-operator 25.11.0 caps every port at 65535.
    assert!(all.iter().any(|f| f.0 == "olmv1/crd-upgrade-maximum" && f.3 == "upgrade commons-operator.v25.7.0 -> commons-operator.v25.11.0 (stable: replaces): CRD \"s3connections.s3.stackable.tech\": v1alpha1: ^.spec.port: maximum: maximum constraint added when there was none previously : 65535"));
    assert!(unsafe_edges >= 2);
}
