//! `olmpack bundle build` end to end: golden digests, reproducibility across processes, file
//! metadata and umask, outputs, and bad input. Runs the real binary.

use crate::support::cmd::olmpack_reproducible_in as olmpack;
use crate::support::fixtures::valid_basic;
use crate::support::fs::copy_dir;
use crate::support::proc::Bounded;
use olmpack::image::verify::{is_canonical_json, verify_image};
use olmpack::transport::layout::read_image;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Digest of testdata/bundles/valid-basic built with the defaults (OCI media types, two layers,
/// linux/amd64, no SOURCE_DATE_EPOCH). A change here means every user's digest changes: only
/// update it on purpose (new zlib-rs, a deliberate format change) and say so in the commit.
const GOLDEN_OCI: &str =
    "sha256:d7f8b70d1ea7a26ab8b189b0521591241200d9468dd68d934ed33e6f7d67f0e0 556";
/// Same bundle with `--format docker`.
const GOLDEN_DOCKER: &str =
    "sha256:8888600d34ad50e15c58db000348dfa49c16f0677ca8fb3cad8d85f5941f473a 584";

fn run(cmd: &mut Command) -> (Option<i32>, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.bounded_output().expect("the olmpack binary runs");
    (
        status.code(),
        String::from_utf8_lossy(&stdout).into(),
        String::from_utf8_lossy(&stderr).into(),
    )
}

fn build(cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = olmpack(cwd);
    cmd.args(["bundle", "build"]).args(args);
    run(&mut cmd)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

/// Nothing but `expected` is left in `dir` (no temporary siblings, no partial output).
fn assert_only(dir: &Path, expected: &[&str]) {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    names.sort();
    let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want, "unexpected files left in {}", dir.display());
}

#[test]
fn golden_digest_oci_and_docker_from_separate_processes() {
    let tmp = tempfile::tempdir().unwrap();
    for (format, golden) in [("oci", GOLDEN_OCI), ("docker", GOLDEN_DOCKER)] {
        for round in 0..2 {
            let out = format!("oci:{format}-{round}");
            let bundle = valid_basic();
            let (code, stdout, stderr) = build(
                tmp.path(),
                &[
                    bundle.to_str().unwrap(),
                    "--format",
                    format,
                    "--output",
                    &out,
                ],
            );
            assert_eq!(code, Some(0), "{stderr}");
            assert_eq!(stdout.trim_end(), golden, "format {format}, round {round}");
            assert_eq!(stdout.lines().count(), 1, "stdout is one line: {stdout:?}");
        }
    }
}

#[test]
fn digest_ignores_mtimes_modes_and_umask() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("bundle");
    // Copy under a strict umask, then scramble modes and times.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 077 && cp -r '{}' '{}'",
            valid_basic().display(),
            copy.display()
        ))
        .bounded_status()
        .unwrap();
    assert!(status.success());
    for (i, f) in files_under(&copy).iter().enumerate() {
        if f.is_file() {
            let mode = if i % 2 == 0 { 0o755 } else { 0o600 };
            fs::set_permissions(f, fs::Permissions::from_mode(mode)).unwrap();
        }
        let status = Command::new("touch")
            .args([
                "-h",
                "-d",
                &format!("2019-0{}-1{} 12:34:56", 1 + i % 9, i % 10),
            ])
            .arg(f)
            .bounded_status()
            .unwrap();
        assert!(status.success());
    }
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 027 && cd '{}' && exec env -u SOURCE_DATE_EPOCH '{}' bundle build '{}' --output oci:out > digest",
            tmp.path().display(),
            env!("CARGO_BIN_EXE_olmpack"),
            copy.display()
        ))
        .bounded_status()
        .unwrap();
    assert!(status.success());
    let digest = fs::read_to_string(tmp.path().join("digest")).unwrap();
    assert_eq!(digest.trim_end(), GOLDEN_OCI);
}

#[test]
fn source_date_epoch_sets_created_and_mtimes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = olmpack(tmp.path());
    cmd.env("SOURCE_DATE_EPOCH", "1700000000")
        .args(["bundle", "build"])
        .arg(valid_basic())
        .args(["--output", "oci:out:v1"]);
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, Some(0), "{stderr}");
    assert_ne!(stdout.trim_end(), GOLDEN_OCI);
    let image = read_image(&tmp.path().join("out"), Some("v1")).unwrap();
    let mut config = String::new();
    std::io::Read::read_to_string(&mut image.config.open().unwrap(), &mut config).unwrap();
    assert!(
        config.contains(r#""created":"2023-11-14T22:13:20Z""#),
        "{config}"
    );

    let mut cmd = olmpack(tmp.path());
    cmd.env("SOURCE_DATE_EPOCH", "yesterday")
        .args(["bundle", "build"])
        .arg(valid_basic());
    let (code, _, stderr) = run(&mut cmd);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("SOURCE_DATE_EPOCH"), "{stderr}");
}

#[test]
fn outputs_are_canonical_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = build(
        tmp.path(),
        &[
            valid_basic().to_str().unwrap(),
            "--digest-file",
            "d.txt",
            "-t",
            "quay.io/o/b:v1",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // Default output: ./bundle-image tagged with the -t tag.
    let layout = tmp.path().join("bundle-image");
    let image = read_image(&layout, Some("v1")).unwrap();
    verify_image(&image).unwrap();
    assert_eq!(
        stdout.split(' ').next().unwrap(),
        image.manifest.descriptor.digest
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("d.txt")).unwrap(),
        image.manifest.descriptor.digest
    );
    for name in ["index.json", "oci-layout"] {
        assert!(
            is_canonical_json(&fs::read(layout.join(name)).unwrap()),
            "{name}"
        );
    }
    for blob in [&image.manifest, &image.config] {
        let path = layout
            .join("blobs/sha256")
            .join(blob.descriptor.sha256_hex().unwrap());
        assert!(is_canonical_json(&fs::read(path).unwrap()));
    }
    assert_eq!(image.layers.len(), 2);
    assert_only(tmp.path(), &["bundle-image", "d.txt"]);
}

#[test]
fn adding_to_a_layout_keeps_other_images_and_replaces_the_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    let b = b.to_str().unwrap();
    assert_eq!(build(tmp.path(), &[b, "--output", "oci:l:one"]).0, Some(0));
    assert_eq!(
        build(
            tmp.path(),
            &[b, "--output", "oci:l:two", "--format", "docker"]
        )
        .0,
        Some(0)
    );
    assert_eq!(
        build(tmp.path(), &[b, "--output", "oci:l:one", "--single-layer"]).0,
        Some(0)
    );
    let layout = tmp.path().join("l");
    let index = fs::read_to_string(layout.join("index.json")).unwrap();
    assert_eq!(
        index.matches("org.opencontainers.image.ref.name").count(),
        2,
        "{index}"
    );
    let one = read_image(&layout, Some("one")).unwrap();
    assert_eq!(
        one.layers.len(),
        1,
        "tag one now names the single-layer image"
    );
    verify_image(&one).unwrap();
    let two = read_image(&layout, Some("two")).unwrap();
    assert_eq!(
        two.manifest.descriptor.media_type,
        olmpack::image::manifest::MEDIA_DOCKER_MANIFEST
    );
    verify_image(&two).unwrap();
    assert!(
        !files_under(&layout).iter().any(|p| p
            .strip_prefix(&layout)
            .unwrap()
            .to_string_lossy()
            .contains(".tmp")),
        "no temporary files left in the layout"
    );
}

#[test]
fn single_layer_and_scorecard_layers() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&valid_basic(), &bundle);
    fs::create_dir_all(bundle.join("tests/scorecard")).unwrap();
    fs::write(
        bundle.join("tests/scorecard/config.yaml"),
        "kind: Configuration\n",
    )
    .unwrap();
    let ann = bundle.join("metadata/annotations.yaml");
    let mut text = fs::read_to_string(&ann).unwrap();
    text.push_str("  operators.operatorframework.io.test.config.v1: tests/scorecard/\n");
    fs::write(&ann, text).unwrap();
    let b = bundle.to_str().unwrap();
    assert_eq!(
        build(tmp.path(), &[b, "--output", "oci:l:multi"]).0,
        Some(0)
    );
    assert_eq!(
        build(
            tmp.path(),
            &[b, "--output", "oci:l:single", "--single-layer"]
        )
        .0,
        Some(0)
    );
    let layout = tmp.path().join("l");
    let multi = read_image(&layout, Some("multi")).unwrap();
    assert_eq!(multi.layers.len(), 3);
    let single = read_image(&layout, Some("single")).unwrap();
    assert_eq!(single.layers.len(), 1);
    let list = |blob: &olmpack::image::Blob| {
        let olmpack::image::BlobSource::File(p) = &blob.source else {
            panic!()
        };
        let out = Command::new("tar")
            .arg("tzf")
            .arg(p)
            .bounded_output()
            .unwrap();
        assert!(
            out.status.success(),
            "tar tzf: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        list(&multi.layers[2]),
        "tests/\ntests/scorecard/\ntests/scorecard/config.yaml\n"
    );
    assert_eq!(
        list(&single.layers[0]).lines().collect::<Vec<_>>(),
        [
            "manifests/",
            "manifests/kvstore-operator-metrics_v1_service.yaml",
            "manifests/kvstore-operator.clusterserviceversion.yaml",
            "manifests/kvstore.example.com_kvclusters.yaml",
            "metadata/",
            "metadata/annotations.yaml",
            "metadata/dependencies.yaml",
            "tests/",
            "tests/scorecard/",
            "tests/scorecard/config.yaml",
        ]
    );
}

#[test]
fn symlinks_inside_are_resolved_whiteouts_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&valid_basic(), &bundle);
    symlink(
        "../metadata/dependencies.yaml",
        bundle.join("manifests/zz-link.yaml"),
    )
    .unwrap();
    fs::write(bundle.join("manifests/.wh.gone.yaml"), "").unwrap();
    let (code, _, stderr) = build(
        tmp.path(),
        &[
            bundle.to_str().unwrap(),
            "--no-validate",
            "--output",
            "oci:l:x",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: skipped") && stderr.contains(".wh.gone.yaml"),
        "{stderr}"
    );
    let image = read_image(&tmp.path().join("l"), Some("x")).unwrap();
    let olmpack::image::BlobSource::File(layer) = &image.layers[0].source else {
        panic!()
    };
    let out = Command::new("tar")
        .env("TZ", "UTC")
        .arg("-tvzf")
        .arg(layer)
        .bounded_output()
        .unwrap();
    assert!(
        out.status.success(),
        "tar -tvzf: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = String::from_utf8(out.stdout).unwrap();
    assert!(!listing.contains(".wh."), "{listing}");
    let link_line = listing
        .lines()
        .find(|l| l.contains("zz-link.yaml"))
        .unwrap();
    assert!(
        link_line.starts_with("-rw-r--r--"),
        "a regular file, not a link: {link_line}"
    );
}

// ---- bad input: clear error naming the path, non-zero exit, nothing left behind ----

fn assert_fails(tmp: &Path, args: &[&str], needles: &[&str]) {
    let before: Vec<_> = fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let (code, stdout, stderr) = build(tmp, args);
    assert_ne!(code, Some(0), "should fail: {args:?}\n{stderr}");
    assert!(stdout.is_empty(), "no digest on failure: {stdout}");
    for n in needles {
        assert!(stderr.contains(n), "stderr should mention {n:?}: {stderr}");
    }
    let after: Vec<_> = fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "no partial output");
}

#[test]
fn existing_non_layout_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("notes")).unwrap();
    fs::write(tmp.path().join("notes/todo.txt"), "keep me").unwrap();
    let b = valid_basic();
    assert_fails(
        tmp.path(),
        &[b.to_str().unwrap(), "--output", "oci:notes"],
        &["notes", "not an OCI image layout"],
    );
    assert_only(&tmp.path().join("notes"), &["todo.txt"]);
    // An empty folder is fine.
    fs::create_dir(tmp.path().join("empty")).unwrap();
    assert_eq!(
        build(tmp.path(), &[b.to_str().unwrap(), "--output", "oci:empty"]).0,
        Some(0)
    );
    assert!(tmp.path().join("empty/oci-layout").is_file());
}

#[test]
fn unwritable_output_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("file"), "").unwrap();
    let b = valid_basic();
    let b = b.to_str().unwrap();
    // A path below a regular file can never be written, even by root.
    for out in [
        "oci:file/layout",
        "oci-archive:file/x.tar",
        "docker-archive:file/x.tar",
    ] {
        assert_fails(tmp.path(), &[b, "--output", out], &["file/"]);
    }
    assert_fails(
        tmp.path(),
        &[b, "--output", "oci:x", "--digest-file", "file/d"],
        &["file/d"],
    );
    // Permission-based variant: a user who cannot write `ro` (uid 1001 through setpriv when the
    // suite runs as root, as in CI, since root writes anywhere).
    let ro = tmp.path().join("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    if crate::support::proc::can_switch_user() {
        crate::support::proc::open_up(&ro);
        let mut cmd = crate::support::proc::as_user(env!("CARGO_BIN_EXE_olmpack"));
        cmd.current_dir(&ro)
            .env_remove("SOURCE_DATE_EPOCH")
            .args(["bundle", "build", b, "--output", "oci:out"]);
        let (code, stdout, stderr) = run(&mut cmd);
        assert_ne!(
            code,
            Some(0),
            "should fail as a user who cannot write\n{stderr}"
        );
        assert!(stdout.is_empty(), "no digest on failure: {stdout}");
        for n in ["cannot write oci:out", "Permission denied"] {
            assert!(stderr.contains(n), "stderr should mention {n:?}: {stderr}");
        }
        assert_eq!(fs::read_dir(&ro).unwrap().count(), 0, "no partial output");
    } else {
        crate::support::shared::skip(
            "running as root and setpriv cannot switch to uid 1001: permission variant of the unwritable-output test",
        );
    }
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn symlink_loops_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&valid_basic(), &bundle);
    symlink(".", bundle.join("manifests/again")).unwrap();
    let out = tmp.path().join("out");
    fs::create_dir(&out).unwrap();
    assert_fails(
        &out,
        &[bundle.to_str().unwrap(), "--no-validate"],
        &["symbolic link loop", "manifests/again"],
    );

    fs::remove_file(bundle.join("manifests/again")).unwrap();
    symlink("b.yaml", bundle.join("manifests/a.yaml")).unwrap();
    symlink("a.yaml", bundle.join("manifests/b.yaml")).unwrap();
    assert_fails(
        &out,
        &[bundle.to_str().unwrap(), "--no-validate"],
        &["symbolic link loop", "manifests/a.yaml"],
    );
    // Without --no-validate the validator stops the build first (exit 1, findings on stderr).
    let (code, stdout, stderr) = build(&out, &[bundle.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stdout.is_empty() && stderr.contains("manifests/a.yaml"),
        "{stderr}"
    );
    assert_only(&out, &[]);
}

#[test]
fn symlink_escaping_the_bundle_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&valid_basic(), &bundle);
    fs::write(tmp.path().join("secret.txt"), "token").unwrap();
    symlink("../../secret.txt", bundle.join("manifests/secret.yaml")).unwrap();
    let out = tmp.path().join("out");
    fs::create_dir(&out).unwrap();
    assert_fails(
        &out,
        &[
            bundle.to_str().unwrap(),
            "--no-validate",
            "--output",
            "oci-archive:x.tar",
        ],
        &["points outside the bundle", "manifests/secret.yaml"],
    );
}

#[test]
fn label_contradicting_an_annotation_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    assert_fails(
        tmp.path(),
        &[
            b.to_str().unwrap(),
            "--label",
            "operators.operatorframework.io.bundle.package.v1=other",
        ],
        &[
            "operators.operatorframework.io.bundle.package.v1",
            "contradicts",
            "kvstore-operator",
        ],
    );
    // Repeating an annotation with the same value, or adding a new label, is fine.
    let (code, stdout, stderr) = build(
        tmp.path(),
        &[
            b.to_str().unwrap(),
            "--label",
            "operators.operatorframework.io.bundle.package.v1=kvstore-operator",
            "--label",
            "org.opencontainers.image.source=https://example.com/repo",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_ne!(
        stdout.trim_end(),
        GOLDEN_OCI,
        "the extra label is in the config"
    );
}

#[test]
fn missing_manifests_folder_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&valid_basic(), &bundle);
    fs::remove_dir_all(bundle.join("manifests")).unwrap();
    let out = tmp.path().join("out");
    fs::create_dir(&out).unwrap();
    assert_fails(
        &out,
        &[bundle.to_str().unwrap(), "--no-validate"],
        &["no manifests folder"],
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        vec!["--output", "dir:x"],
        vec!["--platform", "linux"],
        vec!["--label", "novalue"],
        vec!["--format", "v2s1"],
    ] {
        let (code, _, stderr) = build(tmp.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
    }
    assert_only(tmp.path(), &[]);
}

#[test]
fn validation_errors_stop_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&valid_basic(), &bundle);
    let csv = bundle.join("manifests/kvstore-operator.clusterserviceversion.yaml");
    fs::write(
        &csv,
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    fs::create_dir(&out).unwrap();
    let (code, stdout, stderr) = build(
        &out,
        &[
            bundle.to_str().unwrap(),
            "--digest-file",
            "d",
            "--output",
            "oci:l",
        ],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("error[") && stderr.contains("not building"),
        "{stderr}"
    );
    assert_only(&out, &[]);
    // --no-validate builds it anyway.
    let (code, stdout, stderr) = build(&out, &[bundle.to_str().unwrap(), "--no-validate"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("sha256:"));
}

/// A writer that cannot get the layout's lock in time says so and fails (exit 2) without
/// touching `index.json`; once the lock is free the same command works.
#[test]
fn a_locked_layout_is_a_clear_error_after_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    let b = b.to_str().unwrap();
    assert_eq!(build(tmp.path(), &[b, "--output", "oci:l:one"]).0, Some(0));
    let layout = tmp.path().join("l");
    let index_before = fs::read(layout.join("index.json")).unwrap();
    // Another writer (this test) holds the lock.
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(layout.join(olmpack::transport::layout::LOCK_FILE))
        .unwrap();
    lock.lock().unwrap();
    let mut cmd = olmpack(tmp.path());
    cmd.env(olmpack::transport::layout::LOCK_TIMEOUT_ENV, "0.3")
        .args(["bundle", "build", b, "--output", "oci:l:two"]);
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("is locked by another writer"), "{stderr}");
    assert!(stderr.contains("OLMPACK_LOCK_TIMEOUT"), "{stderr}");
    assert_eq!(fs::read(layout.join("index.json")).unwrap(), index_before);
    drop(lock);
    assert_eq!(build(tmp.path(), &[b, "--output", "oci:l:two"]).0, Some(0));
    let index = fs::read_to_string(layout.join("index.json")).unwrap();
    assert!(
        index.contains("\"two\"") && index.contains("\"one\""),
        "{index}"
    );
}
