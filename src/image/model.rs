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
    /// Opens the blob's bytes for streaming, so sinks (layout, archives, a registry push) never
    /// need to know whether the blob sits in memory or in a spool file.
    pub fn open(&self) -> std::io::Result<Box<dyn std::io::Read + '_>> {
        match &self.source {
            BlobSource::Memory(bytes) => Ok(Box::new(bytes.as_slice())),
            BlobSource::File(path) => Ok(Box::new(std::fs::File::open(path)?)),
        }
    }

    /// Where the bytes are, for error messages: the spool file, or `<memory>`.
    pub fn location(&self) -> PathBuf {
        match &self.source {
            BlobSource::Memory(_) => PathBuf::from("<memory>"),
            BlobSource::File(path) => path.clone(),
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
