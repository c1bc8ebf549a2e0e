//! The tables read back as opm's query layer reads them (`sqlite.ToModel`: `ListPackages`,
//! `GetPackage`, the recursive `listBundlesQuery`, `BundleStringToAPIBundle`) and the whole
//! conversion to a catalog ([`IndexDb::to_declarative_config`]).

use super::api_bundle::*;
use super::{check::*, model::*, tables::*, to_fbc::*};
use crate::catalog::model::{DeclarativeConfig, Icon, RelatedImage};
use crate::gocompat::marshal::get_ci;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

impl IndexDb {
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
        if kind == crate::bundle::csv_json::KIND {
            out.csv_name = crate::bundle::CsvJson::any(&v).name().to_string();
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

/// `json.Decoder` over concatenated JSON values: each value's exact text. Stops, as `More`
/// does, at the end or at a closing bracket.
pub(super) fn split_json_values(text: &str) -> Result<Vec<String>, String> {
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
