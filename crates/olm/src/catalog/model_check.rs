//! opm's model check of a catalog (`declcfg.ConvertToModel`, which ends with `model.Validate`),
//! written once: `catalog serve` (and the serve cache writers) refuse a catalog with the first
//! problem, worded as opm words it ([`ModelProblem`]'s `Display`); `catalog validate` turns every
//! problem into a finding with its rule id, file and line and a hint.
//!
//! Why one function: serve and validate used to check the model with their own code, and the
//! two disagreed (serve served catalogs with stranded bundles, bad skipRanges or invalid package
//! names that opm and `catalog validate` refuse). Now a catalog is refused by serve exactly when
//! validate reports one of these problems.
//!
//! Order: opm stops at the first problem of its conversion (packages, channels, bundles in load
//! order, then channel entries without a bundle, then deprecations), then validates the model,
//! whose tree it prints in Go map order (random). Here the conversion's problems come in opm's
//! order and the validation's in a fixed one (packages by name, their channels by name), so the
//! first problem is opm's first whenever opm's is deterministic. Unlike opm the check goes on
//! after a problem (skipping what the problem makes unreadable), so validate can report them all.
//!
//! Not here: property values other than `olm.package` (a server holds `olm.csv.metadata` and
//! `olm.bundle.object` values compacted, so they are checked where they are read), and the checks
//! beyond opm (validate's warnings).

use crate::catalog::bundle_facts::{PackageProperty, PackagePropertyError};
use crate::catalog::channel::{ChannelGraph, HeadError};
use crate::catalog::model::{
    self, Channel, ChannelEntry, DeclarativeConfig, PackageScopedReference, property_type,
};
use crate::catalog::property_value::GoDecodeError;
use crate::reference;
use semver::Version;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Which blob of the catalog a problem is about (indexes into the [`DeclarativeConfig`]'s lists),
/// so a report can name its file and line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blob {
    /// `packages[i]`.
    Package(usize),
    /// `channels[i]`.
    Channel(usize),
    /// Entry `entry` of `channels[channel]`.
    Entry {
        /// Index among the channels.
        channel: usize,
        /// Index among the channel's entries.
        entry: usize,
    },
    /// `bundles[i]`.
    Bundle(usize),
    /// `deprecations[i]`.
    Deprecation(usize),
}

/// Why a bundle's release is refused (opm's `alpha/model/versionrelease.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseError {
    /// Over 20 characters.
    TooLong,
    /// Not dot-separated pre-release identifiers (the semver parser's reason).
    Syntax(String),
}

/// Why a catalog is not a valid model, one variant per check of opm, with what names the blob
/// at fault. `Display` is opm's text; checks of opm's model validation (whose tree opm prints)
/// read as the path of their tree, `invalid package "p": invalid channel "c": ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelProblem {
    /// An `olm.package` blob without a name.
    #[error("config contains package with no name")]
    PackageNoName,
    /// A second `olm.package` blob of a name (`first`: the index of the first).
    #[error("duplicate package {name:?}")]
    PackageDuplicate {
        /// The name.
        name: String,
        /// Index of the first blob of that name.
        first: usize,
    },
    /// A package name that is not a DNS-1123 label (opm v1.41+).
    #[error("invalid package name {name:?}: [{reason}]")]
    PackageName {
        /// The name.
        name: String,
        /// Kubernetes' reason.
        reason: String,
    },
    /// A channel of a package that has no `olm.package` blob.
    #[error("unknown package {package:?} for channel {channel:?}")]
    ChannelUnknownPackage {
        /// The channel's package.
        package: String,
        /// The channel's name.
        channel: String,
    },
    /// A channel without a name.
    #[error("package {package:?} contains channel with no name")]
    ChannelNoName {
        /// The channel's package.
        package: String,
    },
    /// A second channel of a name in a package (`first`: the index of the first).
    #[error("package {package:?} has duplicate channel {channel:?}")]
    ChannelDuplicate {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// Index of the first channel blob of that name.
        first: usize,
    },
    /// An entry listed twice in a channel.
    #[error("invalid package {package:?}, channel {channel:?}: duplicate entry {entry:?}")]
    EntryDuplicate {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The entry's name.
        entry: String,
    },
    /// A bundle without a package.
    #[error("package name must be set for bundle {bundle:?}")]
    BundleNoPackage {
        /// The bundle's name.
        bundle: String,
    },
    /// A bundle of a package that has no `olm.package` blob.
    #[error("unknown package {package:?} for bundle {bundle:?}")]
    BundleUnknownPackage {
        /// The bundle's package.
        package: String,
        /// The bundle's name.
        bundle: String,
    },
    /// A second bundle of a name in a package (`first`: the index of the first).
    #[error("package {package:?} has duplicate bundle {bundle:?}")]
    BundleDuplicate {
        /// The package.
        package: String,
        /// The bundle.
        bundle: String,
        /// Index of the first bundle blob of that name.
        first: usize,
    },
    /// No `olm.package` property, or several.
    #[error(
        "package {package:?} bundle {bundle:?} must have exactly 1 {:?} property, found {count}",
        property_type::PACKAGE
    )]
    PackageCount {
        /// The bundle's package.
        package: String,
        /// The bundle's name.
        bundle: String,
        /// How many there are.
        count: usize,
    },
    /// The property's value does not decode.
    #[error(
        "parse properties for bundle {bundle:?}: parse property[{index}] of type {:?}: {error}",
        property_type::PACKAGE
    )]
    PackageValue {
        /// The bundle's name.
        bundle: String,
        /// The property's index among the bundle's properties.
        index: usize,
        /// Go's decoding error.
        error: GoDecodeError,
    },
    /// The bundle's `package` is not the property's `packageName`.
    #[error(
        "package {package:?} does not match {:?} property {property:?}",
        property_type::PACKAGE
    )]
    PackageMismatch {
        /// The bundle's package.
        package: String,
        /// The property's package name.
        property: String,
    },
    /// The bundle image or a related image is not a pull spec.
    #[error(
        "package {package:?} bundle {bundle:?} {}: invalid image pull spec {image:?}: {error}",
        match related { Some(i) => format!("relatedImages[{i}].image"), None => "image".to_string() }
    )]
    ImageReference {
        /// The bundle's package.
        package: String,
        /// The bundle's name.
        bundle: String,
        /// `None` for the bundle image, else the related image's index.
        related: Option<usize>,
        /// The reference.
        image: String,
        /// Why it does not parse.
        error: String,
    },
    /// The version is not a semantic version.
    #[error("error parsing bundle {bundle:?} version {version:?}: {error}")]
    Version {
        /// The bundle's name.
        bundle: String,
        /// The version text.
        version: String,
        /// The semver parser's reason.
        error: String,
    },
    /// The release is refused.
    #[error(
        "error parsing bundle {bundle:?} release version {release:?}: {}",
        match error {
            ReleaseError::TooLong => format!("invalid release {release:?}: exceeds maximum length of 20 characters"),
            ReleaseError::Syntax(e) => e.clone(),
        }
    )]
    Release {
        /// The bundle's name.
        bundle: String,
        /// The release text.
        release: String,
        /// Why.
        error: ReleaseError,
    },
    /// A bundle that no channel lists.
    #[error("package {package:?}, bundle {bundle:?} not found in any channel entries")]
    BundleNotInChannel {
        /// The package.
        package: String,
        /// The bundle.
        bundle: String,
    },
    /// Entries of a channel that name no bundle (`entries`: their indexes; `names` sorted).
    #[error(
        "no olm.bundle blobs found in package {package:?} for olm.channel entries [{}]",
        names.join(" ")
    )]
    MissingBundles {
        /// The package.
        package: String,
        /// Index of the channel.
        channel: usize,
        /// The entries' names, sorted.
        names: Vec<String>,
        /// The entries' indexes, in channel order.
        entries: Vec<usize>,
    },
    /// A deprecation blob without a package.
    #[error("package name must be set for deprecation item {item}")]
    DeprecationNoPackage {
        /// Index of the blob.
        item: usize,
    },
    /// A deprecation blob of a package that has no `olm.package` blob.
    #[error("cannot apply deprecations to an unknown package {package:?}")]
    DeprecationUnknownPackage {
        /// The package.
        package: String,
    },
    /// A second deprecation blob for a package (`first`: the index of the first).
    #[error("expected a maximum of one deprecation per package: {package:?}")]
    DeprecationDuplicate {
        /// The package.
        package: String,
        /// Index of the first.
        first: usize,
    },
    /// A deprecation entry without a schema.
    #[error("schema must be set for deprecation entry [{entry}] for package {package:?}")]
    DeprecationNoSchema {
        /// The package.
        package: String,
        /// Index of the entry.
        entry: usize,
    },
    /// A deprecation entry listed twice (Go's `%#v` of the reference).
    #[error(
        "duplicate deprecation entry declcfg.PackageScopedReference{{Schema:{:?}, Name:{:?}}} for package {package:?}",
        reference.schema, reference.name
    )]
    DeprecationEntryDuplicate {
        /// The package.
        package: String,
        /// The reference.
        reference: PackageScopedReference,
    },
    /// A deprecated bundle that the package does not have.
    #[error("cannot deprecate bundle {bundle:?} for package {package:?}: bundle not found")]
    DeprecatedBundleMissing {
        /// The package.
        package: String,
        /// The bundle.
        bundle: String,
    },
    /// A deprecated channel that the package does not have.
    #[error("cannot deprecate channel {channel:?} for package {package:?}: channel not found")]
    DeprecatedChannelMissing {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
    },
    /// A package deprecation that names something.
    #[error("package name must be empty for deprecated package {package:?} (specified {name:?})")]
    DeprecatedPackageNamed {
        /// The package.
        package: String,
        /// The name given.
        name: String,
    },
    /// A deprecation of an unknown schema.
    #[error(
        "cannot deprecate object declcfg.PackageScopedReference{{Schema:{:?}, Name:{:?}}} referenced by entry {entry} for package {package:?}: object schema unknown",
        reference.schema, reference.name
    )]
    DeprecationSchemaUnknown {
        /// The package.
        package: String,
        /// The reference.
        reference: PackageScopedReference,
        /// Index of the entry.
        entry: usize,
    },
    /// A package without a default channel.
    #[error("invalid package {package:?}: default channel must be set")]
    DefaultChannelUnset {
        /// The package.
        package: String,
    },
    /// A default channel with no `olm.channel` blob (opm makes it an empty channel).
    #[error("invalid package {package:?}: default channel {channel:?} not found in channels list")]
    DefaultChannelMissing {
        /// The package.
        package: String,
        /// The default channel.
        channel: String,
    },
    /// A package without channels.
    #[error("invalid package {package:?}: package must contain at least one channel")]
    PackageNoChannels {
        /// The package.
        package: String,
    },
    /// A channel without entries.
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: channel must contain at least one bundle"
    )]
    ChannelEmpty {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
    },
    /// An empty `skips` item.
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: invalid bundle {bundle:?}: skip[{index}] is empty"
    )]
    SkipEmpty {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The entry.
        bundle: String,
        /// Index among its skips.
        index: usize,
    },
    /// A `skipRange` that is not a semver range (opm v1.69+).
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: invalid bundle {bundle:?}: invalid skipRange {range:?}: {error}"
    )]
    SkipRange {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The entry.
        bundle: String,
        /// The range.
        range: String,
        /// The parser's reason.
        error: String,
    },
    /// No head, or several.
    #[error("invalid package {package:?}: invalid channel {channel:?}: {error}")]
    ChannelHead {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// Which.
        error: HeadError,
    },
    /// The replaces chain from the head loops (`path`: the walk, the repeated name last).
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: detected cycle in replaces chain of upgrade graph: {}",
        path.join(" -> ")
    )]
    ReplacesCycle {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The walk.
        path: Vec<String>,
    },
    /// Entries neither on the replaces chain from the head nor skipped.
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: channel contains one or more stranded bundles: {}",
        names.join(", ")
    )]
    Stranded {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The head.
        head: String,
        /// The stranded entries.
        names: Vec<String>,
    },
    /// A bundle that has neither an image nor objects.
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: invalid bundle {bundle:?}: bundle image must be set"
    )]
    BundleImage {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The bundle.
        bundle: String,
    },
    /// A bundle with a release whose name is not `<package>-v<version>-<release>` (opm v1.62+).
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: invalid bundle {bundle:?}: name {bundle:?} does not match normalized name {expected:?}"
    )]
    NormalizedName {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The bundle.
        bundle: String,
        /// The name it must have.
        expected: String,
    },
    /// A version with build metadata and a release (opm v1.62+).
    #[error(
        "invalid package {package:?}: invalid channel {channel:?}: invalid bundle {bundle:?}: cannot use build metadata in version with a release version"
    )]
    BuildMetadata {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The bundle.
        bundle: String,
    },
    /// Bundles of a package with the same `version[-release]` (opm v1.47+): each group is the
    /// key and the bundles' indexes, by name.
    #[error(
        "invalid package {package:?}: duplicate versions found in bundles: [{}]",
        groups.iter().map(|(v, names)| format!("{{{v}: [{}]}}", names.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "))).collect::<Vec<_>>().join(" ")
    )]
    DuplicateVersions {
        /// The package.
        package: String,
        /// `version[-release]` and its bundles (name, index).
        groups: Vec<(String, Vec<(String, usize)>)>,
    },
    /// A deprecation entry without a message.
    #[error("invalid package {package:?}: invalid deprecation: message must be set")]
    DeprecationMessage {
        /// The package.
        package: String,
        /// Index of the entry.
        entry: usize,
    },
}

/// One problem and the blob it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The blob at fault.
    pub blob: Blob,
    /// What is wrong.
    pub problem: ModelProblem,
}

/// What the conversion knows of a bundle that the validation reads.
struct BundleFacts {
    version: Option<semver::Version>,
    release: String,
    release_ok: bool,
}

/// The indexes the conversion builds, by name, for the model's validation.
type Packages<'a> = BTreeMap<&'a str, usize>;
type Channels<'a> = BTreeMap<(&'a str, &'a str), usize>;
type Listed<'a> = HashMap<&'a str, BTreeSet<&'a str>>;
type Bundles<'a> = BTreeMap<(&'a str, &'a str), (usize, BundleFacts)>;

/// Every problem of opm's model check in `cfg`, in opm's order (see the module's note); empty
/// when opm converts the catalog.
pub fn check(cfg: &DeclarativeConfig) -> Vec<Found> {
    let mut out = Vec::new();
    let packages = check_packages(cfg, &mut out);
    let (channels, listed) = check_channels(cfg, &packages, &mut out);
    let bundles = check_bundles(cfg, &packages, &listed, &mut out);
    missing_bundles(cfg, &channels, &bundles, &mut out);
    let messages = check_deprecations(cfg, &packages, &channels, &bundles, &mut out);
    // The model's validation, per package by name.
    for (&name, &pi) in &packages {
        validate_package(cfg, (name, pi), &channels, &listed, &bundles, &mut out);
        for &(di, _, entry) in messages.iter().filter(|(_, pk, _)| *pk == name) {
            out.push(Found {
                blob: Blob::Deprecation(di),
                problem: ModelProblem::DeprecationMessage {
                    package: name.to_string(),
                    entry,
                },
            });
        }
    }
    out
}

/// The packages, in load order: names, duplicates.
fn check_packages<'a>(cfg: &'a DeclarativeConfig, out: &mut Vec<Found>) -> Packages<'a> {
    let mut push = |blob, problem| out.push(Found { blob, problem });
    // Packages, in load order.
    let mut packages: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in cfg.packages.iter().enumerate() {
        let blob = Blob::Package(i);
        if p.name.is_empty() {
            push(blob, ModelProblem::PackageNoName);
            continue;
        }
        if let Some(&first) = packages.get(p.name.as_str()) {
            push(
                blob,
                ModelProblem::PackageDuplicate {
                    name: p.name.clone(),
                    first,
                },
            );
            continue;
        }
        if let Err(reason) = reference::dns1123_label(&p.name) {
            // Kubernetes' `IsDNS1123Label` says "must not contain dots" of a valid subdomain.
            let reason = if p.name.contains('.')
                && p.name.len() <= 63
                && reference::dns1123_subdomain(&p.name).is_ok()
            {
                "must not contain dots".to_string()
            } else {
                reason
            };
            push(
                blob,
                ModelProblem::PackageName {
                    name: p.name.clone(),
                    reason,
                },
            );
        }
        packages.insert(&p.name, i);
    }
    packages
}

/// The channels, in load order: their package, names, duplicate entries; and which bundle
/// names each package's channels list.
fn check_channels<'a>(
    cfg: &'a DeclarativeConfig,
    packages: &Packages<'_>,
    out: &mut Vec<Found>,
) -> (Channels<'a>, Listed<'a>) {
    let mut push = |blob, problem| out.push(Found { blob, problem });
    // Channels, in load order.
    let mut channels: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut listed: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for (ci, c) in cfg.channels.iter().enumerate() {
        let blob = Blob::Channel(ci);
        if !packages.contains_key(c.package.as_str()) {
            push(
                blob,
                ModelProblem::ChannelUnknownPackage {
                    package: c.package.clone(),
                    channel: c.name.clone(),
                },
            );
            continue;
        }
        if c.name.is_empty() {
            push(
                blob,
                ModelProblem::ChannelNoName {
                    package: c.package.clone(),
                },
            );
            continue;
        }
        if let Some(&first) = channels.get(&(c.package.as_str(), c.name.as_str())) {
            push(
                blob,
                ModelProblem::ChannelDuplicate {
                    package: c.package.clone(),
                    channel: c.name.clone(),
                    first,
                },
            );
            continue;
        }
        let mut seen = BTreeSet::new();
        for (ei, e) in entries(c).iter().enumerate() {
            if !seen.insert(e.name.as_str()) {
                push(
                    Blob::Entry {
                        channel: ci,
                        entry: ei,
                    },
                    ModelProblem::EntryDuplicate {
                        package: c.package.clone(),
                        channel: c.name.clone(),
                        entry: e.name.clone(),
                    },
                );
            }
        }
        listed
            .entry(c.package.as_str())
            .or_default()
            .extend(seen.iter().copied());
        channels.insert((c.package.as_str(), c.name.as_str()), ci);
    }
    (channels, listed)
}

/// The bundles, in load order: package, duplicates, the `olm.package` property, image
/// references, version and release, membership in a channel.
fn check_bundles<'a>(
    cfg: &'a DeclarativeConfig,
    packages: &Packages<'_>,
    listed: &Listed<'_>,
    out: &mut Vec<Found>,
) -> Bundles<'a> {
    let mut push = |blob, problem| out.push(Found { blob, problem });
    // Bundles, in load order.
    let mut bundles: BTreeMap<(&str, &str), (usize, BundleFacts)> = BTreeMap::new();
    for (bi, b) in cfg.bundles.iter().enumerate() {
        let blob = Blob::Bundle(bi);
        if b.package.is_empty() {
            push(
                blob,
                ModelProblem::BundleNoPackage {
                    bundle: b.name.clone(),
                },
            );
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            push(
                blob,
                ModelProblem::BundleUnknownPackage {
                    package: b.package.clone(),
                    bundle: b.name.clone(),
                },
            );
            continue;
        }
        if let Some((first, _)) = bundles.get(&(b.package.as_str(), b.name.as_str())) {
            push(
                blob,
                ModelProblem::BundleDuplicate {
                    package: b.package.clone(),
                    bundle: b.name.clone(),
                    first: *first,
                },
            );
            continue;
        }
        let mut facts = BundleFacts {
            version: None,
            release: String::new(),
            release_ok: true,
        };
        match b.package_property() {
            Err(PackagePropertyError::Count(count)) => push(
                blob,
                ModelProblem::PackageCount {
                    package: b.package.clone(),
                    bundle: b.name.clone(),
                    count,
                },
            ),
            Err(PackagePropertyError::Value { index, error }) => push(
                blob,
                ModelProblem::PackageValue {
                    bundle: b.name.clone(),
                    index,
                    error,
                },
            ),
            Ok(pp) => {
                if pp.package_name != b.package {
                    push(
                        blob,
                        ModelProblem::PackageMismatch {
                            package: b.package.clone(),
                            property: pp.package_name.clone(),
                        },
                    );
                }
                if !b.image.is_empty()
                    && let Err(error) = reference::image_pullspec(&b.image)
                {
                    push(
                        blob,
                        ModelProblem::ImageReference {
                            package: b.package.clone(),
                            bundle: b.name.clone(),
                            related: None,
                            image: b.image.clone(),
                            error,
                        },
                    );
                }
                for (i, r) in b.related_images.iter().enumerate() {
                    if !r.image.is_empty()
                        && let Err(error) = reference::image_pullspec(&r.image)
                    {
                        push(
                            blob,
                            ModelProblem::ImageReference {
                                package: b.package.clone(),
                                bundle: b.name.clone(),
                                related: Some(i),
                                image: r.image.clone(),
                                error,
                            },
                        );
                    }
                }
                match check_version(b, &pp.version) {
                    Ok(v) => facts.version = Some(v),
                    Err(problem) => push(blob, problem),
                }
                if !pp.release.is_empty() {
                    let error = if pp.release.len() > 20 {
                        Some(ReleaseError::TooLong)
                    } else {
                        semver::Prerelease::new(&pp.release)
                            .err()
                            .map(|e| ReleaseError::Syntax(e.to_string()))
                    };
                    if let Some(error) = error {
                        facts.release_ok = false;
                        push(
                            blob,
                            ModelProblem::Release {
                                bundle: b.name.clone(),
                                release: pp.release.clone(),
                                error,
                            },
                        );
                    }
                }
                facts.release = pp.release;
            }
        }
        if !listed
            .get(b.package.as_str())
            .is_some_and(|s| s.contains(b.name.as_str()))
        {
            push(
                blob,
                ModelProblem::BundleNotInChannel {
                    package: b.package.clone(),
                    bundle: b.name.clone(),
                },
            );
        }
        bundles.insert((b.package.as_str(), b.name.as_str()), (bi, facts));
    }
    bundles
}

/// Channel entries without a bundle.
fn missing_bundles(
    cfg: &DeclarativeConfig,
    channels: &Channels<'_>,
    bundles: &Bundles<'_>,
    out: &mut Vec<Found>,
) {
    let mut push = |blob, problem| out.push(Found { blob, problem });
    // Channel entries without a bundle.
    for (&(pkg, _), &ci) in channels {
        let c = &cfg.channels[ci];
        let missing: Vec<(usize, &ChannelEntry)> = entries(c)
            .iter()
            .enumerate()
            .filter(|(_, e)| !bundles.contains_key(&(pkg, e.name.as_str())))
            .collect();
        if !missing.is_empty() {
            let mut names: Vec<String> = missing.iter().map(|(_, e)| e.name.clone()).collect();
            names.sort_unstable();
            names.dedup();
            push(
                Blob::Channel(ci),
                ModelProblem::MissingBundles {
                    package: pkg.to_string(),
                    channel: ci,
                    names,
                    entries: missing.iter().map(|(ei, _)| *ei).collect(),
                },
            );
        }
    }
}

/// The deprecations, in load order; returns the entries without a message (reported by the
/// model's validation, after the package's other problems).
fn check_deprecations<'a>(
    cfg: &'a DeclarativeConfig,
    packages: &Packages<'_>,
    channels: &Channels<'_>,
    bundles: &Bundles<'_>,
    out: &mut Vec<Found>,
) -> Vec<(usize, &'a str, usize)> {
    let mut push = |blob, problem| out.push(Found { blob, problem });
    // Deprecations, in load order.
    let mut deprecated: BTreeMap<&str, usize> = BTreeMap::new();
    let mut messages: Vec<(usize, &str, usize)> = Vec::new();
    for (di, d) in cfg.deprecations.iter().enumerate() {
        let blob = Blob::Deprecation(di);
        let package = || d.package.clone();
        if d.package.is_empty() {
            push(blob, ModelProblem::DeprecationNoPackage { item: di });
            continue;
        }
        if !packages.contains_key(d.package.as_str()) {
            push(
                blob,
                ModelProblem::DeprecationUnknownPackage { package: package() },
            );
            continue;
        }
        if let Some(&first) = deprecated.get(d.package.as_str()) {
            push(
                blob,
                ModelProblem::DeprecationDuplicate {
                    package: package(),
                    first,
                },
            );
            continue;
        }
        deprecated.insert(&d.package, di);
        let mut refs: BTreeSet<(&str, &str)> = BTreeSet::new();
        for (j, e) in d.entries.iter().enumerate() {
            let r = &e.reference;
            if e.message.is_empty() {
                messages.push((di, d.package.as_str(), j));
            }
            if r.schema.is_empty() {
                push(
                    blob,
                    ModelProblem::DeprecationNoSchema {
                        package: package(),
                        entry: j,
                    },
                );
                continue;
            }
            if !refs.insert((r.schema.as_str(), r.name.as_str())) {
                push(
                    blob,
                    ModelProblem::DeprecationEntryDuplicate {
                        package: package(),
                        reference: r.clone(),
                    },
                );
                continue;
            }
            let problem = match r.schema.as_str() {
                model::SCHEMA_BUNDLE
                    if !bundles.contains_key(&(d.package.as_str(), r.name.as_str())) =>
                {
                    Some(ModelProblem::DeprecatedBundleMissing {
                        package: package(),
                        bundle: r.name.clone(),
                    })
                }
                model::SCHEMA_CHANNEL
                    if !channels.contains_key(&(d.package.as_str(), r.name.as_str())) =>
                {
                    Some(ModelProblem::DeprecatedChannelMissing {
                        package: package(),
                        channel: r.name.clone(),
                    })
                }
                model::SCHEMA_PACKAGE if !r.name.is_empty() => {
                    Some(ModelProblem::DeprecatedPackageNamed {
                        package: package(),
                        name: r.name.clone(),
                    })
                }
                model::SCHEMA_BUNDLE | model::SCHEMA_CHANNEL | model::SCHEMA_PACKAGE => None,
                _ => Some(ModelProblem::DeprecationSchemaUnknown {
                    package: package(),
                    reference: r.clone(),
                    entry: j,
                }),
            };
            if let Some(problem) = problem {
                push(blob, problem);
            }
        }
    }
    messages
}

/// The model's validation of one package: its default channel, each channel, duplicate
/// versions.
fn validate_package(
    cfg: &DeclarativeConfig,
    (name, pi): (&str, usize),
    channels: &Channels<'_>,
    listed: &Listed<'_>,
    bundles: &Bundles<'_>,
    out: &mut Vec<Found>,
) {
    let blob = Blob::Package(pi);
    let package = || name.to_string();
    let pkg_channels = {
        let mut push = |blob, problem| out.push(Found { blob, problem });
        let p = &cfg.packages[pi];
        let pkg_channels: Vec<usize> = channels
            .range((name, "")..)
            .take_while(|((pk, _), _)| *pk == name)
            .map(|(_, &ci)| ci)
            .collect();
        if p.default_channel.is_empty() {
            push(
                blob,
                ModelProblem::DefaultChannelUnset { package: package() },
            );
            if pkg_channels.is_empty() {
                push(blob, ModelProblem::PackageNoChannels { package: package() });
            }
        } else if !pkg_channels
            .iter()
            .any(|&ci| cfg.channels[ci].name == p.default_channel)
        {
            push(
                blob,
                ModelProblem::DefaultChannelMissing {
                    package: package(),
                    channel: p.default_channel.clone(),
                },
            );
        }
        pkg_channels
    };
    for &ci in &pkg_channels {
        validate_channel(cfg, name, ci, bundles, out);
    }
    let mut push = |blob, problem| out.push(Found { blob, problem });
    // Duplicate versions, over the bundles that are in a channel.
    let mut by_version: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
    for ((_, bname), (bi, facts)) in bundles
        .range((name, "")..)
        .take_while(|((pk, _), _)| *pk == name)
    {
        if !listed.get(name).is_some_and(|s| s.contains(bname)) {
            continue;
        }
        if let Some(v) = &facts.version {
            let key = if !facts.release.is_empty() && facts.release_ok {
                format!("{v}-{}", facts.release)
            } else {
                v.to_string()
            };
            by_version
                .entry(key)
                .or_default()
                .push((bname.to_string(), *bi));
        }
    }
    let groups: Vec<(String, Vec<(String, usize)>)> = by_version
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .collect();
    if !groups.is_empty() {
        push(
            blob,
            ModelProblem::DuplicateVersions {
                package: package(),
                groups,
            },
        );
    }
}

/// The model's validation of one channel: entries, head, replaces chain, its bundles.
fn validate_channel(
    cfg: &DeclarativeConfig,
    name: &str,
    ci: usize,
    bundles: &Bundles<'_>,
    out: &mut Vec<Found>,
) {
    let mut push = |blob, problem| out.push(Found { blob, problem });
    let package = || name.to_string();
    let c = &cfg.channels[ci];
    let channel = || c.name.clone();
    let es = entries(c);
    if es.is_empty() {
        push(
            Blob::Channel(ci),
            ModelProblem::ChannelEmpty {
                package: package(),
                channel: channel(),
            },
        );
        return;
    }
    for (ei, e) in es.iter().enumerate() {
        let at = Blob::Entry {
            channel: ci,
            entry: ei,
        };
        for (index, s) in e.skips.iter().enumerate() {
            if s.is_empty() {
                push(
                    at,
                    ModelProblem::SkipEmpty {
                        package: package(),
                        channel: channel(),
                        bundle: e.name.clone(),
                        index,
                    },
                );
            }
        }
        if !e.skip_range.is_empty()
            && let Err(error) = crate::semver_range::parse(&e.skip_range)
        {
            push(
                at,
                ModelProblem::SkipRange {
                    package: package(),
                    channel: channel(),
                    bundle: e.name.clone(),
                    range: e.skip_range.clone(),
                    error: error.to_string(),
                },
            );
        }
    }
    let graph = ChannelGraph::new(c, |_| None);
    match graph.head() {
        Err(error) => push(
            Blob::Channel(ci),
            ModelProblem::ChannelHead {
                package: package(),
                channel: channel(),
                error,
            },
        ),
        Ok(head) => match graph.replaces_chain(head) {
            Err(path) => {
                // The entry whose `replaces` closes the loop.
                let closing = path
                    .len()
                    .checked_sub(2)
                    .and_then(|i| path.get(i))
                    .and_then(|n| es.iter().position(|e| e.name == *n));
                let at = match closing {
                    Some(entry) => Blob::Entry { channel: ci, entry },
                    None => Blob::Channel(ci),
                };
                push(
                    at,
                    ModelProblem::ReplacesCycle {
                        package: package(),
                        channel: channel(),
                        path,
                    },
                );
            }
            Ok(_) => {
                let stranded = graph.stranded(head);
                if !stranded.is_empty() {
                    push(
                        Blob::Channel(ci),
                        ModelProblem::Stranded {
                            package: package(),
                            channel: channel(),
                            head: head.to_string(),
                            names: stranded.iter().map(|s| s.to_string()).collect(),
                        },
                    );
                }
            }
        },
    }
    // The bundles of the channel.
    for e in es {
        let Some((bi, facts)) = bundles.get(&(name, e.name.as_str())) else {
            continue;
        };
        let b = &cfg.bundles[*bi];
        let at = Blob::Bundle(*bi);
        if b.image.is_empty() && b.objects.is_empty() {
            push(
                at,
                ModelProblem::BundleImage {
                    package: package(),
                    channel: channel(),
                    bundle: b.name.clone(),
                },
            );
        }
        if let Some(v) = &facts.version
            && !facts.release.is_empty()
            && facts.release_ok
        {
            if !v.build.is_empty() {
                push(
                    at,
                    ModelProblem::BuildMetadata {
                        package: package(),
                        channel: channel(),
                        bundle: b.name.clone(),
                    },
                );
            }
            let expected = format!("{name}-v{v}-{}", facts.release);
            if b.name != expected {
                push(
                    at,
                    ModelProblem::NormalizedName {
                        package: package(),
                        channel: channel(),
                        bundle: b.name.clone(),
                        expected,
                    },
                );
            }
        }
    }
}

/// The first problem of [`check`] (what opm reports), or `None` when opm converts the catalog.
pub fn first(cfg: &DeclarativeConfig) -> Option<Found> {
    check(cfg).into_iter().next()
}

fn entries(c: &Channel) -> &[ChannelEntry] {
    c.entries.as_deref().unwrap_or(&[])
}

/// opm's checks of a bundle's `olm.package` property, in opm's order: exactly one, decodable,
/// naming the bundle's package, with a semantic version. Returns the property and its version.
pub fn check_package(
    b: &crate::catalog::model::Bundle,
) -> Result<(PackageProperty, Version), ModelProblem> {
    let pp = b.package_property().map_err(|e| match e {
        PackagePropertyError::Count(count) => ModelProblem::PackageCount {
            package: b.package.clone(),
            bundle: b.name.clone(),
            count,
        },
        PackagePropertyError::Value { index, error } => ModelProblem::PackageValue {
            bundle: b.name.clone(),
            index,
            error,
        },
    })?;
    if b.package != pp.package_name {
        return Err(ModelProblem::PackageMismatch {
            package: b.package.clone(),
            property: pp.package_name,
        });
    }
    let version = check_version(b, &pp.version)?;
    Ok((pp, version))
}

/// opm's version check of a bundle: strict semver.
pub fn check_version(
    b: &crate::catalog::model::Bundle,
    version: &str,
) -> Result<Version, ModelProblem> {
    Version::parse(version).map_err(|e| ModelProblem::Version {
        bundle: b.name.clone(),
        version: version.to_string(),
        error: e.to_string(),
    })
}
