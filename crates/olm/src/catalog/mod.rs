//! File-based catalogs (FBC): the declarative-config model, its loader, writers and rules.

/// The image label naming the catalog's folder inside a catalog image (opm's
/// `containertools.ConfigsLocationLabel`): `catalog build` sets it and `catalog render` reads it
/// to find the catalog, so both must spell it the same.
pub const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";

pub mod init;
pub mod load;
pub mod model;
pub mod property_value;

pub use model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Deprecation, DeprecationEntry, Icon, Meta,
    Origin, Package, PackageScopedReference, Property, RelatedImage,
};

pub mod add;
pub mod bundle_facts;
pub mod channel;
pub mod compat;
pub mod diff;
pub mod filter;
pub use bundle_facts::{GoDecodeError, Gvk, PackageProperty, PackagePropertyError, PropertyValue};
pub use compat::{CompatParseError, OpmCompat};
pub use model_check::ModelProblem;
pub mod graph;
pub mod matrix;
pub mod mermaid;
pub mod model_check;
pub mod onboard;
pub mod render;
pub mod repo_layout;
pub mod template;
pub mod version_release;
pub mod write;
