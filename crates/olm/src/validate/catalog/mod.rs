//! The catalog rules: every check of current `opm validate` (CATALOG.md C: `ConvertToModel`,
//! `model.Validate`, deprecations and the checks added after v1.26), and a few beyond opm as
//! warnings. Unlike opm, which stops at the first structural error and prints the rest in map
//! order, every problem is reported, each at the file and line of the blob at fault, in a
//! deterministic order.
//!
//! opm's checks are errors (opm fails the catalog); the extra checks are warnings, so the verdict
//! without `--strict` is opm's verdict.

mod bundles;
mod channels;
mod csv;
mod graph;
mod hints;
mod kinds;
pub mod olmv1;
pub mod opm_load;
pub mod opm_model;
mod packages;
mod properties;
mod shapes;

use crate::catalog::load::{self, LoadError, LoadOptions, Loaded};
use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Origin, Package, Property, property_type,
};
use crate::findings::{Diagnostic, Report, Rule};
use serde_json::Value as J;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use super::target::Target;
use bundles::BundleInfo;

use properties::{CsvMetadata, check_property, csv_metadata_property, str_field};

/// The packages of a catalog by name (the first declaration of each).
type Packages<'a> = BTreeMap<&'a str, &'a Package>;
/// The channels of a catalog by (package, name).
type Channels<'a> = BTreeMap<(&'a str, &'a str), &'a Channel>;
/// The bundles of a catalog by (package, name), properties parsed.
type Bundles<'a> = BTreeMap<(&'a str, &'a str), BundleInfo<'a>>;
/// The bundle names that are entries of some channel, per package.
type Members<'a> = HashMap<&'a str, HashSet<&'a str>>;

/// Loads and validates one catalog folder. `Err` only when the folder itself cannot be read.
pub fn validate_dir(root: &Path, opts: &LoadOptions) -> Result<Report, LoadError> {
    validate_dir_for(root, opts, None)
}

/// [`validate_dir`] for a catalog that an older opm will load (`target`): adds what that opm
/// cannot load ([`opm_load`]).
pub fn validate_dir_for(
    root: &Path,
    opts: &LoadOptions,
    target: Option<crate::catalog::OpmCompat>,
) -> Result<Report, LoadError> {
    let loaded = load::load_dir_with(root, opts)?;
    Ok(report_for_target(
        root.display().to_string(),
        loaded,
        target,
    ))
}

/// Catalog folders for the batch runner, for the opm they target and where they run: `Err`
/// when the folder itself cannot be read.
struct Folders<'a>(Option<crate::catalog::OpmCompat>, &'a [Target]);

impl super::batch::Check for Folders<'_> {
    type Error = LoadError;

    fn check(&self, dir: &Path, inner_jobs: usize) -> Result<Report, LoadError> {
        let loaded = load::load_dir_with(
            dir,
            &LoadOptions {
                jobs: Some(inner_jobs),
                ..LoadOptions::default()
            },
        )?;
        let extra = target_findings(&loaded.config, self.1);
        let mut report = report_for_target(dir.display().to_string(), loaded, self.0);
        if !extra.is_empty() {
            report.diagnostics.extend(extra);
            report.sort_root_causes_first();
        }
        Ok(report)
    }
}

/// What the `targets` (`--target`) add to a catalog's findings: `catalog/metadata-form` for
/// each package whose bundles carry `olm.bundle.object` when a target is OpenShift 4.17 or
/// later (the pipelines ship those catalogs with `olm.csv.metadata` instead), reported at the
/// package's first such bundle and naming the targets.
pub fn target_findings(cfg: &DeclarativeConfig, targets: &[Target]) -> Vec<Diagnostic> {
    let hit: Vec<String> = targets
        .iter()
        .filter(|t| t.csv_metadata_form())
        .map(ToString::to_string)
        .collect();
    if hit.is_empty() {
        return Vec::new();
    }
    let mut first: BTreeMap<&str, (&Bundle, usize)> = BTreeMap::new();
    for b in &cfg.bundles {
        // The loader decodes the manifests into `objects` (and may keep the properties).
        if !b.objects.is_empty()
            || b.properties
                .iter()
                .any(|p| p.type_ == property_type::BUNDLE_OBJECT)
        {
            first.entry(b.package.as_str()).or_insert((b, 0)).1 += 1;
        }
    }
    first
        .into_iter()
        .map(|(package, (bundle, count))| {
            at(
                Rule::CatalogMetadataForm,
                &bundle.origin,
                format!(
                    "package \"{package}\": {count} bundle{} ({} first) carry olm.bundle.object; for {} the pipelines render the catalog with --migrate-level bundle-object-to-csv-metadata, so olm.csv.metadata replaces those manifests ({})",
                    if count == 1 { "" } else { "s" },
                    bundle.name,
                    hit.join(", "),
                    crate::validate::target::matrix::CSV_METADATA_SOURCE
                ),
            )
            .for_targets(hit.clone())
        })
        .collect()
}

/// Validates several catalog folders ([`super::batch::run`]: in parallel over folders, each
/// isolated, results in the order given).
pub fn validate_dirs(
    dirs: &[std::path::PathBuf],
    jobs: Option<usize>,
) -> Vec<Result<Report, LoadError>> {
    validate_dirs_for(dirs, jobs, None)
}

/// [`validate_dirs`] for catalogs an older opm will load (`target`, see [`validate_dir_for`]).
pub fn validate_dirs_for(
    dirs: &[std::path::PathBuf],
    jobs: Option<usize>,
    target: Option<crate::catalog::OpmCompat>,
) -> Vec<Result<Report, LoadError>> {
    validate_dirs_targeted(dirs, jobs, target, &[])
}

/// [`validate_dirs_for`] for catalogs meant to run on `targets` ([`target_findings`]).
pub fn validate_dirs_targeted(
    dirs: &[std::path::PathBuf],
    jobs: Option<usize>,
    opm: Option<crate::catalog::OpmCompat>,
    targets: &[Target],
) -> Vec<Result<Report, LoadError>> {
    super::batch::run(&Folders(opm, targets), dirs, jobs)
}

/// The report for a loaded catalog: load problems plus every rule, root causes first, with a
/// hint when files that are not catalog data cause findings.
pub fn report_for(name: String, loaded: Loaded) -> Report {
    report_for_target(name, loaded, None)
}

/// [`report_for`], plus what the `target` opm cannot load.
pub fn report_for_target(
    name: String,
    loaded: Loaded,
    target: Option<crate::catalog::OpmCompat>,
) -> Report {
    let mut diagnostics = loaded.diagnostics;
    diagnostics.extend(validate(&loaded.config));
    if let Some(opm) = target {
        diagnostics.extend(opm_load::check(&loaded.config, opm));
    }
    // Only when nothing failed to load: a file that does not parse is the root cause then.
    if !loaded.config.has_olm_blobs()
        && !diagnostics
            .iter()
            .any(|d| d.severity == crate::findings::Severity::Error)
    {
        diagnostics.push(Diagnostic::new(
            Rule::CatalogEmpty,
            crate::catalog::model::EMPTY_CATALOG.to_string(),
        ));
    }
    let mut report = Report::new(name, diagnostics);
    report.sort_root_causes_first();
    report.hints.extend(hints::indexignore(&report));
    report
}

fn at(rule: Rule, origin: &Origin, message: String) -> Diagnostic {
    let d = Diagnostic::new(rule, message);
    if origin.file.is_empty() {
        d
    } else {
        d.at(origin.file.clone(), origin.line.max(1))
    }
}

/// Runs every rule on a loaded catalog: opm's model check first ([`opm_model`], the one
/// `catalog serve` refuses a catalog with), then the packages, channels and bundles are indexed
/// for the checks beyond opm.
pub fn validate(cfg: &DeclarativeConfig) -> Vec<Diagnostic> {
    let mut out = opm_model::findings(cfg);
    let packages = packages::index(cfg);
    let channels = channels::index(cfg, &packages);
    let bundles = bundles::index(cfg, &packages, &mut out);
    let in_channels = channels::membership(&channels);
    for (name, p) in &packages {
        packages::check(name, p, &channels, &bundles, &in_channels, &mut out);
    }
    // Bundle metadata, beyond opm.
    for info in bundles.values() {
        csv::check(info, &mut out);
    }
    out
}

/// The first problem opm's `declcfg.ConvertToModel` (which ends with `model.Validate`) would
/// refuse the catalog for, or `None`: an error of these rules (whose errors are exactly opm's
/// checks), those opm finds while converting before those its model validation finds, since
/// opm reports only the first. The substitutes template judges its catalogs with it.
pub fn first_model_error(cfg: &DeclarativeConfig) -> Option<String> {
    const VALIDATION_PHASE: [Rule; 11] = [
        Rule::CatalogBundleImage,
        Rule::CatalogImageReference,
        Rule::CatalogChannelEmpty,
        Rule::CatalogSkipEmpty,
        Rule::CatalogSkipsUnknown,
        Rule::CatalogSkipRange,
        Rule::CatalogReplacesUnknown,
        Rule::CatalogChannelHead,
        Rule::CatalogReplacesCycle,
        Rule::CatalogStranded,
        Rule::CatalogUnreachable,
    ];
    validate(cfg)
        .into_iter()
        .filter(|d| d.severity == crate::findings::Severity::Error)
        .min_by_key(|d| VALIDATION_PHASE.contains(&d.rule))
        .map(|d| d.message)
}

fn entries(c: &Channel) -> &[ChannelEntry] {
    c.entries.as_deref().unwrap_or(&[])
}
