//! `catalog diff`: what changed between two catalogs, for a reviewer, and which installed
//! versions lose their upgrade path.
//!
//! Why regressions first: a raw JSON diff shows a removed entry, not that every 3.x user is now
//! stuck. A **regression** is computed on [`ChannelGraph`] with OLM v0's edge semantics: a bundle
//! of an OLD channel that could reach the OLD head, from which no path of `replaces`, `skips`,
//! `skipRange` (or substitutes) leads to the NEW head of the same channel. For a bundle NEW no
//! longer lists, the path starts at the NEW entries that replace, skip or skipRange-cover it;
//! none is the "dangling" case. A channel or package that disappears strands everyone on it, and
//! a NEW channel without a single head (or with a loop) strands the whole channel.

mod report;

pub use report::{render_json, render_markdown, render_text};

use crate::catalog::channel::{ChannelGraph, Edge, EdgeKind};
use crate::catalog::model::{Bundle, Channel, DeclarativeConfig, property_type};
use semver::Version;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The whole comparison, packages sorted by name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CatalogDiff {
    /// Counts over every package.
    pub summary: Summary,
    /// One record per package that changed.
    pub packages: Vec<PackageDiff>,
    /// Format migrations (one record per direction), said once for the whole catalog instead
    /// of as a change of every bundle: opm's `bundle-object-to-csv-metadata` rewrites how a CSV
    /// is stored, not what it says.
    pub migrations: Vec<Migration>,
}

/// Counts for the summary table.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// Packages only in NEW.
    #[serde(rename = "packagesAdded")]
    pub packages_added: usize,
    /// Packages only in OLD.
    #[serde(rename = "packagesRemoved")]
    pub packages_removed: usize,
    /// Packages in both that changed.
    #[serde(rename = "packagesChanged")]
    pub packages_changed: usize,
    /// Bundles only in NEW.
    #[serde(rename = "bundlesAdded")]
    pub bundles_added: usize,
    /// Bundles only in OLD.
    #[serde(rename = "bundlesRemoved")]
    pub bundles_removed: usize,
    /// Bundles in both whose content changed.
    #[serde(rename = "bundlesChanged")]
    pub bundles_changed: usize,
    /// Upgrade-path regressions.
    pub regressions: usize,
    /// Bundles in both whose only difference is the form their CSV is stored in
    /// (`olm.bundle.object` in one, the `olm.csv.metadata` opm's migration makes from it in the
    /// other): not counted as changed, reported once in [`CatalogDiff::migrations`].
    #[serde(rename = "bundlesMigrated")]
    pub bundles_migrated: usize,
}

/// A format migration seen between the catalogs: the same CSV facts, stored differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Migration {
    /// The property type the bundles carried their CSV in, in OLD.
    pub from: String,
    /// The property type they carry it in, in NEW.
    pub to: String,
    /// How many bundles moved.
    pub bundles: usize,
}

/// Whether a package is new, gone or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    /// Only in NEW.
    Added,
    /// Only in OLD.
    Removed,
    /// In both, with changes.
    Changed,
}

/// A value before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// In OLD.
    pub old: String,
    /// In NEW.
    pub new: String,
}

/// A channel head that moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeadMove {
    /// The channel.
    pub channel: String,
    /// Head in OLD (empty when it had none).
    pub old: String,
    /// Head in NEW (empty when it has none).
    pub new: String,
}

/// An edge of one channel.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ChannelEdge {
    /// The channel.
    pub channel: String,
    /// The older bundle.
    pub from: String,
    /// The newer entry.
    pub to: String,
    /// replaces, skips, skipRange or substitutesFor.
    pub kind: EdgeKind,
}

/// A bundle in both catalogs whose content differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleChange {
    /// The bundle.
    pub name: String,
    /// What changed: `image`, `version`, `properties`, `relatedImages`, `csv`.
    pub what: Vec<String>,
    /// Image before and after, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<Change>,
    /// Version before and after, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Change>,
}

/// A deprecation reference.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DeprecationRef {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    pub schema: String,
    /// Channel or bundle name (empty for the package).
    pub name: String,
}

/// Why installed users lose their upgrade path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RegressionKind {
    /// The package is gone from NEW.
    PackageRemoved,
    /// The channel is gone from NEW.
    ChannelRemoved,
    /// The NEW channel has no single head, or loops: OLM cannot resolve it.
    ChannelInvalid,
    /// The bundle is gone and no NEW entry replaces, skips or skipRange-covers it.
    Dangling,
    /// No path leads from the bundle to the NEW head.
    NoPath,
}

/// One regression.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Regression {
    /// The kind.
    pub kind: RegressionKind,
    /// The channel (empty for a package).
    pub channel: String,
    /// The bundle users are stuck on (empty for a whole channel or package).
    pub bundle: String,
    /// What happened, in words.
    pub message: String,
}

/// Every change of one package.
#[derive(Debug, Clone, Serialize)]
pub struct PackageDiff {
    /// The package.
    pub name: String,
    /// Added, removed or changed.
    pub status: Status,
    /// The default channel, when it changed.
    #[serde(rename = "defaultChannel", skip_serializing_if = "Option::is_none")]
    pub default_channel: Option<Change>,
    /// Channels only in NEW.
    #[serde(rename = "channelsAdded")]
    pub channels_added: Vec<String>,
    /// Channels only in OLD.
    #[serde(rename = "channelsRemoved")]
    pub channels_removed: Vec<String>,
    /// Heads that moved in channels of both.
    #[serde(rename = "headMoves")]
    pub head_moves: Vec<HeadMove>,
    /// Edges only in NEW (channels of both).
    #[serde(rename = "edgesAdded")]
    pub edges_added: Vec<ChannelEdge>,
    /// Edges only in OLD (channels of both).
    #[serde(rename = "edgesRemoved")]
    pub edges_removed: Vec<ChannelEdge>,
    /// Bundles only in NEW.
    #[serde(rename = "bundlesAdded")]
    pub bundles_added: Vec<String>,
    /// Bundles only in OLD.
    #[serde(rename = "bundlesRemoved")]
    pub bundles_removed: Vec<String>,
    /// Bundles of both whose content changed.
    #[serde(rename = "bundlesChanged")]
    pub bundles_changed: Vec<BundleChange>,
    /// Bundles of both that only moved between CSV forms (counted in the catalog's migrations).
    #[serde(skip)]
    bundles_migrated: Vec<(&'static str, &'static str)>,
    /// Deprecations only in NEW.
    #[serde(rename = "deprecationsAdded")]
    pub deprecations_added: Vec<DeprecationRef>,
    /// Deprecations only in OLD.
    #[serde(rename = "deprecationsRemoved")]
    pub deprecations_removed: Vec<DeprecationRef>,
    /// Installed versions that lose their upgrade path.
    pub regressions: Vec<Regression>,
}

impl PackageDiff {
    fn new(name: &str, status: Status) -> Self {
        PackageDiff {
            name: name.to_string(),
            status,
            default_channel: None,
            channels_added: vec![],
            channels_removed: vec![],
            head_moves: vec![],
            edges_added: vec![],
            edges_removed: vec![],
            bundles_added: vec![],
            bundles_removed: vec![],
            bundles_changed: vec![],
            bundles_migrated: vec![],
            deprecations_added: vec![],
            deprecations_removed: vec![],
            regressions: vec![],
        }
    }

    /// Whether anything at all changed.
    pub fn is_empty(&self) -> bool {
        self.status == Status::Changed
            && self.default_channel.is_none()
            && self.channels_added.is_empty()
            && self.channels_removed.is_empty()
            && self.head_moves.is_empty()
            && self.edges_added.is_empty()
            && self.edges_removed.is_empty()
            && self.bundles_added.is_empty()
            && self.bundles_removed.is_empty()
            && self.bundles_changed.is_empty()
            && self.deprecations_added.is_empty()
            && self.deprecations_removed.is_empty()
            && self.regressions.is_empty()
    }
}

impl CatalogDiff {
    /// Whether the catalogs differ at all.
    pub fn has_changes(&self) -> bool {
        !self.packages.is_empty()
    }

    /// Whether some installed version loses its upgrade path.
    pub fn has_regressions(&self) -> bool {
        self.summary.regressions > 0
    }
}

/// One package of a catalog, indexed.
struct Pkg<'a> {
    default_channel: &'a str,
    channels: BTreeMap<&'a str, &'a Channel>,
    bundles: BTreeMap<&'a str, &'a Bundle>,
    deprecations: BTreeSet<DeprecationRef>,
}

fn index(cfg: &DeclarativeConfig) -> BTreeMap<&str, Pkg<'_>> {
    let mut out: BTreeMap<&str, Pkg<'_>> = BTreeMap::new();
    let blank = || Pkg {
        default_channel: "",
        channels: BTreeMap::new(),
        bundles: BTreeMap::new(),
        deprecations: BTreeSet::new(),
    };
    for p in &cfg.packages {
        out.entry(p.name.as_str())
            .or_insert_with(blank)
            .default_channel = &p.default_channel;
    }
    for c in &cfg.channels {
        out.entry(c.package.as_str())
            .or_insert_with(blank)
            .channels
            .entry(c.name.as_str())
            .or_insert(c);
    }
    for b in &cfg.bundles {
        out.entry(b.package.as_str())
            .or_insert_with(blank)
            .bundles
            .entry(b.name.as_str())
            .or_insert(b);
    }
    for d in &cfg.deprecations {
        let pkg = out.entry(d.package.as_str()).or_insert_with(blank);
        for e in &d.entries {
            pkg.deprecations.insert(DeprecationRef {
                schema: e.reference.schema.clone(),
                name: e.reference.name.clone(),
            });
        }
    }
    out.remove("");
    out
}

impl Pkg<'_> {
    fn versions(&self) -> HashMap<&str, Version> {
        self.bundles
            .iter()
            .filter_map(|(n, b)| b.version().map(|v| (*n, v)))
            .collect()
    }

    fn graph<'s>(&'s self, c: &'s Channel, versions: &HashMap<&str, Version>) -> ChannelGraph<'s> {
        ChannelGraph::new(c, |n| versions.get(n).cloned())
            .with_substitutes(self.bundles.values().copied())
    }
}

/// Compares two catalogs.
pub fn diff(old: &DeclarativeConfig, new: &DeclarativeConfig) -> CatalogDiff {
    let (o, n) = (index(old), index(new));
    let names: BTreeSet<&str> = o.keys().chain(n.keys()).copied().collect();
    let mut out = CatalogDiff::default();
    for name in names {
        let d = match (o.get(name), n.get(name)) {
            (Some(op), None) => {
                let mut d = PackageDiff::new(name, Status::Removed);
                d.bundles_removed = op.bundles.keys().map(|s| s.to_string()).collect();
                d.channels_removed = op.channels.keys().map(|s| s.to_string()).collect();
                d.regressions.push(Regression {
                    kind: RegressionKind::PackageRemoved,
                    channel: String::new(),
                    bundle: String::new(),
                    message: format!(
                        "package {name:?} is gone: every installation of it loses its updates"
                    ),
                });
                d
            }
            (None, Some(np)) => {
                let mut d = PackageDiff::new(name, Status::Added);
                d.bundles_added = np.bundles.keys().map(|s| s.to_string()).collect();
                d.channels_added = np.channels.keys().map(|s| s.to_string()).collect();
                d
            }
            (Some(op), Some(np)) => package(name, op, np),
            (None, None) => continue,
        };
        if d.is_empty() && d.bundles_migrated.is_empty() {
            continue;
        }
        let s = &mut out.summary;
        match d.status {
            Status::Added => s.packages_added += 1,
            Status::Removed => s.packages_removed += 1,
            Status::Changed if d.is_empty() => {}
            Status::Changed => s.packages_changed += 1,
        }
        s.bundles_added += d.bundles_added.len();
        s.bundles_removed += d.bundles_removed.len();
        s.bundles_changed += d.bundles_changed.len();
        s.regressions += d.regressions.len();
        for &(from, to) in &d.bundles_migrated {
            s.bundles_migrated += 1;
            match out
                .migrations
                .iter_mut()
                .find(|m| m.from == from && m.to == to)
            {
                Some(m) => m.bundles += 1,
                None => out.migrations.push(Migration {
                    from: from.to_string(),
                    to: to.to_string(),
                    bundles: 1,
                }),
            }
        }
        if d.is_empty() {
            continue;
        }
        out.packages.push(d);
    }
    out
}

fn package(name: &str, op: &Pkg<'_>, np: &Pkg<'_>) -> PackageDiff {
    let mut d = PackageDiff::new(name, Status::Changed);
    if op.default_channel != np.default_channel {
        d.default_channel = Some(Change {
            old: op.default_channel.to_string(),
            new: np.default_channel.to_string(),
        });
    }
    d.channels_added = keys_only(&np.channels, &op.channels);
    d.channels_removed = keys_only(&op.channels, &np.channels);
    d.bundles_added = keys_only(&np.bundles, &op.bundles);
    d.bundles_removed = keys_only(&op.bundles, &np.bundles);
    for (b, ob) in &op.bundles {
        if let Some(nb) = np.bundles.get(b) {
            match bundle_change(ob, nb) {
                BundleDelta::Same => {}
                BundleDelta::Migrated(from, to) => d.bundles_migrated.push((from, to)),
                BundleDelta::Changed(c, form) => {
                    d.bundles_changed.push(c);
                    d.bundles_migrated.extend(form);
                }
            }
        }
    }
    d.deprecations_added = np
        .deprecations
        .difference(&op.deprecations)
        .cloned()
        .collect();
    d.deprecations_removed = op
        .deprecations
        .difference(&np.deprecations)
        .cloned()
        .collect();

    let (ov, nv) = (op.versions(), np.versions());
    for (cname, oc) in &op.channels {
        let og = op.graph(oc, &ov);
        let Some(nc) = np.channels.get(cname) else {
            d.regressions.push(Regression {
                kind: RegressionKind::ChannelRemoved,
                channel: cname.to_string(),
                bundle: String::new(),
                message: format!(
                    "channel {cname:?} is gone: installations subscribed to it get no updates"
                ),
            });
            continue;
        };
        let ng = np.graph(nc, &nv);
        let (oh, nh) = (og.head_with_substitutes().ok(), ng.head_with_substitutes());
        let nh_name = nh.as_ref().ok().copied().unwrap_or("");
        if oh.unwrap_or("") != nh_name {
            d.head_moves.push(HeadMove {
                channel: cname.to_string(),
                old: oh.unwrap_or("").to_string(),
                new: nh_name.to_string(),
            });
        }
        let (oe, ne): (BTreeSet<Edge>, BTreeSet<Edge>) = (
            og.edges().into_iter().collect(),
            ng.edges().into_iter().collect(),
        );
        let as_channel = |e: &Edge| ChannelEdge {
            channel: cname.to_string(),
            from: e.from.clone(),
            to: e.to.clone(),
            kind: e.kind,
        };
        d.edges_added.extend(ne.difference(&oe).map(as_channel));
        d.edges_removed.extend(oe.difference(&ne).map(as_channel));
        regressions(cname, &og, oh, &ov, &ng, &mut d.regressions);
    }
    d.regressions.sort();
    d
}

/// The regressions of one channel present in both catalogs.
fn regressions(
    channel: &str,
    og: &ChannelGraph<'_>,
    old_head: Option<&str>,
    old_versions: &HashMap<&str, Version>,
    ng: &ChannelGraph<'_>,
    out: &mut Vec<Regression>,
) {
    let Some(old_head) = old_head else {
        // OLD had no valid head: nothing could upgrade before either.
        return;
    };
    let new_head = match ng.head_with_substitutes() {
        Ok(h) => h,
        Err(e) => {
            out.push(Regression {
                kind: RegressionKind::ChannelInvalid,
                channel: channel.to_string(),
                bundle: String::new(),
                message: format!(
                    "channel {channel:?} cannot be resolved in NEW ({e}): no installation on it can upgrade"
                ),
            });
            return;
        }
    };
    let could = og.reaching(old_head);
    let mut names: Vec<&str> = og.names().filter(|n| could.contains(n)).collect();
    names.sort_unstable();
    for b in names {
        let v = old_versions.get(b);
        if ng.contains(b) {
            if !ng.reaches(b, ng.version(b).or(v), new_head) {
                out.push(Regression {
                    kind: RegressionKind::NoPath,
                    channel: channel.to_string(),
                    bundle: b.to_string(),
                    message: format!(
                        "{b} had an upgrade path to {old_head} and has none to the new head {new_head}"
                    ),
                });
            }
            continue;
        }
        let next = ng.successors(b, v);
        if next.is_empty() {
            out.push(Regression {
                kind: RegressionKind::Dangling,
                channel: channel.to_string(),
                bundle: b.to_string(),
                message: format!(
                    "{b} is no longer in the channel and no entry replaces, skips or skipRange-covers it: installations of it are stranded"
                ),
            });
        } else if !next.iter().any(|s| ng.reaches(s, ng.version(s), new_head)) {
            out.push(Regression {
                kind: RegressionKind::NoPath,
                channel: channel.to_string(),
                bundle: b.to_string(),
                message: format!(
                    "{b} is no longer in the channel; it upgrades to {} but no path leads on to the new head {new_head}",
                    next.join(", ")
                ),
            });
        }
    }
}

fn keys_only<V>(a: &BTreeMap<&str, V>, b: &BTreeMap<&str, V>) -> Vec<String> {
    a.keys()
        .filter(|k| !b.contains_key(*k))
        .map(|k| k.to_string())
        .collect()
}

fn is_csv(type_: &str) -> bool {
    type_ == property_type::BUNDLE_OBJECT || type_ == property_type::CSV_METADATA
}

/// How a bundle present in both catalogs compares.
enum BundleDelta {
    /// Nothing differs.
    Same,
    /// Only the CSV's form differs (from, to): the same facts.
    Migrated(&'static str, &'static str),
    /// Content differs (and maybe the CSV's form too).
    Changed(BundleChange, Option<(&'static str, &'static str)>),
}

/// The form a bundle stores its CSV in: only `olm.bundle.object`s holding a CSV, or only
/// `olm.csv.metadata`. Anything else (both, neither) is not a form a migration produces.
fn csv_form(b: &Bundle) -> Option<&'static str> {
    let has = |t: &str| b.properties.iter().any(|p| p.type_ == t);
    match (
        has(property_type::BUNDLE_OBJECT),
        has(property_type::CSV_METADATA),
    ) {
        (true, false) if csv_of(b).is_some() => Some(property_type::BUNDLE_OBJECT),
        (false, true) => Some(property_type::CSV_METADATA),
        _ => None,
    }
}

/// The `olm.csv.metadata` facts of a bundle, as a JSON value (compared whatever the key
/// order): its own, or the one opm's `bundle-object-to-csv-metadata` migration makes from its
/// CSV.
fn csv_metadata_facts(b: &Bundle) -> Option<serde_json::Value> {
    if let Some(p) = b
        .properties
        .iter()
        .find(|p| p.type_ == property_type::CSV_METADATA)
    {
        return serde_json::from_str(p.value.get()).ok();
    }
    let metadata = crate::catalog::render::csv_metadata::csv_metadata_json(&csv_of(b)?).ok()?;
    serde_json::from_str(&metadata).ok()
}

/// The bundle's ClusterServiceVersion: the loader's `csv_json`, or (for a catalog read as
/// render reads it, which drops the decoded objects) the first `olm.bundle.object` whose data
/// is a CSV.
fn csv_of(b: &Bundle) -> Option<serde_json::Value> {
    if let Some(csv) = b.csv_json.as_deref().filter(|c| !c.is_empty()) {
        return serde_json::from_str(csv).ok();
    }
    use base64::Engine as _;
    #[derive(serde::Deserialize)]
    struct Object {
        data: String,
    }
    b.properties
        .iter()
        .filter(|p| p.type_ == property_type::BUNDLE_OBJECT)
        .filter_map(|p| serde_json::from_str::<Object>(p.value.get()).ok())
        .filter_map(|o| {
            base64::engine::general_purpose::STANDARD
                .decode(o.data.as_bytes())
                .ok()
        })
        .filter_map(|data| serde_json::from_slice::<serde_json::Value>(&data).ok())
        .find(|v| v.get("kind").and_then(|k| k.as_str()) == Some("ClusterServiceVersion"))
}

/// Whether two bundles store the same CSV facts in different forms (one side migrated).
fn migrated(o: &Bundle, n: &Bundle) -> Option<(&'static str, &'static str)> {
    let (from, to) = (csv_form(o)?, csv_form(n)?);
    if from == to {
        return None;
    }
    (csv_metadata_facts(o)? == csv_metadata_facts(n)?).then_some((from, to))
}

fn bundle_change(o: &Bundle, n: &Bundle) -> BundleDelta {
    let mut what = Vec::new();
    let image = (o.image != n.image).then(|| {
        what.push("image".to_string());
        Change {
            old: o.image.clone(),
            new: n.image.clone(),
        }
    });
    let (ov, nv) = (o.version_text(), n.version_text());
    let version = (ov != nv).then(|| {
        what.push("version".to_string());
        Change { old: ov, new: nv }
    });
    let props = |b: &Bundle, csv: bool| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = b
            .properties
            .iter()
            .filter(|p| is_csv(&p.type_) == csv && p.type_ != property_type::PACKAGE)
            .map(|p| (p.type_.clone(), normalize(p.value.get())))
            .collect();
        v.sort();
        v
    };
    if props(o, false) != props(n, false) {
        what.push("properties".to_string());
    }
    if o.related_images != n.related_images {
        what.push("relatedImages".to_string());
    }
    let mut form = None;
    if props(o, true) != props(n, true) {
        form = migrated(o, n);
        if form.is_none() {
            what.push("csv".to_string());
        }
    }
    match (what.is_empty(), form) {
        (true, None) => BundleDelta::Same,
        (true, Some((from, to))) => BundleDelta::Migrated(from, to),
        (false, form) => BundleDelta::Changed(
            BundleChange {
                name: o.name.clone(),
                what,
                image,
                version,
            },
            form,
        ),
    }
}

/// JSON text with keys sorted, so key order alone is no change.
fn normalize(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| json.to_string())
}

#[cfg(test)]
mod tests;
