//! Issue 41 item 9: messages that say what was given and what to do. A catalog folder given to
//! `bundle render` or `bundle validate`, a bundle folder given to `catalog build`, a wrong GPG
//! passphrase, and a tampered GPG signature (GnuPG itself is the reference: "BAD signature").

use crate::support::cmd::olmpack;
use crate::support::fixtures::repo_root;
use crate::support::gpg::GpgHome;
use crate::support::proc::Bounded;
use crate::support::shared::tool;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str], dir: &Path) -> (i32, String) {
    let o = olmpack()
        .args(args)
        .current_dir(dir)
        .bounded_output()
        .expect("run olmpack");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

#[test]
fn bundle_render_of_a_catalog_folder_suggests_package() {
    let catalog = repo_root().join("testdata/catalogs/valid-basic");
    let c = catalog.to_str().expect("utf8");
    let (code, text) = run(
        &["bundle", "render", "--install-namespace", "ns", c],
        &repo_root(),
    );
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("is a file-based catalog folder, not a bundle folder")
            && text.contains("--package foo")
            && !text.contains("open metadata/annotations.yaml"),
        "{text}"
    );
    // The suggestion works as written.
    let (code, text) = run(
        &[
            "bundle",
            "render",
            "--install-namespace",
            "ns",
            c,
            "--package",
            "foo",
        ],
        &repo_root(),
    );
    assert!(
        code == 0 || !text.contains("not a bundle folder"),
        "{code}: {text}"
    );
}

#[test]
fn bundle_validate_of_a_catalog_folder_names_the_kind() {
    let catalog = repo_root().join("testdata/catalogs/valid-basic");
    let (code, text) = run(
        &["bundle", "validate", catalog.to_str().expect("utf8")],
        &repo_root(),
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("is a file-based catalog folder, not a bundle folder")
            && text.contains("olmpack catalog validate"),
        "{text}"
    );
    // Not the two "no manifests/, no metadata/" errors that sent users after the wrong fix.
    assert!(!text.contains("format/manifests-missing"), "{text}");
    // A half-made bundle (manifests/ only) keeps its format findings.
    let tmp = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(tmp.path().join("b/manifests")).expect("mkdir");
    let (_, text) = run(&["bundle", "validate", "b"], tmp.path());
    assert!(text.contains("format/metadata-missing"), "{text}");
}

#[test]
fn catalog_build_of_a_bundle_folder_names_the_kind_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bundle = repo_root().join("testdata/bundles/valid-basic");
    let out = tmp.path().join("img");
    let (code, text) = run(
        &[
            "catalog",
            "build",
            bundle.to_str().expect("utf8"),
            "--output",
            &format!("oci:{}", out.display()),
        ],
        tmp.path(),
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("is a bundle folder, not a catalog")
            && text.contains("olmpack bundle validate")
            && text.contains("catalog add"),
        "{text}"
    );
    assert!(!text.contains("missing root schema field"), "{text}");
    assert!(!out.exists());
}

/// A throwaway GnuPG home holding one ed25519 key protected by `passphrase`.
struct Gpg {
    home: GpgHome,
}

impl Gpg {
    fn new(passphrase: &str) -> Gpg {
        let gpg = Gpg {
            home: GpgHome::new(),
        };
        let o = gpg.cmd(&[
            "--passphrase",
            passphrase,
            "--pinentry-mode",
            "loopback",
            "--quick-gen-key",
            "Signer <signer@example.invalid>",
            "ed25519",
            "sign",
            "never",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        gpg
    }

    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("gpg")
            .env("GNUPGHOME", self.home.path())
            .args(["--batch", "--quiet"])
            .args(args)
            .output_within(crate::support::proc::SHORT)
            .expect("gpg")
    }
}

/// A layout image, a passphrase-protected key, and a registries.d with a file lookaside store.
fn signing_setup(d: &Path, passphrase: &str) -> Gpg {
    let gpg = Gpg::new(passphrase);
    let secret = gpg.cmd(&[
        "--pinentry-mode",
        "loopback",
        "--passphrase",
        passphrase,
        "--armor",
        "--export-secret-keys",
    ]);
    std::fs::write(d.join("sec.asc"), &secret.stdout).expect("write");
    std::fs::write(d.join("pub.gpg"), gpg.cmd(&["--export"]).stdout).expect("write");
    std::fs::write(d.join("right.txt"), format!("{passphrase}\n")).expect("write");
    std::fs::write(d.join("wrong.txt"), "not-the-passphrase\n").expect("write");
    std::fs::create_dir_all(d.join("rd")).expect("mkdir");
    std::fs::write(
        d.join("rd/default.yaml"),
        format!(
            "default-docker:\n  lookaside: file://{0}\n  lookaside-staging: file://{0}\n",
            d.join("store").display()
        ),
    )
    .expect("write");
    let (code, text) = run(
        &[
            "bundle",
            "build",
            repo_root()
                .join("testdata/bundles/valid-basic")
                .to_str()
                .expect("utf8"),
            "--output",
            "oci:layout:v1",
        ],
        d,
    );
    assert_eq!(code, 0, "{text}");
    gpg
}

const SIGN: &[&str] = &[
    "sign",
    "oci:layout:v1",
    "--gpg-key",
    "sec.asc",
    "--identity",
    "quay.io/example/op:v1",
    "--registries-d",
    "rd",
];

/// `SIGN` with `--passphrase-file FILE`, run in `d`.
fn sign_with_passphrase_file(file: &str, d: &Path) -> (i32, String) {
    let args: Vec<&str> = SIGN
        .iter()
        .copied()
        .chain(["--passphrase-file", file])
        .collect();
    run(&args, d)
}

#[test]
fn a_wrong_gpg_passphrase_is_named_as_such() {
    if !tool("gpg", "gnupg") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let _gpg = signing_setup(d, "right-passphrase");
    let (code, text) = sign_with_passphrase_file("wrong.txt", d);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("sec.asc: cannot unlock the secret key: wrong passphrase")
            && !text.contains("invalid input"),
        "{text}"
    );
    assert!(
        !text.contains("not-the-passphrase"),
        "the passphrase is never printed"
    );
    assert!(!d.join("store").exists(), "nothing signed");
    // No passphrase at all for a protected key: say where it comes from.
    let (code, text) = run(SIGN, d);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--passphrase-file"), "{text}");
    // The right one signs.
    let (code, text) = sign_with_passphrase_file("right.txt", d);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_tampered_gpg_signature_is_not_called_a_wrong_key() {
    if !tool("gpg", "gnupg") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let gpg = signing_setup(d, "pass");
    let (code, text) = sign_with_passphrase_file("right.txt", d);
    assert_eq!(code, 0, "{text}");
    let sig = walk(&d.join("store"))
        .into_iter()
        .find(|p| p.ends_with("signature-1"))
        .expect("signature-1 in the lookaside store");
    let verify = [
        "verify",
        "oci:layout:v1",
        "--gpg-keyring",
        "pub.gpg",
        "--identity",
        "quay.io/example/op:v1",
        "--registries-d",
        "rd",
    ];
    let (code, text) = run(&verify, d);
    assert_eq!(code, 0, "{text}");
    // One byte of the signed payload changed.
    let mut bytes = std::fs::read(&sig).expect("read");
    let at = bytes
        .windows(7)
        .position(|w| w == b"olmpack")
        .expect("payload text in the message");
    bytes[at] = b'X';
    std::fs::write(&sig, &bytes).expect("write");
    // GnuPG, the reference, calls it a bad signature by that key.
    let reference = gpg.cmd(&["--verify", sig.to_str().expect("utf8")]);
    let theirs = String::from_utf8_lossy(&reference.stderr);
    assert!(theirs.contains("BAD signature"), "{theirs}");
    let (code, text) = run(&verify, d);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("altered after signing") && !text.contains("wrong key"),
        "{text}"
    );
    // A signature by another key is still a wrong key.
    let other = Gpg::new("");
    let payload = d.join("payload.json");
    std::fs::write(&payload, b"{}").expect("write");
    let o = other.cmd(&[
        "--yes",
        "--output",
        sig.to_str().expect("utf8"),
        "--sign",
        payload.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, text) = run(&verify, d);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("wrong key"), "{text}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
