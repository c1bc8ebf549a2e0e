//! The rule records as users meet them (`olmpack explain`), and the shapes of validation reports
//! (text with paths as typed, JSON, JSON Lines) for bundles and catalogs.

use assert_cmd::Command;
use std::path::PathBuf;

fn olmpack() -> Command {
    Command::cargo_bin("olmpack").expect("binary")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stdout_of(args: &[&str]) -> (i32, String, String) {
    let out = olmpack().args(args).output().expect("run");
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
    let _ = root();
}
