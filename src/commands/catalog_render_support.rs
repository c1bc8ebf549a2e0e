//! Bundle rendering shared by `catalog template` and `catalog add`: one source (bundle folder,
//! local image or registry reference) → `olm.bundle` blobs carrying the published reference.
//!
//! Placeholder until the bundle renderer lands from the `render` branch; the template and add
//! commands only depend on [`render_source`] and [`MigrateLevel`].

use super::Failure;
use crate::catalog::model::Bundle;
use crate::catalog::template::{BundleRenderError, OpmCompat};
use crate::transport::options::RegistryOptions;

/// opm's `--migrate-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigrateLevel {
    /// No migration.
    #[default]
    None,
    /// `olm.bundle.object` → one `olm.csv.metadata`.
    BundleObjectToCsvMetadata,
}

impl MigrateLevel {
    /// Parses the flag value; an unknown value gives opm's message.
    pub fn parse(value: Option<&str>) -> Result<MigrateLevel, Failure> {
        match value {
            None | Some("") | Some("none") => Ok(MigrateLevel::None),
            Some("bundle-object-to-csv-metadata") => Ok(MigrateLevel::BundleObjectToCsvMetadata),
            Some(other) => Err(Failure::usage(format!("unknown migration level {other:?}"))),
        }
    }
}

/// Renders `source` as the bundle image `image_ref`.
pub fn render_source(
    source: &str,
    image_ref: &str,
    _migrate: MigrateLevel,
    _compat: OpmCompat,
    _registry: &RegistryOptions,
) -> Result<Vec<Bundle>, BundleRenderError> {
    Err(BundleRenderError::new(format!(
        "cannot render {source} as {image_ref}: bundle rendering is not available in this build"
    )))
}
