//! The `olmv1/crd-upgrade-*` rules: operator-controller's CRD upgrade preflight
//! ([`crate::olmv1::crd_upgrade`]) on an upgrade from one bundle to another (`bundle validate
//! NEW --upgrade-from OLD`) and on every upgrade edge of every package of a catalog whose
//! bundles carry their manifests (`catalog validate --select-optional olmv1`).
//!
//! Each finding is one line of upstream's error, byte for byte, after the edge it is about;
//! where upstream abbreviates (its "unhandled" summary), the old and new values follow in full,
//! and nothing is cut at the status condition's length limit.

use crate::catalog::model::{Bundle as CatalogBundle, DeclarativeConfig};
use crate::findings::{Diagnostic, Rule};
use crate::olmv1::crd_upgrade::{Violation, check_upgrade, crd::Crd};
use crate::olmv1::upgrade::{UpgradeEdge, package_edges};
use crate::yaml::{Document, parse_stream};
use std::collections::{BTreeMap, HashMap};

/// The rule of a crdify check.
pub fn rule_for(check: &str) -> Rule {
    match check {
        "scope" => Rule::Olmv1CrdUpgradeScope,
        "storedVersionRemoval" => Rule::Olmv1CrdUpgradeStoredVersionRemoval,
        "existingFieldRemoval" => Rule::Olmv1CrdUpgradeFieldRemoval,
        "type" => Rule::Olmv1CrdUpgradeType,
        "enum" => Rule::Olmv1CrdUpgradeEnum,
        "required" => Rule::Olmv1CrdUpgradeRequired,
        "default" => Rule::Olmv1CrdUpgradeDefault,
        "maximum" | "maxItems" | "maxLength" | "maxProperties" => Rule::Olmv1CrdUpgradeMaximum,
        "minimum" | "minItems" | "minLength" | "minProperties" => Rule::Olmv1CrdUpgradeMinimum,
        "pattern" => Rule::Olmv1CrdUpgradePattern,
        "nullable" => Rule::Olmv1CrdUpgradeNullable,
        "oneOf" => Rule::Olmv1CrdUpgradeOneOf,
        _ => Rule::Olmv1CrdUpgradeUnhandled,
    }
}

/// A finding for one violation on the upgrade `edge` (e.g. `a.v1 -> a.v2 (stable: replaces)`).
pub fn diagnostic(edge: &str, v: &Violation) -> Diagnostic {
    let mut message = format!(
        "upgrade {edge}: CRD {}: {}",
        crate::gocompat::quote::go_quote(&v.crd),
        v.upstream_line()
    );
    if let Some(detail) = &v.detail {
        message.push_str(&format!(" [in full: {detail}]"));
    }
    Diagnostic::new(rule_for(v.check), message).at(v.file.clone(), v.line)
}

/// The findings of an upgrade from bundle folder `old` to bundle folder `new`.
pub fn bundle_pair(
    old: &crate::bundle::Bundle,
    new: &crate::bundle::Bundle,
    edge: &str,
) -> Vec<Diagnostic> {
    let olds =
        crate::olmv1::crd_upgrade::crds_of(old.objects.iter().map(|o| (&o.root, o.file.as_str())));
    let news =
        crate::olmv1::crd_upgrade::crds_of(new.objects.iter().map(|o| (&o.root, o.file.as_str())));
    check_upgrade(&olds, &news)
        .iter()
        .map(|v| diagnostic(edge, v))
        .collect()
}

/// How many edges a catalog has and how many could be checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EdgeCounts {
    /// Upgrade edges between bundles of the catalog.
    pub edges: usize,
    /// Edges whose two bundles carry their manifests (`olm.bundle.object`), so were checked.
    pub checked: usize,
    /// Checked edges with at least one violation.
    pub unsafe_edges: usize,
}

/// One checked edge and its violations.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EdgeResult {
    /// The package.
    pub package: String,
    /// The edge.
    #[serde(flatten)]
    pub edge: UpgradeEdge,
    /// What the preflight would refuse.
    pub violations: Vec<Violation>,
}

/// Parsed CRD documents of one catalog bundle (kept so the CRDs can borrow them).
struct BundleDocs {
    /// The raw CRD texts, to skip identical CRDs without comparing.
    raw: BTreeMap<String, String>,
    docs: Vec<Document>,
}

fn crd_docs(b: &CatalogBundle) -> Option<BundleDocs> {
    if b.objects.is_empty() {
        return None;
    }
    let mut docs = Vec::new();
    let mut raw = BTreeMap::new();
    for text in &b.objects {
        if !text.contains("\"CustomResourceDefinition\"") {
            continue;
        }
        if let Ok(mut d) = parse_stream(text)
            && let Some(doc) = d.drain(..).next()
        {
            if let Some(name) = doc
                .root
                .path(&["metadata", "name"])
                .and_then(crate::yaml::Node::scalar_text)
            {
                raw.insert(name.to_string(), text.clone());
            }
            docs.push(doc);
        }
    }
    Some(BundleDocs { raw, docs })
}

/// Every upgrade edge of every package of `cfg`, checked where both bundles carry manifests.
pub fn catalog_edges(cfg: &DeclarativeConfig) -> (EdgeCounts, Vec<EdgeResult>) {
    let mut counts = EdgeCounts::default();
    let mut results = Vec::new();
    let by_name: HashMap<(&str, &str), &CatalogBundle> = cfg
        .bundles
        .iter()
        .map(|b| ((b.package.as_str(), b.name.as_str()), b))
        .collect();
    let mut packages: Vec<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
    for c in &cfg.channels {
        if !packages.contains(&c.package.as_str()) {
            packages.push(&c.package);
        }
    }
    let mut memo: HashMap<(String, String), Vec<Violation>> = HashMap::new();
    for package in packages {
        let edges = package_edges(cfg, package);
        let mut parsed: HashMap<&str, Option<BundleDocs>> = HashMap::new();
        for e in &edges {
            for n in [&e.from, &e.to] {
                if !parsed.contains_key(n.as_str())
                    && let Some(b) = by_name.get(&(package, n.as_str()))
                {
                    parsed.insert(b.name.as_str(), crd_docs(b));
                }
            }
        }
        for e in edges {
            counts.edges += 1;
            let (Some(Some(old)), Some(Some(new))) =
                (parsed.get(e.from.as_str()), parsed.get(e.to.as_str()))
            else {
                continue;
            };
            counts.checked += 1;
            if old.raw == new.raw {
                continue;
            }
            let file = by_name
                .get(&(package, e.to.as_str()))
                .map(|b| b.origin.file.as_str())
                .unwrap_or("");
            let olds: BTreeMap<String, Crd> = old
                .docs
                .iter()
                .filter_map(|d| Crd::from_node(&d.root, file))
                .map(|c| (c.name.clone(), c))
                .collect();
            let news: BTreeMap<String, Crd> = new
                .docs
                .iter()
                .filter(|d| {
                    let name = d
                        .root
                        .path(&["metadata", "name"])
                        .and_then(crate::yaml::Node::scalar_text)
                        .unwrap_or("");
                    old.raw.get(name) != new.raw.get(name)
                })
                .filter_map(|d| Crd::from_node(&d.root, file))
                .map(|c| (c.name.clone(), c))
                .collect();
            // Edges often share a CRD pair (a CRD unchanged over several releases): each pair
            // of texts is compared once.
            let mut violations = Vec::new();
            for (name, n) in &news {
                let Some(o) = olds.get(name) else { continue };
                let key = (
                    old.raw.get(name).cloned().unwrap_or_default(),
                    new.raw.get(name).cloned().unwrap_or_default(),
                );
                let found = memo
                    .entry(key)
                    .or_insert_with(|| crate::olmv1::crd_upgrade::check(o, n));
                violations.extend(found.iter().cloned());
            }
            if !violations.is_empty() {
                counts.unsafe_edges += 1;
                results.push(EdgeResult {
                    package: package.to_string(),
                    edge: e,
                    violations,
                });
            }
        }
    }
    (counts, results)
}

/// The findings of [`catalog_edges`], each at the newer bundle's blob.
pub fn catalog_diagnostics(cfg: &DeclarativeConfig, results: &[EdgeResult]) -> Vec<Diagnostic> {
    let lines: HashMap<(&str, &str), (&str, usize)> = cfg
        .bundles
        .iter()
        .map(|b| {
            (
                (b.package.as_str(), b.name.as_str()),
                (b.origin.file.as_str(), b.origin.line),
            )
        })
        .collect();
    let mut out = Vec::new();
    for r in results {
        let edge = format!(
            "{} -> {} ({})",
            r.edge.from,
            r.edge.to,
            r.edge.via.join(", ")
        );
        let (file, line) = lines
            .get(&(r.package.as_str(), r.edge.to.as_str()))
            .copied()
            .unwrap_or(("", 0));
        for v in &r.violations {
            let mut d = diagnostic(&edge, v);
            d.file = Some(file.to_string());
            d.line = (line > 0).then_some(line);
            out.push(d);
        }
    }
    out
}
