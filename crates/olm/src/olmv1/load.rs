//! A bundle folder as operator-controller's `source.FromFS` reads it: the package name from
//! `metadata/annotations.yaml`, every manifest document dispatched by kind (the last CSV wins,
//! CRDs decoded as apiextensions v1, everything else kept as unstructured), and
//! `metadata/properties.yaml` appended to the CSV's `olm.properties` annotation. CSV parts are
//! decoded into their Go types here, once, so validators and generators read typed values.

use super::typed::types;
use crate::bundle::{Bundle, Csv, keys};
use crate::gocompat::escape::go_escape;
use serde_json::{Map, Value};

/// Where an object came from, for rules and messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// File relative to the bundle root.
    pub file: String,
    /// 1-based line of the document.
    pub line: usize,
}

/// The bundle as the renderer holds it (`bundle.RegistryV1`).
#[derive(Debug, Clone, Default)]
pub struct RegistryV1 {
    /// `operators.operatorframework.io.bundle.package.v1`.
    pub package: String,
    /// The CSV's name.
    pub csv_name: String,
    /// Where the CSV is.
    pub csv_origin: Option<Origin>,
    /// The CSV's `metadata.annotations` (with `olm.properties` merged).
    pub csv_annotations: Map<String, Value>,
    /// `spec.installModes` as (type, supported).
    pub install_modes: Vec<(String, bool)>,
    /// `spec.install.spec.deployments`, each a typed `StrategyDeploymentSpec`.
    pub deployments: Vec<Value>,
    /// `spec.install.spec.permissions`, typed `StrategyDeploymentPermissions`.
    pub permissions: Vec<Value>,
    /// `spec.install.spec.clusterPermissions`, typed.
    pub cluster_permissions: Vec<Value>,
    /// `spec.webhookdefinitions`, typed `WebhookDescription`.
    pub webhooks: Vec<Value>,
    /// `spec.customresourcedefinitions.owned[].name`.
    pub owned_crds: Vec<String>,
    /// CRDs, typed apiextensions v1, with where each came from.
    pub crds: Vec<(Value, Origin)>,
    /// Every other object, unstructured.
    pub others: Vec<(Value, Origin)>,
}

/// A string field of a typed value.
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn typed_list(ty: &str, list: Option<&Value>, path: &str) -> Result<Vec<Value>, String> {
    match list {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                types()
                    .round_trip(ty, Some(item))
                    .map_err(|e| format!("{path}: {e}"))
            })
            .collect(),
        Some(_) => Err(format!("{path}: cannot convert to slice")),
    }
}

impl RegistryV1 {
    /// Reads a loaded bundle as `source.FromFS` + `GetBundle` do; `Err` holds the renderer's
    /// text (without the `error parsing bundle directory:` prefix).
    pub fn from_bundle(bundle: &Bundle) -> Result<RegistryV1, String> {
        let mut rv1 = RegistryV1::default();
        let Some(ann) = &bundle.annotations else {
            return Err("open metadata/annotations.yaml: no such file or directory".into());
        };
        rv1.package = ann.value(keys::PACKAGE).unwrap_or("").to_string();
        // kubectl's builder refuses a document without kind or apiVersion.
        for d in &bundle.load_findings {
            if d.message.ends_with("'kind' is missing") || d.message.contains("are missing") {
                return Err(format!(
                    "error when parsing {}: Object 'Kind' or 'apiVersion' is missing",
                    d.file.as_deref().unwrap_or("manifests")
                ));
            }
        }
        let mut csv_object = None;
        for obj in &bundle.objects {
            // Keys are matched exactly (the bundle loader also accepts `ApiVersion`, with a
            // warning; kubectl does not).
            let exact = |k: &str| {
                obj.root
                    .get(k)
                    .and_then(|n| n.scalar_text())
                    .is_some_and(|t| !t.is_empty())
            };
            if obj.api_version.is_empty() || !exact("apiVersion") || !exact("kind") {
                return Err(format!(
                    "error when parsing {}: Object 'Kind' or 'apiVersion' is missing",
                    obj.file
                ));
            }
            let origin = Origin {
                file: obj.file.clone(),
                line: obj.line(),
            };
            let json = obj.root.to_json();
            match obj.kind.as_str() {
                "ClusterServiceVersion" => csv_object = Some((obj, json)),
                "CustomResourceDefinition" => {
                    let crd = types()
                        .round_trip("apiext.CustomResourceDefinition", Some(&json))
                        .map_err(|e| format!("error parsing objects in {:?}: {e}", obj.file))?;
                    rv1.crds.push((crd, origin));
                }
                _ => rv1.others.push((json, origin)),
            }
        }
        let Some((obj, csv)) = csv_object else {
            return Err("no ClusterServiceVersion found in \"manifests\"".into());
        };
        let fail = |e: String| format!("error parsing objects in {:?}: {e}", obj.file);
        rv1.csv_origin = Some(Origin {
            file: obj.file.clone(),
            line: obj.line(),
        });
        let fields = crate::bundle::CsvJson::any(&csv);
        let meta = types()
            .round_trip("meta.ObjectMeta", fields.metadata())
            .map_err(|e| fail(format!("metadata.{e}")))?;
        rv1.csv_name = str_of(&meta, "name").to_string();
        rv1.csv_annotations = meta
            .get("annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        // The install strategy's lists and the webhooks, each a typed list at its CSV path (the
        // first failure, in this order, is the one reported).
        let perms = "olm.StrategyDeploymentPermissions";
        let [deployments, permissions, cluster_permissions, webhooks] = [
            (
                "olm.StrategyDeploymentSpec",
                fields.deployments(),
                "spec.install.spec.deployments",
            ),
            (perms, fields.permissions(), "spec.install.spec.permissions"),
            (
                perms,
                fields.cluster_permissions(),
                "spec.install.spec.clusterPermissions",
            ),
            (
                "olm.WebhookDescription",
                fields.webhooks(),
                "spec.webhookdefinitions",
            ),
        ]
        .map(|(ty, items, path)| typed_list(ty, items, path).map_err(fail));
        rv1.deployments = deployments?;
        rv1.permissions = permissions?;
        rv1.cluster_permissions = cluster_permissions?;
        rv1.webhooks = webhooks?;
        if let Some(view) = Csv::new(obj) {
            rv1.install_modes = view
                .install_modes()
                .into_iter()
                .map(|m| (m.mode.to_string(), m.supported))
                .collect();
            rv1.owned_crds = view
                .owned_crds()
                .into_iter()
                .map(|c| c.name.to_string())
                .collect();
        }
        merge_properties(bundle, &mut rv1.csv_annotations)?;
        Ok(rv1)
    }

    /// The install modes marked supported, sorted and deduplicated (Go's `sets.List`).
    pub fn supported_modes(&self) -> Vec<String> {
        let mut modes: Vec<String> = self
            .install_modes
            .iter()
            .filter(|(_, s)| *s)
            .map(|(m, _)| m.clone())
            .collect();
        modes.sort();
        modes.dedup();
        modes
    }

    /// Whether `mode` is supported.
    pub fn supports(&self, mode: &str) -> bool {
        self.install_modes.iter().any(|(m, s)| *s && m == mode)
    }
}

/// `copyMetadataPropertiesToCSV`: the CSV's `olm.properties` list, then the entries of
/// `metadata/properties.yaml`, re-marshalled with `json.Marshal`.
fn merge_properties(bundle: &Bundle, annotations: &mut Map<String, Value>) -> Result<(), String> {
    let Some(file) = &bundle.properties else {
        return Ok(());
    };
    // An empty file changes nothing; any other content re-marshals the list.
    if bundle
        .files
        .iter()
        .any(|f| f.file == file.file && f.size == 0)
    {
        return Ok(());
    }
    let extra = file.root.to_json();
    let extra = match extra.get("properties") {
        Some(Value::Array(items)) => items.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            return Err(
                "failed to unmarshal metadata/properties.yaml: properties is not a list".into(),
            );
        }
    };
    let mut out = String::from("[");
    let mut count = 0;
    if let Some(Value::String(existing)) = annotations.get(keys::OLM_PROPERTIES) {
        let list: Vec<Box<serde_json::value::RawValue>> =
            serde_json::from_str(existing).map_err(|e| {
                format!("failed to unmarshal csv.metadata.annotations['olm.properties']: {e}")
            })?;
        for item in list {
            let obj: Map<String, Value> = serde_json::from_str(item.get()).unwrap_or_default();
            let raw: std::collections::BTreeMap<String, Box<serde_json::value::RawValue>> =
                serde_json::from_str(item.get()).unwrap_or_default();
            let type_ = obj.get("type").and_then(Value::as_str).unwrap_or("");
            push_property(&mut out, &mut count, type_, |out| match raw.get("value") {
                Some(v) => compact_into(out, v.get()),
                None => out.push_str("null"),
            });
        }
    }
    for item in &extra {
        let type_ = item.get("type").and_then(Value::as_str).unwrap_or("");
        push_property(&mut out, &mut count, type_, |out| match item.get("value") {
            Some(v) => crate::gocompat::marshal::marshal(out, v, true),
            None => out.push_str("null"),
        });
    }
    out.push(']');
    // Go marshals the nil slice of an empty merge as `null`.
    let text = if count == 0 { "null".to_string() } else { out };
    annotations.insert(keys::OLM_PROPERTIES.to_string(), Value::String(text));
    Ok(())
}

/// One `{"type":…,"value":…}` member of the merged `olm.properties` list, as Go's
/// `json.Marshal` writes a `property.Property` (`value` written by `write_value`), after a
/// comma when it is not the first (`count` counts them).
fn push_property(
    out: &mut String,
    count: &mut usize,
    type_: &str,
    write_value: impl FnOnce(&mut String),
) {
    if *count > 0 {
        out.push(',');
    }
    *count += 1;
    out.push_str("{\"type\":");
    crate::gocompat::marshal::write_str(out, type_, true);
    out.push_str(",\"value\":");
    write_value(out);
    out.push('}');
}

/// Go's `json.Compact` with HTML escaping, as `json.Marshal` applies to a `RawMessage`.
fn compact_into(out: &mut String, raw: &str) {
    let mut in_string = false;
    let mut escaped = false;
    for c in raw.chars() {
        if in_string {
            if escaped {
                escaped = false;
                out.push(c);
                continue;
            }
            match c {
                '\\' => {
                    escaped = true;
                    out.push(c);
                }
                '"' => {
                    in_string = false;
                    out.push(c);
                }
                _ => match go_escape(c, true) {
                    Some(e) if c != '"' && c != '\\' && !c.is_control() => out.push_str(e.as_str()),
                    _ => out.push(c),
                },
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
}
