//! The trust step: who may have signed (a public key, or a keyless identity and issuer) and
//! the Sigstore trusted root, read from the files and flags a verifying door names. Written
//! once for `verify-blob` and `verify-attestation`, so both read keys, roots and identity
//! flags by the same rules and refuse the same mistakes.

use crate::fsio::untrusted::read_limited;
use crate::signature::sigstore::{Matcher, Signer, trust::TrustedRoot};
use std::path::{Path, PathBuf};

/// The most a trusted root (or bundle) file may hold: a few KiB in the field.
pub const MAX_JSON: u64 = 16 << 20;

/// Why the signer or the trusted root could not be read (a usage error, exit 2). File
/// errors stay typed so the door prints their whole chain.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The flags do not fit together, or a file holds no usable key or root (the text names
    /// the flag or the file).
    #[error("{0}")]
    Usage(String),
    /// A key or trusted root file could not be read (missing, too large, not a regular file).
    #[error(transparent)]
    Read(#[from] crate::fsio::untrusted::UntrustedReadError),
}

/// The identity flags as typed (`--certificate-identity[-regexp]`,
/// `--certificate-oidc-issuer[-regexp]`).
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// `--certificate-identity`.
    pub identity: Option<String>,
    /// `--certificate-identity-regexp`.
    pub identity_regexp: Option<String>,
    /// `--certificate-oidc-issuer`.
    pub issuer: Option<String>,
    /// `--certificate-oidc-issuer-regexp`.
    pub issuer_regexp: Option<String>,
}

impl Identity {
    /// Whether any identity or issuer flag was given.
    pub fn given(&self) -> bool {
        self.identity.is_some()
            || self.identity_regexp.is_some()
            || self.issuer.is_some()
            || self.issuer_regexp.is_some()
    }
}

fn matcher(exact: &Option<String>, re: &Option<String>, flag: &str) -> Result<Matcher, TrustError> {
    match (exact, re) {
        (Some(s), None) => Ok(Matcher::Exact(s.clone())),
        (None, Some(r)) => Matcher::go_regexp(r).map_err(|e| {
            TrustError::Usage(format!(
                "--{flag}-regexp {r:?} is not a regular expression: {e}"
            ))
        }),
        (Some(_), Some(_)) => Err(TrustError::Usage(format!(
            "give --{flag} or --{flag}-regexp, not both"
        ))),
        (None, None) => Err(TrustError::Usage(format!(
            "keyless verification needs --{flag} (or --{flag}-regexp); give --key FILE for a key-signed bundle"
        ))),
    }
}

/// The signer of a keyless verification, from the identity flags.
pub fn keyless(id: &Identity) -> Result<Signer, TrustError> {
    Ok(Signer::Keyless {
        identity: matcher(&id.identity, &id.identity_regexp, "certificate-identity")?,
        issuer: matcher(&id.issuer, &id.issuer_regexp, "certificate-oidc-issuer")?,
    })
}

/// A PEM public key file, read with a cap.
pub fn public_key(path: &Path) -> Result<crate::signature::public_key::PublicKey, TrustError> {
    let pem = read_limited(path, 1 << 20)?;
    crate::signature::public_key::PublicKey::from_pem(&pem, &path.display().to_string())
        .map_err(|e| TrustError::Usage(e.to_string()))
}

/// The signer: the key when `key` is given, else the keyless identity (not both).
pub fn signer(key: Option<&Path>, id: &Identity) -> Result<Signer, TrustError> {
    match key {
        Some(k) => {
            // cosign ignores the certificate flags beside a key; a flag that would be ignored
            // must not look checked, so the mix is refused.
            if id.given() {
                return Err(TrustError::Usage(
                    "give --key or --certificate-identity/--certificate-oidc-issuer (keyless), not both: with a key the certificate's identity and issuer are not checked".into(),
                ));
            }
            Ok(Signer::Key(public_key(k)?))
        }
        None => keyless(id),
    }
}

/// `trusted_root.json` from `path`, else sigstore.dev's public-good root carried in olmpack.
pub fn trusted_root(path: Option<&PathBuf>) -> Result<TrustedRoot, TrustError> {
    match path {
        Some(p) => {
            let bytes = read_limited(p, MAX_JSON)?;
            TrustedRoot::from_json(&bytes)
                .map_err(|e| TrustError::Usage(format!("{}: {e}", p.display())))
        }
        None => Ok(TrustedRoot::production()),
    }
}

/// Now, in Unix seconds (the log's time checks).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}
