//! Reads under a signature policy read what the policy verified (issue 39 items 1, 2 and 9):
//! - a registry (here a proxy in front of a real one) that answers the first manifest `GET` of
//!   a tag with the signed image and every later one with an unsigned image: every command that
//!   reads under `--policy` reads the signed image or fails, never the swapped one;
//! - an `oci:` layout whose `index.json` has two entries for one tag: `verify`, `--policy` and
//!   the readers all take the first, as skopeo does;
//! - `catalog add`, `catalog mirror` and `copy` honour `--policy` and `OLMPACK_POLICY` like
//!   every other reader.

use crate::signing::{Gpg, code, ok, olmpack, out, registries_d, text, tool};
use crate::support::proc::spawn_with_stderr_lines;
use crate::support::registry::{
    Fault, Mode, Proxy, Registry, image_from_layers, sha256, write_layout,
};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";

/// A bundle image whose CSV has `version` (the marker that tells the two images apart).
pub(crate) fn bundle(dir: &Path, version: &str) -> olmpack::image::Image {
    std::fs::create_dir_all(dir).expect("mkdir");
    let csv = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: swapop.v{version}\nspec:\n  version: {version}\n  displayName: Swap\n"
    );
    let annotations = "annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: swapop\n";
    image_from_layers(
        dir,
        &[
            vec![("manifests/csv.yaml", csv.as_bytes())],
            vec![("metadata/annotations.yaml", annotations.as_bytes())],
        ],
        crate::support::registry::labels("swapop"),
        serde_json::json!({}),
    )
}

/// A catalog image holding packages `names` (one bundle each).
pub(crate) fn catalog(dir: &Path, names: &[&str]) -> olmpack::image::Image {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut text = String::new();
    for n in names {
        text.push_str(&format!(
            "{{\"schema\":\"olm.package\",\"name\":\"{n}\",\"defaultChannel\":\"alpha\"}}\n{{\"schema\":\"olm.channel\",\"name\":\"alpha\",\"package\":\"{n}\",\"entries\":[{{\"name\":\"{n}.v1.0.0\"}}]}}\n{{\"schema\":\"olm.bundle\",\"name\":\"{n}.v1.0.0\",\"package\":\"{n}\",\"image\":\"example.invalid/{n}-bundle:v1\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"{n}\",\"version\":\"1.0.0\"}}}}]}}\n"
        ));
    }
    image_from_layers(
        dir,
        &[vec![("configs/catalog.json", text.as_bytes())]],
        serde_json::json!({ CONFIGS_LABEL: "/configs" }),
        serde_json::json!({}),
    )
}

/// Pushes `image` to `reference` (through a layout, with skopeo); its manifest digest.
pub(crate) fn push(image: &olmpack::image::Image, dir: &Path, reference: &str) -> String {
    let layout = dir.join(format!("push-{}", reference.replace(['/', ':'], "_")));
    write_layout(image, &layout, "x");
    ok(tool("skopeo").args([
        "copy",
        "--quiet",
        "--dest-tls-verify=false",
        &format!("oci:{}:x", layout.display()),
        &format!("docker://{reference}"),
    ]));
    image.manifest.descriptor.digest.clone()
}

/// The digest of the image `tag` names in the layout `dir` (the first entry, as skopeo reads).
pub(crate) fn skopeo_digest(image: &str) -> String {
    let raw = out(tool("skopeo").args(["inspect", "--raw", image]));
    assert!(raw.status.success(), "{}", text(&raw));
    sha256(&raw.stdout)
}

/// The manifest JSON of the image `tag` names in the layout `dir` (by skopeo, independently).
fn layout_manifest(dir: &Path, tag: &str) -> serde_json::Value {
    let raw =
        out(tool("skopeo").args(["inspect", "--raw", &format!("oci:{}:{tag}", dir.display())]));
    assert!(raw.status.success(), "{}", text(&raw));
    serde_json::from_slice(&raw.stdout).expect("manifest json")
}

/// `olmpack sign REFERENCE --gpg-key KEY` (a secret key file in `d`), the signature written to
/// the lookaside store `rd` names: the signed image the policy tests read.
pub(crate) fn gpg_sign(d: &Path, reference: &str, key: &str, rd: &Path) {
    ok(&mut olmpack(
        d,
        &[
            "sign",
            reference,
            "--gpg-key",
            key,
            "--registries-d",
            rd.to_str().expect("utf8"),
        ],
    ));
}

/// The two policies the policy tests run under, written in `d`: `reject.json` (reject
/// everything) and `signed.json` (images from `host` signed by the key in `one.gpg`, nothing
/// else).
pub(crate) fn write_policies(d: &Path, host: &str) {
    std::fs::write(d.join("reject.json"), r#"{"default":[{"type":"reject"}]}"#).expect("write");
    let policy = signed_by_one(d, host);
    std::fs::write(d.join("signed.json"), policy.to_string()).expect("write");
}

/// A policy that accepts images from `host` signed by the key in `d/one.gpg`, and rejects
/// everything else.
fn signed_by_one(d: &Path, host: &str) -> serde_json::Value {
    serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"docker": {
            host: [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": d.join("one.gpg")}],
        }}
    })
}

/// `catalog serve` started: its "serving …" line, or everything it printed when it exited
/// first. The server is stopped (SIGTERM, as a cluster stops it) either way.
fn serve_line(mut cmd: Command) -> Result<String, String> {
    let (mut child, rx) = spawn_with_stderr_lines(&mut cmd);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = String::new();
    let result = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.starts_with("serving ") => break Ok(line),
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            Err(_) => break Err(seen),
        }
    };
    crate::support::proc::stop(&mut child);
    result
}

/// A registry behind a proxy that, once armed, answers the first `GET` of a `…/manifests/v1`
/// with the image tagged `v1` and every later one with the image tagged `evil`.
pub(crate) struct Swapping {
    pub(crate) reg: Registry,
    pub(crate) proxy: Proxy,
    armed: Arc<AtomicBool>,
    pub(crate) served: Arc<AtomicUsize>,
}

impl Swapping {
    pub(crate) fn start() -> Swapping {
        let reg = Registry::start(Mode::Plain);
        let armed = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let (a, n) = (armed.clone(), served.clone());
        let proxy = Proxy::start(reg.port, move |s, _| {
            if a.load(Ordering::SeqCst) && s.method == "GET" && s.path.ends_with("/manifests/v1") {
                if n.fetch_add(1, Ordering::SeqCst) == 0 {
                    return Fault::Pass;
                }
                let swapped = s.path.replace("/manifests/v1", "/manifests/evil");
                return Fault::Path(swapped);
            }
            Fault::Pass
        });
        Swapping {
            reg,
            proxy,
            armed,
            served,
        }
    }

    /// Arms the swap afresh (the next `GET` of `v1` is the first).
    pub(crate) fn arm(&self) {
        self.served.store(0, Ordering::SeqCst);
        self.armed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn reference(&self, repo: &str, tag: &str) -> String {
        format!("{}/{repo}:{tag}", self.proxy.host())
    }
}

/// Item 1: the check and the read must not fetch the tag separately. Each command that reads
/// under `--policy` is run against the swapping proxy: it may read the signed image or fail,
/// never read the unsigned one served to a second request.
#[test]
fn a_tag_swapped_after_the_policy_check_is_never_read() {
    let sw = Swapping::start();
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let (_gpg, rd) = key_one(d);
    let direct = |repo: &str, tag: &str| sw.reg.reference(repo, tag);
    // sw: a signed bundle at v1, an unsigned one at evil. cat: the same for catalogs.
    let good_image = bundle(&d.join("good"), "1.0.0");
    let good = push(&good_image, d, &direct("sw", "v1"));
    let evil = push(&bundle(&d.join("evil"), "6.6.6"), d, &direct("sw", "evil"));
    push(
        &catalog(&d.join("gc"), &["goodpkg"]),
        d,
        &direct("cat", "v1"),
    );
    let evil_cat = push(
        &catalog(&d.join("ec"), &["evilpkg", "evilpkg2"]),
        d,
        &direct("cat", "evil"),
    );
    for r in ["sw", "cat"] {
        gpg_sign(d, &sw.reference(r, "v1"), "one.sec.asc", &rd);
    }
    let policy = signed_by_one(d, &sw.proxy.host());
    std::fs::write(d.join("policy.json"), policy.to_string()).expect("write");
    let run = |args: &[&str]| -> Output {
        sw.arm();
        out(olmpack(d, args)
            .env("OLMPACK_POLICY", d.join("policy.json"))
            .env("OLMPACK_REGISTRIES_D", &rd))
    };
    let (bundle_ref, cat_ref) = (sw.reference("sw", "v1"), sw.reference("cat", "v1"));
    let mut failures = Vec::new();
    let o = run(&["bundle", "inspect", &bundle_ref, "--no-files", "-o", "json"]);
    judge(&mut failures, "bundle inspect", &o, &[&good], &[&evil]);
    let o = run(&["bundle", "pull", &bundle_ref, "pulled"]);
    let csv = std::fs::read_to_string(d.join("pulled/manifests/csv.yaml")).unwrap_or_default();
    judge(&mut failures, "bundle pull", &o, &[], &[&evil]);
    if csv.contains("6.6.6") {
        failures.push("bundle pull: wrote the swapped image".into());
    }
    let o = run(&["bundle", "validate", "--image", &bundle_ref]);
    judge(
        &mut failures,
        "bundle validate --image",
        &o,
        &[&good],
        &[&evil],
    );
    // A bundle with findings exits 1, still naming the image it read.
    if code(&o) == 1 && !text(&o).contains(&good) {
        failures.push(format!(
            "bundle validate --image: not the signed image: {}",
            text(&o)
        ));
    }
    let o = run(&["catalog", "render", &cat_ref]);
    judge(
        &mut failures,
        "catalog render",
        &o,
        &["goodpkg"],
        &["evilpkg"],
    );
    let mut serve = olmpack(
        d,
        &[
            "catalog",
            "serve",
            &cat_ref,
            "--addr",
            "127.0.0.1",
            "-p",
            "0",
        ],
    );
    serve
        .env("OLMPACK_POLICY", d.join("policy.json"))
        .env("OLMPACK_REGISTRIES_D", &rd);
    sw.arm();
    let served = serve_line(serve);
    eprintln!("catalog serve: {served:?}");
    match served {
        Ok(line) if !line.contains(" 1 packages") => {
            failures.push(format!("catalog serve: served the swapped image: {line}"))
        }
        Ok(_) => {}
        Err(t) if t.contains("evilpkg") => {
            failures.push(format!("catalog serve: read the swapped image: {t}"))
        }
        Err(_) => {}
    }
    let folder = d.join("folder");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(
        folder.join("catalog.json"),
        "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"alpha\"}\n{\"schema\":\"olm.channel\",\"name\":\"alpha\",\"package\":\"p\",\"entries\":[{\"name\":\"p.v1\"}]}\n{\"schema\":\"olm.bundle\",\"name\":\"p.v1\",\"package\":\"p\",\"image\":\"example.invalid/p:v1\",\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}}]}\n",
    )
    .expect("write");
    let built = d.join("built");
    let o = run(&[
        "catalog",
        "build",
        folder.to_str().expect("utf8"),
        "--base",
        &bundle_ref,
        "--output",
        &format!("oci:{}:b", built.display()),
    ]);
    eprintln!("catalog build --base: exit {}", code(&o));
    if o.status.success() {
        let layers = layout_manifest(&built, "b")["layers"].to_string();
        if !layers.contains(&good_image.layers[0].descriptor.digest) {
            failures.push(format!(
                "catalog build --base: built on the swapped base: {layers}"
            ));
        }
    }
    let copied = d.join("copied");
    let o = run(&["copy", &bundle_ref, &format!("oci:{}:c", copied.display())]);
    judge(&mut failures, "copy", &o, &[&good], &[&evil]);
    if o.status.success() && skopeo_digest(&format!("oci:{}:c", copied.display())) != good {
        failures.push("copy: copied the swapped image".into());
    }
    let cat_dir = d.join("addto");
    std::fs::create_dir_all(&cat_dir).expect("mkdir");
    let o = run(&[
        "catalog",
        "add",
        cat_dir.to_str().expect("utf8"),
        &bundle_ref,
    ]);
    let added = std::fs::read_dir(&cat_dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| walk(&e.path()))
        .collect::<String>();
    judge(&mut failures, "catalog add", &o, &[], &["6.6.6"]);
    if added.contains("6.6.6") {
        failures.push(format!("catalog add: added the swapped bundle: {added}"));
    }
    let o = run(&[
        "catalog",
        "mirror",
        &cat_ref,
        "--dry-run",
        "--results-dir",
        d.join("results").to_str().expect("utf8"),
    ]);
    // The plan pins the catalog by a second GET of its tag: the swapped digest may be named in
    // the refusal, but nothing of it may be read.
    judge(&mut failures, "catalog mirror", &o, &[], &["evilpkg"]);
    if o.status.success() {
        failures.push(format!(
            "catalog mirror: planned the swapped catalog {evil_cat}: {}",
            text(&o)
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Records a failure when `o` shows one of `evil_marks` (the swapped image was read), or exits
/// 0 without all of `good_marks` (what was read is not the signed image).
fn judge(
    failures: &mut Vec<String>,
    what: &str,
    o: &Output,
    good_marks: &[&str],
    evil_marks: &[&str],
) {
    let t = text(o);
    eprintln!("{what}: exit {}", code(o));
    if let Some(m) = evil_marks.iter().find(|m| t.contains(*m)) {
        failures.push(format!("{what}: read the swapped image ({m}): {t}"));
    } else if o.status.success() && !good_marks.iter().all(|m| t.contains(m)) {
        failures.push(format!("{what}: exit 0 without the signed image: {t}"));
    }
}

/// Every file under `p`, as text.
fn walk(p: &Path) -> Vec<String> {
    if p.is_dir() {
        std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|e| walk(&e.path()))
            .collect()
    } else {
        vec![std::fs::read_to_string(p).unwrap_or_default()]
    }
}

/// Adds an entry for `image` tagged `tag` to the layout `dir` (blobs copied in), first or last
/// in `index.json`.
fn add_duplicate(dir: &Path, image: &olmpack::image::Image, tag: &str, first: bool) {
    let other = dir.with_extension("tmp");
    write_layout(image, &other, tag);
    for e in std::fs::read_dir(other.join("blobs/sha256"))
        .expect("blobs")
        .flatten()
    {
        let to = dir.join("blobs/sha256").join(e.file_name());
        if !to.exists() {
            std::fs::copy(e.path(), to).expect("copy blob");
        }
    }
    let index_path = dir.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).expect("read")).expect("json");
    let entry = serde_json::json!({
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": image.manifest.descriptor.digest,
        "size": image.manifest.descriptor.size,
        "annotations": {"org.opencontainers.image.ref.name": tag},
    });
    let list = index["manifests"].as_array_mut().expect("manifests");
    if first {
        list.insert(0, entry);
    } else {
        list.push(entry);
    }
    std::fs::write(&index_path, index.to_string()).expect("write");
    std::fs::remove_dir_all(&other).expect("rm");
}

/// Item 2: two `index.json` entries for one tag. skopeo (containers/image) reads the first;
/// olmpack's `verify`, `--policy` and readers must all take that same one.
#[test]
fn a_layout_tag_listed_twice_is_verified_and_read_as_skopeo_reads_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "c"],
    ));
    let signed = bundle(&d.join("s"), "1.0.0");
    let unsigned = bundle(&d.join("u"), "6.6.6");
    let policy = serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"oci": {"": [{
            "type": "sigstoreSigned",
            "keyPath": d.join("c.pub"),
            "signedIdentity": {"type": "exactRepository", "dockerRepository": "example.com/swap/op"},
        }]}}
    });
    std::fs::write(d.join("policy.json"), policy.to_string()).expect("write");
    let mut failures = Vec::new();
    // The unsigned image listed before (the attack) and after (harmless) the signed one.
    for unsigned_first in [true, false] {
        let layout = d.join(format!("layout-{unsigned_first}"));
        write_layout(&signed, &layout, "v1");
        let image = format!("oci:{}:v1", layout.display());
        ok(&mut olmpack(
            d,
            &[
                "sign",
                &image,
                "--key",
                "c.key",
                "--format",
                "legacy",
                "--identity",
                "example.com/swap/op:v1",
            ],
        ));
        add_duplicate(&layout, &unsigned, "v1", unsigned_first);
        let read_by_skopeo = skopeo_digest(&image);
        let expect = if unsigned_first {
            &unsigned.manifest.descriptor.digest
        } else {
            &signed.manifest.descriptor.digest
        };
        assert_eq!(&read_by_skopeo, expect, "skopeo reads the first entry");
        let verify = out(&mut olmpack(d, &["verify", &image, "--key", "c.pub"]));
        let inspect = out(olmpack(
            d,
            &["bundle", "inspect", &image, "--no-files", "-o", "json"],
        )
        .env("OLMPACK_POLICY", d.join("policy.json")));
        let pull_dir = d.join(format!("pulled-{unsigned_first}"));
        let pull = out(&mut olmpack(
            d,
            &[
                "bundle",
                "pull",
                &image,
                pull_dir.to_str().expect("utf8"),
                "--policy",
                "policy.json",
            ],
        ));
        if unsigned_first {
            if verify.status.success() {
                failures.push(format!(
                    "verify accepts the tag skopeo reads as an unsigned image: {}",
                    text(&verify)
                ));
            }
            for (what, o) in [("bundle inspect", &inspect), ("bundle pull", &pull)] {
                if code(o) != 1 {
                    failures.push(format!(
                        "{what} --policy reads the unsigned first entry (exit {}): {}",
                        code(o),
                        text(o)
                    ));
                }
            }
            if pull_dir.join("manifests").exists() {
                failures.push("bundle pull wrote the unsigned image".into());
            }
        } else {
            for (what, o) in [
                ("verify", &verify),
                ("bundle inspect", &inspect),
                ("bundle pull", &pull),
            ] {
                if !o.status.success() {
                    failures.push(format!(
                        "{what}: the signed first entry is refused: {}",
                        text(o)
                    ));
                }
            }
            if !text(&inspect).contains(&signed.manifest.descriptor.digest) {
                failures.push(format!(
                    "bundle inspect did not read the first entry: {}",
                    text(&inspect)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Item 9: `catalog add`, `catalog mirror` (catalog, bundles, `--base`) and `copy` under a
/// policy. A reject-all policy refuses each (flag and `OLMPACK_POLICY`); a `signedBy` policy
/// accepts the signed image and refuses the unsigned one.
#[test]
fn add_mirror_and_copy_read_under_the_policy() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let (gpg, rd) = key_one(d);
    let signed_ref = reg.reference("pol", "signed");
    let unsigned_ref = reg.reference("pol", "unsigned");
    let signed = push(&bundle(&d.join("s"), "1.0.0"), d, &signed_ref);
    push(&bundle(&d.join("u"), "6.6.6"), d, &unsigned_ref);
    let cat_ref = reg.reference("cat", "v1");
    push(&catalog(&d.join("c"), &["goodpkg"]), d, &cat_ref);
    // Signed, but by a key the policy does not trust: a signature present and invalid.
    let wrong_ref = reg.reference("pol", "wrongkey");
    push(&bundle(&d.join("w"), "7.7.7"), d, &wrong_ref);
    gpg.export_secret(1, &d.join("two.sec.asc"));
    gpg_sign(d, &wrong_ref, "two.sec.asc", &rd);
    for r in [&signed_ref, &cat_ref] {
        gpg_sign(d, r, "one.sec.asc", &rd);
    }
    write_policies(d, &reg.host);
    // A catalog folder naming the unsigned bundle (mirror reads it, then its bundles).
    let folder = d.join("folder");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(
        folder.join("catalog.json"),
        format!("{{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"alpha\"}}\n{{\"schema\":\"olm.channel\",\"name\":\"alpha\",\"package\":\"p\",\"entries\":[{{\"name\":\"p.v1\"}}]}}\n{{\"schema\":\"olm.bundle\",\"name\":\"p.v1\",\"package\":\"p\",\"image\":\"{unsigned_ref}\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"p\",\"version\":\"1.0.0\"}}}}]}}\n"),
    )
    .expect("write");
    let target = Registry::start(Mode::Plain);
    let n = AtomicUsize::new(0);
    // (what, args, expected exit under reject-all via the flag, via the environment)
    let run = |args: &[&str], policy: Option<&str>, env: Option<&str>| -> Output {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let mut full: Vec<String> = args
            .iter()
            .map(|a| a.replace("{n}", &i.to_string()))
            .collect();
        if let Some(p) = policy {
            full.push("--policy".into());
            full.push(p.into());
        }
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        let mut c = olmpack(d, &refs);
        c.env("OLMPACK_REGISTRIES_D", &rd);
        if let Some(e) = env {
            c.env("OLMPACK_POLICY", d.join(e));
        }
        out(&mut c)
    };
    let addto = |i: &str| {
        let p = d.join(format!("addto-{i}"));
        std::fs::create_dir_all(&p).expect("mkdir");
        p.display().to_string()
    };
    let to = format!("{}/mirror", target.host);
    let results = d.join("results").display().to_string();
    let copy_to = d.join("copy").display().to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "catalog add",
            vec![
                "catalog".into(),
                "add".into(),
                addto("a"),
                signed_ref.clone(),
            ],
        ),
        (
            "copy",
            vec![
                "copy".into(),
                signed_ref.clone(),
                format!("oci:{copy_to}:{{n}}"),
            ],
        ),
        (
            "catalog mirror (catalog)",
            vec![
                "catalog".into(),
                "mirror".into(),
                cat_ref.clone(),
                "--to".into(),
                to.clone(),
                "--results-dir".into(),
                results.clone(),
            ],
        ),
        (
            "catalog mirror (--base)",
            vec![
                "catalog".into(),
                "mirror".into(),
                folder.display().to_string(),
                "--base".into(),
                signed_ref.clone(),
                "--to".into(),
                to.clone(),
                "--results-dir".into(),
                results.clone(),
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (what, args) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for (how, o) in [
            ("--policy", run(&args, Some("reject.json"), None)),
            ("OLMPACK_POLICY", run(&args, None, Some("reject.json"))),
        ] {
            failures.extend(unless_refused(
                &o,
                "reject",
                &format!("{what} with a reject-all {how}"),
            ));
        }
    }
    // signedBy: the signed image is read, the unsigned one refused.
    let o = run(
        &["catalog", "add", &addto("s"), &signed_ref],
        Some("signed.json"),
        None,
    );
    if !o.status.success() {
        failures.push(format!("catalog add of the signed bundle: {}", text(&o)));
    }
    let o = run(
        &["catalog", "add", &addto("u"), &unsigned_ref],
        Some("signed.json"),
        None,
    );
    failures.extend(unless_refused(
        &o,
        "no signature found",
        "catalog add of the unsigned bundle",
    ));
    let o = run(
        &["copy", &signed_ref, &format!("oci:{copy_to}:s")],
        None,
        Some("signed.json"),
    );
    if !o.status.success() || skopeo_digest(&format!("oci:{copy_to}:s")) != signed {
        failures.push(format!("copy of the signed image: {}", text(&o)));
    }
    let o = run(
        &["copy", &unsigned_ref, &format!("oci:{copy_to}:u")],
        None,
        Some("signed.json"),
    );
    failures.extend(unless_refused(
        &o,
        "no signature found",
        "copy of the unsigned image",
    ));
    for args in [
        vec!["catalog", "add", &addto("w"), &wrong_ref],
        vec!["copy", &wrong_ref, &format!("oci:{copy_to}:w")],
    ] {
        let o = run(&args, Some("signed.json"), None);
        if code(&o) != 1 || text(&o).contains("no signature found") {
            failures.push(format!(
                "{} of an image signed by an untrusted key: exit {}: {}",
                args[..2].join(" "),
                code(&o),
                text(&o)
            ));
        }
    }
    // mirror: the folder's catalog is built and read, its unsigned bundle fails by the policy.
    let o = run(
        &[
            "catalog",
            "mirror",
            &folder.display().to_string(),
            "--to",
            &to,
            "--results-dir",
            &results,
        ],
        Some("signed.json"),
        None,
    );
    if code(&o) != 1
        || !text(&o).contains("no signature found")
        || !text(&o).contains(&unsigned_ref)
    {
        failures.push(format!(
            "catalog mirror of a catalog naming an unsigned bundle: exit {}: {}",
            code(&o),
            text(&o)
        ));
    }
    // mirror: the signed catalog image passes (its bundle example.invalid/... then fails to
    // resolve, which is not the policy's doing).
    let o = run(
        &[
            "catalog",
            "mirror",
            &cat_ref,
            "--to",
            &to,
            "--results-dir",
            &results,
            "--dry-run",
        ],
        Some("signed.json"),
        None,
    );
    if text(&o).contains("refuses") {
        failures.push(format!(
            "catalog mirror of the signed catalog is refused: {}",
            text(&o)
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Unless `o` exited 1 saying `needle`: the failure to report, `what: exit N: output`.
fn unless_refused(o: &Output, needle: &str, what: &str) -> Option<String> {
    (code(o) != 1 || !text(o).contains(needle))
        .then(|| format!("{what}: exit {}: {}", code(o), text(o)))
}

/// A throwaway GnuPG home with its key 0 exported into `d` (`one.gpg`, `one.sec.asc`), and a
/// registries.d under `d` whose lookaside store is `d/sigstore`: the home and the registries.d.
fn key_one(d: &Path) -> (Gpg, std::path::PathBuf) {
    let gpg = Gpg::new();
    let (rd, _store) = registries_d(d);
    gpg.export(0, &d.join("one.gpg"));
    gpg.export_secret(0, &d.join("one.sec.asc"));
    (gpg, rd)
}
