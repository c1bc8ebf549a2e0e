//! The self-drawn SVG of [`super::to_svg`]: a layered layout with one column ("band") per
//! channel, ranks by version (newest at the top), and every arc routed in vertical lanes to the
//! right of its own band's boxes.
//!
//! Why a layout of our own: the picture must be pasteable into a pull request with no renderer
//! and no font metrics at hand, stay readable at 150 bundles, keep each channel's arcs inside its
//! band and never draw outside the canvas. General graph layout crates (layout-rs) place a whole
//! graph without channel bands and route splines freely, so none of these could be guaranteed.
//!
//! The layout, per channel band:
//! - one row per entry, in version order (entries the channel names but does not hold, drawn
//!   dashed, are the oldest rows), newest at the top, so upgrades point upwards;
//! - a `replaces` between neighbouring rows is a short straight arrow between the two boxes;
//! - every other arc (skips, skipRange, a `replaces` that jumps rows) is routed orthogonally: out
//!   of the source's right side, along a vertical lane, into the target's right side with an
//!   arrowhead. Arcs of one kind into one target share a lane (a bus with a dot where a source
//!   joins), lanes are assigned greedily shortest span first (interval colouring), so arcs never
//!   overlap each other and never leave the band whose width is computed from the lane count.
//!
//! Bands are laid side by side per package (wrapping to a new line past [`MAX_ROW_WIDTH`]),
//! packages stacked, with a legend on top. Every coordinate is computed here, so the canvas is
//! exactly as large as what is drawn.

use super::{ChannelDrawing, EdgeKind};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Outer margin of the canvas.
const MARGIN: f64 = 16.0;
/// Height of a bundle box.
const BOX_H: f64 = 34.0;
/// Vertical distance between two rows.
const ROW: f64 = 50.0;
/// Padding inside a band.
const PAD: f64 = 12.0;
/// Height of a band's title area.
const TITLE_H: f64 = 46.0;
/// Horizontal distance from the boxes' right side to the first lane.
const LANE_START: f64 = 16.0;
/// Distance between two lanes.
const LANE_W: f64 = 9.0;
/// Horizontal gap between two bands.
const BAND_GAP: f64 = 14.0;
/// Height of a package heading.
const PACKAGE_H: f64 = 30.0;
/// Bands wrap to a new line past this width (unless a single band is wider).
pub const MAX_ROW_WIDTH: f64 = 2400.0;
/// Height of the legend area.
const LEGEND_H: f64 = 64.0;

/// Approximate advance width of `s` in a sans-serif font of `size` pixels. Generous (it follows
/// DejaVu Sans, the widest common default), so labels fit their boxes in narrower fonts too.
fn text_width(s: &str, size: f64) -> f64 {
    s.chars()
        .map(|c| match c {
            '.' | ',' | ':' | ';' | 'i' | 'j' | 'l' | '\'' | '|' | '!' => 0.33,
            'f' | 't' | 'r' | '-' | '(' | ')' | ' ' | '/' => 0.42,
            'm' | 'w' | 'M' | 'W' => 0.98,
            'A'..='Z' => 0.74,
            _ => 0.64,
        })
        .sum::<f64>()
        * size
}

/// A sort key that orders the numbers inside names by value (`v1.32.2` before `v1.32.13`,
/// `stable-3.9` before `stable-3.10`), the order people read versions in.
fn natural(s: &str) -> Vec<(String, u128)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut v: u128 = c.to_digit(10).map_or(0, u128::from);
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                v = v.saturating_mul(10).saturating_add(u128::from(d));
                chars.next();
            }
            out.push((std::mem::take(&mut text), v));
        } else {
            text.push(c);
        }
    }
    out.push((text, 0));
    out
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number as SVG text: at most one decimal, no trailing `.0`, so output bytes are stable.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

fn kind_class(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Replaces => "replaces",
        EdgeKind::Skips => "skips",
        EdgeKind::SkipRange => "skiprange",
        EdgeKind::Substitutes => "substitutes",
    }
}

/// Vertical offset from a box's centre where arcs of `kind` enter (below the centre) or leave
/// (above it), so arcs of different kinds and directions never share a segment at a box.
fn kind_offset(kind: EdgeKind) -> f64 {
    match kind {
        EdgeKind::Replaces => 4.0,
        EdgeKind::Skips => 9.0,
        EdgeKind::SkipRange => 13.0,
        EdgeKind::Substitutes => 16.0,
    }
}

/// One box of a band.
struct Node<'a> {
    name: &'a str,
    version: Option<String>,
    head: bool,
    deprecated: bool,
    outside: bool,
}

/// Arcs of one kind into one target, routed in one lane.
struct Group {
    to: usize,
    kind: EdgeKind,
    from: Vec<usize>,
    label: String,
    /// Vertical extent of the lane segment.
    top: f64,
    bottom: f64,
    lane: usize,
}

/// A band laid out in its own coordinates (origin at its top-left corner).
struct Band<'a> {
    graph: &'a ChannelDrawing,
    nodes: Vec<Node<'a>>,
    /// `replaces` between neighbouring rows: (from, to).
    straight: Vec<(usize, usize)>,
    groups: Vec<Group>,
    box_w: f64,
    width: f64,
    height: f64,
}

impl<'a> Band<'a> {
    fn new(g: &'a ChannelDrawing) -> Band<'a> {
        let mut nodes: Vec<Node<'a>> = Vec::new();
        let known: std::collections::HashSet<&str> =
            g.nodes.iter().map(|n| n.name.as_str()).collect();
        let mut outside: Vec<&str> = g
            .edges
            .iter()
            .map(|e| e.from.as_str())
            .filter(|f| !known.contains(f))
            .collect();
        outside.sort_by(|a, b| natural(a).cmp(&natural(b)).then(a.cmp(b)));
        outside.dedup();
        for name in outside {
            nodes.push(Node {
                name,
                version: None,
                head: false,
                deprecated: false,
                outside: true,
            });
        }
        for x in &g.nodes {
            nodes.push(Node {
                name: &x.name,
                version: x.version.as_ref().map(|v| v.to_string()),
                head: x.head,
                deprecated: x.deprecated,
                outside: false,
            });
        }
        let index: HashMap<&str, usize> =
            nodes.iter().enumerate().map(|(i, x)| (x.name, i)).collect();
        let rows = nodes.len();
        // Rank i (0 = oldest) is drawn in row rows-1-i (0 = top).
        let centre = |i: usize| TITLE_H + (rows - 1 - i) as f64 * ROW + BOX_H / 2.0;
        let mut straight = Vec::new();
        let mut groups: Vec<Group> = Vec::new();
        let mut group_of: HashMap<(usize, u8), usize> = HashMap::new();
        for e in &g.edges {
            let (Some(&from), Some(&to)) = (index.get(e.from.as_str()), index.get(e.to.as_str()))
            else {
                continue;
            };
            if from == to {
                continue;
            }
            if e.kind == EdgeKind::Replaces && to == from + 1 {
                if !straight.contains(&(from, to)) {
                    straight.push((from, to));
                }
                continue;
            }
            let key = (to, e.kind as u8);
            let gi = *group_of.entry(key).or_insert_with(|| {
                groups.push(Group {
                    to,
                    kind: e.kind,
                    from: Vec::new(),
                    label: e.label.clone(),
                    top: 0.0,
                    bottom: 0.0,
                    lane: 0,
                });
                groups.len() - 1
            });
            if let Some(grp) = groups.get_mut(gi)
                && !grp.from.contains(&from)
            {
                grp.from.push(from);
            }
        }
        for grp in &mut groups {
            let off = kind_offset(grp.kind);
            let mut ys = vec![centre(grp.to) + off];
            ys.extend(grp.from.iter().map(|&f| centre(f) - off));
            grp.top = ys.iter().copied().fold(f64::INFINITY, f64::min);
            grp.bottom = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        }
        // Interval colouring: shortest spans nearest the boxes, each in the first free lane.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| {
            let (ga, gb) = (&groups[a], &groups[b]);
            (ga.bottom - ga.top)
                .total_cmp(&(gb.bottom - gb.top))
                .then(ga.top.total_cmp(&gb.top))
                .then(a.cmp(&b))
        });
        let mut lanes: Vec<Vec<(f64, f64)>> = Vec::new();
        for gi in order {
            let (top, bottom) = (groups[gi].top - 3.0, groups[gi].bottom + 3.0);
            let free = lanes
                .iter()
                .position(|l| l.iter().all(|&(t, b)| bottom < t || top > b));
            let lane = match free {
                Some(k) => k,
                None => {
                    lanes.push(Vec::new());
                    lanes.len() - 1
                }
            };
            if let Some(l) = lanes.get_mut(lane) {
                l.push((top, bottom));
            }
            groups[gi].lane = lane;
        }
        let box_w = nodes
            .iter()
            .map(|x| {
                text_width(x.name, 12.0)
                    .max(x.version.as_deref().map_or(0.0, |v| text_width(v, 11.0)))
            })
            .fold(60.0, f64::max)
            + 20.0;
        let lane_room = if lanes.is_empty() {
            0.0
        } else {
            LANE_START + (lanes.len() - 1) as f64 * LANE_W + 6.0
        };
        let (title, sub) = band_titles(g, nodes.len());
        let width = (PAD + box_w + lane_room + PAD)
            .max(text_width(&title, 13.0) + 2.0 * PAD)
            .max(text_width(&sub, 11.0) + 2.0 * PAD)
            .ceil();
        let height = TITLE_H + rows as f64 * ROW - (ROW - BOX_H) + PAD;
        Band {
            graph: g,
            nodes,
            straight,
            groups,
            box_w,
            width,
            height,
        }
    }

    fn row_top(&self, i: usize) -> f64 {
        TITLE_H + (self.nodes.len() - 1 - i) as f64 * ROW
    }

    /// Draws the band with its top-left corner at (x, y); ids number nodes and arcs.
    fn draw(&self, out: &mut String, x: f64, y: f64, band_id: usize, ids: &mut Ids) {
        let g = self.graph;
        let (title, sub) = band_titles(g, self.nodes.len());
        let _ = writeln!(
            out,
            "  <g id=\"band-{band_id}\" class=\"channel\"><title>{}</title>",
            xml(&format!("{} / {}", g.package, g.channel))
        );
        let _ = writeln!(
            out,
            "    <rect class=\"band{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\"/>",
            if g.deprecated { " deprecated" } else { "" },
            n(x),
            n(y),
            n(self.width),
            n(self.height)
        );
        let _ = writeln!(
            out,
            "    <text class=\"title\" x=\"{}\" y=\"{}\">{}</text>",
            n(x + PAD),
            n(y + 19.0),
            xml(&title)
        );
        let _ = writeln!(
            out,
            "    <text class=\"sub\" x=\"{}\" y=\"{}\">{}</text>",
            n(x + PAD),
            n(y + 35.0),
            xml(&sub)
        );
        self.draw_edges(out, x, y, ids);
        self.draw_nodes(out, x, y, ids);
        out.push_str("  </g>\n");
    }

    /// The band's arcs: straight `replaces` lines between neighbours, then each group of
    /// edges on its lane beside the boxes.
    fn draw_edges(&self, out: &mut String, x: f64, y: f64, ids: &mut Ids) {
        let bx = x + PAD;
        let right = bx + self.box_w;
        let cx = bx + self.box_w / 2.0;
        for &(from, to) in &self.straight {
            let id = ids.next("edge");
            let _ = writeln!(
                out,
                "    <path id=\"{id}\" class=\"edge replaces\" d=\"M {} {} V {}\" marker-end=\"url(#arrow-replaces)\"><title>{}</title></path>",
                n(cx),
                n(y + self.row_top(from)),
                n(y + self.row_top(to) + BOX_H),
                xml(&format!(
                    "{} replaces {}",
                    self.nodes[to].name, self.nodes[from].name
                ))
            );
        }
        for grp in &self.groups {
            let id = ids.next("edge");
            let class = kind_class(grp.kind);
            let off = kind_offset(grp.kind);
            let lx = right + LANE_START + grp.lane as f64 * LANE_W;
            let mut d = String::new();
            let mut dots = String::new();
            for &f in &grp.from {
                let sy = y + self.row_top(f) + BOX_H / 2.0 - off;
                let _ = write!(d, "M {} {} H {} ", n(right), n(sy), n(lx));
                if sy > y + grp.top + 0.5 && sy < y + grp.bottom - 0.5 {
                    let _ = write!(
                        dots,
                        "<circle class=\"dot {class}\" cx=\"{}\" cy=\"{}\" r=\"2.5\"/>",
                        n(lx),
                        n(sy)
                    );
                }
            }
            let ty = y + self.row_top(grp.to) + BOX_H / 2.0 + off;
            let _ = write!(
                d,
                "M {} {} V {} M {} {} H {}",
                n(lx),
                n(y + grp.top),
                n(y + grp.bottom),
                n(lx),
                n(ty),
                n(right)
            );
            let what = match grp.kind {
                EdgeKind::Replaces => "replaces".to_string(),
                EdgeKind::Skips => "skips".to_string(),
                EdgeKind::SkipRange => format!("skipRange {}:", grp.label),
                EdgeKind::Substitutes => "substitutesFor".to_string(),
            };
            let froms: Vec<&str> = grp.from.iter().map(|&f| self.nodes[f].name).collect();
            let _ = writeln!(
                out,
                "    <g id=\"{id}\" class=\"arc\"><title>{}</title><path class=\"edge {class}\" d=\"{d}\" marker-end=\"url(#arrow-{class})\"/>{dots}</g>",
                xml(&format!(
                    "{} {what} {}",
                    self.nodes[grp.to].name,
                    froms.join(", ")
                ))
            );
        }
    }

    /// The band's boxes, bottom (oldest) to top, with their classes and tooltips.
    fn draw_nodes(&self, out: &mut String, x: f64, y: f64, ids: &mut Ids) {
        let bx = x + PAD;
        let cx = bx + self.box_w / 2.0;
        for (i, node) in self.nodes.iter().enumerate() {
            let id = ids.next("node");
            let top = y + self.row_top(i);
            let mut class = String::from("node");
            for (on, c) in [
                (node.head, " head"),
                (node.deprecated, " deprecated"),
                (node.outside, " outside"),
            ] {
                if on {
                    class.push_str(c);
                }
            }
            let mut tip = node.name.to_string();
            if let Some(v) = &node.version {
                let _ = write!(tip, " ({v})");
            }
            for (on, what) in [
                (node.head, ", channel head"),
                (node.deprecated, ", deprecated"),
                (node.outside, ", not in this channel"),
            ] {
                if on {
                    tip.push_str(what);
                }
            }
            let _ = write!(
                out,
                "    <g id=\"{id}\"><title>{}</title><rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"5\"/>",
                xml(&tip),
                n(bx),
                n(top),
                n(self.box_w),
                n(BOX_H)
            );
            match &node.version {
                Some(v) => {
                    let _ = writeln!(
                        out,
                        "<text class=\"name\" x=\"{}\" y=\"{}\">{}</text><text class=\"version\" x=\"{}\" y=\"{}\">{}</text></g>",
                        n(cx),
                        n(top + 15.0),
                        xml(node.name),
                        n(cx),
                        n(top + 28.0),
                        xml(v)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "<text class=\"name\" x=\"{}\" y=\"{}\">{}</text></g>",
                        n(cx),
                        n(top + 21.0),
                        xml(node.name)
                    );
                }
            }
        }
    }
}

/// A band's title (the channel) and subtitle (facts about it).
fn band_titles(g: &ChannelDrawing, rows: usize) -> (String, String) {
    let entries = g.nodes.len();
    let mut sub = format!(
        "{entries} {}",
        if entries == 1 { "entry" } else { "entries" }
    );
    if rows > entries {
        let _ = write!(sub, " + {} outside", rows - entries);
    }
    if g.default {
        sub.push_str(" · default");
    }
    if g.deprecated {
        sub.push_str(" · deprecated");
    }
    (g.channel.clone(), sub)
}

/// Sequential element ids (`node-0`, `edge-0`, …) so tests and readers can find each element.
#[derive(Default)]
struct Ids(HashMap<&'static str, usize>);

impl Ids {
    fn next(&mut self, prefix: &'static str) -> String {
        let k = self.0.entry(prefix).or_insert(0);
        *k += 1;
        format!("{prefix}-{}", *k - 1)
    }
}

/// The legend: one sample per edge kind and node style, in one row.
fn legend(out: &mut String) -> f64 {
    let mut x = MARGIN;
    let y = MARGIN;
    let mut items = String::new();
    let _ = writeln!(
        items,
        "    <text class=\"title\" x=\"{}\" y=\"{}\">Upgrade graph</text><text class=\"sub\" x=\"{}\" y=\"{}\">newest at the top; an arrow points from a bundle to the one that upgrades from it</text>",
        n(x),
        n(y + 14.0),
        n(x),
        n(y + 29.0)
    );
    let row = y + 50.0;
    for (kind, label) in [
        (EdgeKind::Replaces, "replaces"),
        (EdgeKind::Skips, "skips"),
        (EdgeKind::SkipRange, "skipRange"),
    ] {
        let class = kind_class(kind);
        let _ = writeln!(
            items,
            "    <path class=\"edge {class}\" d=\"M {} {} H {}\" marker-end=\"url(#arrow-{class})\"/><text class=\"legend\" x=\"{}\" y=\"{}\">{label}</text>",
            n(x),
            n(row - 4.0),
            n(x + 34.0),
            n(x + 40.0),
            n(row)
        );
        x += 40.0 + text_width(label, 12.0) + 18.0;
    }
    for (class, label) in [
        ("node head", "head"),
        ("node deprecated", "deprecated"),
        ("node outside", "not in the channel"),
    ] {
        let _ = writeln!(
            items,
            "    <rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"26\" height=\"16\" rx=\"4\"/><text class=\"legend\" x=\"{}\" y=\"{}\">{label}</text>",
            n(x),
            n(row - 12.0),
            n(x + 32.0),
            n(row)
        );
        x += 32.0 + text_width(label, 12.0) + 18.0;
    }
    let _ = writeln!(
        items,
        "    <rect class=\"band deprecated\" x=\"{}\" y=\"{}\" width=\"26\" height=\"16\" rx=\"4\"/><text class=\"legend\" x=\"{}\" y=\"{}\">deprecated channel</text>",
        n(x),
        n(row - 12.0),
        n(x + 32.0),
        n(row)
    );
    x += 32.0 + text_width("deprecated channel", 12.0);
    let _ = writeln!(out, "  <g id=\"legend\">\n{items}  </g>");
    let intro = text_width(
        "newest at the top; an arrow points from a bundle to the one that upgrades from it",
        11.0,
    );
    x.max(MARGIN + intro) + MARGIN
}

/// Lays out and draws `graphs` (sorted by package, then channel).
pub fn draw(graphs: &[ChannelDrawing]) -> String {
    let mut body = String::new();
    let legend_w = legend(&mut body);
    let mut ids = Ids::default();
    let mut width = legend_w;
    let mut y = MARGIN + LEGEND_H;
    let mut band_id = 0;
    let mut i = 0;
    while i < graphs.len() {
        let package = &graphs[i].package;
        let mut j = i;
        while j < graphs.len() && &graphs[j].package == package {
            j += 1;
        }
        // Default channel first, then the others by name.
        let mut bands: Vec<Band> = graphs[i..j].iter().map(Band::new).collect();
        bands.sort_by(|a, b| {
            (!a.graph.default, natural(&a.graph.channel))
                .cmp(&(!b.graph.default, natural(&b.graph.channel)))
        });
        let _ = writeln!(
            body,
            "  <text class=\"package\" x=\"{}\" y=\"{}\">{}</text>",
            n(MARGIN),
            n(y + 20.0),
            xml(package)
        );
        width = width.max(MARGIN + text_width(package, 16.0) + MARGIN);
        y += PACKAGE_H;
        // As many lines as MAX_ROW_WIDTH needs, balanced: a band starts a new line when its
        // middle would pass the even share of the total width.
        let total: f64 = bands.iter().map(|b| b.width + BAND_GAP).sum::<f64>() - BAND_GAP;
        let lines = (total / MAX_ROW_WIDTH).ceil().max(1.0);
        let share = total / lines;
        let mut x = MARGIN;
        let mut line_h: f64 = 0.0;
        for band in &bands {
            if x > MARGIN && x - MARGIN + band.width / 2.0 > share {
                y += line_h + BAND_GAP;
                x = MARGIN;
                line_h = 0.0;
            }
            band.draw(&mut body, x, y, band_id, &mut ids);
            band_id += 1;
            x += band.width + BAND_GAP;
            line_h = line_h.max(band.height);
            width = width.max(x - BAND_GAP + MARGIN);
        }
        y += line_h + BAND_GAP + 6.0;
        i = j;
    }
    let height = (y - BAND_GAP - 6.0 + MARGIN).max(MARGIN + LEGEND_H);
    let (w, h) = (n(width.ceil()), n(height.ceil()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">"
    );
    out.push_str("  <defs>\n");
    for (class, colour) in [
        ("replaces", "#222222"),
        ("skips", "#c0392b"),
        ("skiprange", "#2471a3"),
    ] {
        let _ = writeln!(
            out,
            "    <marker id=\"arrow-{class}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"{colour}\" stroke=\"none\"/></marker>"
        );
    }
    out.push_str("  </defs>\n");
    out.push_str("  <style>.background{fill:#fff}.band{fill:#f6f8fa;stroke:#d0d7de}.band.deprecated{fill:#e8e0ff}.package{font-size:16px;font-weight:bold;fill:#1f2328}.title{font-size:13px;font-weight:bold;fill:#1f2328}.sub{font-size:11px;fill:#59636e}.legend{font-size:12px;fill:#1f2328}.node{fill:#fff;stroke:#59636e;stroke-width:1}.node.head{stroke:#1a7f37;stroke-width:3}.node.deprecated{fill:#f5b041}.node.outside{stroke-dasharray:4 3;fill:#eaeef2}.name{font-size:12px;text-anchor:middle;fill:#1f2328}.version{font-size:11px;fill:#59636e;text-anchor:middle}.edge{fill:none;stroke-width:1.5}.edge.replaces{stroke:#222222}.edge.skips{stroke:#c0392b;stroke-dasharray:6 3}.edge.skiprange{stroke:#2471a3;stroke-dasharray:2 2}.dot.replaces{fill:#222222}.dot.skips{fill:#c0392b}.dot.skiprange{fill:#2471a3}</style>\n");
    let _ = writeln!(
        out,
        "  <rect class=\"background\" x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\"/>"
    );
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}
