//! CRD upgrade safety before the cluster: operator-controller v1.11.0's `crdupgradesafety`
//! preflight (which runs sigs.k8s.io/crdify with OLM's configuration) replayed on two CRDs read
//! from files, so an unsafe channel edge is found when the catalog is built instead of when a
//! ClusterExtension upgrade fails.
//!
//! What it compares, as upstream does: the CRD-wide checks ([`crd`]), each version kept in both
//! CRDs property by property, and every pair of served versions of the new CRD (unless it
//! converts by webhook), minus the pair problems the old CRD already had. Each property goes
//! through crdify's comparators ([`property`]) and then the "unhandled" check of what is left.
//!
//! Offline differences, on purpose: the old CRD is the previous bundle's file, not the object
//! the API server holds, so its stored versions are its storage version(s) unless the file
//! has `status.storedVersions`; upstream's Go-map order of checks and properties is replaced by
//! a fixed order; "unhandled" names the changed fields as upstream's summary does but prints
//! lists and objects as `<complex value>` with the full values in [`Violation::detail`].

pub mod crd;
pub mod property;
pub mod schema;

use crd::{Crd, crd_wide};
use schema::{Props, flatten, go_name};
use serde_json::Value;
use std::collections::BTreeMap;

/// One problem the preflight would report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// The CRD's name.
    pub crd: String,
    /// crdify's validation name (`scope`, `enum`, `unhandled`, ...).
    pub check: &'static str,
    /// The version (`v1`), or the served pair (`v1 -> v2`), for property checks.
    pub version: Option<String>,
    /// The property's simple path (`^.spec.size`), for property checks.
    pub property: Option<String>,
    /// crdify's error text.
    pub message: String,
    /// The new CRD's file and the line of what changed there.
    pub file: String,
    /// 1-based line in `file`.
    pub line: usize,
    /// The old and new values, where upstream's text abbreviates them (unhandled changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Violation {
    /// The line as operator-controller joins it into its error (`version: property: check:
    /// message`, or `check: message` for CRD-wide checks).
    pub fn upstream_line(&self) -> String {
        match (&self.version, &self.property) {
            (Some(v), Some(p)) => format!("{v}: {p}: {}: {}", self.check, self.message),
            _ => format!("{}: {}", self.check, self.message),
        }
    }
}

/// operator-controller's whole error for one CRD: `validating upgrade for CRD "NAME": ` and
/// the lines joined by newlines (Go's `errors.Join`).
pub fn preflight_message(crd: &str, violations: &[Violation]) -> String {
    let lines: Vec<String> = violations.iter().map(Violation::upstream_line).collect();
    format!(
        "validating upgrade for CRD {}: {}",
        crate::gocompat::quote::go_quote(crd),
        lines.join("\n")
    )
}

/// Compares an installed CRD with its upgrade, as the preflight does.
pub fn check(old: &Crd, new: &Crd) -> Vec<Violation> {
    let mut out = Vec::new();
    let mk = |check, version: Option<String>, property: Option<String>, message, line, detail| {
        Violation {
            crd: new.name.clone(),
            check,
            version,
            property,
            message,
            file: new.file.clone(),
            line,
            detail,
        }
    };
    for (check, message, line) in crd_wide(old, new) {
        out.push(mk(check, None, None, message, line, None));
    }
    // Same versions: each old version the new CRD still has.
    for ov in &old.versions {
        let Some(nv) = new.version(&ov.name) else {
            continue;
        };
        for r in compare_versions(ov.schema, nv.schema) {
            out.push(mk(
                r.check,
                Some(ov.name.clone()),
                Some(r.property),
                r.message,
                r.line,
                r.detail,
            ));
        }
    }
    // Served versions: only without a conversion webhook (policy "Ignore").
    if new.conversion != "Webhook" {
        let known: BTreeMap<String, Vec<PropResult>> = served_pairs(old);
        for (pair, results) in served_pairs(new) {
            for r in results {
                let already = known.get(&pair).is_some_and(|k| {
                    k.iter().any(|o| {
                        o.property == r.property && o.check == r.check && o.message == r.message
                    })
                });
                if !already {
                    out.push(mk(
                        r.check,
                        Some(pair.clone()),
                        Some(r.property),
                        r.message,
                        r.line,
                        r.detail,
                    ));
                }
            }
        }
    }
    out
}

struct PropResult {
    property: String,
    check: &'static str,
    message: String,
    line: usize,
    detail: Option<String>,
}

/// Served versions of `crd`, sorted as Kubernetes sorts versions (alpha < beta < GA, then
/// major and minor; other names first, reverse alphabetical), each pair `a -> b` compared.
fn served_pairs(crd: &Crd) -> BTreeMap<String, Vec<PropResult>> {
    let mut served: Vec<_> = crd.versions.iter().filter(|v| v.served).collect();
    served.sort_by(|a, b| kube_version_cmp(&a.name, &b.name));
    let mut out = BTreeMap::new();
    for i in 0..served.len() {
        for j in i + 1..served.len() {
            let (a, b) = (served[i], served[j]);
            out.insert(
                format!("{} -> {}", a.name, b.name),
                compare_versions(a.schema, b.schema),
            );
        }
    }
    out
}

/// `k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings`.
pub fn kube_version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn parse(v: &str) -> Option<(u64, u8, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (kind, num) = if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else {
            return None;
        };
        if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some((major, kind, num.parse().ok()?))
    }
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((ma, ka, na)), Some((mb, kb, nb))) => ka.cmp(&kb).then(ma.cmp(&mb)).then(na.cmp(&nb)),
    }
}

/// crdify's `CompareVersions`: every property of the old schema that differs in the new one
/// (or is gone: compared with an empty schema) through the comparators, then "unhandled".
fn compare_versions(
    old: Option<&crate::yaml::Node>,
    new: Option<&crate::yaml::Node>,
) -> Vec<PropResult> {
    let (old_flat, new_flat) = (flatten(old), flatten(new));
    let mut out = Vec::new();
    for (path, o) in &old_flat {
        let (mut a, mut b, line) = match new_flat.get(path) {
            Some(n) if n.props == o.props => continue,
            Some(n) => (o.props.clone(), n.props.clone(), n.line),
            None => (
                o.props.clone(),
                Props::new(),
                surviving_parent_line(path, &new_flat),
            ),
        };
        for c in property::COMPARATORS {
            if let Some(message) = (c.compare)(&mut a, &mut b) {
                out.push(PropResult {
                    property: path.clone(),
                    check: c.name,
                    message,
                    line,
                    detail: None,
                });
            }
        }
        if a != b {
            let (message, detail) = unhandled(&a, &b);
            out.push(PropResult {
                property: path.clone(),
                check: "unhandled",
                message,
                line,
                detail: Some(detail),
            });
        }
    }
    out
}

/// The line of the nearest ancestor of `path` the new schema still has (what a removed
/// property is reported at).
pub(crate) fn surviving_parent_line(
    path: &str,
    flat: &BTreeMap<String, schema::FlatProp>,
) -> usize {
    let mut parent = path;
    while let Some(i) = parent.rfind('.') {
        parent = &parent[..i];
        if let Some(p) = flat.get(parent) {
            return p.line;
        }
    }
    flat.get("^").map_or(1, |p| p.line)
}

/// operator-controller's concise "unhandled" text (`unhandled changes found (Format "" ->
/// "email")`) and the whole story: each changed field's old and new JSON.
fn unhandled(a: &Props, b: &Props) -> (String, String) {
    let mut keys: Vec<&str> = a.keys().chain(b.keys()).copied().collect();
    let order = |k: &str| {
        schema::FIELDS
            .iter()
            .position(|(f, _, _)| *f == k)
            .unwrap_or(usize::MAX)
    };
    keys.sort_by_key(|k| order(k));
    keys.dedup();
    let mut summary = Vec::new();
    let mut detail = Vec::new();
    for k in keys {
        let (x, y) = (a.get(k), b.get(k));
        if x == y {
            continue;
        }
        let (gx, gy) = (go_value(k, x), go_value(k, y));
        let after = if gx == gy {
            format!("{gy} (changed)")
        } else {
            gy
        };
        summary.push(format!("{} {gx} -> {after}", go_name(k)));
        let js = |v: Option<&Value>| v.map_or("(none)".to_string(), |v| v.to_string());
        detail.push(format!("{k}: {} -> {}", js(x), js(y)));
    }
    let message = if summary.is_empty() {
        "unhandled changes found".to_string()
    } else {
        format!("unhandled changes found ({})", summary.join("; "))
    };
    (message, detail.join("; "))
}

/// How go-cmp prints a field's value, after operator-controller's normalization: strings
/// quoted, bools bare, pointers `&v`, absent pointers `nil`, composite values abbreviated.
fn go_value(key: &str, v: Option<&Value>) -> String {
    use crate::gocompat::quote::go_quote;
    let kind_is_ptr = matches!(
        key,
        "$ref"
            | "multipleOf"
            | "x-kubernetes-preserve-unknown-fields"
            | "x-kubernetes-list-type"
            | "x-kubernetes-map-type"
            | "default"
            | "example"
            | "not"
            | "items"
            | "additionalProperties"
            | "additionalItems"
            | "externalDocs"
    );
    match v {
        None if kind_is_ptr => "nil".into(),
        None => match key {
            "exclusiveMaximum"
            | "exclusiveMinimum"
            | "uniqueItems"
            | "nullable"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string" => "false".into(),
            "id" | "$schema" | "description" | "type" | "format" | "title" | "pattern" => {
                "\"\"".into()
            }
            _ => "nil".into(),
        },
        Some(Value::String(s)) if kind_is_ptr && !matches!(key, "default" | "example") => {
            format!("&{}", go_quote(s))
        }
        Some(Value::String(s)) if !matches!(key, "default" | "example") => go_quote(s),
        Some(Value::Bool(b)) if kind_is_ptr => format!("&{b}"),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => format!("&{}", property::go_float(n.as_f64().unwrap_or(0.0))),
        Some(_) => "<complex value>".into(),
    }
}

/// Every CRD of a set of manifests (bundle objects), by name.
pub fn crds_of<'n>(
    objects: impl IntoIterator<Item = (&'n crate::yaml::Node, &'n str)>,
) -> BTreeMap<String, Crd<'n>> {
    objects
        .into_iter()
        .filter_map(|(root, file)| Crd::from_node(root, file))
        .map(|c| (c.name.clone(), c))
        .collect()
}

/// The preflight over an upgrade from one bundle's CRDs to the next's: each CRD of the new
/// bundle that the old one had (a new CRD has nothing to break), in name order.
pub fn check_upgrade(old: &BTreeMap<String, Crd>, new: &BTreeMap<String, Crd>) -> Vec<Violation> {
    new.iter()
        .filter_map(|(name, n)| old.get(name).map(|o| check(o, n)))
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests;
