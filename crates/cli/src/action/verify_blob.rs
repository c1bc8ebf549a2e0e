//! `olmpack verify-blob`: one Sigstore bundle checked for one artifact (a file or a `sha256:`
//! digest), with a key or keyless against a trusted root, offline. The checks themselves live
//! in `signature::sigstore`; this door reads the files the flags name.

/// RFC 3339 text of a verified signing time, for the door to print (doors import only actions).
pub use crate::signature::sigstore::rfc3339;

pub use crate::signature::sigstore::{Refusal, Verified};

use super::step::trust;
use crate::fsio::untrusted::read_limited;
use crate::signature::sigstore::{self, Artifact, Signer, bundle::Bundle, trust::TrustedRoot};
use std::path::{Path, PathBuf};

/// Why the inputs could not be read (the command exits 2 with it).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The signer, the trusted root or the bundle's JSON is not usable (the text names the
    /// file).
    #[error("{0}")]
    Input(String),
    /// A file could not be read (missing, too large, not a regular file).
    #[error(transparent)]
    Read(#[from] crate::fsio::untrusted::UntrustedReadError),
    /// The signer or the trusted root could not be read.
    #[error(transparent)]
    Trust(#[from] trust::TrustError),
}

/// What `verify-blob` was asked.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// A file, or `sha256:<64 hex>` when it is not a path on disk.
    pub artifact: String,
    /// The bundle file.
    pub bundle: PathBuf,
    /// A PEM public key (key-signed bundles).
    pub key: Option<PathBuf>,
    /// `--certificate-identity`.
    pub identity: Option<String>,
    /// `--certificate-identity-regexp`.
    pub identity_regexp: Option<String>,
    /// `--certificate-oidc-issuer`.
    pub issuer: Option<String>,
    /// `--certificate-oidc-issuer-regexp`.
    pub issuer_regexp: Option<String>,
    /// A `trusted_root.json`; sigstore.dev's, carried in the binary, when `None`.
    pub trusted_root: Option<PathBuf>,
}

/// The artifact's SHA-256: the digest given, or the file's bytes hashed. As the conformance
/// protocol says, `sha256:HEX` is a digest only when it is well formed and not a path on disk.
pub fn artifact(spec: &str) -> Result<Artifact, SetupError> {
    if let Some(hex) = spec.strip_prefix("sha256:")
        && hex.len() == 64
        && hex.bytes().all(|c| c.is_ascii_hexdigit())
        && !Path::new(spec).exists()
    {
        let mut d = [0u8; 32];
        for (i, b) in d.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or_default();
        }
        return Ok(Artifact { sha256: d });
    }
    let f = std::fs::File::open(spec)
        .map_err(|e| SetupError::Input(format!("cannot read the artifact {spec}: {e}")))?;
    Artifact::of_reader(f)
        .map_err(|e| SetupError::Input(format!("cannot read the artifact {spec}: {e}")))
}

/// Reads the signer, the trusted root and the bundle the request names.
pub fn prepare(req: &Request) -> Result<(Bundle, Signer, TrustedRoot), SetupError> {
    let id = trust::Identity {
        identity: req.identity.clone(),
        identity_regexp: req.identity_regexp.clone(),
        issuer: req.issuer.clone(),
        issuer_regexp: req.issuer_regexp.clone(),
    };
    let signer = trust::signer(req.key.as_deref(), &id)?;
    let root = trust::trusted_root(req.trusted_root.as_ref())?;
    let bytes = read_limited(&req.bundle, trust::MAX_JSON)?;
    let bundle = Bundle::from_json(&bytes)
        .map_err(|e| SetupError::Input(format!("{}: {e}", req.bundle.display())))?;
    Ok((bundle, signer, root))
}

/// Runs `verify-blob`: `Ok(Err(refusal))` when the bundle was read and refused.
pub fn verify_blob(req: &Request) -> Result<Result<Verified, Refusal>, SetupError> {
    let art = artifact(&req.artifact)?;
    let (bundle, signer, root) = prepare(req)?;
    Ok(sigstore::verify(
        &bundle,
        &art,
        &signer,
        &root,
        trust::now(),
    ))
}
