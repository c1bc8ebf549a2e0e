//! `catalog onboard` (issue 44 item 3): an operator's basic templates and ci.yaml mapping made
//! from its published catalogs, checked three ways: the round trip (onboard, then `catalog
//! matrix --offline --check` against the same published catalogs: every file unchanged, byte
//! for byte) on `testdata/matrix/repo` and on the shared real packages; each template's data
//! equal to what the pipelines' own `get_base_template_from_catalog` (operator-pipelines
//! `operatorcert/entrypoints/fbc_onboarding.py`, its few lines run here by Python's PyYAML)
//! makes of the same catalog; a catalog image as the source (built by `catalog build`) giving
//! the same template as its folder. Refusals write nothing.

use crate::support::cmd::olmpack;
use crate::support::fixtures::testdata;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use crate::support::shared;
use std::path::{Path, PathBuf};
use std::process::Command;

const OP: &str = "kvstore-operator";

fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("repo");
    copy_dir(&testdata("matrix/repo"), &root);
    (tmp, root)
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn onboard(root: &Path, op: &str, extra: &[&str]) -> std::process::Output {
    olmpack()
        .args(["catalog", "onboard", op, "--repo"])
        .arg(root)
        .args(extra)
        .bounded_output()
        .expect("olmpack runs")
}

fn matrix_check(root: &Path, op: &str) -> std::process::Output {
    olmpack()
        .args(["catalog", "matrix", "--offline", "--check", "--repo"])
        .arg(root)
        .arg(op)
        .bounded_output()
        .expect("olmpack runs")
}

/// The pipelines' `get_base_template_from_catalog` on a catalog folder's files, loaded with
/// PyYAML as their `opm render -o yaml` output is, and olmpack's template loaded the same way:
/// both as JSON (sorted keys) for comparison.
const PIPELINES_PY: &str = r#"
import json, os, sys, yaml

def get_base_template_from_catalog(operator_name, catalog):
    # operator-pipelines operatorcert/entrypoints/fbc_onboarding.py (GPL-3.0), verbatim logic.
    operator_items = (
        item
        for item in catalog
        if item.get("name") == operator_name or item.get("package") == operator_name
    )
    entries = []
    for item in operator_items:
        if item.get("schema") == "olm.bundle":
            entries.append({"schema": item["schema"], "image": item["image"]})
        else:
            entries.append(item)
    if not entries:
        return None
    return {"schema": "olm.template.basic", "entries": entries}

folder, package, ours = sys.argv[1:4]
items = []
for dirpath, dirs, files in sorted(os.walk(folder)):
    dirs.sort()
    for f in sorted(files):
        with open(os.path.join(dirpath, f)) as fh:
            items.extend(d for d in yaml.safe_load_all(fh) if d is not None)
want = get_base_template_from_catalog(package, items)
with open(ours) as fh:
    got = yaml.safe_load(fh)
print(json.dumps({"want": want, "got": got}, sort_keys=True))
"#;

#[test]
fn onboard_then_matrix_gives_the_published_catalogs_back() {
    let (_tmp, root) = repo();
    // The repository's operator is already on FBC: refused without --force, nothing written.
    let before = std::fs::read(root.join("operators").join(OP).join("ci.yaml")).unwrap();
    let r = onboard(&root, OP, &[]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r).contains("already on FBC (fbc.enabled: true); --force"),
        "{}",
        text(&r)
    );
    assert!(
        !root
            .join("operators")
            .join(OP)
            .join("catalog-templates/v4.15.yaml")
            .exists()
    );

    let r = onboard(&root, OP, &["--force"]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("package kvstore-operator from operators/kvstore-operator/1.1.0/metadata/annotations.yaml"),
        "{}",
        text(&r)
    );
    let ci = std::fs::read_to_string(root.join("operators").join(OP).join("ci.yaml")).unwrap();
    assert_ne!(ci.as_bytes(), before.as_slice());
    for v in ["v4.15", "v4.16", "v4.17", "v4.18", "v4.19"] {
        assert!(
            ci.contains(&format!("  - catalog_names:\n    - {v}\n    template_name: {v}.yaml\n    type: olm.template.basic\n")),
            "{ci}"
        );
        assert!(
            root.join("operators")
                .join(OP)
                .join(format!("catalog-templates/{v}.yaml"))
                .is_file()
        );
    }
    assert!(
        ci.starts_with("---\nfbc:\n  catalog_mapping:\n") && ci.contains("  enabled: true\n"),
        "{ci}"
    );
    // The round trip: every published catalog comes back byte for byte.
    let m = matrix_check(&root, OP);
    assert!(m.status.success(), "{}", text(&m));
    let out = String::from_utf8_lossy(&m.stdout).into_owned();
    assert_eq!(out.matches("\tunchanged\t").count(), 5, "{}", text(&m));

    // The pipelines' own function on the same catalogs gives the same template data.
    let mut compared = 0;
    for v in ["v4.15", "v4.16", "v4.17", "v4.18", "v4.19"] {
        let py = Command::new(shared::PYTHON)
            .arg("-c")
            .arg(PIPELINES_PY)
            .arg(root.join("catalogs").join(v))
            .arg(OP)
            .arg(
                root.join("operators")
                    .join(OP)
                    .join(format!("catalog-templates/{v}.yaml")),
            )
            .output_within(crate::support::proc::LIMIT)
            .unwrap();
        assert!(py.status.success(), "{}", text(&py));
        let j: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
        assert_eq!(j["want"], j["got"], "{v}");
        compared += 1;
    }
    shared::cases_exactly("templates equal to the pipelines' function", compared, 5, 5);

    // A catalog image as the source: the same template as its folder.
    let image = root.parent().unwrap().join("v4.16-image");
    let b = olmpack()
        .args(["catalog", "build"])
        .arg(root.join("catalogs/v4.16"))
        .arg("--output")
        .arg(format!("oci:{}:v1", image.display()))
        .bounded_output()
        .unwrap();
    assert!(b.status.success(), "{}", text(&b));
    let out = root.parent().unwrap().join("from-image");
    let r = onboard(
        &root,
        OP,
        &[
            "--force",
            "--from",
            &format!("v4.16=oci:{}:v1", image.display()),
            "--output-dir",
            out.to_str().unwrap(),
        ],
    );
    assert!(r.status.success(), "{}", text(&r));
    assert_eq!(
        std::fs::read(
            out.join("operators")
                .join(OP)
                .join("catalog-templates/v4.16.yaml")
        )
        .unwrap(),
        std::fs::read(
            root.join("operators")
                .join(OP)
                .join("catalog-templates/v4.16.yaml")
        )
        .unwrap()
    );
    let ci = std::fs::read_to_string(out.join("operators").join(OP).join("ci.yaml")).unwrap();
    assert!(ci.contains("- v4.16\n") && !ci.contains("v4.15"), "{ci}");
}

#[test]
fn onboard_refusals_write_nothing() {
    let (tmp, root) = repo();
    let out = tmp.path().join("out");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--from", "4.x=catalogs"],
            "the OpenShift version must be like v4.18",
        ),
        (&["--from", "v4.16"], "expected OCP=SOURCE"),
        (&["--from", "v4.16=/no/such/folder"], "v4.16:"),
        (
            &["--package", "no-such-package"],
            "package \"no-such-package\" (from --package) is in none of the 5 catalogs read; nothing written",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["--force", "--output-dir", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let r = onboard(&root, OP, &args);
        assert_eq!(r.status.code(), Some(2), "{extra:?}: {}", text(&r));
        assert!(text(&r).contains(want), "{extra:?}: {}", text(&r));
        assert!(!out.exists(), "{extra:?} wrote something");
    }
    let r = onboard(&root, "no-such-op", &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        text(&r).contains("no-such-op: no such operator folder"),
        "{}",
        text(&r)
    );
    let r = onboard(&root, "../x", &[]);
    assert_eq!(r.status.code(), Some(2));
}

/// The round trip on the shared real packages (community-operators-prod and
/// certified-operators checkouts laid out as the pipelines expect, with several bundles and
/// channels): onboard each, then `catalog matrix --offline --check`: every catalog the
/// original templates reproduce, the onboarded ones reproduce too.
#[test]
fn onboard_round_trip_on_shared_real_packages() {
    let Some(catalogs) = shared::shared_catalogs("packages") else {
        return;
    };
    let mut files = 0;
    for repo_name in ["community-operators-prod", "certified-operators"] {
        let src = catalogs.join("packages").join(repo_name);
        let ops: Vec<String> = std::fs::read_dir(src.join("operators"))
            .map(|r| {
                r.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|o| {
                        std::fs::read_to_string(src.join("operators").join(o).join("ci.yaml"))
                            .is_ok_and(|t| t.contains("catalog_mapping"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for op in ops {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("repo");
            copy_dir(&src, &root);
            let before = matrix_check(&root, &op);
            let r = onboard(&root, &op, &["--force"]);
            assert!(r.status.success(), "{op}: {}", text(&r));
            let after = matrix_check(&root, &op);
            let unchanged = |o: &std::process::Output| {
                String::from_utf8_lossy(&o.stdout)
                    .matches("\tunchanged\t")
                    .count()
            };
            assert!(
                unchanged(&after) >= unchanged(&before),
                "{op}: onboarded templates reproduce fewer catalogs\n{}\n{}",
                text(&before),
                text(&after)
            );
            files += unchanged(&after);
        }
    }
    eprintln!("onboard round trip: {files} published catalogs given back byte for byte");
    // catalog_matrix's own test: 34 of these are reproduced by the original templates.
    shared::cases("onboard round trip real catalogs", files, 34);
}

/// An operator not on FBC yet whose checkout already holds a template of the name onboarding
/// writes: without --force that file is the user's and stays, and nothing is written.
#[test]
fn onboard_keeps_an_existing_template_without_force() {
    let (_tmp, root) = repo();
    let ci = root.join(format!("operators/{OP}/ci.yaml"));
    std::fs::write(&ci, "reviewers:\n  - someone\n").expect("ci.yaml");
    let ocp = std::fs::read_dir(root.join("catalogs"))
        .expect("catalogs")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with('v'))
        .expect("a catalogs/v4.x folder");
    let mine = root.join(format!("operators/{OP}/catalog-templates/{ocp}.yaml"));
    std::fs::write(&mine, "# my own template\n").expect("template");
    let r = onboard(&root, OP, &[]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r).contains("exists; --force replaces"),
        "{}",
        text(&r)
    );
    assert_eq!(
        std::fs::read_to_string(&mine).expect("template"),
        "# my own template\n"
    );
    assert_eq!(
        std::fs::read_to_string(&ci).expect("ci.yaml"),
        "reviewers:\n  - someone\n"
    );
}

/// A `ci.yaml` of more than one YAML document (review): onboarding used to rewrite only the
/// first and drop the rest. The pipelines load ci.yaml with PyYAML's `safe_load`, which fails on
/// such a stream; onboarding now refuses it at the second document's line and writes nothing.
/// PyYAML itself is asked which of the cases it refuses, so the two agree case by case.
#[test]
fn onboard_refuses_a_ci_yaml_of_several_documents() {
    let cases: &[(&str, Option<usize>)] = &[
        (
            "reviewers:\n  - someone\n---\nupdateGraph: semver-mode\n",
            Some(3),
        ),
        ("---\n---\nreviewers:\n  - someone\n", Some(2)),
        ("reviewers:\n  - someone\n---\n", Some(3)),
        ("# c\n---\nreviewers:\n  - someone\n...\n", None),
    ];
    for (ci_text, refused_at) in cases {
        if let Some(ok) = pyyaml_loads_one_document(ci_text) {
            assert_eq!(ok, refused_at.is_none(), "PyYAML on {ci_text:?}");
        }
        let (_tmp, root) = repo();
        let ci = root.join(format!("operators/{OP}/ci.yaml"));
        std::fs::write(&ci, ci_text).expect("ci.yaml");
        let templates = root.join(format!("operators/{OP}/catalog-templates"));
        let before = std::fs::read_dir(&templates).map_or(0, |d| d.count());
        let r = onboard(&root, OP, &["--force"]);
        match refused_at {
            Some(line) => {
                assert_eq!(r.status.code(), Some(2), "{ci_text:?}: {}", text(&r));
                let want = format!("ci.yaml:{line}: a second YAML document");
                assert!(text(&r).contains(&want), "{ci_text:?}: {}", text(&r));
                assert_eq!(std::fs::read_to_string(&ci).expect("ci.yaml"), *ci_text);
                let after = std::fs::read_dir(&templates).map_or(0, |d| d.count());
                assert_eq!(before, after, "{ci_text:?}: a template was written");
            }
            None => {
                assert_eq!(r.status.code(), Some(0), "{ci_text:?}: {}", text(&r));
                let written = std::fs::read_to_string(&ci).expect("ci.yaml");
                assert!(written.contains("reviewers:\n- someone\n"), "{written}");
            }
        }
    }
}

/// Whether PyYAML's `safe_load` reads `text` (one document); `None` without python3/PyYAML.
fn pyyaml_loads_one_document(text: &str) -> Option<bool> {
    let r = Command::new(shared::PYTHON)
        .args([
            "-c",
            "import sys, yaml\ntry:\n    yaml.safe_load(sys.argv[1]); print('ok')\nexcept yaml.YAMLError: print('refused')",
            text,
        ])
        .bounded_output()
        .ok()?;
    match String::from_utf8_lossy(&r.stdout).trim() {
        "ok" => Some(true),
        "refused" => Some(false),
        _ => None,
    }
}
