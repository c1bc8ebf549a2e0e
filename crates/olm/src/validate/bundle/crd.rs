//! CRD rules: owned CRDs present with the owned version served, CRDs not owned, duplicates, the
//! apiextensions version, and the structural checks of Kubernetes' CRD validation that matter
//! for installation (names, versions, scope, approval of protected groups,
//! `preserveUnknownFields` in v1).

use super::{Ctx, Diagnostic, Rule, Severity, names};
use crate::bundle::Object;
use crate::yaml::Node;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let bundle = ctx.bundle;
    let crds: Vec<&Object> = bundle.crds().collect();
    let mut by_name: BTreeMap<&str, &Object> = BTreeMap::new();
    for crd in &crds {
        let name = crd.name.as_deref().unwrap_or("");
        if let Some(first) = by_name.get(name) {
            ctx.push(
                Diagnostic::new(
                    Rule::CrdDuplicate,
                    format!(
                        "duplicate CRD \"{name}\" (also in {}); keep one",
                        first.file
                    ),
                )
                .at(&crd.file, crd.line()),
            );
        } else {
            by_name.insert(name, crd);
        }
        structure(ctx, crd);
    }

    let Some(view) = bundle.csv_view() else {
        return;
    };
    let csv = view.object;
    let csv_name = csv.name.as_deref().unwrap_or("");
    let owned = view.owned_crds();
    // Keyed like operator-framework/api: (group from the owned name, version, kind) against every
    // (group, version, kind) the bundle's CRDs define.
    let mut bundle_keys: BTreeMap<(String, String, String), &Object> = BTreeMap::new();
    for crd in &crds {
        let group = crd
            .root
            .path(&["spec", "group"])
            .and_then(Node::scalar_text)
            .unwrap_or("");
        let kind = crd
            .root
            .path(&["spec", "names", "kind"])
            .and_then(Node::scalar_text)
            .unwrap_or("");
        for v in crd_versions(crd) {
            bundle_keys
                .entry((group.to_string(), v.name, kind.to_string()))
                .or_insert(crd);
        }
    }
    let mut matched = BTreeSet::new();
    let mut owned_gk = BTreeSet::new();
    for item in owned {
        // An entry without a name is skipped; an empty name is reported like any other.
        let Some(name) = item.node.get("name").and_then(Node::scalar_text) else {
            continue;
        };
        let (version, kind) = (item.version, item.kind);
        let group = name.split_once('.').map_or(name, |(_, g)| g);
        let key = (group.to_string(), version.to_string(), kind.to_string());
        match bundle_keys.get(&key) {
            Some(crd) => {
                matched.insert(key.clone());
                owned_gk.insert((key.0.clone(), key.2.clone()));
                if let Some((group_key, group)) = owned_entry_group(item.node) {
                    ctx.push(
                        Diagnostic::new(
                            Rule::CrdOwnedGroup,
                            format!(
                                "owned CRD {name}/{version} not found in bundle \"{csv_name}\" (operator-sdk bundle validate, Value {{{group} {kind} {name} {version}}}): operator-registry's content check keys this entry with its \"{}: {group}\" while it keys the bundle's CRDs without a group, so the two never match; remove the {} key from this entry (the CRD's group comes from its name)",
                                group_key, group_key
                            ),
                        )
                        .at(item.pos.file, item.pos.line),
                    );
                }
                if let Some(v) = crd_versions(crd).iter().find(|v| v.name == version)
                    && !v.served
                {
                    ctx.push(
                            Diagnostic::new(
                                Rule::CrdOwnedMissing,
                                format!("owned CRD \"{name}\" version \"{version}\" is not served by the CRD in {}: serve it or own a served version", crd.file),
                            )
                            .with_severity(Severity::Warning)
                            .at(item.pos.file, item.pos.line),
                        );
                }
            }
            None => {
                let hint = match by_name.get(name) {
                    Some(crd) => {
                        let versions: Vec<String> = crd_versions(crd).into_iter().map(|v| v.name).collect();
                        let crd_kind = crd.root.path(&["spec", "names", "kind"]).and_then(Node::scalar_text).unwrap_or("");
                        format!("; {} defines kind {crd_kind} in versions {}: make the CSV entry match", crd.file, versions.join(", "))
                    }
                    None => ": add its manifest to manifests/ or remove it from spec.customresourcedefinitions.owned".to_string(),
                };
                ctx.push(
                    Diagnostic::new(
                        Rule::CrdOwnedMissing,
                        format!("owned CRD \"{group}/{version}, Kind={kind}\" ({name}) not found in bundle \"{csv_name}\"{hint}"),
                    )
                    .at(item.pos.file, item.pos.line),
                );
            }
        }
    }
    let mut reported = BTreeSet::new();
    for (key, crd) in &bundle_keys {
        if matched.contains(key) || owned_gk.contains(&(key.0.clone(), key.2.clone())) {
            continue;
        }
        let name = crd.name.as_deref().unwrap_or("");
        if !reported.insert(name) {
            continue;
        }
        ctx.push(
            Diagnostic::new(
                Rule::CrdNotOwned,
                format!("CRD \"{}/{}, Kind={}\" ({name}) is present in bundle \"{csv_name}\" but not defined in the CSV's spec.customresourcedefinitions.owned: OLM installs it unowned; add it to owned (operator-sdk rejects this)", key.0, key.1, key.2),
            )
            .at(&crd.file, crd.line()),
        );
    }
}

/// The non-empty `group` an owned-CRD entry carries, with the key as written. operator-registry
/// reads the entry into `registry.DefinitionKey{Group, Kind, Name, Version}` with Go's
/// `encoding/json`: keys match case-insensitively and the last one wins; a non-string value fails
/// the decode differently and is left to the CSV rules.
fn owned_entry_group(entry: &Node) -> Option<(&str, &str)> {
    let (key, value) = entry
        .as_map()?
        .iter()
        .rev()
        .find(|(k, _)| k.text.eq_ignore_ascii_case("group"))?;
    let group = value.scalar_text().filter(|g| !g.is_empty())?;
    Some((key.text.as_str(), group))
}

/// A version of a CRD, after v1beta1's top-level `version` fallback.
pub(crate) struct CrdVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub line: usize,
}

pub(crate) fn crd_versions(crd: &Object) -> Vec<CrdVersion> {
    let spec = crd.root.get("spec");
    let mut out = Vec::new();
    if let Some(list) = spec.and_then(|s| s.get("versions")).and_then(Node::as_seq) {
        for v in list {
            out.push(CrdVersion {
                name: v
                    .get("name")
                    .and_then(Node::scalar_text)
                    .unwrap_or("")
                    .to_string(),
                served: v.get("served").and_then(Node::as_bool).unwrap_or(false),
                storage: v.get("storage").and_then(Node::as_bool).unwrap_or(false),
                line: v.line,
            });
        }
    }
    if out.is_empty()
        && let Some(v) = spec
            .and_then(|s| s.get("version"))
            .and_then(Node::scalar_text)
    {
        // v1beta1 shorthand: one version, served and stored.
        out.push(CrdVersion {
            name: v.to_string(),
            served: true,
            storage: true,
            line: crd.line_of(&["spec", "version"]),
        });
    }
    out
}

/// Groups Kubernetes reserves: changes need an approved KEP (apiextensions `IsProtectedCommunityGroup`).
fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io")
}

fn structure(ctx: &mut Ctx<'_>, crd: &Object) {
    let file = crd.file.as_str();
    let name = crd.name.as_deref().unwrap_or("");
    let is_v1 = crd.api_version == "apiextensions.k8s.io/v1";
    let is_v1beta1 = crd.api_version == "apiextensions.k8s.io/v1beta1";
    if is_v1beta1 {
        ctx.removed_api(
            Diagnostic::new(
                Rule::CrdApiVersion,
                format!("CRD \"{name}\" uses apiextensions.k8s.io/v1beta1, removed in Kubernetes 1.22: convert it to apiextensions.k8s.io/v1"),
            )
            .at(file, crd.line_of(&["apiVersion"])),
            22,
        );
    } else if !is_v1 {
        ctx.push(
            Diagnostic::new(
                Rule::CrdApiVersion,
                format!("unsupported api version of CRD: {}", crd.api_version),
            )
            .at(file, crd.line_of(&["apiVersion"])),
        );
        return;
    }
    let Some(spec) = crd.root.get("spec").filter(|s| s.as_map().is_some()) else {
        ctx.push(
            Diagnostic::new(Rule::CrdInvalid, format!("CRD \"{name}\" has no spec"))
                .at(file, crd.line()),
        );
        return;
    };
    let invalid = |ctx: &mut Ctx<'_>, line: usize, msg: String| {
        ctx.push(
            Diagnostic::new(Rule::CrdInvalid, format!("CRD \"{name}\": {msg}")).at(file, line),
        );
    };
    let group = spec.get("group").and_then(Node::scalar_text).unwrap_or("");
    if group.is_empty() {
        invalid(ctx, spec.line, "spec.group: Required value".into());
    } else if !group.contains('.') {
        invalid(
            ctx,
            crd.line_of(&["spec", "group"]),
            format!("spec.group \"{group}\" should be a domain with at least one dot"),
        );
    } else if let Err(why) = names::dns1123_subdomain(group) {
        invalid(
            ctx,
            crd.line_of(&["spec", "group"]),
            format!("spec.group \"{group}\": {why}"),
        );
    }
    let plural = spec
        .path(&["names", "plural"])
        .and_then(Node::scalar_text)
        .unwrap_or("");
    if plural.is_empty() {
        invalid(
            ctx,
            crd.line_of(&["spec", "names"]),
            "spec.names.plural: Required value".into(),
        );
    } else if let Err(why) = names::dns1035_label(plural) {
        invalid(
            ctx,
            crd.line_of(&["spec", "names", "plural"]),
            format!("spec.names.plural \"{plural}\": {why}"),
        );
    }
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        invalid(
            ctx,
            crd.line_of(&["metadata", "name"]),
            format!(
                "metadata.name must be spec.names.plural+\".\"+spec.group (\"{plural}.{group}\")"
            ),
        );
    }
    // Empty singular / listKind are defaulted from the kind by Kubernetes.
    if let Some(singular) = spec
        .path(&["names", "singular"])
        .and_then(Node::scalar_text)
        .filter(|s| !s.is_empty())
        && let Err(why) = names::dns1035_label(singular)
    {
        invalid(
            ctx,
            crd.line_of(&["spec", "names", "singular"]),
            format!("spec.names.singular \"{singular}\": {why}"),
        );
    }
    let kind = spec
        .path(&["names", "kind"])
        .and_then(Node::scalar_text)
        .unwrap_or("");
    if kind.is_empty() {
        invalid(
            ctx,
            crd.line_of(&["spec", "names"]),
            "spec.names.kind: Required value".into(),
        );
    } else if !is_kind_name(kind) {
        invalid(
            ctx,
            crd.line_of(&["spec", "names", "kind"]),
            format!("spec.names.kind \"{kind}\" must be a DNS-1035 label once lowercased"),
        );
    }
    if let Some(list_kind) = spec
        .path(&["names", "listKind"])
        .and_then(Node::scalar_text)
        .filter(|s| !s.is_empty())
    {
        if !is_kind_name(list_kind) {
            invalid(
                ctx,
                crd.line_of(&["spec", "names", "listKind"]),
                format!("spec.names.listKind \"{list_kind}\" is invalid"),
            );
        } else if list_kind == kind {
            invalid(
                ctx,
                crd.line_of(&["spec", "names", "listKind"]),
                "spec.names.listKind must not equal kind".into(),
            );
        }
    }
    match spec.get("scope").and_then(Node::scalar_text) {
        Some("Cluster" | "Namespaced") => {}
        Some(other) => invalid(
            ctx,
            crd.line_of(&["spec", "scope"]),
            format!("spec.scope \"{other}\" must be Cluster or Namespaced"),
        ),
        None if is_v1beta1 => {} // defaulted to Namespaced
        None => invalid(ctx, spec.line, "spec.scope: Required value".into()),
    }
    let versions = crd_versions(crd);
    if versions.is_empty() {
        invalid(
            ctx,
            spec.line,
            "spec.versions must have at least one version".into(),
        );
    } else {
        let storage = versions.iter().filter(|v| v.storage).count();
        if storage != 1 {
            invalid(
                ctx,
                spec.get("versions").map_or(spec.line, |n| n.line),
                format!(
                    "spec.versions must have exactly one version marked as storage version (found {storage})"
                ),
            );
        }
        let mut seen = BTreeSet::new();
        for v in &versions {
            if !seen.insert(v.name.as_str()) {
                invalid(
                    ctx,
                    v.line,
                    format!("spec.versions has duplicate version \"{}\"", v.name),
                );
            }
            if let Err(why) = names::dns1035_label(&v.name) {
                invalid(
                    ctx,
                    v.line,
                    format!("spec.versions name \"{}\": {why}", v.name),
                );
            }
        }
        if !versions.iter().any(|v| v.served) {
            // Kubernetes accepts it; nothing can use such a CRD, though.
            ctx.push(
                Diagnostic::new(
                    Rule::CrdInvalid,
                    format!("CRD \"{name}\": no version is served, so no client can use it"),
                )
                .with_severity(Severity::Warning)
                .at(file, spec.line),
            );
        }
        if let (Some(top), true) = (
            spec.get("version").and_then(Node::scalar_text),
            spec.get("versions").is_some(),
        ) && versions[0].name != top
        {
            invalid(
                ctx,
                crd.line_of(&["spec", "version"]),
                format!(
                    "spec.version \"{top}\" must match the first version in spec.versions (\"{}\")",
                    versions[0].name
                ),
            );
        }
    }
    // v1 rejects an explicit true; v1beta1 defaults the field to true, and Kubernetes (and
    // operator-sdk since 1.17) reject that too: such a CRD cannot be installed on a cluster that
    // serves only apiextensions.k8s.io/v1 (Kubernetes 1.22+).
    let pruf = spec.get("preserveUnknownFields");
    let pruf_true = match pruf.and_then(Node::as_bool) {
        Some(value) => value,
        None => is_v1beta1,
    };
    if pruf_true {
        let message = if is_v1beta1 && pruf.is_none() {
            format!(
                "CRD \"{name}\": spec.preserveUnknownFields defaults to true in apiextensions.k8s.io/v1beta1, which Kubernetes rejects: set spec.preserveUnknownFields: false (and x-kubernetes-preserve-unknown-fields: true in the schema where needed), or better, convert the CRD to apiextensions.k8s.io/v1"
            )
        } else {
            format!(
                "CRD \"{name}\": spec.preserveUnknownFields cannot be true; set x-kubernetes-preserve-unknown-fields: true in spec.versions[*].schema instead"
            )
        };
        ctx.push(
            Diagnostic::new(Rule::CrdPreserveUnknownFields, message)
                .at(file, pruf.map_or(spec.line, |n| n.line)),
        );
    }
    for v in spec.get("versions").and_then(Node::as_seq).unwrap_or(&[]) {
        for field in ["served", "storage"] {
            if let Some(n) = v.get(field).filter(|n| n.as_bool().is_none()) {
                ctx.push(
                    Diagnostic::new(
                        Rule::CrdInvalid,
                        format!("CRD \"{name}\": spec.versions[].{field} must be true or false, found a {}", n.kind_name()),
                    )
                    .at(file, n.line),
                );
            }
        }
    }
    if is_v1beta1 {
        per_version_duplication(ctx, crd, spec);
    }
    names_lists(ctx, crd, spec);
    printer_columns(ctx, crd, spec);
    if is_protected_group(group) {
        let approval = crd
            .root
            .path(&["metadata", "annotations", "api-approved.kubernetes.io"])
            .and_then(Node::scalar_text);
        match approval {
            None => invalid(
                ctx,
                crd.line_of(&["metadata"]),
                format!(
                    "group {group} is protected: metadata.annotations[api-approved.kubernetes.io] is required (a KEP URL, or \"unapproved, <reason>\")"
                ),
            ),
            Some(v) if v.starts_with("unapproved") || is_url_with_host(v) => {}
            Some(v) => invalid(
                ctx,
                crd.line_of(&["metadata", "annotations", "api-approved.kubernetes.io"]),
                format!(
                    "api-approved.kubernetes.io \"{v}\" must be a URL of the approving KEP or start with \"unapproved\""
                ),
            ),
        }
    }
    conversion(ctx, crd, spec, is_v1);
}

fn conversion(ctx: &mut Ctx<'_>, crd: &Object, spec: &Node, is_v1: bool) {
    let Some(conv) = spec.get("conversion") else {
        return;
    };
    let name = crd.name.as_deref().unwrap_or("");
    let file = crd.file.as_str();
    match conv.get("strategy").and_then(Node::scalar_text) {
        None | Some("None") => {}
        Some("Webhook") => {
            let has_config = if is_v1 {
                conv.path(&["webhook", "clientConfig"]).is_some()
                    && conv
                        .path(&["webhook", "conversionReviewVersions"])
                        .is_some()
            } else {
                true
            };
            if !has_config
                && ctx
                    .bundle
                    .csv()
                    .is_none_or(|csv| !csv_has_conversion_webhook(csv, name))
            {
                ctx.push(
                    Diagnostic::new(
                        Rule::CrdInvalid,
                        format!("CRD \"{name}\": spec.conversion.webhook needs clientConfig and conversionReviewVersions (or a ConversionWebhook in the CSV that OLM fills in)"),
                    )
                    .at(file, conv.line),
                );
            }
        }
        Some(other) => ctx.push(
            Diagnostic::new(
                Rule::CrdInvalid,
                format!(
                    "CRD \"{name}\": spec.conversion.strategy \"{other}\" must be None or Webhook"
                ),
            )
            .at(file, conv.line),
        ),
    }
}

fn csv_has_conversion_webhook(csv: &Object, crd_name: &str) -> bool {
    let Some(view) = crate::bundle::Csv::new(csv) else {
        return false;
    };
    view.webhooks()
        .iter()
        .filter(|h| h.kind == "ConversionWebhook")
        .any(|h| {
            // The raw list: a CRD with an empty name matches only an entry written as `""`.
            h.node
                .get("conversionCRDs")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
                .iter()
                .any(|c| c.scalar_text() == Some(crd_name))
        })
}

fn is_kind_name(kind: &str) -> bool {
    names::dns1035_label(&kind.to_ascii_lowercase()).is_ok()
}

/// v1beta1 only: identical per-version schemas, subresources or printer columns must be written
/// once at the top level, and top-level plus per-version is forbidden (apiextensions validation).
fn per_version_duplication(ctx: &mut Ctx<'_>, crd: &Object, spec: &Node) {
    let name = crd.name.as_deref().unwrap_or("");
    let Some(versions) = spec
        .get("versions")
        .and_then(Node::as_seq)
        .filter(|v| !v.is_empty())
    else {
        return;
    };
    for (field, top, what) in [
        ("schema", "validation", "schemas"),
        ("subresources", "subresources", "subresources"),
        (
            "additionalPrinterColumns",
            "additionalPrinterColumns",
            "additionalPrinterColumns",
        ),
    ] {
        let per: Vec<Option<serde_json::Value>> = versions
            .iter()
            .map(|v| v.get(field).map(Node::to_json))
            .collect();
        if spec.get(top).is_some() && per.iter().any(Option::is_some) {
            ctx.push(
                Diagnostic::new(
                    Rule::CrdInvalid,
                    format!(
                        "CRD \"{name}\": top-level and per-version {what} are mutually exclusive"
                    ),
                )
                .at(&crd.file, crd.line_of(&["spec", top])),
            );
        } else if per.iter().all(Option::is_some) && per.windows(2).all(|w| w[0] == w[1]) {
            ctx.push(
                Diagnostic::new(
                    Rule::CrdInvalid,
                    format!("CRD \"{name}\": per-version {what} may not all be set to identical values (top-level spec.{top} should be used instead in apiextensions.k8s.io/v1beta1)"),
                )
                .at(&crd.file, versions[0].line),
            );
        }
    }
}

fn names_lists(ctx: &mut Ctx<'_>, crd: &Object, spec: &Node) {
    let name = crd.name.as_deref().unwrap_or("");
    for list in ["shortNames", "categories"] {
        for item in spec
            .path(&["names", list])
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            let text = item.scalar_text().unwrap_or("");
            if let Err(why) = names::dns1035_label(text) {
                ctx.push(
                    Diagnostic::new(
                        Rule::CrdInvalid,
                        format!("CRD \"{name}\": spec.names.{list} entry \"{text}\": {why}"),
                    )
                    .at(&crd.file, item.line),
                );
            }
        }
    }
}

fn printer_columns(ctx: &mut Ctx<'_>, crd: &Object, spec: &Node) {
    const TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
    const FORMATS: [&str; 8] = [
        "byte",
        "date",
        "date-time",
        "double",
        "float",
        "int32",
        "int64",
        "password",
    ];
    let name = crd.name.as_deref().unwrap_or("");
    let mut lists: Vec<&Node> = spec.get("additionalPrinterColumns").into_iter().collect();
    for v in spec.get("versions").and_then(Node::as_seq).unwrap_or(&[]) {
        lists.extend(v.get("additionalPrinterColumns"));
    }
    for col in lists.into_iter().filter_map(Node::as_seq).flatten() {
        let col_name = col.get("name").and_then(Node::scalar_text).unwrap_or("");
        let mut bad = |msg: String| {
            ctx.push(
                Diagnostic::new(
                    Rule::CrdInvalid,
                    format!("CRD \"{name}\": printer column \"{col_name}\": {msg}"),
                )
                .at(&crd.file, col.line),
            );
        };
        if col_name.is_empty() {
            bad("name is required".into());
        }
        match col.get("type").and_then(Node::scalar_text) {
            Some(t) if TYPES.contains(&t) => {}
            Some(t) => bad(format!("type \"{t}\" must be one of {}", TYPES.join(","))),
            None => bad(format!("type is required: one of {}", TYPES.join(","))),
        }
        if let Some(f) = col
            .get("format")
            .and_then(Node::scalar_text)
            .filter(|f| !f.is_empty())
            && !FORMATS.contains(&f)
        {
            bad(format!(
                "format \"{f}\" must be one of {}",
                FORMATS.join(",")
            ));
        }
        let path = col
            .get("jsonPath")
            .or_else(|| col.get("JSONPath"))
            .and_then(Node::scalar_text)
            .unwrap_or("");
        if path.is_empty() {
            bad("jsonPath is required".into());
        }
    }
}

/// A URL with a scheme and a host, as Go's `url.ParseRequestURI` plus the host check accept it.
fn is_url_with_host(v: &str) -> bool {
    let Some((scheme, rest)) = v.split_once("://") else {
        return false;
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    scheme_ok && !host.is_empty() && !v.contains(char::is_whitespace)
}
