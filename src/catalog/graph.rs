//! The upgrade graph of a catalog, per package and channel, as Graphviz DOT or a self-drawn SVG.
//!
//! Why: people check a channel by looking at it before they publish it. Mermaid (opm's format,
//! [`crate::catalog::mermaid`]) needs a renderer; DOT feeds existing tooling; the SVG needs
//! nothing at all, so olmpack draws it itself with a simple layered layout: one band per channel,
//! bundles left to right by version, `replaces` arcs below the band, `skips` and `skipRange`
//! arcs above it.

use crate::catalog::mermaid::{MermaidError, bundle_versions};
use crate::catalog::model::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use crate::semver_range;
use semver::Version;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// Which edge an arrow stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// `replaces`.
    Replaces,
    /// One name of `skips`.
    Skips,
    /// A `skipRange` that matches the older entry.
    SkipRange,
}

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

/// One arrow, from the older entry to the one that upgrades from it.
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

/// The graph of one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelGraph {
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

/// Builds the channel graphs, sorted by package then channel, optionally filtered.
pub fn build(
    cfg: &DeclarativeConfig,
    package: Option<&str>,
    channel: Option<&str>,
) -> Result<Vec<ChannelGraph>, MermaidError> {
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
        let mut incoming: HashSet<&str> = HashSet::new();
        for e in &entries {
            if !e.replaces.is_empty() {
                incoming.insert(&e.replaces);
            }
            for s in &e.skips {
                incoming.insert(s);
            }
        }
        let mut nodes: Vec<GraphNode> = entries
            .iter()
            .map(|e| GraphNode {
                name: e.name.clone(),
                version: versions.get(&e.name).cloned(),
                head: !incoming.contains(e.name.as_str()),
                deprecated: dep_bundle.contains(&(c.package.clone(), e.name.clone())),
            })
            .collect();
        nodes.sort_by(|a, b| match (&a.version, &b.version) {
            (Some(x), Some(y)) => x.cmp_precedence(y).then_with(|| a.name.cmp(&b.name)),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, None) => a.name.cmp(&b.name),
        });
        let mut edges = Vec::new();
        for e in &entries {
            if !e.replaces.is_empty() {
                edges.push(GraphEdge {
                    from: e.replaces.clone(),
                    to: e.name.clone(),
                    kind: EdgeKind::Replaces,
                    label: String::new(),
                });
            }
            for s in &e.skips {
                edges.push(GraphEdge {
                    from: s.clone(),
                    to: e.name.clone(),
                    kind: EdgeKind::Skips,
                    label: String::new(),
                });
            }
            if let Ok(range) = semver_range::parse(&e.skip_range)
                && !e.skip_range.is_empty()
            {
                for other in &entries {
                    if other.name != e.name
                        && versions.get(&other.name).is_some_and(|v| range.matches(v))
                    {
                        edges.push(GraphEdge {
                            from: other.name.clone(),
                            to: e.name.clone(),
                            kind: EdgeKind::SkipRange,
                            label: e.skip_range.clone(),
                        });
                    }
                }
            }
        }
        out.push(ChannelGraph {
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
pub fn to_dot(graphs: &[ChannelGraph]) -> String {
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
            };
            let _ = writeln!(out, "    {} -> {} [{attrs}];", id(&e.from), id(&e.to));
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An SVG drawing: one band per channel, entries left to right by version, `replaces` arcs
/// below (solid), `skips` above (dashed), `skipRange` above (dotted), heads with a thick border,
/// deprecated entries filled orange. Entries outside the channel that an edge names are drawn
/// with a dashed border at the left.
pub fn to_svg(graphs: &[ChannelGraph]) -> String {
    const CHAR_W: usize = 7;
    const BOX_H: usize = 36;
    const GAP: usize = 40;
    const MARGIN: usize = 20;
    const TITLE_H: usize = 24;
    struct Placed {
        x: usize,
        w: usize,
    }
    let mut bands = String::new();
    let mut y = MARGIN;
    let mut width = 400usize;
    for g in graphs {
        let mut names: Vec<(String, Option<String>, bool, bool, bool)> = Vec::new();
        let known: HashSet<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        for e in &g.edges {
            if !known.contains(e.from.as_str()) && !names.iter().any(|n| n.0 == e.from) {
                names.push((e.from.clone(), None, false, false, true));
            }
        }
        for n in &g.nodes {
            names.push((
                n.name.clone(),
                n.version.as_ref().map(|v| v.to_string()),
                n.head,
                n.deprecated,
                false,
            ));
        }
        let max_span = g.edges.len().max(1);
        let arc_room = 14 * max_span.min(8) + 10;
        let band_top = y;
        let row_y = band_top + TITLE_H + arc_room;
        let mut placed: HashMap<&str, Placed> = HashMap::new();
        let mut x = MARGIN;
        for n in &names {
            let text_w = n.0.len().max(n.1.as_ref().map_or(0, String::len)) * CHAR_W + 16;
            placed.insert(n.0.as_str(), Placed { x, w: text_w });
            x += text_w + GAP;
        }
        width = width.max(x + MARGIN);
        let mut title = format!("{} / {}", g.package, g.channel);
        if g.default {
            title.push_str(" (default)");
        }
        if g.deprecated {
            title.push_str(" (deprecated)");
        }
        let band_h = TITLE_H + 2 * arc_room + BOX_H;
        let _ = writeln!(
            bands,
            "  <rect class=\"band{}\" x=\"{}\" y=\"{band_top}\" width=\"@W@\" height=\"{band_h}\"/>",
            if g.deprecated { " deprecated" } else { "" },
            MARGIN / 2
        );
        let _ = writeln!(
            bands,
            "  <text class=\"title\" x=\"{MARGIN}\" y=\"{}\">{}</text>",
            band_top + 16,
            xml(&title)
        );
        for (i, e) in g.edges.iter().enumerate() {
            let (Some(a), Some(b)) = (placed.get(e.from.as_str()), placed.get(e.to.as_str()))
            else {
                continue;
            };
            let x1 = a.x + a.w / 2;
            let x2 = b.x + b.w / 2;
            let lift = 14 * ((i % 8) + 1);
            let (y0, ctrl, class) = match e.kind {
                EdgeKind::Replaces => (row_y + BOX_H, row_y + BOX_H + lift * 2, "replaces"),
                EdgeKind::Skips => (row_y, row_y.saturating_sub(lift * 2), "skips"),
                EdgeKind::SkipRange => (row_y, row_y.saturating_sub(lift * 2), "skiprange"),
            };
            let _ = writeln!(
                bands,
                "  <path class=\"{class}\" d=\"M {x1} {y0} C {x1} {ctrl} {x2} {ctrl} {x2} {y0}\" marker-end=\"url(#arrow)\"><title>{}</title></path>",
                xml(&format!(
                    "{} {} {}",
                    e.to,
                    match e.kind {
                        EdgeKind::Replaces => "replaces".to_string(),
                        EdgeKind::Skips => "skips".to_string(),
                        EdgeKind::SkipRange => format!("skipRange({})", e.label),
                    },
                    e.from
                ))
            );
        }
        for n in &names {
            let Some(p) = placed.get(n.0.as_str()) else {
                continue;
            };
            let mut class = String::from("node");
            if n.2 {
                class.push_str(" head");
            }
            if n.3 {
                class.push_str(" deprecated");
            }
            if n.4 {
                class.push_str(" outside");
            }
            let _ = writeln!(
                bands,
                "  <rect class=\"{class}\" x=\"{}\" y=\"{row_y}\" width=\"{}\" height=\"{BOX_H}\" rx=\"6\"/>",
                p.x, p.w
            );
            let _ = writeln!(
                bands,
                "  <text class=\"name\" x=\"{}\" y=\"{}\">{}</text>",
                p.x + p.w / 2,
                row_y + 15,
                xml(&n.0)
            );
            if let Some(v) = &n.1 {
                let _ = writeln!(
                    bands,
                    "  <text class=\"version\" x=\"{}\" y=\"{}\">{}</text>",
                    p.x + p.w / 2,
                    row_y + 29,
                    xml(v)
                );
            }
        }
        y = band_top + band_h + MARGIN;
    }
    let bands = bands.replace("@W@", &(width - MARGIN).to_string());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{y}\" viewBox=\"0 0 {width} {y}\" font-family=\"sans-serif\">"
    );
    out.push_str("  <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>\n");
    out.push_str("  <style>.band{fill:#f7f7f7;stroke:#ddd}.band.deprecated{fill:#DCD0FF}.title{font-size:13px;font-weight:bold}.node{fill:#fff;stroke:#555}.node.head{stroke:#1a7f37;stroke-width:3}.node.deprecated{fill:#E8960F}.node.outside{stroke-dasharray:4 3;fill:#eee}.name{font-size:11px;text-anchor:middle}.version{font-size:10px;fill:#555;text-anchor:middle}path{fill:none;stroke-width:1.5}.replaces{stroke:#222}.skips{stroke:#c0392b;stroke-dasharray:6 3}.skiprange{stroke:#2471a3;stroke-dasharray:2 3}</style>\n");
    out.push_str(&bands);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::{Channel, ChannelEntry, Origin, Package};
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
                schema: "olm.package".into(),
                name: "p".into(),
                default_channel: "stable".into(),
                icon: None,
                description: String::new(),
                properties: vec![],
                origin: Origin::default(),
            }],
            channels: vec![Channel {
                schema: "olm.channel".into(),
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
        assert_eq!(svg.matches("class=\"node").count(), 4);
        assert_eq!(svg, to_svg(std::slice::from_ref(g)));
    }
}
