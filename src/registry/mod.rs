//! Talking to OCI registries: references, credentials and the distribution-API client, plus the
//! local image sources (`oci:`, `oci-archive:`, `docker-archive:`) and safe layer extraction.
//!
//! This module knows nothing about bundles: it moves [`crate::image::Image`]s between registries,
//! files and folders. Bundle-specific logic (labels vs annotations, which layer holds
//! `metadata/`) lives in `commands::image_source`.
//!
//! Entry points: [`Reference::parse`], [`auth::resolve`], [`Client::new`],
//! [`push::push_image`], [`pull::pull_image`] / [`pull::fetch_manifest`],
//! [`unpack::unpack_layers`], [`layout_source::load`].

pub mod auth;
pub mod challenge;
pub mod client;
pub mod digest;
pub mod errors;
pub mod layout_source;
pub mod pull;
pub mod push;
pub mod retry;
pub mod token;
pub mod unpack;

pub use crate::reference::{self, Reference};
pub use client::{Client, ClientOptions};
pub use errors::RegistryError;
pub use retry::RetryPolicy;
