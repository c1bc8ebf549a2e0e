//! opm's in-memory `model` of a package (`model.Package`, `model.Bundle`) as the conversion builds
//! it from API bundles (`api.ConvertAPIBundleToModelBundle`), reduced to what reaches the output.

use super::api_bundle::*;
use crate::catalog::model::{Icon, RelatedImage, property_type};
use crate::gocompat::marshal::{get_ci, write_str};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A property as (type, JSON value).
pub(super) type TypedValue = (String, String);

/// opm's `model.Package`, reduced to what reaches the output.
#[derive(Debug)]
pub(super) struct MPackage {
    pub(super) name: String,
    pub(super) default_channel: Option<String>,
    pub(super) icon: Option<Icon>,
    /// Channel name → bundle name → bundle.
    pub(super) channels: BTreeMap<String, BTreeMap<String, MBundle>>,
}

/// opm's `model.Bundle`.
#[derive(Debug, Clone)]
pub(super) struct MBundle {
    pub(super) name: String,
    pub(super) package: String,
    pub(super) image: String,
    pub(super) replaces: String,
    pub(super) skips: Vec<String>,
    pub(super) skip_range: String,
    /// (type, compact JSON value).
    pub(super) properties: Vec<(String, String)>,
    pub(super) related_images: Vec<RelatedImage>,
    pub(super) objects: Vec<String>,
    pub(super) csv_json: String,
}

/// `api.ConvertAPIBundleToModelBundle`.
pub(super) fn convert_api_bundle(b: ApiBundle) -> Result<MBundle, ConvertError> {
    let fail = |message: String| ConvertError::ConvertBundle {
        bundle: b.csv_name.clone(),
        message,
    };
    let properties = model_properties(&b).map_err(|e| fail(format!("convert properties: {e}")))?;
    let related_images = csv_related_images(&b.csv_json)
        .map_err(|e| fail(format!("get related iamges: unmarshal csv: {e}")))?;
    Ok(MBundle {
        name: b.csv_name,
        package: b.package_name,
        image: b.bundle_path,
        replaces: b.replaces,
        skips: b.skips,
        skip_range: b.skip_range,
        properties,
        related_images,
        objects: b.objects,
        csv_json: b.csv_json,
    })
}

/// `convertAPIBundleToModelProperties`: GVKs (provided and required) rebuilt and
/// deduplicated, `olm.package` dependencies turned into `olm.package.required`, other
/// dependency types dropped, an `olm.package` added if missing, one `olm.bundle.object` per
/// manifest; all sorted by type then value.
fn model_properties(b: &ApiBundle) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut provided: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut required: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut found_package = false;
    for (i, (t, v)) in b.properties.iter().enumerate() {
        match t.as_str() {
            property_type::GVK => {
                provided.insert(parse_gvk(v).map_err(|e| parse_error(i, t, &e))?);
            }
            property_type::PACKAGE => {
                found_package = true;
                out.push((t.clone(), v.clone()));
            }
            _ => out.push((t.clone(), v.clone())),
        }
    }
    for (i, (t, v)) in b.dependencies.iter().enumerate() {
        match t.as_str() {
            property_type::GVK => {
                required.insert(parse_gvk(v).map_err(|e| parse_error(i, t, &e))?);
            }
            property_type::PACKAGE => {
                let (name, version) = parse_package(v).map_err(|e| parse_error(i, t, &e))?;
                out.push((
                    property_type::PACKAGE_REQUIRED.to_string(),
                    json_object(&[("packageName", &name), ("versionRange", &version)]),
                ));
            }
            _ => {}
        }
    }
    if !found_package {
        out.push((
            property_type::PACKAGE.to_string(),
            json_object(&[("packageName", &b.package_name), ("version", &b.version)]),
        ));
    }
    for (g, v, k) in provided {
        out.push((
            property_type::GVK.to_string(),
            json_object(&[("group", &g), ("kind", &k), ("version", &v)]),
        ));
    }
    for (g, v, k) in required {
        out.push((
            property_type::GVK_REQUIRED.to_string(),
            json_object(&[("group", &g), ("kind", &k), ("version", &v)]),
        ));
    }
    for o in &b.objects {
        out.push((property_type::BUNDLE_OBJECT.to_string(), bundle_object(o)));
    }
    out.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    Ok(out)
}

pub(super) fn parse_error(i: usize, t: &str, e: &str) -> String {
    format!("parse property[{i}] of type {t:?}: {e}")
}

/// `{"data":"<base64>"}` of one manifest's exact text.
fn bundle_object(o: &str) -> String {
    use base64::Engine as _;
    format!(
        "{{\"data\":\"{}\"}}",
        base64::engine::general_purpose::STANDARD.encode(o.as_bytes())
    )
}

/// A compact JSON object of string fields in the given order (Go `json.Marshal` of a struct,
/// HTML escaping off).
pub(super) fn json_object(fields: &[(&str, &str)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(&mut out, k, false);
        out.push(':');
        write_str(&mut out, v, false);
    }
    out.push('}');
    out
}

/// A string field of a Go struct decoded from JSON: absent or `null` is `""`.
fn string_field(v: &Value, name: &str, go_type: &str) -> Result<String, String> {
    match get_ci(v, name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field {go_type}.{name} of type string",
            kind_of(other)
        )),
    }
}

fn decode_object(text: &str, go_type: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match v {
        Value::Object(_) | Value::Null => Ok(v),
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type {go_type}",
            kind_of(&other)
        )),
    }
}

/// A GVK value as (group, version, kind).
fn parse_gvk(text: &str) -> Result<(String, String, String), String> {
    let v = decode_object(text, "api.GroupVersionKind")?;
    Ok((
        string_field(&v, "group", "GroupVersionKind")?,
        string_field(&v, "version", "GroupVersionKind")?,
        string_field(&v, "kind", "GroupVersionKind")?,
    ))
}

/// An `olm.package` value as (packageName, version).
fn parse_package(text: &str) -> Result<(String, String), String> {
    let v = decode_object(text, "property.Package")?;
    Ok((
        string_field(&v, "packageName", "Package")?,
        string_field(&v, "version", "Package")?,
    ))
}

/// `getRelatedImages`: the CSV's `spec.relatedImages` as written
/// ([`crate::bundle::images::decode_related_images`]).
fn csv_related_images(csv_json: &str) -> Result<Vec<RelatedImage>, String> {
    Ok(crate::bundle::images::decode_related_images(csv_json)?
        .into_iter()
        .map(|r| RelatedImage {
            name: r.name,
            image: r.image,
        })
        .collect())
}
