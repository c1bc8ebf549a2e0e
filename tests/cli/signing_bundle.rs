//! `olmpack sign --format bundle|legacy|both`: cosign 3's Sigstore bundle v0.3 stored as an
//! OCI 1.1 referrer, on Debian's `docker-registry` (distribution 2.8, which has no referrers
//! API: the `sha256-<hex>` referrers tag is written), checked by independent readers: the
//! Python implementation in `tests/support/cosign_interop.py` (python3-cryptography; it finds
//! referrers as the OCI spec says a client does and verifies DSSE and message signatures),
//! skopeo (`inspect --raw` of the referrer and of the fallback index) and curl (the registry's
//! tag listing and its referrers endpoint).

use super::signing::{code, ok, olmpack, out, push, py, text, tool};
use crate::support::cmd::olmpack_path;
use crate::support::json::strings;
use crate::support::registry::{Mode, Registry, bundle_image, write_layout};
use std::process::Command;

const BUNDLE_MT: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

fn curl(url: &str) -> (String, String) {
    let o = out(tool("curl").args(["-s", "-w", "\n%{http_code}", "--max-time", "30", url]));
    let body = String::from_utf8_lossy(&o.stdout).to_string();
    let (b, status) = body.rsplit_once('\n').unwrap_or((&body, ""));
    (b.to_string(), status.to_string())
}

fn tags(host: &str, repo: &str) -> Vec<String> {
    let (body, status) = curl(&format!("http://{host}/v2/{repo}/tags/list"));
    assert_eq!(status, "200", "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("tags json");
    strings(&v["tags"])
}

fn raw(image: &str) -> serde_json::Value {
    let s = ok(tool("skopeo").args([
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{image}"),
    ]));
    serde_json::from_str(&s).expect("manifest json")
}

fn py_count(args: &[&str], d: &std::path::Path) -> String {
    ok(py(args).current_dir(d)).trim().to_string()
}

/// `olmpack verify IMAGE` in `d`: with `--key a.pub` it passes (its output returned), with
/// `--key b.pub` it exits 1.
fn verify_a_not_b(d: &std::path::Path, image: &str) -> String {
    let v = ok(&mut olmpack(d, &["verify", image, "--key", "a.pub"]));
    let wrong = out(&mut olmpack(d, &["verify", image, "--key", "b.pub"]));
    assert_eq!(
        code(&wrong),
        1,
        "{image} verified with b.pub: {}",
        text(&wrong)
    );
    v
}

/// How many Sigstore bundle referrers of `host/app@digest` the Python reader verifies with `key`.
fn bundles_verified(d: &std::path::Path, host: &str, digest: &str, key: &str) -> String {
    py_count(&["verify-bundle", host, "app", digest, key], d)
}

#[test]
fn sign_writes_a_sigstore_bundle_referrer_others_read() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let host = reg.host.clone();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "a"],
    ));
    ok(py(&["genkey", "b"]).current_dir(d));

    // The default is both: a bundle referrer (cosign 3) and the .sig tag (CRI-O, podman).
    let digest = push(&reg, d, "app", "v1", 1);
    let hex = &digest[7..];
    let image = reg.reference("app", "v1");
    let s = ok(&mut olmpack(d, &["sign", &image, "--key", "a.key"]));
    assert!(s.starts_with("signed"), "{s}");
    assert!(
        s.contains("sigstore bundle") && s.contains("(referrer)"),
        "{s}"
    );
    let listed = tags(&host, "app");
    assert!(listed.contains(&format!("sha256-{hex}.sig")), "{listed:?}");
    assert!(listed.contains(&format!("sha256-{hex}")), "{listed:?}");
    // docker-registry 2.8 has no referrers API: 404, so the tag schema is what holds them.
    let (_, status) = curl(&format!("http://{host}/v2/app/referrers/{digest}"));
    assert_eq!(
        status, "404",
        "Debian's docker-registry answered the referrers API"
    );
    let index = raw(&format!("{host}/app:sha256-{hex}"));
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let entries = index["manifests"].as_array().expect("manifests");
    assert_eq!(entries.len(), 1, "{index}");
    assert_eq!(entries[0]["artifactType"], BUNDLE_MT);
    assert_eq!(
        entries[0]["annotations"]["dev.sigstore.bundle.predicateType"],
        "https://sigstore.dev/cosign/sign/v1"
    );
    let referrer_digest = entries[0]["digest"].as_str().expect("digest").to_string();
    assert!(s.contains(&referrer_digest), "{s}");
    let referrer = raw(&format!("{host}/app@{referrer_digest}"));
    assert_eq!(referrer["artifactType"], BUNDLE_MT);
    assert_eq!(referrer["subject"]["digest"], digest.as_str());
    assert_eq!(
        referrer["config"]["mediaType"],
        "application/vnd.oci.empty.v1+json"
    );
    assert_eq!(referrer["layers"][0]["mediaType"], BUNDLE_MT);
    // The independent reader verifies it with the right key only.
    assert_eq!(bundles_verified(d, &host, &digest, "a.pub"), "1");
    assert_eq!(bundles_verified(d, &host, &digest, "b.pub"), "0");
    // olmpack's verify reads it back; another key is refused.
    let v = verify_a_not_b(d, &image);
    assert!(v.contains("https://sigstore.dev/cosign/sign/v1"), "{v}");
    assert!(v.contains(&format!("{host}/app")), "{v}");
    // Signing again with the same key finds its own referrer and writes nothing.
    let again = ok(&mut olmpack(d, &["sign", &image, "--key", "a.key"]));
    assert!(again.starts_with("already signed"), "{again}");
    // Another key adds a second entry to the fallback index, keeping the first.
    ok(&mut olmpack(d, &["sign", &image, "--key", "b.key"]));
    let index = raw(&format!("{host}/app:sha256-{hex}"));
    assert_eq!(index["manifests"].as_array().map(Vec::len), Some(2));
    assert_eq!(bundles_verified(d, &host, &digest, "b.pub"), "1");

    // --format both: the .sig tag (what containers/image reads) and the bundle.
    let d2 = push(&reg, d, "app", "v2", 2);
    let image2 = reg.reference("app", "v2");
    let s = ok(&mut olmpack(
        d,
        &["sign", &image2, "--key", "a.key", "--format", "both"],
    ));
    assert!(
        s.contains("(cosign)") && s.contains("(sigstore bundle)"),
        "{s}"
    );
    assert_eq!(py_count(&["verify", &host, "app", &d2, "a.pub"], d), "1");
    assert_eq!(bundles_verified(d, &host, &d2, "a.pub"), "1");
    let v = ok(&mut olmpack(
        d,
        &["verify", &image2, "--key", "a.pub", "-o", "json"],
    ));
    let j: serde_json::Value = serde_json::from_str(&v).expect("json");
    let sigs = j["signatures"].as_array().expect("signatures");
    assert_eq!(sigs.len(), 2, "{v}");

    // --format legacy: the .sig tag alone, no referrer.
    let d3 = push(&reg, d, "app", "v3", 3);
    ok(&mut olmpack(
        d,
        &[
            "sign",
            &reg.reference("app", "v3"),
            "--key",
            "a.key",
            "--format",
            "legacy",
        ],
    ));
    let listed = tags(&host, "app");
    assert!(
        listed.contains(&format!("sha256-{}.sig", &d3[7..])),
        "{listed:?}"
    );
    assert!(
        !listed.contains(&format!("sha256-{}", &d3[7..])),
        "{listed:?}"
    );

    // A message signature over the manifest, as the bundle spec allows.
    let d4 = push(&reg, d, "app", "v4", 4);
    let image4 = reg.reference("app", "v4");
    ok(&mut olmpack(
        d,
        &[
            "sign",
            &image4,
            "--key",
            "a.key",
            "--bundle-content",
            "message-signature",
        ],
    ));
    let index = raw(&format!("{host}/app:sha256-{}", &d4[7..]));
    assert_eq!(
        index["manifests"][0]["annotations"]["dev.sigstore.bundle.content"],
        "message-signature"
    );
    assert_eq!(bundles_verified(d, &host, &d4, "a.pub"), "1");
    let v = verify_a_not_b(d, &image4);
    assert!(v.contains("messageSignature"), "{v}");
}

#[test]
fn sign_writes_a_bundle_into_an_oci_layout_verified_offline() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "k"],
    ));
    ok(py(&["genkey", "other"]).current_dir(d));
    let image = bundle_image(d, 1, "layout-operator");
    write_layout(&image, &d.join("layout"), "v1");
    let digest = image.manifest.descriptor.digest.clone();
    let sign = || {
        ok(&mut olmpack(
            d,
            &[
                "sign",
                "oci:layout:v1",
                "--key",
                "k.key",
                "--identity",
                "quay.io/example/op:v1",
            ],
        ))
    };
    let s = sign();
    assert!(s.contains("(referrer)"), "{s}");
    // index.json lists the referrer with its artifact type; skopeo reads its manifest.
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("layout/index.json")).expect("index.json"))
            .expect("json");
    let entry = index["manifests"]
        .as_array()
        .and_then(|m| m.iter().find(|e| e["artifactType"] == BUNDLE_MT))
        .expect("a bundle entry")
        .clone();
    // The manifest blob is where the entry says, hashes to its digest, and names the image.
    let referrer_digest = entry["digest"].as_str().expect("digest");
    let referrer = std::fs::read(
        d.join("layout/blobs/sha256")
            .join(referrer_digest.trim_start_matches("sha256:")),
    )
    .expect("referrer manifest blob");
    assert_eq!(crate::support::registry::sha256(&referrer), referrer_digest);
    let referrer = String::from_utf8_lossy(&referrer).to_string();
    let m: serde_json::Value = serde_json::from_str(&referrer).expect("json");
    assert_eq!(m["subject"]["digest"], digest.as_str());
    // Verified without a network.
    let v = out(Command::new("unshare")
        .args(["-n", "--"])
        .arg(olmpack_path())
        .args(["verify", "oci:layout:v1", "--key", "k.pub"])
        .current_dir(d)
        .env("HOME", d));
    if v.status.code().is_none() || text(&v).contains("unshare failed") {
        ok(&mut olmpack(
            d,
            &["verify", "oci:layout:v1", "--key", "k.pub"],
        ));
    } else {
        assert!(v.status.success(), "{}", text(&v));
        assert!(text(&v).contains("quay.io/example/op"), "{}", text(&v));
    }
    let wrong = out(&mut olmpack(
        d,
        &["verify", "oci:layout:v1", "--key", "other.pub"],
    ));
    assert_eq!(code(&wrong), 1, "{}", text(&wrong));
    // Signing again writes nothing.
    let again = sign();
    assert!(again.starts_with("already signed"), "{again}");
}

/// A bundle referrer copied from a registry into an `oci:` layout is found there by `verify`
/// (the copy lists it as an untagged entry without `artifactType`; verify looked only for
/// entries announcing the type, and found the `.sig` alone).
#[test]
fn a_referrer_copied_into_a_layout_verifies_there() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    ok(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "a"],
    ));
    push(&reg, d, "app", "v1", 1);
    let image = reg.reference("app", "v1");
    ok(&mut olmpack(
        d,
        &[
            "sign",
            &image,
            "--key",
            "a.key",
            "--signature-format",
            "bundle",
        ],
    ));
    let copied = ok(&mut olmpack(
        d,
        &["copy", &image, "oci:lay:v1", "--signatures", "copy"],
    ));
    assert!(copied.starts_with("sha256:"), "{copied}");
    let v = ok(&mut olmpack(d, &["verify", "oci:lay:v1", "--key", "a.pub"]));
    assert!(
        v.contains("referrer"),
        "the bundle referrer is not found in the layout: {v}"
    );
}
