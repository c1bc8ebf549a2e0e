//! Optional rule groups, off by default like operator-sdk's `--select-optional`: OperatorHub
//! listing requirements, good practices, and checks of the shipped objects.

use super::{Ctx, Diagnostic, Group, Rule, Severity};
use crate::bundle::Object;
use crate::bundle::keys;
use crate::gocompat::netaddr;
use crate::yaml::Node;

const CAPABILITIES: [&str; 5] = [
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];
/// operator-framework/api's `validCategories` (`standardcategories.go`, current main).
const CATEGORIES: [&str; 16] = [
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Database",
    "Developer Tools",
    "Integration & Delivery",
    "Logging & Tracing",
    "Modernization & Migration",
    "Monitoring",
    "Networking",
    "Observability",
    "OpenShift Optional",
    "Security",
    "Storage",
    "Streaming & Messaging",
];
const ICON_TYPES: [&str; 4] = ["image/gif", "image/jpeg", "image/png", "image/svg+xml"];
const DEFAULT_SCCS: [&str; 8] = [
    "privileged",
    "restricted",
    "anyuid",
    "hostaccess",
    "hostmount-anyuid",
    "hostnetwork",
    "node-exporter",
    "nonroot",
];

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    if ctx.opts.selected(Group::OperatorHub)
        && let Some(csv) = ctx.bundle.csv()
    {
        operatorhub(ctx, csv);
    }
    if ctx.opts.selected(Group::GoodPractices) {
        good_practices(ctx);
    }
    if ctx.opts.selected(Group::BundleObjects) {
        bundle_objects(ctx);
    }
}

/// A scalar as written, untrimmed (`""` when absent or null): operator-framework/api compares
/// most CSV fields without trimming them.
fn raw(node: Option<&Node>) -> &str {
    node.and_then(Node::scalar_text).unwrap_or("")
}

fn text(node: Option<&Node>) -> &str {
    node.and_then(Node::scalar_text)
        .map(str::trim)
        .unwrap_or("")
}

fn operatorhub(ctx: &mut Ctx<'_>, csv: &Object) {
    let file = csv.file.as_str();
    let Some(spec) = csv.root.get("spec").filter(|s| s.as_map().is_some()) else {
        return;
    };
    if text(spec.path(&["provider", "name"])).is_empty() {
        ctx.push(
            Diagnostic::new(Rule::HubProvider, "csv.Spec.Provider.Name not specified")
                .at(file, spec.line),
        );
    }
    for m in spec
        .get("maintainers")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        // As operator-framework/api: empty (not trimmed) fields, then the email as Go's
        // net/mail parses it; both can be reported for one maintainer.
        let (name, email) = (raw(m.get("name")), raw(m.get("email")));
        if name.is_empty() || email.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::HubMaintainers,
                    "csv.Spec.Maintainers elements should contain both name and email",
                )
                .at(file, m.line),
            );
        }
        if !email.is_empty()
            && let Err(why) = netaddr::parse_mail_address(email)
        {
            ctx.push(
                Diagnostic::new(
                    Rule::HubMaintainers,
                    format!("csv.Spec.Maintainers email {email} is invalid: {why}"),
                )
                .at(file, m.line),
            );
        }
    }
    for l in spec.get("links").and_then(Node::as_seq).unwrap_or(&[]) {
        let (name, url) = (raw(l.get("name")), raw(l.get("url")));
        if name.is_empty() || url.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::HubLinks,
                    "csv.Spec.Links elements should contain both name and url",
                )
                .at(file, l.line),
            );
        }
        if !url.is_empty()
            && let Err(why) = netaddr::parse_request_uri(url)
        {
            ctx.push(
                Diagnostic::new(
                    Rule::HubLinks,
                    format!("csv.Spec.Links url {url} is invalid: {why}"),
                )
                .at(file, l.line),
            );
        }
    }
    hub_icon(ctx, file, spec);
    hub_annotations(ctx, csv);
    for (field, what) in [("description", "a description"), ("keywords", "keywords")] {
        let present = match spec.get(field) {
            Some(n) => n.as_seq().is_some_and(|s| !s.is_empty()) || !text(Some(n)).is_empty(),
            None => false,
        };
        if !present {
            ctx.push(
                Diagnostic::new(
                    Rule::HubDescription,
                    format!("spec.{field} is empty: the listing needs {what}"),
                )
                .at(file, spec.line),
            );
        }
    }
}

/// The listing's icon: one, with data and a media type the hub shows.
fn hub_icon(ctx: &mut Ctx<'_>, file: &str, spec: &Node) {
    match spec.get("icon").and_then(Node::as_seq) {
        None | Some([]) => ctx.push(
            Diagnostic::new(Rule::HubIcon, "csv.Spec.Icon not specified")
                .with_severity(Severity::Warning)
                .at(file, spec.line),
        ),
        Some(icons) => {
            if icons.len() > 1 {
                ctx.push(
                    Diagnostic::new(Rule::HubIcon, "csv.Spec.Icon should only have one element")
                        .at(file, icons[1].line),
                );
            }
            let icon = &icons[0];
            let (data, media) = (raw(icon.get("base64data")), raw(icon.get("mediatype")));
            if data.is_empty() || media.is_empty() {
                ctx.push(
                    Diagnostic::new(
                        Rule::HubIcon,
                        "csv.Spec.Icon elements should contain both data and mediatype",
                    )
                    .at(file, icon.line),
                );
            }
            if !media.is_empty() && !ICON_TYPES.contains(&media) {
                ctx.push(
                    Diagnostic::new(
                        Rule::HubIcon,
                        format!(
                            "csv.Spec.Icon {media} does not have a valid mediatype ({})",
                            ICON_TYPES.join(", ")
                        ),
                    )
                    .at(file, icon.line),
                );
            }
        }
    }
}

/// The capability level and the categories annotations, against the hub's sets.
fn hub_annotations(ctx: &mut Ctx<'_>, csv: &Object) {
    let file = csv.file.as_str();
    let annotations = csv.root.path(&["metadata", "annotations"]);
    if let Some(cap) = annotations.and_then(|a| a.get("capabilities")) {
        // Compared as written, untrimmed, as operator-framework/api does.
        let value = raw(Some(cap));
        if !CAPABILITIES.contains(&value) {
            ctx.push(
                Diagnostic::new(
                    Rule::HubCapabilities,
                    format!(
                        "csv.Metadata.Annotations.Capabilities {value:?} is not a valid capabilities level: use one of {}",
                        CAPABILITIES.join(", ")
                    ),
                )
                .at(file, cap.line),
            );
        }
    }
    if let Some(cat) = annotations.and_then(|a| a.get("categories")) {
        // Every comma-separated value, trimmed (an empty one too, as operator-sdk reports it),
        // against the standard set or the custom set of OPERATOR_BUNDLE_CATEGORIES.
        let (set, which): (Vec<&str>, &str) = match &ctx.opts.categories {
            Some(custom) => (custom.iter().map(String::as_str).collect(), "custom"),
            None => (CATEGORIES.to_vec(), "standard"),
        };
        let mut bad = Vec::new();
        for c in raw(Some(cat)).split(',') {
            let c = c.trim();
            if !set.contains(&c) {
                bad.push(format!(
                    "csv.Metadata.Annotations[\"categories\"] value {c:?} is not in the set of {which} categories"
                ));
            }
        }
        for message in bad {
            ctx.push(Diagnostic::new(Rule::HubCategories, message).at(file, cat.line));
        }
    }
}

fn good_practices(ctx: &mut Ctx<'_>) {
    let bundle = ctx.bundle;
    if let Some(ann) = &bundle.annotations {
        // operator-framework/api: the channels and the default channel, trimmed, unique.
        let mut names = ann.channels();
        names.extend(ann.value(keys::DEFAULT_CHANNEL).map(str::to_string));
        let mut bad: Vec<String> = names
            .into_iter()
            .filter(|c| {
                !c.is_empty()
                    && !["candidate", "stable", "fast"]
                        .iter()
                        .any(|p| c.starts_with(p))
            })
            .collect();
        bad.sort();
        bad.dedup();
        if !bad.is_empty() {
            let line = ann.get(keys::CHANNELS).map_or(ann.line, |a| a.line);
            let quoted: Vec<String> = bad.iter().map(|c| format!("{c:?}")).collect();
            ctx.push(
                Diagnostic::new(
                    Rule::PracticeChannelNaming,
                    format!("channel(s) [{}] are not following the recommended naming convention: https://olm.operatorframework.io/docs/best-practices/channel-naming", quoted.join(" ")),
                )
                .at(&ann.file, line),
            );
        }
    }
    let Some(csv) = bundle.csv() else { return };
    let file = csv.file.as_str();
    let Some(spec) = csv.root.get("spec") else {
        return;
    };
    for dep in spec
        .path(&["install", "spec", "deployments"])
        .and_then(Node::as_seq)
        .unwrap_or(&[])
    {
        for c in dep
            .path(&["spec", "template", "spec", "containers"])
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            // operator-framework/api warns only when `resources.requests` is absent: a
            // missing cpu or memory reads as a zero quantity there, which passes.
            if c.path(&["resources", "requests"]).is_none_or(Node::is_null) {
                ctx.push(
                    Diagnostic::new(
                        Rule::PracticeResources,
                        format!("unable to find the resource requests for the container: ({}). It is recommended to ensure the resource request for CPU and Memory", raw(c.get("name"))),
                    )
                    .at(file, c.line),
                );
            }
            let image = text(c.get("image"));
            if !image.is_empty() && !image.contains("@sha256:") {
                ctx.push(
                    Diagnostic::new(
                        Rule::PracticeImageDigest,
                        format!("image {image} is referenced by tag; pin it by digest"),
                    )
                    .at(file, c.get("image").map_or(c.line, |n| n.line)),
                );
            }
        }
    }
    for section in ["owned", "required"] {
        for item in spec
            .path(&["customresourcedefinitions", section])
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            if raw(item.get("description")).is_empty() {
                ctx.push(
                    Diagnostic::new(
                        Rule::PracticeCrdDescription,
                        format!(
                            "{section} CRD {:?} has an empty description",
                            raw(item.get("name"))
                        ),
                    )
                    .at(file, item.line),
                );
            }
        }
    }
    // operator-framework/api: the group exactly apiextensions.k8s.io, and one warning per CSV.
    let crd_rule = ["permissions", "clusterPermissions"]
        .iter()
        .flat_map(|perms| {
            spec.path(&["install", "spec", *perms])
                .and_then(Node::as_seq)
                .unwrap_or(&[])
        })
        .flat_map(|p| p.get("rules").and_then(Node::as_seq).unwrap_or(&[]))
        .find(|rule| {
            let has = |field: &str, wanted: &[&str]| {
                rule.get(field)
                    .and_then(Node::as_seq)
                    .unwrap_or(&[])
                    .iter()
                    .any(|n| n.scalar_text().is_some_and(|t| wanted.contains(&t)))
            };
            has("apiGroups", &["apiextensions.k8s.io"])
                && has("resources", &["customresourcedefinitions", "*", "[*]"])
                && has("verbs", &["create", "*", "[*]", "patch"])
        });
    if let Some(rule) = crd_rule {
        ctx.push(
            Diagnostic::new(
                Rule::PracticeCrdPermission,
                "CSV contains permissions to create CRD: an operator should not deploy or manage other operators' APIs",
            )
            .at(file, rule.line),
        );
    }
    if let Some(name) = csv.name.as_deref() {
        let line = csv.line_of(&["metadata", "name"]);
        if !version_suffix_is_semver(name) {
            ctx.push(
                Diagnostic::new(
                    Rule::PracticeCsvName,
                    format!("csv.metadata.Name {name} is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): https://semver.org/"),
                )
                .at(file, line),
            );
        }
        if name.matches(".v").count() != 1 {
            ctx.push(
                Diagnostic::new(
                    Rule::PracticeCsvName,
                    format!("csv.metadata.Name {name} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1"),
                )
                .at(file, line),
            );
        }
    }
}

/// operator-framework/api's name check: the leftmost match of
/// `([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$`
/// must exist and parse as a semantic version (no leading zeros).
fn version_suffix_is_semver(name: &str) -> bool {
    let tail_matches = |t: &str| -> bool {
        let ident =
            |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let (core, build) = match t.split_once('+') {
            Some((c, b)) => (c, Some(b)),
            None => (t, None),
        };
        if build.is_some_and(|b| !ident(b)) {
            return false;
        }
        let (numbers, pre) = match core.split_once('-') {
            Some((n, p)) => (n, Some(p)),
            None => (core, None),
        };
        if pre.is_some_and(|p| !p.split('.').all(ident)) {
            return false;
        }
        let parts: Vec<&str> = numbers.split('.').collect();
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    name.char_indices()
        .filter(|(_, c)| c.is_ascii_digit())
        .map(|(i, _)| &name[i..])
        .find(|t| tail_matches(t))
        .is_some_and(|t| semver::Version::parse(t).is_ok())
}

fn bundle_objects(ctx: &mut Ctx<'_>) {
    for obj in &ctx.bundle.objects {
        match obj.kind.as_str() {
            "PodDisruptionBudget" => {
                let spec = obj.root.get("spec");
                // An IntOrString as operator-framework/api reads it: `IntVal == 0` holds for
                // the integer 0 and for every string (a percentage decodes with IntVal 0), so
                // operator-sdk refuses `maxUnavailable: 25%` too.
                if let Some(max) = spec
                    .and_then(|s| s.get("maxUnavailable"))
                    .filter(|m| !m.is_null())
                    && (max.as_i64() == Some(0) || max.as_str().is_some())
                {
                    let value = text(Some(max));
                    let why = if value == "0" || value == "0%" {
                        String::new()
                    } else {
                        format!(" (operator-sdk reads the string {value:?} as 0)")
                    };
                    ctx.push(
                        Diagnostic::new(
                            Rule::ObjectsPdb,
                            format!("maxUnavailable field cannot be set to 0 or 0%{why}"),
                        )
                        .at(&obj.file, max.line),
                    );
                }
                if let Some(min) = spec.and_then(|s| s.get("minAvailable"))
                    && min.as_str() == Some("100%")
                {
                    ctx.push(
                        Diagnostic::new(
                            Rule::ObjectsPdb,
                            "minAvailable field cannot be set to 100%",
                        )
                        .at(&obj.file, min.line),
                    );
                }
            }
            "PriorityClass" => {
                if let Some(g) = obj
                    .root
                    .get("globalDefault")
                    .filter(|g| g.as_bool() == Some(true))
                {
                    ctx.push(
                        Diagnostic::new(
                            Rule::ObjectsPriorityClass,
                            "globalDefault field cannot be set to true",
                        )
                        .at(&obj.file, g.line),
                    );
                }
            }
            "Role" | "ClusterRole" => {
                // operator-framework/api matches exact names: no `*` group or resource, and
                // an SCC rule only when it names a default SCC in resourceNames.
                let rules = obj.root.get("rules").and_then(Node::as_seq).unwrap_or(&[]);
                let list = |rule: &Node, f: &str| -> Vec<String> {
                    rule.get(f)
                        .and_then(Node::as_seq)
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(Node::scalar_text)
                        .map(str::to_string)
                        .collect()
                };
                let any =
                    |v: &[String], wanted: &[&str]| v.iter().any(|x| wanted.contains(&x.as_str()));
                for rule in rules {
                    if any(&list(rule, "apiGroups"), &["policy"])
                        && any(&list(rule, "resources"), &["poddisruptionbudgets"])
                        && any(&list(rule, "verbs"), &["*", "create", "update", "patch"])
                    {
                        ctx.push(
                            Diagnostic::new(Rule::ObjectsRbac, "RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability")
                                .with_severity(Severity::Warning)
                                .at(&obj.file, rule.line),
                        );
                    }
                }
                for rule in rules {
                    if any(&list(rule, "apiGroups"), &["security.openshift.io"])
                        && any(&list(rule, "resources"), &["securitycontextconstraints"])
                        && any(&list(rule, "verbs"), &["*", "delete", "update", "patch"])
                        && any(&list(rule, "resourceNames"), &DEFAULT_SCCS)
                    {
                        ctx.push(
                            Diagnostic::new(Rule::ObjectsRbac, "RBAC includes permission to modify default securitycontextconstraints, which could impact cluster stability")
                                .at(&obj.file, rule.line),
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::version_suffix_is_semver;

    #[test]
    fn csv_name_versions_as_operator_framework_reads_them() {
        for ok in [
            "op.v1.2.3",
            "op.v1.2.3-rc.1",
            "op.v1.2.3+build",
            "op-1.2.3",
            "op.v10.0.0",
        ] {
            assert!(version_suffix_is_semver(ok), "{ok}");
        }
        for bad in [
            "op",
            "op.v1.2",
            "op.vbar",
            "op.v01.2.3",
            "op.v1.2.3+a.b",
            "op.v1.2.3.",
        ] {
            assert!(!version_suffix_is_semver(bad), "{bad}");
        }
    }
}
