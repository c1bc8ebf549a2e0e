//! One channel's upgrade graph: the graph warnings beyond opm (unreachable entries, a head that
//! is not the highest version, unknown replaces and skips targets). opm's replaces-chain
//! validation (head, cycle, stranded entries, skips, skipRange) is the model check's
//! ([`super::opm_model`]).

use super::*;
use crate::catalog::channel::ChannelGraph;

/// One channel's graph ([`ChannelGraph`]) with what the checks report on.
struct Graph<'c> {
    package: &'c Package,
    channel: &'c Channel,
    entries: &'c [ChannelEntry],
    graph: ChannelGraph<'c>,
}

/// The warnings beyond opm of one channel. Returns the head's name when there is exactly one
/// and the replaces chain from it does not loop.
pub(super) fn check<'c>(
    p: &'c Package,
    c: &'c Channel,
    bundles: &Bundles,
    in_channels: &Members,
    out: &mut Vec<Diagnostic>,
) -> Option<&'c str> {
    let es = entries(c);
    if es.is_empty() {
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
    let head = graph.head()?;
    let stranded = graph.stranded(head)?;
    // Beyond opm: reachability and the head's version.
    graph.unreachable(head, &stranded, out);
    graph.head_not_highest(head, out);
    Some(head)
}

/// Entry-level warnings: unknown skips and replaces targets.
fn entry_checks(
    p: &Package,
    c: &Channel,
    bundles: &Bundles,
    in_channels: &Members,
    out: &mut Vec<Diagnostic>,
) {
    let known_in_package = in_channels.get(p.name.as_str());
    for e in entries(c) {
        for s in &e.skips {
            if !s.is_empty()
                && !known_in_package.is_some_and(|k| k.contains(s.as_str()))
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
    /// The head: the one entry no replaces or skips points at (`None` when there are none or
    /// several: the model check reports it).
    fn head(&self) -> Option<&'c str> {
        match self.graph.heads().as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// Entries neither on the chain nor skipped (opm's stranded bundles, which the model check
    /// reports); `None` when the replaces chain from the head loops.
    fn stranded(&self, head: &str) -> Option<Vec<&'c str>> {
        self.graph.replaces_chain(head).ok()?;
        Some(self.graph.stranded(head))
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
