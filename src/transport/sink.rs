//! The one place that sends an image where the user asked: a local destination (`--output`,
//! through [`super::local::write_artifact`], which owns every layout and archive write) or a
//! registry push under every `-t REF`.
//!
//! Pushing groups the references by repository (one client and one blob upload per
//! repository, every tag of it after). Blobs of a base image kept in a registry
//! ([`crate::image::BlobSource::Remote`]) are skipped when present and mounted when they live on
//! the same registry; only when neither works are they downloaded, once, and uploaded
//! (the caller decides: see `action::catalog_build`).

use super::error::TransportError;
use super::options::RegistryOptions;
use crate::image::{Artifact, BlobSource, Destination, OutputError};
use crate::reference::Reference;
use crate::registry::push::{self, PushOptions, PushReport};
use crate::registry::{Client, RegistryError};

/// Writes an image or index to a local destination. `names` are the tags (OCI) or `RepoTags`
/// (docker-archive) to record.
pub fn write_local(
    artifact: Artifact<'_>,
    dest: &Destination,
    names: &[String],
) -> Result<(), OutputError> {
    super::local::write_artifact(artifact, dest, names)
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

fn push_one(
    client: &Client,
    artifact: Artifact<'_>,
    repository: &str,
    tags: &[String],
    push_opts: &PushOptions,
) -> Result<PushReport, RegistryError> {
    match artifact {
        Artifact::Image(image) => push::push_image(client, image, repository, tags, push_opts),
        Artifact::Index(index) => push::push_index(client, index, repository, tags, push_opts),
    }
}

/// Whether any blob of `artifact` is kept in a registry rather than on this machine.
pub fn has_remote_blobs(artifact: Artifact<'_>) -> bool {
    artifact
        .blobs()
        .iter()
        .any(|b| matches!(b.source, BlobSource::Remote { .. }))
}
