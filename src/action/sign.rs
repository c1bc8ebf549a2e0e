//! `olmpack sign` and `olmpack verify`: one image, cosign and/or simple signing. The signing
//! and verifying themselves live in `signature::image_signing`; this door reads the keys, the
//! policy and the stores the flags name.

pub use crate::signature::image_signing::{
    RegistryOptions, SignOptions, Verification, VerifyOptions, Written, check_simple,
    default_identity, identity_hint, mirror_note, nothing_found, sign, sign_target, verify,
    verify_target,
};

use crate::location::Location;
use crate::signature::lookaside::RegistriesD;
use crate::signature::simple::{GpgSigner, Keyring};

/// What the signing commands name: the platform their registry options are read for (signing
/// and verifying address a manifest, never one platform of it).
pub mod types {
    pub use crate::image::Platform;
}

/// Why the keys, the policy or the stores could not be read: the whole message, causes
/// included (the command exits 2 with it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(String);

impl SetupError {
    fn from_error(e: &dyn std::error::Error) -> Self {
        SetupError(crate::errors::error_chain(e))
    }
}

fn read_key(path: &std::path::Path) -> Result<Vec<u8>, SetupError> {
    std::fs::read(path).map_err(|e| SetupError(format!("cannot read {}: {e}", path.display())))
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
}

/// The signing options from the flags: keys read and decrypted now, before anything is pushed,
/// so a wrong passphrase costs no upload.
pub fn sign_options(flags: &SignKeys<'_>) -> Result<SignOptions, SetupError> {
    use crate::signature::keys;
    let e = |e: &dyn std::error::Error| SetupError::from_error(e);
    let mut opts = SignOptions {
        identity: flags.identity.map(str::to_string),
        registries_d: RegistriesD::load(&RegistriesD::default_dir(flags.registries_d))
            .map_err(|x| e(&x))?,
        ..SignOptions::default()
    };
    if let Some(path) = flags.key {
        let pem = read_key(path)?;
        let pass = keys::passphrase(flags.passphrase_file).map_err(|x| e(&x))?;
        opts.cosign_key = Some(
            keys::decrypt_private_key(&pem, &pass, &path.display().to_string())
                .map_err(|x| e(&x))?,
        );
    }
    if let Some(k) = flags.gpg_key {
        let pass = match flags.passphrase_file {
            Some(p) if flags.key.is_none() => keys::passphrase(Some(p)).map_err(|x| e(&x))?,
            _ => Vec::new(),
        };
        let path = std::path::Path::new(k);
        opts.gpg = Some(if path.is_file() {
            GpgSigner::from_bytes(&read_key(path)?, k, pass).map_err(|x| e(&x))?
        } else if k.len() >= 16 && k.chars().all(|c| c.is_ascii_hexdigit()) {
            GpgSigner::from_gnupg(k, pass).map_err(|x| e(&x))?
        } else {
            return Err(SetupError(format!(
                "--gpg-key {k}: no such file, and not a key fingerprint (16 or 40 hex digits)"
            )));
        });
    }
    Ok(opts)
}

/// The verification options from the flags: every cosign public key and OpenPGP keyring read
/// now, the lookaside stores from `registries_d`.
pub fn verify_options(
    identity: Option<&str>,
    registries_d: Option<&std::path::Path>,
    cosign_keys: &[std::path::PathBuf],
    gpg_keyrings: &[std::path::PathBuf],
) -> Result<VerifyOptions, SetupError> {
    use crate::signature::keys;
    let e = |e: &dyn std::error::Error| SetupError::from_error(e);
    let mut opts = VerifyOptions {
        identity: identity.map(str::to_string),
        registries_d: RegistriesD::load(&RegistriesD::default_dir(registries_d))
            .map_err(|x| e(&x))?,
        ..VerifyOptions::default()
    };
    for k in cosign_keys {
        opts.cosign_keys.push(
            keys::parse_public_key(&read_key(k)?, &k.display().to_string()).map_err(|x| e(&x))?,
        );
    }
    for k in gpg_keyrings {
        let bytes = read_key(k)?;
        match &mut opts.keyring {
            Some(ring) => ring
                .add(&bytes, &k.display().to_string())
                .map_err(|x| e(&x))?,
            None => {
                opts.keyring =
                    Some(Keyring::from_bytes(&bytes, &k.display().to_string()).map_err(|x| e(&x))?)
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
    let pass = keys::passphrase(passphrase_file).map_err(|x| SetupError::from_error(&x))?;
    keys::generate(&pass).map_err(|x| SetupError::from_error(&x))
}

/// Why an image may not be read under the signature policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyCheckError {
    /// The policy refuses the image (the command exits 1).
    #[error("{0}")]
    Refused(String),
    /// The policy or the stores could not be read (exit 2), the whole message.
    #[error("{0}")]
    Setup(String),
}

/// A signature policy loaded once for a run (the policy file, and the lookaside stores from
/// `$OLMPACK_REGISTRIES_D` or the default registries.d), through which every image a command
/// reads passes first: a command that reads several images (`catalog mirror`: the catalog, its
/// bundles and operand images, `--base`) checks each with the same policy.
#[derive(Debug, Clone)]
pub struct PolicyGate {
    policy: crate::signature::policy::Policy,
    registries_d: RegistriesD,
}

impl PolicyGate {
    /// The policy `policy` names (`default`, a file, or `$OLMPACK_POLICY`); `None` when none is
    /// given, and then images are read without a check.
    pub fn load(policy: Option<&str>) -> Result<Option<PolicyGate>, PolicyCheckError> {
        use crate::signature::policy::Policy;
        let setup =
            |e: &dyn std::error::Error| PolicyCheckError::Setup(crate::errors::error_chain(e));
        let Some(path) = Policy::locate(policy).map_err(|e| setup(&e))? else {
            return Ok(None);
        };
        let policy = Policy::load(&path).map_err(|e| setup(&e))?;
        let rd_dir = std::env::var_os("OLMPACK_REGISTRIES_D").map(std::path::PathBuf::from);
        let registries_d = RegistriesD::load(&RegistriesD::default_dir(rd_dir.as_deref()))
            .map_err(|e| setup(&e))?;
        Ok(Some(PolicyGate {
            policy,
            registries_d,
        }))
    }

    /// Checks `location` and gives back the location to read: pinned to the manifest digest
    /// whose signatures were verified ([`Location::pinned`]), so the read cannot be served
    /// another manifest than the one checked. Folders are not images and pass as they are.
    pub fn admit(
        &self,
        location: &Location,
        registry: &RegistryOptions,
    ) -> Result<Location, PolicyCheckError> {
        use crate::signature::policy::PolicyError;
        if matches!(location.place(), crate::location::Place::Path(_)) {
            return Ok(location.clone());
        }
        match self.policy.check(location, registry, &self.registries_d) {
            Ok(Some(digest)) => Ok(location.pinned(&digest)),
            Ok(None) => Ok(location.clone()),
            Err(PolicyError::Refused(r)) => Err(PolicyCheckError::Refused(r.to_string())),
            Err(e) => Err(PolicyCheckError::Setup(crate::errors::error_chain(&e))),
        }
    }
}

/// Checks `location` against the containers policy `policy` names (`default`, a file, or
/// `$OLMPACK_POLICY`; nothing when none is found) and gives back the location to read, pinned
/// to the verified digest ([`PolicyGate::admit`]); registry references and local images are
/// checked, folders are not images and pass. Lookaside stores come from
/// `$OLMPACK_REGISTRIES_D` or the default registries.d.
pub fn check_policy(
    policy: Option<&str>,
    location: &Location,
    registry: &RegistryOptions,
) -> Result<Location, PolicyCheckError> {
    match PolicyGate::load(policy)? {
        Some(gate) => gate.admit(location, registry),
        None => Ok(location.clone()),
    }
}
