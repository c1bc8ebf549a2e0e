//! The serve model (`olmpack::serve::model`) against opm's own answers on the shared catalogs
//! (`../shared/catalogs/serve/`, opm v1.26.5, adjusted for current opm as its SOURCE.md says),
//! and opm's serve cache written by `catalog build`.

#[path = "support/shared.rs"]
mod shared;

use olmpack::serve::{ApiBundle, ServeModel};
use serde_json::{Value, json};
use shared::shared_catalogs;
use std::path::{Path, PathBuf};

/// (golden file, catalog folder) for every golden.
fn goldens(catalogs: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        let dir = catalogs.join("serve").join(repo);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let pkg = f.file_stem().unwrap().to_string_lossy().into_owned();
            let folder = catalogs
                .join("fbc")
                .join(repo)
                .join("catalogs/v4.18")
                .join(&pkg);
            out.push((f, folder));
        }
    }
    out
}

/// Sorts a list of objects by their canonical text, in place.
fn sort_by_text(v: &mut Value) {
    if let Value::Array(items) = v {
        items.sort_by_key(|i| i.to_string());
    }
}

/// The SOURCE.md canonical form of a Bundle: lists sorted, property/dependency values parsed.
fn canonical(mut b: Value) -> Value {
    let obj = b.as_object_mut().unwrap();
    for key in ["properties", "dependencies"] {
        if let Some(Value::Array(items)) = obj.get_mut(key) {
            for item in items.iter_mut() {
                if let Some(v) = item.get("value").and_then(Value::as_str) {
                    let parsed: Value = serde_json::from_str(v).unwrap();
                    item["value"] = parsed;
                }
            }
        }
    }
    for key in [
        "providedApis",
        "requiredApis",
        "properties",
        "dependencies",
        "skips",
    ] {
        if let Some(v) = obj.get_mut(key) {
            sort_by_text(v);
        }
    }
    b
}

/// Goldens adjusted for current opm: no `olm.csv.metadata` in properties.
fn adjust_golden(mut b: Value) -> Value {
    if let Some(Value::Array(props)) = b.get_mut("properties") {
        props.retain(|p| p["type"] != "olm.csv.metadata");
        if props.is_empty() {
            b.as_object_mut().unwrap().remove("properties");
        }
    }
    b
}

/// Ours, as GetBundle sends it; a CSV synthesized from `olm.csv.metadata` (which v1.26.5 did
/// not do) is checked for its identity and then left out of the comparison.
fn ours_as_get_bundle(mut b: ApiBundle, golden_has_csv: bool, synthesized: &mut usize) -> Value {
    b.replaces.clear();
    b.skips.clear();
    if !golden_has_csv && !b.csv_json.is_empty() {
        let csv: Value = serde_json::from_str(&b.csv_json).unwrap();
        assert_eq!(csv["kind"], "ClusterServiceVersion");
        assert_eq!(csv["apiVersion"], "operators.coreos.com/v1alpha1");
        assert_eq!(csv["metadata"]["name"], b.csv_name.as_str());
        assert_eq!(csv["spec"]["version"], b.version.as_str());
        assert_eq!(csv["spec"]["install"]["strategy"], "deployment");
        assert_eq!(b.object, vec![b.csv_json.clone()]);
        b.csv_json.clear();
        b.object.clear();
        *synthesized += 1;
    }
    serde_json::to_value(&b).unwrap()
}

#[test]
fn model_matches_opm_goldens() {
    let Some(catalogs) = shared_catalogs("serve") else {
        return;
    };
    let mut files = 0;
    let mut bundles = 0;
    let mut synthesized = 0;
    for (golden_file, folder) in goldens(&catalogs) {
        let golden: Value = serde_json::from_slice(&std::fs::read(&golden_file).unwrap()).unwrap();
        let model =
            ServeModel::from_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        let name = golden_file.display().to_string();

        // GetPackage: channels (sorted) with their heads, default channel.
        for gp in golden["getPackage"].as_array().unwrap() {
            let pkg = &model.index()[gp["request"]["name"].as_str().unwrap()];
            let channels: Vec<Value> = pkg
                .channels
                .values()
                .map(|c| json!({"csvName": c.head, "name": c.name}))
                .collect();
            let ours = json!({
                "channels": channels,
                "defaultChannelName": pkg.default_channel,
                "name": pkg.name,
            });
            assert_eq!(ours, gp["response"], "{name}: getPackage");
        }
        assert_eq!(
            golden["listPackages"].as_array().unwrap().len(),
            model.index().len(),
            "{name}: listPackages"
        );

        // ListBundles: one per channel membership, with that channel's edges.
        let lb = golden["listBundles"].as_array().unwrap();
        assert_eq!(lb.len(), model.bundle_count(), "{name}: listBundles count");
        for g in lb {
            let (_, _, cb) = model
                .lookup(
                    g["packageName"].as_str().unwrap(),
                    g["channelName"].as_str().unwrap(),
                    g["csvName"].as_str().unwrap(),
                )
                .unwrap();
            assert_eq!(g["replaces"].as_str().unwrap_or(""), cb.replaces, "{name}");
            let mut skips: Vec<String> = cb.skips().to_vec();
            skips.sort();
            let want: Vec<String> = g["skips"]
                .as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            assert_eq!(want, skips, "{name}: skips of {g}");
        }

        // GetBundle: the whole stored bundle, trimmed.
        for gb in golden["getBundle"].as_array().unwrap() {
            let req = &gb["request"];
            let ours = model
                .bundle(
                    req["pkgName"].as_str().unwrap(),
                    req["channelName"].as_str().unwrap(),
                    req["csvName"].as_str().unwrap(),
                )
                .unwrap();
            let want = canonical(adjust_golden(gb["response"].clone()));
            let has_csv = want.get("csvJson").is_some();
            let got = canonical(ours_as_get_bundle(ours, has_csv, &mut synthesized));
            if got != want {
                let g = serde_json::to_string_pretty(&got).unwrap();
                let w = serde_json::to_string_pretty(&want).unwrap();
                let at = g
                    .lines()
                    .zip(w.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "{name}: getBundle {req} differs at line {at}:\n ours: {:?}\n opm:  {:?}",
                    g.lines().nth(at),
                    w.lines().nth(at)
                );
            }
            bundles += 1;
        }
        files += 1;
    }
    eprintln!(
        "serve model: {files} golden files, {bundles} getBundle answers equal ({synthesized} with a CSV synthesized from olm.csv.metadata)"
    );
    assert!(files >= 60, "only {files} goldens");
}
