//! `catalog diff` on real pairs (every pair of consecutive OpenShift versions of the packages in
//! `../shared/catalogs/versions`), checked against bundle and channel sets computed here from
//! the files; and the exit codes of `--fail-on` on a hand-made regression.

use crate::support::cmd::olmpack;
use crate::support::json::strings;
use crate::support::proc::Bounded;
use crate::support::shared::shared_catalogs;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// Names of the blobs of `schema` (and their package) in a catalog.yaml, read independently of
/// olmpack (a `---` stream of mappings).
fn names(file: &Path, schema: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = BTreeSet::new();
    for doc in text.split("\n---\n") {
        let mut is_schema = false;
        let mut name = None;
        for line in doc.lines() {
            if line == format!("schema: {schema}") {
                is_schema = true;
            }
            if let Some(n) = line.strip_prefix("name: ") {
                name = Some(n.trim_matches('"').to_string());
            }
        }
        if let (true, Some(n)) = (is_schema, name) {
            out.insert(n);
        }
    }
    out
}

fn list(v: &Value) -> BTreeSet<String> {
    strings(v)
}

#[test]
fn diff_of_real_version_pairs() {
    let Some(catalogs) = shared_catalogs("versions") else {
        return;
    };
    let mut pairs = 0;
    let mut regressions = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        let root = catalogs.join("versions").join(repo);
        let mut versions: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        versions.sort_by_key(|v| v.trim_start_matches("v4.").parse::<u32>().unwrap_or(0));
        for w in versions.windows(2) {
            let (old, new) = (root.join(&w[0]), root.join(&w[1]));
            for pkg in std::fs::read_dir(&old).unwrap() {
                let pkg = pkg.unwrap().file_name();
                if !new.join(&pkg).is_dir() {
                    continue;
                }
                let (o, n) = (old.join(&pkg), new.join(&pkg));
                let out = olmpack()
                    .args(["catalog", "diff", "-o", "json"])
                    .arg(&o)
                    .arg(&n)
                    .succeeds();
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                let (ob, nb) = (
                    names(&o.join("catalog.yaml"), "olm.bundle"),
                    names(&n.join("catalog.yaml"), "olm.bundle"),
                );
                let p = v["packages"]
                    .as_array()
                    .and_then(|a| a.first())
                    .cloned()
                    .unwrap_or(Value::Null);
                let added: BTreeSet<String> = nb.difference(&ob).cloned().collect();
                let removed: BTreeSet<String> = ob.difference(&nb).cloned().collect();
                assert_eq!(list(&p["bundlesAdded"]), added, "{o:?} -> {n:?}");
                assert_eq!(list(&p["bundlesRemoved"]), removed, "{o:?} -> {n:?}");
                let (oc, nc) = (
                    names(&o.join("catalog.yaml"), "olm.channel"),
                    names(&n.join("catalog.yaml"), "olm.channel"),
                );
                let gone: BTreeSet<String> = oc.difference(&nc).cloned().collect();
                assert_eq!(list(&p["channelsRemoved"]), gone, "{o:?} -> {n:?}");
                for r in p["regressions"].as_array().into_iter().flatten() {
                    regressions.push(format!(
                        "{}/{} -> {}: {}",
                        pkg.to_string_lossy(),
                        w[0],
                        w[1],
                        r["message"].as_str().unwrap_or("")
                    ));
                }
                // The same pair the other way round, and text and markdown, must run too.
                for fmt in ["text", "markdown"] {
                    olmpack()
                        .args(["catalog", "diff", "-o", fmt])
                        .arg(&o)
                        .arg(&n)
                        .assert()
                        .success();
                }
                pairs += 1;
            }
        }
    }
    eprintln!(
        "{pairs} real pairs compared; regressions:\n{}",
        regressions.join("\n")
    );
    // 8 packages over 4.12..4.20/4.21: at least one pair per package and version step.
    assert!(pairs >= 60, "only {pairs} pairs");
}

const OLD: &str = r#"{"schema":"olm.package","name":"op","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"op","entries":[{"name":"op.v1.0.0"},{"name":"op.v1.1.0","replaces":"op.v1.0.0"},{"name":"op.v1.2.0","replaces":"op.v1.1.0"}]}
{"schema":"olm.bundle","name":"op.v1.0.0","package":"op","image":"quay.io/op/b:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"op.v1.1.0","package":"op","image":"quay.io/op/b:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.1.0"}}]}
{"schema":"olm.bundle","name":"op.v1.2.0","package":"op","image":"quay.io/op/b:1.2.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.2.0"}}]}
"#;

#[test]
fn a_dangling_bundle_fails_with_fail_on_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    std::fs::write(old.join("c.json"), OLD).unwrap();
    // op.v1.1.0 removed, op.v1.2.0 now replaces op.v1.0.0: users of 1.1.0 are stranded.
    let changed = OLD
        .replace(r#"{"name":"op.v1.1.0","replaces":"op.v1.0.0"},"#, "")
        .replace(r#""replaces":"op.v1.1.0""#, r#""replaces":"op.v1.0.0""#)
        .lines()
        .filter(|l| !l.contains(r#""name":"op.v1.1.0","package""#))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(new.join("c.json"), changed).unwrap();
    let text = "package op (changed)\n  REGRESSION [dangling] op.v1.1.0 is no longer in the channel and no entry replaces, skips or skipRange-covers it: installations of it are stranded\n  bundles removed: op.v1.1.0\n  edge added in stable: op.v1.0.0 -> op.v1.2.0 (replaces)\n  edge removed in stable: op.v1.0.0 -> op.v1.1.0 (replaces)\n  edge removed in stable: op.v1.1.0 -> op.v1.2.0 (replaces)\n0 package(s) added, 0 removed, 1 changed; 0 bundle(s) added, 1 removed, 0 changed; 1 regression(s)\n";
    olmpack()
        .args(["catalog", "diff"])
        .arg(&old)
        .arg(&new)
        .assert()
        .code(0)
        .stdout(text);
    olmpack()
        .args(["catalog", "diff", "--fail-on", "regression"])
        .arg(&old)
        .arg(&new)
        .assert()
        .code(1);
    // No change: exit 0 even with --fail-on any.
    olmpack()
        .args(["catalog", "diff", "--fail-on", "any"])
        .arg(&old)
        .arg(&old)
        .assert()
        .code(0)
        .stdout("no changes\n");
    // The reverse is an addition only: no regression, but a change.
    olmpack()
        .args(["catalog", "diff", "--fail-on", "regression"])
        .arg(&new)
        .arg(&old)
        .assert()
        .code(0);
    olmpack()
        .args(["catalog", "diff", "--fail-on", "any", "-o", "markdown"])
        .arg(&new)
        .arg(&old)
        .assert()
        .code(1)
        .stdout(predicates::str::contains(
            "| op | changed | 1 | 0 | 0 | 0 | 0 |",
        ));
    olmpack()
        .args(["catalog", "diff", "./nope", "./nope2"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no such file or folder"));
}
