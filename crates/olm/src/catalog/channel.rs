//! One channel's upgrade graph as OLM v0 reads it: the head, the edges, the replaces chain, what
//! can reach what, and what is stranded.
//!
//! Why one type: the head, the chain and reachability decide whether a catalog is valid (opm's
//! `model.Validate`), which bundles a filter must keep so a channel stays valid, and which
//! installed versions lose their upgrade path when a catalog changes (`catalog diff`). Computing
//! them in each of those places gave answers that drift apart; here they are computed once, with
//! opm's and OLM v0's semantics:
//!
//! - an **edge** leads from an older bundle to a newer one that names it: `replaces`, `skips`, or
//!   a `skipRange` covering the older bundle's version. OLM v0 upgrades an installed bundle to any
//!   entry with an edge from it, one step at a time, so an installed bundle has an upgrade path to
//!   the head exactly when the head is reachable from it over these edges.
//! - the **head** is, as opm's `Channel.Head` decides it, the one entry no other entry replaces
//!   or skips (`skipRange` does not count); none means a loop, several are an error.
//! - the **replaces chain** is the walk from the head over `replaces` (opm v1.58 and later stop
//!   at an entry some entry skips); **stranded** entries are neither on it nor skipped.
//! - a **substitute** (`olm.substitutesFor`, opm 1.62 and later) is its base's successor: an
//!   edge leads from the base to it, so a filter or diff treats it as an upgrade of the base.

use crate::catalog::model::{Bundle, Channel, ChannelEntry};
use crate::semver_range::{self, Range};
use semver::Version;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// The `olm.substitutesFor` bundle property: its value names the bundle this one substitutes.
pub const SUBSTITUTES_FOR: &str = "olm.substitutesFor";

/// Why an edge exists: what the newer entry says about the older one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EdgeKind {
    /// The newer entry's `replaces` names the older one.
    Replaces,
    /// The newer entry's `skips` names the older one.
    Skips,
    /// The newer entry's `skipRange` covers the older one's version.
    SkipRange,
    /// The newer bundle is an `olm.substitutesFor` substitute of the older one.
    Substitutes,
}

impl std::fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EdgeKind::Replaces => "replaces",
            EdgeKind::Skips => "skips",
            EdgeKind::SkipRange => "skipRange",
            EdgeKind::Substitutes => "substitutesFor",
        })
    }
}

/// One upgrade edge: installed `from` may upgrade to `to`. `from` may name a bundle the
/// channel does not hold (a `replaces` or `skips` pointing outside it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Edge {
    /// The older bundle.
    pub from: String,
    /// The newer entry that names it.
    pub to: String,
    /// Why.
    pub kind: EdgeKind,
}

/// How far the replaces chain is walked: opm changed it in v1.58.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainWalk {
    /// opm v1.58 and later (`catalog validate`, filter, diff): the walk stops after an entry some
    /// entry skips, so what only a skipped entry replaces is stranded unless skipped too.
    StopAtSkipped,
    /// opm before v1.58, as its sqlite conversion (`model.Validate` in v1.26) still reads legacy
    /// indexes: every `replaces` is followed to the end.
    ThroughSkipped,
}

/// What is wrong with a channel's head, as opm reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// The channel has no entry.
    #[error("channel has no entries")]
    Empty,
    /// Every entry is replaced or skipped: the graph loops.
    #[error("no channel head found in graph")]
    NoHead,
    /// Several entries are neither replaced nor skipped (sorted names).
    #[error("multiple channel heads found in graph: {}", .0.join(", "))]
    Multiple(Vec<String>),
}

/// One channel's graph. Entries are kept once each, in the channel's order; a repeated name
/// keeps its first place and its last entry's edges.
#[derive(Debug, Clone)]
pub struct ChannelGraph<'c> {
    /// The channel's entries as listed (repeats included), for [`ChannelGraph::listed_edges`].
    listed: &'c [ChannelEntry],
    entries: Vec<&'c ChannelEntry>,
    index: HashMap<&'c str, usize>,
    versions: Vec<Option<Version>>,
    ranges: Vec<Option<Range>>,
    /// Bundle name → the substitutes (names of entries) that succeed it.
    substitutes: HashMap<String, Vec<usize>>,
    /// Names some entry replaces or skips.
    named: HashSet<&'c str>,
    skipped: HashSet<&'c str>,
}

impl<'c> ChannelGraph<'c> {
    /// The graph of `channel`, with each entry's version from `version_of` (entries without a
    /// known version are reached only by `replaces` and `skips`).
    pub fn new(channel: &'c Channel, version_of: impl Fn(&str) -> Option<Version>) -> Self {
        Self::from_entries(channel.entries.as_deref().unwrap_or(&[]), version_of)
    }

    /// The graph of a channel's entries.
    pub fn from_entries(
        entries: &'c [ChannelEntry],
        version_of: impl Fn(&str) -> Option<Version>,
    ) -> Self {
        let mut kept: Vec<&ChannelEntry> = Vec::with_capacity(entries.len());
        let mut index = HashMap::with_capacity(entries.len());
        for e in entries {
            match index.get(e.name.as_str()) {
                // A repeated name: the later entry's edges count, as in opm's and
                // catalog-filter's maps keyed by name; the name keeps its first place.
                Some(&i) => kept[i] = e,
                None => {
                    index.insert(e.name.as_str(), kept.len());
                    kept.push(e);
                }
            }
        }
        let versions = kept.iter().map(|e| version_of(&e.name)).collect();
        let ranges = kept
            .iter()
            .map(|e| {
                (!e.skip_range.is_empty())
                    .then(|| semver_range::parse(&e.skip_range).ok())
                    .flatten()
            })
            .collect();
        let mut named = HashSet::new();
        let mut skipped = HashSet::new();
        for e in entries {
            if !e.replaces.is_empty() {
                named.insert(e.replaces.as_str());
            }
            for s in &e.skips {
                named.insert(s.as_str());
                skipped.insert(s.as_str());
            }
        }
        ChannelGraph {
            listed: entries,
            entries: kept,
            index,
            versions,
            ranges,
            substitutes: HashMap::new(),
            named,
            skipped,
        }
    }

    /// Adds the `olm.substitutesFor` edges of `bundles` (those the channel holds): each
    /// substitute becomes a successor of its base.
    pub fn with_substitutes<'b>(mut self, bundles: impl IntoIterator<Item = &'b Bundle>) -> Self {
        for b in bundles {
            let Some(i) = self.index.get(b.name.as_str()).copied() else {
                continue;
            };
            if let Some(base) = substitutes_for(b) {
                self.substitutes.entry(base).or_default().push(i);
            }
        }
        self
    }

    /// Entry names in channel order (each once).
    pub fn names(&self) -> impl Iterator<Item = &'c str> + '_ {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// Whether the channel holds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The entry called `name`.
    pub fn entry(&self, name: &str) -> Option<&'c ChannelEntry> {
        self.index.get(name).map(|&i| self.entries[i])
    }

    /// The version of entry `name`, when known.
    pub fn version(&self, name: &str) -> Option<&Version> {
        self.index
            .get(name)
            .and_then(|&i| self.versions[i].as_ref())
    }

    /// Entries no other entry replaces or skips, sorted by name (opm's head candidates).
    pub fn heads(&self) -> Vec<&'c str> {
        let mut heads: Vec<&str> = self.names().filter(|n| !self.named.contains(n)).collect();
        heads.sort_unstable();
        heads
    }

    /// The head when a substitute counts as its base's successor: the head candidates
    /// ([`ChannelGraph::heads`]) without the bases of a substitute the channel holds (added with
    /// [`ChannelGraph::with_substitutes`]). A channel that lists a substitute next to its base
    /// without an edge between them has both as opm's head candidates; the substitute is the
    /// one to install.
    pub fn head_with_substitutes(&self) -> Result<&'c str, HeadError> {
        if self.entries.is_empty() {
            return Err(HeadError::Empty);
        }
        let heads: Vec<&str> = self
            .heads()
            .into_iter()
            .filter(|h| self.substitutes.get(*h).is_none_or(|s| s.is_empty()))
            .collect();
        match heads.as_slice() {
            [] => Err(HeadError::NoHead),
            [one] => Ok(*one),
            many => Err(HeadError::Multiple(
                many.iter().map(|s| s.to_string()).collect(),
            )),
        }
    }

    /// The head candidates that are the base of a substitute the channel holds (see
    /// [`ChannelGraph::head_with_substitutes`]), sorted.
    pub fn superseded_heads(&self) -> Vec<&'c str> {
        self.heads()
            .into_iter()
            .filter(|h| self.substitutes.get(*h).is_some_and(|s| !s.is_empty()))
            .collect()
    }

    /// The head as opm decides it.
    pub fn head(&self) -> Result<&'c str, HeadError> {
        if self.entries.is_empty() {
            return Err(HeadError::Empty);
        }
        match self.heads().as_slice() {
            [] => Err(HeadError::NoHead),
            [one] => Ok(*one),
            many => Err(HeadError::Multiple(
                many.iter().map(|s| s.to_string()).collect(),
            )),
        }
    }

    /// Whether the `replaces`/`skips` edges (names outside the channel included) form no loop:
    /// a topological sort from the entries nothing names reaches every name.
    pub fn is_acyclic(&self) -> bool {
        let mut indegree: HashMap<&str, usize> = HashMap::new();
        let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
        for e in &self.entries {
            indegree.entry(e.name.as_str()).or_insert(0);
            let mut targets: Vec<&str> = e.skips.iter().map(String::as_str).collect();
            if !e.replaces.is_empty() {
                targets.push(&e.replaces);
            }
            targets.sort_unstable();
            targets.dedup();
            for t in targets {
                *indegree.entry(t).or_insert(0) += 1;
                out.entry(e.name.as_str()).or_default().push(t);
            }
        }
        let mut queue: Vec<&str> = indegree
            .iter()
            .filter(|(_, d)| **d == 0)
            .map(|(n, _)| *n)
            .collect();
        let mut done = 0;
        while let Some(n) = queue.pop() {
            done += 1;
            for t in out.get(n).map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(d) = indegree.get_mut(t) {
                    *d -= 1;
                    if *d == 0 {
                        queue.push(*t);
                    }
                }
            }
        }
        done == indegree.len()
    }

    /// Whether some entry skips `name`.
    pub fn is_skipped(&self, name: &str) -> bool {
        self.skipped.contains(name)
    }

    /// The replaces chain from `head`: `head` first, then what each replaces (names outside the
    /// channel included, where the walk ends), stopping after an entry some entry skips (opm
    /// v1.58). `Err` holds the loop (its names, the repeated one last) when the chain loops.
    pub fn replaces_chain(&self, head: &str) -> Result<Vec<String>, Vec<String>> {
        self.replaces_chain_as(head, ChainWalk::StopAtSkipped)
    }

    /// [`ChannelGraph::replaces_chain`] walked as `walk` says: opm v1.58 and later stop after a
    /// skipped entry, opm before v1.58 (whose sqlite conversion the legacy formats reproduce)
    /// walk every `replaces` to the end.
    pub fn replaces_chain_as(
        &self,
        head: &str,
        walk: ChainWalk,
    ) -> Result<Vec<String>, Vec<String>> {
        let mut chain = vec![head.to_string()];
        let mut seen: HashSet<&str> = HashSet::from([head]);
        let mut cur = self.entry(head);
        while let Some(e) = cur {
            let next = e.replaces.as_str();
            if next.is_empty() {
                break;
            }
            if seen.contains(next) {
                let start = chain.iter().position(|n| n == next).unwrap_or(0);
                let mut path = chain.split_off(start);
                path.push(next.to_string());
                return Err(path);
            }
            chain.push(next.to_string());
            seen.insert(next);
            if walk == ChainWalk::StopAtSkipped && self.skipped.contains(next) {
                break;
            }
            cur = self.entry(next);
        }
        Ok(chain)
    }

    /// Entries neither on the replaces chain from `head` nor skipped (opm's stranded bundles),
    /// sorted. A looping chain strands nothing more than what it already holds.
    pub fn stranded(&self, head: &str) -> Vec<&'c str> {
        self.stranded_as(head, ChainWalk::StopAtSkipped)
    }

    /// [`ChannelGraph::stranded`] with the replaces chain walked as `walk` says.
    pub fn stranded_as(&self, head: &str, walk: ChainWalk) -> Vec<&'c str> {
        let chain: HashSet<String> = match self.replaces_chain_as(head, walk) {
            Ok(c) | Err(c) => c.into_iter().collect(),
        };
        let mut out: Vec<&str> = self
            .names()
            .filter(|n| !chain.contains(*n) && !self.skipped.contains(n))
            .collect();
        out.sort_unstable();
        out
    }

    /// Every edge into an entry of the channel, sorted. `skipRange` edges lead from every entry
    /// whose version the range covers.
    pub fn edges(&self) -> Vec<Edge> {
        let mut out = BTreeSet::new();
        for (i, e) in self.entries.iter().enumerate() {
            let others = self.entries.iter().map(|o| o.name.as_str());
            self.edges_into(e, self.ranges[i].as_ref(), others, &mut |x| {
                out.insert(x);
            });
        }
        for (base, subs) in &self.substitutes {
            for &s in subs {
                out.insert(edge(base, &self.entries[s].name, EdgeKind::Substitutes));
            }
        }
        out.into_iter().collect()
    }

    /// The edges as the channel lists them, each with the entry it leads to: entry by entry in
    /// channel order (a repeated name each time it is listed), its `replaces`, then its `skips`,
    /// then a `skipRange` edge from each listed entry the range covers. What a drawing shows,
    /// arrow for arrow.
    pub fn listed_edges(&self) -> Vec<(&'c ChannelEntry, Edge)> {
        let mut out = Vec::new();
        for e in self.listed {
            let range = (!e.skip_range.is_empty())
                .then(|| semver_range::parse(&e.skip_range).ok())
                .flatten();
            let others = self.listed.iter().map(|o| o.name.as_str());
            self.edges_into(e, range.as_ref(), others, &mut |x| out.push((e, x)));
        }
        out
    }

    /// The edges into `e`: its `replaces`, its `skips`, and a `skipRange` edge from each of
    /// `others` (but `e` itself) whose version `range` covers. The one place edges are made.
    fn edges_into<'n>(
        &self,
        e: &ChannelEntry,
        range: Option<&Range>,
        others: impl Iterator<Item = &'n str>,
        push: &mut impl FnMut(Edge),
    ) {
        let to = &e.name;
        if !e.replaces.is_empty() {
            push(edge(&e.replaces, to, EdgeKind::Replaces));
        }
        for s in &e.skips {
            push(edge(s, to, EdgeKind::Skips));
        }
        if let Some(range) = range {
            for other in others {
                if other != to && self.version(other).is_some_and(|v| range.matches(v)) {
                    push(edge(other, to, EdgeKind::SkipRange));
                }
            }
        }
    }

    /// Entries an installed bundle called `name` with `version` may upgrade to in one step
    /// (the bundle need not be in the channel: a catalog diff asks this for a bundle the new
    /// catalog dropped). Sorted by name.
    pub fn successors(&self, name: &str, version: Option<&Version>) -> Vec<&'c str> {
        let mut out: Vec<&str> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if e.name == name {
                continue;
            }
            let by_range = version
                .zip(self.ranges[i].as_ref())
                .is_some_and(|(v, r)| r.matches(v));
            if e.replaces == name || e.skips.iter().any(|s| s == name) || by_range {
                out.push(&e.name);
            }
        }
        if let Some(subs) = self.substitutes.get(name) {
            out.extend(subs.iter().map(|&s| self.entries[s].name.as_str()));
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether an installed `name` (with `version`) reaches `target` over upgrade edges, zero
    /// steps counting (a bundle reaches itself).
    pub fn reaches(&self, name: &str, version: Option<&Version>, target: &str) -> bool {
        if name == target {
            return true;
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let mut queue: VecDeque<&str> = self.successors(name, version).into();
        while let Some(n) = queue.pop_front() {
            if n == target {
                return true;
            }
            if seen.insert(n) {
                queue.extend(self.successors(n, self.version(n)));
            }
        }
        false
    }

    /// Entries from which `target` is reachable (target included), over upgrade edges walked
    /// backwards: the installed versions that can still upgrade to it.
    pub fn reaching(&self, target: &str) -> HashSet<&'c str> {
        let mut reached: HashSet<&str> = HashSet::new();
        let Some(&t) = self.index.get(target) else {
            return reached;
        };
        let base_of: HashMap<usize, Vec<&str>> = self
            .substitutes
            .iter()
            .flat_map(|(b, subs)| subs.iter().map(move |&s| (s, b.as_str())))
            .fold(HashMap::new(), |mut m, (s, b)| {
                m.entry(s).or_insert_with(Vec::new).push(b);
                m
            });
        reached.insert(self.entries[t].name.as_str());
        let mut queue = vec![t];
        while let Some(i) = queue.pop() {
            let e = self.entries[i];
            let mut prev: Vec<usize> = Vec::new();
            if let Some(&j) = self.index.get(e.replaces.as_str()) {
                prev.push(j);
            }
            prev.extend(e.skips.iter().filter_map(|s| self.index.get(s.as_str())));
            if let Some(range) = &self.ranges[i] {
                prev.extend(
                    self.versions
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.as_ref().is_some_and(|v| range.matches(v)))
                        .map(|(j, _)| j),
                );
            }
            if let Some(bases) = base_of.get(&i) {
                prev.extend(bases.iter().filter_map(|b| self.index.get(b)));
            }
            for j in prev {
                if reached.insert(self.entries[j].name.as_str()) {
                    queue.push(j);
                }
            }
        }
        reached
    }

    /// Entries with no upgrade path to `head`, sorted.
    pub fn unreachable(&self, head: &str) -> Vec<&'c str> {
        let reached = self.reaching(head);
        let mut out: Vec<&str> = self.names().filter(|n| !reached.contains(n)).collect();
        out.sort_unstable();
        out
    }
}

fn edge(from: &str, to: &str, kind: EdgeKind) -> Edge {
    Edge {
        from: from.to_string(),
        to: to.to_string(),
        kind,
    }
}

/// The bundle `b` substitutes, if any: its `olm.substitutesFor` property (the base bundle's
/// name as a JSON string), else its CSV's `olm.substitutesFor` annotation (the older
/// convention, which rendered catalogs carry in `olm.csv.metadata` or the CSV itself).
pub fn substitutes_for(b: &Bundle) -> Option<String> {
    if let Some(s) = b
        .properties
        .iter()
        .find(|p| p.type_ == SUBSTITUTES_FOR)
        .and_then(|p| serde_json::from_str::<String>(p.value.get()).ok())
        .filter(|s| !s.is_empty())
    {
        return Some(s);
    }
    let annotation = |v: &serde_json::Value, pointer: &str| {
        v.pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if let Some(csv) = &b.csv_json
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(csv)
        && let Some(s) = annotation(&v, "/metadata/annotations/olm.substitutesFor")
    {
        return Some(s);
    }
    b.properties
        .iter()
        .filter(|p| p.type_ == crate::catalog::model::property_type::CSV_METADATA)
        .filter_map(|p| serde_json::from_str::<serde_json::Value>(p.value.get()).ok())
        .find_map(|v| annotation(&v, "/annotations/olm.substitutesFor"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::model::SCHEMA_BUNDLE;

    /// A channel entry: name, replaces, skips and skipRange (the diff tests build theirs too).
    pub(crate) fn e(name: &str, replaces: &str, skips: &[&str], range: &str) -> ChannelEntry {
        ChannelEntry {
            name: name.into(),
            replaces: replaces.into(),
            skips: skips.iter().map(|s| s.to_string()).collect(),
            skip_range: range.into(),
            ..Default::default()
        }
    }

    /// `op.v1.2.3` → 1.2.3.
    fn v(name: &str) -> Option<Version> {
        name.split_once(".v")
            .and_then(|(_, v)| Version::parse(v).ok())
    }

    #[test]
    fn linear_chain_head_and_reachability() {
        let es = vec![
            e("op.v1.0.0", "", &[], ""),
            e("op.v1.1.0", "op.v1.0.0", &[], ""),
            e("op.v1.2.0", "op.v1.1.0", &[], ""),
        ];
        let g = ChannelGraph::from_entries(&es, v);
        assert_eq!(g.head(), Ok("op.v1.2.0"));
        assert_eq!(
            g.replaces_chain("op.v1.2.0").unwrap(),
            vec!["op.v1.2.0", "op.v1.1.0", "op.v1.0.0"]
        );
        assert!(g.stranded("op.v1.2.0").is_empty());
        assert!(g.unreachable("op.v1.2.0").is_empty());
        assert!(g.reaches("op.v1.0.0", v("op.v1.0.0").as_ref(), "op.v1.2.0"));
        assert!(!g.reaches("op.v1.2.0", None, "op.v1.0.0"));
        assert_eq!(g.edges().len(), 2);
    }

    #[test]
    fn skips_and_skip_range() {
        let es = vec![
            e("op.v1.0.0", "", &[], ""),
            e("op.v1.1.0", "", &[], ""),
            e("op.v2.0.0", "op.v1.1.0", &["op.v1.0.0"], ""),
            e("op.v3.0.0", "op.v2.0.0", &[], ">=1.0.0 <3.0.0"),
        ];
        let g = ChannelGraph::from_entries(&es, v);
        assert_eq!(g.head(), Ok("op.v3.0.0"));
        // The chain stops after an entry some entry skips? v1.0.0 is skipped, not on chain.
        assert_eq!(
            g.replaces_chain("op.v3.0.0").unwrap(),
            vec!["op.v3.0.0", "op.v2.0.0", "op.v1.1.0"]
        );
        assert!(g.stranded("op.v3.0.0").is_empty());
        let succ = g.successors("op.v1.0.0", v("op.v1.0.0").as_ref());
        assert_eq!(succ, vec!["op.v2.0.0", "op.v3.0.0"]);
        // A bundle no longer in the channel, covered only by the skipRange.
        assert_eq!(
            g.successors("op.v0.9.0", v("op.v0.9.0").as_ref()),
            Vec::<&str>::new()
        );
        assert_eq!(
            g.successors("op.v1.5.0", v("op.v1.5.0").as_ref()),
            vec!["op.v3.0.0"]
        );
        let kinds: Vec<EdgeKind> = g.edges().iter().map(|e| e.kind).collect();
        assert!(kinds.contains(&EdgeKind::SkipRange));
        assert!(kinds.contains(&EdgeKind::Skips));
    }

    #[test]
    fn multiple_heads_and_loops() {
        let es = vec![e("a.v1.0.0", "", &[], ""), e("b.v1.0.0", "", &[], "")];
        let g = ChannelGraph::from_entries(&es, v);
        assert_eq!(
            g.head(),
            Err(HeadError::Multiple(vec![
                "a.v1.0.0".into(),
                "b.v1.0.0".into()
            ]))
        );
        let es = vec![
            e("a.v1.0.0", "b.v1.0.0", &[], ""),
            e("b.v1.0.0", "a.v1.0.0", &[], ""),
        ];
        let g = ChannelGraph::from_entries(&es, v);
        assert_eq!(g.head(), Err(HeadError::NoHead));
        assert!(g.replaces_chain("a.v1.0.0").is_err());
        let empty: Vec<ChannelEntry> = Vec::new();
        assert_eq!(
            ChannelGraph::from_entries(&empty, v).head(),
            Err(HeadError::Empty)
        );
    }

    #[test]
    fn stranded_and_unreachable() {
        let es = vec![
            e("op.v1.0.0", "", &[], ""),
            e("op.v1.1.0", "", &[], ""),
            e("op.v2.0.0", "op.v1.1.0", &[], ""),
            e("op.v0.5.0", "", &[], ""),
            e("op.v3.0.0", "op.v2.0.0", &["op.v0.5.0"], ""),
        ];
        let g = ChannelGraph::from_entries(&es, v);
        // v1.0.0 and v0.5.0: v1.0.0 is a second head.
        assert_eq!(g.heads(), vec!["op.v1.0.0", "op.v3.0.0"]);
        assert_eq!(g.stranded("op.v3.0.0"), vec!["op.v1.0.0"]);
        assert_eq!(g.unreachable("op.v3.0.0"), vec!["op.v1.0.0"]);
    }

    #[test]
    fn substitutes_succeed_their_base() {
        let es = vec![
            e("op.v1.0.0", "", &[], ""),
            e("op.v1.0.1", "", &["op.v1.0.0"], ""),
        ];
        let sub = Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: "op.v1.0.0-sub".into(),
            package: "op".into(),
            image: String::new(),
            properties: vec![
                crate::catalog::model::Property::new(SUBSTITUTES_FOR, "\"op.v1.0.0\"".into())
                    .unwrap(),
            ],
            related_images: vec![],
            objects: vec![],
            csv_json: None,
            origin: Default::default(),
        };
        let mut es2 = es.clone();
        es2.push(e("op.v1.0.0-sub", "", &[], ""));
        let g = ChannelGraph::from_entries(&es2, v).with_substitutes([&sub]);
        assert!(g.successors("op.v1.0.0", None).contains(&"op.v1.0.0-sub"));
        assert!(g.reaching("op.v1.0.0-sub").contains("op.v1.0.0"));
        assert!(g.edges().iter().any(|x| x.kind == EdgeKind::Substitutes));
        assert_eq!(substitutes_for(&sub).as_deref(), Some("op.v1.0.0"));
    }
}
