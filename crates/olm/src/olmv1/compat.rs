//! What OLM v1's installer refuses beyond the renderer (`applier/provider.go`,
//! `resolve/validation.go`): owned APIServices, webhooks without a certificate provider, bundles
//! without AllNamespaces while single/own-namespace support is behind an alpha feature gate,
//! MultiNamespace-only bundles, dependencies, and v1beta1 CRDs. Each refusal carries the file
//! and line it is about and upstream's words.

use crate::bundle::{Bundle, Csv};
use crate::catalog::model::property_type::{
    CONSTRAINT, GVK, GVK_REQUIRED, PACKAGE, PACKAGE_REQUIRED,
};
use crate::yaml::Node;

/// Which refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Owned APIServices.
    ApiService,
    /// Webhooks need a certificate provider on the cluster.
    WebhookCertProvider,
    /// No AllNamespaces support (single/own namespace is an alpha feature gate).
    NoAllNamespaces,
    /// Only MultiNamespace.
    MultiNamespaceOnly,
    /// A dependency property.
    Dependency,
    /// A v1beta1 CRD.
    CrdV1beta1,
}

/// One refusal with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Which refusal.
    pub refusal: Refusal,
    /// Upstream's words, with what to know.
    pub message: String,
    /// File relative to the bundle root.
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

/// The property types OLM v1 refuses (`NoDependencyValidation`).
pub const DEPENDENCY_PROPERTIES: [&str; 3] = [PACKAGE_REQUIRED, GVK_REQUIRED, CONSTRAINT];

/// `NoDependencyValidation`'s message.
pub fn dependency_message(bundle_name: &str, property: &str) -> String {
    format!(
        "bundle {} has a dependency declared via property {} which is currently not supported",
        crate::gocompat::quote::go_quote_short(bundle_name),
        crate::gocompat::quote::go_quote_short(property)
    )
}

/// The install-mode refusals for a set of supported modes (`None`: installable).
pub fn install_mode_refusal(supported: &[&str]) -> Option<(Refusal, &'static str)> {
    if supported.contains(&"AllNamespaces") {
        return None;
    }
    if !supported
        .iter()
        .any(|m| matches!(*m, "SingleNamespace" | "OwnNamespace"))
    {
        return Some((
            Refusal::MultiNamespaceOnly,
            "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes",
        ));
    }
    Some((
        Refusal::NoAllNamespaces,
        "unsupported bundle: bundle does not support AllNamespaces install mode (single- and own-namespace installs need the alpha feature gate SingleOwnNamespaceInstallSupport, off by default)",
    ))
}

/// Every installer refusal of a loaded bundle folder.
pub fn installer_findings(bundle: &Bundle) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(csv) = bundle.csv_view() {
        csv_findings(&csv, &mut out);
        dependency_findings(bundle, &csv, &mut out);
    }
    for crd in bundle.crds() {
        if crd.api_version == "apiextensions.k8s.io/v1beta1" {
            out.push(Finding {
                refusal: Refusal::CrdV1beta1,
                message: format!(
                    "CRD {} is apiextensions.k8s.io/v1beta1: OLM v1 decodes it as v1 (dropping v1beta1-only fields such as spec.validation) and Kubernetes 1.22+ no longer serves v1beta1 CRDs",
                    crd.name.as_deref().unwrap_or("")
                ),
                file: crd.file.clone(),
                line: crd.line_of(&["apiVersion"]),
            });
        }
    }
    out
}

fn csv_findings(csv: &Csv<'_>, out: &mut Vec<Finding>) {
    let file = csv.object.file.clone();
    if let Some(api) = csv.owned_apis().first() {
        out.push(Finding {
            refusal: Refusal::ApiService,
            message: "unsupported bundle: apiServiceDefintions are not supported".into(),
            file: file.clone(),
            line: api.pos.line,
        });
    }
    if let Some(w) = csv.webhooks().first() {
        out.push(Finding {
            refusal: Refusal::WebhookCertProvider,
            message: "the bundle has webhooks: without a certificate provider OLM v1 refuses it (\"unsupported bundle: webhookDefinitions are not supported: certificate provider is nil\"); the cluster needs cert-manager (or OpenShift's service-ca)".into(),
            file: file.clone(),
            line: w.pos.line,
        });
    }
    let supported = csv.supported_modes();
    if let Some((refusal, message)) = install_mode_refusal(&supported) {
        out.push(Finding {
            refusal,
            message: message.into(),
            file,
            line: csv.pos_of(&["spec", "installModes"]).line,
        });
    }
}

fn dependency_findings(bundle: &Bundle, csv: &Csv<'_>, out: &mut Vec<Finding>) {
    let name = csv.name();
    let mut push = |property: &str, file: &str, line: usize| {
        out.push(Finding {
            refusal: Refusal::Dependency,
            message: dependency_message(name, property),
            file: file.to_string(),
            line,
        })
    };
    if let Some(first) = csv.required_crds().first() {
        push(GVK_REQUIRED, &csv.object.file, first.pos.line);
    } else if let Some(first) = csv.required_apis().first() {
        push(GVK_REQUIRED, &csv.object.file, first.pos.line);
    }
    if let Some(deps) = &bundle.dependencies {
        for d in deps
            .root
            .get("dependencies")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            let property = match d.get("type").and_then(Node::scalar_text) {
                Some(PACKAGE) => PACKAGE_REQUIRED,
                Some(GVK) => GVK_REQUIRED,
                Some(CONSTRAINT) => CONSTRAINT,
                _ => continue,
            };
            push(property, &deps.file, d.line);
        }
    }
    if let Some(props) = &bundle.properties {
        for p in props
            .root
            .get("properties")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            if let Some(t) = p.get("type").and_then(Node::scalar_text)
                && DEPENDENCY_PROPERTIES.contains(&t)
            {
                push(t, &props.file, p.line);
            }
        }
    }
    if let Some(text) = csv.annotation(crate::bundle::keys::OLM_PROPERTIES)
        && let Ok(serde_json::Value::Array(items)) = serde_json::from_str(text)
    {
        let line = csv
            .pos_of(&[
                "metadata",
                "annotations",
                crate::bundle::keys::OLM_PROPERTIES,
            ])
            .line;
        for item in items {
            if let Some(t) = item.get("type").and_then(serde_json::Value::as_str)
                && DEPENDENCY_PROPERTIES.contains(&t)
            {
                push(t, &csv.object.file, line);
            }
        }
    }
}
