//! Property values checked as opm's `property.Parse` decodes them (`olm.package`, `olm.gvk`,
//! `olm.csv.metadata` and the rest), reporting opm's own messages.

use super::*;
pub(super) use crate::gocompat::json::kind_name as kind;

/// A type-checked `olm.csv.metadata` value.
pub(super) struct CsvMetadata<'a> {
    /// Its members, unparsed.
    pub(super) members: RawObject<'a>,
    /// Members the type check already parsed (exact key), so the checks do not parse them again.
    pub(super) parsed: BTreeMap<&'static str, J>,
    /// `annotations["alm-examples"]` when it is a string (read during the type check).
    pub(super) alm_examples: Option<String>,
}

impl CsvMetadata<'_> {
    /// The member `key` (exact case) as a tree.
    pub(super) fn member(&self, key: &'static str) -> Option<std::borrow::Cow<'_, J>> {
        match self.parsed.get(key) {
            Some(v) => Some(std::borrow::Cow::Borrowed(v)),
            None => parse_member(&self.members, key).map(std::borrow::Cow::Owned),
        }
    }
}

/// A JSON object's members, unparsed; sorted and last-one-wins like `serde_json::Map`.
pub(super) type RawObject<'a> = BTreeMap<String, &'a RawValue>;

/// Parses a raw object member into a tree (`None` when absent or not JSON).
pub(super) fn parse_member(obj: &RawObject, key: &str) -> Option<J> {
    obj.get(key)
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
}

/// Go's JSON kind of a raw value, from its first byte (the text is valid JSON).
pub(super) fn raw_kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "bool",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}

pub(super) fn str_field(obj: &serde_json::Map<String, J>, name: &str) -> Result<String, String> {
    let mut out = String::new();
    for (k, v) in obj {
        if k.eq_ignore_ascii_case(name) {
            match v {
                J::String(s) => out.clone_from(s),
                J::Null => {}
                other => {
                    return Err(format!(
                        "json: cannot unmarshal {} into Go struct field .{name} of type string",
                        kind(other)
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// Type-checks a property value the way opm's `property.Parse` decodes it.
pub(super) fn check_property(type_: &str, value: &J) -> Result<(), String> {
    let strings = |fields: &[&str]| -> Result<(), String> {
        match value {
            J::Null => Ok(()),
            J::Object(m) => fields.iter().try_for_each(|f| str_field(m, f).map(|_| ())),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type property.{}",
                kind(other),
                type_
            )),
        }
    };
    match type_ {
        property_type::PACKAGE => strings(&["packageName", "version", "release"]),
        property_type::PACKAGE_REQUIRED => strings(&["packageName", "versionRange"]),
        property_type::GVK | property_type::GVK_REQUIRED => strings(&["group", "kind", "version"]),
        property_type::BUNDLE_OBJECT => strings(&[]),
        property_type::CHANNEL => {
            strings(&["channelName"])?;
            if let J::Object(m) = value {
                for (k, v) in m {
                    if k.eq_ignore_ascii_case("priority") && !(v.is_i64() || v.is_null()) {
                        return Err(format!(
                            "json: cannot unmarshal {} into Go struct field Channel.priority of type int",
                            kind(v)
                        ));
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The typed fields of opm's `property.CSVMetadata`, checked on the raw members (in key order,
/// the first wrong one reported); only the members with nested typed fields are parsed.
pub(super) fn csv_metadata_types(
    m: &RawObject,
    parsed: &mut BTreeMap<&'static str, J>,
    alm: &mut Option<String>,
) -> Result<(), MetadataError> {
    let err = |field: &str, kind: &str, ty: &str| {
        Err(MetadataError::Type(format!(
            "json: cannot unmarshal {kind} into Go struct field CSVMetadata.{field} of type {ty}"
        )))
    };
    for (k, raw) in m {
        let raw_kind = raw_kind(raw);
        if raw_kind == "null" {
            continue;
        }
        let lower = k.to_ascii_lowercase();
        match lower.as_str() {
            "description" | "displayname" | "maturity" | "minkubeversion"
                if raw_kind != "string" =>
            {
                return err(k, raw_kind, "string");
            }
            "provider" | "apiservicedefinitions" | "crddescriptions" if raw_kind != "object" => {
                return err(k, raw_kind, "struct");
            }
            "annotations" | "labels" => {
                // Read in one pass: the map can hold large texts (alm-examples, descriptions).
                match serde_json::from_str::<shapes::StringMap>(raw.get())
                    .map_err(MetadataError::Json)?
                {
                    shapes::StringMap::Object { bad, alm_examples } => {
                        if let Some(bad) = bad {
                            return err(k, bad, "string");
                        }
                        // The checks read alm-examples (exact key).
                        if k == "annotations" {
                            *alm = alm_examples;
                        }
                    }
                    shapes::StringMap::Other(kind) => return err(k, kind, "map[string]string"),
                }
            }
            "keywords" | "installmodes" | "links" | "maintainers" | "nativeapis" => {
                let v: J = serde_json::from_str(raw.get()).map_err(MetadataError::Json)?;
                csv_metadata_nested(k, &lower, &v).map_err(MetadataError::Type)?;
                // The checks read this one (exact key): keep the tree.
                if k == "installModes" {
                    parsed.insert("installModes", v);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Why an `olm.csv.metadata` value was refused.
pub(super) enum MetadataError {
    /// Not JSON that serde_json can hold (only a number out of `f64` range can get here).
    Json(serde_json::Error),
    /// A member of the wrong type, worded as Go's `UnmarshalTypeError`.
    Type(String),
}

/// opm's refusal of property `i` whose value has the wrong shape for its type (`property.Parse`):
/// one wording for every property type.
pub(super) fn shape_refused(b: &Bundle, i: usize, type_: &str, e: &str) -> Diagnostic {
    at(
        Rule::CatalogPropertyInvalid,
        &b.origin,
        format!(
            "parse properties for bundle {:?}: parse property[{i}] of type {type_:?}: {e}: fix the value's shape",
            b.name
        ),
    )
}

/// The `olm.csv.metadata` property at `i` as a raw object (`None` for `null`), reporting what
/// opm's `property.Parse` would refuse with the same messages as the other property types.
pub(super) fn csv_metadata_property<'a>(
    b: &Bundle,
    i: usize,
    p: &'a Property,
    out: &mut Vec<Diagnostic>,
) -> Result<Option<CsvMetadata<'a>>, ()> {
    let not_json = |e: serde_json::Error, out: &mut Vec<Diagnostic>| {
        out.push(at(
            Rule::CatalogPropertyInvalid,
            &b.origin,
            format!(
                "parse properties for bundle {:?}: property[{i}] value is not valid json: {e}",
                b.name
            ),
        ));
    };
    let wrong_type = |e: String, out: &mut Vec<Diagnostic>| {
        out.push(shape_refused(b, i, &p.type_, &e));
    };
    let raw: &RawValue = &p.value;
    match raw_kind(raw) {
        "null" => return Ok(None),
        "object" => {}
        other => {
            wrong_type(
                format!(
                    "json: cannot unmarshal {other} into Go value of type property.CSVMetadata"
                ),
                out,
            );
            return Err(());
        }
    }
    let m: RawObject = match serde_json::from_str(raw.get()) {
        Ok(m) => m,
        Err(e) => {
            not_json(e, out);
            return Err(());
        }
    };
    let mut parsed = BTreeMap::new();
    let mut alm_examples = None;
    match csv_metadata_types(&m, &mut parsed, &mut alm_examples) {
        Ok(()) => Ok(Some(CsvMetadata {
            members: m,
            parsed,
            alm_examples,
        })),
        Err(MetadataError::Json(e)) => {
            not_json(e, out);
            Err(())
        }
        Err(MetadataError::Type(e)) => {
            wrong_type(e, out);
            Err(())
        }
    }
}

/// The members of `property.CSVMetadata` with typed elements (maps, lists, lists of structs).
pub(super) fn csv_metadata_nested(k: &str, lower: &str, v: &J) -> Result<(), String> {
    let err = |field: &str, v: &J, ty: &str| {
        Err(format!(
            "json: cannot unmarshal {} into Go struct field CSVMetadata.{field} of type {ty}",
            kind(v)
        ))
    };
    match lower {
        "annotations" | "labels" => match v {
            J::Object(map) => {
                if let Some(bad) = map.values().find(|x| !x.is_string() && !x.is_null()) {
                    return err(k, bad, "string");
                }
            }
            _ => return err(k, v, "map[string]string"),
        },
        "keywords" => match v {
            J::Array(items) => {
                if let Some(bad) = items.iter().find(|x| !x.is_string() && !x.is_null()) {
                    return err(k, bad, "string");
                }
            }
            _ => return err(k, v, "[]string"),
        },
        "installmodes" | "links" | "maintainers" | "nativeapis" => match v {
            J::Array(items) => {
                for item in items {
                    match item {
                        J::Object(o) => {
                            for (ik, iv) in o {
                                let bad = match ik.to_ascii_lowercase().as_str() {
                                    "supported" => !(iv.is_boolean() || iv.is_null()),
                                    _ => !(iv.is_string() || iv.is_null()),
                                };
                                if bad {
                                    return err(&format!("{k}.{ik}"), iv, "string");
                                }
                            }
                        }
                        J::Null => {}
                        other => return err(k, other, "struct"),
                    }
                }
            }
            _ => return err(k, v, "[]struct"),
        },
        _ => {}
    }
    Ok(())
}
