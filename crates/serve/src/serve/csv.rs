//! The ClusterServiceVersion current opm synthesizes from an `olm.csv.metadata` property
//! (`pkg/api/model_to_api.go`, operator-registry #1094, v1.28.0 and later).
//!
//! Why: catalogs rendered with `--migrate-level=bundle-object-to-csv-metadata` (all OpenShift
//! catalogs) carry no CSV, only its metadata; OLM's packageserver unmarshals `csvJson` from
//! GetBundleForChannel to fill PackageManifests, so opm builds a stub CSV. Its bytes are
//! `json.Marshal(v1alpha1.ClusterServiceVersion)` of operator-framework/api v0.45 with
//! k8s.io/apimachinery v0.36 (no `creationTimestamp`: `omitzero`), so the Go types are mirrored
//! here field for field, in Go's field order, with Go's `omitempty` rules: an empty struct is
//! still written (`"provider":{}`, `"cleanup":{"enabled":false}`, `"status":{"cleanup":{}}`).
//!
//! Decoding follows Go's `json.Unmarshal` into `property.CSVMetadata`: keys match fields
//! case-insensitively (the last matching key wins), unknown keys are ignored, `null` leaves the
//! zero value, a value of the wrong type is an error. `json.RawMessage` descriptor values are
//! kept as their exact text.

use crate::catalog::property_value::{GoDecodeError, kind_of};
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

type Obj<'a> = BTreeMap<String, &'a RawValue>;

/// Why an `olm.csv.metadata` value could not be read as Go reads it: the catalog model's Go
/// decode error, so the CSV reader here and the property readers there word it the same way.
pub type MetadataError = GoDecodeError;

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

fn err(raw: &RawValue, field: &str, go_type: &'static str) -> MetadataError {
    MetadataError {
        found: kind_of(raw),
        field: field.to_string(),
        go_type,
    }
}

/// The fields of a JSON object, or `None` for `null`.
fn object<'a>(
    raw: &'a RawValue,
    field: &str,
    go_type: &'static str,
) -> Result<Option<Obj<'a>>, MetadataError> {
    if is_null(raw) {
        return Ok(None);
    }
    if kind_of(raw) != "object" {
        return Err(err(raw, field, go_type));
    }
    serde_json::from_str(raw.get())
        .map(Some)
        .map_err(|_| err(raw, field, go_type))
}

/// The value of the last key matching `name` case-insensitively (Go's field matching).
fn get<'a>(obj: &Obj<'a>, name: &str) -> Option<&'a RawValue> {
    obj.iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
        .next_back()
}

fn string(obj: &Obj<'_>, name: &str, path: &str) -> Result<String, MetadataError> {
    match get(obj, name) {
        None => Ok(String::new()),
        Some(raw) if is_null(raw) => Ok(String::new()),
        Some(raw) => serde_json::from_str::<String>(raw.get())
            .map_err(|_| err(raw, &format!("{path}.{name}"), "string")),
    }
}

fn array<'a>(
    obj: &Obj<'a>,
    name: &str,
    path: &str,
    go_type: &'static str,
) -> Result<Vec<&'a RawValue>, MetadataError> {
    match get(obj, name) {
        None => Ok(Vec::new()),
        Some(raw) if is_null(raw) => Ok(Vec::new()),
        Some(raw) if kind_of(raw) == "array" => serde_json::from_str(raw.get())
            .map_err(|_| err(raw, &format!("{path}.{name}"), go_type)),
        Some(raw) => Err(err(raw, &format!("{path}.{name}"), go_type)),
    }
}

fn strings(obj: &Obj<'_>, name: &str, path: &str) -> Result<Vec<String>, MetadataError> {
    array(obj, name, path, "[]string")?
        .into_iter()
        .map(|raw| {
            if is_null(raw) {
                return Ok(String::new());
            }
            serde_json::from_str::<String>(raw.get())
                .map_err(|_| err(raw, &format!("{path}.{name}"), "string"))
        })
        .collect()
}

fn string_map(
    obj: &Obj<'_>,
    name: &str,
    path: &str,
) -> Result<BTreeMap<String, String>, MetadataError> {
    let field = format!("{path}.{name}");
    let Some(raw) = get(obj, name) else {
        return Ok(BTreeMap::new());
    };
    let Some(entries) = object(raw, &field, "map[string]string")? else {
        return Ok(BTreeMap::new());
    };
    entries
        .into_iter()
        .map(|(k, v)| {
            if is_null(v) {
                return Ok((k, String::new()));
            }
            serde_json::from_str::<String>(v.get())
                .map(|s| (k, s))
                .map_err(|_| err(v, &field, "string"))
        })
        .collect()
}

fn boolean(obj: &Obj<'_>, name: &str, path: &str) -> Result<bool, MetadataError> {
    match get(obj, name) {
        None => Ok(false),
        Some(raw) if is_null(raw) => Ok(false),
        Some(raw) => serde_json::from_str::<bool>(raw.get())
            .map_err(|_| err(raw, &format!("{path}.{name}"), "bool")),
    }
}

fn int32(obj: &Obj<'_>, name: &str, path: &str) -> Result<i32, MetadataError> {
    match get(obj, name) {
        None => Ok(0),
        Some(raw) if is_null(raw) => Ok(0),
        // Go parses the literal as an integer: `1.0` or `1e3` are errors, as they are here.
        Some(raw) => raw
            .get()
            .parse::<i32>()
            .map_err(|_| err(raw, &format!("{path}.{name}"), "int32")),
    }
}

/// Each element of an array of structs (a `null` element is a zero struct).
fn structs<'a, T>(
    obj: &Obj<'a>,
    name: &str,
    path: &str,
    go_type: &'static str,
    elem_path: &str,
    f: impl Fn(&Obj<'a>, &str) -> Result<T, MetadataError>,
) -> Result<Vec<T>, MetadataError> {
    array(obj, name, path, go_type)?
        .into_iter()
        .map(|raw| {
            let fields = object(raw, &format!("{path}.{name}"), go_type)?.unwrap_or_default();
            f(&fields, elem_path)
        })
        .collect()
}

fn nested<'a>(
    obj: &Obj<'a>,
    name: &str,
    path: &str,
    go_type: &'static str,
) -> Result<Obj<'a>, MetadataError> {
    match get(obj, name) {
        None => Ok(Obj::new()),
        Some(raw) => Ok(object(raw, &format!("{path}.{name}"), go_type)?.unwrap_or_default()),
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// `v1alpha1.APIResourceReference`.
#[derive(Debug, Serialize)]
struct ResourceRef {
    name: String,
    kind: String,
    version: String,
}

fn resource_ref(o: &Obj<'_>, p: &str) -> Result<ResourceRef, MetadataError> {
    Ok(ResourceRef {
        name: string(o, "name", p)?,
        kind: string(o, "kind", p)?,
        version: string(o, "version", p)?,
    })
}

/// `v1alpha1.{Spec,Status,Action}Descriptor` (same shape).
#[derive(Debug, Serialize)]
struct Descriptor {
    path: String,
    #[serde(rename = "displayName", skip_serializing_if = "String::is_empty")]
    display_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(rename = "x-descriptors", skip_serializing_if = "Vec::is_empty")]
    x_descriptors: Vec<String>,
    /// `json.RawMessage`: kept as its text; `null` stays `null` (Go keeps it).
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Box<RawValue>>,
}

fn descriptor(o: &Obj<'_>, p: &str) -> Result<Descriptor, MetadataError> {
    Ok(Descriptor {
        path: string(o, "path", p)?,
        display_name: string(o, "displayName", p)?,
        description: string(o, "description", p)?,
        x_descriptors: strings(o, "x-descriptors", p)?,
        value: get(o, "value").map(|raw| raw.to_owned()),
    })
}

fn descriptors(
    o: &Obj<'_>,
    name: &str,
    p: &str,
    ty: &'static str,
) -> Result<Vec<Descriptor>, MetadataError> {
    structs(o, name, p, ty, "Descriptor", descriptor)
}

/// `v1alpha1.CRDDescription`.
#[derive(Debug, Serialize)]
struct CrdDescription {
    name: String,
    version: String,
    kind: String,
    #[serde(rename = "displayName", skip_serializing_if = "String::is_empty")]
    display_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resources: Vec<ResourceRef>,
    #[serde(rename = "statusDescriptors", skip_serializing_if = "Vec::is_empty")]
    status_descriptors: Vec<Descriptor>,
    #[serde(rename = "specDescriptors", skip_serializing_if = "Vec::is_empty")]
    spec_descriptors: Vec<Descriptor>,
    #[serde(rename = "actionDescriptors", skip_serializing_if = "Vec::is_empty")]
    action_descriptors: Vec<Descriptor>,
}

fn crd_description(o: &Obj<'_>, p: &str) -> Result<CrdDescription, MetadataError> {
    Ok(CrdDescription {
        name: string(o, "name", p)?,
        version: string(o, "version", p)?,
        kind: string(o, "kind", p)?,
        display_name: string(o, "displayName", p)?,
        description: string(o, "description", p)?,
        resources: structs(
            o,
            "resources",
            p,
            "[]v1alpha1.APIResourceReference",
            "APIResourceReference",
            resource_ref,
        )?,
        status_descriptors: descriptors(o, "statusDescriptors", p, "[]v1alpha1.StatusDescriptor")?,
        spec_descriptors: descriptors(o, "specDescriptors", p, "[]v1alpha1.SpecDescriptor")?,
        action_descriptors: descriptors(o, "actionDescriptors", p, "[]v1alpha1.ActionDescriptor")?,
    })
}

/// `v1alpha1.APIServiceDescription`.
#[derive(Debug, Serialize)]
struct ApiServiceDescription {
    name: String,
    group: String,
    version: String,
    kind: String,
    #[serde(rename = "deploymentName", skip_serializing_if = "String::is_empty")]
    deployment_name: String,
    #[serde(rename = "containerPort", skip_serializing_if = "is_zero")]
    container_port: i32,
    #[serde(rename = "displayName", skip_serializing_if = "String::is_empty")]
    display_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resources: Vec<ResourceRef>,
    #[serde(rename = "statusDescriptors", skip_serializing_if = "Vec::is_empty")]
    status_descriptors: Vec<Descriptor>,
    #[serde(rename = "specDescriptors", skip_serializing_if = "Vec::is_empty")]
    spec_descriptors: Vec<Descriptor>,
    #[serde(rename = "actionDescriptors", skip_serializing_if = "Vec::is_empty")]
    action_descriptors: Vec<Descriptor>,
}

fn api_service_description(o: &Obj<'_>, p: &str) -> Result<ApiServiceDescription, MetadataError> {
    Ok(ApiServiceDescription {
        name: string(o, "name", p)?,
        group: string(o, "group", p)?,
        version: string(o, "version", p)?,
        kind: string(o, "kind", p)?,
        deployment_name: string(o, "deploymentName", p)?,
        container_port: int32(o, "containerPort", p)?,
        display_name: string(o, "displayName", p)?,
        description: string(o, "description", p)?,
        resources: structs(
            o,
            "resources",
            p,
            "[]v1alpha1.APIResourceReference",
            "APIResourceReference",
            resource_ref,
        )?,
        status_descriptors: descriptors(o, "statusDescriptors", p, "[]v1alpha1.StatusDescriptor")?,
        spec_descriptors: descriptors(o, "specDescriptors", p, "[]v1alpha1.SpecDescriptor")?,
        action_descriptors: descriptors(o, "actionDescriptors", p, "[]v1alpha1.ActionDescriptor")?,
    })
}

/// `v1alpha1.CustomResourceDefinitions` / `APIServiceDefinitions` (always written, even empty).
#[derive(Debug, Serialize)]
struct OwnedRequired<T> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    owned: Vec<T>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    required: Vec<T>,
}

/// `v1alpha1.InstallMode`.
#[derive(Debug, Serialize)]
struct InstallMode {
    #[serde(rename = "type")]
    type_: String,
    supported: bool,
}

/// `v1alpha1.AppLink` (also the provider; always written).
#[derive(Debug, Serialize)]
struct AppLink {
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    url: String,
}

fn app_link(o: &Obj<'_>, p: &str) -> Result<AppLink, MetadataError> {
    Ok(AppLink {
        name: string(o, "name", p)?,
        url: string(o, "url", p)?,
    })
}

/// `v1alpha1.Maintainer`.
#[derive(Debug, Serialize)]
struct Maintainer {
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    email: String,
}

/// `metav1.GroupVersionKind`.
#[derive(Debug, Serialize)]
struct Gvk {
    group: String,
    version: String,
    kind: String,
}

/// `v1alpha1.RelatedImage`.
#[derive(Debug, Serialize)]
struct CsvRelatedImage {
    name: String,
    image: String,
}

#[derive(Debug, Serialize)]
struct StrategySpec {
    deployments: Option<Vec<()>>,
}

#[derive(Debug, Serialize)]
struct Install {
    strategy: &'static str,
    spec: StrategySpec,
}

#[derive(Debug, Serialize)]
struct Cleanup {
    #[serde(skip_serializing_if = "is_false")]
    #[serde(rename = "enabled")]
    _unused: bool,
}

#[derive(Debug, Serialize)]
struct CleanupSpec {
    enabled: bool,
}

/// `spec` up to `displayName` (the fields before the package description's place).
#[derive(Debug, Serialize)]
struct SpecHead {
    install: Install,
    version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    maturity: String,
    customresourcedefinitions: OwnedRequired<CrdDescription>,
    apiservicedefinitions: OwnedRequired<ApiServiceDescription>,
    #[serde(rename = "nativeAPIs", skip_serializing_if = "Vec::is_empty")]
    native_apis: Vec<Gvk>,
    #[serde(rename = "minKubeVersion", skip_serializing_if = "String::is_empty")]
    min_kube_version: String,
    #[serde(rename = "displayName")]
    display_name: String,
}

/// `spec` from `keywords` to `links` (between the description and the icon).
#[derive(Debug, Serialize)]
struct SpecMiddle {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    keywords: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    maintainers: Vec<Maintainer>,
    provider: AppLink,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    links: Vec<AppLink>,
}

/// `spec` after the icon.
#[derive(Debug, Serialize)]
struct SpecTail {
    #[serde(rename = "installModes", skip_serializing_if = "Vec::is_empty")]
    install_modes: Vec<InstallMode>,
    cleanup: CleanupSpec,
    #[serde(rename = "relatedImages", skip_serializing_if = "Vec::is_empty")]
    related_images: Vec<CsvRelatedImage>,
}

#[derive(Debug, Serialize)]
struct ObjectMeta {
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<String, String>,
}

#[derive(Debug, Serialize)]
struct Status {
    cleanup: Cleanup,
}

/// What the synthesized CSV takes from outside the metadata property.
#[derive(Debug, Clone, Copy)]
pub struct CsvContext<'a> {
    /// The bundle name (`metadata.name`).
    pub name: &'a str,
    /// The bundle version (`spec.version`), from its `olm.package` property.
    pub version: &'a str,
    /// The package icon: `(standard base64 of the bytes, media type)`.
    pub icon: Option<(&'a str, &'a str)>,
    /// The package description, used when the metadata has none.
    pub package_description: &'a str,
    /// The bundle's related images `(name, image)`.
    pub related_images: &'a [crate::catalog::RelatedImage],
}

/// `json.Marshal` of the CSV current opm builds from one `olm.csv.metadata` value.
pub fn synthesize(metadata: &RawValue, ctx: CsvContext<'_>) -> Result<String, MetadataError> {
    let template = synthesize_template(metadata, ctx.name, ctx.version, ctx.related_images)?;
    Ok(template.fill(ctx.icon, ctx.package_description))
}

/// A synthesized CSV without the two parts it takes from its package (the icon, and the
/// package description when the metadata has none): made once per bundle, possibly before the
/// package is read, and completed per answer by [`CsvTemplate::fill`].
///
/// Why: the package icon (base64, often 10-300 KB) is most of a synthesized CSV's bytes and the
/// same in every bundle of the package, so a server keeps it once per package and copies it
/// into each answer instead of storing or re-encoding it per bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvTemplate {
    /// The CSV's JSON with the package's parts left out.
    pub text: String,
    /// Where `,"description":…` goes (`None`: the metadata has its own description).
    pub description_at: Option<usize>,
    /// Where `,"icon":[…]` goes.
    pub icon_at: usize,
}

impl CsvTemplate {
    /// The CSV [`synthesize`] makes with the package's `icon` and `package_description` (as in
    /// [`CsvContext`]).
    pub fn fill(&self, icon: Option<(&str, &str)>, package_description: &str) -> String {
        fill_parts(
            &self.text,
            self.description_at,
            self.icon_at,
            icon,
            package_description,
        )
        .unwrap_or_default()
    }
}

/// [`CsvTemplate::fill`] from a template's parts (`text` may come from a compressed copy).
/// `None` when a place is not a character boundary of `text` in order.
pub fn fill_parts(
    text: &str,
    description_at: Option<usize>,
    icon_at: usize,
    icon: Option<(&str, &str)>,
    package_description: &str,
) -> Option<String> {
    let mut out = String::with_capacity(
        text.len() + package_description.len() + icon.map_or(0, |(d, m)| d.len() + m.len()) + 64,
    );
    let mut from = 0;
    if let Some(at) = description_at {
        out.push_str(text.get(from..at)?);
        push_description(&mut out, package_description);
        from = at;
    }
    out.push_str(text.get(from..icon_at)?);
    push_icon(&mut out, icon);
    out.push_str(text.get(icon_at..)?);
    Some(out)
}

/// `,"description":"…"` as `json.Marshal` writes `spec.description` (nothing when empty).
fn push_description(out: &mut String, description: &str) {
    if !description.is_empty() {
        out.push_str(",\"description\":");
        push_json_string(out, description);
    }
}

/// `,"icon":[{"base64data":"…","mediatype":"…"}]` as `json.Marshal` writes `spec.icon`
/// (`[]v1alpha1.Icon` of one), nothing without an icon.
fn push_icon(out: &mut String, icon: Option<(&str, &str)>) {
    if let Some((data, mediatype)) = icon {
        out.push_str(",\"icon\":[{\"base64data\":");
        push_json_string(out, data);
        out.push_str(",\"mediatype\":");
        push_json_string(out, mediatype);
        out.push_str("}]");
    }
}

/// A JSON string as `json.Marshal` writes it. Text with nothing to escape (base64 icons, most
/// names) is copied as it is, without the per-character escaping pass.
fn push_json_string(out: &mut String, s: &str) {
    let escapes = s.as_bytes().iter().fold(false, |any, &b| {
        any | (b < 0x20)
            | (b == b'"')
            | (b == b'\\')
            | (b == b'<')
            | (b == b'>')
            | (b == b'&')
            | (b == 0xe2)
    });
    if escapes {
        // A string always serializes.
        out.push_str(&crate::gocompat::json::to_string(s).unwrap_or_default());
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// `json.Marshal` of a struct without its closing brace (`{"a":1`), to be continued.
fn open_object<T: Serialize>(value: &T, out: &mut String) -> Result<(), MetadataError> {
    let text = crate::gocompat::json::to_string(value).map_err(|_| marshal_error())?;
    out.push_str(text.strip_suffix('}').ok_or_else(marshal_error)?);
    Ok(())
}

/// The fields of a struct's `json.Marshal` (`"a":1,"b":2`), to continue an object. The
/// struct must write at least one field.
fn object_fields<T: Serialize>(value: &T, out: &mut String) -> Result<(), MetadataError> {
    let text = crate::gocompat::json::to_string(value).map_err(|_| marshal_error())?;
    let fields = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .filter(|t| !t.is_empty())
        .ok_or_else(marshal_error)?;
    out.push_str(fields);
    Ok(())
}

fn marshal_error() -> MetadataError {
    MetadataError {
        found: "object",
        field: "CSVMetadata".to_string(),
        go_type: "v1alpha1.ClusterServiceVersion",
    }
}

/// The [`CsvTemplate`] of the CSV [`synthesize`] makes for a bundle (name, version, related
/// images): what does not depend on its package. Fails as [`synthesize`] fails.
pub fn synthesize_template(
    metadata: &RawValue,
    name: &str,
    version: &str,
    related_images: &[crate::catalog::RelatedImage],
) -> Result<CsvTemplate, MetadataError> {
    const P: &str = "CSVMetadata";
    let m = object(metadata, P, "property.CSVMetadata")?.unwrap_or_default();
    let crds = nested(
        &m,
        "crdDescriptions",
        P,
        "v1alpha1.CustomResourceDefinitions",
    )?;
    let apis = nested(
        &m,
        "apiServiceDefinitions",
        P,
        "v1alpha1.APIServiceDefinitions",
    )?;
    let provider = nested(&m, "provider", P, "v1alpha1.AppLink")?;
    let description = string(&m, "description", P)?;
    let object_meta = ObjectMeta {
        name: name.to_string(),
        labels: string_map(&m, "labels", P)?,
        annotations: string_map(&m, "annotations", P)?,
    };
    let head = spec_head(&m, &crds, &apis, version)?;
    let middle = SpecMiddle {
        keywords: strings(&m, "keywords", P)?,
        maintainers: structs(
            &m,
            "maintainers",
            P,
            "[]v1alpha1.Maintainer",
            "Maintainer",
            |o, p| {
                Ok(Maintainer {
                    name: string(o, "name", p)?,
                    email: string(o, "email", p)?,
                })
            },
        )?,
        provider: app_link(&provider, "AppLink")?,
        links: structs(&m, "links", P, "[]v1alpha1.AppLink", "AppLink", app_link)?,
    };
    let tail = SpecTail {
        install_modes: structs(
            &m,
            "installModes",
            P,
            "[]v1alpha1.InstallMode",
            "InstallMode",
            |o, p| {
                Ok(InstallMode {
                    type_: string(o, "type", p)?,
                    supported: boolean(o, "supported", p)?,
                })
            },
        )?,
        cleanup: CleanupSpec { enabled: false },
        related_images: related_images
            .iter()
            .map(|r| CsvRelatedImage {
                name: r.name.clone(),
                image: r.image.clone(),
            })
            .collect(),
    };
    let mut text = String::with_capacity(metadata.get().len() + 1024);
    text.push_str(
        "{\"kind\":\"ClusterServiceVersion\",\"apiVersion\":\"operators.coreos.com/v1alpha1\",\"metadata\":",
    );
    text.push_str(&crate::gocompat::json::to_string(&object_meta).map_err(|_| marshal_error())?);
    text.push_str(",\"spec\":");
    open_object(&head, &mut text)?;
    let description_at = if description.is_empty() {
        Some(text.len())
    } else {
        push_description(&mut text, &description);
        None
    };
    text.push(',');
    object_fields(&middle, &mut text)?;
    let icon_at = text.len();
    text.push(',');
    object_fields(&tail, &mut text)?;
    text.push_str("},\"status\":");
    let status = Status {
        cleanup: Cleanup { _unused: false },
    };
    text.push_str(&crate::gocompat::json::to_string(&status).map_err(|_| marshal_error())?);
    text.push('}');
    Ok(CsvTemplate {
        text,
        description_at,
        icon_at,
    })
}

/// `spec` up to `displayName` ([`SpecHead`]), read from the metadata `m` and its
/// `crdDescriptions` and `apiServiceDefinitions` objects (decoded first, in Go's field order).
fn spec_head(
    m: &Obj<'_>,
    crds: &Obj<'_>,
    apis: &Obj<'_>,
    version: &str,
) -> Result<SpecHead, MetadataError> {
    const P: &str = "CSVMetadata";
    Ok(SpecHead {
        install: Install {
            strategy: "deployment",
            spec: StrategySpec { deployments: None },
        },
        version: version.to_string(),
        maturity: string(m, "maturity", P)?,
        customresourcedefinitions: OwnedRequired {
            owned: structs(
                crds,
                "owned",
                "CustomResourceDefinitions",
                "[]v1alpha1.CRDDescription",
                "CRDDescription",
                crd_description,
            )?,
            required: structs(
                crds,
                "required",
                "CustomResourceDefinitions",
                "[]v1alpha1.CRDDescription",
                "CRDDescription",
                crd_description,
            )?,
        },
        apiservicedefinitions: OwnedRequired {
            owned: structs(
                apis,
                "owned",
                "APIServiceDefinitions",
                "[]v1alpha1.APIServiceDescription",
                "APIServiceDescription",
                api_service_description,
            )?,
            required: structs(
                apis,
                "required",
                "APIServiceDefinitions",
                "[]v1alpha1.APIServiceDescription",
                "APIServiceDescription",
                api_service_description,
            )?,
        },
        native_apis: structs(
            m,
            "nativeAPIs",
            P,
            "[]v1.GroupVersionKind",
            "GroupVersionKind",
            |o, p| {
                Ok(Gvk {
                    group: string(o, "group", p)?,
                    version: string(o, "version", p)?,
                    kind: string(o, "kind", p)?,
                })
            },
        )?,
        min_kube_version: string(m, "minKubeVersion", P)?,
        display_name: string(m, "displayName", P)?,
    })
}

/// Go's `json.Unmarshal` of `raw` into a struct of string fields named `fields`: their values
/// in that order (`""` when absent or `null`).
pub fn go_string_fields(
    raw: &RawValue,
    go_type: &'static str,
    fields: &[&str],
) -> Result<Vec<String>, MetadataError> {
    let obj = object(raw, go_type, go_type)?.unwrap_or_default();
    let path = go_type.rsplit('.').next().unwrap_or(go_type);
    fields.iter().map(|f| string(&obj, f, path)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_csv_is_go_marshal_of_the_v1alpha1_struct() {
        let meta = RawValue::from_string(
            r#"{"annotations":{"a":"<b>"},"displayName":"X","installModes":[{"supported":true,"type":"OwnNamespace"}],"provider":{"name":"P"},"unknown":1}"#
                .to_string(),
        )
        .unwrap();
        let images = [crate::catalog::RelatedImage {
            name: String::new(),
            image: "img".into(),
        }];
        let got = synthesize(
            &meta,
            CsvContext {
                name: "op.v1.0.0",
                version: "1.0.0",
                icon: None,
                package_description: "pd",
                related_images: &images,
            },
        )
        .unwrap();
        assert_eq!(
            got,
            r#"{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","metadata":{"name":"op.v1.0.0","annotations":{"a":"\u003cb\u003e"}},"spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":"1.0.0","customresourcedefinitions":{},"apiservicedefinitions":{},"displayName":"X","description":"pd","provider":{"name":"P"},"installModes":[{"type":"OwnNamespace","supported":true}],"cleanup":{"enabled":false},"relatedImages":[{"name":"","image":"img"}]},"status":{"cleanup":{}}}"#
        );
    }

    #[test]
    fn wrong_types_are_go_errors() {
        let meta = RawValue::from_string(r#"{"displayName":3}"#.to_string()).unwrap();
        let ctx = CsvContext {
            name: "n",
            version: "1.0.0",
            icon: None,
            package_description: "",
            related_images: &[],
        };
        let e = synthesize(&meta, ctx).unwrap_err();
        assert_eq!(
            e.to_string(),
            "json: cannot unmarshal number into Go struct field CSVMetadata.displayName of type string"
        );
    }
}
