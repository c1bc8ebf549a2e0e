//! Why a serve cache could not be made, shared by the JSON and the pogreb writers.

use crate::gocompat::tar as gotar;
use crate::image::BuildError;
use crate::serve::model::ModelError;
use std::path::Path;

/// Why a serve cache could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The catalog cannot be served (opm would not build a cache either).
    #[error("cannot build opm's serve cache: {0}")]
    Model(#[from] ModelError),
    /// A name cannot be a cache file name (opm would fail writing it).
    #[error("cannot build opm's serve cache: {0}")]
    Name(String),
    /// Writing or reading a file failed.
    #[error("cannot build opm's serve cache: {0}")]
    Io(#[from] crate::fsio::FsError),
    /// Hashing a file for the digest failed.
    #[error("cannot compute the serve cache digest: {0}")]
    Digest(#[from] gotar::TarError),
    /// Walking the catalog folder or writing the layer failed.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// [`CacheError::Io`] for a failed write (or folder creation) of `path`.
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CacheError + '_ {
    move |source| crate::fsio::at("write", path)(source).into()
}
