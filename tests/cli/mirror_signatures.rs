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
    // --signatures require: the unsigned bundle image fails, the signed ones are copied with
    // what is attached to them, and the catalog built here from a folder (which no source
    // could have signed) is copied, saying so.
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
            assert!(
                i["signature_check"]
                    .as_str()
                    .is_some_and(|c| c.contains("presence checked, not verified")),
                "{i}"
            );
        } else if i["kind"] == "catalog" {
            assert_eq!(i["status"], "copied", "{i}");
            assert!(
                i["signature_check"]
                    .as_str()
                    .is_some_and(|c| c.contains("built here")),
                "{i}"
            );
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

/// A cosign 2 attachment tag (`sha256-<hex>.<suffix>`) whose one layer has `media_type`
/// (unsigned here: it only has to travel).
fn push_tagged(host: &str, repo: &str, digest: &str, suffix: &str, media_type: &str) -> String {
    let c = client(host);
    let layer = Blob::memory(media_type, br#"{"spdxVersion":"SPDX-2.3"}"#.to_vec());
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
    let tag = format!("{}.{suffix}", digest.replacen(':', "-", 1));
    push::push_image(&c, &image, repo, std::slice::from_ref(&tag), &silent()).expect("push");
    tag
}

/// The report's record of the image whose source names `repo`.
fn record<'a>(report: &'a Value, repo: &str) -> &'a Value {
    report["images"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|i| i["source"].as_str().is_some_and(|s| s.contains(repo)))
        })
        .unwrap_or_else(|| panic!("no record of {repo}: {report}"))
}

/// Issue 47 item 5's evidence: an image carrying every kind of signature and attestation,
/// each made by real code (`olmpack sign` in both formats, `olmpack attest` of SLSA
/// provenance and an SPDX SBOM, a cosign `.sbom` tag, and a GPG simple signature written by
/// `skopeo copy --sign-by` into a file:// lookaside), mirrored and copied: at the target
/// everything is there and verifies (`olmpack verify` for cosign and simple signatures,
/// `olmpack verify-attestation` for both attestations, and skopeo reading the target's
/// lookaside under a `signedBy` policy); the report and copy's output say per image what was
/// carried; `--signatures require` with the keys refuses the unsigned image by name before
/// copying anything, and verifies (not only finds) the others.
#[test]
fn every_kind_of_signature_is_carried_and_verifies_at_the_target() {
    use super::signing::{Gpg, push as push_image, skopeo_copy_signed};
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let olmpack = |args: &[&str]| olmpack_in(d, args);
    for prefix in ["k", "other"] {
        ok(&mut olmpack(&[
            "key",
            "generate",
            "--output-key-prefix",
            prefix,
        ]));
    }
    let gpg = Gpg::new();
    gpg.export(0, &d.join("one.gpg"));
    gpg.export(1, &d.join("two.gpg"));
    // The lookaside stores: the source's, and the target's (written through its staging
    // name, read through its lookaside name, as skopeo reads it).
    let rd = d.join("registries.d");
    std::fs::create_dir_all(&rd).expect("mkdir");
    let (src_store, dst_store) = (d.join("src-store"), d.join("dst-store"));
    std::fs::write(
        rd.join("stores.yaml"),
        format!(
            "docker:\n  {}:\n    lookaside: file://{}\n  {}:\n    lookaside: file://{}\n    lookaside-staging: file://{}\n",
            src.host,
            src_store.display(),
            dst.host,
            dst_store.display(),
            dst_store.display(),
        ),
    )
    .expect("write registries.d");
    let rd_s = rd.to_str().expect("utf8");

    // apps/full: everything; apps/unsigned: nothing; bundles/signed: a .sig.
    let full_digest = push_image(&src, d, "apps/full", "v1", 11);
    let full = src.reference("apps/full", "v1");
    let unsigned_digest = push_image(&src, d, "apps/unsigned", "v1", 12);
    let bundle_digest = push_image(&src, d, "bundles/signed", "v1", 13);
    let bundle = src.reference("bundles/signed", "v1");
    ok(&mut olmpack(&[
        "sign", &bundle, "--key", "k.key", "--format", "legacy",
    ]));
    ok(&mut olmpack(&[
        "sign", &full, "--key", "k.key", "--format", "both",
    ]));
    std::fs::write(d.join("prov.json"), r#"{"builder": {"id": "urn:test"}}"#).expect("write");
    std::fs::write(
        d.join("sbom.json"),
        r#"{"spdxVersion": "SPDX-2.3", "SPDXID": "SPDXRef-DOCUMENT", "name": "full"}"#,
    )
    .expect("write");
    for (predicate, kind, format) in [
        ("prov.json", "slsaprovenance1", "both"),
        ("sbom.json", "spdxjson", "bundle"),
    ] {
        ok(&mut olmpack(&[
            "attest",
            &full,
            "--key",
            "k.key",
            "--predicate",
            predicate,
            "--type",
            kind,
            "--format",
            format,
        ]));
    }
    let sbom_tag = push_tagged(
        &src.host,
        "apps/full",
        &full_digest,
        "sbom",
        "application/spdx+json",
    );
    // skopeo signs with GnuPG into the source's lookaside, re-pushing the same manifest.
    skopeo_copy_signed(&gpg, rd_s, &d.join("img-apps/full-v1/layout"), &full);
    let hex = &full_digest[7..];
    assert!(
        src_store
            .join(format!("apps/full@sha256={hex}/signature-1"))
            .is_file(),
        "skopeo wrote the simple signature"
    );
    let related = vec![
        format!("{}/apps/full@{full_digest}", src.host),
        format!("{}/apps/unsigned@{unsigned_digest}", src.host),
    ];
    write_signed_catalog(&d.join("catalog"), &bundle, &related);
    let _ = bundle_digest;

    // The mirror, signatures copied (the default).
    let to = format!("{}/mirror", dst.host);
    let mirror = |to: &str, results: &str, extra: &[&str]| {
        let mut args = vec![
            "catalog",
            "mirror",
            "catalog",
            "--to",
            to,
            "--src-plain-http",
            "--dest-plain-http",
            "--registries-d",
            rd_s,
            "--results-dir",
            results,
        ];
        args.extend_from_slice(extra);
        out(&mut olmpack(&args))
    };
    let o = mirror(&to, "results", &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let line = "sig 1, att 1, sbom 1, referrers 3 (bundle, provenance, spdx), lookaside 1";
    assert!(
        text(&o).contains(&format!("carried {line}")),
        "{}",
        text(&o)
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(d.join("results/report.json")).expect("report"))
            .expect("json");
    let carried = &record(&report, "apps/full")["carried"];
    assert_eq!(carried["sig"], 1, "{carried}");
    assert_eq!(carried["att"], 1, "{carried}");
    assert_eq!(carried["sbom"], 1, "{carried}");
    assert_eq!(carried["lookaside"], 1, "{carried}");
    let mut kinds: Vec<&str> = carried["referrers"]
        .as_array()
        .expect("referrers")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["bundle", "provenance", "spdx"], "{carried}");
    assert_eq!(record(&report, "apps/full")["attached"], 7);

    let check_target = |at_repo: &str| {
        let at = format!("{at_repo}@{full_digest}");
        // Present, by independent listings: the cosign tags, the referrers tag's index.
        let repo = at_repo.trim_start_matches(&format!("{}/", dst.host));
        let t = tags(&dst.host, repo);
        for suffix in ["sig", "att", "sbom"] {
            assert!(t.contains(&format!("sha256-{hex}.{suffix}")), "{t:?}");
        }
        assert!(t.contains(&sbom_tag), "{t:?}");
        let index = skopeo_manifest(&format!("{at_repo}:sha256-{hex}"));
        assert_eq!(
            index["manifests"].as_array().map(Vec::len),
            Some(3),
            "{index}"
        );
        assert!(
            dst_store
                .join(format!("{repo}@sha256={hex}/signature-1"))
                .is_file(),
            "the simple signature is in the target's store"
        );
        // cosign (.sig and bundle) and simple signatures verify there.
        let v = out(&mut olmpack(&[
            "verify",
            &at,
            "--key",
            "k.pub",
            "--gpg-keyring",
            "one.gpg",
            "--registries-d",
            rd_s,
            "--identity",
            &full,
            "-o",
            "json",
        ]));
        assert_eq!(code(&v), 0, "{}", text(&v));
        let json: Value = serde_json::from_slice(&v.stdout).expect("json");
        let verified = |format: &str| {
            json["signatures"]
                .as_array()
                .expect("signatures")
                .iter()
                .filter(|s| s["format"] == format && s["verified"] == true)
                .count()
        };
        assert_eq!(verified("cosign"), 2, "{json}");
        assert_eq!(verified("simple"), 1, "{json}");
        // Both attestations verify there.
        for kind in ["slsaprovenance1", "spdxjson"] {
            let a = out(&mut olmpack(&[
                "verify-attestation",
                &at,
                "--key",
                "k.pub",
                "--type",
                kind,
                "--plain-http",
            ]));
            assert_eq!(code(&a), 0, "{kind}: {}", text(&a));
        }
        // skopeo verifies the GPG signature from the target's lookaside under a policy that
        // requires it (the signature names the source repository it was made for), and
        // refuses it under another key.
        for (keyring, accepted) in [("one.gpg", true), ("two.gpg", false)] {
            let policy = d.join(format!("policy-{keyring}.json"));
            let p = json!({
                "default": [{"type": "reject"}],
                "transports": {"docker": {dst.host.clone(): [{
                    "type": "signedBy",
                    "keyType": "GPGKeys",
                    "keyPath": d.join(keyring),
                    "signedIdentity": {"type": "exactRepository", "dockerRepository": format!("{}/apps/full", src.host)},
                }]}}
            });
            std::fs::write(&policy, serde_json::to_vec(&p).expect("json")).expect("write");
            let (ok, why) = super::signing::skopeo_accepts(d, &at, &policy, &rd);
            assert_eq!(ok, accepted, "skopeo with {keyring}: {why}");
        }
    };
    check_target(&format!("{to}/apps/full"));

    // copy: the same, with --signatures require verifying with both keys first.
    let copied = format!("{}/copied/full:v1", dst.host);
    let o = out(&mut olmpack(&[
        "copy",
        &full,
        &copied,
        "--signatures",
        "require",
        "--verify-key",
        "k.pub",
        "--verify-gpg-keyring",
        "one.gpg",
        "--registries-d",
        rd_s,
    ]));
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains(&format!("carried for {full}: {line}")),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("3 signature(s) verified with the keys given"),
        "{}",
        text(&o)
    );
    check_target(&format!("{}/copied/full", dst.host));

    // require refuses by name, before anything is written: an unsigned image, and a signed
    // one whose signatures another key made.
    let unsigned = src.reference("apps/unsigned", "v1");
    for (image, key, says) in [
        (&unsigned, "k.pub", "no signature found"),
        (&full, "other.pub", "does not verify"),
    ] {
        let o = out(&mut olmpack(&[
            "copy",
            image,
            &format!("{}/refused/x:v1", dst.host),
            "--signatures",
            "require",
            "--verify-key",
            key,
        ]));
        assert_eq!(code(&o), 1, "{}", text(&o));
        assert!(text(&o).contains(image.as_str()), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
        assert!(text(&o).contains("nothing was copied"), "{}", text(&o));
    }
    assert!(tags(&dst.host, "refused/x").is_empty());
    // Without keys require says it checks presence only, and still refuses the unsigned one.
    let o = out(&mut olmpack(&[
        "copy",
        &unsigned,
        &format!("{}/refused/y:v1", dst.host),
        "--signatures",
        "require",
    ]));
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(
        text(&o).contains(&unsigned) && text(&o).contains("nothing is attached"),
        "{}",
        text(&o)
    );
    assert!(tags(&dst.host, "refused/y").is_empty());

    // The mirror with require and the keys: the unsigned image fails by name and is not
    // copied; the signed ones are verified; the catalog built here from the folder is not
    // refused for lacking a signature it cannot have.
    let o = mirror(
        &format!("{}/strict", dst.host),
        "results-strict",
        &[
            "--signatures",
            "require",
            "--verify-key",
            "k.pub",
            "--verify-gpg-keyring",
            "one.gpg",
        ],
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    let strict: Value = serde_json::from_slice(
        &std::fs::read(d.join("results-strict/report.json")).expect("report"),
    )
    .expect("json");
    let refused = record(&strict, "apps/unsigned");
    assert_eq!(refused["status"], "failed", "{refused}");
    let reason = refused["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("apps/unsigned") && reason.contains("--signatures require"),
        "{reason}"
    );
    assert!(tags(&dst.host, "strict/apps/unsigned").is_empty());
    for (repo, verified) in [
        ("apps/full", "3 signature(s)"),
        ("bundles/signed", "1 signature(s)"),
    ] {
        let r = record(&strict, repo);
        assert_eq!(r["status"], "copied", "{r}");
        assert!(
            r["signature_check"]
                .as_str()
                .is_some_and(|c| c.contains(verified)),
            "{r}"
        );
    }
    let catalog = strict["images"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["kind"] == "catalog"))
        .expect("catalog record");
    assert_eq!(catalog["status"], "copied", "{catalog}");
    assert!(
        catalog["signature_check"]
            .as_str()
            .is_some_and(|c| c.contains("built here")),
        "{catalog}"
    );
    // The text report says the same per image.
    assert!(
        text(&o).contains("verified with the keys given"),
        "{}",
        text(&o)
    );
}
