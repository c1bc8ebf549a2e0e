//! `olmpack verify IMAGE` keyless and `verify-attestation` keyless, on Debian's docker-registry
//! (no referrers API: the `sha256-<hex>` referrers tag lists the bundles). The signatures are
//! made by tests/support/sigstore_testdata.py through a private Sigstore instance (its own
//! Fulcio-like CA, CT log and Rekor-like log, fresh keys each run) and pushed by plain HTTP
//! beside images olmpack's image builder made: cosign 2's keyless `.sig` layer (certificate,
//! chain and Rekor SET annotations) and cosign 3's bundle referrers (DSSE signing statement,
//! message signature over the digest, SLSA attestation logged as `dsse` or `intoto`). Each
//! tampering is refused naming its check. With $OLMPACK_SIGSTORE_PYTHON (a python with PyPI
//! `sigstore`), sigstore-python verifies the same bundles offline with the same trusted root
//! and refuses the moved one.

use super::signing::{code, olmpack, out, push, text};
use crate::support::registry::{Mode, Registry};
use crate::support::sigstore::{IDENTITY, ISSUER, python_verify, sigstore_python};
use std::path::Path;

/// Debian's python3, which has python3-cryptography and (for the registry writes shared with
/// tests/support/cosign_interop.py) python3-nacl.
const PY: &str = "/usr/bin/python3";

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/sigstore_testdata.py")
}

/// The private instance (trusted_root.json, instance.json) in `d`.
fn instance(d: &Path) {
    let st = std::process::Command::new(PY)
        .arg(script())
        .arg(d)
        .status()
        .expect("python3 runs");
    assert!(st.success(), "{} failed", script().display());
}

/// Signs `digest` keyless as `case` and pushes it into `repo` (extra: `--identity`,
/// `--tag-digest`).
fn sign(d: &Path, reg: &Registry, repo: &str, digest: &str, case: &str, extra: &[&str]) {
    let o = std::process::Command::new(PY)
        .arg(script())
        .args([
            "image",
            &d.display().to_string(),
            &reg.host,
            repo,
            digest,
            case,
        ])
        .args(extra)
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{case}: {}", text(&o));
}

/// `olmpack <cmd> IMAGE` keyless with `identity` and `issuer`: (exit code, stdout + stderr).
fn keyless(
    d: &Path,
    cmd: &str,
    image: &str,
    identity: &str,
    issuer: &str,
    extra: &[&str],
) -> (i32, String) {
    let mut args = vec![
        cmd,
        image,
        "--certificate-identity",
        identity,
        "--certificate-oidc-issuer",
        issuer,
        "--trusted-root",
        "trusted_root.json",
    ];
    args.extend_from_slice(extra);
    let o = out(&mut olmpack(d, &args));
    (code(&o), text(&o))
}

#[test]
fn verify_image_keyless_both_formats_and_each_tampering_is_refused() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    instance(d);
    let host = reg.host.clone();
    // One image per case (verify passes when any signature verifies); the same image in each
    // repository but `moved`, which holds another one.
    let cases: &[(&str, &str, &[&str])] = &[
        ("sig", "sig", &[]),
        ("expired", "sig-expired", &[]),
        ("setkey", "sig-set-key", &[]),
        (
            "otherrepo",
            "sig",
            &["--identity", "example.com/someone/else"],
        ),
        ("dsse", "bundle-dsse", &[]),
        ("msg", "bundle-msg", &[]),
    ];
    let mut digest = String::new();
    for (repo, case, extra) in cases {
        digest = push(&reg, d, repo, "v1", 1);
        sign(d, &reg, repo, &digest, case, extra);
    }
    // A signature moved beside another image: the `.sig` layer and the bundle referrer of
    // `digest` put at the other image's tag and as its referrer.
    let moved = push(&reg, d, "moved", "v1", 2);
    assert_ne!(moved, digest);
    sign(d, &reg, "moved", &digest, "sig", &["--tag-digest", &moved]);
    let moved_b = push(&reg, d, "movedbundle", "v1", 2);
    sign(
        d,
        &reg,
        "movedbundle",
        &digest,
        "bundle-dsse",
        &["--tag-digest", &moved_b],
    );
    let image = |repo: &str| reg.reference(repo, "v1");

    // Each format verifies, naming who signed, when, and the log entry.
    for (repo, source) in [
        (
            "sig",
            format!("{host}/sig:sha256-{}.sig layer 1", &digest[7..]),
        ),
        ("dsse", format!("{host}/dsse referrer sha256:")),
        ("msg", format!("{host}/msg referrer sha256:")),
    ] {
        let (c, t) = keyless(d, "verify", &image(repo), IDENTITY, ISSUER, &[]);
        assert_eq!(c, 0, "{repo}: {t}");
        assert!(
            t.contains(&format!("verified (keyless) {source}"))
                && t.contains(&format!(
                    "by {IDENTITY} (issuer {ISSUER}, Rekor log index 1002)"
                )),
            "{repo}: {t}"
        );
    }
    // The JSON output: the payload as verified and the certificate's signer.
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &image("sig"),
            "--certificate-identity",
            IDENTITY,
            "--certificate-oidc-issuer",
            ISSUER,
            "--trusted-root",
            "trusted_root.json",
            "-o",
            "json",
        ],
    ));
    assert_eq!(code(&o), 0, "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["verified"], true, "{j}");
    let s = &j["signatures"][0];
    assert_eq!(s["format"], "keyless", "{j}");
    assert_eq!(s["payload"]["signer"]["identities"][0], IDENTITY, "{j}");
    assert_eq!(s["payload"]["signer"]["issuer"], ISSUER, "{j}");
    assert_eq!(
        s["payload"]["payload"]["critical"]["image"]["docker-manifest-digest"],
        digest.as_str(),
        "{j}"
    );
    // Regexps as cosign reads them (unanchored Go RE2).
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &image("dsse"),
            "--certificate-identity-regexp",
            "^https://github\\.com/olmpack/",
            "--certificate-oidc-issuer-regexp",
            "githubusercontent",
            "--trusted-root",
            "trusted_root.json",
        ],
    ));
    assert_eq!(code(&o), 0, "{}", text(&o));

    // The tampering matrix: (repository, identity, issuer, what the refusal names).
    let other_issuer = "https://accounts.google.com";
    let matrix: &[(&str, &str, &str, &str)] = &[
        (
            "sig",
            "https://github.com/evil/x",
            ISSUER,
            "certificate identity: expected",
        ),
        (
            "dsse",
            "https://github.com/evil/x",
            ISSUER,
            "certificate identity: expected",
        ),
        (
            "sig",
            IDENTITY,
            other_issuer,
            "certificate OIDC issuer: expected",
        ),
        (
            "msg",
            IDENTITY,
            other_issuer,
            "certificate OIDC issuer: expected",
        ),
        (
            "expired",
            IDENTITY,
            ISSUER,
            "certificate validity: the certificate was valid from",
        ),
        (
            "setkey",
            IDENTITY,
            ISSUER,
            "signed entry timestamp (SET): the signed entry timestamp does not verify",
        ),
        (
            "moved",
            IDENTITY,
            ISSUER,
            &format!("digest mismatch: the payload signs {digest}, the image is {moved}"),
        ),
        (
            "movedbundle",
            IDENTITY,
            ISSUER,
            "artifact: no subject of the in-toto statement has the digest",
        ),
        ("otherrepo", IDENTITY, ISSUER, "identity mismatch:"),
    ];
    for (repo, identity, issuer, reason) in matrix {
        let (c, t) = keyless(d, "verify", &image(repo), identity, issuer, &[]);
        assert_eq!(c, 1, "{repo} accepted: {t}");
        assert!(
            t.contains("refused (keyless)") && t.contains(reason),
            "{repo}: expected a refusal naming {reason:?}, got {t}"
        );
        assert!(t.contains("no signature of sha256:"), "{repo}: {t}");
    }
}

#[test]
fn verify_image_keyless_fails_closed_without_a_keyless_signature() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    instance(d);
    // Nothing attached at all.
    push(&reg, d, "bare", "v1", 1);
    let (c, t) = keyless(
        d,
        "verify",
        &reg.reference("bare", "v1"),
        IDENTITY,
        ISSUER,
        &[],
    );
    assert_eq!(c, 1, "{t}");
    assert!(t.contains("no signature found for sha256:"), "{t}");
    // Signed with a key in both formats: keyless finds both and passes neither, saying why.
    push(&reg, d, "keyed", "v1", 1);
    let o = out(&mut olmpack(
        d,
        &["key", "generate", "--output-key-prefix", "k"],
    ));
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = out(&mut olmpack(
        d,
        &["sign", &reg.reference("keyed", "v1"), "--key", "k.key"],
    ));
    assert_eq!(code(&o), 0, "{}", text(&o));
    let (c, t) = keyless(
        d,
        "verify",
        &reg.reference("keyed", "v1"),
        IDENTITY,
        ISSUER,
        &[],
    );
    assert_eq!(c, 1, "{t}");
    assert!(
        t.contains("it was signed with a key, not keyless; verify it with --key"),
        "{t}"
    );
    assert!(
        t.contains("the bundle has no certificate; verify a key-signed bundle with --key"),
        "{t}"
    );
    // An attestation whose referrer does not announce it is still not a signature.
    let digest = push(&reg, d, "unannounced", "v1", 1);
    sign(
        d,
        &reg,
        "unannounced",
        &digest,
        "attest",
        &["--no-announce", "1"],
    );
    let (c, t) = keyless(
        d,
        "verify",
        &reg.reference("unannounced", "v1"),
        IDENTITY,
        ISSUER,
        &[],
    );
    assert_eq!(c, 1, "{t}");
    assert!(
        t.contains("is an attestation of type \"https://slsa.dev/provenance/v1\", not cosign's signing statement"),
        "{t}"
    );
    // The same image under the public-good root (no --trusted-root): the key path still works
    // and keyless still refuses.
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("keyed", "v1"),
            "--certificate-identity",
            IDENTITY,
            "--certificate-oidc-issuer",
            ISSUER,
        ],
    ));
    assert_eq!(code(&o), 1, "{}", text(&o));
    // A key and keyless flags together are refused (cosign would ignore the flags silently).
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("keyed", "v1"),
            "--key",
            "k.pub",
            "--certificate-oidc-issuer",
            ISSUER,
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("not both"), "{}", text(&o));
    // Keyless flags without an issuer: a usage error naming the flag.
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("keyed", "v1"),
            "--certificate-identity",
            IDENTITY,
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("--certificate-oidc-issuer"),
        "{}",
        text(&o)
    );
    // A mistyped trusted root names the file.
    let o = out(&mut olmpack(
        d,
        &[
            "verify",
            &reg.reference("keyed", "v1"),
            "--certificate-identity",
            IDENTITY,
            "--certificate-oidc-issuer",
            ISSUER,
            "--trusted-root",
            "trusted_roots.json",
        ],
    ));
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("trusted_roots.json"), "{}", text(&o));
}

#[test]
fn verify_attestation_keyless_dsse_and_intoto_entries() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    instance(d);
    let digest = push(&reg, d, "att", "v1", 1);
    sign(d, &reg, "att", &digest, "attest", &[]);
    push(&reg, d, "attintoto", "v1", 1);
    sign(d, &reg, "attintoto", &digest, "attest-intoto", &[]);
    for repo in ["att", "attintoto"] {
        let image = reg.reference(repo, "v1");
        let (c, t) = keyless(
            d,
            "verify-attestation",
            &image,
            IDENTITY,
            ISSUER,
            &["--type", "slsaprovenance1"],
        );
        assert_eq!(c, 0, "{repo}: {t}");
        assert!(
            t.contains("verified (bundle)") && t.contains("https://slsa.dev/provenance/v1"),
            "{repo}: {t}"
        );
        assert!(t.contains("urn:olmpack:test-builder"), "{repo}: {t}");
        // Another identity, another type: refused, each naming why.
        let (c, t) = keyless(
            d,
            "verify-attestation",
            &image,
            "https://github.com/evil/x",
            ISSUER,
            &[],
        );
        assert_eq!(c, 1, "{repo}: {t}");
        assert!(t.contains("certificate identity: expected"), "{repo}: {t}");
        let (c, t) = keyless(
            d,
            "verify-attestation",
            &image,
            IDENTITY,
            ISSUER,
            &["--type", "spdxjson"],
        );
        assert_eq!(c, 1, "{repo}: {t}");
        assert!(
            t.contains("predicate type: the statement is"),
            "{repo}: {t}"
        );
        // An attestation is not a signature: verify finds none.
        let (c, t) = keyless(d, "verify", &image, IDENTITY, ISSUER, &[]);
        assert_eq!(c, 1, "{repo}: {t}");
        assert!(t.contains("no signature found"), "{repo}: {t}");
    }
}

/// sigstore-python on the image bundles (offline, the same trusted root): it verifies what
/// olmpack verifies, for the image digest, and refuses them for another digest.
#[test]
fn sigstore_python_verifies_the_image_bundles() {
    let Some(python) = sigstore_python() else {
        return;
    };
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    instance(d);
    let digest = push(&reg, d, "py", "v1", 1);
    let other = push(&reg, d, "pyother", "v1", 2);
    let run = |bundle: &str, input: &str| {
        python_verify(&python, d, true, bundle, IDENTITY, ISSUER, input)
    };
    for case in ["bundle-dsse", "bundle-msg", "attest"] {
        sign(d, &reg, "py", &digest, case, &[]);
        let bundle = format!("{case}.sigstore.json");
        let o = run(&bundle, &digest);
        assert!(
            o.status.success(),
            "sigstore-python refused {case}: {}",
            text(&o)
        );
        let o = run(&bundle, &other);
        assert!(
            !o.status.success(),
            "sigstore-python accepted {case} for another digest"
        );
    }
    // And olmpack verifies the same bytes from the registry.
    let (c, t) = keyless(
        d,
        "verify",
        &reg.reference("py", "v1"),
        IDENTITY,
        ISSUER,
        &[],
    );
    assert_eq!(c, 0, "{t}");
    let (c, t) = keyless(
        d,
        "verify-attestation",
        &reg.reference("py", "v1"),
        IDENTITY,
        ISSUER,
        &[],
    );
    assert_eq!(c, 0, "{t}");
}
