//! The renderer's bundle validators (`validators/validator.go`), in `registryv1.go` order, with
//! their exact messages and ordering. Each violation also says which check produced it and
//! where in the bundle it points, so the `olmv1` rules can report file and line.

use super::load::{Origin, RegistryV1, str_of};
use crate::gocompat::quote::go_quote_short as go_quote;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The thirteen checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// `CheckDeploymentSpecUniqueness`.
    DeploymentUnique,
    /// `CheckDeploymentNameIsDNS1123SubDomain`.
    DeploymentName,
    /// `CheckCRDResourceUniqueness`.
    CrdUnique,
    /// `CheckOwnedCRDExistence`.
    OwnedCrdExists,
    /// `CheckPackageNameNotEmpty`.
    PackageName,
    /// `CheckConversionWebhookSupport`.
    ConversionWebhookModes,
    /// `CheckWebhookDeploymentReferentialIntegrity`.
    WebhookDeployment,
    /// `CheckWebhookNameUniqueness`.
    WebhookUnique,
    /// `CheckWebhookNameIsDNS1123SubDomain`.
    WebhookName,
    /// `CheckConversionWebhookCRDReferenceUniqueness`.
    ConversionCrdUnique,
    /// `CheckConversionWebhooksReferenceOwnedCRDs`.
    ConversionCrdOwned,
    /// `CheckWebhookRules`.
    WebhookRules,
    /// `CheckObjectSupport`.
    ObjectSupport,
}

/// One message of one check.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The check.
    pub check: Check,
    /// The renderer's message.
    pub message: String,
    /// The object it points at (the CSV unless another object is at fault).
    pub origin: Option<Origin>,
    /// What it is about (a deployment, webhook or CRD name), to find its line.
    pub subject: String,
}

/// The object kinds operator-registry's `IsSupported` accepts, and whether each is namespaced.
pub const SUPPORTED_KINDS: &[(&str, bool)] = &[
    ("ClusterServiceVersion", false),
    ("CustomResourceDefinition", false),
    ("Secret", true),
    ("ClusterRole", false),
    ("ClusterRoleBinding", false),
    ("ConfigMap", true),
    ("ServiceAccount", true),
    ("Service", true),
    ("Role", true),
    ("RoleBinding", true),
    ("PrometheusRule", true),
    ("ServiceMonitor", true),
    ("PodDisruptionBudget", true),
    ("PriorityClass", false),
    ("VerticalPodAutoscaler", false),
    ("ConsoleYAMLSample", false),
    ("ConsoleQuickStart", false),
    ("ConsoleCLIDownload", false),
    ("ConsoleLink", false),
    ("ConsolePlugin", false),
    ("NetworkPolicy", true),
    ("PodMonitor", true),
];

/// `IsSupported(kind)`: (supported, namespaced).
pub fn is_supported(kind: &str) -> (bool, bool) {
    SUPPORTED_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or((false, false), |(_, ns)| (true, *ns))
}

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `validation.IsDNS1123Subdomain`, its messages sorted as the validators sort them.
pub fn dns1123_subdomain_errors(name: &str) -> Vec<String> {
    let mut errs = dns1123_subdomain_messages(name);
    errs.sort();
    errs
}

/// `validation.IsDNS1123Subdomain`'s messages in Go's order (the length first), as catalogd's
/// server answers them for a catalog name; one check for the validators and the server.
pub fn dns1123_subdomain_messages(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
            && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    };
    if !name.split('.').all(label_ok) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

/// Runs every check in the renderer's order; empty when the bundle passes.
pub fn validate(rv1: &RegistryV1) -> Vec<Violation> {
    let csv = rv1.csv_origin.clone();
    let mut out = Vec::new();
    let mut push = |check: Check, message: String, origin: Option<Origin>, subject: &str| {
        out.push(Violation {
            check,
            message,
            origin,
            subject: subject.to_string(),
        })
    };
    let dep_names: Vec<&str> = rv1.deployments.iter().map(|d| str_of(d, "name")).collect();

    // 1. duplicate deployments
    let mut seen = BTreeSet::new();
    let mut dups = BTreeSet::new();
    for n in &dep_names {
        if !seen.insert(*n) {
            dups.insert(*n);
        }
    }
    for d in dups {
        push(
            Check::DeploymentUnique,
            format!("cluster service version contains duplicate strategy deployment spec '{d}'"),
            csv.clone(),
            d,
        );
    }
    // 2. deployment names
    let mut bad: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for n in &dep_names {
        let errs = dns1123_subdomain_errors(n);
        if !errs.is_empty() {
            bad.insert(n, errs);
        }
    }
    for (n, errs) in bad {
        push(
            Check::DeploymentName,
            format!(
                "invalid cluster service version strategy deployment name '{n}': {}",
                errs.join(", ")
            ),
            csv.clone(),
            n,
        );
    }
    // 3. duplicate CRDs
    let crd_name = |c: &Value| {
        c.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut seen = BTreeSet::new();
    let mut dups: BTreeMap<String, Origin> = BTreeMap::new();
    for (c, origin) in &rv1.crds {
        let n = crd_name(c);
        if !seen.insert(n.clone()) {
            dups.insert(n, origin.clone());
        }
    }
    for (d, origin) in dups {
        push(
            Check::CrdUnique,
            format!("bundle contains duplicate custom resource definition '{d}'"),
            Some(origin),
            &d,
        );
    }
    // 4. owned CRDs present
    let names: BTreeSet<String> = rv1.crds.iter().map(|(c, _)| crd_name(c)).collect();
    let missing: BTreeSet<&String> = rv1
        .owned_crds
        .iter()
        .filter(|o| !names.contains(*o))
        .collect();
    for m in missing {
        push(
            Check::OwnedCrdExists,
            format!(
                "cluster service definition references owned custom resource definition '{m}' not found in bundle"
            ),
            csv.clone(),
            m,
        );
    }
    // 5. package name
    if rv1.package.is_empty() {
        push(Check::PackageName, "package name is empty".into(), None, "");
    }
    // 6. conversion webhooks need AllNamespaces only
    let conversion: Vec<&Value> = rv1
        .webhooks
        .iter()
        .filter(|w| str_of(w, "type") == "ConversionWebhook")
        .collect();
    if !conversion.is_empty() {
        let modes = rv1.supported_modes();
        if !(modes.len() == 1 && modes[0] == "AllNamespaces") {
            for w in &conversion {
                let name = str_of(w, "generateName");
                push(
                    Check::ConversionWebhookModes,
                    format!(
                        "bundle contains conversion webhook {} and supports install modes [{}] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode",
                        go_quote(name),
                        modes.join(" ")
                    ),
                    csv.clone(),
                    name,
                );
            }
        }
    }
    // 7. webhook deployments exist
    let mut by_dep: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for w in &rv1.webhooks {
        by_dep
            .entry(str_of(w, "deploymentName"))
            .or_default()
            .push(w);
    }
    for n in &dep_names {
        by_dep.remove(n);
    }
    for (dep, mut whs) in by_dep {
        whs.sort_by(|a, b| {
            (str_of(a, "type"), str_of(a, "generateName"))
                .cmp(&(str_of(b, "type"), str_of(b, "generateName")))
        });
        for w in whs {
            push(
                Check::WebhookDeployment,
                format!(
                    "webhook of type '{}' with name '{}' references non-existent deployment '{dep}'",
                    str_of(w, "type"),
                    str_of(w, "generateName")
                ),
                csv.clone(),
                str_of(w, "generateName"),
            );
        }
    }
    // 8. webhook names unique per type
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut dups: BTreeSet<(&str, &str)> = BTreeSet::new();
    for w in &rv1.webhooks {
        let key = (str_of(w, "type"), str_of(w, "generateName"));
        if !seen.insert(key) {
            dups.insert(key);
        }
    }
    for (t, n) in dups {
        push(
            Check::WebhookUnique,
            format!("duplicate webhook '{n}' of type '{t}'"),
            csv.clone(),
            n,
        );
    }
    // 9. webhook names
    let mut bad: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for w in &rv1.webhooks {
        let n = str_of(w, "generateName");
        let errs = dns1123_subdomain_errors(n);
        if !errs.is_empty() {
            bad.insert((str_of(w, "type"), n), errs);
        }
    }
    for ((t, n), errs) in bad {
        push(
            Check::WebhookName,
            format!(
                "webhook of type '{t}' has invalid name '{n}': {}",
                errs.join(",")
            ),
            csv.clone(),
            n,
        );
    }
    // 10. a CRD converted by one webhook only
    let mut crd_to_wh: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for w in &conversion {
        for c in strings(w.get("conversionCRDs")) {
            crd_to_wh
                .entry(c)
                .or_default()
                .push(str_of(w, "generateName"));
        }
    }
    for (crd, mut whs) in crd_to_wh {
        if whs.len() == 1 {
            continue;
        }
        whs.sort();
        push(
            Check::ConversionCrdUnique,
            format!(
                "conversion webhooks [{}] reference same custom resource definition '{crd}'",
                whs.join(",")
            ),
            csv.clone(),
            crd,
        );
    }
    // 11. converted CRDs are owned
    let mut sorted = conversion.clone();
    sorted.sort_by(|a, b| str_of(a, "generateName").cmp(str_of(b, "generateName")));
    for w in sorted {
        let mut crds = strings(w.get("conversionCRDs"));
        crds.sort();
        for c in crds {
            if !rv1.owned_crds.iter().any(|o| o == c) {
                push(
                    Check::ConversionCrdOwned,
                    format!(
                        "conversion webhook '{}' references custom resource definition '{c}' not owned bundle",
                        str_of(w, "generateName")
                    ),
                    csv.clone(),
                    str_of(w, "generateName"),
                );
            }
        }
    }
    // 12. admission webhook rules
    for w in &rv1.webhooks {
        if str_of(w, "type") == "ConversionWebhook" {
            continue;
        }
        let name = str_of(w, "generateName");
        for rule in w
            .get("rules")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            for group in strings(rule.get("apiGroups")) {
                if group == "*" || group == "olm.operatorframework.io" {
                    push(
                        Check::WebhookRules,
                        format!(
                            "webhook {} contains forbidden rule: admission webhook rules cannot reference API group {}",
                            go_quote(name),
                            go_quote(group)
                        ),
                        csv.clone(),
                        name,
                    );
                }
                if group == "admissionregistration.k8s.io" {
                    for res in strings(rule.get("resources")) {
                        let lower = res.to_lowercase();
                        if matches!(
                            lower.as_str(),
                            "*" | "mutatingwebhookconfiguration"
                                | "mutatingwebhookconfigurations"
                                | "validatingwebhookconfiguration"
                                | "validatingwebhookconfigurations"
                        ) {
                            push(
                                Check::WebhookRules,
                                format!(
                                    "webhook {} contains forbidden rule: admission webhook rules cannot reference resource {} for API group {}",
                                    go_quote(name),
                                    go_quote(res),
                                    go_quote(group)
                                ),
                                csv.clone(),
                                name,
                            );
                        }
                    }
                }
            }
        }
    }
    // 13. supported kinds
    for (o, origin) in &rv1.others {
        let kind = str_of(o, "kind");
        if !is_supported(kind).0 {
            let name = o
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            push(
                Check::ObjectSupport,
                format!(
                    "unsupported resource {} with kind {}",
                    go_quote(name),
                    go_quote(kind)
                ),
                Some(origin.clone()),
                name,
            );
        }
    }
    out
}

/// The strings of a JSON list.
pub fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
