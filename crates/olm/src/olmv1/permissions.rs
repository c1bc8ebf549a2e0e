//! What the operator will be allowed to do: the rules of every rendered Role and ClusterRole
//! that a rendered binding grants, grouped by scope (cluster-wide or a namespace), API group and
//! verb, with wildcards flagged, so a reviewer sees the blast radius without reading YAML.

use super::RenderedObject;
use super::validators::strings;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The rules granted in one scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scope {
    /// `cluster` or `namespace <name>`.
    pub scope: String,
    /// Who receives them (`namespace/serviceaccount`).
    pub subjects: BTreeSet<String>,
    /// API group (`core` for `""`) → verb → resources (with `/subresource` and
    /// `resourceNames` as `resource[name]`).
    pub groups: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// Non-resource URLs by verb.
    pub non_resource_urls: BTreeMap<String, BTreeSet<String>>,
    /// Human-readable wildcard grants (`*` in groups, resources or verbs).
    pub wildcards: BTreeSet<String>,
}

/// The summary of a render.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Cluster-wide first, then namespaces in name order.
    pub scopes: Vec<Scope>,
}

/// Summarizes the RBAC of a render.
pub fn summarize(objects: &[RenderedObject]) -> Summary {
    let find = |kind: &str, ns: &str, name: &str| {
        objects.iter().find(|o| {
            o.kind == kind && o.name == name && (kind == "ClusterRole" || o.namespace == ns)
        })
    };
    let mut scopes: BTreeMap<(u8, String), Scope> = BTreeMap::new();
    for b in objects
        .iter()
        .filter(|o| o.kind == "ClusterRoleBinding" || o.kind == "RoleBinding")
    {
        let role_kind = b
            .value
            .pointer("/roleRef/kind")
            .and_then(Value::as_str)
            .unwrap_or("");
        let role_name = b
            .value
            .pointer("/roleRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let key = if b.kind == "ClusterRoleBinding" {
            (0, "cluster".to_string())
        } else {
            (1, format!("namespace {}", b.namespace))
        };
        let Some(role) = find(role_kind, &b.namespace, role_name) else {
            continue;
        };
        let scope = scopes.entry(key.clone()).or_insert_with(|| Scope {
            scope: key.1.clone(),
            ..Scope::default()
        });
        for s in b
            .value
            .get("subjects")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let ns = s.get("namespace").and_then(Value::as_str).unwrap_or("");
            let name = s.get("name").and_then(Value::as_str).unwrap_or("");
            scope.subjects.insert(format!("{ns}/{name}"));
        }
        for rule in role
            .value
            .get("rules")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            add_rule(scope, rule);
        }
    }
    Summary {
        scopes: scopes.into_values().collect(),
    }
}

fn add_rule(scope: &mut Scope, rule: &Value) {
    let verbs = strings(rule.get("verbs"));
    let groups = strings(rule.get("apiGroups"));
    let resources = strings(rule.get("resources"));
    let names = strings(rule.get("resourceNames"));
    let urls = strings(rule.get("nonResourceURLs"));
    for v in &verbs {
        for u in &urls {
            scope
                .non_resource_urls
                .entry(v.to_string())
                .or_default()
                .insert(u.to_string());
        }
    }
    if verbs.contains(&"*") {
        scope.wildcards.insert(format!(
            "every verb on {} in {}",
            resources.join(", "),
            groups_text(&groups)
        ));
    }
    if groups.contains(&"*") {
        scope.wildcards.insert(format!(
            "every API group ({} on {})",
            verbs.join(", "),
            resources.join(", ")
        ));
    }
    if resources.contains(&"*") {
        scope.wildcards.insert(format!(
            "every resource in {} ({})",
            groups_text(&groups),
            verbs.join(", ")
        ));
    }
    for g in &groups {
        let group = if g.is_empty() { "core" } else { g };
        let by_verb = scope.groups.entry(group.to_string()).or_default();
        for v in &verbs {
            let set = by_verb.entry(v.to_string()).or_default();
            for r in &resources {
                if names.is_empty() {
                    set.insert(r.to_string());
                } else {
                    for n in &names {
                        set.insert(format!("{r}[{n}]"));
                    }
                }
            }
        }
    }
}

fn groups_text(groups: &[&str]) -> String {
    groups
        .iter()
        .map(|g| if g.is_empty() { "core" } else { g })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary as text: one block per scope, one line per API group and verb.
pub fn to_text(summary: &Summary) -> String {
    let mut out = String::new();
    if summary.scopes.is_empty() {
        out.push_str("no RBAC is granted\n");
    }
    for s in &summary.scopes {
        let who: Vec<&str> = s.subjects.iter().map(String::as_str).collect();
        out.push_str(&format!(
            "{} (service accounts: {})\n",
            s.scope,
            who.join(", ")
        ));
        for w in &s.wildcards {
            out.push_str(&format!("  WILDCARD: {w}\n"));
        }
        for (group, verbs) in &s.groups {
            out.push_str(&format!("  {group}\n"));
            for (verb, res) in verbs {
                let flag = if verb == "*" || group == "*" || res.contains("*") {
                    "  [wildcard]"
                } else {
                    ""
                };
                let res: Vec<&str> = res.iter().map(String::as_str).collect();
                out.push_str(&format!("    {verb}: {}{flag}\n", res.join(", ")));
            }
        }
        for (verb, urls) in &s.non_resource_urls {
            let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
            out.push_str(&format!(
                "  non-resource URLs {verb}: {}\n",
                urls.join(", ")
            ));
        }
    }
    out
}
