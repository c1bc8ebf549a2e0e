//! The packages of a catalog: the olm.package index and the checks per package beyond opm once
//! channels and bundles are known (a stale default channel); opm's checks of packages are the
//! model check's ([`super::opm_model`]).

use super::*;

/// Indexes the olm.package blobs by name (the first of each; the model check reports the rest).
pub(super) fn index(cfg: &DeclarativeConfig) -> Packages<'_> {
    let mut packages: BTreeMap<&str, &Package> = BTreeMap::new();
    for p in &cfg.packages {
        if !p.name.is_empty() {
            packages.entry(p.name.as_str()).or_insert(p);
        }
    }
    packages
}

/// Words that name a channel of releases ahead of the default one: pre-releases, previews and
/// builds (`nightly`, `candidate-v1`, `v2-beta`, `rc1`, `tech-preview`).
const PRERELEASE_WORDS: [&str; 15] = [
    "alpha",
    "beta",
    "candidate",
    "canary",
    "dev",
    "devel",
    "edge",
    "experimental",
    "insiders",
    "next",
    "nightly",
    "preview",
    "rc",
    "snapshot",
    "unstable",
];

/// Whether a channel is named as a pre-release channel: one of its words (split on anything
/// but letters, digits ignored at the end of a word) is in [`PRERELEASE_WORDS`].
fn is_prerelease_channel(name: &str) -> bool {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(|w| w.trim_end_matches(|c: char| c.is_ascii_digit()))
        .any(|w| PRERELEASE_WORDS.contains(&w))
}

/// The checks of one package beyond opm that need its channels and bundles: each channel's graph
/// ([`graph::check`]) and the default channel's freshness.
pub(super) fn check(
    name: &str,
    p: &Package,
    channels: &Channels,
    bundles: &Bundles,
    in_channels: &Members,
    out: &mut Vec<Diagnostic>,
) {
    let pkg_channels: Vec<&Channel> = channels
        .range((name, "")..)
        .take_while(|((pk, _), _)| *pk == name)
        .map(|(_, c)| *c)
        .collect();
    let mut heads: Vec<(&Channel, Option<&semver::Version>)> = Vec::new();
    for c in &pkg_channels {
        let head = graph::check(p, c, bundles, in_channels, out);
        heads.push((
            c,
            head.and_then(|h| bundles.get(&(name, h)).and_then(|i| i.version.as_ref())),
        ));
    }
    // Beyond opm: the default channel's head is older than another channel's head. A channel
    // meant to run ahead (a pre-release head, or a name such as nightly, candidate, alpha)
    // leading to a newer version is the normal order of things, not a stale default.
    if let Some((dc, Some(dv))) = heads.iter().find(|(c, _)| c.name == p.default_channel)
        && let Some((other, Some(ov))) = heads
            .iter()
            .filter(|(c, v)| {
                c.name != dc.name
                    && v.is_some_and(|v| v.pre.is_empty())
                    && !is_prerelease_channel(&c.name)
            })
            .max_by(|a, b| a.1.cmp(&b.1))
        && ov > dv
    {
        out.push(at(
            Rule::CatalogDefaultChannelStale,
            &p.origin,
            format!(
                "default channel {:?} leads to {dv}, but channel {:?} leads to {ov}: users installing without a channel get the older one; check `defaultChannel`",
                dc.name, other.name
            ),
        ));
    }
}
