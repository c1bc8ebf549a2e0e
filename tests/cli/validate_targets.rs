//! `--target` (issue 46 item 3): bundle and catalog validation that knows where the result
//! will run. Each finding names the targets it affects; removed APIs are judged per
//! OpenShift release's Kubernetes; NetworkPolicy is refused on OpenShift's pipelines and on
//! OLM v1 though opm accepts it; `olmv1` runs the OLM v1 rules, scoped to it; OpenShift 4.17+
//! catalogs ship `olm.csv.metadata`. `--compat opm=vX` gives a past opm's verdict on a
//! catalog. The facts and their sources: crates/olm/src/validate/target/matrix.rs.

use crate::support::cmd::olmpack;
use crate::support::fixtures::{testdata, valid_basic};
use crate::support::fs::copy_dir;
use crate::support::json::strings;
use crate::support::shared;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// valid-basic plus a NetworkPolicy and a FlowSchema of flowcontrol v1beta3 (removed in
/// Kubernetes 1.32 = OpenShift 4.19, still served by 4.18's 1.31).
fn bundle_with_netpol_and_flowschema(root: &Path) -> PathBuf {
    let dir = root.join("bundle");
    copy_dir(&valid_basic(), &dir);
    std::fs::write(
        dir.join("manifests/netpol.yaml"),
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: kvstore-operator-default-deny\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n",
    )
    .expect("write netpol");
    std::fs::write(
        dir.join("manifests/flowschema.yaml"),
        "apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata:\n  name: kvstore-operator\nspec:\n  priorityLevelConfiguration:\n    name: workload-low\n",
    )
    .expect("write flowschema");
    dir
}

/// Runs validate with `-o json` and returns (exit code, the one subject's outputs).
fn json_outputs(args: &[&str], path: &Path) -> (i32, Vec<Value>) {
    let out = olmpack()
        .args(args)
        .arg(path)
        .args(["-o", "json"])
        .output()
        .expect("runs");
    let code = out.status.code().unwrap_or(-1);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let outputs = v["outputs"]
        .as_array()
        .or_else(|| v["subjects"][0]["outputs"].as_array())
        .cloned()
        .unwrap_or_default();
    (code, outputs)
}

fn targets_of(o: &Value) -> Vec<String> {
    strings(&o["targets"])
}

fn with_rule<'a>(outputs: &'a [Value], rule: &str) -> Vec<&'a Value> {
    outputs.iter().filter(|o| o["rule"] == rule).collect()
}

#[test]
fn each_finding_names_the_targets_it_breaks() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = bundle_with_netpol_and_flowschema(tmp.path());
    let (code, outputs) = json_outputs(
        &[
            "bundle",
            "validate",
            "--target",
            "ocp-4.18,ocp-4.19",
            "--target",
            "olmv0,olmv1",
        ],
        &dir,
    );
    assert_eq!(code, 1, "{outputs:#?}");
    // Every finding says which targets it affects.
    assert!(
        outputs.iter().all(|o| o["targets"].is_array()),
        "{outputs:#?}"
    );

    // flowcontrol v1beta3 is gone from 1.32 (OpenShift 4.19), served by 4.18's 1.31; olmv0 and
    // olmv1 fix no Kubernetes version and may run on a current one.
    let removed = with_rule(&outputs, "object/deprecated-api");
    assert_eq!(removed.len(), 1, "{outputs:#?}");
    assert_eq!(targets_of(removed[0]), ["ocp-4.19", "olmv0", "olmv1"]);
    assert_eq!(removed[0]["type"], "error");

    // NetworkPolicy: refused by the OpenShift pipelines and by OLM v1, each with its source;
    // upstream OLM v0 installs it.
    let netpol = with_rule(&outputs, "target/kind");
    let mut seen: Vec<(Vec<String>, bool)> = netpol
        .iter()
        .map(|o| {
            let m = o["message"].as_str().unwrap_or("");
            (
                targets_of(o),
                m.contains("operator-pipelines#852") || m.contains("tektoncd/operator#3873"),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            (vec!["ocp-4.18".to_string(), "ocp-4.19".to_string()], true),
            (vec!["olmv1".to_string()], true)
        ]
    );
    assert!(
        netpol
            .iter()
            .all(|o| o["file"] == "manifests/netpol.yaml" && o["line"] == 2)
    );

    // The olmv1 target runs OLM v1's rules, and they affect it alone.
    let v1: Vec<&Value> = outputs
        .iter()
        .filter(|o| o["rule"].as_str().is_some_and(|r| r.starts_with("olmv1/")))
        .collect();
    assert!(!v1.is_empty(), "{outputs:#?}");
    assert!(v1.iter().all(|o| targets_of(o) == ["olmv1"]), "{v1:#?}");

    // A target-independent finding affects them all.
    let kind = with_rule(&outputs, "object/kind");
    assert_eq!(
        targets_of(kind[0]),
        ["ocp-4.18", "ocp-4.19", "olmv0", "olmv1"]
    );
}

#[test]
fn one_target_at_a_time_and_none() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = bundle_with_netpol_and_flowschema(tmp.path());
    // OpenShift 4.18 still serves flowcontrol v1beta3: a warning that breaks none of the targets.
    let (_, old) = json_outputs(&["bundle", "validate", "--target", "ocp-4.18"], &dir);
    let removed = with_rule(&old, "object/deprecated-api");
    assert_eq!(removed[0]["type"], "warning");
    assert!(targets_of(removed[0]).is_empty());
    assert!(removed[0]["targets"].is_array());
    // Upstream OLM v0 installs a NetworkPolicy: no target/kind finding.
    let (_, v0) = json_outputs(&["bundle", "validate", "--target", "olmv0"], &dir);
    assert!(with_rule(&v0, "target/kind").is_empty(), "{v0:#?}");
    // Without --target the report is what it always was: no targets key, no target rule.
    let (code, plain) = json_outputs(&["bundle", "validate"], &dir);
    assert_eq!(code, 1);
    assert!(
        plain.iter().all(|o| o.get("targets").is_none()),
        "{plain:#?}"
    );
    assert!(with_rule(&plain, "target/kind").is_empty());
    assert_eq!(
        with_rule(&plain, "object/deprecated-api")[0]["type"],
        "warning"
    );
    // The text report names the targets after the message.
    let out = olmpack()
        .args(["bundle", "validate", "--target", "ocp-5.0"])
        .arg(&dir)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[object/deprecated-api] manifests/flowschema.yaml:1: ")
            && text.contains("(targets: ocp-5.0)"),
        "{text}"
    );
}

#[test]
fn an_unknown_target_is_refused_by_name() {
    for (cmd, path) in [
        ("bundle", valid_basic()),
        ("catalog", testdata("catalogs/valid-basic")),
    ] {
        let out = olmpack()
            .args([cmd, "validate", "--target", "ocp-4.11"])
            .arg(&path)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("unknown target \"ocp-4.11\"") && err.contains("ocp-4.12 to ocp-5.0"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    let out = olmpack()
        .args(["catalog", "validate", "--compat", "opm=latest"])
        .arg(testdata("catalogs/valid-basic"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("opm=vX.Y"));
}

#[test]
fn catalogs_for_openshift_4_17_and_later_ship_csv_metadata() {
    let catalog = testdata("catalogs/valid-json");
    let (code, outputs) = json_outputs(
        &[
            "catalog",
            "validate",
            "--target",
            "ocp-4.16,ocp-4.17,ocp-5.0",
        ],
        &catalog,
    );
    assert_eq!(code, 0, "a warning: {outputs:#?}");
    let form = with_rule(&outputs, "catalog/metadata-form");
    assert_eq!(form.len(), 1, "one per package: {outputs:#?}");
    assert_eq!(targets_of(form[0]), ["ocp-4.17", "ocp-5.0"]);
    assert_eq!(form[0]["file"], "bar/catalog.json");
    let (_, older) = json_outputs(&["catalog", "validate", "--target", "ocp-4.16"], &catalog);
    assert!(with_rule(&older, "catalog/metadata-form").is_empty());
    // olmv1 as a target runs the OLM v1 group on the catalog's bundles, scoped to it.
    let (code, v1) = json_outputs(
        &["catalog", "validate", "--target", "olmv1,ocp-4.16"],
        &catalog,
    );
    assert_eq!(code, 1);
    let owned = with_rule(&v1, "olmv1/owned-crd-missing");
    assert!(!owned.is_empty() && owned.iter().all(|o| targets_of(o) == ["olmv1"]));
}

#[test]
fn compat_gives_a_past_opm_verdict() {
    // skipRange is checked since opm v1.69.0.
    let skip = testdata("catalogs/broken/skip-range");
    let (code, now) = json_outputs(&["catalog", "validate"], &skip);
    assert_eq!(code, 1);
    assert_eq!(with_rule(&now, "catalog/skip-range")[0]["type"], "error");
    let (code, old) = json_outputs(&["catalog", "validate", "--compat", "opm=v1.68.2"], &skip);
    assert_eq!(code, 0, "{old:#?}");
    let f = with_rule(&old, "catalog/skip-range")[0];
    assert_eq!(f["type"], "warning");
    assert!(
        f["message"].as_str().is_some_and(
            |m| m.contains("opm v1.68.2 does not check this: opm checks it since v1.69.0")
        ),
        "{f}"
    );
    let (code, _) = json_outputs(&["catalog", "validate", "--compat", "opm=v1.69.0"], &skip);
    assert_eq!(code, 1);
    // The stranded walk changed in v1.58.0 (k8s-operatorhub#6834): still an error, said so.
    let (code, stranded) = json_outputs(
        &["catalog", "validate", "--compat", "opm=v1.57.0"],
        &testdata("catalogs/broken/stranded"),
    );
    assert_eq!(code, 1);
    assert!(
        with_rule(&stranded, "catalog/stranded")[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the check changed in v1.58.0"))
    );
    // opm 1.26 also loads the catalog as opm 1.26 does (catalog/opm-load).
    let (code, load) = json_outputs(
        &["catalog", "validate", "--compat", "opm=v1.26.5"],
        &testdata("catalogs/broken/opm-load"),
    );
    assert_eq!(code, 1);
    assert!(
        !with_rule(&load, "catalog/opm-load").is_empty(),
        "{load:#?}"
    );
}

/// The same real bundle against three targets. integrity-shield-operator 0.1.6 ships an
/// rbac.authorization.k8s.io/v1beta1 ClusterRole (removed in 1.22, before every OpenShift
/// target) and supports no AllNamespaces install: both OpenShift releases get the same
/// findings, OLM v1 adds its install-mode refusal and, fixing no Kubernetes version, holds the
/// removed API a warning.
#[test]
fn a_real_bundle_against_three_targets() {
    let Some(corpus) = shared::shared_corpus() else {
        shared::skip("corpus (validate_targets)");
        return;
    };
    let dir = corpus.join("bundles/integrity-shield-operator/0.1.6");
    if !dir.is_dir() {
        shared::skip("corpus bundle integrity-shield-operator/0.1.6");
        return;
    }
    let rules = |target: &str| -> Vec<(String, String)> {
        let (_, outputs) = json_outputs(&["bundle", "validate", "--target", target], &dir);
        let mut r: Vec<(String, String)> = outputs
            .iter()
            .map(|o| (o["rule"].to_string(), o["type"].to_string()))
            .collect();
        r.sort();
        r
    };
    let (old, new, v1) = (rules("ocp-4.12"), rules("ocp-4.20"), rules("olmv1"));
    assert_eq!(old, new);
    assert!(old.contains(&("\"object/deprecated-api\"".into(), "\"error\"".into())));
    let rule = |r: &str, t: &str| (format!("\"{r}\""), format!("\"{t}\""));
    // OLM v1 adds its install-mode refusal; it fixes no Kubernetes version, so the removed API
    // is a warning there (an error on both OpenShift releases, whose Kubernetes removed it).
    let added: Vec<&(String, String)> = v1.iter().filter(|r| !old.contains(r)).collect();
    assert_eq!(
        added,
        [
            &rule("object/deprecated-api", "warning"),
            &rule("olmv1/no-all-namespaces", "error")
        ]
    );
    let dropped: Vec<&(String, String)> = old.iter().filter(|r| !v1.contains(r)).collect();
    assert_eq!(dropped, [&rule("object/deprecated-api", "error")]);
    shared::cases("validate_targets real bundles", 1, 1);
}

/// The same real catalog against three targets: kube-green as community-operators-prod keeps
/// it for OpenShift 4.16, with its manifests (`olm.bundle.object`). For 4.16 nothing; for 4.17
/// the pipelines would ship it as `olm.csv.metadata` (catalog/metadata-form, one finding for
/// the package); OLM v1 warns on each webhook bundle that names no certificate provider.
#[test]
fn a_real_catalog_against_three_targets() {
    let probe = "packages/community-operators-prod/catalogs/v4.16/kube-green";
    let Some(root) = shared::shared_catalogs(probe) else {
        shared::skip("catalogs (validate_targets)");
        return;
    };
    let dir = root.join(probe);
    let rules = |target: &str| -> Vec<(String, String, Vec<String>)> {
        let (code, outputs) = json_outputs(&["catalog", "validate", "--target", target], &dir);
        assert_eq!(code, 0, "{target}: {outputs:#?}");
        let mut r: Vec<_> = outputs
            .iter()
            .map(|o| (o["rule"].to_string(), o["type"].to_string(), targets_of(o)))
            .collect();
        r.sort();
        r.dedup();
        r
    };
    assert_eq!(rules("ocp-4.16"), []);
    let form = rules("ocp-4.17");
    assert_eq!(
        form,
        [(
            "\"catalog/metadata-form\"".to_string(),
            "\"warning\"".to_string(),
            vec!["ocp-4.17".to_string()]
        )]
    );
    let v1 = rules("olmv1");
    assert!(
        !v1.is_empty()
            && v1
                .iter()
                .all(|(r, _, t)| r.starts_with("\"olmv1/") && t == &["olmv1"]),
        "{v1:#?}"
    );
    shared::cases("validate_targets real catalogs", 1, 1);
}
