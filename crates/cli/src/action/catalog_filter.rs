//! `catalog filter`: the door. A catalog read from any source ([`load_source`]), then the
//! filter step ([`crate::action::step::filter`]: catalog-filter's semantics, the result checked
//! with every `catalog validate` rule), written as `catalog render` writes a catalog.

use crate::action::catalog_render::{RenderOptions, load_source};
use crate::location::Location;

pub use crate::action::step::filter::{
    FilterCatalogError, FilterOptions, FilterOutput, filter_config, read_config, write_dir,
};

/// `catalog filter SOURCE`: loads the source and filters it.
pub fn filter_catalog(
    source: &Location,
    opts: &FilterOptions,
) -> Result<FilterOutput, FilterCatalogError> {
    let fc = read_config(opts)?;
    let render = RenderOptions {
        format: opts.format,
        registry: opts.registry.clone(),
        ..Default::default()
    };
    // A filter naming packages needs only those (and the names of the others, for its
    // messages): a catalog folder is loaded keeping only them; the whole catalog is loaded
    // only when a kept package's bundles require others (the dependency closure looks for
    // their providers everywhere).
    let (cfg, mut warnings) = if fc.packages.is_empty() {
        load_source(source, &render)?
    } else {
        let wanted: std::collections::HashSet<&str> =
            fc.packages.iter().map(|p| p.name.value.as_str()).collect();
        let (cfg, warnings) =
            crate::action::catalog_render::load_source_keeping(source, &render, &|p| {
                wanted.contains(p)
            })?;
        if !fc.no_dependencies && cfg.bundles.iter().any(|b| b.has_requirements()) {
            load_source(source, &render)?
        } else {
            (cfg, warnings)
        }
    };
    let mut out = filter_config(cfg, &fc, opts.format)?;
    warnings.append(&mut out.warnings);
    out.warnings = warnings;
    Ok(out)
}
