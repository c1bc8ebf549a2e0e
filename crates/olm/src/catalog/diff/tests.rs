//! Hand-made regressions with their expected reports.

use super::*;
use crate::catalog::channel::tests::e;
use crate::catalog::model::{ChannelEntry, Package, Property};
use crate::catalog::model::{SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, property_type};

fn bundle(name: &str, version: &str, image: &str) -> Bundle {
    Bundle {
        schema: SCHEMA_BUNDLE.into(),
        name: name.into(),
        package: "op".into(),
        image: image.into(),
        properties: vec![
            Property::new(
                property_type::PACKAGE,
                format!(r#"{{"packageName":"op","version":"{version}"}}"#),
            )
            .unwrap(),
        ],
        related_images: vec![],
        objects: vec![],
        csv_json: None,
        origin: Default::default(),
    }
}

fn catalog(entries: Vec<ChannelEntry>, versions: &[(&str, &str)]) -> DeclarativeConfig {
    DeclarativeConfig {
        packages: vec![Package {
            schema: SCHEMA_PACKAGE.into(),
            name: "op".into(),
            default_channel: "stable".into(),
            icon: None,
            description: String::new(),
            properties: vec![],
            origin: Default::default(),
        }],
        channels: vec![Channel {
            schema: SCHEMA_CHANNEL.into(),
            name: "stable".into(),
            package: "op".into(),
            entries: Some(entries),
            properties: vec![],
            origin: Default::default(),
        }],
        bundles: versions
            .iter()
            .map(|(n, v)| bundle(n, v, &format!("quay.io/op/b:{v}")))
            .collect(),
        ..Default::default()
    }
}

/// op.v1 <- op.v2 <- op.v3.
fn base() -> DeclarativeConfig {
    catalog(
        vec![
            e("op.v1", "", &[], ""),
            e("op.v2", "op.v1", &[], ""),
            e("op.v3", "op.v2", &[], ""),
        ],
        &[("op.v1", "1.0.0"), ("op.v2", "2.0.0"), ("op.v3", "3.0.0")],
    )
}

fn kinds(d: &CatalogDiff) -> Vec<(RegressionKind, String)> {
    d.packages
        .iter()
        .flat_map(|p| p.regressions.iter().map(|r| (r.kind, r.bundle.clone())))
        .collect()
}

#[test]
fn no_change() {
    let d = diff(&base(), &base());
    assert!(!d.has_changes());
    assert_eq!(render_text(&d), "no changes\n");
}

#[test]
fn adding_a_bundle_is_no_regression() {
    let mut new = base();
    new.channels[0]
        .entries
        .as_mut()
        .unwrap()
        .push(e("op.v4", "op.v3", &[], ""));
    new.bundles
        .push(bundle("op.v4", "4.0.0", "quay.io/op/b:4.0.0"));
    let d = diff(&base(), &new);
    assert!(!d.has_regressions());
    let p = &d.packages[0];
    assert_eq!(p.bundles_added, ["op.v4"]);
    assert_eq!(p.head_moves[0].new, "op.v4");
    assert_eq!(p.edges_added.len(), 1);
    assert_eq!(
        render_text(&d),
        "package op (changed)\n  head of stable: op.v3 -> op.v4\n  bundles added: op.v4\n  edge added in stable: op.v3 -> op.v4 (replaces)\n0 package(s) added, 0 removed, 0 changed; 1 bundle(s) added, 0 removed, 0 changed; 0 regression(s)\n"
            .replace("0 package(s) added, 0 removed, 0 changed", "0 package(s) added, 0 removed, 1 changed")
    );
}

#[test]
fn removed_bundle_breaks_the_chain() {
    // op.v2 removed while op.v3 still replaces it: op.v1 becomes a second head, so OLM cannot
    // resolve the channel at all.
    let new = catalog(
        vec![e("op.v1", "", &[], ""), e("op.v3", "op.v2", &[], "")],
        &[("op.v1", "1.0.0"), ("op.v3", "3.0.0")],
    );
    let d = diff(&base(), &new);
    assert_eq!(
        kinds(&d),
        vec![(RegressionKind::ChannelInvalid, String::new())]
    );
    assert!(
        d.packages[0].regressions[0]
            .message
            .contains("multiple channel heads found in graph: op.v1, op.v3"),
        "{:?}",
        d.packages[0].regressions
    );
    assert_eq!(d.packages[0].bundles_removed, ["op.v2"]);
}

#[test]
fn dangling_bundle() {
    // op.v2 removed and op.v3 now replaces op.v1: users of op.v2 are stranded.
    let new = catalog(
        vec![e("op.v1", "", &[], ""), e("op.v3", "op.v1", &[], "")],
        &[("op.v1", "1.0.0"), ("op.v3", "3.0.0")],
    );
    let d = diff(&base(), &new);
    assert_eq!(
        kinds(&d),
        vec![(RegressionKind::Dangling, "op.v2".to_string())]
    );
    let md = render_markdown(&d);
    assert!(md.contains("**1 upgrade-path regression(s)**"), "{md}");
    assert!(md.contains("| op | changed | 0 | 1 | 0 | 0 | 1 |"), "{md}");
    // A skipRange covering it repairs it.
    let new = catalog(
        vec![
            e("op.v1", "", &[], ""),
            e("op.v3", "op.v1", &[], ">=2.0.0 <3.0.0"),
        ],
        &[("op.v1", "1.0.0"), ("op.v3", "3.0.0")],
    );
    assert!(!diff(&base(), &new).has_regressions());
}

#[test]
fn moved_head() {
    // The head moves back to op.v2 (op.v3 withdrawn): users of op.v3 have nowhere to go.
    let new = catalog(
        vec![e("op.v1", "", &[], ""), e("op.v2", "op.v1", &[], "")],
        &[("op.v1", "1.0.0"), ("op.v2", "2.0.0")],
    );
    let d = diff(&base(), &new);
    assert_eq!(
        kinds(&d),
        vec![(RegressionKind::Dangling, "op.v3".to_string())]
    );
    assert_eq!(d.packages[0].head_moves[0].old, "op.v3");
    assert_eq!(d.packages[0].head_moves[0].new, "op.v2");
    // The head moves forward to a bundle that skips the old one: no regression.
    let mut new = base();
    new.channels[0]
        .entries
        .as_mut()
        .unwrap()
        .push(e("op.v4", "", &["op.v3"], ""));
    new.bundles
        .push(bundle("op.v4", "4.0.0", "quay.io/op/b:4.0.0"));
    let d = diff(&base(), &new);
    assert!(!d.has_regressions(), "{:?}", kinds(&d));
    assert_eq!(d.packages[0].head_moves[0].new, "op.v4");
}

#[test]
fn two_heads_make_the_channel_invalid() {
    let mut new = base();
    new.channels[0]
        .entries
        .as_mut()
        .unwrap()
        .push(e("op.v9", "", &[], ""));
    new.bundles
        .push(bundle("op.v9", "9.0.0", "quay.io/op/b:9.0.0"));
    let d = diff(&base(), &new);
    assert_eq!(
        kinds(&d),
        vec![(RegressionKind::ChannelInvalid, String::new())]
    );
}

#[test]
fn removed_channel_and_package() {
    let mut new = base();
    new.channels[0].name = "fast".into();
    new.packages[0].default_channel = "fast".into();
    let d = diff(&base(), &new);
    assert_eq!(
        kinds(&d),
        vec![(RegressionKind::ChannelRemoved, String::new())]
    );
    assert_eq!(d.packages[0].default_channel.as_ref().unwrap().new, "fast");
    let d = diff(&base(), &DeclarativeConfig::default());
    assert_eq!(
        kinds(&d),
        vec![(RegressionKind::PackageRemoved, String::new())]
    );
    assert_eq!(d.summary.packages_removed, 1);
}

#[test]
fn changed_bundle_content() {
    let mut new = base();
    new.bundles[0].image = "quay.io/op/b@sha256:00".into();
    new.bundles[1]
        .properties
        .push(Property::new(property_type::CSV_METADATA, r#"{"displayName":"x"}"#.into()).unwrap());
    let d = diff(&base(), &new);
    let c = &d.packages[0].bundles_changed;
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].what, ["image"]);
    assert_eq!(c[1].what, ["csv"]);
    let json = render_json(&d);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["summary"]["bundlesChanged"], 2);
    assert_eq!(
        v["packages"][0]["bundlesChanged"][0]["image"]["new"],
        "quay.io/op/b@sha256:00"
    );
}

#[test]
fn substitutes_succeed_their_base() {
    // NEW drops op.v3 and ships op.v3-sub, a substitute for it with no channel edge to it.
    let mut new = catalog(
        vec![
            e("op.v1", "", &[], ""),
            e("op.v2", "op.v1", &[], ""),
            e("op.v3-sub", "op.v2", &[], ""),
        ],
        &[
            ("op.v1", "1.0.0"),
            ("op.v2", "2.0.0"),
            ("op.v3-sub", "3.0.0-1"),
        ],
    );
    new.bundles[2]
        .properties
        .push(Property::new("olm.substitutesFor", "\"op.v3\"".into()).unwrap());
    let d = diff(&base(), &new);
    // op.v3's users upgrade to its substitute.
    assert!(!d.has_regressions(), "{:?}", kinds(&d));
}

/// A bundle whose CSV moved from `olm.bundle.object` to the `olm.csv.metadata` opm's migration
/// makes from it is a migration, counted once; a metadata that says something else is a change.
#[test]
fn csv_metadata_migration_is_no_content_change() {
    use base64::Engine as _;
    let csv = serde_json::json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "op.v1", "annotations": {"capabilities": "Basic Install"}},
        "spec": {"displayName": "Op", "description": "An operator", "version": "1.0.0",
                 "installModes": [{"type": "AllNamespaces", "supported": true}]}
    });
    let data = base64::engine::general_purpose::STANDARD.encode(csv.to_string());
    let mut old = base();
    old.bundles[0].properties.push(
        Property::new(
            "olm.bundle.object",
            serde_json::json!({ "data": data }).to_string(),
        )
        .unwrap(),
    );
    let metadata = crate::catalog::render::csv_metadata::csv_metadata_json(&csv).unwrap();
    let mut new = base();
    new.bundles[0]
        .properties
        .push(Property::new(property_type::CSV_METADATA, metadata.clone()).unwrap());
    let d = diff(&old, &new);
    assert!(!d.has_changes(), "{:?}", d.packages);
    assert_eq!(d.summary.bundles_migrated, 1);
    assert_eq!(
        d.migrations,
        [Migration {
            from: "olm.bundle.object".into(),
            to: "olm.csv.metadata".into(),
            bundles: 1
        }]
    );
    let text = render_text(&d);
    assert!(text.starts_with("format migration: 1 bundle(s) store their CSV as olm.csv.metadata instead of olm.bundle.object"), "{text}");
    assert!(text.ends_with("no changes\n"), "{text}");

    // Another display name: a real change of the CSV, not a migration.
    let mut changed = base();
    changed.bundles[0].properties.push(
        Property::new(
            property_type::CSV_METADATA,
            metadata.replace("\"Op\"", "\"Other\""),
        )
        .unwrap(),
    );
    let d = diff(&old, &changed);
    assert_eq!(d.packages[0].bundles_changed[0].what, ["csv"]);
    assert_eq!(d.summary.bundles_migrated, 0);
}
