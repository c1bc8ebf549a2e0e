//! The one place that turns a [`Location`] into an image.
//!
//! The string was classified once, by [`Location::parse`] (the grammar `bundle build --output`
//! writes, so anything written can be read back); a plain folder is refused here with a hint,
//! never looked up in a registry. [`open`] gives either one image or a multi-platform index whose images are opened
//! on demand ([`Opened`]); [`open_image`] resolves an index to the options' platform (with a
//! warning), which is what bundle commands want. Registry manifests and configs are verified
//! against their digests; layers are verified while they stream.

use super::error::TransportError;
use super::options::RegistryOptions;
use super::unpack::{self, Limits};
use super::{archive, layout};
use crate::image::{Blob, BlobSource, Descriptor, Image, Platform};
use crate::location::{LocalImage, Location, Place};
use crate::reference::Reference;
use crate::registry::RegistryError;
use crate::registry::client::Client;
use crate::registry::pull::{self, IndexEntry, VerifyingReader};
use crate::registry::push::read_small;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest layer accepted when reading an image (bundles are kilobytes, catalog images with an
/// opm base a few hundred megabytes; this is a sanity bound).
const MAX_LAYER_BYTES: u64 = 4 << 30;

/// How an opened image's blobs are reached. Shared (`Arc`) so every image of an index uses one
/// client (one token) and one extracted archive.
#[derive(Clone)]
enum Access {
    Registry {
        client: Arc<Client>,
        reference: Reference,
    },
    Local {
        /// Layout folder (for an index's other images); `None` for a docker-archive.
        layout: Option<PathBuf>,
        /// Keeps an extracted archive alive.
        _dir: Option<Arc<tempfile::TempDir>>,
    },
}

/// An opened single-platform image: manifest, config, and a way to stream each layer.
pub struct OpenedImage {
    /// The source as the user typed it.
    pub name: String,
    /// Manifest digest.
    pub digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// Manifest bytes (verified).
    pub manifest: Vec<u8>,
    /// Raw config JSON (verified).
    pub config: Vec<u8>,
    /// Config descriptor.
    pub config_descriptor: Descriptor,
    /// Layer descriptors.
    pub layers: Vec<Descriptor>,
    /// Notes for the user (an index was resolved to one platform, a synthesised manifest).
    pub warnings: Vec<String>,
    /// Local layer files, by index, when the image is on this machine.
    local_layers: Vec<PathBuf>,
    access: Access,
}

/// A multi-platform image index, its images opened one at a time with [`OpenedIndex::image`].
pub struct OpenedIndex {
    /// The source as the user typed it.
    pub name: String,
    /// Index digest.
    pub digest: String,
    /// Index media type (OCI index or Docker manifest list).
    pub media_type: String,
    /// Its entries, in the index's order.
    pub entries: Vec<IndexEntry>,
    access: Access,
}

/// What a source string names: one image, or an index of per-platform images.
pub enum Opened {
    /// A single image.
    Image(Box<OpenedImage>),
    /// A multi-platform index.
    Index(OpenedIndex),
}

impl std::fmt::Debug for OpenedImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedImage")
            .field("name", &self.name)
            .field("digest", &self.digest)
            .field("layers", &self.layers)
            .finish_non_exhaustive()
    }
}

/// Opens `location` as it is: an image or an index (nothing resolved to a platform). A plain
/// folder or file is refused with what to type instead ([`Location::require_image`]).
pub fn open(location: &Location, opts: &RegistryOptions) -> Result<Opened, TransportError> {
    let source = location.as_str();
    match location.place() {
        Place::Path(_) => Err(location.not_an_image().into()),
        Place::Local(image) => open_local(source, image),
        Place::Registry(reference) => {
            let client = Arc::new(opts.client_for(reference)?);
            let (bytes, media_type, digest) =
                pull::fetch_manifest_bytes(&client, reference, reference.manifest_reference())?;
            let access = Access::Registry {
                client,
                reference: reference.clone(),
            };
            match pull::parse_index(&bytes)? {
                Some(entries) => Ok(Opened::Index(OpenedIndex {
                    name: source.to_string(),
                    digest,
                    media_type,
                    entries,
                    access,
                })),
                None => Ok(Opened::Image(Box::new(registry_image(
                    source,
                    access,
                    bytes,
                    media_type,
                    digest,
                    Vec::new(),
                )?))),
            }
        }
    }
}

fn registry_image(
    name: &str,
    access: Access,
    bytes: Vec<u8>,
    media_type: String,
    digest: String,
    warnings: Vec<String>,
) -> Result<OpenedImage, TransportError> {
    let Access::Registry { client, reference } = &access else {
        return Err(RegistryError::Protocol("not a registry image".into()).into());
    };
    let parsed = pull::parse_manifest(&bytes)?;
    let config = pull::fetch_small_blob(client, &reference.repository, &parsed.config)?;
    Ok(OpenedImage {
        name: name.to_string(),
        digest,
        media_type,
        manifest: bytes,
        config,
        config_descriptor: parsed.config,
        layers: parsed.layers,
        warnings,
        local_layers: Vec::new(),
        access,
    })
}

fn local_image(
    name: &str,
    image: Image,
    warnings: Vec<String>,
    access: Access,
) -> Result<OpenedImage, TransportError> {
    let manifest = read_small(&image.manifest, pull::MAX_MANIFEST_BYTES)?;
    let config = read_small(&image.config, pull::MAX_MANIFEST_BYTES)?;
    let mut local_layers = Vec::new();
    for l in &image.layers {
        match &l.source {
            BlobSource::File(p) => local_layers.push(p.clone()),
            _ => {
                return Err(RegistryError::Protocol(format!(
                    "{name}: layer {} is not a local file",
                    l.descriptor.digest
                ))
                .into());
            }
        }
    }
    Ok(OpenedImage {
        name: name.to_string(),
        digest: image.manifest.descriptor.digest.clone(),
        media_type: image.manifest.descriptor.media_type.clone(),
        manifest,
        config,
        config_descriptor: image.config.descriptor.clone(),
        layers: image.layers.iter().map(|b| b.descriptor.clone()).collect(),
        warnings,
        local_layers,
        access,
    })
}

fn open_local(source: &str, dest: &LocalImage) -> Result<Opened, TransportError> {
    let (layout, tag, dir) = match dest {
        LocalImage::DockerArchive { path, .. } => {
            let loaded = archive::load_docker_archive(path, source)?;
            let dir = loaded.dir.map(Arc::new);
            let access = Access::Local {
                layout: None,
                _dir: dir,
            };
            return Ok(Opened::Image(Box::new(local_image(
                source,
                loaded.image,
                loaded.warnings,
                access,
            )?)));
        }
        LocalImage::OciLayout { path, tag } => (path.clone(), tag.clone(), None),
        LocalImage::OciArchive { path, tag } => {
            let dir = archive::extract_archive(path, source)?;
            (dir.path().to_path_buf(), tag.clone(), Some(Arc::new(dir)))
        }
    };
    let access = Access::Local {
        layout: Some(layout.clone()),
        _dir: dir,
    };
    match layout::read_root(&layout, tag.as_deref(), source)? {
        layout::LayoutRoot::Image(image) => Ok(Opened::Image(Box::new(local_image(
            source,
            image,
            Vec::new(),
            access,
        )?))),
        layout::LayoutRoot::Index {
            descriptor,
            entries,
            ..
        } => Ok(Opened::Index(OpenedIndex {
            name: source.to_string(),
            digest: descriptor.digest,
            media_type: descriptor.media_type,
            entries,
            access,
        })),
    }
}

impl OpenedIndex {
    /// The platforms the index offers, as `os/arch[/variant]` (entries without one skipped).
    pub fn platforms(&self) -> Vec<Platform> {
        self.entries
            .iter()
            .filter_map(|e| e.platform.clone())
            .collect()
    }

    /// The entry for `platform`: exact match, or an entry with a variant when none was asked
    /// for (`linux/arm64` finds `linux/arm64/v8`).
    pub fn entry_for(&self, platform: &Platform) -> Result<&IndexEntry, TransportError> {
        let exact = self
            .entries
            .iter()
            .find(|e| e.platform.as_ref() == Some(platform));
        let loose = || {
            self.entries.iter().find(|e| {
                e.platform.as_ref().is_some_and(|p| {
                    p.os == platform.os
                        && p.architecture == platform.architecture
                        && platform.variant.is_none()
                })
            })
        };
        exact
            .or_else(loose)
            .ok_or_else(|| TransportError::NoSuchPlatform {
                source_name: self.name.clone(),
                platform: platform.to_string(),
                available: self
                    .platforms()
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Opens the image an entry points at.
    pub fn image(&self, entry: &IndexEntry) -> Result<OpenedImage, TransportError> {
        match &self.access {
            Access::Registry { client, reference } => {
                let (bytes, media_type, digest) =
                    pull::fetch_manifest_bytes(client, reference, &entry.descriptor.digest)?;
                registry_image(
                    &self.name,
                    self.access.clone(),
                    bytes,
                    media_type,
                    digest,
                    Vec::new(),
                )
            }
            Access::Local { layout, .. } => {
                let layout = layout.as_ref().ok_or_else(|| {
                    RegistryError::Protocol(format!("{}: not an OCI layout", self.name))
                })?;
                let bytes = layout::read_manifest(layout, &entry.descriptor, &self.name)?;
                let image = layout::image_at(layout, entry.descriptor.clone(), bytes, &self.name)?;
                local_image(&self.name, image, Vec::new(), self.access.clone())
            }
        }
    }
}

/// Opens `location` as one image; an index is resolved to `opts.platform`, with a warning.
pub fn open_image(
    location: &Location,
    opts: &RegistryOptions,
) -> Result<OpenedImage, TransportError> {
    let source = location.as_str();
    match open(location, opts)? {
        Opened::Image(image) => Ok(*image),
        Opened::Index(index) => {
            let platform = &opts.platform;
            let entry = index.entry_for(platform).map_err(|_| {
                // Same wording as before the move, which tests and users rely on.
                TransportError::Registry(RegistryError::Protocol(format!(
                    "{source} is an image index with no manifest for platform {platform}"
                )))
            })?;
            let mut image = index.image(entry)?;
            image.warnings.push(format!(
                "{source} is a multi-platform image index ({}); resolved to {platform} manifest {}: a bundle image should be a single manifest",
                index.digest, image.digest
            ));
            Ok(image)
        }
    }
}

impl OpenedImage {
    /// Opens layer `i` as a verifying stream (compressed bytes); call `finish` after reading.
    pub fn open_layer(&self, i: usize) -> Result<VerifyingReader<Box<dyn Read>>, RegistryError> {
        let desc = self
            .layers
            .get(i)
            .ok_or_else(|| RegistryError::Protocol(format!("no layer {i}")))?
            .clone();
        match &self.access {
            Access::Registry { client, reference } => {
                pull::open_blob(client, &reference.repository, &desc, MAX_LAYER_BYTES)
            }
            Access::Local { .. } => {
                let p = self
                    .local_layers
                    .get(i)
                    .ok_or_else(|| RegistryError::Protocol(format!("no layer {i}")))?;
                let f = std::fs::File::open(p)
                    .map_err(|e| RegistryError::io("cannot open layer", p, e))?;
                Ok(VerifyingReader::new(
                    Box::new(f) as Box<dyn Read>,
                    desc,
                    MAX_LAYER_BYTES,
                ))
            }
        }
    }

    /// The config as JSON (`Null` when it is not JSON, which opening already refuses for
    /// registry images only by digest).
    pub fn config_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.config).unwrap_or(serde_json::Value::Null)
    }

    /// Config `Labels`.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let v = self.config_json();
        let mut out = BTreeMap::new();
        if let Some(map) = v.pointer("/config/Labels").and_then(|l| l.as_object()) {
            for (k, val) in map {
                out.insert(
                    k.clone(),
                    val.as_str().map_or_else(|| val.to_string(), str::to_string),
                );
            }
        }
        out
    }

    /// `os/architecture[/variant]` from the config.
    pub fn platform(&self) -> String {
        let v = self.config_json();
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let mut p = format!("{}/{}", s("os"), s("architecture"));
        if !s("variant").is_empty() {
            p = format!("{p}/{}", s("variant"));
        }
        p
    }

    /// Config `Entrypoint` and `Cmd` when set (a bundle image should have neither).
    pub fn runnable(&self) -> Vec<String> {
        let v = self.config_json();
        ["Entrypoint", "Cmd"]
            .iter()
            .filter_map(|k| {
                v.pointer(&format!("/config/{k}"))
                    .filter(|x| !x.is_null() && x.as_array().is_none_or(|a| !a.is_empty()))
                    .map(|x| format!("{k} {x}"))
            })
            .collect()
    }

    /// Lists layer `i` (streamed, verified, nothing written), capturing the files whose path
    /// `capture` accepts (at most `cap` bytes each).
    pub fn list_layer(
        &self,
        i: usize,
        capture: &dyn Fn(&str) -> bool,
        cap: u64,
    ) -> Result<unpack::LayerListing, RegistryError> {
        let mut vr = self.open_layer(i)?;
        let desc = self
            .layers
            .get(i)
            .ok_or_else(|| RegistryError::Protocol(format!("no layer {i}")))?
            .clone();
        let listing = {
            let r = unpack::decompress(&mut vr, &desc.media_type, &desc.digest)?;
            unpack::list_layer(r, &desc.digest, &Limits::default(), capture, cap)?
        };
        vr.finish()?;
        Ok(listing)
    }

    /// Unpacks every layer in order into `root` (safe extraction, digests verified while
    /// streaming; on error the caller discards `root`).
    pub fn unpack_into(
        &self,
        root: &Path,
        limits: &Limits,
    ) -> Result<unpack::Stats, TransportError> {
        let mut stats = unpack::Stats::default();
        // Registry layers are downloaded (verified, retried when cut off) to a temp file first
        // so a dropped connection costs a re-download, not a failed pull.
        let spool = match &self.access {
            Access::Registry { .. } => Some(temp_dir("olmpack-layers-")?),
            Access::Local { .. } => None,
        };
        for (i, desc) in self.layers.iter().enumerate() {
            let mut vr = match (&self.access, &spool) {
                (Access::Registry { client, reference }, Some(dir)) => {
                    let path = dir.path().join(format!("layer-{i}"));
                    pull::fetch_blob_to_file(
                        client,
                        &reference.repository,
                        desc,
                        &path,
                        MAX_LAYER_BYTES,
                    )?;
                    let f = std::fs::File::open(&path)
                        .map_err(|e| RegistryError::io("cannot open layer", &path, e))?;
                    VerifyingReader::new(
                        Box::new(f) as Box<dyn Read>,
                        desc.clone(),
                        MAX_LAYER_BYTES,
                    )
                }
                _ => self.open_layer(i)?,
            };
            {
                let r = unpack::decompress(&mut vr, &desc.media_type, &desc.digest)?;
                unpack::unpack_layer(r, root, &desc.digest, limits, &mut stats)?;
            }
            vr.finish()?;
        }
        Ok(stats)
    }

    /// The image as a model value whose layers stay where they are: local files, or
    /// [`BlobSource::Remote`] for a registry image (so a push to the same registry mounts or
    /// skips them instead of downloading them). Use [`OpenedImage::fetch_layers`] first when a
    /// local sink needs the bytes.
    pub fn to_image(&self) -> Image {
        let layers = self
            .layers
            .iter()
            .enumerate()
            .map(|(i, d)| Blob {
                descriptor: d.clone(),
                source: match (&self.access, self.local_layers.get(i)) {
                    (Access::Registry { reference, .. }, _) => BlobSource::Remote {
                        registry: reference.registry.clone(),
                        repository: reference.repository.clone(),
                    },
                    (_, Some(p)) => BlobSource::File(p.clone()),
                    (_, None) => BlobSource::Remote {
                        registry: String::new(),
                        repository: self.name.clone(),
                    },
                },
            })
            .collect();
        Image {
            manifest: Blob {
                descriptor: Descriptor {
                    media_type: self.media_type.clone(),
                    digest: self.digest.clone(),
                    size: self.manifest.len() as u64,
                },
                source: BlobSource::Memory(self.manifest.clone()),
            },
            config: Blob {
                descriptor: self.config_descriptor.clone(),
                source: BlobSource::Memory(self.config.clone()),
            },
            layers,
        }
    }

    /// Downloads (verified) every layer of a registry image into `spool` and points the
    /// image's blobs there; local images are unchanged. For sinks that need the bytes (a layout,
    /// an archive, a push to another registry).
    pub fn fetch_layers(&mut self, spool: &Path) -> Result<(), TransportError> {
        let Access::Registry { client, reference } = &self.access else {
            return Ok(());
        };
        // Spool files are named by content (several images of one index share the spool and
        // their common layers), so a digest that is not sha256 is refused before anything is
        // fetched: no name would be unique, and a reused file would hold another layer's bytes.
        if let Some(desc) = self.layers.iter().find(|d| d.sha256_hex().is_none()) {
            return Err(TransportError::UnsupportedDigest {
                source_name: self.name.clone(),
                digest: desc.digest.clone(),
            });
        }
        let mut files = Vec::with_capacity(self.layers.len());
        for desc in &self.layers {
            let Some(hex) = desc.sha256_hex() else {
                continue;
            };
            let path = spool.join(format!("{hex}.layer"));
            // Written only after its digest was verified, so an existing file is this layer.
            if !path.exists() {
                pull::fetch_blob_to_file(
                    client,
                    &reference.repository,
                    desc,
                    &path,
                    MAX_LAYER_BYTES,
                )?;
            }
            files.push(path);
        }
        self.local_layers = files;
        self.access = Access::Local {
            layout: None,
            _dir: None,
        };
        Ok(())
    }

    /// The layer files of a local (or fetched) image, in manifest order; empty for a registry
    /// image whose layers were not fetched.
    pub fn layer_files(&self) -> &[PathBuf] {
        &self.local_layers
    }
}

fn temp_dir(prefix: &str) -> Result<tempfile::TempDir, TransportError> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| TransportError::io("create a temp folder in", std::env::temp_dir(), e))
}

/// An image's files unpacked into a temp folder, with what callers usually need next.
#[derive(Debug)]
pub struct UnpackedImage {
    /// The unpacked root file system; deleted on drop.
    pub dir: tempfile::TempDir,
    /// Config labels (e.g. `operators.operatorframework.io.index.configs.v1` of a catalog).
    pub labels: BTreeMap<String, String>,
    /// The whole config JSON.
    pub config: serde_json::Value,
    /// Manifest digest.
    pub digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// Notes (an index resolved to one platform...).
    pub warnings: Vec<String>,
}

/// Opens any source (index resolved to `opts.platform`) and unpacks all its layers safely
/// (paths, links and whiteouts checked, digests verified while streaming) into a new temp folder.
/// The call behind rendering a bundle image or a catalog image (read the catalog under the
/// folder its `…index.configs.v1` label names).
pub fn unpack_image(
    location: &Location,
    opts: &RegistryOptions,
) -> Result<UnpackedImage, TransportError> {
    let opened = open_image(location, opts)?;
    let dir = temp_dir("olmpack-image-")?;
    opened.unpack_into(dir.path(), &Limits::default())?;
    Ok(UnpackedImage {
        labels: opened.labels(),
        config: opened.config_json(),
        digest: opened.digest.clone(),
        media_type: opened.media_type.clone(),
        warnings: opened.warnings.clone(),
        dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registry image whose layers are not sha256 must not reach the spool: two such
    /// layers once shared the file `blob.layer`, and the second got the first one's bytes.
    #[test]
    fn fetch_layers_refuses_non_sha256_digests() {
        let reference = Reference::parse("127.0.0.1:1/x/y:1").unwrap();
        let client = Client::new(
            &reference.registry,
            crate::registry::auth::ResolvedCredential::anonymous(),
            &Default::default(),
        )
        .unwrap();
        let layer = |n: u8| Descriptor {
            media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
            digest: format!("sha512:{}", format!("{n:02x}").repeat(64)),
            size: 1,
        };
        let mut image = OpenedImage {
            name: "127.0.0.1:1/x/y:1".into(),
            digest: String::new(),
            media_type: String::new(),
            manifest: Vec::new(),
            config: Vec::new(),
            config_descriptor: layer(0),
            layers: vec![layer(1), layer(2)],
            warnings: Vec::new(),
            local_layers: Vec::new(),
            access: Access::Registry {
                client: Arc::new(client),
                reference,
            },
        };
        let spool = tempfile::tempdir().unwrap();
        let err = image.fetch_layers(spool.path()).unwrap_err();
        assert!(
            matches!(&err, TransportError::UnsupportedDigest { digest, .. } if digest.starts_with("sha512:01")),
            "{err}"
        );
        assert!(err.to_string().contains("sha512:01"), "{err}");
        assert_eq!(std::fs::read_dir(spool.path()).unwrap().count(), 0);
    }
}
