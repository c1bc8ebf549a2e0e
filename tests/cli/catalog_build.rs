//! `olmpack catalog build` and `catalog generate-dockerfile`, end to end: the binary builds
//! catalog images (scratch and on a base made here with olmpack's image code), skopeo and umoci
//! read them, and a real registry (Debian's `docker-registry` on loopback) receives them.
//!
//! The real catalogs are read from `../shared/catalogs` (or `$OLMPACK_CATALOGS`) and copied to a
//! temp folder; without them the tests that need them say SKIPPED and pass, unless
//! `OLMPACK_REQUIRE_CORPUS=1` (CI).

use crate::support::cmd::olmpack_reproducible as olmpack;
use crate::support::proc::Bounded;
use crate::support::registry as support;

use crate::support::fs::copy_dir;
use crate::support::shared;
use olmpack::image::Platform;
use olmpack::image::extend::{index_of, platform_json};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::{Fault, Mode, Proxy, Registry, diff_id, gz_file_layer, gzip_tar, push_index};

const LABEL: &str = "operators.operatorframework.io.index.configs.v1";

fn small_catalog() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/build-small")
}

fn shared_catalogs() -> Option<PathBuf> {
    shared::shared_catalogs("fbc")
}

/// A catalog of two real packages, copied out of the shared corpus.
fn corpus_catalog(dst: &Path) -> Option<PathBuf> {
    let shared = shared_catalogs()?;
    let base = shared.join("fbc/community-operators-prod/catalogs/v4.18");
    let mut names: Vec<_> = std::fs::read_dir(&base)
        .expect("list")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    let cat = dst.join("catalog");
    for n in names.iter().take(2) {
        copy_dir(&base.join(n), &cat.join(n));
    }
    Some(cat)
}

fn stdout_digest(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Runs olmpack with `args`, expecting success; returns stdout's digest.
fn build_ok(args: &[&str]) -> String {
    let out = olmpack().args(args).bounded_output().expect("run");
    assert!(
        out.status.success(),
        "olmpack {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_digest(&out)
}

fn tool(cmd: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(cmd)
        .args(args)
        .bounded_output()
        .unwrap_or_else(|e| panic!("{cmd} not runnable: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Reads a blob of an OCI layout.
fn blob(layout: &Path, digest: &str) -> Vec<u8> {
    let hex = digest.trim_start_matches("sha256:");
    std::fs::read(layout.join("blobs/sha256").join(hex)).expect("blob")
}

fn json_blob(layout: &Path, digest: &str) -> Value {
    serde_json::from_slice(&blob(layout, digest)).expect("json blob")
}

/// The top-level manifest or index the layout's only tag names.
fn layout_top(layout: &Path) -> (String, Value) {
    let index: Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).expect("index"))
            .expect("json");
    let d = index["manifests"][0]["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let v = json_blob(layout, &d);
    (d, v)
}

/// Files (relative path -> bytes) under `root`.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("read").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("rel").display().to_string();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    walk(root, root, &mut out);
    out
}

/// Unpacks `image` (an `oci:` layout reference) with umoci and returns its `configs/` tree.
fn umoci_configs(layout_ref: &str, work: &Path) -> BTreeMap<String, Vec<u8>> {
    let bundle = work.join("umoci-bundle");
    tool(
        "umoci",
        &[
            "unpack",
            "--rootless",
            "--image",
            layout_ref,
            bundle.to_str().expect("utf8"),
        ],
    );
    tree(&bundle.join("rootfs/configs"))
}

fn set_mtimes(root: &Path, when: &str) {
    tool(
        "find",
        &[
            root.to_str().expect("utf8"),
            "-exec",
            "touch",
            "-h",
            "-d",
            when,
            "{}",
            "+",
        ],
    );
}

#[test]
fn scratch_catalog_is_reproducible_and_tools_read_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let cat = tmp.path().join("cat");
    copy_dir(&small_catalog(), &cat);
    let out1 = tmp.path().join("one");
    let d1 = build_ok(&[
        "catalog",
        "build",
        cat.to_str().unwrap(),
        "--output",
        &format!("oci:{}:v1", out1.display()),
    ]);
    // Other mtimes, another umask, a different copy path: the same digest.
    let cat2 = tmp.path().join("elsewhere/cat");
    copy_dir(&small_catalog(), &cat2);
    set_mtimes(&cat2, "2001-02-03 04:05:06");
    tool("chmod", &["-R", "go-rwx", cat2.to_str().unwrap()]);
    let out2 = tmp.path().join("two");
    let script = format!(
        "umask 077; exec {} catalog build {} --output oci:{}:v1",
        crate::support::cmd::olmpack_path().display(),
        cat2.display(),
        out2.display()
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &script])
        .env_remove("SOURCE_DATE_EPOCH")
        .bounded_output()
        .expect("sh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout_digest(&o), d1, "digest moved with mtimes/umask/path");
    // SOURCE_DATE_EPOCH is the one thing that moves it.
    let out3 = tmp.path().join("three");
    let o = olmpack()
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .args([
            "catalog",
            "build",
            cat.to_str().unwrap(),
            "--output",
            &format!("oci:{}", out3.display()),
        ])
        .bounded_output()
        .expect("run");
    assert!(o.status.success());
    assert_ne!(stdout_digest(&o), d1);

    let (top, manifest) = layout_top(&out1);
    assert_eq!(top, d1);
    assert_eq!(manifest["layers"].as_array().map(Vec::len), Some(1));
    let config = json_blob(&out1, manifest["config"]["digest"].as_str().unwrap());
    assert_eq!(config["config"]["Labels"][LABEL], "/configs");
    assert!(config["config"].get("Entrypoint").is_none(), "{config}");
    assert_eq!(config["created"], "1970-01-01T00:00:00Z");
    // skopeo reads the layout and sees the label.
    let inspect: Value = serde_json::from_str(&tool(
        "skopeo",
        &["inspect", &format!("oci:{}:v1", out1.display())],
    ))
    .expect("skopeo json");
    assert_eq!(inspect["Labels"][LABEL], "/configs");
    // umoci unpacks exactly the folder under /configs, .indexignore and README.md included.
    let files = umoci_configs(&format!("{}:v1", out1.display()), tmp.path());
    assert_eq!(files, tree(&cat));
    assert!(files.contains_key(".indexignore"));
    // Layer headers: sorted, fixed owners and modes.
    let layer = blob(&out1, manifest["layers"][0]["digest"].as_str().unwrap());
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(&layer[..]));
    let mut names = Vec::new();
    for e in ar.entries().expect("entries") {
        let e = e.expect("entry");
        let h = e.header();
        assert_eq!(
            (h.uid().unwrap(), h.gid().unwrap(), h.mtime().unwrap()),
            (0, 0, 0)
        );
        let mode = h.mode().unwrap();
        assert!(mode == 0o644 || mode == 0o755, "{mode:o}");
        names.push(e.path().unwrap().display().to_string());
    }
    assert_eq!(names[0], "configs/");
    assert!(names.contains(&"configs/build-demo/catalog.yaml".to_string()));
}

#[test]
fn configs_dir_and_labels_are_honoured() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("o");
    build_ok(&[
        "catalog",
        "build",
        small_catalog().to_str().unwrap(),
        "--configs-dir",
        "/srv/catalog",
        "--label",
        "org.example/team=olm",
        "--output",
        &format!("oci:{}", out.display()),
    ]);
    let (_, manifest) = layout_top(&out);
    let config = json_blob(&out, manifest["config"]["digest"].as_str().unwrap());
    assert_eq!(config["config"]["Labels"][LABEL], "/srv/catalog");
    assert_eq!(config["config"]["Labels"]["org.example/team"], "olm");
    // A label that contradicts --configs-dir is refused.
    olmpack()
        .args([
            "catalog",
            "build",
            small_catalog().to_str().unwrap(),
            "--label",
            &format!("{LABEL}=/elsewhere"),
            "--output",
            &format!("oci:{}", tmp.path().join("x").display()),
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("contradicts --configs-dir"));
    assert!(!tmp.path().join("x").exists());
}

/// A multi-platform base with a fake `/bin/opm`, made with olmpack's image model and written
/// with its layout writer: a shared layer, a per-platform layer, and a config with Env, User,
/// WorkingDir and history.
fn make_base(dir: &Path, platforms: &[&str]) -> olmpack::image::ImageIndex {
    let shared = gzip_tar(&[("etc/os-release", b"NAME=fake\n")]);
    let shared_path = dir.join("shared.tar.gz");
    std::fs::write(&shared_path, &shared).expect("write");
    let mut images = Vec::new();
    for p in platforms {
        let platform: Platform = p.parse().expect("platform");
        let opm = format!("#!/bin/sh\necho fake opm for {p}\n");
        let own = gzip_tar(&[("bin/opm", opm.as_bytes())]);
        let own_path = dir.join(format!("{}.tar.gz", p.replace('/', "-")));
        std::fs::write(&own_path, &own).expect("write");
        let mut config = json!({
            "architecture": platform.architecture,
            "os": platform.os,
            "config": {
                "Env": ["PATH=/bin", "BASE=1"],
                "User": "1001",
                "WorkingDir": "/work",
                "Entrypoint": ["/bin/sh"],
                "Labels": {"org.example.base": "yes"},
            },
            "rootfs": {"type": "layers", "diff_ids": [diff_id(&shared), diff_id(&own)]},
            "history": [{"created_by": "base layer"}, {"created_by": "opm"}],
        });
        if let Some(v) = &platform.variant {
            config["variant"] = json!(v);
        }
        let layers = vec![
            gz_file_layer(&shared, &shared_path),
            gz_file_layer(&own, &own_path),
        ];
        let image = support::image_with(serde_json::to_vec(&config).expect("json"), layers);
        images.push((image, platform_json(&platform)));
    }
    index_of(images)
}

/// Checks a catalog index built on `base`: one manifest per platform, every base layer kept,
/// exactly one layer added (the same blob on every platform), base config kept.
fn check_catalog_index(layout: &Path, base: &olmpack::image::ImageIndex) -> String {
    let (_, index) = layout_top(layout);
    let entries = index["manifests"].as_array().expect("manifests");
    assert_eq!(entries.len(), base.images.len());
    let mut configs_layers = Vec::new();
    for (entry, base_image) in entries.iter().zip(&base.images) {
        let m = json_blob(layout, entry["digest"].as_str().unwrap());
        let layers: Vec<&str> = m["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["digest"].as_str().unwrap())
            .collect();
        let base_layers: Vec<&str> = base_image
            .layers
            .iter()
            .map(|l| l.descriptor.digest.as_str())
            .collect();
        assert_eq!(layers.len(), base_layers.len() + 1);
        assert_eq!(&layers[..base_layers.len()], &base_layers[..]);
        configs_layers.push(layers[base_layers.len()].to_string());
        let c = json_blob(layout, m["config"]["digest"].as_str().unwrap());
        assert_eq!(c["config"]["Env"], json!(["PATH=/bin", "BASE=1"]));
        assert_eq!(c["config"]["User"], "1001");
        assert_eq!(c["config"]["WorkingDir"], "/work");
        assert_eq!(c["config"]["Entrypoint"], json!(["/bin/opm"]));
        assert_eq!(c["config"]["Cmd"], json!(["serve", "/configs"]));
        assert_eq!(c["config"]["Labels"][LABEL], "/configs");
        assert_eq!(c["config"]["Labels"]["org.example.base"], "yes");
        assert_eq!(c["rootfs"]["diff_ids"].as_array().map(Vec::len), Some(3));
        assert_eq!(c["history"].as_array().map(Vec::len), Some(3));
        assert_eq!(c["architecture"], entry["platform"]["architecture"]);
    }
    assert!(configs_layers.windows(2).all(|w| w[0] == w[1]));
    configs_layers.remove(0)
}

#[test]
fn base_from_a_layout_gives_a_multi_platform_catalog() {
    let tmp = tempfile::tempdir().expect("tmp");
    let base = make_base(tmp.path(), &["linux/amd64", "linux/arm64/v8"]);
    let base_dir = tmp.path().join("base");
    olmpack::transport::layout::write_index_layout(&base, &base_dir, &["v1".into()]).expect("base");
    let base_ref = format!("oci:{}:v1", base_dir.display());
    let out = tmp.path().join("cat");
    let d = build_ok(&[
        "catalog",
        "build",
        small_catalog().to_str().unwrap(),
        "--base",
        &base_ref,
        "--no-cache",
        "--output",
        &format!("oci:{}:v1", out.display()),
    ]);
    let (top, index) = layout_top(&out);
    assert_eq!(top, d);
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    assert_eq!(index["manifests"][1]["platform"]["variant"], "v8");
    check_catalog_index(&out, &base);
    // The same inputs give the same index digest.
    let again = build_ok(&[
        "catalog",
        "build",
        small_catalog().to_str().unwrap(),
        "--base",
        &base_ref,
        "--no-cache",
        "--output",
        &format!("oci:{}", tmp.path().join("again").display()),
    ]);
    assert_eq!(again, d);
    // skopeo reads every platform; umoci unpacks one and finds the catalog next to /bin/opm.
    let raw: Value = serde_json::from_str(&tool(
        "skopeo",
        &["inspect", "--raw", &format!("oci:{}:v1", out.display())],
    ))
    .expect("json");
    assert_eq!(raw["manifests"].as_array().map(Vec::len), Some(2));
    let arm = tmp.path().join("arm");
    tool(
        "skopeo",
        &[
            "copy",
            "--override-arch",
            "arm64",
            "--override-variant",
            "v8",
            &format!("oci:{}:v1", out.display()),
            &format!("oci:{}:arm", arm.display()),
        ],
    );
    let bundle = tmp.path().join("arm-bundle");
    tool(
        "umoci",
        &[
            "unpack",
            "--rootless",
            "--image",
            &format!("{}:arm", arm.display()),
            bundle.to_str().unwrap(),
        ],
    );
    let opm = std::fs::read_to_string(bundle.join("rootfs/bin/opm")).expect("opm");
    assert!(opm.contains("linux/arm64/v8"), "{opm}");
    assert_eq!(tree(&bundle.join("rootfs/configs")), tree(&small_catalog()));

    // One --platform: a single image, which a docker-archive can hold.
    let single = tmp.path().join("single.tar");
    build_ok(&[
        "catalog",
        "build",
        small_catalog().to_str().unwrap(),
        "--base",
        &base_ref,
        "--no-cache",
        "--platform",
        "linux/arm64",
        "--output",
        &format!("docker-archive:{}:example.com/cat:v1", single.display()),
    ]);
    let inspect: Value = serde_json::from_str(&tool(
        "skopeo",
        &["inspect", &format!("docker-archive:{}", single.display())],
    ))
    .expect("json");
    assert_eq!(inspect["Architecture"], "arm64");
    assert_eq!(inspect["Layers"].as_array().map(Vec::len), Some(3));

    // A docker-archive base (Docker v2-2, uncompressed layers): the catalog is an OCI image
    // (same layer bytes, OCI media types) that skopeo reads from a layout.
    let docker_base = tmp.path().join("base.tar");
    olmpack::transport::write_image(
        &base.images[0],
        &format!("docker-archive:{}", docker_base.display())
            .parse()
            .expect("dest"),
        &["example.com/opm:v1".into()],
    )
    .expect("docker-archive base");
    let from_docker = tmp.path().join("from-docker");
    build_ok(&[
        "catalog",
        "build",
        small_catalog().to_str().unwrap(),
        "--base",
        &format!("docker-archive:{}", docker_base.display()),
        "--no-cache",
        "--output",
        &format!("oci:{}:v1", from_docker.display()),
    ]);
    let (_, m) = layout_top(&from_docker);
    assert_eq!(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(m["layers"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        m["layers"][0]["mediaType"],
        "application/vnd.oci.image.layer.v1.tar"
    );
    let inspect: Value = serde_json::from_str(&tool(
        "skopeo",
        &["inspect", &format!("oci:{}:v1", from_docker.display())],
    ))
    .expect("json");
    assert_eq!(inspect["Labels"][LABEL], "/configs");
}

#[test]
fn bad_input_gives_a_clear_error_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().expect("tmp");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).expect("mkdir");
    let out = |name: &str| format!("oci:{}", work.join(name).display());
    let digest_file = work.join("digest");
    let fails = |args: &[&str], needle: &str| {
        let mut all: Vec<&str> = vec!["catalog", "build"];
        all.extend_from_slice(args);
        let df = digest_file.display().to_string();
        all.extend_from_slice(&["--digest-file", &df]);
        let o = olmpack().args(&all).bounded_output().expect("run");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {stderr}");
        assert!(stderr.contains(needle), "{all:?}: {stderr}");
        assert!(o.stdout.is_empty());
        let left: Vec<_> = std::fs::read_dir(&work)
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "file")
            .collect();
        assert!(left.is_empty(), "{all:?} left {left:?}");
    };
    let cat = small_catalog().display().to_string();
    fails(
        &["/nonexistent/catalog", "--output", &out("a")],
        "not a catalog folder",
    );
    // A base that is not an image.
    std::fs::write(work.join("file"), "not an image").expect("write");
    let not_image = format!("oci-archive:{}", work.join("file").display());
    fails(
        &[&cat, "--base", &not_image, "--output", &out("b")],
        "cannot read the base image",
    );
    let empty_dir = tmp.path().join("empty");
    std::fs::create_dir(&empty_dir).expect("mkdir");
    fails(
        &[
            &cat,
            "--base",
            &format!("oci:{}", empty_dir.display()),
            "--output",
            &out("c"),
        ],
        "cannot read the base image",
    );
    // A platform the base lacks.
    let base = make_base(tmp.path(), &["linux/amd64"]);
    let base_dir = tmp.path().join("base");
    olmpack::transport::layout::write_index_layout(&base, &base_dir, &[]).expect("base");
    fails(
        &[
            &cat,
            "--base",
            &format!("oci:{}", base_dir.display()),
            "--platform",
            "linux/s390x",
            "--output",
            &out("d"),
        ],
        "has no image for platform linux/s390x (it has: linux/amd64)",
    );
    // An output that cannot be written (under a file).
    fails(
        &[
            &cat,
            "--output",
            &format!("oci:{}/x", work.join("file").display()),
        ],
        "cannot",
    );
    // Several platforms into a docker-archive.
    fails(
        &[
            &cat,
            "--platform",
            "linux/amd64",
            "--platform",
            "linux/arm64",
            "--output",
            &format!("docker-archive:{}", work.join("e.tar").display()),
        ],
        "single platform",
    );
    fails(
        &[&cat, "--configs-dir", "configs", "--output", &out("f")],
        "--configs-dir",
    );
    fails(
        &[&cat, "--platform", "linux", "--output", &out("g")],
        "invalid platform",
    );
}

#[test]
fn generate_dockerfile_writes_opm_text_once() {
    let tmp = tempfile::tempdir().expect("tmp");
    let cat = tmp.path().join("catalog");
    copy_dir(&small_catalog(), &cat);
    olmpack()
        .args(["catalog", "generate-dockerfile", cat.to_str().unwrap()])
        .assert()
        .success();
    let text = std::fs::read_to_string(tmp.path().join("catalog.Dockerfile")).expect("read");
    assert!(text.starts_with("# The builder image is expected to contain\n"));
    assert!(text.contains("ADD catalog /configs\n"));
    assert!(text.contains("CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n"));
    olmpack()
        .args(["catalog", "generate-dockerfile", cat.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("file already exists"));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("catalog.Dockerfile")).expect("read"),
        text
    );
    // Scratch variant with labels, from a path with a trailing slash.
    let cat2 = tmp.path().join("other");
    copy_dir(&small_catalog(), &cat2);
    olmpack()
        .args([
            "catalog",
            "generate-dockerfile",
            &format!("{}/", cat2.display()),
            "-i",
            "scratch",
            "-l",
            "b=2",
            "-l",
            "a=1",
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(tmp.path().join("other.Dockerfile")).expect("read");
    assert!(text.contains("FROM scratch\n# OLMv0 CatalogSources"));
    assert!(text.ends_with("# Set other custom labels\nLABEL \"a\"=\"1\"\nLABEL \"b\"=\"2\"\n"));
    olmpack()
        .args([
            "catalog",
            "generate-dockerfile",
            cat.to_str().unwrap(),
            "-b",
            "scratch",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "invalid builder image: \"scratch\"",
        ));
    olmpack()
        .args([
            "catalog",
            "generate-dockerfile",
            cat2.to_str().unwrap(),
            "-l",
            "novalue",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("invalid label \"novalue\""));
}

/// opm names the Dockerfile from the lexically cleaned path (Go filepath.Clean), so a symlink
/// `linked -> real` gives linked.Dockerfile with `ADD linked`; only `.` and `..` use the real
/// folder's name.
#[test]
fn generate_dockerfile_keeps_a_symlinks_name() {
    let tmp = tempfile::tempdir().expect("tmp");
    let real = tmp.path().join("real");
    copy_dir(&small_catalog(), &real);
    std::os::unix::fs::symlink("real", tmp.path().join("linked")).expect("symlink");
    olmpack()
        .current_dir(tmp.path())
        .args(["catalog", "generate-dockerfile", "./linked/"])
        .assert()
        .success();
    let text = std::fs::read_to_string(tmp.path().join("linked.Dockerfile")).expect("read");
    assert!(text.contains("ADD linked /configs\n"), "{text}");
    assert!(!tmp.path().join("real.Dockerfile").exists());
    std::fs::remove_file(tmp.path().join("linked.Dockerfile")).expect("rm");
    // `.` inside the folder: the real name, next to the folder.
    olmpack()
        .current_dir(&real)
        .args(["catalog", "generate-dockerfile", "."])
        .assert()
        .success();
    let text = std::fs::read_to_string(tmp.path().join("real.Dockerfile")).expect("read");
    assert!(text.contains("ADD real /configs\n"), "{text}");
}

/// Pushes through the counting proxy: scratch from real catalogs, then on a multi-platform
/// base in the same registry (its layers mounted, never downloaded), then the same again
/// (nothing uploaded), then a local output from the registry base (layers fetched).
#[test]
fn push_scratch_and_base_catalogs_to_a_registry() {
    let tmp = tempfile::tempdir().expect("tmp");
    let Some(cat) = corpus_catalog(tmp.path()) else {
        return;
    };
    let reg = Registry::start(Mode::Plain);
    let proxy = Proxy::start(reg.port, |_, _| Fault::Pass);
    let host = proxy.host();

    // Scratch, pushed to two tags.
    let t1 = format!("{host}/olm/catalog:scratch");
    let t2 = format!("{host}/olm/catalog:also");
    let o = olmpack()
        .args([
            "catalog",
            "build",
            cat.to_str().unwrap(),
            "-t",
            &t1,
            "-t",
            &t2,
            "--push",
        ])
        .bounded_output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let digest = stdout_digest(&o);
    assert!(stdout.contains(&format!("{t1}@{digest}")), "{stdout}");
    assert!(stdout.contains(&format!("{t2}@{digest}")), "{stdout}");
    let inspect: Value = serde_json::from_str(&tool(
        "skopeo",
        &["inspect", "--tls-verify=false", &format!("docker://{t1}")],
    ))
    .expect("json");
    assert_eq!(inspect["Labels"][LABEL], "/configs");
    assert_eq!(inspect["Digest"], digest);
    let copy = tmp.path().join("copy");
    tool(
        "skopeo",
        &[
            "copy",
            "--src-tls-verify=false",
            &format!("docker://{t1}"),
            &format!("oci:{}:v1", copy.display()),
        ],
    );
    assert_eq!(
        umoci_configs(&format!("{}:v1", copy.display()), tmp.path()),
        tree(&cat)
    );
    // The pushed image reads back through olmpack's own transport, label included.
    let unpacked = olmpack::transport::unpack_image(
        &olmpack::location::Location::parse(&t1).expect("a reference"),
        &olmpack::transport::RegistryOptions::default(),
    )
    .expect("unpack");
    assert_eq!(
        unpacked.labels.get(LABEL).map(String::as_str),
        Some("/configs")
    );
    assert_eq!(tree(&unpacked.dir.path().join("configs")), tree(&cat));
    // `catalog render` of the pushed image equals `catalog render` of the folder.
    let render = |source: &str| {
        let o = olmpack()
            .args(["catalog", "render", source, "-o", "yaml"])
            .bounded_output()
            .expect("render");
        assert!(
            o.status.success(),
            "render {source}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    let from_folder = render(cat.to_str().unwrap());
    assert!(!from_folder.is_empty());
    assert!(
        render(&t1) == from_folder,
        "render of the pushed image differs from the folder's"
    );

    // The base, pushed as a multi-platform index with olmpack's own sink.
    let base = make_base(tmp.path(), &["linux/amd64", "linux/arm64"]);
    let base_ref = format!("{host}/olm/opm-base:v1");
    push_index(&base, &base_ref);
    let base_layers: Vec<String> = base
        .images
        .iter()
        .flat_map(|i| i.layers.iter().map(|l| l.descriptor.digest.clone()))
        .collect();

    let push_catalog = || {
        let before = proxy.seen().len();
        let d = build_ok(&[
            "catalog",
            "build",
            cat.to_str().unwrap(),
            "--base",
            &base_ref,
            "--no-cache",
            "-t",
            &format!("{host}/olm/catalog-opm:v1"),
            "--push",
        ]);
        let seen: Vec<_> = proxy.seen().into_iter().skip(before).collect();
        let uploads = seen
            .iter()
            .filter(|s| {
                (s.method == "PUT" || s.method == "PATCH") && s.path.contains("/blobs/uploads/")
            })
            .count();
        let base_downloads = seen
            .iter()
            .filter(|s| s.method == "GET" && base_layers.iter().any(|l| s.path.ends_with(l)))
            .count();
        let mounts = seen
            .iter()
            .filter(|s| s.method == "POST" && s.path.contains("mount="))
            .count();
        (d, uploads, base_downloads, mounts)
    };
    let (d1, uploads, downloads, mounts) = push_catalog();
    // The configs layer once, one config per platform; base layers mounted, never downloaded.
    assert_eq!(uploads, 3, "first push uploads");
    assert_eq!(downloads, 0, "base layers downloaded");
    assert_eq!(
        mounts, 3,
        "base layers mounted (one shared, one per platform)"
    );
    let (d2, uploads, downloads, mounts) = push_catalog();
    assert_eq!(d2, d1, "not reproducible");
    assert_eq!(
        (uploads, downloads, mounts),
        (0, 0, 0),
        "second push moved blobs"
    );
    let raw: Value = serde_json::from_str(&tool(
        "skopeo",
        &[
            "inspect",
            "--raw",
            "--tls-verify=false",
            &format!("docker://{host}/olm/catalog-opm:v1"),
        ],
    ))
    .expect("json");
    assert_eq!(raw["manifests"].as_array().map(Vec::len), Some(2));
    assert!(
        render(&format!("{host}/olm/catalog-opm:v1")) == from_folder,
        "render of the catalog on a base differs from the folder's"
    );

    // Another registry holds none of the base blobs: they are fetched (verified) and uploaded.
    let other = Registry::start(Mode::Plain);
    let elsewhere = format!("{}/mirror/catalog:v1", other.host);
    let d4 = build_ok(&[
        "catalog",
        "build",
        cat.to_str().unwrap(),
        "--base",
        &base_ref,
        "--no-cache",
        "-t",
        &elsewhere,
        "--push",
    ]);
    assert_eq!(d4, d1);
    let raw: Value = serde_json::from_str(&tool(
        "skopeo",
        &[
            "inspect",
            "--raw",
            "--tls-verify=false",
            &format!("docker://{elsewhere}"),
        ],
    ))
    .expect("json");
    assert_eq!(raw["manifests"].as_array().map(Vec::len), Some(2));
    tool(
        "skopeo",
        &[
            "copy",
            "--src-tls-verify=false",
            &format!("docker://{elsewhere}"),
            &format!("oci:{}:m", tmp.path().join("mirror-copy").display()),
        ],
    );

    // A local output from a registry base fetches the base layers (verified) into the layout.
    let out = tmp.path().join("from-registry");
    let d3 = build_ok(&[
        "catalog",
        "build",
        cat.to_str().unwrap(),
        "--base",
        &base_ref,
        "--no-cache",
        "--output",
        &format!("oci:{}:v1", out.display()),
    ]);
    assert_eq!(d3, d1);
    check_catalog_index(&out, &base);
    tool("skopeo", &["inspect", &format!("oci:{}:v1", out.display())]);
}

/// The library call behind `catalog build`: validation errors stop it before anything is
/// written (findings given to the caller), and a valid catalog is built, delivered and its
/// digest recorded, with the same digest as the result.
#[test]
fn library_run_validates_builds_and_records_the_digest() {
    use olmpack::action::catalog_build::{
        self, CatalogBuildEvent, CatalogBuildOutcome, CatalogBuildRun,
    };
    use olmpack::transport::sink::Delivery;
    let tmp = tempfile::tempdir().expect("tmp");
    let out: olmpack::image::Destination = format!("oci:{}", tmp.path().join("img").display())
        .parse()
        .expect("destination");
    let digest_file = tmp.path().join("digest");
    let mut request = CatalogBuildRun {
        dir: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/catalogs/broken/channel-empty"),
        validate: true,
        delivery: Delivery {
            output: Some((out, Vec::new())),
            digest_file: Some(digest_file.clone()),
            ..Delivery::default()
        },
        ..CatalogBuildRun::default()
    };
    let mut findings = 0;
    let outcome = catalog_build::run(&request, &mut |e| {
        if let CatalogBuildEvent::Findings(r) = e {
            assert!(r.has_errors());
            findings += 1;
        }
    })
    .expect("run");
    assert!(matches!(outcome, CatalogBuildOutcome::Invalid));
    assert_eq!(findings, 1);
    assert!(!tmp.path().join("img").exists() && !digest_file.exists());

    request.dir = small_catalog();
    let outcome = catalog_build::run(&request, &mut |_| {}).expect("run");
    let CatalogBuildOutcome::Built(built) = outcome else {
        panic!("not built");
    };
    assert_eq!(built.layers, Some(1));
    assert_eq!(
        std::fs::read_to_string(&digest_file).expect("digest file"),
        built.digest
    );
    let (top, _) = layout_top(&tmp.path().join("img"));
    assert_eq!(top, built.digest);
}
