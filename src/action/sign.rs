//! `olmpack sign` and `olmpack verify`: one image, cosign and/or simple signing, composed from
//! [`crate::signature`]. Also the signing step of `bundle build --push` and `catalog build
//! --push`, which call [`sign`] on what they just pushed.

use crate::location::Location;
use crate::reference::Reference;
use crate::signature::keys::PublicKey;
use crate::signature::lookaside::{self, RegistriesD};
use crate::signature::simple::{self, GpgSigner, IdentityRule, Keyring};
use crate::signature::store::Target;
use crate::signature::{Checked, SignatureError, cosign};
/// The registry options signing and verifying read images with.
pub use crate::transport::RegistryOptions;

/// How to sign.
#[derive(Debug, Default)]
pub struct SignOptions {
    /// A cosign private key (decrypted).
    pub cosign_key: Option<crate::signature::keys::PrivateKey>,
    /// An OpenPGP secret key for simple signing.
    pub gpg: Option<GpgSigner>,
    /// The identity to claim (`docker-reference`); default: the image reference.
    pub identity: Option<String>,
    /// `registries.d`, for where simple signatures go.
    pub registries_d: RegistriesD,
}

/// How to verify.
#[derive(Debug, Default)]
pub struct VerifyOptions {
    /// cosign public keys.
    pub cosign_keys: Vec<PublicKey>,
    /// OpenPGP keyring for simple signatures.
    pub keyring: Option<Keyring>,
    /// The identity a simple signature must claim; default: the image reference (the
    /// containers `matchRepoDigestOrExact` rule).
    pub identity: Option<String>,
    /// `registries.d`, for where simple signatures are read from.
    pub registries_d: RegistriesD,
}

/// One signature written.
#[derive(Debug, Clone)]
pub struct Written {
    /// `cosign` or `simple`.
    pub format: &'static str,
    /// Where it went (`repo:sha256-<hex>.sig`, a lookaside URL).
    pub location: String,
    /// Whether it was new (false: the same signature was already there).
    pub added: bool,
}

/// What `verify` found.
#[derive(Debug, Clone)]
pub struct Verification {
    /// The image digest checked.
    pub digest: String,
    /// Each signature found, per format.
    pub checked: Vec<(&'static str, Checked)>,
}

impl Verification {
    /// Whether at least one signature verified.
    pub fn any_valid(&self) -> bool {
        self.checked.iter().any(|(_, c)| c.result.is_ok())
    }
}

/// The identity a simple signature claims for `reference`, as `skopeo copy --sign-by` writes
/// it: the tag (no tag and no digest means `latest`), else the digest; never a bare
/// repository, which no `signedIdentity` rule but the repository ones accepts.
pub fn default_identity(reference: &Reference) -> String {
    crate::signature::identity::image_identity(reference)
}

/// Where a simple signature of `target` lives: (lookaside repository path, settings name).
fn lookaside_repo(
    target: &Target,
    identity: Option<&str>,
) -> Result<(String, String), SignatureError> {
    if let Some(r) = target.reference() {
        return Ok((r.name(), r.repository.clone()));
    }
    let id = identity.ok_or_else(|| {
        SignatureError::Unsupported(format!(
            "{}: an oci: layout has no repository; give --identity REF to name the lookaside entry",
            target.name
        ))
    })?;
    let r = Reference::parse(id).map_err(|e| SignatureError::Unsupported(e.to_string()))?;
    Ok((r.name(), r.repository))
}

/// Signs `location` as `opts` say (cosign, simple signing, or both).
pub fn sign(
    location: &Location,
    registry: &RegistryOptions,
    opts: &SignOptions,
) -> Result<(String, Vec<Written>), SignatureError> {
    let target = Target::resolve(location, registry)?;
    sign_target(&target, opts).map(|w| (target.digest.clone(), w))
}

/// [`sign`] for an image already resolved (a build that just pushed it).
pub fn sign_target(target: &Target, opts: &SignOptions) -> Result<Vec<Written>, SignatureError> {
    let mut out = Vec::new();
    if let Some(key) = &opts.cosign_key {
        let identity = match (&opts.identity, target.reference()) {
            (Some(i), _) => cosign::repository_of(i),
            (None, Some(r)) => r.name(),
            (None, None) => String::new(),
        };
        let s = cosign::sign(target, key, &identity)?;
        let base = target.base_name();
        out.push(Written {
            format: "cosign",
            location: format!("{base}:{}", s.tag),
            added: s.added,
        });
    }
    if let Some(gpg) = &opts.gpg {
        let identity = match (&opts.identity, target.reference()) {
            (Some(i), _) => i.clone(),
            (None, Some(r)) => default_identity(r),
            (None, None) => {
                return Err(SignatureError::Unsupported(format!(
                    "{}: simple signing an oci: layout needs --identity REF (the reference it will be published under)",
                    target.name
                )));
            }
        };
        let (name, repo_path) = lookaside_repo(target, Some(&identity))?;
        let settings = opts.registries_d.settings_for(&name);
        let base = settings
            .lookaside_staging
            .or(settings.lookaside)
            .ok_or_else(|| {
                SignatureError::Unsupported(format!(
                    "no lookaside or lookaside-staging for {name} in registries.d"
                ))
            })?;
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let body = simple::payload(&identity, &target.digest, ts);
        let sig = gpg.sign(&body)?;
        let url = lookaside::write_next(&base, &repo_path, &target.digest, &sig)?;
        out.push(Written {
            format: "simple",
            location: url,
            added: true,
        });
    }
    Ok(out)
}

/// Verifies every signature of `location` the options have keys for. An `oci:` layout named
/// without a tag means every image in it (signature artifacts aside), each verified on its
/// own: `(image, verification)` per image.
pub fn verify(
    location: &Location,
    registry: &RegistryOptions,
    opts: &VerifyOptions,
) -> Result<Vec<(String, Verification)>, SignatureError> {
    if let crate::location::Place::Local(crate::location::LocalImage::OciLayout {
        path,
        tag: None,
    }) = location.place()
    {
        let targets = Target::layout_images(path, location.as_str())?;
        if targets.is_empty() {
            return Err(SignatureError::Unsupported(format!(
                "{}: the layout has no tagged image",
                location.as_str()
            )));
        }
        return targets
            .iter()
            .map(|t| verify_target(t, opts).map(|v| (t.name.clone(), v)))
            .collect();
    }
    let target = Target::resolve(location, registry)?;
    Ok(vec![(
        location.as_str().to_string(),
        verify_target(&target, opts)?,
    )])
}

/// [`verify`] for an image already resolved.
pub fn verify_target(
    target: &Target,
    opts: &VerifyOptions,
) -> Result<Verification, SignatureError> {
    let mut checked = Vec::new();
    // The image the signatures must name: --identity, else the image's own reference.
    let image = match (&opts.identity, target.reference()) {
        (Some(i), _) => Some(
            Reference::parse(i)
                .map(|r| default_identity(&r))
                .unwrap_or_else(|_| i.clone()),
        ),
        (None, Some(r)) => Some(default_identity(r)),
        (None, None) => None,
    };
    if !opts.cosign_keys.is_empty() {
        // cosign names the repository alone; a signature that names none passes, as in cosign.
        let rule = image
            .clone()
            .map_or(IdentityRule::Any, IdentityRule::MatchRepository);
        let expected = cosign::Expected {
            rule: &rule,
            accept_unnamed: true,
        };
        for c in cosign::verify(target, &opts.cosign_keys, &expected)? {
            checked.push(("cosign", c));
        }
    }
    if let Some(ring) = &opts.keyring {
        let rule = image
            .clone()
            .map_or(IdentityRule::Any, IdentityRule::MatchRepoDigestOrExact);
        for c in check_simple(target, ring, &rule, opts)? {
            checked.push(("simple", c));
        }
    }
    Ok(Verification {
        digest: target.digest.clone(),
        checked,
    })
}

/// Reads the simple signatures of `target` from its lookaside store and checks each.
pub fn check_simple(
    target: &Target,
    ring: &Keyring,
    rule: &IdentityRule,
    opts: &VerifyOptions,
) -> Result<Vec<Checked>, SignatureError> {
    let (name, repo_path) = lookaside_repo(target, opts.identity.as_deref())?;
    let settings = opts.registries_d.settings_for(&name);
    let Some(base) = settings.lookaside else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    // One signature in memory at a time: each is checked as it is read.
    lookaside::for_each(&base, &repo_path, &target.digest, |url, bytes| {
        let result = ring
            .verify_message(&bytes)
            .and_then(|(body, _fpr)| simple::check_payload(&body, &target.digest, rule));
        out.push(Checked {
            source: url,
            result,
        });
        true
    })?;
    Ok(out)
}

/// How to accept signatures refused only because they name another repository (an image
/// copied or mirrored from it), for a verification of `image` that failed.
pub fn identity_hint(image: &str, v: &Verification) -> Option<String> {
    v.checked.iter().find_map(|(_, c)| match &c.result {
        Err(crate::signature::Rejection::IdentityMismatch { found, .. }) => {
            crate::signature::identity::mismatch_hint(image, found)
        }
        _ => None,
    })
}

/// The summary line `catalog mirror` prints on how its copies verify at the target.
pub fn mirror_note(signatures: bool, example: Option<(&str, &str)>) -> Option<String> {
    crate::signature::identity::mirror_note(signatures, example)
}

/// A one-line reason for a verification that found nothing to check.
pub fn nothing_found(v: &Verification) -> Option<String> {
    v.checked
        .is_empty()
        .then(|| format!("no signature found for {}", v.digest))
}

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
