//! A reference resolved to the digest of what it names, through the places a mirror
//! configuration gives ([`super::MirrorConfig::pull_sources`]), spoken to only through the
//! [`Repository`] API (a registry or an OCI layout; how each place is opened is the caller's).
//!
//! A tag is resolved by reading its manifest and hashing the bytes (never by trusting a
//! header): the registry's `Docker-Content-Digest` for the tag must agree, or the registry is
//! refused as lying and no other place is tried (a place that answers wrongly is not a place
//! that lacks the image). A reference that already names a digest is checked to be readable by
//! that digest (the bytes hash to it). Places that fail otherwise (absent, unreachable, denied)
//! are passed over, as containers/image passes over a mirror, and each failure is kept for the
//! message when none answers.

use super::{Attempt, MirrorConfig, MirrorConfigError, NotServed, PullSource};
use crate::reference::Reference;
use crate::registry::RegistryError;
use crate::registry::repository::{Repository, RepositoryError};

/// Opens the repository of one place (a registry repository, or an OCI layout).
pub trait Opener {
    /// The repository `source` names; `Err` says why it cannot be reached.
    fn open(&self, source: &PullSource) -> Result<Box<dyn Repository>, String>;
}

/// Where a reference was found, and its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// `sha256:…` of the manifest (or index) the reference names.
    pub digest: String,
    /// The place that answered (`registry/repository:tag`, or the layout).
    pub place: String,
    /// Whether that place is a mirror.
    pub mirror: bool,
}

/// Why a reference could not be resolved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// No place answered; each place tried and why.
    #[error("{reference}: not found ({})", describe(.attempts))]
    NotFound {
        /// The reference as written.
        reference: String,
        /// `(place, why)` for each place tried.
        attempts: Vec<(String, String)>,
    },
    /// A place answered with a digest that is not the digest of what it serves.
    #[error(
        "{reference}: {place} says the digest is {claimed} but serves a manifest whose digest is {actual}; refused"
    )]
    Lied {
        /// The reference.
        reference: String,
        /// The place.
        place: String,
        /// What it said.
        claimed: String,
        /// What its bytes hash to.
        actual: String,
    },
    /// The configuration cannot rewrite it.
    #[error(transparent)]
    Config(#[from] MirrorConfigError),
}

fn describe(attempts: &[(String, String)]) -> String {
    super::describe_attempts(attempts)
}

/// The digest `reference` names, from the first place of `config` that has it
/// ([`MirrorConfig::first_served`], the loop every registry reader shares).
pub fn resolve(
    config: &MirrorConfig,
    reference: &Reference,
    opener: &dyn Opener,
) -> Result<Resolved, ResolveError> {
    let served = config.first_served(reference, |source| {
        let repo = match opener.open(source) {
            Ok(r) => r,
            Err(why) => return Attempt::Passed(why),
        };
        match digest_at(repo.as_ref(), &source.reference) {
            Ok(Some(digest)) => Attempt::Served(digest),
            Ok(None) => Attempt::Passed("no such manifest".to_string()),
            Err(Found::Lie { claimed, actual }) => Attempt::Refused(Lie { claimed, actual }),
            Err(Found::Failed(why)) => Attempt::Passed(why),
        }
    });
    match served {
        Ok((digest, source)) => Ok(Resolved {
            digest,
            place: source.reference.to_string(),
            mirror: source.mirror,
        }),
        Err(NotServed::Passed {
            reference,
            attempts,
        }) => Err(ResolveError::NotFound {
            reference,
            attempts,
        }),
        Err(NotServed::Refused {
            reference,
            place,
            error,
        }) => Err(ResolveError::Lied {
            reference,
            place,
            claimed: error.claimed,
            actual: error.actual,
        }),
        Err(NotServed::Config(e)) => Err(e.into()),
    }
}

/// A place whose digest header disagrees with the bytes it serves.
#[derive(Debug, thiserror::Error)]
#[error("says the digest is {claimed} but serves {actual}")]
struct Lie {
    claimed: String,
    actual: String,
}

enum Found {
    Lie { claimed: String, actual: String },
    Failed(String),
}

fn failed(e: RepositoryError) -> Found {
    match e {
        RepositoryError::Registry(RegistryError::DigestMismatch { expected, actual }) => {
            Found::Lie {
                claimed: expected,
                actual,
            }
        }
        other => Found::Failed(other.to_string()),
    }
}

/// The digest of what `reference` names in `repo`: `None` when it is not there.
fn digest_at(repo: &dyn Repository, reference: &Reference) -> Result<Option<String>, Found> {
    if let Some(digest) = &reference.digest {
        return match repo.manifest_find(digest) {
            Ok(Some(m)) if &m.digest == digest => Ok(Some(m.digest)),
            Ok(Some(m)) => Err(Found::Lie {
                claimed: digest.clone(),
                actual: m.digest,
            }),
            Ok(None) => Ok(None),
            Err(e) => Err(failed(e)),
        };
    }
    let tag = reference.tag.as_deref().unwrap_or("latest");
    let head = match repo.manifest_head(tag) {
        Ok(Some(h)) => h,
        Ok(None) => return Ok(None),
        Err(e) => return Err(failed(e)),
    };
    let manifest = match repo.manifest_get(tag) {
        Ok(m) => m,
        Err(e) => return Err(failed(e)),
    };
    let actual = crate::registry::digest::sha256(&manifest.bytes);
    if let Some(claimed) = head.digest.filter(|d| d != &actual) {
        return Err(Found::Lie { claimed, actual });
    }
    Ok(Some(actual))
}
