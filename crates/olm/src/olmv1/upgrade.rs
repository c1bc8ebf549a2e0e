//! Which upgrades a catalog offers, as OLM v0 and OLM v1 read its channels.
//!
//! Why both: the same `replaces`/`skips`/`skipRange` entries lead to different upgrades. OLM
//! v0 (operator-lifecycle-manager's resolver) orders one channel from its head down the
//! `replaces` chain without skipped entries ([`v0_channel_order`]) and takes the first entry
//! that replaces, skips or skipRange-covers the installed bundle. OLM v1
//! (operator-controller v1.11.0, `catalogmetadata/filter/successors.go` and
//! `resolve/catalog.go`) has no replaces chain: a bundle of the channel is a successor when an
//! entry for it in *any* channel of the package replaces or skips the installed name or has a
//! `skipRange` covering the installed version; of the successors (and the installed bundle
//! itself), non-deprecated bundles first, the highest version and release wins. Its documented 0.x rules
//! belong to a semver mode that v1.11.0's resolver does not have.

use crate::catalog::channel::{ChannelGraph, EdgeKind};
use crate::catalog::model::{Channel, ChannelEntry, DeclarativeConfig, SCHEMA_BUNDLE};
use crate::catalog::version_release::{VersionRelease, legacy_version_release};
use crate::semver_range;
use semver::Version;
use std::cmp::Ordering;
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

/// OLM v0's order of a channel (operator-lifecycle-manager's resolver, `sortChannel`): from
/// the one head (an entry no other entry replaces or skips), down the `replaces` chain, leaving
/// out skipped entries. Entries off that chain are not in it at all. No head, a loop, or more
/// than one chain is an error there, and the subscription does not resolve.
pub fn v0_channel_order(channel: &Channel) -> Result<Vec<&ChannelEntry>, String> {
    let entries: Vec<&ChannelEntry> = channel.entries.iter().flatten().collect();
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let lookup: HashMap<&str, &ChannelEntry> =
        entries.iter().map(|e| (e.name.as_str(), *e)).collect();
    let mut replaced_or_skipped: HashSet<&str> = HashSet::new();
    let mut skipped: HashSet<&str> = HashSet::new();
    for e in &entries {
        if lookup.contains_key(e.replaces.as_str()) {
            replaced_or_skipped.insert(e.replaces.as_str());
        }
        for s in &e.skips {
            if lookup.contains_key(s.as_str()) {
                replaced_or_skipped.insert(s.as_str());
                skipped.insert(s.as_str());
            }
        }
    }
    let heads: Vec<&ChannelEntry> = entries
        .iter()
        .copied()
        .filter(|e| !replaced_or_skipped.contains(e.name.as_str()))
        .collect();
    if heads.is_empty() {
        return Err(format!(
            "no channel heads (entries not replaced by another entry) found in channel {:?} of package {:?}",
            channel.name, channel.package
        ));
    }
    let mut chains = Vec::new();
    for head in heads {
        let mut chain = Vec::new();
        let mut visited: HashSet<&str> = HashSet::new();
        let mut current = head;
        loop {
            visited.insert(current.name.as_str());
            if !skipped.contains(current.name.as_str()) {
                chain.push(current);
            }
            let Some(next) = lookup.get(current.replaces.as_str()) else {
                break;
            };
            if visited.contains(next.name.as_str()) {
                return Err(format!(
                    "a cycle exists in the chain of replacement beginning with {:?} in channel {:?} of package {:?}",
                    head.name, channel.name, channel.package
                ));
            }
            current = next;
        }
        chains.push(chain);
    }
    if chains.len() > 1 {
        let named: Vec<String> = chains
            .iter()
            .map(|c| match c.as_slice() {
                [] => "[]".to_string(),
                [one] => one.name.clone(),
                [first, .., last] => format!("{}...{}", first.name, last.name),
            })
            .collect();
        return Err(format!(
            "a unique replacement chain within a channel is required to determine the relative order between channel entries, but {} replacement chains were found in channel {:?} of package {:?}: {}",
            chains.len(),
            channel.name,
            channel.package,
            named.join(", ")
        ));
    }
    Ok(chains.pop().unwrap_or_default())
}

/// OLM v0's choice in `channel` from `installed` (operator-lifecycle-manager's resolver,
/// `getSubscriptionVariables`): the entries of [`v0_channel_order`] that replace or skip the
/// installed name or whose `skipRange` includes its version, head first; the resolver prefers
/// the first. A skipped entry, or one off the replaces chain, is never chosen even when its own
/// edges name the installed bundle; a channel without one chain gives no upgrade.
pub fn v0_next(channel: &Channel, installed: &str, v: Option<&Version>) -> Option<String> {
    let order = v0_channel_order(channel).ok()?;
    order
        .into_iter()
        .find(|e| {
            e.name != installed
                && (e.replaces == installed
                    || e.skips.iter().any(|s| s == installed)
                    || (!e.skip_range.is_empty()
                        && v.is_some_and(|v| {
                            semver_range::parse(&e.skip_range).is_ok_and(|r| r.matches(v))
                        })))
        })
        .map(|e| e.name.clone())
}

/// Every channel of `package`: for each bundle of the channel, what OLM v0 and OLM v1 upgrade it
/// to.
pub fn choices(cfg: &DeclarativeConfig, package: &str) -> Vec<UpgradeChoice> {
    let versions = versions_of(cfg, package);
    let order = v1_order(cfg, package);
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
        for installed in graph.names() {
            let v = versions.get(installed);
            out.push(UpgradeChoice {
                channel: c.name.clone(),
                installed: installed.to_string(),
                version: v.map(ToString::to_string).unwrap_or_default(),
                v0: v0_next(c, installed, v),
                v1: v1_next(&channels, c, &order, &deprecated, installed, v),
            });
        }
    }
    out
}

/// A package's bundles in catalog order, each with the version and release OLM v1 orders it
/// by (operator-controller v1.11.0 `bundleutil.GetVersionAndRelease` with its default
/// feature gates: `BundleReleaseSupport` is off, so the `olm.package` version's build metadata
/// is the release when it parses as one, and an explicit `release` field is not read);
/// `None` when the version does not parse (such bundles order below every other).
pub fn v1_order(cfg: &DeclarativeConfig, package: &str) -> Vec<(String, Option<VersionRelease>)> {
    cfg.bundles
        .iter()
        .filter(|b| b.package == package)
        .map(|b| {
            let vr = legacy_version_release(&b.version_text()).ok();
            (b.name.clone(), vr)
        })
        .collect()
}

/// operator-controller's `ByVersionAndRelease` as a sort key comparison, highest first; a
/// bundle whose version does not parse sorts after every bundle whose version does.
fn v1_cmp(a: Option<&VersionRelease>, b: Option<&VersionRelease>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.compare(a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// OLM v1's choice when tracking `channel` (operator-controller v1.11.0 `resolve/catalog.go`):
/// the package's bundles, in catalog order, that the channel lists and that are successors
/// through any channel of the package (`SuccessorsOf`) or have the installed bundle's exact
/// version and release (`ExactVersionRelease`); stably sorted non-deprecated first, then by
/// version and release, highest first (`ByVersionAndRelease`: build metadata is no order, the
/// release is). `None` when the first is the installed bundle itself.
pub fn v1_next(
    channels: &[&Channel],
    channel: &Channel,
    order: &[(String, Option<VersionRelease>)],
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
    let installed_vr = order
        .iter()
        .find(|(n, _)| n == installed)
        .and_then(|(_, vr)| vr.as_ref());
    let in_channel: HashSet<&str> = channel
        .entries
        .iter()
        .flatten()
        .map(|e| e.name.as_str())
        .collect();
    let mut candidates: Vec<&(String, Option<VersionRelease>)> = order
        .iter()
        .filter(|(n, vr)| {
            in_channel.contains(n.as_str())
                && (n == installed
                    || is_successor(n)
                    || installed_vr
                        .zip(vr.as_ref())
                        .is_some_and(|(i, b)| i.compare(b) == Ordering::Equal))
        })
        .collect();
    candidates.sort_by(|(a, va), (b, vb)| {
        let dep = deprecated
            .contains(a.as_str())
            .cmp(&deprecated.contains(b.as_str()));
        dep.then_with(|| v1_cmp(va.as_ref(), vb.as_ref()))
    });
    candidates
        .first()
        .filter(|(n, _)| n != installed)
        .map(|(n, _)| n.clone())
}

#[cfg(test)]
mod tests {
    use super::v0_channel_order;
    use crate::catalog::model::SCHEMA_CHANNEL;
    use crate::catalog::model::{Channel, ChannelEntry};

    fn channel(entries: &[(&str, &str, &[&str])]) -> Channel {
        Channel {
            name: "channel".into(),
            package: "package".into(),
            entries: Some(
                entries
                    .iter()
                    .map(|(name, replaces, skips)| ChannelEntry {
                        name: (*name).into(),
                        replaces: (*replaces).into(),
                        skips: skips.iter().map(|s| (*s).to_string()).collect(),
                        ..ChannelEntry::default()
                    })
                    .collect(),
            ),
            schema: SCHEMA_CHANNEL.into(),
            properties: Vec::new(),
            origin: Default::default(),
        }
    }

    /// A case: its name, the channel, and the order or the error.
    type Case<'a> = (&'a str, Channel, Result<Vec<&'a str>, &'a str>);

    fn order(c: &Channel) -> Result<Vec<&str>, String> {
        v0_channel_order(c).map(|o| o.iter().map(|e| e.name.as_str()).collect())
    }

    /// operator-lifecycle-manager's `TestSortChannel` (pkg/controller/registry/resolver/
    /// resolver_test.go), every case, its error texts byte for byte.
    #[test]
    fn olm_v0_sort_channel_cases() {
        let cases: Vec<Case<'_>> = vec![
            (
                "wrinkle-free",
                channel(&[("b", "", &[]), ("a", "b", &[])]),
                Ok(vec!["a", "b"]),
            ),
            ("empty", channel(&[]), Ok(vec![])),
            (
                "replacement cycle",
                channel(&[("a", "b", &[]), ("b", "a", &[])]),
                Err(
                    r#"no channel heads (entries not replaced by another entry) found in channel "channel" of package "package""#,
                ),
            ),
            (
                "replacement cycle",
                channel(&[("a", "b", &[]), ("b", "c", &[]), ("c", "b", &[])]),
                Err(
                    r#"a cycle exists in the chain of replacement beginning with "a" in channel "channel" of package "package""#,
                ),
            ),
            (
                "skipped and replaced entry omitted",
                channel(&[("a", "b", &["b"]), ("b", "", &[])]),
                Ok(vec!["a"]),
            ),
            (
                "skipped entry omitted",
                channel(&[("a", "b", &["c"]), ("b", "c", &[]), ("c", "", &[])]),
                Ok(vec!["a", "b"]),
            ),
            (
                "two replaces chains",
                channel(&[("a", "", &[]), ("b", "c", &[]), ("c", "", &[])]),
                Err(
                    r#"a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "channel" of package "package": a, b...c"#,
                ),
            ),
        ];
        for (name, c, want) in cases {
            assert_eq!(order(&c), want.map_err(str::to_string), "{name}");
        }
    }
}
