//! One channel's upgrade graph: opm's replaces-chain validation (head, cycle, stranded
//! entries, skips, skipRange) and the graph warnings beyond opm (unreachable entries, a head
//! that is not the highest version, unknown replaces and skips targets).

use super::*;
use crate::catalog::channel::ChannelGraph;

/// One channel's graph ([`ChannelGraph`]) with what the checks report on.
struct Graph<'c> {
    package: &'c Package,
    channel: &'c Channel,
    entries: &'c [ChannelEntry],
    graph: ChannelGraph<'c>,
}

/// opm's replaces-chain validation of one channel, plus entry checks and the warnings beyond
/// opm. Returns the head's name when there is exactly one.
pub(super) fn check<'c>(
    p: &'c Package,
    c: &'c Channel,
    bundles: &Bundles,
    in_channels: &Members,
    out: &mut Vec<Diagnostic>,
) -> Option<&'c str> {
    let es = entries(c);
    if es.is_empty() {
        out.push(at(
            Rule::CatalogChannelEmpty,
            &c.origin,
            format!(
                "invalid channel {:?} of package {:?}: channel must contain at least one bundle: add an entry or remove the channel",
                c.name, p.name
            ),
        ));
        return None;
    }
    entry_checks(p, c, bundles, in_channels, out);
    let version_of = |n: &str| {
        bundles
            .get(&(p.name.as_str(), n))
            .and_then(|i| i.version.clone())
    };
    let graph = Graph {
        package: p,
        channel: c,
        entries: es,
        graph: ChannelGraph::from_entries(es, version_of),
    };
    let head = graph.head(out)?;
    graph.replaces_chain(head, out)?;
    let stranded = graph.stranded(head, out);
    // Beyond opm: reachability and the head's version.
    graph.unreachable(head, &stranded, out);
    graph.head_not_highest(head, out);
    Some(head)
}

/// Entry-level checks: empty or unknown skips, skipRange syntax, unknown replaces targets.
fn entry_checks(
    p: &Package,
    c: &Channel,
    bundles: &Bundles,
    in_channels: &Members,
    out: &mut Vec<Diagnostic>,
) {
    let known_in_package = in_channels.get(p.name.as_str());
    for e in entries(c) {
        for (i, s) in e.skips.iter().enumerate() {
            if s.is_empty() {
                out.push(at(
                    Rule::CatalogSkipEmpty,
                    &e.origin,
                    format!(
                        "invalid bundle {:?} in channel {:?}: skip[{i}] is empty: remove it",
                        e.name, c.name
                    ),
                ));
            } else if !known_in_package.is_some_and(|k| k.contains(s.as_str()))
                && !bundles.contains_key(&(p.name.as_str(), s.as_str()))
            {
                out.push(at(
                    Rule::CatalogSkipsUnknown,
                    &e.origin,
                    format!(
                        "entry {:?} of channel {:?} skips {s:?}, which is no bundle of package {:?}: check the name",
                        e.name, c.name, p.name
                    ),
                ));
            }
        }
        if !e.skip_range.is_empty()
            && let Err(err) = semver_range::parse(&e.skip_range)
        {
            out.push(at(
                Rule::CatalogSkipRange,
                &e.origin,
                format!(
                    "invalid bundle {:?} in channel {:?}: invalid skipRange {:?}: {err}",
                    e.name, c.name, e.skip_range
                ),
            ));
        }
        if !e.replaces.is_empty()
            && !known_in_package.is_some_and(|k| k.contains(e.replaces.as_str()))
        {
            out.push(at(
                Rule::CatalogReplacesUnknown,
                &e.origin,
                format!(
                    "entry {:?} of channel {:?} replaces {:?}, which is in no channel of package {:?}: users of it get no upgrade; check the name",
                    e.name, c.name, e.replaces, p.name
                ),
            ));
        }
    }
}

impl<'c> Graph<'c> {
    /// The head: the one entry no replaces or skips points at (`None`, reported, when there
    /// are none or several).
    fn head(&self, out: &mut Vec<Diagnostic>) -> Option<&'c str> {
        let (c, p) = (self.channel, self.package);
        match self.graph.heads().as_slice() {
            [] => {
                out.push(at(
                    Rule::CatalogChannelHead,
                    &c.origin,
                    format!(
                        "invalid channel {:?} of package {:?}: no channel head found in graph: every entry is replaced or skipped, so the graph loops; break the loop",
                        c.name, p.name
                    ),
                ));
                None
            }
            [one] => Some(*one),
            many => {
                out.push(at(
                    Rule::CatalogChannelHead,
                    &c.origin,
                    format!(
                        "invalid channel {:?} of package {:?}: multiple channel heads found in graph: {}: make the newest replace or skip the others",
                        c.name,
                        p.name,
                        many.join(", ")
                    ),
                ));
                None
            }
        }
    }

    /// The replaces chain from the head (opm v1.58: the walk stops at a skipped target);
    /// `None`, reported, when the chain loops.
    fn replaces_chain(&self, head: &'c str, out: &mut Vec<Diagnostic>) -> Option<()> {
        let (c, p) = (self.channel, self.package);
        match self.graph.replaces_chain(head) {
            Ok(_) => Some(()),
            Err(path) => {
                // The entry whose `replaces` closes the loop.
                let closing = path
                    .len()
                    .checked_sub(2)
                    .and_then(|i| path.get(i))
                    .and_then(|n| self.graph.entry(n));
                let origin = closing.map(|e| &e.origin).unwrap_or(&c.origin);
                out.push(at(
                    Rule::CatalogReplacesCycle,
                    origin,
                    format!(
                        "invalid channel {:?} of package {:?}: detected cycle in replaces chain of upgrade graph: {}: break the loop",
                        c.name,
                        p.name,
                        path.join(" -> ")
                    ),
                ));
                None
            }
        }
    }

    /// Entries neither on the chain nor skipped (opm's stranded bundles), reported and returned.
    fn stranded(&self, head: &str, out: &mut Vec<Diagnostic>) -> Vec<&'c str> {
        let (c, p) = (self.channel, self.package);
        let stranded = self.graph.stranded(head);
        if !stranded.is_empty() {
            for name in &stranded {
                // The first entry of the name, where it was first written.
                let Some(e) = self.entries.iter().find(|e| e.name == *name) else {
                    continue;
                };
                out.push(at(
                    Rule::CatalogStranded,
                    &e.origin,
                    format!(
                        "invalid channel {:?} of package {:?}: channel contains one or more stranded bundles: {}: entry {:?} is neither on the replaces chain from head {head:?} nor skipped; make a later entry replace or skip it",
                        c.name,
                        p.name,
                        stranded.join(", "),
                        e.name
                    ),
                ));
            }
        }
        stranded
    }

    /// Beyond opm: entries with no upgrade path to the head over replaces, skips and skipRange
    /// (stranded ones are already reported).
    fn unreachable(&self, head: &'c str, stranded: &[&str], out: &mut Vec<Diagnostic>) {
        let reached = self.graph.reaching(head);
        for e in self.entries {
            if !reached.contains(e.name.as_str()) && !stranded.contains(&e.name.as_str()) {
                out.push(at(
                    Rule::CatalogUnreachable,
                    &e.origin,
                    format!(
                        "entry {:?} of channel {:?} has no upgrade path to the head {head:?}: add it to a later entry's replaces, skips or skipRange",
                        e.name, self.channel.name
                    ),
                ));
            }
        }
    }

    /// Beyond opm: the head should be the highest version.
    fn head_not_highest(&self, head: &str, out: &mut Vec<Diagnostic>) {
        let (c, p) = (self.channel, self.package);
        let version_of = |n: &str| self.graph.version(n);
        if let Some(hv) = version_of(head)
            && let Some((top, tv)) = self
                .entries
                .iter()
                .filter_map(|e| version_of(&e.name).map(|v| (e, v)))
                .max_by(|a, b| a.1.cmp(b.1))
            && tv > hv
        {
            out.push(at(
                Rule::CatalogHeadNotHighest,
                &c.origin,
                format!(
                    "channel {:?} of package {:?} leads to {head:?} ({hv}) but also holds {:?} ({tv}): users never get the higher version; make it the head",
                    c.name, p.name, top.name
                ),
            ));
        }
    }
}
