//! containers' "simple signing" (`containers-signature(5)`): an OpenPGP signed message whose
//! literal data is the JSON payload
//! `{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": …},
//! "identity": {"docker-reference": …}}, "optional": {…}}`. This is what skopeo, podman and
//! CRI-O write with `--sign-by` and check with `signedBy` policies.
//!
//! OpenPGP is rpgp's (`pgp` crate): pure Rust, MIT/Apache-2.0, reads what GnuPG writes
//! (compressed one-pass signed messages, RSA, EdDSA, ECDSA keys, binary or armored keyrings).

use super::pgp_validity::{self, SignedBy};
use super::{Rejection, SignatureError};
use pgp::composed::{Message, MessageBuilder, PublicOrSecret, SignedPublicKey, SignedSecretKey};
use pgp::crypto::hash::HashAlgorithm;
use pgp::types::{KeyDetails, Password};
use rand_core::OsRng;

/// `critical.type` of a simple signing payload (the payload reader's, which checks it).
pub use super::payload::SIMPLE_PAYLOAD_TYPE as PAYLOAD_TYPE;

/// The payload containers/image writes: `critical` with its three members, `optional` with the
/// creator and the time of signing.
pub fn payload(identity: &str, digest: &str, timestamp: i64) -> Vec<u8> {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    format!(
        "{{\"critical\":{{\"identity\":{{\"docker-reference\":{}}},\"image\":{{\"docker-manifest-digest\":{}}},\"type\":{}}},\"optional\":{{\"creator\":{},\"timestamp\":{timestamp}}}}}",
        q(identity),
        q(digest),
        q(PAYLOAD_TYPE),
        q(concat!("olmpack ", env!("CARGO_PKG_VERSION"))),
    )
    .into_bytes()
}

/// An OpenPGP secret key to sign with.
pub struct GpgSigner {
    key: SignedSecretKey,
    password: Vec<u8>,
}

impl std::fmt::Debug for GpgSigner {
    /// Written by hand so neither the key nor its passphrase reaches a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpgSigner")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl GpgSigner {
    /// Reads a secret key (armored or binary) from `bytes`; `name` names it in errors.
    pub fn from_bytes(bytes: &[u8], name: &str, password: Vec<u8>) -> Result<Self, SignatureError> {
        let (keys, _) = PublicOrSecret::from_reader_many(bytes)
            .map_err(|e| SignatureError::key(name, format!("not an OpenPGP key: {}", short(&e))))?;
        let secret = keys.flatten().find_map(|k| match k {
            PublicOrSecret::Secret(key) => Some(key),
            PublicOrSecret::Public(_) => None,
        });
        if let Some(key) = secret {
            // Unlocked once here so a wrong passphrase is named as such (rpgp's own error at
            // signing time is "IO error: invalid input") and costs no upload.
            let unlocked = key
                .primary_key
                .unlock(&Password::from(password.as_slice()), |_, _| Ok(()));
            if !matches!(unlocked, Ok(Ok(()))) {
                let why = if password.is_empty() {
                    "the secret key is protected by a passphrase and none was given: give it with --passphrase-file FILE"
                } else {
                    "cannot unlock the secret key: wrong passphrase (the one --passphrase-file gives)"
                };
                return Err(SignatureError::key(name, why));
            }
            return Ok(GpgSigner { key, password });
        }
        Err(SignatureError::key(
            name,
            "holds no OpenPGP secret key (export one with gpg --export-secret-keys)",
        ))
    }

    /// Exports the secret key `fingerprint` from the user's GnuPG (`$GNUPGHOME`), for
    /// `--gpg-key FINGERPRINT`. The key is used in memory only.
    pub fn from_gnupg(fingerprint: &str, password: Vec<u8>) -> Result<Self, SignatureError> {
        let out = std::process::Command::new("gpg")
            .args(["--batch", "--quiet", "--export-secret-keys", "--", fingerprint])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                SignatureError::Pgp(format!(
                    "--gpg-key {fingerprint}: cannot run gpg to export the key ({e}); give the key file instead"
                ))
            })?;
        if !out.status.success() || out.stdout.is_empty() {
            return Err(SignatureError::Pgp(format!(
                "--gpg-key {fingerprint}: gpg has no secret key with that fingerprint{}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default()
            )));
        }
        Self::from_bytes(&out.stdout, fingerprint, password)
    }

    /// The fingerprint of the signing key (upper-case hex, as GnuPG shows it).
    pub fn fingerprint(&self) -> String {
        hex_upper(self.key.primary_key.fingerprint().as_bytes())
    }

    /// Signs `payload` as an OpenPGP signed message (binary, SHA-256, uncompressed).
    pub fn sign(&self, payload: &[u8]) -> Result<Vec<u8>, SignatureError> {
        let mut builder = MessageBuilder::from_bytes("", payload.to_vec());
        builder.sign(
            &*self.key,
            Password::from(self.password.as_slice()),
            HashAlgorithm::Sha256,
        );
        builder
            .to_vec(OsRng)
            .map_err(|e| SignatureError::Pgp(format!("signing failed: {e}")))
    }
}

/// rpgp's parse errors can carry the whole input as a byte list: keep the first words.
fn short(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    let cut = text
        .find(" Error(")
        .or_else(|| text.find('['))
        .unwrap_or(text.len())
        .min(160);
    let mut s: String = text.chars().take(cut).collect();
    if s.len() < text.len() {
        s.push_str(" (neither armored nor binary OpenPGP)");
    }
    s
}

/// A binary keyring as GnuPG 1 wrote `pubring.gpg` (and containers/image's fixtures still
/// are) has trust packets (tag 12) after its keys, user IDs and signatures; rpgp stops at the
/// first one, so every key after the first was silently not read. They carry no key material
/// and are dropped (gpg ignores them on import too). Armored input, or input that is not a
/// well-formed packet sequence, is returned unchanged for rpgp to judge.
fn without_trust_packets(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    const TRUST: u8 = 12;
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0usize;
    let mut dropped = false;
    while at < bytes.len() {
        let ctb = bytes[at];
        if ctb & 0x80 == 0 {
            return Cow::Borrowed(bytes);
        }
        let (tag, header, len) = if ctb & 0x40 == 0 {
            let tag = (ctb >> 2) & 0x0f;
            let n = match ctb & 3 {
                0 => 1,
                1 => 2,
                2 => 4,
                _ => return Cow::Borrowed(bytes),
            };
            let Some(l) = bytes.get(at + 1..at + 1 + n) else {
                return Cow::Borrowed(bytes);
            };
            let len = l.iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
            (tag, 1 + n, len)
        } else {
            let tag = ctb & 0x3f;
            let Some(&o1) = bytes.get(at + 1) else {
                return Cow::Borrowed(bytes);
            };
            match o1 {
                0..=191 => (tag, 2, usize::from(o1)),
                192..=223 => {
                    let Some(&o2) = bytes.get(at + 2) else {
                        return Cow::Borrowed(bytes);
                    };
                    (
                        tag,
                        3,
                        ((usize::from(o1) - 192) << 8) + usize::from(o2) + 192,
                    )
                }
                255 => {
                    let Some(l) = bytes.get(at + 2..at + 6) else {
                        return Cow::Borrowed(bytes);
                    };
                    let len = l.iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
                    (tag, 6, len)
                }
                // Partial body lengths never occur in key material.
                _ => return Cow::Borrowed(bytes),
            }
        };
        let Some(end) = at.checked_add(header).and_then(|h| h.checked_add(len)) else {
            return Cow::Borrowed(bytes);
        };
        if end > bytes.len() {
            return Cow::Borrowed(bytes);
        }
        if tag == TRUST {
            dropped = true;
        } else {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    if dropped {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(bytes)
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// A set of trusted OpenPGP public keys (a `--gpg-keyring` file, a policy's `keyPath`s).
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    keys: Vec<SignedPublicKey>,
}

impl Keyring {
    /// Reads every public (or secret, for its public part) key of an armored or binary
    /// keyring; `name` names it in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Self, SignatureError> {
        let mut ring = Keyring::default();
        ring.add(bytes, name)?;
        Ok(ring)
    }

    /// Adds the keys of another keyring.
    pub fn add(&mut self, bytes: &[u8], name: &str) -> Result<(), SignatureError> {
        let bytes = without_trust_packets(bytes);
        let (keys, _) = PublicOrSecret::from_reader_many(&bytes[..]).map_err(|e| {
            SignatureError::key(name, format!("not an OpenPGP keyring: {}", short(&e)))
        })?;
        let before = self.keys.len();
        for k in keys {
            match k {
                Ok(PublicOrSecret::Public(p)) => self.keys.push(p),
                Ok(PublicOrSecret::Secret(s)) => self.keys.push(s.to_public_key()),
                Err(e) => {
                    return Err(SignatureError::key(
                        name,
                        format!("not an OpenPGP keyring: {}", short(&e)),
                    ));
                }
            }
        }
        if self.keys.len() == before {
            return Err(SignatureError::key(name, "holds no OpenPGP key"));
        }
        Ok(())
    }

    /// The primary fingerprints, for messages.
    pub fn fingerprints(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|k| hex_upper(k.primary_key.fingerprint().as_bytes()))
            .collect()
    }

    /// Checks an OpenPGP signed message against the keyring and returns its literal data and
    /// the fingerprint of the (primary) key that signed it. As gpgme (which containers/image
    /// uses), exactly one signature, by a key that is valid for signing now and was when the
    /// signature was made ([`super::pgp_validity`]).
    pub fn verify_message(&self, sig: &[u8]) -> Result<(Vec<u8>, String), Rejection> {
        self.verify_message_at(sig, unix_now())
    }

    /// [`Keyring::verify_message`] at `now` (seconds since the epoch).
    pub fn verify_message_at(&self, sig: &[u8], now: u64) -> Result<(Vec<u8>, String), Rejection> {
        let parsed = if sig.starts_with(b"-----BEGIN") {
            Message::from_armor(sig).map(|(m, _)| m)
        } else {
            Message::from_bytes(sig)
        };
        let msg = parsed
            .map_err(|e| Rejection::Malformed(format!("not an OpenPGP message: {}", short(&e))))?;
        let mut msg = msg
            .decompress()
            .map_err(|e| Rejection::Malformed(format!("cannot decompress: {e}")))?;
        if !msg.is_signed() {
            return Err(Rejection::Malformed(
                "the OpenPGP message is not signed".into(),
            ));
        }
        let data = msg
            .as_data_vec()
            .map_err(|e| Rejection::Malformed(format!("cannot read the signed data: {e}")))?;
        let mut invalid: Option<String> = None;
        for key in &self.keys {
            let signers = std::iter::once((
                &key.primary_key as &dyn pgp::types::VerifyingKey,
                SignedBy::Primary,
            ))
            .chain(key.public_subkeys.iter().map(|sub| {
                (
                    &sub.key as &dyn pgp::types::VerifyingKey,
                    SignedBy::Subkey(sub),
                )
            }));
            for (vk, by) in signers {
                // verify_read first reads what is left of the message (the trailing
                // signature packet of an indeterminate-length compressed message).
                let Ok(signature) = msg.verify_read(vk).cloned() else {
                    continue;
                };
                if let Message::Signed { reader, .. } = &msg
                    && reader.num_signatures() != 1
                {
                    return Err(Rejection::Malformed(format!(
                        "the message holds {} signatures; a simple signature has exactly one (as gpgme requires)",
                        reader.num_signatures()
                    )));
                }
                match pgp_validity::check(key, by, &signature, now) {
                    Ok(()) => {
                        return Ok((data, hex_upper(key.primary_key.fingerprint().as_bytes())));
                    }
                    Err(why) => {
                        invalid.get_or_insert(why);
                    }
                }
            }
        }
        if let Some(why) = invalid {
            return Err(Rejection::KeyNotValid(why));
        }
        // A signature naming a key of the keyring that still does not verify was altered (or
        // damaged) after signing: that is no wrong key, and saying so sends the user after the
        // wrong problem.
        if let Some(issuer) = self.named_issuer(&msg) {
            return Err(Rejection::Malformed(format!(
                "the signature names key {issuer} of the keyring as its signer but does not verify with it: the signed payload or the signature was altered after signing (tampered or damaged)"
            )));
        }
        Err(Rejection::WrongKey(format!(
            "not signed by a key of the keyring ({})",
            self.fingerprints().join(", ")
        )))
    }

    /// The keyring's primary fingerprint of the key (or subkey) the message's signature names as
    /// its issuer (by fingerprint or key id), if it names one of them.
    fn named_issuer(&self, msg: &Message<'_>) -> Option<String> {
        let Message::Signed { reader, .. } = msg else {
            return None;
        };
        let sig = reader.signature(0)?;
        let ids: Vec<String> = sig
            .issuer_key_id()
            .iter()
            .map(|id| hex_upper(id.as_ref()))
            .collect();
        let fingerprints: Vec<String> = sig
            .issuer_fingerprint()
            .iter()
            .map(|f| hex_upper(f.as_bytes()))
            .collect();
        let names = |fingerprint: String, key_id: String| {
            fingerprints.contains(&fingerprint) || ids.contains(&key_id)
        };
        self.keys.iter().find_map(|k| {
            let primary = hex_upper(k.primary_key.fingerprint().as_bytes());
            let mut candidates = vec![(
                primary.clone(),
                hex_upper(k.primary_key.legacy_key_id().as_ref()),
            )];
            for sub in &k.public_subkeys {
                candidates.push((
                    hex_upper(sub.key.fingerprint().as_bytes()),
                    hex_upper(sub.key.legacy_key_id().as_ref()),
                ));
            }
            candidates
                .into_iter()
                .any(|(f, id)| names(f, id))
                .then_some(primary)
        })
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The `signedIdentity` rules, kept in [`super::identity`] and shared with cosign signatures.
pub use super::identity::IdentityRule;

/// Checks a simple-signing payload (after its OpenPGP signature verified), as containers/image
/// does: parsed strictly ([`super::payload`]: exactly the members it defines, no duplicate),
/// then the digest, then the identity.
pub fn check_payload(
    body: &[u8],
    digest: &str,
    identity: &IdentityRule,
) -> Result<serde_json::Value, Rejection> {
    let (v, claims) = super::payload::parse(body, super::payload::Flavour::Simple)?;
    if claims.digest != digest {
        return Err(Rejection::DigestMismatch {
            expected: digest.to_string(),
            found: claims.digest,
        });
    }
    if !identity.accepts(&claims.identity) {
        return Err(Rejection::IdentityMismatch {
            expected: identity.describe(),
            found: claims.identity,
        });
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_rules_follow_containers_image() {
        let by_tag = IdentityRule::MatchRepoDigestOrExact("quay.io/a/b:v1".into());
        assert!(by_tag.accepts("quay.io/a/b:v1"));
        assert!(!by_tag.accepts("quay.io/a/b:v2"));
        assert!(!by_tag.accepts("quay.io/a/c:v1"));
        let by_digest =
            IdentityRule::MatchRepoDigestOrExact(format!("quay.io/a/b@sha256:{}", "0".repeat(64)));
        assert!(by_digest.accepts("quay.io/a/b:anything"));
        assert!(IdentityRule::MatchRepository("quay.io/a/b:v1".into()).accepts("quay.io/a/b:v9"));
    }

    #[test]
    fn payload_round_trip_and_refusals() {
        let d = format!("sha256:{}", "a".repeat(64));
        let p = payload("quay.io/a/b:v1", &d, 5);
        let rule = IdentityRule::MatchRepoDigestOrExact("quay.io/a/b:v1".into());
        assert!(check_payload(&p, &d, &rule).is_ok());
        let other = format!("sha256:{}", "b".repeat(64));
        assert!(matches!(
            check_payload(&p, &other, &rule),
            Err(Rejection::DigestMismatch { .. })
        ));
        let moved = IdentityRule::MatchRepoDigestOrExact("quay.io/a/c:v1".into());
        assert!(matches!(
            check_payload(&p, &d, &moved),
            Err(Rejection::IdentityMismatch { .. })
        ));
    }
}
