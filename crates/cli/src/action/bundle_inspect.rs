//! `bundle inspect`: an image opened ([`super::source::open`]) and its layers listed by
//! streaming ([`super::bundle_image::inspect`]), with what the command shows about the image
//! itself, so the command only prints.

use super::bundle_image::{InspectError, Inspection, inspect};
use crate::image::Descriptor;
use crate::location::Location;
use crate::transport::RegistryOptions;
use std::collections::BTreeMap;

/// What `bundle inspect` shows.
#[derive(Debug)]
pub struct Inspected {
    /// The image as named.
    pub name: String,
    /// Manifest digest.
    pub digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// `os/arch[/variant]`.
    pub platform: String,
    /// The config blob's descriptor (its digest is the image ID).
    pub config: Descriptor,
    /// Config labels.
    pub labels: BTreeMap<String, String>,
    /// Notes from opening it (an index resolved to one platform).
    pub warnings: Vec<String>,
    /// Where it was really read (`--mirror-config`): the place's reference and whether it is
    /// a mirror; `None` when no mirror rule named it.
    pub read_from: Option<(String, bool)>,
    /// Layers, files and annotations.
    pub report: Inspection,
}

/// Opens `location` and lists its layers (only the ones needed to find the annotations with
/// `no_files`).
pub fn inspect_image(
    location: &Location,
    registry: &RegistryOptions,
    no_files: bool,
) -> Result<Inspected, InspectError> {
    let opened = super::source::open(location, registry)?;
    let report = inspect(&opened, no_files)?;
    Ok(Inspected {
        name: opened.name.clone(),
        digest: opened.image.digest().to_string(),
        media_type: opened.image.media_type().to_string(),
        platform: opened.platform(),
        config: opened.image.config.descriptor.clone(),
        labels: opened.labels(),
        warnings: opened.warnings.clone(),
        read_from: opened
            .read_from
            .as_ref()
            .map(|p| (p.reference.to_string(), p.mirror)),
        report,
    })
}
