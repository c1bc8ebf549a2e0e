//! The one place that sends an image where the user asked: a local destination (`--output`,
//! through [`super::local::write_artifact`], which owns every layout and archive write) or a
//! registry push under every `-t REF`.
//!
//! Pushing groups the references by repository (one client and one blob upload per
//! repository, every tag of it after). Blobs kept in a registry
//! ([`crate::image::BlobSource::Remote`]: a base image's layers, an image being copied) are
//! skipped when present and mounted when they live on the same registry; otherwise the blob
//! fetches itself from its registry, streamed through a spool file. A local output has every
//! remote blob fetch itself first ([`write_local`]). An index opened from a source has its
//! images opened before anything is written ([`crate::image::ImageIndex::complete`]).
//!
//! [`deliver`] is the one delivery path of every build: stage the digest file, push, write the
//! local output, then put the digest file in place, so a failure at any step leaves no partial
//! output.

use super::error::TransportError;
use super::options::RegistryOptions;
use crate::image::{Artifact, BlobSource, Destination, ImageOrIndex, OutputError};
use crate::reference::Reference;
use crate::registry::Client;
use crate::registry::push::{self, PushOptions, PushReport};
use std::path::{Path, PathBuf};

/// Writes an image or index to a local destination. `names` are the tags (OCI) or `RepoTags`
/// (docker-archive) to record. Blobs kept in a registry fetch themselves first into a spool
/// folder ([`fetch_remote`]: verified, a cut download retried from the start), so the format
/// writer reads files and a docker-archive, which reads each layer twice, downloads it once.
pub fn write_local(
    artifact: Artifact<'_>,
    dest: &Destination,
    names: &[String],
) -> Result<(), WriteLocalError> {
    if !has_remote_blobs(artifact) {
        return Ok(super::local::write_artifact(artifact, dest, names)?);
    }
    // Ctrl-C during the download removes the blobs fetched so far (see crate::interrupt).
    let spool = crate::interrupt::temp_dir("olmpack-blobs-")
        .map_err(|e| TransportError::io("create a temp folder in", std::env::temp_dir(), e))?;
    let local = fetch_remote(artifact, spool.path())?;
    Ok(super::local::write_artifact(local.artifact(), dest, names)?)
}

/// Why [`write_local`] failed: a remote blob could not fetch itself, or the writer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteLocalError {
    /// A blob kept in a registry could not be downloaded.
    #[error(transparent)]
    Fetch(#[from] TransportError),
    /// The destination could not be written.
    #[error(transparent)]
    Write(#[from] OutputError),
}

/// `artifact` as an owned value whose blobs kept in a registry have fetched themselves
/// (verified, a cut download retried from the start) into `spool`, named by content so a
/// layer shared by several images is fetched once; every other blob is unchanged.
pub fn fetch_remote(artifact: Artifact<'_>, spool: &Path) -> Result<ImageOrIndex, TransportError> {
    let mut value = match artifact {
        Artifact::Image(image) => ImageOrIndex::Image(image.clone()),
        Artifact::Index(index) => ImageOrIndex::Index(index.complete()?),
    };
    let images = match &mut value {
        ImageOrIndex::Image(image) => vec![image],
        ImageOrIndex::Index(index) => index.images.iter_mut().collect(),
    };
    for image in images {
        let name = image
            .layers
            .iter()
            .find(|l| matches!(l.source, BlobSource::Remote { .. }))
            .map(|l| l.location().display().to_string())
            .unwrap_or_default();
        super::open::fetch_remote_layers(image, spool, &name)?;
    }
    Ok(value)
}

/// One repository's result of [`push`]: its report and the client's request counters
/// `[head, get, post, put, patch, token, retries]` (for tests and benchmarks).
pub type RepositoryPush = (PushReport, [usize; 7]);

/// Pushes `artifact` under every reference in `tags` (full references like
/// `quay.io/org/bundle:v1`; several tags and repositories in one call). A reference pinning a
/// digest must pin the artifact's own.
pub fn push(
    artifact: Artifact<'_>,
    tags: &[String],
    opts: &RegistryOptions,
    push_opts: &PushOptions,
) -> Result<Vec<RepositoryPush>, TransportError> {
    if tags.is_empty() {
        return Err(TransportError::NoTargets);
    }
    let top = &artifact.top().descriptor.digest;
    // Group by repository, keeping the order the user gave.
    let mut groups: Vec<(Reference, Vec<String>)> = Vec::new();
    for t in tags {
        let r = Reference::parse(t)?;
        let tag = r
            .digest
            .clone()
            .or(r.tag.clone())
            .unwrap_or_else(|| "latest".to_string());
        if let Some(d) = &r.digest
            && d != top
        {
            return Err(TransportError::DigestPin {
                reference: t.clone(),
                pinned: d.clone(),
                actual: top.clone(),
            });
        }
        match groups
            .iter_mut()
            .find(|(g, _)| g.registry == r.registry && g.repository == r.repository)
        {
            Some((_, v)) => v.push(tag),
            None => groups.push((r, vec![tag])),
        }
    }
    let mut out = Vec::new();
    for (reference, group_tags) in groups {
        let client = opts.client_for(&reference)?;
        let report = push_one(
            &client,
            artifact,
            &reference.repository,
            &group_tags,
            push_opts,
        )?;
        out.push((report, client.stats.snapshot()));
    }
    Ok(out)
}

/// Pushes one artifact to one repository. An index's images go one at a time, each opened
/// just before it is pushed and dropped after ([`crate::image::ImageIndex::for_each_image`]):
/// an index of hundreds of images sharing a large config holds one manifest at a time, and the
/// config is fetched from the source once (then found at the target).
fn push_one(
    client: &Client,
    artifact: Artifact<'_>,
    repository: &str,
    tags: &[String],
    push_opts: &PushOptions,
) -> Result<PushReport, TransportError> {
    match artifact {
        Artifact::Image(image) => Ok(push::push_image(
            client, image, repository, tags, push_opts,
        )?),
        Artifact::Index(index) => {
            let mut blobs = Vec::new();
            index.for_each_image(|image| -> Result<(), TransportError> {
                let report = push::push_image(client, image, repository, &[], push_opts)?;
                blobs.extend(report.blobs);
                Ok(())
            })?;
            let mut report = push::put_index(client, &index.index, repository, tags, push_opts)?;
            report.blobs = blobs;
            Ok(report)
        }
    }
}

/// Whether any blob of `artifact` is kept in a registry rather than on this machine.
pub fn has_remote_blobs(artifact: Artifact<'_>) -> bool {
    artifact
        .blobs()
        .iter()
        .any(|b| matches!(b.source, BlobSource::Remote { .. }))
}

/// Where a built image goes: a local output, registry tags, and a file for its digest.
#[derive(Debug, Clone, Default)]
pub struct Delivery {
    /// `--output` and the names to record there ([`output_names`]).
    pub output: Option<(Destination, Vec<String>)>,
    /// `-t` references to push to (empty = no push).
    pub push: Vec<String>,
    /// Push settings.
    pub push_options: PushOptions,
    /// A file to receive the bare digest (`sha256:…`, no newline, as buildah's and podman's
    /// `--digestfile`), written only once the image is delivered.
    pub digest_file: Option<PathBuf>,
}

/// A built image or index that [`deliver`] can send: bundle builds have every blob on this
/// machine, catalog builds on a base may keep the base's layers in a registry, where each one
/// fetches itself when a sink needs its bytes.
pub trait Deliverable {
    /// The value the sinks take.
    fn artifact(&self) -> Artifact<'_>;
}

impl Deliverable for crate::image::build::BuiltImage {
    fn artifact(&self) -> Artifact<'_> {
        Artifact::Image(&self.image)
    }
}

/// Why [`deliver`] stopped (nothing is left half-written: the digest file is put in place
/// last, local outputs are written atomically).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeliveryError {
    /// The digest file could not be staged or put in place.
    #[error(transparent)]
    DigestFile(OutputError),
    /// The push failed.
    #[error(transparent)]
    Push(TransportError),
    /// Blobs kept in a registry could not be downloaded.
    #[error("cannot download the base image's layers")]
    Fetch(#[source] TransportError),
    /// A local output cannot be written where it was asked for (checked before anything is
    /// built or pushed, so a push never succeeds for a command that then fails).
    #[error("cannot write {dest}: {reason}; nothing was pushed or written")]
    Unwritable {
        /// The destination as given (`oci:nodir/lay`, `--digest-file d/x`).
        dest: String,
        /// What is in the way.
        reason: String,
    },
    /// The local output could not be written.
    #[error("cannot write {dest}")]
    Write {
        /// The destination as given.
        dest: String,
        /// Why.
        #[source]
        source: OutputError,
    },
}

/// Checks every local output of `delivery` (the `--output` destination and the digest file)
/// before anything is built or leaves the machine: each one's folder must exist and take new
/// files, and what is already at the path must be something the output may replace or add to.
/// Missing parent folders are refused rather than created, so a typo makes no folders.
pub fn check_outputs(delivery: &Delivery) -> Result<(), DeliveryError> {
    use std::io::ErrorKind;
    let refuse = |dest: String, reason: String| DeliveryError::Unwritable { dest, reason };
    let creatable = |dest: String, path: &std::path::Path| {
        crate::fsio::check_creatable(path).map_err(|e| refuse(dest, e.source.to_string()))
    };
    if let Some((dest, _)) = &delivery.output {
        let path = dest.path();
        let shown = dest.to_string();
        match (dest, std::fs::symlink_metadata(path)) {
            (_, Err(e)) if e.kind() == ErrorKind::NotFound => creatable(shown, path)?,
            (_, Err(e)) => return Err(refuse(shown, e.to_string())),
            (Destination::OciLayout { .. }, Ok(meta)) => {
                if !meta.is_dir() {
                    return Err(refuse(
                        shown,
                        format!("{} is a file, not a folder (an OCI layout)", path.display()),
                    ));
                }
                let is_layout = path.join("oci-layout").exists();
                let empty = std::fs::read_dir(path)
                    .map_err(|e| refuse(shown.clone(), e.to_string()))?
                    .next()
                    .is_none();
                if !is_layout && !empty {
                    return Err(refuse(
                        shown,
                        format!(
                            "{} exists and is not an OCI image layout (no oci-layout file); \
                             choose an empty or new folder",
                            path.display()
                        ),
                    ));
                }
                if is_layout {
                    creatable(shown, &path.join("index.json"))?;
                } else {
                    creatable(shown, path)?;
                }
            }
            (_, Ok(meta)) if meta.is_dir() => {
                return Err(refuse(
                    shown,
                    format!("{} is a folder, not an archive file", path.display()),
                ));
            }
            (_, Ok(_)) => creatable(shown, path)?,
        }
    }
    if let Some(file) = &delivery.digest_file {
        let shown = format!("--digest-file {}", file.display());
        if file.is_dir() {
            return Err(refuse(shown, format!("{} is a folder", file.display())));
        }
        creatable(shown, file)?;
    }
    Ok(())
}

/// Sends `item` where `delivery` says, in the one order that keeps "no partial output": the
/// digest file is staged first (so an unwritable one stops everything), then the push (a
/// failed push leaves no local output), then the local output, then the digest file is put in
/// place. Blobs kept in a registry fetch themselves where a sink needs them (a push mounts or
/// skips them when it can). Returns one report per pushed repository.
pub fn deliver(
    item: &mut dyn Deliverable,
    delivery: &Delivery,
    registry: &RegistryOptions,
) -> Result<Vec<PushReport>, DeliveryError> {
    check_outputs(delivery)?;
    let digest = item.artifact().top().descriptor.digest.clone();
    let staged = match &delivery.digest_file {
        Some(file) => Some(
            crate::fsio::stage(file, digest.as_bytes(), crate::fsio::Options::OUTPUT)
                .map_err(|e| DeliveryError::DigestFile(e.into()))?,
        ),
        None => None,
    };
    let mut reports = Vec::new();
    if !delivery.push.is_empty() {
        let pushed = push(
            item.artifact(),
            &delivery.push,
            registry,
            &delivery.push_options,
        )
        .map_err(DeliveryError::Push)?;
        reports.extend(pushed.into_iter().map(|(r, _)| r));
    }
    if let Some((dest, names)) = &delivery.output {
        write_local(item.artifact(), dest, names).map_err(|e| match e {
            WriteLocalError::Fetch(e) => DeliveryError::Fetch(e),
            WriteLocalError::Write(source) => DeliveryError::Write {
                dest: dest.to_string(),
                source,
            },
        })?;
    }
    if let Some(staged) = staged {
        staged
            .commit()
            .map_err(|e| DeliveryError::DigestFile(e.into()))?;
    }
    Ok(reports)
}

/// The tags (OCI) or `RepoTags` (docker-archive) to record in a local output, the same for
/// bundle and catalog builds: an `oci:`/`oci-archive:` destination uses its own `:TAG`, else
/// the tag part of each `-t REF`, else `latest`; a `docker-archive:` destination records its
/// own `:REF`, else every `-t REF` (`:latest` added when a reference has no tag).
///
/// Every reference must be a valid image reference, whether it is pushed or only names a
/// local output: a name that no registry would accept is refused before anything is built.
pub fn output_names(dest: &Destination, refs: &[String]) -> Result<Vec<String>, TransportError> {
    for r in refs {
        Reference::parse(r)?;
    }
    let mut names: Vec<String> = Vec::new();
    match dest {
        Destination::DockerArchive { reference, .. } => {
            let given: Vec<&String> = match reference {
                Some(r) => vec![r],
                None => refs.iter().collect(),
            };
            for r in given {
                if r.contains('@') {
                    return Err(TransportError::DigestName(r.clone()));
                }
                names.push(if tag_of(r).is_some() {
                    r.clone()
                } else {
                    format!("{r}:latest")
                });
            }
        }
        Destination::OciLayout { tag, .. } | Destination::OciArchive { tag, .. } => match tag {
            Some(t) => names.push(t.clone()),
            None => {
                names.extend(
                    refs.iter()
                        .filter(|r| !r.contains('@'))
                        .map(|r| tag_of(r).unwrap_or("latest").to_string()),
                );
                if names.is_empty() {
                    names.push("latest".to_string());
                }
            }
        },
    }
    let mut unique = Vec::with_capacity(names.len());
    for n in names {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    Ok(unique)
}

/// The tag of a reference (`quay.io:443/o/b:v1` → `v1`), `None` when it has none.
fn tag_of(reference: &str) -> Option<&str> {
    let last = reference.rsplit('/').next().unwrap_or(reference);
    last.split_once(':')
        .map(|(_, t)| t)
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_come_from_the_destination_then_the_references() {
        let oci: Destination = "oci:x".parse().unwrap();
        assert_eq!(output_names(&oci, &[]).unwrap(), ["latest"]);
        let refs = vec!["quay.io:443/o/b:v1".to_string(), "o/b".to_string()];
        assert_eq!(output_names(&oci, &refs).unwrap(), ["v1", "latest"]);
        let tagged: Destination = "oci:x:t".parse().unwrap();
        assert_eq!(output_names(&tagged, &refs).unwrap(), ["t"]);
        let docker: Destination = "docker-archive:x.tar".parse().unwrap();
        assert_eq!(
            output_names(&docker, &refs).unwrap(),
            ["quay.io:443/o/b:v1", "o/b:latest"]
        );
        assert!(output_names(&docker, &[]).unwrap().is_empty());
        let named: Destination = "docker-archive:x.tar:r/b:v2".parse().unwrap();
        assert_eq!(output_names(&named, &refs).unwrap(), ["r/b:v2"]);
        let pinned = vec![format!("o/b@sha256:{}", "0".repeat(64))];
        assert!(output_names(&docker, &pinned).is_err());
        let malformed = vec!["Quay.io/Bad Ref:v1".to_string()];
        assert!(output_names(&oci, &malformed).is_err());
    }
}
