//! policy.json `sigstoreSigned` with `fulcio`, `rekorPublicKeyPath` and `pki` (issue 47 item 3)
//! on a real registry on loopback: images signed by an independent signer
//! (`tests/support/sigstore_policy_sign.py`, python3-cryptography: its own Fulcio-like CA and
//! intermediate, Rekor key, PKI root and intermediate), as cosign `.sig` layers and as cosign 3
//! Sigstore bundle referrers, each read by `bundle inspect --policy`.
//!
//! The reference is containers/image: skopeo is asked first, and where this skopeo (1.9.3,
//! containers/image 5.22) cannot load such a policy ("Unknown key") the expected verdict is
//! the one containers/image's code gives (`policy_eval_sigstore.go`, `fulcio_cert.go`,
//! `pki_cert.go`, `rekor_set.go`; its own test cases are ported in
//! `crates/oci/src/signature/policy/sigstore_trust/tests.rs`). Bundles are olmpack's own
//! extension: containers/image does not read them.

use crate::signing::{code, ok, olmpack, out, push, skopeo_accepts, text, tool};
use crate::support::registry::{Mode, Registry};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const EMAIL: &str = "signer@olmpack.test";
const ISSUER: &str = "https://issuer.olmpack.test";
const HOST_NAME: &str = "signer.olmpack.test";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/sigstore_policy_sign.py")
}

fn signer(args: &[&str]) {
    ok(tool("/usr/bin/python3").arg(script()).args(args));
}

fn requirement(kind: &str, d: &Path) -> Value {
    let p = |f: &str| d.join(f).display().to_string();
    let identity = json!({"type": "matchRepository"});
    match kind {
        "fulcio" => json!({"type": "sigstoreSigned",
            "fulcio": {"caPath": p("fulcio_ca.pem"), "oidcIssuer": ISSUER, "subjectEmail": EMAIL},
            "rekorPublicKeyPath": p("rekor.pub"), "signedIdentity": identity}),
        "key-rekor" => json!({"type": "sigstoreSigned", "keyPath": p("key.pub"),
            "rekorPublicKeyPath": p("rekor.pub"), "signedIdentity": identity}),
        "pki" => json!({"type": "sigstoreSigned",
            "pki": {"caRootsPath": p("pki_root.pem"), "caIntermediatesPath": p("pki_inter.pem"),
                    "subjectEmail": EMAIL, "subjectHostname": HOST_NAME},
            "signedIdentity": identity}),
        other => panic!("no requirement {other}"),
    }
}

/// (signer case, bundle?, policy kind, accepted, what a refusal must name)
const CASES: &[(&str, bool, &str, bool, &str)] = &[
    ("fulcio", false, "fulcio", true, ""),
    (
        "fulcio-other-ca",
        false,
        "fulcio",
        false,
        "verifying the leaf certificate failed",
    ),
    (
        "fulcio-wrong-email",
        false,
        "fulcio",
        false,
        "required email",
    ),
    ("fulcio-wrong-issuer", false, "fulcio", false, "OIDC issuer"),
    (
        "fulcio-set-other-key",
        false,
        "fulcio",
        false,
        "Rekor SET failed",
    ),
    (
        "fulcio-set-other-payload",
        false,
        "fulcio",
        false,
        "payload in Rekor SET does not match",
    ),
    ("fulcio-expired", false, "fulcio", false, "was valid from"),
    ("key-rekor", false, "key-rekor", true, ""),
    (
        "key-rekor-other-key",
        false,
        "key-rekor",
        false,
        "Rekor SET",
    ),
    ("pki", false, "pki", true, ""),
    ("pki-other-host", false, "pki", false, "hostname"),
    (
        "pki-other-ca",
        false,
        "pki",
        false,
        "verifying the leaf certificate failed",
    ),
    // The same trust satisfied by a cosign 3 bundle referrer (containers/image reads none).
    ("fulcio", true, "fulcio", true, ""),
    (
        "fulcio-other-ca",
        true,
        "fulcio",
        false,
        "verifying the leaf certificate failed",
    ),
    (
        "fulcio-wrong-email",
        true,
        "fulcio",
        false,
        "required email",
    ),
    ("fulcio-wrong-issuer", true, "fulcio", false, "OIDC issuer"),
    (
        "fulcio-set-other-key",
        true,
        "fulcio",
        false,
        "signed entry timestamp",
    ),
    (
        "fulcio-set-other-payload",
        true,
        "fulcio",
        false,
        "payload hash",
    ),
    ("fulcio-expired", true, "fulcio", false, "was valid from"),
    ("key-rekor", true, "key-rekor", true, ""),
    (
        "key-rekor-other-key",
        true,
        "key-rekor",
        false,
        "signed entry timestamp",
    ),
    ("pki", true, "pki", true, ""),
    ("pki-other-host", true, "pki", false, "hostname"),
    (
        "pki-other-ca",
        true,
        "pki",
        false,
        "verifying the leaf certificate failed",
    ),
];

#[test]
fn fulcio_rekor_and_pki_policies_as_containers_image_evaluates_them() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    signer(&["setup", d.to_str().expect("utf8")]);
    let rd = d.join("registries.d");
    std::fs::create_dir_all(&rd).expect("mkdir");
    std::fs::write(
        rd.join("default.yaml"),
        "default-docker:\n  use-sigstore-attachments: true\n",
    )
    .expect("write");
    let mut failures = Vec::new();
    let mut skopeo_ran = 0;
    for (i, (case, bundle, kind, accept, word)) in CASES.iter().enumerate() {
        let repo = format!("p{i}");
        let digest = push(&reg, d, &repo, "v1", i + 1);
        signer(&[
            if *bundle { "bundle" } else { "sign" },
            d.to_str().expect("utf8"),
            &reg.host,
            &repo,
            &digest,
            case,
        ]);
        let policy = d.join(format!("policy-{i}.json"));
        let body = json!({"default": [{"type": "reject"}],
            "transports": {"docker": {format!("{}/{repo}", reg.host): [requirement(kind, d)]}}});
        std::fs::write(&policy, serde_json::to_vec_pretty(&body).expect("json")).expect("write");
        let image = reg.reference(&repo, "v1");
        let o = out(olmpack(
            d,
            &[
                "bundle",
                "inspect",
                &image,
                "--policy",
                policy.to_str().expect("utf8"),
                "--no-files",
            ],
        )
        .env("OLMPACK_REGISTRIES_D", &rd));
        let msg = text(&o);
        let accepted = o.status.success();
        let name = format!(
            "{case}{} under {kind}",
            if *bundle { " (bundle)" } else { "" }
        );
        if accepted != *accept || (!accept && (code(&o) != 1 || !msg.contains(word))) {
            failures.push(format!("{name}: exit {}: {msg}", code(&o)));
        }
        // The reference, for `.sig` signatures: skopeo, when it can load the policy.
        if !bundle {
            let (s, why) = skopeo_accepts(d, &image, &policy, &rd);
            if why.contains("Unknown key") {
                assert!(!s, "{why}");
            } else {
                skopeo_ran += 1;
                if s != *accept {
                    failures.push(format!("{name}: skopeo {s} ({why}), olmpack {accepted}"));
                }
            }
        }
    }
    println!(
        "skopeo evaluated {skopeo_ran} of the .sig cases (skopeo 1.9.3 loads no fulcio, rekor or pki policy)"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
