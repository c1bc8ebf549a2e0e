//! The signed image and the place its signature artifacts live: a registry repository (through
//! the registry client) or an OCI layout (signature manifests are `index.json` entries named
//! by their tag, as a registry would hold them, so a layout can be signed, copied and verified
//! offline). Archives are refused: they have no place for a second manifest that tools agree on.

use super::{SignatureError, sha256_digest};
use crate::image::media::{OCI_INDEX, OCI_MANIFEST};
use crate::image::{Blob, BlobSource, Descriptor, Image};
use crate::location::{LocalImage, Location, Place};
use crate::reference::Reference;
use crate::registry::pull;
use crate::registry::push::{self, Progress, PushOptions};
use crate::registry::{RegistryError, Remote, Repository, RepositoryError};
use crate::transport::layout;
use crate::transport::{RegistryOptions, TransportError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest signature manifest, payload or bundle olmpack reads (they are a few KiB).
const MAX_SMALL: u64 = 4 << 20;

/// Where the image is.
#[derive(Debug)]
pub enum Where {
    /// A registry repository.
    Registry {
        /// The repository, through a client for its registry.
        repository: Box<Remote>,
        /// The reference as given (tag or digest kept, for the identity check).
        reference: Reference,
    },
    /// An OCI layout folder.
    Layout {
        /// The folder.
        dir: PathBuf,
        /// Its `index.json`, read once and shared by every image of the layout (verifying
        /// a thousand images of one layout parses it once, not three thousand times).
        index: Arc<LayoutIndex>,
    },
}

/// A layout's `index.json` entries, with their tags indexed.
#[derive(Debug)]
pub struct LayoutIndex {
    entries: Vec<serde_json::Value>,
    by_tag: HashMap<String, usize>,
}

const REF_NAME: &str = crate::image::media::ANNOTATION_REF_NAME;

impl LayoutIndex {
    /// Reads `dir/index.json`.
    pub fn read(dir: &Path) -> Result<LayoutIndex, SignatureError> {
        let index = layout::read_index(dir)?;
        let entries = index["manifests"].as_array().cloned().unwrap_or_default();
        // The entry a tag names by the rule every layout reader uses (the first one), so the
        // image verified is the image read.
        let by_tag = layout::tag_positions(
            entries
                .iter()
                .map(|e| (e["annotations"][REF_NAME].as_str(), e["mediaType"].as_str())),
        )
        .into_iter()
        .map(|(t, i)| (t.to_string(), i))
        .collect();
        Ok(LayoutIndex { entries, by_tag })
    }

    fn tagged(&self, tag: &str) -> Option<&serde_json::Value> {
        self.by_tag.get(tag).map(|&i| &self.entries[i])
    }
}

/// Whether a tag names a signature artifact (cosign's `.sig` tag or a referrers fallback tag)
/// rather than an image to verify.
pub fn is_signature_tag(tag: &str) -> bool {
    tag.ends_with(".sig")
        || (tag.starts_with("sha256-") && tag.len() == 71)
        || tag.ends_with(".att")
        || tag.ends_with(".sbom")
}

/// An image resolved to the digest of its top manifest (an index stays an index: the index is
/// what gets signed, as cosign and skopeo sign what a tag names).
#[derive(Debug)]
pub struct Target {
    /// The image as the user typed it.
    pub name: String,
    /// Where it is.
    pub place: Where,
    /// `sha256:<hex>` of the manifest (or index) bytes.
    pub digest: String,
}

/// A manifest as stored, with its digest.
#[derive(Debug, Clone)]
pub struct StoredManifest {
    /// The bytes (verified).
    pub bytes: Vec<u8>,
    /// Their digest.
    pub digest: String,
}

impl Target {
    /// Resolves `location` (a registry reference or an `oci:` layout) to its manifest digest.
    pub fn resolve(location: &Location, opts: &RegistryOptions) -> Result<Target, SignatureError> {
        let name = location.as_str().to_string();
        match location.place() {
            Place::Registry(reference) => {
                let repository = opts.repository(reference)?;
                let digest = repository
                    .manifest_get(reference.manifest_reference())
                    .map_err(repository_error)?
                    .digest;
                Ok(Target {
                    name,
                    place: Where::Registry {
                        repository: Box::new(repository),
                        reference: reference.clone(),
                    },
                    digest,
                })
            }
            Place::Local(LocalImage::OciLayout { path, tag }) => {
                let index = Arc::new(LayoutIndex::read(path)?);
                let entry = match tag {
                    Some(t) => index.tagged(t).ok_or_else(|| {
                        SignatureError::Unsupported(format!(
                            "{name}: no manifest tagged {t:?} in index.json"
                        ))
                    })?,
                    None => {
                        let images: Vec<&serde_json::Value> = index
                            .entries
                            .iter()
                            .filter(|e| {
                                !e["annotations"][REF_NAME]
                                    .as_str()
                                    .is_some_and(is_signature_tag)
                            })
                            .collect();
                        if images.len() != 1 {
                            return Err(SignatureError::Unsupported(format!(
                                "{name}: index.json lists {} images; name one with :TAG",
                                images.len()
                            )));
                        }
                        images[0]
                    }
                };
                Target::in_layout(path, &index, entry, name)
            }
            Place::Local(other) => Err(SignatureError::Unsupported(format!(
                "{name}: a {} cannot hold signatures; sign the image in a registry or an oci: layout",
                other.transport().name()
            ))),
            Place::Path(p) => Err(SignatureError::Unsupported(format!(
                "{} is a folder or file, not an image: name a registry reference or oci:{}",
                p.display(),
                p.display()
            ))),
        }
    }

    /// Every image of an OCI layout (each tagged entry that is not a signature artifact), for
    /// verifying a whole layout at once.
    pub fn layout_images(dir: &Path, shown: &str) -> Result<Vec<Target>, SignatureError> {
        let index = Arc::new(LayoutIndex::read(dir)?);
        let mut out = Vec::new();
        for (i, e) in index.entries.iter().enumerate() {
            let Some(tag) = e["annotations"][REF_NAME].as_str() else {
                continue;
            };
            // An entry its tag does not name (a later duplicate) is not read by that name.
            if is_signature_tag(tag) || index.by_tag.get(tag) != Some(&i) {
                continue;
            }
            out.push(Target::in_layout(dir, &index, e, format!("{shown}:{tag}"))?);
        }
        Ok(out)
    }

    fn in_layout(
        dir: &Path,
        index: &Arc<LayoutIndex>,
        entry: &serde_json::Value,
        name: String,
    ) -> Result<Target, SignatureError> {
        let desc = descriptor_of(entry).ok_or_else(|| {
            SignatureError::Unsupported(format!("{name}: index.json entry has no valid descriptor"))
        })?;
        // The manifest is read and hashed, so the digest verified is the content's.
        layout::read_manifest(dir, &desc, &name)?;
        Ok(Target {
            name,
            place: Where::Layout {
                dir: dir.to_path_buf(),
                index: Arc::clone(index),
            },
            digest: desc.digest,
        })
    }

    /// The repository or layout, without tag: what a signature tag is appended to in messages
    /// (`quay.io/org/img`, `oci:PATH`).
    pub fn base_name(&self) -> String {
        match &self.place {
            Where::Registry { reference, .. } => reference.name(),
            Where::Layout { dir, .. } => format!("oci:{}", dir.display()),
        }
    }

    /// The registry reference, when the image is in a registry.
    pub fn reference(&self) -> Option<&Reference> {
        match &self.place {
            Where::Registry { reference, .. } => Some(reference),
            Where::Layout { .. } => None,
        }
    }

    /// The 64 hex digits of the digest.
    pub fn hex(&self) -> &str {
        self.digest.strip_prefix("sha256:").unwrap_or(&self.digest)
    }

    /// The manifest tagged `tag` in the same repository or layout, `None` when there is none.
    pub fn manifest_by_tag(&self, tag: &str) -> Result<Option<StoredManifest>, SignatureError> {
        match &self.place {
            Where::Registry { repository, .. } => Ok(repository
                .manifest_find(tag)
                .map_err(repository_error)?
                .map(|m| StoredManifest {
                    bytes: m.bytes,
                    digest: m.digest,
                })),
            Where::Layout { dir, index } => {
                let Some(entry) = index.tagged(tag) else {
                    return Ok(None);
                };
                let desc = descriptor_of(entry).ok_or_else(|| {
                    SignatureError::Unsupported(format!(
                        "{}: index.json entry {tag} has no valid descriptor",
                        dir.display()
                    ))
                })?;
                let bytes = layout::read_manifest(dir, &desc, &self.name)?;
                Ok(Some(StoredManifest {
                    digest: desc.digest,
                    bytes,
                }))
            }
        }
    }

    /// The manifest with `digest` (verified).
    pub fn manifest_by_digest(&self, digest: &str) -> Result<Vec<u8>, SignatureError> {
        match &self.place {
            Where::Registry { repository, .. } => Ok(repository
                .manifest_get(digest)
                .map_err(repository_error)?
                .bytes),
            Where::Layout { dir, .. } => Ok(self.read_layout_blob(dir, digest)?),
        }
    }

    /// The entries of the layout's `index.json` whose descriptor announces `artifact_type`
    /// (how an OCI 1.1 layout lists referrers such as Sigstore bundles).
    pub fn layout_artifacts(&self, artifact_type: &str) -> Vec<Descriptor> {
        match &self.place {
            // An entry announcing the type, or an untagged manifest entry that announces
            // nothing (a copy into a layout lists a referrer by its descriptor alone, as
            // other tools do): the caller reads each manifest and keeps only those of this
            // type whose subject is the image.
            Where::Layout { index, .. } => index
                .entries
                .iter()
                .filter(|e| match e["artifactType"].as_str() {
                    Some(t) => t == artifact_type,
                    None => {
                        e["mediaType"].as_str() == Some(crate::image::media::OCI_MANIFEST)
                            && e["annotations"][crate::image::media::ANNOTATION_REF_NAME].is_null()
                    }
                })
                .filter_map(descriptor_of)
                .collect(),
            Where::Registry { .. } => Vec::new(),
        }
    }

    /// The OCI 1.1 referrers index of the image (the referrers API, else the `sha256-<hex>`
    /// fallback tag the spec defines for registries without it), as JSON; `None` when there is
    /// none.
    pub fn referrers_index(&self) -> Result<Option<serde_json::Value>, SignatureError> {
        let Where::Registry { repository, .. } = &self.place else {
            return Ok(None);
        };
        if let Some(entries) = repository
            .referrers(&self.digest)
            .map_err(repository_error)?
        {
            let manifests: Vec<serde_json::Value> = entries.into_iter().map(|e| e.raw).collect();
            return Ok(Some(serde_json::json!({
                "schemaVersion": 2,
                "mediaType": OCI_INDEX,
                "manifests": manifests,
            })));
        }
        let tag = format!("sha256-{}", self.hex());
        match self.manifest_by_tag(&tag)? {
            Some(m) => Ok(serde_json::from_slice(&m.bytes).ok()),
            None => Ok(None),
        }
    }

    /// A small blob of the repository or layout, verified against its digest.
    pub fn blob(&self, desc: &Descriptor) -> Result<Vec<u8>, SignatureError> {
        if desc.size > MAX_SMALL {
            return Err(SignatureError::Unsupported(format!(
                "blob {} is {} bytes; signature payloads are small",
                desc.digest, desc.size
            )));
        }
        match &self.place {
            Where::Registry { repository, .. } => Ok(pull::fetch_small_blob(
                repository.client(),
                repository.repository(),
                desc,
            )?),
            Where::Layout { dir, .. } => self.read_layout_blob(dir, &desc.digest),
        }
    }

    fn read_layout_blob(&self, dir: &Path, digest: &str) -> Result<Vec<u8>, SignatureError> {
        let path = layout::blob_path(dir, digest).ok_or_else(|| {
            SignatureError::Unsupported(format!("invalid digest {digest:?} in a manifest"))
        })?;
        let bytes = crate::fsio::read(&path)?;
        if bytes.len() as u64 > MAX_SMALL {
            return Err(SignatureError::Unsupported(format!(
                "blob {digest} is too large for a signature"
            )));
        }
        let actual = sha256_digest(&bytes);
        if actual != digest {
            return Err(RegistryError::DigestMismatch {
                expected: digest.to_string(),
                actual,
            }
            .into());
        }
        Ok(bytes)
    }

    /// Writes a signature manifest (`manifest` bytes with its config and layers) under `tag`,
    /// blobs first. Blobs already beside the image (earlier signatures) are `existing` and not
    /// sent again.
    pub fn write_manifest(
        &self,
        manifest: Vec<u8>,
        config: Blob,
        layers: Vec<Blob>,
        tag: &str,
    ) -> Result<String, SignatureError> {
        let manifest = Blob::memory(OCI_MANIFEST, manifest);
        let digest = manifest.descriptor.digest.clone();
        let image = Image {
            manifest,
            config,
            layers,
        };
        match &self.place {
            Where::Registry { repository, .. } => {
                let opts = PushOptions {
                    progress: Progress::Silent,
                    ..PushOptions::default()
                };
                push::push_image(
                    repository.client(),
                    &image,
                    repository.repository(),
                    &[tag.to_string()],
                    &opts,
                )?;
            }
            Where::Layout { dir, .. } => {
                layout::write_layout(&image, dir, &[tag.to_string()])?;
            }
        }
        Ok(digest)
    }

    /// A blob that already sits beside the image, for re-writing a manifest that lists it.
    pub fn existing_blob(&self, desc: Descriptor) -> Blob {
        let source = match &self.place {
            Where::Registry { reference, .. } => BlobSource::Remote {
                registry: reference.registry.clone(),
                repository: reference.repository.clone(),
                fetcher: None,
            },
            Where::Layout { dir, .. } => match layout::blob_path(dir, &desc.digest) {
                Some(p) => BlobSource::File(p),
                None => BlobSource::Memory(Vec::new()),
            },
        };
        Blob {
            descriptor: desc,
            source,
        }
    }
}

/// A repository's failure as a signature error: the registry's own error kept as it was.
fn repository_error(e: RepositoryError) -> SignatureError {
    match e {
        RepositoryError::Registry(e) => e.into(),
        other => TransportError::from(other).into(),
    }
}

/// The descriptor of a JSON descriptor object, when it is a valid one.
pub fn descriptor_of(v: &serde_json::Value) -> Option<Descriptor> {
    let digest = v["digest"].as_str()?;
    if !crate::reference::valid_digest(digest) {
        return None;
    }
    Some(Descriptor {
        media_type: v["mediaType"].as_str().unwrap_or_default().to_string(),
        digest: digest.to_string(),
        size: v["size"].as_u64()?,
    })
}
