//! `olmpack verify-blob`: one Sigstore bundle checked for one artifact (a file or a `sha256:`
//! digest), with a key or keyless against a trusted root, offline. The checks themselves live
//! in `signature::sigstore`; this door reads the files the flags name.

/// RFC 3339 text of a verified signing time, for the door to print (doors import only actions).
pub use crate::signature::sigstore::rfc3339;

pub use crate::signature::sigstore::{Refusal, Verified};

use crate::fsio::untrusted::read_limited;
use crate::signature::sigstore::{
    self, Artifact, Matcher, Signer, bundle::Bundle, trust::TrustedRoot,
};
use std::path::{Path, PathBuf};

/// The most a bundle or trusted root file may hold (both are a few KiB in the field).
const MAX_JSON: u64 = 16 << 20;

/// Why the inputs could not be read (the command exits 2 with it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(String);

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
        .map_err(|e| SetupError(format!("cannot read the artifact {spec}: {e}")))?;
    Artifact::of_reader(f).map_err(|e| SetupError(format!("cannot read the artifact {spec}: {e}")))
}

fn matcher(exact: &Option<String>, re: &Option<String>, flag: &str) -> Result<Matcher, SetupError> {
    match (exact, re) {
        (Some(s), None) => Ok(Matcher::Exact(s.clone())),
        (None, Some(r)) => Matcher::go_regexp(r).map_err(|e| {
            SetupError(format!(
                "--{flag}-regexp {r:?} is not a regular expression: {e}"
            ))
        }),
        (Some(_), Some(_)) => Err(SetupError(format!(
            "give --{flag} or --{flag}-regexp, not both"
        ))),
        (None, None) => Err(SetupError(format!(
            "keyless verification needs --{flag} (or --{flag}-regexp); give --key FILE for a key-signed bundle"
        ))),
    }
}

/// Reads the signer, the trusted root and the bundle the request names.
pub fn prepare(req: &Request) -> Result<(Bundle, Signer, TrustedRoot), SetupError> {
    let signer = match &req.key {
        Some(k) => {
            // cosign refuses the mix too ("--key and --certificate-* are mutually
            // exclusive" in spirit): a flag that would be ignored must not look checked.
            if req.identity.is_some()
                || req.identity_regexp.is_some()
                || req.issuer.is_some()
                || req.issuer_regexp.is_some()
            {
                return Err(SetupError(
                    "give --key or --certificate-identity/--certificate-oidc-issuer (keyless), not both: with a key the certificate's identity and issuer are not checked".into(),
                ));
            }
            let pem =
                read_limited(k, 1 << 20).map_err(|e| SetupError(crate::errors::error_chain(&e)))?;
            Signer::Key(
                crate::signature::public_key::PublicKey::from_pem(&pem, &k.display().to_string())
                    .map_err(|e| SetupError(e.to_string()))?,
            )
        }
        None => Signer::Keyless {
            identity: matcher(&req.identity, &req.identity_regexp, "certificate-identity")?,
            issuer: matcher(&req.issuer, &req.issuer_regexp, "certificate-oidc-issuer")?,
        },
    };
    let root = match &req.trusted_root {
        Some(p) => {
            let bytes = read_limited(p, MAX_JSON)
                .map_err(|e| SetupError(crate::errors::error_chain(&e)))?;
            TrustedRoot::from_json(&bytes)
                .map_err(|e| SetupError(format!("{}: {e}", p.display())))?
        }
        None => TrustedRoot::production(),
    };
    let bytes = read_limited(&req.bundle, MAX_JSON)
        .map_err(|e| SetupError(crate::errors::error_chain(&e)))?;
    let bundle = Bundle::from_json(&bytes)
        .map_err(|e| SetupError(format!("{}: {e}", req.bundle.display())))?;
    Ok((bundle, signer, root))
}

/// Runs `verify-blob`: `Ok(Err(refusal))` when the bundle was read and refused.
pub fn verify_blob(req: &Request) -> Result<Result<Verified, Refusal>, SetupError> {
    let art = artifact(&req.artifact)?;
    let (bundle, signer, root) = prepare(req)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    Ok(sigstore::verify(&bundle, &art, &signer, &root, now))
}
