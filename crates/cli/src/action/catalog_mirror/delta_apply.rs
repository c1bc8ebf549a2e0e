//! The mirror run's side of delta archives ([`crate::mirror::delta`]): which images a delta
//! being written leaves to its chain, whether an archive folder may take the delta asked for,
//! and the check of a delta against its target before anything is pushed.

use super::{MirrorError, MirrorOptions};
use crate::mirror::archive;
use crate::mirror::delta::{self, ArchiveRecord, Previous, TargetProbe};
use crate::mirror::naming::Destination;
use crate::mirror::plan::{Plan, PlannedImage};
use crate::mirror::results::{ImageResult, Status};
use crate::reference::Reference;
use crate::registry::Repository;
use crate::transport::CopyOptions;
use std::collections::HashMap;
use std::path::Path;

fn present(p: &PlannedImage, target: String, digest: String) -> ImageResult {
    ImageResult {
        digest: Some(digest),
        ..ImageResult::planned(p, target, Status::Present)
    }
}

/// The images of `plan` the chain up to `since` carries, as the records of images already in
/// the archive (by layout name): the run does not copy them.
pub(super) fn carried_by_chain(plan: &Plan, since: &Previous) -> HashMap<String, ImageResult> {
    let carried = since.images();
    plan.images
        .iter()
        .filter_map(|p| {
            let digest = p.digest.clone()?;
            carried.contains(&digest).then(|| {
                let name = archive::image_name(&digest);
                (name.clone(), present(p, name, digest))
            })
        })
        .collect()
}

/// Refuses to write into `dir` an archive of another kind than the one it holds: a delta into
/// a full archive or into a delta of another predecessor, a full archive into a delta (each
/// would record content its layout does not hold).
pub(super) fn same_chain(dir: &Path, since: Option<&Previous>) -> Result<(), MirrorError> {
    if !dir.is_dir() {
        return Ok(());
    }
    let Some(existing) = archive::read_plan(dir)? else {
        return Ok(());
    };
    let follows = existing.archive.as_ref().and_then(|r| r.follows.clone());
    let shown = dir.display();
    match (follows, since) {
        (None, None) => Ok(()),
        (Some(f), Some(p)) if f == p.digest => Ok(()),
        (Some(f), Some(p)) => Err(MirrorError::Usage(format!(
            "{shown} is a delta archive that follows the archive whose plan is {f}, not the one --since names ({}): write this delta into a new folder",
            p.digest
        ))),
        (Some(f), None) => Err(MirrorError::Usage(format!(
            "{shown} is a delta archive (it follows the archive whose plan is {f}): add to it with the same --since, or write a full archive into a new folder"
        ))),
        (None, Some(_)) => Err(MirrorError::Usage(format!(
            "{shown} already holds a full archive: write the delta into a new folder"
        ))),
    }
}

/// The target as [`delta::check_apply`] asks it.
struct Probe<'a> {
    dest: &'a Destination,
    opts: &'a MirrorOptions,
}

impl Probe<'_> {
    fn reference(&self, repository: &str, tag: Option<&str>) -> Option<Reference> {
        Some(Reference {
            registry: self.dest.registry.clone(),
            repository: self
                .dest
                .repository(repository, self.opts.max_components)
                .ok()?,
            tag: tag.map(str::to_string),
            digest: None,
        })
    }
}

impl TargetProbe for Probe<'_> {
    fn image_digest(&self, image: &PlannedImage) -> Option<String> {
        let reference = self.reference(&image.repository, Some(&image.tag))?;
        self.opts
            .target
            .repository(&reference)
            .ok()?
            .manifest_head(reference.manifest_reference())
            .ok()??
            .digest
    }

    fn has_blob(&self, repository: &str, digest: &str) -> (bool, String) {
        let Some(reference) = self.reference(repository, None) else {
            return (false, repository.to_string());
        };
        let name = format!("{}/{}", reference.registry, reference.repository);
        let found = self
            .opts
            .target
            .repository(&reference)
            .ok()
            .and_then(|r| r.blob_head(digest).ok())
            .unwrap_or(false);
        (found, name)
    }

    fn name(&self, image: &PlannedImage) -> String {
        self.reference(&image.repository, Some(&image.tag))
            .map_or_else(|| image.source.clone(), |r| r.to_string())
    }
}

/// Checks the delta `dir` against its chain and the target before anything is pushed; tells
/// the copies where the chain's blobs are at the target (so they are mounted, never read from
/// the delta, which lacks them) and returns the images the chain carries as already present.
pub(super) fn check(
    dir: &Path,
    plan: &Plan,
    record: &ArchiveRecord,
    dest: &Destination,
    opts: &MirrorOptions,
    copy_opts: &CopyOptions,
) -> Result<HashMap<String, ImageResult>, MirrorError> {
    let probe = Probe { dest, opts };
    let assumed = delta::check_apply(dir, plan, record, &probe, opts.jobs)?;
    if let Some(known) = &copy_opts.push.known_blobs {
        for (digest, repository) in &assumed.blobs {
            if let Ok(at) = dest.repository(repository, opts.max_components) {
                known.record(&dest.registry, digest, &at);
            }
        }
    }
    Ok(plan
        .images
        .iter()
        .filter_map(|p| {
            let at = assumed.images.get(p.digest.as_deref()?)?;
            let name = probe.name(p);
            Some((name.clone(), present(p, name, at.clone())))
        })
        .collect())
}
