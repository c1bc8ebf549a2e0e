//! `catalog template` with an `olm.template.substitutes` template, end to end through the
//! binary: a real bundle folder (ours, `testdata/bundles/valid-basic`) is the base, a copy with
//! CSV `spec.release: "1"` is the substitute, both reached through `--bundle-map` with
//! `--offline`. The rendered catalog must carry opm's substitution edges and pass
//! `catalog validate`; a substitute that does not order after its base is refused with the
//! template's file and line. (Upstream's own test cases are ported in the library:
//! `crates/olm/src/catalog/template/substitutes_tests.rs`.)

use super::catalog_template::template_offline;
use crate::support::cmd::olmpack;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use std::path::{Path, PathBuf};

fn bundle_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic")
}

/// A copy of the bundle whose CSV is `kvstore-operator-v1.2.0-1`, release "1".
fn release_bundle(root: &Path) -> PathBuf {
    let dir = root.join("kvstore-1.2.0-1");
    copy_dir(&bundle_dir(), &dir);
    let csv = dir.join("manifests/kvstore-operator.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&csv).expect("csv");
    assert!(text.contains("  name: kvstore-operator.v1.2.0\n"));
    assert!(text.contains("\n  version: 1.2.0\n"));
    let text = text
        .replace(
            "  name: kvstore-operator.v1.2.0\n",
            "  name: kvstore-operator-v1.2.0-1\n",
        )
        .replace(
            "\n  version: 1.2.0\n",
            "\n  version: 1.2.0\n  release: \"1\"\n",
        );
    std::fs::write(&csv, text).expect("write csv");
    dir
}

/// The base catalog: one package, one channel, the bundle rendered from its folder.
fn base_entries(tmp: &Path, map: &Path) -> String {
    let basic = tmp.join("basic.yaml");
    std::fs::write(
        &basic,
        "schema: olm.template.basic\nentries:\n- {schema: olm.package, name: kvstore-operator, defaultChannel: stable}\n- {schema: olm.channel, package: kvstore-operator, name: stable, entries: [{name: kvstore-operator.v1.2.0}]}\n- {schema: olm.bundle, image: quay.io/acme/kvstore-bundle:1.2.0}\n",
    )
    .expect("write");
    let out = olmpack()
        .args(["catalog", "template", "--offline", "--bundle-map"])
        .arg(map)
        .arg(&basic)
        .succeeds();
    let text = String::from_utf8(out.stdout).expect("utf8");
    // The JSON stream as a YAML flow sequence of its blobs.
    let blobs: Vec<&str> = text
        .split("\n}\n")
        .filter(|b| !b.trim().is_empty())
        .collect();
    assert_eq!(blobs.len(), 3, "{text}");
    let mut entries = String::new();
    for b in blobs {
        entries.push_str(&format!("- {}\n}}\n", b.replace('\n', "\n  ")));
    }
    entries
}

fn setup(substitute_source: Option<&Path>) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let release = release_bundle(tmp.path());
    let map = tmp.path().join("map.tsv");
    std::fs::write(
        &map,
        format!(
            "quay.io/acme/kvstore-bundle:1.2.0\t{}\nquay.io/acme/kvstore-bundle:1.2.0-1\t{}\n",
            bundle_dir().display(),
            substitute_source.unwrap_or(&release).display()
        ),
    )
    .expect("map");
    let entries = base_entries(tmp.path(), &map);
    let template = tmp.path().join("substitutes.yaml");
    std::fs::write(
        &template,
        format!(
            "schema: olm.template.substitutes\nentries:\n{entries}substitutions:\n- name: quay.io/acme/kvstore-bundle:1.2.0-1\n  base: kvstore-operator.v1.2.0\n"
        ),
    )
    .expect("template");
    (tmp, map, template)
}

#[test]
fn substitutes_template_renders_opms_edges_and_validates() {
    let (tmp, map, template) = setup(None);
    let out = template_offline(&map, &template).succeeds();
    let yaml = String::from_utf8(out.stdout).expect("utf8");
    let docs = olmpack::yaml::parse_stream(&yaml).expect("yaml output parses");
    let channel = docs
        .iter()
        .map(|d| &d.root)
        .find(|n| n.get("schema").and_then(|s| s.as_str()) == Some("olm.channel"))
        .expect("a channel");
    let entries = channel
        .get("entries")
        .and_then(|e| e.as_seq())
        .expect("entries");
    let names: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.get("name").and_then(|n| n.as_str()))
        .collect();
    assert_eq!(
        names,
        ["kvstore-operator.v1.2.0", "kvstore-operator-v1.2.0-1"]
    );
    let substitute = entries.get(1).expect("substitute entry");
    let skips: Vec<&str> = substitute
        .get("skips")
        .and_then(|s| s.as_seq())
        .unwrap_or_default()
        .iter()
        .filter_map(|s| s.as_str())
        .collect();
    assert_eq!(skips, ["kvstore-operator.v1.2.0"]);
    assert!(yaml.contains("release: \"1\""), "{yaml}");

    let catalog = tmp.path().join("catalog/kvstore-operator");
    std::fs::create_dir_all(&catalog).expect("mkdir");
    std::fs::write(catalog.join("catalog.yaml"), &yaml).expect("write");
    olmpack()
        .args(["catalog", "validate"])
        .arg(tmp.path().join("catalog"))
        .assert()
        .success();

    // The type can be named, and the schema detects it.
    let named = olmpack()
        .args([
            "catalog",
            "template",
            "--offline",
            "--type",
            "substitutes",
            "-o",
            "yaml",
            "--bundle-map",
        ])
        .arg(&map)
        .arg(&template)
        .output()
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&named.stdout), yaml);
}

#[test]
fn substitute_not_after_its_base_is_refused_with_file_and_line() {
    let (_tmp, map, template) = setup(Some(&bundle_dir()));
    let out = olmpack()
        .args(["catalog", "template", "--offline", "--bundle-map"])
        .arg(&map)
        .arg(&template)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let text = std::fs::read_to_string(&template).expect("template");
    let line = text
        .lines()
        .position(|l| l.starts_with("- name: quay.io/acme/kvstore-bundle:1.2.0-1"))
        .map(|i| i + 1)
        .expect("substitution line");
    let want = format!(
        "{}:{line}: rendering template: render: error processing substitution \"kvstore-operator.v1.2.0\" -> \"quay.io/acme/kvstore-bundle:1.2.0-1\": base bundle \"kvstore-operator.v1.2.0\" is not less than substitute bundle \"quay.io/acme/kvstore-bundle:1.2.0-1\"",
        template.display()
    );
    assert!(err.contains(&want), "{err}\nwant: {want}");
}
