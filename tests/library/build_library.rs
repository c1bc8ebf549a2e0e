//! The library side of `bundle build`: what goes into layers (names, links, special files),
//! warnings, platform, and the life of the spool folder a pusher streams from.

use crate::support::proc::Bounded;
use olmpack::image::build::{BuildOptions, BuildWarning, BundleInput};
use olmpack::image::{BlobSource, BuildError, Image, Platform, build, build_in, verify_image};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

fn small_bundle(root: &Path) -> BundleInput {
    fs::create_dir_all(root.join("manifests")).unwrap();
    fs::create_dir_all(root.join("metadata")).unwrap();
    fs::write(
        root.join("manifests/csv.yaml"),
        "kind: ClusterServiceVersion\n",
    )
    .unwrap();
    fs::write(root.join("metadata/annotations.yaml"), "annotations: {}\n").unwrap();
    let mut ann = BTreeMap::new();
    ann.insert(
        "operators.operatorframework.io.bundle.package.v1".into(),
        "p".into(),
    );
    BundleInput::from_annotations(root, ann).unwrap()
}

fn layer_listing(image: &Image, i: usize) -> String {
    let BlobSource::File(path) = &image.layers[i].source else {
        panic!("layers are files")
    };
    // TZ=UTC: GNU tar prints mtimes in local time.
    let out = Command::new("tar")
        .env("TZ", "UTC")
        .arg("-tvzf")
        .arg(path)
        .bounded_output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into()
}

fn build_err(input: &BundleInput) -> BuildError {
    let spool = tempfile::tempdir().unwrap();
    build_in(input, &BuildOptions::default(), spool.path()).unwrap_err()
}

#[test]
fn long_and_non_utf8_names_are_stored_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    let long = format!("{}.yaml", "x".repeat(150));
    fs::create_dir_all(tmp.path().join("manifests/deep/er")).unwrap();
    fs::write(tmp.path().join("manifests/deep/er").join(&long), "a: 1\n").unwrap();
    fs::write(
        tmp.path()
            .join("manifests")
            .join(OsStr::from_bytes(b"caf\xe9.yaml")),
        "b",
    )
    .unwrap();
    let built = build(&input, &BuildOptions::default()).unwrap();
    let listing = layer_listing(&built.image, 0);
    assert!(
        listing.contains(&format!("manifests/deep/er/{long}")),
        "{listing}"
    );
    // GNU tar prints the raw byte as an octal escape.
    assert!(listing.contains("manifests/caf\\351.yaml"), "{listing}");
    verify_image(&built.image).unwrap();
}

#[test]
fn entries_are_sorted_each_folder_before_its_contents() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    for name in ["b.yaml", "a.b", "Z.yaml"] {
        fs::write(tmp.path().join("manifests").join(name), name).unwrap();
    }
    fs::create_dir(tmp.path().join("manifests/a")).unwrap();
    fs::write(tmp.path().join("manifests/a/x"), "x").unwrap();
    let built = build(&input, &BuildOptions::default()).unwrap();
    let names: Vec<String> = layer_listing(&built.image, 0)
        .lines()
        .map(|l| l.split_whitespace().last().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "manifests/",
            "manifests/Z.yaml",
            "manifests/a/",
            "manifests/a/x",
            "manifests/a.b",
            "manifests/b.yaml",
            "manifests/csv.yaml"
        ]
    );
    for line in layer_listing(&built.image, 0).lines() {
        assert!(
            line.contains(" 0/0 ") && line.contains("1970-01-01 00:00"),
            "{line}"
        );
    }
}

#[test]
fn special_files_and_dangling_links_are_errors_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    symlink("nowhere.yaml", tmp.path().join("manifests/dangling.yaml")).unwrap();
    let err = build_err(&input).to_string();
    assert!(
        err.contains("manifests/dangling.yaml") && err.contains("does not exist"),
        "{err}"
    );
    fs::remove_file(tmp.path().join("manifests/dangling.yaml")).unwrap();

    let fifo = tmp.path().join("metadata/pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .bounded_status()
            .unwrap()
            .success()
    );
    let err = build_err(&input).to_string();
    assert!(
        err.contains("metadata/pipe") && err.contains("FIFO"),
        "{err}"
    );
}

#[test]
fn a_linked_folder_inside_the_bundle_is_copied_as_content() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    fs::create_dir(tmp.path().join("shared")).unwrap();
    fs::write(
        tmp.path().join("shared/crd.yaml"),
        "kind: CustomResourceDefinition\n",
    )
    .unwrap();
    symlink("../shared", tmp.path().join("manifests/crds")).unwrap();
    let built = build(&input, &BuildOptions::default()).unwrap();
    let listing = layer_listing(&built.image, 0);
    assert!(
        listing.contains("drwxr-xr-x 0/0") && listing.contains("manifests/crds/\n"),
        "{listing}"
    );
    assert!(listing.contains("manifests/crds/crd.yaml"), "{listing}");
    // shared/ itself is not packaged, and the build says so.
    assert!(built.warnings.iter().any(|w| matches!(
        w,
        BuildWarning::NotPackaged { path } if path.ends_with("shared")
    )));
}

#[test]
fn platform_variant_and_labels_reach_the_config() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    let mut options = BuildOptions {
        platform: "linux/arm64/v8".parse::<Platform>().unwrap(),
        ..BuildOptions::default()
    };
    options.extra_labels.insert("extra".into(), "yes".into());
    let built = build(&input, &options).unwrap();
    let BlobSource::Memory(config) = &built.image.config.source else {
        panic!()
    };
    let config = String::from_utf8(config.clone()).unwrap();
    assert!(config.contains(r#""architecture":"arm64""#), "{config}");
    assert!(config.contains(r#""variant":"v8""#), "{config}");
    assert!(config.contains(r#""extra":"yes""#), "{config}");
    assert!(config.contains(r#""operators.operatorframework.io.bundle.package.v1":"p""#));
    assert!(!config.contains("history"), "no history: {config}");
}

#[test]
fn blobs_stay_readable_while_the_built_image_lives() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    let built = build(&input, &BuildOptions::default()).unwrap();
    let spool = built.spool.path().to_path_buf();
    let again = build(&input, &BuildOptions::default()).unwrap();
    assert_eq!(
        built.image.manifest.descriptor,
        again.image.manifest.descriptor
    );
    for blob in built.image.blobs() {
        let mut bytes = Vec::new();
        std::io::copy(&mut blob.open().unwrap(), &mut bytes).unwrap();
        assert_eq!(bytes.len() as u64, blob.descriptor.size);
    }
    verify_image(&built.image).unwrap();
    drop(built);
    assert!(!spool.exists(), "the spool folder goes away with the image");
}

#[test]
fn source_date_epoch_is_every_mtime() {
    let tmp = tempfile::tempdir().unwrap();
    let input = small_bundle(tmp.path());
    let options = BuildOptions {
        source_date_epoch: Some(1_700_000_000),
        ..BuildOptions::default()
    };
    let built = build(&input, &options).unwrap();
    for i in 0..built.image.layers.len() {
        let listing = layer_listing(&built.image, i);
        assert!(
            listing.lines().all(|l| l.contains("2023-11-14 22:13")),
            "{listing}"
        );
    }
}
