//! What the keyless verify tests share (`sigstore_verify.rs`, `sigstore_tsa.rs`,
//! `sigstore_verify_image.rs`): the signer the private instances certify, the instance made
//! by a test-data script, `olmpack verify-blob` against it, and sigstore-python, the
//! independent verifier, on the same bundles.

use super::cmd::olmpack;
use super::proc::Bounded;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output};

/// The workflow identity every test certificate is issued to.
pub const IDENTITY: &str =
    "https://github.com/olmpack/test/.github/workflows/release.yml@refs/heads/main";

/// The OIDC issuer every test certificate names.
pub const ISSUER: &str = "https://token.actions.githubusercontent.com";

/// A fresh folder holding the private Sigstore instance `script` (under tests/support/) makes:
/// its trusted root, trust config and signed bundles, with new keys each run.
pub fn instance(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(script);
    let st = Command::new("python3")
        .arg(&script)
        .arg(dir.path())
        .bounded_status()
        .expect("python3 runs");
    assert!(st.success(), "{} failed", script.display());
    dir
}

/// `olmpack verify-blob` in `dir`: `bundle` for `artifact` (a file or a digest), the signer
/// `identity` from `issuer`, trusting `root`; (exit code, stdout, stderr).
pub fn verify_blob(
    dir: &Path,
    bundle: &str,
    root: &str,
    identity: &str,
    issuer: &str,
    artifact: &str,
) -> (i32, String, String) {
    let out = olmpack()
        .current_dir(dir)
        .args(["verify-blob", "--bundle", bundle])
        .args(["--certificate-identity", identity])
        .args(["--certificate-oidc-issuer", issuer, "--trusted-root", root])
        .arg(artifact)
        .bounded_output()
        .unwrap();
    super::cmd::code_and_text(&out)
}

/// The python with PyPI `sigstore` that $OLMPACK_SIGSTORE_PYTHON names; none (and a line
/// saying the comparison is not run) when it is unset.
pub fn sigstore_python() -> Option<OsString> {
    let python = std::env::var_os("OLMPACK_SIGSTORE_PYTHON");
    if python.is_none() {
        eprintln!("OLMPACK_SIGSTORE_PYTHON unset: sigstore-python not run");
    }
    python
}

/// sigstore-python's `verify identity` in `dir` with the instance's `trust_config.json`:
/// `bundle` for `artifact` (a file, or a digest), the signer `identity` from `issuer`;
/// `offline` adds `--offline` (no trust-root refresh).
pub fn python_verify(
    python: &OsString,
    dir: &Path,
    offline: bool,
    bundle: &str,
    identity: &str,
    issuer: &str,
    artifact: &str,
) -> Output {
    Command::new(python)
        .current_dir(dir)
        .args(["-m", "sigstore", "--trust-config", "trust_config.json"])
        .args(["verify", "identity"])
        .args(offline.then_some("--offline"))
        .args(["--bundle", bundle])
        .args(["--cert-identity", identity, "--cert-oidc-issuer", issuer])
        .arg(artifact)
        .bounded_output()
        .expect("python runs")
}
