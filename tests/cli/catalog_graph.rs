//! `olmpack catalog graph -o svg` drawn to pixels: every node, arc and label lies inside the
//! canvas, every arc inside its channel's band, every arc has a visible arrowhead, labels fit
//! their boxes and the legend is there, on the testdata, a generated 150-bundle channel and
//! every shared catalog.

use crate::support::cmd::olmpack;
use crate::support::fixtures::testdata;
use crate::support::proc::Bounded;
use crate::support::shared;

use resvg::tiny_skia;
use resvg::usvg;
use std::path::Path;

fn svg_of(dir: &Path) -> String {
    let out = olmpack()
        .args(["catalog", "graph", "-o", "svg"])
        .arg(dir)
        .bounded_output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn options() -> usvg::Options<'static> {
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_system_fonts();
    // fontdb maps sans-serif to Arial, which Linux machines rarely have: use an installed sans.
    let family = [
        "DejaVu Sans",
        "Liberation Sans",
        "Noto Sans",
        "Arial",
        "Helvetica",
    ]
    .into_iter()
    .find(|want| {
        db.faces()
            .any(|f| f.families.iter().any(|(name, _)| name == want))
    });
    if let Some(family) = family {
        db.set_sans_serif_family(family);
    }
    opt
}

/// The arrowhead colours (the three markers' fills).
const ARROW_COLOURS: [(u8, u8, u8); 3] =
    [(0x22, 0x22, 0x22), (0xc0, 0x39, 0x2b), (0x24, 0x71, 0xa3)];

#[derive(Default)]
struct Seen {
    nodes: usize,
    edges: usize,
    bands: usize,
    legend: bool,
    arrowheads: usize,
    texts: usize,
    problems: Vec<String>,
}

fn inside(inner: usvg::Rect, outer: usvg::Rect, slack: f32) -> bool {
    inner.left() >= outer.left() - slack
        && inner.top() >= outer.top() - slack
        && inner.right() <= outer.right() + slack
        && inner.bottom() <= outer.bottom() + slack
}

fn first_rect(g: &usvg::Group) -> Option<usvg::Rect> {
    g.children().iter().find_map(|c| match c {
        usvg::Node::Path(p) => Some(p.abs_bounding_box()),
        _ => None,
    })
}

/// Walks the tree: every element inside the canvas; `node-*` groups' labels inside their box;
/// `edge-*` and `node-*` inside their `band-*`; arrowheads counted.
fn walk(g: &usvg::Group, canvas: usvg::Rect, band: Option<usvg::Rect>, seen: &mut Seen) {
    for child in g.children() {
        let bbox = child.abs_stroke_bounding_box();
        if !inside(bbox, canvas, 0.5) {
            seen.problems.push(format!(
                "element {:?} at {bbox:?} is outside the canvas {canvas:?}",
                child.id()
            ));
        }
        let id = child.id();
        let mut band_here = band;
        if id.starts_with("band-") {
            seen.bands += 1;
            if let usvg::Node::Group(b) = child {
                band_here = first_rect(b);
            }
        }
        if id == "legend" {
            seen.legend = true;
        }
        if id.starts_with("edge-") || id.starts_with("node-") {
            if id.starts_with("edge-") {
                seen.edges += 1;
            } else {
                seen.nodes += 1;
            }
            match band {
                Some(b) if inside(bbox, b, 0.5) => {}
                Some(b) => seen
                    .problems
                    .push(format!("{id} at {bbox:?} leaves its band {b:?}")),
                None => seen.problems.push(format!("{id} is not in a band")),
            }
        }
        if id.starts_with("node-")
            && let usvg::Node::Group(n) = child
            && let Some(rect) = first_rect(n)
        {
            for t in n.children() {
                if let usvg::Node::Text(t) = t {
                    seen.texts += 1;
                    if !inside(t.abs_bounding_box(), rect, 1.0) {
                        seen.problems.push(format!(
                            "{id}: label {:?} does not fit its box",
                            t.chunks().iter().map(|c| c.text()).collect::<String>()
                        ));
                    }
                }
            }
        }
        match child {
            usvg::Node::Group(inner) => walk(inner, canvas, band_here, seen),
            usvg::Node::Path(p) => {
                if let Some(usvg::Paint::Color(c)) = p.fill().map(|f| f.paint())
                    && ARROW_COLOURS.contains(&(c.red, c.green, c.blue))
                    && p.stroke().is_none()
                    && p.data().len() == 4
                {
                    seen.arrowheads += 1;
                }
            }
            _ => {}
        }
    }
}

/// Renders the SVG on a canvas larger by `pad` on every side: nothing may be painted outside the
/// SVG's own canvas, and the canvas must show something.
fn pixels_outside_canvas(svg: &str, w: f32, h: f32) -> (usize, usize) {
    let pad = 40.0;
    let start = svg.find('>').expect("root element") + 1;
    let widened = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"{} {} {} {}\" font-family=\"sans-serif\">{}",
        w + 2.0 * pad,
        h + 2.0 * pad,
        -pad,
        -pad,
        w + 2.0 * pad,
        h + 2.0 * pad,
        &svg[start..]
    );
    let tree = usvg::Tree::from_str(&widened, &options()).expect("widened SVG parses");
    // Big pictures are checked at a smaller scale (a pixel then covers several units).
    let scale = (2_000_000.0 / (tree.size().width() * tree.size().height()))
        .sqrt()
        .min(1.0);
    let pw = (tree.size().width() * scale).ceil() as u32;
    let ph = (tree.size().height() * scale).ceil() as u32;
    let mut pixmap = tiny_skia::Pixmap::new(pw, ph).expect("pixmap");
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let (x0, y0) = ((pad * scale).floor() as u32, (pad * scale).floor() as u32);
    let (x1, y1) = (
        ((pad + w) * scale).ceil() as u32,
        ((pad + h) * scale).ceil() as u32,
    );
    let mut outside = 0;
    let mut dark = 0;
    for (i, px) in pixmap.pixels().iter().enumerate() {
        let (x, y) = (i as u32 % pw, i as u32 / pw);
        let within = x >= x0 && x < x1 && y >= y0 && y < y1;
        if !within && px.alpha() != 0 {
            outside += 1;
        }
        if within && px.red() < 128 {
            dark += 1;
        }
    }
    (outside, dark)
}

/// Every check on one picture; returns what was counted.
fn check(svg: &str, what: &str) -> Seen {
    let tree = usvg::Tree::from_str(svg, &options()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (w, h) = (tree.size().width(), tree.size().height());
    let canvas = usvg::Rect::from_xywh(0.0, 0.0, w, h).expect("canvas");
    let mut seen = Seen::default();
    walk(tree.root(), canvas, None, &mut seen);
    assert!(
        seen.problems.is_empty(),
        "{what}:\n{}",
        seen.problems.join("\n")
    );
    assert!(seen.legend, "{what}: no legend");
    for word in ["replaces", "skips", "skipRange", "head", "deprecated"] {
        assert!(
            svg.contains(&format!(">{word}</text>")),
            "{what}: the legend lacks {word}"
        );
    }
    let markers = svg.matches("marker-end=").count();
    // Every arc (and the three legend samples) ends in a painted arrowhead.
    assert_eq!(seen.arrowheads, markers, "{what}: arrowheads");
    assert_eq!(markers, seen.edges + 3, "{what}: arcs without an arrowhead");
    assert_eq!(seen.nodes, svg.matches("<g id=\"node-").count(), "{what}");
    let (outside, dark) = pixels_outside_canvas(svg, w, h);
    assert_eq!(outside, 0, "{what}: pixels painted outside the canvas");
    assert!(dark > 100, "{what}: the picture is blank");
    seen
}

/// Whether a real sans font (DejaVu Sans, as scripts/test.sh installs) is there to lay the
/// labels out; without it the label checks are a skip, and a failure in CI.
fn fonts_installed() -> bool {
    let found = options().fontdb.faces().any(|f| {
        f.families
            .iter()
            .any(|(name, _)| name.starts_with("DejaVu Sans"))
    });
    if !found {
        shared::skip("no DejaVu Sans font (apt-get install fonts-dejavu-core): label checks");
    }
    found
}

#[test]
fn testdata_catalogs_draw_inside_the_canvas_with_arrowheads_and_a_legend() {
    for rel in [
        "catalogs/valid-basic",
        "catalogs/valid-json",
        "catalogs/render-small",
    ] {
        let svg = svg_of(&testdata(rel));
        let seen = check(&svg, rel);
        assert!(seen.nodes > 0 && seen.bands > 0, "{rel}");
        // With fonts installed the labels are laid out, so the labels-fit-their-boxes check ran.
        if fonts_installed() {
            assert!(seen.texts >= seen.nodes, "{rel}: labels not checked");
        }
    }
    // valid-basic: foo.v0.2.0 replaces foo.v0.1.0 (a straight arrow) and its skipRange matches
    // foo.v0.1.0 (a routed arc), both into foo.v0.2.0, the head.
    let svg = svg_of(&testdata("catalogs/valid-basic"));
    assert!(
        svg.contains("<title>foo.v0.2.0 replaces foo.v0.1.0</title>"),
        "{svg}"
    );
    assert!(
        svg.contains("foo.v0.2.0 skipRange &gt;=0.1.0 &lt;0.2.0: foo.v0.1.0"),
        "{svg}"
    );
    assert!(svg.contains("foo.v0.2.0 (0.2.0), channel head"), "{svg}");
    assert!(
        !svg.contains("path{fill:none"),
        "the stylesheet must not hide arrowheads"
    );
}

/// A channel of 150 bundles with replaces, skips every fifth entry, skipRanges over ten entries,
/// a deprecated bundle, an entry outside the channel and a second, deprecated channel: it stays
/// one readable column (boxes at full size, no horizontal sprawl) with everything inside.
#[test]
fn a_150_bundle_channel_stays_readable_and_inside() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut y = String::from(
        "---\nschema: olm.package\nname: big\ndefaultChannel: stable\n---\nschema: olm.channel\nname: stable\npackage: big\nentries:\n",
    );
    for i in 0..150 {
        let _ = std::fmt::Write::write_fmt(&mut y, format_args!("- name: big.v1.{i}.0\n"));
        if i == 0 {
            y.push_str("  replaces: big.v0.9.0\n");
        } else if i % 5 == 0 {
            y.push_str(&format!(
                "  replaces: big.v1.{}.0\n  skips:\n  - big.v1.{}.0\n",
                i - 2,
                i - 1
            ));
        } else if i % 5 == 1 && i > 1 {
            y.push_str(&format!("  replaces: big.v1.{}.0\n", i - 2));
        } else {
            y.push_str(&format!("  replaces: big.v1.{}.0\n", i - 1));
        }
        if i % 10 == 9 {
            y.push_str(&format!("  skipRange: '>=1.{}.0 <1.{i}.0'\n", i - 9));
        }
    }
    y.push_str("---\nschema: olm.channel\nname: old\npackage: big\nentries:\n- name: big.v1.0.0\n- name: big.v1.1.0\n  replaces: big.v1.0.0\n");
    for i in 0..150 {
        y.push_str(&format!(
            "---\nschema: olm.bundle\nname: big.v1.{i}.0\npackage: big\nimage: quay.io/example/big-bundle:v1.{i}.0\nproperties:\n- type: olm.package\n  value: {{packageName: big, version: 1.{i}.0}}\n"
        ));
    }
    y.push_str("---\nschema: olm.deprecations\npackage: big\nentries:\n- reference: {schema: olm.channel, name: old}\n  message: old is gone\n- reference: {schema: olm.bundle, name: big.v1.3.0}\n  message: broken\n");
    std::fs::write(dir.path().join("catalog.yaml"), y).expect("write");
    let svg = svg_of(dir.path());
    let seen = check(&svg, "150 bundles");
    assert_eq!(seen.bands, 2);
    assert_eq!(seen.nodes, 151 + 2);
    if fonts_installed() {
        assert!(seen.texts >= 2 * 150, "labels drawn: {}", seen.texts);
    }
    let tree = usvg::Tree::from_str(&svg, &options()).expect("parses");
    // One column per channel: narrow enough to read at 100 %, one 50-unit row per bundle.
    assert!(tree.size().width() < 900.0, "{:?}", tree.size());
    assert!(
        tree.size().height() < 151.0 * 50.0 + 300.0,
        "{:?}",
        tree.size()
    );
    assert!(svg.contains("class=\"node deprecated\""));
    assert!(svg.contains("class=\"band deprecated\""));
    assert!(svg.contains("class=\"node outside\""));
}

/// The known bad cases and every other shared catalog (skipped without `../shared`).
#[test]
fn every_shared_catalog_draws_inside_its_canvas_and_bands() {
    let Some(catalogs) = shared::shared_catalogs("fbc") else {
        return;
    };
    let mut folders = Vec::new();
    for repo in std::fs::read_dir(catalogs.join("fbc"))
        .expect("fbc")
        .flatten()
    {
        let dir = repo.path().join("catalogs/v4.18");
        for pkg in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            folders.push(pkg.path());
        }
    }
    folders.sort();
    shared::cases("catalog_graph shared catalogs drawn", folders.len(), 67);
    let mut nodes = 0;
    let mut edges = 0;
    for dir in &folders {
        let svg = svg_of(dir);
        let seen = check(&svg, &dir.display().to_string());
        nodes += seen.nodes;
        edges += seen.edges;
    }
    println!(
        "catalog graph svg: {} shared catalogs, {nodes} boxes, {edges} arcs and arrows, all inside",
        folders.len()
    );
}
