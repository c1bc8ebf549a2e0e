//! Why an image could not be opened, fetched or delivered.

use crate::fsio::FsError;
use crate::image::OutputError;
use crate::image::config::PlatformError;
use crate::registry::RegistryError;
use std::path::PathBuf;

/// Everything a transport can fail with. Registry and output errors keep their own types (with
/// status codes, digests and paths) so callers can still ask `is_temporary()` and friends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// Talking to a registry, or reading a local image, failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// Image content (a manifest, an index, a blob) is not what it claims to be.
    #[error(transparent)]
    Image(crate::image::ImageError),
    /// The source string names nothing readable, or a folder where an image is needed.
    #[error(transparent)]
    Location(#[from] crate::location::LocationError),
    /// Reading an image in a local format failed.
    #[error(transparent)]
    Local(#[from] LocalError),
    /// Writing a local destination failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A `--platform` value is not `os/arch[/variant]`.
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// The operation cannot be done with these ends (signatures into an archive...).
    #[error("{0}")]
    Unsupported(String),
    /// A push was asked for with nowhere to push to.
    #[error("nothing to push to: give at least one -t REF")]
    NoTargets,
    /// A push target pins a digest that is not the image's.
    #[error("{reference} pins digest {pinned} but the image is {actual}")]
    DigestPin {
        /// The target as given.
        reference: String,
        /// The digest it names.
        pinned: String,
        /// The image's digest.
        actual: String,
    },
    /// A source whose signatures were verified at one digest now names another manifest:
    /// reading it would read what was not verified.
    #[error(
        "{source_name} now names manifest {actual}, not {verified} whose signatures the policy verified; refusing to read it"
    )]
    NotVerified {
        /// The source as typed.
        source_name: String,
        /// The digest the policy verified.
        verified: String,
        /// The digest found when reading.
        actual: String,
    },
    /// A mirror configuration has a rule for the reference and none of its places (mirrors in
    /// order, then the source unless blocked) served it.
    #[error("{reference}: no mirror or source served it ({})", crate::mirror_config::describe_attempts(.attempts))]
    NotServed {
        /// The reference as named.
        reference: String,
        /// `(place, why)` for each place tried, in order.
        attempts: Vec<(String, String)>,
    },
    /// The mirror configuration cannot rewrite the reference (boxed: five strings would make
    /// every transport result carry their size).
    #[error(transparent)]
    MirrorConfig(Box<crate::mirror_config::MirrorConfigError>),
    /// A docker-archive is to be named after a digest reference; it records tags only.
    #[error("{0} is a digest reference; a docker-archive needs a tag (REPO:TAG)")]
    DigestName(String),
    /// A multi-platform image has no manifest for a platform that was asked for.
    #[error("{source_name} has no image for platform {platform} (it has: {available})")]
    NoSuchPlatform {
        /// The source as typed.
        source_name: String,
        /// The platform asked for.
        platform: String,
        /// The platforms it has, comma-separated.
        available: String,
    },
    /// A multi-platform image has no manifest for the platform a single-image reader asked
    /// for (`--platform`, or the default `linux/amd64`).
    #[error("{source_name} is an image index with no manifest for platform {platform}")]
    IndexWithoutPlatform {
        /// The source as typed.
        source_name: String,
        /// The platform asked for.
        platform: String,
    },
    /// A registry layer's digest is neither sha256 nor sha512, the algorithms olmpack verifies.
    #[error(
        "{source_name}: layer digest {digest} is neither sha256 nor sha512, the algorithms olmpack verifies"
    )]
    UnsupportedDigest {
        /// The source as typed.
        source_name: String,
        /// The layer digest.
        digest: String,
    },
    /// A temp folder or spool file could not be created or written.
    #[error(transparent)]
    Io(#[from] FsError),
}

/// Why an image in a local format (an OCI layout, an oci-archive, a docker-archive) could not be
/// read. Its own type, not a registry error: no status code, no retry, and the message names the
/// source as typed and the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// The content is not a valid image of its format.
    #[error("{source_name}: {reason}")]
    Invalid {
        /// The source as typed.
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be read (or a temp folder created).
    #[error("{source_name}: {file}")]
    Io {
        /// The source as typed.
        source_name: String,
        /// What was being done, on which file, and the operating-system error.
        #[source]
        file: FsError,
    },
    /// A blob's content does not hash to the digest that names it.
    #[error("{source_name}: blob {expected} hashes to {actual}; refusing it")]
    DigestMismatch {
        /// The source as typed.
        source_name: String,
        /// The digest that names the blob.
        expected: String,
        /// What its content hashes to.
        actual: String,
    },
}

impl LocalError {
    /// A closure turning an I/O error on `path` into [`LocalError::Io`].
    pub(crate) fn io<'a>(
        name: &'a str,
        action: &'static str,
        path: &'a std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> LocalError + 'a {
        move |source| LocalError::Io {
            source_name: name.to_string(),
            file: FsError::new(action, path, source),
        }
    }
}

/// An image error, except that the failure of a source an index's images open from
/// ([`crate::image::ImageError::Source`]) is that source's own error again: a transport put it
/// there, and a registry status or a layout's file stays what it was.
impl From<crate::image::ImageError> for TransportError {
    fn from(err: crate::image::ImageError) -> Self {
        match err {
            crate::image::ImageError::Source(source) => match source.downcast::<TransportError>() {
                Ok(transport) => *transport,
                Err(other) => TransportError::Image(crate::image::ImageError::Source(other)),
            },
            other => TransportError::Image(other),
        }
    }
}

/// A repository's failure given back as it was: the registry's error, or the transport error
/// a local store ([`super::layout_repository`]) wrapped.
impl From<crate::registry::RepositoryError> for TransportError {
    fn from(err: crate::registry::RepositoryError) -> Self {
        match err {
            crate::registry::RepositoryError::Registry(e) => TransportError::Registry(e),
            crate::registry::RepositoryError::Store(e) => match e.downcast::<TransportError>() {
                Ok(transport) => *transport,
                Err(other) => TransportError::Unsupported(other.to_string()),
            },
        }
    }
}

impl From<crate::reference::InvalidReference> for TransportError {
    fn from(err: crate::reference::InvalidReference) -> Self {
        TransportError::Registry(err.into())
    }
}

impl TransportError {
    /// Shorthand for [`TransportError::Io`].
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TransportError::Io(FsError::new(action, path, source))
    }
}

impl From<crate::mirror_config::MirrorConfigError> for TransportError {
    fn from(e: crate::mirror_config::MirrorConfigError) -> Self {
        TransportError::MirrorConfig(Box::new(e))
    }
}
