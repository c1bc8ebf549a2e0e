//! The one place that turns a [`Location`] into an image.
//!
//! The string was classified once, by [`Location::parse`] (the grammar `bundle build --output`
//! writes, so anything written can be read back); a plain folder is refused here with a hint,
//! never looked up in a registry. Every source yields the image model ([`crate::image`]), the
//! same value whichever it is (go-containerregistry's `remote`, `layout` and `tarball` as
//! interchangeable ends):
//! - an [`Image`] whose manifest and config are in memory (verified against their digests) and
//!   whose layers stay where they are (a layout's or an extracted archive's files, or a
//!   registry repository, where each blob fetches itself through the one client of the source,
//!   verified while it streams);
//! - or an [`ImageIndex`] whose images open on demand through the same source
//!   ([`crate::image::ManifestFetcher`], implemented here for a registry repository and an OCI
//!   layout), so reading one platform fetches one manifest.
//!
//! [`open`] gives that value as it is ([`Opened`]); [`open_image`] resolves an index to the
//! options' platform (with a warning), which is what bundle commands want; [`open_artifact`]
//! opens every image of an index, which is what a copy wants.

use super::error::{LocalError, TransportError};
use super::options::RegistryOptions;
use super::unpack::{self, Limits};
use super::{archive, layout};
use crate::image::digest::VerifyingReader;
use crate::image::parse::{self, MAX_MANIFEST_BYTES};
use crate::image::{
    Blob, BlobFetcher, BlobSource, Descriptor, Fetcher, Image, ImageError, ImageIndex,
    ImageOrIndex, ManifestFetcher, Manifests,
};
use crate::location::{LocalImage, Location, Place};
use crate::mirror_config::{Attempt, NotServed, PullSource};
use crate::reference::Reference;
use crate::registry::RegistryError;
use crate::registry::Remote;
use crate::registry::client::Client;
use crate::registry::pull;
use crate::registry::push::read_small;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest layer accepted when reading an image (bundles are kilobytes, catalog images with an
/// opm base a few hundred megabytes; this is a sanity bound).
const MAX_LAYER_BYTES: u64 = 4 << 30;

/// An opened single-platform image: the image model value, what the user called it, and notes
/// for them. Keeps an extracted archive alive as long as the value, since its layers are files
/// in it.
pub struct OpenedImage {
    /// The source as the user typed it.
    pub name: String,
    /// The image: manifest and config in memory (verified), layers where they are.
    pub image: Image,
    /// Notes for the user (an index was resolved to one platform, a synthesised manifest).
    pub warnings: Vec<String>,
    /// Where a mirror configuration had it read from (see [`Opened::read_from`]).
    pub read_from: Option<PullSource>,
    _keep: Option<Arc<tempfile::TempDir>>,
}

/// A source opened as the image model ([`ImageOrIndex`]), with what the user called it and
/// notes for them. An index's images open on demand ([`Opened::image`]); keeps an extracted
/// archive alive as long as the value, since its blobs are files in it.
pub struct Opened {
    /// The source as the user typed it.
    pub name: String,
    /// The image or index.
    pub value: ImageOrIndex,
    /// Notes for the user.
    pub warnings: Vec<String>,
    /// Where it was really read, when the options' mirror configuration has a rule for its
    /// name (a mirror, or the source after the mirrors): what a command reports per image.
    /// `None` when no rule applied (read where it says).
    pub read_from: Option<PullSource>,
    keep: Option<Arc<tempfile::TempDir>>,
}

/// The name [`open_artifact`] has always returned: an [`Opened`] whose index (if any) has
/// every image open.
pub type OpenedArtifact = Opened;

impl std::fmt::Debug for OpenedImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedImage")
            .field("name", &self.name)
            .field("digest", &self.image.digest())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("name", &self.name)
            .field("digest", &self.value.digest())
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// The image the index entry `descriptor` names, opened through the index's source, as an
    /// [`OpenedImage`] under the index's name (an extracted archive kept alive with it).
    /// For a single image, that image when the digest is its own.
    pub fn image(&self, descriptor: &Descriptor) -> Result<OpenedImage, TransportError> {
        let image = match &self.value {
            ImageOrIndex::Index(index) => index.image(descriptor)?,
            ImageOrIndex::Image(image) if image.digest() == descriptor.digest => image.clone(),
            ImageOrIndex::Image(image) => {
                return Err(ImageError::Malformed(format!(
                    "{} is an image ({}), not an index listing {}",
                    self.name,
                    image.digest(),
                    descriptor.digest
                ))
                .into());
            }
        };
        Ok(OpenedImage {
            name: self.name.clone(),
            image,
            warnings: Vec::new(),
            read_from: self.read_from.clone(),
            _keep: self.keep.clone(),
        })
    }

    /// The single image, or `Err(self)` for an index.
    pub fn into_image(self) -> Result<OpenedImage, Box<Opened>> {
        match self.value {
            ImageOrIndex::Image(image) => Ok(OpenedImage {
                name: self.name,
                image,
                warnings: self.warnings,
                read_from: self.read_from,
                _keep: self.keep,
            }),
            value @ ImageOrIndex::Index(_) => Err(Box::new(Opened { value, ..self })),
        }
    }
}

/// Opens `location` as it is: an image or an index (nothing resolved to a platform, no image
/// of an index opened yet). A plain folder or file is refused with what to type instead
/// ([`Location::require_image`]).
///
/// A location pinned to the digest a signature policy verified ([`Location::pinned`]) is read
/// at that digest: a registry manifest is fetched by digest (and verified against it), a local
/// image whose tag now names another manifest is refused ([`TransportError::NotVerified`]).
pub fn open(location: &Location, opts: &RegistryOptions) -> Result<Opened, TransportError> {
    match location.place() {
        Place::Path(_) => Err(location.not_an_image().into()),
        place => open_verified(location.as_str(), place, location.verified_digest(), opts),
    }
}

/// [`open`] for a place that was not typed as a source string (a signature tag derived from a
/// digest): `name` is what messages call it.
pub fn open_place(
    name: &str,
    place: &Place,
    opts: &RegistryOptions,
) -> Result<Opened, TransportError> {
    open_verified(name, place, None, opts)
}

/// The one reader behind [`open`] and [`open_place`]: `verified`, when given, is the only
/// manifest digest that may be read.
fn open_verified(
    name: &str,
    place: &Place,
    verified: Option<&str>,
    opts: &RegistryOptions,
) -> Result<Opened, TransportError> {
    let refuse = |actual: &str| TransportError::NotVerified {
        source_name: name.to_string(),
        verified: verified.unwrap_or_default().to_string(),
        actual: actual.to_string(),
    };
    match place {
        Place::Path(p) => Err(crate::location::LocationError::NotFound {
            path: p.display().to_string(),
            hint: None,
        }
        .into()),
        Place::Local(image) => {
            let opened = open_local(name, image)?;
            match verified {
                Some(v) if opened.value.digest() != v => Err(refuse(opened.value.digest())),
                _ => Ok(opened),
            }
        }
        Place::Registry(reference) => {
            if opts.mirrors.rule_for(reference).is_none() {
                // Read where it says; a place the configuration marks insecure (a mirror
                // named directly, as the mirror plan pins it) is read as it says.
                let direct = PullSource {
                    reference: reference.clone(),
                    insecure: opts.mirrors.insecure_place(reference),
                    mirror: false,
                };
                return open_registry(name, reference, verified, &opts.at(&direct));
            }
            let served = opts.mirrors.first_served(reference, |place| {
                match open_registry(name, &place.reference, verified, &opts.at(place)) {
                    Ok(opened) => Attempt::Served(opened),
                    Err(e) if wrong_content(&e) => Attempt::Refused(e),
                    Err(e) => Attempt::Passed(crate::errors::error_chain(&e)),
                }
            });
            match served {
                Ok((mut opened, place)) => {
                    opened.read_from = Some(place);
                    Ok(opened)
                }
                Err(NotServed::Refused { error, .. }) => Err(error),
                Err(NotServed::Passed {
                    reference,
                    attempts,
                }) => Err(TransportError::NotServed {
                    reference,
                    attempts,
                }),
                Err(NotServed::Config(e)) => Err(e.into()),
            }
        }
    }
}

/// A failure that means the place answered with content that is not what was asked for (a
/// manifest whose bytes do not hash to the digest named, or not the digest a signature
/// policy verified): no other place is tried after it.
fn wrong_content(e: &TransportError) -> bool {
    matches!(
        e,
        TransportError::NotVerified { .. }
            | TransportError::Registry(RegistryError::DigestMismatch { .. })
    )
}

/// A registry image or index read at `reference` (a place of the mirror configuration, or
/// the reference itself), named `name` in messages.
fn open_registry(
    name: &str,
    reference: &Reference,
    verified: Option<&str>,
    opts: &RegistryOptions,
) -> Result<Opened, TransportError> {
    let client = Arc::new(opts.client_for(reference)?);
    let what = verified.unwrap_or(reference.manifest_reference());
    let (bytes, media_type, digest) = pull::fetch_manifest_bytes(&client, reference, what)?;
    if let Some(v) = verified
        && digest != v
    {
        return Err(TransportError::NotVerified {
            source_name: name.to_string(),
            verified: v.to_string(),
            actual: digest,
        });
    }
    let value = if parse::parse_index(&bytes)?.is_some() {
        let manifests = Manifests(Arc::new(RegistryManifests {
            client,
            reference: reference.clone(),
        }));
        ImageOrIndex::Index(ImageIndex::opened(
            index_blob(media_type, digest, bytes),
            manifests,
        ))
    } else {
        ImageOrIndex::Image(registry_image(
            &client, reference, bytes, media_type, digest,
        )?)
    };
    Ok(Opened {
        name: name.to_string(),
        value,
        warnings: Vec::new(),
        read_from: None,
        keep: None,
    })
}

/// The index blob as read (an index that names no media type is taken as an OCI index).
fn index_blob(media_type: String, digest: String, bytes: Vec<u8>) -> Blob {
    let media_type = if media_type.is_empty() {
        crate::image::media::OCI_INDEX.to_string()
    } else {
        media_type
    };
    Blob {
        descriptor: Descriptor {
            media_type,
            digest,
            size: bytes.len() as u64,
        },
        source: BlobSource::Memory(bytes),
    }
}

/// A registry image: manifest parsed, config fetched (verified), each layer a remote blob that
/// fetches itself through `client`.
fn registry_image(
    client: &Arc<Client>,
    reference: &Reference,
    bytes: Vec<u8>,
    media_type: String,
    digest: String,
) -> Result<Image, TransportError> {
    registry_image_with(client, reference, bytes, media_type, digest, true)
}

/// [`registry_image`], the config fetched now (`fetch_config`) or left a remote blob like the
/// layers (an image opened for a copy: [`ManifestFetcher::image_to_copy`]).
fn registry_image_with(
    client: &Arc<Client>,
    reference: &Reference,
    bytes: Vec<u8>,
    media_type: String,
    digest: String,
    fetch_config: bool,
) -> Result<Image, TransportError> {
    let parsed = parse::parse_manifest(&bytes)?;
    let fetcher = registry_fetcher(client, &reference.repository);
    let remote = |descriptor| Blob {
        descriptor,
        source: BlobSource::Remote {
            registry: reference.registry.clone(),
            repository: reference.repository.clone(),
            fetcher: Some(fetcher.clone()),
        },
    };
    let config = if fetch_config {
        Blob {
            source: BlobSource::Memory(pull::fetch_small_blob(
                client,
                &reference.repository,
                &parsed.config,
            )?),
            descriptor: parsed.config,
        }
    } else {
        // Streamed (verified) only if a sink lacks it; a config is as small as a manifest.
        if parsed.config.size > MAX_MANIFEST_BYTES {
            return Err(RegistryError::TooLarge {
                what: format!("config {}", parsed.config.digest),
                limit: MAX_MANIFEST_BYTES,
            }
            .into());
        }
        remote(parsed.config)
    };
    let layers = parsed.layers.into_iter().map(remote).collect();
    Ok(Image {
        manifest: Blob {
            descriptor: Descriptor {
                media_type,
                digest,
                size: bytes.len() as u64,
            },
            source: BlobSource::Memory(bytes),
        },
        config,
        layers,
    })
}

/// A registry repository's manifests, opened on demand through one shared client: where the
/// images of an index read from a registry come from.
struct RegistryManifests {
    client: Arc<Client>,
    reference: Reference,
}

impl ManifestFetcher for RegistryManifests {
    fn image(&self, descriptor: &Descriptor) -> Result<Image, ImageError> {
        (|| {
            let (bytes, media_type, digest) =
                pull::fetch_manifest_bytes(&self.client, &self.reference, &descriptor.digest)?;
            registry_image(&self.client, &self.reference, bytes, media_type, digest)
        })()
        .map_err(source_error)
    }

    fn image_to_copy(&self, descriptor: &Descriptor) -> Result<Image, ImageError> {
        (|| {
            let (bytes, media_type, digest) =
                pull::fetch_manifest_bytes(&self.client, &self.reference, &descriptor.digest)?;
            registry_image_with(
                &self.client,
                &self.reference,
                bytes,
                media_type,
                digest,
                false,
            )
        })()
        .map_err(source_error)
    }
}

/// An OCI layout's manifests (a folder, or an extracted oci-archive kept alive here): where
/// the images of an index read from a layout come from.
struct LayoutManifests {
    dir: PathBuf,
    name: String,
    _keep: Option<Arc<tempfile::TempDir>>,
}

impl ManifestFetcher for LayoutManifests {
    fn image(&self, descriptor: &Descriptor) -> Result<Image, ImageError> {
        (|| {
            let bytes = layout::read_manifest(&self.dir, descriptor, &self.name)?;
            let image = layout::image_at(&self.dir, descriptor.clone(), bytes, &self.name)?;
            local_image(&self.name, image)
        })()
        .map_err(source_error)
    }
}

/// A transport's failure carried through the image model whole
/// ([`TransportError`]'s `From<ImageError>` takes it out again).
fn source_error(e: TransportError) -> ImageError {
    ImageError::Source(Box::new(e))
}

/// A local image (layout, archive): manifest and config read into memory (the readers verified
/// them), layers left in their files.
fn local_image(name: &str, mut image: Image) -> Result<Image, TransportError> {
    for blob in [&mut image.manifest, &mut image.config] {
        if !matches!(blob.source, BlobSource::Memory(_)) {
            let bytes = read_small(blob, MAX_MANIFEST_BYTES).map_err(|e| LocalError::Invalid {
                source_name: name.to_string(),
                reason: e.to_string(),
            })?;
            blob.source = BlobSource::Memory(bytes);
        }
    }
    if let Some(l) = image
        .layers
        .iter()
        .find(|l| !matches!(l.source, BlobSource::File(_)))
    {
        return Err(LocalError::Invalid {
            source_name: name.to_string(),
            reason: format!("layer {} is not a local file", l.descriptor.digest),
        }
        .into());
    }
    Ok(image)
}

fn open_local(source: &str, dest: &LocalImage) -> Result<Opened, TransportError> {
    let opened = |value, warnings, keep| Opened {
        name: source.to_string(),
        value,
        warnings,
        read_from: None,
        keep,
    };
    let (layout, tag, keep) = match dest {
        LocalImage::DockerArchive { path, .. } => {
            let loaded = archive::load_docker_archive(path, source)?;
            let image = local_image(source, loaded.image)?;
            return Ok(opened(
                ImageOrIndex::Image(image),
                loaded.warnings,
                loaded.dir.map(Arc::new),
            ));
        }
        LocalImage::OciLayout { path, tag } => (path.clone(), tag.clone(), None),
        LocalImage::OciArchive { path, tag } => {
            let dir = archive::extract_archive(path, source)?;
            (dir.path().to_path_buf(), tag.clone(), Some(Arc::new(dir)))
        }
    };
    match layout::read_root(&layout, tag.as_deref(), source)? {
        layout::LayoutRoot::Image(image) => Ok(opened(
            ImageOrIndex::Image(local_image(source, image)?),
            Vec::new(),
            keep,
        )),
        layout::LayoutRoot::Index {
            descriptor, bytes, ..
        } => {
            let manifests = Manifests(Arc::new(LayoutManifests {
                dir: layout,
                name: source.to_string(),
                _keep: keep.clone(),
            }));
            let index = ImageIndex::opened(
                index_blob(descriptor.media_type, descriptor.digest, bytes),
                manifests,
            );
            Ok(opened(ImageOrIndex::Index(index), Vec::new(), keep))
        }
    }
}

/// Opens `location` as one image; an index is resolved to `opts.platform`, with a warning.
pub fn open_image(
    location: &Location,
    opts: &RegistryOptions,
) -> Result<OpenedImage, TransportError> {
    let source = location.as_str();
    let opened = match open(location, opts)?.into_image() {
        Ok(image) => return Ok(image),
        Err(index) => index,
    };
    let platform = &opts.platform;
    let entry = match &opened.value {
        ImageOrIndex::Index(index) => index.entry_for(platform)?,
        ImageOrIndex::Image(_) => None,
    }
    .ok_or_else(|| TransportError::IndexWithoutPlatform {
        source_name: source.to_string(),
        platform: platform.to_string(),
    })?;
    let mut image = opened.image(&entry.descriptor)?;
    image.warnings.push(format!(
        "{source} is a multi-platform image index ({}); resolved to {platform} manifest {}: a bundle image should be a single manifest",
        opened.value.digest(), image.image.digest()
    ));
    Ok(image)
}

impl OpenedImage {
    /// The layer descriptors, in manifest order.
    pub fn layer_descriptors(&self) -> Vec<Descriptor> {
        self.image
            .layers
            .iter()
            .map(|b| b.descriptor.clone())
            .collect()
    }

    /// Opens layer `i` as a verifying stream (compressed bytes); call `finish` after reading.
    /// A local layer is read from its file; a registry layer is streamed from the registry.
    pub fn open_layer(
        &self,
        i: usize,
    ) -> Result<VerifyingReader<Box<dyn Read + Send>>, TransportError> {
        let blob = self
            .image
            .layers
            .get(i)
            .ok_or_else(|| LocalError::Invalid {
                source_name: self.name.clone(),
                reason: format!("no layer {i}"),
            })?;
        let stream: Box<dyn Read + Send> = match &blob.source {
            BlobSource::File(p) => Box::new(std::fs::File::open(p).map_err(LocalError::io(
                &self.name,
                "open layer",
                p,
            ))?),
            BlobSource::Remote {
                fetcher: Some(fetcher),
                ..
            } => fetcher
                .0
                .fetch(&blob.descriptor)
                .map_err(|e| fetch_error(e, &blob.descriptor))?,
            BlobSource::Memory(bytes) => Box::new(std::io::Cursor::new(bytes.clone())),
            BlobSource::Remote { fetcher: None, .. } => {
                return Err(RegistryError::RemoteBlobMissing {
                    digest: blob.descriptor.digest.clone(),
                    location: blob.location().display().to_string(),
                }
                .into());
            }
        };
        Ok(VerifyingReader::new(
            stream,
            blob.descriptor.clone(),
            MAX_LAYER_BYTES,
        ))
    }

    /// The config as JSON (see [`Image::config_json`]).
    pub fn config_json(&self) -> serde_json::Value {
        self.image.config_json()
    }

    /// Config `Labels` (see [`Image::labels`]).
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.image.labels()
    }

    /// `os/architecture[/variant]` from the config.
    pub fn platform(&self) -> String {
        self.image.platform()
    }

    /// Config `Entrypoint` and `Cmd` when set (a bundle image should have neither).
    pub fn runnable(&self) -> Vec<String> {
        self.image.runnable()
    }

    /// Lists layer `i` (streamed, verified, nothing written), capturing the files whose path
    /// `capture` accepts (at most `cap` bytes each).
    pub fn list_layer(
        &self,
        i: usize,
        capture: &dyn Fn(&str) -> bool,
        cap: u64,
    ) -> Result<unpack::LayerListing, TransportError> {
        let mut vr = self.open_layer(i)?;
        let desc = vr.expected().clone();
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
        // Remote layers are downloaded (verified, retried when cut off) to a temp file first
        // so a dropped connection costs a re-download, not a failed pull.
        let remote = self
            .image
            .layers
            .iter()
            .any(|l| matches!(l.source, BlobSource::Remote { .. }));
        let spool = if remote {
            Some(temp_dir("olmpack-layers-")?)
        } else {
            None
        };
        for (i, blob) in self.image.layers.iter().enumerate() {
            let desc = &blob.descriptor;
            let mut vr = match (&blob.source, &spool) {
                (
                    BlobSource::Remote {
                        fetcher: Some(fetcher),
                        ..
                    },
                    Some(dir),
                ) => {
                    let path = dir.path().join(format!("layer-{i}"));
                    fetcher
                        .0
                        .fetch_to_file(desc, &path)
                        .map_err(|e| fetch_error(e, desc))?;
                    let f = std::fs::File::open(&path)
                        .map_err(|e| TransportError::io("open", &path, e))?;
                    VerifyingReader::new(
                        Box::new(f) as Box<dyn Read + Send>,
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
        if let Some(last) = self.image.layers.last() {
            unpack::check_links(root, &last.descriptor.digest)?;
        }
        Ok(stats)
    }

    /// The image as a model value (a clone: manifests and configs are small, layers are
    /// references to where they are).
    pub fn to_image(&self) -> Image {
        self.image.clone()
    }

    /// Downloads (verified) every remote layer into `spool` and points the image's blobs
    /// there; local layers are unchanged. For callers that want every byte on this machine
    /// before they start (sinks do not need it: a remote blob fetches itself).
    pub fn fetch_layers(&mut self, spool: &Path) -> Result<(), TransportError> {
        fetch_remote_layers(&mut self.image, spool, &self.name)
    }

    /// The layer files of a local (or fetched) image, in manifest order; empty when any layer
    /// is still remote.
    pub fn layer_files(&self) -> Vec<PathBuf> {
        let files: Vec<PathBuf> = self
            .image
            .layers
            .iter()
            .filter_map(|l| match &l.source {
                BlobSource::File(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        if files.len() == self.image.layers.len() {
            files
        } else {
            Vec::new()
        }
    }
}

/// Downloads (verified) every layer of `image` that is still in a registry into `spool`, named
/// by content (several images share a spool and their common layers), and points the blobs at
/// the files. A digest that is not sha256 is refused before anything is fetched: no name would
/// be unique, and a reused file would hold another layer's bytes.
pub fn fetch_remote_layers(
    image: &mut Image,
    spool: &Path,
    name: &str,
) -> Result<(), TransportError> {
    let remote = |l: &Blob| matches!(l.source, BlobSource::Remote { .. });
    if let Some(l) = image
        .layers
        .iter()
        .find(|l| remote(l) && l.descriptor.algorithm_hex().is_none())
    {
        return Err(TransportError::UnsupportedDigest {
            source_name: name.to_string(),
            digest: l.descriptor.digest.clone(),
        });
    }
    for layer in image.layers.iter_mut().filter(|l| remote(l)) {
        let BlobSource::Remote { fetcher, .. } = &layer.source else {
            continue;
        };
        let Some((algorithm, hex)) = layer.descriptor.algorithm_hex() else {
            continue;
        };
        let path = match algorithm {
            "sha256" => spool.join(format!("{hex}.layer")),
            _ => spool.join(format!("{algorithm}-{hex}.layer")),
        };
        // Written only after its digest was verified, so an existing file is this layer.
        if !path.exists() {
            let Some(fetcher) = fetcher else {
                return Err(RegistryError::RemoteBlobMissing {
                    digest: layer.descriptor.digest.clone(),
                    location: layer.location().display().to_string(),
                }
                .into());
            };
            fetcher
                .0
                .fetch_to_file(&layer.descriptor, &path)
                .map_err(|e| fetch_error(e, &layer.descriptor))?;
        }
        layer.source = BlobSource::File(path);
    }
    Ok(())
}

/// A failed blob fetch: the registry's own error when the fetcher carried one (so a digest
/// mismatch or an HTTP status reads as it always has), else the I/O error.
fn fetch_error(e: std::io::Error, desc: &Descriptor) -> TransportError {
    if e.get_ref().is_some_and(|inner| inner.is::<RegistryError>()) {
        return match e
            .into_inner()
            .map(|inner| inner.downcast::<RegistryError>())
        {
            Some(Ok(registry)) => TransportError::Registry(*registry),
            _ => TransportError::Registry(RegistryError::Protocol(format!(
                "cannot fetch blob {}",
                desc.digest
            ))),
        };
    }
    TransportError::Registry(pull::read_error(&desc.digest, &e))
}

/// A registry repository's blobs, fetched on demand through one shared client: what a remote
/// [`Blob`] of an opened image calls when a sink needs its bytes.
struct RegistryBlobs(Remote);

impl BlobFetcher for RegistryBlobs {
    fn fetch(&self, descriptor: &Descriptor) -> std::io::Result<Box<dyn Read + Send>> {
        if descriptor.size > MAX_LAYER_BYTES {
            return Err(std::io::Error::other(RegistryError::TooLarge {
                what: format!("blob {}", descriptor.digest),
                limit: MAX_LAYER_BYTES,
            }));
        }
        if descriptor.algorithm_hex().is_none() {
            return Err(std::io::Error::other(RegistryError::Protocol(format!(
                "cannot verify digest {}: only sha256 and sha512 are supported",
                descriptor.digest
            ))));
        }
        self.0
            .blob_stream(descriptor)
            .map_err(std::io::Error::other)
    }

    fn fetch_to_file(&self, descriptor: &Descriptor, dest: &Path) -> std::io::Result<()> {
        pull::fetch_blob_to_file(
            self.0.client(),
            self.0.repository(),
            descriptor,
            dest,
            MAX_LAYER_BYTES,
        )
        .map_err(std::io::Error::other)
    }
}

fn registry_fetcher(client: &Arc<Client>, repository: &str) -> Fetcher {
    Fetcher(Arc::new(RegistryBlobs(Remote::new(
        Arc::clone(client),
        repository,
    ))))
}

/// Opens `location` as the image model every sink takes, with every image of an index open:
/// manifests and configs are read (and verified) now; layers stay where they are (a layout's
/// files, or a registry repository, where each blob fetches itself when a sink needs its
/// bytes). A nested index is refused: no image olmpack reads or writes has one.
pub fn open_artifact(
    location: &Location,
    opts: &RegistryOptions,
) -> Result<Opened, TransportError> {
    match location.place() {
        Place::Path(_) => Err(location.not_an_image().into()),
        place => complete_artifact(
            location.as_str(),
            open_verified(location.as_str(), place, location.verified_digest(), opts)?,
        ),
    }
}

/// Opens `location` for a copy: an image as [`open`] gives it, an index with its images still
/// closed (each opens when a sink writes it, one at a time: [`ImageIndex::for_each_image`]),
/// checked first for what no sink would write (a nested index, more than
/// [`crate::image::MAX_INDEX_ENTRIES`] entries) so nothing is written before that is known.
pub fn open_to_copy(location: &Location, opts: &RegistryOptions) -> Result<Opened, TransportError> {
    let opened = open(location, opts)?;
    if let ImageOrIndex::Index(index) = &opened.value {
        index
            .refuse_nested(&index.entries()?)
            .map_err(|e| ImageError::Malformed(format!("{}: {e}", opened.name)))?;
    }
    Ok(opened)
}

/// [`open_artifact`] for a place given directly (see [`open_place`]).
pub fn open_place_artifact(
    name: &str,
    place: &Place,
    opts: &RegistryOptions,
) -> Result<Opened, TransportError> {
    complete_artifact(name, open_place(name, place, opts)?)
}

/// Every image of an opened index opened too (a nested index refused).
fn complete_artifact(name: &str, mut opened: Opened) -> Result<Opened, TransportError> {
    if let ImageOrIndex::Index(index) = &opened.value {
        for entry in index.entries()? {
            if crate::image::media::is_index(&entry.descriptor.media_type) {
                return Err(ImageError::Malformed(format!(
                    "{name}: index {} lists another index ({}); nested indexes are not supported",
                    index.index.descriptor.digest, entry.descriptor.digest
                ))
                .into());
            }
        }
        opened.value = ImageOrIndex::Index(index.complete()?);
    }
    Ok(opened)
}

fn temp_dir(prefix: &str) -> Result<tempfile::TempDir, TransportError> {
    // Ctrl-C during a pull removes the layers fetched so far (see crate::interrupt).
    let dir = crate::interrupt::temp_dir(prefix)
        .map_err(|e| TransportError::io("create a temp folder in", std::env::temp_dir(), e))?;
    Ok(dir)
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
    /// Where a mirror configuration had it read from ([`Opened::read_from`]).
    pub read_from: Option<PullSource>,
}

/// Opens any source (index resolved to `opts.platform`) and unpacks all its layers safely
/// (paths, links and whiteouts checked, digests verified while streaming) into a new temp folder.
/// The call behind rendering a bundle image or a catalog image (read the catalog under the
/// folder its `…index.configs.v1` label names).
pub fn unpack_image(
    location: &Location,
    opts: &RegistryOptions,
) -> Result<UnpackedImage, TransportError> {
    unpack_image_opened(location, opts, "olmpack-image-").map(|(unpacked, _)| unpacked)
}

/// [`unpack_image`] into a temp folder whose name starts with `prefix` (it says what the
/// folder holds), also giving back the opened image for a caller that reads more of it after
/// the files (its blobs, what a bundle image should not have).
pub fn unpack_image_opened(
    location: &Location,
    opts: &RegistryOptions,
    prefix: &str,
) -> Result<(UnpackedImage, OpenedImage), TransportError> {
    let opened = open_image(location, opts)?;
    let dir = temp_dir(prefix)?;
    opened.unpack_into(dir.path(), &Limits::default())?;
    let unpacked = UnpackedImage {
        labels: opened.labels(),
        config: opened.config_json(),
        digest: opened.image.digest().to_string(),
        media_type: opened.image.media_type().to_string(),
        warnings: opened.warnings.clone(),
        read_from: opened.read_from.clone(),
        dir,
    };
    Ok((unpacked, opened))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::extend::{assemble, index_of, platform_json};
    use crate::image::manifest::Format;
    use crate::image::media;

    /// A small image for `platform` with one layer (a layout does not look inside layers).
    fn image(platform: &str) -> Image {
        let layer = Blob::memory(media::OCI_LAYER_GZIP, platform.as_bytes().to_vec());
        let (os, arch) = platform.split_once('/').unwrap();
        let config = Blob::memory(
            media::OCI_CONFIG,
            format!(r#"{{"architecture":"{arch}","os":"{os}"}}"#).into_bytes(),
        );
        assemble(Format::Oci, config, vec![layer])
    }

    /// A two-platform index written to `dir` as `oci:dir:v1`.
    fn two_platform_layout(dir: &Path) -> ImageIndex {
        let images = ["linux/amd64", "linux/arm64"]
            .iter()
            .map(|p| (image(p), platform_json(&p.parse().unwrap())))
            .collect();
        let index = index_of(images);
        layout::write_index_layout(&index, dir, &["v1".to_string()]).unwrap();
        index
    }

    fn location(dir: &Path) -> Location {
        Location::parse(&format!("oci:{}:v1", dir.display())).unwrap()
    }

    /// An opened index is the image model's index, its images not yet open; reading one
    /// platform opens that platform's manifest only, so a broken other platform does not
    /// matter, while opening every image (a copy) names the broken one as a local error.
    #[test]
    fn an_opened_index_opens_its_images_on_demand() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("lay");
        let written = two_platform_layout(&dir);
        let opts = RegistryOptions::default();

        let opened = open(&location(&dir), &opts).unwrap();
        let ImageOrIndex::Index(index) = &opened.value else {
            panic!("an index");
        };
        assert_eq!(index.index.descriptor, written.index.descriptor);
        assert!(index.images.is_empty() && !index.is_complete());
        let platforms: Vec<String> = index
            .platforms()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(platforms, ["linux/amd64", "linux/arm64"]);

        // The arm64 manifest goes missing: amd64 still opens.
        let arm = &written.images[1].manifest.descriptor;
        std::fs::remove_file(layout::blob_path(&dir, &arm.digest).unwrap()).unwrap();
        let amd = open_image(&location(&dir), &opts).unwrap();
        assert_eq!(amd.image.digest(), written.images[0].digest());
        assert_eq!(amd.image.platform(), "linux/amd64");
        assert!(amd.warnings[0].contains("multi-platform image index"));

        let err = open_artifact(&location(&dir), &opts).unwrap_err();
        assert!(matches!(err, TransportError::Local(_)), "{err:?}");
        assert!(err.to_string().contains(arm.sha256_hex().unwrap()), "{err}");
    }

    /// A platform the index does not have is the transport's own error (a local layout is
    /// never reported as a registry failure), in the words it always had.
    #[test]
    fn a_missing_platform_is_not_a_registry_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("lay");
        two_platform_layout(&dir);
        let opts = RegistryOptions {
            platform: "linux/s390x".parse().unwrap(),
            ..RegistryOptions::default()
        };
        let err = open_image(&location(&dir), &opts).unwrap_err();
        assert!(
            matches!(err, TransportError::IndexWithoutPlatform { .. }),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .ends_with("is an image index with no manifest for platform linux/s390x"),
            "{err}"
        );
    }

    /// A sink given an index just opened from a source opens its images itself: the layout
    /// written from it holds the same index, every image and every blob.
    #[test]
    fn a_sink_completes_an_opened_index() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("lay");
        let written = two_platform_layout(&dir);
        let opened = open(&location(&dir), &RegistryOptions::default()).unwrap();
        let copy = tmp.path().join("copy");
        let dest: LocalImage = format!("oci:{}:v2", copy.display()).parse().unwrap();
        super::super::local::write_artifact(opened.value.artifact(), &dest, &["v2".into()])
            .unwrap();
        let back = open_artifact(
            &Location::parse(&format!("oci:{}:v2", copy.display())).unwrap(),
            &RegistryOptions::default(),
        )
        .unwrap();
        let ImageOrIndex::Index(index) = &back.value else {
            panic!("an index");
        };
        assert_eq!(index.index.descriptor, written.index.descriptor);
        let digests = |i: &ImageIndex| -> Vec<String> {
            i.images
                .iter()
                .flat_map(Image::blobs)
                .map(|b| b.descriptor.digest.clone())
                .collect()
        };
        assert_eq!(digests(index), digests(&written));
        assert!(index.is_complete());
    }

    /// A registry image whose layers are not sha256 must not reach the spool: two such
    /// layers once shared the file `blob.layer`, and the second got the first one's bytes.
    #[test]
    fn fetch_layers_refuses_digests_olmpack_cannot_verify() {
        let layer = |n: u8| Blob {
            descriptor: Descriptor {
                media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
                digest: format!("sha384:{}", format!("{n:02x}").repeat(48)),
                size: 1,
            },
            source: BlobSource::Remote {
                registry: "127.0.0.1:1".into(),
                repository: "x/y".into(),
                fetcher: None,
            },
        };
        let mut image = Image {
            manifest: Blob::memory("m", Vec::new()),
            config: Blob::memory("c", Vec::new()),
            layers: vec![layer(1), layer(2)],
        };
        let spool = tempfile::tempdir().unwrap();
        let err = fetch_remote_layers(&mut image, spool.path(), "127.0.0.1:1/x/y:1").unwrap_err();
        assert!(
            matches!(&err, TransportError::UnsupportedDigest { digest, .. } if digest.starts_with("sha384:01")),
            "{err}"
        );
        assert!(err.to_string().contains("sha384:01"), "{err}");
        assert_eq!(std::fs::read_dir(spool.path()).unwrap().count(), 0);
    }
}
