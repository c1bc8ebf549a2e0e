//! A property's JSON value decoded as Go's `encoding/json` decodes it into opm's structs (keys
//! matched in any case, `null` as the zero value, a wrong type an error with Go's text), and
//! the `olm.package` value read that way: what the bundle facts and the version arithmetic
//! both stand on.

use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// Why a property value does not decode into opm's Go struct; the text is Go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("json: cannot unmarshal {found} into Go struct field {field} of type {go_type}")]
pub struct GoDecodeError {
    /// Go's name of the JSON type found (`object`, `array`, `string`, `number`, `bool`).
    pub found: &'static str,
    /// `Struct.field` as Go prints it (the struct's own name for a value that is no object).
    pub field: String,
    /// The Go type expected.
    pub go_type: &'static str,
}

/// Go's name of the JSON type of `raw`, as `encoding/json`'s decode errors print it (`object`,
/// `array`, `string`, `bool`, `null`, `number`): every reader of property values words its
/// errors with it.
pub fn kind_of(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "bool",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// A property value decoded as a Go struct of string fields, fields read on demand (so a
/// consumer that reads only `version` fails only on `version`, as opm's struct of that
/// consumer would).
#[derive(Debug, Clone)]
pub struct PropertyValue<'a> {
    /// `None` for `null` (Go leaves every field empty).
    fields: Option<BTreeMap<String, &'a RawValue>>,
    /// `property.Package` and the like, for error texts.
    go_type: &'static str,
}

impl<'a> PropertyValue<'a> {
    /// Decodes `raw` as Go decodes it into a value of `go_type` (e.g. `property.Package`):
    /// an object or `null`; anything else is Go's type error.
    pub fn decode(raw: &'a RawValue, go_type: &'static str) -> Result<Self, GoDecodeError> {
        let not_object = || GoDecodeError {
            found: kind_of(raw),
            field: go_type.to_string(),
            go_type,
        };
        if raw.get() == "null" {
            return Ok(PropertyValue {
                fields: None,
                go_type,
            });
        }
        if kind_of(raw) != "object" {
            return Err(not_object());
        }
        let fields = serde_json::from_str(raw.get()).map_err(|_| not_object())?;
        Ok(PropertyValue {
            fields: Some(fields),
            go_type,
        })
    }

    /// Whether the value was JSON `null`.
    pub fn is_null(&self) -> bool {
        self.fields.is_none()
    }

    /// The string field `name` (the last key matching it case-insensitively, in key order);
    /// `""` when absent or `null`; Go's error when it holds another type.
    pub fn string(&self, name: &str) -> Result<String, GoDecodeError> {
        let Some(raw) = self.fields.as_ref().and_then(|m| {
            m.iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
                .next_back()
        }) else {
            return Ok(String::new());
        };
        if raw.get() == "null" {
            return Ok(String::new());
        }
        serde_json::from_str::<String>(raw.get()).map_err(|_| GoDecodeError {
            found: kind_of(raw),
            field: format!(
                "{}.{name}",
                self.go_type.rsplit('.').next().unwrap_or(self.go_type)
            ),
            go_type: "string",
        })
    }

    /// The string fields `names`, in that order, failing at the first that is not a string.
    pub fn strings(&self, names: &[&str]) -> Result<Vec<String>, GoDecodeError> {
        names.iter().map(|n| self.string(n)).collect()
    }
}

/// The `olm.package` property (opm's `property.Package`): the bundle's package and version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageProperty {
    /// `packageName`.
    pub package_name: String,
    /// `version`, as written (not checked as semver here).
    pub version: String,
    /// `release` (opm v1.62 and later), `""` when absent.
    pub release: String,
}

impl PackageProperty {
    /// Go's name of the struct the value decodes into.
    pub const GO_TYPE: &'static str = "property.Package";

    /// Decodes one `olm.package` value (package name, version, release, in that order).
    pub fn decode(raw: &RawValue) -> Result<PackageProperty, GoDecodeError> {
        let v = PropertyValue::decode(raw, Self::GO_TYPE)?;
        Ok(PackageProperty {
            package_name: v.string("packageName")?,
            version: v.string("version")?,
            release: v.string("release")?,
        })
    }
}
