//! Consistency between one operator's OpenShift targets (the `matrix/…` rules).
//!
//! Why: every target is a valid catalog alone, so `opm validate` passes each, yet a bundle name
//! bound to two images, a release left out of one version inside its supported range, channel
//! heads or defaults that drifted between templates, and a catalog folder nothing regenerates are
//! all visible only side by side. Two targets rendered from the same template cannot differ in
//! these (only the migration differs), so pairs are compared across templates only.

use super::OperatorPlan;
use crate::catalog::channel::ChannelGraph;
use crate::catalog::model::DeclarativeConfig;
use crate::catalog::repo_layout::{OcpVersion, RepoLayout};
use crate::findings::Diagnostic;
use crate::findings::rules::Rule;
use crate::yaml;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A consistency finding (rule id, file and line, message).
pub type Finding = Diagnostic;

/// The OpenShift versions a bundle supports (`com.redhat.openshift.versions`, read with the
/// pipelines' index semantics: `v4.12` is 4.12 and later, `v4.12-v4.14` a range, `=v4.14` one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupportedRange {
    /// Lowest version, inclusive.
    pub low: Option<OcpVersion>,
    /// Highest version, inclusive.
    pub high: Option<OcpVersion>,
    /// The annotation as written.
    pub text: String,
}

impl SupportedRange {
    /// Parses the annotation value; `None` when it is not one of the pipelines' forms.
    pub fn parse(text: &str) -> Option<SupportedRange> {
        let spec = text.trim().trim_matches('"').trim_matches('\'');
        let (low, high) = if let Some(one) = spec.strip_prefix('=') {
            let v = OcpVersion::parse_loose(one)?;
            (Some(v), Some(v))
        } else if let Some((lo, hi)) = spec.split_once('-') {
            (
                Some(OcpVersion::parse_loose(lo)?),
                Some(OcpVersion::parse_loose(hi)?),
            )
        } else {
            let first = spec.split(',').next().unwrap_or_default();
            (Some(OcpVersion::parse_loose(first)?), None)
        };
        Some(SupportedRange {
            low,
            high,
            text: spec.to_string(),
        })
    }

    /// Whether `v` is inside.
    pub fn contains(&self, v: OcpVersion) -> bool {
        self.low.is_none_or(|l| v >= l) && self.high.is_none_or(|h| v <= h)
    }
}

/// `com.redhat.openshift.versions` of a bundle folder's `metadata/annotations.yaml`.
pub fn supported_range_of(bundle_dir: &Path) -> Option<SupportedRange> {
    let text = std::fs::read_to_string(bundle_dir.join("metadata/annotations.yaml")).ok()?;
    let docs = yaml::parse_stream(&text).ok()?;
    let value = docs
        .first()?
        .root
        .path(&["annotations", "com.redhat.openshift.versions"])?
        .scalar_text()?
        .to_string();
    SupportedRange::parse(&value)
}

/// One rendered target, as the checks read it.
#[derive(Debug, Clone)]
pub struct RenderedTarget<'a> {
    /// The catalog folder (`v4.17`).
    pub ocp: &'a str,
    /// The template it was rendered from.
    pub template: &'a str,
    /// The rendered catalog.
    pub config: &'a DeclarativeConfig,
}

/// Runs every `matrix/…` rule on one operator's rendered targets. `range_of` gives a bundle's
/// supported OpenShift versions from its version (`None`: unknown, read as every version).
pub fn check(
    layout: &RepoLayout,
    plan: &OperatorPlan,
    targets: &[RenderedTarget<'_>],
    range_of: &dyn Fn(&str) -> Option<SupportedRange>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let rel = |p: &Path| {
        p.strip_prefix(layout.root())
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let ci = rel(&plan.ci_file);
    let line_of_target = |ocp: &str| {
        plan.targets()
            .find(|(_, t)| t.ocp == ocp)
            .map_or(0, |(_, t)| t.line)
    };
    let template_file = |name: &str| {
        plan.templates
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.file.clone())
    };
    // Versioned targets in version order (others are not compared by range or neighbourhood).
    let mut ordered: Vec<(OcpVersion, &RenderedTarget<'_>)> = targets
        .iter()
        .filter_map(|t| OcpVersion::parse(t.ocp).map(|v| (v, t)))
        .collect();
    ordered.sort_by_key(|(v, _)| *v);

    // matrix/image-differs: one bundle name, two images.
    let mut images: BTreeMap<&str, Vec<(&RenderedTarget<'_>, &str)>> = BTreeMap::new();
    for t in targets {
        for b in &t.config.bundles {
            images.entry(&b.name).or_default().push((t, &b.image));
        }
    }
    for (name, seen) in &images {
        let Some((first, first_image)) = seen.first() else {
            continue;
        };
        let mut reported = BTreeSet::new();
        for (t, image) in seen.iter().skip(1) {
            if image == first_image || !reported.insert(*image) {
                continue;
            }
            let (file, line) = match template_file(t.template) {
                Some(f) => (rel(&f), line_containing(&f, image)),
                None => (ci.clone(), line_of_target(t.ocp)),
            };
            out.push(
                Diagnostic::new(
                    Rule::MatrixImageDiffers,
                    format!(
                        "{name} is {first_image} in {} ({}) but {image} in {} ({})",
                        first.ocp, first.template, t.ocp, t.template
                    ),
                )
                .near(file, line),
            );
        }
    }

    // matrix/bundle-missing: a hole inside the supported range.
    let mut versions_of: BTreeMap<&str, String> = BTreeMap::new();
    for (_, t) in &ordered {
        for b in &t.config.bundles {
            versions_of
                .entry(&b.name)
                .or_insert_with(|| b.version_text());
        }
    }
    for (name, version) in &versions_of {
        let present: Vec<bool> = ordered
            .iter()
            .map(|(_, t)| t.config.bundles.iter().any(|b| b.name == *name))
            .collect();
        let range = range_of(version);
        for (i, (v, t)) in ordered.iter().enumerate() {
            if present.get(i) == Some(&true) {
                continue;
            }
            let below = present.iter().take(i).any(|p| *p);
            let above = present.iter().skip(i + 1).any(|p| *p);
            if !(below && above) {
                continue;
            }
            if range.as_ref().is_some_and(|r| !r.contains(*v)) {
                continue;
            }
            let why = match &range {
                Some(r) => format!(
                    "its com.redhat.openshift.versions {:?} includes {v}",
                    r.text
                ),
                None => "no com.redhat.openshift.versions limits it".to_string(),
            };
            out.push(
                Diagnostic::new(
                    Rule::MatrixBundleMissing,
                    format!(
                        "{name} is missing from {} (template {}) but in the targets below and above it, and {why}",
                        t.ocp, t.template
                    ),
                )
                .near(ci.clone(), line_of_target(t.ocp)),
            );
        }
    }

    // matrix/channel-head-differs and matrix/default-channel-differs: neighbours from
    // different templates.
    for pair in ordered.windows(2) {
        let [(va, a), (vb, b)] = pair else { continue };
        if a.template == b.template {
            continue;
        }
        for ca in &a.config.channels {
            let Some(cb) = b.config.channels.iter().find(|c| c.name == ca.name) else {
                continue;
            };
            let (Ok(ha), Ok(hb)) = (
                ChannelGraph::new(ca, |_| None).head(),
                ChannelGraph::new(cb, |_| None).head(),
            ) else {
                continue;
            };
            if ha == hb {
                continue;
            }
            // A reason: a head the other target lacks and whose range excludes that target.
            let excluded = |head: &str, other: &RenderedTarget<'_>, v: OcpVersion| {
                let in_other = other.config.bundles.iter().any(|x| x.name == head);
                !in_other
                    && versions_of
                        .get(head)
                        .and_then(|ver| range_of(ver))
                        .is_some_and(|r| !r.contains(v))
            };
            if excluded(ha, b, *vb) || excluded(hb, a, *va) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    Rule::MatrixChannelHeadDiffers,
                    format!(
                        "channel {}: head {ha} in {} ({}) but {hb} in {} ({}), and nothing in the bundles' com.redhat.openshift.versions explains it",
                        ca.name, a.ocp, a.template, b.ocp, b.template
                    ),
                )
                .near(ci.clone(), line_of_target(b.ocp)),
            );
        }
        let (Some(pa), Some(pb)) = (a.config.packages.first(), b.config.packages.first()) else {
            continue;
        };
        if pa.default_channel == pb.default_channel {
            continue;
        }
        let has = |cfg: &DeclarativeConfig, c: &str| cfg.channels.iter().any(|x| x.name == c);
        let both_everywhere = [&pa.default_channel, &pb.default_channel]
            .iter()
            .all(|c| has(a.config, c) && has(b.config, c));
        if both_everywhere {
            let (file, line) = match template_file(b.template) {
                Some(f) => {
                    let l = line_containing(&f, "defaultChannel");
                    (rel(&f), l)
                }
                None => (ci.clone(), line_of_target(b.ocp)),
            };
            out.push(
                Diagnostic::new(
                    Rule::MatrixDefaultChannelDiffers,
                    format!(
                        "default channel {} in {} ({}) but {} in {} ({}), although both targets have both channels",
                        pa.default_channel, a.ocp, a.template, pb.default_channel, b.ocp, b.template
                    ),
                )
                .near(file, line),
            );
        }
    }

    // matrix/unmapped-catalog: a folder no mapping produces.
    let mapped: BTreeSet<&str> = plan.targets().map(|(_, t)| t.ocp.as_str()).collect();
    for ocp in layout.catalog_folders_of(&plan.operator) {
        if mapped.contains(ocp.as_str()) {
            continue;
        }
        let file = layout.catalog_file(&ocp, &plan.operator);
        out.push(
            Diagnostic::new(
                Rule::MatrixUnmappedCatalog,
                format!(
                    "catalogs/{ocp}/{} is produced by no template of {ci}'s fbc.catalog_mapping (make catalogs would delete it)",
                    plan.operator
                ),
            )
            .in_file(rel(&file)),
        );
    }
    out
}

/// The 1-based line of the first line of `file` that contains `needle`, 0 when none does.
fn line_containing(file: &Path, needle: &str) -> usize {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.lines().position(|l| l.contains(needle)).map(|i| i + 1))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_like_the_pipelines() {
        let v = |s: &str| OcpVersion::parse(s).unwrap_or(OcpVersion { major: 0, minor: 0 });
        let r = SupportedRange::parse("v4.12").unwrap_or_else(|| panic!("parses"));
        assert!(r.contains(v("v4.12")) && r.contains(v("v5.0")) && !r.contains(v("v4.11")));
        let r = SupportedRange::parse("\"v4.12-v4.14\"").unwrap_or_else(|| panic!("parses"));
        assert!(r.contains(v("v4.14")) && !r.contains(v("v4.15")));
        let r = SupportedRange::parse("=v4.14").unwrap_or_else(|| panic!("parses"));
        assert!(r.contains(v("v4.14")) && !r.contains(v("v4.13")));
        assert!(SupportedRange::parse("banana").is_none());
    }
}
