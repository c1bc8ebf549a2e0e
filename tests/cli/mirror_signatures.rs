//! What `catalog mirror` carries and writes about signatures, on two real loopback registries
//! (Debian's `docker-registry`, which has no referrers API): a catalog whose images carry a
//! Sigstore bundle referrer (written by `olmpack sign`, in the `sha256-<hex>` referrers tag),
//! a cosign `.sig` tag, and a cosign `.att` tag is mirrored; at the target every one of them is
//! found by independent listings (curl on the registry's tag list, skopeo `inspect --raw`) and
//! verifies with `olmpack verify`; the `ClusterImagePolicy` written beside the IDMS is parsed
//! back and checked against the shape openshift/api `config/v1/types_image_policy.go` gives
//! it (required fields, the union's discriminator, the scope rules, MaxItems and MaxLength).

use super::copy::{client, silent};
use super::signing::{code, ok, olmpack as olmpack_in, out, text};
use crate::support::mirror::{skopeo_manifest, tags, write_catalog};
use crate::support::registry::{Mode, Registry};
use olmpack::image::Blob;
use olmpack::registry::push;
use serde_json::{Value, json};
use std::path::Path;

/// An attestation as cosign 2 stores one: a manifest tagged `sha256-<hex>.att` whose layer is
/// a DSSE envelope (unsigned here: it only has to travel).
fn push_att(host: &str, repo: &str, digest: &str) -> String {
    let c = client(host);
    let layer = Blob::memory(
        "application/vnd.dsse.envelope.v1+json",
        br#"{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[]}"#
            .to_vec(),
    );
    let config = Blob::memory(
        "application/vnd.oci.image.config.v1+json",
        br#"{"architecture":"","os":"","rootfs":{"type":"layers","diff_ids":[]},"config":{}}"#
            .to_vec(),
    );
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config.descriptor.media_type, "digest": config.descriptor.digest, "size": config.descriptor.size},
        "layers": [{"mediaType": layer.descriptor.media_type, "digest": layer.descriptor.digest, "size": layer.descriptor.size}],
    });
    let image = olmpack::image::Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers: vec![layer],
    };
    let tag = format!("{}.att", digest.replacen(':', "-", 1));
    push::push_image(&c, &image, repo, std::slice::from_ref(&tag), &silent()).expect("push att");
    tag
}

fn write_signed_catalog(dir: &Path, bundle: &str, related: &[String]) {
    write_catalog(dir, &[("signed", bundle, related.to_vec())]);
}

/// The API's scope rule (`types_image_policy.go`, `ImageScope`): a host with a dot or
/// `localhost`, lowercase path components, at most 512 characters.
fn scope_ok(scope: &str) -> bool {
    let (host, path) = scope.split_once('/').unwrap_or((scope, ""));
    let hostname = host.split(':').next().unwrap_or_default();
    let host_ok = (hostname.contains('.') || hostname == "localhost")
        && hostname
            .split('.')
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    let path_ok = path.split('/').all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
    });
    host_ok && path_ok && scope.len() <= 512
}

#[test]
fn mirror_carries_every_attachment_and_writes_the_image_policy() {
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let olmpack = |args: &[&str]| olmpack_in(d, args);
    ok(&mut olmpack(&[
        "key",
        "generate",
        "--output-key-prefix",
        "k",
    ]));
    let c = client(&src.host);
    let mut images = Vec::new();
    for (i, repo) in ["bundles/signed", "apps/bundled", "apps/legacy"]
        .iter()
        .enumerate()
    {
        let sub = d.join(format!("img{i}"));
        std::fs::create_dir_all(&sub).expect("mkdir");
        let own = format!("image {i}\n");
        let image = crate::support::registry::image_from_layers(
            &sub,
            &[vec![("own.txt", own.as_bytes())]],
            json!({}),
            json!({}),
        );
        push::push_image(&c, &image, repo, &["v1".into()], &silent()).expect("push");
        images.push((
            format!("{}/{repo}:v1", src.host),
            image.manifest.descriptor.digest.clone(),
        ));
    }
    // apps/bundled: a Sigstore bundle referrer (cosign 3) and an attestation tag;
    // apps/legacy: a cosign .sig tag.
    let bundled = &images[1];
    let legacy = &images[2];
    ok(&mut olmpack(&[
        "sign", &bundled.0, "--key", "k.key", "--format", "bundle",
    ]));
    let att_tag = push_att(&src.host, "apps/bundled", &bundled.1);
    ok(&mut olmpack(&[
        "sign", &legacy.0, "--key", "k.key", "--format", "legacy",
    ]));
    let related: Vec<String> = images[1..]
        .iter()
        .map(|(r, dg)| format!("{}@{dg}", r.trim_end_matches(":v1")))
        .collect();
    write_signed_catalog(&d.join("catalog"), &images[0].0, &related);

    let to = format!("{}/mirror", dst.host);
    let o = out(&mut olmpack(&[
        "catalog",
        "mirror",
        "catalog",
        "--to",
        &to,
        "--src-plain-http",
        "--dest-plain-http",
        "--image-policy-key",
        "k.pub",
        "--results-dir",
        "results",
    ]));
    assert_eq!(code(&o), 0, "{}", text(&o));

    // At the target, by independent listings: the bundle's referrers tag and the referrer
    // manifest (subject = the image), the .att tag, the .sig tag.
    let bhex = &bundled.1[7..];
    let btags = tags(&dst.host, "mirror/apps/bundled");
    assert!(btags.contains(&format!("sha256-{bhex}")), "{btags:?}");
    assert!(btags.contains(&att_tag), "{btags:?}");
    let index = skopeo_manifest(&format!("{}/mirror/apps/bundled:sha256-{bhex}", dst.host));
    let entry = &index["manifests"][0];
    assert_eq!(
        entry["artifactType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    let referrer = skopeo_manifest(&format!(
        "{}/mirror/apps/bundled@{}",
        dst.host,
        entry["digest"].as_str().expect("digest")
    ));
    assert_eq!(referrer["subject"]["digest"], bundled.1.as_str());
    let ltags = tags(&dst.host, "mirror/apps/legacy");
    assert!(
        ltags.contains(&format!("sha256-{}.sig", &legacy.1[7..])),
        "{ltags:?}"
    );
    // Verified there (the signatures name the source repositories, as copied).
    for (image, digest) in [bundled, legacy] {
        let at = format!(
            "{to}/{}@{digest}",
            image
                .trim_start_matches(&format!("{}/", src.host))
                .trim_end_matches(":v1")
        );
        let v = ok(&mut olmpack(&[
            "verify",
            &at,
            "--key",
            "k.pub",
            "--identity",
            image,
        ]));
        assert!(v.starts_with("verified"), "{v}");
        assert!(v.contains(&digest[7..]), "{v}");
    }

    // The report says, per image, what was carried.
    let report: Value =
        serde_json::from_slice(&std::fs::read(d.join("results/report.json")).expect("report.json"))
            .expect("json");
    let attached = |repo: &str| {
        report["images"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|i| i["source"].as_str().is_some_and(|s| s.contains(repo)))
            })
            .map(|i| i["attached"].as_u64().unwrap_or(0))
            .unwrap_or(0)
    };
    assert_eq!(attached("apps/bundled"), 2, "{report}");
    assert_eq!(attached("apps/legacy"), 1, "{report}");

    // The ClusterImagePolicy, beside the IDMS, parsed back.
    let yaml = std::fs::read_to_string(d.join("results/clusterimagepolicy.yaml"))
        .expect("clusterimagepolicy.yaml written");
    assert!(d.join("results/idms.yaml").is_file());
    // Parsed by PyYAML (an independent YAML reader), every document.
    let parsed = ok(std::process::Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import json,sys,yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ])
        .arg(d.join("results/clusterimagepolicy.yaml")));
    let docs: Vec<Value> = serde_json::from_str(&parsed).expect("json");
    // One object: the catalog was built here from a folder, so no signature of it exists to
    // remap (the remapped catalog object is checked in the module's unit tests).
    assert_eq!(docs.len(), 1, "{yaml}");
    let pem = std::fs::read(d.join("k.pub")).expect("k.pub");
    use base64::Engine as _;
    for doc in &docs {
        assert_eq!(doc["apiVersion"], "config.openshift.io/v1");
        assert_eq!(doc["kind"], "ClusterImagePolicy");
        let name = doc["metadata"]["name"].as_str().expect("name");
        assert!(name.len() <= 253 && !name.is_empty());
        let scopes = doc["spec"]["scopes"].as_array().expect("scopes");
        assert!(!scopes.is_empty() && scopes.len() <= 256);
        for s in scopes {
            assert!(scope_ok(s.as_str().expect("scope")), "{s}");
        }
        let root = &doc["spec"]["policy"]["rootOfTrust"];
        assert_eq!(root["policyType"], "PublicKey");
        assert!(root.get("fulcioCAWithRekor").is_none());
        let data = root["publicKey"]["keyData"].as_str().expect("keyData");
        assert!(data.len() <= 8192);
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .expect("base64"),
            pem
        );
    }
    let scopes: Vec<&str> = docs[0]["spec"]["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        scopes,
        [
            format!("{}/apps/bundled", src.host),
            format!("{}/apps/legacy", src.host),
            format!("{}/bundles/signed", src.host),
        ]
    );
    // A mistyped key file is named, and nothing is copied.
    let o = out(&mut olmpack(&[
        "catalog",
        "mirror",
        "catalog",
        "--to",
        &format!("{}/other", dst.host),
        "--src-plain-http",
        "--dest-plain-http",
        "--image-policy-key",
        "kk.pub",
        "--results-dir",
        "results2",
    ]));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("kk.pub"), "{}", text(&o));
    assert!(tags(&dst.host, "other/apps/legacy").is_empty());
    // --signatures require: the unsigned images (the bundle image, the catalog built here)
    // fail, the signed ones are copied with what is attached to them.
    let o = out(&mut olmpack(&[
        "catalog",
        "mirror",
        "catalog",
        "--to",
        &format!("{}/strict", dst.host),
        "--src-plain-http",
        "--dest-plain-http",
        "--signatures",
        "require",
        "--results-dir",
        "results3",
    ]));
    assert_eq!(code(&o), 1, "{}", text(&o));
    let strict: Value = serde_json::from_slice(
        &std::fs::read(d.join("results3/report.json")).expect("report.json"),
    )
    .expect("json");
    for i in strict["images"].as_array().expect("images") {
        let source = i["source"].as_str().expect("source");
        if source.contains("/apps/") {
            assert_eq!(i["status"], "copied", "{i}");
            assert!(i["attached"].as_u64().unwrap_or(0) >= 1, "{i}");
        } else {
            assert_eq!(i["status"], "failed", "{i}");
            assert!(
                i["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("--signatures require")),
                "{i}"
            );
        }
    }
    let idms = std::fs::read_to_string(d.join("results3/idms.yaml")).expect("idms");
    assert!(!idms.contains("bundles/signed"), "{idms}");
    // --signatures drop leaves them behind.
    let o = out(&mut olmpack(&[
        "catalog",
        "mirror",
        "catalog",
        "--to",
        &format!("{}/bare", dst.host),
        "--src-plain-http",
        "--dest-plain-http",
        "--signatures",
        "drop",
        "--results-dir",
        "results4",
    ]));
    assert_eq!(code(&o), 0, "{}", text(&o));
    let bare = tags(&dst.host, "bare/apps/legacy");
    assert_eq!(bare.len(), 1, "{bare:?}");
    assert!(!bare[0].ends_with(".sig"), "{bare:?}");

    // --signatures require on the target and results of the first run: neither the record of
    // that run nor the images already there stand for a check of what is attached now.
    let o = out(&mut olmpack(&[
        "catalog",
        "mirror",
        "catalog",
        "--to",
        &to,
        "--src-plain-http",
        "--dest-plain-http",
        "--signatures",
        "require",
        "--results-dir",
        "results",
    ]));
    assert_eq!(code(&o), 1, "{}", text(&o));
    let again: Value =
        serde_json::from_slice(&std::fs::read(d.join("results/report.json")).expect("report.json"))
            .expect("json");
    let unsigned = again["images"]
        .as_array()
        .and_then(|a| {
            a.iter().find(|i| {
                i["source"]
                    .as_str()
                    .is_some_and(|s| s.contains("bundles/signed"))
            })
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(unsigned["status"], "failed", "{again}");

    // A run without the flag removes the policy an earlier run left.
    let o = out(&mut olmpack(&[
        "catalog",
        "mirror",
        "catalog",
        "--to",
        &to,
        "--src-plain-http",
        "--dest-plain-http",
        "--results-dir",
        "results",
    ]));
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!d.join("results/clusterimagepolicy.yaml").exists());
}

/// A private key named as the policy's Rekor key or Fulcio CA is refused before anything is
/// read: the image policy carries what it is given in clear, into files for a cluster.
#[test]
fn a_private_key_is_never_written_into_the_image_policy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    ok(&mut olmpack_in(
        d,
        &["key", "generate", "--output-key-prefix", "k"],
    ));
    std::fs::create_dir(d.join("catalog")).expect("mkdir");
    for flag in ["--image-policy-rekor-key", "--image-policy-fulcio-ca"] {
        let mut args = vec![
            "catalog",
            "mirror",
            "catalog",
            "--to",
            "127.0.0.1:9/x",
            flag,
            "k.key",
        ];
        if flag == "--image-policy-rekor-key" {
            args.extend(["--image-policy-key", "k.pub"]);
        } else {
            args.extend([
                "--image-policy-oidc-issuer",
                "https://issuer.example",
                "--image-policy-email",
                "a@example.com",
                "--image-policy-rekor-key",
                "k.pub",
            ]);
        }
        let o = out(&mut olmpack_in(d, &args));
        assert_eq!(code(&o), 2, "{flag}: {}", text(&o));
        assert!(
            text(&o).contains("k.key: holds a private key"),
            "{flag}: {}",
            text(&o)
        );
        assert!(!d.join("mirror-results").exists());
    }
}
