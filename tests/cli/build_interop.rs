//! Interop: images from `olmpack bundle build` read by independent tools (skopeo, umoci, GNU
//! tar). A missing tool fails the test with a hint: `scripts/test.sh` installs them.

use crate::support::cmd::olmpack_reproducible_in;
use crate::support::fixtures::valid_basic;
use crate::support::proc::Bounded;
use olmpack::image::BlobSource;
use olmpack::transport::layout::read_image;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tool(name: &str) -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .bounded_output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{name} is not installed: run scripts/test.sh, which installs the test tools"
    );
    Command::new(name)
}

/// Runs a command, panicking with its stderr when it fails; returns stdout.
fn ok(cmd: &mut Command) -> String {
    let out = cmd.bounded_output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into()
}

fn olmpack_build(cwd: &Path, args: &[&str]) -> String {
    let mut cmd = olmpack_reproducible_in(cwd);
    cmd.args(["bundle", "build"]).args(args);
    ok(&mut cmd).split(' ').next().unwrap().to_string()
}

/// The annotations of a bundle, read independently of olmpack (flat `key: value` lines).
fn annotations(bundle: &Path) -> BTreeMap<String, String> {
    let text = fs::read_to_string(bundle.join("metadata/annotations.yaml")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("  ") && l.contains(':'))
        .map(|l| {
            let (k, v) = l.trim().split_once(':').unwrap();
            (k.trim().to_string(), v.trim().trim_matches('"').to_string())
        })
        .collect()
}

fn labels_of(inspect_json: &str) -> BTreeMap<String, String> {
    let v: Value = serde_json::from_str(inspect_json).unwrap();
    v["Labels"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

/// Every file and folder under `dir`, relative, with file contents.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if p.is_dir() {
                out.insert(rel, None);
                walk(root, &p, out);
            } else {
                out.insert(rel, Some(fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// What the image's root file system must hold: exactly the bundle's manifests and metadata.
fn expected_rootfs() -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut want = BTreeMap::new();
    for folder in ["manifests", "metadata"] {
        want.insert(PathBuf::from(folder), None);
        for (rel, content) in tree(&valid_basic().join(folder)) {
            want.insert(Path::new(folder).join(rel), content);
        }
    }
    want
}

fn umoci_rootfs(layout: &Path, tag: &str, into: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    ok(tool("umoci")
        .args(["unpack", "--rootless", "--image"])
        .arg(format!("{}:{tag}", layout.display()))
        .arg(into));
    tree(&into.join("rootfs"))
}

#[test]
fn skopeo_reads_labels_and_manifest_of_the_oci_layout_and_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    let digest = olmpack_build(tmp.path(), &[b.to_str().unwrap(), "--output", "oci:l:v1"]);
    let inspect = ok(tool("skopeo")
        .arg("inspect")
        .arg("oci:l:v1")
        .current_dir(tmp.path()));
    assert_eq!(labels_of(&inspect), annotations(&b));
    let v: Value = serde_json::from_str(&inspect).unwrap();
    assert_eq!(v["Digest"], digest.as_str());
    assert_eq!(v["Os"], "linux");
    assert_eq!(v["Architecture"], "amd64");
    let raw = ok(tool("skopeo")
        .args(["inspect", "--raw", "oci:l:v1"])
        .current_dir(tmp.path()));
    let image = read_image(&tmp.path().join("l"), Some("v1")).unwrap();
    let BlobSource::Memory(ours) = &image.manifest.source else {
        panic!()
    };
    assert_eq!(
        raw.as_bytes(),
        ours.as_slice(),
        "skopeo sees our manifest bytes"
    );

    let archive_digest = olmpack_build(
        tmp.path(),
        &[b.to_str().unwrap(), "--output", "oci-archive:a.tar:v1"],
    );
    assert_eq!(archive_digest, digest);
    let inspect = ok(tool("skopeo")
        .args(["inspect", "oci-archive:a.tar:v1"])
        .current_dir(tmp.path()));
    let v: Value = serde_json::from_str(&inspect).unwrap();
    assert_eq!(v["Digest"], digest.as_str());
    assert_eq!(labels_of(&inspect), annotations(&b));
}

#[test]
fn umoci_unpacks_exactly_the_bundle_files() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    olmpack_build(tmp.path(), &[b.to_str().unwrap(), "--output", "oci:l:v1"]);
    let rootfs = umoci_rootfs(&tmp.path().join("l"), "v1", &tmp.path().join("unpacked"));
    assert_eq!(rootfs, expected_rootfs());
}

#[test]
fn skopeo_copies_oci_to_docker_archive_and_back() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    olmpack_build(tmp.path(), &[b.to_str().unwrap(), "--output", "oci:l:v1"]);
    ok(tool("skopeo")
        .args([
            "--insecure-policy",
            "copy",
            "oci:l:v1",
            "docker-archive:rt.tar:example.com/o/b:v1",
        ])
        .current_dir(tmp.path()));
    ok(tool("skopeo")
        .args([
            "--insecure-policy",
            "copy",
            "docker-archive:rt.tar",
            "oci:back:v1",
        ])
        .current_dir(tmp.path()));
    let inspect = ok(tool("skopeo")
        .args(["inspect", "oci:back:v1"])
        .current_dir(tmp.path()));
    assert_eq!(labels_of(&inspect), annotations(&b));
    let rootfs = umoci_rootfs(&tmp.path().join("back"), "v1", &tmp.path().join("unpacked"));
    assert_eq!(rootfs, expected_rootfs());
}

#[test]
fn skopeo_reads_our_docker_archive_in_both_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    for format in ["oci", "docker"] {
        let file = format!("d-{format}.tar");
        olmpack_build(
            tmp.path(),
            &[
                b.to_str().unwrap(),
                "--format",
                format,
                "--output",
                &format!("docker-archive:{file}"),
                "-t",
                "quay.io/o/bundle:v1",
            ],
        );
        // Selecting the image by reference works only when RepoTags holds it.
        let inspect = ok(tool("skopeo")
            .arg("inspect")
            .arg(format!("docker-archive:{file}:quay.io/o/bundle:v1"))
            .current_dir(tmp.path()));
        assert_eq!(labels_of(&inspect), annotations(&b), "{format}");
        let v: Value = serde_json::from_str(&inspect).unwrap();
        assert_eq!(v["Name"], "quay.io/o/bundle", "RepoTags come from -t");
        // And the content survives a copy out of it.
        ok(tool("skopeo")
            .args(["--insecure-policy", "copy"])
            .arg(format!("docker-archive:{file}"))
            .arg(format!("oci:from-{format}:v1"))
            .current_dir(tmp.path()));
        let rootfs = umoci_rootfs(
            &tmp.path().join(format!("from-{format}")),
            "v1",
            &tmp.path().join(format!("u-{format}")),
        );
        assert_eq!(rootfs, expected_rootfs(), "{format}");
    }
}

/// `--format docker` in a layout: skopeo 1.9 lists only OCI media types from an index, so the
/// layers are checked with GNU tar, extracted in manifest order as a runtime would.
#[test]
fn docker_format_layers_extract_with_gnu_tar() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    olmpack_build(
        tmp.path(),
        &[
            b.to_str().unwrap(),
            "--format",
            "docker",
            "--output",
            "oci:l:d",
        ],
    );
    let image = read_image(&tmp.path().join("l"), Some("d")).unwrap();
    assert_eq!(
        image.manifest.descriptor.media_type,
        "application/vnd.docker.distribution.manifest.v2+json"
    );
    assert_eq!(
        image.config.descriptor.media_type,
        "application/vnd.docker.container.image.v1+json"
    );
    let rootfs = tmp.path().join("rootfs");
    fs::create_dir(&rootfs).unwrap();
    for layer in &image.layers {
        assert_eq!(
            layer.descriptor.media_type,
            "application/vnd.docker.image.rootfs.diff.tar.gzip"
        );
        let BlobSource::File(path) = &layer.source else {
            panic!()
        };
        ok(tool("tar").arg("-xzf").arg(path).arg("-C").arg(&rootfs));
    }
    assert_eq!(tree(&rootfs), expected_rootfs());
}

/// A layout written by skopeo accepts our image next to its own, and skopeo still reads both.
#[test]
fn adding_to_a_layout_written_by_skopeo_keeps_its_image() {
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    let ours = olmpack_build(
        tmp.path(),
        &[
            b.to_str().unwrap(),
            "--single-layer",
            "--output",
            "oci:src:v1",
        ],
    );
    ok(tool("skopeo")
        .args([
            "--insecure-policy",
            "copy",
            "oci:src:v1",
            "oci:shared:theirs",
        ])
        .current_dir(tmp.path()));
    let added = olmpack_build(
        tmp.path(),
        &[b.to_str().unwrap(), "--output", "oci:shared:ours"],
    );
    for (tag, digest) in [("theirs", &ours), ("ours", &added)] {
        let inspect = ok(tool("skopeo")
            .arg("inspect")
            .arg(format!("oci:shared:{tag}"))
            .current_dir(tmp.path()));
        let v: Value = serde_json::from_str(&inspect).unwrap();
        assert_eq!(v["Digest"], digest.as_str(), "{tag}");
        assert_eq!(labels_of(&inspect), annotations(&b));
    }
}

/// Many `bundle build` processes started at once on one layout (a CI matrix): every one
/// succeeds, every tag is in `index.json` naming its own image, and skopeo reads each. Twice: on
/// a layout that does not exist yet (the writers race to create it) and on an existing one (they
/// race to add to `index.json`).
#[test]
fn concurrent_builds_into_one_layout_lose_no_tag() {
    const WRITERS: usize = 12;
    let tmp = tempfile::tempdir().unwrap();
    let b = valid_basic();
    let b = b.to_str().unwrap();
    let mut expected = BTreeMap::new();
    for round in 0..2 {
        // Start every writer before waiting for any. Each image differs (a label), so a tag
        // naming the wrong image would show too.
        let children: Vec<(String, std::process::Child)> = (0..WRITERS)
            .map(|i| {
                let tag = format!("t{}", round * WRITERS + i);
                let child = Command::new(env!("CARGO_BIN_EXE_olmpack"))
                    .current_dir(tmp.path())
                    .env_remove("SOURCE_DATE_EPOCH")
                    .args(["bundle", "build", b, "--label"])
                    .arg(format!("com.example.writer={tag}"))
                    .arg("--output")
                    .arg(format!("oci:layout:{tag}"))
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("start olmpack");
                (tag, child)
            })
            .collect();
        for (tag, child) in children {
            let out = crate::support::proc::wait_output(child, crate::support::proc::LIMIT);
            assert!(
                out.status.success(),
                "{tag}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            let digest = stdout.split(' ').next().unwrap().to_string();
            expected.insert(tag, digest);
        }
        let index: Value =
            serde_json::from_slice(&fs::read(tmp.path().join("layout/index.json")).unwrap())
                .unwrap();
        let tags: BTreeMap<String, String> = index["manifests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["annotations"]["org.opencontainers.image.ref.name"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    m["digest"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            tags, expected,
            "round {round}: index.json lost or mixed tags"
        );
        for (tag, digest) in &expected {
            let inspect = ok(tool("skopeo")
                .arg("inspect")
                .arg(format!("oci:layout:{tag}"))
                .current_dir(tmp.path()));
            let v: Value = serde_json::from_str(&inspect).unwrap();
            assert_eq!(v["Digest"], digest.as_str(), "{tag}");
            assert_eq!(
                labels_of(&inspect).get("com.example.writer"),
                Some(tag),
                "{tag}"
            );
        }
    }
    // No temporary files or folders left next to or inside the layout.
    let stray: Vec<String> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "layout")
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    assert!(
        !tree(&tmp.path().join("layout"))
            .keys()
            .any(|p| p.to_string_lossy().contains(".tmp")),
        "temporary blobs left in the layout"
    );
}
