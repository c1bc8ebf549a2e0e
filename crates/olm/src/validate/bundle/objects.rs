//! Rules on the objects other than the CSV and CRDs: supported kinds, names, namespaces,
//! duplicates, a ServiceAccount that clashes with the CSV's, and APIs removed from Kubernetes.

use super::{Ctx, Diagnostic, Rule, Severity, names};
use crate::bundle::Object;
use crate::yaml::Node;
use std::collections::{BTreeMap, BTreeSet};

/// Kinds a registry+v1 bundle may carry (operator-registry `supported_resources.go`). OLM checks
/// the kind name only, not the group.
pub(crate) const SUPPORTED_KINDS: [&str; 22] = [
    "ClusterServiceVersion",
    "CustomResourceDefinition",
    "Secret",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ServiceAccount",
    "Service",
    "Role",
    "RoleBinding",
    "PrometheusRule",
    "ServiceMonitor",
    "PodDisruptionBudget",
    "PriorityClass",
    "VerticalPodAutoscaler",
    "ConsoleYAMLSample",
    "ConsoleQuickStart",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsolePlugin",
    "NetworkPolicy",
    "PodMonitor",
];

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let bundle = ctx.bundle;
    let mut seen: BTreeMap<(String, String), &Object> = BTreeMap::new();
    // The kind list applies to registry+v1 content, which a CSV makes it (opm's media type detection).
    let registry_v1 = bundle.objects.iter().any(Object::is_csv);
    for obj in &bundle.objects {
        if registry_v1 && !SUPPORTED_KINDS.contains(&obj.kind.as_str()) {
            ctx.push(
                Diagnostic::new(
                    Rule::KindUnsupported,
                    format!(
                        "{} is not a supported kind for a registry+v1 bundle (OLM installs only: {})",
                        obj.kind,
                        SUPPORTED_KINDS.join(", ")
                    ),
                )
                .at(&obj.file, obj.line_of(&["kind"])),
            );
        }
        deprecated_api(ctx, obj);
        if obj.is_csv() {
            continue;
        }
        let name = match obj.root.path(&["metadata", "name"]) {
            Some(n) => n.scalar_text(),
            None => None,
        };
        let generate_name = obj
            .root
            .path(&["metadata", "generateName"])
            .and_then(Node::scalar_text);
        match name {
            None if generate_name.is_some() => {}
            None => ctx.push(
                Diagnostic::new(
                    Rule::ObjectName,
                    format!(
                        "{} has no metadata.name: name or generateName is required",
                        obj.kind
                    ),
                )
                .at(&obj.file, obj.line_of(&["metadata"])),
            ),
            Some(name) => {
                if let Some(why) = name_problem(&obj.kind, name) {
                    // The API server would reject it, but upstream validators do not look: a warning.
                    ctx.push(
                        Diagnostic::new(
                            Rule::ObjectName,
                            format!(
                                "{} name \"{name}\" will be rejected by the API server: {why}",
                                obj.kind
                            ),
                        )
                        .with_severity(Severity::Warning)
                        .at(&obj.file, obj.line_of(&["metadata", "name"])),
                    );
                }
                let key = (obj.kind.clone(), name.to_string());
                if let Some(first) = seen.get(&key).filter(|_| !obj.is_crd()) {
                    ctx.push(
                        Diagnostic::new(
                            Rule::ObjectDuplicate,
                            format!("{} \"{name}\" is also defined in {}; one replaces the other at install time", obj.kind, first.file),
                        )
                        .at(&obj.file, obj.line()),
                    );
                } else {
                    seen.insert(key, obj);
                }
            }
        }
        object_metadata(ctx, obj);
        if let Some(ns) = obj
            .root
            .path(&["metadata", "namespace"])
            .filter(|n| !n.is_null() && n.scalar_text() != Some(""))
        {
            ctx.push(
                Diagnostic::new(
                    Rule::ObjectNamespace,
                    format!(
                        "{} \"{}\" sets metadata.namespace \"{}\": bundle objects are installed into the namespace OLM chooses; remove the field",
                        obj.kind,
                        obj.name.as_deref().unwrap_or(""),
                        ns
                    ),
                )
                .at(&obj.file, ns.line),
            );
        }
    }
    service_accounts(ctx);
    hidden_documents(ctx);
}

/// A CSV or CRD that is not the first document of its file: OLM v0 and opm read only the first
/// document of each file, so for them the object does not exist.
fn hidden_documents(ctx: &mut Ctx<'_>) {
    let objects = &ctx.bundle.objects;
    for (i, obj) in objects.iter().enumerate() {
        if !(obj.is_csv() || obj.is_crd()) {
            continue;
        }
        let Some(first) = objects[..i].iter().find(|o| o.file == obj.file) else {
            continue;
        };
        let consequence = if obj.is_csv() {
            "for them this bundle has no CSV"
        } else {
            "they never install this CRD"
        };
        ctx.push(
            Diagnostic::new(
                Rule::YamlMultiDocument,
                format!(
                    "this {} follows a {} in the same file: OLM v0 and opm read only the first document of each file, so {consequence}; move it to a file of its own",
                    obj.kind, first.kind
                ),
            )
            .with_severity(Severity::Error)
            .at(&obj.file, obj.line()),
        );
    }
}

fn name_problem(kind: &str, name: &str) -> Option<String> {
    let result = match kind {
        "Service" => names::dns1035_label(name),
        // RBAC names are path segments: `system:metrics-reader` is fine.
        "ClusterRole" | "ClusterRoleBinding" | "Role" | "RoleBinding" => {
            if name.is_empty() {
                Err("must not be empty".into())
            } else if name == "." || name == ".." || name.contains('/') || name.contains('%') {
                Err("may not be '.' or '..' and may not contain '/' or '%'".into())
            } else {
                Ok(())
            }
        }
        _ => names::dns1123_subdomain(name),
    };
    result.err()
}

/// Labels and annotations as `ValidateObjectMeta` checks them.
fn object_metadata(ctx: &mut Ctx<'_>, obj: &Object) {
    for field in ["labels", "annotations"] {
        if let Some(node) = obj
            .root
            .path(&["metadata", field])
            .filter(|n| n.as_map().is_none() && !n.is_null())
        {
            ctx.push(
                Diagnostic::new(
                    Rule::ObjectMetadata,
                    format!(
                        "{} metadata.{field} must be a mapping of strings, found a {}",
                        obj.kind,
                        node.kind_name()
                    ),
                )
                .at(&obj.file, node.line),
            );
        }
    }
    if let Some(labels) = obj
        .root
        .path(&["metadata", "labels"])
        .and_then(Node::as_map)
    {
        for (key, value) in labels {
            if let Err(why) = names::qualified_name(&key.text) {
                ctx.push(
                    Diagnostic::new(
                        Rule::ObjectMetadata,
                        format!("{} label key \"{}\" is invalid: {why}", obj.kind, key.text),
                    )
                    .at(&obj.file, key.line),
                );
            }
            let text = value.scalar_text().unwrap_or("");
            if let Err(why) = names::label_value(text) {
                ctx.push(
                    Diagnostic::new(
                        Rule::ObjectMetadata,
                        format!(
                            "{} label {} has invalid value \"{text}\": {why}",
                            obj.kind, key.text
                        ),
                    )
                    .at(&obj.file, value.line),
                );
            }
        }
    }
    if let Some(annotations) = obj
        .root
        .path(&["metadata", "annotations"])
        .and_then(Node::as_map)
    {
        let mut total = 0usize;
        for (key, value) in annotations {
            total += key.text.len() + value.scalar_text().map_or(0, str::len);
            if let Err(why) = names::qualified_name(&key.text.to_ascii_lowercase()) {
                ctx.push(
                    Diagnostic::new(
                        Rule::ObjectMetadata,
                        format!(
                            "{} annotation key \"{}\" is invalid: {why}",
                            obj.kind, key.text
                        ),
                    )
                    .at(&obj.file, key.line),
                );
            }
        }
        if total > 256 * 1024 {
            ctx.push(
                Diagnostic::new(
                    Rule::ObjectMetadata,
                    format!(
                        "{} annotations total {total} bytes; Kubernetes allows at most 262144",
                        obj.kind
                    ),
                )
                .at(&obj.file, obj.line_of(&["metadata", "annotations"])),
            );
        }
    }
}

/// A ServiceAccount manifest named like one the CSV's deployments run as: OLM creates that
/// account from the CSV's permissions, and the manifest would fight it (API `bundle.go`).
fn service_accounts(ctx: &mut Ctx<'_>) {
    let Some(csv) = ctx.bundle.csv_view() else {
        return;
    };
    let mut from_csv = BTreeSet::new();
    for dep in csv.deployments() {
        if let Some(sa) = dep
            .spec
            .and_then(|s| s.path(&["template", "spec", "serviceAccountName"]))
            .and_then(Node::scalar_text)
        {
            from_csv.insert(sa.to_string());
        }
    }
    let bundle = ctx.bundle;
    for obj in bundle.objects.iter().filter(|o| o.kind == "ServiceAccount") {
        let Some(name) = obj.name.as_deref() else {
            continue;
        };
        if from_csv.contains(name) {
            ctx.push(
                Diagnostic::new(
                    Rule::ServiceAccountClash,
                    format!("ServiceAccount \"{name}\" is also the service account of a deployment in the CSV, and OLM creates that one: remove this manifest, or rename the account in the manifest or the CSV"),
                )
                .at(&obj.file, obj.line()),
            );
        }
    }
}

fn deprecated_api(ctx: &mut Ctx<'_>, obj: &Object) {
    if obj.is_crd() {
        return; // crd/api-version covers CRDs with a fix-it message of its own
    }
    let Some(removal) = crate::validate::target::matrix::removed_api(&obj.api_version, &obj.kind)
    else {
        return;
    };
    let minor = removal.removed_in;
    ctx.removed_api(
        Diagnostic::new(
            Rule::DeprecatedApi,
            format!(
                "{} {} uses {}, which was removed in Kubernetes v1.{minor}: migrate it (see https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-{minor})",
                obj.kind,
                obj.name.as_deref().unwrap_or(""),
                obj.api_version
            ),
        )
        .at(&obj.file, obj.line_of(&["apiVersion"])),
        minor,
    );
}
