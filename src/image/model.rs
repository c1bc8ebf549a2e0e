//! The in-memory view of an image that every source produces and every sink consumes (the
//! go-containerregistry idea: one immutable model, many sources and sinks). Layer bytes live in
//! files, not memory, so a large bundle never has to be held whole.

use std::path::PathBuf;

/// A content descriptor as the OCI image spec defines it: what a manifest points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Media type of the referenced content.
    pub media_type: String,
    /// `sha256:<64 hex>` digest of the content bytes.
    pub digest: String,
    /// Length of the content in bytes.
    pub size: u64,
}

/// Where a blob's bytes are: small JSON blobs stay in memory, layers are spooled to files.
#[derive(Debug, Clone)]
pub enum BlobSource {
    /// The bytes themselves.
    Memory(Vec<u8>),
    /// A file holding exactly the blob's bytes.
    File(PathBuf),
    /// Bytes not on this machine: the blob sits in a registry repository (a base image's layer).
    /// Kept remote so a push to the same registry can mount or skip it instead of downloading it
    /// only to upload it again; a sink that needs the bytes must fetch them first
    /// (`transport::source::OpenedImage::fetch_layers`), and [`Blob::open`] refuses.
    Remote {
        /// Registry host as in the reference (`quay.io`, `127.0.0.1:5000`).
        registry: String,
        /// Repository holding the blob.
        repository: String,
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
    /// need to know whether the blob sits in memory or in a spool file.
    pub fn open(&self) -> std::io::Result<Box<dyn std::io::Read + '_>> {
        match &self.source {
            BlobSource::Memory(bytes) => Ok(Box::new(bytes.as_slice())),
            BlobSource::File(path) => Ok(Box::new(std::fs::File::open(path)?)),
            BlobSource::Remote {
                registry,
                repository,
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
            } => PathBuf::from(format!("{registry}/{repository}")),
        }
    }
}

impl Image {
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
#[derive(Debug, Clone)]
pub struct ImageIndex {
    /// The index blob (its digest is the digest of the whole multi-platform image).
    pub index: Blob,
    /// The per-platform images, in the index's order.
    pub images: Vec<Image>,
}

impl ImageIndex {
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
