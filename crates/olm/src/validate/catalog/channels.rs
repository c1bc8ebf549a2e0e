//! The channels of a catalog: the olm.channel index and which bundles each package's channels
//! list (opm's checks of them are the model check's, [`super::opm_model`]).

use super::*;

/// Indexes the olm.channel blobs by (package, name) (the first of each; the model check reports
/// the rest).
pub(super) fn index<'a>(cfg: &'a DeclarativeConfig, packages: &Packages) -> Channels<'a> {
    let mut channels: BTreeMap<(&str, &str), &Channel> = BTreeMap::new();
    for c in &cfg.channels {
        if packages.contains_key(c.package.as_str()) && !c.name.is_empty() {
            channels
                .entry((c.package.as_str(), c.name.as_str()))
                .or_insert(c);
        }
    }
    channels
}

/// The entries of every channel, per package, for the later checks.
pub(super) fn membership<'a>(channels: &Channels<'a>) -> Members<'a> {
    let mut in_channels: HashMap<&str, HashSet<&str>> = HashMap::new();
    for ((pkg, _), c) in channels {
        let set = in_channels.entry(pkg).or_default();
        for e in entries(c) {
            set.insert(e.name.as_str());
        }
    }
    in_channels
}
