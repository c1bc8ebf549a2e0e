//! Glue shared by `catalog template` and `catalog add`: the flags that choose how bundles are
//! rendered, turned into [`SourceOptions`].

use super::Failure;
use super::image_source::RegistryArgs;
use crate::action::bundle_source::SourceOptions;
use crate::catalog::render::MigrateLevel;
use crate::catalog::template::OpmCompat;

/// Builds the render options from the common flags.
pub fn source_options(
    migrate_level: Option<&str>,
    compat: Option<OpmCompat>,
    registry: &RegistryArgs,
) -> Result<SourceOptions, Failure> {
    let migrate = match migrate_level {
        None => MigrateLevel::None,
        Some(level) => level.parse::<MigrateLevel>().map_err(Failure::usage)?,
    };
    Ok(SourceOptions {
        migrate,
        compat: compat.unwrap_or_default(),
        registry: registry.options()?,
    })
}
