//! What an index database holds, in memory, and what opm makes of it: the catalog.
//!
//! Why a model of the *tables* rather than of the catalog: opm's meaning of a legacy catalog is
//! defined by two pieces of its code, the sqlite loader (which fills the tables: channel entries
//! walked from each channel head, synthesized entries for `skips`, a package property per
//! bundle) and the conversion of those tables to a catalog (`sqlite.ToModel`, whose recursive
//! `listBundlesQuery` turns the entries back into `replaces`/`skips` edges, then
//! `declcfg.ConvertFromModel`). Keeping the rows lets both producers share one conversion:
//! [`crate::legacy::sqlite`] reads them from a database file, and the package-manifest reader
//! fills them as the loader would (the `add_*` methods mirror the loader's `INSERT`s), so both
//! print exactly what `opm render` prints.
//!
//! Columns that are nullable in the database and whose `NULL` changes the outcome are
//! `Option`s (a bundle without a `version` or `bundlepath` is skipped by opm's listing query,
//! for example); the rest are plain strings (`NULL` reads as `""`, as opm's `sql.NullString`
//! does).
//!
//! The conversion ([`IndexDb::to_declarative_config`]) reproduces operator-registry v1.73.0
//! (`pkg/sqlite/conversion.go`, `query.go`, `pkg/api/api_to_model.go`,
//! `alpha/declcfg/model_to_declcfg.go`, `alpha/action/render.go` `populateDBRelatedImages`),
//! which v1.26.5 matches on every point that reaches the output except the order of the
//! `olm.bundle.object` properties (see [`IndexDb::to_declarative_config`]).

use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, Package, Property, RelatedImage,
    SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, property_type,
};
use crate::gocompat::marshal::{get_ci, write_str};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Property type that hides a bundle from the catalog (`registry.DeprecatedType`).
pub const DEPRECATED_PROPERTY: &str = "olm.deprecated";

/// A row of `package`: opm's package with its default channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageRow {
    /// `name`, the primary key.
    pub name: String,
    /// `default_channel` (`NULL` reads as `""`, which names no channel).
    pub default_channel: String,
}

/// A row of `channel`: a channel of a package and its head bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelRow {
    /// `name`.
    pub name: String,
    /// `package_name`.
    pub package_name: String,
    /// `head_operatorbundle_name`: the channel's `currentCSV`.
    pub head_operatorbundle_name: String,
}

/// A row of `channel_entry`: one bundle's place in one channel. The loader writes one per
/// version on the `replaces` chain from the head, plus, for each name in a bundle's `skips`, a
/// dummy entry for the skipped name and a synthesized entry for the skipping bundle that
/// `replaces` it; the conversion tells the two kinds apart by reachability from the heads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelEntryRow {
    /// `entry_id`, the integer primary key (insertion order in the loader).
    pub entry_id: i64,
    /// `channel_name`.
    pub channel_name: Option<String>,
    /// `package_name`.
    pub package_name: Option<String>,
    /// `operatorbundle_name`.
    pub operatorbundle_name: Option<String>,
    /// `replaces`: the `entry_id` of the entry this one replaces.
    pub replaces: Option<i64>,
    /// `depth`: 0 for channel heads, growing along the walk.
    pub depth: Option<i64>,
}

/// A row of `operatorbundle`: one bundle (CSV) with its manifests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorBundleRow {
    /// `name`: the CSV's `metadata.name`, the primary key.
    pub name: String,
    /// `csv`: the CSV as JSON (read for the package icon).
    pub csv: Option<String>,
    /// `bundle`: every manifest of the bundle as concatenated JSON objects, CSV included.
    pub bundle: Option<String>,
    /// `bundlepath`: the bundle image (`""` for bundles loaded from folders). `None` (no
    /// column before schema 2, or `NULL`) hides the bundle, as in opm.
    pub bundlepath: Option<String>,
    /// `skiprange`: the `olm.skipRange` annotation.
    pub skiprange: Option<String>,
    /// `version`: the CSV's `spec.version`. `None` hides the bundle, as in opm.
    pub version: Option<String>,
    /// `replaces` (schema 7+): the CSV's `spec.replaces` (not used by the conversion: edges
    /// come from `channel_entry`).
    pub replaces: Option<String>,
    /// `skips` (schema 7+): the CSV's `spec.skips`, comma-separated (informational too).
    pub skips: Option<String>,
    /// `substitutesfor` (schema 11+).
    pub substitutesfor: Option<String>,
}

/// A row of `properties` or `dependencies` (schema 8/9+): a typed JSON value attached to a
/// bundle by name, version and path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundleValueRow {
    /// `type`, e.g. `olm.gvk`, `olm.package`.
    pub type_: Option<String>,
    /// `value`: JSON text.
    pub value: Option<String>,
    /// `operatorbundle_name` (the only key the conversion joins on).
    pub operatorbundle_name: Option<String>,
    /// `operatorbundle_version`.
    pub operatorbundle_version: Option<String>,
    /// `operatorbundle_path`.
    pub operatorbundle_path: Option<String>,
}

/// A row of `related_image` (schema 1+).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelatedImageRow {
    /// `image`.
    pub image: Option<String>,
    /// `operatorbundle_name`.
    pub operatorbundle_name: Option<String>,
}

/// A row of `api` (the API catalogue; kept for completeness, not read by the conversion).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiRow {
    /// `group_name`.
    pub group_name: String,
    /// `version`.
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `plural`.
    pub plural: String,
}

/// A row of `api_provider` or `api_requirer` in their schema-6 form (per bundle). Kept for
/// completeness: since schema 9 the same facts live in `properties`/`dependencies`, which are
/// what the conversion reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiBundleRow {
    /// `group_name`.
    pub group_name: String,
    /// `version`.
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `operatorbundle_name`.
    pub operatorbundle_name: String,
    /// `operatorbundle_version`.
    pub operatorbundle_version: Option<String>,
    /// `operatorbundle_path`.
    pub operatorbundle_path: Option<String>,
}

/// Everything an index database holds, table by table, in row order.
#[derive(Debug, Clone, Default)]
pub struct IndexDb {
    /// `schema_migrations.version` of the source (13 for databases of opm v1.17 and later;
    /// the model itself always has the newest shape).
    pub schema_version: i64,
    /// `package`.
    pub packages: Vec<PackageRow>,
    /// `channel`.
    pub channels: Vec<ChannelRow>,
    /// `channel_entry`.
    pub channel_entries: Vec<ChannelEntryRow>,
    /// `operatorbundle`.
    pub bundles: Vec<OperatorBundleRow>,
    /// `properties`.
    pub properties: Vec<BundleValueRow>,
    /// `dependencies`.
    pub dependencies: Vec<BundleValueRow>,
    /// `related_image`.
    pub related_images: Vec<RelatedImageRow>,
    /// `deprecated.operatorbundle_name`.
    pub deprecated: Vec<String>,
    /// `api`.
    pub apis: Vec<ApiRow>,
    /// `api_provider`.
    pub api_providers: Vec<ApiBundleRow>,
    /// `api_requirer`.
    pub api_requirers: Vec<ApiBundleRow>,
}

/// Why an index could not be converted; the messages are opm's where opm has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A listed package has no channel (`GetPackage`).
    #[error("package {0} not found")]
    PackageNotFound(String),
    /// A bundle's `bundle` column is not a sequence of JSON objects, or lacks a CSV.
    #[error("bundle {bundle:?}: {message}")]
    BundleObjects {
        /// The bundle name.
        bundle: String,
        /// What is wrong.
        message: String,
    },
    /// A bundle is listed in a package the index does not have.
    #[error("unknown package {package:?} for bundle {bundle:?}")]
    UnknownPackage {
        /// The package name.
        package: String,
        /// The bundle name.
        bundle: String,
    },
    /// A bundle is listed in a channel its package does not have.
    #[error("populate channels: unknown channel {channel:?} for bundle {bundle:?}")]
    UnknownChannel {
        /// The channel name.
        channel: String,
        /// The bundle name.
        bundle: String,
    },
    /// A property or dependency value does not parse, or the CSV's related images do not.
    #[error("populate channels: convert bundle {bundle:?}: {message}")]
    ConvertBundle {
        /// The bundle name.
        bundle: String,
        /// What is wrong.
        message: String,
    },
    /// The default channel's head cannot be read for the package icon.
    #[error("populate package icons: {0}")]
    Icon(String),
    /// opm's model validation failed (`invalid index`); one line per finding.
    #[error("invalid index:\n{}", .0.join("\n"))]
    Invalid(Vec<String>),
}

impl IndexDb {
    /// An empty index (at the newest schema), to be filled with the `add_*` methods.
    pub fn new() -> IndexDb {
        IndexDb {
            schema_version: 13,
            ..IndexDb::default()
        }
    }

    /// `insert into package(name)` (and the default channel, `update package set
    /// default_channel`), as the loader does.
    pub fn add_package(&mut self, name: &str, default_channel: &str) {
        self.packages.push(PackageRow {
            name: name.to_string(),
            default_channel: default_channel.to_string(),
        });
    }

    /// `insert into channel(name, package_name, head_operatorbundle_name)`.
    pub fn add_channel(&mut self, package: &str, name: &str, head: &str) {
        self.channels.push(ChannelRow {
            name: name.to_string(),
            package_name: package.to_string(),
            head_operatorbundle_name: head.to_string(),
        });
    }

    /// `insert into channel_entry(channel_name, package_name, operatorbundle_name, depth)`;
    /// returns the new `entry_id` (SQLite's rowid rule: one more than the largest so far).
    pub fn add_channel_entry(
        &mut self,
        package: &str,
        channel: &str,
        bundle: &str,
        depth: i64,
    ) -> i64 {
        let entry_id = self
            .channel_entries
            .iter()
            .map(|e| e.entry_id)
            .max()
            .unwrap_or(0)
            + 1;
        self.channel_entries.push(ChannelEntryRow {
            entry_id,
            channel_name: Some(channel.to_string()),
            package_name: Some(package.to_string()),
            operatorbundle_name: Some(bundle.to_string()),
            replaces: None,
            depth: Some(depth),
        });
        entry_id
    }

    /// `update channel_entry set replaces = ? where entry_id = ?`.
    pub fn set_replaces(&mut self, entry_id: i64, replaced_entry_id: i64) {
        for e in &mut self.channel_entries {
            if e.entry_id == entry_id {
                e.replaces = Some(replaced_entry_id);
            }
        }
    }

    /// `insert into operatorbundle(...)`.
    pub fn add_bundle(&mut self, bundle: OperatorBundleRow) {
        self.bundles.push(bundle);
    }

    /// `insert into properties(type, value, operatorbundle_name, operatorbundle_version,
    /// operatorbundle_path)`.
    pub fn add_property(
        &mut self,
        bundle: &str,
        version: &str,
        path: &str,
        type_: &str,
        value: &str,
    ) {
        self.properties
            .push(value_row(bundle, version, path, type_, value));
    }

    /// `insert into dependencies(...)`, the same shape as [`IndexDb::add_property`].
    pub fn add_dependency(
        &mut self,
        bundle: &str,
        version: &str,
        path: &str,
        type_: &str,
        value: &str,
    ) {
        self.dependencies
            .push(value_row(bundle, version, path, type_, value));
    }

    /// `insert into related_image(image, operatorbundle_name)`.
    pub fn add_related_image(&mut self, bundle: &str, image: &str) {
        self.related_images.push(RelatedImageRow {
            image: Some(image.to_string()),
            operatorbundle_name: Some(bundle.to_string()),
        });
    }

    /// The bundle row named `name`, if any.
    pub fn bundle(&self, name: &str) -> Option<&OperatorBundleRow> {
        self.bundles.iter().find(|b| b.name == name)
    }

    /// The catalog `opm render` prints for this index, before render's own post-processing
    /// (`crate::catalog::render::finish_config`, which every source goes through).
    ///
    /// The bundles' `objects` and `csv_json` are filled. Their `olm.bundle.object` properties
    /// are sorted by value, as v1.28 and later print them; opm v1.26 printed them in the
    /// order of the `bundle` column instead, which
    /// [`crate::catalog::render::objects_in_file_order`] restores from `objects`.
    pub fn to_declarative_config(&self) -> Result<DeclarativeConfig, ConvertError> {
        let mut model = self.initialize_packages()?;
        self.populate_channels(&mut model)?;
        self.populate_icons(&mut model)?;
        validate(&model)?;
        normalize(&mut model);
        let mut cfg = convert_from_model(&model);
        self.populate_related_images(&mut cfg);
        Ok(cfg)
    }

    /// [`IndexDb::to_declarative_config`] with the bundle objects in the order of the opm
    /// release `compat` names: `None` (no `--opm-compat`) prints them as opm v1.26 did (the
    /// order of the `bundle` column; the release of the sqlite era, whose output the shared
    /// references are), a release before 1.28 likewise, 1.28 and later sorted by value. Both
    /// producers of an index (a database, package manifests) render through this, so they
    /// follow one rule.
    pub fn render_as(
        &self,
        compat: Option<crate::catalog::OpmCompat>,
    ) -> Result<DeclarativeConfig, ConvertError> {
        let mut cfg = self.to_declarative_config()?;
        if compat.is_none_or(|c| c.objects_in_file_order()) {
            cfg.bundles
                .iter_mut()
                .for_each(crate::catalog::render::objects_in_file_order);
        }
        Ok(cfg)
    }

    /// `initializeModelPackages`: `ListPackages` then `GetPackage` for each.
    fn initialize_packages(&self) -> Result<BTreeMap<String, MPackage>, ConvertError> {
        let mut names: Vec<&str> = Vec::new();
        for p in &self.packages {
            if !names.contains(&p.name.as_str()) {
                names.push(&p.name);
            }
        }
        let mut model = BTreeMap::new();
        for name in names {
            let mut channels: Vec<&str> = Vec::new();
            let mut default_channel = String::new();
            for p in self.packages.iter().filter(|p| p.name == name) {
                for c in self.channels.iter().filter(|c| c.package_name == name) {
                    // GetPackage scans every (package, channel) row; the last row's default
                    // channel is the one kept.
                    default_channel = p.default_channel.clone();
                    if !channels.contains(&c.name.as_str()) {
                        channels.push(&c.name);
                    }
                }
            }
            if channels.is_empty() {
                return Err(ConvertError::PackageNotFound(name.to_string()));
            }
            let mut pkg = MPackage {
                name: name.to_string(),
                default_channel: None,
                icon: None,
                channels: BTreeMap::new(),
            };
            for c in channels {
                if c == default_channel {
                    pkg.default_channel = Some(c.to_string());
                }
                pkg.channels.insert(c.to_string(), BTreeMap::new());
            }
            model.insert(name.to_string(), pkg);
        }
        Ok(model)
    }

    /// `populateModelChannels`: every listed bundle, minus deprecated ones, into its channel.
    fn populate_channels(
        &self,
        model: &mut BTreeMap<String, MPackage>,
    ) -> Result<(), ConvertError> {
        'bundles: for b in self.list_bundles()? {
            for p in &b.properties {
                if p.0 == DEPRECATED_PROPERTY {
                    continue 'bundles;
                }
            }
            let Some(pkg) = model.get_mut(&b.package_name) else {
                return Err(ConvertError::UnknownPackage {
                    package: b.package_name,
                    bundle: b.csv_name,
                });
            };
            let Some(channel) = pkg.channels.get_mut(&b.channel_name) else {
                return Err(ConvertError::UnknownChannel {
                    channel: b.channel_name,
                    bundle: b.csv_name,
                });
            };
            let name = b.csv_name.clone();
            let mb = convert_api_bundle(b)?;
            channel.insert(name, mb);
        }
        Ok(())
    }

    /// `populatePackageIcons`: the first icon of the default channel head's CSV.
    fn populate_icons(&self, model: &mut BTreeMap<String, MPackage>) -> Result<(), ConvertError> {
        for pkg in model.values_mut() {
            let Some(default) = pkg.default_channel.clone() else {
                // opm dereferences the missing default channel here and crashes; the
                // validation below reports it properly instead.
                continue;
            };
            let head = self
                .channels
                .iter()
                .filter(|c| c.name == default && c.package_name == pkg.name)
                .find_map(|c| {
                    self.bundles
                        .iter()
                        .find(|b| b.name == c.head_operatorbundle_name)
                })
                .ok_or_else(|| {
                    ConvertError::Icon(format!(
                        "get default channel head for package {:?}: no entry found for {} {}",
                        pkg.name, pkg.name, default
                    ))
                })?;
            let csv_text = head.csv.as_deref().unwrap_or("");
            let csv: Value = serde_json::from_str(csv_text).map_err(|e| {
                ConvertError::Icon(format!(
                    "unmarshal CSV json for bundle {:?}: {e}",
                    head.name
                ))
            })?;
            let icons = icon_list(&csv).map_err(|e| {
                ConvertError::Icon(format!(
                    "unmarshal CSV json for bundle {:?}: {e}",
                    head.name
                ))
            })?;
            let Some((data, mediatype)) = icons.into_iter().next() else {
                continue;
            };
            let decoded =
                go_base64_decode(&data).or_else(|| go_base64_decode(&data.replace(' ', "")));
            if let Some(bytes) = decoded
                && !bytes.is_empty()
            {
                pkg.icon = Some(Icon {
                    base64data: Some(bytes),
                    mediatype,
                });
            }
        }
        Ok(())
    }

    /// `populateDBRelatedImages`: images of the `related_image` table that the CSV does not
    /// list, added with an empty name.
    fn populate_related_images(&self, cfg: &mut DeclarativeConfig) {
        let mut images: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for r in &self.related_images {
            if let (Some(img), Some(b)) = (&r.image, &r.operatorbundle_name) {
                images.entry(b.as_str()).or_default().insert(img.as_str());
            }
        }
        for b in &mut cfg.bundles {
            let Some(set) = images.get(b.name.as_str()) else {
                continue;
            };
            let listed: HashSet<&str> = b.related_images.iter().map(|r| r.image.as_str()).collect();
            let extra: Vec<RelatedImage> = set
                .iter()
                .filter(|i| !listed.contains(**i))
                .map(|i| RelatedImage {
                    name: String::new(),
                    image: i.to_string(),
                })
                .collect();
            b.related_images.extend(extra);
        }
    }

    /// opm's `ListBundles` (`listBundlesQuery` and `SendBundles`): one row per bundle and
    /// channel, with the `replaces` edge of the real chain and the `skips` of the synthesized
    /// entries, reproduced on the rows in memory.
    fn list_bundles(&self) -> Result<Vec<ApiBundle>, ConvertError> {
        let by_id: HashMap<i64, &ChannelEntryRow> = self
            .channel_entries
            .iter()
            .map(|e| (e.entry_id, e))
            .collect();
        // tip: the smallest depth of all entries; replaces_entry: the entries reachable from
        // the entries at that depth by following `replaces` (a UNION, so cycles end).
        let tip = self.channel_entries.iter().filter_map(|e| e.depth).min();
        let mut reachable: BTreeSet<(i64, Option<i64>)> = BTreeSet::new();
        let mut queue: Vec<(i64, Option<i64>)> = self
            .channel_entries
            .iter()
            .filter(|e| tip.is_some() && e.depth == tip)
            .map(|e| (e.entry_id, e.replaces))
            .collect();
        while let Some(item) = queue.pop() {
            if !reachable.insert(item) {
                continue;
            }
            if let Some(next) = item.1.and_then(|r| by_id.get(&r)) {
                queue.push((next.entry_id, next.replaces));
            }
        }
        let reachable_ids: HashMap<i64, Option<i64>> = reachable.iter().copied().collect();

        // replaces_bundle: per (bundle, package, channel), the smallest entry id and the
        // greatest name among the bundles its reachable entries replace.
        type Key = (Option<String>, Option<String>, Option<String>);
        let mut groups: BTreeMap<Key, (i64, Option<String>)> = BTreeMap::new();
        let mut group_order: Vec<Key> = Vec::new();
        for e in &self.channel_entries {
            let key = (
                e.operatorbundle_name.clone(),
                e.package_name.clone(),
                e.channel_name.clone(),
            );
            let replaced = reachable_ids
                .get(&e.entry_id)
                .copied()
                .flatten()
                .and_then(|r| by_id.get(&r))
                .and_then(|r| r.operatorbundle_name.clone());
            match groups.get_mut(&key) {
                Some((min_id, max_name)) => {
                    *min_id = (*min_id).min(e.entry_id);
                    if let Some(name) = replaced
                        && max_name
                            .as_ref()
                            .is_none_or(|m| name.as_bytes() > m.as_bytes())
                    {
                        *max_name = Some(name);
                    }
                }
                None => {
                    group_order.push(key.clone());
                    groups.insert(key, (e.entry_id, replaced));
                }
            }
        }

        // skips_entry: entries with a `replaces` that the walk from the tips did not reach
        // (the synthesized ones), in (entry_id, replaces) order as SQLite's EXCEPT yields them;
        // skips_bundle: the skipped names joined with "," per (bundle, package, channel).
        let mut skips: HashMap<(String, String, String), Vec<String>> = HashMap::new();
        let mut skip_rows: Vec<(i64, i64)> = self
            .channel_entries
            .iter()
            .filter_map(|e| e.replaces.map(|r| (e.entry_id, r)))
            .filter(|(id, r)| !reachable.contains(&(*id, Some(*r))))
            .collect();
        skip_rows.sort_unstable();
        skip_rows.dedup();
        for (id, r) in skip_rows {
            let (Some(entry), Some(skipped)) = (by_id.get(&id), by_id.get(&r)) else {
                continue;
            };
            let (Some(b), Some(p), Some(c)) = (
                &entry.operatorbundle_name,
                &entry.package_name,
                &entry.channel_name,
            ) else {
                continue;
            };
            let list = skips.entry((b.clone(), p.clone(), c.clone())).or_default();
            if let Some(name) = &skipped.operatorbundle_name {
                list.push(name.clone());
            }
        }

        let bundles: HashMap<&str, &OperatorBundleRow> =
            self.bundles.iter().map(|b| (b.name.as_str(), b)).collect();
        let merged_properties = merged_values(&self.properties);
        let merged_dependencies = merged_values(&self.dependencies);

        let mut out = Vec::new();
        for key in group_order {
            let Some((_, replaces)) = groups.get(&key) else {
                continue;
            };
            let (Some(bundle_name), package, Some(channel)) = &key else {
                continue;
            };
            let Some(ob) = bundles.get(bundle_name.as_str()) else {
                continue;
            };
            let (Some(version), Some(bundlepath)) = (&ob.version, &ob.bundlepath) else {
                continue;
            };
            let mut api = match ob.bundle.as_deref() {
                Some(text) if !text.is_empty() => {
                    bundle_string_to_api_bundle(text).map_err(|message| {
                        ConvertError::BundleObjects {
                            bundle: ob.name.clone(),
                            message,
                        }
                    })?
                }
                _ => ApiBundle::default(),
            };
            api.csv_name = ob.name.clone();
            api.package_name = package.clone().unwrap_or_default();
            api.channel_name = channel.clone();
            api.bundle_path = bundlepath.clone();
            api.version = version.clone();
            api.skip_range = ob.skiprange.clone().unwrap_or_default();
            api.replaces = replaces.clone().unwrap_or_default();
            if let Some(p) = package
                && let Some(list) = skips.get(&(bundle_name.clone(), p.clone(), channel.clone()))
                && !list.is_empty()
            {
                api.skips = list.join(",").split(',').map(str::to_string).collect();
            }
            if let Some(deps) = merged_dependencies.get(ob.name.as_str()) {
                api.dependencies = unique(deps.clone());
            }
            if let Some(props) = merged_properties.get(ob.name.as_str()) {
                api.properties = unique(props.clone());
            }
            out.push(api);
        }
        Ok(out)
    }
}

fn value_row(bundle: &str, version: &str, path: &str, type_: &str, value: &str) -> BundleValueRow {
    BundleValueRow {
        type_: Some(type_.to_string()),
        value: Some(value.to_string()),
        operatorbundle_name: Some(bundle.to_string()),
        operatorbundle_version: Some(version.to_string()),
        operatorbundle_path: Some(path.to_string()),
    }
}

/// `json_group_array(json_object('type', …, 'value', …))` grouped by bundle name, decoded:
/// `NULL` type or value reads as `""`.
fn merged_values(rows: &[BundleValueRow]) -> HashMap<&str, Vec<(String, String)>> {
    let mut out: HashMap<&str, Vec<(String, String)>> = HashMap::new();
    for r in rows {
        let Some(name) = r.operatorbundle_name.as_deref() else {
            continue;
        };
        out.entry(name).or_default().push((
            r.type_.clone().unwrap_or_default(),
            r.value.clone().unwrap_or_default(),
        ));
    }
    out
}

/// `uniqueDeps`/`uniqueProps`: the first of each type/value pair.
fn unique(list: Vec<(String, String)>) -> Vec<(String, String)> {
    if list.len() <= 1 {
        return list;
    }
    let mut seen = HashSet::new();
    list.into_iter()
        .filter(|(t, v)| seen.insert(format!("{t}/{v}")))
        .collect()
}

/// opm's `api.Bundle`, the fields the conversion reads.
#[derive(Debug, Default)]
struct ApiBundle {
    csv_name: String,
    package_name: String,
    channel_name: String,
    csv_json: String,
    objects: Vec<String>,
    bundle_path: String,
    version: String,
    skip_range: String,
    replaces: String,
    skips: Vec<String>,
    dependencies: Vec<(String, String)>,
    properties: Vec<(String, String)>,
}

/// `BundleStringToAPIBundle`: the `bundle` column split into its JSON values (each kept
/// byte for byte), and the first ClusterServiceVersion among them.
fn bundle_string_to_api_bundle(text: &str) -> Result<ApiBundle, String> {
    let objects = split_json_values(text)?;
    let mut out = ApiBundle::default();
    for o in &objects {
        let v: Value = serde_json::from_str(o).map_err(|e| e.to_string())?;
        let Some(map) = v.as_object() else {
            return Err(format!("cannot unmarshal {} into an object", kind_of(&v)));
        };
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind.is_empty() {
            return Err(format!("Object 'Kind' is missing in '{}'", truncate(o)));
        }
        if kind == "ClusterServiceVersion" {
            out.csv_name = map
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            out.csv_json = o.clone();
            break;
        }
    }
    if out.csv_name.is_empty() {
        return Err("no csv in bundle".to_string());
    }
    out.objects = objects;
    Ok(out)
}

fn truncate(s: &str) -> String {
    if s.len() <= 80 {
        return s.to_string();
    }
    let mut end = 80;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `json.Decoder` over concatenated JSON values: each value's exact text. Stops, as `More`
/// does, at the end or at a closing bracket.
fn split_json_values(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut stream =
        serde_json::Deserializer::from_str(text).into_iter::<&serde_json::value::RawValue>();
    loop {
        let rest = text[stream.byte_offset()..].trim_start_matches([' ', '\t', '\n', '\r']);
        if rest.is_empty() || rest.starts_with(']') || rest.starts_with('}') {
            break;
        }
        match stream.next() {
            Some(Ok(raw)) => out.push(raw.get().to_string()),
            Some(Err(e)) => return Err(e.to_string()),
            None => break,
        }
    }
    Ok(out)
}

/// Reads `spec.icon` as opm's typed CSV does: a list of `{base64data, mediatype}`.
fn icon_list(csv: &Value) -> Result<Vec<(String, String)>, String> {
    if !csv.is_object() {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type v1alpha1.ClusterServiceVersion",
            kind_of(csv)
        ));
    }
    let Some(spec) = get_ci(csv, "spec").filter(|s| !s.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(icons) = get_ci(spec, "icon").filter(|s| !s.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(list) = icons.as_array() else {
        return Err(format!(
            "json: cannot unmarshal {} into Go struct field ClusterServiceVersionSpec.spec.icon of type []v1alpha1.Icon",
            kind_of(icons)
        ));
    };
    let mut out = Vec::new();
    for icon in list {
        let field = |name: &str| -> Result<String, String> {
            match get_ci(icon, name) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!(
                    "json: cannot unmarshal {} into Go struct field Icon.spec.icon.{name} of type string",
                    kind_of(other)
                )),
            }
        };
        if icon.is_null() {
            out.push((String::new(), String::new()));
            continue;
        }
        if !icon.is_object() {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field ClusterServiceVersionSpec.spec.icon of type v1alpha1.Icon",
                kind_of(icon)
            ));
        }
        out.push((field("base64data")?, field("mediatype")?));
    }
    Ok(out)
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, `\r` and `\n` ignored.
fn go_base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let cleaned: String = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    base64::engine::general_purpose::STANDARD
        .decode(cleaned)
        .ok()
}

/// A property as (type, JSON value).
type TypedValue = (String, String);

/// opm's `model.Package`, reduced to what reaches the output.
#[derive(Debug)]
struct MPackage {
    name: String,
    default_channel: Option<String>,
    icon: Option<Icon>,
    /// Channel name → bundle name → bundle.
    channels: BTreeMap<String, BTreeMap<String, MBundle>>,
}

/// opm's `model.Bundle`.
#[derive(Debug, Clone)]
struct MBundle {
    name: String,
    package: String,
    image: String,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
    /// (type, compact JSON value).
    properties: Vec<(String, String)>,
    related_images: Vec<RelatedImage>,
    objects: Vec<String>,
    csv_json: String,
}

/// `api.ConvertAPIBundleToModelBundle`.
fn convert_api_bundle(b: ApiBundle) -> Result<MBundle, ConvertError> {
    let fail = |message: String| ConvertError::ConvertBundle {
        bundle: b.csv_name.clone(),
        message,
    };
    let properties = model_properties(&b).map_err(|e| fail(format!("convert properties: {e}")))?;
    let related_images = csv_related_images(&b.csv_json)
        .map_err(|e| fail(format!("get related iamges: unmarshal csv: {e}")))?;
    Ok(MBundle {
        name: b.csv_name,
        package: b.package_name,
        image: b.bundle_path,
        replaces: b.replaces,
        skips: b.skips,
        skip_range: b.skip_range,
        properties,
        related_images,
        objects: b.objects,
        csv_json: b.csv_json,
    })
}

/// `convertAPIBundleToModelProperties`: GVKs (provided and required) rebuilt and
/// deduplicated, `olm.package` dependencies turned into `olm.package.required`, other
/// dependency types dropped, an `olm.package` added if missing, one `olm.bundle.object` per
/// manifest; all sorted by type then value.
fn model_properties(b: &ApiBundle) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut provided: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut required: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut found_package = false;
    for (i, (t, v)) in b.properties.iter().enumerate() {
        match t.as_str() {
            property_type::GVK => {
                provided.insert(parse_gvk(v).map_err(|e| parse_error(i, t, &e))?);
            }
            property_type::PACKAGE => {
                found_package = true;
                out.push((t.clone(), v.clone()));
            }
            _ => out.push((t.clone(), v.clone())),
        }
    }
    for (i, (t, v)) in b.dependencies.iter().enumerate() {
        match t.as_str() {
            property_type::GVK => {
                required.insert(parse_gvk(v).map_err(|e| parse_error(i, t, &e))?);
            }
            property_type::PACKAGE => {
                let (name, version) = parse_package(v).map_err(|e| parse_error(i, t, &e))?;
                out.push((
                    property_type::PACKAGE_REQUIRED.to_string(),
                    json_object(&[("packageName", &name), ("versionRange", &version)]),
                ));
            }
            _ => {}
        }
    }
    if !found_package {
        out.push((
            property_type::PACKAGE.to_string(),
            json_object(&[("packageName", &b.package_name), ("version", &b.version)]),
        ));
    }
    for (g, v, k) in provided {
        out.push((
            property_type::GVK.to_string(),
            json_object(&[("group", &g), ("kind", &k), ("version", &v)]),
        ));
    }
    for (g, v, k) in required {
        out.push((
            property_type::GVK_REQUIRED.to_string(),
            json_object(&[("group", &g), ("kind", &k), ("version", &v)]),
        ));
    }
    for o in &b.objects {
        out.push((property_type::BUNDLE_OBJECT.to_string(), bundle_object(o)));
    }
    out.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    Ok(out)
}

fn parse_error(i: usize, t: &str, e: &str) -> String {
    format!("parse property[{i}] of type {t:?}: {e}")
}

/// `{"data":"<base64>"}` of one manifest's exact text.
fn bundle_object(o: &str) -> String {
    use base64::Engine as _;
    format!(
        "{{\"data\":\"{}\"}}",
        base64::engine::general_purpose::STANDARD.encode(o.as_bytes())
    )
}

/// A compact JSON object of string fields in the given order (Go `json.Marshal` of a struct,
/// HTML escaping off).
fn json_object(fields: &[(&str, &str)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(&mut out, k, false);
        out.push(':');
        write_str(&mut out, v, false);
    }
    out.push('}');
    out
}

/// A string field of a Go struct decoded from JSON: absent or `null` is `""`.
fn string_field(v: &Value, name: &str, go_type: &str) -> Result<String, String> {
    match get_ci(v, name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field {go_type}.{name} of type string",
            kind_of(other)
        )),
    }
}

fn decode_object(text: &str, go_type: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match v {
        Value::Object(_) | Value::Null => Ok(v),
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type {go_type}",
            kind_of(&other)
        )),
    }
}

/// A GVK value as (group, version, kind).
fn parse_gvk(text: &str) -> Result<(String, String, String), String> {
    let v = decode_object(text, "api.GroupVersionKind")?;
    Ok((
        string_field(&v, "group", "GroupVersionKind")?,
        string_field(&v, "version", "GroupVersionKind")?,
        string_field(&v, "kind", "GroupVersionKind")?,
    ))
}

/// An `olm.package` value as (packageName, version).
fn parse_package(text: &str) -> Result<(String, String), String> {
    let v = decode_object(text, "property.Package")?;
    Ok((
        string_field(&v, "packageName", "Package")?,
        string_field(&v, "version", "Package")?,
    ))
}

/// `getRelatedImages`: the CSV's `spec.relatedImages` as written.
fn csv_related_images(csv_json: &str) -> Result<Vec<RelatedImage>, String> {
    if csv_json.is_empty() {
        return Ok(Vec::new());
    }
    let v = decode_object(csv_json, "api.csv")?;
    let Some(spec) = get_ci(&v, "spec").filter(|s| !s.is_null()) else {
        return Ok(Vec::new());
    };
    if !spec.is_object() {
        return Err(format!(
            "json: cannot unmarshal {} into Go struct field csv.spec of type struct",
            kind_of(spec)
        ));
    }
    let Some(list) = get_ci(spec, "relatedImages").filter(|s| !s.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(format!(
            "json: cannot unmarshal {} into Go struct field .spec.relatedImages",
            kind_of(list)
        ));
    };
    let mut out = Vec::new();
    for ri in list {
        if ri.is_null() {
            out.push(RelatedImage {
                name: String::new(),
                image: String::new(),
            });
            continue;
        }
        if !ri.is_object() {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field .spec.relatedImages",
                kind_of(ri)
            ));
        }
        out.push(RelatedImage {
            name: string_field(ri, "name", "relatedImages")?,
            image: string_field(ri, "image", "relatedImages")?,
        });
    }
    Ok(out)
}

/// `model.Validate` (opm v1.26), flattened: one line per finding, in a stable order.
fn validate(model: &BTreeMap<String, MPackage>) -> Result<(), ConvertError> {
    let mut errors = Vec::new();
    for pkg in model.values() {
        let at = format!("invalid package {:?}", pkg.name);
        if pkg.name.is_empty() {
            errors.push(format!("{at}: package name must not be empty"));
        }
        match &pkg.default_channel {
            None => errors.push(format!("{at}: default channel must be set")),
            Some(d) if !pkg.channels.contains_key(d) => errors.push(format!(
                "{at}: default channel {d:?} not found in channels list"
            )),
            Some(_) => {}
        }
        if pkg.channels.is_empty() {
            errors.push(format!("{at}: package must contain at least one channel"));
        }
        for (name, bundles) in &pkg.channels {
            let at = format!("{at}: invalid channel {name:?}");
            if name.is_empty() {
                errors.push(format!("{at}: channel name must not be empty"));
            }
            if bundles.is_empty() {
                errors.push(format!("{at}: channel must contain at least one bundle"));
            } else if let Err(e) = validate_replaces_chain(bundles) {
                errors.push(format!("{at}: {e}"));
            }
            for b in bundles.values() {
                let at = format!("{at}: invalid bundle {:?}", b.name);
                if b.name.is_empty() {
                    errors.push(format!("{at}: name must be set"));
                }
                if b.package != pkg.name {
                    errors.push(format!("{at}: package does not match channel's package"));
                }
                for (i, skip) in b.skips.iter().enumerate() {
                    if skip.is_empty() {
                        errors.push(format!("{at}: skip[{i}] is empty"));
                    }
                }
                let mut packages = 0;
                let mut parse_failed = false;
                for (i, (t, v)) in b.properties.iter().enumerate() {
                    match serde_json::from_str::<Value>(v) {
                        Ok(value) => {
                            if t == property_type::PACKAGE {
                                if value.is_object() || value.is_null() {
                                    packages += 1;
                                } else {
                                    errors.push(format!(
                                        "{at}: {}",
                                        parse_error(i, t, "json: cannot unmarshal into Go value of type property.Package")
                                    ));
                                    parse_failed = true;
                                }
                            }
                        }
                        Err(e) => {
                            errors.push(format!("{at}: {}", parse_error(i, t, &e.to_string())));
                            parse_failed = true;
                        }
                    }
                }
                if !parse_failed && packages != 1 {
                    errors.push(format!(
                        "{at}: must be exactly one property with type \"olm.package\""
                    ));
                }
                if b.image.is_empty() && b.objects.is_empty() {
                    errors.push(format!("{at}: bundle image must be set"));
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ConvertError::Invalid(errors))
    }
}

/// `Channel.validateReplacesChain`: one head, no cycle, nothing stranded.
fn validate_replaces_chain(bundles: &BTreeMap<String, MBundle>) -> Result<(), String> {
    let mut incoming: HashSet<&str> = HashSet::new();
    for b in bundles.values() {
        if !b.replaces.is_empty() {
            incoming.insert(&b.replaces);
        }
        for s in &b.skips {
            incoming.insert(s);
        }
    }
    let heads: Vec<&str> = bundles
        .values()
        .filter(|b| !incoming.contains(b.name.as_str()))
        .map(|b| b.name.as_str())
        .collect();
    let head = match heads.as_slice() {
        [] => return Err("no channel head found in graph".into()),
        [one] => *one,
        many => {
            return Err(format!(
                "multiple channel heads found in graph: {}",
                many.join(", ")
            ));
        }
    };
    let mut chain: Vec<&str> = vec![head];
    let mut on_chain: HashSet<&str> = HashSet::from([head]);
    let mut cur = bundles.get(head);
    while let Some(b) = cur {
        if on_chain.contains(b.replaces.as_str()) {
            let from = chain.iter().position(|n| *n == b.replaces).unwrap_or(0);
            let mut cycle: Vec<&str> = chain[from..].to_vec();
            cycle.push(&b.replaces);
            return Err(format!(
                "detected cycle in replaces chain of upgrade graph: {}",
                cycle.join(" -> ")
            ));
        }
        on_chain.insert(&b.replaces);
        chain.push(&b.replaces);
        cur = bundles.get(&b.replaces);
    }
    let skipped: HashSet<&str> = bundles
        .values()
        .flat_map(|b| b.skips.iter().map(String::as_str))
        .collect();
    let stranded: Vec<&str> = bundles
        .keys()
        .map(String::as_str)
        .filter(|n| !on_chain.contains(n) && !skipped.contains(n))
        .collect();
    if !stranded.is_empty() {
        return Err(format!(
            "channel contains one or more stranded bundles: {}",
            stranded.join(", ")
        ));
    }
    Ok(())
}

/// `model.Normalize`: property values re-encoded compactly (values that are not JSON are left
/// as they are).
fn normalize(model: &mut BTreeMap<String, MPackage>) {
    for pkg in model.values_mut() {
        for bundles in pkg.channels.values_mut() {
            for b in bundles.values_mut() {
                for (_, v) in &mut b.properties {
                    if let Some(c) = compact_json(v) {
                        *v = c;
                    }
                }
            }
        }
    }
}

/// Go's `json.Compact` (HTML escaping off): insignificant whitespace removed, everything else
/// byte for byte; `None` when `text` is not one JSON value.
pub fn compact_json(text: &str) -> Option<String> {
    serde_json::from_str::<&serde_json::value::RawValue>(text).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    Some(out)
}

/// `declcfg.ConvertFromModel`: packages, channels and bundles sorted by name, each channel's
/// entries sorted by name, each bundle's properties merged over its channels, deduplicated
/// and sorted by type then value.
fn convert_from_model(model: &BTreeMap<String, MPackage>) -> DeclarativeConfig {
    let mut cfg = DeclarativeConfig::default();
    for pkg in model.values() {
        cfg.packages.push(Package {
            schema: SCHEMA_PACKAGE.to_string(),
            name: pkg.name.clone(),
            default_channel: pkg.default_channel.clone().unwrap_or_default(),
            icon: pkg.icon.clone(),
            description: String::new(),
            properties: Vec::new(),
            origin: Default::default(),
        });
        let mut bundles: BTreeMap<&str, (MBundle, Vec<TypedValue>)> = BTreeMap::new();
        for (name, chb) in &pkg.channels {
            let mut entries: Vec<ChannelEntry> = chb
                .values()
                .map(|b| ChannelEntry {
                    name: b.name.clone(),
                    replaces: b.replaces.clone(),
                    skips: b.skips.clone(),
                    skip_range: b.skip_range.clone(),
                    origin: Default::default(),
                })
                .collect();
            entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            cfg.channels.push(Channel {
                schema: SCHEMA_CHANNEL.to_string(),
                name: name.clone(),
                package: pkg.name.clone(),
                entries: Some(entries),
                properties: Vec::new(),
                origin: Default::default(),
            });
            for b in chb.values() {
                bundles
                    .entry(b.name.as_str())
                    .or_insert_with(|| (b.clone(), Vec::new()))
                    .1
                    .extend(b.properties.iter().cloned());
            }
        }
        for (_, (b, props)) in bundles {
            let mut seen = HashSet::new();
            let mut props: Vec<(String, String)> = props
                .into_iter()
                .filter(|p| seen.insert(p.clone()))
                .collect();
            props.sort_by(|a, b| {
                a.0.cmp(&b.0)
                    .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
            });
            // Validation parsed every value as JSON, so none is dropped here.
            let properties = props
                .into_iter()
                .filter_map(|(t, v)| Property::new(t, v).ok())
                .collect();
            cfg.bundles.push(Bundle {
                schema: SCHEMA_BUNDLE.to_string(),
                name: b.name.clone(),
                package: b.package.clone(),
                image: b.image.clone(),
                properties,
                related_images: b.related_images.clone(),
                objects: b.objects.clone(),
                csv_json: if b.csv_json.is_empty() {
                    None
                } else {
                    Some(b.csv_json.clone())
                },
                origin: Default::default(),
            });
        }
    }
    cfg.channels.sort_by(|a, b| {
        a.package
            .as_bytes()
            .cmp(b.package.as_bytes())
            .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
    });
    cfg.bundles.sort_by(|a, b| {
        a.package
            .as_bytes()
            .cmp(b.package.as_bytes())
            .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
    });
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(name: &str, version: &str) -> String {
        format!(
            r#"{{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{{"name":"{name}"}},"spec":{{"version":"{version}","relatedImages":[{{"name":"op","image":"quay.io/x/op:{version}"}}]}}}}"#
        )
    }

    fn bundle(db: &mut IndexDb, name: &str, version: &str) {
        let c = csv(name, version);
        db.add_bundle(OperatorBundleRow {
            name: name.into(),
            csv: Some(c.clone()),
            bundle: Some(format!(
                r#"{{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1"}}{c}"#
            )),
            bundlepath: Some(String::new()),
            version: Some(version.into()),
            ..Default::default()
        });
        db.add_property(
            name,
            version,
            "",
            "olm.package",
            &format!(r#"{{"packageName":"p","version":"{version}"}}"#),
        );
    }

    /// The loader's rows for channel `stable`: head b3 (skips b1x), replaces b2, replaces b1.
    fn sample() -> IndexDb {
        let mut db = IndexDb::new();
        for (n, v) in [("b1", "1.0.0"), ("b2", "2.0.0"), ("b3", "3.0.0")] {
            bundle(&mut db, n, v);
        }
        db.add_package("p", "stable");
        db.add_channel("p", "stable", "b3");
        let head = db.add_channel_entry("p", "stable", "b3", 0);
        let skipped = db.add_channel_entry("p", "stable", "b1x", 1);
        let synth = db.add_channel_entry("p", "stable", "b3", 1);
        db.set_replaces(synth, skipped);
        let e2 = db.add_channel_entry("p", "stable", "b2", 2);
        db.set_replaces(head, e2);
        let e1 = db.add_channel_entry("p", "stable", "b1", 3);
        db.set_replaces(e2, e1);
        db.add_related_image("b3", "quay.io/x/extra:1");
        db
    }

    #[test]
    fn edges_come_from_the_entries() {
        let cfg = sample().to_declarative_config().unwrap();
        assert_eq!(cfg.packages.len(), 1);
        assert_eq!(cfg.packages[0].default_channel, "stable");
        let entries = cfg.channels[0].entries.as_ref().unwrap();
        let names: Vec<(&str, &str, Vec<String>)> = entries
            .iter()
            .map(|e| (e.name.as_str(), e.replaces.as_str(), e.skips.clone()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("b1", "", vec![]),
                ("b2", "b1", vec![]),
                ("b3", "b2", vec!["b1x".to_string()]),
            ]
        );
        let b3 = cfg.bundles.iter().find(|b| b.name == "b3").unwrap();
        assert_eq!(b3.image, "");
        assert_eq!(b3.objects.len(), 2);
        let types: Vec<&str> = b3.properties.iter().map(|p| p.type_.as_str()).collect();
        assert_eq!(
            types,
            vec!["olm.bundle.object", "olm.bundle.object", "olm.package"]
        );
        let images: Vec<&str> = b3.related_images.iter().map(|r| r.image.as_str()).collect();
        assert_eq!(images, vec!["quay.io/x/op:3.0.0", "quay.io/x/extra:1"]);
    }

    #[test]
    fn deprecated_bundles_and_missing_versions_are_left_out() {
        let mut db = sample();
        db.add_property("b1", "1.0.0", "", DEPRECATED_PROPERTY, "{}");
        let cfg = db.to_declarative_config().unwrap();
        assert!(cfg.bundles.iter().all(|b| b.name != "b1"));
        let mut db = sample();
        db.bundles.iter_mut().for_each(|b| {
            if b.name == "b2" {
                b.version = None;
            }
        });
        // b2 vanishes, leaving b1 a second head: opm's validation refuses the index.
        let err = db.to_declarative_config().unwrap_err().to_string();
        assert!(
            err.contains("multiple channel heads found in graph: b1, b3"),
            "{err}"
        );
    }

    #[test]
    fn missing_default_channel_is_an_error() {
        let mut db = sample();
        db.packages[0].default_channel = String::new();
        let err = db.to_declarative_config().unwrap_err().to_string();
        assert!(err.contains("default channel must be set"), "{err}");
    }

    #[test]
    fn json_values_split_byte_for_byte() {
        let parts = split_json_values("{\"a\": 1} \n{\"b\":[2, 3]}").unwrap();
        assert_eq!(parts, vec!["{\"a\": 1}", "{\"b\":[2, 3]}"]);
        assert!(split_json_values("{\"a\": ").is_err());
        assert_eq!(
            compact_json("{ \"a\" : [1, \"x y\"] }").unwrap(),
            "{\"a\":[1,\"x y\"]}"
        );
    }
}
