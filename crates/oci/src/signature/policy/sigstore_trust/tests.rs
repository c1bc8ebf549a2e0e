//! containers/image's own cases for `sigstoreSigned` with Rekor, Fulcio and PKI, on its own
//! fixtures (cosign-made signatures, copied from `signature/fixtures/` of containers/image
//! into `testdata/containers-image/`): ported from `policy_eval_sigstore_test.go`
//! (`TestPRrSigstoreSignedIsSignatureAccepted`: key+Rekor, Fulcio+Rekor and PKI, accepted and
//! each rejected variant; `TestPRSigstoreSignedPrepareTrustRoot`: the Rekor key that is not
//! ECDSA, a CA file that holds no certificate, a missing file).

use super::*;
use crate::signature::identity::IdentityRule;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/src/signature/policy/testdata/containers-image"
);

/// `sigstoreSignatureFromFile`: the payload and annotations of a fixture signature.
fn sig(dir: &str) -> (Vec<u8>, serde_json::Map<String, serde_json::Value>) {
    let raw = std::fs::read(format!("{DIR}/{dir}/signature-1")).unwrap();
    let json = raw.strip_prefix(b"\x00sigstore-json\n").unwrap();
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let payload =
        crate::signature::sigstore::bundle::decode_b64(v["payload"].as_str().unwrap()).unwrap();
    (payload, v["annotations"].as_object().unwrap().clone())
}

fn digest_of(dir: &str) -> String {
    crate::signature::sha256_digest(&std::fs::read(format!("{DIR}/{dir}/manifest.json")).unwrap())
}

fn read(k: &Keys) -> Result<Vec<(String, Vec<u8>)>, String> {
    match k {
        Keys::Paths(ps) => ps
            .iter()
            .map(|p| {
                let path = format!("{DIR}/{p}");
                std::fs::read(&path)
                    .map(|b| (path.clone(), b))
                    .map_err(|e| format!("{path}: {e}"))
            })
            .collect(),
        Keys::Data(ds) => Ok(ds.iter().map(|d| ("data".to_string(), d.clone())).collect()),
    }
}

fn paths(ps: &[&str]) -> Keys {
    Keys::Paths(ps.iter().map(|p| p.to_string()).collect())
}

fn prepare(signer: Signer, rekor: Option<Keys>) -> Result<Prepared, String> {
    let t = SigstoreTrust {
        signer,
        rekor_keys: rekor,
        identity: super::super::config::IdentitySpec::MatchRepository,
    };
    Prepared::new(&t, &read)
}

fn fulcio(email: &str) -> Signer {
    Signer::Fulcio {
        ca: paths(&["fulcio_v1.crt.pem"]),
        oidc_issuer: "https://github.com/login/oauth".into(),
        subject_email: email.into(),
    }
}

fn pki(email: Option<&str>, host: Option<&str>) -> Signer {
    Signer::Pki {
        roots: paths(&["pki_root_crts.pem"]),
        intermediates: Some(paths(&["pki_intermediate_crts.pem"])),
        subject_email: email.map(str::to_string),
        subject_hostname: host.map(str::to_string),
    }
}

/// Checks the fixture `dir` under `p` as the image `name` with `matchRepository`.
fn check(
    p: &Prepared,
    dir: &str,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> Result<serde_json::Value, Rejection> {
    let (payload, mut ann) = sig(dir);
    edit(&mut ann);
    let rule = IdentityRule::MatchRepository(format!("{name}:latest"));
    let expected = Expected {
        rule: &rule,
        accept_unnamed: false,
    };
    check_layer(p, &payload, &ann, &digest_of(dir), &expected)
}

const KEY_REKOR: (&str, &str) = (
    "dir-img-cosign-key-rekor-valid",
    "192.168.64.2:5000/cosign-signed/key-1",
);
const FULCIO: (&str, &str) = (
    "dir-img-cosign-fulcio-rekor-valid",
    "192.168.64.2:5000/cosign-signed/fulcio-rekor-1",
);
const PKI: (&str, &str) = ("dir-img-cosign-pki-valid", "localhost:5000/test");
const KEY: (&str, &str) = (
    "dir-img-cosign-valid",
    "192.168.64.2:5000/cosign-signed-single-sample",
);

fn none(_: &mut serde_json::Map<String, serde_json::Value>) {}

fn without(k: &'static str) -> impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) {
    move |a| {
        a.remove(k);
    }
}

fn with(
    k: &'static str,
    v: String,
) -> impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) {
    move |a| {
        a.insert(k.into(), v.into());
    }
}

#[test]
fn key_and_rekor_as_containers_image() {
    for keys in [
        &["cosign2.pub"][..],
        &["cosign2.pub", "cosign.pub"],
        &["cosign.pub", "cosign2.pub"],
    ] {
        for rekor in [
            &["rekor.pub"][..],
            &["rekor.pub", "cosign.pub"],
            &["cosign.pub", "rekor.pub"],
        ] {
            let p = prepare(Signer::Keys(paths(keys)), Some(paths(rekor))).unwrap();
            check(&p, KEY_REKOR.0, KEY_REKOR.1, none)
                .unwrap_or_else(|e| panic!("{keys:?} {rekor:?}: {e}"));
        }
        // Not rekor.pub: a key mismatch.
        let p = prepare(Signer::Keys(paths(keys)), Some(paths(&["cosign.pub"]))).unwrap();
        let e = check(&p, KEY_REKOR.0, KEY_REKOR.1, none).unwrap_err();
        assert!(e.to_string().contains("Rekor SET"), "{e}");
    }
    let p = prepare(
        Signer::Keys(paths(&["cosign2.pub"])),
        Some(paths(&["rekor.pub"])),
    )
    .unwrap();
    let e = check(&p, KEY_REKOR.0, KEY_REKOR.1, without(SET_ANNOTATION)).unwrap_err();
    assert!(
        e.to_string().contains("missing dev.sigstore.cosign/bundle"),
        "{e}"
    );
    assert!(
        check(
            &p,
            KEY_REKOR.0,
            KEY_REKOR.1,
            with(SET_ANNOTATION, "this is not a valid SET".into())
        )
        .is_err()
    );
    // A valid SET for one accepted key, on a signature by another accepted key.
    let p = prepare(
        Signer::Keys(paths(&["cosign.pub", "cosign2.pub"])),
        Some(paths(&["rekor.pub"])),
    )
    .unwrap();
    let set = sig(KEY_REKOR.0).1[SET_ANNOTATION]
        .as_str()
        .unwrap()
        .to_string();
    let e = check(&p, KEY.0, KEY.1, with(SET_ANNOTATION, set)).unwrap_err();
    assert!(e.to_string().contains("does not match"), "{e}");
}

#[test]
fn fulcio_and_rekor_as_containers_image() {
    for rekor in [
        &["rekor.pub"][..],
        &["rekor.pub", "cosign.pub"],
        &["cosign.pub", "rekor.pub"],
    ] {
        let p = prepare(fulcio("mitr@redhat.com"), Some(paths(rekor))).unwrap();
        check(&p, FULCIO.0, FULCIO.1, none).unwrap_or_else(|e| panic!("{rekor:?}: {e}"));
    }
    // Fulcio without Rekor is refused when prepared (and at load, by the config reader).
    assert!(prepare(fulcio("mitr@redhat.com"), None).is_err());
    let p = prepare(fulcio("mitr@redhat.com"), Some(paths(&["rekor.pub"]))).unwrap();
    for k in [SET_ANNOTATION, CERTIFICATE_ANNOTATION] {
        let e = check(&p, FULCIO.0, FULCIO.1, without(k)).unwrap_err();
        assert!(e.to_string().contains(k), "{k}: {e}");
    }
    // Without the chain there is no path to the trusted CA ...
    let e = check(&p, FULCIO.0, FULCIO.1, without(CHAIN_ANNOTATION)).unwrap_err();
    assert!(
        e.to_string()
            .contains("verifying the leaf certificate failed"),
        "{e}"
    );
    // ... unless the issuer itself is trusted.
    let chain = sig(FULCIO.0).1[CHAIN_ANNOTATION]
        .as_str()
        .unwrap()
        .as_bytes()
        .to_vec();
    let direct = Signer::Fulcio {
        ca: Keys::Data(vec![chain]),
        oidc_issuer: "https://github.com/login/oauth".into(),
        subject_email: "mitr@redhat.com".into(),
    };
    let p2 = prepare(direct, Some(paths(&["rekor.pub"]))).unwrap();
    check(&p2, FULCIO.0, FULCIO.1, without(CHAIN_ANNOTATION)).unwrap();
    let e = check(
        &p,
        FULCIO.0,
        FULCIO.1,
        with(
            CERTIFICATE_ANNOTATION,
            "this is not a valid certificate".into(),
        ),
    )
    .unwrap_err();
    assert!(e.to_string().contains("PEM"), "{e}");
    let wrong = prepare(
        fulcio("this-does-not-match@example.com"),
        Some(paths(&["rekor.pub"])),
    )
    .unwrap();
    let e = check(&wrong, FULCIO.0, FULCIO.1, none).unwrap_err();
    assert!(e.to_string().contains("required email"), "{e}");
    let issuer = Signer::Fulcio {
        ca: paths(&["fulcio_v1.crt.pem"]),
        oidc_issuer: "https://accounts.google.com".into(),
        subject_email: "mitr@redhat.com".into(),
    };
    let wrong = prepare(issuer, Some(paths(&["rekor.pub"]))).unwrap();
    let e = check(&wrong, FULCIO.0, FULCIO.1, none).unwrap_err();
    assert!(e.to_string().contains("OIDC issuer"), "{e}");
    assert!(
        check(
            &p,
            FULCIO.0,
            FULCIO.1,
            with(SET_ANNOTATION, "this is not a valid SET".into())
        )
        .is_err()
    );
    let other = prepare(fulcio("mitr@redhat.com"), Some(paths(&["cosign.pub"]))).unwrap();
    let e = check(&other, FULCIO.0, FULCIO.1, none).unwrap_err();
    assert!(e.to_string().contains("Rekor SET"), "{e}");
    // A CA from elsewhere (the PKI fixtures' root) does not vouch for the certificate.
    let elsewhere = Signer::Fulcio {
        ca: paths(&["pki_root_crts.pem"]),
        oidc_issuer: "https://github.com/login/oauth".into(),
        subject_email: "mitr@redhat.com".into(),
    };
    let p3 = prepare(elsewhere, Some(paths(&["rekor.pub"]))).unwrap();
    assert!(check(&p3, FULCIO.0, FULCIO.1, none).is_err());
}

#[test]
fn pki_as_containers_image() {
    let p = prepare(
        pki(Some("qiwan@redhat.com"), Some("myhost.example.com")),
        None,
    )
    .unwrap();
    check(&p, PKI.0, PKI.1, none).unwrap();
    let e = check(&p, PKI.0, PKI.1, without(CERTIFICATE_ANNOTATION)).unwrap_err();
    assert!(e.to_string().contains(CERTIFICATE_ANNOTATION), "{e}");
    for (email, host, word) in [
        (Some("other@redhat.com"), None, "required email"),
        (None, Some("otherhost.example.com"), "hostname"),
        (None, Some("example.com"), "hostname"),
    ] {
        let p = prepare(pki(email, host), None).unwrap();
        let e = check(&p, PKI.0, PKI.1, none).unwrap_err();
        assert!(e.to_string().contains(word), "{email:?} {host:?}: {e}");
    }
    let p = prepare(pki(None, Some("MyHost.Example.com")), None).unwrap();
    check(&p, PKI.0, PKI.1, none).unwrap();
    // Without the policy's intermediates the signature's chain must supply them.
    let roots_only = Signer::Pki {
        roots: paths(&["pki_root_crts.pem"]),
        intermediates: None,
        subject_email: Some("qiwan@redhat.com".into()),
        subject_hostname: None,
    };
    let p = prepare(roots_only, None).unwrap();
    check(&p, PKI.0, PKI.1, none).unwrap();
    // Roots from another CA refuse it.
    let other = Signer::Pki {
        roots: paths(&["fulcio_v1.crt.pem"]),
        intermediates: None,
        subject_email: Some("qiwan@redhat.com".into()),
        subject_hostname: None,
    };
    let p = prepare(other, None).unwrap();
    assert!(check(&p, PKI.0, PKI.1, none).is_err());
}

#[test]
fn what_cannot_be_prepared_refuses_the_requirement() {
    let e = prepare(
        Signer::Keys(paths(&["cosign.pub"])),
        Some(paths(&["some-rsa-key.pub"])),
    )
    .unwrap_err();
    assert!(e.contains("not using ECDSA"), "{e}");
    let e = prepare(
        Signer::Fulcio {
            ca: paths(&["cosign.pub"]),
            oidc_issuer: "https://x".into(),
            subject_email: "a@b".into(),
        },
        Some(paths(&["rekor.pub"])),
    )
    .unwrap_err();
    assert!(e.contains("Fulcio CA"), "{e}");
    let e = prepare(pki(Some("a@b"), None), Some(paths(&["does-not-exist"]))).unwrap_err();
    assert!(e.contains("does-not-exist"), "{e}");
}
