//! The model turned into a file-based catalog: `model.Normalize` and
//! `declcfg.ConvertFromModel`.

use super::model::*;
use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Package, Property, SCHEMA_BUNDLE,
    SCHEMA_CHANNEL, SCHEMA_PACKAGE,
};
use crate::gocompat::json::compact;
use std::collections::{BTreeMap, HashSet};

/// `model.Normalize`: property values re-encoded compactly (values that are not JSON are left
/// as they are).
pub(super) fn normalize(model: &mut BTreeMap<String, MPackage>) {
    for pkg in model.values_mut() {
        for bundles in pkg.channels.values_mut() {
            for b in bundles.values_mut() {
                for (_, v) in &mut b.properties {
                    if let Some(c) = compact(v) {
                        *v = c;
                    }
                }
            }
        }
    }
}

/// `declcfg.ConvertFromModel`: packages, channels and bundles sorted by name, each channel's
/// entries sorted by name, each bundle's properties merged over its channels, deduplicated
/// and sorted by type then value.
pub(super) fn convert_from_model(model: &BTreeMap<String, MPackage>) -> DeclarativeConfig {
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
