//! Install sketches (`catalog mirror --install-sketches DIR`): for each package a run
//! mirrored, the objects that install it from the mirrored catalog, which neither oc-mirror
//! nor `oc adm catalog mirror` writes:
//!
//! - OLM v1: a `ClusterExtension` (`olm.operatorframework.io/v1`) naming the package, the
//!   channel the run kept and, when a filter chose versions, their range; its catalog is the
//!   mirrored `ClusterCatalog`, selected by the `olm.operatorframework.io/metadata.name` label
//!   catalogd puts on every ClusterCatalog; its `serviceAccount` is a placeholder to create
//!   with the permissions the bundle needs (OLM v1 installs with it, not with its own rights).
//! - OLM v0: an `OperatorGroup` and a `Subscription` (`operators.coreos.com`) in a namespace
//!   named after the package, subscribing to that channel from the mirrored `CatalogSource`
//!   in `openshift-marketplace`; the OperatorGroup targets every namespace when the channel
//!   head supports `AllNamespaces`, else its own namespace.
//!
//! Sketches: a starting point the user edits (namespace, approval, service account), written
//! as the results are, without status fields or timestamps.

use crate::catalog::model::DeclarativeConfig;
use serde_json::{Value, json};

/// What a run mirrored of one package, as the install objects need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageChoice {
    /// The package name.
    pub package: String,
    /// The channel to subscribe to: the package's default channel in the mirrored catalog.
    pub channel: String,
    /// The versions mirrored in that channel (`>=LOW, <=HIGH`) when a filter chose them; none
    /// when the whole channel was mirrored.
    pub version: Option<String>,
    /// The install modes the channel head supports (`AllNamespaces`, `OwnNamespace`, ...).
    pub install_modes: Vec<String>,
}

/// Each package of the mirrored (filtered, when `filtered`) catalog: its default channel, the
/// version range kept in it, and its head's install modes; in package name order.
pub fn choices(cfg: &DeclarativeConfig, filtered: bool) -> Vec<PackageChoice> {
    let mut out = Vec::new();
    for p in &cfg.packages {
        let channel = if p.default_channel.is_empty() {
            cfg.channels
                .iter()
                .find(|c| c.package == p.name)
                .map(|c| c.name.clone())
                .unwrap_or_default()
        } else {
            p.default_channel.clone()
        };
        let names: Vec<&str> = cfg
            .channels
            .iter()
            .filter(|c| c.package == p.name && c.name == channel)
            .flat_map(|c| c.entries.iter().flatten())
            .map(|e| e.name.as_str())
            .collect();
        let mut bundles: Vec<_> = cfg
            .bundles
            .iter()
            .filter(|b| b.package == p.name && names.contains(&b.name.as_str()))
            .filter_map(|b| b.version().map(|v| (v, b)))
            .collect();
        bundles.sort_by(|a, b| a.0.cmp(&b.0));
        let version = match (filtered, bundles.first(), bundles.last()) {
            (true, Some((low, _)), Some((high, _))) if low == high => Some(low.to_string()),
            (true, Some((low, _)), Some((high, _))) => Some(format!(">={low}, <={high}")),
            _ => None,
        };
        let install_modes = bundles
            .last()
            .map(|(_, b)| install_modes(b))
            .unwrap_or_default();
        out.push(PackageChoice {
            package: p.name.clone(),
            channel,
            version,
            install_modes,
        });
    }
    out.sort_by(|a, b| a.package.cmp(&b.package));
    out
}

/// The supported install modes of a catalog bundle: from its `olm.csv.metadata` property,
/// else from the CSV it carries.
fn install_modes(b: &crate::catalog::model::Bundle) -> Vec<String> {
    let from = |v: &Value, pointer: &str| -> Vec<String> {
        v.pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| m.get("supported").and_then(Value::as_bool) == Some(true))
            .filter_map(|m| m.get("type").and_then(Value::as_str).map(String::from))
            .collect()
    };
    for p in b.properties_of("olm.csv.metadata") {
        if let Ok(v) = serde_json::from_str::<Value>(p.1.value.get()) {
            return from(&v, "/installModes");
        }
    }
    b.csv_json()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .map(|v| from(&v, "/spec/installModes"))
        .unwrap_or_default()
}

/// The two sketch files of each package, by file name below the sketches folder
/// (`<catalog>/<package>.clusterextension.yaml`, `<catalog>/<package>.subscription.yaml`),
/// for the catalog mirrored as the `CatalogSource` and `ClusterCatalog` named `catalog`.
pub fn files(catalog: &str, choices: &[PackageChoice]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for c in choices {
        let namespace = c.package.clone();
        let mut source = json!({
            "sourceType": "Catalog",
            "catalog": {
                "packageName": c.package,
                "channels": [c.channel],
                "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": catalog}},
            },
        });
        if let Some(v) = &c.version {
            source["catalog"]["version"] = json!(v);
        }
        let extension = json!({
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterExtension",
            "metadata": {"name": c.package},
            "spec": {
                "namespace": namespace,
                "serviceAccount": {"name": format!("{}-installer", c.package)},
                "source": source,
            },
        });
        let mut group_spec = json!({});
        if !c.install_modes.iter().any(|m| m == "AllNamespaces") {
            group_spec = json!({"targetNamespaces": [namespace]});
        }
        let group = json!({
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": c.package, "namespace": namespace},
            "spec": group_spec,
        });
        let subscription = json!({
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": c.package, "namespace": namespace},
            "spec": {
                "channel": c.channel,
                "name": c.package,
                "source": catalog,
                "sourceNamespace": "openshift-marketplace",
            },
        });
        out.push((
            format!("{catalog}/{}.clusterextension.yaml", c.package),
            yaml(&[extension]),
        ));
        out.push((
            format!("{catalog}/{}.subscription.yaml", c.package),
            yaml(&[group, subscription]),
        ));
    }
    out
}

/// Documents as one YAML stream (`---` between them), written as the results are.
fn yaml(docs: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"---\n");
        }
        crate::gocompat::goyaml::emit::json_to_yaml(&mut out, d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_extension_and_one_subscription_per_package() {
        let text = r#"{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.2.0","replaces":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"q/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.v1.2.0","package":"p","image":"q/p:2","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.2.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"OwnNamespace","supported":true},{"type":"AllNamespaces","supported":false}]}}]}
"#;
        let loaded = crate::catalog::load::load_bytes("c.json", text.as_bytes());
        let c = choices(&loaded.config, true);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].channel, "stable");
        assert_eq!(c[0].version.as_deref(), Some(">=1.0.0, <=1.2.0"));
        assert_eq!(c[0].install_modes, ["OwnNamespace"]);
        let files = files("cat-v1", &c);
        let ext = String::from_utf8(files[0].1.clone()).unwrap();
        assert!(
            ext.contains("olm.operatorframework.io/metadata.name: cat-v1"),
            "{ext}"
        );
        let sub = String::from_utf8(files[1].1.clone()).unwrap();
        assert!(
            sub.contains("targetNamespaces:") && sub.contains("source: cat-v1"),
            "{sub}"
        );
        assert!(choices(&loaded.config, false)[0].version.is_none());
    }
}
