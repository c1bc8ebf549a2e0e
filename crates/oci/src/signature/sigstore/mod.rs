//! Sigstore bundles verified offline, with a key or keyless: what cosign `verify-blob
//! --bundle` and sigstore-python `verify` check, against a `trusted_root.json` given as a file
//! (or the public-good one carried in the binary), never the network.
//!
//! Keyless: the signing certificate must chain to a Fulcio CA of the trusted root
//! ([`cert::verify_chain`]), name the identity and OIDC issuer asked for (matched as cosign
//! matches them), carry an SCT from a trusted CT log ([`cert::verify_sct`]) and be valid at the
//! signing time, which is the time the Rekor log vouches for. The Rekor entry must describe
//! this signature ([`tlog::check_body`]) and be proven logged: its inclusion proof up to a
//! checkpoint the log signed, and its signed entry timestamp when it has one
//! ([`tlog::check_inclusion`], [`tlog::check_set`]). Each failure is one [`Refusal`] naming
//! the check.
//!
//! The signing time comes from at least one verified source: the Rekor v1 entry's signed entry
//! timestamp (its integrated time), and/or RFC 3161 timestamps from a timestamp authority of
//! the trusted root ([`timestamp::verify_all`]). A Rekor v2 entry (`hashedrekord`/`dsse`
//! 0.0.2) has no signed entry timestamp, so it needs a timestamp, as sigstore-go and
//! sigstore-python require. The certificate must chain, and be valid, at every verified time.

pub mod bundle;
pub mod cert;
pub mod crypto;
pub mod matcher;
pub mod rekor_set;
pub mod timestamp;
pub mod tlog;
pub mod trust;
pub mod x509_verify;

use crate::signature::public_key::PublicKey;
use bundle::Bundle;
pub use matcher::Matcher;
use sha2::Digest as _;
use trust::TrustedRoot;

/// Why a bundle was refused: one variant per check, so a user (and a test) sees which failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The bundle cannot be read as a Sigstore bundle.
    #[error("malformed bundle: {0}")]
    Malformed(String),
    /// The bundle uses something olmpack does not check (it refuses rather than skip it).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The certificate does not chain to a Fulcio CA of the trusted root.
    #[error("certificate chain: {0}")]
    CertificateChain(String),
    /// The certificate (or its CA) was not valid at the signing time.
    #[error("certificate validity: {0}")]
    CertificateTime(String),
    /// The certificate is not a code-signing leaf.
    #[error("certificate usage: {0}")]
    CertificateUsage(String),
    /// The certificate names other identities than the one asked for.
    #[error("certificate identity: expected {expected}, the certificate names {found}")]
    IdentityMismatch {
        /// `--certificate-identity[-regexp]`.
        expected: String,
        /// The subject alternative names of the certificate.
        found: String,
    },
    /// The certificate names another OIDC issuer.
    #[error("certificate OIDC issuer: expected {expected}, the certificate names {found}")]
    IssuerMismatch {
        /// `--certificate-oidc-issuer[-regexp]`.
        expected: String,
        /// The issuer extension's value.
        found: String,
    },
    /// No valid SCT from a trusted CT log.
    #[error("certificate transparency (SCT): {0}")]
    Sct(String),
    /// The signature does not verify over the artifact (or the DSSE envelope).
    #[error("signature: {0}")]
    Signature(String),
    /// The bundle signs another artifact than the one given.
    #[error("artifact: {0}")]
    ArtifactMismatch(String),
    /// The bundle has no transparency-log entry, or none from a trusted log.
    #[error("transparency log: {0}")]
    TlogUnknown(String),
    /// The Rekor entry describes another signature, key or artifact.
    #[error("transparency log entry: {0}")]
    TlogEntryMismatch(String),
    /// The signed entry timestamp does not verify.
    #[error("signed entry timestamp (SET): {0}")]
    SignedEntryTimestamp(String),
    /// The inclusion proof does not lead to its root.
    #[error("inclusion proof: {0}")]
    InclusionProof(String),
    /// The checkpoint is not the log's, or not for the proof's tree.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// No trustworthy signing time (or one in the future).
    #[error("signing time: {0}")]
    Time(String),
    /// An RFC 3161 timestamp does not verify against the trusted root's authorities.
    #[error("RFC 3161 timestamp: {0}")]
    Timestamp(String),
}

/// What vouches for the signer.
#[derive(Debug, Clone)]
pub enum Signer {
    /// A Fulcio certificate for this identity from this issuer.
    Keyless {
        /// The certificate's subject alternative name.
        identity: Matcher,
        /// The certificate's OIDC issuer extension.
        issuer: Matcher,
    },
    /// A key the user gives (the bundle's certificate, if any, is not trusted).
    Key(PublicKey),
}

/// What was signed: the artifact's SHA-256 (a file is hashed by the caller; a `sha256:`
/// digest is taken as is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Artifact {
    /// SHA-256 of the artifact.
    pub sha256: [u8; 32],
}

impl Artifact {
    /// The artifact of these bytes.
    pub fn of_bytes(b: &[u8]) -> Artifact {
        Artifact {
            sha256: sha2::Sha256::digest(b).into(),
        }
    }

    /// The artifact read from `r` (a file of any size, streamed).
    pub fn of_reader(mut r: impl std::io::Read) -> std::io::Result<Artifact> {
        let mut h = sha2::Sha256::new();
        std::io::copy(&mut r, &mut h)?;
        Ok(Artifact {
            sha256: h.finalize().into(),
        })
    }
}

/// What a verified bundle vouched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The signing time (Unix seconds): the time the Rekor v1 log vouches for, else the
    /// earliest RFC 3161 timestamp.
    pub signing_time: i64,
    /// The times of the bundle's verified RFC 3161 timestamps (Unix seconds), for reports.
    pub timestamps: Vec<i64>,
    /// The certificate's identities (keyless).
    pub identities: Vec<String>,
    /// The certificate's OIDC issuer (keyless).
    pub issuer: Option<String>,
    /// The Rekor log index.
    pub log_index: i64,
    /// The in-toto statement of a DSSE bundle.
    pub statement: Option<serde_json::Value>,
}

/// How far in the future a log's time may be before it is refused (clock skew).
const SKEW: i64 = 60;

/// Verifies `bundle` for `artifact` with `signer` against `root`, at the wall-clock time `now`
/// (Unix seconds).
pub fn verify(
    bundle: &Bundle,
    artifact: &Artifact,
    signer: &Signer,
    root: &TrustedRoot,
    now: i64,
) -> Result<Verified, Refusal> {
    let minor = bundle.minor_version().ok_or_else(|| {
        Refusal::Unsupported(format!(
            "bundle media type {:?} is none of the versions 0.1 to 0.3",
            bundle.media_type
        ))
    })?;
    let vm = &bundle.verification_material;
    // What signed: the certificate (keyless) or the key given.
    let certificate = match (&vm.certificate, &vm.x509_certificate_chain) {
        (Some(c), _) => Some(c.raw_bytes.0.clone()),
        (None, Some(chain)) => {
            let first = chain
                .certificates
                .first()
                .ok_or_else(|| Refusal::Malformed("the certificate chain is empty".into()))?;
            for c in &chain.certificates {
                let parsed = cert::Cert::from_der(&c.raw_bytes.0)
                    .map_err(|e| Refusal::Malformed(format!("certificate chain: {e}")))?;
                if parsed.signed_by(&parsed) {
                    return Err(Refusal::CertificateChain(
                        "the bundle's chain holds a root certificate; roots come only from the trusted root".into(),
                    ));
                }
            }
            Some(first.raw_bytes.0.clone())
        }
        (None, None) => None,
    };
    let (key, leaf) = match signer {
        Signer::Key(k) => (k.clone(), None),
        Signer::Keyless { .. } => {
            let der = certificate.as_ref().ok_or_else(|| {
                Refusal::CertificateChain(
                    "the bundle has no certificate; verify a key-signed bundle with --key".into(),
                )
            })?;
            let leaf = cert::Cert::from_der(der)
                .map_err(|e| Refusal::Malformed(format!("signing certificate: {e}")))?;
            (leaf.key.clone(), Some(leaf))
        }
    };
    let key_spki = match signer {
        Signer::Key(k) => Some(spki_of(k)?),
        _ => None,
    };

    // The signature over the artifact.
    let (signature, signed_digest, statement, dsse) = match (
        &bundle.message_signature,
        &bundle.dsse_envelope,
    ) {
        (Some(m), None) => {
            if let Some(d) = &m.message_digest
                && d.digest.0 != artifact.sha256
            {
                return Err(Refusal::ArtifactMismatch(format!(
                    "the bundle signs the digest sha256:{}, the artifact is sha256:{}",
                    tlog::hex(&d.digest.0),
                    tlog::hex(&artifact.sha256)
                )));
            }
            if !crypto::verify_prehash(&key, crypto::Hash::Sha256, &artifact.sha256, &m.signature.0)
            {
                return Err(Refusal::Signature(
                    "the signature does not verify over the artifact's digest with the signer's key".into(),
                ));
            }
            (m.signature.0.clone(), artifact.sha256, None, None)
        }
        (None, Some(env)) => {
            let [sig] = env.signatures.as_slice() else {
                return Err(Refusal::Malformed(format!(
                    "the DSSE envelope has {} signatures, a Sigstore bundle has one",
                    env.signatures.len()
                )));
            };
            let pae = pae(&env.payload_type, &env.payload.0);
            if !crypto::verify(&key, crypto::default_hash(&key), &pae, &sig.sig.0) {
                return Err(Refusal::Signature(
                    "the DSSE signature does not verify with the signer's key".into(),
                ));
            }
            if env.payload_type != "application/vnd.in-toto+json" {
                return Err(Refusal::Unsupported(format!(
                    "DSSE payload type {:?}; olmpack checks in-toto statements",
                    env.payload_type
                )));
            }
            let st: serde_json::Value = serde_json::from_slice(&env.payload.0).map_err(|e| {
                Refusal::Malformed(format!("the in-toto statement is not JSON: {e}"))
            })?;
            let want = tlog::hex(&artifact.sha256);
            let subjects = st["subject"].as_array().cloned().unwrap_or_default();
            if !subjects
                .iter()
                .any(|s| s["digest"]["sha256"].as_str() == Some(want.as_str()))
            {
                return Err(Refusal::ArtifactMismatch(format!(
                    "no subject of the in-toto statement has the digest sha256:{want}"
                )));
            }
            let digest: [u8; 32] = sha2::Sha256::digest(&pae).into();
            (sig.sig.0.clone(), digest, Some(st), Some(env))
        }
        _ => {
            return Err(Refusal::Malformed(
                "the bundle must hold exactly one of messageSignature and dsseEnvelope".into(),
            ));
        }
    };

    // The transparency log.
    let [entry] = vm.tlog_entries.as_slice() else {
        return Err(Refusal::TlogUnknown(format!(
            "the bundle has {} transparency-log entries; olmpack wants exactly one",
            vm.tlog_entries.len()
        )));
    };
    if entry.log_index.0 < 0 {
        return Err(Refusal::Malformed(format!(
            "negative log index {}",
            entry.log_index.0
        )));
    }
    let (log, log_key) = tlog::log_of(entry, root)?;
    tlog::check_body(
        entry,
        &tlog::Expected {
            signature: &signature,
            certificate: certificate.as_deref(),
            key_spki: key_spki.as_deref(),
            signed_digest,
            dsse_payload: dsse.map(|e| e.payload.0.as_slice()),
            dsse_payload_type: dsse.map(|e| e.payload_type.as_str()),
        },
    )?;
    // Rekor v2 (the 0.0.2 kinds a v2 log writes) has no SET: its time is a timestamp's.
    let rekor_v2 = matches!(
        (
            entry.kind_version.kind.as_str(),
            entry.kind_version.version.as_str()
        ),
        ("hashedrekord" | "dsse", "0.0.2")
    );
    if entry.inclusion_proof.is_some() {
        tlog::check_inclusion(entry, log, &log_key)?;
    } else if minor >= 2 || rekor_v2 {
        return Err(Refusal::InclusionProof(
            "the entry has no inclusion proof (bundles from v0.2 on, and Rekor v2 entries, must carry one)".into(),
        ));
    }

    // The verified times: RFC 3161 timestamps over the signature, and the SET's integrated time.
    let stamps: Vec<&[u8]> = vm
        .timestamp_verification_data
        .iter()
        .flat_map(|t| t.rfc3161_timestamps.iter())
        .map(|t| t.signed_timestamp.0.as_slice())
        .collect();
    let timestamps = timestamp::verify_all(&stamps, &signature, root)?;
    if let Some(&t) = timestamps.iter().find(|&&t| t > now + SKEW) {
        return Err(Refusal::Time(format!(
            "the RFC 3161 timestamp's time {} is in the future",
            rfc3339(t)
        )));
    }
    let mut times = timestamps.clone();
    if rekor_v2 {
        if entry.inclusion_promise.is_some() {
            return Err(Refusal::Malformed(format!(
                "a Rekor v2 entry ({} {}) carries a signed entry timestamp, which v2 logs do not make",
                entry.kind_version.kind, entry.kind_version.version
            )));
        }
        if timestamps.is_empty() {
            return Err(Refusal::Time(
                "the Rekor v2 entry has no integrated time and the bundle no RFC 3161 timestamp: nothing vouches for when it was signed".into(),
            ));
        }
    } else if entry.inclusion_promise.is_some() {
        tlog::check_set(entry, &log_key)?;
        let t = entry.integrated_time.0;
        if t > now + SKEW {
            return Err(Refusal::Time(format!(
                "the log's integrated time {} is in the future",
                rfc3339(t)
            )));
        }
        times.insert(0, t);
    } else if timestamps.is_empty() {
        return Err(Refusal::Time(
            "the entry has no signed entry timestamp and no RFC 3161 timestamp: nothing vouches for when it was signed".into(),
        ));
    }
    for &t in &times {
        if !trust::in_range(&log.public_key.valid_for, t)
            || log
                .public_key
                .valid_for
                .as_ref()
                .is_some_and(|r| r.start.is_none())
        {
            return Err(Refusal::TlogUnknown(format!(
                "the key of the log {} was not trusted at {}",
                log.base_url,
                rfc3339(t)
            )));
        }
    }
    let signing_time = *times
        .first()
        .ok_or_else(|| Refusal::Time("no verified signing time".into()))?;

    // The certificate, at the signing time.
    let (mut identities, mut issuer) = (Vec::new(), None);
    if let (
        Some(leaf),
        Signer::Keyless {
            identity,
            issuer: want_issuer,
        },
    ) = (&leaf, signer)
    {
        let mut ca = None;
        for (i, &t) in times.iter().enumerate() {
            ca = Some(cert::verify_chain(leaf, root, t)?);
            if !leaf.valid_at(t) {
                let by = if i == 0 && !rekor_v2 && entry.inclusion_promise.is_some() {
                    "the log took the signature"
                } else {
                    "an RFC 3161 timestamp dates the signature"
                };
                return Err(Refusal::CertificateTime(format!(
                    "the certificate was valid from {} to {}, {by} at {}",
                    rfc3339(leaf.not_before),
                    rfc3339(leaf.not_after),
                    rfc3339(t)
                )));
            }
        }
        let ca = ca.ok_or_else(|| Refusal::Time("no verified signing time".into()))?;
        cert::verify_sct(leaf, &ca, root)?;
        identities = leaf.identities();
        if !identities.iter().any(|i| identity.matches(i)) {
            return Err(Refusal::IdentityMismatch {
                expected: identity.to_string(),
                found: if identities.is_empty() {
                    "no identity".into()
                } else {
                    identities.join(", ")
                },
            });
        }
        issuer = leaf.oidc_issuer();
        if !issuer.as_deref().is_some_and(|i| want_issuer.matches(i)) {
            return Err(Refusal::IssuerMismatch {
                expected: want_issuer.to_string(),
                found: issuer.clone().unwrap_or_else(|| "no issuer".into()),
            });
        }
    }
    Ok(Verified {
        signing_time,
        timestamps,
        identities,
        issuer,
        log_index: entry.log_index.0,
        statement,
    })
}

/// The PKIX DER of a key (to compare with what the log recorded).
fn spki_of(k: &PublicKey) -> Result<Vec<u8>, Refusal> {
    use p256::pkcs8::EncodePublicKey as _;
    let doc = match k {
        PublicKey::P256(k) => k.to_public_key_der(),
        PublicKey::P384(k) => k.to_public_key_der(),
        PublicKey::P521(k) => k.to_public_key_der(),
        PublicKey::Ed25519(k) => k.to_public_key_der(),
        PublicKey::Rsa(k) => k.to_public_key_der(),
    };
    doc.map(|d| d.as_bytes().to_vec())
        .map_err(|e| Refusal::Malformed(format!("cannot encode the key: {e}")))
}

/// DSSE's pre-authentication encoding.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// A Unix time as RFC 3339 (UTC), for messages.
pub fn rfc3339(t: i64) -> String {
    if t < 0 {
        return format!("{t} (before 1970)");
    }
    crate::image::config::rfc3339_utc(t as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verifier on timestamped bundles that tests/support/sigstore_tsa_testdata.py writes
    /// with fresh keys (its own DER tokens, signed with python3 `cryptography`): the good ones
    /// verify, each attack is refused by the check it targets.
    #[test]
    fn python_made_timestamped_bundles() {
        let dir = tempfile::tempdir().unwrap();
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/support/sigstore_tsa_testdata.py");
        let st = std::process::Command::new("python3")
            .arg(&script)
            .arg(dir.path())
            .status()
            .expect("python3 runs");
        assert!(st.success(), "{} failed", script.display());
        let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
        let root = TrustedRoot::from_json(&read("trusted_root.json")).unwrap();
        let artifact = Artifact::of_bytes(&read("artifact.txt"));
        let signer = Signer::Keyless {
            identity: Matcher::Exact(
                "https://github.com/olmpack/test/.github/workflows/release.yml@refs/heads/main"
                    .into(),
            ),
            issuer: Matcher::Exact("https://token.actions.githubusercontent.com".into()),
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let run = |n: &str| {
            let b = Bundle::from_json(&read(n)).unwrap();
            verify(&b, &artifact, &signer, &root, now)
        };
        for good in ["v2-good.json", "v2-embedded.json", "v1-tsa-good.json"] {
            let v = run(good).unwrap_or_else(|e| panic!("{good}: {e}"));
            assert_eq!(v.timestamps.len(), 1, "{good}");
        }
        let refused = |n: &str| run(n).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused("v2-no-timestamp.json").starts_with("signing time: the Rekor v2 entry"));
        assert!(refused("v2-imprint.json").contains("message imprint is not the hash"));
        assert!(refused("v2-untrusted.json").contains("no timestamp authority"));
        assert!(refused("v2-impostor.json").contains("signature does not verify"));
        assert!(refused("v2-late.json").starts_with("certificate validity:"));
        assert!(refused("v2-tsa-window.json").contains("outside the trusted root's validity"));
        assert!(refused("v2-tsa-cert.json").contains("was not valid at the timestamp's time"));
    }
}
