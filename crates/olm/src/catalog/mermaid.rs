//! opm's mermaid upgrade-graph output (`alpha/declcfg/write.go` `MermaidWriter.WriteChannels`),
//! as `opm alpha render-template -o mermaid` and `opm alpha render-graph` print it.
//!
//! Why byte-exact: people paste this into GitHub and mermaid.live and diff it in reviews; a tool
//! that replaces opm must not change the picture or the text.

use crate::catalog::model::{
    ChannelEntry, DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE,
};
use crate::catalog::template::semver::package_property;
use crate::gocompat::quote::go_quote;
use crate::semver_range;
use semver::Version;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

/// Which part of the graph to draw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MermaidOptions {
    /// Only this package (opm's `WithSpecifiedPackageName`).
    pub package: Option<String>,
    /// Only channels with this name (an olmpack addition for `catalog graph --channel`).
    pub channel: Option<String>,
    /// Leave out what OLM v0 does with the graph (the `skipped` styling of entries a skip
    /// removes and the red dashed links from them): opm's `WithV0Semantics(false)`, the default
    /// of `opm alpha render-graph` since v1.57 (#1744). Templates keep drawing it, as opm's
    /// `NewMermaidWriter()` does.
    pub plain: bool,
    /// Only edges from this bundle up (opm's `--minimum-edge`, `WithMinEdgeName`): the
    /// bundle's own package, its references dropped, and every reference to a lower version
    /// dropped.
    pub minimum_edge: Option<String>,
}

/// A channel entry after opm's `filterChannel`.
#[derive(Debug, Clone)]
struct Edge {
    name: String,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
}

impl Edge {
    fn of(ce: &ChannelEntry) -> Edge {
        Edge {
            name: ce.name.clone(),
            replaces: ce.replaces.clone(),
            skips: ce.skips.clone(),
            skip_range: ce.skip_range.clone(),
        }
    }

    fn has_edges(&self) -> bool {
        !self.replaces.is_empty() || !self.skips.is_empty() || !self.skip_range.is_empty()
    }
}

/// opm's `filterChannel`: the entries drawn for a channel, or `None` when the channel is left
/// out.
fn filter_channel(
    entries: &[&ChannelEntry],
    package: &str,
    options: &MermaidOptions,
    version: &dyn Fn(&str) -> Version,
    min_version: &Version,
    min_edge_package: Option<&str>,
) -> Option<Vec<Edge>> {
    if options.minimum_edge.is_none() && options.package.is_none() {
        return Some(entries.iter().map(|ce| Edge::of(ce)).collect());
    }
    if options.package.as_deref().is_some_and(|p| p != package) {
        return None;
    }
    if min_edge_package.is_some_and(|p| p != package) {
        return None;
    }
    let ge = |name: &str| version(name).cmp_precedence(min_version) != std::cmp::Ordering::Less;
    let mut out = Vec::new();
    for ce in entries {
        let original = Edge::of(ce);
        let Some(min) = options.minimum_edge.as_deref() else {
            out.push(original);
            continue;
        };
        if ce.name == min {
            out.push(Edge {
                name: ce.name.clone(),
                replaces: String::new(),
                skips: Vec::new(),
                skip_range: String::new(),
            });
            continue;
        }
        let mut f = Edge {
            name: ce.name.clone(),
            replaces: String::new(),
            skips: Vec::new(),
            skip_range: String::new(),
        };
        if !ce.replaces.is_empty() && ge(&ce.replaces) {
            f.replaces = ce.replaces.clone();
        }
        f.skips = ce.skips.iter().filter(|s| ge(s)).cloned().collect();
        if !ce.skip_range.is_empty()
            && semver_range::parse(&ce.skip_range).is_ok_and(|r| r.matches(min_version))
        {
            f.skip_range = ce.skip_range.clone();
        }
        if f.has_edges() || (!original.has_edges() && ge(&f.name)) {
            out.push(f);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Why the graph could not be drawn: a bundle whose version cannot be read (opm's message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MermaidError(pub String);

/// Bundle name → version, from each bundle's `olm.package` property (first bundle of a name wins),
/// worded as opm's `getBundleVersions`.
pub fn bundle_versions(cfg: &DeclarativeConfig) -> Result<HashMap<String, Version>, MermaidError> {
    let mut out = HashMap::new();
    for b in &cfg.bundles {
        if out.contains_key(&b.name) {
            continue;
        }
        let (_, text) = package_property(b).map_err(MermaidError)?;
        let v = Version::parse(&text).map_err(|e| {
            MermaidError(format!(
                "bundle {:?} has invalid version {text:?}: {e}",
                b.name
            ))
        })?;
        out.insert(b.name.clone(), v);
    }
    Ok(out)
}

/// Writes the mermaid graph; invalid skipRanges are skipped with a warning pushed to `warnings`
/// (opm prints it on standard error).
pub fn write_mermaid(
    cfg: &DeclarativeConfig,
    options: &MermaidOptions,
    warnings: &mut Vec<String>,
) -> Result<String, MermaidError> {
    let versions = bundle_versions(cfg)?;
    let zero = Version::new(0, 0, 0);
    let version = |name: &str| versions.get(name).unwrap_or(&zero);
    let owned_version = |name: &str| version(name).clone();
    let v0 = !options.plain;

    let mut channels: Vec<_> = cfg.channels.iter().collect();
    channels.sort_by(|a, b| a.name.cmp(&b.name));

    let min_version = match &options.minimum_edge {
        Some(name) => versions.get(name).cloned().ok_or_else(|| {
            MermaidError(format!("unknown minimum edge name: {}", go_quote(name)))
        })?,
        None => zero.clone(),
    };
    let min_edge_package = options.minimum_edge.as_deref().and_then(|m| {
        channels
            .iter()
            .find(|c| c.entries.iter().flatten().any(|e| e.name == m))
            .copied()
            .map(|c| c.package.as_str())
    });

    let (dep_package, dep_channel, dep_bundle) = deprecated_names(cfg);

    let mut pkgs: BTreeMap<&str, String> = BTreeMap::new();
    let mut deprecated_package = "";
    let mut deprecated_channel_ids: Vec<String> = Vec::new();
    let mut decorated: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut link_id = 0usize;
    let mut skipped_link_ids: Vec<String> = Vec::new();

    for c in channels {
        if options.package.as_deref().is_some_and(|p| p != c.package)
            || options.channel.as_deref().is_some_and(|n| n != c.name)
        {
            continue;
        }
        let all: Vec<&ChannelEntry> = c.entries.iter().flatten().collect();
        let Some(entries) = filter_channel(
            &all,
            &c.package,
            options,
            &owned_version,
            &min_version,
            min_edge_package,
        ) else {
            continue;
        };
        let out = pkgs.entry(c.package.as_str()).or_default();
        let channel_id = format!("{}-{}", c.package, c.name);
        let _ = writeln!(out, "    %% channel {}", go_quote(&c.name));
        let _ = writeln!(out, "    subgraph {channel_id}[{}]", go_quote(&c.name));
        if dep_package.contains(c.package.as_str()) {
            deprecated_package = c.package.as_str();
        }
        if dep_channel.contains(c.name.as_str()) {
            deprecated_channel_ids.push(channel_id.clone());
        }
        let mut sorted = entries.clone();
        sorted.sort_by(|a, b| version(&b.name).cmp_precedence(version(&a.name)));
        let mut skipped: HashSet<String> = HashSet::new();
        for ce in sorted {
            let entry_id = format!("{channel_id}-{}", ce.name);
            let _ = writeln!(out, "      {entry_id}[{}]", go_quote(&ce.name));
            let class = match (
                dep_bundle.contains(ce.name.as_str()),
                skipped.contains(ce.name.as_str()),
            ) {
                (true, true) => Some("deprecatedskipped"),
                (true, false) => Some("deprecated"),
                (false, true) => Some("skipped"),
                (false, false) => None,
            };
            if let Some(class) = class {
                decorated.entry(class).or_default().push(entry_id.clone());
            }
            for s in &ce.skips {
                let _ = writeln!(
                    out,
                    "      {channel_id}-{s}[{}]-- skip --> {entry_id}[{}]",
                    go_quote(s),
                    go_quote(&ce.name)
                );
                if v0 && !skipped.insert(s.clone()) {
                    skipped_link_ids.push(link_id.to_string());
                }
                link_id += 1;
            }
            if !ce.skip_range.is_empty() {
                match semver_range::parse(&ce.skip_range) {
                    Ok(range) => {
                        for edge in &entries {
                            if range.matches(version(&edge.name)) {
                                let _ = writeln!(
                                    out,
                                    "      {channel_id}-{}[{}]-- \"skipRange({})\" --> {entry_id}[{}]",
                                    edge.name,
                                    go_quote(&edge.name),
                                    ce.skip_range,
                                    go_quote(&ce.name)
                                );
                                if v0 && skipped.contains(ce.name.as_str()) {
                                    skipped_link_ids.push(link_id.to_string());
                                }
                                link_id += 1;
                            }
                        }
                    }
                    Err(e) => warnings.push(format!(
                        "warning: ignoring invalid SkipRange for package/edge {:?}/{:?}: {e}",
                        c.package, ce.name
                    )),
                }
            }
            if !ce.replaces.is_empty() {
                let _ = writeln!(
                    out,
                    "      {channel_id}-{}[{}]-- replace --> {entry_id}[{}]",
                    ce.replaces,
                    go_quote(&ce.replaces),
                    go_quote(&ce.name)
                );
                if v0 && skipped.contains(ce.name.as_str()) {
                    skipped_link_ids.push(link_id.to_string());
                }
                link_id += 1;
            }
        }
        out.push_str("    end\n");
    }

    Ok(document(
        &pkgs,
        deprecated_package,
        &deprecated_channel_ids,
        &mut decorated,
        &skipped_link_ids,
    ))
}

/// The names `cfg`'s deprecations mark: packages, channels and bundles, as opm's mermaid
/// writer collects them.
fn deprecated_names(cfg: &DeclarativeConfig) -> (HashSet<&str>, HashSet<&str>, HashSet<&str>) {
    let mut dep_package = HashSet::new();
    let mut dep_channel = HashSet::new();
    let mut dep_bundle = HashSet::new();
    for d in &cfg.deprecations {
        for e in &d.entries {
            match e.reference.schema.as_str() {
                SCHEMA_PACKAGE => {
                    dep_package.insert(d.package.as_str());
                }
                SCHEMA_CHANNEL => {
                    dep_channel.insert(e.reference.name.as_str());
                }
                SCHEMA_BUNDLE => {
                    dep_bundle.insert(e.reference.name.as_str());
                }
                _ => {}
            }
        }
    }
    (dep_package, dep_channel, dep_bundle)
}

/// The whole graph around each package's channel subgraphs (`pkgs`, by package name): opm's
/// class definitions first, then the packages, then the styles of deprecated packages and
/// channels, the decorated entries and the skipped links.
fn document(
    pkgs: &BTreeMap<&str, String>,
    deprecated_package: &str,
    deprecated_channel_ids: &[String],
    decorated: &mut BTreeMap<&str, Vec<String>>,
    skipped_link_ids: &[String],
) -> String {
    let mut out = String::from("graph LR\n");
    out.push_str("  classDef deprecated fill:#E8960F\n");
    out.push_str("  classDef skipped stroke:#FF0000,stroke-width:4px\n");
    out.push_str("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n");
    for (name, body) in pkgs {
        let _ = writeln!(out, "  %% package {}", go_quote(name));
        let _ = writeln!(out, "  subgraph {}", go_quote(name));
        out.push_str(body);
        out.push_str("  end\n");
    }
    if !deprecated_package.is_empty() {
        let _ = writeln!(out, "style {deprecated_package} fill:#989695");
    }
    for id in deprecated_channel_ids {
        let _ = writeln!(out, "style {id} fill:#DCD0FF");
    }
    for (class, ids) in decorated.iter_mut() {
        if !ids.is_empty() {
            ids.sort();
            let _ = writeln!(out, "class {} {class}", ids.join(","));
        }
    }
    if !skipped_link_ids.is_empty() {
        let _ = writeln!(
            out,
            "linkStyle {} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;",
            skipped_link_ids.join(",")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::{
        Channel, Deprecation, DeprecationEntry, Origin, PackageScopedReference,
    };
    use crate::catalog::model::{SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS};
    use crate::catalog::template::semver::tests::bundle;

    fn entry(name: &str, replaces: &str, skips: &[&str], range: &str) -> ChannelEntry {
        ChannelEntry {
            name: name.into(),
            replaces: replaces.into(),
            skips: skips.iter().map(|s| s.to_string()).collect(),
            skip_range: range.into(),
            origin: Origin::default(),
        }
    }

    #[test]
    fn matches_opm_layout() {
        let cfg = DeclarativeConfig {
            channels: vec![Channel {
                schema: SCHEMA_CHANNEL.into(),
                name: "beta".into(),
                package: "p".into(),
                entries: Some(vec![
                    entry("p.v1.2.8", "", &[], ""),
                    entry("p.v1.2.9", "", &[], ""),
                    entry("p.v1.3.0", "p.v1.2.8", &["p.v1.2.9"], ""),
                    entry("p.v1.4.0", "p.v1.3.0", &["p.v1.2.9"], "<1.3.0"),
                ]),
                properties: vec![],
                origin: Origin::default(),
            }],
            bundles: ["1.2.8", "1.2.9", "1.3.0", "1.4.0"]
                .iter()
                .map(|v| bundle(&format!("p.v{v}"), "p", v, ""))
                .collect(),
            deprecations: vec![Deprecation {
                schema: SCHEMA_DEPRECATIONS.into(),
                package: "p".into(),
                entries: vec![DeprecationEntry {
                    reference: PackageScopedReference {
                        schema: SCHEMA_BUNDLE.into(),
                        name: "p.v1.2.9".into(),
                    },
                    message: "old".into(),
                }],
                origin: Origin::default(),
            }],
            ..DeclarativeConfig::default()
        };
        let mut warnings = vec![];
        let out =
            write_mermaid(&cfg, &MermaidOptions::default(), &mut warnings).unwrap_or_default();
        let expected = r#"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "p"
  subgraph "p"
    %% channel "beta"
    subgraph p-beta["beta"]
      p-beta-p.v1.4.0["p.v1.4.0"]
      p-beta-p.v1.2.9["p.v1.2.9"]-- skip --> p-beta-p.v1.4.0["p.v1.4.0"]
      p-beta-p.v1.2.8["p.v1.2.8"]-- "skipRange(<1.3.0)" --> p-beta-p.v1.4.0["p.v1.4.0"]
      p-beta-p.v1.2.9["p.v1.2.9"]-- "skipRange(<1.3.0)" --> p-beta-p.v1.4.0["p.v1.4.0"]
      p-beta-p.v1.3.0["p.v1.3.0"]-- replace --> p-beta-p.v1.4.0["p.v1.4.0"]
      p-beta-p.v1.3.0["p.v1.3.0"]
      p-beta-p.v1.2.9["p.v1.2.9"]-- skip --> p-beta-p.v1.3.0["p.v1.3.0"]
      p-beta-p.v1.2.8["p.v1.2.8"]-- replace --> p-beta-p.v1.3.0["p.v1.3.0"]
      p-beta-p.v1.2.9["p.v1.2.9"]
      p-beta-p.v1.2.8["p.v1.2.8"]
    end
  end
class p-beta-p.v1.2.9 deprecatedskipped
linkStyle 4 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
"#;
        assert_eq!(out, expected);
        assert!(warnings.is_empty());
    }
}
