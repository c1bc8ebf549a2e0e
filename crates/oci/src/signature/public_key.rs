//! The public keys a cosign signature can be checked with, as containers/image reads them
//! (`cryptoutils.UnmarshalPEMToPublicKey`, then sigstore's `LoadVerifier` with SHA-256): a PKIX
//! `PUBLIC KEY` PEM holding an ECDSA key on P-256, P-384 or P-521, an Ed25519 key, or an RSA
//! key (PKCS #1 v1.5). cosign's own key files hold P-256; the other kinds come from
//! `cosign import-key-pair`, KMS keys and other signers.
//!
//! ECDSA signatures are ASN.1 DER over SHA-256 of the message (containers/image and cosign 2);
//! for P-384 and P-521 the curve's own hash (SHA-384, SHA-512) is accepted too, as cosign 3
//! signs with it. Ed25519 signs the message itself, RSA PKCS #1 v1.5 with SHA-256.

use super::SignatureError;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use p256::pkcs8::DecodePublicKey;
use sha2::Digest as _;

/// A public key to verify cosign signatures with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    /// ECDSA on NIST P-256 (cosign's default).
    P256(p256::ecdsa::VerifyingKey),
    /// ECDSA on NIST P-384.
    P384(p384::ecdsa::VerifyingKey),
    /// ECDSA on NIST P-521.
    P521(Box<p521::PublicKey>),
    /// Ed25519.
    Ed25519(ed25519_dalek::VerifyingKey),
    /// RSA, PKCS #1 v1.5 signatures.
    Rsa(Box<rsa::RsaPublicKey>),
}

impl From<p256::ecdsa::VerifyingKey> for PublicKey {
    fn from(k: p256::ecdsa::VerifyingKey) -> Self {
        PublicKey::P256(k)
    }
}

impl PublicKey {
    /// Reads a PKIX `PUBLIC KEY` PEM; `name` names the file in errors.
    pub fn from_pem(pem: &[u8], name: &str) -> Result<PublicKey, SignatureError> {
        let text = std::str::from_utf8(pem)
            .map_err(|_| SignatureError::key(name, "not a PEM file (not text)"))?
            .trim();
        let label = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("-----BEGIN "))
            .and_then(|l| l.strip_suffix("-----"))
            .unwrap_or_default();
        if label.contains("PRIVATE KEY") {
            return Err(SignatureError::key(
                name,
                format!(
                    "holds a private key ({label:?}); verify with the public key (cosign.pub, a PKIX \"PUBLIC KEY\" PEM)"
                ),
            ));
        }
        if label != "PUBLIC KEY" {
            return Err(SignatureError::key(
                name,
                format!(
                    "not a PKIX \"PUBLIC KEY\" PEM (found {}); cosign public keys are written as `-----BEGIN PUBLIC KEY-----`",
                    if label.is_empty() {
                        "no PEM block".to_string()
                    } else {
                        format!("{label:?}")
                    }
                ),
            ));
        }
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_pem(text) {
            return Ok(PublicKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_pem(text) {
            return Ok(PublicKey::P384(k));
        }
        if let Ok(k) = p521::PublicKey::from_public_key_pem(text) {
            return Ok(PublicKey::P521(Box::new(k)));
        }
        if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_pem(text) {
            return Ok(PublicKey::Ed25519(k));
        }
        if let Ok(k) = rsa::RsaPublicKey::from_public_key_pem(text) {
            return Ok(PublicKey::Rsa(Box::new(k)));
        }
        Err(SignatureError::key(
            name,
            "the PUBLIC KEY is none of the kinds cosign signatures are checked with (ECDSA P-256, P-384 or P-521, Ed25519, RSA)",
        ))
    }

    /// The key's PKIX `SubjectPublicKeyInfo` DER, for the `hint` a Sigstore bundle carries
    /// (`None` when the encoder refuses, which a key read from a file never makes it do).
    pub fn pkix_der(&self) -> Option<Vec<u8>> {
        use p256::pkcs8::EncodePublicKey as _;
        let doc = match self {
            PublicKey::P256(k) => k.to_public_key_der(),
            PublicKey::P384(k) => k.to_public_key_der(),
            PublicKey::P521(k) => k.to_public_key_der(),
            PublicKey::Ed25519(k) => k.to_public_key_der(),
            PublicKey::Rsa(k) => k.to_public_key_der(),
        };
        doc.ok().map(|d| d.as_bytes().to_vec())
    }

    /// The kind of key, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            PublicKey::P256(_) => "ECDSA P-256",
            PublicKey::P384(_) => "ECDSA P-384",
            PublicKey::P521(_) => "ECDSA P-521",
            PublicKey::Ed25519(_) => "Ed25519",
            PublicKey::Rsa(_) => "RSA",
        }
    }

    /// Whether `sig` has the form this kind of key signs with (ASN.1 DER for ECDSA, 64 bytes
    /// for Ed25519, the modulus size for RSA): a signature no key could have made is malformed,
    /// not made by the wrong key.
    pub fn can_read(&self, sig: &[u8]) -> bool {
        use rsa::traits::PublicKeyParts as _;
        match self {
            PublicKey::P256(_) => p256::ecdsa::Signature::from_der(sig).is_ok(),
            PublicKey::P384(_) => p384::ecdsa::Signature::from_der(sig).is_ok(),
            PublicKey::P521(_) => p521::ecdsa::Signature::from_der(sig).is_ok(),
            PublicKey::Ed25519(_) => sig.len() == 64,
            PublicKey::Rsa(k) => sig.len() == k.size(),
        }
    }

    /// What kind of key `sig` looks made by, judged from its form alone (for the message when
    /// a key of one kind is given with a signature of another).
    pub fn signature_form(sig: &[u8]) -> String {
        if p256::ecdsa::Signature::from_der(sig).is_ok() {
            "an ECDSA signature (ASN.1 DER, P-256 size)".into()
        } else if p384::ecdsa::Signature::from_der(sig).is_ok() {
            "an ECDSA signature (ASN.1 DER, P-384 size)".into()
        } else if p521::ecdsa::Signature::from_der(sig).is_ok() {
            "an ECDSA signature (ASN.1 DER, P-521 size)".into()
        } else if sig.len() == 64 {
            "an Ed25519 signature (64 raw bytes)".into()
        } else if sig.len() >= 128 && sig.len().is_multiple_of(64) {
            format!("an RSA signature ({} bits)", sig.len() * 8)
        } else {
            format!("no known kind ({} bytes)", sig.len())
        }
    }

    /// Whether `sig` (the raw bytes: ASN.1 DER for ECDSA) is this key's signature of `msg`.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> bool {
        match self {
            PublicKey::P256(k) => {
                p256::ecdsa::Signature::from_der(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
            PublicKey::P384(k) => p384::ecdsa::Signature::from_der(sig).is_ok_and(|s| {
                k.verify_prehash(&sha2::Sha256::digest(msg), &s).is_ok()
                    || k.verify_prehash(&sha2::Sha384::digest(msg), &s).is_ok()
            }),
            PublicKey::P521(pk) => p521::ecdsa::Signature::from_der(sig).is_ok_and(|s| {
                let Ok(k) = p521::ecdsa::VerifyingKey::from_affine(*pk.as_affine()) else {
                    return false;
                };
                // The ecdsa crate wants a prehash of at least half the field (33 bytes): a
                // leading zero byte gives the same integer Go's hashToInt reads from SHA-256.
                let mut short = vec![0u8];
                short.extend_from_slice(&sha2::Sha256::digest(msg));
                k.verify_prehash(&short, &s).is_ok()
                    || k.verify_prehash(&sha2::Sha512::digest(msg), &s).is_ok()
            }),
            PublicKey::Ed25519(k) => {
                ed25519_dalek::Signature::from_slice(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
            }
            PublicKey::Rsa(k) => {
                let digest = sha2::Sha256::digest(msg);
                k.verify(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &digest, sig)
                    .is_ok()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_foreign_pems_are_named() {
        let e = PublicKey::from_pem(b"-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAA==\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n", "cosign.key").unwrap_err();
        assert!(e.to_string().contains("holds a private key"), "{e}");
        let e = PublicKey::from_pem(b"hello", "x.pub").unwrap_err();
        assert!(e.to_string().contains("not a PKIX"), "{e}");
    }
}
