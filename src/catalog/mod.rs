//! File-based catalogs (FBC): the declarative-config model, its loader, writers and rules.

pub mod init;
pub mod load;
pub mod model;
pub mod validate;

pub use model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Deprecation, DeprecationEntry, Icon, Meta,
    Origin, Package, PackageScopedReference, Property, RelatedImage,
};

pub mod add;
pub mod graph;
pub mod mermaid;
pub mod render;
pub mod template;
pub mod write;
