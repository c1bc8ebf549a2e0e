//! opm's `model.Validate` on the converted model: package and channel rules and each channel's
//! replaces chain (one head, no cycle, nothing stranded), with opm's messages.

use super::api_bundle::*;
use super::model::*;
use crate::catalog::channel::{ChainWalk, ChannelGraph};
use crate::catalog::model::{ChannelEntry, property_type};
use serde_json::Value;
use std::collections::BTreeMap;

/// `model.Validate` (opm v1.26), flattened: one line per finding, in a stable order.
pub(super) fn validate(model: &BTreeMap<String, MPackage>) -> Result<(), ConvertError> {
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
                        "{at}: must be exactly one property with type {:?}",
                        crate::catalog::model::property_type::PACKAGE
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

/// `Channel.validateReplacesChain` (opm v1.26): one head, no cycle, nothing stranded, read on
/// the channel graph ([`ChannelGraph`]) with the chain walked through skipped entries, as opm
/// before v1.58 walks it.
fn validate_replaces_chain(bundles: &BTreeMap<String, MBundle>) -> Result<(), String> {
    let entries: Vec<ChannelEntry> = bundles
        .values()
        .map(|b| ChannelEntry {
            name: b.name.clone(),
            replaces: b.replaces.clone(),
            skips: b.skips.clone(),
            ..ChannelEntry::default()
        })
        .collect();
    let graph = ChannelGraph::from_entries(&entries, |_| None);
    let head = graph.head().map_err(|e| e.to_string())?;
    if let Err(cycle) = graph.replaces_chain_as(head, ChainWalk::ThroughSkipped) {
        return Err(format!(
            "detected cycle in replaces chain of upgrade graph: {}",
            cycle.join(" -> ")
        ));
    }
    let stranded = graph.stranded_as(head, ChainWalk::ThroughSkipped);
    if !stranded.is_empty() {
        return Err(format!(
            "channel contains one or more stranded bundles: {}",
            stranded.join(", ")
        ));
    }
    Ok(())
}
