//! `olmpack verify-blob`, keyless: a private Sigstore instance (Fulcio-like CA, CT log,
//! Rekor-like log with SET, Merkle tree and signed checkpoint) is made by
//! tests/support/sigstore_testdata.py with fresh keys, and each tampering must be refused
//! naming the check that failed. With $OLMPACK_SIGSTORE_PYTHON (a python with PyPI `sigstore`)
//! the same bundles go through sigstore-python too, which must agree on every verdict.

use crate::support::cmd::olmpack;
use crate::support::sigstore::{IDENTITY, ISSUER, python_verify, sigstore_python, verify_blob};
use std::path::Path;

fn instance() -> tempfile::TempDir {
    crate::support::sigstore::instance("sigstore_testdata.py")
}

/// Runs verify-blob in `dir`; (exit code, stderr).
fn verify(dir: &Path, bundle: &str, identity: &str, issuer: &str, artifact: &str) -> (i32, String) {
    let (code, _, err) = verify_blob(dir, bundle, "trusted_root.json", identity, issuer, artifact);
    (code, err)
}

/// The tampering matrix: (bundle, identity, issuer, artifact, the check named in the refusal).
const MATRIX: &[(&str, &str, &str, &str, &str)] = &[
    (
        "good.json",
        "https://example.com/someone-else",
        ISSUER,
        "artifact.txt",
        "certificate identity:",
    ),
    (
        "good.json",
        IDENTITY,
        "https://accounts.google.com",
        "artifact.txt",
        "certificate OIDC issuer:",
    ),
    (
        "expired.json",
        IDENTITY,
        ISSUER,
        "artifact.txt",
        "certificate validity:",
    ),
    (
        "not-in-log.json",
        IDENTITY,
        ISSUER,
        "artifact.txt",
        "inclusion proof:",
    ),
    (
        "checkpoint-key.json",
        IDENTITY,
        ISSUER,
        "artifact.txt",
        "checkpoint:",
    ),
    ("good.json", IDENTITY, ISSUER, "other.txt", "artifact:"),
];

#[test]
fn a_keyless_bundle_verifies_offline_by_file_and_by_digest() {
    let dir = instance();
    let (code, err) = verify(dir.path(), "good.json", IDENTITY, ISSUER, "artifact.txt");
    assert_eq!(code, 0, "{err}");
    let digest = {
        use sha2::Digest as _;
        let b = std::fs::read(dir.path().join("artifact.txt")).unwrap();
        format!("sha256:{:x}", sha2::Sha256::digest(&b))
    };
    let (code, err) = verify(dir.path(), "good.json", IDENTITY, ISSUER, &digest);
    assert_eq!(code, 0, "{err}");
    // cosign's regexp flags: unanchored, as Go's MatchString.
    olmpack()
        .current_dir(dir.path())
        .args([
            "verify-blob",
            "--bundle",
            "good.json",
            "--trusted-root",
            "trusted_root.json",
        ])
        .args([
            "--certificate-identity-regexp",
            "olmpack/test/",
            "--certificate-oidc-issuer-regexp",
            "githubusercontent",
        ])
        .arg("artifact.txt")
        .assert()
        .success()
        .stdout(predicates::str::contains(IDENTITY));
}

#[test]
fn each_tampering_is_refused_naming_its_check() {
    let dir = instance();
    for (bundle, identity, issuer, artifact, check) in MATRIX {
        let (code, err) = verify(dir.path(), bundle, identity, issuer, artifact);
        assert_eq!(code, 1, "{bundle} {artifact}: {err}");
        assert!(
            err.contains(&format!("refused {bundle}: {check}")),
            "{bundle} {artifact}: expected a refusal by {check:?}, got {err}"
        );
    }
}

#[test]
fn the_public_good_root_does_not_trust_a_private_instance() {
    let dir = instance();
    olmpack()
        .current_dir(dir.path())
        .args([
            "verify-blob",
            "--bundle",
            "good.json",
            "--certificate-identity",
            IDENTITY,
        ])
        .args(["--certificate-oidc-issuer", ISSUER, "artifact.txt"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "transparency log: the entry is from a log the trusted root does not list",
        ));
}

#[test]
fn unreadable_inputs_name_the_file() {
    let dir = instance();
    std::fs::write(dir.path().join("broken.json"), b"{\"mediaType\": 3").unwrap();
    olmpack()
        .current_dir(dir.path())
        .args([
            "verify-blob",
            "--bundle",
            "broken.json",
            "--certificate-identity",
            IDENTITY,
        ])
        .args([
            "--certificate-oidc-issuer",
            ISSUER,
            "--trusted-root",
            "trusted_root.json",
            "artifact.txt",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "broken.json: not a Sigstore bundle",
        ));
    olmpack()
        .current_dir(dir.path())
        .args([
            "verify-blob",
            "--bundle",
            "good.json",
            "--certificate-identity",
            IDENTITY,
        ])
        .args([
            "--certificate-oidc-issuer",
            ISSUER,
            "--trusted-root",
            "missing.json",
            "artifact.txt",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("missing.json"));
    olmpack()
        .current_dir(dir.path())
        .args([
            "verify-blob",
            "--bundle",
            "good.json",
            "--trusted-root",
            "trusted_root.json",
            "artifact.txt",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--certificate-identity"));
}

/// sigstore-python on the same bundles: the good one verifies, every tampering is refused.
#[test]
fn sigstore_python_agrees_on_every_verdict() {
    let Some(python) = sigstore_python() else {
        return;
    };
    let dir = instance();
    let run = |bundle: &str, identity: &str, issuer: &str, artifact: &str| {
        python_verify(
            &python,
            dir.path(),
            false,
            bundle,
            identity,
            issuer,
            artifact,
        )
    };
    let good = run("good.json", IDENTITY, ISSUER, "artifact.txt");
    assert!(
        good.status.success(),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    for (bundle, identity, issuer, artifact, check) in MATRIX {
        let out = run(bundle, identity, issuer, artifact);
        assert!(
            !out.status.success(),
            "sigstore-python accepted {bundle} for {artifact} (olmpack refuses it by {check})"
        );
    }
}

// The review's findings, each an attack the verifier let through before (s52 "Open"): every
// case must be refused naming its check.

/// A checkpoint the log's key signed for another log (origin) is not this log's word.
#[test]
fn a_checkpoint_of_another_origin_is_refused() {
    let dir = instance();
    let (code, err) = verify(dir.path(), "origin.json", IDENTITY, ISSUER, "artifact.txt");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused origin.json: checkpoint: the checkpoint's origin \"rekor.elsewhere.invalid - 1\" is not the log"),
        "{err}"
    );
}

/// An SCT naming an unknown hash algorithm is refused, not read as SHA-256.
#[test]
fn an_sct_of_unknown_hash_is_refused() {
    let dir = instance();
    let (code, err) = verify(
        dir.path(),
        "sct-hash.json",
        IDENTITY,
        ISSUER,
        "artifact.txt",
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("certificate transparency (SCT): the SCT's hash algorithm 0"),
        "{err}"
    );
}

/// `\w` is ASCII in cosign's RE2: a Cyrillic lookalike of "signer" does not match it.
#[test]
fn identity_regexps_are_ascii_as_in_cosign() {
    let dir = instance();
    let regexp = |re: &str| {
        olmpack()
            .current_dir(dir.path())
            .args(["verify-blob", "--bundle", "lookalike.json"])
            .args(["--trusted-root", "trusted_root.json"])
            .args(["--certificate-identity-regexp", re])
            .args(["--certificate-oidc-issuer", ISSUER, "artifact.txt"])
            .output()
            .unwrap()
    };
    // The bundle is otherwise good: a pattern naming the lookalike's letter passes.
    let out = regexp(r"^\p{Cyrillic}igner@olmpack\.test$");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for re in [r"^\w+@olmpack\.test$", r"^[\w.-]+@olmpack\.test$"] {
        let out = regexp(re);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{re}: {err}");
        assert!(err.contains("certificate identity:"), "{err}");
    }
}

/// With --key, the log must name that key: an entry logged for the bundle's certificate (of
/// another key) proves nothing about the key.
#[test]
fn with_a_key_the_log_must_name_the_key() {
    let dir = instance();
    let key = |bundle: &str| {
        olmpack()
            .current_dir(dir.path())
            .args(["verify-blob", "--bundle", bundle, "--key", "key.pub"])
            .args(["--trusted-root", "trusted_root.json", "artifact.txt"])
            .output()
            .unwrap()
    };
    let out = key("key-good.json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = key("key-logged-cert.json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("transparency log entry: the logged certificate or key is not the bundle's"),
        "{err}"
    );
}

/// --key with an issuer flag is refused (cosign ignores the issuer silently with a key).
#[test]
fn a_key_with_an_issuer_flag_is_refused() {
    let dir = instance();
    olmpack()
        .current_dir(dir.path())
        .args([
            "verify-blob",
            "--bundle",
            "key-good.json",
            "--key",
            "key.pub",
        ])
        .args(["--certificate-oidc-issuer", ISSUER])
        .args(["--trusted-root", "trusted_root.json", "artifact.txt"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "give --key or --certificate-identity",
        ));
}
