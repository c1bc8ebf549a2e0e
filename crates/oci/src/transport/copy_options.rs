//! What a copy is asked to do: where it writes ([`Target`]) and how ([`CopyOptions`]). Apart
//! from the copy itself so the attached-artifact copier, which the copy calls, can take them
//! without importing the copy.

use super::error::TransportError;
use super::options::RegistryOptions;
use crate::image::Platform;
use crate::location::{LocalImage, Transport};
use crate::reference::Reference;
use crate::registry::Repository;
use crate::registry::push::PushOptions;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// Where a copy writes: a registry reference, or an image in a local format. Unlike a source
/// [`Location`], a local target need not exist yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A registry repository, with a tag (default `latest`) or a digest the image must have.
    Registry(Reference),
    /// `oci:`, `oci-archive:` or `docker-archive:`.
    Local(LocalImage),
}

impl std::str::FromStr for Target {
    type Err = TransportError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if Transport::split(s).is_some() {
            let local: LocalImage = s
                .parse()
                .map_err(crate::location::LocationError::from)
                .map_err(TransportError::from)?;
            return Ok(Target::Local(local));
        }
        Ok(Target::Registry(Reference::parse(s)?))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Registry(r) => write!(f, "{r}"),
            Target::Local(l) => write!(f, "{l}"),
        }
    }
}

/// How to copy. `Default`: anonymous on both ends, every platform, nothing attached.
#[derive(Debug, Clone, Default)]
pub struct CopyOptions {
    /// Credentials and connection settings for reading the source.
    pub source: RegistryOptions,
    /// Credentials and connection settings for writing the target.
    pub target: RegistryOptions,
    /// `None`: an index is copied whole (its digest unchanged). `Some`: only the entries for
    /// these platforms (a rewritten index). Ignored for a single image.
    pub platforms: Option<Vec<Platform>>,
    /// Copy the signatures, attestations and SBOMs attached to every copied manifest.
    pub with_signatures: bool,
    /// Blob upload settings for a registry target (progress, chunking, concurrency, and the
    /// blobs known at the target that several copies of one run share,
    /// [`PushOptions::known_blobs`]).
    pub push: PushOptions,
    /// What the copies of one run share about the sources' attached things (`catalog
    /// mirror`): each repository's tag list and each registry's referrers API support, asked
    /// once. `None` (the default): each copy asks for each tag it looks for.
    pub attached_lookup: Option<AttachedLookup>,
}

/// What a run learns once about attached things at the source registries, shared by its copies
/// (cloning shares it):
/// - each repository's tag list: one `GET …/tags/list` answers whether any image of that
///   repository has a cosign tag (`sha256-<hex>.sig`, `.att`, `.sbom`) or a referrers
///   fallback tag (`sha256-<hex>`), where one `HEAD` per tag and image would be needed;
/// - whether each registry has the referrers API: a registry that has it never answers `404`
///   (OCI distribution 1.1), so one `404` stands for the registry and the question is not
///   asked again for every image.
///
/// The tag list is a snapshot of the run's start: an attached tag pushed to the source while
/// the run goes on is left for the next run. A repository whose tags cannot be listed is
/// asked tag by tag, as without the lookup.
#[derive(Debug, Clone, Default)]
pub struct AttachedLookup(Arc<LookupInner>);

type TagSlot = Arc<OnceLock<Option<Arc<HashSet<String>>>>>;

#[derive(Debug, Default)]
struct LookupInner {
    tags: Mutex<HashMap<String, TagSlot>>,
    referrers: Mutex<HashMap<String, bool>>,
}

impl AttachedLookup {
    /// The tags of `repository` (listed once per run; `None` when they cannot be listed, and
    /// the copy then asks tag by tag).
    pub(crate) fn tags(&self, repository: &dyn Repository) -> Option<Arc<HashSet<String>>> {
        let slot = {
            let mut map = self.0.tags.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(map.entry(repository.name()).or_default())
        };
        // Other copies of the same repository wait for the one listing it.
        slot.get_or_init(|| repository.tags().ok().map(Arc::new))
            .clone()
    }

    /// Whether `registry` has the referrers API, when known.
    pub(crate) fn referrers(&self, registry: &str) -> Option<bool> {
        let map = self.0.referrers.lock().unwrap_or_else(|p| p.into_inner());
        map.get(registry).copied()
    }

    pub(crate) fn set_referrers(&self, registry: &str, supported: bool) {
        let mut map = self.0.referrers.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(registry.to_string(), supported);
    }
}
