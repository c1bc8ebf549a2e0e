//! What comes along with a copied manifest when [`super::CopyOptions::with_signatures`] asks
//! for it: cosign's tags (`sha256-<hex>.sig`, `.att`, `.sbom`) and the OCI 1.1 referrers (the
//! referrers API, or its tag-schema fallback `sha256-<hex>`, an index of referrers).
//!
//! Written once against the repository API ([`Repository`]): a registry repository and an
//! `oci:` layout answer the same calls (tags, manifest existence, referrers), so a copy between
//! any two of them, either way, is this code. Archives hold one image: nothing is attached to
//! them.

use super::copy_options::{CopyOptions, Target};
use super::error::TransportError;
use super::layout_repository::LayoutRepository;
use super::open::open_place_artifact;
use super::sink;
use crate::image::ImageOrIndex;
use crate::image::parse::IndexEntry;
use crate::location::{LocalImage, Location, Place};
use crate::reference::Reference;
use crate::registry::repository::Repository;
pub use crate::registry::repository::digest_tag;

/// The tag suffixes of cosign's tag convention: signatures, attestations, SBOMs.
pub const ATTACHED_TAG_SUFFIXES: [&str; 3] = ["sig", "att", "sbom"];

/// The run-wide lookup of attached things, an option of the copy.
pub use super::copy_options::AttachedLookup;

/// The registry (or store) part of a repository's name, which the referrers API support is
/// known for.
fn store_of(repository: &dyn Repository) -> String {
    let name = repository.name();
    name.split('/').next().unwrap_or(&name).to_string()
}

/// Whether anything may be attached at the source to the image `source` pins (by digest), as
/// far as `opts.attached_lookup` can tell cheaply: `false` only when the source registry has
/// no referrers API and the image's repository holds no `sha256-…` tag at all. Lets a re-run
/// that finds an image already at the target skip the copy without missing an attached
/// signature. Always `true` without a lookup, or for a source that is not a registry.
pub fn may_have_attached(source: &Location, opts: &CopyOptions) -> bool {
    let (Some(lookup), Place::Registry(reference)) = (&opts.attached_lookup, source.place()) else {
        return true;
    };
    let Ok(repository) = opts.source.repository(reference) else {
        return true;
    };
    let store = store_of(&repository);
    let referrers = match lookup.referrers(&store) {
        Some(known) => known,
        None => {
            let Some(digest) = &reference.digest else {
                return true;
            };
            match repository.referrers(digest) {
                Ok(found) => {
                    lookup.set_referrers(&store, found.is_some());
                    found.is_some()
                }
                Err(_) => return true,
            }
        }
    };
    if referrers {
        return true;
    }
    lookup
        .tags(&repository)
        .is_none_or(|tags| tags.iter().any(|t| t.starts_with("sha256-")))
}

/// Something attached to a copied manifest that came along.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The manifest it is attached to.
    pub subject: String,
    /// Its tag (`sha256-<hex>.sig`) for the tag convention, or `None` for a referrer.
    pub tag: Option<String>,
    /// Its digest.
    pub digest: String,
}

/// Copies what is attached to each copied manifest: the top one (unless the index was
/// rewritten: nothing can be attached to a digest that did not exist) and each image of an
/// index.
pub(super) fn copy_attached(
    value: &ImageOrIndex,
    narrowed: bool,
    source: &Location,
    target: &Target,
    opts: &CopyOptions,
) -> Result<Vec<Attached>, TransportError> {
    let mut subjects: Vec<String> = Vec::new();
    if !narrowed {
        subjects.push(value.digest().to_string());
    }
    if let ImageOrIndex::Index(index) = value {
        subjects.extend(index.entries()?.into_iter().map(|e| e.descriptor.digest));
    }
    let ends = Ends::new(source, target, opts)?;
    let mut out = Vec::new();
    for subject in &subjects {
        for suffix in ATTACHED_TAG_SUFFIXES {
            let tag = format!("{}.{suffix}", digest_tag(subject));
            if !ends.source_has_tag(&tag)? {
                continue;
            }
            let name = format!("{source}:{tag}");
            let place = ends.source_place(Some(&tag), None);
            let attached = open_place_artifact(&name, &place, &opts.source)?;
            let digest = attached.value.digest().to_string();
            ends.write(&attached.value, Some(&tag), opts)?;
            out.push(Attached {
                subject: subject.clone(),
                tag: Some(tag),
                digest,
            });
        }
        let mut copied: Vec<IndexEntry> = Vec::new();
        for entry in ends.source_referrers(subject)? {
            let digest = entry.descriptor.digest.clone();
            let place = ends.source_place(None, Some(&digest));
            let name = match &place {
                Place::Registry(pinned) => pinned.to_string(),
                _ => format!("{source}@{digest}"),
            };
            let attached = open_place_artifact(&name, &place, &opts.source)?;
            ends.write(&attached.value, None, opts)?;
            out.push(Attached {
                subject: subject.clone(),
                tag: None,
                digest,
            });
            copied.push(entry);
        }
        if !copied.is_empty()
            && let Some(target) = &ends.target_repo
        {
            target.referrers_put(subject, &copied)?;
        }
    }
    Ok(out)
}

/// The two ends of a copy, each a repository when it can hold attached things (a registry
/// repository or an `oci:` layout).
struct Ends<'a> {
    source: &'a Location,
    target: &'a Target,
    source_repo: Option<Box<dyn Repository>>,
    target_repo: Option<Box<dyn Repository>>,
    lookup: Option<AttachedLookup>,
}

impl<'a> Ends<'a> {
    fn new(
        source: &'a Location,
        target: &'a Target,
        opts: &CopyOptions,
    ) -> Result<Ends<'a>, TransportError> {
        let source_repo: Option<Box<dyn Repository>> = match source.place() {
            Place::Registry(r) => Some(Box::new(opts.source.repository(r)?)),
            Place::Local(LocalImage::OciLayout { path, .. }) => {
                Some(Box::new(LayoutRepository::new(path)))
            }
            _ => None,
        };
        let target_repo: Option<Box<dyn Repository>> = match target {
            Target::Registry(r) => Some(Box::new(opts.target.repository(r)?)),
            Target::Local(LocalImage::OciLayout { path, .. }) => {
                Some(Box::new(LayoutRepository::new(path)))
            }
            Target::Local(_) => None,
        };
        Ok(Ends {
            source,
            target,
            source_repo,
            target_repo,
            lookup: opts.attached_lookup.clone(),
        })
    }

    fn source_has_tag(&self, tag: &str) -> Result<bool, TransportError> {
        let Some(repo) = &self.source_repo else {
            return Ok(false);
        };
        if let Some(tags) = self.lookup.as_ref().and_then(|l| l.tags(repo.as_ref())) {
            return Ok(tags.contains(tag));
        }
        Ok(repo.manifest_head(tag)?.is_some())
    }

    /// Where the source's manifest with `tag` (or `digest`) is.
    fn source_place(&self, tag: Option<&str>, digest: Option<&str>) -> Place {
        match self.source.place() {
            Place::Registry(r) => Place::Registry(Reference {
                tag: tag.map(str::to_string),
                digest: digest.map(str::to_string),
                ..r.clone()
            }),
            Place::Local(local) => Place::Local(LocalImage::new(
                local.transport(),
                local.path().clone(),
                tag.or(digest).map(str::to_string),
            )),
            other => other.clone(),
        }
    }

    /// Writes `value` to the target under `tag`, or by digest only.
    fn write(
        &self,
        value: &ImageOrIndex,
        tag: Option<&str>,
        opts: &CopyOptions,
    ) -> Result<(), TransportError> {
        match self.target {
            Target::Registry(r) => {
                let name = Reference {
                    tag: tag.map(str::to_string),
                    digest: tag.is_none().then(|| value.digest().to_string()),
                    ..r.clone()
                };
                sink::push(
                    value.artifact(),
                    &[name.to_string()],
                    &opts.target,
                    &opts.push,
                )?;
            }
            Target::Local(dest) => {
                let names: Vec<String> = tag.map(str::to_string).into_iter().collect();
                super::local::write_artifact(value.artifact(), dest, &names)?;
            }
        }
        Ok(())
    }

    /// The referrers of `subject` at the source: the referrers API when the source has it,
    /// else the tag-schema fallback index (`sha256-<hex>`), else none.
    fn source_referrers(&self, subject: &str) -> Result<Vec<IndexEntry>, TransportError> {
        let Some(repo) = &self.source_repo else {
            return Ok(Vec::new());
        };
        let store = store_of(repo.as_ref());
        let known = self.lookup.as_ref().and_then(|l| l.referrers(&store));
        if known != Some(false) {
            let found = repo.referrers(subject)?;
            if let Some(l) = &self.lookup {
                l.set_referrers(&store, found.is_some());
            }
            if let Some(entries) = found {
                return Ok(entries);
            }
        }
        if !self.source_has_tag(&digest_tag(subject))? {
            return Ok(Vec::new());
        }
        Ok(repo.fallback_referrers(subject)?.unwrap_or_default())
    }
}
