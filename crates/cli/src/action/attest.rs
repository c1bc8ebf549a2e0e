//! `olmpack attest` and `olmpack verify-attestation`: an in-toto statement about one image,
//! signed with a cosign key and attached as cosign attaches it (the attest step), and every
//! attestation of an image verified with a key or keyless (`signature::attestation`), the
//! predicate type filtered. This door reads the files the flags name.

pub use crate::signature::attestation::{Attached, AttestationRefusal, Found, predicate_type};
pub use crate::signature::image_signing::{CosignFormat, RegistryOptions};

use super::step::attest::{self as attest_step, Predicate};
use super::step::trust;
/// The keyless identity flags.
pub use super::step::trust::Identity;
use crate::fsio::untrusted::read_limited;
use crate::location::Location;
use crate::signature::attestation::{self as attestation, Verifier};
use crate::signature::keyless::Keyless;
use crate::signature::store::Target;
use std::path::{Path, PathBuf};

/// The most a predicate file may hold (an SBOM of a large image is a few MiB).
const MAX_PREDICATE: u64 = 64 << 20;

/// Why `attest` or `verify-attestation` could not run (exit 2); a refused attestation is an
/// outcome, not an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttestError {
    /// `--type` is neither a short name cosign knows nor a URI.
    #[error(
        "--type {0:?}: give slsaprovenance1, slsaprovenance02, spdxjson, cyclonedx, vuln, custom or a predicate type URI"
    )]
    Type(String),
    /// The predicate file cannot be read.
    #[error("cannot read the predicate {}", path.display())]
    PredicateRead {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::fsio::untrusted::UntrustedReadError,
    },
    /// The predicate file is not JSON (line and column named).
    #[error("{}:{line}:{column}: the predicate is not JSON: {reason}", path.display())]
    PredicateJson {
        /// The file.
        path: PathBuf,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What serde said.
        reason: String,
    },
    /// The key, passphrase, signer or trusted root could not be read.
    #[error("{0}")]
    Setup(String),
    /// The verifying key, identity flags or trusted root could not be read.
    #[error(transparent)]
    Trust(Box<super::step::trust::TrustError>),
    /// The signing key file could not be read.
    #[error(transparent)]
    KeyRead(#[from] crate::fsio::untrusted::UntrustedReadError),
    /// Reading or writing beside the image failed.
    #[error(transparent)]
    Signature(#[from] crate::signature::SignatureError),
}

/// What `attest` was asked.
#[derive(Debug, Clone)]
pub struct AttestRequest {
    /// The image (a registry reference or `oci:` layout).
    pub image: Location,
    /// The cosign private key.
    pub key: PathBuf,
    /// Its passphrase file (else `$COSIGN_PASSWORD`).
    pub passphrase_file: Option<PathBuf>,
    /// The predicate file (JSON).
    pub predicate: PathBuf,
    /// `--type`: a short name or a URI.
    pub predicate_type: String,
    /// Where it goes: a bundle referrer (cosign 3), the `.att` tag (cosign 2), or both.
    pub format: CosignFormat,
}

/// A predicate file read and parsed, its errors naming the file (and line).
pub fn read_predicate(path: &Path) -> Result<serde_json::Value, AttestError> {
    let bytes = read_limited(path, MAX_PREDICATE).map_err(|e| AttestError::PredicateRead {
        path: path.to_path_buf(),
        source: e,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| AttestError::PredicateJson {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        reason: e.to_string(),
    })
}

/// Runs `attest`: every input read before anything is written; the digest attested and what
/// was attached.
pub fn attest(
    req: &AttestRequest,
    registry: &RegistryOptions,
) -> Result<(String, Vec<Attached>), AttestError> {
    use crate::signature::keys;
    let predicate_type = predicate_type(&req.predicate_type)
        .ok_or_else(|| AttestError::Type(req.predicate_type.clone()))?
        .to_string();
    let predicate = read_predicate(&req.predicate)?;
    let pem = read_limited(&req.key, 1 << 20)?;
    let pass = keys::passphrase(req.passphrase_file.as_deref())
        .map_err(|e| AttestError::Setup(e.to_string()))?;
    let key = keys::decrypt_private_key(&pem, &pass, &req.key.display().to_string())
        .map_err(|e| AttestError::Setup(e.to_string()))?;
    let target = Target::resolve(&req.image, registry)?;
    let name = target.reference().map(|r| r.name()).unwrap_or_default();
    let attached = attest_step::attach(
        &target,
        &name,
        &key,
        req.format,
        &Predicate {
            predicate_type,
            predicate,
        },
    )?;
    Ok((target.digest.clone(), attached))
}

/// What `verify-attestation` was asked.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    /// The image.
    pub image: Location,
    /// Public keys (any one verifying is enough); empty for keyless.
    pub keys: Vec<PathBuf>,
    /// Keyless: the identity and issuer to match.
    pub identity: Identity,
    /// Keyless: the trusted root (sigstore.dev's when `None`).
    pub trusted_root: Option<PathBuf>,
    /// `--type`: only statements of this predicate type pass.
    pub predicate_type: Option<String>,
}

/// What `verify-attestation` found.
#[derive(Debug, Clone)]
pub struct Verification {
    /// The image digest checked.
    pub digest: String,
    /// Each attestation found, verified or refused.
    pub found: Vec<Found>,
}

impl Verification {
    /// Whether at least one attestation verified (and passed the type filter).
    pub fn any_valid(&self) -> bool {
        self.found.iter().any(|f| f.result.is_ok())
    }
}

/// Runs `verify-attestation`.
pub fn verify(
    req: &VerifyRequest,
    registry: &RegistryOptions,
) -> Result<Verification, AttestError> {
    let wanted = match &req.predicate_type {
        Some(t) => Some(
            predicate_type(t)
                .ok_or_else(|| AttestError::Type(t.clone()))?
                .to_string(),
        ),
        None => None,
    };
    let setup = |e: trust::TrustError| AttestError::Trust(Box::new(e));
    let keys = if req.keys.is_empty() {
        Vec::new()
    } else {
        if req.identity.given() {
            return Err(AttestError::Setup(
                "give --key or --certificate-identity, not both".into(),
            ));
        }
        req.keys
            .iter()
            .map(|k| trust::public_key(k))
            .collect::<Result<Vec<_>, _>>()
            .map_err(setup)?
    };
    let keyless = if keys.is_empty() {
        Some(Keyless {
            signer: trust::keyless(&req.identity).map_err(setup)?,
            root: trust::trusted_root(req.trusted_root.as_ref()).map_err(setup)?,
            now: trust::now(),
        })
    } else {
        None
    };
    let target = Target::resolve(&req.image, registry)?;
    let verifier = match &keyless {
        Some(k) => Verifier::Keyless(k),
        None => Verifier::Keys(&keys),
    };
    let found = attestation::verify(&target, verifier, wanted.as_deref())?;
    Ok(Verification {
        digest: target.digest.clone(),
        found,
    })
}
