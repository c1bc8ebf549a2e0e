//! `olmpack verify-blob`, keyless: a private Sigstore instance (Fulcio-like CA, CT log,
//! Rekor-like log with SET, Merkle tree and signed checkpoint) is made by
//! tests/support/sigstore_testdata.py with fresh keys, and each tampering must be refused
//! naming the check that failed. With $OLMPACK_SIGSTORE_PYTHON (a python with PyPI `sigstore`)
//! the same bundles go through sigstore-python too, which must agree on every verdict.

use crate::support::cmd::olmpack;
use std::path::Path;

const IDENTITY: &str =
    "https://github.com/olmpack/test/.github/workflows/release.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn instance() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/sigstore_testdata.py");
    let st = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir.path())
        .status()
        .expect("python3 runs");
    assert!(st.success(), "{} failed", script.display());
    dir
}

/// Runs verify-blob in `dir`; (exit code, stderr).
fn verify(dir: &Path, bundle: &str, identity: &str, issuer: &str, artifact: &str) -> (i32, String) {
    let out = olmpack()
        .current_dir(dir)
        .args([
            "verify-blob",
            "--bundle",
            bundle,
            "--certificate-identity",
            identity,
        ])
        .args([
            "--certificate-oidc-issuer",
            issuer,
            "--trusted-root",
            "trusted_root.json",
        ])
        .arg(artifact)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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
    let Some(python) = std::env::var_os("OLMPACK_SIGSTORE_PYTHON") else {
        eprintln!("OLMPACK_SIGSTORE_PYTHON unset: sigstore-python not run");
        return;
    };
    let dir = instance();
    let run = |bundle: &str, identity: &str, issuer: &str, artifact: &str| {
        std::process::Command::new(&python)
            .current_dir(dir.path())
            .args([
                "-m",
                "sigstore",
                "--trust-config",
                "trust_config.json",
                "verify",
                "identity",
            ])
            .args([
                "--bundle",
                bundle,
                "--cert-identity",
                identity,
                "--cert-oidc-issuer",
                issuer,
                artifact,
            ])
            .output()
            .unwrap()
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
