//! `olmpack check`: the pipelines' checks on a crafted community checkout
//! (`testdata/check/community`, which passes), and one mutation per check that must fail (or
//! warn) under the pipeline's check id; the report forms (JSON fields, GitHub annotations, SARIF
//! 2.1.0 checked rule by rule against the published schema's requirements), exit codes and
//! config.yaml's ignore lists.

use crate::support::cmd::olmpack;
use crate::support::fixtures::testdata;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use serde_json::Value;
use std::fs;
use std::path::Path;

const OP: &str = "kvstore-operator";

fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&testdata("check/community"), dir.path());
    dir
}

fn csv(root: &Path, version: &str) -> std::path::PathBuf {
    root.join(format!(
        "operators/{OP}/{version}/manifests/{OP}.clusterserviceversion.yaml"
    ))
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(
        text.contains(from),
        "{} does not contain {from:?}",
        path.display()
    );
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// Runs the profile with JSON output: (exit code, findings).
fn run(root: &Path, profile: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let out = olmpack()
        .args(["check", "--profile", profile, "--repo"])
        .arg(root)
        .arg(OP)
        .args(["-o", "json"])
        .args(extra)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let findings: Vec<Value> = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, findings)
}

/// The findings of `check`, as (type, message).
fn of(findings: &[Value], check: &str) -> Vec<(String, String)> {
    findings
        .iter()
        .filter(|f| f["check"] == check)
        .map(|f| {
            (
                f["type"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Asserts that `check` reported a finding of `kind` whose message holds `needle`, with a file
/// (and the exit code that goes with an error).
fn expect(root: &Path, profile: &str, extra: &[&str], check: &str, kind: &str, needle: &str) {
    let (code, findings) = run(root, profile, extra);
    let hits: Vec<&Value> = findings
        .iter()
        .filter(|f| {
            f["check"] == check
                && f["type"] == kind
                && f["message"].as_str().unwrap().contains(needle)
        })
        .collect();
    assert!(
        !hits.is_empty(),
        "no {kind} of {check} containing {needle:?} in {findings:#?}"
    );
    assert!(hits.iter().all(|f| f["file"].is_string()), "{hits:#?}");
    if kind == "error" {
        assert_eq!(code, 1, "an error exits 1");
    }
}

#[test]
fn the_crafted_checkout_passes_with_the_fbc_suggestion_only() {
    let dir = checkout();
    let (code, findings) = run(dir.path(), "community", &[]);
    assert_eq!(code, 0, "{findings:#?}");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["check"], "check_using_fbc");
    assert_eq!(findings[0]["type"], "warning");
    for key in ["check", "type", "message", "file", "line"] {
        assert!(findings[0].get(key).is_some(), "{key} missing");
    }
    let (code, findings) = run(dir.path(), "isv", &[]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:#?}");
    let (code, findings) = run(dir.path(), "konflux-fbc", &[]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:#?}");
}

#[test]
fn operator_name_mismatch_fails_check_operator_name() {
    let dir = checkout();
    edit(
        &dir.path()
            .join(format!("operators/{OP}/1.2.0/metadata/annotations.yaml")),
        "bundle.package.v1: \"kvstore-operator\"",
        "bundle.package.v1: \"foo\"",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_operator_name",
        "error",
        "(foo) does not match the name defined in other bundles (kvstore-operator)",
    );
    let (_, findings) = run(dir.path(), "community", &[]);
    let f = findings
        .iter()
        .find(|f| f["check"] == "check_operator_name" && f["type"] == "error")
        .unwrap();
    assert_eq!(
        f["file"],
        format!("operators/{OP}/1.2.0/metadata/annotations.yaml")
    );
    assert_eq!(f["line"], 5, "the line of the package annotation");
}

#[test]
fn release_config_without_fbc_fails_both_release_config_checks() {
    let dir = checkout();
    fs::write(
        dir.path()
            .join(format!("operators/{OP}/1.2.0/release-config.yaml")),
        "foo: 1\n",
    )
    .unwrap();
    expect(
        dir.path(),
        "community",
        &[],
        "check_bundle_release_config",
        "error",
        "FBC is not enabled",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_validate_schema_bundle_release_config",
        "error",
        "'catalog_templates' is a required property",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_validate_schema_bundle_release_config",
        "error",
        "Additional properties are not allowed ('foo' was unexpected)",
    );
}

#[test]
fn a_network_policy_fails_check_network_policy_presence() {
    let dir = checkout();
    fs::write(
        dir.path().join(format!("operators/{OP}/1.2.0/manifests/deny.yaml")),
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\nspec: {}\n",
    )
    .unwrap();
    expect(
        dir.path(),
        "community",
        &[],
        "check_network_policy_presence",
        "error",
        "Bundle contains a NetworkPolicy in deny.yaml",
    );
}

/// The pipeline reads a manifest with PyYAML's `safe_load`, which fails on a file of two
/// documents, and reports the failure under this check (found on community-trivy-operator
/// 2.4.0's service file by running the reference).
#[test]
fn a_manifest_of_two_documents_fails_check_network_policy_presence() {
    let dir = checkout();
    fs::write(
        dir.path().join(format!("operators/{OP}/1.2.0/manifests/svc.yaml")),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n",
    )
    .unwrap();
    expect(
        dir.path(),
        "community",
        &[],
        "check_network_policy_presence",
        "error",
        "svc.yaml contains multiple yaml documents",
    );
}

#[test]
fn a_version_unlike_the_folder_fails_check_operator_version_directory_name() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "  version: 1.2.0\n",
        "  version: 1.2.1\n",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_operator_version_directory_name",
        "error",
        "Bundle directory name 'kvstore-operator/1.2.0' does not match the expected operator CSV version '1.2.1'",
    );
}

#[test]
fn replacing_a_missing_or_narrower_bundle_fails_check_replaces_availability() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "replaces: kvstore-operator.v1.1.0",
        "replaces: kvstore-operator.v1.0.0",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_replaces_availability",
        "error",
        "attempts to replace version '1.0.0' which does not exist",
    );
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "replaces: kvstore-operator.v1.1.0",
        "replaces: kvstore-operator.v1.2.0",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_replaces_availability",
        "error",
        "attempts to replace itself",
    );
    let dir = checkout();
    // 1.2.0 targets 4.16 and later; 1.1.0 only 4.16 (with catalogs v4.16 and v4.17 in the checkout).
    edit(
        &dir.path()
            .join(format!("operators/{OP}/1.1.0/metadata/annotations.yaml")),
        "\"v4.16\"",
        "\"=v4.16\"",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_replaces_availability",
        "error",
        "does not support the same OCP versions",
    );
    // A replaces without a dot: the pipeline's traceback (operator-pipelines #928), a message here.
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "replaces: kvstore-operator.v1.1.0",
        "replaces: kvstore-operator",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_replaces_availability",
        "error",
        "has invalid 'replaces' field",
    );
}

#[test]
fn ci_yaml_against_its_schema_fails_check_schema_operator_ci_config() {
    let dir = checkout();
    edit(
        &dir.path().join(format!("operators/{OP}/ci.yaml")),
        "reviewers:\n  - kvstore-maintainer\n",
        "reviewers: []\n",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_schema_operator_ci_config",
        "error",
        "[] should be non-empty",
    );
}

#[test]
fn two_templates_for_one_catalog_fail_check_catalog_usage_ci_config() {
    let dir = checkout();
    fs::write(
        dir.path().join(format!("operators/{OP}/ci.yaml")),
        "updateGraph: replaces-mode\nfbc:\n  enabled: false\n  catalog_mapping:\n    - template_name: a.yaml\n      type: olm.template.basic\n      catalog_names: [v4.16]\n    - template_name: b.yaml\n      type: olm.semver\n      catalog_names: [v4.16, v4.17]\n",
    )
    .unwrap();
    expect(
        dir.path(),
        "community",
        &[],
        "check_catalog_usage_ci_config",
        "error",
        "contains multiple templates '['a.yaml', 'b.yaml']' for the same catalog 'v4.16'",
    );
}

#[test]
fn a_bundle_image_from_elsewhere_fails_check_bundle_images_in_fbc() {
    let dir = checkout();
    edit(
        &dir.path().join(format!("catalogs/v4.16/{OP}/catalog.yaml")),
        "image: quay.io/community-operator-pipeline-prod/",
        "image: docker.io/someone/",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_bundle_images_in_fbc",
        "error",
        "Invalid bundle image(s) found in OperatorCatalog(v4.16/kvstore-operator): docker.io/someone/",
    );
}

#[test]
fn a_bundle_object_in_a_4_17_catalog_fails_check_olm_bundle_object_in_fbc() {
    let dir = checkout();
    edit(
        &dir.path().join(format!("catalogs/v4.17/{OP}/catalog.yaml")),
        "type: olm.csv.metadata\n    value:\n      displayName: KV Store Operator",
        "type: olm.bundle.object\n    value:\n      data: e30=",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_olm_bundle_object_in_fbc",
        "error",
        "OperatorCatalog(v4.17/kvstore-operator) catalog uses 'olm.bundle.object'",
    );
    expect(
        dir.path(),
        "konflux-fbc",
        &[],
        "check_fbc_bundle_metadata",
        "error",
        "OCP 4.17 catalogs need olm.csv.metadata",
    );
}

#[test]
fn required_fields_fail_or_warn_check_required_fields() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "  displayName: KV Store Operator\n",
        "  displayName: KV\n",
    );
    edit(
        &csv(dir.path(), "1.2.0"),
        "    categories: Database\n",
        "    categories: Databases\n",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_required_fields",
        "error",
        "CSV contains an invalid value for spec.displayName",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_required_fields",
        "warning",
        "CSV contains an invalid value for metadata.annotations.categories",
    );
}

#[test]
fn an_unreplaced_bundle_fails_check_dangling_bundles_unless_config_yaml_ignores_it() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "  replaces: kvstore-operator.v1.1.0\n",
        "",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_dangling_bundles",
        "error",
        "Channel fast has dangling bundles: {Bundle(kvstore-operator/1.1.0)}",
    );
    edit(
        &dir.path().join("config.yaml"),
        "- ^legacy-.*",
        "- ^kvstore",
    );
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path())
        .arg(OP)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("check_dangling_bundles"), "{text}");
    assert!(text.contains("2 ignored by config.yaml"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn min_kube_version_above_the_ocp_range_fails_check_api_version_constraints() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "minKubeVersion: 1.25.0",
        "minKubeVersion: 1.30.0",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_api_version_constraints",
        "error",
        "OCP version(s) 4.16 conflict with minKubeVersion=1.30.0",
    );
}

#[test]
fn two_csv_names_fail_check_operator_name_unique() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.1.0"),
        "name: kvstore-operator.v1.1.0",
        "name: kvstore.v1.1.0",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_operator_name_unique",
        "error",
        "Bundles use multiple operator names: {'kvstore', 'kvstore-operator'}",
    );
}

#[test]
fn update_graph_in_ci_yaml_is_checked_by_check_ci_upgrade_graph() {
    let dir = checkout();
    edit(
        &dir.path().join(format!("operators/{OP}/ci.yaml")),
        "updateGraph: replaces-mode\n",
        "",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_ci_upgrade_graph",
        "warning",
        "The 'updateGraph' option is missing in ci.yaml",
    );
    let dir = checkout();
    edit(
        &dir.path().join(format!("operators/{OP}/ci.yaml")),
        "replaces-mode",
        "newest-mode",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_ci_upgrade_graph",
        "error",
        "must be one of ['replaces-mode', 'semver-mode']",
    );
}

#[test]
fn a_replaces_cycle_fails_check_upgrade_graph_loop() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.1.0"),
        "  version: 1.1.0\n",
        "  version: 1.1.0\n  replaces: kvstore-operator.v1.2.0\n",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_upgrade_graph_loop",
        "error",
        "Upgrade graph loop detected: Bundle(kvstore-operator/",
    );
}

#[test]
fn the_operator_sdk_runs_are_olmpacks_rules_under_the_pipelines_ids() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "email: kvstore@example.com",
        "email: not-an-email",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_osdk_bundle_validate_operatorhub",
        "error",
        "[operatorhub/maintainers]",
    );
    expect(
        dir.path(),
        "community",
        &[],
        "check_osdk_bundle_validate_operator_framework",
        "error",
        "[operatorhub/maintainers]",
    );
    let (_, findings) = run(dir.path(), "community", &["--no-operator-sdk"]);
    assert!(of(&findings, "check_osdk_bundle_validate_operatorhub").is_empty());
}

#[test]
fn skip_range_without_replaces_warns_check_pruned_graph() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "  replaces: kvstore-operator.v1.1.0\n",
        "",
    );
    edit(
        &csv(dir.path(), "1.2.0"),
        "    capabilities: Seamless Upgrades\n",
        "    capabilities: Seamless Upgrades\n    olm.skipRange: '>=1.0.0 <1.2.0'\n",
    );
    expect(
        dir.path(),
        "isv",
        &[],
        "check_pruned_graph",
        "warning",
        "olm.skipRange annotation is set but replaces field is not set",
    );
}

#[test]
fn marketplace_workflows_are_checked_by_check_marketplace_annotation() {
    let dir = checkout();
    edit(
        &dir.path().join("config.yaml"),
        "organization: community-operators",
        "organization: redhat-marketplace",
    );
    expect(
        dir.path(),
        "isv",
        &[],
        "check_marketplace_annotation",
        "error",
        "Expected value is https://marketplace.redhat.com/en-us/operators/kvstore-operator/pricing?utm_source=openshift_console",
    );
}

#[test]
fn konflux_fbc_wants_digests_and_allowed_registries() {
    let dir = checkout();
    edit(
        &dir.path().join(format!("catalogs/v4.16/{OP}/catalog.yaml")),
        "kvstore-operator@sha256:1111111111111111111111111111111111111111111111111111111111111111",
        "kvstore-operator:v1.1.0",
    );
    expect(
        dir.path(),
        "konflux-fbc",
        &[],
        "check_fbc_image_digest",
        "error",
        "is not pinned by digest",
    );
    expect(
        dir.path(),
        "konflux-fbc",
        &["--allowed-registry", "registry.example.com/"],
        "check_fbc_allowed_registry",
        "error",
        "not from an allowed registry",
    );
}

#[test]
fn github_annotations_and_sarif_carry_file_and_line() {
    let dir = checkout();
    edit(
        &csv(dir.path(), "1.2.0"),
        "  version: 1.2.0\n",
        "  version: 1.2.1\n",
    );
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path())
        .args([OP, "1.2.0", "-o", "github", "--no-operator-sdk"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let csv_file = format!("operators/{OP}/1.2.0/manifests/{OP}.clusterserviceversion.yaml");
    assert!(
        text.lines().any(|l| l.starts_with(&format!("::error file={csv_file},line=27,title=check_operator_version_directory_name::Bundle directory name"))),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with(
            "::warning file=operators/kvstore-operator/ci.yaml,title=check_using_fbc::"
        )),
        "{text}"
    );

    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path())
        .args([OP, "-o", "sarif", "--no-operator-sdk"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    sarif_2_1_0(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "check_operator_version_directory_name")
        .unwrap();
    assert_eq!(r["level"], "error");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        csv_file
    );
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        27
    );
}

/// The requirements of the published SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that a log
/// of this shape touches, checked one by one: required properties, enums, types and minimums.
fn sarif_2_1_0(log: &Value) {
    let obj = |v: &Value, what: &str| assert!(v.is_object(), "{what} must be an object: {v}");
    obj(log, "sarifLog");
    assert_eq!(
        log["version"], "2.1.0",
        "sarifLog.version is the enum [\"2.1.0\"]"
    );
    assert!(
        log["$schema"]
            .as_str()
            .is_some_and(|s| s.starts_with("https://")),
        "$schema is a uri"
    );
    let runs = log["runs"]
        .as_array()
        .expect("sarifLog.runs is required, an array");
    assert!(!runs.is_empty());
    for run in runs {
        let driver = &run["tool"]["driver"];
        obj(driver, "run.tool.driver (required)");
        assert!(driver["name"].is_string(), "toolComponent.name is required");
        let rules = driver["rules"].as_array().expect("rules is an array");
        let mut ids = std::collections::BTreeSet::new();
        for rule in rules {
            assert!(rule["id"].is_string(), "reportingDescriptor.id is required");
            assert!(
                ids.insert(rule["id"].as_str().unwrap()),
                "rules are uniqueItems"
            );
            if let Some(help) = rule.get("help") {
                assert!(
                    help["text"].is_string(),
                    "multiformatMessageString.text is required"
                );
            }
        }
        for result in run["results"].as_array().expect("results is an array") {
            assert!(
                result["message"]["text"].is_string(),
                "result.message is required, with text"
            );
            assert!(
                ["none", "note", "warning", "error"].contains(&result["level"].as_str().unwrap()),
                "level enum"
            );
            let index = result["ruleIndex"].as_i64().expect("ruleIndex");
            assert!(
                index >= -1 && (index as usize) < rules.len(),
                "ruleIndex minimum -1, and points at a rule"
            );
            assert_eq!(rules[index as usize]["id"], result["ruleId"]);
            for loc in result["locations"].as_array().into_iter().flatten() {
                let physical = &loc["physicalLocation"];
                obj(physical, "location.physicalLocation");
                assert!(
                    physical["artifactLocation"]["uri"].is_string(),
                    "artifactLocation.uri is a uri-reference"
                );
                assert!(
                    !physical["artifactLocation"]["uri"]
                        .as_str()
                        .unwrap()
                        .starts_with('/'),
                    "relative to %SRCROOT%"
                );
                if let Some(region) = physical.get("region") {
                    assert!(
                        region["startLine"].as_i64().unwrap() >= 1,
                        "region.startLine minimum 1"
                    );
                }
            }
        }
    }
}

#[test]
fn usage_errors_exit_2_and_name_what_is_missing() {
    let dir = checkout();
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path())
        .arg("nope")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("operator nope not found"));
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path())
        .args([OP, "9.9.9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("versions: 1.1.0, 1.2.0"));
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path().join("operators"))
        .arg(OP)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an operator repository"));
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(dir.path())
        .args([OP, "--catalogs", "v4.16"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = olmpack()
        .args(["check", "--profile", "community", "--all", "--repo"])
        .arg(dir.path())
        .succeeds();
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 operators: community profile passed"));
}

/// Runs `check` and returns (exit code, stdout, stderr).
fn raw(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = olmpack()
        .args(["check", "--profile", "community", "--repo"])
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn links_out_of_the_checkout_are_refused_and_nothing_of_the_host_is_printed() {
    let dir = checkout();
    let root = dir.path();
    let secret = tempfile::tempdir().unwrap();
    fs::write(secret.path().join("ci.yaml"), "host-secret: 42\n").unwrap();
    // The operator's ci.yaml is a link to a file of the machine.
    let ci = root.join(format!("operators/{OP}/ci.yaml"));
    fs::remove_file(&ci).unwrap();
    std::os::unix::fs::symlink(secret.path().join("ci.yaml"), &ci).unwrap();
    let (code, stdout, stderr) = raw(root, &[OP, "-o", "json"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("refusing to read a checkout that links out of itself"),
        "{stderr}"
    );
    assert!(!stdout.contains("host-secret") && !stderr.contains("host-secret"));
    // `..` is no operator name.
    let (code, _, stderr) = raw(root, &[".."]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("operator .. not found"), "{stderr}");
}

#[test]
fn a_missing_catalogs_entry_and_a_broken_config_yaml_exit_2_and_a_broken_catalog_fails() {
    let dir = checkout();
    let root = dir.path();
    let (code, _, stderr) = raw(root, &[OP, "--catalogs", "v4.99/kvstore-operator"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("v4.99/kvstore-operator") && stderr.contains("holds no catalog"),
        "{stderr}"
    );

    // A catalog that does not parse fails the check that reads it, at its file.
    let catalog = fs::read_dir(root.join("catalogs"))
        .unwrap()
        .map(|e| e.unwrap().path().join(OP))
        .find(|p| p.is_dir())
        .unwrap();
    let file = fs::read_dir(&catalog)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fs::write(&file, "schema: olm.package\nname: [unclosed\n").unwrap();
    let (code, findings) = run(root, "community", &[]);
    assert_eq!(code, 1);
    let found = of(&findings, "check_bundle_images_in_fbc");
    assert!(
        found
            .iter()
            .any(|(k, m)| k == "error" && m.contains("cannot be read")),
        "{findings:?}"
    );

    // An ignore pattern that is no regular expression is refused at its line.
    fs::write(
        root.join("config.yaml"),
        "organization: community-operators\ntests:\n  - name: check_dangling_bundles\n    ignore_operators:\n      - \"(?<=x)kvstore\"\n",
    )
    .unwrap();
    let (code, _, stderr) = raw(root, &[OP]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("config.yaml:5:"), "{stderr}");
}

/// A released target index for `--target-index`: a copy of the checkout's own `catalogs/`
/// (one FBC folder per OCP version), so it starts equal to the fragments.
fn target_index(root: &Path) -> tempfile::TempDir {
    let index = tempfile::tempdir().unwrap();
    copy_dir(&root.join("catalogs"), index.path());
    index
}

/// The pruning findings of a konflux-fbc run against `index`: (exit code, (file, line, message)).
fn pruning(root: &Path, index: &Path) -> (i32, Vec<(String, u64, String)>) {
    let index = index.to_str().unwrap();
    let (code, findings) = run(root, "konflux-fbc", &["--target-index", index]);
    let found = findings
        .iter()
        .filter(|f| f["check"] == "fbc-target-index-pruning-check")
        .map(|f| {
            assert_eq!(f["type"], "error", "{f}");
            (
                f["file"].as_str().unwrap_or("").to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (code, found)
}

/// A fragment whose package is named unlike its folder is still compared with the index (the
/// shared read keeps only the folder names; the check reads such a package on its own).
#[test]
fn konflux_fbc_target_index_pruning_check_reads_a_package_named_unlike_its_folder() {
    let dir = checkout();
    let root = dir.path();
    let index = target_index(root);
    let released = index.path().join(format!("v4.16/{OP}/catalog.yaml"));
    let frag = root.join(format!("catalogs/v4.16/{OP}/catalog.yaml"));
    let renamed = fs::read_to_string(&frag)
        .unwrap()
        .replace(&format!("package: {OP}\n"), "package: renamed\n")
        .replace(&format!("name: {OP}\n"), "name: renamed\n");
    assert!(renamed.contains("package: renamed"), "{renamed}");
    fs::write(&frag, &renamed).unwrap();
    fs::write(
        &released,
        format!(
            "{renamed}---\nschema: olm.channel\npackage: renamed\nname: fast\nentries:\n  - name: renamed.v1.0.0\n"
        ),
    )
    .unwrap();
    let (_, found) = pruning(root, index.path());
    assert!(
        found
            .iter()
            .any(|(_, _, m)| m == "FBC fragment prunes entire renamed.fast channel."),
        "{found:?}"
    );
}

/// Konflux's fbc-target-index-pruning-check, the task's branches one by one: a fragment equal
/// to the index passes; a released channel the fragment drops, and a released entry a kept
/// channel drops, fail with the task's messages; the same in a dev-preview, pre-ga or
/// candidate channel is allowed; a package the index does not have yet passes.
#[test]
fn konflux_fbc_target_index_pruning_check_follows_the_task() {
    let dir = checkout();
    let root = dir.path();
    let index = target_index(root);
    let released = index.path().join(format!("v4.16/{OP}/catalog.yaml"));
    let fragment = format!("catalogs/v4.16/{OP}/catalog.yaml");

    let (code, found) = pruning(root, index.path());
    assert_eq!((code, found.len()), (0, 0), "{found:?}");

    // The index has released channels the fragment does not: fast (fails), candidate,
    // stable-dev-preview and pre-ga-2 (allowed).
    let mut text = fs::read_to_string(&released).unwrap();
    for channel in ["fast", "candidate", "stable-dev-preview", "pre-ga-2"] {
        text.push_str(&format!(
            "---\nschema: olm.channel\npackage: {OP}\nname: {channel}\nentries:\n  - name: {OP}.v1.1.0\n"
        ));
    }
    fs::write(&released, &text).unwrap();
    let (code, found) = pruning(root, index.path());
    assert_eq!(code, 1);
    assert_eq!(
        found,
        vec![(
            fragment.clone(),
            2,
            format!("FBC fragment prunes entire {OP}.fast channel.")
        )]
    );

    // A kept channel that drops a released entry; in a candidate channel it is allowed.
    fs::write(&released, fs::read_to_string(root.join(&fragment)).unwrap()).unwrap();
    let frag = root.join(&fragment);
    edit(
        &frag,
        "  - name: kvstore-operator.v1.1.0\n  - name: kvstore-operator.v1.2.0\n    replaces: kvstore-operator.v1.1.0\n",
        "  - name: kvstore-operator.v1.2.0\n",
    );
    let (code, found) = pruning(root, index.path());
    assert_eq!(code, 1);
    assert_eq!(
        found,
        vec![(
            fragment.clone(),
            6,
            format!("FBC fragment prunes {OP}.v1.1.0 from {OP}.stable channel.")
        )]
    );
    for f in [&frag, &released] {
        edit(f, "name: stable\n", "name: candidate-v1\n");
    }
    let (code, found) = pruning(root, index.path());
    assert_eq!((code, found.len()), (0, 0), "{found:?}");

    // A package the index does not have: nothing released, nothing pruned.
    fs::write(
        &released,
        "---\nschema: olm.package\nname: other\n---\nschema: olm.channel\npackage: other\nname: stable\nentries:\n  - name: other.v1.0.0\n",
    )
    .unwrap();
    let (code, found) = pruning(root, index.path());
    assert_eq!((code, found.len()), (0, 0), "{found:?}");
}

/// Where the task's `grep -Fw` over space-joined names mistakes a pruning (a removed `stable`
/// channel while `stable-v2` stays: taken for kept, its entries reported instead) or misses it
/// (a removed `….v1.1` entry while `….v1.1.0` stays), names are compared whole here.
#[test]
fn konflux_fbc_pruning_compares_whole_names() {
    let dir = checkout();
    let root = dir.path();
    let index = target_index(root);
    let frag = root.join(format!("catalogs/v4.16/{OP}/catalog.yaml"));
    edit(&frag, "name: stable\n", "name: stable-v2\n");
    let (code, found) = pruning(root, index.path());
    assert_eq!(code, 1);
    let messages: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
    assert_eq!(
        messages,
        vec![format!("FBC fragment prunes entire {OP}.stable channel.")]
    );

    edit(&frag, "name: stable-v2\n", "name: stable\n");
    let released = index.path().join(format!("v4.16/{OP}/catalog.yaml"));
    edit(
        &released,
        "  - name: kvstore-operator.v1.1.0\n",
        "  - name: kvstore-operator.v1.1\n  - name: kvstore-operator.v1.1.0\n",
    );
    let (_, found) = pruning(root, index.path());
    let messages: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
    assert_eq!(
        messages,
        vec![format!(
            "FBC fragment prunes {OP}.v1.1 from {OP}.stable channel."
        )]
    );
}

/// A target index without the fragment's OCP version fails the check (the task's "Unable to
/// render the fragment target index"), naming the folder; a --target-index that is no folder
/// stops the run with exit 2; without --target-index the check is not run.
#[test]
fn konflux_fbc_pruning_needs_the_index_of_each_version() {
    let dir = checkout();
    let root = dir.path();
    let index = target_index(root);
    fs::remove_dir_all(index.path().join("v4.17")).unwrap();
    let (code, found) = pruning(root, index.path());
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, format!("catalogs/v4.17/{OP}/catalog.yaml"));
    assert!(
        found[0]
            .2
            .contains("Unable to render the fragment target index")
    );
    assert!(found[0].2.contains("v4.17"), "{found:?}");

    let missing = index.path().join("nope");
    let out = olmpack()
        .args(["check", "--profile", "konflux-fbc", "--repo"])
        .arg(root)
        .arg(OP)
        .arg("--target-index")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--target-index {}", missing.display())),
        "{stderr}"
    );
    let (code, findings) = run(root, "konflux-fbc", &[]);
    assert_eq!((code, findings.len()), (0, 0), "{findings:#?}");
    let index = index.path().to_str().unwrap();
    let (code, _, stderr) = raw(root, &[OP, "--target-index", index]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("konflux-fbc only"), "{stderr}");
}
