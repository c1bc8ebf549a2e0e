//! One repository API: what a place that holds images offers, whether it is a registry
//! repository spoken to over HTTP ([`super::remote::Remote`]) or an OCI layout folder
//! (`transport::layout_repository`). Copying what is attached to an image, reading and writing
//! signature artifacts and checking what a target already holds are written once against it.
//!
//! regclient's `scheme` interface is the model: the same calls (manifest head/get/put, blob
//! head/get/put/mount, tag list, referrers) answered by `scheme/reg` and `scheme/ocidir`.
//! Everything here is content-addressed and verified: a manifest read by digest hashes to
//! that digest, a blob stream is a [`VerifyingReader`].

use super::errors::RegistryError;
use crate::image::Descriptor;
use crate::image::digest::VerifyingReader;
use crate::image::parse::{IndexEntry, parse_index};
use std::collections::HashSet;
use std::io::Read;

/// A manifest or index as stored: its bytes (verified against `digest`), media type and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The bytes, as the repository holds them.
    pub bytes: Vec<u8>,
    /// The media type it declares (or the one it was stored with).
    pub media_type: String,
    /// `sha256:` of `bytes`.
    pub digest: String,
}

impl Manifest {
    /// A manifest of `bytes` with its digest computed here (what a writer hands in).
    pub fn new(media_type: &str, bytes: Vec<u8>) -> Manifest {
        Manifest {
            digest: super::digest::sha256(&bytes),
            media_type: media_type.to_string(),
            bytes,
        }
    }
}

/// What a manifest existence check learns without reading the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManifestHead {
    /// The digest the repository says the manifest has (`Docker-Content-Digest`; a registry
    /// may leave it out).
    pub digest: Option<String>,
}

/// What a manifest deletion found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// The repository held the manifest and removed it (with every tag that pointed at it).
    Removed,
    /// The repository did not hold it (already deleted, or never there): nothing to do.
    Absent,
}

/// Why a repository operation failed: the registry's own error, or the local store's (kept
/// whole, so the transport can give it back as it was).
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// A registry answered (or failed to).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A local store (an OCI layout) could not be read or written.
    #[error(transparent)]
    Store(Box<dyn std::error::Error + Send + Sync>),
}

/// The tag the OCI referrers fallback (and cosign) derive from a digest: `sha256-<hex>`.
pub fn digest_tag(digest: &str) -> String {
    digest.replacen(':', "-", 1)
}

/// The operations a repository offers (see the module documentation). `reference` is a tag or
/// a digest throughout.
pub trait Repository: Send + Sync {
    /// What messages call it (`registry/repository`, `oci:PATH`).
    fn name(&self) -> String;

    /// Whether the manifest `reference` exists (`None` when it does not): the one existence
    /// check, with the digest when the repository says it.
    fn manifest_head(&self, reference: &str) -> Result<Option<ManifestHead>, RepositoryError>;

    /// The manifest `reference` names, verified when `reference` is a digest.
    fn manifest_get(&self, reference: &str) -> Result<Manifest, RepositoryError>;

    /// Stores `manifest` under `reference` (a tag, or its own digest); its blobs must be there.
    fn manifest_put(&self, reference: &str, manifest: &Manifest) -> Result<(), RepositoryError>;

    /// Whether the blob `digest` is in the repository.
    fn blob_head(&self, digest: &str) -> Result<bool, RepositoryError>;

    /// The blob `descriptor` names, as a stream verified against it (at most `limit` bytes);
    /// call [`VerifyingReader::finish`] after reading.
    fn blob_get(
        &self,
        descriptor: &Descriptor,
        limit: u64,
    ) -> Result<VerifyingReader<Box<dyn Read + Send>>, RepositoryError>;

    /// Stores `bytes` as the blob `descriptor` names (checked against it).
    fn blob_put(&self, descriptor: &Descriptor, bytes: &[u8]) -> Result<(), RepositoryError>;

    /// Makes the blob `digest` of the repository `from` (same registry or store) available
    /// here without sending it; `false` when the store declined (the caller sends it).
    fn blob_mount(&self, digest: &str, from: &str) -> Result<bool, RepositoryError>;

    /// Every tag.
    fn tags(&self) -> Result<HashSet<String>, RepositoryError>;

    /// The referrers of `subject` (OCI 1.1), `None` when the repository has no referrers API
    /// (a registry answering 404): the caller may then look for the fallback tag.
    fn referrers(&self, subject: &str) -> Result<Option<Vec<IndexEntry>>, RepositoryError>;

    /// Makes the manifests `entries` (already stored) findable as referrers of `subject`: a
    /// registry with the referrers API indexes them itself; one without gets the fallback tag
    /// `sha256-<hex>`, an index merged with what it already lists.
    fn referrers_put(&self, subject: &str, entries: &[IndexEntry]) -> Result<(), RepositoryError>;

    /// Removes the manifest `digest` (a digest, never a tag: a registry removes every tag
    /// pointing at it along with it, which is how a mirror's tags go). A store that cannot
    /// delete says so with [`RegistryError::DeleteUnsupported`].
    fn manifest_delete(&self, digest: &str) -> Result<Deleted, RepositoryError> {
        let _ = digest;
        Err(RegistryError::DeleteUnsupported {
            repository: self.name(),
            detail: String::new(),
        }
        .into())
    }

    /// The manifest `reference` names, `None` when there is none (an existence check, then a
    /// read).
    fn manifest_find(&self, reference: &str) -> Result<Option<Manifest>, RepositoryError> {
        match self.manifest_head(reference)? {
            Some(_) => self.manifest_get(reference).map(Some),
            None => Ok(None),
        }
    }

    /// The referrers fallback index of `subject` (the tag `sha256-<hex>`): its entries, `None`
    /// when the tag does not exist.
    fn fallback_referrers(
        &self,
        subject: &str,
    ) -> Result<Option<Vec<IndexEntry>>, RepositoryError> {
        let Some(index) = self.manifest_find(&digest_tag(subject))? else {
            return Ok(None);
        };
        let entries = parse_index(&index.bytes)
            .map_err(|e| RegistryError::Protocol(super::errors::printable(&e.to_string())))?;
        Ok(Some(entries.unwrap_or_default()))
    }
}

/// The fallback referrers index listing `existing` plus each of `added` it lacks (by digest).
pub fn merged_referrers_index(existing: &[IndexEntry], added: &[IndexEntry]) -> Manifest {
    let mut manifests: Vec<serde_json::Value> = existing.iter().map(|e| e.raw.clone()).collect();
    for entry in added {
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
        "mediaType": crate::image::media::OCI_INDEX,
        "manifests": manifests,
    });
    Manifest::new(
        crate::image::media::OCI_INDEX,
        crate::image::config::canonical_json(&index),
    )
}
