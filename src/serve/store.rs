//! The registry server's data: serve-cache's [`ServeModel`] (opm's package index, and
//! `ConvertModelBundleToAPIBundle` run on demand) seen as a [`Store`], its `api.Bundle` turned
//! into the wire type field for field.

use super::api;
use super::model::{ApiBundle, CacheBundle, CachePackage, PackageIndex, ServeModel};
use super::registry::Store;

impl Store for ServeModel {
    fn index(&self) -> &PackageIndex {
        ServeModel::index(self)
    }

    fn bundle(&self, package: &CachePackage, bundle: &CacheBundle) -> Result<api::Bundle, String> {
        self.convert(package, bundle)
            .map(to_wire)
            .map_err(|e| e.to_string())
    }
}

/// The model's `api.Bundle` (Go JSON field names, for the cache files) as the protobuf message.
pub fn to_wire(b: ApiBundle) -> api::Bundle {
    let gvk = |g: super::model::GroupVersionKind| api::GroupVersionKind {
        group: g.group,
        version: g.version,
        kind: g.kind,
        plural: g.plural,
    };
    api::Bundle {
        csv_name: b.csv_name,
        package_name: b.package_name,
        channel_name: b.channel_name,
        csv_json: b.csv_json,
        object: b.object,
        bundle_path: b.bundle_path,
        provided_apis: b.provided_apis.into_iter().map(gvk).collect(),
        required_apis: b.required_apis.into_iter().map(gvk).collect(),
        version: b.version,
        skip_range: b.skip_range,
        dependencies: b
            .dependencies
            .into_iter()
            .map(|d| api::Dependency {
                r#type: d.type_,
                value: d.value,
            })
            .collect(),
        properties: b
            .properties
            .into_iter()
            .map(|p| api::Property {
                r#type: p.type_,
                value: p.value,
            })
            .collect(),
        replaces: b.replaces,
        skips: b.skips,
        deprecation: b
            .deprecation
            .map(|d| api::Deprecation { message: d.message }),
    }
}
