//! Why an image could not be opened, fetched or delivered.

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
    /// Writing a local destination failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A `--platform` value is not `os/arch[/variant]`.
    #[error(transparent)]
    Platform(#[from] PlatformError),
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
    /// A registry layer's digest is not sha256, the only algorithm blobs are stored under.
    #[error(
        "{source_name}: layer digest {digest} is not sha256, which is the only algorithm supported"
    )]
    UnsupportedDigest {
        /// The source as typed.
        source_name: String,
        /// The layer digest.
        digest: String,
    },
    /// A temp folder or spool file could not be created or written.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
}

impl From<crate::reference::InvalidReference> for TransportError {
    fn from(err: crate::reference::InvalidReference) -> Self {
        TransportError::Registry(err.into())
    }
}

impl TransportError {
    /// Shorthand for [`TransportError::Io`].
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        TransportError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
