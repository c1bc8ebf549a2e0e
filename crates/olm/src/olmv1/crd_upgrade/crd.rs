//! A CustomResourceDefinition as operator-controller decodes it (into the apiextensions v1 Go
//! type, whatever its apiVersion) and crdify's three CRD-wide checks: scope changed, stored
//! versions removed, existing fields removed.

use super::schema::flatten;
use crate::yaml::Node;
use std::collections::BTreeSet;

/// One version of a CRD.
#[derive(Debug, Clone)]
pub struct CrdVersion<'n> {
    /// `name`.
    pub name: String,
    /// `served`.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `schema.openAPIV3Schema`, if any (a v1beta1 CRD's top-level `validation` is lost, as the
    /// Go decoding loses it).
    pub schema: Option<&'n Node>,
    /// The version's line.
    pub line: usize,
}

/// A CRD read for the upgrade check.
#[derive(Debug, Clone)]
pub struct Crd<'n> {
    /// `metadata.name`.
    pub name: String,
    /// The file it came from (for findings).
    pub file: String,
    /// `spec.scope` ("" when absent, as Go's zero value).
    pub scope: String,
    /// `spec.scope`'s line, else the CRD's.
    pub scope_line: usize,
    /// `spec.versions`, in order.
    pub versions: Vec<CrdVersion<'n>>,
    /// `spec.versions`'s line, else the CRD's.
    pub versions_line: usize,
    /// `status.storedVersions` when the manifest has it, else the storage version(s): offline,
    /// the versions objects were last written at are the old bundle's storage versions.
    pub stored_versions: Vec<String>,
    /// `spec.conversion.strategy` ("" when absent).
    pub conversion: String,
    /// The document's first line.
    pub line: usize,
}

impl<'n> Crd<'n> {
    /// Reads a CRD document; `None` when it is not a CustomResourceDefinition or has no name.
    pub fn from_node(root: &'n Node, file: &str) -> Option<Crd<'n>> {
        if root.get("kind").and_then(Node::scalar_text) != Some("CustomResourceDefinition") {
            return None;
        }
        let api = root
            .get("apiVersion")
            .and_then(Node::scalar_text)
            .unwrap_or("");
        if !api.starts_with("apiextensions.k8s.io/") {
            return None;
        }
        let name = root.path(&["metadata", "name"])?.scalar_text()?.to_string();
        let spec = root.get("spec");
        let scope_node = spec.and_then(|s| s.get("scope"));
        let versions_node = spec.and_then(|s| s.get("versions"));
        let mut versions = Vec::new();
        for v in versions_node.and_then(Node::as_seq).unwrap_or(&[]) {
            let flag = |k: &str| v.get(k).and_then(Node::as_bool).unwrap_or(false);
            versions.push(CrdVersion {
                name: v
                    .get("name")
                    .and_then(Node::scalar_text)
                    .unwrap_or("")
                    .to_string(),
                served: flag("served"),
                storage: flag("storage"),
                schema: v
                    .path(&["schema", "openAPIV3Schema"])
                    .filter(|n| n.as_map().is_some()),
                line: v.line,
            });
        }
        let status: Vec<String> = root
            .path(&["status", "storedVersions"])
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .filter_map(Node::scalar_text)
            .map(str::to_string)
            .collect();
        let stored_versions = if status.is_empty() {
            versions
                .iter()
                .filter(|v| v.storage)
                .map(|v| v.name.clone())
                .collect()
        } else {
            status
        };
        Some(Crd {
            name,
            file: file.to_string(),
            scope: scope_node
                .and_then(Node::scalar_text)
                .unwrap_or("")
                .to_string(),
            scope_line: scope_node.map_or(root.line, |n| n.line),
            versions,
            versions_line: versions_node.map_or(root.line, |n| n.line),
            stored_versions,
            conversion: spec
                .and_then(|s| s.path(&["conversion", "strategy"]))
                .and_then(Node::scalar_text)
                .unwrap_or("")
                .to_string(),
            line: root.line,
        })
    }

    /// The version called `name`.
    pub fn version(&self, name: &str) -> Option<&CrdVersion<'n>> {
        self.versions.iter().find(|v| v.name == name)
    }
}

/// A CRD-wide finding: crdify's validation name, its message, and the line in the new CRD.
pub(crate) type CrdWide = (&'static str, String, usize);

/// crdify's CRD-wide comparators (existingFieldRemoval, scope, storedVersionRemoval).
pub(crate) fn crd_wide(old: &Crd, new: &Crd) -> Vec<CrdWide> {
    let mut out = Vec::new();
    // existingFieldRemoval: for each new version that existed, the fields that are gone.
    for nv in &new.versions {
        let Some(ov) = old.version(&nv.name) else {
            continue;
        };
        let old_fields = flatten(ov.schema);
        let new_fields = flatten(nv.schema);
        for path in old_fields.keys().filter(|p| !new_fields.contains_key(*p)) {
            let line = match nv.schema {
                Some(_) => super::surviving_parent_line(path, &new_fields),
                None => nv.line,
            };
            out.push((
                "existingFieldRemoval",
                format!("removed field : {}.{}", nv.name, path),
                line,
            ));
        }
    }
    if old.scope != new.scope {
        out.push((
            "scope",
            format!(
                "scope changed : {} -> {}",
                crate::gocompat::quote::go_quote(&old.scope),
                crate::gocompat::quote::go_quote(&new.scope)
            ),
            new.scope_line,
        ));
    }
    let new_names: BTreeSet<&str> = new.versions.iter().map(|v| v.name.as_str()).collect();
    let removed: Vec<&str> = old
        .stored_versions
        .iter()
        .map(String::as_str)
        .filter(|v| !new_names.contains(v))
        .collect();
    if !removed.is_empty() {
        out.push((
            "storedVersionRemoval",
            format!(
                "stored versions removed : {}",
                super::property::go_list(removed)
            ),
            new.versions_line,
        ));
    }
    out
}
