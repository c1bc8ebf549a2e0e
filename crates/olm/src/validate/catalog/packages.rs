//! The packages of a catalog: the olm.package index (name, duplicates, DNS-1123) and the checks
//! per package once channels and bundles are known (default channel, at least one channel, a
//! stale default channel beyond opm, duplicate versions).

use super::*;

/// Indexes the olm.package blobs by name, reporting those opm's `ConvertToModel` refuses.
pub(super) fn index<'a>(cfg: &'a DeclarativeConfig, out: &mut Vec<Diagnostic>) -> Packages<'a> {
    let mut packages: BTreeMap<&str, &Package> = BTreeMap::new();
    for p in &cfg.packages {
        if p.name.is_empty() {
            out.push(at(
                Rule::CatalogPackageName,
                &p.origin,
                "config contains package with no name: set `name`".into(),
            ));
            continue;
        }
        if let Some(first) = packages.get(p.name.as_str()) {
            out.push(at(
                Rule::CatalogPackageDuplicate,
                &p.origin,
                format!(
                    "duplicate package {:?} (first declared at {}:{}): keep one olm.package blob",
                    p.name, first.origin.file, first.origin.line
                ),
            ));
            continue;
        }
        if let Err(reason) = reference::dns1123_label(&p.name) {
            let reason = if !p.name.contains('.') || p.name.len() > 63 {
                reason
            } else if reference::dns1123_subdomain(&p.name).is_ok() {
                "must not contain dots".to_string()
            } else {
                reason
            };
            out.push(at(
                Rule::CatalogPackageName,
                &p.origin,
                format!(
                    "invalid package name {:?}: [{reason}]: use lowercase letters, digits and '-'",
                    p.name
                ),
            ));
        }
        packages.insert(&p.name, p);
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

/// The checks of one package that need its channels and bundles: default channel, channels,
/// each channel's graph ([`graph::check`]), the default channel's freshness, duplicate versions.
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
    if p.default_channel.is_empty() {
        out.push(at(
            Rule::CatalogDefaultChannel,
            &p.origin,
            format!("invalid package {name:?}: default channel must be set: set `defaultChannel` to one of its channels"),
        ));
    } else if !pkg_channels.iter().any(|c| c.name == p.default_channel) {
        out.push(at(
            Rule::CatalogDefaultChannel,
            &p.origin,
            format!(
                "invalid package {name:?}: default channel {:?} has no olm.channel blob (opm: channel must contain at least one bundle): add the channel or fix `defaultChannel`",
                p.default_channel
            ),
        ));
    }
    if pkg_channels.is_empty() && p.default_channel.is_empty() {
        out.push(at(
            Rule::CatalogPackageNoChannels,
            &p.origin,
            format!("invalid package {name:?}: package must contain at least one channel"),
        ));
    }
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
    // Duplicate versions (v1.47.0), over bundles that are in a channel.
    let mut by_version: BTreeMap<&str, Vec<&BundleInfo>> = BTreeMap::new();
    for ((_, bname), info) in bundles
        .range((name, "")..)
        .take_while(|((pk, _), _)| *pk == name)
    {
        if !in_channels.get(name).is_some_and(|s| s.contains(bname)) {
            continue;
        }
        if let Some(key) = &info.version_key {
            by_version.entry(key.as_str()).or_default().push(info);
        }
    }
    for (version, infos) in by_version {
        if infos.len() > 1 {
            let names: Vec<&str> = infos.iter().map(|i| i.bundle.name.as_str()).collect();
            for info in &infos[1..] {
                out.push(at(
                    Rule::CatalogDuplicateVersion,
                    &info.bundle.origin,
                    format!(
                        "invalid package {name:?}: duplicate versions found in bundles: [{{{version}: [{}]}}]: give each bundle its own version",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
}
