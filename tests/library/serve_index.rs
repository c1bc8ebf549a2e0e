//! `catalog serve`'s point-query index gives the answers the plain conversion gives: on every
//! shared 4.18 catalog folder, each membership's stored and trimmed `api.Bundle` (index with
//! the CSVs synthesized at load, compressed without their package's icon) equals
//! `ServeModel::convert` of the catalog loaded in full, and the Replace/Provide answers equal a scan of the whole package index as
//! opm's loops make it.

use crate::support::shared::shared_catalogs;
use olmpack::serve::api;
use olmpack::serve::index::ServeIndex;
use olmpack::serve::model::{ServeModel, load_compact};
use olmpack::serve::registry::Registry;
use olmpack::serve::store::to_wire;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

fn folders() -> Vec<PathBuf> {
    let Some(catalogs) = shared_catalogs("fbc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for repo in ["community-operators-prod", "certified-operators"] {
        let dir = catalogs.join("fbc").join(repo).join("catalogs/v4.18");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

fn naive_replace(model: &ServeModel, name: &str) -> Vec<api::ChannelEntry> {
    let mut out = Vec::new();
    for (p, c, b) in model.keys() {
        let entry = || api::ChannelEntry {
            package_name: p.name.clone(),
            channel_name: c.name.clone(),
            bundle_name: b.name.clone(),
            replaces: b.replaces.clone(),
        };
        if b.replaces == name {
            out.push(entry());
        }
        for s in b.skips() {
            if s == name && *s != b.replaces {
                out.push(entry());
            }
        }
    }
    out
}

fn naive_provide(
    model: &ServeModel,
    gvk: &(String, String, String),
    latest: bool,
) -> Vec<api::ChannelEntry> {
    let mut out = Vec::new();
    for (p, c, b) in model.keys() {
        if latest && b.name != c.head {
            continue;
        }
        let full = model.convert(p, b).unwrap();
        if !full
            .provided_apis
            .iter()
            .any(|g| (&g.group, &g.version, &g.kind) == (&gvk.0, &gvk.1, &gvk.2))
        {
            continue;
        }
        let entry = |replaces: &str| api::ChannelEntry {
            package_name: p.name.clone(),
            channel_name: c.name.clone(),
            bundle_name: b.name.clone(),
            replaces: replaces.to_string(),
        };
        out.push(entry(&b.replaces));
        for s in b.skips() {
            if *s != b.replaces && (!latest || c.bundles.contains_key(s)) {
                out.push(entry(s));
            }
        }
    }
    out
}

#[test]
fn index_answers_equal_the_plain_conversion_on_every_shared_catalog() {
    let folders = folders();
    if folders.is_empty() {
        return;
    }
    let (mut memberships, mut names, mut gvks) = (0, 0, 0);
    for folder in &folders {
        let plain = ServeModel::from_dir(folder).unwrap_or_else(|e| panic!("{folder:?}: {e}"));
        let (loaded, metadata) = load_compact(folder, &Default::default()).unwrap();
        assert!(!loaded.has_errors(), "{folder:?}");
        let index = ServeIndex::new(ServeModel::new_compact(loaded.config, metadata).unwrap());
        let registries = [Registry::new(Arc::new(index))];
        let mut replaced = BTreeSet::new();
        let mut provided = BTreeSet::new();
        for (p, c, b) in plain.keys() {
            let want = to_wire(plain.convert(p, b).unwrap());
            let mut trimmed = want.clone();
            trimmed.replaces = String::new();
            trimmed.skips = Vec::new();
            for r in &registries {
                // Twice: an answer leaves the index as it was.
                for _ in 0..2 {
                    assert_eq!(r.stored(&p.name, &c.name, &b.name).unwrap(), want);
                    assert_eq!(r.get_bundle(&p.name, &c.name, &b.name).unwrap(), trimmed);
                }
            }
            replaced.insert(b.replaces.clone());
            replaced.extend(b.skips().iter().cloned());
            for g in &want.provided_apis {
                provided.insert((g.group.clone(), g.version.clone(), g.kind.clone()));
            }
            memberships += 1;
        }
        replaced.insert("no-such-bundle".into());
        for name in &replaced {
            let want = naive_replace(&plain, name);
            let got = registries[0].entries_that_replace(name);
            if want.is_empty() {
                assert!(got.is_err(), "{name}");
            } else {
                assert_eq!(got.unwrap(), want, "{name}");
            }
            names += 1;
        }
        provided.insert(("no.such.group".into(), "v1".into(), "NoSuchKind".into()));
        for gvk in &provided {
            for latest in [false, true] {
                let want = naive_provide(&plain, gvk, latest);
                let got = if latest {
                    registries[0].latest_entries_that_provide(gvk)
                } else {
                    registries[0].entries_that_provide(gvk)
                };
                if want.is_empty() {
                    assert!(got.is_err(), "{gvk:?}");
                } else {
                    assert_eq!(got.unwrap(), want, "{gvk:?}");
                }
            }
            gvks += 1;
        }
    }
    assert_eq!(folders.len(), 67);
    assert_eq!(memberships, 1235, "channel memberships");
    assert!(names >= 900, "{names} replaced names");
    assert!(gvks >= 300, "{gvks} provided APIs");
}
