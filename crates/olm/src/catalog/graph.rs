//! The upgrade graph of a catalog, per package and channel, as Graphviz DOT or a self-drawn SVG.
//!
//! Why: people check a channel by looking at it before they publish it. Mermaid (opm's format,
//! [`crate::catalog::mermaid`]) needs a renderer; DOT feeds existing tooling; the SVG needs
//! nothing at all, so olmpack draws it itself with a layered layout (see [`svg`]): one band per
//! channel, bundles ranked by version, every arc routed in lanes inside its band, a legend.

use crate::catalog::channel::{ChannelGraph, EdgeKind};
use crate::catalog::mermaid::{MermaidError, bundle_versions};
use crate::catalog::model::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use semver::Version;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

mod svg;

/// One entry of a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphNode {
    /// Bundle name.
    pub name: String,
    /// Its version, when the catalog has the bundle.
    pub version: Option<Version>,
    /// No other entry of the channel replaces or skips it (opm's channel head rule).
    pub head: bool,
    /// Named by an `olm.deprecations` bundle entry.
    pub deprecated: bool,
}

/// One arrow, from the older entry to the one that upgrades from it (never
/// [`EdgeKind::Substitutes`]: a drawing shows the channel's own edges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphEdge {
    /// The entry upgraded from (it may be outside the channel).
    pub from: String,
    /// The entry upgraded to.
    pub to: String,
    /// Why.
    pub kind: EdgeKind,
    /// The range text for `skipRange` edges.
    pub label: String,
}

/// The picture of one channel: its entries and edges (from the one [`ChannelGraph`]) laid out
/// for drawing, with what a reader needs to see (default, deprecated, heads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelDrawing {
    /// Package name.
    pub package: String,
    /// Channel name.
    pub channel: String,
    /// The package's default channel is this one.
    pub default: bool,
    /// The channel (or its package) is deprecated.
    pub deprecated: bool,
    /// Entries in ascending version order (unknown versions first, by name).
    pub nodes: Vec<GraphNode>,
    /// Edges in entry order.
    pub edges: Vec<GraphEdge>,
}

/// Draws the channel graphs, sorted by package then channel, optionally filtered.
pub fn build(
    cfg: &DeclarativeConfig,
    package: Option<&str>,
    channel: Option<&str>,
) -> Result<Vec<ChannelDrawing>, MermaidError> {
    let versions = bundle_versions(cfg)?;
    let mut dep_pkg = HashSet::new();
    let mut dep_channel = HashSet::new();
    let mut dep_bundle = HashSet::new();
    for d in &cfg.deprecations {
        for e in &d.entries {
            let key = (d.package.clone(), e.reference.name.clone());
            match e.reference.schema.as_str() {
                SCHEMA_PACKAGE => {
                    dep_pkg.insert(d.package.clone());
                }
                SCHEMA_CHANNEL => {
                    dep_channel.insert(key);
                }
                SCHEMA_BUNDLE => {
                    dep_bundle.insert(key);
                }
                _ => {}
            }
        }
    }
    let defaults: HashMap<&str, &str> = cfg
        .packages
        .iter()
        .map(|p| (p.name.as_str(), p.default_channel.as_str()))
        .collect();
    let mut out = Vec::new();
    for c in &cfg.channels {
        if package.is_some_and(|p| p != c.package) || channel.is_some_and(|n| n != c.name) {
            continue;
        }
        let entries: Vec<_> = c.entries.iter().flatten().collect();
        let graph = ChannelGraph::new(c, |n| versions.get(n).cloned());
        // opm's head rule (versions play no part in it).
        let heads: HashSet<&str> = graph.heads().into_iter().collect();
        let mut nodes: Vec<GraphNode> = entries
            .iter()
            .map(|e| GraphNode {
                name: e.name.clone(),
                version: versions.get(&e.name).cloned(),
                head: heads.contains(e.name.as_str()),
                deprecated: dep_bundle.contains(&(c.package.clone(), e.name.clone())),
            })
            .collect();
        nodes.sort_by(|a, b| match (&a.version, &b.version) {
            (Some(x), Some(y)) => x.cmp_precedence(y).then_with(|| a.name.cmp(&b.name)),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, None) => a.name.cmp(&b.name),
        });
        let edges = graph
            .listed_edges()
            .into_iter()
            .map(|(entry, e)| GraphEdge {
                label: if e.kind == EdgeKind::SkipRange {
                    entry.skip_range.clone()
                } else {
                    String::new()
                },
                from: e.from,
                to: e.to,
                kind: e.kind,
            })
            .collect();
        out.push(ChannelDrawing {
            package: c.package.clone(),
            channel: c.name.clone(),
            default: defaults.get(c.package.as_str()) == Some(&c.name.as_str()),
            deprecated: dep_pkg.contains(&c.package)
                || dep_channel.contains(&(c.package.clone(), c.name.clone())),
            nodes,
            edges,
        });
    }
    out.sort_by(|a, b| (&a.package, &a.channel).cmp(&(&b.package, &b.channel)));
    Ok(out)
}

fn dot_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Graphviz DOT: one cluster per channel, heads with a double border, deprecated entries filled.
pub fn to_dot(graphs: &[ChannelDrawing]) -> String {
    let mut out = String::from(
        "digraph catalog {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"sans-serif\"];\n  edge [fontname=\"sans-serif\", fontsize=10];\n",
    );
    for (i, g) in graphs.iter().enumerate() {
        let id = |name: &str| dot_quote(&format!("{}/{}/{name}", g.package, g.channel));
        let mut label = format!("{} / {}", g.package, g.channel);
        if g.default {
            label.push_str(" (default)");
        }
        if g.deprecated {
            label.push_str(" (deprecated)");
        }
        let _ = writeln!(out, "  subgraph cluster_{i} {{");
        let _ = writeln!(out, "    label={};", dot_quote(&label));
        if g.deprecated {
            out.push_str("    style=filled;\n    fillcolor=\"#DCD0FF\";\n");
        }
        let known: HashSet<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        for n in &g.nodes {
            let label = match &n.version {
                Some(v) => {
                    let (name, v) = (dot_quote(&n.name), dot_quote(&v.to_string()));
                    format!(
                        "{}\\n{}",
                        name.trim_end_matches('"'),
                        v.trim_start_matches('"')
                    )
                }
                None => dot_quote(&n.name),
            };
            let mut attrs = vec![format!("label={label}")];
            if n.head {
                attrs.push("peripheries=2".into());
            }
            if n.deprecated {
                attrs.push("style=\"rounded,filled\"".into());
                attrs.push("fillcolor=\"#E8960F\"".into());
            }
            let _ = writeln!(out, "    {} [{}];", id(&n.name), attrs.join(", "));
        }
        for e in &g.edges {
            if !known.contains(e.from.as_str()) {
                let _ = writeln!(
                    out,
                    "    {} [label={}, style=dashed];",
                    id(&e.from),
                    dot_quote(&e.from)
                );
            }
        }
        for e in &g.edges {
            let attrs = match e.kind {
                EdgeKind::Replaces => "label=\"replaces\"".to_string(),
                EdgeKind::Skips => "label=\"skips\", style=dashed".to_string(),
                EdgeKind::SkipRange => format!(
                    "label={}, style=dotted",
                    dot_quote(&format!("skipRange({})", e.label))
                ),
                EdgeKind::Substitutes => "label=\"substitutesFor\", style=dashed".to_string(),
            };
            let _ = writeln!(out, "    {} -> {} [{attrs}];", id(&e.from), id(&e.to));
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

/// An SVG picture a maintainer can paste into a pull request: a legend, then per package one
/// band per channel (default first), entries newest at the top, `replaces` solid, `skips`
/// dashed red, `skipRange` dotted blue, all with arrowheads; heads with a thick green border,
/// deprecated entries filled orange, entries outside the channel dashed. The layout is in
/// [`svg`]: arcs stay inside their band and everything inside the canvas.
pub fn to_svg(graphs: &[ChannelDrawing]) -> String {
    svg::draw(graphs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::{Channel, ChannelEntry, Origin, Package};
    use crate::catalog::model::{SCHEMA_CHANNEL, SCHEMA_PACKAGE};
    use crate::catalog::template::semver::tests::bundle;

    fn cfg() -> DeclarativeConfig {
        let e = |n: &str, r: &str, s: &[&str], range: &str| ChannelEntry {
            name: n.into(),
            replaces: r.into(),
            skips: s.iter().map(|x| x.to_string()).collect(),
            skip_range: range.into(),
            origin: Origin::default(),
        };
        DeclarativeConfig {
            packages: vec![Package {
                schema: SCHEMA_PACKAGE.into(),
                name: "p".into(),
                default_channel: "stable".into(),
                icon: None,
                description: String::new(),
                properties: vec![],
                origin: Origin::default(),
            }],
            channels: vec![Channel {
                schema: SCHEMA_CHANNEL.into(),
                name: "stable".into(),
                package: "p".into(),
                entries: Some(vec![
                    e("p.v2.0.0", "p.v1.1.0", &["p.v1.0.0"], ">=1.0.0 <2.0.0"),
                    e("p.v1.1.0", "p.v0.9.0", &[], ""),
                    e("p.v1.0.0", "", &[], ""),
                ]),
                properties: vec![],
                origin: Origin::default(),
            }],
            bundles: ["1.0.0", "1.1.0", "2.0.0"]
                .iter()
                .map(|v| bundle(&format!("p.v{v}"), "p", v, ""))
                .collect(),
            ..DeclarativeConfig::default()
        }
    }

    #[test]
    fn heads_edges_and_order() {
        let g = build(&cfg(), None, None).unwrap_or_default();
        let [g] = g.as_slice() else {
            panic!("one channel")
        };
        assert!(g.default);
        let names: Vec<_> = g.nodes.iter().map(|n| (n.name.as_str(), n.head)).collect();
        assert_eq!(
            names,
            vec![("p.v1.0.0", false), ("p.v1.1.0", false), ("p.v2.0.0", true)]
        );
        assert_eq!(
            g.edges
                .iter()
                .filter(|e| e.kind == EdgeKind::SkipRange)
                .count(),
            2
        );
        let dot = to_dot(std::slice::from_ref(g));
        assert!(
            dot.contains("\"p/stable/p.v1.1.0\" -> \"p/stable/p.v2.0.0\" [label=\"replaces\"];")
        );
        assert!(dot.contains("\"p/stable/p.v0.9.0\" [label=\"p.v0.9.0\", style=dashed];"));
        let svg = to_svg(std::slice::from_ref(g));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<g id=\"node-").count(), 4);
        assert_eq!(svg, to_svg(std::slice::from_ref(g)));
    }
}
