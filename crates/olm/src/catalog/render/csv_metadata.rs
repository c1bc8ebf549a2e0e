//! The `olm.csv.metadata` property: opm's `property.CSVMetadata` built from a CSV.
//!
//! Why by hand: opm decodes the CSV JSON into operator-framework/api's typed CSV and marshals a
//! subset with Go's struct field order and `omitempty` rules (some nested types are not
//! alphabetical; `apiServiceDefinitions`, `crdDescriptions` and `provider` are structs and so
//! never omitted), with HTML escaping off except inside descriptor `value`s, which are raw JSON kept from the CSV.

use crate::gocompat::marshal::{get_ci, marshal, write_str};
use serde_json::Value;

/// A field of the CSV had a type the typed CSV cannot hold (opm fails the migration on it).
#[derive(Debug, thiserror::Error)]
#[error("cannot read the CSV for olm.csv.metadata: {field}: expected {expected}")]
pub struct CsvTypeError {
    /// JSON path of the field.
    pub field: String,
    /// What opm's Go type expects.
    pub expected: &'static str,
}

struct W {
    out: String,
    first: bool,
}

impl W {
    fn open() -> W {
        W {
            out: String::from("{"),
            first: true,
        }
    }
    fn key(&mut self, k: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        write_str(&mut self.out, k, false);
        self.out.push(':');
    }
    fn close(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

fn err(field: &str, expected: &'static str) -> CsvTypeError {
    CsvTypeError {
        field: field.to_string(),
        expected,
    }
}

fn string_at(v: Option<&Value>, field: &str) -> Result<String, CsvTypeError> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(err(field, "a string")),
    }
}

fn array_at<'a>(v: Option<&'a Value>, field: &str) -> Result<&'a [Value], CsvTypeError> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(err(field, "a list")),
    }
}

fn object_at<'a>(v: Option<&'a Value>, field: &str) -> Result<Option<&'a Value>, CsvTypeError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(o @ Value::Object(_)) => Ok(Some(o)),
        Some(_) => Err(err(field, "an object")),
    }
}

/// A `map[string]string`, keys sorted as Go writes maps; `None` when empty (omitempty).
fn string_map(v: Option<&Value>, field: &str) -> Result<Option<String>, CsvTypeError> {
    let Some(obj) = object_at(v, field)? else {
        return Ok(None);
    };
    let map = obj
        .as_object()
        .map(|m| m.iter().collect::<Vec<_>>())
        .unwrap_or_default();
    if map.is_empty() {
        return Ok(None);
    }
    let mut entries = map;
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut w = W::open();
    for (k, val) in entries {
        let s = string_at(Some(val), &format!("{field}.{k}"))?;
        w.key(k);
        write_str(&mut w.out, &s, false);
    }
    Ok(Some(w.close()))
}

fn put_str_omitempty(
    w: &mut W,
    key: &str,
    v: Option<&Value>,
    field: &str,
) -> Result<(), CsvTypeError> {
    let s = string_at(v, field)?;
    if !s.is_empty() {
        w.key(key);
        write_str(&mut w.out, &s, false);
    }
    Ok(())
}

fn put_str(w: &mut W, key: &str, v: Option<&Value>, field: &str) -> Result<(), CsvTypeError> {
    let s = string_at(v, field)?;
    w.key(key);
    write_str(&mut w.out, &s, false);
    Ok(())
}

fn string_list(v: Option<&Value>, field: &str) -> Result<Option<String>, CsvTypeError> {
    let items = array_at(v, field)?;
    if items.is_empty() {
        return Ok(None);
    }
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let s = string_at(Some(item), field)?;
        write_str(&mut out, &s, false);
    }
    out.push(']');
    Ok(Some(out))
}

/// A list of structs, each written by `one`; `None` when empty (omitempty).
fn struct_list(
    v: Option<&Value>,
    field: &str,
    one: impl Fn(&Value, &str) -> Result<String, CsvTypeError>,
) -> Result<Option<String>, CsvTypeError> {
    let items = array_at(v, field)?;
    if items.is_empty() {
        return Ok(None);
    }
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if item.is_null() {
            // A null element decodes to the zero struct.
            out.push_str(&one(&Value::Object(Default::default()), field)?);
        } else if item.is_object() {
            out.push_str(&one(item, field)?);
        } else {
            return Err(err(field, "a list of objects"));
        }
    }
    out.push(']');
    Ok(Some(out))
}

fn descriptor(d: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str(&mut w, "path", get_ci(d, "path"), field)?;
    put_str_omitempty(&mut w, "displayName", get_ci(d, "displayName"), field)?;
    put_str_omitempty(&mut w, "description", get_ci(d, "description"), field)?;
    if let Some(list) = string_list(get_ci(d, "x-descriptors"), field)? {
        w.key("x-descriptors");
        w.out.push_str(&list);
    }
    if let Some(raw) = get_ci(d, "value") {
        // json.RawMessage: kept as the CSV's own (json.Marshal) bytes; present even when null.
        w.key("value");
        marshal(&mut w.out, raw, true);
    }
    Ok(w.close())
}

fn resource_ref(r: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str(&mut w, "name", get_ci(r, "name"), field)?;
    put_str(&mut w, "kind", get_ci(r, "kind"), field)?;
    put_str(&mut w, "version", get_ci(r, "version"), field)?;
    Ok(w.close())
}

fn descriptor_lists(w: &mut W, d: &Value, field: &str) -> Result<(), CsvTypeError> {
    for (key, json_key) in [
        ("resources", "resources"),
        ("statusDescriptors", "statusDescriptors"),
        ("specDescriptors", "specDescriptors"),
        ("actionDescriptors", "actionDescriptors"),
    ] {
        let list = if key == "resources" {
            struct_list(get_ci(d, json_key), field, resource_ref)?
        } else {
            struct_list(get_ci(d, json_key), field, descriptor)?
        };
        if let Some(list) = list {
            w.key(key);
            w.out.push_str(&list);
        }
    }
    Ok(())
}

fn crd_description(d: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str(&mut w, "name", get_ci(d, "name"), field)?;
    put_str(&mut w, "version", get_ci(d, "version"), field)?;
    put_str(&mut w, "kind", get_ci(d, "kind"), field)?;
    put_str_omitempty(&mut w, "displayName", get_ci(d, "displayName"), field)?;
    put_str_omitempty(&mut w, "description", get_ci(d, "description"), field)?;
    descriptor_lists(&mut w, d, field)?;
    Ok(w.close())
}

fn api_service_description(d: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str(&mut w, "name", get_ci(d, "name"), field)?;
    put_str(&mut w, "group", get_ci(d, "group"), field)?;
    put_str(&mut w, "version", get_ci(d, "version"), field)?;
    put_str(&mut w, "kind", get_ci(d, "kind"), field)?;
    put_str_omitempty(&mut w, "deploymentName", get_ci(d, "deploymentName"), field)?;
    match get_ci(d, "containerPort") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) => {
            let port = n
                .as_i64()
                .filter(|p| i32::try_from(*p).is_ok())
                .ok_or_else(|| err(field, "an int32 containerPort"))?;
            if port != 0 {
                w.key("containerPort");
                w.out.push_str(&port.to_string());
            }
        }
        Some(_) => return Err(err(field, "an int32 containerPort")),
    }
    put_str_omitempty(&mut w, "displayName", get_ci(d, "displayName"), field)?;
    put_str_omitempty(&mut w, "description", get_ci(d, "description"), field)?;
    descriptor_lists(&mut w, d, field)?;
    Ok(w.close())
}

/// `{owned, required}` (both omitempty), always written itself (a struct field).
fn definitions(
    v: Option<&Value>,
    field: &str,
    one: fn(&Value, &str) -> Result<String, CsvTypeError>,
) -> Result<String, CsvTypeError> {
    let obj = object_at(v, field)?;
    let mut w = W::open();
    if let Some(obj) = obj {
        for key in ["owned", "required"] {
            if let Some(list) = struct_list(get_ci(obj, key), field, one)? {
                w.key(key);
                w.out.push_str(&list);
            }
        }
    }
    Ok(w.close())
}

fn app_link(l: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str_omitempty(&mut w, "name", get_ci(l, "name"), field)?;
    put_str_omitempty(&mut w, "url", get_ci(l, "url"), field)?;
    Ok(w.close())
}

fn maintainer(m: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str_omitempty(&mut w, "name", get_ci(m, "name"), field)?;
    put_str_omitempty(&mut w, "email", get_ci(m, "email"), field)?;
    Ok(w.close())
}

fn install_mode(m: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str(&mut w, "type", get_ci(m, "type"), field)?;
    let supported = match get_ci(m, "supported") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(err(field, "a boolean supported")),
    };
    w.key("supported");
    w.out.push_str(if supported { "true" } else { "false" });
    Ok(w.close())
}

fn gvk(g: &Value, field: &str) -> Result<String, CsvTypeError> {
    let mut w = W::open();
    put_str(&mut w, "group", get_ci(g, "group"), field)?;
    put_str(&mut w, "version", get_ci(g, "version"), field)?;
    put_str(&mut w, "kind", get_ci(g, "kind"), field)?;
    Ok(w.close())
}

/// The compact JSON value of `olm.csv.metadata` for `csv` (the CSV object as JSON).
pub fn csv_metadata_json(csv: &Value) -> Result<String, CsvTypeError> {
    let metadata = object_at(get_ci(csv, "metadata"), "metadata")?;
    let spec = object_at(get_ci(csv, "spec"), "spec")?;
    let empty = Value::Object(Default::default());
    let metadata = metadata.unwrap_or(&empty);
    let spec = spec.unwrap_or(&empty);
    let mut w = W::open();
    if let Some(m) = string_map(get_ci(metadata, "annotations"), "metadata.annotations")? {
        w.key("annotations");
        w.out.push_str(&m);
    }
    w.key("apiServiceDefinitions");
    let api = definitions(
        get_ci(spec, "apiservicedefinitions"),
        "spec.apiservicedefinitions",
        api_service_description,
    )?;
    w.out.push_str(&api);
    let crds = definitions(
        get_ci(spec, "customresourcedefinitions"),
        "spec.customresourcedefinitions",
        crd_description,
    )?;
    // A struct field: `omitempty` never drops it.
    w.key("crdDescriptions");
    w.out.push_str(&crds);
    put_str_omitempty(
        &mut w,
        "description",
        get_ci(spec, "description"),
        "spec.description",
    )?;
    put_str_omitempty(
        &mut w,
        "displayName",
        get_ci(spec, "displayName"),
        "spec.displayName",
    )?;
    if let Some(list) = struct_list(
        get_ci(spec, "installModes"),
        "spec.installModes",
        install_mode,
    )? {
        w.key("installModes");
        w.out.push_str(&list);
    }
    if let Some(list) = string_list(get_ci(spec, "keywords"), "spec.keywords")? {
        w.key("keywords");
        w.out.push_str(&list);
    }
    if let Some(m) = string_map(get_ci(metadata, "labels"), "metadata.labels")? {
        w.key("labels");
        w.out.push_str(&m);
    }
    if let Some(list) = struct_list(get_ci(spec, "links"), "spec.links", app_link)? {
        w.key("links");
        w.out.push_str(&list);
    }
    if let Some(list) = struct_list(get_ci(spec, "maintainers"), "spec.maintainers", maintainer)? {
        w.key("maintainers");
        w.out.push_str(&list);
    }
    put_str_omitempty(
        &mut w,
        "maturity",
        get_ci(spec, "maturity"),
        "spec.maturity",
    )?;
    put_str_omitempty(
        &mut w,
        "minKubeVersion",
        get_ci(spec, "minKubeVersion"),
        "spec.minKubeVersion",
    )?;
    if let Some(list) = struct_list(get_ci(spec, "nativeAPIs"), "spec.nativeAPIs", gvk)? {
        w.key("nativeAPIs");
        w.out.push_str(&list);
    }
    w.key("provider");
    let provider = match object_at(get_ci(spec, "provider"), "spec.provider")? {
        Some(p) => app_link(p, "spec.provider")?,
        None => "{}".to_string(),
    };
    w.out.push_str(&provider);
    Ok(w.close())
}
