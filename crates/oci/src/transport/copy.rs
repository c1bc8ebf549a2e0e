//! Copying an image, or a whole multi-platform index, from any source to any sink: the
//! go-containerregistry `crane cp` composition, `open` then `write`, over the one image model.
//!
//! - The source is opened as an [`ImageOrIndex`] ([`super::source::open_to_copy`]): an image's
//!   manifest and config verified in memory, layers left where they are (a layout's files, or
//!   a registry repository where each blob fetches itself); an index's images opened one at a
//!   time as the sink writes them, each config streamed like a layer and only when the target
//!   lacks it, so an index of hundreds of images sharing one large config holds one manifest
//!   at a time and fetches the config once.
//! - An index is copied whole by default, so its digest is unchanged at the target (what a
//!   mirror needs). Asked for some platforms, it is rewritten to the entries of those platforms
//!   (and their attestations): a new index with a new digest, and the report says so
//!   ([`CopyReport::narrowed_from`]).
//! - Blobs are streamed: a registry target `HEAD`s each blob and skips it when present, mounts it
//!   when it lives in another repository of the same registry, and otherwise streams it from
//!   the source through a spool file (so an upload can be retried, and a layer is never held
//!   whole in memory); manifests go up after their blobs, the index last, so a reader never
//!   sees an index whose children are missing. An `oci:` layout target skips blobs it holds and
//!   updates `index.json` atomically under the layout lock.
//! - With [`CopyOptions::with_signatures`], what is attached to each copied manifest comes
//!   along: cosign's tags (`sha256-<hex>.sig`, `.att`, `.sbom`) and the OCI 1.1 referrers
//!   (the referrers API, or its tag-schema fallback `sha256-<hex>`, an index of referrers), on
//!   registry and `oci:` sources and targets.
//!
//! Each end has its own registry options (credentials, TLS, plain HTTP): source and target are
//! often two registries with two logins.

use super::error::TransportError;
use super::options::RegistryOptions;
use super::sink;
use super::source::{open_place_artifact, open_to_copy};
use crate::image::config::canonical_json;
use crate::image::media;
use crate::image::parse::{IndexEntry, parse_index};
use crate::image::{Artifact, ImageOrIndex, Platform};
use crate::location::{LocalImage, Location, Place, Transport};
use crate::reference::Reference;
use crate::registry::RegistryError;
use crate::registry::client::{Body, Client, Request, header};
use crate::registry::push::{BlobReport, PushOptions};
use crate::registry::token::{pull_scope, push_scope};
use reqwest::Method;
use std::collections::{HashMap, HashSet};
use std::io::Read;
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
    tags: Mutex<HashMap<(String, String), TagSlot>>,
    referrers: Mutex<HashMap<String, bool>>,
}

impl AttachedLookup {
    /// The tags of `repository` (listed once per run; `None` when they cannot be listed).
    fn tags(&self, client: &Client, repository: &str) -> Option<Arc<HashSet<String>>> {
        let slot = {
            let mut map = self.0.tags.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(
                map.entry((client.registry().to_string(), repository.to_string()))
                    .or_default(),
            )
        };
        // Other copies of the same repository wait for the one listing it.
        slot.get_or_init(|| list_tags(client, repository).map(Arc::new))
            .clone()
    }

    /// Whether `registry` has the referrers API, when known.
    fn referrers(&self, registry: &str) -> Option<bool> {
        let map = self.0.referrers.lock().unwrap_or_else(|p| p.into_inner());
        map.get(registry).copied()
    }

    fn set_referrers(&self, registry: &str, supported: bool) {
        let mut map = self.0.referrers.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(registry.to_string(), supported);
    }
}

/// The tags of `repository` (every page, capped: [`crate::registry::tags::list`]); `None` on
/// any error, and the copy then asks tag by tag.
fn list_tags(client: &Client, repository: &str) -> Option<HashSet<String>> {
    crate::registry::tags::list(client, repository).ok()
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
    let Ok(client) = opts.source.client_for(reference) else {
        return true;
    };
    let referrers = match lookup.referrers(client.registry()) {
        Some(known) => known,
        None => {
            let Some(digest) = &reference.digest else {
                return true;
            };
            match referrers_api(&client, &reference.repository, digest) {
                Ok(found) => {
                    lookup.set_referrers(client.registry(), found.is_some());
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
        .tags(&client, &reference.repository)
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

/// What a copy did.
#[derive(Debug, Clone)]
pub struct CopyReport {
    /// The digest of what the target now holds (the image, or the index).
    pub digest: String,
    /// The target's pinned name (`registry/repo@sha256:…`, or the local target as given).
    pub target: String,
    /// The source's digest when the index was narrowed to some platforms (and so rewritten,
    /// with a new digest); `None` when the target holds exactly what the source does.
    pub narrowed_from: Option<String>,
    /// The platforms copied (`os/arch[/variant]`; empty for a single image without one).
    pub platforms: Vec<String>,
    /// Per blob, what a registry target did (existing, mounted, uploaded); empty for local
    /// targets.
    pub blobs: Vec<BlobReport>,
    /// What came along with `with_signatures`.
    pub attached: Vec<Attached>,
}

/// Copies `source` to `target` (see the module documentation).
pub fn copy(
    source: &Location,
    target: &Target,
    opts: &CopyOptions,
) -> Result<CopyReport, TransportError> {
    if opts.with_signatures
        && let Target::Local(local) = target
        && !matches!(local, LocalImage::OciLayout { .. })
    {
        return Err(TransportError::Unsupported(format!(
            "{target}: an archive holds one image; signatures can be copied to a registry or an oci: layout"
        )));
    }
    // Kept alive to the end: an archive's blobs are files in its extracted folder.
    let opened = open_to_copy(source, &opts.source)?;
    let source_digest = opened.value.digest().to_string();
    let value = match (&opened.value, &opts.platforms) {
        (ImageOrIndex::Index(index), Some(platforms)) => {
            ImageOrIndex::Index(index.select(platforms)?)
        }
        (other, _) => other.clone(),
    };
    let narrowed_from = (value.digest() != source_digest).then(|| source_digest.clone());
    let platforms = platforms_of(&value);
    let (blobs, pinned, digest) = write(&value, target, opts, &default_names(source, target))?;
    let mut report = CopyReport {
        digest,
        target: pinned,
        narrowed_from,
        platforms,
        blobs,
        attached: Vec::new(),
    };
    if opts.with_signatures {
        report.attached =
            copy_attached(&value, report.narrowed_from.is_some(), source, target, opts)?;
    }
    Ok(report)
}

fn platforms_of(value: &ImageOrIndex) -> Vec<String> {
    match value {
        ImageOrIndex::Image(_) => Vec::new(),
        ImageOrIndex::Index(index) => match &index.index.source {
            crate::image::BlobSource::Memory(bytes) => parse_index(bytes)
                .ok()
                .flatten()
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.platform.as_ref().map(ToString::to_string))
                .filter(|p| p != "unknown/unknown")
                .collect(),
            _ => Vec::new(),
        },
    }
}

/// The names a local target records when it names none itself: the source's tag (a registry
/// reference's, or an `oci:`/`oci-archive:` source's `:TAG`), else `latest`; a docker-archive
/// records a registry source's reference as its `RepoTags`.
fn default_names(source: &Location, target: &Target) -> Vec<String> {
    let Target::Local(dest) = target else {
        return Vec::new();
    };
    match (source.place(), dest) {
        (Place::Registry(r), _) if r.digest.is_none() => {
            sink::output_names(dest, &[r.to_string()]).unwrap_or_else(|_| vec!["latest".into()])
        }
        (
            Place::Local(LocalImage::OciLayout { tag: Some(tag), .. })
            | Place::Local(LocalImage::OciArchive { tag: Some(tag), .. }),
            LocalImage::OciLayout { tag: None, .. } | LocalImage::OciArchive { tag: None, .. },
        ) => vec![tag.clone()],
        _ => sink::output_names(dest, &[]).unwrap_or_else(|_| vec!["latest".into()]),
    }
}

/// Writes `value` to `target` under `names` (local) or the target's tag (registry); returns the
/// blob report, the pinned target name and the digest written.
fn write(
    value: &ImageOrIndex,
    target: &Target,
    opts: &CopyOptions,
    names: &[String],
) -> Result<(Vec<BlobReport>, String, String), TransportError> {
    match target {
        Target::Registry(reference) => {
            let pushed = sink::push(
                value.artifact(),
                &[reference.to_string()],
                &opts.target,
                &opts.push,
            )?;
            let blobs = pushed.into_iter().flat_map(|(r, _)| r.blobs).collect();
            Ok((
                blobs,
                reference.pinned(value.digest()),
                value.digest().to_string(),
            ))
        }
        Target::Local(dest) => {
            // A docker-archive holds one image: an index narrowed to one platform is written
            // as that image; a wider one is refused by the writer with what to do.
            let single = match (dest, value) {
                (LocalImage::DockerArchive { .. }, ImageOrIndex::Index(index)) => {
                    match index.entries()?.as_slice() {
                        [entry] => Some(index.image(&entry.descriptor)?),
                        _ => None,
                    }
                }
                _ => None,
            };
            let artifact = match &single {
                Some(image) => Artifact::Image(image),
                None => value.artifact(),
            };
            super::local::write_artifact(artifact, dest, names)?;
            let digest = artifact.top().descriptor.digest.clone();
            Ok((Vec::new(), dest.to_string(), digest))
        }
    }
}

/// The tag suffixes of cosign's tag convention: signatures, attestations, SBOMs.
pub const ATTACHED_TAG_SUFFIXES: [&str; 3] = ["sig", "att", "sbom"];

/// `sha256-<hex>`: the tag cosign derives from a digest (and the referrers tag-schema fallback).
pub fn digest_tag(digest: &str) -> String {
    digest.replacen(':', "-", 1)
}

/// Copies what is attached to each copied manifest: the top one (unless the index was
/// rewritten: nothing can be attached to a digest that did not exist) and each image of an
/// index.
fn copy_attached(
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
    let mut ends = Ends::new(source, target, opts)?;
    ends.lookup = opts.attached_lookup.clone();
    let mut out = Vec::new();
    for subject in &subjects {
        for suffix in ATTACHED_TAG_SUFFIXES {
            let tag = format!("{}.{suffix}", digest_tag(subject));
            if !ends.source_has_tag(&tag)? {
                continue;
            }
            let place = ends.source_place(&tag);
            let name = format!("{source}:{tag}");
            let attached = open_place_artifact(&name, &place, &opts.source)?;
            let digest = attached.value.digest().to_string();
            ends.write_tagged(&attached.value, &tag, opts)?;
            out.push(Attached {
                subject: subject.clone(),
                tag: Some(tag),
                digest,
            });
        }
        let referrers = ends.source_referrers(subject)?;
        let mut copied: Vec<IndexEntry> = Vec::new();
        for entry in referrers {
            let Place::Registry(reference) = source.place() else {
                break;
            };
            let pinned = Reference {
                tag: None,
                digest: Some(entry.descriptor.digest.clone()),
                ..reference.clone()
            };
            let name = pinned.to_string();
            let attached = open_place_artifact(&name, &Place::Registry(pinned), &opts.source)?;
            ends.write_untagged(&attached.value, opts)?;
            out.push(Attached {
                subject: subject.clone(),
                tag: None,
                digest: entry.descriptor.digest.clone(),
            });
            copied.push(entry);
        }
        if !copied.is_empty() {
            ends.record_referrers(subject, &copied)?;
        }
    }
    Ok(out)
}

/// The two ends of a copy, with a client each when they are registries.
struct Ends<'a> {
    source: &'a Location,
    target: &'a Target,
    source_client: Option<(Client, Reference)>,
    target_client: Option<(Client, Reference)>,
    lookup: Option<AttachedLookup>,
}

impl<'a> Ends<'a> {
    fn new(
        source: &'a Location,
        target: &'a Target,
        opts: &CopyOptions,
    ) -> Result<Ends<'a>, TransportError> {
        let source_client = match source.place() {
            Place::Registry(r) => Some((opts.source.client_for(r)?, r.clone())),
            _ => None,
        };
        let target_client = match target {
            Target::Registry(r) => Some((opts.target.client_for(r)?, r.clone())),
            Target::Local(_) => None,
        };
        Ok(Ends {
            source,
            target,
            source_client,
            target_client,
            lookup: None,
        })
    }

    fn source_has_tag(&self, tag: &str) -> Result<bool, TransportError> {
        if let Some((client, reference)) = &self.source_client {
            if let Some(tags) = self
                .lookup
                .as_ref()
                .and_then(|l| l.tags(client, &reference.repository))
            {
                return Ok(tags.contains(tag));
            }
            return Ok(manifest_exists(client, &reference.repository, tag)?);
        }
        match self.source.place() {
            Place::Local(LocalImage::OciLayout { path, .. }) => {
                let index = super::layout::read_index(path)?;
                Ok(index
                    .get("manifests")
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(|m| {
                        m.iter().any(|e| {
                            e.pointer("/annotations/org.opencontainers.image.ref.name")
                                .and_then(serde_json::Value::as_str)
                                == Some(tag)
                        })
                    }))
            }
            // An archive is one image: nothing is attached to it by tag.
            _ => Ok(false),
        }
    }

    fn source_place(&self, tag: &str) -> Place {
        match self.source.place() {
            Place::Registry(r) => Place::Registry(r.with_tag(tag)),
            Place::Local(local) => Place::Local(LocalImage::new(
                local.transport(),
                local.path().clone(),
                Some(tag.to_string()),
            )),
            other => other.clone(),
        }
    }

    fn write_tagged(
        &self,
        value: &ImageOrIndex,
        tag: &str,
        opts: &CopyOptions,
    ) -> Result<(), TransportError> {
        match self.target {
            Target::Registry(r) => {
                sink::push(
                    value.artifact(),
                    &[r.with_tag(tag).to_string()],
                    &opts.target,
                    &opts.push,
                )?;
            }
            Target::Local(dest) => {
                super::local::write_artifact(value.artifact(), dest, &[tag.to_string()])?;
            }
        }
        Ok(())
    }

    fn write_untagged(
        &self,
        value: &ImageOrIndex,
        opts: &CopyOptions,
    ) -> Result<(), TransportError> {
        match self.target {
            Target::Registry(r) => {
                let pinned = Reference {
                    tag: None,
                    digest: Some(value.digest().to_string()),
                    ..r.clone()
                };
                sink::push(
                    value.artifact(),
                    &[pinned.to_string()],
                    &opts.target,
                    &opts.push,
                )?;
            }
            Target::Local(dest) => {
                super::local::write_artifact(value.artifact(), dest, &[])?;
            }
        }
        Ok(())
    }

    /// The referrers of `subject` at the source: the referrers API when the registry has it,
    /// else the tag-schema fallback index (`sha256-<hex>`), else none.
    fn source_referrers(&self, subject: &str) -> Result<Vec<IndexEntry>, TransportError> {
        let Some((client, reference)) = &self.source_client else {
            return Ok(Vec::new());
        };
        let known = self
            .lookup
            .as_ref()
            .and_then(|l| l.referrers(client.registry()));
        if known != Some(false) {
            let found = referrers_api(client, &reference.repository, subject)?;
            if let Some(l) = &self.lookup {
                l.set_referrers(client.registry(), found.is_some());
            }
            if let Some(entries) = found {
                return Ok(entries);
            }
        }
        if !self.source_has_tag(&digest_tag(subject))? {
            return Ok(Vec::new());
        }
        Ok(fallback_index(client, &reference.repository, subject)?
            .map(|(_, entries)| entries)
            .unwrap_or_default())
    }

    /// Makes the copied referrers findable at a registry target: a registry with the referrers
    /// API indexes them itself (from their `subject`); one without gets the tag-schema index
    /// `sha256-<hex>`, merged with what it already lists. An `oci:` layout keeps them as
    /// untagged entries of `index.json`, which is where OCI layouts keep referrers.
    fn record_referrers(&self, subject: &str, copied: &[IndexEntry]) -> Result<(), TransportError> {
        let Some((client, reference)) = &self.target_client else {
            return Ok(());
        };
        let repository = &reference.repository;
        if referrers_api(client, repository, subject)?.is_some() {
            return Ok(());
        }
        let mut manifests: Vec<serde_json::Value> = fallback_index(client, repository, subject)?
            .map(|(raw, _)| raw)
            .unwrap_or_default();
        for entry in copied {
            let digest = entry.descriptor.digest.as_str();
            if !manifests
                .iter()
                .any(|m| m.get("digest").and_then(serde_json::Value::as_str) == Some(digest))
            {
                manifests.push(entry.raw.clone());
            }
        }
        let index = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": media::OCI_INDEX,
            "manifests": manifests,
        });
        let req = Request::new(
            Method::PUT,
            format!("/v2/{repository}/manifests/{}", digest_tag(subject)),
            &[push_scope(repository)],
        )
        .header("Content-Type", media::OCI_INDEX)
        .body(Body::Bytes(canonical_json(&index)));
        client.expect(&req, &[200, 201])?;
        Ok(())
    }
}

fn manifest_exists(client: &Client, repository: &str, what: &str) -> Result<bool, RegistryError> {
    let req = Request::new(
        Method::HEAD,
        format!("/v2/{repository}/manifests/{what}"),
        &[pull_scope(repository)],
    )
    .header("Accept", media::ACCEPT_MANIFESTS.join(", "));
    let resp = client.expect(&req, &[200, 404])?;
    Ok(resp.status().as_u16() == 200)
}

/// `GET /v2/<repo>/referrers/<digest>` (OCI distribution 1.1): `None` when the registry does
/// not have the API (404, or anything that is not an index).
fn referrers_api(
    client: &Client,
    repository: &str,
    subject: &str,
) -> Result<Option<Vec<IndexEntry>>, TransportError> {
    let req = Request::new(
        Method::GET,
        format!("/v2/{repository}/referrers/{subject}"),
        &[pull_scope(repository)],
    )
    .header("Accept", media::OCI_INDEX);
    let resp = client.expect(&req, &[200, 404, 400, 405])?;
    if resp.status().as_u16() != 200 {
        return Ok(None);
    }
    let is_index = header(&resp, "Content-Type").is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|t| t.trim() == media::OCI_INDEX)
    });
    let bytes = read_capped(resp)?;
    if !is_index {
        return Ok(None);
    }
    Ok(parse_index(&bytes)?)
}

/// The referrers tag-schema index `sha256-<hex>`: its raw entries and parsed ones, `None` when
/// the tag does not exist.
#[allow(clippy::type_complexity)]
fn fallback_index(
    client: &Client,
    repository: &str,
    subject: &str,
) -> Result<Option<(Vec<serde_json::Value>, Vec<IndexEntry>)>, TransportError> {
    let tag = digest_tag(subject);
    if !manifest_exists(client, repository, &tag)? {
        return Ok(None);
    }
    let reference = Reference::parse(&format!("{}/{repository}:{tag}", client.registry()))?;
    let (bytes, _, _) = crate::registry::pull::fetch_manifest_bytes(client, &reference, &tag)?;
    let entries = parse_index(&bytes)?.unwrap_or_default();
    Ok(Some((
        entries.iter().map(|e| e.raw.clone()).collect(),
        entries,
    )))
}

fn read_capped(resp: reqwest::blocking::Response) -> Result<Vec<u8>, TransportError> {
    let mut bytes = Vec::new();
    resp.take(media_limit())
        .read_to_end(&mut bytes)
        .map_err(|e| RegistryError::Interrupted {
            what: "read of a referrers index".into(),
            reason: e.to_string(),
        })?;
    Ok(bytes)
}

fn media_limit() -> u64 {
    crate::image::parse::MAX_MANIFEST_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_local_formats_or_references() {
        let t: Target = "oci:/tmp/x:v1".parse().unwrap();
        assert!(matches!(t, Target::Local(LocalImage::OciLayout { .. })));
        let t: Target = "127.0.0.1:5000/a/b:v1".parse().unwrap();
        assert!(matches!(t, Target::Registry(_)));
        assert_eq!(t.to_string(), "127.0.0.1:5000/a/b:v1");
        assert!("oci:".parse::<Target>().is_err());
    }

    #[test]
    fn digest_tags_follow_cosign() {
        assert_eq!(digest_tag("sha256:abc"), "sha256-abc");
    }
}
