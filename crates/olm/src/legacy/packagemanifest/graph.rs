//! opm's sqlite loader, replayed in memory: `AddPackageChannels` (operator-registry v1.26.5
//! `pkg/sqlite/load.go`). From each channel's head it inserts a channel entry for the current CSV,
//! one entry per name in its `skips` (plus a synthesized "current replaces skipped" entry), then
//! follows `spec.replaces` until it is empty. The skipped CSVs' own edges are not followed, and
//! `olm.skipRange` takes no part. The rows are kept as opm stores them (ids, depths, replaces
//! links) so the index model can be filled from them, and every error opm would aggregate is a
//! finding naming the package file.

use super::{PackageDir, PackageFile};
use crate::findings::{Diagnostic, Rule};
use std::collections::{BTreeSet, HashMap, HashSet};

/// One `channel_entry` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRow {
    /// `entry_id` (1-based, insertion order, as sqlite's rowid).
    pub id: i64,
    /// Channel name.
    pub channel: String,
    /// CSV name (`operatorbundle_name`); may name a CSV the package lacks (a dangling skip).
    pub bundle: String,
    /// The `entry_id` this entry replaces.
    pub replaces: Option<i64>,
    /// Depth from the head (0 for the head).
    pub depth: i64,
}

/// One `channel` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRow {
    /// Channel name.
    pub name: String,
    /// `head_operatorbundle_name`.
    pub head: String,
}

/// The package as opm's loader stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// Package name.
    pub package: String,
    /// The default channel (opm's `IsDefaultChannel` rule); empty when there is none.
    pub default_channel: String,
    /// Channels in package-file order.
    pub channels: Vec<ChannelRow>,
    /// Channel entries in insertion order.
    pub entries: Vec<EntryRow>,
    /// Bundles that received an `olm.package` property row during the walk, in order (opm adds
    /// one row per visit; a CSV visited from several channels gets several identical rows).
    pub package_property_visits: Vec<String>,
}

impl Loaded {
    /// The CSV names that belong to `channel` (entries whose CSV exists), sorted.
    pub fn members(&self, channel: &str, pkg: &PackageDir) -> BTreeSet<String> {
        self.entries
            .iter()
            .filter(|e| e.channel == channel && pkg.version(&e.bundle).is_some())
            .map(|e| e.bundle.clone())
            .collect()
    }

    /// The channels a CSV belongs to, in package-file order.
    pub fn channels_of(&self, csv: &str) -> Vec<String> {
        self.channels
            .iter()
            .filter(|c| {
                self.entries
                    .iter()
                    .any(|e| e.channel == c.name && e.bundle == csv)
            })
            .map(|c| c.name.clone())
            .collect()
    }
}

/// Runs the walk. Errors are the ones opm aggregates (and `initializer` then refuses the
/// package); the rows are returned either way so validation can report everything.
pub fn load(pkg: &PackageDir, manifest: &PackageFile) -> (Loaded, Vec<Diagnostic>) {
    let by_name: HashMap<&str, &super::Version> =
        pkg.versions.iter().map(|v| (v.name.as_str(), v)).collect();
    let mut errors = Vec::new();
    let mut loaded = Loaded {
        package: manifest.name.clone(),
        default_channel: String::new(),
        channels: Vec::new(),
        entries: Vec::new(),
        package_property_visits: Vec::new(),
    };
    channel_rows(manifest, &mut loaded, &mut errors);

    let mut next_id = 1i64;
    let mut insert = |entries: &mut Vec<EntryRow>, channel: &str, bundle: &str, depth: i64| {
        let id = next_id;
        next_id += 1;
        entries.push(EntryRow {
            id,
            channel: channel.to_string(),
            bundle: bundle.to_string(),
            replaces: None,
            depth,
        });
        id
    };
    let set_replaces = |entries: &mut Vec<EntryRow>, id: i64, replaces: i64| {
        if let Some(e) = entries.iter_mut().find(|e| e.id == id) {
            e.replaces = Some(replaces);
        }
    };
    let channels = loaded.channels.clone();
    for c in &channels {
        let line = manifest
            .channels
            .iter()
            .find(|d| d.name == c.name)
            .map_or(manifest.line, |d| d.line);
        let mut current_id = insert(&mut loaded.entries, &c.name, &c.head, 0);
        let mut current = c.head.clone();
        let mut depth = 1i64;
        let mut cycle: HashSet<String> = HashSet::from([current.clone()]);
        loop {
            let Some(v) = by_name.get(current.as_str()) else {
                // Only the head can be missing here: a missing `replaces` is caught below.
                errors.push(
                    Diagnostic::new(
                        Rule::PmChannelHeadMissing,
                        format!(
                            "channel \"{}\" has currentCSV \"{}\", but no folder holds a ClusterServiceVersion of that name{} (opm: no bundle found for bundlename {})",
                            c.name,
                            current,
                            suggestion(pkg, &current),
                            current
                        ),
                    )
                    .near(manifest.file.clone(), line),
                );
                break;
            };
            loaded.package_property_visits.push(current.clone());
            for skip in &v.skips {
                let skipped = insert(&mut loaded.entries, &c.name, skip, depth);
                let synthesized = insert(&mut loaded.entries, &c.name, &current, depth);
                set_replaces(&mut loaded.entries, synthesized, skipped);
                depth += 1;
            }
            if v.replaces.is_empty() {
                break;
            }
            let replaced_id = insert(&mut loaded.entries, &c.name, &v.replaces, depth);
            if !cycle.insert(v.replaces.clone()) {
                errors.push(
                    Diagnostic::new(
                        Rule::PmReplacesCycle,
                        format!(
                            "following replaces from the head of channel \"{}\" loops: {} replaces {}, already on the chain (opm: Cycle detected)",
                            c.name, current, v.replaces
                        ),
                    )
                    .near(v.csv().file.clone(), v.csv().line_of(&["spec", "replaces"])),
                );
                break;
            }
            set_replaces(&mut loaded.entries, current_id, replaced_id);
            if !by_name.contains_key(v.replaces.as_str()) {
                errors.push(
                    Diagnostic::new(
                        Rule::PmReplacesMissing,
                        format!(
                            "{} (on channel \"{}\") replaces \"{}\", which no folder holds (opm: Invalid bundle {}, replaces nonexistent bundle {})",
                            current, c.name, v.replaces, c.head, v.replaces
                        ),
                    )
                    .near(v.csv().file.clone(), v.csv().line_of(&["spec", "replaces"])),
                );
                break;
            }
            current_id = replaced_id;
            current = v.replaces.clone();
            depth += 1;
        }
    }
    (loaded, errors)
}

/// The channel rows opm inserts (a channel declared twice is reported and skipped) and the
/// default channel (the one named, or the only one).
fn channel_rows(manifest: &PackageFile, loaded: &mut Loaded, errors: &mut Vec<Diagnostic>) {
    let mut has_default = false;
    let mut seen_channels = HashSet::new();
    for c in &manifest.channels {
        if !seen_channels.insert(c.name.as_str()) {
            // The second insert violates the channel primary key; opm reports and skips it.
            errors.push(
                Diagnostic::new(
                    Rule::PmChannelDuplicate,
                    format!(
                        "channel \"{}\" is declared twice; opm cannot add it again",
                        c.name
                    ),
                )
                .near(manifest.file.clone(), c.line),
            );
            continue;
        }
        loaded.channels.push(ChannelRow {
            name: c.name.clone(),
            head: c.current_csv.clone(),
        });
        let is_default = manifest.default_channel.as_deref() == Some(c.name.as_str())
            || manifest.channels.len() == 1;
        if is_default {
            has_default = true;
            loaded.default_channel = c.name.clone();
        }
    }
    if !has_default {
        let why = match &manifest.default_channel {
            Some(d) => format!(
                "defaultChannel \"{d}\" is not one of the declared channels ({}); opm: no default channel specified for {}",
                channel_list(manifest),
                manifest.name
            ),
            None => format!(
                "no defaultChannel and {} channels ({}): set defaultChannel (opm: no default channel specified for {})",
                manifest.channels.len(),
                channel_list(manifest),
                manifest.name
            ),
        };
        let rule = if manifest.default_channel.is_some() {
            Rule::PmDefaultChannelUnknown
        } else {
            Rule::PmDefaultChannelMissing
        };
        errors.push(Diagnostic::new(rule, why).near(manifest.file.clone(), manifest.default_line));
    }
}

fn channel_list(manifest: &PackageFile) -> String {
    manifest
        .channels
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// " (did you mean X?)" when a CSV of the package has a close name.
fn suggestion(pkg: &PackageDir, wanted: &str) -> String {
    let best = pkg
        .versions
        .iter()
        .map(|v| (strsim::levenshtein(&v.name, wanted), &v.name))
        .min();
    match best {
        Some((d, name)) if d <= 3 => format!(" (did you mean \"{name}\"?)"),
        _ => String::new(),
    }
}
