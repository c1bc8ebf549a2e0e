//! The typed view of a ClusterServiceVersion held as JSON: the CSV inside a catalog (its
//! `olm.bundle.object` properties and opm's `CsvJSON`), in an sqlite index, or decoded from a
//! bundle for OLM v1. It names the same parts as the YAML view ([`crate::bundle::Csv`]), read
//! the same way (keys exactly as Kubernetes' typed decoding reads them), so no reader outside
//! `bundle/` spells a CSV path. Readers that must reproduce Go's `encoding/json` errors or its
//! any-case field matching (the images rules in [`crate::bundle::images`], opm's render) keep
//! their own decoding, which says so.

use serde_json::{Map, Value};

/// The kind that makes an object a CSV (OLM decides by kind alone).
pub const KIND: &str = "ClusterServiceVersion";

/// A CSV as decoded JSON.
#[derive(Debug, Clone, Copy)]
pub struct CsvJson<'a> {
    /// The whole object.
    pub value: &'a Value,
}

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

impl<'a> CsvJson<'a> {
    /// A view of `value`; `None` unless it is an object whose `kind` is
    /// `ClusterServiceVersion`.
    pub fn new(value: &'a Value) -> Option<CsvJson<'a>> {
        (value.get("kind").and_then(Value::as_str) == Some(KIND)).then_some(CsvJson { value })
    }

    /// A view of `value` whatever its kind (a bundle's CSV already picked out by its kind,
    /// or a stored CSV JSON).
    pub fn any(value: &'a Value) -> CsvJson<'a> {
        CsvJson { value }
    }

    /// `metadata`, when present.
    pub fn metadata(&self) -> Option<&'a Value> {
        self.value.get("metadata")
    }

    /// `metadata.name` (empty when absent or not a string).
    pub fn name(&self) -> &'a str {
        text(self.metadata().and_then(|m| m.get("name")))
    }

    /// `metadata.annotations`, when a mapping.
    pub fn annotations(&self) -> Option<&'a Map<String, Value>> {
        self.metadata()
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object)
    }

    /// One annotation, when set to a string.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.annotations()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    }

    /// `spec`, when present.
    pub fn spec(&self) -> Option<&'a Value> {
        self.value.get("spec")
    }

    /// A member of `spec`, when present.
    pub fn spec_field(&self, key: &str) -> Option<&'a Value> {
        self.spec().and_then(|s| s.get(key))
    }

    /// `spec.install.spec`, the deployment strategy's details.
    pub fn strategy(&self) -> Option<&'a Value> {
        self.spec_field("install").and_then(|i| i.get("spec"))
    }

    /// `spec.install.spec.deployments`, as written.
    pub fn deployments(&self) -> Option<&'a Value> {
        self.strategy().and_then(|s| s.get("deployments"))
    }

    /// `spec.install.spec.permissions`, as written.
    pub fn permissions(&self) -> Option<&'a Value> {
        self.strategy().and_then(|s| s.get("permissions"))
    }

    /// `spec.install.spec.clusterPermissions`, as written.
    pub fn cluster_permissions(&self) -> Option<&'a Value> {
        self.strategy().and_then(|s| s.get("clusterPermissions"))
    }

    /// `spec.webhookdefinitions`, as written.
    pub fn webhooks(&self) -> Option<&'a Value> {
        self.spec_field("webhookdefinitions")
    }

    /// `spec.replaces` (empty when absent or not a string).
    pub fn replaces(&self) -> &'a str {
        text(self.spec_field("replaces"))
    }

    /// `spec.skips`, the string entries in order.
    pub fn skips(&self) -> Vec<&'a str> {
        self.spec_field("skips")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_parts_the_yaml_view_reads() {
        let v = json!({"kind": KIND, "metadata": {"name": "op.v1", "annotations": {"a": "b", "n": 1}},
            "spec": {"replaces": "op.v0", "skips": ["x", 2, "y"],
                "install": {"strategy": "deployment", "spec": {"deployments": [], "permissions": [{}]}}}});
        let csv = CsvJson::new(&v).expect("a CSV");
        assert_eq!(csv.name(), "op.v1");
        assert_eq!(csv.annotation("a"), Some("b"));
        assert_eq!(csv.annotation("n"), None);
        assert_eq!(csv.replaces(), "op.v0");
        assert_eq!(csv.skips(), ["x", "y"]);
        assert_eq!(csv.deployments(), Some(&json!([])));
        assert_eq!(csv.permissions(), Some(&json!([{}])));
        assert!(csv.cluster_permissions().is_none());
        assert!(CsvJson::new(&json!({"kind": "Deployment"})).is_none());
    }
}
