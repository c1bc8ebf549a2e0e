//! Reproducible bundle images: layers, config and manifest, and the writers for OCI layouts and
//! archives. Everything here is deterministic so the same bundle gives the same digest anywhere.

pub mod model;

pub use model::{Blob, BlobSource, Descriptor, Image};
