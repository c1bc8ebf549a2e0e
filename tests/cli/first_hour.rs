//! Issue 20 items 4, 6, 8 and 9, as a new user meets them: every command refuses an empty
//! catalog unless asked, `bundle init` scaffolds where operator-sdk does, messages name what
//! the user gave (not temp folders or internal functions), and every command accepts and
//! refuses the same values.

use crate::support::cmd::{run_in as run, run_ok_in as run_ok};
use crate::support::fixtures::repo_root as root;
use crate::support::fs::copy_dir;
use std::fs;
use std::path::{Path, PathBuf};

/// A folder with nothing OLM reads: one blob of another schema (opm passes such a catalog).
fn empty_catalog(tmp: &Path) -> PathBuf {
    let dir = tmp.join("catalog");
    fs::create_dir(&dir).expect("mkdir");
    fs::write(dir.join("notes.json"), r#"{"schema":"example.com/notes"}"#).expect("write");
    dir
}

#[test]
fn an_empty_catalog_is_refused_unless_allowed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let bare = t.join("bare");
    fs::create_dir(&bare).expect("mkdir");
    for dir in [empty_catalog(t), bare] {
        let d = dir.to_str().expect("utf-8");
        let hint = "--allow-empty";

        let (code, out, _) = run(t, &["catalog", "validate", d]);
        assert_eq!(code, 1, "validate {d}: {out}");
        assert!(out.contains("catalog/empty") && out.contains(hint), "{out}");
        let (code, out, _) = run(t, &["catalog", "validate", "--allow-empty", d]);
        assert_eq!(code, 0, "{out}");

        let (code, out, err) = run(t, &["catalog", "render", d]);
        assert_eq!((code, out.as_str()), (2, ""), "render {d}: {err}");
        assert!(
            err.contains("no olm.package") && err.contains(hint),
            "{err}"
        );
        run_ok(t, &["catalog", "render", "--allow-empty", d]);

        let (code, out, err) = run(t, &["catalog", "graph", d]);
        assert_eq!((code, out.as_str()), (2, ""), "graph {d}: {err}");
        assert!(
            err.contains("holds no catalog") && err.contains(hint),
            "{err}"
        );
        run_ok(t, &["catalog", "graph", "--allow-empty", d]);

        let image = t.join("img");
        let dest = format!("oci:{}", image.display());
        let (code, out, err) = run(t, &["catalog", "build", d, "--output", &dest]);
        assert_eq!((code, out.as_str()), (1, ""), "build {d}: {err}");
        assert!(err.contains("catalog/empty") && err.contains(hint), "{err}");
        assert!(!image.exists(), "nothing is written");
        let (out, _) = run_ok(
            t,
            &["catalog", "build", "--allow-empty", d, "--output", &dest],
        );
        assert!(out.starts_with("sha256:") && image.join("index.json").is_file());
        fs::remove_dir_all(&image).expect("rm");
    }
    // A real catalog is not affected.
    let small = root().join("testdata/catalogs/build-small");
    run_ok(t, &["catalog", "render", small.to_str().expect("utf-8")]);
}

#[test]
fn build_does_not_warn_about_the_dockerfile_init_wrote() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let bundle = t.join("b");
    copy_dir(&root().join("testdata/bundles/valid-basic"), &bundle);
    run_ok(t, &["bundle", "init", "b", "--dockerfile"]);
    assert!(bundle.join("bundle.Dockerfile").is_file());
    let (_, err) = run_ok(t, &["bundle", "build", "b", "--output", "oci:img"]);
    assert!(!err.contains("warning"), "own scaffold warned about: {err}");
    // A Dockerfile of the user's own under that name is still reported as left out.
    fs::write(bundle.join("bundle.Dockerfile"), "FROM scratch\n").expect("write");
    let (_, err) = run_ok(t, &["bundle", "build", "b", "--output", "oci:img"]);
    assert!(
        err.contains("warning: b/bundle.Dockerfile is not part of the image"),
        "{err}"
    );
}

#[test]
fn messages_name_what_the_user_gave() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let small = root().join("testdata/catalogs/build-small");
    run_ok(
        t,
        &[
            "catalog",
            "build",
            small.to_str().expect("utf-8"),
            "--output",
            "oci:cat",
        ],
    );
    // bundle validate --image on a catalog image says so, without a temp folder.
    let (code, out, err) = run(t, &["bundle", "validate", "--image", "oci:cat"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("oci:cat is a catalog image"), "{err}");
    assert!(
        !err.contains("/tmp") && !out.contains("olmpack-bundle-"),
        "{out}{err}"
    );

    // An image that is neither: named, with what it holds.
    docker_archive(&t.join("app.tar"), "hello.txt", b"hi");
    let (code, out, err) = run(
        t,
        &["bundle", "validate", "--image", "docker-archive:app.tar"],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(
            "docker-archive:app.tar is not a bundle image: it has no manifests/ folder (it holds: hello.txt)"
        ),
        "{err}"
    );
    assert!(!err.contains("olmpack-bundle-"), "{err}");

    // --help speaks of what the option does, not of functions.
    let (code, out, _) = run(t, &["bundle", "inspect", "--help"]);
    assert_eq!(code, 0);
    assert!(
        !out.contains("find_annotations") && !out.contains("see docs of"),
        "{out}"
    );
}

#[test]
fn a_docker_archive_and_its_readers_share_the_image_id() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    copy_dir(&root().join("testdata/bundles/valid-basic"), &t.join("b"));
    for format in ["oci", "docker"] {
        let dest = format!("docker-archive:b-{format}.tar");
        let (out, err) = run_ok(
            t,
            &[
                "bundle",
                "build",
                "b",
                "--format",
                format,
                "--output",
                &dest,
                "-t",
                "quay.io/o/b:v1",
            ],
        );
        let digest = out.split_whitespace().next().expect("digest").to_string();
        let id = err
            .split("the image ID ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no image ID note: {err}"))
            .to_string();
        assert!(err.contains("a docker-archive keeps no manifest"), "{err}");
        let (shown, _) = run_ok(t, &["bundle", "inspect", "--no-files", &dest]);
        assert!(shown.contains(&format!("Image ID:   {id}")), "{shown}");
        // The manifest digests differ (uncompressed layers, no manifest in the archive): the
        // note is what explains it.
        assert!(!shown.contains(&digest), "{shown}");
    }
}

/// A one-layer `docker save` archive holding one file: an image that is not a bundle.
fn docker_archive(path: &Path, file: &str, data: &[u8]) {
    use sha2::{Digest, Sha256};
    let tar_of = |entries: &[(&str, &[u8])]| {
        let mut b = tar::Builder::new(Vec::new());
        for (name, bytes) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, *bytes).expect("append");
        }
        b.into_inner().expect("tar")
    };
    let layer = tar_of(&[(file, data)]);
    let diff_id: String = Sha256::digest(&layer)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let config = format!(
        r#"{{"architecture":"amd64","os":"linux","config":{{}},"rootfs":{{"type":"layers","diff_ids":["sha256:{diff_id}"]}}}}"#
    );
    let manifest = r#"[{"Config":"config.json","RepoTags":["app:1"],"Layers":["layer.tar"]}]"#;
    let archive = tar_of(&[
        ("manifest.json", manifest.as_bytes()),
        ("config.json", config.as_bytes()),
        ("layer.tar", &layer),
    ]);
    fs::write(path, archive).expect("write archive");
}

#[test]
fn commands_accept_and_refuse_the_same_values() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let small = root().join("testdata/catalogs/build-small");
    let small = small.to_str().expect("utf-8");

    // A package name bundle validate lets through is one catalog add accepts: same rule, same
    // severity.
    let bundle = t.join("b");
    copy_dir(&root().join("testdata/bundles/valid-basic"), &bundle);
    let ann = bundle.join("metadata/annotations.yaml");
    let text = fs::read_to_string(&ann).expect("read");
    fs::write(
        &ann,
        text.replace("\"kvstore-operator\"", "\"kvstore.operator\""),
    )
    .expect("write");
    let (code, out, _) = run(t, &["bundle", "validate", "b"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[format/package-name]"), "{out}");
    fs::create_dir(t.join("cat")).expect("mkdir");
    let (code, _, err) = run(
        t,
        &["catalog", "add", "cat", "b", "--image", "quay.io/o/b:v1"],
    );
    assert_eq!(code, 1, "catalog add refuses it too: {err}");
    assert!(
        err.contains("invalid package name \"kvstore.operator\""),
        "{err}"
    );

    // Malformed -t values are refused for local builds too, before anything is written.
    copy_dir(&root().join("testdata/bundles/valid-basic"), &t.join("ok"));
    for cmd in [["bundle", "build", "ok"], ["catalog", "build", small]] {
        let (code, out, err) = run(
            t,
            &[
                cmd[0],
                cmd[1],
                cmd[2],
                "-t",
                "Quay.io/Bad Ref:v1",
                "--output",
                "oci:z",
            ],
        );
        assert_eq!((code, out.as_str()), (2, ""), "{cmd:?}: {err}");
        assert!(
            err.contains("invalid image reference \"Quay.io/Bad Ref:v1\""),
            "{err}"
        );
        assert!(!t.join("z").exists());
    }

    // --opm-compat outside what olmpack reproduces is refused with the supported range.
    for cmd in [
        vec!["catalog", "render", small],
        vec!["catalog", "template", "-"],
    ] {
        let mut args = cmd.clone();
        args.extend(["--opm-compat", "1.10"]);
        let (code, _, err) = run(t, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("opm 1.26 to 1.73"), "{err}");
    }

    // An unknown channel is refused like an unknown package.
    for flag in ["--channel", "--package"] {
        let (code, out, err) = run(t, &["catalog", "graph", small, flag, "nope"]);
        assert_eq!((code, out.as_str()), (2, ""), "{flag}: {err}");
        assert!(err.contains("\"nope\" is not in"), "{err}");
    }

    // catalog init needs a default channel rather than writing an empty one.
    let (code, out, _) = run(t, &["catalog", "init", "foo"]);
    assert_eq!((code, out.as_str()), (2, ""));
    let (code, out, err) = run(t, &["catalog", "init", "foo", "-c", ""]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    let (code, out, _) = run(t, &["catalog", "init", "foo", "-c", "stable"]);
    assert_eq!(code, 0);
    assert!(out.contains("\"defaultChannel\": \"stable\""), "{out}");

    // A base without opm gets a warning (the image would not start under OLM v0); an opm
    // image as base (here: a catalog image built on a base, whose entrypoint is /bin/opm) does
    // not.
    run_ok(t, &["bundle", "build", "ok", "--output", "oci:plain"]);
    let (_, err) = run_ok(
        t,
        &[
            "catalog",
            "build",
            small,
            "--base",
            "oci:plain",
            "--output",
            "oci:on-plain",
        ],
    );
    assert!(
        err.contains("warning: the base oci:plain does not look like an opm image"),
        "{err}"
    );
    let (_, err) = run_ok(
        t,
        &[
            "catalog",
            "build",
            small,
            "--base",
            "oci:on-plain",
            "--output",
            "oci:on-opm",
        ],
    );
    assert!(!err.contains("does not look like an opm image"), "{err}");
}
