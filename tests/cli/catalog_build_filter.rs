//! `catalog build DIR --filter FILE`: the image is built from the filtered catalog, exactly as
//! if `catalog filter --output-dir` had written it first; its render holds only what the filter
//! kept, and its serve cache (regenerated for the filtered catalog) verifies.

use crate::support::cmd::olmpack;
use crate::support::umoci::{base_image, umoci};
use std::path::{Path, PathBuf};
use std::process::Command;

const CATALOG: &str = r#"{"schema":"olm.package","name":"op","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"op","entries":[{"name":"op.v1.0.0"},{"name":"op.v1.1.0","replaces":"op.v1.0.0"}]}
{"schema":"olm.bundle","name":"op.v1.0.0","package":"op","image":"quay.io/op/b:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"op.v1.1.0","package":"op","image":"quay.io/op/b:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.1.0"}}]}
{"schema":"olm.package","name":"other","defaultChannel":"alpha"}
{"schema":"olm.channel","name":"alpha","package":"other","entries":[{"name":"other.v0.1.0"}]}
{"schema":"olm.bundle","name":"other.v0.1.0","package":"other","image":"quay.io/other/b:0.1.0","properties":[{"type":"olm.package","value":{"packageName":"other","version":"0.1.0"}}]}
"#;

const FILTER: &str = "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: op\n";

/// A base made by umoci: one layer with /etc/passwd naming user 1001, run as 1001.
fn base(dir: &Path) -> String {
    let write_etc = |rootfs: &Path| {
        let etc = rootfs.join("etc");
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::write(
            etc.join("passwd"),
            "root:x:0:0::/root:/bin/sh\nopm:x:1001:0::/:/sbin/nologin\n",
        )
        .unwrap();
        std::fs::write(etc.join("group"), "root:x:0:\n").unwrap();
    };
    base_image(dir, Some(&write_etc), &["--config.user", "1001"])
}

fn build(dir: &Path, base: &str, out: &Path, extra: &[&str]) -> (String, String) {
    let o = olmpack()
        .env("SOURCE_DATE_EPOCH", "0")
        .args(["catalog", "build"])
        .arg(dir)
        .args(["--base", base, "--output"])
        .arg(format!("oci:{}:v1", out.display()))
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "catalog build: {stderr}");
    (String::from_utf8_lossy(&o.stdout).to_string(), stderr)
}

#[test]
fn catalog_build_with_filter_builds_the_filtered_catalog_with_its_own_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog: PathBuf = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), CATALOG).unwrap();
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(&cfg, FILTER).unwrap();
    let base = base(&tmp.path().join("base"));

    let out = tmp.path().join("out");
    let (digest, stderr) = build(&catalog, &base, &out, &["--filter", cfg.to_str().unwrap()]);
    assert!(stderr.contains("serve cache:"), "{stderr}");
    // The filter's own check is the validation: what filtering causes by design (the kept head
    // replaces a bundle left out) is not reported, and no temp folder is named.
    assert!(!stderr.contains("replaces-unknown"), "{stderr}");
    assert!(!stderr.contains("olmpack-catalog-"), "{stderr}");

    // Its render holds only the kept package.
    let render = olmpack()
        .args(["catalog", "render"])
        .arg(format!("oci:{}:v1", out.display()))
        .output()
        .unwrap();
    assert!(render.status.success());
    let text = String::from_utf8_lossy(&render.stdout);
    assert!(text.contains("\"op.v1.1.0\""), "{text}");
    assert!(!text.contains("other"), "{text}");

    // The shipped cache is the filtered catalog's: it verifies.
    olmpack()
        .args(["catalog", "cache", "verify"])
        .arg(format!("oci:{}:v1", out.display()))
        .assert()
        .success();

    // The same image as filtering into a folder first, then building that folder.
    let filtered = tmp.path().join("filtered");
    olmpack()
        .args(["catalog", "filter"])
        .arg(&catalog)
        .arg("--config")
        .arg(&cfg)
        .arg("--output-dir")
        .arg(&filtered)
        .assert()
        .success();
    let (again, _) = build(&filtered, &base, &tmp.path().join("out2"), &[]);
    assert_eq!(digest, again);

    // Without the filter the image differs (the other package is in it).
    let (whole, _) = build(&catalog, &base, &tmp.path().join("out3"), &[]);
    assert_ne!(digest, whole);
}

#[test]
fn catalog_build_filter_errors_name_the_problem_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), CATALOG).unwrap();
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: nope\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = olmpack()
        .args(["catalog", "build"])
        .arg(&catalog)
        .arg("--filter")
        .arg(&cfg)
        .arg("--output")
        .arg(format!("oci:{}", out.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(!out.exists());

    // A missing configuration file is named.
    let o = olmpack()
        .args(["catalog", "build"])
        .arg(&catalog)
        .args(["--filter", "/nonexistent/cfg.yaml", "--output"])
        .arg(format!("oci:{}", out.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/cfg.yaml"), "{stderr}");
    assert!(!out.exists());
}

// ---- A catalog image as source: base kept, /configs replaced, serve cache regenerated. ----

use crate::support::proc::Bounded;
use crate::support::registry::{Mode, Registry, diff_id, gz_file_layer, gzip_tar, push_index};
use crate::support::shared;
use olmpack::image::extend::{index_of, platform_json};
use olmpack::image::{Blob, Image, Platform};
use serde_json::{Value, json};

const LABEL: &str = "operators.operatorframework.io.index.configs.v1";
/// Three real packages of the shared v4.18 community catalog; the filter keeps one.
const PACKAGES: [&str; 3] = ["kube-green", "ecr-secret-operator", "kairos-operator"];
const KEEP: &str = "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: kube-green\n";

fn tool_out(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd)
        .args(args)
        .bounded_output()
        .unwrap_or_else(|e| panic!("run {cmd}: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn run_ok(args: &[&str]) -> (String, String) {
    let o = olmpack()
        .env("SOURCE_DATE_EPOCH", "0")
        .args(args)
        .bounded_output()
        .expect("run olmpack");
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "olmpack {args:?}: {stderr}");
    (String::from_utf8_lossy(&o.stdout).to_string(), stderr)
}

/// The real catalog folder (three packages copied from `../shared`), or `None` (skipped).
fn real_catalog(dir: &Path) -> Option<PathBuf> {
    let fbc = shared::shared_catalogs("fbc")?.join("fbc/community-operators-prod/catalogs/v4.18");
    let out = dir.join("catalog");
    for p in PACKAGES {
        crate::support::fs::copy_dir(&fbc.join(p), &out.join(p));
    }
    Some(out)
}

/// A two-platform opm-like base: a shared layer with /etc/passwd (user 1001, group 0), a
/// per-platform `/bin/opm` layer, run as 1001 with ENTRYPOINT /bin/opm.
fn two_platform_base(dir: &Path) -> olmpack::image::ImageIndex {
    let shared_layer = gzip_tar(&[
        (
            "etc/passwd",
            b"root:x:0:0::/root:/bin/sh\nopm:x:1001:0::/:/sbin/nologin\n",
        ),
        ("etc/group", b"root:x:0:\n"),
    ]);
    let shared_path = dir.join("shared.tar.gz");
    std::fs::write(&shared_path, &shared_layer).unwrap();
    let mut images = Vec::new();
    for p in ["linux/amd64", "linux/arm64"] {
        let platform: Platform = p.parse().unwrap();
        let own = gzip_tar(&[("bin/opm", format!("fake opm for {p}\n").as_bytes())]);
        let own_path = dir.join(format!("{}.tar.gz", p.replace('/', "-")));
        std::fs::write(&own_path, &own).unwrap();
        let config = serde_json::to_vec(&json!({
            "architecture": platform.architecture,
            "os": platform.os,
            "config": {
                "User": "1001",
                "Entrypoint": ["/bin/opm"],
                "Labels": {"org.example.base": "yes"},
            },
            "rootfs": {"type": "layers", "diff_ids": [diff_id(&shared_layer), diff_id(&own)]},
            "history": [{"created_by": "base"}, {"created_by": "opm"}],
        }))
        .unwrap();
        let config = Blob::memory("application/vnd.oci.image.config.v1+json", config);
        let layers = vec![
            gz_file_layer(&shared_layer, &shared_path),
            gz_file_layer(&own, &own_path),
        ];
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": config.descriptor.media_type, "digest": config.descriptor.digest, "size": config.descriptor.size},
            "layers": layers.iter().map(|l| json!({"mediaType": l.descriptor.media_type, "digest": l.descriptor.digest, "size": l.descriptor.size})).collect::<Vec<_>>(),
        }))
        .unwrap();
        images.push((
            Image {
                manifest: Blob::memory("application/vnd.oci.image.manifest.v1+json", manifest),
                config,
                layers,
            },
            platform_json(&platform),
        ));
    }
    index_of(images)
}

/// `docker://REF` read raw by skopeo.
fn raw(reference: &str) -> Value {
    serde_json::from_str(&tool_out(
        "skopeo",
        &[
            "inspect",
            "--raw",
            "--tls-verify=false",
            &format!("docker://{reference}"),
        ],
    ))
    .unwrap()
}

fn layer_digests(manifest: &Value) -> Vec<String> {
    manifest["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["digest"].as_str().unwrap().to_string())
        .collect()
}

/// Every file under `root`, relative.
fn files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// `opm serve` (v1.26.5, `/work/tools/opm`, never needed in CI) on an unpacked rootfs, as
/// uid 1001 with the cache's integrity enforced: it must reach the point of listening.
fn opm_serves(rootfs: &Path) {
    let opm = Path::new("/work/tools/opm");
    if !opm.is_file() {
        eprintln!("SKIPPED: opm serve check (/work/tools/opm absent)");
        return;
    }
    if !crate::support::proc::can_switch_user() {
        eprintln!("SKIPPED: opm serve check (cannot switch to uid 1001)");
        return;
    }
    crate::support::proc::open_up(rootfs);
    let port = crate::support::registry::free_port();
    let log = rootfs.with_extension("opm.log");
    let mut child = crate::support::proc::as_user(opm)
        .arg("serve")
        .arg(rootfs.join("configs"))
        .arg(format!(
            "--cache-dir={}",
            rootfs.join("tmp/cache").display()
        ))
        .arg("--cache-enforce-integrity")
        .args(["-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start opm");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let listening = loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "opm exited ({status}) instead of serving: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break true;
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(listening, "opm did not listen within 60 s: {text}");
    assert!(!text.contains("cache requires rebuild"), "{text}");
}

#[test]
fn a_two_platform_catalog_image_is_filtered_in_the_registry_with_its_base_kept() {
    if !shared::tool("skopeo", "skopeo")
        || !shared::tool("umoci", "umoci")
        || !shared::tool("docker-registry", "docker-registry")
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(catalog) = real_catalog(tmp.path()) else {
        return;
    };
    let reg = Registry::start(Mode::Plain);
    let base = two_platform_base(tmp.path());
    let base_ref = reg.reference("olm/opm-base", "v1");
    push_index(&base, &base_ref);
    // The source: olmpack's own catalog image of three real packages, with a cache.
    let source = reg.reference("olm/catalog", "v1");
    run_ok(&[
        "catalog",
        "build",
        catalog.to_str().unwrap(),
        "--base",
        &base_ref,
        "-t",
        &source,
        "--push",
    ]);
    let cfg = tmp.path().join("keep.yaml");
    std::fs::write(&cfg, KEEP).unwrap();
    let filtered = reg.reference("olm/catalog", "filtered");
    let (stdout, stderr) = run_ok(&[
        "catalog",
        "build",
        &source,
        "--filter",
        cfg.to_str().unwrap(),
        "-t",
        &filtered,
        "--push",
    ]);
    assert!(stderr.contains("serve cache:"), "{stderr}");
    assert!(stderr.contains("dropped"), "{stderr}");
    let digest = stdout.split_whitespace().next().unwrap().to_string();
    assert!(stdout.contains(&format!("{filtered}@{digest}")), "{stdout}");

    // Same input, same digest (here into an OCI layout).
    let layout = tmp.path().join("again");
    let (again, _) = run_ok(&[
        "catalog",
        "build",
        &source,
        "--filter",
        cfg.to_str().unwrap(),
        "--output",
        &format!("oci:{}:v1", layout.display()),
    ]);
    assert_eq!(again.split_whitespace().next().unwrap(), digest);

    // Two platforms; each keeps its base layers (same digests) and gets one catalog layer
    // (the same blob on both) and one cache layer; the source's catalog and cache are gone.
    let index = raw(&filtered);
    let src_index = raw(&source);
    let entries = index["manifests"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{index}");
    let mut catalog_layers = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let arch = entry["platform"]["architecture"].as_str().unwrap();
        let m = raw(&format!(
            "{}@{}",
            filtered.rsplit_once(':').unwrap().0,
            entry["digest"].as_str().unwrap()
        ));
        let src_entry = &src_index["manifests"][i];
        assert_eq!(src_entry["platform"]["architecture"], arch);
        let src = raw(&format!(
            "{}@{}",
            source.rsplit_once(':').unwrap().0,
            src_entry["digest"].as_str().unwrap()
        ));
        let (layers, src_layers) = (layer_digests(&m), layer_digests(&src));
        let base_layers: Vec<String> = base.images[i]
            .layers
            .iter()
            .map(|l| l.descriptor.digest.clone())
            .collect();
        assert_eq!(layers.len(), 4, "{m}");
        assert_eq!(layers[..2], base_layers[..], "{arch}: base layers kept");
        assert_eq!(src_layers[..2], base_layers[..]);
        assert!(
            !layers[2..].iter().any(|l| src_layers[2..].contains(l)),
            "{arch}: a source catalog or cache layer survived"
        );
        catalog_layers.push(layers[2].clone());
    }
    assert_eq!(catalog_layers[0], catalog_layers[1]);

    // Each platform unpacked: only the kept package in /configs, a cache of that package
    // only, the base's files and config kept.
    for arch in ["amd64", "arm64"] {
        let dir = tmp.path().join(arch);
        tool_out(
            "skopeo",
            &[
                "copy",
                "--src-tls-verify=false",
                "--override-arch",
                arch,
                &format!("docker://{filtered}"),
                &format!("oci:{}:v1", dir.display()),
            ],
        );
        let bundle = tmp.path().join(format!("{arch}.bundle"));
        tool_out(
            "umoci",
            &[
                "unpack",
                "--image",
                &format!("{}:v1", dir.display()),
                bundle.to_str().unwrap(),
            ],
        );
        let rootfs = bundle.join("rootfs");
        assert_eq!(files(&rootfs.join("configs")), ["kube-green/catalog.json"]);
        let cache = files(&rootfs.join("tmp/cache/cache"));
        assert!(cache.len() >= 2, "{cache:?}");
        assert!(
            cache
                .iter()
                .all(|f| f == "packages.json" || f.starts_with("kube-green_")),
            "stale cache entries: {cache:?}"
        );
        assert_eq!(
            std::fs::read_to_string(rootfs.join("bin/opm")).unwrap(),
            format!("fake opm for linux/{arch}\n")
        );
        let config: Value = serde_json::from_str(&tool_out(
            "skopeo",
            &["inspect", "--config", &format!("oci:{}:v1", dir.display())],
        ))
        .unwrap();
        assert_eq!(config["config"]["User"], "1001");
        assert_eq!(config["config"]["Entrypoint"], json!(["/bin/opm"]));
        assert_eq!(
            config["config"]["Cmd"],
            json!(["serve", "/configs", "--cache-dir=/tmp/cache"])
        );
        assert_eq!(config["config"]["Labels"]["org.example.base"], "yes");
        assert_eq!(config["config"]["Labels"][LABEL], "/configs");
        assert_eq!(config["rootfs"]["diff_ids"].as_array().unwrap().len(), 4);
        // olmpack's check of the cache, the way opm checks it.
        let (report, _) = run_ok(&[
            "catalog",
            "cache",
            "verify",
            &format!("oci:{}:v1", dir.display()),
        ]);
        assert!(
            report.contains("ok: opm will accept this cache"),
            "{report}"
        );
        opm_serves(&rootfs);
    }
    // The source itself is unchanged and still holds all three packages.
    let (render, _) = run_ok(&["catalog", "render", &source]);
    for p in PACKAGES {
        assert!(render.contains(&format!("\"{p}\"")), "{p}");
    }
}

/// An image whose one layer holds the base's files, the catalog and its cache (a squashed
/// image): that layer is rewritten without /configs and /tmp/cache, every other entry kept.
#[test]
fn a_squashed_catalog_image_gets_its_layer_rewritten() {
    if !shared::tool("umoci", "umoci") || !shared::tool("skopeo", "skopeo") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), CATALOG).unwrap();
    let base = base(&tmp.path().join("base"));
    let built = tmp.path().join("built");
    build(&catalog, &base, &built, &[]);
    // Squash: the built image's rootfs as one layer, with its config.
    let unpacked = tmp.path().join("unpacked");
    umoci(&[
        "unpack",
        "--image",
        &format!("{}:v1", built.display()),
        unpacked.to_str().unwrap(),
    ]);
    let sq = tmp.path().join("squashed");
    let sq_image = format!("{}:v1", sq.display());
    umoci(&["init", "--layout", sq.to_str().unwrap()]);
    umoci(&["new", "--image", &sq_image]);
    let sq_bundle = tmp.path().join("sq.bundle");
    umoci(&["unpack", "--image", &sq_image, sq_bundle.to_str().unwrap()]);
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", unpacked.join("rootfs").display()))
        .arg(sq_bundle.join("rootfs"))
        .status()
        .unwrap();
    assert!(status.success());
    umoci(&["repack", "--image", &sq_image, sq_bundle.to_str().unwrap()]);
    umoci(&[
        "config",
        "--image",
        &sq_image,
        "--config.user",
        "1001",
        "--config.entrypoint",
        "/bin/opm",
        "--config.cmd",
        "serve",
        "--config.cmd",
        "/configs",
        "--config.cmd",
        "--cache-dir=/tmp/cache",
        "--config.label",
        &format!("{LABEL}=/configs"),
    ]);
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(&cfg, FILTER).unwrap();
    let out = tmp.path().join("out");
    let (_, stderr) = run_ok(&[
        "catalog",
        "build",
        &format!("oci:{sq_image}"),
        "--filter",
        cfg.to_str().unwrap(),
        "--output",
        &format!("oci:{}:v1", out.display()),
    ]);
    assert!(stderr.contains("rewritten without the catalog"), "{stderr}");
    let (report, _) = run_ok(&[
        "catalog",
        "cache",
        "verify",
        &format!("oci:{}:v1", out.display()),
    ]);
    assert!(
        report.contains("ok: opm will accept this cache"),
        "{report}"
    );
    // The rewritten first layer: the base's files, no catalog, no cache.
    let manifest: Value = serde_json::from_str(&tool_out(
        "skopeo",
        &["inspect", "--raw", &format!("oci:{}:v1", out.display())],
    ))
    .unwrap();
    let layers = layer_digests(&manifest);
    assert_eq!(layers.len(), 3, "{manifest}");
    let blob = out
        .join("blobs/sha256")
        .join(layers[0].trim_start_matches("sha256:"));
    let listing = tool_out("tar", &["-tzf", blob.to_str().unwrap()]);
    let names: Vec<&str> = listing.lines().collect();
    assert!(names.iter().any(|n| n.ends_with("etc/passwd")), "{listing}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("configs") || n.contains("tmp/cache")),
        "{listing}"
    );
    let bundle = tmp.path().join("out.bundle");
    umoci(&[
        "unpack",
        "--image",
        &format!("{}:v1", out.display()),
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(files(&bundle.join("rootfs/configs")), ["op/catalog.json"]);
    opm_serves(&bundle.join("rootfs"));
}

/// What a user mistypes: a reference that names nothing, a package the image lacks, an image
/// without --filter. Each is named, exit 2, nothing written.
#[test]
fn image_source_errors_name_the_problem_and_write_nothing() {
    if !shared::tool("umoci", "umoci") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), CATALOG).unwrap();
    let base = base(&tmp.path().join("base"));
    let built = tmp.path().join("built");
    build(&catalog, &base, &built, &[]);
    let source = format!("oci:{}:v1", built.display());
    let good = tmp.path().join("good.yaml");
    std::fs::write(&good, FILTER).unwrap();
    let unknown = tmp.path().join("unknown.yaml");
    std::fs::write(
        &unknown,
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: nope\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let fails = |args: &[&str], want: &str| {
        let o = olmpack()
            .args(args)
            .arg("--output")
            .arg(format!("oci:{}", out.display()))
            .bounded_output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: want {want:?} in {stderr}");
        assert!(!out.exists());
    };
    let missing = format!("oci:{}/nothere:v1", tmp.path().display());
    fails(
        &[
            "catalog",
            "build",
            &missing,
            "--filter",
            good.to_str().unwrap(),
        ],
        "no such file or folder",
    );
    fails(
        &[
            "catalog",
            "build",
            "catlog",
            "--filter",
            good.to_str().unwrap(),
        ],
        "nothing was sent to a registry",
    );
    fails(
        &[
            "catalog",
            "build",
            &source,
            "--filter",
            unknown.to_str().unwrap(),
        ],
        "nope",
    );
    fails(&["catalog", "build", &source], "needs --filter");
    fails(
        &[
            "catalog",
            "build",
            &source,
            "--filter",
            good.to_str().unwrap(),
            "--base",
            &base,
        ],
        "--base",
    );
}

#[test]
fn catalog_build_filter_adds_what_the_kept_bundles_require() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    // op 1.1.0 requires the package `other`: the filter naming `op` keeps `other` too.
    let requiring = CATALOG.replace(
        r#"{"packageName":"op","version":"1.1.0"}}"#,
        r#"{"packageName":"op","version":"1.1.0"}},{"type":"olm.package.required","value":{"packageName":"other","versionRange":">=0.1.0"}}"#,
    );
    assert_ne!(requiring, CATALOG);
    std::fs::write(catalog.join("catalog.json"), &requiring).unwrap();
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(&cfg, FILTER).unwrap();
    let base = base(&tmp.path().join("base"));
    let render = |out: &Path| {
        let o = olmpack()
            .args(["catalog", "render"])
            .arg(format!("oci:{}:v1", out.display()))
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).to_string()
    };

    let out = tmp.path().join("out");
    let (_, stderr) = build(&catalog, &base, &out, &["--filter", cfg.to_str().unwrap()]);
    assert!(
        stderr.contains("added bundle \"other.v0.1.0\" (package \"other\", channel \"alpha\") for bundle \"op.v1.1.0\""),
        "{stderr}"
    );
    assert!(render(&out).contains("\"other.v0.1.0\""));

    let bare = tmp.path().join("bare");
    build(
        &catalog,
        &base,
        &bare,
        &["--filter", cfg.to_str().unwrap(), "--no-dependencies"],
    );
    assert!(!render(&bare).contains("\"other.v0.1.0\""));
}
