//! Copying one planned image of a mirror run, and what an earlier run left that makes a copy
//! unnecessary (its results, or the images already in the archive). Never fails: a failure is
//! the image's result.

use super::{MirrorError, MirrorOptions, MirrorTarget};
use crate::action::step::carry;
use crate::location::LocalImage;
use crate::mirror::archive;
use crate::mirror::naming::Destination;
use crate::mirror::plan::PlannedImage;
use crate::mirror::results::{self, ImageResult, RunSettings, Status};
use crate::reference::Reference;
use crate::registry::push::BlobAction;
use crate::transport::{CopyOptions, RegistryOptions, Target};
use std::collections::HashMap;
use std::path::Path;

/// What an earlier run recorded as done, by target name, when it ran with the same settings.
pub(super) fn previous_results(dir: &Path, settings: &RunSettings) -> HashMap<String, ImageResult> {
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
pub(super) fn previous_archive(dir: &Path) -> Result<HashMap<String, ImageResult>, MirrorError> {
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
                    // `p.digest` is `Some(digest)`: the source digest stays.
                    ImageResult {
                        digest: Some(digest),
                        ..ImageResult::planned(&p, name, Status::Present)
                    },
                )
            })
        })
        .collect())
}

fn failed(p: &PlannedImage, target: String, reason: String) -> ImageResult {
    ImageResult {
        reason: Some(reason),
        mirror: p.mirror.clone(),
        ..ImageResult::planned(p, target, Status::Failed)
    }
}

/// Copies one planned image; never fails (a failure is a result).
pub(super) fn mirror_one(
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
    // `--signatures require` judges what is attached at the source now, so neither shortcut
    // below (an earlier run's record, an image already at the target) may stand for it.
    if let Some(before) = previous.get(&name)
        && !opts.require_signatures()
        && opts.carry.lookaside.is_none()
        && before.source_digest.as_ref() == Some(digest)
        && still_there(&sink, before, &copy_opts.target)
    {
        // The earlier record's digests and platforms stand; nothing is copied this time.
        return ImageResult {
            source_digest: before.source_digest.clone(),
            digest: before.digest.clone(),
            narrowed_to: before.narrowed_to.clone(),
            size: p.size.or(before.size),
            mirror: p.mirror.clone(),
            ..ImageResult::planned(p, name, Status::Present)
        };
    }
    let location = pull_from;
    // Without a record of an earlier run: a target that already holds the image under its
    // tag at the source's digest needs no copy (one HEAD, no blob asked about), unless
    // something attached at the source may be missing there.
    if let Target::Registry(reference) = &sink
        && !opts.require_signatures()
        && opts.carry.lookaside.is_none()
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
    let image = carry::Image {
        read_from: location,
        identity: &p.source,
        built_here: built_here(p),
    };
    match carry::copy(image, &sink, copy_opts, &opts.carry) {
        Ok(done) => {
            let report = &done.report;
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
                attached: done.carried.total(),
                carried: opts.signatures().then(|| done.carried.clone()),
                signature_check: (done.check != carry::Check::NotAsked)
                    .then(|| done.check.to_string()),
                mirror: p.mirror.clone(),
            }
        }
        Err(e) => failed(p, name, crate::mirror::plan::reason_of(&e)),
    }
}

/// Whether `p` is the catalog image this run built from a folder: no source registry holds
/// it, so no signature of it can exist to require (it is signed at the target, if at all).
fn built_here(p: &PlannedImage) -> bool {
    p.kind == crate::mirror::plan::Kind::Catalog
        && std::path::Path::new(&p.source).is_dir()
        && p.pull_from
            .as_ref()
            .is_some_and(|l| !matches!(l.place(), crate::location::Place::Registry(_)))
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
