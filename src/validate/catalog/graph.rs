//! One channel's upgrade graph: opm's replaces-chain validation (head, cycle, stranded
//! entries, skips, skipRange) and the graph warnings beyond opm (unreachable entries, a head
//! that is not the highest version, unknown replaces and skips targets).

use super::*;

/// One channel's entries with the lookups the graph checks share.
struct Graph<'c> {
    package: &'c Package,
    channel: &'c Channel,
    entries: &'c [ChannelEntry],
    by_name: HashMap<&'c str, &'c ChannelEntry>,
    /// Names some entry skips (opm's v1.58 walk stops at them).
    skipped: HashSet<&'c str>,
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
    let graph = Graph {
        package: p,
        channel: c,
        entries: es,
        by_name: es.iter().map(|e| (e.name.as_str(), e)).collect(),
        skipped: es
            .iter()
            .flat_map(|e| e.skips.iter().map(String::as_str))
            .collect(),
    };
    let head = graph.head(out)?;
    let on_chain = graph.replaces_chain(head, out)?;
    let stranded = graph.stranded(head, &on_chain, out);
    // Beyond opm: reachability and the head's version.
    let versions: HashMap<&str, &semver::Version> = es
        .iter()
        .filter_map(|e| {
            bundles
                .get(&(p.name.as_str(), e.name.as_str()))
                .and_then(|i| i.version.as_ref())
                .map(|v| (e.name.as_str(), v))
        })
        .collect();
    graph.unreachable(head, &versions, &stranded, out);
    graph.head_not_highest(head, &versions, out);
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
        let mut incoming: HashSet<&str> = self.skipped.clone();
        for e in self.entries {
            if !e.replaces.is_empty() {
                incoming.insert(&e.replaces);
            }
        }
        let mut heads: Vec<&str> = self
            .by_name
            .keys()
            .copied()
            .filter(|n| !incoming.contains(n))
            .collect();
        heads.sort_unstable();
        match heads.as_slice() {
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

    /// The names on the replaces chain from the head (opm v1.58: the walk stops at a skipped
    /// target); `None`, reported, when the chain loops.
    fn replaces_chain(&self, head: &'c str, out: &mut Vec<Diagnostic>) -> Option<HashSet<&'c str>> {
        let (c, p) = (self.channel, self.package);
        let mut chain: Vec<&str> = vec![head];
        let mut on_chain: HashSet<&str> = HashSet::from([head]);
        let mut cur = self.by_name.get(head).copied();
        while let Some(e) = cur {
            let next = e.replaces.as_str();
            if next.is_empty() {
                break;
            }
            if on_chain.contains(next) {
                let start = chain.iter().position(|n| *n == next).unwrap_or(0);
                let mut path: Vec<&str> =
                    chain.get(start..).map(<[&str]>::to_vec).unwrap_or_default();
                path.push(next);
                out.push(at(
                    Rule::CatalogReplacesCycle,
                    &e.origin,
                    format!(
                        "invalid channel {:?} of package {:?}: detected cycle in replaces chain of upgrade graph: {}: break the loop",
                        c.name,
                        p.name,
                        path.join(" -> ")
                    ),
                ));
                return None;
            }
            chain.push(next);
            on_chain.insert(next);
            if self.skipped.contains(next) {
                break;
            }
            cur = self.by_name.get(next).copied();
        }
        Some(on_chain)
    }

    /// Entries neither on the chain nor skipped (opm's stranded bundles), reported and returned.
    fn stranded(
        &self,
        head: &str,
        on_chain: &HashSet<&str>,
        out: &mut Vec<Diagnostic>,
    ) -> Vec<&'c ChannelEntry> {
        let (c, p) = (self.channel, self.package);
        let mut stranded: Vec<&ChannelEntry> = self
            .entries
            .iter()
            .filter(|e| {
                !on_chain.contains(e.name.as_str()) && !self.skipped.contains(e.name.as_str())
            })
            .collect();
        stranded.sort_by(|a, b| a.name.cmp(&b.name));
        stranded.dedup_by(|a, b| a.name == b.name);
        if !stranded.is_empty() {
            let names: Vec<&str> = stranded.iter().map(|e| e.name.as_str()).collect();
            for e in &stranded {
                out.push(at(
                    Rule::CatalogStranded,
                    &e.origin,
                    format!(
                        "invalid channel {:?} of package {:?}: channel contains one or more stranded bundles: {}: entry {:?} is neither on the replaces chain from head {head:?} nor skipped; make a later entry replace or skip it",
                        c.name,
                        p.name,
                        names.join(", "),
                        e.name
                    ),
                ));
            }
        }
        stranded
    }

    /// Beyond opm: entries with no upgrade path to the head over replaces, skips and skipRange
    /// (stranded ones are already reported).
    fn unreachable(
        &self,
        head: &'c str,
        versions: &HashMap<&str, &semver::Version>,
        stranded: &[&ChannelEntry],
        out: &mut Vec<Diagnostic>,
    ) {
        let version_of = |n: &str| versions.get(n).copied();
        let mut reached: HashSet<&str> = HashSet::from([head]);
        let mut queue = vec![head];
        while let Some(n) = queue.pop() {
            let Some(e) = self.by_name.get(n) else {
                continue;
            };
            let mut next: Vec<&str> = Vec::new();
            if !e.replaces.is_empty() {
                next.push(&e.replaces);
            }
            next.extend(e.skips.iter().map(String::as_str));
            if !e.skip_range.is_empty()
                && let Ok(range) = semver_range::parse(&e.skip_range)
            {
                for other in self.entries {
                    if version_of(&other.name).is_some_and(|v| range.matches(v)) {
                        next.push(&other.name);
                    }
                }
            }
            for m in next {
                if self.by_name.contains_key(m) && reached.insert(m) {
                    queue.push(m);
                }
            }
        }
        for e in self.entries {
            if !reached.contains(e.name.as_str()) && !stranded.iter().any(|s| s.name == e.name) {
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
    fn head_not_highest(
        &self,
        head: &str,
        versions: &HashMap<&str, &semver::Version>,
        out: &mut Vec<Diagnostic>,
    ) {
        let (c, p) = (self.channel, self.package);
        let version_of = |n: &str| versions.get(n).copied();
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
