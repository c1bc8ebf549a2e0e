//! `olmpack sign` and `olmpack verify`: one image, cosign and/or simple signing. The signing
//! and verifying themselves live in `signature::image_signing`; this door reads the keys, the
//! policy and the stores the flags name.

pub use crate::signature::bundle_sign::BundleContent;
pub use crate::signature::image_signing::{
    CosignFormat, RegistryOptions, SignOptions, Verification, VerifyOptions, Written, check_simple,
    default_identity, identity_hint, mirror_note, nothing_found, sign, sign_target, verify,
    verify_target,
};

use crate::signature::lookaside::RegistriesD;
use crate::signature::simple::{GpgSigner, Keyring};

/// What the signing commands name: the platform their registry options are read for (signing
/// and verifying address a manifest, never one platform of it).
pub mod types {
    pub use crate::image::Platform;
}

/// Why the keys, the policy or the stores could not be read (the command exits 2 with it).
/// The library's error travels typed, causes included: only the door renders it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A key file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The key file.
        path: String,
        /// What the read said.
        source: std::io::Error,
    },
    /// A flag names something that is neither a file nor a fingerprint.
    #[error("{0}")]
    Usage(String),
    /// The signature library refused the keys, the policy or the stores.
    #[error(transparent)]
    Library(Box<dyn std::error::Error + Send + Sync>),
}

impl SetupError {
    fn from_error(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        SetupError::Library(Box::new(e))
    }
}

fn read_key(path: &std::path::Path) -> Result<Vec<u8>, SetupError> {
    std::fs::read(path).map_err(|source| SetupError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The signing flags, as typed.
#[derive(Debug, Clone, Copy, Default)]
pub struct SignKeys<'a> {
    /// cosign private key file.
    pub key: Option<&'a std::path::Path>,
    /// OpenPGP secret key file, or a fingerprint in the GnuPG keyring.
    pub gpg_key: Option<&'a str>,
    /// File holding the passphrase.
    pub passphrase_file: Option<&'a std::path::Path>,
    /// The reference the signature claims.
    pub identity: Option<&'a str>,
    /// registries.d folder naming the lookaside stores.
    pub registries_d: Option<&'a std::path::Path>,
    /// Where the cosign key's signature goes.
    pub format: CosignFormat,
    /// What a Sigstore bundle signs.
    pub bundle_content: BundleContent,
}

/// The signing options from the flags: keys read and decrypted now, before anything is pushed,
/// so a wrong passphrase costs no upload.
pub fn sign_options(flags: &SignKeys<'_>) -> Result<SignOptions, SetupError> {
    use crate::signature::keys;
    let mut opts = SignOptions {
        identity: flags.identity.map(str::to_string),
        registries_d: RegistriesD::load(&RegistriesD::default_dir(flags.registries_d))
            .map_err(SetupError::from_error)?,
        cosign_format: flags.format,
        bundle_content: flags.bundle_content,
        ..SignOptions::default()
    };
    if let Some(path) = flags.key {
        let pem = read_key(path)?;
        let pass = keys::passphrase(flags.passphrase_file).map_err(SetupError::from_error)?;
        opts.cosign_key = Some(
            keys::decrypt_private_key(&pem, &pass, &path.display().to_string())
                .map_err(SetupError::from_error)?,
        );
    }
    if let Some(k) = flags.gpg_key {
        let pass = match flags.passphrase_file {
            Some(p) if flags.key.is_none() => {
                keys::passphrase(Some(p)).map_err(SetupError::from_error)?
            }
            _ => Vec::new(),
        };
        let path = std::path::Path::new(k);
        opts.gpg = Some(if path.is_file() {
            GpgSigner::from_bytes(&read_key(path)?, k, pass).map_err(SetupError::from_error)?
        } else if k.len() >= 16 && k.chars().all(|c| c.is_ascii_hexdigit()) {
            GpgSigner::from_gnupg(k, pass).map_err(SetupError::from_error)?
        } else {
            return Err(SetupError::Usage(format!(
                "--gpg-key {k}: no such file, and not a key fingerprint (16 or 40 hex digits)"
            )));
        });
    }
    Ok(opts)
}

/// The keyless flags of `verify` as typed: the identity and issuer (exact or Go RE2) and the
/// trusted root (sigstore.dev's, carried in olmpack, when none is given).
pub use super::step::trust::Identity as KeylessIdentity;

/// What `verify` is given to check with, as typed.
#[derive(Debug, Clone, Copy, Default)]
pub struct VerifyFlags<'a> {
    /// `--identity`: the image the signatures must name.
    pub identity: Option<&'a str>,
    /// registries.d folder naming the lookaside stores.
    pub registries_d: Option<&'a std::path::Path>,
    /// cosign public key files.
    pub cosign_keys: &'a [std::path::PathBuf],
    /// OpenPGP keyrings.
    pub gpg_keyrings: &'a [std::path::PathBuf],
    /// Keyless: the certificate identity and issuer flags.
    pub keyless: Option<&'a KeylessIdentity>,
    /// Keyless: `--trusted-root`.
    pub trusted_root: Option<&'a std::path::PathBuf>,
}

impl VerifyFlags<'_> {
    /// Whether a keyless verification was asked for (any identity flag or a trusted root).
    pub fn keyless_asked(&self) -> bool {
        self.keyless.is_some_and(KeylessIdentity::given) || self.trusted_root.is_some()
    }
}

/// The verification options from the flags: every cosign public key and OpenPGP keyring read
/// now, the lookaside stores from `registries_d`, and for keyless the identity matchers and
/// the trusted root (a key and keyless flags together are refused, as `verify-blob` refuses
/// them: with a key, the certificate flags would look checked and not be).
pub fn verify_options(flags: &VerifyFlags<'_>) -> Result<VerifyOptions, SetupError> {
    use crate::signature::keys;
    let mut opts = VerifyOptions {
        identity: flags.identity.map(str::to_string),
        registries_d: RegistriesD::load(&RegistriesD::default_dir(flags.registries_d))
            .map_err(SetupError::from_error)?,
        ..VerifyOptions::default()
    };
    if flags.keyless_asked() {
        if !flags.cosign_keys.is_empty() {
            return Err(SetupError::Usage(
                "give --key or --certificate-identity/--certificate-oidc-issuer (keyless), not both: with a key the certificate's identity and issuer are not checked".into(),
            ));
        }
        let id = flags.keyless.cloned().unwrap_or_default();
        let usage = |e: super::step::trust::TrustError| SetupError::from_error(e);
        opts.keyless = Some(crate::signature::keyless::Keyless {
            signer: super::step::trust::keyless(&id).map_err(usage)?,
            root: super::step::trust::trusted_root(flags.trusted_root).map_err(usage)?,
            now: super::step::trust::now(),
        });
    }
    let (cosign_keys, gpg_keyrings) = (flags.cosign_keys, flags.gpg_keyrings);
    for k in cosign_keys {
        opts.cosign_keys.push(
            keys::parse_public_key(&read_key(k)?, &k.display().to_string())
                .map_err(SetupError::from_error)?,
        );
    }
    for k in gpg_keyrings {
        let bytes = read_key(k)?;
        match &mut opts.keyring {
            Some(ring) => ring
                .add(&bytes, &k.display().to_string())
                .map_err(SetupError::from_error)?,
            None => {
                opts.keyring = Some(
                    Keyring::from_bytes(&bytes, &k.display().to_string())
                        .map_err(SetupError::from_error)?,
                )
            }
        }
    }
    Ok(opts)
}

/// A cosign key pair, PEM-encoded (the private key encrypted as cosign writes it).
pub use crate::signature::keys::KeyPairPem;

/// `key generate`: a new cosign key pair (ECDSA P-256), encrypted with the passphrase from
/// `passphrase_file` (else `$COSIGN_PASSWORD`, which may be empty).
pub fn generate_key(passphrase_file: Option<&std::path::Path>) -> Result<KeyPairPem, SetupError> {
    use crate::signature::keys;
    let pass = keys::passphrase(passphrase_file).map_err(SetupError::from_error)?;
    keys::generate(&pass).map_err(SetupError::from_error)
}

/// The policy check every reading door takes, kept under its old name for the commands.
pub use super::step::policy::{PolicyCheckError, PolicyGate, check_policy};

/// What a build attests after signing (`--attest-provenance`, `--attest-sbom`).
pub use super::step::attest::BuildAttestations;
