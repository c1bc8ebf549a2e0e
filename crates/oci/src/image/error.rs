//! Error types of the image module. Every variant that comes from the file system carries the
//! path it concerns, so a user can act on the message without a debugger.

use crate::fsio::FsError;
use std::io;
use std::path::PathBuf;

/// Why a bundle folder could not be turned into an image.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A file-system operation on the bundle or the spool folder failed ("read", "list",
    /// "create", "write"...).
    #[error(transparent)]
    Io(#[from] FsError),
    /// A folder the image needs (manifests or metadata) does not exist in the bundle.
    #[error(
        "the bundle has no {role} folder: {} does not exist (is {} the bundle root? a bundle holds manifests/ and metadata/)",
        path.display(),
        root.display()
    )]
    MissingFolder {
        /// `manifests` or `metadata`.
        role: &'static str,
        /// The folder that was expected.
        path: PathBuf,
        /// The bundle root that was given.
        root: PathBuf,
    },
    /// An annotation names a folder outside the bundle (`../x`, an absolute path).
    #[error("the {role} folder {value:?} named by the annotations is not inside the bundle")]
    FolderOutsideBundle {
        /// `manifests` or `metadata`.
        role: &'static str,
        /// The annotation value.
        value: String,
    },
    /// A path that should be a folder is a file.
    #[error("{} is not a folder", path.display())]
    NotAFolder {
        /// The path concerned.
        path: PathBuf,
    },
    /// A symbolic link points outside the bundle: its target would not be in the image anyway
    /// and copying it would leak files the user did not mean to publish.
    #[error("symbolic link {} points outside the bundle (to {})", link.display(), target.display())]
    SymlinkEscapes {
        /// The link inside the bundle.
        link: PathBuf,
        /// Where it resolves to.
        target: PathBuf,
    },
    /// A symbolic link that loops (directly, or through a folder that contains itself).
    #[error("symbolic link loop at {}: it leads back to a folder that contains it", link.display())]
    SymlinkLoop {
        /// The link where the loop was detected.
        link: PathBuf,
    },
    /// A symbolic link whose target does not exist.
    #[error("symbolic link {} points to {} which does not exist", link.display(), target.display())]
    DanglingSymlink {
        /// The link.
        link: PathBuf,
        /// Its target as written in the link.
        target: PathBuf,
    },
    /// A socket, FIFO or device file: it has no content a bundle image could carry.
    #[error("{} is a {kind}, which cannot be put in an image layer", path.display())]
    UnsupportedFileType {
        /// The file.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// A file changed size while it was being copied into a layer.
    #[error("{} changed while it was being read (expected {expected} bytes)", path.display())]
    FileChanged {
        /// The file.
        path: PathBuf,
        /// The size seen when the entry header was written.
        expected: u64,
    },
    /// A base image's config cannot be extended (not a JSON object, `rootfs.diff_ids` missing
    /// or not matching its layers).
    #[error("the base image config cannot be extended: {reason}")]
    BaseConfig {
        /// What is wrong with it.
        reason: String,
    },
    /// A `--label` extra contradicts an annotation; annotations.yaml is authoritative (it is
    /// what the on-cluster registry reads), so the image label must not say something else.
    #[error(
        "label {key}={extra:?} contradicts the annotation {key}={annotation:?} in annotations.yaml (annotations are authoritative; drop the --label or change the annotation)"
    )]
    LabelConflict {
        /// The label key.
        key: String,
        /// The annotation's value.
        annotation: String,
        /// The extra's value.
        extra: String,
    },
}

impl BuildError {
    /// Shorthand for [`BuildError::Io`].
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        BuildError::Io(FsError::new(action, path, source))
    }
}

/// Why an image could not be written to its destination.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// A file-system operation on the destination failed.
    #[error(transparent)]
    Io(#[from] FsError),
    /// The `oci:` target exists, is not empty and is not an OCI image layout: writing into it
    /// would mix our blobs with unrelated files.
    #[error(
        "{} exists and is not an OCI image layout (no oci-layout file); choose an empty or new folder",
        path.display()
    )]
    NotALayout {
        /// The folder.
        path: PathBuf,
    },
    /// The target exists and is not what the destination kind needs (a file where a folder is
    /// expected, or the reverse).
    #[error("{} exists and is {found}, not {expected}", path.display())]
    WrongKind {
        /// The path.
        path: PathBuf,
        /// What is there.
        found: &'static str,
        /// What the destination needs.
        expected: &'static str,
    },
    /// An existing layout file could not be understood.
    #[error("{} is not a valid OCI layout file: {reason}", path.display())]
    BadLayout {
        /// The file (`oci-layout` or `index.json`).
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A blob's bytes do not match its descriptor (spool file changed, or a bug).
    #[error("blob {digest} read from {} does not match its descriptor", path.display())]
    BlobMismatch {
        /// The expected digest.
        digest: String,
        /// Where the bytes came from.
        path: PathBuf,
    },
    /// The image is not in a form this sink can write (a digest that is not sha256).
    #[error("cannot write this image: {0}")]
    Unsupported(String),
    /// An index opened from a source could not open its images before being written.
    #[error(transparent)]
    Open(#[from] ImageError),
    /// Another writer held the layout's lock for longer than this writer may wait; nothing was
    /// added to `index.json` (blobs already written are harmless and reused by the next try).
    #[error(
        "OCI layout {} is locked by another writer (its {} file): gave up after {:.1} s; try again when it has finished, or set OLMPACK_LOCK_TIMEOUT (seconds) to wait longer",
        path.display(),
        lock_file,
        waited.as_secs_f64()
    )]
    Locked {
        /// The layout folder.
        path: PathBuf,
        /// The lock file's name inside it.
        lock_file: &'static str,
        /// How long this writer waited.
        waited: std::time::Duration,
    },
}

impl OutputError {
    /// Shorthand for [`OutputError::Io`].
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        OutputError::Io(FsError::new(action, path, source))
    }
}

/// Why image content (a manifest, an index, a blob) is not what it claims to be, wherever it came
/// from: a registry, an OCI layout, an archive. Its own type, so a broken local image is never
/// reported as a registry failure (no status, no retry); the transport that read the bytes adds
/// where they came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// A manifest or index cannot be understood (the message says what and why).
    #[error("{0}")]
    Malformed(String),
    /// Content does not hash to the digest that names it.
    #[error("digest mismatch for {expected}: the content received hashes to {actual}; refusing it")]
    DigestMismatch {
        /// The digest that names the content.
        expected: String,
        /// What the content hashes to.
        actual: String,
    },
    /// Content is not as long as its descriptor says.
    #[error("blob {digest} is {actual} bytes but its descriptor says {expected}")]
    SizeMismatch {
        /// The blob's digest.
        digest: String,
        /// The descriptor's size.
        expected: u64,
        /// The bytes received.
        actual: u64,
    },
    /// Content is larger than olmpack accepts for its kind.
    #[error("{what} is too large: more than {limit} bytes")]
    TooLarge {
        /// What it is.
        what: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// A layer cannot be unpacked safely (a path escaping the target, a link out of it, a
    /// bad whiteout, an archive that is not tar or gzip): refused, whoever served it.
    #[error("unsafe or invalid layer {layer}: {reason}")]
    UnsafeLayer {
        /// The layer's digest (or the archive's name).
        layer: String,
        /// What is wrong.
        reason: String,
    },
    /// A digest olmpack cannot verify (only sha256 and sha512 are supported).
    #[error("cannot verify digest {0}: only sha256 and sha512 are supported")]
    UnsupportedDigest(String),
    /// Reading the content failed midway.
    #[error("reading blob {digest}: {source}")]
    Read {
        /// The blob's digest.
        digest: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The source an index's images open from failed (a registry request, a layout file): its
    /// own error, kept whole so the transport that implemented the source reports it in its
    /// own words ([`super::model::ManifestFetcher`]).
    #[error(transparent)]
    Source(Box<dyn std::error::Error + Send + Sync>),
}
