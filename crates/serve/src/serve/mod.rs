//! Serving catalogs the way OLM reads them: opm's serve cache (so catalog images start as fast
//! as opm's), the gRPC registry API (`api.Registry`, what OLM v0 queries) and catalogd's HTTP API
//! (what OLM v1 clients read).

pub mod api;
pub mod codec;
pub mod csv;
pub mod experimental;
pub mod health;
pub mod http;
pub mod index;
pub mod model;
pub mod registry;
pub mod server;
pub mod store;

pub use model::{
    ApiBundle, ApiDeprecation, ApiProperty, BundleKey, CacheBundle, CacheChannel, CacheDeprecation,
    CacheIcon, CachePackage, Dependency, GroupVersionKind, ModelError, PackageIndex, ServeModel,
};
