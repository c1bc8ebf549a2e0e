//! Every bundle of the shared corpus (real bundles from public catalogs) builds with
//! `--no-validate`, reads back and verifies; a sample is rebuilt and must give the same digests.
//!
//! The corpus is found at `$OLMPACK_CORPUS` or `../shared/corpus` beside the crate. When it is
//! absent the test says so and passes, unless `OLMPACK_REQUIRE_CORPUS=1` (CI), then it fails.

use crate::support::proc::Bounded;
use olmpack::image::verify::verify_image;
use olmpack::transport::layout::read_image;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus, through the one gate of tests/support/shared.rs.
fn corpus() -> Option<PathBuf> {
    crate::support::shared::shared_corpus()
}

fn bundles(corpus: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for pkg in fs::read_dir(corpus.join("bundles")).unwrap() {
        for ver in fs::read_dir(pkg.unwrap().path()).unwrap() {
            let p = ver.unwrap().path();
            if p.is_dir() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Builds `dir` into the layout `layout` tagged `tag`; returns (exit code, digest, stderr).
fn build(dir: &Path, layout: &Path, tag: &str) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olmpack"))
        .env_remove("SOURCE_DATE_EPOCH")
        .args(["bundle", "build", "--no-validate", "--output"])
        .arg(format!("oci:{}:{tag}", layout.display()))
        .arg(dir)
        .bounded_output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    (
        out.status.code(),
        stdout.split(' ').next().unwrap_or("").to_string(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn tag_for(dir: &Path) -> String {
    let ver = dir.file_name().unwrap().to_string_lossy();
    let pkg = dir.parent().unwrap().file_name().unwrap().to_string_lossy();
    format!("{pkg}-{ver}").replace(
        |c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '-',
        "_",
    )
}

#[test]
fn every_corpus_bundle_builds_and_verifies() {
    let Some(corpus) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let layout = tmp.path().join("layout");
    let mut built = Vec::new();
    let mut refused = Vec::new();
    for dir in bundles(&corpus) {
        let tag = tag_for(&dir);
        let target = if dir.join("manifests").is_dir() {
            dir.clone()
        } else {
            // No manifests/ here: a clear error (exit 2, naming the folder), never a panic.
            let (code, _, stderr) = build(&dir, &layout, &tag);
            assert_eq!(code, Some(2), "{}: {stderr}", dir.display());
            assert!(
                stderr.contains("no manifests folder"),
                "{}: {stderr}",
                dir.display()
            );
            refused.push(dir.clone());
            // Three corpus entries keep the real bundle one level down.
            if dir.join("bundle/manifests").is_dir() {
                dir.join("bundle")
            } else {
                continue;
            }
        };
        let (code, digest, stderr) = build(&target, &layout, &tag);
        assert_eq!(code, Some(0), "{}: {stderr}", target.display());
        let image = read_image(&layout, Some(&tag)).unwrap();
        assert_eq!(image.manifest.descriptor.digest, digest);
        verify_image(&image).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        let scorecard = target.join("tests/scorecard").is_dir()
            && fs::read_to_string(target.join("metadata/annotations.yaml"))
                .is_ok_and(|t| t.contains("operators.operatorframework.io.test.config.v1"));
        assert_eq!(
            image.layers.len(),
            if scorecard { 3 } else { 2 },
            "{}",
            target.display()
        );
        built.push((target, digest));
    }
    eprintln!(
        "built {} corpus bundles, {} refused at the top level",
        built.len(),
        refused.len()
    );
    let folders = bundles(&corpus).len();
    crate::support::shared::cases("build_corpus bundle folders", folders, 150);
    crate::support::shared::cases("build_corpus bundles built and verified", built.len(), 149);
    assert_eq!(refused.len(), 4, "{refused:?}");
    // Every folder built, or was refused and (for the three nested ones) built one level down.
    assert_eq!(
        built.len() + refused.len() - 3,
        folders,
        "every folder accounted for"
    );

    // Rebuild a sample (every 10th, plus the largest) into a fresh layout: same digests.
    let again = tmp.path().join("again");
    let largest = built
        .iter()
        .max_by_key(|(d, _)| {
            fs::metadata(d.join("manifests"))
                .map(|_| dir_size(d))
                .unwrap_or(0)
        })
        .cloned()
        .unwrap();
    let mut sample: Vec<_> = built.iter().step_by(10).cloned().collect();
    sample.push(largest);
    for (dir, digest) in sample {
        let (code, digest2, stderr) = build(&dir, &again, &tag_for(&dir));
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(
            digest2,
            digest,
            "{} rebuilt to another digest",
            dir.display()
        );
    }
}

fn dir_size(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() {
                dir_size(&p)
            } else {
                fs::metadata(&p).map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}
