//! Dependency closure: a filtered catalog in which every kept bundle can be installed.
//!
//! Why: catalog-filter (and so oc-mirror v2) keeps what the configuration names and nothing
//! else, so a bundle whose `olm.package.required` or `olm.gvk.required` names a package the
//! filter left out is mirrored, shown in OperatorHub, and then fails to resolve on the
//! disconnected cluster ("oc-mirror v2 does not handle dependencies", oc-mirror #1462). Here
//! every requirement of every kept bundle is met inside the filtered catalog, by adding the
//! bundle OLM v0's resolver would pick, and repeating for what that bundle requires, until
//! nothing is missing.
//!
//! Which bundle is added for a requirement nothing kept satisfies: among the packages the
//! configuration does not name, in package-name order (OLM leaves the choice between packages
//! to its solver; a fixed order keeps the result reproducible), the first bundle that satisfies
//! it in OLM v0's preference order: the default channel first, then the other channels by name;
//! in a channel, the head first and then down its `replaces` chain, then any other entry,
//! newest first. So a requirement the head satisfies adds the head, and a range below the head
//! adds the newest bundle inside the range. A bundle already added for another requirement is
//! reused when it satisfies this one too.
//!
//! The added bundles join the filter as one more package configuration each (the picked
//! channels, each with the range from the lowest to the highest picked version, or the one
//! version), so the channels they land in follow the same rules as the user's own.
//!
//! What is an error: a requirement nothing in the catalog satisfies, and one only a package
//! the configuration names could satisfy with a bundle the configuration leaves out (the
//! user's own selection is not widened behind their back). Every unmet requirement is
//! reported at once, each with the bundle that has it.

use super::config::{At, ChannelFilter, FilterConfig, PackageFilter};
use super::{FilterError, Filtered};
use crate::catalog::bundle_facts::Gvk;
use crate::catalog::channel::{ChainWalk, ChannelGraph};
use crate::catalog::model::{Bundle, DeclarativeConfig, property_type};
use crate::catalog::property_value::PropertyValue;
use crate::gocompat::mmsemver::Constraints;
use crate::semver_range::Range;
use semver::Version;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// What a bundle needs from others to install.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Requirement {
    /// `olm.package.required`: a package, with a blang version range.
    Package {
        /// `packageName`.
        name: String,
        /// `versionRange`, as written.
        range: String,
    },
    /// `olm.gvk.required`: an API some bundle must provide.
    Api(Gvk),
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Package { name, range } => {
                write!(f, "package {name:?} in range {range:?}")
            }
            Requirement::Api(g) => write!(f, "API {}/{} {}", g.group, g.version, g.kind),
        }
    }
}

/// A bundle the closure added, and the kept bundle it was added for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// The added bundle's package.
    pub package: String,
    /// The added bundle.
    pub bundle: String,
    /// The channel it was picked from.
    pub channel: String,
    /// The bundle that needs it.
    pub for_bundle: String,
    /// The package of the bundle that needs it.
    pub for_package: String,
    /// What the needing bundle requires.
    pub requirement: Requirement,
}

impl fmt::Display for Added {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "added bundle {:?} (package {:?}, channel {:?}) for bundle {:?} of package {:?}, which requires {}",
            self.bundle,
            self.package,
            self.channel,
            self.for_bundle,
            self.for_package,
            self.requirement
        )
    }
}

/// A requirement of a kept bundle that the filtered catalog cannot meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet {
    /// The package of the bundle with the requirement.
    pub package: String,
    /// The bundle with the requirement.
    pub bundle: String,
    /// The requirement (`None` when the property itself cannot be read).
    pub requirement: Option<Requirement>,
    /// Why nothing meets it.
    pub reason: String,
}

impl fmt::Display for Unmet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.requirement {
            Some(r) => write!(
                f,
                "bundle {:?} of package {:?} requires {r}: {}",
                self.bundle, self.package, self.reason
            ),
            None => write!(
                f,
                "bundle {:?} of package {:?}: {}",
                self.bundle, self.package, self.reason
            ),
        }
    }
}

/// A requirement as read from the bundle, with its range parsed.
struct Need {
    requirement: Requirement,
    range: Option<Range>,
}

impl Need {
    fn met_by(&self, b: &Bundle) -> bool {
        match &self.requirement {
            Requirement::Package { name, .. } => {
                &b.package == name
                    && b.version()
                        .is_some_and(|v| self.range.as_ref().is_some_and(|r| r.matches(&v)))
            }
            Requirement::Api(g) => b
                .provided_apis()
                .map(|apis| apis.contains(g))
                .unwrap_or(false),
        }
    }
}

/// The requirements of `b`, or why one cannot be read.
fn needs(b: &Bundle) -> Result<Vec<Need>, String> {
    let mut out = Vec::new();
    for (_, p) in b.properties_of(property_type::PACKAGE_REQUIRED) {
        let v = PropertyValue::decode(&p.value, "property.PackageRequired")
            .map_err(|e| format!("{} property: {e}", property_type::PACKAGE_REQUIRED))?;
        let name = v
            .string("packageName")
            .map_err(|e| format!("{} property: {e}", property_type::PACKAGE_REQUIRED))?;
        let range = v
            .string("versionRange")
            .map_err(|e| format!("{} property: {e}", property_type::PACKAGE_REQUIRED))?;
        let parsed = Range::parse(&range).map_err(|e| {
            format!(
                "{} of package {name:?}: versionRange {range:?} is not a range OLM reads: {e}",
                property_type::PACKAGE_REQUIRED
            )
        })?;
        out.push(Need {
            requirement: Requirement::Package { name, range },
            range: Some(parsed),
        });
    }
    let apis = b
        .required_apis()
        .map_err(|e| format!("{} property: {e}", property_type::GVK_REQUIRED))?;
    out.extend(apis.into_iter().map(|g| Need {
        requirement: Requirement::Api(g),
        range: None,
    }));
    Ok(out)
}

/// A bundle of the whole catalog that could meet a requirement, with where it sits.
#[derive(Clone)]
struct Pick<'c> {
    bundle: &'c Bundle,
    channel: String,
    version: Version,
}

/// The whole catalog's bundles of each package in OLM v0's preference order.
struct Preference<'c> {
    by_package: BTreeMap<&'c str, Vec<Pick<'c>>>,
    default_channel: HashMap<&'c str, &'c str>,
}

impl<'c> Preference<'c> {
    fn new(cfg: &'c DeclarativeConfig) -> Self {
        let bundles: HashMap<(&str, &str), &Bundle> = cfg
            .bundles
            .iter()
            .map(|b| ((b.package.as_str(), b.name.as_str()), b))
            .collect();
        let default_channel: HashMap<&str, &str> = cfg
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.default_channel.as_str()))
            .collect();
        let mut channels: Vec<_> = cfg.channels.iter().collect();
        channels.sort_by_key(|c| {
            let is_default = default_channel.get(c.package.as_str()) == Some(&c.name.as_str());
            (c.package.as_str(), !is_default, c.name.as_str())
        });
        let mut by_package: BTreeMap<&str, Vec<Pick>> = BTreeMap::new();
        for ch in channels {
            let version_of = |n: &str| {
                bundles
                    .get(&(ch.package.as_str(), n))
                    .and_then(|b| b.version())
            };
            let g = ChannelGraph::new(ch, version_of);
            let mut order: Vec<String> = Vec::new();
            if let Ok(head) = g.head_with_substitutes().or_else(|_| g.head()) {
                // A looping chain gives no order; the newest-first rest below still holds all.
                order = g
                    .replaces_chain_as(head, ChainWalk::ThroughSkipped)
                    .unwrap_or_else(|_| vec![head.to_string()]);
            }
            let mut rest: Vec<(&str, Option<Version>)> = g
                .names()
                .filter(|n| !order.iter().any(|o| o == n))
                .map(|n| (n, version_of(n)))
                .collect();
            rest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            order.extend(rest.into_iter().map(|(n, _)| n.to_string()));
            let picks = by_package.entry(ch.package.as_str()).or_default();
            for name in order {
                let Some(b) = bundles.get(&(ch.package.as_str(), name.as_str())) else {
                    continue;
                };
                let Some(version) = b.version() else {
                    continue;
                };
                picks.push(Pick {
                    bundle: b,
                    channel: ch.name.clone(),
                    version,
                });
            }
        }
        Preference {
            by_package,
            default_channel,
        }
    }
}

/// What the closure adds to one package: per channel, the picked versions.
#[derive(Default)]
struct PackagePicks {
    channels: BTreeMap<String, BTreeSet<Version>>,
    first_channel: String,
}

/// Adds to `first` (the filter of `original` by `fc`) what its bundles require, until closed.
pub(super) fn close(
    original: &DeclarativeConfig,
    fc: &FilterConfig,
    first: Filtered,
) -> Result<Filtered, FilterError> {
    let configured: HashMap<&str, &PackageFilter> = fc
        .packages
        .iter()
        .map(|p| (p.name.value.as_str(), p))
        .collect();
    let preference = Preference::new(original);
    let mut picks: BTreeMap<String, PackagePicks> = BTreeMap::new();
    let mut added: Vec<Added> = Vec::new();
    let mut current = first;
    // Each round adds at least one bundle of the whole catalog, so this many rounds suffice.
    for _ in 0..=original.bundles.len() {
        let mut unmet = Vec::new();
        let mut grew = false;
        let mut picked_now: Vec<(&Bundle, String)> = Vec::new();
        for b in &current.config.bundles {
            let needs = match needs(b) {
                Ok(n) => n,
                Err(reason) => {
                    unmet.push(Unmet {
                        package: b.package.clone(),
                        bundle: b.name.clone(),
                        requirement: None,
                        reason,
                    });
                    continue;
                }
            };
            for need in needs {
                if current.config.bundles.iter().any(|k| need.met_by(k)) {
                    continue;
                }
                // Met by a bundle picked this round for another requirer: reported for this
                // one too.
                if let Some((k, channel)) = picked_now.iter().find(|(k, _)| need.met_by(k)) {
                    added.push(Added {
                        package: k.package.clone(),
                        bundle: k.name.clone(),
                        channel: channel.clone(),
                        for_bundle: b.name.clone(),
                        for_package: b.package.clone(),
                        requirement: need.requirement,
                    });
                    continue;
                }
                match choose(&preference, &need, &configured) {
                    Ok(pick) => {
                        let entry = picks.entry(pick.bundle.package.clone()).or_default();
                        if entry.first_channel.is_empty() {
                            entry.first_channel = pick.channel.clone();
                        }
                        let new = entry
                            .channels
                            .entry(pick.channel.clone())
                            .or_default()
                            .insert(pick.version.clone());
                        if !new {
                            // Picked in an earlier round, yet the filter did not keep it: the
                            // channel's range cannot hold it (a pre-release, which ranges do
                            // not match, or an entry off the head's replaces chain). Refused
                            // rather than reported closed.
                            unmet.push(Unmet {
                                package: b.package.clone(),
                                bundle: b.name.clone(),
                                requirement: Some(need.requirement),
                                reason: format!(
                                    "bundle {:?} (package {:?}, channel {:?}) meets it, but a channel filter cannot keep it (a pre-release version, or an entry off the channel's replaces chain): add it to the filter's bundles by hand",
                                    pick.bundle.name, pick.bundle.package, pick.channel
                                ),
                            });
                            continue;
                        }
                        grew = true;
                        picked_now.push((pick.bundle, pick.channel.clone()));
                        added.push(Added {
                            package: pick.bundle.package.clone(),
                            bundle: pick.bundle.name.clone(),
                            channel: pick.channel,
                            for_bundle: b.name.clone(),
                            for_package: b.package.clone(),
                            requirement: need.requirement,
                        });
                    }
                    Err(reason) => unmet.push(Unmet {
                        package: b.package.clone(),
                        bundle: b.name.clone(),
                        requirement: Some(need.requirement),
                        reason,
                    }),
                }
            }
        }
        if !unmet.is_empty() {
            unmet.sort_by(|a, b| (&a.package, &a.bundle).cmp(&(&b.package, &b.bundle)));
            unmet.dedup();
            return Err(FilterError::Dependencies(unmet));
        }
        if !grew {
            current.added = added;
            for b in &current.config.bundles {
                if b.properties_of(property_type::CONSTRAINT).next().is_some() {
                    current.warnings.push(format!(
                        "bundle {:?} of package {:?} has an {} (CEL or compound): the dependency closure does not evaluate it, so check by hand that the filtered catalog meets it",
                        b.name,
                        b.package,
                        property_type::CONSTRAINT
                    ));
                }
            }
            return Ok(current);
        }
        let mut widened = fc.clone();
        widened.packages.extend(
            picks
                .iter()
                .map(|(pkg, p)| package_filter(pkg, p, &preference)),
        );
        current = super::filter_selected(original.clone(), &widened)?;
    }
    Err(FilterError::Catalog(
        "the dependency closure did not settle (a bug: please report it with the catalog)".into(),
    ))
}

/// The first bundle, in preference order, of a package the configuration does not name that
/// meets `need`; or why there is none.
fn choose<'c>(
    preference: &Preference<'c>,
    need: &Need,
    configured: &HashMap<&str, &PackageFilter>,
) -> Result<Pick<'c>, String> {
    let mut only_configured: Vec<(&str, usize)> = Vec::new();
    let packages: Box<dyn Iterator<Item = (&&str, &Vec<Pick>)>> = match &need.requirement {
        Requirement::Package { name, .. } => {
            let Some((k, v)) = preference.by_package.get_key_value(name.as_str()) else {
                return Err(format!("the catalog has no package {name:?}"));
            };
            Box::new(std::iter::once((k, v)))
        }
        Requirement::Api(_) => Box::new(preference.by_package.iter()),
    };
    for (pkg, candidates) in packages {
        let Some(pick) = candidates.iter().find(|p| need.met_by(p.bundle)) else {
            continue;
        };
        if let Some(pc) = configured.get(pkg) {
            only_configured.push((pkg, pc.name.line));
            continue;
        }
        return Ok(pick.clone());
    }
    if let Some((pkg, line)) = only_configured.first() {
        let at = if *line > 0 {
            format!(" (line {line} of the filter)")
        } else {
            String::new()
        };
        return Err(format!(
            "only bundles of package {pkg:?} meet it, and the filter{at} leaves them out: widen its selection for {pkg:?}"
        ));
    }
    Err(match &need.requirement {
        Requirement::Package { name, .. } => {
            let versions: Vec<String> = preference
                .by_package
                .get(name.as_str())
                .map(|c| {
                    c.iter()
                        .map(|p| p.version.to_string())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "no bundle of {name:?} in the catalog is in that range (its versions: {})",
                versions.join(", ")
            )
        }
        Requirement::Api(_) => "no bundle in the catalog provides it".into(),
    })
}

/// The package configuration that keeps the picked versions of `pkg`.
fn package_filter(pkg: &str, picks: &PackagePicks, preference: &Preference<'_>) -> PackageFilter {
    let default = preference
        .default_channel
        .get(pkg)
        .copied()
        .filter(|d| picks.channels.contains_key(*d))
        .map(str::to_string)
        .unwrap_or_else(|| picks.first_channel.clone());
    PackageFilter {
        name: At::new(pkg.to_string()),
        default_channel: Some(At::new(default)),
        version_range: None,
        channels: picks
            .channels
            .iter()
            .map(|(channel, versions)| ChannelFilter {
                name: At::new(channel.clone()),
                version_range: range_of(versions).map(At::new),
            })
            .collect(),
        bundles: vec![],
    }
}

/// `=V` for one version, `>=low <=high` for several (Masterminds' grammar, as the filter reads
/// its ranges).
fn range_of(versions: &BTreeSet<Version>) -> Option<Constraints> {
    let (low, high) = (versions.first()?, versions.last()?);
    let text = if low == high {
        format!("={low}")
    } else {
        format!(">={low} <={high}")
    };
    Constraints::parse(&text).ok()
}
