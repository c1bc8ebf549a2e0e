//! The channels of a catalog: the olm.channel index (unknown package, name, duplicates,
//! duplicate entries) and membership (every bundle in a channel, every entry a bundle).

use super::*;

/// Indexes the olm.channel blobs by (package, name), reporting those opm's `ConvertToModel`
/// refuses.
pub(super) fn index<'a>(
    cfg: &'a DeclarativeConfig,
    packages: &Packages,
    out: &mut Vec<Diagnostic>,
) -> Channels<'a> {
    let mut channels: BTreeMap<(&str, &str), &Channel> = BTreeMap::new();
    for c in &cfg.channels {
        if !packages.contains_key(c.package.as_str()) {
            out.push(at(
                Rule::CatalogPackageUnknown,
                &c.origin,
                format!(
                    "unknown package {:?} for channel {:?}: add an olm.package blob for it or fix `package`",
                    c.package, c.name
                ),
            ));
            continue;
        }
        if c.name.is_empty() {
            out.push(at(
                Rule::CatalogChannelName,
                &c.origin,
                format!(
                    "package {:?} contains channel with no name: set `name`",
                    c.package
                ),
            ));
            continue;
        }
        if let Some(first) = channels.get(&(c.package.as_str(), c.name.as_str())) {
            out.push(at(
                Rule::CatalogChannelDuplicate,
                &c.origin,
                format!(
                    "package {:?} has duplicate channel {:?} (first at {}:{}): merge their entries into one blob",
                    c.package, c.name, first.origin.file, first.origin.line
                ),
            ));
            continue;
        }
        let mut seen = HashSet::new();
        for e in entries(c) {
            if !seen.insert(e.name.as_str()) {
                out.push(at(
                    Rule::CatalogEntryDuplicate,
                    &e.origin,
                    format!(
                        "invalid package {:?}, channel {:?}: duplicate entry {:?}: list each bundle once",
                        c.package, c.name, e.name
                    ),
                ));
            }
        }
        channels.insert((c.package.as_str(), c.name.as_str()), c);
    }
    channels
}

/// Checks that every bundle is an entry of a channel and every entry names a bundle; returns
/// the entries of every channel, per package, for the later checks.
pub(super) fn membership<'a>(
    channels: &Channels<'a>,
    bundles: &Bundles,
    out: &mut Vec<Diagnostic>,
) -> Members<'a> {
    // Entries of every channel, per package, for membership checks.
    let mut in_channels: HashMap<&str, HashSet<&str>> = HashMap::new();
    for ((pkg, _), c) in channels {
        let set = in_channels.entry(pkg).or_default();
        for e in entries(c) {
            set.insert(e.name.as_str());
        }
    }
    for ((pkg, name), info) in bundles {
        if !in_channels.get(pkg).is_some_and(|s| s.contains(name)) {
            out.push(at(
                Rule::CatalogBundleNotInChannel,
                &info.bundle.origin,
                format!(
                    "package {pkg:?}, bundle {name:?} not found in any channel entries: add it to a channel or remove the bundle"
                ),
            ));
        }
    }
    for ((pkg, chname), c) in channels {
        for e in entries(c) {
            if e.name.is_empty() {
                out.push(at(
                    Rule::CatalogBundleName,
                    &e.origin,
                    format!("channel {chname:?} of package {pkg:?} has an entry with no name: set `name`"),
                ));
            } else if !bundles.contains_key(&(pkg, e.name.as_str())) {
                out.push(at(
                    Rule::CatalogEntryMissingBundle,
                    &e.origin,
                    format!(
                        "no olm.bundle blobs found in package {pkg:?} for olm.channel entries [{}] (channel {chname:?}): add the bundle or remove the entry",
                        e.name
                    ),
                ));
            }
        }
    }
    in_channels
}
