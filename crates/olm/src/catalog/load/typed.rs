//! Fills the model structs from a decoded blob the way Go's `encoding/json` fills opm's structs:
//! field names match case-insensitively (keys are visited in sorted order, the last one wins),
//! unknown fields are ignored, `null` leaves a field at its zero value, and a value of the wrong
//! type is an error worded as Go words it (`json: cannot unmarshal number into Go struct field
//! Bundle.image of type string`). Property values are kept as opm keeps them: the canonical text
//! of the re-encoded blob ([`crate::gocompat::decoded`]).

use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, Deprecation, DeprecationEntry, Icon, Origin, Package,
    PackageScopedReference, Property, RelatedImage,
};
use crate::gocompat::decoded as json;
use crate::yaml::{Node, ScalarKind, Value};
use serde_json::value::RawValue;

/// Collects the type errors of one blob.
pub struct Dec {
    /// Go struct name of the blob (`Bundle`, `Channel`, …), the start of every error path.
    ty: &'static str,
    /// Errors in the order Go would meet them.
    pub errors: Vec<String>,
}

/// Go's name for the JSON type of a node, as `UnmarshalTypeError.Value` prints it.
pub fn go_kind(node: &Node) -> String {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => "null".into(),
        Value::Scalar(_, ScalarKind::Bool(_)) => "bool".into(),
        Value::Scalar(_, ScalarKind::Int | ScalarKind::Float) => "number".into(),
        Value::Scalar(_, ScalarKind::Str) => "string".into(),
        Value::Seq(_) => "array".into(),
        Value::Map(_) => "object".into(),
    }
}

/// A key lower-cased for case-insensitive field matching, without allocating when it already is.
fn fold(k: &str) -> std::borrow::Cow<'_, str> {
    if k.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(k.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(k)
    }
}

/// Entries of a mapping sorted by key (the order of opm's re-encoded blob).
pub fn sorted_entries(node: &Node) -> Vec<(&str, &Node)> {
    let mut v: Vec<(&str, &Node)> = match &node.value {
        Value::Map(entries) => entries.iter().map(|(k, v)| (k.text.as_str(), v)).collect(),
        _ => Vec::new(),
    };
    if !v.is_sorted_by(|a, b| a.0 <= b.0) {
        v.sort_by(|a, b| a.0.cmp(b.0));
    }
    v
}

impl Dec {
    /// A decoder for the Go struct named `ty`.
    pub fn new(ty: &'static str) -> Dec {
        Dec {
            ty,
            errors: Vec::new(),
        }
    }

    fn type_error(&mut self, node: &Node, path: &str, go_type: &str) {
        self.errors.push(format!(
            "json: cannot unmarshal {} into Go struct field {}.{path} of type {go_type}",
            go_kind(node),
            self.ty
        ));
    }

    /// A Go `string` field.
    pub fn string(&mut self, node: &Node, path: &str, slot: &mut String) {
        match &node.value {
            Value::Scalar(_, ScalarKind::Null) => {}
            Value::Scalar(text, ScalarKind::Str) => text.as_str().clone_into(slot),
            _ => self.type_error(node, path, "string"),
        }
    }

    /// A Go `[]string` field; `None` for `null`.
    pub fn strings(&mut self, node: &Node, path: &str) -> Option<Vec<String>> {
        match &node.value {
            Value::Scalar(_, ScalarKind::Null) => None,
            Value::Seq(items) => Some(
                items
                    .iter()
                    .map(|item| {
                        let mut s = String::new();
                        self.string(item, path, &mut s);
                        s
                    })
                    .collect(),
            ),
            _ => {
                self.type_error(node, path, "[]string");
                None
            }
        }
    }

    /// Whether a struct-typed value is an object; reports the error otherwise (`null` is fine).
    fn object(&mut self, node: &Node, path: &str, go_type: &str) -> bool {
        match &node.value {
            Value::Map(_) => true,
            Value::Scalar(_, ScalarKind::Null) => false,
            _ => {
                self.type_error(node, path, go_type);
                false
            }
        }
    }

    /// The elements of a Go slice field (`None` for null or a type error).
    fn slice<'n>(&mut self, node: &'n Node, path: &str, go_type: &str) -> Option<&'n [Node]> {
        match &node.value {
            Value::Seq(items) => Some(items),
            Value::Scalar(_, ScalarKind::Null) => None,
            _ => {
                self.type_error(node, path, go_type);
                None
            }
        }
    }

    /// `[]property.Property`.
    pub fn properties(&mut self, node: &Node, path: &str) -> Vec<Property> {
        let Some(items) = self.slice(node, path, "[]property.Property") else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let mut type_ = String::new();
            let mut value: Option<Box<RawValue>> = None;
            if self.object(item, path, "property.Property") {
                for (k, v) in sorted_entries(item) {
                    if k.eq_ignore_ascii_case("type") {
                        self.string(v, &format!("{path}.type"), &mut type_);
                    } else if k.eq_ignore_ascii_case("value") {
                        match json::canonical_raw(v) {
                            Ok(raw) => value = Some(raw),
                            Err(e) => self.errors.push(e.0),
                        }
                    }
                }
            }
            // No `value` key: Go leaves the `json.RawMessage` nil, written as `null`.
            let value = value.unwrap_or_else(|| RawValue::NULL.to_owned());
            out.push(Property { type_, value });
        }
        out
    }
}

fn origin(file: &str, node: &Node) -> Origin {
    Origin {
        file: file.to_string(),
        line: node.line,
        col: node.col,
    }
}

/// `declcfg.Package`.
pub fn package(node: &Node, file: &str) -> Result<Package, Vec<String>> {
    let mut d = Dec::new("Package");
    let mut p = Package {
        schema: String::new(),
        name: String::new(),
        default_channel: String::new(),
        icon: None,
        description: String::new(),
        properties: Vec::new(),
        origin: origin(file, node),
    };
    for (k, v) in sorted_entries(node) {
        match fold(k).as_ref() {
            "schema" => d.string(v, "schema", &mut p.schema),
            "name" => d.string(v, "name", &mut p.name),
            "defaultchannel" => d.string(v, "defaultChannel", &mut p.default_channel),
            "description" => d.string(v, "description", &mut p.description),
            "properties" => p.properties = d.properties(v, "properties"),
            "icon" => {
                if d.object(v, "icon", "declcfg.Icon") {
                    let mut icon = p.icon.take().unwrap_or(Icon {
                        base64data: None,
                        mediatype: String::new(),
                    });
                    for (k, v) in sorted_entries(v) {
                        match fold(k).as_ref() {
                            "base64data" => icon.base64data = bytes(&mut d, v, "icon.base64data"),
                            "mediatype" => d.string(v, "icon.mediatype", &mut icon.mediatype),
                            _ => {}
                        }
                    }
                    p.icon = Some(icon);
                } else if v.is_null() {
                    p.icon = None;
                }
            }
            _ => {}
        }
    }
    if d.errors.is_empty() {
        Ok(p)
    } else {
        Err(d.errors)
    }
}

/// A Go `[]byte` field: standard base64 (line breaks ignored), `None` for null.
fn bytes(d: &mut Dec, node: &Node, path: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => None,
        Value::Scalar(text, ScalarKind::Str) => {
            let cleaned: String;
            let input = if text.contains(['\r', '\n']) {
                cleaned = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
                cleaned.as_str()
            } else {
                text.as_str()
            };
            match base64::engine::general_purpose::STANDARD.decode(input) {
                Ok(b) => Some(b),
                Err(e) => {
                    d.errors.push(format!("illegal base64 data in {path}: {e}"));
                    None
                }
            }
        }
        _ => {
            d.type_error(node, path, "[]uint8");
            None
        }
    }
}

/// `declcfg.Channel`.
pub fn channel(node: &Node, file: &str) -> Result<Channel, Vec<String>> {
    let mut d = Dec::new("Channel");
    let mut c = Channel {
        schema: String::new(),
        name: String::new(),
        package: String::new(),
        entries: None,
        properties: Vec::new(),
        origin: origin(file, node),
    };
    for (k, v) in sorted_entries(node) {
        match fold(k).as_ref() {
            "schema" => d.string(v, "schema", &mut c.schema),
            "name" => d.string(v, "name", &mut c.name),
            "package" => d.string(v, "package", &mut c.package),
            "properties" => c.properties = d.properties(v, "properties"),
            "entries" => {
                c.entries = d
                    .slice(v, "entries", "[]declcfg.ChannelEntry")
                    .map(|items| items.iter().map(|e| entry(&mut d, e, file)).collect());
            }
            _ => {}
        }
    }
    if d.errors.is_empty() {
        Ok(c)
    } else {
        Err(d.errors)
    }
}

fn entry(d: &mut Dec, node: &Node, file: &str) -> ChannelEntry {
    let mut e = ChannelEntry {
        origin: origin(file, node),
        ..ChannelEntry::default()
    };
    if !d.object(node, "entries", "declcfg.ChannelEntry") {
        return e;
    }
    for (k, v) in sorted_entries(node) {
        match fold(k).as_ref() {
            "name" => d.string(v, "entries.name", &mut e.name),
            "replaces" => d.string(v, "entries.replaces", &mut e.replaces),
            "skiprange" => d.string(v, "entries.skipRange", &mut e.skip_range),
            "skips" => e.skips = d.strings(v, "entries.skips").unwrap_or_default(),
            _ => {}
        }
    }
    e
}

/// `declcfg.Bundle` (objects are filled by the loader afterwards).
pub fn bundle(node: &Node, file: &str) -> Result<Bundle, Vec<String>> {
    let mut d = Dec::new("Bundle");
    let mut b = Bundle {
        schema: String::new(),
        name: String::new(),
        package: String::new(),
        image: String::new(),
        properties: Vec::new(),
        related_images: Vec::new(),
        objects: Vec::new(),
        csv_json: None,
        origin: origin(file, node),
    };
    for (k, v) in sorted_entries(node) {
        match fold(k).as_ref() {
            "schema" => d.string(v, "schema", &mut b.schema),
            "name" => d.string(v, "name", &mut b.name),
            "package" => d.string(v, "package", &mut b.package),
            "image" => d.string(v, "image", &mut b.image),
            "properties" => b.properties = d.properties(v, "properties"),
            "relatedimages" => {
                b.related_images = d
                    .slice(v, "relatedImages", "[]declcfg.RelatedImage")
                    .map(|items| {
                        items
                            .iter()
                            .map(|item| {
                                let mut r = RelatedImage {
                                    name: String::new(),
                                    image: String::new(),
                                };
                                if d.object(item, "relatedImages", "declcfg.RelatedImage") {
                                    for (k, v) in sorted_entries(item) {
                                        match fold(k).as_ref() {
                                            "name" => {
                                                d.string(v, "relatedImages.name", &mut r.name)
                                            }
                                            "image" => {
                                                d.string(v, "relatedImages.image", &mut r.image)
                                            }
                                            _ => {}
                                        }
                                    }
                                }
                                r
                            })
                            .collect()
                    })
                    .unwrap_or_default();
            }
            _ => {}
        }
    }
    if d.errors.is_empty() {
        Ok(b)
    } else {
        Err(d.errors)
    }
}

/// `declcfg.Deprecation`.
pub fn deprecation(node: &Node, file: &str) -> Result<Deprecation, Vec<String>> {
    let mut d = Dec::new("Deprecation");
    let mut out = Deprecation {
        schema: String::new(),
        package: String::new(),
        entries: Vec::new(),
        origin: origin(file, node),
    };
    for (k, v) in sorted_entries(node) {
        match fold(k).as_ref() {
            "schema" => d.string(v, "schema", &mut out.schema),
            "package" => d.string(v, "package", &mut out.package),
            "entries" => {
                out.entries = d
                    .slice(v, "entries", "[]declcfg.DeprecationEntry")
                    .map(|items| {
                        items
                            .iter()
                            .map(|item| deprecation_entry(&mut d, item))
                            .collect()
                    })
                    .unwrap_or_default();
            }
            _ => {}
        }
    }
    if d.errors.is_empty() {
        Ok(out)
    } else {
        Err(d.errors)
    }
}

fn deprecation_entry(d: &mut Dec, node: &Node) -> DeprecationEntry {
    let mut e = DeprecationEntry {
        reference: PackageScopedReference {
            schema: String::new(),
            name: String::new(),
        },
        message: String::new(),
    };
    if !d.object(node, "entries", "declcfg.DeprecationEntry") {
        return e;
    }
    for (k, v) in sorted_entries(node) {
        match fold(k).as_ref() {
            "message" => d.string(v, "entries.message", &mut e.message),
            "reference" if d.object(v, "entries.reference", "declcfg.PackageScopedReference") => {
                for (k, v) in sorted_entries(v) {
                    match fold(k).as_ref() {
                        "schema" => {
                            d.string(v, "entries.reference.schema", &mut e.reference.schema)
                        }
                        "name" => d.string(v, "entries.reference.name", &mut e.reference.name),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_stream;

    fn node(yaml: &str) -> Node {
        parse_stream(yaml).expect("yaml").remove(0).root
    }

    #[test]
    fn keys_match_case_insensitively_and_values_are_canonical() {
        let b = bundle(
            &node("Schema: olm.bundle\nNAME: a.v1\nImage: x\nproperties:\n- Type: olm.package\n  value: {version: 1.0.0, packageName: a, n: 1.0}\n"),
            "f.yaml",
        )
        .expect("bundle");
        assert_eq!(b.name, "a.v1");
        assert_eq!(b.image, "x");
        assert_eq!(b.properties[0].type_, "olm.package");
        assert_eq!(
            b.properties[0].value.get(),
            r#"{"n":1,"packageName":"a","version":"1.0.0"}"#
        );
        assert_eq!(b.origin.line, 1);
    }

    #[test]
    fn wrong_types_are_go_errors() {
        let err = bundle(&node("schema: olm.bundle\nimage: 3\n"), "f").expect_err("type");
        assert_eq!(
            err,
            ["json: cannot unmarshal number into Go struct field Bundle.image of type string"]
        );
        let err = channel(
            &node("schema: olm.channel\nentries:\n- name: a\n  skips: [1]\n"),
            "f",
        )
        .expect_err("type");
        assert_eq!(
            err,
            [
                "json: cannot unmarshal number into Go struct field Channel.entries.skips of type string"
            ]
        );
    }

    #[test]
    fn null_entries_and_icon() {
        let c = channel(&node("schema: olm.channel\nname: s\n"), "f").expect("channel");
        assert!(c.entries.is_none());
        let p = package(
            &node("schema: olm.package\nname: p\nicon: {base64data: aGk=, mediatype: image/png}\n"),
            "f",
        )
        .expect("package");
        assert_eq!(
            p.icon.and_then(|i| i.base64data).as_deref(),
            Some(&b"hi"[..])
        );
    }
}
