//! Validation of a package-manifest folder: the checks of operator-framework/api's package
//! manifest validator (`pkg/validation/internal/package_manifest.go`) and everything opm's sqlite
//! loader refuses (`pkg/sqlite/directory.go`, `load.go`), plus warnings for what loads but loses
//! data (orphan versions, dangling skips, v1beta1 CRDs).

use super::graph::{self, Loaded};
use super::{PackageDir, PackageFile, Version};
use crate::findings::{Diagnostic, Rule};
use crate::yaml::Node;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The verdict on one package folder: the findings, and what opm's loader stores (which
/// `catalog render` and `bundle migrate` need, and the shared [`crate::findings::Report`] does
/// not carry).
#[derive(Debug, Clone)]
pub struct Report {
    /// Every finding, errors first, then by file and line.
    pub findings: Vec<Diagnostic>,
    /// What opm's loader stores, when the package file could be read.
    pub loaded: Option<Loaded>,
}

impl Report {
    /// Whether any finding is an error (opm's loader or the API validator refuses the package).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(Diagnostic::is_error)
    }

    /// The errors of what opm's loader refuses, which stop `catalog render` and `bundle
    /// migrate`. A CRD's `crd/preserve-unknown-fields` is a bundle-rule error (the loader
    /// stores such a CRD): reported by `bundle validate`, and again on each bundle migrate
    /// writes, it stops neither.
    pub fn loader_errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.errors()
            .filter(|d| d.rule != Rule::CrdPreserveUnknownFields)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.findings.iter().filter(|f| f.is_error())
    }

    /// The findings as the shared report every renderer of `crate::validate::output` prints;
    /// `folder` is the package folder as the user typed it (finding files are relative to it).
    pub fn to_report(&self, folder: &str) -> crate::findings::Report {
        let mut report = crate::findings::Report::new(folder, self.findings.clone());
        report.subject = format!("{folder} (package manifest)");
        report
    }
}

/// Validates a read package folder.
pub fn validate(pkg: &PackageDir) -> Report {
    let mut findings = pkg.findings.clone();
    let mut loaded = None;
    if let Some(manifest) = &pkg.package {
        findings.extend(check_package_file(manifest));
        let (l, errors) = graph::load(pkg, manifest);
        for e in errors {
            // The API validator already reports a duplicate channel or an unknown default.
            if !findings
                .iter()
                .any(|f| f.rule == e.rule && f.file == e.file && f.line == e.line)
            {
                findings.push(e);
            }
        }
        findings.extend(check_membership(pkg, &l));
        loaded = Some(l);
    }
    findings.extend(check_versions(pkg));
    findings.sort_by(|a, b| {
        (a.severity, &a.file, a.line, a.rule).cmp(&(b.severity, &b.file, b.line, b.rule))
    });
    findings.dedup();
    Report { findings, loaded }
}

/// operator-framework/api's `validatePackageManifest`.
fn check_package_file(m: &PackageFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let at = |f: Diagnostic, line: usize| f.near(m.file.clone(), line);
    if m.channels.is_empty() {
        out.push(at(
            Diagnostic::new(
                Rule::PmChannelsEmpty,
                "channels is empty: list at least one channel with name and currentCSV",
            ),
            m.line,
        ));
    }
    if m.default_channel.is_none() && m.channels.len() > 1 {
        out.push(at(
            Diagnostic::new(
                Rule::PmDefaultChannelMissing,
                format!(
                    "default channel is empty but more than one channel exists ({}): set defaultChannel (opm: no default channel specified for {})",
                    m.channels.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
                    m.name
                ),
            ),
            m.default_line,
        ));
    }
    if m.default_channel.is_none() && m.channels.len() == 1 {
        out.push(at(
            Diagnostic::new(
                Rule::PmDefaultChannelUnset,
                format!(
                    "defaultChannel is not set; opm uses the only channel \"{}\", operator-sdk pkgman-to-bundle refuses the package",
                    m.channels[0].name
                ),
            ),
            m.line,
        ));
    }
    let mut seen = HashSet::new();
    for (i, c) in m.channels.iter().enumerate() {
        if c.name.is_empty() {
            out.push(at(
                Diagnostic::new(
                    Rule::PmChannelNameEmpty,
                    format!("channel {i} name is empty"),
                ),
                c.line,
            ));
        }
        if c.current_csv.is_empty() {
            out.push(at(
                Diagnostic::new(
                    Rule::PmChannelHeadEmpty,
                    format!("channel \"{}\" currentCSV is empty", c.name),
                ),
                c.line,
            ));
        }
        if !c.name.is_empty() && !seen.insert(c.name.as_str()) {
            out.push(at(
                Diagnostic::new(
                    Rule::PmChannelDuplicate,
                    format!("duplicate package manifest channel name \"{}\"", c.name),
                ),
                c.line,
            ));
        }
    }
    if let Some(d) = &m.default_channel
        && !m.channels.iter().any(|c| &c.name == d)
    {
        out.push(at(
            Diagnostic::new(
                Rule::PmDefaultChannelUnknown,
                format!(
                    "default channel \"{d}\" not found in the list of declared channels ({})",
                    m.channels
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            m.default_line,
        ));
    }
    out
}

/// Orphans and dangling skips, from the loader's rows.
fn check_membership(pkg: &PackageDir, loaded: &Loaded) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let members: HashSet<&str> = loaded.entries.iter().map(|e| e.bundle.as_str()).collect();
    for v in &pkg.versions {
        if !members.contains(v.name.as_str()) {
            out.push(
                Diagnostic::new(
                    Rule::PmOrphan,
                    format!(
                        "{} is in no channel (not on the replaces chain of any channel head, nor skipped by it): the rendered catalog drops it",
                        v.name
                    ),
                )
                .near(v.csv().file.clone(), v.csv().line_of(&["metadata", "name"])),
            );
        }
        for skip in &v.skips {
            if pkg.version(skip).is_none() {
                out.push(
                    Diagnostic::new(
                        Rule::PmSkipsUnknown,
                        format!("skips \"{skip}\", which no folder of the package holds"),
                    )
                    .near(v.csv().file.clone(), v.csv().line_of(&["spec", "skips"])),
                );
            }
        }
    }
    out
}

/// Per-version checks: duplicate CSV names, owned CRDs present, folder names, v1beta1 CRDs.
fn check_versions(pkg: &PackageDir) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut first_of: HashMap<&str, &Version> = HashMap::new();
    for v in &pkg.versions {
        if let Some(prev) = first_of.get(v.name.as_str()) {
            out.push(
                Diagnostic::new(
                    Rule::PmCsvNameDuplicate,
                    format!(
                        "ClusterServiceVersion {} is also defined in {}: opm cannot store it twice",
                        v.name,
                        prev.csv().file
                    ),
                )
                .near(v.csv().file.clone(), v.csv().line_of(&["metadata", "name"])),
            );
        } else {
            first_of.insert(&v.name, v);
        }
        out.extend(check_provided_apis(v));
        let folder = v.dir.rsplit('/').next().unwrap_or(&v.dir);
        if !v.version.is_empty()
            && !v.dir.is_empty()
            && folder.trim_start_matches('v') != v.version.trim_start_matches('v')
        {
            out.push(
                Diagnostic::new(
                    Rule::PmFolderVersionMismatch,
                    format!("folder \"{folder}\" holds version {}", v.version),
                )
                .near(v.csv().file.clone(), v.csv().line_of(&["spec", "version"])),
            );
        }
        for o in v.objects.iter().filter(|o| o.is_crd()) {
            // The same CRD gets the same verdict as in the bundles `bundle migrate` writes
            // from it (rule crd/preserve-unknown-fields, an error in both): operator-sdk
            // rejects spec.preserveUnknownFields true, which v1beta1 defaults to.
            let v1beta1 = o.api_version == "apiextensions.k8s.io/v1beta1";
            let pruf = o.root.path(&["spec", "preserveUnknownFields"]);
            if pruf.and_then(Node::as_bool).unwrap_or(v1beta1) {
                let name = o.name.as_deref().unwrap_or("?");
                let message = if v1beta1 && pruf.is_none() {
                    format!(
                        "CRD \"{name}\": spec.preserveUnknownFields defaults to true in apiextensions.k8s.io/v1beta1, which Kubernetes rejects: set spec.preserveUnknownFields: false (and x-kubernetes-preserve-unknown-fields: true in the schema where needed), or better, convert the CRD to apiextensions.k8s.io/v1"
                    )
                } else {
                    format!(
                        "CRD \"{name}\": spec.preserveUnknownFields cannot be true; set x-kubernetes-preserve-unknown-fields: true in spec.versions[*].schema instead"
                    )
                };
                let line = pruf.map_or_else(|| o.line_of(&["spec"]), |n| n.line);
                out.push(
                    Diagnostic::new(Rule::CrdPreserveUnknownFields, message)
                        .near(o.file.clone(), line),
                );
            }
            if v1beta1 {
                out.push(
                    Diagnostic::new(
                        Rule::PmCrdV1beta1,
                        format!(
                            "CRD {} is apiextensions.k8s.io/v1beta1: Kubernetes 1.22+ cannot serve it and OLM v1 cannot install it; convert it to v1",
                            o.name.as_deref().unwrap_or("?")
                        ),
                    )
                    .near(o.file.clone(), o.line_of(&["apiVersion"])),
                );
            }
        }
    }
    out
}

/// (group, version, kind, plural)
type ApiKey = (String, String, String, String);

/// The APIs a version provides, as opm's `Bundle.ProvidedAPIs` computes them.
pub fn provided_apis(v: &Version) -> BTreeSet<ApiKey> {
    let s = |n: Option<&Node>| {
        n.and_then(Node::scalar_text)
            .unwrap_or_default()
            .to_string()
    };
    let mut out = BTreeSet::new();
    for o in v.objects.iter().filter(|o| o.is_crd()) {
        let crd_version = o.api_version.rsplit('/').next().unwrap_or_default();
        if crd_version != "v1" && crd_version != "v1beta1" {
            continue;
        }
        let spec = o.root.get("spec");
        let group = s(spec.and_then(|n| n.get("group")));
        let kind = s(spec.and_then(|n| n.path(&["names", "kind"])));
        let plural = s(spec.and_then(|n| n.path(&["names", "plural"])));
        for ver in spec
            .and_then(|n| n.get("versions"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            out.insert((
                group.clone(),
                s(ver.get("name")),
                kind.clone(),
                plural.clone(),
            ));
        }
        if crd_version == "v1beta1" {
            let single = s(spec.and_then(|n| n.get("version")));
            if !single.is_empty() {
                out.insert((group.clone(), single, kind.clone(), plural.clone()));
            }
        }
    }
    for api in v.csv_view().owned_apis() {
        out.insert((
            api.written_group.unwrap_or_default().to_string(),
            api.version.to_string(),
            api.kind.to_string(),
            api.name.to_string(),
        ));
    }
    out
}

/// opm's `AllProvidedAPIsInBundle`: every owned CRD must be provided by a CRD of the folder.
fn check_provided_apis(v: &Version) -> Vec<Diagnostic> {
    let provided = provided_apis(v);
    let mut out = Vec::new();
    for required in v.csv_view().required_crds() {
        let name = required.name;
        if !name.contains('.') {
            out.push(
                Diagnostic::new(
                    Rule::PmCsvField,
                    format!("required CRD name \"{name}\" is not <plural>.<group> (opm: couldn't parse plural.group from crd name)"),
                )
                .near(v.csv().file.clone(), required.pos.line),
            );
        }
    }
    for owned in v.csv_view().owned_crds() {
        let name = owned.name;
        let Some((plural, group)) = name.split_once('.') else {
            out.push(
                Diagnostic::new(
                    Rule::PmProvidedApiMissing,
                    format!("owned CRD name \"{name}\" is not <plural>.<group> (opm: couldn't parse plural.group from crd name)"),
                )
                .near(v.csv().file.clone(), owned.pos.line),
            );
            continue;
        };
        let key = (
            group.to_string(),
            owned.version.to_string(),
            owned.kind.to_string(),
            plural.to_string(),
        );
        if !provided.contains(&key) {
            out.push(
                Diagnostic::new(
                    Rule::PmProvidedApiMissing,
                    format!(
                        "owned CRD {name} version {} kind {} is not defined by any CRD in {}/ (opm: error checking provided apis in bundle {})",
                        key.1, key.2, v.dir, v.name
                    ),
                )
                .near(v.csv().file.clone(), owned.pos.line),
            );
        }
    }
    out
}
