//! Copying an image, or a whole multi-platform index, from any source to any sink: the
//! go-containerregistry `crane cp` composition, `open` then `write`, over the one image model.
//!
//! - The source is opened as an [`ImageOrIndex`] ([`super::open::open_to_copy`]): an image's
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
//!   registry and `oci:` sources and targets ([`super::attached`], written once against the
//!   repository API).
//!
//! Each end has its own registry options (credentials, TLS, plain HTTP): source and target are
//! often two registries with two logins.

use super::attached::copy_attached;
pub use super::attached::{
    ATTACHED_TAG_SUFFIXES, Attached, AttachedLookup, Carried, attached_at_source, digest_tag,
    may_have_attached, referrer_kind,
};
pub use super::copy_options::{CopyOptions, Target};
use super::error::TransportError;
use super::open::open_to_copy;
use super::sink;
use crate::image::parse::parse_index;
use crate::image::{Artifact, ImageOrIndex};
use crate::location::{LocalImage, Location, Place};
use crate::registry::push::BlobReport;

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
