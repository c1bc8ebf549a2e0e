//! `catalog filter`: a smaller catalog that is still correct, with catalog-filter v0.0.5's
//! semantics (github.com/sherine-k/catalog-filter, the library oc-mirror v2 filters with).
//!
//! Why reproduce it: disconnected clusters mirror what oc-mirror's filter keeps, so a filter that
//! keeps other bundles would mirror other images. The rules, as catalog-filter applies them:
//! - a package without channels keeps every channel; a channel without a range keeps its head
//!   only (the entry as written, edges included); `full` keeps every entry;
//! - a range keeps the bundles in it plus what the channel needs to keep one head and an intact
//!   replaces chain (a bundle outside the range on that chain is kept, with a warning); an
//!   exact version (`>=V <=V`) keeps only that version (the v0.0.5 fix, OCPBUGS-61497);
//! - a selection of bundles keeps them in every channel that has them;
//! - a filtered-out default channel needs `defaultChannel`; a channel a range empties is
//!   dropped (an error for the default channel); deprecations are kept for what remains.
//!
//! Where olmpack differs, on purpose: a package, channel or bundle the catalog does not have is
//! an error naming the configuration line (catalog-filter returns an empty catalog or ignores
//! it); a deprecation naming a channel the filter dropped is dropped with it (catalog-filter
//! keeps it, and opm then refuses the catalog). The caller validates the result
//! ([`crate::validate::catalog::validate`]) and refuses one opm would refuse.

pub mod availability;
pub mod config;
pub mod dependencies;

use crate::catalog::bundle_facts::{PackageProperty, PropertyValue};
use crate::catalog::channel::{ChannelGraph, HeadError};
use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, property_type,
};
use crate::gocompat::mmsemver::Constraints;
use config::{At, ConfigError, FilterConfig, PackageFilter};
use semver::Version;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

/// Why a filter failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// The configuration asks for something wrong or absent (file and line named).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The catalog cannot be filtered as asked (a channel that is already broken, a version
    /// that is not semver).
    #[error("{0}")]
    Catalog(String),
    /// Kept bundles require what the catalog cannot give (every one named, with its bundle).
    #[error("{}", unmet_text(.0))]
    Dependencies(Vec<dependencies::Unmet>),
}

fn unmet_text(unmet: &[dependencies::Unmet]) -> String {
    let mut out = format!(
        "{} requirement{} of the kept bundles cannot be met in this catalog, so the filtered catalog would not install:",
        unmet.len(),
        if unmet.len() == 1 { "" } else { "s" }
    );
    for u in unmet {
        out.push_str("\n  ");
        out.push_str(&u.to_string());
    }
    out.push_str("\nFilter a catalog that also holds the providers, or give --no-dependencies to keep the bundles without them.");
    out
}

/// The filtered catalog and what the user should know about it.
#[derive(Debug, Clone, Default)]
pub struct Filtered {
    /// The catalog that remains.
    pub config: DeclarativeConfig,
    /// Bundles kept outside a range to keep a channel valid, and similar notes.
    pub warnings: Vec<String>,
    /// Bundles the dependency closure added, each with the bundle it was added for.
    pub added: Vec<dependencies::Added>,
}

struct Cx<'f> {
    file: &'f PathBuf,
}

impl Cx<'_> {
    fn at<T>(&self, a: &At<T>, message: impl Into<String>) -> FilterError {
        FilterError::Config(ConfigError::at(self.file, a.line, message))
    }
}

/// The package version of a bundle as catalog-filter reads it: the `olm.package` property's
/// version, strict semver (no `v`, three numbers).
fn strict_version(b: &Bundle) -> Result<Version, FilterError> {
    let (_, prop) = b
        .properties_of(property_type::PACKAGE)
        .next()
        .ok_or_else(|| {
            FilterError::Catalog(format!(
                "bundle {:?} in package {:?} has no package property",
                b.name, b.package
            ))
        })?;
    let version = PropertyValue::decode(&prop.value, PackageProperty::GO_TYPE)
        .and_then(|v| v.string("version"))
        .map_err(|e| {
            FilterError::Catalog(format!(
                "bundle {:?} in package {:?}: {} property: {e}",
                b.name,
                b.package,
                property_type::PACKAGE
            ))
        })?;
    Version::parse(&version).map_err(|e| {
        FilterError::Catalog(format!(
            "bundle {:?} in package {:?}: version {:?} is not semver: {e}",
            b.name, b.package, version
        ))
    })
}

/// Masterminds' equality: build metadata ignored.
fn same_version(a: &Version, b: &Version) -> bool {
    (a.major, a.minor, a.patch, &a.pre) == (b.major, b.minor, b.patch, &b.pre)
}

/// catalog-filter's channel check (`newChannel`): no duplicate or self-naming entry, one
/// head, no loop. Returns the head. A substitute (`olm.substitutesFor`, from `bundles`)
/// succeeds its base: a base listed next to its substitute with no edge between them is not
/// a second head (catalog-filter, which knows no substitutes, refuses such a channel).
fn checked_head<'c>(
    ch: &'c Channel,
    versions: &HashMap<String, Version>,
    bundles: &[Bundle],
) -> Result<&'c str, String> {
    let entries = ch.entries.as_deref().unwrap_or(&[]);
    if entries.is_empty() {
        return Err("channel has no entries".into());
    }
    let mut errs: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for e in entries {
        if !seen.insert(e.name.as_str()) {
            errs.push(format!("duplicate channel entry {:?}", e.name));
        }
        if e.replaces == e.name {
            errs.push(format!(
                "invalid channel entry {:?}: replaces itself",
                e.name
            ));
        }
        if e.skips.contains(&e.name) {
            errs.push(format!("invalid channel entry {:?}: skips itself", e.name));
        }
    }
    let g = ChannelGraph::new(ch, |n| versions.get(n).cloned())
        .with_substitutes(bundles.iter().filter(|b| b.package == ch.package));
    let head = match g.head_with_substitutes() {
        Ok(h) => Some(h),
        Err(HeadError::Multiple(names)) => {
            errs.push(format!(
                "multiple channel heads found: [{}]",
                names.join(" ")
            ));
            None
        }
        Err(_) => {
            errs.push("no channel heads found".into());
            None
        }
    };
    if !errs.is_empty() {
        return Err(errs.join("\n"));
    }
    let head = head.ok_or_else(|| "no channel heads found".to_string())?;
    if !g.is_acyclic() {
        return Err("detected a cycle in the upgrade graph of the channel".into());
    }
    Ok(head)
}

/// catalog-filter's `filterByVersionRange`: the names a range keeps in a checked channel.
fn by_version_range(
    ch: &Channel,
    head: &str,
    range: &Constraints,
    versions: &HashMap<String, Version>,
    warnings: &mut Vec<String>,
) -> BTreeSet<String> {
    let entries = ch.entries.as_deref().unwrap_or(&[]);
    let by_name: HashMap<&str, &ChannelEntry> =
        entries.iter().map(|e| (e.name.as_str(), e)).collect();
    let in_range = |n: &str| versions.get(n).is_some_and(|v| range.matches(v));
    if let Some(exact) = range.exact() {
        // v0.0.5: an exact version keeps that version only.
        return entries
            .iter()
            .filter(|e| {
                versions
                    .get(&e.name)
                    .is_some_and(|v| same_version(v, exact))
            })
            .map(|e| e.name.clone())
            .collect();
    }
    // The replaces chain from the head (a name outside the channel ends it).
    let mut chain: Vec<&str> = vec![head];
    let mut on: HashSet<&str> = HashSet::from([head]);
    while let Some(e) = chain.last().and_then(|n| by_name.get(n)) {
        if e.replaces.is_empty() || !on.insert(e.replaces.as_str()) {
            break;
        }
        chain.push(&e.replaces);
    }
    let skips_of = |n: &str| -> Vec<&str> {
        let mut s: Vec<&str> = by_name
            .get(n)
            .map(|e| e.skips.iter().map(String::as_str).collect())
            .unwrap_or_default();
        s.sort_unstable();
        s.dedup();
        s
    };
    // Bundles in range at or below each chain node, each counted once, from the bottom up.
    let mut counts = vec![0usize; chain.len()];
    let mut seen: HashSet<&str> = HashSet::new();
    for k in (0..chain.len()).rev() {
        let mut count = counts.get(k + 1).copied().unwrap_or(0);
        let n = chain[k];
        if !seen.contains(n) && in_range(n) {
            seen.insert(n);
            count += 1;
        }
        for s in skips_of(n) {
            if !seen.contains(s) && in_range(s) {
                seen.insert(s);
                count += 1;
            }
        }
        counts[k] = count;
    }
    // New head: the lowest chain node with the most; tail: the first with none (excluded).
    let (mut new_head, mut max, mut tail) = (0usize, None::<usize>, chain.len());
    for (k, &count) in counts.iter().enumerate() {
        if max.is_none_or(|m| count >= m) {
            new_head = k;
            max = Some(count);
        }
        if count == 0 {
            tail = k;
            break;
        }
    }
    let mut keep = BTreeSet::new();
    for &n in chain.get(new_head..tail).unwrap_or(&[]) {
        match versions.get(n) {
            None => warnings.push(format!(
                "including bundle {n:?}: it is unversioned but is required to ensure inclusion of all bundles in the range"
            )),
            Some(v) if !range.matches(v) => warnings.push(format!(
                "including bundle {n:?} with version {v}: it falls outside the specified range of {range:?} but is required to ensure inclusion of all bundles in the range",
                range = range.to_string()
            )),
            Some(_) => {}
        }
        keep.insert(n.to_string());
        for s in skips_of(n) {
            if in_range(s) {
                keep.insert(s.to_string());
            }
        }
    }
    keep
}

/// Filters `cfg` as `fc` says (see the module documentation), then adds what the kept bundles
/// require ([`dependencies`]) unless `fc.no_dependencies`.
pub fn filter(cfg: DeclarativeConfig, fc: &FilterConfig) -> Result<Filtered, FilterError> {
    if fc.no_dependencies
        || fc.packages.is_empty()
        || !cfg.bundles.iter().any(Bundle::has_requirements)
    {
        return filter_selected(cfg, fc);
    }
    let first = filter_selected(cfg.clone(), fc)?;
    dependencies::close(&cfg, fc, first)
}

/// The catalog-filter part of [`filter`]: what the configuration selects, nothing added.
fn filter_selected(mut cfg: DeclarativeConfig, fc: &FilterConfig) -> Result<Filtered, FilterError> {
    let cx = Cx { file: &fc.file };
    let mut warnings = Vec::new();
    let pkg_cfgs: HashMap<&str, &PackageFilter> = fc
        .packages
        .iter()
        .map(|p| (p.name.value.as_str(), p))
        .collect();
    check_names(&cx, &cfg, fc)?;

    // Packages, channels, bundles, deprecations and other blobs of the selected packages.
    if !pkg_cfgs.is_empty() {
        let selected_channels = |p: &str, c: &str| {
            pkg_cfgs.get(p).is_some_and(|pc| {
                pc.channels.is_empty() || pc.channels.iter().any(|x| x.name.value == c)
            })
        };
        cfg.packages
            .retain(|p| pkg_cfgs.contains_key(p.name.as_str()));
        cfg.channels
            .retain(|c| selected_channels(&c.package, &c.name));
        cfg.bundles
            .retain(|b| pkg_cfgs.contains_key(b.package.as_str()));
        cfg.deprecations
            .retain(|d| pkg_cfgs.contains_key(d.package.as_str()));
        cfg.others
            .retain(|o| o.package.is_empty() || pkg_cfgs.contains_key(o.package.as_str()));
    }

    // Versions, strict, as catalog-filter indexes them.
    let mut versions: HashMap<String, HashMap<String, Version>> = HashMap::new();
    for b in &cfg.bundles {
        let v = strict_version(b)?;
        versions
            .entry(b.package.clone())
            .or_default()
            .insert(b.name.clone(), v);
    }
    let no_versions = HashMap::new();
    let mut channel_names: HashMap<&str, BTreeSet<String>> = HashMap::new();
    for c in &cfg.channels {
        channel_names
            .entry(c.package.as_str())
            .or_default()
            .insert(c.name.clone());
    }
    let channel_names: HashMap<String, BTreeSet<String>> = channel_names
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let original_default: HashMap<String, String> = cfg
        .packages
        .iter()
        .map(|p| (p.name.clone(), p.default_channel.clone()))
        .collect();

    // Default channels.
    for p in &mut cfg.packages {
        let Some(pc) = pkg_cfgs.get(p.name.as_str()) else {
            continue;
        };
        let names = channel_names.get(&p.name);
        let has = |c: &str| names.is_some_and(|n| n.contains(c));
        match &pc.default_channel {
            Some(dc) => {
                if !has(&dc.value) {
                    return Err(cx.at(
                        dc,
                        format!(
                            "invalid default channel configuration for package {:?}: specified default channel override {:?} does not exist in the filtered output",
                            p.name, dc.value
                        ),
                    ));
                }
                p.default_channel = dc.value.clone();
            }
            None if !p.default_channel.is_empty() && !has(&p.default_channel) => {
                return Err(cx.at(
                    &pc.name,
                    format!(
                        "invalid default channel configuration for package {:?}: the default channel {:?} was filtered out, a new default channel must be configured for this package (add defaultChannel)",
                        p.name, p.default_channel
                    ),
                ));
            }
            None => {}
        }
    }
    let new_default: HashMap<String, String> = cfg
        .packages
        .iter()
        .map(|p| (p.name.clone(), p.default_channel.clone()))
        .collect();

    let mut keep: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut emptied: HashSet<(String, String)> = HashSet::new();
    let bundles = &cfg.bundles;
    for ch in &mut cfg.channels {
        let pc = pkg_cfgs.get(ch.package.as_str()).copied();
        let pkg_versions = versions.get(&ch.package).unwrap_or(&no_versions);
        let range = pc.and_then(|pc| {
            pc.channels
                .iter()
                .find(|c| c.name.value == ch.name)
                .and_then(|c| c.version_range.as_ref())
                .or(pc.version_range.as_ref())
        });
        let selected = pc.map(|pc| pc.bundles.as_slice()).unwrap_or(&[]);
        let is_default = original_default.get(&ch.package) == Some(&ch.name)
            || new_default.get(&ch.package) == Some(&ch.name);
        let kept = keep.entry(ch.package.clone()).or_default();
        if fc.full
            && let Some(r) = range
        {
            return Err(cx.at(r, "Full: true cannot be mixed with versionRange"));
        }
        if fc.full
            && let Some(b) = selected.first()
        {
            return Err(cx.at(
                b,
                "Full: true cannot be mixed with filtering by bundle selection",
            ));
        }
        if !selected.is_empty() {
            kept.extend(selected.iter().map(|b| b.value.clone()));
            if let Some(es) = &mut ch.entries {
                es.retain(|e| selected.iter().any(|b| b.value == e.name));
            }
            if ch.entries.as_ref().is_none_or(Vec::is_empty) {
                if is_default {
                    return Err(cx.at(
                        &selected[0],
                        format!(
                            "package {:?}: no selected bundle is in channel {:?}, the default channel, which would be empty: select one of its bundles or set defaultChannel",
                            ch.package, ch.name
                        ),
                    ));
                }
                emptied.insert((ch.package.clone(), ch.name.clone()));
            } else if let Err(e) = checked_head(ch, pkg_versions, bundles) {
                return Err(cx.at(
                    &selected[0],
                    format!(
                        "filtering on the selected bundles leads to invalidating channel {:?} for package {:?}: {e}",
                        ch.name, ch.package
                    ),
                ));
            }
        } else if fc.full {
            kept.extend(ch.entries.iter().flatten().map(|e| e.name.clone()));
        } else if let Some(r) = range {
            let head = checked_head(ch, pkg_versions, bundles).map_err(|e| {
                FilterError::Catalog(format!(
                    "package {:?} channel {:?}: {e}",
                    ch.package, ch.name
                ))
            })?;
            let names = by_version_range(ch, head, &r.value, pkg_versions, &mut warnings);
            if names.is_empty() {
                if is_default {
                    return Err(cx.at(
                        r,
                        format!(
                            "package {:?} channel {:?} has version range {:?} that results in an empty channel",
                            ch.package,
                            ch.name,
                            r.value.to_string()
                        ),
                    ));
                }
                emptied.insert((ch.package.clone(), ch.name.clone()));
            }
            if let Some(es) = &mut ch.entries {
                es.retain(|e| names.contains(&e.name));
            }
            // A substitute succeeds its base: a base the range keeps next to its substitute,
            // with nothing kept naming it, would be a second head; it is left out.
            let mut names = names;
            let superseded: Vec<String> = {
                let g = ChannelGraph::new(ch, |_| None)
                    .with_substitutes(bundles.iter().filter(|b| b.package == ch.package));
                if g.heads().len() > 1 {
                    g.superseded_heads().iter().map(|s| s.to_string()).collect()
                } else {
                    Vec::new()
                }
            };
            for base in &superseded {
                warnings.push(format!(
                    "package {:?} channel {:?}: leaving out {base:?}: the range keeps its substitute (olm.substitutesFor), which succeeds it",
                    ch.package, ch.name
                ));
                names.remove(base);
            }
            if let Some(es) = &mut ch.entries {
                es.retain(|e| !superseded.contains(&e.name));
            }
            kept.extend(names);
        } else {
            let head = checked_head(ch, pkg_versions, bundles)
                .map_err(|e| {
                    FilterError::Catalog(format!(
                        "package {:?} channel {:?} unable to filter head of channel: {e}",
                        ch.package, ch.name
                    ))
                })?
                .to_string();
            let entry = ch
                .entries
                .iter()
                .flatten()
                .find(|e| e.name == head)
                .cloned();
            ch.entries = Some(entry.into_iter().collect());
            kept.insert(head);
        }
    }
    cfg.channels
        .retain(|c| !emptied.contains(&(c.package.clone(), c.name.clone())));

    // Repair: a bundle a range keeps because a kept entry skips it, while no remaining channel
    // lists it, is one opm refuses ("not found in any channel entries") and OLM could never
    // install; it is dropped, with a warning.
    let listed: HashSet<(&str, &str)> = cfg
        .channels
        .iter()
        .flat_map(|c| {
            c.entries
                .iter()
                .flatten()
                .map(move |e| (c.package.as_str(), e.name.as_str()))
        })
        .collect();
    for (pkg, names) in &mut keep {
        let unlisted: Vec<String> = names
            .iter()
            .filter(|n| !listed.contains(&(pkg.as_str(), n.as_str())))
            .filter(|n| {
                cfg.bundles
                    .iter()
                    .any(|b| &b.package == pkg && &b.name == *n)
            })
            .cloned()
            .collect();
        for n in unlisted {
            warnings.push(format!(
                "leaving out bundle {n:?} of package {pkg:?}: a kept entry skips it, but no kept channel lists it, so opm would refuse the catalog (catalog-filter keeps it)"
            ));
            names.remove(&n);
        }
    }
    if !keep.is_empty() {
        cfg.bundles.retain(|b| {
            keep.get(&b.package)
                .is_some_and(|names| names.contains(&b.name))
        });
        // One bundle per name, sorted by package and name, as catalog-filter rebuilds the list.
        let mut seen = HashSet::new();
        cfg.bundles
            .retain(|b| seen.insert((b.package.clone(), b.name.clone())));
        cfg.bundles
            .sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
        for d in &mut cfg.deprecations {
            let pkg = d.package.clone();
            d.entries.retain(|e| match e.reference.schema.as_str() {
                SCHEMA_BUNDLE => keep
                    .get(&pkg)
                    .is_none_or(|names| names.contains(&e.reference.name)),
                SCHEMA_CHANNEL => channel_names.get(&pkg).is_none_or(|names| {
                    names.contains(&e.reference.name)
                        && !emptied.contains(&(pkg.clone(), e.reference.name.clone()))
                }),
                _ => true,
            });
        }
    }
    Ok(Filtered {
        config: cfg,
        warnings,
        added: Vec::new(),
    })
}

/// Every package, channel and bundle the configuration names must exist in the catalog.
fn check_names(cx: &Cx<'_>, cfg: &DeclarativeConfig, fc: &FilterConfig) -> Result<(), FilterError> {
    for p in &fc.packages {
        let name = &p.name.value;
        if !cfg.packages.iter().any(|x| &x.name == name) {
            let mut known: Vec<&str> = cfg.packages.iter().map(|x| x.name.as_str()).collect();
            known.sort_unstable();
            let close: Vec<&str> = known
                .iter()
                .copied()
                .filter(|k| edit_distance(k, name) <= 1.max(name.len() / 4))
                .collect();
            let shown = if !close.is_empty() {
                format!("; did you mean {}?", close.join(" or "))
            } else if known.len() <= 10 {
                format!("; the catalog has: {}", known.join(", "))
            } else {
                format!("; the catalog has {} packages", known.len())
            };
            return Err(cx.at(
                &p.name,
                format!("package {name:?} is not in the catalog{shown}"),
            ));
        }
        let channels: BTreeSet<&str> = cfg
            .channels
            .iter()
            .filter(|c| &c.package == name)
            .map(|c| c.name.as_str())
            .collect();
        for c in &p.channels {
            if !channels.contains(c.name.value.as_str()) {
                return Err(cx.at(
                    &c.name,
                    format!(
                        "package {name:?} has no channel {:?}; its channels: {}",
                        c.name.value,
                        channels.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        for b in &p.bundles {
            if !cfg
                .bundles
                .iter()
                .any(|x| &x.package == name && x.name == b.value)
            {
                return Err(cx.at(b, format!("package {name:?} has no bundle {:?}", b.value)));
            }
        }
    }
    Ok(())
}

/// Levenshtein distance, for suggesting the package a mistyped name meant.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests;
