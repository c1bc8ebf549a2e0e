//! A bundle folder (or unpacked bundle image) → the `olm.bundle` blob `opm render` writes.
//!
//! This follows operator-registry's `bundleParser.Parse`, `derivedProperties`,
//! `ObjectsAndPropertiesFromBundle` and `getRelatedImages` (CATALOG.md D.3) rather than olmpack's
//! validating loader, because render must read a bundle exactly as opm does: only the first YAML
//! document of each manifest (split as Kubernetes' YAML reader splits it), only the first CSV,
//! undecodable files skipped, and every metadata file tried as annotations, dependencies and
//! properties whatever its name.

use crate::catalog::model::{self, Property, RelatedImage, SCHEMA_BUNDLE, property_type};
use crate::gocompat::marshal::{get_ci, marshal_string};
use crate::yaml;
use base64::Engine as _;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

/// The files of a bundle: the top-level regular files of `manifests/` and of `metadata/`, each
/// list sorted by name. Filled from a folder ([`BundleFiles::read_dir`]) or from an image.
#[derive(Debug, Clone, Default)]
pub struct BundleFiles {
    /// Where the bundle came from, for messages.
    pub source: String,
    /// `(file name, content)` of `manifests/`.
    pub manifests: Vec<(String, Vec<u8>)>,
    /// `(file name, content)` of `metadata/`.
    pub metadata: Vec<(String, Vec<u8>)>,
}

/// Why a bundle could not be rendered. Messages follow opm's where opm has one.
#[derive(Debug, thiserror::Error)]
pub enum BundleRenderError {
    /// A folder or file could not be read.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
    /// No manifest decoded to an object.
    #[error("{0}: no bundle objects found in manifests/")]
    NoObjects(String),
    /// No ClusterServiceVersion among the manifests.
    #[error("{0}: no csv in bundle (only the first YAML document of each manifest file is read)")]
    NoCsv(String),
    /// No metadata file decoded to annotations.
    #[error("{0}: Could not find annotations file in metadata/")]
    NoAnnotations(String),
    /// A CRD the CSV owns is not among the manifests.
    #[error(
        "{source_name}: error checking provided apis in bundle {bundle}: couldn't find {missing} in bundle"
    )]
    MissingOwnedApi {
        /// The bundle source.
        source_name: String,
        /// The CSV name.
        bundle: String,
        /// `group/version kind (plural)`.
        missing: String,
    },
    /// A value of the CSV, a property or a dependency has the wrong type.
    #[error("{source_name}: {message}")]
    Invalid {
        /// The bundle source (and file).
        source_name: String,
        /// What is wrong.
        message: String,
    },
}

/// The rendered blob plus what opm would only have logged.
#[derive(Debug, Clone)]
pub struct RenderedBundle {
    /// The `olm.bundle` blob (properties sorted, objects not yet moved to the end: the
    /// config-level post-processing in [`super::finish_config`] does that for every input).
    pub bundle: model::Bundle,
    /// Files skipped and similar notes (opm logs them and goes on).
    pub warnings: Vec<String>,
    /// The first `olm.package` property's version, for `--image-template`.
    pub version: String,
}

impl BundleFiles {
    /// Reads `root/manifests` and `root/metadata` as opm's `fs.ReadDir` sees them (sorted,
    /// folders skipped; dot files are skipped later for manifests only, as opm does).
    pub fn read_dir(root: &Path) -> Result<BundleFiles, BundleRenderError> {
        let read = |dir: &Path| -> Result<Vec<(String, Vec<u8>)>, BundleRenderError> {
            let mut out = Vec::new();
            for entry in crate::fsio::read_dir(dir)? {
                let entry = entry.map_err(crate::fsio::at("list", dir))?;
                let path = entry.path();
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                if !meta.is_file() {
                    continue;
                }
                let content = crate::fsio::read(&path)?;
                out.push((entry.file_name().to_string_lossy().into_owned(), content));
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(out)
        };
        Ok(BundleFiles {
            source: root.display().to_string(),
            manifests: read(&root.join("manifests"))?,
            metadata: read(&root.join("metadata"))?,
        })
    }
}

/// The first chunk of a YAML stream as Kubernetes' `YAMLReader` cuts it: lines up to the first
/// `---` line that follows content. `Err` for a separator followed by anything but a comment.
pub(crate) fn k8s_first_chunk(text: &str) -> Result<&str, String> {
    let mut start: Option<usize> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let trimmed = rest.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                return Err(format!("invalid Yaml document separator: {trimmed}"));
            }
            if let Some(s) = start {
                return Ok(&text[s..pos]);
            }
        } else if start.is_none() {
            start = Some(pos);
        }
        pos += line.len();
    }
    Ok(start.map_or("", |s| &text[s..]))
}

/// Decodes the first document of a file as `yaml.NewYAMLOrJSONDecoder(r, 30).Decode` does:
/// JSON when it starts with `{`, else the first YAML chunk converted to JSON.
fn first_document(content: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(content).map_err(|e| format!("not UTF-8: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('{') {
        return match serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .next()
        {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(e.to_string()),
            None => Err("empty document".into()),
        };
    }
    let chunk = k8s_first_chunk(text)?;
    let (docs, _duplicates) = yaml::parse_stream_lenient(chunk).map_err(|e| e.to_string())?;
    match docs.into_iter().next() {
        Some(doc) => Ok(doc.root.to_json()),
        None => Ok(Value::Null),
    }
}

fn str_field<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(v, |node, key| node.get(*key))
        .and_then(Value::as_str)
}

/// `{type, value}` entries of a dependencies or properties list (Go decoding: keys matched
/// case-insensitively, `value` kept as raw JSON). `None` when the shape does not decode.
fn typed_list(v: Option<&Value>) -> Option<Vec<(String, String)>> {
    let items = match v {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return None,
    };
    let mut out = Vec::new();
    for item in items {
        if item.is_null() {
            out.push((String::new(), "null".to_string()));
            continue;
        }
        item.as_object()?;
        let ty = match get_ci(item, "type") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return None,
        };
        let value =
            get_ci(item, "value").map_or_else(|| "null".to_string(), |v| marshal_string(v, true));
        out.push((ty, value));
    }
    Some(out)
}

struct Metadata {
    package: String,
    dependencies: Vec<(String, String)>,
    properties: Vec<(String, String)>,
}

/// `addMetadata`: every file tried as each kind, the first non-empty decode of each kind wins.
fn read_metadata(files: &BundleFiles, warnings: &mut Vec<String>) -> Option<Metadata> {
    let mut annotations: Option<String> = None;
    let mut dependencies: Option<Vec<(String, String)>> = None;
    let mut properties: Option<Vec<(String, String)>> = None;
    for (name, content) in &files.metadata {
        let doc = match first_document(content) {
            Ok(doc) => doc,
            Err(e) => {
                warnings.push(format!("{}/metadata/{name}: {e}", files.source));
                continue;
            }
        };
        if !doc.is_object() {
            continue;
        }
        if annotations.is_none()
            && let Some(ann) = get_ci(&doc, "annotations")
            && let Some(fields) = annotation_fields(ann)
            && fields.iter().any(|f| !f.is_empty())
        {
            annotations = Some(fields[0].clone());
        }
        if dependencies.is_none()
            && let Some(list) = typed_list(get_ci(&doc, "dependencies"))
            && !list.is_empty()
        {
            dependencies = Some(list);
        }
        if properties.is_none()
            && let Some(list) = typed_list(get_ci(&doc, "properties"))
            && !list.is_empty()
        {
            properties = Some(list);
        }
    }
    Some(Metadata {
        package: annotations?,
        dependencies: dependencies.unwrap_or_default(),
        properties: properties.unwrap_or_default(),
    })
}

/// The three annotation fields opm's `Annotations` struct holds (package, channels, default
/// channel); `None` when one of them is not a string (the decode fails in Go).
fn annotation_fields(ann: &Value) -> Option<[String; 3]> {
    if ann.is_null() {
        return Some(Default::default());
    }
    ann.as_object()?;
    let mut out: [String; 3] = Default::default();
    for (i, key) in [
        crate::bundle::keys::PACKAGE,
        crate::bundle::keys::CHANNELS,
        crate::bundle::keys::DEFAULT_CHANNEL,
    ]
    .iter()
    .enumerate()
    {
        match get_ci(ann, key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out[i] = s.clone(),
            Some(_) => return None,
        }
    }
    Some(out)
}

/// `{"group":…,"kind":…,"version":…}` as `property.MustBuildGVK` writes it.
fn gvk_json(group: &str, kind: &str, version: &str) -> String {
    let mut out = String::from("{\"group\":");
    crate::gocompat::marshal::write_str(&mut out, group, false);
    out.push_str(",\"kind\":");
    crate::gocompat::marshal::write_str(&mut out, kind, false);
    out.push_str(",\"version\":");
    crate::gocompat::marshal::write_str(&mut out, version, false);
    out.push('}');
    out
}

fn package_json(name: &str, version: &str, release: &str, html: bool) -> String {
    let mut out = String::from("{\"packageName\":");
    crate::gocompat::marshal::write_str(&mut out, name, html);
    out.push_str(",\"version\":");
    crate::gocompat::marshal::write_str(&mut out, version, html);
    if !release.is_empty() {
        out.push_str(",\"release\":");
        crate::gocompat::marshal::write_str(&mut out, release, html);
    }
    out.push('}');
    out
}

/// (group, kind, version) of a GVK-shaped property value, keys matched as Go does.
fn parse_gvk(raw: &str) -> Result<(String, String, String), String> {
    let v: Value = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    if !v.is_object() && !v.is_null() {
        return Err(format!("cannot unmarshal {raw} into a GVK"));
    }
    let field = |k: &str| -> Result<String, String> {
        match get_ci(&v, k) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("{k} must be a string")),
        }
    };
    Ok((field("group")?, field("kind")?, field("version")?))
}

/// (packageName, version, release) of an `olm.package`-shaped value.
fn parse_package(raw: &str) -> Result<(String, String, String), String> {
    let v: Value = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    if !v.is_object() && !v.is_null() {
        return Err(format!("cannot unmarshal {raw} into a package"));
    }
    let field = |k: &str| -> Result<String, String> {
        match get_ci(&v, k) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("{k} must be a string")),
        }
    };
    Ok((field("packageName")?, field("version")?, field("release")?))
}

/// Group, version, kind, plural of every API the CRD objects and owned APIServices provide.
fn provided_apis(objects: &[Value], csv: &Value) -> BTreeSet<(String, String, String, String)> {
    let mut out = BTreeSet::new();
    for obj in objects {
        if obj.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            continue;
        }
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let version = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
        if version != "v1" && version != "v1beta1" {
            continue;
        }
        let group = str_field(obj, &["spec", "group"]).unwrap_or("").to_string();
        let kind = str_field(obj, &["spec", "names", "kind"])
            .unwrap_or("")
            .to_string();
        let plural = str_field(obj, &["spec", "names", "plural"])
            .unwrap_or("")
            .to_string();
        if let Some(versions) = obj
            .get("spec")
            .and_then(|s| s.get("versions"))
            .and_then(Value::as_array)
        {
            for v in versions {
                let name = v.get("name").and_then(Value::as_str).unwrap_or("");
                out.insert((
                    group.clone(),
                    name.to_string(),
                    kind.clone(),
                    plural.clone(),
                ));
            }
        }
        if version == "v1beta1"
            && let Some(v) = str_field(obj, &["spec", "version"]).filter(|v| !v.is_empty())
        {
            out.insert((group.clone(), v.to_string(), kind.clone(), plural.clone()));
        }
    }
    for api in csv_list(csv, "apiservicedefinitions", "owned") {
        out.insert(api_key(api));
    }
    out
}

fn csv_list<'a>(csv: &'a Value, section: &str, which: &str) -> &'a [Value] {
    csv.get("spec")
        .and_then(|s| get_ci(s, section))
        .and_then(|s| get_ci(s, which))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn ci_str(v: &Value, key: &str) -> String {
    get_ci(v, key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn api_key(api: &Value) -> (String, String, String, String) {
    (
        ci_str(api, "group"),
        ci_str(api, "version"),
        ci_str(api, "kind"),
        ci_str(api, "name"),
    )
}

/// Group, version, kind, plural from a CRD description (`name` is `plural.group`).
fn crd_key(d: &Value) -> Option<(String, String, String, String)> {
    let name = ci_str(d, "name");
    let (plural, group) = name.split_once('.')?;
    Some((
        group.to_string(),
        ci_str(d, "version"),
        ci_str(d, "kind"),
        plural.to_string(),
    ))
}

fn raw(json: String) -> Result<Box<RawValue>, String> {
    RawValue::from_string(json).map_err(|e| e.to_string())
}

/// Renders one bundle into the `olm.bundle` blob opm writes for it with image reference `image`
/// (`""` for a bundle folder without `--image`).
pub fn render_bundle(
    files: &BundleFiles,
    image: &str,
) -> Result<RenderedBundle, BundleRenderError> {
    let src = &files.source;
    let invalid = |message: String| BundleRenderError::Invalid {
        source_name: src.clone(),
        message,
    };
    let mut warnings = Vec::new();

    // addManifests
    let mut objects: Vec<Value> = Vec::new();
    let mut csv_index: Option<usize> = None;
    for (name, content) in &files.manifests {
        if name.starts_with('.') {
            continue;
        }
        let obj = match first_document(content) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "{src}/manifests/{name}: skipped, cannot decode: {e}"
                ));
                continue;
            }
        };
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        // Kubernetes' unstructured decoding requires `kind` only; opm keeps objects without
        // `apiVersion` (real bundles have them).
        if !obj.is_object() || kind.is_empty() {
            warnings.push(format!(
                "{src}/manifests/{name}: skipped, its first document is not a Kubernetes object with a kind"
            ));
            continue;
        }
        if kind == "ClusterServiceVersion" {
            if csv_index.is_some() {
                warnings.push(format!("{src}/manifests/{name}: skipped, a second CSV"));
                continue;
            }
            csv_index = Some(objects.len());
        }
        objects.push(obj);
    }
    if objects.is_empty() {
        return Err(BundleRenderError::NoObjects(src.clone()));
    }
    let Some(csv_index) = csv_index else {
        return Err(BundleRenderError::NoCsv(src.clone()));
    };
    let csv = &objects[csv_index];
    let name = str_field(csv, &["metadata", "name"])
        .unwrap_or("")
        .to_string();
    let provided = provided_apis(&objects, csv);
    for owned in csv_list(csv, "customresourcedefinitions", "owned") {
        let key = crd_key(owned).ok_or_else(|| {
            invalid(format!(
                "couldn't parse plural.group from crd name: {}",
                ci_str(owned, "name")
            ))
        })?;
        if !provided.contains(&key) {
            return Err(BundleRenderError::MissingOwnedApi {
                source_name: src.clone(),
                bundle: name.clone(),
                missing: format!("{}/{} {} ({})", key.0, key.1, key.2, key.3),
            });
        }
    }

    // addMetadata
    let metadata = read_metadata(files, &mut warnings)
        .ok_or_else(|| BundleRenderError::NoAnnotations(src.clone()))?;
    let package = metadata.package.clone();

    // Version and release (spec.version must be a string; release a string or a number).
    let spec = csv.get("spec");
    let version = match spec.and_then(|s| s.get("version")) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(invalid(format!(
                "get version: spec.version {other} is not a string"
            )));
        }
    };
    let release = match spec.and_then(|s| s.get("release")) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                format!("{}", f as i64)
            } else {
                format!("{f}")
            }
        }
        // opm (`csv.GetRelease`): neither a string nor a number is an error.
        Some(_) => {
            return Err(invalid(
                "get release: release field must be a string or number".to_string(),
            ));
        }
    };

    // derivedProperties
    let mut derived: Vec<(String, String)> = Vec::new();
    if let Some(text) = str_field(
        csv,
        &[
            "metadata",
            "annotations",
            crate::bundle::keys::OLM_PROPERTIES,
        ],
    ) && csv
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
        // A null annotation (`createdAt:` with no value) decodes as "" in Go's unstructured
        // converter; only other non-string values fail the CSV decode.
        .is_some_and(|a| a.values().all(|v| v.is_string() || v.is_null()))
    {
        match serde_json::from_str::<Vec<Box<RawValue>>>(text) {
            Ok(items) => {
                for item in items {
                    let parsed: Value = serde_json::from_str(item.get()).unwrap_or(Value::Null);
                    let ty = get_ci(&parsed, "type")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let value = raw_member(item.get(), "value").unwrap_or_else(|| "null".into());
                    derived.push((ty, value));
                }
            }
            Err(e) => warnings.push(format!(
                "{src}: failed to unmarshal csv annotation properties: {e}"
            )),
        }
    }
    if !package.is_empty() {
        derived.insert(
            0,
            (
                property_type::PACKAGE.to_string(),
                package_json(&package, &version, &release, true),
            ),
        );
    }
    for (g, v, k, _) in &provided {
        derived.push((property_type::GVK.to_string(), gvk_json(g, k, v)));
    }
    let derived = property_set(derived);
    let mut all = metadata.properties.clone();
    all.extend(derived);
    let bundle_properties = property_set(all);

    // ObjectsAndPropertiesFromBundle
    let mut provided_gvks: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut required_gvks: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut package_prop: Option<String> = None;
    let mut others: Vec<(String, String)> = Vec::new();
    let mut first_package_version: Option<String> = None;
    for (i, (ty, value)) in bundle_properties.iter().enumerate() {
        let parse_err = |e: String| invalid(format!("parse property[{i}] of type {ty:?}: {e}"));
        match ty.as_str() {
            property_type::GVK => {
                let (g, k, v) = parse_gvk(value).map_err(parse_err)?;
                provided_gvks.insert((g, k, v));
            }
            property_type::PACKAGE => {
                let (n, v, r) = parse_package(value).map_err(parse_err)?;
                first_package_version.get_or_insert_with(|| v.clone());
                package_prop = Some(package_json(&n, &v, &r, false));
            }
            _ => others.push((ty.clone(), value.clone())),
        }
    }
    let mut package_required: Vec<(String, String)> = Vec::new();
    for (i, (ty, value)) in metadata.dependencies.iter().enumerate() {
        let parse_err = |e: String| invalid(format!("parse property[{i}] of type {ty:?}: {e}"));
        match ty.as_str() {
            property_type::GVK => {
                let (g, k, v) = parse_gvk(value).map_err(parse_err)?;
                required_gvks.insert((g, k, v));
            }
            property_type::PACKAGE => {
                let (n, v, _) = parse_package(value).map_err(parse_err)?;
                let mut out = String::from("{\"packageName\":");
                crate::gocompat::marshal::write_str(&mut out, &n, false);
                out.push_str(",\"versionRange\":");
                crate::gocompat::marshal::write_str(&mut out, &v, false);
                out.push('}');
                package_required.push((property_type::PACKAGE_REQUIRED.to_string(), out));
            }
            _ => others.push((ty.clone(), value.clone())),
        }
    }
    for (g, v, k, _) in &provided {
        provided_gvks.insert((g.clone(), k.clone(), v.clone()));
    }
    for d in csv_list(csv, "customresourcedefinitions", "required") {
        let (g, v, k, _) = crd_key(d).ok_or_else(|| {
            invalid(format!(
                "couldn't parse plural.group from crd name: {}",
                ci_str(d, "name")
            ))
        })?;
        required_gvks.insert((g, k, v));
    }
    for api in csv_list(csv, "apiservicedefinitions", "required") {
        let (g, v, k, _) = api_key(api);
        required_gvks.insert((g, k, v));
    }

    let mut props: Vec<(String, String)> = Vec::new();
    let mut object_json: Vec<String> = Vec::new();
    for obj in &objects {
        let data = marshal_string(obj, true);
        let b64 = base64::engine::general_purpose::STANDARD.encode(data.as_bytes());
        props.push((
            property_type::BUNDLE_OBJECT.to_string(),
            format!("{{\"data\":\"{b64}\"}}"),
        ));
        object_json.push(data);
    }
    let package_prop =
        package_prop.unwrap_or_else(|| package_json(&package, &version, &release, false));
    props.push((property_type::PACKAGE.to_string(), package_prop));
    for (g, k, v) in &provided_gvks {
        props.push((property_type::GVK.to_string(), gvk_json(g, k, v)));
    }
    for (g, k, v) in &required_gvks {
        props.push((property_type::GVK_REQUIRED.to_string(), gvk_json(g, k, v)));
    }
    props.extend(package_required);
    props.extend(others);
    props.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });

    let properties = props
        .into_iter()
        .map(|(ty, value)| {
            Ok(Property {
                type_: ty,
                value: raw(value).map_err(&invalid)?,
            })
        })
        .collect::<Result<Vec<_>, BundleRenderError>>()?;

    let related_images = related_images(csv, image);
    let csv_json = object_json.get(csv_index).cloned();
    Ok(RenderedBundle {
        bundle: model::Bundle {
            schema: SCHEMA_BUNDLE.to_string(),
            name,
            package,
            image: image.to_string(),
            properties,
            related_images,
            objects: object_json,
            csv_json,
            origin: model::Origin {
                file: files.source.clone(),
                line: 0,
                col: 0,
            },
        },
        warnings,
        version: first_package_version.unwrap_or(version),
    })
}

/// The raw text of member `key` of a JSON object text, as Go's `json.RawMessage` keeps it.
fn raw_member(object: &str, key: &str) -> Option<String> {
    let map: std::collections::BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(object).ok()?;
    map.iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.get().to_string())
        .next_back()
}

/// opm's `propertySet`: drops repeated (type, value bytes) pairs, keeping the first.
fn property_set(props: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    props
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// `getRelatedImages`: the CSV's list as written, then the bundle image, then the images of
/// the install deployments' containers and init containers not listed yet
/// ([`crate::bundle::images`] holds the rules).
fn related_images(csv: &Value, image: &str) -> Vec<RelatedImage> {
    crate::bundle::images::render_related_images(csv, image)
        .into_iter()
        .map(|r| RelatedImage {
            name: r.name,
            image: r.image,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_chunk_as_kubernetes_cuts_it() {
        assert_eq!(k8s_first_chunk("---\na: 1\n---\nb: 2\n").unwrap(), "a: 1\n");
        assert_eq!(k8s_first_chunk("# c\n---\nb: 2\n").unwrap(), "# c\n");
        assert_eq!(k8s_first_chunk("a: 1").unwrap(), "a: 1");
        assert!(k8s_first_chunk("a: 1\n--- x\n").is_err());
    }
}
