//! Signing and verifying one image, cosign and/or simple signing: what `olmpack sign` and
//! `olmpack verify` do, the signing step of `bundle build --push` and `catalog build --push`,
//! and the simple-signature check `policy.json`'s `signedBy` runs. Here, beside the formats,
//! so the policy evaluator needs nothing above the signature layer.

use super::keys::PublicKey;
use super::lookaside::{self, RegistriesD};
use super::simple::{self, GpgSigner, IdentityRule, Keyring};
use super::store::Target;
use super::{Checked, SignatureError, cosign};
use crate::location::Location;
use crate::reference::Reference;
/// The registry options signing and verifying read images with.
pub use crate::transport::RegistryOptions;

/// Where a cosign key's signature goes: cosign 3's Sigstore bundle referrer, the `.sig` tag
/// containers/image (podman, skopeo, CRI-O) verifies, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CosignFormat {
    /// A Sigstore bundle v0.3 as an OCI 1.1 referrer (cosign 3's default).
    #[default]
    Bundle,
    /// The `sha256-<hex>.sig` tag (cosign 2, and what containers/image reads).
    Legacy,
    /// Both, for images read by cosign 3 and by containers/image.
    Both,
}

/// How to sign.
#[derive(Debug, Default)]
pub struct SignOptions {
    /// A cosign private key (decrypted).
    pub cosign_key: Option<super::keys::PrivateKey>,
    /// Where the cosign key's signature goes.
    pub cosign_format: CosignFormat,
    /// What a bundle signs (cosign 3's DSSE statement, or a message signature).
    pub bundle_content: super::bundle_sign::BundleContent,
    /// An OpenPGP secret key for simple signing.
    pub gpg: Option<GpgSigner>,
    /// The identity to claim (`docker-reference`); default: the image reference.
    pub identity: Option<String>,
    /// `registries.d`, for where simple signatures go.
    pub registries_d: RegistriesD,
}

/// How to verify (cloned per image by a copy that verifies each image under its own name).
#[derive(Debug, Clone, Default)]
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
    /// Keyless: the identity and issuer a Fulcio certificate must name, and the trusted root.
    pub keyless: Option<super::keyless::Keyless>,
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
    super::identity::image_identity(reference)
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
        let base = target.base_name();
        if opts.cosign_format != CosignFormat::Legacy {
            let b = super::bundle_sign::sign(target, key, &identity, opts.bundle_content)?;
            out.push(Written {
                format: "sigstore bundle",
                location: format!("{base}@{} (referrer)", b.manifest_digest),
                added: b.added,
            });
        }
        if opts.cosign_format != CosignFormat::Bundle {
            let s = cosign::sign(target, key, &identity)?;
            out.push(Written {
                format: "cosign",
                location: format!("{base}:{}", s.tag),
                added: s.added,
            });
        }
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
    // cosign names the repository alone; a signature that names none passes, as in cosign.
    let cosign_rule = image
        .clone()
        .map_or(IdentityRule::Any, IdentityRule::MatchRepository);
    let cosign_expected = cosign::Expected {
        rule: &cosign_rule,
        accept_unnamed: true,
    };
    if !opts.cosign_keys.is_empty() {
        for c in cosign::verify(target, &opts.cosign_keys, &cosign_expected)? {
            checked.push(("cosign", c));
        }
    }
    // Keyless: the same places and the same claims, the signer vouched for by its certificate.
    if let Some(k) = &opts.keyless {
        for c in cosign::verify_with(target, cosign::Verifier::Keyless(k), &cosign_expected)? {
            checked.push(("keyless", c));
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
        Err(super::Rejection::IdentityMismatch { found, .. }) => {
            super::identity::mismatch_hint(image, found)
        }
        _ => None,
    })
}

/// The summary line `catalog mirror` prints on how its copies verify at the target.
pub fn mirror_note(signatures: bool, example: Option<(&str, &str)>) -> Option<String> {
    super::identity::mirror_note(signatures, example)
}

/// A one-line reason for a verification that found nothing to check.
pub fn nothing_found(v: &Verification) -> Option<String> {
    v.checked
        .is_empty()
        .then(|| format!("no signature found for {}", v.digest))
}
