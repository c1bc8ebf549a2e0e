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
    /// What it is, as the report names it: `sig`, `att` or `sbom` for a tag; for a referrer
    /// what its listing announces ([`referrer_kind`]): `bundle`, `spdx`, `provenance`, …
    pub kind: String,
}

/// What a referrer is, from its listing entry alone (the referrers index announces each
/// manifest's `artifactType` and annotations), so the report can say what was carried without
/// reading any referrer twice: a Sigstore bundle by its `dev.sigstore.bundle.predicateType`
/// (`spdx`, `cyclonedx`, `provenance`, another `attestation`; none or cosign's signing
/// predicate: a signature `bundle`), any other artifact by its type (`spdx`, `cyclonedx`, else
/// the type as announced, or `unknown`).
pub fn referrer_kind(entry: &serde_json::Value) -> String {
    let artifact_type = entry["artifactType"].as_str().unwrap_or_default();
    let predicate = entry["annotations"]["dev.sigstore.bundle.predicateType"]
        .as_str()
        .unwrap_or_default();
    let named = |text: &str| {
        let lower = text.to_ascii_lowercase();
        if lower.contains("spdx") {
            Some("spdx")
        } else if lower.contains("cyclonedx") {
            Some("cyclonedx")
        } else if lower.contains("slsa.dev/provenance") {
            Some("provenance")
        } else {
            None
        }
    };
    if artifact_type.contains("dev.sigstore.bundle") {
        return match named(predicate) {
            Some(k) => k.to_string(),
            None if predicate.is_empty() || predicate.contains("sigstore.dev/cosign/sign") => {
                "bundle".to_string()
            }
            None => "attestation".to_string(),
        };
    }
    match named(artifact_type) {
        Some(k) => k.to_string(),
        None if artifact_type.is_empty() => "unknown".to_string(),
        // Announced by the registry's content: kept short and printable in a report line.
        None => artifact_type
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .take(80)
            .collect(),
    }
}

/// What was carried along with one copied image (its index children included), counted by
/// kind: the per-image line of `copy` and of the mirror report
/// (`sig 1, att 1, referrers 2 (bundle, spdx), lookaside 1`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Carried {
    /// cosign `.sig` tags.
    pub sig: usize,
    /// cosign `.att` tags.
    pub att: usize,
    /// cosign `.sbom` tags.
    pub sbom: usize,
    /// Each referrer's kind ([`referrer_kind`]), in the order copied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub referrers: Vec<String>,
    /// Simple signatures copied between lookaside stores (counted by the caller that carries
    /// them: the stores are `registries.d` settings, not the registry's).
    #[serde(default)]
    pub lookaside: usize,
}

impl Carried {
    /// The counts of `attached` (lookaside left at 0).
    pub fn of(attached: &[Attached]) -> Carried {
        let mut out = Carried::default();
        for a in attached {
            match (a.tag.is_some(), a.kind.as_str()) {
                (true, "sig") => out.sig += 1,
                (true, "att") => out.att += 1,
                (true, _) => out.sbom += 1,
                (false, kind) => out.referrers.push(kind.to_string()),
            }
        }
        out
    }

    /// How many things were carried in all.
    pub fn total(&self) -> usize {
        self.sig + self.att + self.sbom + self.referrers.len() + self.lookaside
    }
}

impl std::fmt::Display for Carried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.total() == 0 {
            return f.write_str("nothing attached");
        }
        let mut parts = Vec::new();
        for (name, n) in [("sig", self.sig), ("att", self.att), ("sbom", self.sbom)] {
            if n > 0 {
                parts.push(format!("{name} {n}"));
            }
        }
        if !self.referrers.is_empty() {
            let mut kinds = self.referrers.clone();
            kinds.sort();
            kinds.dedup();
            parts.push(format!(
                "referrers {} ({})",
                self.referrers.len(),
                kinds.join(", ")
            ));
        }
        if self.lookaside > 0 {
            parts.push(format!("lookaside {}", self.lookaside));
        }
        f.write_str(&parts.join(", "))
    }
}

/// How many things are attached at the source to `subject` (a manifest digest of `source`):
/// cosign's tags and the referrers (the API, or the fallback tag). Nothing is copied: the
/// check `--signatures require` makes before a copy writes anything.
pub fn attached_at_source(
    source: &Location,
    subject: &str,
    opts: &CopyOptions,
) -> Result<usize, TransportError> {
    let end = SourceEnd::new(source, opts)?;
    let mut n = 0;
    for suffix in ATTACHED_TAG_SUFFIXES {
        if end.has_tag(&format!("{}.{suffix}", digest_tag(subject)))? {
            n += 1;
        }
    }
    Ok(n + end.referrers(subject)?.len())
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
            if !ends.source.has_tag(&tag)? {
                continue;
            }
            let name = format!("{source}:{tag}");
            let place = ends.source.place(Some(&tag), None);
            let attached = open_place_artifact(&name, &place, &opts.source)?;
            let digest = attached.value.digest().to_string();
            ends.write(&attached.value, Some(&tag), opts)?;
            out.push(Attached {
                subject: subject.clone(),
                tag: Some(tag),
                digest,
                kind: suffix.to_string(),
            });
        }
        let mut copied: Vec<IndexEntry> = Vec::new();
        for entry in ends.source.referrers(subject)? {
            let digest = entry.descriptor.digest.clone();
            let place = ends.source.place(None, Some(&digest));
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
                kind: referrer_kind(&entry.raw),
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

/// The source end of a copy: a repository when it can hold attached things (a registry
/// repository or an `oci:` layout), and the run's shared lookup.
struct SourceEnd<'a> {
    location: &'a Location,
    repo: Option<Box<dyn Repository>>,
    lookup: Option<AttachedLookup>,
}

/// The two ends of a copy, each a repository when it can hold attached things.
struct Ends<'a> {
    source: SourceEnd<'a>,
    target: &'a Target,
    target_repo: Option<Box<dyn Repository>>,
}

impl<'a> SourceEnd<'a> {
    fn new(location: &'a Location, opts: &CopyOptions) -> Result<SourceEnd<'a>, TransportError> {
        let repo: Option<Box<dyn Repository>> = match location.place() {
            Place::Registry(r) => Some(Box::new(opts.source.repository(r)?)),
            Place::Local(LocalImage::OciLayout { path, .. }) => {
                Some(Box::new(LayoutRepository::new(path)))
            }
            _ => None,
        };
        Ok(SourceEnd {
            location,
            repo,
            lookup: opts.attached_lookup.clone(),
        })
    }

    fn has_tag(&self, tag: &str) -> Result<bool, TransportError> {
        let Some(repo) = &self.repo else {
            return Ok(false);
        };
        if let Some(tags) = self.lookup.as_ref().and_then(|l| l.tags(repo.as_ref())) {
            return Ok(tags.contains(tag));
        }
        Ok(repo.manifest_head(tag)?.is_some())
    }

    /// Where the source's manifest with `tag` (or `digest`) is.
    fn place(&self, tag: Option<&str>, digest: Option<&str>) -> Place {
        match self.location.place() {
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

    /// The referrers of `subject` at the source: the referrers API when the source has it,
    /// else the tag-schema fallback index (`sha256-<hex>`), else none.
    fn referrers(&self, subject: &str) -> Result<Vec<IndexEntry>, TransportError> {
        let Some(repo) = &self.repo else {
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
        if !self.has_tag(&digest_tag(subject))? {
            return Ok(Vec::new());
        }
        Ok(repo.fallback_referrers(subject)?.unwrap_or_default())
    }
}

impl<'a> Ends<'a> {
    fn new(
        source: &'a Location,
        target: &'a Target,
        opts: &CopyOptions,
    ) -> Result<Ends<'a>, TransportError> {
        let target_repo: Option<Box<dyn Repository>> = match target {
            Target::Registry(r) => Some(Box::new(opts.target.repository(r)?)),
            Target::Local(LocalImage::OciLayout { path, .. }) => {
                Some(Box::new(LayoutRepository::new(path)))
            }
            Target::Local(_) => None,
        };
        Ok(Ends {
            source: SourceEnd::new(source, opts)?,
            target,
            target_repo,
        })
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn referrers_are_named_by_what_their_listing_announces() {
        let bundle = "application/vnd.dev.sigstore.bundle.v0.3+json";
        let entry = |at: &str, predicate: Option<&str>| {
            let mut e = serde_json::json!({"artifactType": at});
            if let Some(p) = predicate {
                e["annotations"] = serde_json::json!({"dev.sigstore.bundle.predicateType": p});
            }
            e
        };
        assert_eq!(referrer_kind(&entry(bundle, None)), "bundle");
        assert_eq!(
            referrer_kind(&entry(bundle, Some("https://sigstore.dev/cosign/sign/v1"))),
            "bundle"
        );
        assert_eq!(
            referrer_kind(&entry(bundle, Some("https://spdx.dev/Document"))),
            "spdx"
        );
        assert_eq!(
            referrer_kind(&entry(bundle, Some("https://slsa.dev/provenance/v1"))),
            "provenance"
        );
        assert_eq!(
            referrer_kind(&entry(bundle, Some("https://example.com/custom"))),
            "attestation"
        );
        assert_eq!(referrer_kind(&entry("application/spdx+json", None)), "spdx");
        assert_eq!(referrer_kind(&serde_json::json!({})), "unknown");
    }

    #[test]
    fn the_line_counts_each_kind() {
        let mut c = Carried {
            sig: 1,
            att: 1,
            referrers: vec!["spdx".into(), "bundle".into()],
            lookaside: 1,
            ..Carried::default()
        };
        assert_eq!(
            c.to_string(),
            "sig 1, att 1, referrers 2 (bundle, spdx), lookaside 1"
        );
        c = Carried::default();
        assert_eq!(c.to_string(), "nothing attached");
    }
}
