//! The last readers that read images without the signature policy (issue 39 item 9, the rest):
//! `catalog template` (the bundle images it renders), `bundle render` (an image),
//! `catalog cache verify` (an image) and `catalog mirror --from-archive` (each image read from
//! the archive). For each: a reject-all policy refuses (flag and `OLMPACK_POLICY`), a signed
//! image passes, an unsigned one is refused, and the read is of the digest whose signatures
//! were verified: behind a registry proxy that serves another image to every `GET` of the tag
//! after the first, the command reads the signed image (one `GET` of the tag, the check's),
//! and in an archive whose entry was swapped for another signed image the swap is refused.

use crate::policy_reads::{Swapping, catalog, gpg_sign, push, write_policies};
use crate::signing::{Gpg, code, ok, olmpack, out, registries_d, text};
use crate::support::fixtures::valid_basic;
use crate::support::registry::{Mode, Registry, image_from_layers, labels};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::Ordering;

/// valid-basic as a bundle image, its operator image named `operator` (the marker that tells
/// the signed and the swapped image apart in what is rendered).
fn kv_bundle(dir: &Path, operator: &str) -> olmpack::image::Image {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut sets: Vec<Vec<(String, Vec<u8>)>> = Vec::new();
    for sub in ["manifests", "metadata"] {
        let mut set = Vec::new();
        for e in std::fs::read_dir(valid_basic().join(sub))
            .expect("read")
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let mut body = std::fs::read_to_string(e.path()).expect("read");
            body = body.replace("registry.example.com/kvstore/operator", operator);
            set.push((format!("{sub}/{name}"), body.into_bytes()));
        }
        sets.push(set);
    }
    let borrowed: Vec<Vec<(&str, &[u8])>> = sets
        .iter()
        .map(|s| s.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect())
        .collect();
    image_from_layers(
        dir,
        &borrowed,
        labels("kvstore-operator"),
        serde_json::json!({}),
    )
}

const GOOD_OPERATOR: &str = "registry.example.com/kvstore/operator";
const EVIL_OPERATOR: &str = "registry.example.com/evil/operator";

/// A swapping proxy whose `repo:v1` is a signed image and `repo:evil` an unsigned one (served
/// for `v1` after the first `GET` once armed), a GPG key the policy trusts, and the policies.
struct Setup {
    sw: Swapping,
    _tmp: tempfile::TempDir,
    d: PathBuf,
    rd: PathBuf,
    _gpg: Gpg,
}

impl Setup {
    fn new(repo: &str, good: &olmpack::image::Image, evil: &olmpack::image::Image) -> Setup {
        let sw = Swapping::start();
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path().to_path_buf();
        let gpg = Gpg::new();
        let (rd, _store) = registries_d(&d);
        gpg.export(0, &d.join("one.gpg"));
        gpg.export_secret(0, &d.join("one.sec.asc"));
        push(good, &d, &sw.reg.reference(repo, "v1"));
        push(evil, &d, &sw.reg.reference(repo, "evil"));
        gpg_sign(&d, &sw.reference(repo, "v1"), "one.sec.asc", &rd);
        write_policies(&d, &sw.proxy.host());
        Setup {
            sw,
            _tmp: tmp,
            d,
            rd,
            _gpg: gpg,
        }
    }

    /// Runs olmpack with `policy` (a file in the folder) by `--policy` or, with `env`, by
    /// `OLMPACK_POLICY`; the swap armed afresh.
    fn run(&self, args: &[&str], policy: &str, env: bool) -> Output {
        self.sw.arm();
        let mut full: Vec<&str> = args.to_vec();
        if !env {
            full.extend(["--policy", policy]);
        }
        let mut c = olmpack(&self.d, &full);
        c.env("OLMPACK_REGISTRIES_D", &self.rd);
        if env {
            c.env("OLMPACK_POLICY", self.d.join(policy));
        }
        out(&mut c)
    }

    /// The `GET`s of the tag `v1` since the swap was armed (1: only the policy check's).
    fn tag_gets(&self) -> usize {
        self.sw.served.load(Ordering::SeqCst)
    }
}

/// The three verdicts each registry reader must give: `args(reference)` run with a reject-all
/// policy (flag and environment), with the signed image under a `signedBy` policy (it must
/// succeed or at least not be refused, show `good` and not `evil`, and fetch the tag once), and
/// with the unsigned image (refused: no signature).
fn three_verdicts(
    s: &Setup,
    repo: &str,
    args: &dyn Fn(&str) -> Vec<String>,
    must_succeed: bool,
    good: &str,
    evil: &str,
) -> Vec<String> {
    let mut failures = Vec::new();
    let signed = s.sw.reference(repo, "v1");
    let unsigned = s.sw.reference(repo, "evil");
    let argv = |r: &str| args(r);
    for env in [false, true] {
        let a = argv(&signed);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = s.run(&a, "reject.json", env);
        if code(&o) != 1 || !text(&o).contains("reject") {
            failures.push(format!(
                "reject-all policy ({}): exit {}: {}",
                if env { "OLMPACK_POLICY" } else { "--policy" },
                code(&o),
                text(&o)
            ));
        }
    }
    let a = argv(&signed);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = s.run(&a, "signed.json", false);
    let t = text(&o);
    if (must_succeed && !o.status.success())
        || t.contains("refuses")
        || (must_succeed && !t.contains(good))
        || t.contains(evil)
    {
        failures.push(format!(
            "the signed image under signedBy: exit {}: {t}",
            code(&o)
        ));
    }
    if s.tag_gets() != 1 {
        failures.push(format!(
            "the tag was fetched {} times: the read did not use the digest the policy verified",
            s.tag_gets()
        ));
    }
    let a = argv(&unsigned);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = s.run(&a, "signed.json", true);
    if code(&o) != 1 || !text(&o).contains("no signature found") {
        failures.push(format!(
            "the unsigned image under signedBy: exit {}: {}",
            code(&o),
            text(&o)
        ));
    }
    failures
}

#[test]
fn catalog_template_renders_bundle_images_under_the_policy() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = kv_bundle(&tmp.path().join("g"), GOOD_OPERATOR);
    let evil = kv_bundle(&tmp.path().join("e"), EVIL_OPERATOR);
    let s = Setup::new("tb", &good, &evil);
    let template = |image: &str| {
        serde_json::json!({"schema": "olm.template.basic", "entries": [
            {"schema": "olm.package", "name": "kvstore-operator", "defaultChannel": "stable"},
            {"schema": "olm.channel", "name": "stable", "package": "kvstore-operator",
             "entries": [{"name": "kvstore-operator.v1.2.0"}]},
            {"schema": "olm.bundle", "image": image},
        ]})
        .to_string()
    };
    let d = s.d.clone();
    let args = move |r: &str| -> Vec<String> {
        let file = d.join(format!("t-{}.json", r.replace(['/', ':'], "_")));
        std::fs::write(&file, template(r)).expect("write");
        vec![
            "catalog".into(),
            "template".into(),
            file.display().to_string(),
        ]
    };
    let failures = three_verdicts(&s, "tb", &args, true, GOOD_OPERATOR, EVIL_OPERATOR);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bundle_render_reads_an_image_under_the_policy() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = kv_bundle(&tmp.path().join("g"), GOOD_OPERATOR);
    let evil = kv_bundle(&tmp.path().join("e"), EVIL_OPERATOR);
    let s = Setup::new("br", &good, &evil);
    let args = |r: &str| -> Vec<String> {
        ["bundle", "render", r, "--install-namespace", "kv"]
            .map(String::from)
            .to_vec()
    };
    let failures = three_verdicts(&s, "br", &args, true, GOOD_OPERATOR, EVIL_OPERATOR);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn catalog_cache_verify_reads_an_image_under_the_policy() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = catalog(&tmp.path().join("g"), &["goodpkg"]);
    let evil = catalog(&tmp.path().join("e"), &["evilpkg", "evilpkg2"]);
    let evil_digest = evil.manifest.descriptor.digest.clone();
    let s = Setup::new("cv", &good, &evil);
    let args =
        |r: &str| -> Vec<String> { ["catalog", "cache", "verify", r].map(String::from).to_vec() };
    // The image has no serve cache: the verdict is opm's ("not accepted"), which is not the
    // policy's; what matters is that the signed image was read, never the swapped one.
    let failures = three_verdicts(&s, "cv", &args, false, "goodpkg", &evil_digest);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The archive's `index.json` names, each image's manifest digest.
fn archive_names(layout: &Path) -> Vec<(String, String)> {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).expect("index"))
            .expect("json");
    index["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let name = m["annotations"]["org.opencontainers.image.ref.name"].as_str()?;
            name.starts_with("img-").then(|| {
                (
                    name.to_string(),
                    m["digest"].as_str().unwrap_or_default().to_string(),
                )
            })
        })
        .collect()
}

#[test]
fn catalog_mirror_from_archive_reads_under_the_policy() {
    let reg = Registry::start(Mode::Plain);
    let target = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let bundle = kv_bundle(&d.join("b"), GOOD_OPERATOR);
    let bundle_digest = push(&bundle, d, &reg.reference("bun", "v1"));
    let bundle_ref = format!("{}/bun@{bundle_digest}", reg.host);
    let folder = d.join("cat");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(
        folder.join("catalog.json"),
        format!("{{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"alpha\"}}\n{{\"schema\":\"olm.channel\",\"name\":\"alpha\",\"package\":\"p\",\"entries\":[{{\"name\":\"p.v1\"}}]}}\n{{\"schema\":\"olm.bundle\",\"name\":\"p.v1\",\"package\":\"p\",\"image\":\"{bundle_ref}\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"p\",\"version\":\"1.0.0\"}}}}]}}\n"),
    )
    .expect("write");
    let cat_ref = reg.reference("cat", "v1");
    ok(&mut olmpack(
        d,
        &[
            "catalog",
            "build",
            folder.to_str().expect("utf8"),
            "-t",
            &cat_ref,
            "--push",
        ],
    ));
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "c"],
    ));
    std::fs::write(d.join("reject.json"), r#"{"default":[{"type":"reject"}]}"#).expect("write");
    let policy = serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"oci": {"": [{
            "type": "sigstoreSigned",
            "keyPath": d.join("c.pub"),
            "signedIdentity": {"type": "exactRepository", "dockerRepository": "example.com/mirrored/x"},
        }]}}
    });
    std::fs::write(d.join("signed.json"), policy.to_string()).expect("write");
    // One archive per case: made from the registry without a policy.
    let archive = |name: &str, sign: &dyn Fn(&str) -> bool| -> (PathBuf, Vec<(String, String)>) {
        let a = d.join(name);
        let o = out(&mut olmpack(
            d,
            &[
                "catalog",
                "mirror",
                &cat_ref,
                "--to-archive",
                a.to_str().expect("utf8"),
            ],
        ));
        assert!(o.status.success(), "{}", text(&o));
        let layout = a.join("oci");
        let layout = if layout.join("index.json").exists() {
            layout
        } else {
            std::fs::read_dir(&a)
                .expect("archive")
                .flatten()
                .map(|e| e.path())
                .find(|p| p.join("index.json").exists())
                .expect("the archive's layout")
        };
        let names = archive_names(&layout);
        assert_eq!(names.len(), 2, "catalog and bundle: {names:?}");
        for (n, digest) in &names {
            if sign(digest) {
                ok(&mut olmpack(
                    d,
                    &[
                        "sign",
                        &format!("oci:{}:{n}", layout.display()),
                        "--key",
                        "c.key",
                        "--format",
                        "legacy",
                        "--identity",
                        "example.com/mirrored/x:v1",
                    ],
                ));
            }
        }
        (a, names)
    };
    let mirror = |a: &Path, to: &str, policy: &str, env: bool| -> Output {
        let mut args = vec![
            "catalog".to_string(),
            "mirror".into(),
            "--from-archive".into(),
            a.display().to_string(),
            "--to".into(),
            format!("{}/{to}", target.host),
            "--results-dir".into(),
            d.join(format!("results-{to}")).display().to_string(),
        ];
        if !env {
            args.extend(["--policy".into(), policy.into()]);
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut c = olmpack(d, &a);
        if env {
            c.env("OLMPACK_POLICY", d.join(policy));
        }
        out(&mut c)
    };
    let mut failures = Vec::new();
    let (all, _) = archive("all", &|_| true);
    for env in [false, true] {
        let o = mirror(&all, &format!("rej{env}"), "reject.json", env);
        if code(&o) != 1 || !text(&o).contains("reject") {
            failures.push(format!(
                "reject-all ({}): exit {}: {}",
                if env { "OLMPACK_POLICY" } else { "--policy" },
                code(&o),
                text(&o)
            ));
        }
    }
    let o = mirror(&all, "signed", "signed.json", false);
    if !o.status.success() {
        failures.push(format!("a signed archive: exit {}: {}", code(&o), text(&o)));
    }
    // Only the catalog signed: the bundle fails for want of a signature.
    let (partial, _) = archive("partial", &|digest| digest != bundle_digest);
    let o = mirror(&partial, "partial", "signed.json", true);
    if code(&o) != 1 || !text(&o).contains("no signature found") {
        failures.push(format!(
            "an archive with an unsigned bundle: exit {}: {}",
            code(&o),
            text(&o)
        ));
    }
    // Every image signed, then the bundle's entry pointed at the (signed) catalog manifest: the
    // policy verifies that manifest, which is not the one the plan copies for the bundle.
    let (swapped, names) = archive("swapped", &|_| true);
    let layout = if swapped.join("oci/index.json").exists() {
        swapped.join("oci")
    } else {
        std::fs::read_dir(&swapped)
            .expect("archive")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join("index.json").exists())
            .expect("layout")
    };
    let index_path = layout.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).expect("read")).expect("json");
    let (cat_name, cat_digest) = names
        .iter()
        .find(|(_, dg)| *dg != bundle_digest)
        .cloned()
        .expect("catalog");
    let cat_entry = index["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == cat_name.as_str())
        .cloned()
        .expect("entry");
    for m in index["manifests"].as_array_mut().expect("list") {
        if m["digest"] == bundle_digest.as_str()
            && m["annotations"]["org.opencontainers.image.ref.name"]
                .as_str()
                .is_some_and(|n| n.starts_with("img-"))
        {
            m["digest"] = cat_entry["digest"].clone();
            m["size"] = cat_entry["size"].clone();
            m["mediaType"] = cat_entry["mediaType"].clone();
        }
    }
    std::fs::write(&index_path, index.to_string()).expect("write");
    let o = mirror(&swapped, "swapped", "signed.json", false);
    if o.status.success() || !text(&o).contains(&cat_digest) {
        failures.push(format!(
            "an archive entry swapped for another signed image: exit {}: {}",
            code(&o),
            text(&o)
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
