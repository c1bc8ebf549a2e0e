//! What `catalog validate` took over from opm after v1.26 (issue 31): `--output-format
//! opm-json|opm-yaml` prints `opm validate -o json|yaml`'s structure (v1.68, #1971; upstream
//! has no test of its own for it, so the bytes are worked out from `cmd/opm/validate`), and the
//! four checks opm added since 1.26 are rule records with the opm release that introduced them,
//! each fired by a catalog here: pull-spec syntax of bundle images and relatedImages (#1905,
//! v1.64.0), skipRange parsing (#1987, v1.69.0), unique versions (#1417, v1.47.0) and RFC 1123
//! package names (#1307, v1.41.0).

use std::path::{Path, PathBuf};

fn run(args: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    let out = crate::support::cmd::olmpack_cmd()
        .args(["catalog", "validate"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bundle(name: &str, version: &str, image: &str, extra: &str) -> String {
    format!(
        r#"{{"schema":"olm.bundle","package":"my-op","name":"{name}","image":"{image}","properties":[{{"type":"olm.package","value":{{"packageName":"my-op","version":"{version}"}}}}]{extra}}}"#
    )
}

/// A valid two-bundle catalog with `edit` applied to its text.
fn catalog(tmp: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text = [
        r#"{"schema":"olm.package","name":"my-op","defaultChannel":"stable"}"#.to_string(),
        r#"{"schema":"olm.channel","package":"my-op","name":"stable","entries":[{"name":"my-op.v1.0.0"},{"name":"my-op.v1.1.0","replaces":"my-op.v1.0.0"}]}"#.to_string(),
        bundle("my-op.v1.0.0", "1.0.0", "quay.io/example/my-op-bundle:v1.0.0", ""),
        bundle("my-op.v1.1.0", "1.1.0", "quay.io/example/my-op-bundle:v1.1.0", ""),
    ]
    .join("\n")
        + "\n";
    let dir = tmp.join("catalog");
    std::fs::create_dir_all(dir.join("my-op")).unwrap();
    std::fs::write(dir.join("my-op/catalog.json"), edit(text)).unwrap();
    dir
}

#[test]
fn opm_json_and_yaml_output() {
    let tmp = tempfile::tempdir().unwrap();
    let good = catalog(tmp.path(), |t| t);
    let (code, out, err) = run(&["--output-format", "opm-json"], &good);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "{\n  \"passed\": true\n}\n");
    let (code, out, _) = run(&["--output-format", "opm-yaml"], &good);
    assert_eq!(code, Some(0));
    assert_eq!(out, "passed: true\n\n");

    let bad_tmp = tempfile::tempdir().unwrap();
    let bad = catalog(bad_tmp.path(), |t| {
        t.replace(r#""defaultChannel":"stable""#, r#""defaultChannel":"fast""#)
    });
    let (code, out, err) = run(&["--output-format", "opm-json"], &bad);
    assert_eq!(code, Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["passed"], false, "{out}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("fast"), "{out}");
    assert!(
        out.starts_with("{\n  \"passed\": false,\n  \"error\": {\n    \"message\": \""),
        "{out}"
    );
    assert!(out.ends_with("\"\n  }\n}\n"), "{out}");
    let (code, out, _) = run(&["--output-format", "opm-yaml"], &bad);
    assert_eq!(code, Some(1));
    assert!(out.starts_with("error:\n  message: "), "{out}");
    assert!(out.ends_with("passed: false\n\n"), "{out}");
    // An unknown format is a usage error.
    let (code, _, _) = run(&["--output-format", "xml"], &good);
    assert_eq!(code, Some(2));
}

#[test]
fn checks_opm_added_since_1_26_are_records_with_their_release() {
    let list = crate::support::cmd::olmpack_cmd()
        .args(["catalog", "validate", "--list-rules"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    type Edit = fn(String) -> String;
    let cases: [(&str, &str, Edit); 5] = [
        ("catalog/image-reference", "opm v1.64.0", |t| {
            t.replace(
                "quay.io/example/my-op-bundle:v1.1.0",
                "quay.io/example/My_Op-bundle:v1.1.0",
            )
        }),
        ("catalog/image-reference", "opm v1.64.0", |t| {
            t.replace(
                r#""version":"1.1.0"}}]"#,
                r#""version":"1.1.0"}}],"relatedImages":[{"name":"op","image":"quay.io/example/op:bad tag"}]"#,
            )
        }),
        ("catalog/skip-range", "opm v1.69.0", |t| {
            t.replace(
                r#""replaces":"my-op.v1.0.0""#,
                r#""replaces":"my-op.v1.0.0","skipRange":">=1.0.0 <1.1.0 oops""#,
            )
        }),
        ("catalog/duplicate-version", "opm v1.47.0", |t| {
            t.replace(r#""version":"1.1.0""#, r#""version":"1.0.0""#)
        }),
        ("catalog/package-name", "opm v1.41.0", |t| {
            t.replace("my-op", "My_Op")
        }),
    ];
    let mut ran = 0;
    for (rule, since, edit) in cases {
        let line = list
            .lines()
            .find(|l| l.starts_with(&format!("{rule} ")))
            .unwrap_or_else(|| panic!("{rule} is not listed:\n{list}"));
        assert!(line.contains(since), "{line}");
        let tmp = tempfile::tempdir().unwrap();
        let dir = catalog(tmp.path(), edit);
        let (code, out, err) = run(&["-o", "jsonl"], &dir);
        assert_eq!(code, Some(1), "{rule}: {out}{err}");
        assert!(out.contains(&format!("\"{rule}\"")), "{rule}: {out}");
        ran += 1;
    }
    assert_eq!(ran, 5);
}
