//! Signature checks with a named hash, for what Sigstore signs: certificates (their signature
//! algorithm says the hash), SCTs, SETs and checkpoints (SHA-256 or the key's own hash), and
//! artifacts given only by their SHA-256 digest (a prehash, never the bytes).

use crate::signature::public_key::PublicKey;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use p256::pkcs8::DecodePublicKey as _;
use sha2::Digest as _;

/// A hash a signature was made over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl Hash {
    /// The digest of `msg`.
    pub fn digest(self, msg: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => sha2::Sha256::digest(msg).to_vec(),
            Hash::Sha384 => sha2::Sha384::digest(msg).to_vec(),
            Hash::Sha512 => sha2::Sha512::digest(msg).to_vec(),
        }
    }
}

/// The key in a PKIX `SubjectPublicKeyInfo` DER, if it is a kind Sigstore signs with.
pub fn key_from_spki(der: &[u8]) -> Option<PublicKey> {
    if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_der(der) {
        return Some(PublicKey::P256(k));
    }
    if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_der(der) {
        return Some(PublicKey::P384(k));
    }
    if let Ok(k) = p521::PublicKey::from_public_key_der(der) {
        return Some(PublicKey::P521(Box::new(k)));
    }
    if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_der(der) {
        return Some(PublicKey::Ed25519(k));
    }
    if let Ok(k) = rsa::RsaPublicKey::from_public_key_der(der) {
        return Some(PublicKey::Rsa(Box::new(k)));
    }
    None
}

/// Whether `sig` is `key`'s signature of the digest `digest` made with `hash` (ECDSA: ASN.1
/// DER; RSA: PKCS #1 v1.5). Ed25519 cannot sign a prehash: always false.
pub fn verify_prehash(key: &PublicKey, hash: Hash, digest: &[u8], sig: &[u8]) -> bool {
    match key {
        PublicKey::P256(k) => p256::ecdsa::Signature::from_der(sig)
            .is_ok_and(|s| k.verify_prehash(digest, &s).is_ok()),
        PublicKey::P384(k) => p384::ecdsa::Signature::from_der(sig)
            .is_ok_and(|s| k.verify_prehash(digest, &s).is_ok()),
        PublicKey::P521(pk) => p521::ecdsa::Signature::from_der(sig).is_ok_and(|s| {
            let Ok(k) = p521::ecdsa::VerifyingKey::from_affine(*pk.as_affine()) else {
                return false;
            };
            let mut d = digest.to_vec();
            if d.len() < 33 {
                d.insert(0, 0);
            }
            k.verify_prehash(&d, &s).is_ok()
        }),
        PublicKey::Ed25519(_) => false,
        PublicKey::Rsa(k) => {
            let scheme = match hash {
                Hash::Sha256 => rsa::Pkcs1v15Sign::new::<sha2::Sha256>(),
                Hash::Sha384 => rsa::Pkcs1v15Sign::new::<sha2::Sha384>(),
                Hash::Sha512 => rsa::Pkcs1v15Sign::new::<sha2::Sha512>(),
            };
            k.verify(scheme, digest, sig).is_ok()
        }
    }
}

/// Whether `sig` is `key`'s signature of `msg` with `hash` (Ed25519 signs `msg` itself).
pub fn verify(key: &PublicKey, hash: Hash, msg: &[u8], sig: &[u8]) -> bool {
    match key {
        PublicKey::Ed25519(k) => {
            ed25519_dalek::Signature::from_slice(sig).is_ok_and(|s| k.verify(msg, &s).is_ok())
        }
        _ => verify_prehash(key, hash, &hash.digest(msg), sig),
    }
}

/// The hash a key signs with by default: the curve's own for ECDSA (P-384: SHA-384), SHA-256
/// otherwise (Sigstore's `keyDetails` defaults).
pub fn default_hash(key: &PublicKey) -> Hash {
    match key {
        PublicKey::P384(_) => Hash::Sha384,
        PublicKey::P521(_) => Hash::Sha512,
        _ => Hash::Sha256,
    }
}

/// The hash of a certificate signature algorithm (`ecdsa-with-SHA256`, `sha256WithRSAEncryption`,
/// ...); `None` for Ed25519 (no hash) and unknown algorithms, told apart by [`is_ed25519`].
pub fn hash_of_algorithm(oid: &str) -> Option<Hash> {
    match oid {
        "1.2.840.10045.4.3.2" | "1.2.840.113549.1.1.11" => Some(Hash::Sha256),
        "1.2.840.10045.4.3.3" | "1.2.840.113549.1.1.12" => Some(Hash::Sha384),
        "1.2.840.10045.4.3.4" | "1.2.840.113549.1.1.13" => Some(Hash::Sha512),
        _ => None,
    }
}

/// Whether `oid` is Ed25519's signature algorithm.
pub fn is_ed25519(oid: &str) -> bool {
    oid == "1.3.101.112"
}
