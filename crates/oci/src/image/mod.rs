//! Reproducible bundle images: layers, config and manifest. Everything here is deterministic so the same bundle gives the same digest anywhere.
//!
//! - [`model`]: the image value every source produces and every sink consumes (one image, or a
//!   multi-platform index of them), whose blobs fetch themselves ([`BlobFetcher`]) and whose
//!   index entries open on demand ([`ManifestFetcher`]), wherever they were read from;
//! - [`build`]: bundle folder → image (with [`walk`] deciding what goes in and [`layer`] how
//!   it is written), [`config`] and [`manifest`] for the JSON documents;
//! - [`extend`]: a folder as one layer on scratch or on a base image (catalog images);
//! - the local formats (OCI layout, oci-archive, docker-archive) are read and written in
//!   `transport::{layout, archive}`, one module per format;
//! - [`verify`]: recomputes every digest of an image read back from a sink;
//! - [`media`]: every media type, spelled once; [`parse`]: manifests and indexes, whatever
//!   transport brought them, failing with [`ImageError`] (never a registry error);
//! - [`digest`]: `sha256:` digests, the hashing writer and the verifying reader.
//!
//! The registry push is one more sink; it lives in `registry/` because it needs the client, and
//! `transport/` chooses between the sinks.

#![deny(missing_docs)]

pub mod build;
pub mod config;
pub mod descriptor;
pub mod digest;
pub mod error;
pub mod extend;
pub mod layer;
pub mod manifest;
pub mod media;
pub mod model;
pub mod parse;
pub mod strip;
pub mod verify;
pub mod walk;

pub use build::{BuildOptions, BuildWarning, BuiltImage, BundleInput, build, build_in};
pub use config::Platform;
pub use error::{BuildError, ImageError, OutputError};
pub use manifest::Format;
pub use model::{
    Artifact, Blob, BlobFetcher, BlobSource, Descriptor, Fetcher, Image, ImageIndex, ImageOrIndex,
    MAX_INDEX_ENTRIES, ManifestFetcher, Manifests,
};
/// A destination for `--output`: an image in a local format, the same value (and grammar) a
/// source string reads back; written by [`crate::transport::write_artifact`].
pub use olmpack_ground::location::LocalImage as Destination;
pub use verify::verify_image;
