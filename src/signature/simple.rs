//! containers' "simple signing" (`containers-signature(5)`): an OpenPGP signed message whose
//! literal data is the JSON payload
//! `{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": …},
//! "identity": {"docker-reference": …}}, "optional": {…}}`. This is what skopeo, podman and
//! CRI-O write with `--sign-by` and check with `signedBy` policies.
//!
//! OpenPGP is rpgp's (`pgp` crate): pure Rust, MIT/Apache-2.0, reads what GnuPG writes
//! (compressed one-pass signed messages, RSA, EdDSA, ECDSA keys, binary or armored keyrings).

use super::{Rejection, SignatureError};
use pgp::composed::{Message, MessageBuilder, PublicOrSecret, SignedPublicKey, SignedSecretKey};
use pgp::crypto::hash::HashAlgorithm;
use pgp::types::{KeyDetails, Password};
use rand_core::OsRng;

/// `critical.type` of a simple signing payload.
pub const PAYLOAD_TYPE: &str = "atomic container signature";

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

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// A set of trusted OpenPGP public keys (a `--gpg-keyring` file, a policy's `keyPath`s).
#[derive(Debug, Default)]
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
        let (keys, _) = PublicOrSecret::from_reader_many(bytes).map_err(|e| {
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
    /// the fingerprint of the key that signed it.
    pub fn verify_message(&self, sig: &[u8]) -> Result<(Vec<u8>, String), Rejection> {
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
        for key in &self.keys {
            if msg.verify(key).is_ok() {
                return Ok((data, hex_upper(key.primary_key.fingerprint().as_bytes())));
            }
            for sub in &key.public_subkeys {
                if msg.verify(sub).is_ok() {
                    return Ok((data, hex_upper(key.primary_key.fingerprint().as_bytes())));
                }
            }
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

/// The `signedIdentity` rules, kept in [`super::identity`] and shared with cosign signatures.
pub use super::identity::IdentityRule;

/// Checks a simple-signing payload (after its OpenPGP signature verified), as containers/image
/// does: exactly the three critical members, the type, the digest, then the identity.
pub fn check_payload(
    body: &[u8],
    digest: &str,
    identity: &IdentityRule,
) -> Result<serde_json::Value, Rejection> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| Rejection::Malformed(format!("payload is not JSON: {e}")))?;
    let critical = v["critical"]
        .as_object()
        .ok_or_else(|| Rejection::Malformed("payload has no critical object".into()))?;
    if let Some(extra) = critical
        .keys()
        .find(|k| !matches!(k.as_str(), "type" | "image" | "identity"))
    {
        return Err(Rejection::Malformed(format!(
            "unknown critical member {extra:?}"
        )));
    }
    let typ = critical.get("type").and_then(|t| t.as_str());
    if typ != Some(PAYLOAD_TYPE) {
        return Err(Rejection::Malformed(format!(
            "critical.type is {typ:?}, expected {PAYLOAD_TYPE:?}"
        )));
    }
    let found = v["critical"]["image"]["docker-manifest-digest"]
        .as_str()
        .ok_or_else(|| {
            Rejection::Malformed("payload has no critical.image.docker-manifest-digest".into())
        })?;
    if found != digest {
        return Err(Rejection::DigestMismatch {
            expected: digest.to_string(),
            found: found.to_string(),
        });
    }
    let claimed = v["critical"]["identity"]["docker-reference"]
        .as_str()
        .ok_or_else(|| {
            Rejection::Malformed("payload has no critical.identity.docker-reference".into())
        })?;
    if !identity.accepts(claimed) {
        return Err(Rejection::IdentityMismatch {
            expected: identity.describe(),
            found: claimed.to_string(),
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
