//! `olmpack verify-blob` with RFC 3161 timestamps and Rekor v2 entries: a private instance
//! with a timestamp authority and a v2-like log is made by tests/support/sigstore_tsa_testdata.py
//! (fresh keys, DER tokens written by hand), and each attack on the timestamp must be refused
//! naming its check. The same bundles go through sigstore-python when $OLMPACK_SIGSTORE_PYTHON
//! names a python with PyPI `sigstore`, and the Sigstore conformance suite's own timestamped
//! bundles (read in place, never copied) when $OLMPACK_SIGSTORE_CONFORMANCE names its checkout.

use crate::support::sigstore::{IDENTITY, ISSUER, python_verify, sigstore_python, verify_blob};
use std::path::Path;

fn instance() -> tempfile::TempDir {
    crate::support::sigstore::instance("sigstore_tsa_testdata.py")
}

/// Runs verify-blob in `dir` with `root`; (exit code, stdout, stderr).
fn verify(
    dir: &Path,
    bundle: &str,
    root: &str,
    identity: &str,
    artifact: &str,
) -> (i32, String, String) {
    verify_blob(dir, bundle, root, identity, ISSUER, artifact)
}

/// Bundles that verify: a v2 entry timestamped (token with and without the TSA's certificate),
/// and a v1 entry with a SET and a timestamp.
const GOOD: &[&str] = &["v2-good.json", "v2-embedded.json", "v1-tsa-good.json"];

/// The attacks: (bundle, what the refusal must say).
const ATTACKS: &[(&str, &str)] = &[
    (
        "v2-no-timestamp.json",
        "signing time: the Rekor v2 entry has no integrated time and the bundle no RFC 3161 timestamp",
    ),
    (
        "v2-imprint.json",
        "RFC 3161 timestamp: its message imprint is not the hash of this bundle's signature",
    ),
    (
        "v2-untrusted.json",
        "RFC 3161 timestamp: no timestamp authority of the trusted root signed it",
    ),
    (
        "v2-impostor.json",
        "RFC 3161 timestamp: its signature does not verify with the key of the authority https://tsa.olmpack.invalid",
    ),
    (
        "v2-late.json",
        "certificate validity: the certificate was valid from",
    ),
    (
        "v2-tsa-window.json",
        "is outside the trusted root's validity of the authority https://tsa.olmpack.invalid",
    ),
    (
        "v2-tsa-cert.json",
        "RFC 3161 timestamp: a certificate of the authority https://young-tsa.olmpack.invalid",
    ),
];

#[test]
fn timestamped_and_rekor_v2_bundles_verify_offline() {
    let dir = instance();
    for bundle in GOOD {
        let (code, out, err) = verify(
            dir.path(),
            bundle,
            "trusted_root.json",
            IDENTITY,
            "artifact.txt",
        );
        assert_eq!(code, 0, "{bundle}: {err}");
        assert!(out.contains("verified"), "{bundle}: {out}");
    }
    // The same v2 bundle for another artifact is still refused (the timestamp is no free pass).
    let (code, _, err) = verify(
        dir.path(),
        "v2-good.json",
        "trusted_root.json",
        IDENTITY,
        "other.txt",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused v2-good.json: artifact:"), "{err}");
}

#[test]
fn each_timestamp_attack_is_refused_naming_its_check() {
    let dir = instance();
    for (bundle, why) in ATTACKS {
        let (code, _, err) = verify(
            dir.path(),
            bundle,
            "trusted_root.json",
            IDENTITY,
            "artifact.txt",
        );
        assert_eq!(code, 1, "{bundle}: {err}");
        assert!(
            err.contains(&format!("refused {bundle}: ")) && err.contains(why),
            "{bundle}: expected a refusal saying {why:?}, got {err}"
        );
    }
}

/// A root without the timestamp authority: the timestamp cannot count (fail closed).
#[test]
fn a_root_without_timestamp_authorities_refuses_timestamped_bundles() {
    let dir = instance();
    let path = dir.path().join("trusted_root.json");
    let mut root: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    root["timestampAuthorities"] = serde_json::json!([]);
    std::fs::write(dir.path().join("no-tsa.json"), root.to_string()).unwrap();
    let (code, _, err) = verify(
        dir.path(),
        "v2-good.json",
        "no-tsa.json",
        IDENTITY,
        "artifact.txt",
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("RFC 3161 timestamp: the bundle carries RFC 3161 timestamps but the trusted root lists no timestamp authority"),
        "{err}"
    );
}

#[test]
fn sigstore_python_agrees_on_the_timestamped_bundles() {
    let Some(python) = sigstore_python() else {
        return;
    };
    let dir = instance();
    let run = |bundle: &str| {
        python_verify(
            &python,
            dir.path(),
            false,
            bundle,
            IDENTITY,
            ISSUER,
            "artifact.txt",
        )
    };
    for bundle in GOOD {
        let out = run(bundle);
        assert!(
            out.status.success(),
            "sigstore-python refused {bundle}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (bundle, _) in ATTACKS {
        assert!(
            !run(bundle).status.success(),
            "sigstore-python accepted {bundle}"
        );
    }
}

/// The conformance suite's timestamped bundles, read in place from its checkout: the happy
/// paths verify, every `_fail` case is refused, and not as "unsupported".
#[test]
fn the_conformance_suites_timestamped_bundles() {
    let Some(checkout) = std::env::var_os("OLMPACK_SIGSTORE_CONFORMANCE") else {
        eprintln!("OLMPACK_SIGSTORE_CONFORMANCE unset: the conformance assets are not read");
        return;
    };
    let assets = Path::new(&checkout).join("test/assets");
    let cases = assets.join("bundle-verify");
    let identity = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
    let mut seen = 0;
    for entry in std::fs::read_dir(&cases).unwrap() {
        let case = entry.unwrap().path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let bundle = case.join("bundle.sigstore.json");
        let Ok(text) = std::fs::read_to_string(&bundle) else {
            continue;
        };
        if !text.contains("rfc3161Timestamps") && !name.starts_with("rekor2-") {
            continue;
        }
        let root = case.join("trusted_root.json");
        if !root.exists() || case.join("key.pub").exists() {
            continue;
        }
        seen += 1;
        // A case may name its own artifact and identity (the suite's `artifact`, `identity`).
        let artifact = case.join("artifact");
        let artifact = if artifact.exists() {
            artifact.to_string_lossy().into_owned()
        } else {
            "bundle-verify/a.txt".to_string()
        };
        let identity = std::fs::read_to_string(case.join("identity"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| identity.to_string());
        let (code, _, err) = verify(
            &assets,
            bundle.to_str().unwrap(),
            root.to_str().unwrap(),
            &identity,
            &artifact,
        );
        if name.ends_with("_fail") {
            // 1 refused; 2 where the bundle itself cannot be read (a base64 line-wrapped by
            // `base64` in rekor2-timestamp-with-incorrect-time_fail).
            assert_ne!(code, 0, "{name} accepted");
            assert!(!err.contains("unsupported"), "{name}: {err}");
        } else {
            assert_eq!(code, 0, "{name}: {err}");
        }
    }
    assert!(seen >= 20, "only {seen} timestamped cases found");
}
