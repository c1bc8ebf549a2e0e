//! The rule records as users meet them (`olmpack explain`), and the shapes of validation reports
//! (text with paths as typed, JSON, JSON Lines) for bundles and catalogs.

use crate::support::cmd::{olmpack, run_in};
use crate::support::fixtures::repo_root as root;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use serde_json::Value;
use std::fs;

fn stdout_of(args: &[&str]) -> (i32, String, String) {
    let out = olmpack().args(args).bounded_output().expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn explain_prints_a_bundle_rule_like_ruff_rule() {
    let (code, out, err) = stdout_of(&["explain", "csv/min-kube-version"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "# csv/min-kube-version\n\nBundle rule, error by default, since olmpack 0.1.0.\n"
        ),
        "{out}"
    );
    assert!(out.contains("\n## What it checks\n\n"), "{out}");
    assert!(out.contains("\n## Why\n\nOLM v0 parses it"), "{out}");
    assert!(out.contains("\n## Example\n\n    spec:\n      minKubeVersion: v1.19\n\nInstead:\n\n    spec:\n      minKubeVersion: 1.19.0\n"), "{out}");
}

#[test]
fn explain_says_since_which_opm_a_catalog_rule_is_checked() {
    let (code, out, _) = stdout_of(&["explain", "catalog/skip-range"]);
    assert_eq!(code, 0);
    assert!(out.contains("Catalog rule, error by default, since olmpack 0.1.0.\nopm validate checks it: v1.69.0.\n"), "{out}");
    let (code, out, _) = stdout_of(&["explain", "catalog/unreachable"]);
    assert_eq!(code, 0);
    assert!(out.contains("opm validate does not check it"), "{out}");
}

#[test]
fn explain_prints_a_package_manifest_rule_with_its_why() {
    let (code, out, err) = stdout_of(&["explain", "packagemanifest/version-multiple-csvs"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("# packagemanifest/version-multiple-csvs\n"),
        "{out}"
    );
    assert!(
        out.contains("Package manifest rule, error by default, since olmpack 0.1.0."),
        "{out}"
    );
    assert!(
        out.contains("more than one ClusterServiceVersion is found in bundle"),
        "{out}"
    );
    assert!(out.contains("Instead:"), "{out}");
    // The family is listed where package manifests are validated, and only there.
    let (_, bundles, _) = stdout_of(&["bundle", "validate", "--list-rules"]);
    assert_eq!(
        bundles
            .lines()
            .filter(|l| l.starts_with("packagemanifest/"))
            .count(),
        27
    );
    let (_, catalogs, _) = stdout_of(&["catalog", "validate", "--list-rules"]);
    assert!(!catalogs.contains("packagemanifest/"), "{catalogs}");
}

#[test]
fn explain_knows_every_listed_rule() {
    for command in ["bundle", "catalog"] {
        let (code, list, _) = stdout_of(&[command, "validate", "--list-rules"]);
        assert_eq!(code, 0);
        for id in list.lines().filter_map(|l| l.split_whitespace().next()) {
            let (code, out, err) = stdout_of(&["explain", id]);
            assert_eq!(code, 0, "{id}: {err}");
            assert!(out.starts_with(&format!("# {id}\n")), "{out}");
        }
    }
}

#[test]
fn explain_an_unknown_rule_exits_2_with_close_matches() {
    let (code, out, err) = stdout_of(&["explain", "csv/mising"]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("unknown rule \"csv/mising\"; did you mean csv/missing?"),
        "{err}"
    );
    let (code, _, err) = stdout_of(&["explain", "skip-range"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("catalog/skip-range") && err.contains("csv/skip-range"),
        "{err}"
    );
    let (code, _, err) = stdout_of(&["explain", "nothing-like-it"]);
    assert_eq!(code, 2);
    assert!(err.contains("--list-rules"), "{err}");
}

/// Two catalog folders and two bundle folders, one of each broken, under one temporary folder.
fn workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().expect("tempdir");
    let catalogs = root().join("testdata/catalogs");
    copy_dir(
        &catalogs.join("valid-basic"),
        &work.path().join("cats/good"),
    );
    copy_dir(
        &catalogs.join("broken/bundle-image"),
        &work.path().join("cats/bad"),
    );
    let bundles = root().join("testdata/bundles");
    copy_dir(
        &bundles.join("valid-basic"),
        &work.path().join("bundles/good"),
    );
    copy_dir(
        &bundles.join("broken/csv__missing"),
        &work.path().join("bundles/bad"),
    );
    work
}

#[test]
fn several_folders_print_each_finding_with_the_path_as_typed() {
    let work = workspace();
    let (code, out, err) = run_in(
        work.path(),
        &[
            "catalog",
            "validate",
            "--color",
            "never",
            "cats/good",
            "./cats/bad/",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("error[catalog/bundle-image] ./cats/bad/catalog.yaml:27: "),
        "{out}"
    );
    assert!(
        out.contains("\n./cats/bad/: invalid (1 error, 0 warnings)\n"),
        "{out}"
    );
    // One folder: paths stay relative to it.
    let (_, out, _) = run_in(
        work.path(),
        &["catalog", "validate", "--color", "never", "cats/bad"],
    );
    assert!(
        out.starts_with("error[catalog/bundle-image] catalog.yaml:27: "),
        "{out}"
    );

    let (code, out, err) = run_in(
        work.path(),
        &[
            "bundle",
            "validate",
            "--color",
            "never",
            "bundles/good",
            "bundles/bad",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let finding = out
        .lines()
        .find(|l| l.starts_with("error[csv/missing]"))
        .expect("csv/missing");
    assert!(
        finding.starts_with("error[csv/missing] bundles/bad/manifests"),
        "{out}"
    );
}

#[test]
fn json_shapes_keep_operator_sdk_for_one_bundle_and_neutral_keys_for_catalogs() {
    let work = workspace();
    let json = |args: &[&str]| -> (i32, Value) {
        let (code, out, err) = run_in(work.path(), args);
        let value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        (code, value)
    };
    // One bundle: exactly operator-sdk's keys.
    let (code, one) = json(&["bundle", "validate", "-o", "json", "bundles/bad"]);
    assert_eq!(code, 1);
    let keys: Vec<&String> = one.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["outputs", "passed"]);
    let first = &one["outputs"][0];
    for key in ["type", "rule", "message", "file", "line"] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    // Several bundles: the bundles list, each naming its folder.
    let (_, many) = json(&[
        "bundle",
        "validate",
        "-o",
        "json",
        "bundles/good",
        "bundles/bad",
    ]);
    assert_eq!(many["passed"], false);
    assert_eq!(many["bundles"][1]["bundle"], "bundles/bad");
    // Catalogs, one or several: subjects with neutral keys, never "bundle".
    for dirs in [vec!["cats/bad"], vec!["cats/good", "cats/bad"]] {
        let mut args = vec!["catalog", "validate", "-o", "json"];
        args.extend(&dirs);
        let (code, value) = json(&args);
        assert_eq!(code, 1);
        assert!(
            value.get("bundles").is_none() && value.get("outputs").is_none(),
            "{value}"
        );
        let subjects = value["subjects"].as_array().expect("subjects");
        assert_eq!(subjects.len(), dirs.len());
        let bad = subjects.last().expect("bad");
        assert_eq!(bad["subject"], "cats/bad");
        assert_eq!(bad["kind"], "catalog");
        assert_eq!(bad["outputs"][0]["path"], "cats/bad/catalog.yaml");
        assert!(!value.to_string().contains("\"bundle\""), "{value}");
    }
}

#[test]
fn json_lines_give_one_object_per_subject_for_bundles_and_catalogs() {
    let work = workspace();
    for (command, dirs, kind) in [
        ("bundle", ["bundles/good", "bundles/bad"], "bundle"),
        ("catalog", ["cats/good", "cats/bad"], "catalog"),
    ] {
        let (code, out, err) = run_in(
            work.path(),
            &[command, "validate", "-o", "jsonl", dirs[0], dirs[1]],
        );
        assert_eq!(code, 1, "{err}");
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        for (line, dir) in lines.iter().zip(dirs) {
            let keys: Vec<&String> = line.as_object().expect("object").keys().collect();
            assert_eq!(
                keys,
                [
                    "errors", "hints", "kind", "outputs", "passed", "subject", "warnings"
                ]
            );
            assert_eq!(line["subject"], dir);
            assert_eq!(line["kind"], kind);
        }
        assert_eq!(lines[0]["passed"], true);
        assert_eq!(lines[1]["passed"], false);
        let path = lines[1]["outputs"][0]["path"].as_str().unwrap_or("");
        assert!(path.is_empty() || path.starts_with(dirs[1]), "{out}");
        // A single subject is one line too: the shape never depends on the count.
        let (_, one, _) = run_in(work.path(), &[command, "validate", "-o", "jsonl", dirs[1]]);
        assert_eq!(one.lines().count(), 1, "{one}");
        assert_eq!(serde_json::from_str::<Value>(&one).expect("json"), lines[1]);
    }
}

/// Issue 20 item 7: a YAML syntax error that loses a bundle blob comes before the
/// missing-bundle error it causes, although that one is on an earlier line.
#[test]
fn catalog_validate_lists_root_causes_first() {
    let work = tempfile::tempdir().expect("tempdir");
    let text = fs::read_to_string(root().join("testdata/catalogs/valid-basic/catalog.yaml"))
        .expect("catalog");
    let broken: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 28 {
                "  value: {packageName: foo, version: 0.2.0".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    fs::create_dir(work.path().join("cat")).expect("mkdir");
    fs::write(
        work.path().join("cat/catalog.yaml"),
        broken.join("\n") + "\n",
    )
    .expect("write");
    let (code, out, _) = run_in(
        work.path(),
        &["catalog", "validate", "--color", "never", "cat"],
    );
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("error[catalog/syntax] catalog.yaml:29: "),
        "{out}"
    );
    assert!(
        lines[1].starts_with("error[catalog/entry-missing-bundle] catalog.yaml:11: "),
        "{out}"
    );
}

/// Issue 20 item 7: a `.git` folder inside a catalog gives one hint about `.indexignore`, and
/// the hint is right: with the suggested file the catalog is valid.
#[test]
fn a_git_folder_inside_a_catalog_gets_an_indexignore_hint() {
    let work = tempfile::tempdir().expect("tempdir");
    let cat = work.path().join("cat");
    copy_dir(&root().join("testdata/catalogs/valid-basic"), &cat);
    fs::create_dir_all(cat.join(".git/refs/heads")).expect("mkdir");
    fs::write(cat.join(".git/HEAD"), "ref: refs/heads/main\n").expect("write");
    fs::write(cat.join(".git/config"), "[core]\n\tbare = false\n").expect("write");
    fs::write(cat.join(".git/refs/heads/main"), "0123abcd\n").expect("write");
    fs::write(
        cat.join("README.md"),
        "# My catalog\n\nSee `catalog.yaml`.\n",
    )
    .expect("write");
    let (code, out, _) = run_in(
        work.path(),
        &["catalog", "validate", "--color", "never", "cat"],
    );
    assert_eq!(code, 1, "{out}");
    let hints: Vec<&str> = out.lines().filter(|l| l.starts_with("hint: ")).collect();
    assert_eq!(hints.len(), 1, "{out}");
    assert!(hints[0].contains(".git/"), "{out}");
    assert!(hints[0].contains("README.md"), "{out}");
    assert!(hints[0].contains(".indexignore"), "{out}");
    // The hint comes after the findings, before the verdict.
    let last = out.lines().last().unwrap_or("");
    assert!(last.starts_with("cat: invalid"), "{out}");
    // JSON carries it too.
    let (_, json, _) = run_in(work.path(), &["catalog", "validate", "-o", "jsonl", "cat"]);
    let value: Value = serde_json::from_str(json.trim()).expect("json");
    assert_eq!(value["hints"].as_array().map(Vec::len), Some(1), "{value}");
    // Following the hint makes the catalog valid.
    fs::write(cat.join(".indexignore"), ".git\nREADME.md\n").expect("write");
    let (code, out, _) = run_in(
        work.path(),
        &["catalog", "validate", "--color", "never", "cat"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("hint:"), "{out}");
}

#[test]
fn a_valid_catalog_gets_no_hint() {
    let (code, out, _) = stdout_of(&[
        "catalog",
        "validate",
        "--color",
        "never",
        root()
            .join("testdata/catalogs/valid-basic")
            .to_str()
            .expect("utf-8"),
    ]);
    assert_eq!(code, 0);
    assert!(!out.contains("hint:"), "{out}");
}
