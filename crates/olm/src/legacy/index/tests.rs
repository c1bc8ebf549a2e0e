//! The conversion of hand-filled tables.

use super::convert::split_json_values;
use super::*;
use crate::gocompat::json::compact as compact_json;

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
    db.add_value(
        ValueTable::Properties,
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
    db.add_value(
        ValueTable::Properties,
        "b1",
        "1.0.0",
        "",
        DEPRECATED_PROPERTY,
        "{}",
    );
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
