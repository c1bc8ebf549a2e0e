//! cosign key files, read and written as cosign (and go-securesystemslib's `encrypted`
//! package, which cosign uses) does, so a key pair made by either tool works in the other.
//!
//! The private key is a PEM block labelled `ENCRYPTED SIGSTORE PRIVATE KEY` (cosign 2 and
//! later; `ENCRYPTED COSIGN PRIVATE KEY` from older cosign is read too) whose body is JSON:
//!
//! ```json
//! {"kdf":{"name":"scrypt","params":{"N":32768,"r":8,"p":1},"salt":"<base64 32 bytes>"},
//!  "cipher":{"name":"nacl/secretbox","nonce":"<base64 24 bytes>"},
//!  "ciphertext":"<base64: secretbox(PKCS#8 DER of the key)>"}
//! ```
//!
//! The secretbox key is `scrypt(passphrase, salt, N, r, p, 32)`; the box is NaCl's (the 16-byte
//! Poly1305 tag before the XSalsa20 ciphertext). The public key is a PKIX `PUBLIC KEY` PEM.
//!
//! The PKCS#8 key inside may be of any kind cosign signs with (`cosign import-key-pair` and
//! other signers write them; `cosign generate-key-pair` makes P-256 only, and so does
//! `olmpack key generate`): ECDSA on P-256, P-384 or P-521, Ed25519, or RSA. Each signs as
//! containers/image and cosign 2 verify (`LoadVerifier` with SHA-256): ECDSA over SHA-256 of
//! the payload, ASN.1 DER; Ed25519 over the payload itself; RSA PKCS #1 v1.5 with SHA-256.

use super::SignatureError;
pub use super::public_key::PublicKey;
use base64::engine::general_purpose::STANDARD as B64;
use crypto_secretbox::aead::{Aead, KeyInit};
use p256::ecdsa::{SigningKey, VerifyingKey};
use p256::pkcs8::der::pem::LineEnding;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// The PEM label cosign 2 and later write.
pub const SIGSTORE_PRIVATE_KEY_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// The PEM label older cosign releases wrote; still read.
pub const COSIGN_PRIVATE_KEY_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";

/// scrypt cost cosign uses (go-securesystemslib's defaults: N = 2^15, r = 8, p = 1).
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
/// The most work olmpack accepts from a key file (N = 2^20): a hostile file cannot make a
/// verification run for minutes or take gigabytes.
const MAX_LOG_N: u8 = 20;

#[derive(Serialize, Deserialize)]
struct Envelope {
    kdf: Kdf,
    cipher: Cipher,
    #[serde(with = "b64")]
    ciphertext: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: KdfParams,
    #[serde(with = "b64")]
    salt: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct KdfParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    #[serde(with = "b64")]
    nonce: Vec<u8>,
}

/// Go's encoding/json writes `[]byte` as standard base64; the same is read back.
mod b64 {
    use super::B64;
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&B64.encode(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        B64.decode(s.as_bytes()).map_err(serde::de::Error::custom)
    }
}

/// A freshly generated key pair, as the two PEM files cosign writes (`cosign.key`,
/// `cosign.pub`).
#[derive(Debug)]
pub struct KeyPairPem {
    /// The encrypted private key PEM.
    pub private_pem: String,
    /// The public key PEM.
    pub public_pem: String,
}

/// A decrypted cosign private key: the kinds cosign signs with, so a key imported into cosign
/// (or written by another signer) signs in olmpack too.
#[derive(Clone)]
pub enum PrivateKey {
    /// ECDSA on NIST P-256 (cosign's and olmpack's generated keys).
    P256(SigningKey),
    /// ECDSA on NIST P-384.
    P384(p384::ecdsa::SigningKey),
    /// ECDSA on NIST P-521.
    P521(Box<p521::ecdsa::SigningKey>),
    /// Ed25519.
    Ed25519(Box<ed25519_dalek::SigningKey>),
    /// RSA, signing PKCS #1 v1.5 with SHA-256.
    Rsa(Box<rsa::RsaPrivateKey>),
}

impl std::fmt::Debug for PrivateKey {
    // Never the key material: only what kind of key it is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrivateKey({})", self.public().kind())
    }
}

impl From<SigningKey> for PrivateKey {
    fn from(k: SigningKey) -> Self {
        PrivateKey::P256(k)
    }
}

impl PrivateKey {
    /// Reads a PKCS#8 DER private key of any kind cosign signs with; `name` names the file.
    pub fn from_pkcs8_der(der: &[u8], name: &str) -> Result<PrivateKey, SignatureError> {
        if let Ok(k) = SigningKey::from_pkcs8_der(der) {
            return Ok(PrivateKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::SigningKey::from_pkcs8_der(der) {
            return Ok(PrivateKey::P384(k));
        }
        if let Ok(k) = p521::SecretKey::from_pkcs8_der(der)
            && let Ok(k) = p521::ecdsa::SigningKey::from_bytes(&k.to_bytes())
        {
            return Ok(PrivateKey::P521(Box::new(k)));
        }
        if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_der(der) {
            return Ok(PrivateKey::Ed25519(Box::new(k)));
        }
        if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
            use rsa::traits::PublicKeyParts as _;
            if k.size() < 256 {
                return Err(SignatureError::key(
                    name,
                    format!(
                        "the RSA key has {} bits; cosign and containers/image need at least 2048",
                        k.size() * 8
                    ),
                ));
            }
            return Ok(PrivateKey::Rsa(Box::new(k)));
        }
        Err(SignatureError::key(
            name,
            "the decrypted key is not a PKCS#8 key of a kind cosign signs with (ECDSA P-256, P-384 or P-521, Ed25519, RSA)",
        ))
    }

    /// The public half, to check a signature just made and to write `cosign.pub`.
    pub fn public(&self) -> PublicKey {
        match self {
            PrivateKey::P256(k) => PublicKey::P256(*k.verifying_key()),
            PrivateKey::P384(k) => PublicKey::P384(*k.verifying_key()),
            PrivateKey::P521(k) => PublicKey::P521(Box::new(p521::PublicKey::from_secret_scalar(
                k.as_nonzero_scalar(),
            ))),
            PrivateKey::Ed25519(k) => PublicKey::Ed25519(k.verifying_key()),
            PrivateKey::Rsa(k) => PublicKey::Rsa(Box::new(k.to_public_key())),
        }
    }

    /// Signs `msg` as containers/image and cosign verify it: the raw signature bytes (ASN.1
    /// DER for ECDSA).
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, SignatureError> {
        use p256::ecdsa::signature::Signer as _;
        use p256::ecdsa::signature::hazmat::PrehashSigner as _;
        let failed = |e: String| SignatureError::key("private key", format!("signing failed: {e}"));
        let prehash = sha2::Sha256::digest(msg);
        Ok(match self {
            PrivateKey::P256(k) => {
                let s: p256::ecdsa::Signature = k.sign(msg);
                s.to_der().as_bytes().to_vec()
            }
            PrivateKey::P384(k) => {
                let s: p384::ecdsa::Signature = k
                    .sign_prehash(&prehash)
                    .map_err(|e| failed(e.to_string()))?;
                s.to_der().as_bytes().to_vec()
            }
            PrivateKey::P521(k) => {
                // The ecdsa crate wants a prehash of at least half the field (33 bytes): a
                // leading zero byte gives the same integer Go's hashToInt reads from SHA-256.
                let mut short = vec![0u8];
                short.extend_from_slice(&prehash);
                let s: p521::ecdsa::Signature =
                    k.sign_prehash(&short).map_err(|e| failed(e.to_string()))?;
                s.to_der().as_bytes().to_vec()
            }
            PrivateKey::Ed25519(k) => k.sign(msg).to_bytes().to_vec(),
            PrivateKey::Rsa(k) => k
                .sign(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &prehash)
                .map_err(|e| failed(e.to_string()))?,
        })
    }
}

/// Generates an ECDSA P-256 key pair (cosign's default) and encrypts the private key with
/// `passphrase`.
pub fn generate(passphrase: &[u8]) -> Result<KeyPairPem, SignatureError> {
    let key = SigningKey::random(&mut OsRng);
    Ok(KeyPairPem {
        private_pem: encrypt_private_key(&key, passphrase)?,
        public_pem: public_key_pem(key.verifying_key())?,
    })
}

/// The PKIX `PUBLIC KEY` PEM of a verification key (cosign's `cosign.pub`).
pub fn public_key_pem(key: &VerifyingKey) -> Result<String, SignatureError> {
    key.to_public_key_pem(LineEnding::LF)
        .map_err(|e| SignatureError::key("public key", e.to_string()))
}

/// Encrypts `key` as cosign does (PKCS#8 DER in a NaCl secretbox keyed by scrypt).
pub fn encrypt_private_key(key: &SigningKey, passphrase: &[u8]) -> Result<String, SignatureError> {
    let der = key
        .to_pkcs8_der()
        .map_err(|e| SignatureError::key("private key", e.to_string()))?;
    let mut salt = vec![0u8; 32];
    OsRng.fill_bytes(&mut salt);
    let mut nonce = vec![0u8; 24];
    OsRng.fill_bytes(&mut nonce);
    let box_key = derive(passphrase, &salt, SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P)
        .map_err(|e| SignatureError::key("private key", e))?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new((&box_key).into());
    let ciphertext = cipher
        .encrypt(nonce.as_slice().into(), der.as_bytes())
        .map_err(|_| SignatureError::key("private key", "encryption failed"))?;
    let envelope = Envelope {
        kdf: Kdf {
            name: "scrypt".into(),
            params: KdfParams {
                n: 1 << SCRYPT_LOG_N,
                r: SCRYPT_R,
                p: SCRYPT_P,
            },
            salt,
        },
        cipher: Cipher {
            name: "nacl/secretbox".into(),
            nonce,
        },
        ciphertext,
    };
    let json = serde_json::to_vec(&envelope)
        .map_err(|e| SignatureError::key("private key", e.to_string()))?;
    p256::pkcs8::der::pem::encode_string(SIGSTORE_PRIVATE_KEY_LABEL, LineEnding::LF, &json)
        .map_err(|e| SignatureError::key("private key", e.to_string()))
}

fn derive(pass: &[u8], salt: &[u8], log_n: u8, r: u32, p: u32) -> Result<[u8; 32], String> {
    let params = scrypt::Params::new(log_n, r, p, 32)
        .map_err(|e| format!("invalid scrypt parameters: {e}"))?;
    let mut out = [0u8; 32];
    scrypt::scrypt(pass, salt, &params, &mut out).map_err(|e| format!("scrypt: {e}"))?;
    Ok(out)
}

/// Reads a cosign private key file (either label) and decrypts it with `passphrase`. `name`
/// names the file in errors.
pub fn decrypt_private_key(
    pem: &[u8],
    passphrase: &[u8],
    name: &str,
) -> Result<PrivateKey, SignatureError> {
    let text = std::str::from_utf8(pem).map_err(|_| SignatureError::key(name, "not a PEM file"))?;
    let (label, body) = p256::pkcs8::der::pem::decode_vec(text.trim().as_bytes())
        .map_err(|e| SignatureError::key(name, format!("not a PEM file: {e}")))?;
    if label != SIGSTORE_PRIVATE_KEY_LABEL && label != COSIGN_PRIVATE_KEY_LABEL {
        return Err(SignatureError::key(
            name,
            format!(
                "PEM block {label:?} is not a cosign private key (expected {SIGSTORE_PRIVATE_KEY_LABEL:?} or {COSIGN_PRIVATE_KEY_LABEL:?})"
            ),
        ));
    }
    let env: Envelope = serde_json::from_slice(&body)
        .map_err(|e| SignatureError::key(name, format!("encrypted key JSON is invalid: {e}")))?;
    // cosign writes one key derivation and one cipher; anything else is refused by name.
    for (what, got, only) in [
        ("key derivation", &env.kdf.name, "scrypt"),
        ("cipher", &env.cipher.name, "nacl/secretbox"),
    ] {
        if got != only {
            let why = format!("unsupported {what} {got:?} (only {only})");
            return Err(SignatureError::key(name, why));
        }
    }
    let n = env.kdf.params.n;
    if !n.is_power_of_two() || n < 2 || n.trailing_zeros() > u32::from(MAX_LOG_N) {
        return Err(SignatureError::key(
            name,
            format!("scrypt N = {n} must be a power of two from 2 to 2^{MAX_LOG_N}"),
        ));
    }
    if env.cipher.nonce.len() != 24 {
        return Err(SignatureError::key(
            name,
            "secretbox nonce must be 24 bytes",
        ));
    }
    if env.kdf.params.r == 0 || env.kdf.params.p == 0 || env.kdf.params.p > 16 {
        return Err(SignatureError::key(name, "invalid scrypt r or p"));
    }
    let log_n = n.trailing_zeros() as u8;
    let box_key = derive(
        passphrase,
        &env.kdf.salt,
        log_n,
        env.kdf.params.r,
        env.kdf.params.p,
    )
    .map_err(|e| SignatureError::key(name, e))?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new((&box_key).into());
    let der = cipher
        .decrypt(
            env.cipher.nonce.as_slice().into(),
            env.ciphertext.as_slice(),
        )
        .map_err(|_| {
            SignatureError::key(
                name,
                "cannot decrypt the private key: wrong passphrase (or a damaged file)",
            )
        })?;
    PrivateKey::from_pkcs8_der(&der, name)
}

/// Reads a PKIX `PUBLIC KEY` PEM (cosign's `cosign.pub`): ECDSA P-256, P-384 or P-521,
/// Ed25519 or RSA ([`super::public_key`]).
pub fn parse_public_key(pem: &[u8], name: &str) -> Result<PublicKey, SignatureError> {
    PublicKey::from_pem(pem, name)
}

/// Reads several public key files into one key set: a signature verifies when any of them
/// verifies it (containers/image's `keyPaths`, repeated `--key`). Every file must read, so a
/// broken fallback key is found before it is needed.
pub fn read_public_keys(paths: &[std::path::PathBuf]) -> Result<Vec<PublicKey>, SignatureError> {
    paths
        .iter()
        .map(|p| parse_public_key(&crate::fsio::read(p)?, &p.display().to_string()))
        .collect()
}

/// Reads the passphrase for a cosign key: `--passphrase-file` first (one trailing newline
/// dropped, as editors add one), else `$COSIGN_PASSWORD` (may be empty, as in cosign). It is
/// never printed.
pub fn passphrase(file: Option<&std::path::Path>) -> Result<Vec<u8>, SignatureError> {
    if let Some(path) = file {
        let mut bytes = crate::fsio::read(path)?;
        if bytes.ends_with(b"\n") {
            bytes.pop();
            if bytes.ends_with(b"\r") {
                bytes.pop();
            }
        }
        return Ok(bytes);
    }
    match std::env::var_os("COSIGN_PASSWORD") {
        Some(v) => Ok(v.into_encoded_bytes()),
        None => Err(SignatureError::NoPassphrase),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_round_trip_and_wrong_passphrase() {
        let pair = generate(b"secret").unwrap();
        assert!(
            pair.private_pem
                .starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n")
        );
        let key = decrypt_private_key(pair.private_pem.as_bytes(), b"secret", "k").unwrap();
        let public = parse_public_key(pair.public_pem.as_bytes(), "p").unwrap();
        assert_eq!(key.public(), public);
        let err = decrypt_private_key(pair.private_pem.as_bytes(), b"other", "k").unwrap_err();
        assert!(err.to_string().contains("wrong passphrase"), "{err}");
    }

    #[test]
    fn older_label_is_read_and_other_labels_refused() {
        let pair = generate(b"").unwrap();
        let old = pair
            .private_pem
            .replace("SIGSTORE PRIVATE KEY", "COSIGN PRIVATE KEY");
        assert!(decrypt_private_key(old.as_bytes(), b"", "k").is_ok());
        let bad = pair.private_pem.replace("SIGSTORE PRIVATE KEY", "RSA KEY");
        let err = decrypt_private_key(bad.as_bytes(), b"", "k").unwrap_err();
        assert!(
            err.to_string().contains("not a cosign private key"),
            "{err}"
        );
        assert!(decrypt_private_key(b"garbage", b"", "k").is_err());
    }

    // Test vectors from sigstore/cosign (Apache-2.0), pkg/cosign/keys_test.go: keys cosign
    // wrote with the passphrase "hello". cosign loads the first two and refuses the third (its
    // secretbox holds a SEC1 key, not PKCS#8); olmpack does the same.
    const COSIGN_SIGSTORE_KEY: &str = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\neyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6\nOCwicCI6MX0sInNhbHQiOiI3T3VGd2VsbWZZNXVId2NoaURSc210anNwZ2ZlZjFG\nMk5lOGFDTjVLYVpZPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94\nIiwibm9uY2UiOiJQNHk4OGhCb3ZTa09MbXN0bFVBaGJwdDJ0K2xTNUxQSCJ9LCJj\naXBoZXJ0ZXh0IjoiMnB1QzdyZldJOWh3bnJlQ2s4aUZDRlVwQlRrSzRJNlIvbFBF\ncnBDekpXUGpJWXl4eGVIL1A2VW52cFJHdVhla1NNb3JMdGhLamdoQ1JlNy82NDVH\nQWtoVm1LRC92eEF0S2EvbE1abENSQ3FlekJGUFd1dzNpeFRtZ2xhb2J1ZFVSbUVs\nbmNGOGlZbzBTMVl6Y1ZOMVFwY2J2c0dNcUlYRzVlbmdteGp5dCtBcXlyZTF0Q0Y0\nV01tU1BlaEljNlBqd2h1Q2xHaVpJUWRvTGc9PSJ9\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----";
    const COSIGN_COSIGN_LABEL_KEY: &str = "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\neyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6\nOCwicCI6MX0sInNhbHQiOiJ4WWdoc09JTUxUWGNOT0RsclNIOUNKc1FlOVFnZmN1\ncmUrMXlLdHh1TlkwPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94\nIiwibm9uY2UiOiI0cS9PSlVmaXJkSUkrUjZ0ajZBMmcyQ0JqL25xdFNicCJ9LCJj\naXBoZXJ0ZXh0IjoiKzB4Q3NzcFN0WStBczdKanJpOWtsbHBWd2JhcUI4ZWJNdWto\neS9aVE1MSXRsL3B1YS9jWVJvbytLRGxMWWdmOW1kSjk4K1FnQW9oTktoYnJPMTcw\nMHdBY1JTMjFDOE4zQUNJRUVZaWpOMllBNnMraGJSbkhjUnd4eGhDMDFtb2FvL0dO\nY1pmbEJheXZMV3pXblo4d2NDZ2ZpT1o1VXlRTEFJMHh0dnR6dEh3cTdDV1Vhd3V4\nRlhlNDZzck9TUE9SNHN6bytabWErUGovSFE9PSJ9\n-----END ENCRYPTED COSIGN PRIVATE KEY-----";
    const COSIGN_SEC1_INSIDE_KEY: &str = "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\neyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjo2NTUzNiwiciI6\nOCwicCI6MX0sInNhbHQiOiJHK3F5WTYrNzhNS0JzMXNGTGs1ajYwcS9kS3Z1czBW\nVkhlSHZybC9POTF3PSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94\nIiwibm9uY2UiOiJRc2JGdG13WDRDK2ttV3ZCcVRaMEFGOUFYdk1jRmg1SCJ9LCJj\naXBoZXJ0ZXh0IjoiREM5T28zeldiYVQzSXYwdFVnWEdycjUxYW1samwwNlQ5MTNP\nVkxPbWpuMWhnK2o2WXRUbWg3SGhZSlY1N2J5eGE0Q281bE9YYmRqbTJ3aklubEd1\nUm5aZCt5OExnekpSNzFSeEhKVzgrWmRlcFJmYWJMTjdHbDgrSFZEcERVQ3NxQnRh\nVngyblpGbFEwWUl1anZwbFphblNGaUVvdERLVGkxZ3VhUXIwUHNzYU01NXZxbTRY\nWS9rPSJ9\n-----END ENCRYPTED COSIGN PRIVATE KEY-----";

    #[test]
    fn cosign_test_vectors() {
        for k in [COSIGN_SIGSTORE_KEY, COSIGN_COSIGN_LABEL_KEY] {
            decrypt_private_key(k.as_bytes(), b"hello", "vector").unwrap();
            let err = decrypt_private_key(k.as_bytes(), b"hell", "vector").unwrap_err();
            assert!(err.to_string().contains("wrong passphrase"), "{err}");
        }
        let err =
            decrypt_private_key(COSIGN_SEC1_INSIDE_KEY.as_bytes(), b"hello", "vector").unwrap_err();
        assert!(err.to_string().contains("PKCS#8"), "{err}");
    }
}
