//! `catalog validate --select-optional olmv1`: the OLM v1 rules over every bundle of a catalog
//! that carries its manifests (`olm.bundle.object`), reported at the bundle's blob, and a
//! per-package readiness report: which bundles OLM v1 can install, and why not; and the CRD
//! upgrade preflight on every upgrade edge ([`crate::validate::crd_upgrade`]).

use crate::bundle::{Annotation, Annotations, Bundle, Object, keys};
use crate::catalog::model::DeclarativeConfig;
use crate::findings::{Diagnostic, Rule, Severity};
use crate::olmv1::compat::{DEPENDENCY_PROPERTIES, dependency_message};
use crate::yaml::{Node, ScalarKind, Value};
use serde::Serialize;

/// One bundle's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleReadiness {
    /// Bundle name.
    pub name: String,
    /// Whether OLM v1 installs it (on a default cluster; warnings do not count).
    /// `None` when the catalog does not carry its manifests.
    pub installable: Option<bool>,
    /// Why not, or what to know (`rule: message`).
    pub reasons: Vec<String>,
}

/// One package's verdicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackageReadiness {
    /// Package name.
    pub package: String,
    /// Bundles OLM v1 can install.
    pub installable: Vec<String>,
    /// Every bundle, in catalog order.
    pub bundles: Vec<BundleReadiness>,
}

/// A catalog bundle's manifests as a bundle the rules read (no folder on disk).
fn bundle_from_objects(file: &str, package: &str, objects: &[String]) -> Bundle {
    let mut b = Bundle::default();
    let scalar = |s: &str| Node {
        value: Value::Scalar(s.into(), ScalarKind::Str),
        line: 1,
        col: 1,
    };
    b.annotations = Some(Annotations {
        file: file.to_string(),
        line: 1,
        entries: vec![Annotation {
            key: keys::PACKAGE.to_string(),
            value: package.to_string(),
            line: 1,
            node: scalar(package),
        }],
    });
    for (i, text) in objects.iter().enumerate() {
        let Ok(docs) = crate::yaml::parse_stream(text) else {
            continue;
        };
        let Some(doc) = docs.into_iter().next() else {
            continue;
        };
        let root = doc.root;
        let get = |k: &str| {
            root.get(k)
                .and_then(Node::scalar_text)
                .unwrap_or("")
                .to_string()
        };
        let (api_version, kind) = (get("apiVersion"), get("kind"));
        let name = root
            .path(&["metadata", "name"])
            .and_then(Node::scalar_text)
            .map(str::to_string);
        b.objects.push(Object {
            file: file.to_string(),
            doc: i,
            root,
            api_version,
            kind,
            name,
        });
    }
    b
}

/// Runs the OLM v1 rules over every bundle of `cfg`, and the CRD upgrade preflight over every
/// upgrade edge (with how many edges there were, and were checked).
pub fn check(
    cfg: &DeclarativeConfig,
) -> (
    Vec<Diagnostic>,
    Vec<PackageReadiness>,
    crate::validate::crd_upgrade::EdgeCounts,
) {
    let (mut diagnostics, packages) = check_bundles(cfg);
    // CRD upgrade safety of every upgrade edge whose bundles carry their manifests.
    let (counts, edges) = crate::validate::crd_upgrade::catalog_edges(cfg);
    diagnostics.extend(crate::validate::crd_upgrade::catalog_diagnostics(
        cfg, &edges,
    ));
    (diagnostics, packages, counts)
}

/// The OLM v1 rules over every bundle of `cfg`, without the upgrade edges (`catalog query`).
pub fn check_bundles(cfg: &DeclarativeConfig) -> (Vec<Diagnostic>, Vec<PackageReadiness>) {
    let mut diagnostics = Vec::new();
    let mut packages: Vec<PackageReadiness> = Vec::new();
    for b in &cfg.bundles {
        let (file, line) = (b.origin.file.clone(), b.origin.line);
        let mut reasons = Vec::new();
        let mut installable = None;
        if !b.objects.is_empty() {
            let bundle = bundle_from_objects(&file, &b.package, &b.objects);
            let mut found: Vec<Diagnostic> = crate::validate::bundle::olmv1::diagnostics(&bundle)
                .into_iter()
                .filter(|d| d.rule != Rule::Olmv1Dependency)
                .collect();
            for p in &b.properties {
                if DEPENDENCY_PROPERTIES.contains(&p.type_.as_str()) {
                    found.push(Diagnostic::new(
                        Rule::Olmv1Dependency,
                        dependency_message(&b.name, &p.type_),
                    ));
                    break;
                }
            }
            installable = Some(!found.iter().any(|d| d.severity == Severity::Error));
            for d in found {
                reasons.push(format!("{}: {}", d.rule.id(), d.message));
                let mut d = d;
                d.message = format!("bundle {}: {}", b.name, d.message);
                diagnostics.push(d.at(file.clone(), line));
            }
        } else {
            reasons.push("not judged: the catalog does not carry its manifests (olm.bundle.object); check its image with `olmpack bundle validate --image IMAGE --select-optional olmv1`".into());
        }
        let entry = match packages.iter().position(|p| p.package == b.package) {
            Some(i) => &mut packages[i],
            None => {
                packages.push(PackageReadiness {
                    package: b.package.clone(),
                    installable: Vec::new(),
                    bundles: Vec::new(),
                });
                let last = packages.len() - 1;
                &mut packages[last]
            }
        };
        if installable == Some(true) {
            entry.installable.push(b.name.clone());
        }
        entry.bundles.push(BundleReadiness {
            name: b.name.clone(),
            installable,
            reasons,
        });
    }
    (diagnostics, packages)
}
