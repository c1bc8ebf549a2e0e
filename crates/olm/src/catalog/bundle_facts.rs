//! What a catalog bundle says about itself, read from its properties once, as opm reads them:
//! its package and version (the `olm.package` property), the APIs it provides and requires
//! (`olm.gvk`, `olm.gvk.required`), its objects and its CSV.
//!
//! Why here: the model keeps properties as raw JSON (their bytes are part of the output), and
//! every consumer (render, filter, diff, drawing, the rules, serve) needs the same few facts
//! from them. Each used to decode the `olm.package` value itself, with its own key rules;
//! now they all read it through [`PropertyValue`], which decodes a value as Go's
//! `json.Unmarshal` decodes it into opm's `property` structs: keys match fields
//! case-insensitively, `null` and absent fields are `""`, a field of another type is an error.
//! Consumers still word their own errors (they answer as different opm commands do).

use crate::catalog::model::{Bundle, Property, property_type};
use crate::catalog::version_release::{self, VersionRelease};
use semver::Version;
use serde_json::value::RawValue;

/// The decoded property values, read as Go reads them; in their own module so the version
/// arithmetic (`version_release`) can decode without these facts.
pub use super::property_value::{GoDecodeError, PackageProperty, PropertyValue};

/// Why a bundle has no single readable `olm.package` property.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackagePropertyError {
    /// None, or more than one (opm requires exactly one).
    #[error("must have exactly 1 {pkg:?} property, found {0}", pkg = property_type::PACKAGE)]
    Count(usize),
    /// The one property's value does not decode (its index among the bundle's properties).
    #[error("parse property at index {index}: {error}")]
    Value {
        /// Index among the bundle's properties.
        index: usize,
        /// Go's decoding error.
        error: GoDecodeError,
    },
}

/// An API (opm's `property.GVK`), provided (`olm.gvk`) or required (`olm.gvk.required`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gvk {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// Go's name of the struct the value decodes into.
    pub const GO_TYPE: &'static str = "property.GVK";

    /// Decodes one `olm.gvk` or `olm.gvk.required` value (group, kind, version, in that order,
    /// as opm's struct declares them).
    pub fn decode(raw: &RawValue) -> Result<Gvk, GoDecodeError> {
        let v = PropertyValue::decode(raw, Self::GO_TYPE)?;
        let group = v.string("group")?;
        let kind = v.string("kind")?;
        let version = v.string("version")?;
        Ok(Gvk {
            group,
            version,
            kind,
        })
    }
}

impl Bundle {
    /// The bundle's properties of type `type_`, with their index among all its properties.
    pub fn properties_of<'b>(
        &'b self,
        type_: &'b str,
    ) -> impl Iterator<Item = (usize, &'b Property)> + 'b {
        self.properties
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.type_ == type_)
    }

    /// The bundle's one `olm.package` property, decoded; opm refuses a bundle with none or
    /// several.
    pub fn package_property(&self) -> Result<PackageProperty, PackagePropertyError> {
        let found: Vec<(usize, &Property)> = self.properties_of(property_type::PACKAGE).collect();
        let [(index, p)] = found.as_slice() else {
            return Err(PackagePropertyError::Count(found.len()));
        };
        PackageProperty::decode(&p.value).map_err(|error| PackagePropertyError::Value {
            index: *index,
            error,
        })
    }

    /// The version text of the first `olm.package` property, `""` when there is none or it
    /// does not decode: what a listing or a report shows.
    pub fn version_text(&self) -> String {
        self.properties_of(property_type::PACKAGE)
            .next()
            .and_then(|(_, p)| {
                PropertyValue::decode(&p.value, PackageProperty::GO_TYPE)
                    .and_then(|v| v.string("version"))
                    .ok()
            })
            .unwrap_or_default()
    }

    /// [`Bundle::version_text`] when it is a semantic version: what graphs order and
    /// `skipRange`s match.
    pub fn version(&self) -> Option<Version> {
        Version::parse(&self.version_text()).ok()
    }

    /// Version and release as opm orders bundles (opm's `Bundle.VersionRelease()`, its texts).
    pub fn version_release(&self) -> Result<VersionRelease, String> {
        version_release::of_bundle(self)
    }

    /// The APIs the bundle provides (`olm.gvk`), in property order.
    pub fn provided_apis(&self) -> Result<Vec<Gvk>, PackagePropertyError> {
        self.gvks(property_type::GVK)
    }

    /// The APIs the bundle requires (`olm.gvk.required`), in property order.
    pub fn required_apis(&self) -> Result<Vec<Gvk>, PackagePropertyError> {
        self.gvks(property_type::GVK_REQUIRED)
    }

    /// Whether the bundle needs another to install (`olm.package.required` or
    /// `olm.gvk.required`): what a filter's dependency closure and OLM v1's refusal look for.
    pub fn has_requirements(&self) -> bool {
        self.properties_of(property_type::PACKAGE_REQUIRED)
            .next()
            .is_some()
            || self
                .properties_of(property_type::GVK_REQUIRED)
                .next()
                .is_some()
    }

    fn gvks(&self, type_: &str) -> Result<Vec<Gvk>, PackagePropertyError> {
        self.properties_of(type_)
            .map(|(index, p)| {
                Gvk::decode(&p.value).map_err(|error| PackagePropertyError::Value { index, error })
            })
            .collect()
    }

    /// The bundle's manifests (decoded `olm.bundle.object` values, compact JSON), empty when
    /// the catalog carries none (e.g. only `olm.csv.metadata`).
    pub fn objects(&self) -> &[String] {
        &self.objects
    }

    /// The CSV among the bundle's objects, as compact JSON (opm's `CsvJSON`). This is the seam
    /// for the typed CSV view: bundle/ owns the CSV model, and a typed accessor belongs next to
    /// it, built from this text.
    pub fn csv_json(&self) -> Option<&str> {
        self.csv_json.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(props: &[(&str, &str)]) -> Bundle {
        Bundle {
            schema: crate::catalog::model::SCHEMA_BUNDLE.into(),
            name: "op.v1.0.0".into(),
            package: "op".into(),
            image: String::new(),
            properties: props
                .iter()
                .map(|(t, v)| Property::new(*t, v.to_string()).unwrap())
                .collect(),
            related_images: vec![],
            objects: vec![],
            csv_json: None,
            origin: Default::default(),
        }
    }

    #[test]
    fn package_property_is_read_as_go_reads_it() {
        let b = bundle(&[(
            property_type::PACKAGE,
            r#"{"PackageName":"op","version":"1.2.3","release":null}"#,
        )]);
        assert_eq!(
            b.package_property(),
            Ok(PackageProperty {
                package_name: "op".into(),
                version: "1.2.3".into(),
                release: String::new(),
            })
        );
        assert_eq!(b.version(), Some(Version::new(1, 2, 3)));
        let b = bundle(&[(property_type::PACKAGE, r#"{"version":3}"#)]);
        assert_eq!(
            b.package_property().unwrap_err().to_string(),
            "parse property at index 0: json: cannot unmarshal number into Go struct field Package.version of type string"
        );
        assert_eq!(b.version_text(), "");
        let b = bundle(&[(property_type::GVK, "{}")]);
        assert_eq!(
            b.package_property().unwrap_err().to_string(),
            "must have exactly 1 \"olm.package\" property, found 0"
        );
        assert_eq!(b.provided_apis().unwrap(), vec![Gvk::default()]);
        assert!(b.required_apis().unwrap().is_empty());
    }
}
