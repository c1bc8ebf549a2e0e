//! `olmpack copy SRC DST`: an image or a whole multi-platform index from any source (a registry
//! reference, `oci:`, `oci-archive:`, `docker-archive:`) to any sink, with its signatures when
//! asked: `crane cp` / `skopeo copy` over olmpack's one image model ([`crate::transport::copy`]).
//! This door parses the two strings (the source must exist; a local target need not) and says
//! which end failed.

use crate::location::Location;
use crate::transport::{CopyOptions, CopyReport, Target, TransportError};

/// Why a copy did not happen (or did not finish: blobs already at the target are reused by the
/// next run, and no tag points at an incomplete image).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// The source string names nothing readable.
    #[error("cannot read the source {typed}")]
    Source {
        /// The source as typed.
        typed: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The target string is neither a registry reference nor a local image.
    #[error("invalid target {typed}")]
    Target {
        /// The target as typed.
        typed: String,
        /// Why.
        #[source]
        source: Box<TransportError>,
    },
    /// The copy itself failed.
    #[error("cannot copy {source_name} to {target}")]
    Copy {
        /// The source as typed.
        source_name: String,
        /// The target as typed.
        target: String,
        /// Why (boxed: the error travels up through every layer, the report does not).
        #[source]
        source: Box<TransportError>,
    },
}

/// Copies `source` to `target` (see [`crate::transport::copy`]).
pub fn copy(source: &str, target: &str, opts: &CopyOptions) -> Result<CopyReport, CopyError> {
    let location = Location::parse(source)
        .and_then(Location::require_image)
        .map_err(|e| CopyError::Source {
            typed: source.to_string(),
            source: Box::new(e),
        })?;
    let dest: Target = target.parse().map_err(|e| CopyError::Target {
        typed: target.to_string(),
        source: Box::new(e),
    })?;
    crate::transport::copy(&location, &dest, opts).map_err(|e| CopyError::Copy {
        source_name: source.to_string(),
        target: target.to_string(),
        source: Box::new(e),
    })
}
