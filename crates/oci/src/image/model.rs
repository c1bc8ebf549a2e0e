//! The in-memory view of an image that every source produces and every sink consumes (the
//! go-containerregistry idea: one immutable model, many sources and sinks). Layer bytes live in
//! files, not memory, so a large bundle never has to be held whole.

use std::path::PathBuf;
use std::sync::Arc;

/// Something that can stream a blob's bytes on demand: a registry repository, or any other
/// place whose blobs are not on this machine yet. Implemented where the transport lives
/// (`transport::open` for registries): the image module knows no HTTP client.
pub trait BlobFetcher: Send + Sync {
    /// Opens the bytes of `descriptor` for streaming (not yet verified: [`Blob::open`] wraps
    /// them in a [`super::digest::VerifyingReader`]).
    fn fetch(&self, descriptor: &Descriptor) -> std::io::Result<Box<dyn std::io::Read + Send>>;

    /// Downloads the bytes of `descriptor` into `dest`, verified, leaving no file on failure.
    /// The default streams [`BlobFetcher::fetch`] through a verifying reader; a registry
    /// overrides it to resume a cut download from the start with its retry policy.
    fn fetch_to_file(
        &self,
        descriptor: &Descriptor,
        dest: &std::path::Path,
    ) -> std::io::Result<()> {
        let stream = self.fetch(descriptor)?;
        let mut reader = super::digest::VerifyingReader::strict(stream, descriptor.clone());
        let written = (|| {
            let mut out = std::fs::File::create(dest)?;
            std::io::copy(&mut reader, &mut out)?;
            std::io::Write::flush(&mut out)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(dest);
        }
        written
    }
}

/// A shared [`BlobFetcher`], so every blob of an image (and every image of an index) reaches
/// its bytes through one client and one token.
#[derive(Clone)]
pub struct Fetcher(pub Arc<dyn BlobFetcher>);

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fetcher")
    }
}

/// Something that opens the images an index lists, from where the index was read: a registry
/// repository or an OCI layout. Implemented where the transport lives (`transport::open`):
/// the image module knows no HTTP client and no file format, only what an image is.
pub trait ManifestFetcher: Send + Sync {
    /// Opens the image `descriptor` (an entry of the index) names: manifest and config read
    /// into memory and verified, layers as blobs that fetch themselves (or the files they are).
    /// A failure of the source itself is [`ImageError::Source`], carrying the source's own
    /// error so the caller can report it in its own words.
    ///
    /// [`ImageError::Source`]: super::error::ImageError::Source
    fn image(&self, descriptor: &Descriptor) -> Result<Image, super::error::ImageError>;

    /// Opens the image `descriptor` names for a copy: the manifest read into memory and
    /// verified, the config left where it is like the layers (a blob that fetches itself, or
    /// the file it is), so a copy of an index whose images share one large config holds none
    /// of them and fetches it only if the sink lacks it. The default opens it whole.
    fn image_to_copy(&self, descriptor: &Descriptor) -> Result<Image, super::error::ImageError> {
        self.image(descriptor)
    }
}

/// Most entries an image index may list. Real multi-platform images list a few platforms and
/// their attestations (tens of entries); containers/image sets no count, only the 4 MiB it reads
/// of a manifest, which fits about 25,000 entries. Every entry is a manifest to fetch and
/// write, so a copy of an index past this bound is refused before anything is fetched.
pub const MAX_INDEX_ENTRIES: usize = 1024;

/// A shared [`ManifestFetcher`]: every image of an index opens through one client and one
/// token (or one layout folder, kept alive as long as any of them).
#[derive(Clone)]
pub struct Manifests(pub Arc<dyn ManifestFetcher>);

impl std::fmt::Debug for Manifests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Manifests")
    }
}

/// The descriptor, in a module below the model so parsing and digest checks can name it.
pub use super::descriptor::Descriptor;

/// Where a blob's bytes are: small JSON blobs stay in memory, layers are spooled to files.
#[derive(Debug, Clone)]
pub enum BlobSource {
    /// The bytes themselves.
    Memory(Vec<u8>),
    /// A file holding exactly the blob's bytes.
    File(PathBuf),
    /// Bytes not on this machine: the blob sits in a registry repository (a base image's layer,
    /// an image being copied). Kept remote so a push to the same registry can mount or skip it
    /// instead of downloading it only to upload it again. With a `fetcher` the blob fetches
    /// itself when a sink needs its bytes ([`Blob::open`] streams them, verified); without one
    /// [`Blob::open`] refuses.
    Remote {
        /// Registry host as in the reference (`quay.io`, `127.0.0.1:5000`).
        registry: String,
        /// Repository holding the blob.
        repository: String,
        /// How to stream the bytes, when known.
        fetcher: Option<Fetcher>,
    },
}

/// A blob with its descriptor; the descriptor's digest and size always describe the source's bytes.
#[derive(Debug, Clone)]
pub struct Blob {
    /// Media type, digest and size.
    pub descriptor: Descriptor,
    /// The bytes.
    pub source: BlobSource,
}

/// A single-platform image: manifest, config and layers, in manifest order.
#[derive(Debug, Clone)]
pub struct Image {
    /// The manifest blob (its bytes are what the digest of the image is computed over).
    pub manifest: Blob,
    /// The image config blob.
    pub config: Blob,
    /// The layers, in the order the manifest lists them.
    pub layers: Vec<Blob>,
}

impl Descriptor {
    /// The algorithm and hex of a digest olmpack can verify (sha256 or sha512): how an OCI
    /// layout (`blobs/<algorithm>/<hex>`) and a spool name the blob. `None` for any other.
    pub fn algorithm_hex(&self) -> Option<(&str, &str)> {
        super::digest::Algorithm::of(&self.digest)?;
        self.digest.split_once(':')
    }

    /// The 64 hex digits after `sha256:`, which name the blob file in an OCI layout
    /// (`blobs/sha256/<hex>`) and in a docker-archive. `None` for any other algorithm.
    pub fn sha256_hex(&self) -> Option<&str> {
        self.digest
            .strip_prefix("sha256:")
            .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    }
}

impl Blob {
    /// A blob held in memory, its descriptor computed from the bytes (configs, manifests,
    /// indexes: everything small a build writes).
    pub fn memory(media_type: &str, bytes: Vec<u8>) -> Blob {
        Blob {
            descriptor: Descriptor {
                media_type: media_type.to_string(),
                digest: super::digest::sha256_digest(&bytes),
                size: bytes.len() as u64,
            },
            source: BlobSource::Memory(bytes),
        }
    }

    /// Opens the blob's bytes for streaming, so sinks (layout, archives, a registry push) never
    /// need to know whether the blob sits in memory, in a spool file or in a registry. A remote
    /// blob's stream is verified as it goes: reading it to the end fails (`InvalidData`) when
    /// the bytes do not match the descriptor.
    pub fn open(&self) -> std::io::Result<Box<dyn std::io::Read + Send + '_>> {
        match &self.source {
            BlobSource::Memory(bytes) => Ok(Box::new(bytes.as_slice())),
            BlobSource::File(path) => Ok(Box::new(std::fs::File::open(path)?)),
            BlobSource::Remote {
                fetcher: Some(fetcher),
                ..
            } => {
                let stream = fetcher.0.fetch(&self.descriptor)?;
                Ok(Box::new(super::digest::VerifyingReader::strict(
                    stream,
                    self.descriptor.clone(),
                )))
            }
            BlobSource::Remote {
                registry,
                repository,
                fetcher: None,
            } => Err(std::io::Error::other(format!(
                "blob {} is in {registry}/{repository} and was not fetched",
                self.descriptor.digest
            ))),
        }
    }

    /// Where the bytes are, for error messages: the spool file, or `<memory>`.
    pub fn location(&self) -> PathBuf {
        match &self.source {
            BlobSource::Memory(_) => PathBuf::from("<memory>"),
            BlobSource::File(path) => path.clone(),
            BlobSource::Remote {
                registry,
                repository,
                ..
            } => PathBuf::from(format!("{registry}/{repository}")),
        }
    }
}

impl Image {
    /// The manifest digest: the image's name by content.
    pub fn digest(&self) -> &str {
        &self.manifest.descriptor.digest
    }

    /// The manifest media type (OCI or Docker v2-2).
    pub fn media_type(&self) -> &str {
        &self.manifest.descriptor.media_type
    }

    /// The config as JSON (`Null` when it is not in memory or not JSON: every source reads
    /// configs into memory, verified, when it opens an image).
    pub fn config_json(&self) -> serde_json::Value {
        match &self.config.source {
            BlobSource::Memory(bytes) => {
                serde_json::from_slice(bytes).unwrap_or(serde_json::Value::Null)
            }
            _ => serde_json::Value::Null,
        }
    }

    /// Config `Labels` (non-string values as their JSON text).
    pub fn labels(&self) -> std::collections::BTreeMap<String, String> {
        let v = self.config_json();
        let mut out = std::collections::BTreeMap::new();
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

    /// Every blob of the image: layers first, then config, then manifest. This is the order a
    /// pusher must upload them in (the manifest last, so a registry never sees a manifest whose
    /// blobs are missing) and the order the layout writer stores them in.
    pub fn blobs(&self) -> impl Iterator<Item = &Blob> {
        self.layers.iter().chain([&self.config, &self.manifest])
    }
}

/// A multi-platform image: an OCI image index (or Docker manifest list) and the images it lists,
/// one per platform. Blobs shared by several images (a catalog's configs layer, a base's
/// layers) are stored and pushed once.
///
/// An index built here holds every image. An index opened from a source holds none at first:
/// its images open on demand through [`ImageIndex::manifests`] ([`ImageIndex::image`] one,
/// [`ImageIndex::complete`] all), so reading one platform of a four-platform base fetches one
/// manifest, not four. The sinks complete an index before they write anything.
#[derive(Debug, Clone)]
pub struct ImageIndex {
    /// The index blob (its digest is the digest of the whole multi-platform image).
    pub index: Blob,
    /// The per-platform images opened so far, in the index's order: all of them for an index
    /// built here or completed, none for an index just opened from a source.
    pub images: Vec<Image>,
    /// Where the images not in [`ImageIndex::images`] are opened from: the source the index was
    /// read from. `None` for an index built here.
    pub manifests: Option<Manifests>,
}

impl ImageIndex {
    /// An index built here, holding every image it lists.
    pub fn new(index: Blob, images: Vec<Image>) -> ImageIndex {
        ImageIndex {
            index,
            images,
            manifests: None,
        }
    }

    /// An index read from a source (its bytes in memory), whose images open on demand through
    /// `manifests`.
    pub fn opened(index: Blob, manifests: Manifests) -> ImageIndex {
        ImageIndex {
            index,
            images: Vec::new(),
            manifests: Some(manifests),
        }
    }

    /// The index's entries, in its order.
    pub fn entries(&self) -> Result<Vec<super::parse::IndexEntry>, super::error::ImageError> {
        use super::error::ImageError;
        let BlobSource::Memory(bytes) = &self.index.source else {
            return Err(ImageError::Malformed(format!(
                "index {} is not in memory",
                self.index.descriptor.digest
            )));
        };
        let entries = super::parse::parse_index(bytes)?.ok_or_else(|| {
            ImageError::Malformed(format!(
                "{} is an image manifest, not an index",
                self.index.descriptor.digest
            ))
        })?;
        if entries.len() > MAX_INDEX_ENTRIES {
            return Err(ImageError::Malformed(format!(
                "index {} lists {} manifests, more than the {MAX_INDEX_ENTRIES} olmpack reads",
                self.index.descriptor.digest,
                entries.len()
            )));
        }
        Ok(entries)
    }

    /// The platforms the index offers (entries without one skipped), in its order.
    pub fn platforms(&self) -> Result<Vec<super::config::Platform>, super::error::ImageError> {
        Ok(self
            .entries()?
            .into_iter()
            .filter_map(|e| e.platform)
            .collect())
    }

    /// The entry for `platform`: an exact match, else one with a variant when none was asked
    /// for (`linux/arm64` finds `linux/arm64/v8`). `None` when the index has none.
    pub fn entry_for(
        &self,
        platform: &super::config::Platform,
    ) -> Result<Option<super::parse::IndexEntry>, super::error::ImageError> {
        let entries = self.entries()?;
        let exact = entries
            .iter()
            .position(|e| e.platform.as_ref() == Some(platform));
        let loose = || {
            entries.iter().position(|e| {
                e.platform
                    .as_ref()
                    .is_some_and(|p| super::parse::platform_matches(p, platform))
            })
        };
        Ok(exact.or_else(loose).map(|i| entries[i].clone()))
    }

    /// The image an entry points at: the one already open, else opened from the source.
    pub fn image(&self, descriptor: &Descriptor) -> Result<Image, super::error::ImageError> {
        self.open_with(descriptor, &|manifests, d| manifests.image(d))
    }

    /// Whether every entry's image is open (what a sink writes must be). An index built here
    /// ([`ImageIndex::new`]) is complete by definition: it holds every image it has.
    pub fn is_complete(&self) -> bool {
        self.manifests.is_none()
            || self.entries().is_ok_and(|entries| {
                entries.len() == self.images.len()
                    && entries
                        .iter()
                        .zip(&self.images)
                        .all(|(e, i)| e.descriptor.digest == i.manifest.descriptor.digest)
            })
    }

    /// The index with every image it lists open, in its order (manifests and configs read and
    /// verified; layers stay where they are). A nested index is refused: no image olmpack reads
    /// or writes has one.
    pub fn complete(&self) -> Result<ImageIndex, super::error::ImageError> {
        self.complete_with(|manifests, descriptor| manifests.image(descriptor))
    }

    /// [`ImageIndex::complete`] for a writer that needs every image at once (an archive, whose
    /// blobs go in digest order): each image opened for a copy
    /// ([`ManifestFetcher::image_to_copy`]), so their configs are not held in memory.
    pub fn complete_to_copy(&self) -> Result<ImageIndex, super::error::ImageError> {
        self.complete_with(|manifests, descriptor| manifests.image_to_copy(descriptor))
    }

    fn complete_with(
        &self,
        open: impl Fn(&dyn ManifestFetcher, &Descriptor) -> Result<Image, super::error::ImageError>,
    ) -> Result<ImageIndex, super::error::ImageError> {
        if self.is_complete() {
            return Ok(self.clone());
        }
        let mut images = Vec::new();
        self.for_each_entry(|entry| {
            images.push(self.open_with(&entry.descriptor, &open)?);
            Ok(())
        })?;
        Ok(ImageIndex {
            index: self.index.clone(),
            images,
            manifests: self.manifests.clone(),
        })
    }

    /// Calls `write` with each image of the index in its order, one at a time: an image already
    /// open as it is, any other opened for a copy ([`ManifestFetcher::image_to_copy`]) and
    /// dropped once `write` returns. What a sink writes an index with: however many images it
    /// lists and however large their manifests and configs, one of them is in memory at a time.
    /// A nested index is refused before anything is written.
    pub fn for_each_image<E: From<super::error::ImageError>>(
        &self,
        mut write: impl FnMut(&Image) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.manifests.is_none() {
            return self.images.iter().try_for_each(write);
        }
        let entries = self.entries()?;
        self.refuse_nested(&entries)?;
        for entry in &entries {
            let image = self.open_with(
                &entry.descriptor,
                &|m: &dyn ManifestFetcher, d: &Descriptor| m.image_to_copy(d),
            )?;
            write(&image)?;
        }
        Ok(())
    }

    /// Every entry, after checking that none is an index.
    fn for_each_entry(
        &self,
        mut f: impl FnMut(&super::parse::IndexEntry) -> Result<(), super::error::ImageError>,
    ) -> Result<(), super::error::ImageError> {
        let entries = self.entries()?;
        self.refuse_nested(&entries)?;
        entries.iter().try_for_each(&mut f)
    }

    /// Refuses an index that lists another index: no image olmpack reads or writes has one.
    pub fn refuse_nested(
        &self,
        entries: &[super::parse::IndexEntry],
    ) -> Result<(), super::error::ImageError> {
        match entries
            .iter()
            .find(|e| super::media::is_index(&e.descriptor.media_type))
        {
            Some(entry) => Err(super::error::ImageError::Malformed(format!(
                "index {} lists another index ({}); nested indexes are not supported",
                self.index.descriptor.digest, entry.descriptor.digest
            ))),
            None => Ok(()),
        }
    }

    /// The image `descriptor` names: the one already open, else opened from the source by `open`.
    fn open_with(
        &self,
        descriptor: &Descriptor,
        open: &dyn Fn(&dyn ManifestFetcher, &Descriptor) -> Result<Image, super::error::ImageError>,
    ) -> Result<Image, super::error::ImageError> {
        if let Some(image) = self
            .images
            .iter()
            .find(|i| i.manifest.descriptor.digest == descriptor.digest)
        {
            return Ok(image.clone());
        }
        match &self.manifests {
            Some(manifests) => open(manifests.0.as_ref(), descriptor),
            None => Err(super::error::ImageError::Malformed(format!(
                "index {} has no image {}",
                self.index.descriptor.digest, descriptor.digest
            ))),
        }
    }

    /// Every blob once: each image's layers, config and manifest (first occurrence wins), then
    /// the index itself, last, as a pusher must upload them.
    pub fn blobs(&self) -> Vec<&Blob> {
        let mut seen = std::collections::HashSet::new();
        let mut out: Vec<&Blob> = Vec::new();
        for blob in self.images.iter().flat_map(Image::blobs) {
            if seen.insert(blob.descriptor.digest.as_str()) {
                out.push(blob);
            }
        }
        out.push(&self.index);
        out
    }
}

/// What a sink writes: one image, or an index of images. Sinks that can hold both (OCI layout,
/// oci-archive, a registry) take this; a docker-archive takes only an image.
#[derive(Debug, Clone, Copy)]
pub enum Artifact<'a> {
    /// A single-platform image.
    Image(&'a Image),
    /// A multi-platform index.
    Index(&'a ImageIndex),
}

impl<'a> Artifact<'a> {
    /// The top-level blob: the image manifest, or the index.
    pub fn top(&self) -> &'a Blob {
        match self {
            Artifact::Image(image) => &image.manifest,
            Artifact::Index(index) => &index.index,
        }
    }

    /// Every blob once, the top-level one last.
    pub fn blobs(&self) -> Vec<&'a Blob> {
        match self {
            Artifact::Image(image) => image.blobs().collect(),
            Artifact::Index(index) => index.blobs(),
        }
    }
}

/// What a source names, owned: one image, or an index of images. Every source (a registry, an
/// OCI layout, an archive) yields it and every sink takes it (through [`ImageOrIndex::artifact`]),
/// so a copy is an open followed by a write.
#[derive(Debug, Clone)]
pub enum ImageOrIndex {
    /// A single-platform image.
    Image(Image),
    /// A multi-platform index.
    Index(ImageIndex),
}

impl ImageOrIndex {
    /// The borrowed view the sinks take.
    pub fn artifact(&self) -> Artifact<'_> {
        match self {
            ImageOrIndex::Image(image) => Artifact::Image(image),
            ImageOrIndex::Index(index) => Artifact::Index(index),
        }
    }

    /// The digest of the top-level manifest or index.
    pub fn digest(&self) -> &str {
        &self.artifact().top().descriptor.digest
    }
}

pub use super::media::ANNOTATION_REFERENCE_DIGEST;

impl ImageIndex {
    /// The index narrowed to the entries for `platforms` (and the attestations of those
    /// entries), as a new index blob: the digest changes, which is why a caller asks for it
    /// explicitly. The kept entries are copied as written; the index keeps its media type and
    /// every top-level field (annotations...). Fails when a platform matches no entry.
    pub fn select(
        &self,
        platforms: &[super::config::Platform],
    ) -> Result<ImageIndex, super::error::ImageError> {
        use super::error::ImageError;
        let bytes = match &self.index.source {
            BlobSource::Memory(bytes) => bytes.clone(),
            other => {
                return Err(ImageError::Malformed(format!(
                    "index {} is not in memory ({other:?})",
                    self.index.descriptor.digest
                )));
            }
        };
        let entries = super::parse::parse_index(&bytes)?
            .ok_or_else(|| ImageError::Malformed("expected an index".into()))?;
        let mut keep: Vec<&str> = Vec::new();
        for wanted in platforms {
            let hits: Vec<&str> = entries
                .iter()
                .filter(|e| {
                    e.platform
                        .as_ref()
                        .is_some_and(|p| super::parse::platform_matches(p, wanted))
                })
                .map(|e| e.descriptor.digest.as_str())
                .collect();
            if hits.is_empty() {
                let have: Vec<String> = entries
                    .iter()
                    .filter_map(|e| e.platform.as_ref().map(ToString::to_string))
                    .collect();
                return Err(ImageError::Malformed(format!(
                    "index {} has no image for platform {wanted} (it has: {})",
                    self.index.descriptor.digest,
                    have.join(", ")
                )));
            }
            keep.extend(hits);
        }
        let kept = |e: &super::parse::IndexEntry| {
            keep.contains(&e.descriptor.digest.as_str())
                || e.raw
                    .pointer(&format!(
                        "/annotations/{}",
                        ANNOTATION_REFERENCE_DIGEST.replace('/', "~1")
                    ))
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|d| keep.contains(&d))
        };
        let mut value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| ImageError::Malformed(format!("index is not valid JSON: {e}")))?;
        let chosen: Vec<&super::parse::IndexEntry> = entries.iter().filter(|&e| kept(e)).collect();
        if chosen.len() == entries.len() {
            // Every entry wanted: the index as it is, digest unchanged.
            return Ok(self.clone());
        }
        value["manifests"] =
            serde_json::Value::Array(chosen.iter().map(|e| e.raw.clone()).collect());
        // An index read from a source keeps opening its images on demand (a sink writes them
        // one at a time); one built here keeps the images it holds.
        let images = match &self.manifests {
            Some(_) => Vec::new(),
            None => chosen
                .iter()
                .map(|e| self.image(&e.descriptor))
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(ImageIndex {
            index: Blob::memory(
                &self.index.descriptor.media_type,
                super::config::canonical_json(&value),
            ),
            images,
            manifests: self.manifests.clone(),
        })
    }
}
