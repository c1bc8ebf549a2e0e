//! Talking to OCI registries: credentials and the distribution-API client (pull and push of
//! manifests and blobs).
//!
//! This module knows nothing about bundles or catalogs, and nothing about local files: reading
//! `oci:`/`oci-archive:`/`docker-archive:` and unpacking layers live in [`crate::transport`],
//! which uses this client as its registry transport.
//!
//! It owns the protocol: the URL paths ([`api`], the only place they are spelled) and every
//! request. Callers outside it speak to a repository through the [`Repository`] trait
//! ([`repository`]), which [`Remote`] implements over HTTP and the transport's OCI layout
//! implements over a folder; they never build a request.
//!
//! Entry points: [`Reference::parse`], [`auth::resolve`], [`Client::new`], [`Remote`],
//! [`push::push_image`], [`pull::fetch_manifest_bytes`] / [`pull::open_blob`].

pub mod api;
pub mod auth;
pub mod cache;
pub mod challenge;
pub mod client;
pub mod digest;
pub mod errors;
pub mod pull;
pub mod push;
pub mod remote;
pub mod repository;
pub mod retry;
pub mod tags;
pub mod tls;
pub mod token;

pub use client::{Client, ClientOptions};
pub use errors::RegistryError;
pub use olmpack_ground::reference::{self, Reference};
pub use remote::Remote;
pub use repository::{Manifest, ManifestHead, Repository, RepositoryError};
pub use retry::RetryPolicy;
