//! Image signatures: signing and verifying bundle and catalog images in the two formats the
//! field uses, so a packaging tool can sign what it pushes and check what it reads.
//!
//! - [`keys`]: cosign key files (ECDSA P-256; the private key encrypted with scrypt and a NaCl
//!   secretbox exactly as cosign writes it, so keys move between olmpack and cosign both ways);
//! - [`cosign`]: cosign's tag-based signatures (`sha256-<hex>.sig`, one layer per signature,
//!   simple-signing payload) and cosign v3 Sigstore bundles, checked offline with a key;
//! - [`bundle_sign`]: signing in the Sigstore bundle format cosign 3 writes (a bundle v0.3 as
//!   an OCI 1.1 referrer, or the referrers tag fallback), and attaching in-toto statements;
//! - [`attestation`]: in-toto attestations attached (a bundle referrer, cosign 2's `.att` tag)
//!   and verified with a key or keyless, failing closed;
//! - [`keyless`]: an image's keyless signatures (a `.sig` layer with a Fulcio certificate and
//!   a Rekor receipt, or a bundle referrer), through the one Sigstore verifier;
//! - [`identity`]: which image a signature may stand for (`signedIdentity`, as containers/image
//!   matches it);
//! - [`simple`]: containers' "simple signing" (an OpenPGP signed message whose literal data is
//!   the atomic container signature JSON), what skopeo, podman and CRI-O verify;
//! - [`lookaside`]: `registries.d` and the lookaside store the simple signatures live in;
//! - [`store`]: where the signed image is (a registry or an OCI layout) and how signature
//!   artifacts are read from and written beside it.
//!
//! Verification never trusts a payload for anything it did not check: the digest a payload
//! names must be the digest of the manifest that was read, and a failure says which check
//! failed for each signature found.

pub mod attestation;
pub mod bundle_sign;
pub mod cosign;
pub mod error;
pub mod identity;
pub mod image_signing;
pub mod keyless;
pub mod keys;
pub mod lookaside;
pub mod payload;
pub mod pgp_validity;
pub mod policy;
pub mod public_key;
pub mod sigstore;
pub mod simple;
pub mod store;

pub use error::SignatureError;

/// Why one signature found beside an image was not accepted: printed per signature so a user
/// sees which one was wrong and how, not only that none verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The signature does not verify with any of the keys given.
    WrongKey(String),
    /// The signature verifies with a trusted key that cannot vouch for it: revoked, expired,
    /// not bound to the trusted key, not for signing, or the signature itself expired.
    KeyNotValid(String),
    /// The payload names another manifest digest than the image's.
    DigestMismatch {
        /// The digest of the image that was read.
        expected: String,
        /// The digest the payload names.
        found: String,
    },
    /// The payload names another image than the one expected.
    IdentityMismatch {
        /// The identity expected (the reference as given, or `--identity`).
        expected: String,
        /// The identity the payload claims.
        found: String,
    },
    /// The signature or its payload cannot be read as the format requires.
    Malformed(String),
    /// A keyless signature refused by the Sigstore verifier, which names the check (the
    /// certificate's identity, issuer or validity, the SCT, the log entry, its SET, ...).
    Keyless(sigstore::Refusal),
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::WrongKey(why) => write!(f, "wrong key: {why}"),
            Rejection::KeyNotValid(why) => write!(f, "key not valid: {why}"),
            Rejection::DigestMismatch { expected, found } => write!(
                f,
                "digest mismatch: the payload signs {found}, the image is {expected}"
            ),
            Rejection::IdentityMismatch { expected, found } => write!(
                f,
                "identity mismatch: {}",
                identity::explain(expected, found)
            ),
            Rejection::Malformed(why) => write!(f, "malformed: {why}"),
            Rejection::Keyless(r) => write!(f, "{r}"),
        }
    }
}

/// The outcome for one signature found beside an image.
#[derive(Debug, Clone)]
pub struct Checked {
    /// Where the signature was found (`…:sha256-<hex>.sig layer 2`, a lookaside URL).
    pub source: String,
    /// The verified payload (JSON), or why the signature was refused.
    pub result: Result<serde_json::Value, Rejection>,
}

/// sha256 of `bytes` as `sha256:<hex>` (the image module's, so digests are spelled alike).
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    crate::image::digest::sha256_digest(bytes)
}
