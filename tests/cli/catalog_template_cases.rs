//! Semver and basic template edge cases (CATALOG.md E.2) on small templates we wrote,
//! `testdata/templates/*.yaml`. Bundle references are rendered by a stand-in renderer
//! (`HOST/PKG:VERSION` → bundle `PKG.vVERSION` of package PKG; a reference without a tag fails),
//! so these tests check the template logic alone. Each template's expected JSON output or error is
//! in `NAME.out` (newest opm behaviour) and, where opm v1.46 differs, `NAME@1.46.out`.
//! `OLMPACK_BLESS=1` rewrites the expected files (review the diff).

use crate::support::cmd::olmpack;
use crate::support::template_stand_in;

use olmpack::catalog::template::{OpmCompat, TemplateOptions, render_template};
use olmpack::catalog::write::{Format, write_config};
use std::path::{Path, PathBuf};
use template_stand_in::stand_in;

fn run(path: &Path, compat: OpmCompat) -> String {
    let text = std::fs::read_to_string(path).expect("template readable");
    let options = TemplateOptions {
        template_type: None,
        compat,
        jobs: 3,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match render_template(&name, &text, &options, &stand_in) {
        Ok(cfg) => {
            let mut out = Vec::new();
            write_config(&mut out, &cfg, Format::Json).expect("writable");
            String::from_utf8(out).expect("UTF-8")
        }
        Err(e) => format!("error: {e}\n"),
    }
}

#[test]
fn template_cases() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/templates");
    let bless = std::env::var("OLMPACK_BLESS").as_deref() == Ok("1");
    let mut templates: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/templates")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    templates.sort();
    assert!(templates.len() >= 10);
    let mut failures = Vec::new();
    for t in &templates {
        let stem = t
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let newest = run(t, OpmCompat::NEWEST);
        let old = run(t, OpmCompat::new(1, 46));
        let newest_file = dir.join(format!("{stem}.out"));
        let old_file = dir.join(format!("{stem}@1.46.out"));
        if bless {
            std::fs::write(&newest_file, &newest).expect("write");
            if old != newest {
                std::fs::write(&old_file, &old).expect("write");
            } else {
                let _ = std::fs::remove_file(&old_file);
            }
            continue;
        }
        let expected = std::fs::read_to_string(&newest_file).unwrap_or_default();
        if newest != expected {
            failures.push(format!("{stem} (newest):\n{newest}"));
        }
        let expected_old = std::fs::read_to_string(&old_file).unwrap_or(expected);
        if old != expected_old {
            failures.push(format!("{stem} (1.46):\n{old}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- The binary, with a real bundle folder from testdata through --bundle-map ----

fn map_file(dir: &Path) -> PathBuf {
    let bundle = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic");
    let file = dir.join("map.tsv");
    std::fs::write(
        &file,
        format!(
            "# published\tlocal\nquay.io/example/kvstore-bundle:1.2.0\t{}\n",
            bundle.display()
        ),
    )
    .expect("map");
    file
}

const SEMVER_KV: &str =
    "Schema: olm.semver\nStable:\n  Bundles:\n  - Image: quay.io/example/kvstore-bundle:1.2.0\n";

#[test]
fn cli_reads_stdin_keeps_the_published_reference_and_draws_mermaid() {
    let tmp = tempfile::tempdir().expect("tmp");
    let map = map_file(tmp.path());
    let out = olmpack()
        .args([
            "catalog",
            "template",
            "-",
            "-o",
            "yaml",
            "--offline",
            "--bundle-map",
        ])
        .arg(&map)
        .write_stdin(SEMVER_KV)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("---\ndefaultChannel: stable-v1.2\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "image: quay.io/example/kvstore-bundle:1.2.0\nname: kvstore-operator.v1.2.0\n"
        )
    );
    // The mermaid output of the rendered template equals `catalog graph` of that output.
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(catalog.join("kvstore-operator")).expect("mkdir");
    std::fs::write(catalog.join("kvstore-operator/catalog.yaml"), &out.stdout).expect("write");
    let mermaid = olmpack()
        .args([
            "catalog",
            "template",
            "-o",
            "mermaid",
            "--offline",
            "--type",
            "semver",
            "--bundle-map",
        ])
        .arg(&map)
        .arg("-")
        .write_stdin(SEMVER_KV)
        .output()
        .expect("runs");
    assert!(mermaid.status.success());
    let graph = olmpack()
        .args(["catalog", "graph", "-o", "mermaid"])
        .arg(&catalog)
        .output()
        .expect("runs");
    assert!(
        graph.status.success(),
        "{}",
        String::from_utf8_lossy(&graph.stderr)
    );
    assert_eq!(mermaid.stdout, graph.stdout);
    assert!(String::from_utf8_lossy(&graph.stdout).contains(
        "    subgraph kvstore-operator-stable-v1.2[\"stable-v1.2\"]\n      kvstore-operator-stable-v1.2-kvstore-operator.v1.2.0[\"kvstore-operator.v1.2.0\"]\n"
    ));
    for format in ["dot", "svg"] {
        olmpack()
            .args(["catalog", "graph", "-o", format])
            .arg(&catalog)
            .assert()
            .success();
    }
}

#[test]
fn cli_names_an_unmapped_reference_with_file_and_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let map = map_file(tmp.path());
    let template = tmp.path().join("t.yaml");
    std::fs::write(
        &template,
        format!("{SEMVER_KV}  - Image: quay.io/example/kvstore-bundle:9.9.9\n"),
    )
    .expect("write");
    let out = olmpack()
        .args(["catalog", "template", "--offline", "--bundle-map"])
        .arg(&map)
        .arg(&template)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("t.yaml:5: rendering template: quay.io/example/kvstore-bundle:9.9.9: not in the bundle map"), "{err}");
    assert!(out.stdout.is_empty());
    // A bad --opm-compat or migrate level is a usage error.
    olmpack()
        .args(["catalog", "template", "--opm-compat", "x"])
        .arg(&template)
        .assert()
        .code(2);
    olmpack()
        .args([
            "catalog",
            "template",
            "--offline",
            "--migrate-level",
            "sideways",
            "--bundle-map",
        ])
        .arg(&map)
        .arg(&template)
        .assert()
        .code(2);
}

#[test]
fn cli_local_image_source_renders_like_the_folder() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bundle = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic");
    let layout = tmp.path().join("layout");
    olmpack()
        .args(["bundle", "build", "--output"])
        .arg(format!("oci:{}:1.2.0", layout.display()))
        .arg(&bundle)
        .assert()
        .success();
    let image_map = tmp.path().join("image.map");
    std::fs::write(
        &image_map,
        format!(
            "quay.io/example/kvstore-bundle:1.2.0\toci:{}:1.2.0\n",
            layout.display()
        ),
    )
    .expect("map");
    let folder_map = map_file(tmp.path());
    let render = |map: &Path| {
        let out = olmpack()
            .args(["catalog", "template", "-", "-o", "yaml", "--offline"])
            .args([
                "--migrate-level",
                "bundle-object-to-csv-metadata",
                "--bundle-map",
            ])
            .arg(map)
            .write_stdin(SEMVER_KV)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let from_image = render(&image_map);
    assert_eq!(from_image, render(&folder_map));
    assert!(String::from_utf8_lossy(&from_image).contains("type: olm.csv.metadata"));
}

/// On the command line a repeated key in a basic template renders, with a warning naming the
/// template's file and line; in a semver template it is an error (exit 1), as with opm.
#[test]
fn repeated_keys_warn_in_basic_and_fail_in_semver_templates() {
    let tmp = tempfile::tempdir().expect("tmp");
    let map = map_file(tmp.path());
    let template = |name: &str, text: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).expect("write template");
        olmpack()
            .args([
                "catalog",
                "template",
                "--offline",
                "-o",
                "yaml",
                "--bundle-map",
            ])
            .arg(&map)
            .arg(&path)
            .output()
            .expect("runs")
    };
    let out = template(
        "basic.yaml",
        "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: kvstore-operator\n  defaultChannel: stable\n- schema: olm.channel\n  package: kvstore-operator\n  name: stable\n  entries:\n  - name: kvstore-operator.v1.2.0\n- schema: olm.bundle\n  image: quay.io/example/kvstore-bundle:1.2.0\nschema: olm.template.basic\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("basic.yaml:13: duplicate key \"schema\"")
            && stderr.contains("opm keeps the last value"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("name: kvstore-operator.v1.2.0"));
    let out = template(
        "semver.yaml",
        &format!("{SEMVER_KV}Stable:\n  Bundles: []\n"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("semver.yaml:5:") && stderr.contains("duplicate key \"Stable\""),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
