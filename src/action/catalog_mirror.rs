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

use crate::action::catalog_render::{RenderOptions, load_source};
use crate::action::step::build::{self as catalog_build, CatalogBuildOptions};
use crate::action::step::filter as catalog_filter;
use crate::action::step::filter::FilterOptions;
use crate::action::step::policy::{PolicyCheckError, PolicyGate};
use crate::image::Platform;
use crate::location::{LocalImage, Location, Place};
use crate::mirror::archive::{self, ArchiveError};
use crate::mirror::naming::{Destination, NamingError};
use crate::mirror::plan::{self, Kind, Plan, PlannedImage, ResolveOptions};
use crate::mirror::regconf::Rewrites;
use crate::mirror::results::{self, ImageResult, Report, RunSettings, Status, Summary};
use crate::reference::Reference;
use crate::registry::push::{BlobAction, KnownBlobs, Progress, PushOptions};
use crate::transport::{CopyOptions, RegistryOptions, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What the command needs to name: platforms, the source rewrites, per-image results and kinds,
/// the target parser and the archive's layout, re-exported so `commands/` imports only
/// `action/` (tests/library/layering.rs).
pub mod types {
    pub use super::default_jobs;
    pub use crate::image::Platform;
    pub use crate::mirror::archive::{image_name, layout};
    pub use crate::mirror::naming::Destination;
    pub use crate::mirror::plan::Kind;
    pub use crate::mirror::regconf::Rewrites;
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
    /// Copy signatures, attestations and referrers along (default yes).
    pub signatures: bool,
    /// Images copied at once.
    pub jobs: usize,
    /// `--max-components`.
    pub max_components: Option<usize>,
    /// Plan only.
    pub dry_run: bool,
    /// `--results-dir`.
    pub results_dir: PathBuf,
    /// `--registries-conf`.
    pub rewrites: Rewrites,
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
}

impl Default for MirrorOptions {
    fn default() -> Self {
        MirrorOptions {
            source: RegistryOptions::default(),
            target: RegistryOptions::default(),
            platforms: None,
            signatures: true,
            jobs: default_jobs(),
            max_components: None,
            dry_run: false,
            results_dir: PathBuf::from("mirror-results"),
            rewrites: Rewrites::default(),
            filter: None,
            catalog_name: None,
            base: None,
            policy: None,
        }
    }
}

/// Why a run could not start or finish (an image that fails is not an error: it is in the
/// report).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MirrorError {
    /// The catalog source cannot be read.
    #[error("cannot read the catalog {source_name}: {message}")]
    Catalog {
        /// As given.
        source_name: String,
        /// Why.
        message: String,
    },
    /// `--to` or `--max-components` is wrong.
    #[error(transparent)]
    Naming(#[from] NamingError),
    /// The archive cannot be read or written.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The results cannot be written.
    #[error("cannot write the results: {0}")]
    Results(#[from] crate::fsio::FsError),
    /// A flag combination that cannot work.
    #[error("{0}")]
    Usage(String),
    /// The signature policy refuses the catalog or the base (or cannot be applied).
    #[error(transparent)]
    Policy(#[from] PolicyCheckError),
}

/// What the caller hears while the run goes on.
#[derive(Debug)]
pub enum MirrorEvent<'a> {
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
}

/// Holds what the catalog image of a folder source is built into, until the run ends.
struct Prepared {
    plan: Plan,
    warnings: Vec<String>,
    _spool: Option<tempfile::TempDir>,
}

/// Runs the mirror (see the module documentation).
pub fn run(
    source: &MirrorSource,
    target: &MirrorTarget,
    opts: &MirrorOptions,
    on_event: &(dyn Fn(MirrorEvent<'_>) + Sync),
) -> Result<MirrorOutcome, MirrorError> {
    let start = Instant::now();
    // One client per registry and credential for the whole run, on each end: connections,
    // auth state and tokens are kept across the plan and every copy.
    let mut opts = opts.clone();
    opts.source.client.shared.get_or_insert_default();
    opts.target.client.shared.get_or_insert_default();
    let opts = &opts;
    // Held until the run ends: the archive's staging is this run's alone.
    let mut _archive_lock = None;
    let dest = match target {
        MirrorTarget::Registry(to) => {
            let d = Destination::parse(to)?;
            // A limit that leaves no room fails now, not once per image.
            if let Some(max) = opts.max_components {
                d.repository("x", Some(max))?;
            }
            Some(d)
        }
        MirrorTarget::Archive(dir) => {
            if matches!(source, MirrorSource::Archive(_)) {
                return Err(MirrorError::Usage(
                    "--from-archive goes to a registry (--to), not to another archive".into(),
                ));
            }
            if !opts.dry_run {
                _archive_lock = Some(archive::prepare(dir)?);
            }
            None
        }
    };
    let prepared = match source {
        MirrorSource::Archive(dir) => from_archive(dir, opts)?,
        MirrorSource::Catalog(s, location) => prepare_catalog(s, location, opts)?,
    };
    let mut warnings = prepared.warnings.clone();
    let plan = prepared.plan.clone();
    on_event(MirrorEvent::Planned(&plan));
    if opts.dry_run {
        return Ok(MirrorOutcome {
            plan,
            report: None,
            written: Vec::new(),
            warnings,
        });
    }
    let settings = RunSettings {
        signatures: opts.signatures,
        platforms: opts
            .platforms
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect(),
    };
    let previous = match target {
        MirrorTarget::Registry(_) => previous_results(&opts.results_dir, &settings),
        MirrorTarget::Archive(dir) => previous_archive(dir)?,
    };
    let copy_opts = CopyOptions {
        source: opts.source.clone(),
        target: opts.target.clone(),
        platforms: opts.platforms.clone(),
        with_signatures: opts.signatures,
        push: PushOptions {
            progress: Progress::Silent,
            // Shared by every copy of the run: a layer common to many images is uploaded
            // once and mounted into the other repositories of the target.
            known_blobs: matches!(target, MirrorTarget::Registry(_)).then(KnownBlobs::default),
            ..PushOptions::default()
        },
        attached_lookup: opts
            .signatures
            .then(crate::transport::copy::AttachedLookup::default),
    };
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
        MirrorSource::Archive(d) => d.display().to_string(),
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
    let mut written = Vec::new();
    match target {
        MirrorTarget::Registry(_) => {
            for name in results::write(&opts.results_dir, &report)? {
                written.push(opts.results_dir.join(name));
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
            let merged = archive::merge(
                archive::read_plan(dir)?,
                Plan {
                    source: plan.source.clone(),
                    images: done,
                },
            );
            archive::write_plan(dir, &merged)?;
            written.push(dir.join(archive::PLAN_FILE));
        }
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
    })
}

/// What an earlier run recorded as done, by target name, when it ran with the same settings.
fn previous_results(dir: &Path, settings: &RunSettings) -> HashMap<String, ImageResult> {
    let Some(report) = results::read_previous(dir) else {
        return HashMap::new();
    };
    if &report.settings != settings {
        return HashMap::new();
    }
    report
        .images
        .into_iter()
        .filter(|i| i.done())
        .map(|i| (i.target.clone(), i))
        .collect()
}

/// What an archive already holds, by layout name.
fn previous_archive(dir: &Path) -> Result<HashMap<String, ImageResult>, MirrorError> {
    let Some(plan) = archive::read_plan(dir)? else {
        return Ok(HashMap::new());
    };
    Ok(plan
        .images
        .into_iter()
        .filter_map(|p| {
            let digest = p.digest.clone()?;
            let name = archive::image_name(&digest);
            archive::has_image(dir, &name).then(|| {
                (
                    name.clone(),
                    ImageResult {
                        kind: p.kind,
                        source: p.source,
                        target: name,
                        source_digest: Some(digest.clone()),
                        digest: Some(digest),
                        size: p.size,
                        status: Status::Present,
                        reason: None,
                        by_tag: p.by_tag,
                        narrowed_to: Vec::new(),
                        blobs_copied: 0,
                        blobs_skipped: 0,
                        bytes_copied: 0,
                        attached: 0,
                    },
                )
            })
        })
        .collect())
}

fn failed(p: &PlannedImage, target: String, reason: String) -> ImageResult {
    ImageResult {
        kind: p.kind,
        source: p.source.clone(),
        target,
        source_digest: p.digest.clone(),
        digest: None,
        size: p.size,
        status: Status::Failed,
        reason: Some(reason),
        by_tag: p.by_tag,
        narrowed_to: Vec::new(),
        blobs_copied: 0,
        blobs_skipped: 0,
        bytes_copied: 0,
        attached: 0,
    }
}

/// Copies one planned image; never fails (a failure is a result).
fn mirror_one(
    p: &PlannedImage,
    target: &MirrorTarget,
    dest: Option<&Destination>,
    opts: &MirrorOptions,
    copy_opts: &CopyOptions,
    previous: &HashMap<String, ImageResult>,
) -> ImageResult {
    let (sink, name) = match (target, dest) {
        (MirrorTarget::Registry(_), Some(d)) => {
            let repository = match d.repository(&p.repository, opts.max_components) {
                Ok(r) => r,
                Err(e) => return failed(p, String::new(), e.to_string()),
            };
            let reference = Reference {
                registry: d.registry.clone(),
                repository,
                tag: Some(p.tag.clone()),
                digest: None,
            };
            let name = reference.to_string();
            (Target::Registry(reference), name)
        }
        (MirrorTarget::Archive(dir), _) => {
            let Some(digest) = &p.digest else {
                return failed(p, String::new(), p.error.clone().unwrap_or_default());
            };
            let name = archive::image_name(digest);
            (
                Target::Local(LocalImage::OciLayout {
                    path: archive::layout(dir),
                    tag: Some(name.clone()),
                }),
                name,
            )
        }
        (MirrorTarget::Registry(_), None) => {
            return failed(p, String::new(), "no destination".into());
        }
    };
    if let Some(error) = &p.error {
        return failed(p, name, error.clone());
    }
    let (Some(digest), Some(pull_from)) = (&p.digest, &p.pull_from) else {
        return failed(p, name, "not resolved".into());
    };
    if let Some(before) = previous.get(&name)
        && before.source_digest.as_ref() == Some(digest)
        && still_there(&sink, before, &copy_opts.target)
    {
        return ImageResult {
            status: Status::Present,
            target: name,
            blobs_copied: 0,
            blobs_skipped: 0,
            bytes_copied: 0,
            attached: 0,
            reason: None,
            kind: p.kind,
            source: p.source.clone(),
            by_tag: p.by_tag,
            size: p.size.or(before.size),
            ..before.clone()
        };
    }
    let location = pull_from;
    // Without a record of an earlier run: a target that already holds the image under its
    // tag at the source's digest needs no copy (one HEAD, no blob asked about), unless
    // something attached at the source may be missing there.
    if let Target::Registry(reference) = &sink
        && copy_opts.platforms.is_none()
        && target_digest(reference, &copy_opts.target).as_ref() == Some(digest)
        && !(copy_opts.with_signatures
            && crate::transport::copy::may_have_attached(location, copy_opts))
    {
        return ImageResult {
            status: Status::Present,
            digest: Some(digest.clone()),
            reason: None,
            ..failed(p, name, String::new())
        };
    }
    match crate::transport::copy(location, &sink, copy_opts) {
        Ok(report) => {
            let mut copied = 0;
            let mut skipped = 0;
            let mut bytes = 0;
            for b in &report.blobs {
                match b.action {
                    BlobAction::Existing | BlobAction::Mounted => skipped += 1,
                    BlobAction::Uploaded | BlobAction::UploadedChunked => {
                        copied += 1;
                        bytes += b.size;
                    }
                }
            }
            let size = p.size.or_else(|| {
                (!report.blobs.is_empty()).then(|| report.blobs.iter().map(|b| b.size).sum())
            });
            ImageResult {
                kind: p.kind,
                source: p.source.clone(),
                target: name,
                source_digest: Some(digest.clone()),
                digest: Some(report.digest.clone()),
                size,
                status: Status::Copied,
                reason: None,
                by_tag: p.by_tag,
                narrowed_to: if report.narrowed_from.is_some() {
                    report.platforms.clone()
                } else {
                    Vec::new()
                },
                blobs_copied: copied,
                blobs_skipped: skipped,
                bytes_copied: bytes,
                attached: report.attached.len(),
            }
        }
        Err(e) => failed(p, name, crate::errors::error_chain(&e)),
    }
}

/// Whether the target still holds what an earlier run recorded: the tag at the same digest
/// (a registry), or the name in the layout (an archive).
fn still_there(sink: &Target, before: &ImageResult, opts: &RegistryOptions) -> bool {
    match sink {
        Target::Registry(reference) => {
            let Some(want) = &before.digest else {
                return false;
            };
            target_digest(reference, opts).as_ref() == Some(want)
        }
        Target::Local(_) => before.status == Status::Present,
    }
}

/// The digest a registry's tag points at (`HEAD`), `None` when absent or unreachable.
fn target_digest(reference: &Reference, opts: &RegistryOptions) -> Option<String> {
    use crate::registry::Repository;
    opts.repository(reference)
        .ok()?
        .manifest_head(reference.manifest_reference())
        .ok()??
        .digest
}

/// The plan of an archive, each image read from its layout. Under a policy each image is
/// checked as the `oci:` image it is read from (the archive's layout and its name there), and
/// the digest verified must be the one the plan copies; a refusal fails that image.
fn from_archive(dir: &Path, opts: &MirrorOptions) -> Result<Prepared, MirrorError> {
    let mut plan = archive::read_existing(dir)?;
    for image in &mut plan.images {
        match &image.digest {
            Some(d) => match Location::local(archive::image_location(dir, d)) {
                Ok(l) => image.pull_from = Some(l),
                Err(e) => image.error = Some(e.to_string()),
            },
            None => image.error = Some("the archive records no digest for it".into()),
        }
        if let (Some(gate), Some(pull), None) = (&opts.policy, &image.pull_from, &image.error) {
            let checked = gate
                .admit(pull, &opts.source)
                .map_err(|e| e.to_string())
                .and_then(|c| same_digest(&c, image.digest.as_deref()));
            if let Err(e) = checked {
                image.error = Some(e);
            }
        }
    }
    Ok(Prepared {
        plan,
        warnings: Vec::new(),
        _spool: None,
    })
}

/// The catalog read (and built, for a folder), every image it needs collected and resolved.
fn prepare_catalog(
    source: &str,
    location: &Location,
    opts: &MirrorOptions,
) -> Result<Prepared, MirrorError> {
    let fail = |message: String| MirrorError::Catalog {
        source_name: source.to_string(),
        message,
    };
    let render = RenderOptions {
        registry: opts.source.clone(),
        ..RenderOptions::default()
    };
    let resolve_opts = ResolveOptions {
        registry: opts.source.clone(),
        rewrites: opts.rewrites.clone(),
        sizes: opts.dry_run,
    };
    let mut warnings = Vec::new();
    let mut spool = None;
    let (catalog, cfg) = match location.place() {
        Place::Registry(_) => {
            // Checked before anything else is read; then read at the digest the plan pins,
            // which must be the one whose signatures were verified.
            let checked = match &opts.policy {
                Some(gate) => Some(gate.admit(location, &opts.source)?),
                None => None,
            };
            let mut catalog = plan::resolve(Kind::Catalog, source, &resolve_opts);
            let (Some(pull), None) = (&catalog.pull_from, &catalog.error) else {
                return Err(fail(catalog.error.clone().unwrap_or_default()));
            };
            if let Some(checked) = &checked {
                same_digest(checked, catalog.digest.as_deref()).map_err(fail)?;
            }
            let pinned = pull.clone();
            let (cfg, w) = load_source(&pinned, &render).map_err(|e| fail(e.to_string()))?;
            warnings.extend(w);
            let cfg = filter_image(&pinned, cfg, opts, &mut catalog, &mut warnings, &mut spool)
                .map_err(fail)?;
            (catalog, cfg)
        }
        Place::Local(local) => {
            let given = location;
            let location = match &opts.policy {
                Some(gate) => gate.admit(location, &opts.source)?,
                None => location.clone(),
            };
            let opened = super::source::open_all(&location, &opts.source)
                .map_err(|e| fail(crate::errors::error_chain(&e)))?;
            let digest = opened.value.digest().to_string();
            drop(opened);
            let (cfg, w) = load_source(&location, &render).map_err(|e| fail(e.to_string()))?;
            warnings.extend(w);
            let default_tag = local
                .name()
                .filter(|n| !n.contains('/') && !n.contains(':'));
            let (repository, tag) = catalog_name(opts, default_tag)?;
            let mut catalog = PlannedImage {
                kind: Kind::Catalog,
                source: source.to_string(),
                repository,
                tag,
                by_tag: true,
                digest: Some(digest),
                size: None,
                pull_from: Some(given.clone()),
                error: None,
            };
            let cfg = filter_image(
                &location,
                cfg,
                opts,
                &mut catalog,
                &mut warnings,
                &mut spool,
            )
            .map_err(fail)?;
            (catalog, cfg)
        }
        Place::Path(path) => {
            if !path.is_dir() {
                return Err(fail(
                    "is a file: pass a catalog folder, an image reference or oci:DIR[:TAG]".into(),
                ));
            }
            let dir = tempfile::Builder::new()
                .prefix("olmpack-mirror-")
                .tempdir()
                .map_err(|e| fail(format!("cannot create a temp folder: {e}")))?;
            crate::interrupt::watch(dir.path());
            let folder = match &opts.filter {
                Some(f) => {
                    let (filtered, w) = catalog_filter::filter_folder(path, f, dir.path())
                        .map_err(|e| fail(crate::errors::error_chain(&e)))?;
                    warnings.extend(w);
                    filtered
                }
                None => path.clone(),
            };
            let folder_location =
                Location::path(folder.clone()).map_err(|e| fail(e.to_string()))?;
            let (cfg, w) =
                load_source(&folder_location, &render).map_err(|e| fail(e.to_string()))?;
            warnings.extend(w);
            let base = opts.base.clone();
            let base_verified = match (&opts.policy, &base) {
                (Some(gate), Some(base)) => {
                    let checked = gate.admit(base, &opts.source)?;
                    checked.verified_digest().map(str::to_string)
                }
                _ => None,
            };
            let build_opts = CatalogBuildOptions {
                base,
                base_verified,
                registry: opts.source.clone(),
                platforms: opts.platforms.clone().unwrap_or_default(),
                ..CatalogBuildOptions::default()
            };
            let built = catalog_build::build(&folder, &build_opts)
                .map_err(|e| fail(crate::errors::error_chain(&e)))?;
            warnings.extend(built.warnings.iter().cloned());
            let (digest, size, local) = into_layout(built, dir.path()).map_err(fail)?;
            let (repository, tag) = catalog_name(opts, None)?;
            let catalog = PlannedImage {
                kind: Kind::Catalog,
                source: source.to_string(),
                repository,
                tag,
                by_tag: true,
                digest: Some(digest),
                size: Some(size),
                pull_from: Some(local),
                error: None,
            };
            spool = Some(dir);
            (catalog, cfg)
        }
    };
    let wanted = plan::collect(&cfg);
    drop(cfg);
    let resolved = crate::parallel::map_indexed(wanted.len(), opts.jobs.max(1), None, |i| {
        let (kind, image) = &wanted[i];
        let mut planned = plan::resolve(*kind, image, &resolve_opts);
        if let Some(gate) = &opts.policy
            && planned.error.is_none()
            && let Err(e) = admit_planned(gate, &planned, &opts.source)
        {
            planned.error = Some(e);
        }
        planned
    });
    let mut images = vec![catalog];
    images.extend(resolved);
    Ok(Prepared {
        plan: Plan {
            source: source.to_string(),
            images,
        },
        warnings,
        _spool: spool,
    })
}

/// Checks a bundle or operand image against the policy: its reference as the catalog names it
/// (Docker Hub's for a short name, as skopeo reads it), and the digest whose signatures were
/// verified must be the one the plan pinned for the copy. `Err` is the reason it fails.
fn admit_planned(
    gate: &PolicyGate,
    planned: &PlannedImage,
    registry: &RegistryOptions,
) -> Result<(), String> {
    let location = Location::reference(&planned.source).map_err(|e| e.to_string())?;
    let checked = gate.admit(&location, registry).map_err(|e| e.to_string())?;
    same_digest(&checked, planned.digest.as_deref())
}

/// Whether the digest a policy verified (if it verified one) is the digest to be copied.
fn same_digest(checked: &Location, planned: Option<&str>) -> Result<(), String> {
    match checked.verified_digest() {
        Some(v) if Some(v) != planned => Err(format!(
            "{} changed while it was checked: its signatures were verified for {v}, the copy would read {}",
            checked.as_str(),
            planned.unwrap_or("nothing")
        )),
        _ => Ok(()),
    }
}

/// A built catalog image written into `spool/catalog-image` (base layers fetched first):
/// its digest, size and `oci:` location.
fn into_layout(
    mut built: catalog_build::BuiltCatalog,
    spool: &Path,
) -> Result<(String, u64, Location), String> {
    built
        .fetch_base_layers()
        .map_err(|e| crate::errors::error_chain(&e))?;
    let layout = spool.join("catalog-image");
    std::fs::create_dir_all(&layout).map_err(|e| e.to_string())?;
    let local = LocalImage::OciLayout {
        path: layout,
        tag: Some("catalog".into()),
    };
    crate::transport::write_artifact(built.artifact(), &local, &["catalog".to_string()])
        .map_err(|e| crate::errors::error_chain(&e))?;
    // Everything the image holds: manifests, configs and layers (each blob once).
    let mut blobs: HashMap<&str, u64> = HashMap::new();
    let artifact = built.artifact();
    let top = &artifact.top().descriptor;
    blobs.insert(top.digest.as_str(), top.size);
    let images: Vec<&crate::image::Image> = match artifact {
        crate::image::Artifact::Image(i) => vec![i],
        crate::image::Artifact::Index(x) => x.images.iter().collect(),
    };
    for image in images {
        for b in std::iter::once(&image.manifest)
            .chain(std::iter::once(&image.config))
            .chain(image.layers.iter())
        {
            blobs.insert(b.descriptor.digest.as_str(), b.descriptor.size);
        }
    }
    let size = blobs.values().sum();
    let (digest, _) = built.digest();
    let local = Location::local(local).map_err(|e| e.to_string())?;
    Ok((digest.to_string(), size, local))
}

/// `--filter` on a catalog image: the model filtered (for the images to mirror) and the image
/// rebuilt by `catalog build IMAGE --filter` ([`catalog_build::build_from_image`]: base layers
/// kept, `/configs` and the serve cache replaced, every platform), written into a temp layout.
/// Without `--filter`, `cfg` comes back as it is. With it, `catalog` is pointed at the rebuilt
/// image (digest, size, the spool layout it is read from), whose folder goes to `spool`.
fn filter_image(
    image: &Location,
    cfg: crate::catalog::model::DeclarativeConfig,
    opts: &MirrorOptions,
    catalog: &mut PlannedImage,
    warnings: &mut Vec<String>,
    spool: &mut Option<tempfile::TempDir>,
) -> Result<crate::catalog::model::DeclarativeConfig, String> {
    use crate::action::step::filter::{filter_config, read_config};
    let Some(filter) = &opts.filter else {
        return Ok(cfg);
    };
    let fc = read_config(filter).map_err(|e| crate::errors::error_chain(&e))?;
    let out = filter_config(cfg, &fc, filter.format).map_err(|e| crate::errors::error_chain(&e))?;
    let build_opts = CatalogBuildOptions {
        registry: opts.source.clone(),
        platforms: opts.platforms.clone().unwrap_or_default(),
        ..CatalogBuildOptions::default()
    };
    let built = catalog_build::build_from_image(image, &fc, filter.format, &build_opts)
        .map_err(|e| crate::errors::error_chain(&e))?;
    let dir = tempfile::Builder::new()
        .prefix("olmpack-mirror-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp folder: {e}"))?;
    crate::interrupt::watch(dir.path());
    warnings.extend(out.warnings);
    warnings.extend(built.warnings.iter().cloned());
    let (digest, size, local) = into_layout(built, dir.path())?;
    catalog.digest = Some(digest);
    catalog.size = Some(size);
    catalog.pull_from = Some(local);
    *spool = Some(dir);
    Ok(out.config)
}

/// `--catalog-name NAME[:TAG]` split, with defaults.
fn catalog_name(
    opts: &MirrorOptions,
    default_tag: Option<&str>,
) -> Result<(String, String), MirrorError> {
    let given = opts.catalog_name.as_deref().unwrap_or("catalog");
    let probe = format!("localhost/{given}");
    let r = Reference::parse(&probe)
        .ok()
        .filter(|r| r.digest.is_none())
        .ok_or_else(|| {
            MirrorError::Usage(format!(
                "invalid --catalog-name {given:?}: expected NAME[:TAG], e.g. my-catalog:v1"
            ))
        })?;
    let tag = r
        .tag
        .or_else(|| default_tag.map(str::to_string))
        .unwrap_or_else(|| "latest".to_string());
    Ok((r.repository, tag))
}
