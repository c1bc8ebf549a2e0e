//! `olmpack copy` against two real loopback registries (`docker-registry`), read back by skopeo:
//! a two-platform index with a cosign `.sig` tag attached, copied whole (digests equal), into an
//! `oci:` layout and back, a second time (no blob uploaded), narrowed to one platform, within one
//! registry (blobs mounted), interrupted by a fault-injecting proxy then run again, and to a TLS
//! registry with Basic auth, each end with its own credentials and CA.

use crate::support::cmd::olmpack;
use crate::support::proc::Bounded;
use crate::support::registry::{self as support, Fault, Mode, Proxy, Registry};
use olmpack::image::{Blob, BlobSource, Descriptor, Image, ImageIndex};
use olmpack::registry::auth::ResolvedCredential;
use olmpack::registry::client::{Client, ClientOptions};
use olmpack::registry::push::{self, Progress, PushOptions};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const REPO: &str = "olm/catalog";

pub(crate) fn silent() -> PushOptions {
    PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    }
}

pub(crate) fn client(host: &str) -> Client {
    Client::new(
        host,
        ResolvedCredential::anonymous(),
        &ClientOptions::default(),
    )
    .expect("client")
}

/// An image for `arch` with two layers of its own (`extra` pseudo-random bytes in the second,
/// so gzip cannot shrink it) and a config naming its platform.
pub(crate) fn platform_image(dir: &Path, arch: &str, extra: usize) -> Image {
    let files = support::bundle_files(extra);
    let first: Vec<(&str, &[u8])> = vec![("arch.txt", arch.as_bytes())];
    let rest: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_slice()))
        .collect();
    let sub = dir.join(arch);
    std::fs::create_dir_all(&sub).expect("mkdir");
    let mut image = support::image_from_layers(
        &sub,
        &[first, rest],
        support::labels("testop"),
        serde_json::json!({}),
    );
    // The config names the platform (the helper writes amd64): rewrite it and the manifest.
    let BlobSource::Memory(config) = &image.config.source else {
        panic!("config in memory")
    };
    let mut config: serde_json::Value = serde_json::from_slice(config).expect("config");
    config["architecture"] = serde_json::json!(arch);
    image.config = Blob::memory(
        "application/vnd.oci.image.config.v1+json",
        serde_json::to_vec(&config).expect("json"),
    );
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": desc(&image.config.descriptor),
        "layers": image.layers.iter().map(|l| desc(&l.descriptor)).collect::<Vec<_>>(),
    });
    image.manifest = Blob::memory(
        "application/vnd.oci.image.manifest.v1+json",
        serde_json::to_vec(&manifest).expect("json"),
    );
    image
}

pub(crate) fn desc(d: &Descriptor) -> serde_json::Value {
    serde_json::json!({"mediaType": d.media_type, "digest": d.digest, "size": d.size})
}

/// A two-platform OCI index (linux/amd64, linux/arm64).
pub(crate) fn two_platform_index(dir: &Path) -> ImageIndex {
    platform_index(dir, 20_000, 30_000)
}

/// A two-platform OCI index whose amd64 and arm64 images have `amd64` and `arm64` bytes of
/// layer: distinct sizes give distinct images, for the mirror tests that need several indexes.
pub(crate) fn platform_index(dir: &Path, amd64: usize, arm64: usize) -> ImageIndex {
    let images = vec![
        platform_image(dir, "amd64", amd64),
        platform_image(dir, "arm64", arm64),
    ];
    let manifests: Vec<serde_json::Value> = images
        .iter()
        .zip(["amd64", "arm64"])
        .map(|(i, arch)| {
            let mut d = desc(&i.manifest.descriptor);
            d["platform"] = serde_json::json!({"os": "linux", "architecture": arch});
            d
        })
        .collect();
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": manifests,
    });
    ImageIndex {
        index: Blob::memory(
            "application/vnd.oci.image.index.v1+json",
            serde_json::to_vec(&index).expect("json"),
        ),
        images,
        manifests: None,
    }
}

/// A cosign-style signature image: a simple-signing payload layer with a signature annotation.
pub(crate) fn signature_for(digest: &str) -> Image {
    let payload = serde_json::to_vec(&serde_json::json!({
        "critical": {"image": {"docker-manifest-digest": digest}, "type": "cosign container image signature"},
        "optional": null,
    }))
    .expect("json");
    let layer = Blob::memory("application/vnd.dev.cosign.simplesigning.v1+json", payload);
    let config = Blob::memory("application/vnd.oci.image.config.v1+json", b"{}".to_vec());
    let mut layer_desc = desc(&layer.descriptor);
    layer_desc["annotations"] =
        serde_json::json!({"dev.cosignproject.cosign/signature": "MEUCIQDfake"});
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": desc(&config.descriptor),
        "layers": [layer_desc],
    });
    Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers: vec![layer],
    }
}

pub(crate) fn sig_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// Pushes the index (tagged `v1`) and its `.sig` to `reg`; returns the index and sig digests.
fn seed(reg: &Registry, dir: &Path) -> (ImageIndex, String) {
    let index = two_platform_index(dir);
    let c = client(&reg.host);
    push::push_index(&c, &index, REPO, &["v1".to_string()], &silent()).expect("push index");
    let sig = signature_for(&index.index.descriptor.digest);
    push::push_image(
        &c,
        &sig,
        REPO,
        &[sig_tag(&index.index.descriptor.digest)],
        &silent(),
    )
    .expect("push sig");
    (index, sig.manifest.descriptor.digest.clone())
}

/// `skopeo inspect --raw` of `target` (`docker://…`, `oci:…`): the manifest bytes as stored.
pub(crate) fn skopeo_raw(target: &str) -> Result<Vec<u8>, String> {
    let out = std::process::Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", target])
        .output()
        .expect("run skopeo");
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn run_copy(args: &[&str]) -> (String, String) {
    let out = olmpack()
        .arg("copy")
        .args(args)
        .output()
        .expect("run olmpack");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "olmpack copy {args:?} failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout.trim().to_string(), stderr)
}

#[test]
fn an_index_with_its_signature_goes_between_registries_and_through_an_oci_layout() {
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let (index, sig_digest) = seed(&src, work.path());
    let digest = index.index.descriptor.digest.clone();
    let from = src.reference(REPO, "v1");
    let to = dst.reference("mirror/catalog", "v1");

    let (out, err) = run_copy(&[&from, &to, "--with-signatures"]);
    assert_eq!(out, digest, "stdout is the digest; stderr: {err}");
    assert!(err.contains(&sig_tag(&digest)), "{err}");
    // skopeo reads the same bytes at the target: same digest, both platforms.
    let raw = skopeo_raw(&format!("docker://{to}")).expect("skopeo reads the copy");
    assert_eq!(support::sha256(&raw), digest);
    let listed: serde_json::Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(listed["manifests"].as_array().map(Vec::len), Some(2));
    for image in &index.images {
        let child = format!(
            "docker://{}/mirror/catalog@{}",
            dst.host, image.manifest.descriptor.digest
        );
        let raw = skopeo_raw(&child).expect("each platform's manifest is there");
        assert_eq!(support::sha256(&raw), image.manifest.descriptor.digest);
    }
    // The .sig tag came along, unchanged.
    let sig = skopeo_raw(&format!(
        "docker://{}/mirror/catalog:{}",
        dst.host,
        sig_tag(&digest)
    ))
    .expect("the .sig tag is at the target");
    assert_eq!(support::sha256(&sig), sig_digest);

    // A second copy finds every blob in place: nothing is uploaded.
    let (out, err) = run_copy(&[&from, &to, "--with-signatures"]);
    assert_eq!(out, digest);
    assert!(!err.contains("pushed blob"), "{err}");
    assert!(err.contains("existing blob"), "{err}");

    // Into an OCI layout (what skopeo reads as the same index), and back to a registry.
    let layout = work.path().join("layout");
    let oci = format!("oci:{}:v1", layout.display());
    let (out, err) = run_copy(&[&to, &oci, "--with-signatures"]);
    assert_eq!(out, digest, "{err}");
    let raw = skopeo_raw(&oci).expect("skopeo reads the layout");
    assert_eq!(support::sha256(&raw), digest);
    let sig_in_layout = format!("oci:{}:{}", layout.display(), sig_tag(&digest));
    assert_eq!(
        support::sha256(&skopeo_raw(&sig_in_layout).expect("sig in layout")),
        sig_digest
    );
    let back = dst.reference("back/catalog", "v1");
    let (out, err) = run_copy(&[&oci, &back, "--with-signatures"]);
    assert_eq!(out, digest, "{err}");
    let raw = skopeo_raw(&format!("docker://{back}")).expect("skopeo reads it back");
    assert_eq!(support::sha256(&raw), digest);
    skopeo_raw(&format!(
        "docker://{}/back/catalog:{}",
        dst.host,
        sig_tag(&digest)
    ))
    .expect("the .sig tag travelled through the layout");

    // Within one registry, the layers are mounted from the repository that holds them (the
    // configs, read into memory when the source is opened, are small and uploaded).
    let (out, err) = run_copy(&[&to, &dst.reference("other/catalog", "v1")]);
    assert_eq!(out, digest);
    for layer in index.images.iter().flat_map(|i| &i.layers) {
        let line = format!("mounted blob {}", layer.descriptor.digest);
        assert!(err.contains(&line), "{line} in: {err}");
    }
}

#[test]
fn a_platform_subset_is_a_rewritten_index_and_says_so() {
    let src = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let (index, _) = seed(&src, work.path());
    let digest = index.index.descriptor.digest.clone();
    let from = src.reference(REPO, "v1");
    let to = src.reference("arm/catalog", "v1");
    let (out, err) = run_copy(&[&from, &to, "--platform", "linux/arm64"]);
    assert_ne!(out, digest);
    assert!(err.contains("narrowed to linux/arm64"), "{err}");
    assert!(err.contains(&digest), "the source index is named: {err}");
    let raw = skopeo_raw(&format!("docker://{to}")).expect("skopeo reads it");
    assert_eq!(support::sha256(&raw), out);
    let v: serde_json::Value = serde_json::from_slice(&raw).expect("json");
    let entries = v["manifests"].as_array().expect("manifests");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["platform"]["architecture"], "arm64");
    assert_eq!(
        entries[0]["digest"],
        index.images[1].manifest.descriptor.digest
    );

    // One platform fits a docker-archive, which skopeo reads.
    let archive = work.path().join("arm.tar");
    let dest = format!(
        "docker-archive:{}:example.com/arm/catalog:v1",
        archive.display()
    );
    run_copy(&[&from, &dest, "--platform", "linux/arm64"]);
    skopeo_raw(&format!("docker-archive:{}", archive.display())).expect("skopeo reads it");
    // Two do not, and the message says what to do.
    olmpack()
        .args(["copy", &from])
        .arg(format!(
            "docker-archive:{}",
            work.path().join("both.tar").display()
        ))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--platform"));
    assert!(!work.path().join("both.tar").exists());
    // A platform the index does not have is refused, naming the ones it has.
    olmpack()
        .args([
            "copy",
            &from,
            &src.reference("x/y", "v1"),
            "--platform",
            "linux/s390x",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("linux/amd64, linux/arm64"));
}

#[test]
fn an_interrupted_copy_leaves_no_tag_and_a_rerun_finishes_it() {
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let (index, _) = seed(&src, work.path());
    let digest = index.index.descriptor.digest.clone();
    // The proxy lets the first blob upload through and cuts every later one mid-body.
    let uploads = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&uploads);
    let proxy = Proxy::start(dst.port, move |s, _| {
        if s.method == "PUT" && s.path.contains("/blobs/uploads/") && s.body_len > 0 {
            if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                Fault::Pass
            } else {
                Fault::Drop
            }
        } else {
            Fault::Pass
        }
    });
    let from = src.reference(REPO, "v1");
    let through_proxy = format!("{}/mirror/catalog:v1", proxy.host());
    let out = olmpack()
        .args(["copy", &from, &through_proxy, "--retries", "1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "the cut copy fails");
    assert!(
        uploads.load(Ordering::SeqCst) >= 2,
        "the proxy cut an upload"
    );
    let to = dst.reference("mirror/catalog", "v1");
    assert!(
        skopeo_raw(&format!("docker://{to}")).is_err(),
        "no tag points at an incomplete index"
    );
    drop(proxy);
    let (out, err) = run_copy(&[&from, &to]);
    assert_eq!(out, digest);
    assert!(
        err.contains("existing blob"),
        "the blob of the first run is reused: {err}"
    );
    let raw = skopeo_raw(&format!("docker://{to}")).expect("complete now");
    assert_eq!(support::sha256(&raw), digest);
}

#[test]
fn copy_mistakes_are_usage_errors_that_name_the_input() {
    let work = tempfile::tempdir().expect("tmp");
    let missing = format!("oci:{}", work.path().join("nope").display());
    olmpack()
        .args(["copy", &missing, "oci:/tmp/x"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("nope"));
    olmpack()
        .args(["copy", "127.0.0.1:1/a/b:v1", "not a reference"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("invalid target"));
}

/// An SBOM-like OCI 1.1 artifact whose `subject` is `subject`.
pub(crate) fn sbom_referrer(subject: &Descriptor) -> Image {
    let layer = Blob::memory(
        "application/spdx+json",
        br#"{"spdxVersion":"SPDX-2.3"}"#.to_vec(),
    );
    let config = Blob::memory("application/vnd.oci.empty.v1+json", b"{}".to_vec());
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/spdx+json",
        "config": desc(&config.descriptor),
        "layers": [desc(&layer.descriptor)],
        "subject": desc(subject),
    });
    Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers: vec![layer],
    }
}

/// A referrer kept in an `oci:` layout (an untagged `index.json` entry whose manifest names
/// the image as its subject) comes along to a registry as it does from a registry: the layout
/// answers the referrers question through the same repository API (issue 42: a layout's
/// referrers were never looked for).
#[test]
fn referrers_come_along_from_an_oci_layout() {
    let dst = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let index = two_platform_index(work.path());
    let layout = work.path().join("layout");
    olmpack::transport::layout::write_index_layout(&index, &layout, &["v1".to_string()])
        .expect("write layout");
    let referrer = sbom_referrer(&index.index.descriptor);
    let referrer_digest = referrer.manifest.descriptor.digest.clone();
    olmpack::transport::layout::write_layout(&referrer, &layout, &[]).expect("write referrer");
    let digest = index.index.descriptor.digest.clone();
    let from = format!("oci:{}:v1", layout.display());
    let to = dst.reference("mirror/catalog", "v1");
    let (out, err) = run_copy(&[&from, &to, "--with-signatures"]);
    assert_eq!(out, digest);
    assert!(
        err.contains(&format!("copied referrer {referrer_digest}")),
        "{err}"
    );
    let copied = skopeo_raw(&format!(
        "docker://{}/mirror/catalog@{referrer_digest}",
        dst.host
    ))
    .expect("the referrer is at the target");
    assert_eq!(support::sha256(&copied), referrer_digest);
    let ref_tag = digest.replacen(':', "-", 1);
    let listed = skopeo_raw(&format!("docker://{}/mirror/catalog:{ref_tag}", dst.host))
        .expect("the target has a tag-schema index");
    let listed: serde_json::Value = serde_json::from_slice(&listed).expect("json");
    assert_eq!(listed["manifests"][0]["digest"], referrer_digest);
}

/// An OCI 1.1 referrer (an SBOM-like artifact whose `subject` is the index) listed in the
/// referrers tag-schema index `sha256-<hex>`, as clients write it for registries without the
/// referrers API (this docker-registry has none): it comes along, and the target gets its own
/// tag-schema index listing it.
#[test]
fn referrers_come_along_through_the_tag_schema_fallback() {
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let (index, _) = seed(&src, work.path());
    let digest = index.index.descriptor.digest.clone();
    let c = client(&src.host);
    let referrer = sbom_referrer(&index.index.descriptor);
    let referrer_digest = referrer.manifest.descriptor.digest.clone();
    push::push_image(&c, &referrer, REPO, &[], &silent()).expect("push referrer");
    let mut entry = desc(&referrer.manifest.descriptor);
    entry["artifactType"] = serde_json::json!("application/spdx+json");
    let fallback = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [entry],
    });
    let fallback = serde_json::to_vec(&fallback).expect("json");
    let ref_tag = digest.replacen(':', "-", 1);
    let req = olmpack::registry::client::Request::new(
        reqwest::Method::PUT,
        format!("/v2/{REPO}/manifests/{ref_tag}"),
        &[format!("repository:{REPO}:pull,push")],
    )
    .header("Content-Type", "application/vnd.oci.image.index.v1+json")
    .body(olmpack::registry::client::Body::Bytes(fallback));
    c.expect(&req, &[201]).expect("put fallback index");

    let from = src.reference(REPO, "v1");
    let to = dst.reference("mirror/catalog", "v1");
    let (out, err) = run_copy(&[&from, &to, "--with-signatures"]);
    assert_eq!(out, digest);
    assert!(
        err.contains(&format!("copied referrer {referrer_digest}")),
        "{err}"
    );
    let copied = skopeo_raw(&format!(
        "docker://{}/mirror/catalog@{referrer_digest}",
        dst.host
    ))
    .expect("the referrer is at the target");
    assert_eq!(support::sha256(&copied), referrer_digest);
    let listed = skopeo_raw(&format!("docker://{}/mirror/catalog:{ref_tag}", dst.host))
        .expect("the target has a tag-schema index");
    let listed: serde_json::Value = serde_json::from_slice(&listed).expect("json");
    assert_eq!(listed["manifests"][0]["digest"], referrer_digest);
    assert_eq!(
        listed["manifests"][0]["artifactType"],
        "application/spdx+json"
    );
}

/// Each end of a copy has its own client options: an anonymous plain-HTTP source and a
/// target with TLS (its own CA) and Basic auth. The target's credentials given to the source
/// end do not reach the target, which refuses the copy; given to the target end, the copy
/// lands and skopeo reads the same digest there.
#[test]
fn each_end_of_a_copy_has_its_own_credentials_and_tls() {
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::TlsBasic);
    let work = tempfile::tempdir().expect("tmp");
    let (index, _) = seed(&src, work.path());
    let digest = index.index.descriptor.digest.clone();
    let from = src.reference(REPO, "v1");
    let to = dst.reference("mirror/catalog", "v1");
    let ca = dst.ca.clone().expect("ca").display().to_string();
    let creds = format!("{}:{}", support::USER, support::PASSWORD);

    let wrong = olmpack()
        .arg("copy")
        .args([&from, &to, "--src-creds", &creds, "--dest-ca-file", &ca])
        .output()
        .expect("run olmpack");
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success(), "{err}");
    assert!(
        err.contains(&format!("authentication failed for {}", dst.host)),
        "the target refused it: {err}"
    );
    assert!(!err.contains(support::PASSWORD), "{err}");

    let (out, err) = run_copy(&[&from, &to, "--dest-creds", &creds, "--dest-ca-file", &ca]);
    assert_eq!(out, digest, "{err}");
    let raw = std::process::Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", "--creds", &creds])
        .arg(format!("docker://{to}"))
        .succeeds();
    assert_eq!(support::sha256(&raw.stdout), digest);
}
