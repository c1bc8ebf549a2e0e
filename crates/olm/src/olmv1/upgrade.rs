//! Which upgrades a catalog offers, as OLM v0 and OLM v1 read its channels.
//!
//! Why both: the same `replaces`/`skips`/`skipRange` entries lead to different upgrades. OLM
//! v0 (operator-lifecycle-manager) follows one channel's graph ([`ChannelGraph`]): from the
//! installed bundle it takes the successor closest to the channel head. OLM v1
//! (operator-controller v1.11.0, `catalogmetadata/filter/successors.go` and
//! `resolve/catalog.go`) has no replaces chain: a bundle of the channel is a successor when an
//! entry for it in *any* channel of the package replaces or skips the installed name or has a
//! `skipRange` covering the installed version; of the successors (and the installed bundle
//! itself), non-deprecated bundles first, the highest version wins. Its documented 0.x rules
//! belong to a semver mode that v1.11.0's resolver does not have.

use crate::catalog::channel::{ChannelGraph, EdgeKind};
use crate::catalog::model::{Channel, DeclarativeConfig, SCHEMA_BUNDLE};
use crate::semver_range;
use semver::Version;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// One upgrade edge of a package, with every channel and reason that gives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UpgradeEdge {
    /// The installed bundle.
    pub from: String,
    /// The bundle it upgrades to.
    pub to: String,
    /// `channel: kind` for each channel entry that makes the edge, sorted.
    pub via: Vec<String>,
    /// Whether OLM v0 has this edge (in some channel's graph); false for edges only OLM v1
    /// takes (a `skipRange` covering a bundle of another channel).
    pub v0: bool,
}

/// Every upgrade edge of `package` between two bundles the catalog holds: each channel's graph
/// edges (OLM v0's, which OLM v1 takes too) and the `skipRange` edges OLM v1 adds from bundles
/// of other channels. Sorted by from, to.
pub fn package_edges(cfg: &DeclarativeConfig, package: &str) -> Vec<UpgradeEdge> {
    let versions = versions_of(cfg, package);
    let mut edges: BTreeMap<(String, String), (BTreeSet<String>, bool)> = BTreeMap::new();
    for c in cfg.channels.iter().filter(|c| c.package == package) {
        let graph = ChannelGraph::new(c, |n| versions.get(n).cloned());
        for e in graph.edges() {
            if e.kind == EdgeKind::Substitutes || !versions.contains_key(&e.from) {
                continue;
            }
            let slot = edges.entry((e.from.clone(), e.to.clone())).or_default();
            slot.0.insert(format!("{}: {}", c.name, e.kind));
            slot.1 = true;
        }
        // OLM v1: a skipRange covers any bundle of the package, in this channel or not.
        for entry in c.entries.iter().flatten() {
            let Some(range) = (!entry.skip_range.is_empty())
                .then(|| semver_range::parse(&entry.skip_range).ok())
                .flatten()
            else {
                continue;
            };
            for (name, v) in &versions {
                if *name != entry.name && !graph.contains(name) && range.matches(v) {
                    let slot = edges.entry((name.clone(), entry.name.clone())).or_default();
                    slot.0
                        .insert(format!("{}: skipRange (OLM v1 only)", c.name));
                }
            }
        }
    }
    edges
        .into_iter()
        .map(|((from, to), (via, v0))| UpgradeEdge {
            from,
            to,
            via: via.into_iter().collect(),
            v0,
        })
        .collect()
}

/// Bundle name → semantic version, for one package's bundles.
pub fn versions_of(cfg: &DeclarativeConfig, package: &str) -> HashMap<String, Version> {
    cfg.bundles
        .iter()
        .filter(|b| b.package == package)
        .filter_map(|b| b.version().map(|v| (b.name.clone(), v)))
        .collect()
}

/// What each OLM picks for one installed bundle in one channel.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UpgradeChoice {
    /// The channel subscribed to.
    pub channel: String,
    /// The installed bundle.
    pub installed: String,
    /// Its version.
    pub version: String,
    /// OLM v0's next bundle (`None`: no upgrade).
    pub v0: Option<String>,
    /// OLM v1's next bundle (`None`: no upgrade, it stays).
    pub v1: Option<String>,
}

impl UpgradeChoice {
    /// Whether the two OLMs choose differently.
    pub fn differs(&self) -> bool {
        self.v0 != self.v1
    }
}

/// OLM v0's choice in `channel` from `installed`: of the entries with an edge from it, the one
/// closest to the head (the fewest upgrade steps from it to the head).
fn v0_next(
    graph: &ChannelGraph,
    head: Option<&str>,
    installed: &str,
    v: Option<&Version>,
) -> Option<String> {
    let succ = graph.successors(installed, v);
    if succ.is_empty() {
        return None;
    }
    let Some(head) = head else {
        return succ.first().map(|s| s.to_string());
    };
    // Distance to the head over edges, by breadth-first search from each candidate.
    let dist = |from: &str| -> usize {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut frontier = vec![from];
        for d in 0..=graph.names().count() {
            if frontier.contains(&head) {
                return d;
            }
            let mut next = Vec::new();
            for n in frontier {
                if seen.insert(n) {
                    next.extend(graph.successors(n, graph.version(n)));
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        usize::MAX
    };
    succ.iter()
        .min_by_key(|s| (dist(s), s.to_string()))
        .map(|s| s.to_string())
}

/// Every channel of `package`: for each bundle of the channel, what OLM v0 and OLM v1 upgrade it
/// to.
pub fn choices(cfg: &DeclarativeConfig, package: &str) -> Vec<UpgradeChoice> {
    let versions = versions_of(cfg, package);
    let channels: Vec<&Channel> = cfg
        .channels
        .iter()
        .filter(|c| c.package == package)
        .collect();
    let deprecated: HashSet<&str> = cfg
        .deprecations
        .iter()
        .filter(|d| d.package == package)
        .flat_map(|d| d.entries.iter())
        .filter(|e| e.reference.schema == SCHEMA_BUNDLE)
        .map(|e| e.reference.name.as_str())
        .collect();
    let mut out = Vec::new();
    for c in &channels {
        let graph = ChannelGraph::new(c, |n| versions.get(n).cloned());
        let head = graph.head().ok();
        for installed in graph.names() {
            let v = versions.get(installed);
            out.push(UpgradeChoice {
                channel: c.name.clone(),
                installed: installed.to_string(),
                version: v.map(ToString::to_string).unwrap_or_default(),
                v0: v0_next(&graph, head, installed, v),
                v1: v1_next(&channels, c, &versions, &deprecated, installed, v),
            });
        }
    }
    out
}

/// OLM v1's choice when tracking `channel`: bundles of the channel that are successors through
/// any channel of the package, or the installed one; non-deprecated first, then the highest
/// version. `None` when that is the installed bundle itself.
pub fn v1_next(
    channels: &[&Channel],
    channel: &Channel,
    versions: &HashMap<String, Version>,
    deprecated: &HashSet<&str>,
    installed: &str,
    v: Option<&Version>,
) -> Option<String> {
    let is_successor = |candidate: &str| {
        channels.iter().any(|ch| {
            ch.entries.iter().flatten().any(|e| {
                e.name == candidate
                    && (e.replaces == installed
                        || e.skips.iter().any(|s| s == installed)
                        || (!e.skip_range.is_empty()
                            && v.is_some_and(|v| {
                                semver_range::parse(&e.skip_range).is_ok_and(|r| r.matches(v))
                            })))
            })
        })
    };
    let mut candidates: Vec<&str> = channel
        .entries
        .iter()
        .flatten()
        .map(|e| e.name.as_str())
        .filter(|n| *n == installed || is_successor(n))
        .collect();
    candidates.sort_by(|a, b| {
        let dep = deprecated.contains(a).cmp(&deprecated.contains(b));
        dep.then_with(|| versions.get(*b).cmp(&versions.get(*a)))
    });
    candidates
        .first()
        .filter(|n| **n != installed)
        .map(|n| n.to_string())
}
