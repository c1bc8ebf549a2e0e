//! `catalog mirror`: one door for the whole run (see [`crate::mirror`] for the pieces).
//!
//! 1. The plan: the catalog is read (a registry image resolved to its digest first, so the
//!    catalog read is the catalog copied; a folder is built into an image as `catalog build`
//!    builds it, filtered first with `--filter`), every image it needs is collected and each
//!    resolved once ([`crate::mirror::plan`]), in parallel. `--from-archive` reads the plan
//!    of the archive instead and asks nothing of the source.
//! 2. The copies, `jobs` at a time, each through [`crate::transport::copy()`] (blobs streamed,
//!    verified, skipped when present, mounted within a registry). The copies share one map of
//!    the blobs already at the target ([`crate::registry::push::KnownBlobs`]), so a blob
//!    uploaded into one repository is mounted into the next instead of uploaded again. One
//!    failing image is recorded with why; the others go on.
//! 3. Resume: an image the previous report in the results folder records as done, with the
//!    same digest and settings, and that the target still has under its tag at that digest,
//!    is `present` and not copied again (no request to the source). Anything else is copied,
//!    which for a partly copied image uploads only the blobs that are missing.
//! 4. The results ([`crate::mirror::results`]) or the archive's plan
//!    ([`crate::mirror::archive`]), written last and only with what the target holds.

pub use super::step::carry::{CarryOptions, SignaturesMode};
use crate::action::step::filter::FilterOptions;
use crate::action::step::policy::{PolicyCheckError, PolicyGate};
use crate::image::Platform;
use crate::location::Location;
use crate::mirror::archive::{self, ArchiveError};
use crate::mirror::naming::{Destination, NamingError};
use crate::mirror::plan::{Kind, Plan, PlannedImage};
use crate::mirror::results::{self, ImageResult, Report, RunSettings, Summary};
use crate::registry::push::{KnownBlobs, Progress, PushOptions};
use crate::transport::{CopyOptions, RegistryOptions};
use copy_one::{mirror_one, previous_archive, previous_results};
use read::{from_archive, prepare_catalog};
use std::path::PathBuf;
use std::time::Instant;

mod copy_one;
mod delta_apply;
mod image_policy;
mod imageset;
pub mod prune;
mod read;

pub use image_policy::{ImagePolicyFlags, image_policy_request};
pub use imageset::{CatalogRows, table};

/// What the command needs to name: platforms, per-image results and kinds,
/// the target parser and the archive's layout, re-exported so `commands/` imports only
/// `action/` (tests/library/layering.rs).
pub mod types {
    pub use super::default_jobs;
    pub use crate::image::Platform;
    pub use crate::mirror::archive::{image_name, layout};
    pub use crate::mirror::naming::Destination;
    pub use crate::mirror::plan::Kind;
    pub use crate::mirror::results::{ImageResult, Status};
}

/// The default `-j`: 8, or the number of cores when there are more. A copy spends most of its
/// time waiting on the two registries, so more copies than cores keep both ends busy; on the
/// mirror benchmark (2 cores, 302 small images) `-j 8` was the fastest of 2, 4 and 8 (docs/guide/images.md).
pub fn default_jobs() -> usize {
    crate::parallel::cores().max(8)
}

/// Where the images come from.
#[derive(Debug, Clone)]
pub enum MirrorSource {
    /// A catalog: image reference, `oci:`/archive image, or catalog folder, as given (what the
    /// plan and the report call it) and as the command line parsed it.
    Catalog(String, Location),
    /// An archive written by `--to-archive`.
    Archive(PathBuf),
    /// `--config ISC.yaml` with no SOURCE: every catalog and additional image an oc-mirror v2
    /// `ImageSetConfiguration` names, checked against each catalog before anything is copied.
    ImageSet(PathBuf),
}

/// Where they go.
#[derive(Debug, Clone)]
pub enum MirrorTarget {
    /// `--to REGISTRY/NAMESPACE`.
    Registry(String),
    /// `--to-archive DIR`.
    Archive(PathBuf),
}

/// Everything besides source and target.
#[derive(Debug, Clone)]
pub struct MirrorOptions {
    /// Reading the source registries.
    pub source: RegistryOptions,
    /// Writing the target registry.
    pub target: RegistryOptions,
    /// `--platform`s: an index is narrowed (rewritten) to these.
    pub platforms: Option<Vec<Platform>>,
    /// What happens to each image's signatures, attestations, referrers and lookaside simple
    /// signatures (`--signatures`, default copy; the carry step, [`super::step::carry`]). An
    /// image `require` refuses is not copied and stays out of the cluster files.
    pub carry: CarryOptions,
    /// Images copied at once.
    pub jobs: usize,
    /// `--max-components`.
    pub max_components: Option<usize>,
    /// Plan only.
    pub dry_run: bool,
    /// `--results-dir`.
    pub results_dir: PathBuf,
    /// `--filter FILE` (and its `--filter-catalog`): applied to a folder source.
    pub filter: Option<FilterOptions>,
    /// Repository and tag of the catalog at the target when the source is a folder or a local
    /// image (`NAME[:TAG]`, default `catalog` and the local tag or `latest`).
    pub catalog_name: Option<String>,
    /// Base image for a folder source's catalog image (`catalog build --base`).
    pub base: Option<Location>,
    /// The signature policy every image read is checked against first (`--policy`): the
    /// catalog and `base` (a refusal stops the run), each bundle and operand image (a refusal
    /// fails that image). Each is then read at the digest whose signatures were verified.
    pub policy: Option<PolicyGate>,
    /// Check each requested package, channel and range against the catalog before it is
    /// filtered, and stop when one is missing (set for `--config`: every catalog is checked
    /// before any copy starts).
    pub check_targets: bool,
    /// `--allow-missing`: with `check_targets`, drop what a catalog lacks and go on.
    pub allow_missing: bool,
    /// With `check_targets`: only fill the availability rows, plan nothing (the run is refused
    /// already; the remaining catalogs are read for the table alone).
    pub check_only: bool,
    /// Write OpenShift signature policies (`ClusterImagePolicy` or `ImagePolicy`) for the
    /// mirrored repositories beside the IDMS, trusting what this names.
    pub image_policy: Option<crate::mirror::image_policy::PolicyRequest>,
    /// `--since PREVIOUS` (with `--to-archive`): write a delta archive holding only what
    /// PREVIOUS (an archive folder or its `plan.json`) and the archives before it lack.
    pub since: Option<PathBuf>,
    /// `--install-sketches DIR`: a `ClusterExtension` and a `Subscription` (with its
    /// `OperatorGroup`) per mirrored package ([`crate::mirror::install`]).
    pub install_sketches: Option<PathBuf>,
}

impl MirrorOptions {
    /// Whether what is attached is copied along (`--signatures copy` or `require`).
    pub fn signatures(&self) -> bool {
        self.carry.mode != SignaturesMode::Drop
    }

    /// Whether `--signatures require` was asked.
    pub fn require_signatures(&self) -> bool {
        self.carry.mode == SignaturesMode::Require
    }
}

impl Default for MirrorOptions {
    fn default() -> Self {
        MirrorOptions {
            source: RegistryOptions::default(),
            target: RegistryOptions::default(),
            platforms: None,
            carry: CarryOptions::default(),
            jobs: default_jobs(),
            max_components: None,
            dry_run: false,
            results_dir: PathBuf::from("mirror-results"),
            filter: None,
            catalog_name: None,
            base: None,
            policy: None,
            check_targets: false,
            allow_missing: false,
            check_only: false,
            image_policy: None,
            since: None,
            install_sketches: None,
        }
    }
}

/// The cause of a [`MirrorError::Catalog`]: the typed error of the step that failed (opening,
/// filtering, building the catalog image), or a sentence where there is no error value.
pub type Why = Box<dyn std::error::Error + Send + Sync>;

/// Why a run could not start or finish (an image that fails is not an error: it is in the
/// report).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MirrorError {
    /// `--image-policy-key` is not a public key olmpack can read.
    #[error(transparent)]
    ImagePolicyKey(crate::signature::SignatureError),
    /// The catalog source cannot be read.
    #[error("cannot read the catalog {source_name}")]
    Catalog {
        /// As given.
        source_name: String,
        /// Why (the error of the step that failed, or a sentence).
        source: Why,
    },
    /// `--to` or `--max-components` is wrong.
    #[error(transparent)]
    Naming(#[from] NamingError),
    /// The archive cannot be read or written.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// A delta archive cannot be written, or cannot be applied to this target (a gap, a
    /// wrong order, a blob missing from its chain, a damaged file): nothing was pushed.
    #[error(transparent)]
    Delta(#[from] crate::mirror::delta::DeltaError),
    /// The results cannot be written.
    #[error("cannot write the results: {0}")]
    Results(#[from] crate::fsio::FsError),
    /// A flag combination that cannot work.
    #[error("{0}")]
    Usage(String),
    /// The signature policy refuses the catalog or the base (or cannot be applied).
    #[error(transparent)]
    Policy(#[from] PolicyCheckError),
    /// The `ImageSetConfiguration` cannot be read or asks for what olmpack does not do (file
    /// and line named).
    #[error(transparent)]
    ImageSet(#[from] crate::catalog::filter::config::ConfigError),
    /// A catalog lacks a requested package, channel or version: nothing was copied.
    #[error("{}requested content is missing from {} catalog(s); nothing was copied (--allow-missing drops what is missing and goes on)", table(.0), .0.iter().filter(|c| c.missing()).count())]
    Missing(Vec<CatalogRows>),
    /// The OpenShift image policy asked for cannot be made from the trust given.
    #[error("cannot write the image policy: {0}")]
    ImagePolicy(#[from] crate::mirror::image_policy::WriteError),
}

/// What the caller hears while the run goes on.
#[derive(Debug)]
pub enum MirrorEvent<'a> {
    /// With `--config`: every catalog checked against what is requested of it (before any
    /// copy).
    Checked(&'a [CatalogRows]),
    /// The plan is ready (before any copy).
    Planned(&'a Plan),
    /// One image is finished (from a worker thread).
    Image(&'a ImageResult),
}

/// The outcome of a run.
#[derive(Debug)]
pub struct MirrorOutcome {
    /// The plan.
    pub plan: Plan,
    /// `None` for a dry run.
    pub report: Option<Report>,
    /// Files written into the results folder (or the archive).
    pub written: Vec<PathBuf>,
    /// Notes for the user.
    pub warnings: Vec<String>,
    /// With `--config`: each catalog's requested packages against what it holds.
    pub checks: Vec<CatalogRows>,
}

/// Holds what the catalog image of a folder source is built into, until the run ends.
struct Prepared {
    plan: Plan,
    warnings: Vec<String>,
    _spool: Option<tempfile::TempDir>,
    /// The availability rows (with `check_targets`).
    rows: Vec<crate::catalog::filter::availability::Row>,
    /// The check stopped this catalog: nothing of it is planned.
    stopped: bool,
    /// Images collected from the catalog and not yet resolved (`--config` resolves every
    /// catalog's at once, after the check).
    wanted: Vec<(crate::mirror::plan::Kind, String)>,
    /// The packages of the catalog as mirrored, for the install sketches.
    packages: Vec<crate::mirror::install::PackageChoice>,
}

/// Runs the mirror (see the module documentation).
pub fn run(
    source: &MirrorSource,
    target: &MirrorTarget,
    opts: &MirrorOptions,
    on_event: &(dyn Fn(MirrorEvent<'_>) + Sync),
) -> Result<MirrorOutcome, MirrorError> {
    let start = Instant::now();
    if opts.install_sketches.is_some() && !matches!(target, MirrorTarget::Registry(_)) {
        return Err(MirrorError::Usage(
            "--install-sketches needs --to: the sketches name the catalog as it is at the target"
                .into(),
        ));
    }
    if opts.install_sketches.is_some() && matches!(source, MirrorSource::Archive(_)) {
        return Err(MirrorError::Usage(
            "--install-sketches needs the catalog read (a SOURCE or --config): an archive's plan does not record its packages".into(),
        ));
    }
    if let Some(request) = &opts.image_policy {
        crate::mirror::image_policy::check(request)
            .map_err(crate::mirror::image_policy::WriteError::from)?;
    }
    // One client per registry and credential for the whole run, on each end: connections,
    // auth state and tokens are kept across the plan and every copy.
    let mut opts = opts.clone();
    opts.source.client.shared.get_or_insert_default();
    opts.target.client.shared.get_or_insert_default();
    let opts = &opts;
    // The lock is held until the run ends: the archive's staging is this run's alone.
    let (dest, _archive_lock, since) = open_target(source, target, opts)?;
    let (prepared, checks) = match source {
        MirrorSource::Archive(dir) => (vec![from_archive(dir, opts)?], Vec::new()),
        MirrorSource::Catalog(s, location) => {
            (vec![prepare_catalog(s, location, opts)?], Vec::new())
        }
        MirrorSource::ImageSet(path) => imageset::prepare(path, opts)?,
    };
    let mut warnings: Vec<String> = prepared.iter().flat_map(|p| p.warnings.clone()).collect();
    let plan = match source {
        MirrorSource::ImageSet(path) => imageset::merge(path, &prepared),
        _ => prepared[0].plan.clone(),
    };
    if !checks.is_empty() {
        on_event(MirrorEvent::Checked(&checks));
    }
    on_event(MirrorEvent::Planned(&plan));
    if opts.dry_run {
        return Ok(MirrorOutcome {
            plan,
            report: None,
            written: Vec::new(),
            warnings,
            checks,
        });
    }
    let settings = RunSettings {
        signatures: opts.signatures(),
        platforms: opts
            .platforms
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect(),
    };
    let mut previous = match target {
        MirrorTarget::Registry(_) => previous_results(&opts.results_dir, &settings),
        MirrorTarget::Archive(dir) => previous_archive(dir)?,
    };
    let copy_opts = copy_options(target, opts);
    match (source, target, &since) {
        // Writing a delta: what the chain carries is not copied again.
        (_, MirrorTarget::Archive(_), Some(since)) => {
            previous.extend(delta_apply::carried_by_chain(&plan, since));
        }
        // Applying a delta: checked whole against its chain and the target first.
        (MirrorSource::Archive(dir), MirrorTarget::Registry(_), _) => {
            if let (Some(record), Some(d)) = (plan.archive.as_ref(), dest.as_ref())
                && record.is_delta()
            {
                previous.extend(delta_apply::check(dir, &plan, record, d, opts, &copy_opts)?);
            }
        }
        _ => {}
    }
    let images = &plan.images;
    let results: Vec<ImageResult> =
        crate::parallel::map_indexed(images.len(), opts.jobs.max(1), None, |i| {
            let result = mirror_one(
                &images[i],
                target,
                dest.as_ref(),
                opts,
                &copy_opts,
                &previous,
            );
            on_event(MirrorEvent::Image(&result));
            result
        });
    let summary = Summary::of(&results, start.elapsed().as_secs_f64());
    let source_name = match source {
        MirrorSource::Catalog(s, _) => s.clone(),
        MirrorSource::Archive(d) | MirrorSource::ImageSet(d) => d.display().to_string(),
    };
    let report = Report {
        source: source_name,
        target: match target {
            MirrorTarget::Registry(to) => to.clone(),
            MirrorTarget::Archive(d) => d.display().to_string(),
        },
        settings,
        images: results,
        summary,
    };
    let packages: Vec<(String, Vec<crate::mirror::install::PackageChoice>)> = prepared
        .iter()
        .filter_map(|p| {
            let first = p.plan.images.first().filter(|i| i.kind == Kind::Catalog)?;
            Some((first.source.clone(), p.packages.clone()))
        })
        .collect();
    let mut written = record(target, opts, &plan, &report, since.as_ref())?;
    if let Some(dir) = &opts.install_sketches {
        written.extend(write_sketches(dir, &report, &packages)?);
    }
    if report
        .images
        .iter()
        .any(|i| !i.narrowed_to.is_empty() && !i.by_tag)
    {
        warnings.push(
            "--platform rewrote some indexes named by digest: a cluster pulling the original digest will not find it at the mirror".into(),
        );
    }
    Ok(MirrorOutcome {
        plan,
        report: Some(report),
        written,
        warnings,
        checks,
    })
}

/// The target checked before anything is read: a registry destination (with a
/// `--max-components` that leaves no room refused now, not once per image), or an archive
/// prepared and locked for this run (the lock is returned, to be held until the run ends).
type Opened = (
    Option<Destination>,
    Option<archive::ArchiveLock>,
    Option<crate::mirror::delta::Previous>,
);

fn open_target(
    source: &MirrorSource,
    target: &MirrorTarget,
    opts: &MirrorOptions,
) -> Result<Opened, MirrorError> {
    match target {
        MirrorTarget::Registry(to) => {
            if opts.since.is_some() {
                return Err(MirrorError::Usage(
                    "--since writes a delta archive: it goes with --to-archive".into(),
                ));
            }
            let d = Destination::parse(to)?;
            if let Some(max) = opts.max_components {
                d.repository("x", Some(max))?;
            }
            Ok((Some(d), None, None))
        }
        MirrorTarget::Archive(dir) => {
            if matches!(source, MirrorSource::Archive(_)) {
                return Err(MirrorError::Usage(
                    "--from-archive goes to a registry (--to), not to another archive".into(),
                ));
            }
            // The previous archive is read before anything is created or copied.
            let since = opts
                .since
                .as_deref()
                .map(crate::mirror::delta::read_previous)
                .transpose()?;
            delta_apply::same_chain(dir, since.as_ref())?;
            let lock = if opts.dry_run {
                None
            } else {
                Some(archive::prepare(dir)?)
            };
            Ok((None, lock, since))
        }
    }
}

/// The copy settings every image of the run shares.
fn copy_options(target: &MirrorTarget, opts: &MirrorOptions) -> CopyOptions {
    CopyOptions {
        source: opts.source.clone(),
        target: opts.target.clone(),
        platforms: opts.platforms.clone(),
        with_signatures: opts.signatures(),
        push: PushOptions {
            progress: Progress::Silent,
            // Shared by every copy of the run: a layer common to many images is uploaded
            // once and mounted into the other repositories of the target.
            known_blobs: matches!(target, MirrorTarget::Registry(_)).then(KnownBlobs::default),
            ..PushOptions::default()
        },
        attached_lookup: opts
            .signatures()
            .then(crate::transport::copy::AttachedLookup::default),
    }
}

/// What the run leaves behind: the results files (a registry target), or the archive's plan
/// with the images now in it. Returns the files written.
fn record(
    target: &MirrorTarget,
    opts: &MirrorOptions,
    plan: &Plan,
    report: &Report,
    since: Option<&crate::mirror::delta::Previous>,
) -> Result<Vec<PathBuf>, MirrorError> {
    let mut written = Vec::new();
    match target {
        MirrorTarget::Registry(_) => {
            for name in results::write(&opts.results_dir, report)? {
                written.push(opts.results_dir.join(name));
            }
            if let Some(path) = crate::mirror::image_policy::write(
                &opts.results_dir,
                report,
                opts.image_policy.as_ref(),
            )? {
                written.push(path);
            }
        }
        MirrorTarget::Archive(dir) => {
            let done: Vec<PlannedImage> = plan
                .images
                .iter()
                .zip(&report.images)
                .filter(|(_, r)| r.done())
                .map(|(p, _)| p.clone())
                .collect();
            let mut merged = archive::merge(
                archive::read_plan(dir)?,
                Plan {
                    source: plan.source.clone(),
                    images: done,
                    archive: None,
                },
            );
            // What the layout now carries (a delta's layers the chain holds removed first),
            // recorded in the plan, which is written last.
            merged.archive = Some(match since {
                Some(previous) => crate::mirror::delta::prune(dir, &merged, previous)?,
                None => crate::mirror::delta::full_record(dir, &merged)?,
            });
            archive::write_plan(dir, &merged)?;
            written.push(dir.join(archive::PLAN_FILE));
        }
    }
    Ok(written)
}

/// The install sketches of every catalog the target now has, into `dir` (each file
/// atomically); returns the files written.
fn write_sketches(
    dir: &std::path::Path,
    report: &Report,
    packages: &[(String, Vec<crate::mirror::install::PackageChoice>)],
) -> Result<Vec<PathBuf>, MirrorError> {
    let mut written = Vec::new();
    for c in report
        .images
        .iter()
        .filter(|i| i.kind == Kind::Catalog && i.done())
    {
        let Some((_, choices)) = packages.iter().find(|(s, _)| *s == c.source) else {
            continue;
        };
        let name = results::object_name(&c.target);
        for (file, bytes) in crate::mirror::install::files(&name, choices) {
            let path = dir.join(file);
            crate::fsio::write(&path, &bytes, crate::fsio::Options::edit(0o644))?;
            written.push(path);
        }
    }
    Ok(written)
}
