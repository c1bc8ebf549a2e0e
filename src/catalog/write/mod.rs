//! Writers that reproduce `opm render`/`opm init` output byte for byte (CATALOG.md D.6).
//!
//! Why byte-exact: catalogs are generated and checked in; a tool that replaces opm in a pipeline
//! must not change a byte of the files it regenerates, or every run shows a diff.
//! - [`write_json_blob`]: one blob as Go's `json.Encoder` (4 spaces, no HTML escaping) writes it;
//! - [`write_yaml_blob`]: `---\n` and the blob as `sigs.k8s.io/yaml` (go-yaml v2) writes it;
//! - [`write_config`]: a whole [`DeclarativeConfig`] in opm's `configsByPackage` order.
//!
//! All writers append to a `Vec<u8>`: callers build the whole output in memory and write it once.

pub mod json;
pub mod yaml;

use super::model::{Bundle, Channel, DeclarativeConfig, Deprecation, Meta, Package};
use serde::Serialize;
use std::collections::BTreeMap;

pub use json::{go_indent, to_compact, write_json_blob};
pub use yaml::json_to_yaml;

/// Output format of `render`, `init` and templates (`-o json|yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// opm's default: 4-space JSON, one blob after another.
    #[default]
    Json,
    /// go-yaml v2 documents, each preceded by `---`.
    Yaml,
}

/// A blob could not be serialized (only possible for invalid raw JSON in a property value).
#[derive(Debug, thiserror::Error)]
#[error("cannot serialize catalog blob: {0}")]
pub struct WriteError(#[from] serde_json::Error);

/// Appends one blob as `---\n` followed by go-yaml v2's rendering of its JSON form.
pub fn write_yaml_blob<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), WriteError> {
    let compact = json::to_compact(value)?;
    let tree: serde_json::Value = serde_json::from_slice(&compact)?;
    out.extend_from_slice(b"---\n");
    yaml::json_to_yaml(out, &tree);
    Ok(())
}

/// Appends one blob in `format`.
pub fn write_blob<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    format: Format,
) -> Result<(), WriteError> {
    match format {
        Format::Json => Ok(json::write_json_blob(out, value)?),
        Format::Yaml => write_yaml_blob(out, value),
    }
}

/// Appends a whole catalog in opm's `configsByPackage` order: packages by name (blobs whose
/// package is empty are dropped, as opm drops them, except other-schema blobs); per package the
/// `olm.package` blobs, channels by name, bundles by name (plain string order), other schemas
/// (stable by schema), deprecations; finally other-schema blobs without a package.
/// opm sorts channels and bundles with an unstable sort; equal names keep input order here.
pub fn write_config(
    out: &mut Vec<u8>,
    cfg: &DeclarativeConfig,
    format: Format,
) -> Result<(), WriteError> {
    #[derive(Default)]
    struct Group<'a> {
        packages: Vec<&'a Package>,
        channels: Vec<&'a Channel>,
        bundles: Vec<&'a Bundle>,
        others: Vec<&'a Meta>,
        deprecations: Vec<&'a Deprecation>,
    }
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for p in &cfg.packages {
        groups.entry(&p.name).or_default().packages.push(p);
    }
    for c in &cfg.channels {
        groups.entry(&c.package).or_default().channels.push(c);
    }
    for b in &cfg.bundles {
        groups.entry(&b.package).or_default().bundles.push(b);
    }
    for o in &cfg.others {
        groups.entry(&o.package).or_default().others.push(o);
    }
    for d in &cfg.deprecations {
        groups.entry(&d.package).or_default().deprecations.push(d);
    }
    for (name, group) in &mut groups {
        if name.is_empty() {
            continue;
        }
        for p in &group.packages {
            write_blob(out, *p, format)?;
        }
        group.channels.sort_by(|a, b| a.name.cmp(&b.name));
        for c in &group.channels {
            write_blob(out, *c, format)?;
        }
        group.bundles.sort_by(|a, b| a.name.cmp(&b.name));
        for b in &group.bundles {
            write_blob(out, *b, format)?;
        }
        group.others.sort_by(|a, b| a.schema.cmp(&b.schema));
        for o in &group.others {
            write_blob(out, *o, format)?;
        }
        for d in &group.deprecations {
            write_blob(out, *d, format)?;
        }
    }
    if let Some(group) = groups.get("") {
        for o in &group.others {
            write_blob(out, *o, format)?;
        }
    }
    Ok(())
}
