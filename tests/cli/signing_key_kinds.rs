//! `sign --key` with cosign key files of every kind cosign signs with (issue 39 item 12): ECDSA
//! P-256, P-384 and P-521, Ed25519 and RSA private keys in cosign's encrypted format (written
//! here by the independent Python implementation, as `cosign import-key-pair` writes them).
//! Each signature olmpack makes is checked by Python's `cryptography` (SHA-256, as
//! containers/image and cosign 2 verify) and by `olmpack verify`; every other kind's public key
//! is refused with a message naming both kinds.

use crate::signing::{code, ok, olmpack, out, push, py, text};
use crate::support::registry::{Mode, Registry};

const KINDS: [(&str, &str); 5] = [
    ("p256", "ECDSA P-256"),
    ("p384", "ECDSA P-384"),
    ("p521", "ECDSA P-521"),
    ("ed25519", "Ed25519"),
    ("rsa", "RSA"),
];

#[test]
fn every_key_kind_signs_what_python_and_olmpack_verify() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let mut failures = Vec::new();
    for (kind, _) in KINDS {
        ok(py(&["genkey", kind, kind]).current_dir(d));
    }
    for (i, (kind, name)) in KINDS.iter().enumerate() {
        let repo = format!("kind-{kind}");
        let digest = push(&reg, d, &repo, "v1", i + 10);
        let image = reg.reference(&repo, "v1");
        let key = format!("{kind}.key");
        let signed = out(&mut olmpack(
            d,
            &["sign", &image, "--key", &key, "--format", "legacy"],
        ));
        if !signed.status.success() {
            failures.push(format!("sign with a {name} key: {}", text(&signed)));
            continue;
        }
        let pubkey = format!("{kind}.pub");
        let n = out(py(&["verify", &reg.host, &repo, &digest, &pubkey]).current_dir(d));
        if String::from_utf8_lossy(&n.stdout).trim() != "1" {
            failures.push(format!(
                "Python does not verify olmpack's {name} signature: {}",
                text(&n)
            ));
        }
        let v = out(&mut olmpack(d, &["verify", &image, "--key", &pubkey]));
        if !v.status.success() || !text(&v).contains(&digest) {
            failures.push(format!(
                "olmpack verify of its own {name} signature: {}",
                text(&v)
            ));
        }
        // A public key of another kind: refused (exit 1), naming the key's kind and the form
        // the signature has.
        for (other, other_name) in KINDS.iter().filter(|(k, _)| k != kind) {
            let wrong = out(&mut olmpack(
                d,
                &["verify", &image, "--key", &format!("{other}.pub")],
            ));
            let t = text(&wrong);
            if code(&wrong) != 1 || !t.contains(other_name) || !t.contains("it looks like") {
                failures.push(format!(
                    "a {name} signature checked with a {other_name} key: exit {}: {t}",
                    code(&wrong)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
