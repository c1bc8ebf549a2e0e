//! opm's model check ([`crate::catalog::model_check`], the one `catalog serve` refuses a catalog
//! with) as findings: each problem under its rule id, at the file and line of the blob at fault,
//! in opm's words followed by how to fix it. A problem about several blobs (stranded entries,
//! duplicate versions, entries without a bundle) is one finding per blob.

use super::*;
use crate::catalog::channel::HeadError;
use crate::catalog::model_check::{self, Blob, Found, ModelProblem as P, ReleaseError};

/// The rules whose findings come from the model check: a catalog has an error of one of these
/// exactly when `catalog serve` refuses it (after it loads).
pub const MODEL_RULES: [Rule; 25] = [
    Rule::CatalogPackageName,
    Rule::CatalogPackageDuplicate,
    Rule::CatalogPackageUnknown,
    Rule::CatalogChannelName,
    Rule::CatalogChannelDuplicate,
    Rule::CatalogEntryDuplicate,
    Rule::CatalogBundlePackage,
    Rule::CatalogBundleDuplicate,
    Rule::CatalogPackageProperty,
    Rule::CatalogImageReference,
    Rule::CatalogVersion,
    Rule::CatalogBundleNotInChannel,
    Rule::CatalogBundleName,
    Rule::CatalogBundleImage,
    Rule::CatalogEntryMissingBundle,
    Rule::CatalogDeprecation,
    Rule::CatalogDefaultChannel,
    Rule::CatalogPackageNoChannels,
    Rule::CatalogChannelEmpty,
    Rule::CatalogSkipEmpty,
    Rule::CatalogSkipRange,
    Rule::CatalogChannelHead,
    Rule::CatalogReplacesCycle,
    Rule::CatalogStranded,
    Rule::CatalogDuplicateVersion,
];

/// Every problem of the model check as findings, in the check's order.
pub(super) fn findings(cfg: &DeclarativeConfig) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for found in model_check::check(cfg) {
        push(cfg, &found, &mut out);
    }
    out
}

fn origin(cfg: &DeclarativeConfig, blob: Blob) -> &Origin {
    static NONE: std::sync::OnceLock<Origin> = std::sync::OnceLock::new();
    let found = match blob {
        Blob::Package(i) => cfg.packages.get(i).map(|p| &p.origin),
        Blob::Channel(i) => cfg.channels.get(i).map(|c| &c.origin),
        Blob::Entry { channel, entry } => cfg
            .channels
            .get(channel)
            .and_then(|c| entries(c).get(entry))
            .map(|e| &e.origin),
        Blob::Bundle(i) => cfg.bundles.get(i).map(|b| &b.origin),
        Blob::Deprecation(i) => cfg.deprecations.get(i).map(|d| &d.origin),
    };
    found.unwrap_or_else(|| NONE.get_or_init(Origin::default))
}

/// The problem of `found` as findings: the conversion's problems here, the model
/// validation's in [`push_validation`].
fn push(cfg: &DeclarativeConfig, found: &Found, out: &mut Vec<Diagnostic>) {
    let o = origin(cfg, found.blob);
    let p = &found.problem;
    let mut one = |rule: Rule, message: String| out.push(at(rule, o, message));
    match p {
        P::PackageNoName => one(Rule::CatalogPackageName, format!("{p}: set `name`")),
        P::PackageDuplicate { name, first } => {
            let f = origin(cfg, Blob::Package(*first));
            one(
                Rule::CatalogPackageDuplicate,
                format!(
                    "duplicate package {name:?} (first declared at {}:{}): keep one olm.package blob",
                    f.file, f.line
                ),
            )
        }
        P::PackageName { .. } => one(
            Rule::CatalogPackageName,
            format!("{p}: use lowercase letters, digits and '-'"),
        ),
        P::ChannelUnknownPackage { .. } | P::BundleUnknownPackage { .. } => one(
            Rule::CatalogPackageUnknown,
            format!("{p}: add an olm.package blob for it or fix `package`"),
        ),
        P::ChannelNoName { .. } => one(Rule::CatalogChannelName, format!("{p}: set `name`")),
        P::ChannelDuplicate {
            package,
            channel,
            first,
        } => {
            let f = origin(cfg, Blob::Channel(*first));
            one(
                Rule::CatalogChannelDuplicate,
                format!(
                    "package {package:?} has duplicate channel {channel:?} (first at {}:{}): merge their entries into one blob",
                    f.file, f.line
                ),
            )
        }
        P::EntryDuplicate { .. } => one(
            Rule::CatalogEntryDuplicate,
            format!("{p}: list each bundle once"),
        ),
        P::BundleNoPackage { .. } => one(Rule::CatalogBundlePackage, format!("{p}: set `package`")),
        P::BundleDuplicate {
            package,
            bundle,
            first,
        } => {
            let f = origin(cfg, Blob::Bundle(*first));
            one(
                Rule::CatalogBundleDuplicate,
                format!(
                    "package {package:?} has duplicate bundle {bundle:?} (first at {}:{}): keep one",
                    f.file, f.line
                ),
            )
        }
        P::PackageCount { .. } => one(Rule::CatalogPackageProperty, p.to_string()),
        P::PackageValue { .. } => one(
            Rule::CatalogPackageProperty,
            format!("{p}: fix the value's shape"),
        ),
        P::PackageMismatch { .. } => {
            one(Rule::CatalogBundlePackage, format!("{p}: make them equal"))
        }
        P::ImageReference { .. } => one(Rule::CatalogImageReference, p.to_string()),
        P::Version { .. } => one(
            Rule::CatalogVersion,
            format!("{p}: use a strict semantic version such as 1.2.3"),
        ),
        P::Release { error, .. } => one(
            Rule::CatalogVersion,
            match error {
                ReleaseError::TooLong => p.to_string(),
                ReleaseError::Syntax(_) => {
                    format!("{p}: use dot-separated alphanumeric identifiers")
                }
            },
        ),
        P::BundleNotInChannel { .. } => one(
            Rule::CatalogBundleNotInChannel,
            format!("{p}: add it to a channel or remove the bundle"),
        ),
        P::MissingBundles {
            package,
            channel,
            entries: missing,
            ..
        } => missing_bundles(cfg, package, *channel, missing, out),
        P::DeprecationNoPackage { .. } => one(
            Rule::CatalogDeprecation,
            "package name must be set for deprecation item: set `package`".into(),
        ),
        P::DeprecationUnknownPackage { .. } => one(
            Rule::CatalogPackageUnknown,
            format!("{p}: fix `package` or add the package"),
        ),
        P::DeprecationDuplicate { first, .. } => {
            let f = origin(cfg, Blob::Deprecation(*first));
            one(
                Rule::CatalogDeprecation,
                format!("{p} (first at {}:{}): merge the entries", f.file, f.line),
            )
        }
        P::DeprecationNoSchema { .. }
        | P::DeprecationEntryDuplicate { .. }
        | P::DeprecatedBundleMissing { .. }
        | P::DeprecatedChannelMissing { .. }
        | P::DeprecatedPackageNamed { .. }
        | P::DeprecationSchemaUnknown { .. } => one(Rule::CatalogDeprecation, p.to_string()),
        P::DeprecationMessage { package, entry } => one(
            Rule::CatalogDeprecation,
            format!(
                "deprecation entry [{entry}] for package {package:?}: invalid deprecation: message must be set"
            ),
        ),
        P::DefaultChannelUnset { .. }
        | P::DefaultChannelMissing { .. }
        | P::PackageNoChannels { .. }
        | P::ChannelEmpty { .. }
        | P::SkipEmpty { .. }
        | P::SkipRange { .. }
        | P::ChannelHead { .. }
        | P::ReplacesCycle { .. }
        | P::Stranded { .. }
        | P::BundleImage { .. }
        | P::NormalizedName { .. }
        | P::BuildMetadata { .. }
        | P::DuplicateVersions { .. } => push_validation(cfg, found, out),
    }
}

/// One finding per channel entry whose bundle is missing (an entry with no name is a
/// bundle-name finding).
fn missing_bundles(
    cfg: &DeclarativeConfig,
    package: &str,
    channel: usize,
    missing: &[usize],
    out: &mut Vec<Diagnostic>,
) {
    let Some(c) = cfg.channels.get(channel) else {
        return;
    };
    for e in missing.iter().filter_map(|&ei| entries(c).get(ei)) {
        if e.name.is_empty() {
            out.push(at(
                Rule::CatalogBundleName,
                &e.origin,
                format!(
                    "channel {:?} of package {package:?} has an entry with no name: set `name`",
                    c.name
                ),
            ));
        } else {
            out.push(at(
                Rule::CatalogEntryMissingBundle,
                &e.origin,
                format!(
                    "no olm.bundle blobs found in package {package:?} for olm.channel entries [{}] (channel {:?}): add the bundle or remove the entry",
                    e.name, c.name
                ),
            ));
        }
    }
}

/// The model validation's problems as findings (a problem about several blobs is one
/// finding per blob); [`push`] hands over only these.
fn push_validation(cfg: &DeclarativeConfig, found: &Found, out: &mut Vec<Diagnostic>) {
    let o = origin(cfg, found.blob);
    let p = &found.problem;
    let mut one = |rule: Rule, message: String| out.push(at(rule, o, message));
    match p {
        P::DefaultChannelUnset { package } => one(
            Rule::CatalogDefaultChannel,
            format!(
                "invalid package {package:?}: default channel must be set: set `defaultChannel` to one of its channels"
            ),
        ),
        P::DefaultChannelMissing { package, channel } => one(
            Rule::CatalogDefaultChannel,
            format!(
                "invalid package {package:?}: default channel {channel:?} has no olm.channel blob (opm: channel must contain at least one bundle): add the channel or fix `defaultChannel`"
            ),
        ),
        P::PackageNoChannels { .. } => one(Rule::CatalogPackageNoChannels, p.to_string()),
        P::ChannelEmpty { package, channel } => one(
            Rule::CatalogChannelEmpty,
            format!(
                "invalid channel {channel:?} of package {package:?}: channel must contain at least one bundle: add an entry or remove the channel"
            ),
        ),
        P::SkipEmpty {
            channel,
            bundle,
            index,
            ..
        } => one(
            Rule::CatalogSkipEmpty,
            format!(
                "invalid bundle {bundle:?} in channel {channel:?}: skip[{index}] is empty: remove it"
            ),
        ),
        P::SkipRange {
            channel,
            bundle,
            range,
            error,
            ..
        } => one(
            Rule::CatalogSkipRange,
            format!(
                "invalid bundle {bundle:?} in channel {channel:?}: invalid skipRange {range:?}: {error}"
            ),
        ),
        P::ChannelHead {
            package,
            channel,
            error,
        } => one(
            Rule::CatalogChannelHead,
            match error {
                HeadError::Multiple(_) => format!(
                    "invalid channel {channel:?} of package {package:?}: {error}: make the newest replace or skip the others"
                ),
                _ => format!(
                    "invalid channel {channel:?} of package {package:?}: {error}: every entry is replaced or skipped, so the graph loops; break the loop"
                ),
            },
        ),
        P::ReplacesCycle {
            package,
            channel,
            path,
        } => one(
            Rule::CatalogReplacesCycle,
            format!(
                "invalid channel {channel:?} of package {package:?}: detected cycle in replaces chain of upgrade graph: {}: break the loop",
                path.join(" -> ")
            ),
        ),
        P::Stranded {
            package,
            channel,
            head,
            names,
        } => {
            let Blob::Channel(ci) = found.blob else {
                return;
            };
            let Some(c) = cfg.channels.get(ci) else {
                return;
            };
            for name in names {
                // The first entry of the name, where it was first written.
                let Some(e) = entries(c).iter().find(|e| e.name == *name) else {
                    continue;
                };
                out.push(at(
                    Rule::CatalogStranded,
                    &e.origin,
                    format!(
                        "invalid channel {channel:?} of package {package:?}: channel contains one or more stranded bundles: {}: entry {name:?} is neither on the replaces chain from head {head:?} nor skipped; make a later entry replace or skip it",
                        names.join(", ")
                    ),
                ));
            }
        }
        P::BundleImage { bundle, .. } => one(
            Rule::CatalogBundleImage,
            format!(
                "invalid bundle {bundle:?}: bundle image must be set (a bundle without olm.bundle.object properties is pulled by its image)"
            ),
        ),
        P::NormalizedName {
            bundle, expected, ..
        } => one(
            Rule::CatalogBundleName,
            format!(
                "invalid bundle {bundle:?}: name {bundle:?} does not match normalized name {expected:?}: rename the bundle"
            ),
        ),
        P::BuildMetadata { bundle, .. } => one(
            Rule::CatalogVersion,
            format!(
                "invalid bundle {bundle:?}: cannot use build metadata in version with a release version"
            ),
        ),
        P::DuplicateVersions { package, groups } => {
            for (version, bundles) in groups {
                let names: Vec<&str> = bundles.iter().map(|(n, _)| n.as_str()).collect();
                for (_, bi) in &bundles[1..] {
                    out.push(at(
                        Rule::CatalogDuplicateVersion,
                        origin(cfg, Blob::Bundle(*bi)),
                        format!(
                            "invalid package {package:?}: duplicate versions found in bundles: [{{{version}: [{}]}}]: give each bundle its own version",
                            names.join(", ")
                        ),
                    ));
                }
            }
        }
        // The conversion's problems: [`push`] writes them.
        _ => {}
    }
}
