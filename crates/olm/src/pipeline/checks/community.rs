//! The `community` suite (community-operators-prod; operator-pipelines'
//! `operatorcert/static_tests/community/{operator,bundle}.py`), with the two operator-sdk runs
//! answered by olmpack's own bundle rules.

use super::super::finding::Finding;
use super::super::ocp;
use super::super::repo::{Bundle, Operator};
use super::{Target, fields, no_csv, py_str};
use crate::findings::Group;
use crate::yaml::Node;
use std::collections::BTreeSet;

/// The operator checks, alphabetically.
pub fn operator(t: &Target<'_>, out: &mut Vec<Finding>) {
    if t.operator.fbc_enabled() {
        return;
    }
    check_ci_upgrade_graph(t.operator, out);
    check_operator_name_unique(t.operator, out);
    check_upgrade_graph_loop(t.operator, out);
}

/// The bundle checks, alphabetically (`osdk` false leaves out the operator-sdk runs, as the
/// offline reference does).
pub fn bundle(t: &Target<'_>, b: &Bundle, osdk: bool, out: &mut Vec<Finding>) {
    let fbc = t.operator.fbc_enabled();
    if !fbc {
        check_api_version_constraints(b, out);
        check_dangling_bundles(t.operator, b, out);
    }
    if osdk {
        check_osdk(t, b, out);
    }
    fields::check_required_fields(b, out);
    if !fbc {
        check_using_fbc(t.operator, b, out);
    }
}

/// A bundle's place in the pipeline's update graph.
type Graph<'a> = Vec<(&'a Bundle, Vec<&'a Bundle>)>;

fn add_edge<'a>(graph: &mut Graph<'a>, from: &'a Bundle, to: &'a Bundle) {
    match graph.iter_mut().find(|(k, _)| std::ptr::eq(*k, from)) {
        Some((_, list)) => {
            if !list.iter().any(|x| std::ptr::eq(*x, to)) {
                list.push(to)
            }
        }
        None => graph.push((from, vec![to])),
    }
}

/// The pipeline's `update_graph`: each bundle mapped to the bundles that replace it in
/// `channel` (replaces, skips, olm.skipRange; or consecutive versions in semver-mode).
fn update_graph<'a>(op: &'a Operator, channel: &str) -> Result<Graph<'a>, String> {
    let bundles = op.channel_bundles(channel);
    let mode = op.update_graph_mode().unwrap_or("replaces-mode");
    let mut graph: Graph<'a> = Vec::new();
    match mode {
        "semver-mode" => {
            for pair in bundles.windows(2) {
                add_edge(&mut graph, pair[0], pair[1]);
            }
            return Ok(graph);
        }
        "replaces-mode" => {}
        other => {
            return Err(format!(
                "Operator({}): unsupported updateGraph value: {other}",
                op.name
            ));
        }
    }
    let in_channel = |b: &Bundle| b.channels().iter().any(|c| c == channel);
    let by_version = |v: &str| {
        bundles
            .iter()
            .rev()
            .find(|b| b.sort_version() == v)
            .copied()
    };
    for b in &bundles {
        let Some(range) = b
            .csv_text(&["metadata", "annotations", "olm.skipRange"])
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let Ok(range) = crate::semver_range::parse(range) else {
            continue;
        };
        for other in &bundles {
            if let Ok(v) = semver::Version::parse(other.sort_version())
                && range.matches(&v)
                && in_channel(b)
                && in_channel(other)
            {
                add_edge(&mut graph, other, b);
            }
        }
    }
    for b in &bundles {
        let mut previous: Vec<&str> = b
            .csv
            .as_ref()
            .and_then(|c| c.at(&["spec", "skips"]))
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .filter_map(Node::scalar_text)
            .collect();
        if let Some(r) = b.csv_text(&["spec", "replaces"]) {
            previous.push(r);
        }
        for name in previous {
            let Some((_, version)) = name.split_once('.') else {
                return Err(format!(
                    "{} has invalid 'replaces' field: '{name}'",
                    b.display()
                ));
            };
            if let Some(replaced) = by_version(version.trim_start_matches('v'))
                && in_channel(b)
                && in_channel(replaced)
            {
                add_edge(&mut graph, replaced, b);
            }
        }
    }
    Ok(graph)
}

fn graph_error(check: &'static str, op: &Operator, message: String) -> Finding {
    let ci = op
        .ci
        .as_ref()
        .map(|c| c.file.clone())
        .unwrap_or_else(|| format!("{}/ci.yaml", op.rel));
    let line = op.ci.as_ref().and_then(|c| c.line_of(&["updateGraph"]));
    Finding::error(check, message).at(&ci, line)
}

const ID_DANGLING: &str = "check_dangling_bundles";

fn check_dangling_bundles(op: &Operator, b: &Bundle, out: &mut Vec<Finding>) {
    let mut channels: BTreeSet<String> = b.channels().into_iter().collect();
    if let Some(d) = b.default_channel() {
        channels.insert(d);
    }
    for channel in channels {
        let bundles = op.channel_bundles(&channel);
        let head = bundles.last().copied();
        let graph = match update_graph(op, &channel) {
            Ok(g) => g,
            Err(e) => {
                out.push(graph_error(ID_DANGLING, op, e));
                return;
            }
        };
        let dangling: Vec<&Bundle> = bundles
            .iter()
            .filter(|x| !graph.iter().any(|(k, _)| std::ptr::eq(*k, **x)))
            .filter(|x| !head.is_some_and(|h| std::ptr::eq(h, **x)))
            .copied()
            .collect();
        if !dangling.is_empty() {
            let names: Vec<String> = dangling.iter().map(|d| d.display()).collect();
            let first = dangling[0];
            out.push(
                Finding::error(
                    ID_DANGLING,
                    format!(
                        "Channel {channel} has dangling bundles: {{{}}}",
                        names.join(", ")
                    ),
                )
                .at(&first.csv_file(), first.csv_line(&["metadata", "name"])),
            );
        }
    }
}

const ID_LOOP: &str = "check_upgrade_graph_loop";

fn check_upgrade_graph_loop(op: &Operator, out: &mut Vec<Finding>) {
    let mut channels = BTreeSet::new();
    for b in &op.bundles {
        channels.extend(b.channels());
        if let Some(d) = b.default_channel() {
            channels.insert(d);
        }
    }
    for channel in channels {
        let graph = match update_graph(op, &channel) {
            Ok(g) => g,
            Err(e) => {
                out.push(graph_error(ID_LOOP, op, e));
                return;
            }
        };
        if let Some((from, to)) = find_cycle(&graph) {
            out.push(
                Finding::error(
                    ID_LOOP,
                    format!(
                        "Upgrade graph loop detected: {} -> {}",
                        from.display(),
                        to.display()
                    ),
                )
                .at(
                    &to.csv_file(),
                    to.csv_line(&["spec", "replaces"]).or(to.csv_line(&[
                        "metadata",
                        "annotations",
                        "olm.skipRange",
                    ])),
                ),
            );
        }
    }
}

/// The pipeline's `has_cycle`: a depth-first search returning the back edge it finds.
fn find_cycle<'a>(graph: &Graph<'a>) -> Option<(&'a Bundle, &'a Bundle)> {
    fn dfs<'a>(
        node: &'a Bundle,
        graph: &Graph<'a>,
        visited: &mut Vec<*const Bundle>,
        stack: &mut Vec<*const Bundle>,
    ) -> Option<(&'a Bundle, &'a Bundle)> {
        visited.push(node);
        stack.push(node);
        let next = graph
            .iter()
            .find(|(k, _)| std::ptr::eq(*k, node))
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[]);
        for n in next {
            let p: *const Bundle = *n;
            if !visited.contains(&p) {
                if let Some(edge) = dfs(n, graph, visited, stack) {
                    return Some(edge);
                }
            } else if stack.contains(&p) {
                return Some((node, n));
            }
        }
        stack.retain(|x| !std::ptr::eq(*x, node));
        None
    }
    let (mut visited, mut stack) = (Vec::new(), Vec::new());
    for (node, _) in graph {
        let p: *const Bundle = *node;
        if !visited.contains(&p)
            && let Some(edge) = dfs(node, graph, &mut visited, &mut stack)
        {
            return Some(edge);
        }
    }
    None
}

const ID_CI_GRAPH: &str = "check_ci_upgrade_graph";

fn check_ci_upgrade_graph(op: &Operator, out: &mut Vec<Finding>) {
    let ci = op
        .ci
        .as_ref()
        .map(|c| c.file.clone())
        .unwrap_or_else(|| format!("{}/ci.yaml", op.rel));
    let value = op
        .ci
        .as_ref()
        .and_then(|c| c.at(&["updateGraph"]))
        .filter(|n| !n.is_null());
    match value.and_then(Node::scalar_text).filter(|s| !s.is_empty()) {
        None => out.push(
            Finding::warning(ID_CI_GRAPH, "The 'updateGraph' option is missing in ci.yaml. The default upgrade graph 'replaces-mode' will be used.")
                .at(&ci, None),
        ),
        Some("replaces-mode" | "semver-mode") => {}
        Some(_) => out.push(
            Finding::error(ID_CI_GRAPH, "The 'updateGraph' option in ci.yaml must be one of ['replaces-mode', 'semver-mode']")
                .at(&ci, value.map(|v| v.line)),
        ),
    }
}

const ID_NAME_UNIQUE: &str = "check_operator_name_unique";

fn check_operator_name_unique(op: &Operator, out: &mut Vec<Finding>) {
    let mut names = BTreeSet::new();
    for b in &op.bundles {
        match b.csv_full_name() {
            Some((n, _)) => {
                names.insert(n);
            }
            None => {
                out.push(no_csv(ID_NAME_UNIQUE, b));
                return;
            }
        }
    }
    if names.len() > 1 {
        let list: Vec<String> = names.iter().map(|n| py_str(n)).collect();
        let last = op.newest();
        out.push(
            Finding::error(
                ID_NAME_UNIQUE,
                format!(
                    "Bundles use multiple operator names: {{{}}}",
                    list.join(", ")
                ),
            )
            .at(
                &last.map(|b| b.csv_file()).unwrap_or_default(),
                last.and_then(|b| b.csv_line(&["metadata", "name"])),
            ),
        );
    }
}

const ID_USING_FBC: &str = "check_using_fbc";

fn check_using_fbc(op: &Operator, b: &Bundle, out: &mut Vec<Finding>) {
    let ci = op
        .ci
        .as_ref()
        .map(|c| c.file.clone())
        .unwrap_or_else(|| format!("{}/ci.yaml", op.rel));
    let message = if op.bundles.len() > 1 {
        "[File Based Catalog (FBC)](https://github.com/redhat-openshift-ecosystem/community-operators-prod/discussions/5031#discussion-7097441) is a new way to manage operator metadata. This operator does not use FBC. Consider [migrating](https://redhat-openshift-ecosystem.github.io/operator-pipelines/users/fbc_onboarding/) for better maintainability."
    } else {
        "[File Based Catalog (FBC)](https://github.com/redhat-openshift-ecosystem/community-operators-prod/discussions/5031#discussion-7097441) is a new way to manage operator metadata. This operator does not use FBC and it is recommended for new operators to [start directly with FBC](https://redhat-openshift-ecosystem.github.io/operator-pipelines/users/fbc_workflow/)."
    };
    let _ = b;
    out.push(Finding::warning(ID_USING_FBC, message).at(&ci, None));
}

const ID_API: &str = "check_api_version_constraints";

/// python-semver's `Version.parse(optional_minor_and_patch=True)`, without pre-release and build.
fn loose_semver(text: &str) -> Option<(u64, u64, u64)> {
    let t = text.trim();
    let core = t.split(['-', '+']).next().unwrap_or(t);
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let num = |s: &str| -> Option<u64> {
        if s.is_empty()
            || !s.bytes().all(|c| c.is_ascii_digit())
            || (s.len() > 1 && s.starts_with('0'))
        {
            None
        } else {
            s.parse().ok()
        }
    };
    let major = num(parts[0])?;
    let minor = parts.get(1).map(|s| num(s)).unwrap_or(Some(0))?;
    let patch = parts.get(2).map(|s| num(s)).unwrap_or(Some(0))?;
    Some((major, minor, patch))
}

fn ocp_of(text: &str) -> Option<(u64, u64)> {
    let t = text.trim();
    loose_semver(t.strip_prefix('v').unwrap_or(t)).map(|(a, b, _)| (a, b))
}

fn check_api_version_constraints(b: &Bundle, out: &mut Vec<Finding>) {
    let Some(min_text) = b
        .csv_text(&["spec", "minKubeVersion"])
        .filter(|s| !s.is_empty())
    else {
        return;
    };
    let csv_at = (b.csv_file(), b.csv_line(&["spec", "minKubeVersion"]));
    let Some(min) = loose_semver(min_text) else {
        out.push(
            Finding::error(
                ID_API,
                format!(
                    "Invalid minKubeVersion: {} is not valid SemVer string",
                    min_text.trim()
                ),
            )
            .at(&csv_at.0, csv_at.1),
        );
        return;
    };
    let min_show = format!("{}.{}.{}", min.0, min.1, min.2);
    let key = "com.redhat.openshift.versions";
    let ann_at = (b.annotations_file(), b.annotation_line(key));
    let Some(selector) = b.annotation(key).map(str::trim).filter(|s| !s.is_empty()) else {
        out.push(
            Finding::error(ID_API, format!("minKubeVersion is set to {min_show} but com.redhat.openshift.versions is not set"))
                .at(&csv_at.0, csv_at.1),
        );
        return;
    };
    let known: Vec<(u64, u64)> = ocp::OCP_TO_K8S.iter().map(|(o, _)| *o).collect();
    let invalid = |out: &mut Vec<Finding>| {
        out.push(
            Finding::error(
                ID_API,
                format!(
                    "Invalid com.redhat.openshift.versions: {selector} is not valid SemVer string"
                ),
            )
            .at(&ann_at.0, ann_at.1),
        );
    };
    let selected: Vec<(u64, u64)> = if let Some((lo, hi)) = selector.split_once('-') {
        let (Some(lo), Some(hi)) = (ocp_of(lo), ocp_of(hi)) else {
            return invalid(out);
        };
        known
            .iter()
            .copied()
            .filter(|v| lo <= *v && *v <= hi)
            .collect()
    } else if selector.contains(',') {
        let mut versions = Vec::new();
        for part in selector.split(',') {
            match ocp_of(part) {
                Some(v) => versions.push(v),
                None => return invalid(out),
            }
        }
        versions.sort();
        versions.dedup();
        if versions != [(4, 5), (4, 6)] {
            out.push(
                Finding::warning(ID_API, "Comma separated list of versions in com.redhat.openshift.versions is only supported for v4.5 and v4.6")
                    .at(&ann_at.0, ann_at.1),
            );
        }
        let lowest = versions[0];
        known.iter().copied().filter(|v| *v >= lowest).collect()
    } else if let Some(exact) = selector.strip_prefix('=') {
        let Some(v) = ocp_of(exact) else {
            return invalid(out);
        };
        vec![ocp::closest_known(v)]
    } else {
        let Some(v) = ocp_of(selector) else {
            return invalid(out);
        };
        known.iter().copied().filter(|k| *k >= v).collect()
    };
    let mut conflicting: Vec<(u64, u64)> = selected
        .into_iter()
        .filter(|v| {
            let k = ocp::k8s_of(*v);
            (k.0, k.1, 0) < min
        })
        .collect();
    conflicting.sort();
    if !conflicting.is_empty() {
        let list: Vec<String> = conflicting
            .iter()
            .map(|(a, b)| format!("{a}.{b}"))
            .collect();
        out.push(
            Finding::error(
                ID_API,
                format!(
                    "OCP version(s) {} conflict with minKubeVersion={min_show}",
                    list.join(",")
                ),
            )
            .at(&ann_at.0, ann_at.1),
        );
    }
}

/// The two operator-sdk runs, answered by olmpack's bundle rules: `name=operatorhub` is the
/// operatorhub group, `suite=operatorframework` every optional group; the Kubernetes version is
/// the newest OCP version the bundle targets, as the pipeline passes it.
fn check_osdk(t: &Target<'_>, b: &Bundle, out: &mut Vec<Finding>) {
    let versions = ocp::resolve(
        b.annotation("com.redhat.openshift.versions"),
        &t.repo.ocp_versions,
    );
    let Some(newest) = versions.first() else {
        return;
    };
    let k8s = ocp::k8s_of(*newest);
    let dir = t.repo.root.join(&b.rel);
    let loaded = match crate::bundle::Bundle::load(&dir) {
        Ok(l) => l,
        Err(e) => {
            for id in [
                "check_osdk_bundle_validate_operatorhub",
                "check_osdk_bundle_validate_operator_framework",
            ] {
                out.push(Finding::error(id, crate::findings::message_of(&e)).at(&b.rel, None));
            }
            return;
        }
    };
    let runs: [(&'static str, Vec<Group>); 2] = [
        (
            "check_osdk_bundle_validate_operatorhub",
            vec![Group::OperatorHub],
        ),
        (
            "check_osdk_bundle_validate_operator_framework",
            vec![
                Group::OperatorHub,
                Group::GoodPractices,
                Group::BundleObjects,
            ],
        ),
    ];
    for (id, groups) in runs {
        let opts = crate::validate::Options {
            optional: groups,
            k8s_version: Some(semver::Version::new(k8s.0, k8s.1, 0)),
            categories: None,
            targets: Vec::new(),
        };
        let report = crate::validate::bundle::validate(&loaded, &opts);
        for d in report.diagnostics {
            let message = format!("[{}] {}", d.rule, d.message);
            let finding = if d.is_error() {
                Finding::error(id, message)
            } else {
                Finding::warning(id, message)
            };
            let file = d
                .file
                .as_ref()
                .map(|f| format!("{}/{f}", b.rel))
                .unwrap_or_else(|| b.rel.clone());
            out.push(finding.at(&file, d.line));
        }
    }
}
