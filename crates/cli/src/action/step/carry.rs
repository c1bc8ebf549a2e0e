//! The carry step: one image copied with everything attached to it, as `--signatures
//! require|copy|drop` says. Written once for `copy` and `catalog mirror` (each image of a run):
//!
//! - before anything is written, `require` checks the source: with keys (`--verify-key`,
//!   `--verify-gpg-keyring`) at least one signature must verify at the digest copied (the
//!   verify step `olmpack verify` runs, [`crate::signature::image_signing::verify_target`]);
//!   after a `--policy` that verified the image's signatures, that verification stands;
//!   otherwise something must be attached (a cosign tag, a referrer, a lookaside signature),
//!   and the outcome says it was presence that was checked ([`Check::Present`]). An image
//!   built here from a folder has no source to have been signed at and is not refused
//!   ([`Check::BuiltHere`]);
//! - the copy itself ([`crate::transport::copy`]) carries cosign's `.sig`/`.att`/`.sbom` tags
//!   and the referrers of every copied manifest, index children included (the referrers tag
//!   where the target has no referrers API);
//! - simple signatures in lookaside stores follow when `registries.d` names a store for the
//!   source (`lookaside`, read from `file://` or, capped, `http(s)://`) and one for the
//!   target (`lookaside-staging`, else `lookaside`; written only to `file://`, as skopeo
//!   does). Whether the target store can be written is settled before the image is copied.
//!
//! What was carried comes back counted by kind ([`Carried`]), for the per-image line.

use crate::location::{Location, Place};
use crate::reference::Reference;
use crate::registry::errors::redact_url;
use crate::signature::SignatureError;
use crate::signature::image_signing::{VerifyOptions, verify_target};
use crate::signature::lookaside::{self, RegistriesD};
use crate::signature::store;
use crate::transport::copy::{Carried, attached_at_source};
use crate::transport::{CopyOptions, CopyReport, Target, TransportError};

/// `--signatures`: what happens to what is attached to each image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignaturesMode {
    /// Each image must have a signature (verified when keys or a policy are given) before it
    /// is copied; what is attached comes along.
    Require,
    /// What is attached comes along when there is any.
    #[default]
    Copy,
    /// Nothing attached comes along.
    Drop,
}

/// How a run carries signatures: the mode, where lookaside stores are, and the keys that
/// `require` verifies with.
#[derive(Debug, Clone, Default)]
pub struct CarryOptions {
    /// `--signatures`.
    pub mode: SignaturesMode,
    /// `--registries-d`: the lookaside stores of source and target; `None`, no simple
    /// signature is carried (a run never writes into a store nobody named).
    pub lookaside: Option<RegistriesD>,
    /// `--verify-key` / `--verify-gpg-keyring`: what `require` verifies with.
    pub verify: Option<VerifyOptions>,
}

/// One image to copy.
#[derive(Debug, Clone, Copy)]
pub struct Image<'a> {
    /// Where it is read from (a registry reference, possibly a mirror of it, or a layout).
    pub read_from: &'a Location,
    /// The name its signatures carry (the image as the user or the catalog names it).
    pub identity: &'a str,
    /// Built here from a folder: no signature of it can exist at a source.
    pub built_here: bool,
}

/// What `--signatures require` established before the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Not asked (`copy` or `drop`).
    NotAsked,
    /// This many signatures verified with the keys given.
    Verified(usize),
    /// The `--policy` given verified its signatures before the image was read.
    VerifiedByPolicy,
    /// Only presence was checked (no key and no signature-checking policy given): this many
    /// things are attached at the source, none of them verified.
    Present(usize),
    /// Built here from a folder: nothing to require.
    BuiltHere,
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Check::NotAsked => Ok(()),
            Check::Verified(n) => write!(f, "{n} signature(s) verified with the keys given"),
            Check::VerifiedByPolicy => f.write_str("signatures verified by the policy"),
            Check::Present(_) => f.write_str(
                "presence checked, not verified (give --verify-key or --policy to verify)",
            ),
            Check::BuiltHere => f.write_str(
                "built here from a folder: no signature can exist at a source; sign it at the target",
            ),
        }
    }
}

/// What the step did for one image.
#[derive(Debug, Clone)]
pub struct Carrying {
    /// The copy's own report.
    pub report: CopyReport,
    /// What came along, by kind.
    pub carried: Carried,
    /// What `require` established.
    pub check: Check,
}

/// Why an image was not copied (or its lookaside signatures could not follow).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CarryError {
    /// `require` found nothing attached to the image at its source.
    #[error(
        "{image}: --signatures require: nothing is attached to {digest} at the source (no cosign .sig/.att/.sbom tag, no referrer, no lookaside signature); nothing was copied"
    )]
    NothingAttached {
        /// The image as named.
        image: String,
        /// The digest looked at.
        digest: String,
    },
    /// `require` with keys: no signature verifies.
    #[error(
        "{image}: --signatures require: no signature of {digest} verifies with the keys given ({reasons}); nothing was copied"
    )]
    NotVerified {
        /// The image as named.
        image: String,
        /// The digest verified.
        digest: String,
        /// Each signature's refusal, or that none was found.
        reasons: String,
    },
    /// The signatures could not be read (a registry, a store).
    #[error("{image}: cannot read its signatures")]
    Signature {
        /// The image as named.
        image: String,
        /// Why.
        #[source]
        source: Box<SignatureError>,
    },
    /// The source's simple signatures have nowhere to go at the target.
    #[error(
        "{image}: its simple signatures in {from} cannot be carried: {reason}; nothing was copied"
    )]
    LookasideTarget {
        /// The image as named.
        image: String,
        /// The source store, its user-info and query left out.
        from: String,
        /// Why (no store for the target, or one olmpack does not write).
        reason: String,
    },
    /// The copy failed.
    #[error(transparent)]
    Copy(Box<TransportError>),
}

fn signature_error(image: &str) -> impl Fn(SignatureError) -> CarryError + '_ {
    move |e| CarryError::Signature {
        image: image.to_string(),
        source: Box::new(e),
    }
}

/// The two lookaside stores a copy from `from` to `to` carries simple signatures between:
/// `None` when no store is named for the source (or an end is not a registry).
struct Stores<'a> {
    from: String,
    from_ref: &'a Reference,
    to: String,
    to_ref: &'a Reference,
}

fn stores<'a>(
    image: &Image<'a>,
    target: &'a Target,
    digest: &str,
    carry: &CarryOptions,
) -> Result<Option<Stores<'a>>, CarryError> {
    let (Some(rd), Place::Registry(from_ref), Target::Registry(to_ref)) =
        (&carry.lookaside, image.read_from.place(), target)
    else {
        return Ok(None);
    };
    let Some(from) = rd.settings_for(&from_ref.name()).lookaside else {
        return Ok(None);
    };
    // Only when the source has one: a run whose images carry no simple signature needs no
    // writable store for the target.
    let mut any = false;
    lookaside::for_each(&from, &from_ref.repository, digest, |_, _| {
        any = true;
        false
    })
    .map_err(signature_error(image.identity))?;
    if !any {
        return Ok(None);
    }
    let settings = rd.settings_for(&to_ref.name());
    let to = match settings.lookaside_staging.or(settings.lookaside) {
        Some(to) if to.starts_with("file://") => to,
        Some(to) => {
            return Err(CarryError::LookasideTarget {
                image: image.identity.to_string(),
                from: redact_url(&from),
                reason: format!(
                    "the target's store {} is not a file:// URL; olmpack writes only file:// stores (as skopeo does): name a lookaside-staging folder for {}",
                    redact_url(&to),
                    to_ref.name()
                ),
            });
        }
        None => {
            return Err(CarryError::LookasideTarget {
                image: image.identity.to_string(),
                from: redact_url(&from),
                reason: format!(
                    "registries.d names no lookaside-staging (or lookaside) for the target {}",
                    to_ref.name()
                ),
            });
        }
    };
    Ok(Some(Stores {
        from,
        from_ref,
        to,
        to_ref,
    }))
}

/// `require`, before anything is written: verified, or present, or refused.
fn require(
    image: &Image<'_>,
    digest: &str,
    target: &store::Target,
    copy_opts: &CopyOptions,
    carry: &CarryOptions,
    lookaside_present: bool,
) -> Result<Check, CarryError> {
    if let Some(verify) = &carry.verify {
        let mut opts = verify.clone();
        opts.identity = Some(image.identity.to_string());
        let v = verify_target(target, &opts).map_err(signature_error(image.identity))?;
        let good = v.checked.iter().filter(|(_, c)| c.result.is_ok()).count();
        if good > 0 {
            return Ok(Check::Verified(good));
        }
        let reasons = if v.checked.is_empty() {
            "no signature found".to_string()
        } else {
            v.checked
                .iter()
                .filter_map(|(format, c)| c.result.as_ref().err().map(|r| (format, c, r)))
                .map(|(format, c, r)| format!("{format} {}: {r}", c.source))
                .collect::<Vec<_>>()
                .join("; ")
        };
        return Err(CarryError::NotVerified {
            image: image.identity.to_string(),
            digest: digest.to_string(),
            reasons,
        });
    }
    if image.read_from.verified_digest() == Some(digest) {
        return Ok(Check::VerifiedByPolicy);
    }
    let attached = attached_at_source(image.read_from, digest, copy_opts)
        .map_err(|e| CarryError::Copy(Box::new(e)))?;
    let n = attached + usize::from(lookaside_present);
    if n == 0 {
        return Err(CarryError::NothingAttached {
            image: image.identity.to_string(),
            digest: digest.to_string(),
        });
    }
    Ok(Check::Present(n))
}

/// Copies `image` to `target` carrying what `carry` says (see the module documentation).
/// `copy_opts.with_signatures` is set here from the mode.
pub fn copy(
    image: Image<'_>,
    target: &Target,
    copy_opts: &CopyOptions,
    carry: &CarryOptions,
) -> Result<Carrying, CarryError> {
    let mut opts = copy_opts.clone();
    opts.with_signatures = carry.mode != SignaturesMode::Drop;
    let mut read_from = image.read_from.clone();
    let mut check = Check::NotAsked;
    let mut plan = None;
    // Only `require` and the lookaside stores need the digest before the copy (one manifest
    // read, which the run's manifest cache keeps for the copy).
    if carry.mode == SignaturesMode::Require
        || (carry.mode == SignaturesMode::Copy && carry.lookaside.is_some())
    {
        // The digest every check and every store is looked at: the one copied.
        let resolved = store::Target::resolve(image.read_from, &opts.source)
            .map_err(signature_error(image.identity))?;
        let digest = resolved.digest.clone();
        // Pinned: what is copied is what was checked, even if the tag moves meanwhile.
        if read_from.verified_digest().is_none() {
            read_from = read_from.pinned(&digest);
        }
        plan = stores(&image, target, &digest, carry)?.map(|s| (s, digest.clone()));
        if carry.mode == SignaturesMode::Require {
            check = if image.built_here {
                Check::BuiltHere
            } else {
                require(&image, &digest, &resolved, &opts, carry, plan.is_some())?
            };
        }
    }
    let report = crate::transport::copy(&read_from, target, &opts)
        .map_err(|e| CarryError::Copy(Box::new(e)))?;
    let mut carried = Carried::of(&report.attached);
    // A narrowed index is a new manifest: the source's simple signatures do not sign it.
    if let (Some((s, digest)), None) = (plan, &report.narrowed_from) {
        let mut failure = None;
        lookaside::for_each(&s.from, &s.from_ref.repository, &digest, |_, bytes| {
            match lookaside::write_next(&s.to, &s.to_ref.repository, &digest, &bytes) {
                Ok(_) => {
                    carried.lookaside += 1;
                    true
                }
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        })
        .map_err(signature_error(image.identity))?;
        if let Some(e) = failure {
            return Err(signature_error(image.identity)(e));
        }
    }
    Ok(Carrying {
        report,
        carried,
        check,
    })
}
