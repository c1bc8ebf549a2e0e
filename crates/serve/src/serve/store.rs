//! The model's `api.Bundle` (Go JSON field names, for the cache files) as the protobuf message
//! the registry server sends.

use super::api;
use super::model::ApiBundle;

/// The model's `api.Bundle` (Go JSON field names, for the cache files) as the protobuf message.
pub fn to_wire(b: ApiBundle) -> api::Bundle {
    let gvk = |g: super::model::GroupVersionKind| api::GroupVersionKind {
        group: g.group,
        version: g.version,
        kind: g.kind,
        plural: g.plural,
    };
    let dependency = |d: super::model::Dependency| api::Dependency {
        r#type: d.type_,
        value: d.value,
    };
    let property = |p: super::model::ApiProperty| api::Property {
        r#type: p.type_,
        value: p.value,
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
        dependencies: b.dependencies.into_iter().map(dependency).collect(),
        properties: b.properties.into_iter().map(property).collect(),
        replaces: b.replaces,
        skips: b.skips,
        deprecation: b
            .deprecation
            .map(|d| api::Deprecation { message: d.message }),
    }
}
