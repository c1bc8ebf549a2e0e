//! Substitutes (`olm.substitutesFor`, opm 1.62+) in `catalog filter` and `catalog diff`: a
//! substitute is its base's successor. Hand-made catalogs in `testdata/catalogs/substitutes/`:
//! - `old`: op.v1.0.0 → op.v1.1.0;
//! - `template`: what opm's substitutes template writes (the substitute op-v1.1.0-1, version
//!   1.1.0 release 1, takes over the base's edges and skips it);
//! - `annotation`: the substitute listed next to its base with no edge between them, the
//!   relation only in `olm.substitutesFor` (version 1.1.0+1: the release as build metadata);
//! - `dropped`: the base gone, its substitute in its place;
//! - `unrelated`: `dropped` without `olm.substitutesFor` (the control: a real regression).

use crate::support::cmd::olmpack;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/catalogs/substitutes")
        .join(name)
}

fn config(tmp: &Path, range: Option<&str>) -> PathBuf {
    let mut text = String::from(
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: op\n",
    );
    if let Some(r) = range {
        text.push_str(&format!("    versionRange: \"{r}\"\n"));
    }
    let path = tmp.join(format!("cfg-{}.yaml", range.map_or(0, str::len)));
    std::fs::write(&path, text).unwrap();
    path
}

/// `catalog filter` of `catalog` with `range`: the channel's entry names and the stderr.
fn filter(catalog: &str, range: Option<&str>) -> (Vec<String>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), range);
    let o = olmpack()
        .args(["catalog", "filter"])
        .arg(dir(catalog))
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "filter {catalog} {range:?}: {stderr}");
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let mut names = Vec::new();
    for v in serde_json::Deserializer::from_str(&text).into_iter::<Value>() {
        let v = v.unwrap();
        if v["schema"] == "olm.channel" {
            for e in v["entries"].as_array().unwrap() {
                names.push(e["name"].as_str().unwrap().to_string());
            }
        }
    }
    names.sort();
    // Whatever the filter writes is a valid catalog.
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("catalog.json"), &text).unwrap();
    olmpack()
        .args(["catalog", "validate"])
        .arg(&out)
        .assert()
        .success();
    (names, stderr)
}

#[test]
fn filter_keeps_the_substitute_as_the_head() {
    // Heads only: the substitute, in both forms (the annotation form has two opm head
    // candidates; the substitute succeeds its base).
    assert_eq!(filter("template", None).0, ["op-v1.1.0-1"]);
    assert_eq!(filter("annotation", None).0, ["op.v1.1.0-1"]);
    // An exact version keeps the base and its substitute where an edge joins them...
    assert_eq!(
        filter("template", Some(">=1.1.0 <=1.1.0")).0,
        ["op-v1.1.0-1", "op.v1.1.0"]
    );
    // ...and where none does, the superseded base is left out (it would be a second head).
    let (names, stderr) = filter("annotation", Some(">=1.1.0 <=1.1.0"));
    assert_eq!(names, ["op.v1.1.0-1"]);
    assert!(stderr.contains("leaving out \"op.v1.1.0\""), "{stderr}");
    // A range below them keeps neither.
    assert_eq!(
        filter("annotation", Some(">=1.0.0 <1.1.0")).0,
        ["op.v1.0.0"]
    );
}

fn diff(new: &str) -> (i32, Value) {
    let o = olmpack()
        .args(["catalog", "diff"])
        .arg(dir("old"))
        .arg(dir(new))
        .args(["-o", "json", "--fail-on", "regression"])
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{new}: {e}: {}", String::from_utf8_lossy(&o.stderr))),
    )
}

#[test]
fn diff_treats_a_substitute_as_its_bases_successor() {
    let mut ran = 0;
    for (new, head) in [
        ("template", "op-v1.1.0-1"),
        ("annotation", "op.v1.1.0-1"),
        ("dropped", "op.v1.1.0-1"),
    ] {
        let (code, report) = diff(new);
        assert_eq!(code, 0, "{new}: {report}");
        let pkg = &report["packages"][0];
        assert!(
            pkg["regressions"].as_array().is_none_or(Vec::is_empty),
            "{new}: {pkg}"
        );
        assert_eq!(pkg["headMoves"][0]["new"], head, "{new}: {pkg}");
        ran += 1;
    }
    assert_eq!(ran, 3);
    // The control: without olm.substitutesFor the base's installations are stranded.
    let (code, report) = diff("unrelated");
    assert_eq!(code, 1, "{report}");
    let text = report.to_string();
    assert!(text.contains("op.v1.1.0"), "{text}");
}
