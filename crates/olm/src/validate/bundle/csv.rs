//! ClusterServiceVersion rules: exactly one CSV, its required fields, names, version, install
//! modes, deployments, webhooks, examples and annotations (operator-framework/api's CSV validator
//! plus OLM v1's registry+v1 checks, with the duplicate-install-mode check that upstream skips).

use super::names;
use super::{Ctx, Diagnostic, Rule, Severity};
use crate::bundle::keys;
use crate::bundle::{Csv, Object};
use crate::semver_range;
use crate::yaml::Node;
use std::collections::{BTreeSet, HashMap};

/// Install mode types OLM knows.
const INSTALL_MODES: [&str; 4] = [
    "OwnNamespace",
    "SingleNamespace",
    "MultiNamespace",
    "AllNamespaces",
];

/// CSV annotations whose key case matters (API `annotations.go`).
const CASED_ANNOTATIONS: [&str; 5] = [
    "olm.operatorGroup",
    keys::OPERATOR_NAMESPACE,
    keys::TARGET_NAMESPACES,
    "olm.providedAPIs",
    keys::SKIP_RANGE,
];

pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let bundle = ctx.bundle;
    let csvs: Vec<&Object> = bundle.objects.iter().filter(|o| o.is_csv()).collect();
    match csvs.len() {
        0 => {
            if bundle.manifests_dir.is_none() {
                return; // format/manifests-missing already says it all
            }
            let message = if bundle.unparsable_manifests.is_empty() {
                "no ClusterServiceVersion in manifests/: a registry+v1 bundle needs exactly one"
                    .to_string()
            } else {
                format!(
                    "no parsable ClusterServiceVersion: {} could not be parsed (see the errors above); a registry+v1 bundle needs exactly one",
                    bundle.unparsable_manifests.join(", ")
                )
            };
            let mut d = Diagnostic::new(Rule::CsvMissing, message);
            if let Some(dir) = &bundle.manifests_dir {
                d = d.in_file(format!("{dir}/"));
            }
            ctx.push(d);
        }
        1 => check_csv(ctx, csvs[0]),
        _ => {
            let list: Vec<String> = csvs
                .iter()
                .map(|c| format!("{} ({})", c.name.as_deref().unwrap_or("<unnamed>"), c.file))
                .collect();
            for c in &csvs[1..] {
                ctx.push(
                    Diagnostic::new(
                        Rule::CsvMultiple,
                        format!(
                            "bundle contains {} ClusterServiceVersions: {}; keep exactly one",
                            csvs.len(),
                            list.join(", ")
                        ),
                    )
                    .at(&c.file, c.line()),
                );
            }
        }
    }
}

fn check_csv(ctx: &mut Ctx<'_>, csv: &Object) {
    let file = csv.file.as_str();
    if csv.api_version != "operators.coreos.com/v1alpha1" {
        ctx.push(
            Diagnostic::new(
                Rule::CsvApiVersion,
                format!("ClusterServiceVersion has apiVersion \"{}\"; OLM serves operators.coreos.com/v1alpha1", csv.api_version),
            )
            .at(file, csv.line_of(&["apiVersion"])),
        );
    }
    // Names.
    match &csv.name {
        None => ctx.push(
            Diagnostic::new(Rule::CsvRequiredField, "metadata.name is missing")
                .at(file, csv.line_of(&["metadata"])),
        ),
        Some(name) => {
            // The name becomes a label value on the objects OLM creates, hence the 63-character limit.
            if let Err(why) = names::dns1123_subdomain(name).and_then(|()| names::label_value(name))
            {
                ctx.push(
                    Diagnostic::new(
                        Rule::CsvName,
                        format!("metadata.name \"{name}\" is invalid: {why}"),
                    )
                    .at(file, csv.line_of(&["metadata", "name"])),
                );
            }
        }
    }
    let Some(spec) = csv.root.get("spec").filter(|s| s.as_map().is_some()) else {
        ctx.push(
            Diagnostic::new(Rule::CsvRequiredField, "spec is missing or not a mapping")
                .at(file, csv.line()),
        );
        return;
    };
    if let Some(replaces) = spec
        .get("replaces")
        .and_then(Node::scalar_text)
        .filter(|r| !r.is_empty())
        && let Err(why) =
            names::dns1123_subdomain(replaces).and_then(|()| names::label_value(replaces))
    {
        ctx.push(
            Diagnostic::new(
                Rule::CsvName,
                format!("spec.replaces \"{replaces}\" is invalid: {why}"),
            )
            .at(file, csv.line_of(&["spec", "replaces"])),
        );
    }
    match spec.get("version") {
        Some(v) => match v.scalar_text() {
            Some(text) => {
                if let Err(why) = names::semver(text) {
                    // OLM parses spec.version tolerantly (a `v` prefix, missing minor/patch).
                    let d = match parse_tolerant(text) {
                        Some(fixed) => Diagnostic::new(
                            Rule::CsvVersion,
                            format!("spec.version \"{text}\" is not a strict semantic version ({why}); OLM reads it as {fixed}: write \"{fixed}\""),
                        )
                        .with_severity(Severity::Warning),
                        None => Diagnostic::new(
                            Rule::CsvVersion,
                            format!("spec.version \"{text}\" is not a semantic version: {why}"),
                        ),
                    };
                    ctx.push(d.at(file, v.line));
                }
            }
            None => ctx.push(
                Diagnostic::new(Rule::CsvVersion, "spec.version must be a string such as \"1.2.3\"")
                    .at(file, v.line),
            ),
        },
        None => ctx.push(
            Diagnostic::new(
                Rule::CsvVersion,
                "spec.version is not set: OLM orders upgrades by it; set it to the bundle's semantic version",
            )
            .with_severity(Severity::Warning)
            .at(file, spec.line),
        ),
    }
    release(ctx, csv, spec);
    field_types(ctx, csv);
    required_fields(ctx, csv, spec);
    install_modes(ctx, csv, spec);
    let deployments = deployments(ctx, csv);
    webhooks(ctx, csv, spec, &deployments);
    examples(ctx, csv);
    min_kube_version(ctx, csv, spec);
    annotations(ctx, csv);
    related_images(ctx, csv, spec);
}

/// The shape a CSV field must have for OLM's typed decoding to accept it.
#[derive(Clone, Copy)]
enum Shape {
    Scalar,
    List,
    Map,
}

/// CSV fields and their shapes; `*` walks every element of a list.
const FIELD_SHAPES: &[(&str, Shape)] = &[
    ("metadata.annotations", Shape::Map),
    ("metadata.labels", Shape::Map),
    ("spec.displayName", Shape::Scalar),
    ("spec.description", Shape::Scalar),
    ("spec.version", Shape::Scalar),
    ("spec.replaces", Shape::Scalar),
    ("spec.minKubeVersion", Shape::Scalar),
    ("spec.maturity", Shape::Scalar),
    ("spec.skips", Shape::List),
    ("spec.keywords", Shape::List),
    ("spec.keywords.*", Shape::Scalar),
    ("spec.maintainers", Shape::List),
    ("spec.maintainers.*", Shape::Map),
    ("spec.links", Shape::List),
    ("spec.links.*", Shape::Map),
    ("spec.icon", Shape::List),
    ("spec.icon.*", Shape::Map),
    ("spec.provider", Shape::Map),
    ("spec.installModes", Shape::List),
    ("spec.installModes.*", Shape::Map),
    ("spec.installModes.*.type", Shape::Scalar),
    ("spec.install", Shape::Map),
    ("spec.install.spec", Shape::Map),
    ("spec.install.spec.deployments", Shape::List),
    ("spec.install.spec.deployments.*", Shape::Map),
    ("spec.install.spec.deployments.*.name", Shape::Scalar),
    (
        "spec.install.spec.deployments.*.spec.template.spec.containers",
        Shape::List,
    ),
    ("spec.install.spec.permissions", Shape::List),
    ("spec.install.spec.clusterPermissions", Shape::List),
    ("spec.install.spec.permissions.*.rules", Shape::List),
    ("spec.install.spec.clusterPermissions.*.rules", Shape::List),
    (
        "spec.install.spec.permissions.*.rules.*.apiGroups",
        Shape::List,
    ),
    (
        "spec.install.spec.clusterPermissions.*.rules.*.apiGroups",
        Shape::List,
    ),
    (
        "spec.install.spec.permissions.*.rules.*.resources",
        Shape::List,
    ),
    (
        "spec.install.spec.clusterPermissions.*.rules.*.resources",
        Shape::List,
    ),
    ("spec.install.spec.permissions.*.rules.*.verbs", Shape::List),
    (
        "spec.install.spec.clusterPermissions.*.rules.*.verbs",
        Shape::List,
    ),
    ("spec.customresourcedefinitions", Shape::Map),
    ("spec.customresourcedefinitions.owned", Shape::List),
    ("spec.customresourcedefinitions.required", Shape::List),
    ("spec.apiservicedefinitions", Shape::Map),
    ("spec.apiservicedefinitions.owned", Shape::List),
    ("spec.apiservicedefinitions.required", Shape::List),
    ("spec.webhookdefinitions", Shape::List),
    ("spec.relatedImages", Shape::List),
    ("spec.relatedImages.*", Shape::Map),
    ("spec.relatedImages.*.image", Shape::Scalar),
];

/// Wrong shapes (a list where a string belongs, …) that OLM's typed decoding rejects outright.
fn field_types(ctx: &mut Ctx<'_>, csv: &Object) {
    for (path, shape) in FIELD_SHAPES {
        let parts: Vec<&str> = path.split('.').collect();
        // The path of a finding is spelled out only when there is one: a large CSV has
        // thousands of permission rules, and formatting each one's path cost more than the rule.
        let mut trail = Vec::with_capacity(parts.len());
        walk_at(&csv.root, &parts, &mut trail, &mut |trail, node| {
            if node.is_null() {
                return;
            }
            let ok = match shape {
                Shape::Scalar => node.scalar_text().is_some(),
                Shape::List => node.as_seq().is_some(),
                Shape::Map => node.as_map().is_some(),
            };
            if !ok {
                let want = match shape {
                    Shape::Scalar => "a string",
                    Shape::List => "a list",
                    Shape::Map => "a mapping",
                };
                ctx.push(
                    Diagnostic::new(
                        Rule::CsvFieldType,
                        format!(
                            "{} must be {want}, found a {}",
                            spell_trail(trail),
                            node.kind_name()
                        ),
                    )
                    .at(&csv.file, node.line),
                );
            }
        });
    }
    // Annotation values are strings; `categories: [a, b]` is a common slip.
    if let Some(entries) = csv
        .root
        .path(&["metadata", "annotations"])
        .and_then(Node::as_map)
    {
        for (key, value) in entries {
            if value.as_seq().is_some() || value.as_map().is_some() {
                ctx.push(
                    Diagnostic::new(
                        Rule::CsvFieldType,
                        format!(
                            "metadata.annotations.{} must be a string, found a {}",
                            key.text,
                            value.kind_name()
                        ),
                    )
                    .at(&csv.file, value.line),
                );
            }
        }
    }
}

/// One step of a path to a node: a mapping key or a sequence index.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Calls `found` with every node at `parts` under `node` (`*` stands for every item of a
/// sequence), in document order, with the steps taken to reach it.
fn walk_at<'a>(
    node: &Node,
    parts: &[&'a str],
    trail: &mut Vec<Step<'a>>,
    found: &mut impl FnMut(&[Step<'a>], &Node),
) {
    let Some((first, rest)) = parts.split_first() else {
        found(trail, node);
        return;
    };
    if *first == "*" {
        for (i, item) in node.as_seq().unwrap_or(&[]).iter().enumerate() {
            trail.push(Step::Index(i));
            walk_at(item, rest, trail, found);
            trail.pop();
        }
    } else if let Some(child) = node.get(first) {
        trail.push(Step::Key(first));
        walk_at(child, rest, trail, found);
        trail.pop();
    }
}

/// A path as the messages write it: `spec.install.spec.permissions[0].rules`.
fn spell_trail(trail: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in trail {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn required_fields(ctx: &mut Ctx<'_>, csv: &Object, spec: &Node) {
    let file = csv.file.as_str();
    let missing = |ctx: &mut Ctx<'_>, path: &str, line: usize| {
        ctx.push(
            Diagnostic::new(
                Rule::CsvRequiredField,
                format!("{path}: required field missing"),
            )
            .at(file, line),
        );
    };
    if spec
        .get("displayName")
        .and_then(Node::scalar_text)
        .is_none_or(str::is_empty)
    {
        missing(ctx, "spec.displayName", spec.line);
    }
    let Some(install) = spec.get("install").filter(|n| n.as_map().is_some()) else {
        missing(ctx, "spec.install", spec.line);
        return;
    };
    if install
        .get("strategy")
        .and_then(Node::scalar_text)
        .is_none_or(str::is_empty)
    {
        missing(ctx, "spec.install.strategy", install.line);
    }
    // install.spec is optional in the Go type, but when present its deployments list is required.
    if let Some(strategy_spec) = install.get("spec").filter(|n| !n.is_null()) {
        let deployments = strategy_spec.get("deployments");
        if deployments.is_none_or(Node::is_null) {
            missing(
                ctx,
                "spec.install.spec.deployments",
                deployments.map_or(strategy_spec.line, |d| d.line),
            );
        }
    }
    // Descriptors inside lists: upstream's reflection never looks there, but OLM needs these
    // fields to match APIs, so an owned entry without them is an error and a required one a
    // warning.
    for (group, fields) in [
        (
            "customresourcedefinitions",
            &["name", "version", "kind"][..],
        ),
        (
            "apiservicedefinitions",
            &["group", "version", "kind", "name"][..],
        ),
    ] {
        for section in ["owned", "required"] {
            let items = spec
                .path(&[group, section])
                .and_then(Node::as_seq)
                .unwrap_or(&[]);
            for (i, item) in items.iter().enumerate() {
                for field in fields {
                    if item
                        .get(field)
                        .and_then(Node::scalar_text)
                        .is_none_or(str::is_empty)
                    {
                        let d = Diagnostic::new(
                            Rule::CsvRequiredField,
                            format!("spec.{group}.{section}[{i}].{field}: required field missing"),
                        )
                        .at(file, item.line);
                        let d = if section == "required" {
                            d.with_severity(Severity::Warning)
                        } else {
                            d
                        };
                        ctx.push(d);
                    }
                }
            }
        }
    }
}

fn install_modes(ctx: &mut Ctx<'_>, csv: &Object, spec: &Node) {
    let file = csv.file.as_str();
    let Some(modes) = spec
        .get("installModes")
        .and_then(Node::as_seq)
        .filter(|m| !m.is_empty())
    else {
        ctx.push(
            Diagnostic::new(
                Rule::CsvInstallModes,
                "install modes not found: list spec.installModes (OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces) with supported: true/false",
            )
            .at(file, spec.get("installModes").map_or(spec.line, |n| n.line)),
        );
        return;
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut any_supported = false;
    for mode in modes {
        let ty = mode.get("type").and_then(Node::scalar_text).unwrap_or("");
        let supported = mode.get("supported").and_then(Node::as_bool);
        if supported == Some(true) {
            any_supported = true;
        }
        if !INSTALL_MODES.contains(&ty) {
            let hint = INSTALL_MODES
                .iter()
                .find(|m| ty.to_ascii_lowercase().starts_with(&m.to_ascii_lowercase()))
                .map(|m| format!(" (did you mean {m}?)"))
                .unwrap_or_default();
            ctx.push(
                Diagnostic::new(
                    Rule::CsvInstallModes,
                    format!(
                        "install mode type \"{ty}\" is not one of {}{hint}; OLM ignores it",
                        INSTALL_MODES.join(", ")
                    ),
                )
                .with_severity(Severity::Warning)
                .at(file, mode.line),
            );
        }
        if mode.get("supported").is_some() && supported.is_none() {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvInstallModes,
                    format!("install mode \"{ty}\": supported must be true or false"),
                )
                .at(file, mode.line),
            );
        }
        if let Some(first) = seen.insert(ty.to_string(), mode.line) {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvInstallModes,
                    format!("duplicate install mode \"{ty}\" (first on line {first}); OLM keeps only one of them"),
                )
                .at(file, mode.line),
            );
        }
    }
    if !any_supported {
        ctx.push(
            Diagnostic::new(
                Rule::CsvInstallModes,
                "none of the install modes is supported: the operator cannot be installed",
            )
            .at(file, spec.get("installModes").map_or(spec.line, |n| n.line)),
        );
    }
}

/// Checks deployment names and returns them for the webhook rule.
fn deployments(ctx: &mut Ctx<'_>, csv: &Object) -> BTreeSet<String> {
    let file = csv.file.as_str();
    let mut out = BTreeSet::new();
    let Some(view) = Csv::new(csv) else {
        return out;
    };
    // The typed entries; the rule reads each one's node to tell a missing field from a bad one.
    for dep in view.deployments().iter().map(|d| d.node) {
        let Some(name) = dep.get("name").and_then(Node::scalar_text) else {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvDeployments,
                    "install strategy deployment has no name",
                )
                .at(file, dep.line),
            );
            continue;
        };
        if let Err(why) = names::dns1123_subdomain(name) {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvDeployments,
                    format!("invalid install strategy deployment name \"{name}\": {why}"),
                )
                .at(file, dep.line),
            );
        }
        if !out.insert(name.to_string()) {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvDeployments,
                    format!("duplicate install strategy deployment \"{name}\""),
                )
                .at(file, dep.line),
            );
        }
        if dep.get("spec").and_then(Node::as_map).is_none() {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvRequiredField,
                    format!("deployment \"{name}\": spec: required field missing"),
                )
                .at(file, dep.line),
            );
        }
    }
    out
}

fn webhooks(ctx: &mut Ctx<'_>, csv: &Object, spec: &Node, deployments: &BTreeSet<String>) {
    let file = csv.file.as_str();
    let Some(view) = Csv::new(csv) else {
        return;
    };
    let mut seen = BTreeSet::new();
    let mut has_conversion = false;
    for w in view.webhooks() {
        let (hook, ty, name) = (w.node, w.kind, w.generate_name);
        if !matches!(
            ty,
            "ValidatingAdmissionWebhook" | "MutatingAdmissionWebhook" | "ConversionWebhook"
        ) {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvWebhooks,
                    format!("webhook \"{name}\" has type \"{ty}\"; expected ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook"),
                )
                .at(file, hook.line),
            );
        }
        // Only a conversion webhook that names its CRDs constrains the install modes (API).
        if ty == "ConversionWebhook"
            && hook
                .get("conversionCRDs")
                .and_then(Node::as_seq)
                .is_some_and(|c| !c.is_empty())
        {
            has_conversion = true;
        }
        if let Err(why) = names::dns1123_subdomain(name) {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvWebhooks,
                    format!("webhook of type {ty} has invalid generateName \"{name}\": {why}"),
                )
                .at(file, hook.line),
            );
        }
        if !seen.insert((ty.to_string(), name.to_string())) {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvWebhooks,
                    format!("duplicate webhook \"{name}\" of type {ty}"),
                )
                .at(file, hook.line),
            );
        }
        match hook.get("deploymentName").and_then(Node::scalar_text) {
            Some(dep) if deployments.contains(dep) => {}
            Some(dep) => ctx.push(
                Diagnostic::new(
                    Rule::CsvWebhooks,
                    format!("webhook \"{name}\" references deployment \"{dep}\", which is not in the install strategy"),
                )
                .at(file, hook.line),
            ),
            None => ctx.push(
                Diagnostic::new(Rule::CsvWebhooks, format!("webhook \"{name}\" has no deploymentName")).at(file, hook.line),
            ),
        }
    }
    if has_conversion {
        let modes = spec
            .get("installModes")
            .and_then(Node::as_seq)
            .unwrap_or(&[]);
        let supported: Vec<&str> = modes
            .iter()
            .filter(|m| m.get("supported").and_then(Node::as_bool) == Some(true))
            .filter_map(|m| m.get("type").and_then(Node::scalar_text))
            .collect();
        if supported != ["AllNamespaces"] {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvWebhooks,
                    format!(
                        "the CSV defines a conversion webhook but supports install modes [{}]: conversion webhooks need AllNamespaces only",
                        supported.join(", ")
                    ),
                )
                .at(file, spec.get("installModes").map_or(spec.line, |n| n.line)),
            );
        }
    }
}

/// (group, version, kind) of every API the CSV owns.
pub(crate) fn provided_apis(csv: &Object) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    let Some(view) = Csv::new(csv) else {
        return out;
    };
    for crd in view.owned_crds() {
        // The group as operator-framework/api keys it: from the name, whatever `group` says.
        let group = crd.name.split_once('.').map_or("", |(_, g)| g);
        out.insert((
            group.to_string(),
            crd.version.to_string(),
            crd.kind.to_string(),
        ));
    }
    for api in view.owned_apis() {
        // An API without `group` has none (the view would take it from the name).
        let group = api
            .node
            .get("group")
            .and_then(Node::scalar_text)
            .unwrap_or("");
        out.insert((
            group.to_string(),
            api.version.to_string(),
            api.kind.to_string(),
        ));
    }
    out
}

fn examples(ctx: &mut Ctx<'_>, csv: &Object) {
    let file = csv.file.as_str();
    let annotations = csv.root.path(&["metadata", "annotations"]);
    let provided = provided_apis(csv);
    let Some(annotations) = annotations.filter(|a| a.as_map().is_some()) else {
        if !provided.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvExampleMissing,
                    "the CSV has no metadata.annotations, so no alm-examples for its APIs",
                )
                .at(file, csv.line_of(&["metadata"])),
            );
        }
        return;
    };
    let Some(node) = annotations
        .get("alm-examples")
        .or_else(|| annotations.get("olm.examples"))
    else {
        if !provided.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvExampleMissing,
                    "no alm-examples annotation: add an example object for each owned API",
                )
                .at(file, annotations.line),
            );
        }
        return;
    };
    let text = node.scalar_text().unwrap_or("").trim();
    if text.is_empty() {
        for (group, version, kind) in &provided {
            ctx.push(
                Diagnostic::new(Rule::CsvExampleMissing, format!("owned API {group}/{version}, Kind={kind} has no example: alm-examples is empty"))
                    .at(file, node.line),
            );
        }
        return;
    }
    let parsed: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvExamples,
                    format!("alm-examples is not valid JSON: {e} (line/column inside the annotation value)"),
                )
                .at(file, node.line),
            );
            return;
        }
    };
    let items = match parsed {
        serde_json::Value::Array(items) => items,
        other @ serde_json::Value::Object(_) => vec![other],
        _ => {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvExamples,
                    "alm-examples must be a JSON list of objects",
                )
                .at(file, node.line),
            );
            return;
        }
    };
    let mut covered = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let api_version = item
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let kind = item.get("kind").and_then(|v| v.as_str()).unwrap_or("");
        if api_version.is_empty() || kind.is_empty() {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvExamples,
                    format!("alm-examples[{i}] has no apiVersion or kind"),
                )
                .at(file, node.line),
            );
            continue;
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let key = (group.to_string(), version.to_string(), kind.to_string());
        if provided.contains(&key) {
            covered.insert(key);
        } else {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvExamples,
                    format!("alm-examples[{i}] is a {api_version}, Kind={kind}, which the CSV does not own (example must have a provided API): fix the example or add it to spec.customresourcedefinitions.owned"),
                )
                .at(file, node.line),
            );
        }
    }
    for (group, version, kind) in provided.difference(&covered) {
        ctx.push(
            Diagnostic::new(
                Rule::CsvExampleMissing,
                format!("owned API {group}/{version}, Kind={kind} has no example in alm-examples"),
            )
            .at(file, node.line),
        );
    }
}

/// Parses like blang's `ParseTolerant`: optional `v`, missing minor/patch filled with zeros.
pub(crate) fn parse_tolerant(text: &str) -> Option<semver::Version> {
    let t = text.trim().trim_start_matches(['v', 'V']);
    if let Ok(v) = semver::Version::parse(t) {
        return Some(v);
    }
    let (core, rest) = match t.find(['-', '+']) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut padded: Vec<String> = parts
        .iter()
        .map(|p| p.trim_start_matches('0').to_string())
        .collect();
    for p in &mut padded {
        if p.is_empty() {
            *p = "0".into();
        }
    }
    while padded.len() < 3 {
        padded.push("0".into());
    }
    semver::Version::parse(&format!("{}{rest}", padded.join("."))).ok()
}

fn min_kube_version(ctx: &mut Ctx<'_>, csv: &Object, spec: &Node) {
    let file = csv.file.as_str();
    match spec.get("minKubeVersion").and_then(Node::scalar_text).map(str::trim) {
        None | Some("") => ctx.push(
            Diagnostic::new(
                Rule::CsvMinKubeVersionUnset,
                "spec.minKubeVersion is not set: without it the operator claims to install on every Kubernetes version",
            )
            .at(file, spec.line),
        ),
        Some(text) => {
            if let Err(why) = names::semver(text) {
                let hint = parse_tolerant(text)
                    .map(|v| format!(": write \"{v}\""))
                    .unwrap_or_default();
                let olm_v0_accepts = text
                    .strip_prefix('v')
                    .is_some_and(|rest| names::semver(rest).is_ok());
                let message = if olm_v0_accepts {
                    format!(
                        "spec.minKubeVersion \"{text}\" has a leading v: operator-sdk >= 1.33 (operator-framework/api >= 0.17.7) rejects it (\"csv.Spec.MinKubeVersion has an invalid value\"), although OLM v0 itself strips one leading v{hint}"
                    )
                } else {
                    format!(
                        "spec.minKubeVersion \"{text}\" is not a semantic version of three numbers ({why}): operator-sdk >= 1.33 rejects it, and OLM v0 cannot parse it (\"CSV version parsing error\"), so the CSV stays pending and never installs{hint}"
                    )
                };
                ctx.push(
                    Diagnostic::new(Rule::CsvMinKubeVersion, message)
                        .at(file, csv.line_of(&["spec", "minKubeVersion"])),
                );
            }
        }
    }
}

fn annotations(ctx: &mut Ctx<'_>, csv: &Object) {
    let file = csv.file.as_str();
    let Some(entries) = csv
        .root
        .path(&["metadata", "annotations"])
        .and_then(Node::as_map)
    else {
        return;
    };
    for (key, value) in entries {
        for expected in CASED_ANNOTATIONS {
            if key.text != expected && key.text.eq_ignore_ascii_case(expected) {
                ctx.push(
                    Diagnostic::new(
                        Rule::CsvAnnotationCase,
                        format!("annotation {} uses wrong case and should be {expected}; OLM ignores it as written", key.text),
                    )
                    .at(file, key.line),
                );
            }
        }
        if key.text == keys::OLM_PROPERTIES {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvPropertiesAnnotation,
                    "found olm.properties annotation: define these properties in metadata/properties.yaml instead",
                )
                .at(file, key.line),
            );
        }
        if key.text == keys::SKIP_RANGE {
            let text = value.scalar_text().unwrap_or("");
            // Empty means absent to opm, OLM v0 (it drops the parse error) and OLM v1 alike.
            if !text.is_empty()
                && let Err(e) = semver_range::Range::parse(text)
            {
                ctx.push(
                    Diagnostic::new(
                        Rule::CsvSkipRange,
                        format!(
                            "olm.skipRange \"{text}\" is not a valid semver range ({e}): OLM ignores it without a word, so the upgrade edges it was meant to add are lost, and opm >= 1.69 rejects it in a file-based catalog (\"invalid skipRange\"); fix the range or remove the annotation"
                        ),
                    )
                    .at(file, key.line),
                );
            }
        }
    }
}

fn related_images(ctx: &mut Ctx<'_>, csv: &Object, spec: &Node) {
    let file = csv.file.as_str();
    let Some(items) = spec.get("relatedImages").and_then(Node::as_seq) else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        match item.get("image").and_then(Node::scalar_text).map(str::trim) {
            None | Some("") => ctx.push(
                Diagnostic::new(
                    Rule::RelatedImages,
                    format!("relatedImages[{i}] has an empty image field: OLM ignores relatedImages and opm tolerates an empty image, but operator-framework/api >= 0.40 (operator-sdk bundle validate) reports an error; remove the entry or give its image"),
                )
                .with_severity(crate::findings::Severity::Warning)
                .at(file, item.line),
            ),
            Some(image) => {
                if let Err(why) = names::image_pullspec(image) {
                    ctx.push(
                        Diagnostic::new(Rule::RelatedImages, format!("relatedImages[{i}] has an invalid image pull spec \"{image}\" ({why}): opm >= 1.64 refuses the whole catalog that holds this bundle (\"invalid image pull spec\") and operator-framework/api >= 0.40 reports an error; write a registry reference such as quay.io/org/image@sha256:... (no scheme like oci://)"))
                            .at(file, item.line),
                    );
                }
            }
        }
    }
}

/// `spec.release` (operator-framework/api #454, opm v1.62+): a string of dot-separated
/// pre-release identifiers, at most 20 characters, numeric ones without leading zeros (the CSV
/// CRD's `MaxLength` and CEL rules, blang/semver's `NewPRVersion`); no build metadata in
/// `spec.version` beside it (opm's check); and the CSV named `<package>-v<version>-<release>`
/// (operator-framework/api's `validateBundleName`).
fn release(ctx: &mut Ctx<'_>, csv: &Object, spec: &Node) {
    let file = csv.file.as_str();
    let Some(node) = spec.get("release") else {
        return;
    };
    if node.is_null() {
        return;
    }
    let Some(text) = node.as_str() else {
        let shown = node.scalar_text().unwrap_or(node.kind_name());
        ctx.push(
            Diagnostic::new(
                Rule::CsvRelease,
                format!("spec.release {shown} is not a string: quote it (release: \"{shown}\"); the CSV's release is a string and a {} is refused when the CSV is decoded", node.kind_name()),
            )
            .at(file, node.line),
        );
        return;
    };
    if text.is_empty() {
        return;
    }
    let release = match crate::catalog::version_release::parse_release(text) {
        Ok(r) => r,
        Err(why) => {
            ctx.push(
                Diagnostic::new(
                    Rule::CsvRelease,
                    format!("spec.release: {why} (dot-separated identifiers of letters, digits and '-', numbers without leading zeros, at most 20 characters)"),
                )
                .at(file, node.line),
            );
            return;
        }
    };
    let Some(version) = spec
        .get("version")
        .and_then(Node::scalar_text)
        .and_then(|v| names::semver(v).ok())
    else {
        return;
    };
    if !version.build.is_empty() {
        ctx.push(
            Diagnostic::new(
                Rule::CsvRelease,
                format!("spec.version {version} has build metadata beside spec.release {release}: remove \"+{}\" (the release replaces it)", version.build),
            )
            .at(file, csv.line_of(&["spec", "version"])),
        );
        return;
    }
    let Some(package) = ctx.bundle.package() else {
        return;
    };
    let expected = format!("{package}-v{version}-{release}");
    if let Some(name) = &csv.name
        && name != &expected
    {
        ctx.push(
            Diagnostic::new(
                Rule::CsvRelease,
                format!("bundle name with release versioning \"{name}\" does not match expected name \"{expected}\": with spec.release the CSV is named <package>-v<version>-<release>"),
            )
            .at(file, csv.line_of(&["metadata", "name"])),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{Step, spell_trail, walk_at};
    use crate::yaml::parse_stream;

    #[test]
    fn paths_are_spelled_with_keys_and_indexes_in_document_order() {
        let text = "spec:\n  rules:\n  - verbs: [get]\n  - verbs: get\n  - other: 1\n";
        let docs = parse_stream(text).expect("valid YAML");
        let root = &docs[0].root;
        let mut seen = Vec::new();
        let mut trail = Vec::new();
        walk_at(
            root,
            &["spec", "rules", "*", "verbs"],
            &mut trail,
            &mut |t, n| {
                seen.push((spell_trail(t), n.line));
            },
        );
        assert_eq!(
            seen,
            [
                ("spec.rules[0].verbs".to_string(), 3),
                ("spec.rules[1].verbs".to_string(), 4)
            ]
        );
        assert!(trail.is_empty(), "the walk leaves the trail as it found it");
        assert_eq!(spell_trail(&[Step::Index(2), Step::Key("a")]), "[2].a");
    }
}
