//! operator-pipelines' own test cases for its static checks (`tests/static_tests/`), ported:
//! the same fixtures (`bundle_files`: an annotations.yaml and a CSV per bundle, merged with the
//! case's changes) written into a temporary checkout, run through `pipeline::run`, and the same
//! expected (verdict, message) sets. Where a case mocks Pyxis, the checkout's `catalogs/` folders
//! answer instead, so OCP versions print as Pyxis prints them (`4.16`, not the mock's `v4.16`).

use olmpack::pipeline::{self, Profile, Request};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

type Files = Vec<(String, Value)>;

/// Expected (verdict, message) pairs of one case.
type Expected = Vec<(&'static str, &'static str)>;

fn merge(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// The pipeline tests' `bundle_files(operator, version, annotations, csv)`.
fn bundle_files(op: &str, version: &str, annotations: Value, csv: Value) -> Files {
    let path = format!("operators/{op}/{version}");
    let mut ann = json!({
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": op,
        "operators.operatorframework.io.bundle.channel.default.v1": "beta",
        "operators.operatorframework.io.bundle.channels.v1": "beta",
    });
    merge(&mut ann, &annotations);
    let mut base =
        json!({"metadata": {"name": format!("{op}.v{version}")}, "spec": {"version": version}});
    merge(&mut base, &csv);
    vec![
        (
            format!("{path}/metadata/annotations.yaml"),
            json!({"annotations": ann}),
        ),
        (
            format!("{path}/manifests/{op}.clusterserviceversion.yaml"),
            base,
        ),
    ]
}

fn b(op: &str, version: &str) -> Files {
    bundle_files(op, version, json!({}), json!({}))
}

/// Writes the files (JSON is YAML; a string value is written as the file's text).
fn create(root: &Path, sets: &[Files]) {
    for set in sets {
        for (rel, content) in set {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let text = match content {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            std::fs::write(path, text).unwrap();
        }
    }
}

/// (verdict, message) of `check` for `op` at `version`.
fn results(
    root: &Path,
    profile: Profile,
    op: &str,
    version: &str,
    check: &str,
) -> BTreeSet<(&'static str, String)> {
    let request = Request {
        root: root.to_path_buf(),
        profile,
        operator: Some(op.to_string()),
        version: Some(version.to_string()),
        catalogs: Some(Vec::new()),
        osdk: false,
        allowed_registries: Vec::new(),
        target_index: None,
    };
    let outcome = pipeline::run(&request).unwrap();
    outcome
        .findings
        .into_iter()
        .filter(|f| f.check == check)
        .map(|f| (f.verdict.as_str(), f.message))
        .collect()
}

fn set(items: &[(&'static str, &str)]) -> BTreeSet<(&'static str, String)> {
    items.iter().map(|(v, m)| (*v, m.to_string())).collect()
}

const E: &str = "error";
const W: &str = "warning";
const PKG: &str = "operators.operatorframework.io.bundle.package.v1";

#[test]
fn test_operator_name() {
    let foo = json!({PKG: "foo"});
    let csv_foo = |v: &str| json!({"metadata": {"name": format!("foo.v{v}")}});
    let cases: Vec<(&str, Vec<Files>, Expected)> = vec![
        ("Names ok", vec![b("hello", "0.0.3")], vec![]),
        (
            "Wrong annotations.yaml name",
            vec![bundle_files("hello", "0.0.3", foo.clone(), json!({}))],
            vec![
                (
                    E,
                    "Operator name from annotations.yaml (foo) does not match the operator's directory name (hello)",
                ),
                (
                    E,
                    "Operator name from annotations.yaml (foo) does not match the name defined in the CSV (hello)",
                ),
            ],
        ),
        (
            "Empty annotations.yaml",
            vec![
                b("hello", "0.0.3"),
                vec![(
                    "operators/hello/0.0.3/metadata/annotations.yaml".into(),
                    json!({"annotations": {}}),
                )],
            ],
            vec![(
                E,
                "Bundle does not define the operator name in annotations.yaml",
            )],
        ),
        (
            "Wrong annotations.yaml name, inconsistent bundles",
            vec![
                b("hello", "0.0.1"),
                bundle_files("hello", "0.0.2", foo.clone(), json!({})),
                bundle_files("hello", "0.0.3", foo.clone(), json!({})),
            ],
            vec![
                (
                    W,
                    "Operator name from annotations.yaml (foo) does not match the operator's directory name (hello)",
                ),
                (
                    W,
                    "Operator name from annotations.yaml (foo) does not match the name defined in the CSV (hello)",
                ),
                (
                    W,
                    "Operator name from annotations.yaml is not consistent across bundles: ['foo', 'hello']",
                ),
            ],
        ),
        (
            "Wrong CSV name, inconsistent bundles",
            vec![
                b("hello", "0.0.1"),
                bundle_files("hello", "0.0.2", json!({}), csv_foo("0.0.2")),
                bundle_files("hello", "0.0.3", json!({}), csv_foo("0.0.3")),
            ],
            vec![
                (
                    W,
                    "Operator name from annotations.yaml (hello) does not match the name defined in the CSV (foo)",
                ),
                (
                    W,
                    "Operator name from the CSV is not consistent across bundles: ['foo', 'hello']",
                ),
            ],
        ),
        (
            "Wrong annotations.yaml name, consistent bundles",
            vec![
                b("hello", "0.0.1"),
                b("hello", "0.0.2"),
                bundle_files("hello", "0.0.3", foo.clone(), json!({})),
            ],
            vec![
                (
                    W,
                    "Operator name from annotations.yaml (foo) does not match the operator's directory name (hello)",
                ),
                (
                    W,
                    "Operator name from annotations.yaml (foo) does not match the name defined in the CSV (hello)",
                ),
                (
                    E,
                    "Operator name from annotations.yaml (foo) does not match the name defined in other bundles (hello)",
                ),
            ],
        ),
        (
            "Wrong CSV name, consistent bundles",
            vec![
                b("hello", "0.0.1"),
                b("hello", "0.0.2"),
                bundle_files("hello", "0.0.3", json!({}), csv_foo("0.0.3")),
            ],
            vec![
                (
                    W,
                    "Operator name from annotations.yaml (hello) does not match the name defined in the CSV (foo)",
                ),
                (
                    E,
                    "Operator name from the CSV (foo) does not match the name defined in other bundles (hello)",
                ),
            ],
        ),
        (
            "Wrong CSV name in all bundles",
            vec![
                bundle_files("hello", "0.0.1", json!({}), csv_foo("0.0.1")),
                bundle_files("hello", "0.0.2", json!({}), csv_foo("0.0.2")),
                bundle_files("hello", "0.0.3", json!({}), csv_foo("0.0.3")),
            ],
            vec![(
                W,
                "Operator name from annotations.yaml (hello) does not match the name defined in the CSV (foo)",
            )],
        ),
        (
            "Invalid CSV name in old bundle",
            vec![
                bundle_files(
                    "hello",
                    "0.0.1",
                    json!({}),
                    json!({"metadata": {"name": "hello"}}),
                ),
                b("hello", "0.0.2"),
                b("hello", "0.0.3"),
            ],
            vec![],
        ),
        (
            "Invalid CSV name in new bundle",
            vec![
                b("hello", "0.0.1"),
                b("hello", "0.0.2"),
                bundle_files(
                    "hello",
                    "0.0.3",
                    json!({}),
                    json!({"metadata": {"name": "hello"}}),
                ),
            ],
            vec![(E, "Invalid operator name in CSV for Bundle(hello/0.0.3)")],
        ),
        (
            "Invalid annotations.yaml name in old bundle",
            vec![
                b("hello", "0.0.1"),
                vec![(
                    "operators/hello/0.0.1/metadata/annotations.yaml".into(),
                    json!(":invalid"),
                )],
                b("hello", "0.0.2"),
                b("hello", "0.0.3"),
            ],
            vec![],
        ),
        (
            "Invalid annotations.yaml name in new bundle",
            vec![
                b("hello", "0.0.1"),
                b("hello", "0.0.2"),
                b("hello", "0.0.3"),
                vec![(
                    "operators/hello/0.0.3/metadata/annotations.yaml".into(),
                    json!(":invalid"),
                )],
            ],
            vec![(
                E,
                "Invalid operator name in annotations.yaml for Bundle(hello/0.0.3)",
            )],
        ),
    ];
    for (id, files, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        create(dir.path(), &files);
        assert_eq!(
            results(
                dir.path(),
                Profile::Community,
                "hello",
                "0.0.3",
                "check_operator_name"
            ),
            set(&expected),
            "{id}"
        );
    }
}

#[test]
fn test_check_replaces_availability() {
    let with_catalogs = |root: &Path| {
        for v in ["v4.15", "v4.16"] {
            std::fs::create_dir_all(root.join("catalogs").join(v)).unwrap();
        }
    };
    let cases: Vec<(&str, Value, Value, Option<&str>, Expected)> = vec![
        ("No replaces", Value::Null, Value::Null, None, vec![]),
        (
            "No annotations",
            Value::Null,
            Value::Null,
            Some("hello.v0.0.1"),
            vec![],
        ),
        (
            "Same annotations",
            json!("v4.10"),
            json!("v4.10"),
            Some("hello.v0.0.1"),
            vec![],
        ),
        (
            "Different annotation, versions match",
            json!("v4.15"),
            json!("v4.15,v4.16"),
            Some("hello.v0.0.1"),
            vec![],
        ),
        (
            "Different annotation, different version",
            json!("v4.15"),
            json!("v4.16"),
            Some("hello.v0.0.1"),
            vec![(
                E,
                "Replaces bundle Bundle(hello/0.0.1) ['4.16'] does not support the same OCP versions as bundle Bundle(hello/0.0.2) ['4.15', '4.16']. In order to fix this issue, align the OCP version range to match the range of the replaced bundle. This can be done by setting the `com.redhat.openshift.versions` annotation in the `metadata/annotations.yaml` file.\n`Bundle(hello/0.0.2)` - `v4.15`\n`Bundle(hello/0.0.1)` - `v4.16`",
            )],
        ),
        (
            "Nonexistent replaces version",
            Value::Null,
            Value::Null,
            Some("hello.v0.0.5"),
            vec![(
                E,
                "Bundle(hello/0.0.2) attempts to replace version '0.0.5' which does not exist in the submitted PR branch. Available versions: ['0.0.1', '0.0.2']. If you are submitting multiple versions in sequence, make sure your fork is up to date with origin (rebased) before each submission to include all previously merged versions.",
            )],
        ),
        (
            "Bundle attempts to replace itself",
            Value::Null,
            Value::Null,
            Some("hello.v0.0.2"),
            vec![(
                E,
                "Bundle(hello/0.0.2) attempts to replace itself. Please set 'spec.replaces' field to a different version in the CSV.",
            )],
        ),
    ];
    for (id, mine, theirs, replaces, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        with_catalogs(dir.path());
        let csv = replaces
            .map(|r| json!({"spec": {"replaces": r}}))
            .unwrap_or(json!({}));
        create(
            dir.path(),
            &[
                bundle_files(
                    "hello",
                    "0.0.1",
                    json!({"com.redhat.openshift.versions": theirs}),
                    json!({}),
                ),
                bundle_files(
                    "hello",
                    "0.0.2",
                    json!({"com.redhat.openshift.versions": mine}),
                    csv,
                ),
            ],
        );
        assert_eq!(
            results(
                dir.path(),
                Profile::Community,
                "hello",
                "0.0.2",
                "check_replaces_availability"
            ),
            set(&expected),
            "{id}"
        );
    }
}

#[test]
fn test_check_api_version_constraints() {
    let cases: Vec<(&str, Value, Value, Expected)> = vec![
        (
            "No minKubeVersion, no versions",
            json!({}),
            json!({}),
            vec![],
        ),
        (
            "No minKubeVersion, valid versions",
            json!({}),
            json!({"com.redhat.openshift.versions": "v4.11"}),
            vec![],
        ),
        (
            "= valid",
            json!({"spec": {"minKubeVersion": "1.24.0"}}),
            json!({"com.redhat.openshift.versions": "=v4.11"}),
            vec![],
        ),
        (
            "= unknown",
            json!({"spec": {"minKubeVersion": "1.0.0"}}),
            json!({"com.redhat.openshift.versions": "=v3.1"}),
            vec![],
        ),
        (
            "Invalid minKubeVersion",
            json!({"spec": {"minKubeVersion": "foo"}}),
            json!({"com.redhat.openshift.versions": "v4.11"}),
            vec![(E, "Invalid minKubeVersion: foo is not valid SemVer string")],
        ),
        (
            "consistent",
            json!({"spec": {"minKubeVersion": "1.24.0"}}),
            json!({"com.redhat.openshift.versions": "v4.11"}),
            vec![],
        ),
        (
            "consistent -",
            json!({"spec": {"minKubeVersion": "1.24.0"}}),
            json!({"com.redhat.openshift.versions": "v4.11-v4.13"}),
            vec![],
        ),
        (
            "consistent ,",
            json!({"spec": {"minKubeVersion": "1.16.0"}}),
            json!({"com.redhat.openshift.versions": "v4.5,v4.6"}),
            vec![],
        ),
        (
            "unsupported ,",
            json!({"spec": {"minKubeVersion": "1.16.0"}}),
            json!({"com.redhat.openshift.versions": "v4.5,v4.7"}),
            vec![(
                W,
                "Comma separated list of versions in com.redhat.openshift.versions is only supported for v4.5 and v4.6",
            )],
        ),
        (
            "no versions",
            json!({"spec": {"minKubeVersion": "1.24.0"}}),
            json!({}),
            vec![(
                E,
                "minKubeVersion is set to 1.24.0 but com.redhat.openshift.versions is not set",
            )],
        ),
        (
            "inconsistent",
            json!({"spec": {"minKubeVersion": "1.24.0"}}),
            json!({"com.redhat.openshift.versions": "v4.10"}),
            vec![(E, "OCP version(s) 4.10 conflict with minKubeVersion=1.24.0")],
        ),
        (
            "invalid versions",
            json!({"spec": {"minKubeVersion": "1.24.0"}}),
            json!({"com.redhat.openshift.versions": "foo"}),
            vec![(
                E,
                "Invalid com.redhat.openshift.versions: foo is not valid SemVer string",
            )],
        ),
    ];
    for (id, csv, ann, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        create(dir.path(), &[bundle_files("hello", "0.0.1", ann, csv)]);
        assert_eq!(
            results(
                dir.path(),
                Profile::Community,
                "hello",
                "0.0.1",
                "check_api_version_constraints"
            ),
            set(&expected),
            "{id}"
        );
    }
}

fn ci(mode: &str) -> Files {
    vec![(
        "operators/hello/ci.yaml".into(),
        json!({"updateGraph": mode}),
    )]
}

#[test]
fn test_check_dangling_bundles() {
    let r = |v: &str| json!({"spec": {"replaces": v}});
    let dir = tempfile::tempdir().unwrap();
    let chain = [
        b("hello", "0.0.1"),
        bundle_files("hello", "0.0.2", json!({}), r("hello.v0.0.1")),
        bundle_files("hello", "0.0.3", json!({}), r("hello.v0.0.2")),
    ];
    create(dir.path(), &chain);
    create(dir.path(), &[ci("replaces-mode")]);
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.3",
            "check_dangling_bundles"
        ),
        set(&[])
    );
    create(dir.path(), &[ci("unknown-mode")]);
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.3",
            "check_dangling_bundles"
        ),
        set(&[(
            E,
            "Operator(hello): unsupported updateGraph value: unknown-mode"
        )])
    );
    create(
        dir.path(),
        &[
            ci("replaces-mode"),
            bundle_files("hello", "0.0.3", json!({}), r("hello.v0.0.1")),
        ],
    );
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.3",
            "check_dangling_bundles"
        ),
        set(&[(
            E,
            "Channel beta has dangling bundles: {Bundle(hello/0.0.2)}"
        )])
    );
    let dir = tempfile::tempdir().unwrap();
    create(
        dir.path(),
        &[
            bundle_files("malformed", "0.0.1", json!({}), r("")),
            vec![(
                "operators/malformed/ci.yaml".into(),
                json!({"updateGraph": "replaces-mode"}),
            )],
        ],
    );
    let found = results(
        dir.path(),
        Profile::Community,
        "malformed",
        "0.0.1",
        "check_dangling_bundles",
    );
    assert!(
        found.len() == 1
            && found.iter().all(|(v, m)| *v == E
                && m.contains("Bundle(malformed/0.0.1) has invalid 'replaces' field:")),
        "{found:?}"
    );
}

#[test]
fn test_check_upgrade_graph_loop() {
    let r = |v: &str| json!({"spec": {"replaces": v}});
    let dir = tempfile::tempdir().unwrap();
    create(
        dir.path(),
        &[
            b("hello", "0.0.1"),
            bundle_files("hello", "0.0.2", json!({}), r("hello.v0.0.1")),
            ci("replaces-mode"),
        ],
    );
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.1",
            "check_upgrade_graph_loop"
        ),
        set(&[])
    );
    create(dir.path(), &[ci("unknown-mode")]);
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.1",
            "check_upgrade_graph_loop"
        ),
        set(&[(
            E,
            "Operator(hello): unsupported updateGraph value: unknown-mode"
        )])
    );
    create(
        dir.path(),
        &[
            ci("replaces-mode"),
            bundle_files("hello", "0.0.1", json!({}), r("hello.v0.0.2")),
        ],
    );
    let found = results(
        dir.path(),
        Profile::Community,
        "hello",
        "0.0.1",
        "check_upgrade_graph_loop",
    );
    assert!(
        found.len() == 1
            && found.iter().all(|(v, m)| *v == E
                && m.contains("Upgrade graph loop detected:")
                && m.contains("Bundle(hello/0.0.1)")
                && m.contains("Bundle(hello/0.0.2)")),
        "{found:?}"
    );
}

#[test]
fn test_check_ci_upgrade_graph() {
    let cases: Vec<(Value, Vec<(&'static str, &str)>)> = vec![
        (
            json!({}),
            vec![(
                W,
                "The 'updateGraph' option is missing in ci.yaml. The default upgrade graph 'replaces-mode' will be used.",
            )],
        ),
        (json!({"updateGraph": "replaces-mode"}), vec![]),
        (json!({"updateGraph": "semver-mode"}), vec![]),
        (
            json!({"updateGraph": "unknown-mode"}),
            vec![(
                E,
                "The 'updateGraph' option in ci.yaml must be one of ['replaces-mode', 'semver-mode']",
            )],
        ),
    ];
    for (config, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        create(
            dir.path(),
            &[
                b("hello", "0.0.1"),
                vec![("operators/hello/ci.yaml".into(), config.clone())],
            ],
        );
        assert_eq!(
            results(
                dir.path(),
                Profile::Community,
                "hello",
                "0.0.1",
                "check_ci_upgrade_graph"
            ),
            set(&expected),
            "{config}"
        );
    }
}

#[test]
fn test_check_operator_name_unique() {
    let dir = tempfile::tempdir().unwrap();
    create(dir.path(), &[b("hello", "0.0.1"), b("hello", "0.0.2")]);
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.2",
            "check_operator_name_unique"
        ),
        set(&[])
    );
    create(
        dir.path(),
        &[bundle_files(
            "hello",
            "0.0.2",
            json!({}),
            json!({"metadata": {"name": "foo.v0.0.2"}}),
        )],
    );
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.2",
            "check_operator_name_unique"
        ),
        set(&[(E, "Bundles use multiple operator names: {'foo', 'hello'}")])
    );
}

#[test]
fn test_check_schema_operator_ci_config() {
    let prefix =
        "Operator's 'ci.yaml' contains invalid data which does not comply with the schema: ";
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"fbc": "hello"}),
            vec!["'hello' is not of type 'object'".into()],
        ),
        (
            json!({"fbc": {"enabled": true, "catalog_mapping": "hello"}}),
            vec!["'hello' is not of type 'array'".into()],
        ),
        (
            json!({"fbc": {"enabled": true, "catalog_mapping": [{"hello": ""}]}}),
            vec![
                "'template_name' is a required property".into(),
                "'type' is a required property".into(),
                "'catalog_names' is a required property".into(),
            ],
        ),
        (
            json!({"updateGraph": "replaces-mode", "reviewers": ["a"], "fbc": {"enabled": true}}),
            vec![],
        ),
    ];
    for (config, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        create(
            dir.path(),
            &[
                b("hello", "0.0.1"),
                vec![("operators/hello/ci.yaml".into(), config.clone())],
            ],
        );
        let want: BTreeSet<(&'static str, String)> = expected
            .iter()
            .map(|m| (E, format!("{prefix}{m}")))
            .collect();
        assert_eq!(
            results(
                dir.path(),
                Profile::Community,
                "hello",
                "0.0.1",
                "check_schema_operator_ci_config"
            ),
            want,
            "{config}"
        );
    }
}

#[test]
fn test_using_fbc() {
    let first = "[File Based Catalog (FBC)](https://github.com/redhat-openshift-ecosystem/community-operators-prod/discussions/5031#discussion-7097441) is a new way to manage operator metadata. This operator does not use FBC and it is recommended for new operators to [start directly with FBC](https://redhat-openshift-ecosystem.github.io/operator-pipelines/users/fbc_workflow/).";
    let dir = tempfile::tempdir().unwrap();
    create(dir.path(), &[b("hello", "0.0.1")]);
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.1",
            "check_using_fbc"
        ),
        set(&[(W, first)])
    );
    create(
        dir.path(),
        &[vec![(
            "operators/hello/ci.yaml".into(),
            json!({"fbc": {"enabled": true}}),
        )]],
    );
    assert_eq!(
        results(
            dir.path(),
            Profile::Community,
            "hello",
            "0.0.1",
            "check_using_fbc"
        ),
        set(&[])
    );
}

#[test]
fn test_check_pruned_graph() {
    let dir = tempfile::tempdir().unwrap();
    let skip = json!({"metadata": {"annotations": {"olm.skipRange": ">=0.0.1 <0.0.2"}}});
    create(
        dir.path(),
        &[
            b("hello", "0.0.1"),
            bundle_files("hello", "0.0.2", json!({}), skip.clone()),
        ],
    );
    let found = results(
        dir.path(),
        Profile::Isv,
        "hello",
        "0.0.2",
        "check_pruned_graph",
    );
    assert_eq!(found.len(), 1);
    assert!(found.iter().all(|(v, m)| *v == W
        && m.starts_with(
            "olm.skipRange annotation is set but replaces field is not set in the CSV."
        )));
    // Only one bundle in the channel: nothing to prune.
    let dir = tempfile::tempdir().unwrap();
    create(
        dir.path(),
        &[bundle_files("hello", "0.0.2", json!({}), skip)],
    );
    assert!(
        results(
            dir.path(),
            Profile::Isv,
            "hello",
            "0.0.2",
            "check_pruned_graph"
        )
        .is_empty()
    );
}
