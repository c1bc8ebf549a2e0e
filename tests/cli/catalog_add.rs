//! `catalog add` on copies of real catalogs: remove one bundle and its channel entry from a
//! checked-in `catalog.yaml` (through olmpack's loader and opm-exact writer), add the bundle back
//! from its bundle folder, and the file must be byte-identical to the original: the only change
//! `add` made is that bundle and its channel entries. `catalog validate` must pass on the result.
//! Also: re-adding is a no-op; a different bundle under the same name is refused; the JSON form
//! stays JSON.
//!
//! Data from `../shared/catalogs` (or `$OLMPACK_CATALOGS`); skipped when absent unless
//! `OLMPACK_REQUIRE_CORPUS=1`.

use crate::support::cmd::olmpack;
use crate::support::proc::Bounded;
use crate::support::shared;
use olmpack::catalog::load::load_file;
use olmpack::catalog::write::{Format, write_config};
use std::path::{Path, PathBuf};

fn catalogs_dir() -> Option<PathBuf> {
    shared::shared_catalogs("packages")
}

/// Writes `original` minus bundle `name` (and its channel entries) into `dir/<pkg>/catalog.<ext>`.
fn without_bundle(original: &Path, name: &str, dir: &Path, pkg: &str, format: Format) -> PathBuf {
    let mut loaded = load_file(original).expect("catalog loads");
    assert!(!loaded.has_errors());
    let before = loaded.config.bundles.len();
    loaded.config.bundles.retain(|b| b.name != name);
    assert_eq!(
        loaded.config.bundles.len() + 1,
        before,
        "{name} in {}",
        original.display()
    );
    for c in &mut loaded.config.channels {
        if let Some(entries) = c.entries.as_mut() {
            entries.retain(|e| e.name != name);
        }
    }
    let mut bytes = Vec::new();
    write_config(&mut bytes, &loaded.config, format).expect("writes");
    let ext = if format == Format::Json {
        "json"
    } else {
        "yaml"
    };
    let file = dir.join(pkg).join(format!("catalog.{ext}"));
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&file, bytes).expect("write");
    file
}

fn image_of(original: &Path, name: &str) -> String {
    let loaded = load_file(original).expect("catalog loads");
    loaded
        .config
        .bundles
        .iter()
        .find(|b| b.name == name)
        .map(|b| b.image.clone())
        .expect("bundle present")
}

struct Case {
    repo: &'static str,
    pkg: &'static str,
    ocp: &'static str,
    version: &'static str,
    channel: &'static str,
    mode: &'static str,
}

const CASES: &[Case] = &[
    // csv.metadata form (4.17+), replaces edge from the CSV.
    Case {
        repo: "community-operators-prod",
        pkg: "kube-green",
        ocp: "v4.18",
        version: "0.7.1",
        channel: "alpha",
        mode: "replaces",
    },
    // bundle.object form (4.16).
    Case {
        repo: "community-operators-prod",
        pkg: "kube-green",
        ocp: "v4.16",
        version: "0.7.1",
        channel: "alpha",
        mode: "replaces",
    },
    // A semver-template catalog (major channel, opm >= 1.61 edges): --mode semver links the new
    // head as the template did.
    Case {
        repo: "community-operators-prod",
        pkg: "kairos-operator",
        ocp: "v4.18",
        version: "2.2.0",
        channel: "candidate-v2",
        mode: "semver",
    },
];

#[test]
fn add_restores_the_checked_in_catalog() {
    let Some(dir) = catalogs_dir() else { return };
    let mut identical = 0;
    for case in CASES {
        let repo = dir.join("packages").join(case.repo);
        let original = repo
            .join("catalogs")
            .join(case.ocp)
            .join(case.pkg)
            .join("catalog.yaml");
        let name = format!("{}.v{}", case.pkg, case.version);
        let image = image_of(&original, &name);
        let tmp = tempfile::tempdir().expect("tmp");
        let file = without_bundle(&original, &name, tmp.path(), case.pkg, Format::Yaml);
        let folder = repo.join("operators").join(case.pkg).join(case.version);
        olmpack()
            .args(["catalog", "add"])
            .arg(tmp.path())
            .arg(&folder)
            .args([
                "--image",
                &image,
                "--channel",
                case.channel,
                "--mode",
                case.mode,
            ])
            .succeeds();
        let got = std::fs::read(&file).expect("written");
        let want = std::fs::read(&original).expect("original");
        assert!(got == want, "{} {} differs after add", case.pkg, case.ocp);
        identical += 1;
        olmpack()
            .args(["catalog", "validate"])
            .arg(tmp.path())
            .assert()
            .success();
        // Re-adding is a no-op.
        let again = olmpack()
            .args(["catalog", "add"])
            .arg(tmp.path())
            .arg(&folder)
            .args(["--image", &image, "--channel", case.channel])
            .bounded_output()
            .expect("runs");
        assert!(again.status.success());
        assert!(String::from_utf8_lossy(&again.stdout).contains("nothing changed"));
        assert_eq!(std::fs::read(&file).expect("still there"), want);
        // The same name with another image is refused and the file is untouched.
        let clash = olmpack()
            .args(["catalog", "add"])
            .arg(tmp.path())
            .arg(&folder)
            .args(["--image", "example.com/other:1", "--channel", case.channel])
            .bounded_output()
            .expect("runs");
        assert_eq!(clash.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&clash.stderr).contains("different content"));
        assert_eq!(std::fs::read(&file).expect("still there"), want);
    }
    eprintln!(
        "catalog add: {identical} of {} files restored byte for byte",
        CASES.len()
    );
    shared::cases(
        "catalog_add checked-in catalogs restored",
        identical,
        CASES.len(),
    );
}

#[test]
fn add_keeps_json_and_creates_a_new_package() {
    let Some(dir) = catalogs_dir() else { return };
    let repo = dir.join("packages/community-operators-prod");
    let original = repo.join("catalogs/v4.18/kube-green/catalog.yaml");
    let tmp = tempfile::tempdir().expect("tmp");
    let file = without_bundle(
        &original,
        "kube-green.v0.7.1",
        tmp.path(),
        "kube-green",
        Format::Json,
    );
    let folder = repo.join("operators/kube-green/0.7.1");
    olmpack()
        .args(["catalog", "add"])
        .arg(tmp.path())
        .arg(&folder)
        .args(["--image", "quay.io/x/kube-green:0.7.1"])
        .assert()
        .success();
    let text = std::fs::read_to_string(&file).expect("written");
    assert!(text.starts_with("{\n    \"schema\": \"olm.package\""));
    assert!(text.contains("\"image\": \"quay.io/x/kube-green:0.7.1\""));
    // A package the catalog does not have yet gets its own file, with olm.package.
    let other = repo.join("operators/kairos-operator/2.2.0");
    olmpack()
        .args(["catalog", "add"])
        .arg(tmp.path())
        .arg(&other)
        .args([
            "--image",
            "quay.io/x/kairos:2.2.0",
            "--channel",
            "candidate-v2",
        ])
        .assert()
        .success();
    let created =
        std::fs::read_to_string(tmp.path().join("kairos-operator/catalog.json")).expect("created");
    assert!(created.contains("\"defaultChannel\": \"candidate-v2\""));
    olmpack()
        .args(["catalog", "validate"])
        .arg(tmp.path())
        .assert()
        .success();
    // A local bundle without --image is a usage error.
    olmpack()
        .args(["catalog", "add"])
        .arg(tmp.path())
        .arg(&other)
        .assert()
        .code(2);
}
