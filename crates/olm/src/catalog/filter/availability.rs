//! Whether a catalog has what a filter asks for: one row per requested package, channel and
//! version range, with what the catalog holds for it.
//!
//! Why: a mirror of several catalogs (one per OpenShift version) should find out that a package
//! is missing from one of them before it copies anything, not after hours of copying (oc-mirror
//! fails late, ibm-mas/cli #1681). The rows are the table `catalog mirror --config` prints and
//! refuses on; [`without`] drops what is missing when the user goes on anyway.

use super::config::{At, FilterConfig};
use super::strict_version;
use crate::catalog::model::DeclarativeConfig;
use crate::gocompat::mmsemver::Constraints;
use std::collections::BTreeSet;

/// What the catalog holds for one requested row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Present: the number of bundles the row covers (in the range when there is one).
    Yes(usize),
    /// The catalog has no such package.
    NoPackage,
    /// The package has no such channel.
    NoChannel,
    /// No bundle of the package (or channel) is in the range.
    NoVersion,
    /// The package has no such bundle.
    NoBundle,
}

impl Found {
    /// Whether the row is satisfied.
    pub fn is_present(&self) -> bool {
        matches!(self, Found::Yes(_))
    }
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Found::Yes(n) => write!(f, "ok ({n} bundles)"),
            Found::NoPackage => f.write_str("MISSING package"),
            Found::NoChannel => f.write_str("MISSING channel"),
            Found::NoVersion => f.write_str("MISSING version in range"),
            Found::NoBundle => f.write_str("MISSING bundle"),
        }
    }
}

/// One requested package (and channel, range or bundle) against one catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The package, where the configuration names it.
    pub package: At<String>,
    /// The channel, when the request names one (`*` is shown otherwise).
    pub channel: Option<String>,
    /// The version range, or the bundle name, when the request gives one.
    pub range: Option<String>,
    /// What the catalog holds for it.
    pub found: Found,
}

/// The rows of `fc` against `cfg` (in the configuration's order).
pub fn check(cfg: &DeclarativeConfig, fc: &FilterConfig) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in &fc.packages {
        let name = &p.name.value;
        let row = |channel: Option<&str>, range: Option<String>, found: Found| Row {
            package: p.name.clone(),
            channel: channel.map(str::to_string),
            range,
            found,
        };
        let range_text = |r: &Option<At<Constraints>>| r.as_ref().map(|r| r.value.to_string());
        if !cfg.packages.iter().any(|x| &x.name == name) {
            rows.push(row(None, range_text(&p.version_range), Found::NoPackage));
            continue;
        }
        if !p.bundles.is_empty() {
            for b in &p.bundles {
                let has = cfg
                    .bundles
                    .iter()
                    .any(|x| &x.package == name && x.name == b.value);
                let found = if has { Found::Yes(1) } else { Found::NoBundle };
                rows.push(row(None, Some(b.value.clone()), found));
            }
            continue;
        }
        if p.channels.is_empty() {
            let names: BTreeSet<&str> = cfg
                .bundles
                .iter()
                .filter(|b| &b.package == name)
                .map(|b| b.name.as_str())
                .collect();
            let found = in_range(cfg, &names, p.version_range.as_ref().map(|r| &r.value));
            rows.push(row(None, range_text(&p.version_range), found));
            continue;
        }
        for c in &p.channels {
            let Some(ch) = cfg
                .channels
                .iter()
                .find(|x| &x.package == name && x.name == c.name.value)
            else {
                rows.push(row(Some(&c.name.value), None, Found::NoChannel));
                continue;
            };
            let names: BTreeSet<&str> = ch
                .entries
                .iter()
                .flatten()
                .map(|e| e.name.as_str())
                .collect();
            let range = c.version_range.as_ref().or(p.version_range.as_ref());
            let found = in_range(cfg, &names, range.map(|r| &r.value));
            rows.push(row(
                Some(&c.name.value),
                range.map(|r| r.value.to_string()),
                found,
            ));
        }
    }
    rows
}

/// How many of the bundles `names` are in `range` (all of them without one).
fn in_range(cfg: &DeclarativeConfig, names: &BTreeSet<&str>, range: Option<&Constraints>) -> Found {
    let count = cfg
        .bundles
        .iter()
        .filter(|b| names.contains(b.name.as_str()))
        .filter(|b| match range {
            None => true,
            // A bundle whose version cannot be read is not in any range.
            Some(r) => strict_version(b).is_ok_and(|v| r.matches(&v)),
        })
        .count();
    match (count, range) {
        (0, Some(_)) => Found::NoVersion,
        (0, None) if names.is_empty() => Found::NoVersion,
        (n, _) => Found::Yes(n),
    }
}

/// `fc` without the packages that have a missing row: what a run told to go on
/// (`--allow-missing`) filters this catalog with. `None` when no requested package is left
/// (an empty package list would mean every package, which nobody asked for).
pub fn without(fc: &FilterConfig, rows: &[Row]) -> Option<FilterConfig> {
    let missing: BTreeSet<&str> = rows
        .iter()
        .filter(|r| !r.found.is_present())
        .map(|r| r.package.value.as_str())
        .collect();
    let mut out = fc.clone();
    out.packages
        .retain(|p| !missing.contains(p.name.value.as_str()));
    (out.packages.is_empty() == fc.packages.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::filter::config::parse;
    use std::path::Path;

    fn catalog() -> DeclarativeConfig {
        let text = r#"{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1.0.0"},{"name":"a.v1.1.0","replaces":"a.v1.0.0"}]}
{"schema":"olm.bundle","name":"a.v1.0.0","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"a.v1.1.0","package":"a","image":"r/a:2","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.1.0"}}]}
"#;
        crate::catalog::load::load_bytes("c.json", text.as_bytes()).config
    }

    fn config(packages: &str) -> FilterConfig {
        let text = format!(
            "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n{packages}"
        );
        parse(Path::new("f.yaml"), &text, None).unwrap()
    }

    #[test]
    fn rows_name_what_is_missing() {
        let fc = config(
            "  - name: a\n    channels:\n      - name: stable\n        versionRange: \">=1.1.0\"\n      - name: fast\n  - name: b\n  - name: a2\n    versionRange: \">=9.0.0\"\n",
        );
        let mut cfg = catalog();
        let rows = check(&cfg, &fc);
        let found: Vec<&Found> = rows.iter().map(|r| &r.found).collect();
        assert_eq!(
            found,
            [
                &Found::Yes(1),
                &Found::NoChannel,
                &Found::NoPackage,
                &Found::NoPackage
            ]
        );
        assert_eq!(rows[2].package.line, 9);
        // A range nothing in the package satisfies.
        cfg.packages[0].name = "a2".into();
        for b in &mut cfg.bundles {
            b.package = "a2".into();
        }
        // (a is now missing as a whole: one row for it.)
        let rows = check(&cfg, &fc);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].found, Found::NoVersion);
        assert_eq!(rows[2].range.as_deref(), Some(">=9.0.0"));
    }

    #[test]
    fn without_drops_missing_packages_and_never_widens() {
        let fc = config("  - name: a\n  - name: b\n");
        let rows = check(&catalog(), &fc);
        let kept = without(&fc, &rows).unwrap();
        assert_eq!(kept.packages.len(), 1);
        assert_eq!(kept.packages[0].name.value, "a");
        let only_b = config("  - name: b\n");
        assert!(without(&only_b, &check(&catalog(), &only_b)).is_none());
    }
}
