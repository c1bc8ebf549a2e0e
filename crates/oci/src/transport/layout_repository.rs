//! An OCI layout folder as a [`Repository`]: the same calls a registry repository answers
//! ([`crate::registry::Remote`]), answered from `index.json` and `blobs/` (regclient's
//! `scheme/ocidir` beside `scheme/reg`). Tags are the `org.opencontainers.image.ref.name`
//! annotations of `index.json`, chosen by the rule every layout reader uses
//! ([`layout::tag_positions`]); referrers are the untagged entries whose manifest names the
//! subject (where a copy or a signer puts them), so a layout has the referrers "API" and needs
//! no fallback tag. Every read is verified against its digest; writes go through the layout's
//! lock like every other writer of `index.json`.

use super::error::{LocalError, TransportError};
use super::layout;
use crate::image::digest::VerifyingReader;
use crate::image::manifest::descriptor_json;
use crate::image::media::ANNOTATION_REF_NAME;
use crate::image::parse::{IndexEntry, MAX_MANIFEST_BYTES, declared_media_type};
use crate::image::{Descriptor, OutputError};
use crate::registry::repository::{Manifest, ManifestHead, Repository, RepositoryError};
use serde_json::Value;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The layout folder `dir` as a repository.
#[derive(Debug, Clone)]
pub struct LayoutRepository {
    dir: PathBuf,
    name: String,
}

fn store(e: impl Into<TransportError>) -> RepositoryError {
    RepositoryError::Store(Box::new(e.into()))
}

impl LayoutRepository {
    /// The layout at `dir` (which must exist to be read; writes need its `oci-layout` marker).
    pub fn new(dir: &Path) -> LayoutRepository {
        LayoutRepository {
            dir: dir.to_path_buf(),
            name: format!("oci:{}", dir.display()),
        }
    }

    fn entries(&self) -> Result<Vec<Value>, RepositoryError> {
        let index = layout::read_index(&self.dir).map_err(store)?;
        Ok(index
            .get("manifests")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }

    /// The entry a tag names, or the first entry listing a digest.
    fn entry(&self, reference: &str) -> Result<Option<Value>, RepositoryError> {
        let entries = self.entries()?;
        if reference.contains(':') {
            return Ok(entries
                .into_iter()
                .find(|e| e.get("digest").and_then(Value::as_str) == Some(reference)));
        }
        let positions = layout::tag_positions(entries.iter().map(|e| {
            (
                e.pointer("/annotations/org.opencontainers.image.ref.name")
                    .and_then(Value::as_str),
                e.get("mediaType").and_then(Value::as_str),
            )
        }));
        Ok(positions.get(reference).map(|&i| entries[i].clone()))
    }

    fn invalid(&self, reason: String) -> RepositoryError {
        store(LocalError::Invalid {
            source_name: self.name.clone(),
            reason,
        })
    }

    fn read(&self, digest: &str, cap: u64) -> Result<Vec<u8>, RepositoryError> {
        layout::read_verified(&self.dir, digest, cap, &self.name).map_err(store)
    }
}

fn entry_digest(e: &Value) -> Option<&str> {
    e.get("digest").and_then(Value::as_str)
}

impl Repository for LayoutRepository {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// A tag or an `index.json` entry, or (for a digest) a manifest blob of the layout: the
    /// images of an index are blobs without entries of their own.
    fn manifest_head(&self, reference: &str) -> Result<Option<ManifestHead>, RepositoryError> {
        if let Some(e) = self.entry(reference)? {
            return Ok(Some(ManifestHead {
                digest: entry_digest(&e).map(str::to_string),
            }));
        }
        let blob = reference.contains(':') && self.blob_head(reference)?;
        Ok(blob.then(|| ManifestHead {
            digest: Some(reference.to_string()),
        }))
    }

    fn manifest_get(&self, reference: &str) -> Result<Manifest, RepositoryError> {
        let (digest, media_type) = match self.entry(reference)? {
            Some(e) => (
                entry_digest(&e).unwrap_or_default().to_string(),
                e.get("mediaType")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ),
            None if reference.contains(':') => (reference.to_string(), None),
            None => {
                return Err(self.invalid(format!("no manifest tagged {reference:?} in index.json")));
            }
        };
        let bytes = self.read(&digest, MAX_MANIFEST_BYTES)?;
        let media_type = media_type
            .filter(|m| !m.is_empty())
            .or_else(|| declared_media_type(&bytes))
            .unwrap_or_default();
        Ok(Manifest {
            bytes,
            media_type,
            digest,
        })
    }

    fn manifest_put(&self, reference: &str, manifest: &Manifest) -> Result<(), RepositoryError> {
        let descriptor = Descriptor {
            media_type: manifest.media_type.clone(),
            digest: manifest.digest.clone(),
            size: manifest.bytes.len() as u64,
        };
        self.blob_put(&descriptor, &manifest.bytes)?;
        let tags: Vec<String> = if reference.contains(':') {
            Vec::new()
        } else {
            vec![reference.to_string()]
        };
        layout::add_index_entries(&self.dir, &descriptor_json(&descriptor), &tags).map_err(store)
    }

    fn blob_head(&self, digest: &str) -> Result<bool, RepositoryError> {
        Ok(layout::blob_path(&self.dir, digest).is_some_and(|p| p.is_file()))
    }

    fn blob_get(
        &self,
        descriptor: &Descriptor,
        limit: u64,
    ) -> Result<VerifyingReader<Box<dyn Read + Send>>, RepositoryError> {
        let path = layout::blob_path(&self.dir, &descriptor.digest)
            .ok_or_else(|| self.invalid(format!("invalid digest {:?}", descriptor.digest)))?;
        let file = std::fs::File::open(&path)
            .map_err(|e| store(LocalError::io(&self.name, "read blob", &path)(e)))?;
        Ok(VerifyingReader::new(
            Box::new(file) as Box<dyn Read + Send>,
            descriptor.clone(),
            limit,
        ))
    }

    fn blob_put(&self, descriptor: &Descriptor, bytes: &[u8]) -> Result<(), RepositoryError> {
        let actual = crate::registry::digest::sha256(bytes);
        if actual != descriptor.digest {
            return Err(store(LocalError::DigestMismatch {
                source_name: self.name.clone(),
                expected: descriptor.digest.clone(),
                actual,
            }));
        }
        let path = layout::blob_path(&self.dir, &descriptor.digest)
            .ok_or_else(|| self.invalid(format!("invalid digest {:?}", descriptor.digest)))?;
        if path.is_file() {
            return Ok(());
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| store(OutputError::io("create", parent, e)))?;
        }
        crate::fsio::write(&path, bytes, crate::fsio::Options::OUTPUT)
            .map_err(|e| store(OutputError::from(e)))
    }

    /// A layout is one blob store: there is nothing to mount from.
    fn blob_mount(&self, _digest: &str, _from: &str) -> Result<bool, RepositoryError> {
        Ok(false)
    }

    fn tags(&self) -> Result<HashSet<String>, RepositoryError> {
        Ok(self
            .entries()?
            .iter()
            .filter_map(|e| {
                e.pointer("/annotations")
                    .and_then(|a| a.get(ANNOTATION_REF_NAME))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect())
    }

    fn referrers(&self, subject: &str) -> Result<Option<Vec<IndexEntry>>, RepositoryError> {
        let mut out = Vec::new();
        for e in self.entries()? {
            if e.pointer("/annotations")
                .and_then(|a| a.get(ANNOTATION_REF_NAME))
                .is_some()
            {
                continue;
            }
            let Some(digest) = entry_digest(&e) else {
                continue;
            };
            // An entry that cannot be read is no referrer of anything.
            let Ok(bytes) = self.read(digest, MAX_MANIFEST_BYTES) else {
                continue;
            };
            let names = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|m| m.pointer("/subject/digest").cloned())
                .and_then(|d| d.as_str().map(|d| d == subject));
            if names != Some(true) {
                continue;
            }
            let Some(size) = e.get("size").and_then(Value::as_u64) else {
                continue;
            };
            let descriptor = Descriptor {
                media_type: e
                    .get("mediaType")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                digest: digest.to_string(),
                size,
            };
            out.push(IndexEntry {
                descriptor,
                platform: None,
                platform_json: None,
                raw: e,
            });
        }
        Ok(Some(out))
    }

    /// Lists each referrer as an untagged entry (the copy wrote its blobs already).
    fn referrers_put(&self, _subject: &str, entries: &[IndexEntry]) -> Result<(), RepositoryError> {
        for e in entries {
            layout::add_index_entries(&self.dir, &e.raw, &[]).map_err(store)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::config::canonical_json;
    use crate::image::extend::assemble;
    use crate::image::manifest::Format;
    use crate::image::{Blob, Image, media};
    use serde_json::json;

    fn image(text: &str) -> Image {
        let layer = Blob::memory(media::OCI_LAYER_GZIP, text.as_bytes().to_vec());
        let config = Blob::memory(
            media::OCI_CONFIG,
            br#"{"architecture":"amd64","os":"linux"}"#.to_vec(),
        );
        assemble(Format::Oci, config, vec![layer])
    }

    /// The calls a registry answers, answered by a layout: tags, existence, reads by tag and
    /// digest, a tagged write, and a referrer found by its subject once it is listed.
    #[test]
    fn a_layout_answers_what_a_registry_answers() {
        let dir = tempfile::tempdir().unwrap();
        let subject = image("subject");
        layout::write_layout(&subject, dir.path(), &["v1".to_string()]).unwrap();
        let repo = LayoutRepository::new(dir.path());
        let digest = subject.digest().to_string();
        assert_eq!(repo.tags().unwrap(), HashSet::from(["v1".to_string()]));
        assert_eq!(
            repo.manifest_head("v1").unwrap().and_then(|h| h.digest),
            Some(digest.clone())
        );
        assert!(repo.manifest_head("v2").unwrap().is_none());
        assert!(repo.manifest_find("v2").unwrap().is_none());
        let by_tag = repo.manifest_get("v1").unwrap();
        assert_eq!(by_tag, repo.manifest_get(&digest).unwrap());
        assert_eq!(by_tag.digest, digest);
        assert!(repo.blob_head(&subject.config.descriptor.digest).unwrap());
        assert!(!repo.blob_mount(&digest, "elsewhere").unwrap());

        // A referrer: config and manifest stored, listed untagged, found by its subject.
        let config = Blob::memory(media::OCI_CONFIG, b"{}".to_vec());
        repo.blob_put(&config.descriptor, b"{}").unwrap();
        let referrer = Manifest::new(
            media::OCI_MANIFEST,
            canonical_json(&json!({
                "schemaVersion": 2,
                "mediaType": media::OCI_MANIFEST,
                "artifactType": "application/example",
                "config": descriptor_json(&config.descriptor),
                "layers": [],
                "subject": {"mediaType": media::OCI_MANIFEST, "digest": digest, "size": subject.manifest.descriptor.size},
            })),
        );
        assert_eq!(repo.referrers(&digest).unwrap(), Some(Vec::new()));
        repo.manifest_put(&referrer.digest, &referrer).unwrap();
        let found = repo.referrers(&digest).unwrap().unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].descriptor.digest, referrer.digest);
        // Listing it again changes nothing; it is no tag.
        repo.referrers_put(&digest, &found).unwrap();
        assert_eq!(repo.referrers(&digest).unwrap().unwrap().len(), 1);
        assert_eq!(repo.tags().unwrap().len(), 1);

        // A tagged write replaces the tag, as a registry's would.
        repo.manifest_put("v1", &referrer).unwrap();
        assert_eq!(repo.manifest_get("v1").unwrap().digest, referrer.digest);
        // A blob whose bytes are not its digest's is refused.
        assert!(repo.blob_put(&config.descriptor, b"other").is_err());
    }
}
