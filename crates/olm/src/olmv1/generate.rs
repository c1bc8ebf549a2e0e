//! The renderer's generators (`generators/generators.go`) in their order: ServiceAccounts,
//! Roles and RoleBindings, ClusterRoles and ClusterRoleBindings, CRDs, the bundle's other
//! objects, Deployments, webhook configurations, webhook Services and certificate objects; and
//! the target-namespace decision of `render.go`, with its error texts.

use super::load::{RegistryV1, str_of};
use super::typed::{Ty, types};
use super::validators::is_supported;
use super::value_path::set_path;
use super::{CertProvider, RenderOptions, RenderedObject, config};
use crate::bundle::keys;
use crate::gocompat::hash::deep_hash;
use crate::gocompat::marshal::{write_number, write_str};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

const MAX_NAME: usize = 63;

/// `util.ObjectNameForBaseAndSuffix`, its 63/64 off-by-one included.
pub fn name_for(base: &str, suffix: &str) -> String {
    let mut base = base;
    if base.len() + suffix.len() > MAX_NAME {
        let cut = MAX_NAME.saturating_sub(suffix.len() + 1);
        let mut end = cut.min(base.len());
        while !base.is_char_boundary(end) {
            end -= 1;
        }
        base = &base[..end];
    }
    format!("{base}-{suffix}")
}

/// `json.Encoder` output of a typed value, fields in Go declaration order.
pub fn go_encode(out: &mut String, v: &Value, ty: &Ty) {
    match (ty, v) {
        (Ty::Ptr(inner), _) => go_encode(out, v, inner),
        (Ty::Slice(inner), Value::Array(items)) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_encode(out, item, inner);
            }
            out.push(']');
        }
        (Ty::Map(inner), Value::Object(m)) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k, true);
                out.push(':');
                go_encode(out, item, inner);
            }
            out.push('}');
        }
        (Ty::Struct(name), Value::Object(m)) => {
            out.push('{');
            let mut first = true;
            for (field, fty, _) in types().field_order(name) {
                if let Some(item) = m.get(field) {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    write_str(out, field, true);
                    out.push(':');
                    go_encode(out, item, fty);
                }
            }
            out.push('}');
        }
        (_, Value::String(s)) => write_str(out, s, true),
        (_, Value::Number(n)) => write_number(out, n),
        (_, Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        (_, Value::Null) => out.push_str("null"),
        (_, other) => crate::gocompat::marshal::marshal(out, other, true),
    }
}

/// `DefaultUniqueNameGenerator(base, permission)`.
fn permission_name(base: &str, permission: &Value) -> String {
    let mut encoded = String::new();
    go_encode(
        &mut encoded,
        permission,
        &Ty::Struct("olm.StrategyDeploymentPermissions".into()),
    );
    encoded.push('\n');
    name_for(base, &deep_hash(encoded.as_bytes()))
}

/// `defaultTargetNamespacesForBundle` + `WithTargetNamespaces` + `validateTargetNamespaces`.
pub fn target_namespaces(rv1: &RegistryV1, opts: &RenderOptions) -> Result<Vec<String>, String> {
    let targets: Vec<String> = if !opts.watch_namespaces.is_empty() {
        opts.watch_namespaces.clone()
    } else if rv1.supports("AllNamespaces") {
        vec![String::new()]
    } else {
        Vec::new()
    };
    let modes = format!("[{}]", rv1.supported_modes().join(" "));
    let set: BTreeSet<&str> = targets.iter().map(String::as_str).collect();
    let install = opts.install_namespace.as_str();
    let fail = |msg: String| {
        Err(format!(
            "invalid option(s): invalid target namespaces [{}]: {msg}",
            targets.join(" ")
        ))
    };
    let generic = || {
        format!(
            "supported install modes {modes} do not support target namespaces [{}]",
            targets.join(" ")
        )
    };
    match set.len() {
        0 => {
            if rv1.supports("MultiNamespace") {
                return fail("at least one target namespace must be specified".into());
            }
            fail("exactly one target namespace must be specified".into())
        }
        1 if set.contains("") => {
            if rv1.supports("AllNamespaces") {
                return Ok(targets);
            }
            fail(format!(
                "supported install modes {modes} do not support targeting all namespaces"
            ))
        }
        1 => {
            if targets[0] == install {
                if !rv1.supports("OwnNamespace") {
                    return fail(format!(
                        "supported install modes {modes} do not support targeting own namespace"
                    ));
                }
                return Ok(targets);
            }
            if rv1.supports("SingleNamespace") {
                return Ok(targets);
            }
            fail(generic())
        }
        _ => {
            if !rv1.supports("OwnNamespace") && set.contains(install) {
                return fail(format!(
                    "supported install modes {modes} do not support targeting own namespace"
                ));
            }
            if rv1.supports("MultiNamespace") && !set.contains("") {
                return Ok(targets);
            }
            fail(generic())
        }
    }
}

/// Names of a webhook deployment's Service and certificate (`CertProvisionerFor`).
struct CertNames {
    service: String,
    cert: String,
}

fn cert_names(deployment: &str) -> CertNames {
    let service = name_for(&deployment.replace('.', "-"), "service");
    let cert = name_for(&service, "cert");
    CertNames { service, cert }
}

fn inject_ca(obj: &mut Value, kind: &str, provider: Option<CertProvider>, ns: &str, cert: &str) {
    let (key, value) = match (provider, kind) {
        (None, _) => return,
        (
            Some(CertProvider::CertManager),
            "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "CustomResourceDefinition",
        ) => ("cert-manager.io/inject-ca-from", format!("{ns}/{cert}")),
        (
            Some(CertProvider::OpenshiftServiceCa),
            "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "CustomResourceDefinition",
        ) => (
            "service.beta.openshift.io/inject-cabundle",
            "true".to_string(),
        ),
        (Some(CertProvider::OpenshiftServiceCa), "Service") => (
            "service.beta.openshift.io/serving-cert-secret-name",
            cert.to_string(),
        ),
        _ => return,
    };
    set_annotation(obj, key, &value);
}

fn set_annotation(obj: &mut Value, key: &str, value: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let ann = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !ann.is_object() {
        *ann = Value::Object(Map::new());
    }
    if let Some(m) = ann.as_object_mut() {
        m.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// The Go type a generated object is written as.
fn go_type(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "ServiceAccount" => "core.ServiceAccount",
        "Role" => "rbac.Role",
        "RoleBinding" => "rbac.RoleBinding",
        "ClusterRole" => "rbac.ClusterRole",
        "ClusterRoleBinding" => "rbac.ClusterRoleBinding",
        "CustomResourceDefinition" => "apiext.CustomResourceDefinition",
        "Deployment" => "apps.Deployment",
        "Service" => "core.Service",
        "ValidatingWebhookConfiguration" => "admreg.ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration" => "admreg.MutatingWebhookConfiguration",
        _ => return None,
    })
}

fn typed(value: Value) -> Result<RenderedObject, String> {
    let kind = str_of(&value, "kind").to_string();
    let value = match go_type(&kind) {
        Some(ty) => types()
            .round_trip(ty, Some(&value))
            .map_err(|e| e.to_string())?,
        None => value,
    };
    Ok(RenderedObject::new(value))
}

fn sa_or_default(sa: &str) -> &str {
    if sa.is_empty() { "default" } else { sa }
}

/// Runs every generator; the objects come out in generator order.
pub fn generate(
    rv1: &RegistryV1,
    opts: &RenderOptions,
    targets: &[String],
) -> Result<Vec<RenderedObject>, String> {
    let ns = opts.install_namespace.as_str();
    let provider = opts.cert_provider;
    let all_namespaces = targets.len() == 1 && targets[0].is_empty();
    let mut out = Vec::new();

    // ServiceAccounts (a set: no duplicates, no `default`).
    let mut sas = BTreeSet::new();
    for p in rv1.permissions.iter().chain(&rv1.cluster_permissions) {
        sas.insert(sa_or_default(str_of(p, "serviceAccountName")).to_string());
    }
    for sa in sas.iter().filter(|s| *s != "default") {
        out.push(typed(json!({
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": sa, "namespace": ns}
        }))?);
    }

    // Roles and RoleBindings, per target namespace.
    if !all_namespaces {
        for target in targets {
            for p in &rv1.permissions {
                let sa = sa_or_default(str_of(p, "serviceAccountName"));
                let name = permission_name(&format!("{}-{sa}", rv1.csv_name), p);
                out.push(typed(json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": name, "namespace": target},
                    "rules": p.get("rules").cloned().unwrap_or(Value::Null)
                }))?);
                out.push(typed(json!({
                    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": name, "namespace": target},
                    "subjects": [{"kind": "ServiceAccount", "namespace": ns, "name": sa}],
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
                }))?);
            }
        }
    }

    // ClusterRoles and ClusterRoleBindings (permissions promoted in AllNamespaces mode).
    let mut cluster: Vec<Value> = rv1.cluster_permissions.clone();
    if all_namespaces {
        for p in &rv1.permissions {
            let mut p = p.clone();
            let extra = json!({"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]});
            match p.get_mut("rules") {
                Some(Value::Array(rules)) => rules.push(extra),
                _ => {
                    if let Some(m) = p.as_object_mut() {
                        m.insert("rules".into(), Value::Array(vec![extra]));
                    }
                }
            }
            cluster.push(p);
        }
    }
    for p in &cluster {
        let sa = sa_or_default(str_of(p, "serviceAccountName"));
        let name = permission_name(&format!("{}-{sa}", rv1.csv_name), p);
        out.push(typed(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": p.get("rules").cloned().unwrap_or(Value::Null)
        }))?);
        out.push(typed(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "subjects": [{"kind": "ServiceAccount", "namespace": ns, "name": sa}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
        }))?);
    }

    // CRDs, conversion webhooks wired in.
    let mut conversion: Vec<(&str, &Value)> = Vec::new();
    for w in &rv1.webhooks {
        if str_of(w, "type") != "ConversionWebhook" {
            continue;
        }
        for c in super::validators::strings(w.get("conversionCRDs")) {
            if conversion.iter().any(|(n, _)| *n == c) {
                return Err(format!(
                    "custom resource definition '{c}' is referenced by multiple conversion webhook definitions"
                ));
            }
            conversion.push((c, w));
        }
    }
    for (crd, _) in &rv1.crds {
        let mut cp = crd.clone();
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some((_, w)) = conversion.iter().find(|(n, _)| *n == name) {
            if crd.pointer("/spec/preserveUnknownFields") == Some(&Value::Bool(true)) {
                return Err(format!(
                    "custom resource definition '{name}' must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion"
                ));
            }
            let names = cert_names(str_of(w, "deploymentName"));
            let path = w.get("webhookPath").and_then(Value::as_str).unwrap_or("/");
            let conv = json!({
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {"service": {
                        "namespace": ns, "name": names.service, "path": path,
                        "port": w.get("containerPort").cloned().unwrap_or(json!(0))
                    }},
                    "conversionReviewVersions": w.get("admissionReviewVersions").cloned().unwrap_or(Value::Null)
                }
            });
            if let Some(spec) = cp.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("conversion".into(), conv);
            }
            inject_ca(
                &mut cp,
                "CustomResourceDefinition",
                provider,
                ns,
                &names.cert,
            );
        }
        out.push(typed(cp)?);
    }

    // The bundle's other objects, namespaced ones moved to the install namespace.
    for (o, _) in &rv1.others {
        let kind = str_of(o, "kind");
        let (supported, namespaced) = is_supported(kind);
        if !supported {
            let name = o
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(format!(
                "bundle contains unsupported resource: Name: {name}, Kind: {kind}"
            ));
        }
        let mut obj = o.clone();
        if namespaced && let Some(meta) = obj.as_object_mut() {
            let m = meta
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if !m.is_object() {
                *m = Value::Object(Map::new());
            }
            if let Some(m) = m.as_object_mut() {
                m.insert("namespace".into(), Value::String(ns.to_string()));
            }
        }
        out.push(RenderedObject::new(obj));
    }

    // Deployments.
    let webhook_deps: BTreeSet<&str> = rv1
        .webhooks
        .iter()
        .map(|w| str_of(w, "deploymentName"))
        .collect();
    for d in &rv1.deployments {
        let name = str_of(d, "name");
        let mut spec = d.get("spec").cloned().unwrap_or_else(|| json!({}));
        let mut annotations = rv1.csv_annotations.clone();
        if let Some(Value::Object(t)) = spec.pointer("/template/metadata/annotations") {
            for (k, v) in t {
                annotations.insert(k.clone(), v.clone());
            }
        }
        annotations.insert(
            keys::TARGET_NAMESPACES.into(),
            Value::String(targets.join(",")),
        );
        annotations.insert(keys::OPERATOR_NAMESPACE.into(), Value::String(ns.into()));
        set_path(
            &mut spec,
            &["template", "metadata", "annotations"],
            Value::Object(annotations),
        );
        set_path(&mut spec, &["revisionHistoryLimit"], json!(1));
        let mut metadata = json!({"name": name, "namespace": ns});
        if let Some(label) = d.get("label") {
            metadata["labels"] = label.clone();
        }
        let mut dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec});
        if provider.is_some() && webhook_deps.contains(name) {
            cert_volumes(&mut dep, &cert_names(name).cert);
        }
        if let Some(cfg) = &opts.deployment_config {
            config::apply(&mut dep, cfg)?;
        }
        out.push(typed(dep)?);
    }

    // Validating, then mutating webhook configurations.
    for (kind, wtype) in [
        (
            "ValidatingWebhookConfiguration",
            "ValidatingAdmissionWebhook",
        ),
        ("MutatingWebhookConfiguration", "MutatingAdmissionWebhook"),
    ] {
        for w in rv1.webhooks.iter().filter(|w| str_of(w, "type") == wtype) {
            let names = cert_names(str_of(w, "deploymentName"));
            let gen_name = str_of(w, "generateName");
            let wh_name = gen_name.strip_suffix('-').unwrap_or(gen_name);
            let mut service = json!({"namespace": ns, "name": names.service,
                "port": w.get("containerPort").cloned().unwrap_or(json!(0))});
            if let Some(p) = w.get("webhookPath") {
                service["path"] = p.clone();
            }
            let mut hook = json!({"name": wh_name, "clientConfig": {"service": service}});
            let mut fields = vec![
                "rules",
                "failurePolicy",
                "matchPolicy",
                "objectSelector",
                "sideEffects",
                "timeoutSeconds",
                "admissionReviewVersions",
            ];
            if wtype == "MutatingAdmissionWebhook" {
                fields.push("reinvocationPolicy");
            }
            for f in fields {
                if let Some(v) = w.get(f) {
                    hook[f] = v.clone();
                }
            }
            if !targets.is_empty() && !targets.iter().any(String::is_empty) {
                hook["namespaceSelector"] = json!({"matchExpressions": [{
                    "key": "kubernetes.io/metadata.name", "operator": "In", "values": targets
                }]});
            }
            let mut obj = json!({
                "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": wh_name, "namespace": ns},
                "webhooks": [hook]
            });
            inject_ca(&mut obj, kind, provider, ns, &names.cert);
            out.push(typed(obj)?);
        }
    }

    // Services for webhook deployments.
    for d in &rv1.deployments {
        let name = str_of(d, "name");
        let mut ports: Vec<(i64, Value)> = Vec::new();
        for w in rv1
            .webhooks
            .iter()
            .filter(|w| str_of(w, "deploymentName") == name)
        {
            let cp = w
                .get("containerPort")
                .and_then(Value::as_i64)
                .filter(|p| *p > 0)
                .unwrap_or(443);
            let target = w.get("targetPort").cloned().unwrap_or(json!(cp));
            if !ports.iter().any(|(p, t)| *p == cp && *t == target) {
                ports.push((cp, target));
            }
        }
        if ports.is_empty() {
            continue;
        }
        let int_value = |v: &Value| match v {
            Value::Number(n) => n.as_i64().unwrap_or(0),
            Value::String(s) => s.parse().unwrap_or(0),
            _ => 0,
        };
        ports.sort_by(|a, b| a.0.cmp(&b.0).then(int_value(&a.1).cmp(&int_value(&b.1))));
        let names = cert_names(name);
        let selector = d
            .pointer("/spec/selector/matchLabels")
            .cloned()
            .unwrap_or(Value::Null);
        let mut obj = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": names.service, "namespace": ns},
            "spec": {
                "ports": ports.iter().map(|(p, t)| json!({"name": p.to_string(), "port": p, "targetPort": t})).collect::<Vec<_>>(),
                "selector": selector
            }
        });
        inject_ca(&mut obj, "Service", provider, ns, &names.cert);
        out.push(typed(obj)?);
    }

    // Certificate objects.
    if provider == Some(CertProvider::CertManager) {
        for dep in &webhook_deps {
            let names = cert_names(dep);
            let issuer = name_for(&names.cert, "selfsigned-issuer");
            let svc = &names.service;
            out.push(RenderedObject::new(json!({
                "apiVersion": "cert-manager.io/v1", "kind": "Issuer",
                "metadata": {"name": issuer, "namespace": ns},
                "spec": {"selfSigned": {}},
                "status": {}
            })));
            out.push(RenderedObject::new(json!({
                "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": {"name": names.cert, "namespace": ns},
                "spec": {
                    "secretName": names.cert,
                    "commonName": format!("{svc}.{ns}"),
                    "usages": ["server auth"],
                    "dnsNames": [format!("{svc}.{ns}"), format!("{svc}.{ns}.svc"), format!("{svc}.{ns}.svc.cluster.local")],
                    "issuerRef": {"name": issuer},
                    "duration": "17520h0m0s",
                    "renewBefore": "24h0m0s"
                },
                "status": {}
            })));
        }
    }
    Ok(out)
}

/// `ensureCorrectDeploymentCertVolumes`.
fn cert_volumes(dep: &mut Value, secret: &str) {
    const CONFIGS: [(&str, &str, &str, &str); 2] = [
        (
            "webhook-cert",
            "/tmp/k8s-webhook-server/serving-certs",
            "tls.crt",
            "tls.key",
        ),
        (
            "apiservice-cert",
            "/apiserver.local.config/certificates",
            "apiserver.crt",
            "apiserver.key",
        ),
    ];
    let mut remove: BTreeSet<String> = CONFIGS.iter().map(|c| c.0.to_string()).collect();
    let paths: BTreeSet<&str> = CONFIGS.iter().map(|c| c.1).collect();
    let Some(pod) = dep.pointer_mut("/spec/template/spec") else {
        return;
    };
    let containers = pod
        .get("containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &containers {
        for m in c
            .get("volumeMounts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            if paths.contains(str_of(m, "mountPath")) {
                remove.insert(str_of(m, "name").to_string());
            }
        }
    }
    let volumes: Vec<Value> = CONFIGS
        .iter()
        .map(|(n, _, crt, key)| {
            json!({"name": n, "secret": {"secretName": secret, "items": [
                {"key": "tls.crt", "path": crt}, {"key": "tls.key", "path": key}
            ]}})
        })
        .collect();
    let mounts: Vec<Value> = CONFIGS
        .iter()
        .map(|(n, p, _, _)| json!({"name": n, "mountPath": p}))
        .collect();
    let keep = |list: Option<&Value>| -> Vec<Value> {
        list.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|v| !remove.contains(str_of(v, "name")))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut new_volumes = keep(pod.get("volumes"));
    new_volumes.extend(volumes);
    let new_containers: Vec<Value> = containers
        .iter()
        .map(|c| {
            let mut c = c.clone();
            let mut m = keep(c.get("volumeMounts"));
            m.extend(mounts.iter().cloned());
            if let Some(obj) = c.as_object_mut() {
                obj.insert("volumeMounts".into(), Value::Array(m));
            }
            c
        })
        .collect();
    if let Some(obj) = pod.as_object_mut() {
        obj.insert("volumes".into(), Value::Array(new_volumes));
        obj.insert("containers".into(), Value::Array(new_containers));
    }
}
