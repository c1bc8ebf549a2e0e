//! `opm render`, reproduced: bundles to `olm.bundle` blobs, and the post-processing opm applies
//! to every input (CATALOG.md D.3, D.4).
//!
//! The pieces are public because the template and `catalog add` commands render bundles too:
//! [`render_bundle`] builds one blob, [`finish_config`] applies opm's per-input clean-up
//! (objects moved to the end, relatedImages sorted, migration), and the writers in
//! [`crate::catalog::write`] print the result.

pub mod bundle;
pub mod csv_metadata;

pub use bundle::{BundleFiles, BundleRenderError, RenderedBundle, render_bundle};

use crate::catalog::model::{Bundle, DeclarativeConfig, Property, property_type};
use serde_json::value::RawValue;

/// `--migrate-level`: which of opm's migrations to apply to every input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigrateLevel {
    /// No migration (opm's default).
    #[default]
    None,
    /// Replace `olm.bundle.object` properties by one `olm.csv.metadata` (OpenShift 4.17+ catalogs).
    BundleObjectToCsvMetadata,
}

impl std::str::FromStr for MigrateLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" | "" => Ok(MigrateLevel::None),
            "bundle-object-to-csv-metadata" => Ok(MigrateLevel::BundleObjectToCsvMetadata),
            other => Err(format!(
                "unknown migration level {other:?} (expected none or bundle-object-to-csv-metadata)"
            )),
        }
    }
}

pub use crate::catalog::compat::OpmCompat;

/// A problem in the post-processing (only the migration can fail: a CSV it cannot read).
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// The bundle's CSV JSON does not decode.
    #[error("migrate: bundle {bundle:?}: {message}")]
    Migrate {
        /// The bundle name.
        bundle: String,
        /// What is wrong.
        message: String,
    },
}

/// Reorders a rendered bundle's objects to manifest order (opm before 1.28 did not sort them).
pub fn objects_in_file_order(b: &mut Bundle) {
    let mut objects: Vec<Property> = b
        .objects
        .iter()
        .filter_map(|o| {
            use base64::Engine as _;
            let data = base64::engine::general_purpose::STANDARD.encode(o.as_bytes());
            Property::new(
                property_type::BUNDLE_OBJECT,
                format!("{{\"data\":\"{data}\"}}"),
            )
            .ok()
        })
        .collect();
    let mut rest: Vec<Property> = b
        .properties
        .drain(..)
        .filter(|p| p.type_ != property_type::BUNDLE_OBJECT)
        .collect();
    rest.append(&mut objects);
    b.properties = rest;
}

/// What `Render.Run` does to every input after loading it: `olm.bundle.object` and
/// `olm.csv.metadata` moved to the end of each bundle's properties (relative order kept),
/// relatedImages sorted by image, then the migration.
///
/// Entries with the same image are ordered as opm orders them: by a port of Go's `sort.Slice`
/// ([`crate::gocompat::sort`]), which keeps input order for up to 12 entries (an insertion sort) and leaves an
/// already sorted list as it is. Ordering them by name instead (as first planned) would rewrite
/// 13 of the 63 shared catalogs on a re-render. The only remaining source of difference is opm
/// itself: it appends deployment images in Go map order (random) before sorting; olmpack
/// appends them in image order.
pub fn finish_config(
    cfg: &mut DeclarativeConfig,
    migrate: MigrateLevel,
) -> Result<(), FinishError> {
    for b in &mut cfg.bundles {
        move_objects_to_end(b);
        crate::gocompat::sort::sort_slice(
            &mut b.related_images,
            &|x: &crate::catalog::model::RelatedImage, y: &crate::catalog::model::RelatedImage| {
                x.image < y.image
            },
        );
    }
    if migrate == MigrateLevel::BundleObjectToCsvMetadata {
        for b in &mut cfg.bundles {
            bundle_object_to_csv_metadata(b)?;
        }
    }
    Ok(())
}

/// `moveBundleObjectsToEndOfPropertySlices` for one bundle.
pub fn move_objects_to_end(b: &mut Bundle) {
    let (objects, mut others): (Vec<Property>, Vec<Property>) =
        b.properties.drain(..).partition(|p| {
            p.type_ == property_type::BUNDLE_OBJECT || p.type_ == property_type::CSV_METADATA
        });
    others.extend(objects);
    b.properties = others;
}

/// opm's migration `bundle-object-to-csv-metadata` for one bundle. Bundles without an image or
/// a CSV are left alone. A bundle that already has `olm.csv.metadata` is left alone too, except
/// for opm's in-place filtering quirk: the properties before it lose their `olm.bundle.object`
/// entries by shifting later ones down (Go slice aliasing), which is reproduced here.
pub fn bundle_object_to_csv_metadata(b: &mut Bundle) -> Result<(), FinishError> {
    let Some(csv_json) = b.csv_json.as_deref().filter(|c| !c.is_empty()) else {
        return Ok(());
    };
    if b.image.is_empty() {
        return Ok(());
    }
    let fail = |message: String| FinishError::Migrate {
        bundle: b.name.clone(),
        message,
    };
    let csv: serde_json::Value = serde_json::from_str(csv_json).map_err(|e| fail(e.to_string()))?;
    let metadata = csv_metadata::csv_metadata_json(&csv).map_err(|e| fail(e.to_string()))?;
    let mut kept = 0;
    for i in 0..b.properties.len() {
        let ty = b.properties[i].type_.as_str();
        if ty == property_type::BUNDLE_OBJECT {
            continue;
        }
        if ty == property_type::CSV_METADATA {
            return Ok(());
        }
        b.properties.swap(kept, i);
        // Go copies rather than swaps: the slot at `i` keeps its old value.
        if kept != i {
            b.properties[i] = b.properties[kept].clone();
        }
        kept += 1;
    }
    b.properties.truncate(kept);
    let value = RawValue::from_string(metadata).map_err(|e| fail(e.to_string()))?;
    b.properties.push(Property {
        type_: property_type::CSV_METADATA.to_string(),
        value,
    });
    Ok(())
}

/// Expands opm's `--alpha-image-ref-template` (Go text/template with the fields `.Package`,
/// `.Name` and `.Version`; `{{ .Package }}` spacing accepted). Other actions are refused.
pub fn expand_image_template(
    template: &str,
    package: &str,
    name: &str,
    version: &str,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("image template {template:?}: unclosed action"))?;
        let action = after[..end]
            .trim()
            .trim_start_matches('-')
            .trim_end_matches('-')
            .trim();
        out.push_str(match action {
            ".Package" => package,
            ".Name" => name,
            ".Version" => version,
            other => {
                return Err(format!(
                    "image template {template:?}: unsupported action {{{{{other}}}}}: use {{{{.Package}}}}, {{{{.Name}}}} or {{{{.Version}}}}"
                ));
            }
        });
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_template_fields() {
        assert_eq!(
            expand_image_template(
                "quay.io/x/{{.Package}}:v{{ .Version }}-{{.Name}}",
                "p",
                "n",
                "1.0"
            )
            .unwrap(),
            "quay.io/x/p:v1.0-n"
        );
        assert!(expand_image_template("{{.Foo}}", "p", "n", "v").is_err());
        assert!(expand_image_template("{{.Package", "p", "n", "v").is_err());
    }

    #[test]
    fn compat_versions() {
        let v: OpmCompat = "v1.26.5".parse().unwrap();
        assert!(v.objects_in_file_order());
        let v: OpmCompat = "1.46".parse().unwrap();
        assert!(!v.csv_metadata_for_images() && !v.objects_in_file_order());
        assert!("2.0".parse::<OpmCompat>().is_err());
    }
}
