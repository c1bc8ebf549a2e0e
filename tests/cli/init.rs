//! `olmpack bundle init` end to end: the real binary on temporary copies of `testdata/init/`.

use crate::support::proc::Bounded;
use olmpack::yaml::{self, Node};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

const ANN: &str = "metadata/annotations.yaml";
const DEPS: &str = "metadata/dependencies.yaml";

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/init")
        .join(name)
}

/// testdata copies follow symbolic links (a linked folder is copied as a folder).
fn copy_dir(from: &Path, to: &Path) {
    crate::support::fs::copy_dir_with(from, to, crate::support::fs::Links::Follow);
}

/// A temporary copy of a testdata folder: (guard, path of the copy).
fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(name);
    copy_dir(&testdata(name), &dir);
    (tmp, dir)
}

/// Every file under a folder: relative path → (bytes, mtime).
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, SystemTime)>) {
        for entry in fs::read_dir(dir).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                let mtime = fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .expect("mtime");
                out.insert(rel, (fs::read(&path).expect("read"), mtime));
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

fn init(args: &[&str]) -> assert_cmd::assert::Assert {
    crate::support::cmd::olmpack_cmd()
        .env("NO_COLOR", "1")
        .arg("bundle")
        .arg("init")
        .args(args)
        .assert()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn stdout_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// The annotations of a written file, in file order, parsed with the library.
fn annotations(path: &Path) -> Vec<(String, String)> {
    let text = fs::read_to_string(path).expect("read annotations");
    let docs = yaml::parse_stream(&text).expect("annotations parse");
    docs[0]
        .root
        .get("annotations")
        .and_then(Node::as_map)
        .expect("annotations mapping")
        .iter()
        .map(|(k, v)| {
            (
                k.text.to_string(),
                v.as_str().expect("every value is a string").to_string(),
            )
        })
        .collect()
}

/// `olm.gvk` entries of a dependencies file as (group, version, kind), and the count of entries.
fn gvks(path: &Path) -> (Vec<(String, String, String)>, usize) {
    let text = fs::read_to_string(path).expect("read dependencies");
    let docs = yaml::parse_stream(&text).expect("dependencies parse");
    let Some(items) = docs
        .first()
        .and_then(|d| d.root.get("dependencies"))
        .and_then(Node::as_seq)
    else {
        return (Vec::new(), 0);
    };
    let t = |n: &Node, k: &str| {
        n.get(k)
            .and_then(Node::scalar_text)
            .unwrap_or("")
            .to_string()
    };
    let list = items
        .iter()
        .filter(|i| i.get("type").and_then(Node::scalar_text) == Some("olm.gvk"))
        .filter_map(|i| i.get("value"))
        .map(|v| (t(v, "group"), t(v, "version"), t(v, "kind")))
        .collect();
    (list, items.len())
}

/// Parses `LABEL key="value"` lines the way the Dockerfile shell lexer reads double-quoted
/// words (`\"`, `\$` and `\\` are escapes), plus the COPY lines.
fn dockerfile(path: &Path) -> (Vec<(String, String)>, Vec<String>) {
    let text = fs::read_to_string(path).expect("read Dockerfile");
    let mut labels = Vec::new();
    let mut copies = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("LABEL ") {
            let (key, value) = rest.split_once('=').expect("key=value");
            let inner = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .expect("quoted value");
            let mut out = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    let next = chars.next().expect("escape");
                    assert!(matches!(next, '"' | '$' | '\\'), "odd escape \\{next}");
                    out.push(next);
                } else {
                    assert!(c != '"' && c != '$', "unescaped {c} in {line}");
                    out.push(c);
                }
            }
            labels.push((key.to_string(), out));
        } else if let Some(rest) = line.strip_prefix("COPY ") {
            copies.push(rest.to_string());
        }
    }
    (labels, copies)
}

const CORE: [&str; 6] = [
    "operators.operatorframework.io.bundle.mediatype.v1",
    "operators.operatorframework.io.bundle.manifests.v1",
    "operators.operatorframework.io.bundle.metadata.v1",
    "operators.operatorframework.io.bundle.package.v1",
    "operators.operatorframework.io.bundle.channels.v1",
    "operators.operatorframework.io.bundle.channel.default.v1",
];

#[test]
fn flat_folder_without_output_dir_is_refused_and_left_alone() {
    let (_tmp, flat) = fixture("flat");
    let before = tree(&flat);
    let a = init(&[p(&flat), "--channels", "stable"]).code(2);
    let err = stderr_of(&a);
    assert!(err.contains("--output-dir"), "{err}");
    assert!(err.contains("never moves"), "{err}");
    assert_eq!(tree(&flat), before);
}

#[test]
fn flat_folder_becomes_a_bundle_with_output_dir() {
    let (tmp, flat) = fixture("flat");
    let before = tree(&flat);
    let out = tmp.path().join("out");
    let a = init(&[p(&flat), "--output-dir", p(&out), "--channels", "stable"]).code(0);
    assert!(stderr_of(&a).contains("valid"), "{}", stderr_of(&a));
    // Manifests are byte-identical copies; the README is not a manifest.
    for name in [
        "kvstore-operator.clusterserviceversion.yaml",
        "kvstore.example.com_kvclusters.yaml",
        "kvstore-operator-metrics_v1_service.yaml",
    ] {
        assert_eq!(
            fs::read(out.join("manifests").join(name)).expect("copied"),
            fs::read(flat.join(name)).expect("source")
        );
    }
    assert!(!out.join("manifests/README.md").exists());
    assert_eq!(
        fs::read_dir(out.join("manifests")).expect("list").count(),
        3
    );
    // The source folder is untouched.
    assert_eq!(tree(&flat), before);
    // Core keys in opm's LABEL order, quoted, package from the CSV name, the only channel as
    // default.
    let text = fs::read_to_string(out.join(ANN)).expect("annotations");
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        body,
        vec![
            "annotations:",
            "  operators.operatorframework.io.bundle.mediatype.v1: \"registry+v1\"",
            "  operators.operatorframework.io.bundle.manifests.v1: \"manifests/\"",
            "  operators.operatorframework.io.bundle.metadata.v1: \"metadata/\"",
            "  operators.operatorframework.io.bundle.package.v1: \"kvstore-operator\"",
            "  operators.operatorframework.io.bundle.channels.v1: \"stable\"",
            "  operators.operatorframework.io.bundle.channel.default.v1: \"stable\"",
        ]
    );
    // One olm.gvk per required CRD and per required API service.
    let (list, count) = gvks(&out.join(DEPS));
    assert_eq!(
        list,
        vec![
            ("cert-manager.io".into(), "v1".into(), "Certificate".into()),
            (
                "metrics.example.com".into(),
                "v1beta1".into(),
                "NodeMetrics".into()
            ),
        ]
    );
    assert_eq!(count, 2);
}

#[test]
fn output_dir_inside_the_flat_folder_works_and_is_idempotent() {
    let (_tmp, flat) = fixture("flat");
    let out = flat.join("bundle");
    init(&[
        p(&flat),
        "-u",
        p(&out),
        "--channels",
        "stable",
        "--dockerfile",
    ])
    .code(0);
    let first = tree(&flat);
    let a = init(&[
        p(&flat),
        "-u",
        p(&out),
        "--channels",
        "stable",
        "--dockerfile",
    ])
    .code(0);
    assert_eq!(tree(&flat), first, "second run changed bytes or mtimes");
    assert!(stdout_of(&a).contains("unchanged"), "{}", stdout_of(&a));
    // Without the flag the second run also changes nothing (values come from the annotations).
    init(&[p(&out), "--dockerfile"]).code(0);
    assert_eq!(tree(&flat), first);
}

#[test]
fn custom_annotations_are_kept_in_order_with_their_values() {
    let (_tmp, dir) = fixture("bundle-custom");
    let deps_before = fs::read(dir.join(DEPS)).expect("deps");
    init(&[p(&dir)]).code(0);
    let got = annotations(&dir.join(ANN));
    let want: Vec<(String, String)> = [
        (CORE[0], "registry+v1"),
        (CORE[1], "manifests/"),
        (CORE[2], "metadata/"),
        (CORE[3], "kvstore-operator"),
        (CORE[4], "stable,fast"),
        (CORE[5], "stable"),
        ("com.example.team", "storage"),
        ("com.redhat.openshift.versions", "v4.12-v4.16"),
        // A YAML boolean keeps its text and becomes a string, as an image label carries it.
        ("com.example.certified", "true"),
        (
            "operators.operatorframework.io.test.config.v1",
            "tests/scorecard/",
        ),
        (
            "operators.operatorframework.io.test.mediatype.v1",
            "scorecard+v1",
        ),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(got, want);
    // The CSV requires nothing, so the hand-written dependencies file is left byte for byte.
    assert_eq!(fs::read(dir.join(DEPS)).expect("deps"), deps_before);
    // A second run changes nothing, not even mtimes.
    let first = tree(&dir);
    init(&[p(&dir)]).code(0);
    assert_eq!(tree(&dir), first);
}

#[test]
fn an_opm_style_file_with_the_same_content_is_not_rewritten() {
    let (_tmp, dir) = fixture("bundle-custom");
    // FIELD.md c.1: opm's byte output (sorted keys, no quotes).
    let opm = "annotations:\n  operators.operatorframework.io.bundle.channel.default.v1: stable\n  operators.operatorframework.io.bundle.channels.v1: stable,fast\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: kvstore-operator\n";
    fs::write(dir.join(ANN), opm).expect("write");
    let before = tree(&dir);
    init(&[p(&dir), "--channels", "stable,fast"]).code(0);
    assert_eq!(tree(&dir), before);
}

#[test]
fn a_conflicting_flag_stops_with_a_diff_and_changes_nothing() {
    let (_tmp, dir) = fixture("bundle-custom");
    let before = tree(&dir);
    let a = init(&[p(&dir), "--package", "other-operator", "--dockerfile"]).code(1);
    let err = stderr_of(&a);
    assert!(err.contains("metadata/annotations.yaml"), "{err}");
    assert!(
        err.contains("-   operators.operatorframework.io.bundle.package.v1: \"kvstore-operator\""),
        "{err}"
    );
    assert!(
        err.contains("+   operators.operatorframework.io.bundle.package.v1: \"other-operator\""),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    assert_eq!(tree(&dir), before, "files changed despite the conflict");

    let a = init(&[p(&dir), "--channels", "beta"]).code(1);
    assert!(
        stderr_of(&a).contains("+   operators.operatorframework.io.bundle.channels.v1: \"beta\"")
    );
    assert_eq!(tree(&dir), before);

    // --force applies the flag and keeps the custom annotations.
    init(&[p(&dir), "--package", "other-operator", "--force"]).code(0);
    let got = annotations(&dir.join(ANN));
    assert!(got.contains(&(CORE[3].into(), "other-operator".into())));
    assert!(got.contains(&("com.example.team".into(), "storage".into())));
}

#[test]
fn a_hand_written_dockerfile_is_a_conflict() {
    let (_tmp, dir) = fixture("bundle-custom");
    fs::write(dir.join("bundle.Dockerfile"), "FROM scratch\nCOPY . /\n").expect("write");
    let before = tree(&dir);
    let a = init(&[p(&dir), "--dockerfile"]).code(1);
    assert!(stderr_of(&a).contains("- COPY . /"), "{}", stderr_of(&a));
    assert_eq!(tree(&dir), before);
    init(&[p(&dir), "--dockerfile", "--force"]).code(0);
    assert!(
        fs::read_to_string(dir.join("bundle.Dockerfile"))
            .expect("read")
            .contains("COPY manifests /manifests/")
    );
}

#[test]
fn dry_run_writes_nothing() {
    let (tmp, flat) = fixture("flat");
    let out = tmp.path().join("out");
    let a = init(&[
        p(&flat),
        "--output-dir",
        p(&out),
        "--channels",
        "stable",
        "--dockerfile",
        "--dry-run",
    ])
    .code(0);
    let text = stdout_of(&a);
    assert!(
        text.contains("would create metadata/annotations.yaml"),
        "{text}"
    );
    assert!(
        text.contains("operators.operatorframework.io.bundle.package.v1: \"kvstore-operator\""),
        "{text}"
    );
    assert!(text.contains("would create bundle.Dockerfile"), "{text}");
    assert!(!out.exists());

    let (_tmp2, dir) = fixture("bundle-custom");
    let before = tree(&dir);
    let a = init(&[p(&dir), "--dockerfile", "--dry-run"]).code(0);
    assert!(stdout_of(&a).contains("would update metadata/annotations.yaml"));
    assert_eq!(tree(&dir), before);
}

#[test]
fn required_apis_are_appended_to_existing_dependencies() {
    let (_tmp, dir) = fixture("bundle-custom");
    // Swap in the CSV that requires a CRD and an API service.
    fs::copy(
        testdata("flat/kvstore-operator.clusterserviceversion.yaml"),
        dir.join("manifests/kvstore-operator.clusterserviceversion.yaml"),
    )
    .expect("copy csv");
    let before = fs::read_to_string(dir.join(DEPS)).expect("deps");
    init(&[p(&dir)]).code(0);
    let after = fs::read_to_string(dir.join(DEPS)).expect("deps");
    assert!(
        after.starts_with(&before),
        "existing text was reformatted:\n{after}"
    );
    let (list, count) = gvks(&dir.join(DEPS));
    assert_eq!(count, 3, "{after}");
    assert_eq!(list.len(), 2);
    assert!(list.contains(&("cert-manager.io".into(), "v1".into(), "Certificate".into())));
    // Re-running adds nothing.
    let first = tree(&dir);
    init(&[p(&dir)]).code(0);
    assert_eq!(tree(&dir), first);
}

#[test]
fn no_required_apis_gives_a_commented_example() {
    let (_tmp, dir) = fixture("bundle-custom");
    fs::remove_dir_all(dir.join("metadata")).expect("rm");
    init(&[p(&dir), "--channels", "stable"]).code(0);
    let text = fs::read_to_string(dir.join(DEPS)).expect("deps");
    // Comments, then one line of YAML that decodes to a real value: a comments-only metadata
    // file crashes `operator-sdk bundle validate` and `opm alpha bundle validate`.
    let content: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(content, ["dependencies: []"], "{text}");
    for word in ["olm.package", "olm.gvk", "olm.constraint"] {
        assert!(text.contains(word), "{text}");
    }
    // The example parses as "no dependencies", to a document (not null).
    assert_eq!(gvks(&dir.join(DEPS)).1, 0);
    let docs = yaml::parse_stream(&text).expect("parses");
    assert_eq!(docs.len(), 1);
    // And the validator has nothing to say about the file init wrote.
    let out = validate_json(&dir);
    let findings: Vec<&serde_json::Value> = out["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter(|o| o["file"] == DEPS)
        .collect();
    assert!(findings.is_empty(), "{findings:?}");
}

/// Runs `olmpack bundle validate -o json DIR` and returns the parsed output.
fn validate_json(dir: &Path) -> serde_json::Value {
    let out = crate::support::cmd::olmpack_cmd()
        .args(["bundle", "validate", "-o", "json"])
        .arg(dir)
        .bounded_output()
        .expect("run validate");
    // 0 (valid) or 1 (invalid): a verdict, never a usage error or a crash.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "validate exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json output")
}

/// The file older olmpack versions wrote (only comments) is what crashes the reference
/// validator: `bundle validate` reports it as an error naming both crashing tools, and running
/// init again replaces it with the example that has content.
#[test]
fn a_comments_only_dependencies_file_is_reported_and_init_repairs_it() {
    let (_tmp, dir) = fixture("bundle-custom");
    fs::remove_dir_all(dir.join("metadata")).expect("rm");
    init(&[p(&dir), "--channels", "stable"]).code(0);
    let written = fs::read_to_string(dir.join(DEPS)).expect("deps");
    // What init wrote before the fix: the same comments, without `dependencies: []`.
    let old = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scaffolds/dependencies.example.comments-only.yaml"),
    )
    .expect("old example");
    assert!(old.lines().all(|l| l.is_empty() || l.starts_with('#')));
    fs::write(dir.join(DEPS), &old).expect("write");
    let out = validate_json(&dir);
    let hit = out["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .find(|o| o["rule"] == "metadata/no-content")
        .unwrap_or_else(|| panic!("no metadata/no-content finding: {out}"));
    assert_eq!(hit["type"], "error");
    assert_eq!(hit["file"], DEPS);
    let message = hit["message"].as_str().expect("message");
    assert!(
        message.contains("operator-sdk bundle validate"),
        "{message}"
    );
    assert!(message.contains("opm alpha bundle validate"), "{message}");
    assert_eq!(out["passed"], false);
    // Only `---` is the same case.
    fs::write(dir.join(DEPS), "---\n").expect("write");
    let out = validate_json(&dir);
    assert!(
        out["outputs"]
            .as_array()
            .expect("outputs")
            .iter()
            .any(|o| o["rule"] == "metadata/no-content"),
        "{out}"
    );
    // Init repairs its own old output, and the result validates cleanly.
    fs::write(dir.join(DEPS), &old).expect("write");
    init(&[p(&dir), "--channels", "stable"]).code(0);
    assert_eq!(fs::read_to_string(dir.join(DEPS)).expect("deps"), written);
    assert_eq!(validate_json(&dir)["passed"], true);
}

#[test]
fn dockerfile_labels_equal_the_annotations() {
    let (_tmp, dir) = fixture("bundle-custom");
    // A value with spaces, quotes and a dollar sign must survive the Dockerfile lexer.
    let mut text = fs::read_to_string(dir.join(ANN)).expect("read");
    text.push_str("  com.example.note: 'say \"hi\" to $USER \\ now'\n");
    fs::write(dir.join(ANN), text).expect("write");
    init(&[p(&dir), "--dockerfile"]).code(0);
    let (labels, copies) = dockerfile(&dir.join("bundle.Dockerfile"));
    let ann = annotations(&dir.join(ANN));
    assert_eq!(labels, ann);
    assert!(ann.contains(&(
        "com.example.note".into(),
        "say \"hi\" to $USER \\ now".into()
    )));
    assert_eq!(
        copies,
        vec![
            "manifests /manifests/",
            "metadata /metadata/",
            "tests/scorecard /tests/scorecard/"
        ]
    );
    assert!(
        fs::read_to_string(dir.join("bundle.Dockerfile"))
            .expect("read")
            .contains("\nFROM scratch\n")
    );
}

#[test]
fn a_folder_without_a_csv_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("crds-only");
    fs::create_dir(&dir).expect("mkdir");
    fs::copy(
        testdata("flat/kvstore.example.com_kvclusters.yaml"),
        dir.join("crd.yaml"),
    )
    .expect("copy");
    let a = init(&[
        p(&dir),
        "--channels",
        "stable",
        "-u",
        p(&tmp.path().join("out")),
    ])
    .code(2);
    let err = stderr_of(&a);
    assert!(err.contains("no ClusterServiceVersion found in"), "{err}");
    assert!(err.contains(p(&dir)), "{err}");
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn two_csvs_are_a_clear_error_naming_both() {
    let (tmp, flat) = fixture("flat");
    fs::copy(
        flat.join("kvstore-operator.clusterserviceversion.yaml"),
        flat.join("kvstore-operator.v2.clusterserviceversion.yaml"),
    )
    .expect("copy");
    let a = init(&[
        p(&flat),
        "--channels",
        "stable",
        "-u",
        p(&tmp.path().join("out")),
    ])
    .code(2);
    let err = stderr_of(&a);
    assert!(err.contains("more than one ClusterServiceVersion"), "{err}");
    assert!(
        err.contains("kvstore-operator.clusterserviceversion.yaml"),
        "{err}"
    );
    assert!(
        err.contains("kvstore-operator.v2.clusterserviceversion.yaml"),
        "{err}"
    );
}

#[test]
fn invalid_yaml_names_the_file_and_line() {
    let (tmp, flat) = fixture("flat");
    fs::write(
        flat.join("broken.yaml"),
        "kind: Service\nmetadata:\n  name: [x\n",
    )
    .expect("write");
    let a = init(&[
        p(&flat),
        "--channels",
        "stable",
        "-u",
        p(&tmp.path().join("out")),
    ])
    .code(2);
    let err = stderr_of(&a);
    assert!(err.contains("broken.yaml:"), "{err}");
    assert!(err.contains("invalid YAML"), "{err}");

    let (_tmp, dir) = fixture("bundle-custom");
    fs::write(dir.join(ANN), "annotations:\n  a: b\n  a: c\n").expect("write");
    let a = init(&[p(&dir)]).code(2);
    let err = stderr_of(&a);
    assert!(err.contains("annotations.yaml:3"), "{err}");
}

#[test]
fn missing_channels_and_unknown_package_ask_for_flags() {
    let (tmp, flat) = fixture("flat");
    let out = tmp.path().join("out");
    let a = init(&[p(&flat), "-u", p(&out)]).code(2);
    assert!(stderr_of(&a).contains("--channels"), "{}", stderr_of(&a));
    assert!(!out.exists());

    let csv = flat.join("kvstore-operator.clusterserviceversion.yaml");
    let text = fs::read_to_string(&csv).expect("read");
    fs::write(
        &csv,
        text.replace("name: kvstore-operator.v1.2.0", "name: kvstore"),
    )
    .expect("write");
    let a = init(&[p(&flat), "-u", p(&out), "--channels", "stable"]).code(2);
    assert!(stderr_of(&a).contains("--package"), "{}", stderr_of(&a));
}

#[test]
fn a_default_channel_outside_the_channels_is_allowed_with_a_note() {
    let (_tmp, dir) = fixture("bundle-custom");
    fs::remove_dir_all(dir.join("metadata")).expect("rm");
    let a = init(&[p(&dir), "--channels", "fast", "--default-channel", "stable"]).code(0);
    assert!(
        stderr_of(&a).contains("default channel stable is not one of this bundle's channels"),
        "{}",
        stderr_of(&a)
    );
    let ann = annotations(&dir.join(ANN));
    assert!(ann.contains(&(CORE[5].into(), "stable".into())));
}

#[test]
fn validation_errors_after_writing_exit_1() {
    let (_tmp, dir) = fixture("bundle-custom");
    // A CSV that init can read but the validator rejects: a required API service (which init
    // turns into a dependency) and no install modes (an error).
    let csv = dir.join("manifests/kvstore-operator.clusterserviceversion.yaml");
    let text = fs::read_to_string(&csv).expect("read");
    let text = text.replace(
        "  install:\n",
        "  apiservicedefinitions:\n    required:\n      - group: metrics.example.com\n        version: v1beta1\n        kind: NodeMetrics\n        name: nodemetrics\n  install:\n",
    );
    let text = text.replace("  installModes:", "  xinstallModes:");
    fs::write(&csv, text).expect("write");
    let a = init(&[p(&dir)]).code(1);
    let err = stderr_of(&a);
    assert!(err.contains("csv/install-modes"), "{err}");
    assert!(err.contains("does not validate"), "{err}");
    // The files were still written, and the dependency derived.
    let (list, _) = gvks(&dir.join(DEPS));
    assert!(list.contains(&(
        "metrics.example.com".into(),
        "v1beta1".into(),
        "NodeMetrics".into()
    )));
}

#[test]
fn an_edited_copy_in_the_output_dir_is_a_conflict() {
    let (tmp, flat) = fixture("flat");
    let out = tmp.path().join("out");
    init(&[p(&flat), "-u", p(&out), "--channels", "stable"]).code(0);
    let copy = out.join("manifests/kvstore-operator-metrics_v1_service.yaml");
    let edited = fs::read_to_string(&copy)
        .expect("read")
        .replace("8443", "9443");
    fs::write(&copy, &edited).expect("write");
    let before = tree(&out);
    // Neither a real run nor a dry run goes past the conflict.
    for extra in [None, Some("--dry-run")] {
        let mut args = vec![p(&flat), "-u", p(&out)];
        args.extend(extra);
        let a = init(&args).code(1);
        let err = stderr_of(&a);
        assert!(
            err.contains("manifests/kvstore-operator-metrics_v1_service.yaml"),
            "{err}"
        );
        assert!(err.contains("-       port: 9443"), "{err}");
        assert!(err.contains("+       port: 8443"), "{err}");
        assert_eq!(tree(&out), before);
    }
    init(&[p(&flat), "-u", p(&out), "--force"]).code(0);
    assert_eq!(
        fs::read(&copy).expect("read"),
        fs::read(flat.join("kvstore-operator-metrics_v1_service.yaml")).expect("read")
    );
}

#[test]
fn the_same_channels_in_another_order_are_not_a_conflict() {
    let (_tmp, dir) = fixture("bundle-custom");
    init(&[p(&dir)]).code(0);
    let before = tree(&dir);
    init(&[
        p(&dir),
        "--channels",
        "fast,stable",
        "--package",
        "kvstore-operator",
    ])
    .code(0);
    assert_eq!(tree(&dir), before);
}
