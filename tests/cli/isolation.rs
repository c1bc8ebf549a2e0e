//! Defence in depth (issue 8 item 2): an internal failure of olmpack on one input never costs the
//! report of the others, never prints Rust's panic message, never exits 101 and never leaves a
//! partial output.
//!
//! The failure is made with the test hook `OLMPACK_TEST_PANIC_ON=<file name>` (see
//! `crates/ground/src/guard.rs`): the binary panics when it starts reading a file of that name.
//!
//! Rule covered here: "internal/error" (bundles and catalogs).

use crate::support::fixtures::{repo_root as root, valid_basic};
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const HOOK: &str = "OLMPACK_TEST_PANIC_ON";
/// The file that triggers the failure in the bundle that is meant to fail.
const TRIGGER: &str = "trigger-internal-failure.yaml";

/// The hook is in every build (it once needed the `test-hooks` feature).
fn hook_available() -> bool {
    true
}

/// Every file under a folder with its content (empty map when the folder does not exist).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("prefix").to_path_buf();
                out.insert(rel, fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn olmpack(cwd: &Path, hook: Option<&str>, args: &[&str]) -> Out {
    let mut cmd = crate::support::cmd::olmpack_cmd();
    cmd.current_dir(cwd).env("NO_COLOR", "1").env_remove(HOOK);
    if let Some(name) = hook {
        cmd.env(HOOK, name);
    }
    let out = cmd.args(args).bounded_output().expect("run olmpack");
    let result = Out {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    // Never Rust's own panic report.
    for needle in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(
            !result.stderr.contains(needle),
            "{args:?}: stderr shows a raw panic:\n{}",
            result.stderr
        );
    }
    assert_ne!(result.code, 101, "{args:?}: exit 101\n{}", result.stderr);
    result
}

/// A folder's text report as it appears in a run over several folders: each finding's path as
/// the user would type it (`NAME/manifests/x.yaml:3`), the rest unchanged.
fn as_typed(name: &str, text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let fixed = (line.starts_with("error[") || line.starts_with("warning["))
            .then(|| line.split_once("] "))
            .flatten()
            .and_then(|(head, rest)| {
                let (token, tail) = rest.split_once(' ')?;
                let location = token.strip_suffix(':')?;
                (location.contains('/') || location.contains('.'))
                    .then(|| format!("{head}] {name}/{location}: {tail}"))
            });
        out.push_str(fixed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// A batch of four bundles in which the third hits an internal failure: that bundle gets one
/// `internal/error` finding naming the file, the run exits 2, and every other bundle's report is
/// exactly what it is when validated alone, in text and in JSON.
#[test]
fn one_failing_bundle_does_not_cost_the_others_their_report() {
    if !hook_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path();
    // Bundles with different reports: valid, warnings only, errors, and the one that fails.
    copy_dir(&valid_basic(), &work.join("valid"));
    copy_dir(
        &root().join("testdata/bundles/broken/csv__skip-range"),
        &work.join("warns"),
    );
    copy_dir(
        &root().join("testdata/bundles/broken/csv__install-modes__duplicate"),
        &work.join("errs"),
    );
    copy_dir(&valid_basic(), &work.join("fails"));
    fs::copy(
        valid_basic().join("manifests/kvstore-operator-metrics_v1_service.yaml"),
        work.join("fails/manifests").join(TRIGGER),
    )
    .expect("copy trigger");
    let others = ["valid", "warns", "errs"];
    let batch = ["valid", "warns", "fails", "errs"];

    // JSON.
    let mut args = vec!["bundle", "validate", "-o", "json", "-j", "2"];
    args.extend(batch);
    let run = olmpack(work, Some(TRIGGER), &args);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    assert_eq!(json["passed"], false);
    let bundles = json["bundles"].as_array().expect("bundles");
    assert_eq!(bundles.len(), 4);
    let failed = &bundles[2];
    assert_eq!(failed["bundle"], "fails");
    let outputs = failed["outputs"].as_array().expect("outputs");
    assert_eq!(outputs.len(), 1, "{failed}");
    assert_eq!(outputs[0]["rule"], "internal/error");
    assert_eq!(outputs[0]["type"], "error");
    assert_eq!(
        outputs[0]["file"],
        format!("manifests/{TRIGGER}"),
        "the finding names the file being read"
    );
    let message = outputs[0]["message"].as_str().expect("message");
    assert!(message.contains(TRIGGER), "{message}");
    assert!(message.contains("please report"), "{message}");
    for (i, name) in batch.iter().enumerate() {
        if *name == "fails" {
            continue;
        }
        // The same bundle alone, with the hook set (it does not fire there).
        let alone = olmpack(
            work,
            Some(TRIGGER),
            &["bundle", "validate", "-o", "json", name],
        );
        let mut alone: Value = serde_json::from_str(&alone.stdout).expect("JSON");
        alone["bundle"] = Value::from(*name);
        assert_eq!(bundles[i], alone, "{name}: report differs from a run alone");
    }

    // Text.
    let mut args = vec!["bundle", "validate", "-j", "2"];
    args.extend(batch);
    let run = olmpack(work, Some(TRIGGER), &args);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    for name in others {
        let alone = olmpack(work, Some(TRIGGER), &["bundle", "validate", name]);
        assert!(
            run.stdout.contains(&as_typed(name, &alone.stdout)),
            "{name}: its full report is missing from the batch output:\n{}\n--- alone:\n{}",
            run.stdout,
            alone.stdout
        );
    }
    assert!(
        run.stdout.contains(&format!(
            "error[internal/error] fails/manifests/{TRIGGER}: internal error in olmpack while reading fails/manifests/{TRIGGER}"
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("fails: invalid (1 error, 0 warnings)"));
    assert!(
        run.stdout.contains("total: 4 bundles, 2 valid, 2 invalid"),
        "{}",
        run.stdout
    );

    // Without the hook the same batch has no internal error and exits 1 (errs has errors).
    let mut args = vec!["bundle", "validate"];
    args.extend(batch);
    let run = olmpack(work, None, &args);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!run.stdout.contains("internal/error"));
}

/// A bundle large enough that its manifests are parsed on several threads: a failure on one of
/// those threads is still that bundle's `internal/error` finding, naming the file.
#[test]
fn a_failure_on_a_parser_thread_names_its_file() {
    if !hook_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path();
    copy_dir(&valid_basic(), &work.join("big"));
    // Two ConfigMaps of 600 KB each: over the size at which parsing goes parallel.
    for n in 0..2 {
        let mut text =
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: filler-{n}\ndata:\n");
        let mut i = 0;
        while text.len() < 600 * 1024 {
            text.push_str(&format!("  key{i}: value number {i} of the filler map\n"));
            i += 1;
        }
        fs::write(work.join(format!("big/manifests/filler-{n}.yaml")), text).expect("write");
    }
    fs::copy(
        valid_basic().join("manifests/kvstore-operator-metrics_v1_service.yaml"),
        work.join("big/manifests").join(TRIGGER),
    )
    .expect("copy trigger");
    let hook = format!("parse:{TRIGGER}");
    let run = olmpack(
        work,
        Some(&hook),
        &["bundle", "validate", "-o", "json", "big"],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    let outputs = json["outputs"].as_array().expect("outputs");
    assert_eq!(outputs.len(), 1, "{json}");
    assert_eq!(outputs[0]["rule"], "internal/error");
    assert_eq!(outputs[0]["file"], format!("manifests/{TRIGGER}"));
    let message = outputs[0]["message"].as_str().expect("message");
    assert!(
        message.contains("OLMPACK_TEST_PANIC_ON test hook fired"),
        "{message}"
    );
    // Without the hook the bundle validates normally.
    let run = olmpack(work, None, &["bundle", "validate", "-o", "json", "big"]);
    assert!(!run.stdout.contains("internal/error"), "{}", run.stdout);
}

/// The single-input commands: a clear error naming the file, exit 2, and nothing written.
#[test]
fn init_build_inspect_and_pull_fail_cleanly_and_write_nothing() {
    if !hook_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path();
    const CSV: &str = "kvstore-operator.clusterserviceversion.yaml";
    let expect_clean_failure = |run: &Out, file: &str| {
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr
                .starts_with("error: internal error in olmpack while reading "),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains(file), "{}", run.stderr);
        assert!(run.stderr.contains("please report"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "partial output: {}", run.stdout);
    };

    // init: the bundle folder is left exactly as it was.
    let init_dir = work.join("init");
    copy_dir(&root().join("testdata/init/bundle-custom"), &init_dir);
    fs::remove_dir_all(init_dir.join("metadata")).expect("rm metadata");
    let before = tree(&init_dir);
    let run = olmpack(
        work,
        Some(CSV),
        &["bundle", "init", "init", "--channels", "stable"],
    );
    expect_clean_failure(&run, CSV);
    assert_eq!(tree(&init_dir), before, "init changed the folder");
    // A failure in the check init runs after writing says that the files were written.
    let run = olmpack(
        work,
        Some("dependencies.yaml"),
        &["bundle", "init", "init", "--channels", "stable"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error: init wrote the files listed above, but checking the bundle failed: internal error in olmpack while reading "
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("created init/metadata/dependencies.yaml")
    );
    assert!(init_dir.join("metadata/dependencies.yaml").is_file());

    // build: no layout and no digest file appear.
    copy_dir(&valid_basic(), &work.join("bundle"));
    // With validation the CSV fails while it is loaded; without, while its layer is written.
    for extra in [&[][..], &["--no-validate"][..]] {
        let hook = CSV;
        let mut args = vec![
            "bundle",
            "build",
            "bundle",
            "--output",
            "oci:layout:v1",
            "--digest-file",
            "digest",
        ];
        args.extend_from_slice(extra);
        let run = olmpack(work, Some(hook), &args);
        expect_clean_failure(&run, hook);
        assert!(!work.join("layout").exists(), "{extra:?}: layout written");
        assert!(!work.join("digest").exists(), "{extra:?}: digest written");
    }

    // A real image for inspect and pull, built without the hook.
    let run = olmpack(
        work,
        None,
        &["bundle", "build", "bundle", "--output", "oci:layout:v1"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let layout_before = tree(&work.join("layout"));

    // validate --image: the image's report is the internal/error finding, in valid JSON.
    let run = olmpack(
        work,
        Some(CSV),
        &[
            "bundle",
            "validate",
            "-o",
            "json",
            "--image",
            "oci:layout:v1",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    assert_eq!(json["outputs"][0]["rule"], "internal/error", "{json}");
    assert!(
        json["outputs"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains(CSV)),
        "{json}"
    );

    // inspect: reading the layers' file lists, and (with --no-files) the annotations.
    let run = olmpack(work, Some(CSV), &["bundle", "inspect", "oci:layout:v1"]);
    expect_clean_failure(&run, CSV);
    let run = olmpack(
        work,
        Some("annotations.yaml"),
        &["bundle", "inspect", "--no-files", "oci:layout:v1"],
    );
    expect_clean_failure(&run, "annotations.yaml");

    // pull: the target folder does not appear, and no temporary folder is left behind.
    let run = olmpack(
        work,
        Some(CSV),
        &["bundle", "pull", "oci:layout:v1", "pulled"],
    );
    expect_clean_failure(&run, CSV);
    assert!(!work.join("pulled").exists(), "pull left its folder");
    let leftovers: Vec<String> = fs::read_dir(work)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    assert_eq!(tree(&work.join("layout")), layout_before);

    // And every command still works without the hook.
    let run = olmpack(work, None, &["bundle", "pull", "oci:layout:v1", "pulled"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// The file that triggers the failure in the catalog that is meant to fail; without the hook it
/// is a syntax error (a finding, exit 1), so the hook's effect is visible.
const CATALOG_TRIGGER: &str = "trigger-internal-failure.json";

fn catalog(name: &str) -> PathBuf {
    root().join("testdata/catalogs").join(name)
}

/// A batch of catalogs in which one file of one catalog hits an internal failure: that catalog
/// gets one `internal/error` finding naming the file (its other file still loads fully, so no
/// rule blames the user), the run exits 2, and every other catalog's report is exactly what it
/// is when validated alone, in text and in JSON. Issue 8 item 2 (and 14) for catalogs.
#[test]
fn one_failing_catalog_file_does_not_cost_the_others_their_report() {
    if !hook_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path();
    copy_dir(&catalog("valid-basic"), &work.join("valid"));
    copy_dir(&catalog("valid-json"), &work.join("json"));
    copy_dir(&catalog("broken/head-not-highest"), &work.join("warns"));
    copy_dir(&catalog("broken/bundle-image"), &work.join("errs"));
    copy_dir(&catalog("valid-basic"), &work.join("fails"));
    fs::write(work.join("fails").join(CATALOG_TRIGGER), "{not json\n").expect("trigger");
    let batch = ["valid", "json", "warns", "fails", "errs"];
    let failing = 3;

    // JSON, several catalogs on two workers.
    let mut args = vec!["catalog", "validate", "-o", "json", "-j", "2"];
    args.extend(batch);
    let run = olmpack(work, Some(CATALOG_TRIGGER), &args);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    let catalogs = json["subjects"].as_array().expect("reports");
    assert_eq!(catalogs.len(), batch.len());
    let failed = &catalogs[failing];
    assert_eq!(failed["subject"], "fails");
    let outputs = failed["outputs"].as_array().expect("outputs");
    assert_eq!(outputs.len(), 1, "{failed}");
    assert_eq!(outputs[0]["rule"], "internal/error");
    assert_eq!(outputs[0]["type"], "error");
    assert_eq!(outputs[0]["file"], CATALOG_TRIGGER);
    let message = outputs[0]["message"].as_str().expect("message");
    assert!(message.contains(CATALOG_TRIGGER), "{message}");
    assert!(message.contains("please report"), "{message}");
    for (i, name) in batch.iter().enumerate() {
        if i == failing {
            continue;
        }
        let alone = olmpack(
            work,
            Some(CATALOG_TRIGGER),
            &["catalog", "validate", "-o", "json", name],
        );
        let alone: Value = serde_json::from_str(&alone.stdout).expect("JSON");
        assert_eq!(
            catalogs[i], alone["subjects"][0],
            "{name}: report differs from a run alone"
        );
    }

    // Text.
    let mut args = vec!["catalog", "validate", "-j", "2"];
    args.extend(batch);
    let run = olmpack(work, Some(CATALOG_TRIGGER), &args);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    for (i, name) in batch.iter().enumerate() {
        if i == failing {
            continue;
        }
        let alone = olmpack(work, Some(CATALOG_TRIGGER), &["catalog", "validate", name]);
        assert!(
            run.stdout.contains(&as_typed(name, &alone.stdout)),
            "{name}: its full report is missing from the batch output:\n{}\n--- alone:\n{}",
            run.stdout,
            alone.stdout
        );
    }
    assert!(
        run.stdout.contains(&format!(
            "error[internal/error] fails/{CATALOG_TRIGGER}: internal error in olmpack while reading fails/{CATALOG_TRIGGER}"
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("fails: invalid (1 error, 0 warnings)"));

    // The failing catalog alone: its files are parsed on two workers, and the other file keeps
    // its full result (valid-basic is valid, so the only finding is the internal error).
    let run = olmpack(
        work,
        Some(CATALOG_TRIGGER),
        &["catalog", "validate", "-o", "json", "-j", "2", "fails"],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    let outputs = json["subjects"][0]["outputs"].as_array().expect("outputs");
    assert_eq!(outputs.len(), 1, "{json}");
    assert_eq!(outputs[0]["rule"], "internal/error");
    assert_eq!(outputs[0]["file"], CATALOG_TRIGGER);

    // Without the hook the trigger is an ordinary syntax error: exit 1, no internal error.
    let mut args = vec!["catalog", "validate"];
    args.extend(batch);
    let run = olmpack(work, None, &args);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!run.stdout.contains("internal/error"));
    assert!(run.stdout.contains("catalog/syntax"), "{}", run.stdout);
}

/// A failure outside any one file (here: on the catalog folder itself) is caught per catalog:
/// that catalog gets one `internal/error` finding naming the folder, the others keep their
/// reports, the run exits 2.
#[test]
fn one_failing_catalog_does_not_cost_the_others_their_report() {
    if !hook_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path();
    let failing = "trigger-internal-failure-catalog";
    copy_dir(&catalog("valid-basic"), &work.join("valid"));
    copy_dir(&catalog("broken/bundle-image"), &work.join("errs"));
    copy_dir(&catalog("valid-json"), &work.join(failing));
    for jobs in ["1", "2"] {
        let run = olmpack(
            work,
            Some(failing),
            &["catalog", "validate", "-j", jobs, "valid", failing, "errs"],
        );
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(&format!(
                "error[internal/error] internal error in olmpack while reading {failing}:"
            )),
            "{}",
            run.stdout
        );
        for name in ["valid", "errs"] {
            let alone = olmpack(work, Some(failing), &["catalog", "validate", name]);
            assert!(
                run.stdout.contains(&as_typed(name, &alone.stdout)),
                "-j {jobs} {name}: its full report is missing:\n{}\n--- alone:\n{}",
                run.stdout,
                alone.stdout
            );
        }
    }
}
