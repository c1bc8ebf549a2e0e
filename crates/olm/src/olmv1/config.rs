//! A ClusterExtension's `deploymentConfig` (`spec.config.inline.deploymentConfig`, OLM v0's
//! `SubscriptionConfig`): read from YAML or JSON, checked against its Go type (unknown keys and
//! wrong types refused, as the JSON schema operator-controller validates with does), and applied
//! to each Deployment as `applyCustomConfigToDeployment` does.

use super::load::str_of;
use super::typed::types;
use super::value_path::set_path;
use serde_json::{Map, Value};

/// The keys `SubscriptionConfig` has.
const KEYS: &[&str] = &[
    "selector",
    "nodeSelector",
    "tolerations",
    "resources",
    "envFrom",
    "env",
    "volumes",
    "volumeMounts",
    "affinity",
    "annotations",
];

/// Parses a deployment config file's text (YAML or JSON; a `deploymentConfig:` wrapper is
/// accepted) into its typed JSON form. `Err` says what is wrong, with the line when known.
pub fn parse(text: &str) -> Result<Value, String> {
    let docs = crate::yaml::parse_stream(text).map_err(|e| e.to_string())?;
    let Some(doc) = docs.first() else {
        return Ok(Value::Object(Map::new()));
    };
    let mut root = &doc.root;
    if let Some(inner) = root.get("deploymentConfig") {
        root = inner;
    }
    if root.is_null() {
        return Ok(Value::Object(Map::new()));
    }
    let Some(entries) = root.as_map() else {
        return Err(format!(
            "line {}: deploymentConfig must be a mapping, found a {}",
            root.line,
            root.kind_name()
        ));
    };
    for (k, _) in entries {
        if !KEYS.contains(&k.text.as_str()) {
            return Err(format!(
                "line {}: unknown field {:?} (deploymentConfig accepts {})",
                k.line,
                k.text.as_str(),
                KEYS.join(", ")
            ));
        }
    }
    let json = root.to_json();
    let typed = types()
        .round_trip("olm.SubscriptionConfig", Some(&json))
        .map_err(|e| format!("deploymentConfig.{e}"))?;
    // Keep "set but empty" distinctions the Go code makes (nodeSelector: {} replaces).
    let mut typed = typed;
    if let (Some(Value::Object(ns)), Some(obj)) = (json.get("nodeSelector"), typed.as_object_mut())
        && ns.is_empty()
    {
        obj.insert("nodeSelector".into(), Value::Object(Map::new()));
    }
    Ok(typed)
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn containers_mut(dep: &mut Value) -> Vec<&mut Value> {
    match dep.pointer_mut("/spec/template/spec/containers") {
        Some(Value::Array(c)) => c.iter_mut().collect(),
        _ => Vec::new(),
    }
}

fn push_to(obj: &mut Value, key: &str, item: Value) {
    if let Some(m) = obj.as_object_mut() {
        let e = m.entry(key.to_string()).or_insert(Value::Array(Vec::new()));
        if !e.is_array() {
            *e = Value::Array(Vec::new());
        }
        if let Value::Array(a) = e {
            a.push(item);
        }
    }
}

/// Merges by name: replaces the entry with the same name (first found before this call), else
/// appends.
fn merge_by_name(target: &mut Value, key: &str, items: &[Value]) {
    let names: Vec<String> = list(target, key)
        .iter()
        .map(|v| str_of(v, "name").to_string())
        .collect();
    for item in items {
        let name = str_of(item, "name");
        match names.iter().rposition(|n| n == name) {
            Some(i) => {
                if let Some(Value::Array(a)) = target.get_mut(key) {
                    a[i] = item.clone();
                }
            }
            None => push_to(target, key, item.clone()),
        }
    }
}

fn affinity_part_empty(v: Option<&Value>, required_key: &str) -> bool {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return true;
    };
    let required_empty = match v.get("requiredDuringSchedulingIgnoredDuringExecution") {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(r) => list(r, required_key).is_empty(),
    };
    required_empty && list(v, "preferredDuringSchedulingIgnoredDuringExecution").is_empty()
}

/// `applyCustomConfigToDeployment` on a Deployment's JSON.
pub fn apply(dep: &mut Value, cfg: &Value) -> Result<(), String> {
    let env = list(cfg, "env");
    if !env.is_empty() {
        for c in containers_mut(dep) {
            merge_by_name(c, "env", env);
        }
    }
    let env_from = list(cfg, "envFrom");
    if !env_from.is_empty() {
        for c in containers_mut(dep) {
            for e in env_from {
                if !list(c, "envFrom").contains(e) {
                    push_to(c, "envFrom", e.clone());
                }
            }
        }
    }
    let volumes = list(cfg, "volumes");
    if !volumes.is_empty()
        && let Some(pod) = dep.pointer_mut("/spec/template/spec")
    {
        merge_by_name(pod, "volumes", volumes);
    }
    let mounts = list(cfg, "volumeMounts");
    if !mounts.is_empty() {
        for c in containers_mut(dep) {
            merge_by_name(c, "volumeMounts", mounts);
        }
    }
    let tolerations = list(cfg, "tolerations");
    if !tolerations.is_empty()
        && let Some(pod) = dep.pointer_mut("/spec/template/spec")
    {
        for t in tolerations {
            if !list(pod, "tolerations").contains(t) {
                push_to(pod, "tolerations", t.clone());
            }
        }
    }
    if let Some(res) = cfg.get("resources") {
        for c in containers_mut(dep) {
            if let Some(m) = c.as_object_mut() {
                m.insert("resources".into(), res.clone());
            }
        }
    }
    if let Some(ns) = cfg.get("nodeSelector") {
        set_path(
            dep,
            &["spec", "template", "spec", "nodeSelector"],
            ns.clone(),
        );
    }
    if let Some(aff) = cfg.get("affinity") {
        apply_affinity(dep, aff);
    }
    if let Some(Value::Object(ann)) = cfg.get("annotations")
        && !ann.is_empty()
    {
        for path in ["/metadata", "/spec/template/metadata"] {
            if dep.pointer(path).is_none() {
                let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
                set_path(dep, &parts, Value::Object(Map::new()));
            }
            if let Some(meta) = dep.pointer_mut(path).and_then(Value::as_object_mut) {
                let a = meta
                    .entry("annotations")
                    .or_insert_with(|| Value::Object(Map::new()));
                if !a.is_object() {
                    *a = Value::Object(Map::new());
                }
                if let Some(a) = a.as_object_mut() {
                    for (k, v) in ann {
                        a.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
    }
    Ok(())
}

fn apply_affinity(dep: &mut Value, aff: &Value) {
    let Some(pod) = dep
        .pointer_mut("/spec/template/spec")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let parts = [
        ("nodeAffinity", "nodeSelectorTerms"),
        ("podAffinity", ""),
        ("podAntiAffinity", ""),
    ];
    if parts.iter().all(|(p, _)| aff.get(p).is_none()) {
        pod.remove("affinity");
        return;
    }
    let current = pod
        .entry("affinity")
        .or_insert_with(|| Value::Object(Map::new()));
    if !current.is_object() {
        *current = Value::Object(Map::new());
    }
    if let Some(cur) = current.as_object_mut() {
        for (p, req) in parts {
            if let Some(v) = aff.get(p) {
                if affinity_part_empty(Some(v), req) {
                    cur.remove(p);
                } else {
                    cur.insert(p.to_string(), v.clone());
                }
            }
        }
    }
    let empty = parts
        .iter()
        .all(|(p, req)| affinity_part_empty(pod.get("affinity").and_then(|a| a.get(*p)), req));
    if empty {
        pod.remove("affinity");
    }
}
