//! Talking to OCI registries: credentials and the distribution-API client (pull and push of
//! manifests and blobs).
//!
//! This module knows nothing about bundles or catalogs, and nothing about local files: reading
//! `oci:`/`oci-archive:`/`docker-archive:` and unpacking layers live in [`crate::transport`],
//! which uses this client as its registry transport.
//!
//! Entry points: [`Reference::parse`], [`auth::resolve`], [`Client::new`],
//! [`push::push_image`], [`pull::fetch_manifest_bytes`] / [`pull::open_blob`].

pub mod auth;
pub mod challenge;
pub mod client;
pub mod digest;
pub mod errors;
pub mod pull;
pub mod push;
pub mod retry;
pub mod tags;
pub mod tls;
pub mod token;

pub use crate::reference::{self, Reference};
pub use client::{Client, ClientOptions};
pub use errors::RegistryError;
pub use retry::RetryPolicy;
