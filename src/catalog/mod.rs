//! File-based catalogs (FBC): the declarative-config model, its loader, writers and rules.

pub mod load;
pub mod model;

pub use model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Deprecation, DeprecationEntry, Icon, Meta,
    Origin, Package, PackageScopedReference, Property, RelatedImage,
};
