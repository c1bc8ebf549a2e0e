//! Optional rule groups, off by default like operator-sdk's `--select-optional`: OperatorHub
//! listing requirements, good practices, and checks of the shipped objects.

use super::{Ctx, Diagnostic, Group, Rule, Severity};
use crate::bundle::Object;
use crate::bundle::keys;
use crate::yaml::Node;

const CAPABILITIES: [&str; 5] = [
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];
const CATEGORIES: [&str; 16] = [
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Database",
    "Developer Tools",
    "Drivers and plugins",
    "Integration & Delivery",
    "Logging & Tracing",
    "Modernization & Migration",
    "Monitoring",
    "Networking",
    "Observability",
    "OpenShift Optional",
    "Security",
    "Storage",
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
        let (name, email) = (text(m.get("name")), text(m.get("email")));
        if name.is_empty() || email.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::HubMaintainers,
                    "csv.Spec.Maintainers elements should contain both name and email",
                )
                .at(file, m.line),
            );
        } else if !valid_email(email) {
            ctx.push(
                Diagnostic::new(
                    Rule::HubMaintainers,
                    format!("csv.Spec.Maintainers email {email} is invalid"),
                )
                .at(file, m.line),
            );
        }
    }
    for l in spec.get("links").and_then(Node::as_seq).unwrap_or(&[]) {
        let (name, url) = (text(l.get("name")), text(l.get("url")));
        if name.is_empty() || url.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::HubLinks,
                    "csv.Spec.Links elements should contain both name and url",
                )
                .at(file, l.line),
            );
        } else if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains(' ')
        {
            ctx.push(
                Diagnostic::new(
                    Rule::HubLinks,
                    format!("csv.Spec.Links url {url} is invalid"),
                )
                .at(file, l.line),
            );
        }
    }
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
            let (data, media) = (text(icon.get("base64data")), text(icon.get("mediatype")));
            if data.is_empty() || media.is_empty() {
                ctx.push(
                    Diagnostic::new(
                        Rule::HubIcon,
                        "csv.Spec.Icon elements should contain both data and mediatype",
                    )
                    .at(file, icon.line),
                );
            } else if !ICON_TYPES.contains(&media) {
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
    let annotations = csv.root.path(&["metadata", "annotations"]);
    if let Some(cap) = annotations.and_then(|a| a.get("capabilities")) {
        let value = text(Some(cap));
        if !CAPABILITIES.contains(&value) {
            ctx.push(
                Diagnostic::new(
                    Rule::HubCapabilities,
                    format!(
                        "capabilities \"{value}\" is not a valid capabilities level: use one of {}",
                        CAPABILITIES.join(", ")
                    ),
                )
                .at(file, cap.line),
            );
        }
    }
    if let Some(cat) = annotations.and_then(|a| a.get("categories")) {
        for c in text(Some(cat))
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            if !CATEGORIES.contains(&c) {
                ctx.push(
                    Diagnostic::new(
                        Rule::HubCategories,
                        format!("category \"{c}\" is not in the set of standard categories"),
                    )
                    .at(file, cat.line),
                );
            }
        }
    }
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

fn valid_email(email: &str) -> bool {
    match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !email.contains(char::is_whitespace)
        }
        None => false,
    }
}

fn good_practices(ctx: &mut Ctx<'_>) {
    let bundle = ctx.bundle;
    if let Some(ann) = &bundle.annotations {
        let bad: Vec<String> = ann
            .channels()
            .into_iter()
            .filter(|c| {
                !c.is_empty()
                    && !["candidate", "stable", "fast"]
                        .iter()
                        .any(|p| c.starts_with(p))
            })
            .collect();
        if !bad.is_empty() {
            let line = ann.get(keys::CHANNELS).map_or(ann.line, |a| a.line);
            ctx.push(
                Diagnostic::new(
                    Rule::PracticeChannelNaming,
                    format!("channel(s) {bad:?} are not following the recommended naming convention: https://olm.operatorframework.io/docs/best-practices/channel-naming"),
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
            let requests = c.path(&["resources", "requests"]);
            if requests.and_then(|r| r.get("cpu")).is_none()
                || requests.and_then(|r| r.get("memory")).is_none()
            {
                ctx.push(
                    Diagnostic::new(
                        Rule::PracticeResources,
                        format!("unable to find the resource requests for the container: ({}); set CPU and memory requests", text(c.get("name"))),
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
            if text(item.get("description")).is_empty() {
                ctx.push(
                    Diagnostic::new(
                        Rule::PracticeCrdDescription,
                        format!(
                            "{section} CRD \"{}\" has an empty description",
                            text(item.get("name"))
                        ),
                    )
                    .at(file, item.line),
                );
            }
        }
    }
    for perms in ["permissions", "clusterPermissions"] {
        for p in spec
            .path(&["install", "spec", perms])
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            for rule in p.get("rules").and_then(Node::as_seq).unwrap_or(&[]) {
                let has = |field: &str, wanted: &[&str]| {
                    rule.get(field)
                        .and_then(Node::as_seq)
                        .unwrap_or(&[])
                        .iter()
                        .any(|n| n.scalar_text().is_some_and(|t| wanted.contains(&t)))
                };
                if has("apiGroups", &["apiextensions.k8s.io", "*"])
                    && has("resources", &["customresourcedefinitions", "*"])
                    && has("verbs", &["create", "*"])
                {
                    ctx.push(
                        Diagnostic::new(
                            Rule::PracticeCrdPermission,
                            "CSV contains permissions to create CRD: an operator should not deploy or manage other operators' APIs",
                        )
                        .at(file, rule.line),
                    );
                }
            }
        }
    }
    if let Some(name) = csv.name.as_deref() {
        let ok = match name.split_once(".v") {
            Some((_, version)) => semver::Version::parse(version).is_ok(),
            None => false,
        };
        if !ok {
            ctx.push(
                Diagnostic::new(
                    Rule::PracticeCsvName,
                    format!("csv.metadata.Name {name} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1"),
                )
                .at(file, csv.line_of(&["metadata", "name"])),
            );
        }
    }
}

fn bundle_objects(ctx: &mut Ctx<'_>) {
    for obj in &ctx.bundle.objects {
        match obj.kind.as_str() {
            "PodDisruptionBudget" => {
                let spec = obj.root.get("spec");
                if let Some(max) = spec.and_then(|s| s.get("maxUnavailable"))
                    && matches!(text(Some(max)), "0" | "0%")
                {
                    ctx.push(
                        Diagnostic::new(
                            Rule::ObjectsPdb,
                            "maxUnavailable field cannot be set to 0 or 0%",
                        )
                        .at(&obj.file, max.line),
                    );
                }
                if let Some(min) = spec.and_then(|s| s.get("minAvailable"))
                    && text(Some(min)) == "100%"
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
                for rule in obj.root.get("rules").and_then(Node::as_seq).unwrap_or(&[]) {
                    let list = |f: &str| -> Vec<&str> {
                        rule.get(f)
                            .and_then(Node::as_seq)
                            .unwrap_or(&[])
                            .iter()
                            .filter_map(Node::scalar_text)
                            .collect()
                    };
                    let (groups, resources, verbs, names) = (
                        list("apiGroups"),
                        list("resources"),
                        list("verbs"),
                        list("resourceNames"),
                    );
                    let modifies = verbs
                        .iter()
                        .any(|v| matches!(*v, "*" | "create" | "update" | "patch" | "delete"));
                    if modifies
                        && groups.iter().any(|g| matches!(*g, "policy" | "*"))
                        && resources
                            .iter()
                            .any(|r| matches!(*r, "poddisruptionbudgets" | "*"))
                    {
                        ctx.push(
                            Diagnostic::new(Rule::ObjectsRbac, "RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability")
                                .with_severity(Severity::Warning)
                                .at(&obj.file, rule.line),
                        );
                    }
                    let scc = groups
                        .iter()
                        .any(|g| matches!(*g, "security.openshift.io" | "*"))
                        && resources
                            .iter()
                            .any(|r| matches!(*r, "securitycontextconstraints" | "*"));
                    let default_names =
                        names.is_empty() || names.iter().any(|n| DEFAULT_SCCS.contains(n));
                    if modifies && scc && default_names {
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
