//! Release versions (opm v1.62+, api #454): CSV `spec.release` becomes the `olm.package`
//! property's `release` in `catalog render`, a release of the wrong type is refused as opm
//! refuses it, and `catalog validate` holds a bundle with a release to opm's rules (normalized
//! name `<package>-v<version>-<release>`, at most 20 characters). The substitutes template's
//! ordering by version then release is tested in `catalog_template_substitutes.rs` and
//! `tests/library/substitutes_template.rs`; `catalog add --mode semver` in `crates/olm/src/catalog/add.rs`.

use crate::support::cmd::olmpack;
use crate::support::fixtures::valid_basic as bundle_dir;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use std::path::{Path, PathBuf};

/// A copy of the bundle with `release: RELEASE` (YAML text) under `spec.version`, CSV named `name`.
fn with_release(root: &Path, name: &str, release: &str) -> PathBuf {
    let dir = root.join(format!("b-{name}"));
    copy_dir(&bundle_dir(), &dir);
    let csv = dir.join("manifests/kvstore-operator.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&csv).expect("csv");
    assert!(text.contains("\n  version: 1.2.0\n"));
    let text = text
        .replace(
            "  name: kvstore-operator.v1.2.0\n",
            &format!("  name: {name}\n"),
        )
        .replace(
            "\n  version: 1.2.0\n",
            &format!("\n  version: 1.2.0\n  release: {release}\n"),
        );
    std::fs::write(&csv, text).expect("write csv");
    dir
}

fn package_value(rendered: &str) -> serde_json::Value {
    serde_json::Deserializer::from_str(rendered)
        .into_iter::<serde_json::Value>()
        .flatten()
        .find(|b| b["schema"] == "olm.bundle")
        .and_then(|b| {
            b["properties"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["type"] == "olm.package").cloned())
        })
        .map(|p| p["value"].clone())
        .expect("an olm.package property")
}

#[test]
fn render_reads_csv_spec_release_string_or_number() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (yaml, want) in [("\"2\"", "2"), ("3", "3"), ("alpha.1", "alpha.1")] {
        let dir = with_release(tmp.path(), &format!("kvstore-operator-v1.2.0-{want}"), yaml);
        let out = olmpack().args(["catalog", "render"]).arg(&dir).succeeds();
        let value = package_value(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(value["release"], want, "{value}");
        assert_eq!(value["version"], "1.2.0");
    }
    // No release: no `release` key, as before.
    let out = olmpack()
        .args(["catalog", "render"])
        .arg(bundle_dir())
        .output()
        .expect("runs");
    assert!(out.status.success());
    let value = package_value(&String::from_utf8_lossy(&out.stdout));
    assert!(value.get("release").is_none(), "{value}");
}

#[test]
fn render_refuses_a_release_that_is_neither_string_nor_number() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = with_release(tmp.path(), "kvstore-operator-v1.2.0-x", "[1]");
    let out = olmpack()
        .args(["catalog", "render"])
        .arg(&dir)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("get release: release field must be a string or number"),
        "{err}"
    );
}

fn validate_one(tmp: &Path, name: &str, release: &str) -> (Option<i32>, String) {
    let catalog = tmp.join(format!("cat-{name}"));
    let pkg = catalog.join("kvstore-operator");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    let blobs = [
        serde_json::json!({"schema": "olm.package", "name": "kvstore-operator", "defaultChannel": "stable"}),
        serde_json::json!({"schema": "olm.channel", "name": "stable", "package": "kvstore-operator", "entries": [{"name": name}]}),
        serde_json::json!({"schema": "olm.bundle", "name": name, "package": "kvstore-operator",
            "image": "quay.io/acme/kvstore-bundle:1.2.0",
            "properties": [{"type": "olm.package", "value": {"packageName": "kvstore-operator", "version": "1.2.0", "release": release}}]}),
    ];
    let text: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(pkg.join("catalog.json"), text).expect("write");
    let out = olmpack()
        .args(["catalog", "validate"])
        .arg(&catalog)
        .output()
        .expect("runs");
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn validate_holds_releases_to_opms_rules() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (code, text) = validate_one(tmp.path(), "kvstore-operator-v1.2.0-2", "2");
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = validate_one(tmp.path(), "kvstore-operator.v1.2.0", "2");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("does not match normalized name \\\"kvstore-operator-v1.2.0-2\\\"")
            || text.contains("does not match normalized name \"kvstore-operator-v1.2.0-2\""),
        "{text}"
    );
    let long = "a123456789012345678901";
    let (code, text) = validate_one(tmp.path(), &format!("kvstore-operator-v1.2.0-{long}"), long);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("exceeds maximum length of 20 characters"),
        "{text}"
    );
}

/// `bundle init` reads the package from a release-style CSV name
/// (`<package>-v<version>-<release>`, which has no `.v<version>` suffix to guess from), and
/// says so when a CSV with a release is not named by that rule.
#[test]
fn init_knows_release_names() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (name, note) in [
        ("kvstore-operator-v1.2.0-3", None),
        (
            "kvstore-operator.v1.2.0",
            Some(
                "opm and OLM expect it named kvstore-operator-v1.2.0-3, not kvstore-operator.v1.2.0",
            ),
        ),
    ] {
        let dir = with_release(tmp.path(), name, "\"3\"");
        std::fs::remove_dir_all(dir.join("metadata")).expect("no metadata yet");
        let out = olmpack()
            .args(["bundle", "init"])
            .arg(&dir)
            .args(["--channels", "stable"])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        // A misnamed CSV is still scaffolded; init's check of the result then fails on it.
        assert_eq!(
            out.status.code(),
            Some(if note.is_some() { 1 } else { 0 }),
            "{name}: {stderr}{stdout}"
        );
        let ann = std::fs::read_to_string(dir.join("metadata/annotations.yaml")).expect("written");
        assert!(
            ann.contains(
                "operators.operatorframework.io.bundle.package.v1: \"kvstore-operator\"\n"
            ),
            "{name}: {ann}"
        );
        let said = format!("{stdout}{stderr}");
        match note {
            Some(n) => assert!(
                said.contains(n) && said.contains("error[csv/release]"),
                "{name}: {said}"
            ),
            None => assert!(!said.contains("spec.release"), "{name}: {said}"),
        }
    }
}
