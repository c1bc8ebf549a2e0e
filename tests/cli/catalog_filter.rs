//! `catalog filter` against catalog-filter's own outputs on real catalogs (`../shared/filter`),
//! every output validated by `catalog validate`; configuration errors at their line.

use crate::support::cmd::olmpack;
use crate::support::shared::shared_filter;
use serde_json::Value;
use std::path::Path;

/// The blobs of a JSON stream, each as canonical (sorted-key) text, sorted.
fn blobs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = values(text).iter().map(Value::to_string).collect();
    out.sort();
    out
}

fn values(text: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .map(|v| v.expect("a JSON stream"))
        .collect()
}

/// The reference's output without the bundles no channel lists (opm refuses those: "not found
/// in any channel entries"; olmpack leaves them out), and how many it removed.
fn repaired(text: &str) -> (Vec<String>, usize) {
    let all = values(text);
    let listed: std::collections::BTreeSet<(String, String)> = all
        .iter()
        .filter(|v| v["schema"] == "olm.channel")
        .flat_map(|c| {
            let pkg = c["package"].as_str().unwrap_or("").to_string();
            c["entries"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |e| (pkg.clone(), e["name"].as_str().unwrap_or("").to_string()))
        })
        .collect();
    let mut dropped = 0;
    let mut out: Vec<String> = all
        .iter()
        .filter(|v| {
            let keep = v["schema"] != "olm.bundle"
                || listed.contains(&(
                    v["package"].as_str().unwrap_or("").to_string(),
                    v["name"].as_str().unwrap_or("").to_string(),
                ));
            if !keep {
                dropped += 1;
            }
            keep
        })
        .map(Value::to_string)
        .collect();
    out.sort();
    (out, dropped)
}

#[test]
fn filter_reproduces_the_reference_outputs() {
    let Some((dir, shared)) = shared_filter() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut cases: Vec<_> = std::fs::read_dir(dir.join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    let (mut same, mut same_error, mut unknown, mut repairs, mut outputs) =
        (0, 0, 0, 0, Vec::new());
    let mut wrong = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let catalog = std::fs::read_to_string(case.join("catalog.txt")).unwrap();
        let mut cmd = olmpack();
        cmd.args(["catalog", "filter"])
            .arg(shared.join(catalog.trim()))
            .arg("--config")
            .arg(case.join("config.yaml"))
            // catalog-filter keeps no dependencies (olmpack's closure is checked in
            // catalog_filter_dependencies.rs).
            .arg("--no-dependencies");
        if let Ok(args) = std::fs::read_to_string(case.join("args.txt")) {
            cmd.args(args.split_whitespace());
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        if name.ends_with("--unknown-package") {
            // Deliberate: catalog-filter returns an empty catalog; olmpack names the line.
            if out.status.code() == Some(2)
                && stderr.contains("config.yaml:4: package \"")
                && stderr.contains("is not in the catalog")
                && stdout.is_empty()
            {
                unknown += 1;
            } else {
                wrong.push(format!("{name}: {stderr}"));
            }
            continue;
        }
        if let Ok(err) = std::fs::read_to_string(case.join("expected-error.txt")) {
            // The reference's message, then olmpack's at the configuration line.
            let key = if err.contains("was filtered out") {
                "was filtered out, a new default channel must be configured"
            } else {
                err.trim()
            };
            if !out.status.success() && stderr.contains(key) && stdout.is_empty() {
                same_error += 1;
            } else {
                wrong.push(format!("{name}: expected error {err:?}, got {stderr}"));
            }
            continue;
        }
        let expected = std::fs::read_to_string(case.join("expected.json")).unwrap();
        let (fixed, dropped) = repaired(&expected);
        if out.status.success() && (blobs(&stdout) == blobs(&expected) || blobs(&stdout) == fixed) {
            if dropped > 0 {
                // The reference's own output fails opm validate; olmpack's is the same minus
                // the unlisted bundles, with a warning naming them.
                assert!(stderr.contains("leaving out bundle"), "{name}: {stderr}");
                repairs += 1;
            } else {
                same += 1;
            }
            let folder = tmp.path().join(&name);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("catalog.json"), &stdout).unwrap();
            outputs.push(folder);
        } else {
            wrong.push(format!("{name}: output differs ({stderr})"));
        }
    }
    eprintln!(
        "{} cases: {same} outputs identical, {repairs} identical but for the bundles no channel lists (the reference's output fails opm validate), {same_error} errors as the reference, {unknown} unknown packages refused (deliberate)",
        cases.len()
    );
    assert!(
        wrong.is_empty(),
        "{} cases differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert_eq!(same + repairs + same_error + unknown, cases.len());
    assert!(same > 300, "only {same} outputs compared");
    // Every filtered output passes `catalog validate`, in one call.
    olmpack()
        .args(["catalog", "validate", "-o", "text"])
        .args(&outputs)
        .assert()
        .success();
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const CATALOG: &str = r#"{"schema":"olm.package","name":"op","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"op","entries":[{"name":"op.v1.0.0"},{"name":"op.v1.1.0","replaces":"op.v1.0.0"},{"name":"op.v1.2.0","replaces":"op.v1.1.0"}]}
{"schema":"olm.channel","name":"fast","package":"op","entries":[{"name":"op.v1.2.0"}]}
{"schema":"olm.bundle","name":"op.v1.0.0","package":"op","image":"quay.io/op/b:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"op.v1.1.0","package":"op","image":"quay.io/op/b:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.1.0"}}]}
{"schema":"olm.bundle","name":"op.v1.2.0","package":"op","image":"quay.io/op/b:1.2.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.2.0"}}]}
{"schema":"olm.deprecations","package":"op","entries":[{"reference":{"schema":"olm.channel","name":"fast"},"message":"use stable"},{"reference":{"schema":"olm.bundle","name":"op.v1.0.0"},"message":"old"}]}
"#;

/// `catalog filter DIR --config CFG`, for the caller's further arguments.
fn filter(dir: &Path, cfg: &Path) -> assert_cmd::Command {
    let mut cmd = olmpack();
    cmd.args(["catalog", "filter"])
        .arg(dir)
        .arg("--config")
        .arg(cfg);
    cmd
}

fn catalog_dir(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("catalog");
    std::fs::create_dir_all(dir.join("op")).unwrap();
    std::fs::write(dir.join("op/catalog.json"), CATALOG).unwrap();
    dir
}

const HEAD: &str =
    "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\n";

#[test]
fn filter_output_is_render_output_and_output_dir_is_a_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = catalog_dir(tmp.path());
    let cfg = write(
        tmp.path(),
        "f.yaml",
        &format!(
            "{HEAD}packages:\n  - name: op\n    channels:\n      - name: stable\n        versionRange: \">=1.1.0\"\n"
        ),
    );
    let out = filter(&dir, &cfg).args(["-o", "yaml"]).assert().success();
    let yaml = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(yaml.contains("name: op.v1.1.0") && !yaml.contains("name: op.v1.0.0\n"));
    // The deprecation of the dropped channel and bundle went with them.
    assert!(!yaml.contains("use stable") && !yaml.contains("message: old"));
    // Byte for byte what `catalog render` writes for the same catalog.
    let again = tmp.path().join("again");
    std::fs::create_dir_all(&again).unwrap();
    std::fs::write(again.join("catalog.yaml"), &yaml).unwrap();
    olmpack()
        .args(["catalog", "render", "-o", "yaml"])
        .arg(&again)
        .assert()
        .success()
        .stdout(yaml.clone());
    let outdir = tmp.path().join("out");
    filter(&dir, &cfg)
        .arg("--output-dir")
        .arg(&outdir)
        .args(["-o", "yaml"])
        .assert()
        .success()
        .stdout("");
    assert_eq!(
        std::fs::read_to_string(outdir.join("op/catalog.yaml")).unwrap(),
        yaml
    );
    olmpack()
        .args(["catalog", "validate"])
        .arg(&outdir)
        .assert()
        .success();
    // A second run into the same folder is refused: it is no longer empty.
    filter(&dir, &cfg)
        .arg("--output-dir")
        .arg(&outdir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("is not empty"));
}

#[test]
fn config_errors_name_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = catalog_dir(tmp.path());
    let cases = [
        (
            format!("{HEAD}packages:\n  - name: op\n    channels:\n      - name: nope\n"),
            ":6: package \"op\" has no channel \"nope\"; its channels: fast, stable",
        ),
        (
            format!("{HEAD}packages:\n  - name: op\n    bundles:\n      - name: op.v9\n"),
            ":6: package \"op\" has no bundle \"op.v9\"",
        ),
        (
            format!(
                "{HEAD}packages:\n  - name: op\n    versionRange: \">=1\"\n    channels:\n      - name: stable\n        versionRange: \"<2\"\n"
            ),
            ":8: package \"op\": both the package and its channel",
        ),
        (
            format!("{HEAD}packages:\n  - name: op\n    channels:\n      - name: fast\n"),
            ":4: invalid default channel configuration for package \"op\": the default channel \"stable\" was filtered out",
        ),
        (
            "apiVersion: v1\nkind: FilterConfiguration\n".to_string(),
            ":1: unexpected API version",
        ),
        ("packages: [\n".to_string(), "f.yaml:"),
    ];
    for (text, want) in cases {
        let cfg = write(tmp.path(), "f.yaml", &text);
        filter(&dir, &cfg)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(
                format!("f.yaml{want}").replace("f.yamlf.yaml:", "f.yaml:"),
            ));
    }
    olmpack()
        .args(["catalog", "filter"])
        .arg(&dir)
        .args(["--config", "/nonexistent/f.yaml"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "/nonexistent/f.yaml: cannot read",
        ));
}

#[test]
fn image_set_configuration_with_catalog_choice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = catalog_dir(tmp.path());
    let cfg = write(
        tmp.path(),
        "isc.yaml",
        "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators:\n    - catalog: quay.io/a/index:v1\n      packages:\n        - name: op\n          channels:\n            - name: stable\n              minVersion: 1.1.0\n              maxVersion: 1.1.0\n    - catalog: quay.io/b/index:v1\n      packages:\n        - name: op\n",
    );
    filter(&dir, &cfg)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("pick one with --catalog"));
    let out = filter(&dir, &cfg)
        .args(["--catalog", "quay.io/a/index:v1"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // minVersion == maxVersion: that version only (catalog-filter v0.0.5).
    assert_eq!(
        text.matches("\"schema\": \"olm.bundle\"").count(),
        1,
        "{text}"
    );
    assert!(text.contains("op.v1.1.0"));
}
