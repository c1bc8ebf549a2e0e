//! The `konflux-fbc` profile: the rules of Konflux's `validate-fbc` task
//! (konflux-ci/konflux-operator-tasks) on each affected catalog: the bundle metadata form its
//! OCP target needs (`olm.bundle.object` below 4.17, `olm.csv.metadata` from 4.17), bundle
//! images pinned by digest, and bundle images from the allowed registries.

use super::super::finding::Finding;
use super::Target;
use crate::catalog::model::property_type;
use crate::yaml::Node;

/// The catalog rules, per affected catalog; `allowed` are registry prefixes (none: any).
pub fn catalogs(t: &Target<'_>, allowed: &[String], out: &mut Vec<Finding>) {
    for catalog in t.catalogs {
        let Some(ocp) = super::super::ocp::catalog_version(&catalog.ocp) else {
            continue;
        };
        let new_form = ocp >= (4, 17);
        for blob in catalog.bundles() {
            let name = blob
                .get("name")
                .and_then(Node::scalar_text)
                .unwrap_or("<unnamed>");
            let props = blob.get("properties").and_then(Node::as_seq).unwrap_or(&[]);
            let has = |ty: &str| {
                props
                    .iter()
                    .find(|p| p.get("type").and_then(Node::scalar_text) == Some(ty))
            };
            let (wrong, missing) = if new_form {
                (property_type::BUNDLE_OBJECT, property_type::CSV_METADATA)
            } else {
                (property_type::CSV_METADATA, property_type::BUNDLE_OBJECT)
            };
            if let Some(p) = has(wrong) {
                out.push(
                    Finding::error(
                        "check_fbc_bundle_metadata",
                        format!("bundle {name} in {} carries {wrong}; OCP {}.{} catalogs need {missing}", catalog.name(), ocp.0, ocp.1),
                    )
                    .at(&catalog.file, Some(p.line)),
                );
            } else if has(missing).is_none() {
                out.push(
                    Finding::error(
                        "check_fbc_bundle_metadata",
                        format!("bundle {name} in {} has no {missing} property, which OCP {}.{} catalogs need", catalog.name(), ocp.0, ocp.1),
                    )
                    .at(&catalog.file, Some(blob.line)),
                );
            }
            let Some(image_node) = blob.get("image") else {
                continue;
            };
            let image = image_node.scalar_text().unwrap_or("");
            if !image.contains("@sha256:") {
                out.push(
                    Finding::error(
                        "check_fbc_image_digest",
                        format!(
                            "bundle {name} in {}: image {image} is not pinned by digest",
                            catalog.name()
                        ),
                    )
                    .at(&catalog.file, Some(image_node.line)),
                );
            }
            if !allowed.is_empty() && !allowed.iter().any(|r| image.starts_with(r.as_str())) {
                out.push(
                    Finding::error(
                        "check_fbc_allowed_registry",
                        format!("bundle {name} in {}: image {image} is not from an allowed registry ({})", catalog.name(), allowed.join(", ")),
                    )
                    .at(&catalog.file, Some(image_node.line)),
                );
            }
        }
    }
}
