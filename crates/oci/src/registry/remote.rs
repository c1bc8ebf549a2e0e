//! A registry repository as a [`Repository`]: the distribution API over one [`Client`]. The
//! requests are built here and in the pull, push and tag-list modules it calls; nothing
//! outside `registry/` builds one.

use super::api;
use super::client::{Client, Request, header, read_capped};
use super::errors::RegistryError;
use super::pull;
use super::push::{self, PushOptions};
use super::repository::{
    Deleted, Manifest, ManifestHead, Repository, RepositoryError, digest_tag,
    merged_referrers_index,
};
use super::token::{delete_scope, pull_scope, push_scope};
use crate::image::digest::VerifyingReader;
use crate::image::parse::{IndexEntry, MAX_MANIFEST_BYTES, parse_index};
use crate::image::{Blob, BlobSource, Descriptor, media};
use reqwest::Method;
use std::collections::HashSet;
use std::io::Read;
use std::sync::Arc;

/// One repository of a registry, reached through a client (shared: an opened image's blobs
/// and manifests fetch themselves through the client that opened it).
#[derive(Debug, Clone)]
pub struct Remote {
    client: Arc<Client>,
    repository: String,
}

impl Remote {
    /// The repository `repository` of `client`'s registry.
    pub fn new(client: Arc<Client>, repository: &str) -> Remote {
        Remote {
            client,
            repository: repository.to_string(),
        }
    }

    /// The client (for its request counters and registry name).
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// The repository name (`org/image`).
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The blob `descriptor` names as the registry sends it, not verified here: for the image
    /// model's blobs, which verify what they read themselves.
    pub fn blob_stream(
        &self,
        descriptor: &Descriptor,
    ) -> Result<Box<dyn Read + Send>, RegistryError> {
        let req = Request::new(
            Method::GET,
            api::blob(&self.repository, &descriptor.digest),
            &[pull_scope(&self.repository)],
        );
        Ok(Box::new(self.client.expect(&req, &[200])?))
    }
}

impl Repository for Remote {
    fn name(&self) -> String {
        format!("{}/{}", self.client.registry(), self.repository)
    }

    fn manifest_head(&self, reference: &str) -> Result<Option<ManifestHead>, RepositoryError> {
        let req = Request::new(
            Method::HEAD,
            api::manifest(&self.repository, reference),
            &[pull_scope(&self.repository)],
        )
        .header("Accept", media::ACCEPT_MANIFESTS.join(", "));
        let resp = self.client.expect(&req, &[200, 404])?;
        if resp.status().as_u16() != 200 {
            return Ok(None);
        }
        Ok(Some(ManifestHead {
            digest: header(&resp, "Docker-Content-Digest"),
        }))
    }

    fn manifest_get(&self, reference: &str) -> Result<Manifest, RepositoryError> {
        let (bytes, media_type, digest) =
            pull::fetch_manifest(&self.client, &self.repository, reference)?;
        Ok(Manifest {
            bytes,
            media_type,
            digest,
        })
    }

    /// One `GET`: a `404` (no such tag, or no such repository) is `None`.
    fn manifest_find(&self, reference: &str) -> Result<Option<Manifest>, RepositoryError> {
        match self.manifest_get(reference) {
            Err(RepositoryError::Registry(RegistryError::Status { status: 404, .. })) => Ok(None),
            other => other.map(Some),
        }
    }

    fn manifest_put(&self, reference: &str, manifest: &Manifest) -> Result<(), RepositoryError> {
        push::put_manifest_bytes(
            &self.client,
            &self.repository,
            reference,
            &manifest.media_type,
            &manifest.bytes,
            &manifest.digest,
            &[push_scope(&self.repository)],
        )?;
        Ok(())
    }

    /// `DELETE …/manifests/<digest>` (distribution's API; OCI distribution 1.1 "Deleting
    /// Manifests"): 202 (or 200) removed, 404 absent, 405 deletion switched off. The digest is
    /// checked first: a tag here would delete only a tag on some registries and the whole
    /// manifest on others.
    fn manifest_delete(&self, digest: &str) -> Result<Deleted, RepositoryError> {
        if !is_digest(digest) {
            return Err(RegistryError::InvalidReference {
                input: digest.to_string(),
                reason: "a manifest is deleted by its digest (sha256:<64 hex>), not by a tag"
                    .into(),
            }
            .into());
        }
        let req = Request::new(
            Method::DELETE,
            api::manifest(&self.repository, digest),
            &[delete_scope(&self.repository)],
        );
        // Any other answer (401 after the challenge, 403, 5xx once retried) is an error that
        // names the request.
        let resp = self.client.expect(&req, &[200, 202, 404, 405])?;
        match resp.status().as_u16() {
            404 => Ok(Deleted::Absent),
            405 => {
                let errors = super::errors::parse_envelope(&read_capped(resp, 64 * 1024));
                let detail = errors
                    .first()
                    .map(|e| format!("{}: {}", e.code, e.message))
                    .unwrap_or_default();
                Err(RegistryError::DeleteUnsupported {
                    repository: self.name(),
                    detail,
                }
                .into())
            }
            _ => Ok(Deleted::Removed),
        }
    }

    fn blob_head(&self, digest: &str) -> Result<bool, RepositoryError> {
        Ok(push::blob_exists(
            &self.client,
            &self.repository,
            digest,
            &[pull_scope(&self.repository)],
        )?)
    }

    fn blob_get(
        &self,
        descriptor: &Descriptor,
        limit: u64,
    ) -> Result<VerifyingReader<Box<dyn Read + Send>>, RepositoryError> {
        if descriptor.size > limit {
            return Err(RegistryError::TooLarge {
                what: format!("blob {}", descriptor.digest),
                limit,
            }
            .into());
        }
        if descriptor.sha256_hex().is_none() {
            return Err(RegistryError::Protocol(format!(
                "cannot verify digest {}: only sha256 is supported",
                descriptor.digest
            ))
            .into());
        }
        let req = Request::new(
            Method::GET,
            api::blob(&self.repository, &descriptor.digest),
            &[pull_scope(&self.repository)],
        )
        .expecting(descriptor.size);
        let resp = self.client.expect(&req, &[200])?;
        Ok(VerifyingReader::new(
            Box::new(resp) as Box<dyn Read + Send>,
            descriptor.clone(),
            limit,
        ))
    }

    fn blob_put(&self, descriptor: &Descriptor, bytes: &[u8]) -> Result<(), RepositoryError> {
        let blob = Blob {
            descriptor: descriptor.clone(),
            source: BlobSource::Memory(bytes.to_vec()),
        };
        let opts = PushOptions {
            progress: push::Progress::Silent,
            ..PushOptions::default()
        };
        push::put_blob(&self.client, &self.repository, &blob, &opts)?;
        Ok(())
    }

    fn blob_mount(&self, digest: &str, from: &str) -> Result<bool, RepositoryError> {
        Ok(push::mount_blob(
            &self.client,
            &self.repository,
            digest,
            from,
        ))
    }

    fn tags(&self) -> Result<HashSet<String>, RepositoryError> {
        Ok(super::tags::list(&self.client, &self.repository)?)
    }

    /// `GET …/referrers/<digest>`: `None` when the registry does not have the API (404, 400,
    /// 405, or an answer that is not an OCI index).
    fn referrers(&self, subject: &str) -> Result<Option<Vec<IndexEntry>>, RepositoryError> {
        let req = Request::new(
            Method::GET,
            api::referrers(&self.repository, subject),
            &[pull_scope(&self.repository)],
        )
        .header("Accept", media::OCI_INDEX);
        let resp = self.client.expect(&req, &[200, 404, 400, 405])?;
        if resp.status().as_u16() != 200 {
            return Ok(None);
        }
        let is_index = header(&resp, "Content-Type").is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|t| t.trim() == media::OCI_INDEX)
        });
        let bytes = read_capped(resp, MAX_MANIFEST_BYTES);
        if !is_index {
            return Ok(None);
        }
        parse_index(&bytes)
            .map_err(|e| RegistryError::Protocol(super::errors::printable(&e.to_string())).into())
    }

    fn referrers_put(&self, subject: &str, entries: &[IndexEntry]) -> Result<(), RepositoryError> {
        if self.referrers(subject)?.is_some() {
            return Ok(());
        }
        let existing = self.fallback_referrers(subject)?.unwrap_or_default();
        let index = merged_referrers_index(&existing, entries);
        self.manifest_put(&digest_tag(subject), &index)
    }
}

/// Whether `text` is a digest this client can name a manifest by: `sha256:` and 64 lowercase
/// hex digits, or `sha512:` and 128.
fn is_digest(text: &str) -> bool {
    let hex_of = |h: &str, n: usize| {
        h.len() == n
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    match text.split_once(':') {
        Some(("sha256", h)) => hex_of(h, 64),
        Some(("sha512", h)) => hex_of(h, 128),
        _ => false,
    }
}
