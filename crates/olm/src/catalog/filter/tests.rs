//! catalog-filter's own cases (`pkg/filter/mirror-config/v1alpha1/mirror-filter_test.go` at
//! v0.0.4) that do not need its 3scale-operator, devworkspace-operator and jaeger-product test
//! catalogs, ported with their catalogs written out here; plus the exact-version rule of v0.0.5
//! and olmpack's own refusals.

use super::config::{ChannelFilter, FilterConfig, PackageFilter};
use super::*;
use crate::catalog::model::{
    Deprecation, DeprecationEntry, Meta, Package, PackageScopedReference, Property,
};
use crate::catalog::model::{
    SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE, property_type,
};

fn pkg(name: &str, default: &str) -> Package {
    Package {
        schema: SCHEMA_PACKAGE.into(),
        name: name.into(),
        default_channel: default.into(),
        icon: None,
        description: String::new(),
        properties: vec![],
        origin: Default::default(),
    }
}

fn e(name: &str, replaces: &str, skips: &[&str]) -> ChannelEntry {
    ChannelEntry {
        name: name.into(),
        replaces: replaces.into(),
        skips: skips.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn ch(package: &str, name: &str, entries: Vec<ChannelEntry>) -> Channel {
    Channel {
        schema: SCHEMA_CHANNEL.into(),
        name: name.into(),
        package: package.into(),
        entries: Some(entries),
        properties: vec![],
        origin: Default::default(),
    }
}

fn bundle(package: &str, name: &str, version: &str) -> Bundle {
    Bundle {
        schema: SCHEMA_BUNDLE.into(),
        name: name.into(),
        package: package.into(),
        image: String::new(),
        properties: vec![
            Property::new(
                property_type::PACKAGE,
                format!(r#"{{"packageName":"{package}","version":"{version}"}}"#),
            )
            .unwrap(),
        ],
        related_images: vec![],
        objects: vec![],
        csv_json: None,
        origin: Default::default(),
    }
}

fn at(s: &str) -> At<String> {
    At::new(s.to_string())
}

fn range(s: &str) -> Option<At<Constraints>> {
    Some(At::new(Constraints::parse(s).unwrap()))
}

fn package_filter(name: &str) -> PackageFilter {
    PackageFilter {
        name: at(name),
        default_channel: None,
        version_range: None,
        channels: vec![],
        bundles: vec![],
    }
}

fn channel_filter(name: &str, r: Option<&str>) -> ChannelFilter {
    ChannelFilter {
        name: at(name),
        version_range: r.and_then(range),
    }
}

fn config(packages: Vec<PackageFilter>) -> FilterConfig {
    FilterConfig {
        packages,
        ..Default::default()
    }
}

fn names(cfg: &DeclarativeConfig) -> Vec<String> {
    cfg.bundles.iter().map(|b| b.name.clone()).collect()
}

fn entries(c: &Channel) -> Vec<(&str, &str)> {
    c.entries
        .iter()
        .flatten()
        .map(|e| (e.name.as_str(), e.replaces.as_str()))
        .collect()
}

#[test]
fn upstream_empty_config_empty_catalog() {
    let out = filter(DeclarativeConfig::default(), &config(vec![])).unwrap();
    assert!(out.config.packages.is_empty() && out.config.bundles.is_empty());
}

#[test]
fn upstream_invalid_channel_is_an_error() {
    let mut p = package_filter("pkg1");
    p.channels = vec![channel_filter("ch1", Some(">=1.0.0 <2.0.0"))];
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "")],
        channels: vec![ch(
            "pkg1",
            "ch1",
            vec![e("b1", "b0", &[]), e("b0", "b1", &[])],
        )],
        ..Default::default()
    };
    let err = filter(cfg, &config(vec![p])).unwrap_err();
    assert!(err.to_string().contains("no channel heads found"), "{err}");
}

#[test]
fn upstream_range_emptying_the_default_channel_is_an_error() {
    let mut p = package_filter("pkg1");
    p.channels = vec![channel_filter("ch1", Some(">100.0.0"))];
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "ch1")],
        channels: vec![ch(
            "pkg1",
            "ch1",
            vec![e("b1", "b0", &[]), e("b0", "", &[])],
        )],
        ..Default::default()
    };
    let err = filter(cfg, &config(vec![p])).unwrap_err();
    assert!(err.to_string().contains("empty channel"), "{err}");
}

#[test]
fn upstream_default_channel_unspecified_keeps_it() {
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "ch1")],
        channels: vec![
            ch("pkg1", "ch1", vec![e("b1", "b0", &[])]),
            ch("pkg1", "ch2", vec![e("b3", "b2", &[])]),
        ],
        ..Default::default()
    };
    let out = filter(cfg, &config(vec![package_filter("pkg1")])).unwrap();
    assert_eq!(out.config.packages[0].default_channel, "ch1");
    assert_eq!(out.config.channels.len(), 2);
    assert_eq!(entries(&out.config.channels[0]), vec![("b1", "b0")]);
    assert_eq!(entries(&out.config.channels[1]), vec![("b3", "b2")]);
    assert!(out.config.bundles.is_empty());
}

#[test]
fn upstream_non_default_channel_without_new_default_is_an_error() {
    let mut p = package_filter("pkg1");
    p.channels = vec![channel_filter("ch2", None)];
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "ch1")],
        channels: vec![ch("pkg1", "ch1", vec![]), ch("pkg1", "ch2", vec![])],
        ..Default::default()
    };
    let err = filter(cfg, &config(vec![p])).unwrap_err();
    assert!(
        err.to_string().contains(r#"invalid default channel configuration for package "pkg1": the default channel "ch1" was filtered out, a new default channel must be configured for this package"#),
        "{err}"
    );
}

#[test]
fn upstream_non_default_channel_with_new_default() {
    let mut p = package_filter("pkg1");
    p.default_channel = Some(at("ch2"));
    p.channels = vec![channel_filter("ch2", None)];
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "ch1")],
        channels: vec![
            ch("pkg1", "ch1", vec![e("b1", "b0", &[])]),
            ch("pkg1", "ch2", vec![e("b3", "b2", &[])]),
        ],
        bundles: vec![bundle("pkg1", "b3", "2.0.0"), bundle("pkg1", "b1", "1.0.0")],
        ..Default::default()
    };
    let out = filter(cfg, &config(vec![p])).unwrap();
    assert_eq!(out.config.packages[0].default_channel, "ch2");
    assert_eq!(out.config.channels.len(), 1);
    assert_eq!(entries(&out.config.channels[0]), vec![("b3", "b2")]);
    assert_eq!(names(&out.config), vec!["b3"]);
}

#[test]
fn upstream_default_override_not_kept_is_an_error() {
    let mut p = package_filter("pkg1");
    p.default_channel = Some(at("ch2"));
    p.channels = vec![channel_filter("ch1", None)];
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "ch1")],
        channels: vec![
            ch("pkg1", "ch1", vec![e("b1", "b0", &[])]),
            ch("pkg1", "ch2", vec![e("b3", "b2", &[])]),
        ],
        ..Default::default()
    };
    let err = filter(cfg, &config(vec![p])).unwrap_err();
    assert!(
        err.to_string().contains(r#"invalid default channel configuration for package "pkg1": specified default channel override "ch2" does not exist in the filtered output"#),
        "{err}"
    );
}

#[test]
fn upstream_deprecations_kept_only_for_what_remains() {
    let mut p = package_filter("pkg1");
    p.channels = vec![channel_filter("ch1", None)];
    let dep = |schema: &str, name: &str| DeprecationEntry {
        reference: PackageScopedReference {
            schema: schema.into(),
            name: name.into(),
        },
        message: String::new(),
    };
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg1", "")],
        channels: vec![
            ch(
                "pkg1",
                "ch1",
                vec![e("b2", "b1", &["b0"]), e("b1", "", &[])],
            ),
            ch(
                "pkg1",
                "ch2",
                vec![e("b5", "b4", &["b3"]), e("b4", "", &[])],
            ),
        ],
        bundles: vec![
            bundle("pkg1", "b1", "0.1.0"),
            bundle("pkg1", "b2", "0.2.0"),
            bundle("pkg1", "b3", "3.0.0"),
            bundle("pkg1", "b4", "4.0.0"),
            bundle("pkg1", "b5", "5.0.0"),
        ],
        deprecations: vec![Deprecation {
            schema: SCHEMA_DEPRECATIONS.into(),
            package: "pkg1".into(),
            entries: vec![
                dep(SCHEMA_PACKAGE, ""),
                dep(SCHEMA_CHANNEL, "ch1"),
                dep(SCHEMA_CHANNEL, "ch2"),
                dep(SCHEMA_BUNDLE, "b1"),
                dep(SCHEMA_BUNDLE, "b2"),
                dep(SCHEMA_BUNDLE, "b4"),
            ],
            origin: Default::default(),
        }],
        others: vec![Meta {
            schema: "other".into(),
            package: String::new(),
            name: "global".into(),
            blob: serde_json::value::RawValue::from_string("{}".into()).unwrap(),
            origin: Default::default(),
        }],
    };
    let out = filter(cfg, &config(vec![p])).unwrap();
    assert_eq!(out.config.channels.len(), 1);
    assert_eq!(entries(&out.config.channels[0]), vec![("b2", "b1")]);
    assert_eq!(
        out.config.channels[0].entries.as_ref().unwrap()[0].skips,
        ["b0"]
    );
    assert_eq!(names(&out.config), vec!["b2"]);
    let kept: Vec<(&str, &str)> = out.config.deprecations[0]
        .entries
        .iter()
        .map(|d| (d.reference.schema.as_str(), d.reference.name.as_str()))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("olm.package", ""),
            ("olm.channel", "ch1"),
            ("olm.bundle", "b2")
        ]
    );
    assert_eq!(out.config.others.len(), 1);
}

#[test]
fn upstream_range_keeps_what_the_chain_needs_with_a_warning() {
    let mut p = package_filter("pkg");
    p.channels = vec![channel_filter("ch", Some(">=1.0.0 <2.0.0"))];
    let cfg = DeclarativeConfig {
        packages: vec![pkg("pkg", "")],
        channels: vec![ch(
            "pkg",
            "ch",
            vec![e("b2", "", &["b1"]), e("b1", "", &[])],
        )],
        bundles: vec![bundle("pkg", "b1", "1.0.0"), bundle("pkg", "b2", "2.0.0")],
        ..Default::default()
    };
    let out = filter(cfg, &config(vec![p])).unwrap();
    assert_eq!(names(&out.config), vec!["b1", "b2"]);
    assert_eq!(
        entries(&out.config.channels[0]),
        vec![("b2", ""), ("b1", "")]
    );
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains(r#"including bundle "b2" with version 2.0.0"#)),
        "{:?}",
        out.warnings
    );
}

/// A linear channel a1 <- a2 <- a3 <- a4, where a4 also skips a2.
fn linear() -> DeclarativeConfig {
    DeclarativeConfig {
        packages: vec![pkg("a", "stable")],
        channels: vec![
            ch(
                "a",
                "stable",
                vec![
                    e("a.v1.0.0", "", &[]),
                    e("a.v1.1.0", "a.v1.0.0", &[]),
                    e("a.v1.2.0", "a.v1.1.0", &[]),
                    e("a.v1.3.0", "a.v1.2.0", &["a.v1.1.0"]),
                ],
            ),
            ch("a", "fast", vec![e("a.v1.3.0", "", &[])]),
        ],
        bundles: vec![
            bundle("a", "a.v1.0.0", "1.0.0"),
            bundle("a", "a.v1.1.0", "1.1.0"),
            bundle("a", "a.v1.2.0", "1.2.0"),
            bundle("a", "a.v1.3.0", "1.3.0"),
        ],
        ..Default::default()
    }
}

#[test]
fn range_keeps_chain_from_min_to_head() {
    let mut p = package_filter("a");
    p.channels = vec![channel_filter("stable", Some(">=1.1.0"))];
    let out = filter(linear(), &config(vec![p])).unwrap();
    assert_eq!(names(&out.config), vec!["a.v1.1.0", "a.v1.2.0", "a.v1.3.0"]);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn exact_version_keeps_that_version_only() {
    // v0.0.4 kept the head too (a.v1.1.0 is skipped by a.v1.3.0); v0.0.5 keeps one bundle.
    let mut p = package_filter("a");
    p.channels = vec![channel_filter("stable", Some(">=1.1.0 <=1.1.0"))];
    let out = filter(linear(), &config(vec![p])).unwrap();
    assert_eq!(names(&out.config), vec!["a.v1.1.0"]);
    assert_eq!(
        entries(&out.config.channels[0]),
        vec![("a.v1.1.0", "a.v1.0.0")]
    );
}

#[test]
fn heads_full_and_selection() {
    let out = filter(linear(), &config(vec![package_filter("a")])).unwrap();
    assert_eq!(names(&out.config), vec!["a.v1.3.0"]);
    let mut full = config(vec![package_filter("a")]);
    full.full = true;
    assert_eq!(filter(linear(), &full).unwrap().config.bundles.len(), 4);
    let mut p = package_filter("a");
    p.bundles = vec![at("a.v1.3.0")];
    let out = filter(linear(), &config(vec![p])).unwrap();
    assert_eq!(out.config.channels.len(), 2);
    assert_eq!(names(&out.config), vec!["a.v1.3.0"]);
}

#[test]
fn unknown_names_are_errors() {
    let err = filter(linear(), &config(vec![package_filter("zz")])).unwrap_err();
    assert!(
        err.to_string()
            .ends_with(r#"package "zz" is not in the catalog; the catalog has: a"#),
        "{err}"
    );
    let err = filter(linear(), &config(vec![package_filter("b")])).unwrap_err();
    assert!(err.to_string().ends_with("; did you mean a?"), "{err}");
    let mut p = package_filter("a");
    p.channels = vec![channel_filter("nope", None)];
    let err = filter(linear(), &config(vec![p])).unwrap_err();
    assert!(
        err.to_string()
            .contains("has no channel \"nope\"; its channels: fast, stable"),
        "{err}"
    );
    let mut p = package_filter("a");
    p.bundles = vec![at("a.v9")];
    assert!(filter(linear(), &config(vec![p])).is_err());
}

#[test]
fn full_with_range_is_refused() {
    let mut p = package_filter("a");
    p.channels = vec![channel_filter("stable", Some(">=1.1.0"))];
    let mut c = config(vec![p]);
    c.full = true;
    let err = filter(linear(), &c).unwrap_err();
    assert!(
        err.to_string()
            .contains("Full: true cannot be mixed with versionRange")
    );
}

// Dependency closure (olmpack's own: catalog-filter keeps no dependencies).

fn requiring(mut b: Bundle, kind: &str, json: &str) -> Bundle {
    b.properties
        .push(Property::new(kind, json.to_string()).unwrap());
    b
}

/// `app` 1.0.0 requires package `db` in `>=1.0.0 <2.0.0` and the API `cache.example.com/v1
/// Cache`; `db` has 1.0.0, 1.5.0 (which requires `log`) and 2.0.0 (the head) in `stable`;
/// `cache-a` and `cache-b` both provide the API; `log` has 0.1.0.
fn with_dependencies() -> DeclarativeConfig {
    let app = requiring(
        requiring(
            bundle("app", "app.v1.0.0", "1.0.0"),
            "olm.package.required",
            r#"{"packageName":"db","versionRange":">=1.0.0 <2.0.0"}"#,
        ),
        "olm.gvk.required",
        r#"{"group":"cache.example.com","kind":"Cache","version":"v1"}"#,
    );
    let provides = |b: Bundle| {
        requiring(
            b,
            "olm.gvk",
            r#"{"group":"cache.example.com","kind":"Cache","version":"v1"}"#,
        )
    };
    DeclarativeConfig {
        packages: vec![
            pkg("app", "stable"),
            pkg("cache-a", "stable"),
            pkg("cache-b", "stable"),
            pkg("db", "stable"),
            pkg("log", "alpha"),
        ],
        channels: vec![
            ch("app", "stable", vec![e("app.v1.0.0", "", &[])]),
            ch("cache-a", "stable", vec![e("cache-a.v1", "", &[])]),
            ch("cache-b", "stable", vec![e("cache-b.v1", "", &[])]),
            ch(
                "db",
                "stable",
                vec![
                    e("db.v1.0.0", "", &[]),
                    e("db.v1.5.0", "db.v1.0.0", &[]),
                    e("db.v2.0.0", "db.v1.5.0", &[]),
                ],
            ),
            ch("log", "alpha", vec![e("log.v0.1.0", "", &[])]),
        ],
        bundles: vec![
            app,
            provides(bundle("cache-a", "cache-a.v1", "1.0.0")),
            provides(bundle("cache-b", "cache-b.v1", "1.0.0")),
            bundle("db", "db.v1.0.0", "1.0.0"),
            requiring(
                bundle("db", "db.v1.5.0", "1.5.0"),
                "olm.package.required",
                r#"{"packageName":"log","versionRange":">=0.1.0"}"#,
            ),
            bundle("db", "db.v2.0.0", "2.0.0"),
            bundle("log", "log.v0.1.0", "0.1.0"),
        ],
        ..Default::default()
    }
}

#[test]
fn dependencies_are_added_until_closed() {
    let out = filter(with_dependencies(), &config(vec![package_filter("app")])).unwrap();
    // db 1.5.0: the newest inside the range, down the chain from the head (2.0.0 is outside);
    // cache-a: the first package (by name) that provides the API; log: what db 1.5.0 requires.
    assert_eq!(
        names(&out.config),
        ["app.v1.0.0", "cache-a.v1", "db.v1.5.0", "log.v0.1.0"]
    );
    let db = out
        .config
        .channels
        .iter()
        .find(|c| c.package == "db")
        .unwrap();
    assert_eq!(entries(db), [("db.v1.5.0", "db.v1.0.0")]);
    let added: Vec<(String, String)> = out
        .added
        .iter()
        .map(|a| (a.bundle.clone(), a.for_bundle.clone()))
        .collect();
    assert_eq!(
        added,
        [
            ("db.v1.5.0".to_string(), "app.v1.0.0".to_string()),
            ("cache-a.v1".to_string(), "app.v1.0.0".to_string()),
            ("log.v0.1.0".to_string(), "db.v1.5.0".to_string()),
        ]
    );
    assert_eq!(
        out.added[0].to_string(),
        "added bundle \"db.v1.5.0\" (package \"db\", channel \"stable\") for bundle \"app.v1.0.0\" of package \"app\", which requires package \"db\" in range \">=1.0.0 <2.0.0\""
    );
    let packages: Vec<&str> = out
        .config
        .packages
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(packages, ["app", "cache-a", "db", "log"]);
}

#[test]
fn no_dependencies_keeps_the_selection_as_catalog_filter_does() {
    let mut fc = config(vec![package_filter("app")]);
    fc.no_dependencies = true;
    let out = filter(with_dependencies(), &fc).unwrap();
    assert_eq!(names(&out.config), ["app.v1.0.0"]);
    assert!(out.added.is_empty());
}

#[test]
fn a_kept_bundle_meeting_the_requirement_adds_nothing() {
    // The user keeps db's whole stable channel: 1.0.0 and 1.5.0 are in range, nothing is added
    // for the package requirement.
    let mut db = package_filter("db");
    db.channels = vec![channel_filter("stable", Some(">=1.0.0 <=1.5.0"))];
    let out = filter(
        with_dependencies(),
        &config(vec![package_filter("app"), db]),
    )
    .unwrap();
    assert!(
        out.added.iter().all(|a| a.package != "db"),
        "{:?}",
        out.added
    );
    assert!(names(&out.config).contains(&"log.v0.1.0".to_string()));
}

#[test]
fn a_requirement_nothing_meets_names_the_bundle_and_the_requirement() {
    let mut cfg = with_dependencies();
    cfg.bundles.retain(|b| !b.package.starts_with("cache-"));
    cfg.packages.retain(|p| !p.name.starts_with("cache-"));
    cfg.channels.retain(|c| !c.package.starts_with("cache-"));
    cfg.bundles[0] = requiring(
        cfg.bundles[0].clone(),
        "olm.package.required",
        r#"{"packageName":"db","versionRange":">=3.0.0"}"#,
    );
    let err = filter(cfg, &config(vec![package_filter("app")])).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, FilterError::Dependencies(u) if u.len() == 2),
        "{text}"
    );
    assert!(
        text.contains("bundle \"app.v1.0.0\" of package \"app\" requires API cache.example.com/v1 Cache: no bundle in the catalog provides it"),
        "{text}"
    );
    assert!(
        text.contains("requires package \"db\" in range \">=3.0.0\": no bundle of \"db\" in the catalog is in that range (its versions: 1.0.0, 1.5.0, 2.0.0)"),
        "{text}"
    );
    assert!(text.contains("--no-dependencies"), "{text}");
}

#[test]
fn the_users_own_selection_is_not_widened() {
    // The user keeps db's head (2.0.0), outside app's range: an error at db's line, not a
    // silent second db bundle.
    let mut db = package_filter("db");
    db.name.line = 7;
    let err = filter(
        with_dependencies(),
        &config(vec![package_filter("app"), db]),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("only bundles of package \"db\" meet it, and the filter (line 7 of the filter) leaves them out"),
        "{text}"
    );
}

#[test]
fn a_provider_outside_the_default_channel_gets_its_channel_as_default() {
    let mut cfg = with_dependencies();
    // log's only bundle moves to a channel that is not the default.
    cfg.channels.retain(|c| c.package != "log");
    cfg.channels
        .push(ch("log", "beta", vec![e("log.v0.1.0", "", &[])]));
    cfg.channels
        .push(ch("log", "alpha", vec![e("log.v0.0.1", "", &[])]));
    cfg.bundles.push(bundle("log", "log.v0.0.1", "0.0.1"));
    let out = filter(cfg, &config(vec![package_filter("app")])).unwrap();
    let log = out
        .config
        .packages
        .iter()
        .find(|p| p.name == "log")
        .unwrap();
    assert_eq!(log.default_channel, "beta");
    assert!(names(&out.config).contains(&"log.v0.1.0".to_string()));
    assert!(!names(&out.config).contains(&"log.v0.0.1".to_string()));
}

#[test]
fn an_olm_constraint_is_named_as_not_evaluated() {
    let mut cfg = with_dependencies();
    cfg.bundles[0] = requiring(
        cfg.bundles[0].clone(),
        "olm.constraint",
        r#"{"failureMessage":"needs a cache","cel":{"rule":"properties.exists(p, p.type == 'olm.gvk')"}}"#,
    );
    let out = filter(cfg, &config(vec![package_filter("app")])).unwrap();
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("\"app.v1.0.0\"") && w.contains("olm.constraint")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn a_provider_the_channel_filter_cannot_keep_is_refused_not_reported_closed() {
    // Two requirers pick two db bundles of one channel, one a pre-release: the channel range
    // `>=1.0.0 <=1.5.0-rc.1` does not match the pre-release (Masterminds), so the filter drops
    // it; the closure must refuse, not return a catalog with the requirement unmet.
    let mut cfg = with_dependencies();
    for b in &mut cfg.bundles {
        if b.name == "db.v1.5.0" {
            *b = bundle("db", "db.v1.5.0", "1.5.0-rc.1");
        }
        if b.name == "app.v1.0.0" {
            *b = requiring(
                bundle("app", "app.v1.0.0", "1.0.0"),
                "olm.package.required",
                r#"{"packageName":"db","versionRange":">=1.0.0 <1.5.0-0"}"#,
            );
        }
        if b.name == "cache-a.v1" {
            *b = requiring(
                b.clone(),
                "olm.package.required",
                r#"{"packageName":"db","versionRange":">=1.5.0-rc.1 <2.0.0"}"#,
            );
        }
    }
    let err = filter(
        cfg,
        &config(vec![package_filter("app"), package_filter("cache-a")]),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("bundle \"db.v1.5.0\" (package \"db\", channel \"stable\") meets it, but a channel filter cannot keep it"),
        "{text}"
    );
}
