//! The mirror archive (`--to-archive DIR`, read back by `--from-archive DIR`):
//!
//! ```text
//! DIR/plan.json   the plan of every image the archive holds (kind, source, repository,
//!                 tag, digest, size): what --from-archive names and pushes
//! DIR/oci/        one OCI image layout shared by every image (one blob store, so a layer
//!                 used by several images is stored once); each image is in index.json under
//!                 the name img-<hex of its source digest>, its signatures under cosign's
//!                 sha256-<hex>.sig/.att/.sbom tags
//! ```
//!
//! `plan.json` lists an image only once its copy into the layout finished, and is rewritten
//! (atomically) at the end of each run with the images of earlier runs kept: a second
//! `--to-archive` into the same folder copies only what is new, and an interrupted one leaves
//! an archive whose plan names only complete images. The folder can be moved to another
//! machine as it is; `--from-archive` reads only it (no network to the source).

use super::plan::Plan;
use crate::location::LocalImage;
use std::path::{Path, PathBuf};

/// The plan file's name.
pub const PLAN_FILE: &str = "plan.json";
/// The layout folder's name.
pub const LAYOUT_DIR: &str = "oci";

/// Why an archive cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// The folder is not an archive.
    #[error("{} is not a mirror archive: {reason}", dir.display())]
    NotAnArchive {
        /// The folder.
        dir: PathBuf,
        /// What is missing or wrong.
        reason: String,
    },
    /// The folder cannot be used for an archive.
    #[error("cannot use {} as a mirror archive: {reason}", dir.display())]
    Unusable {
        /// The folder.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
    /// Writing the plan failed.
    #[error(transparent)]
    Write(#[from] crate::fsio::FsError),
}

/// The layout inside `dir`.
pub fn layout(dir: &Path) -> PathBuf {
    dir.join(LAYOUT_DIR)
}

/// The name of an image in the layout.
pub fn image_name(source_digest: &str) -> String {
    let hex = source_digest
        .split_once(':')
        .map_or(source_digest, |(_, h)| h);
    format!("img-{hex}")
}

/// An image in the archive, as the `oci:` image it is read from.
pub fn image_location(dir: &Path, source_digest: &str) -> LocalImage {
    LocalImage::OciLayout {
        path: layout(dir),
        tag: Some(image_name(source_digest)),
    }
}

/// The lock a `--to-archive` run holds on its archive folder (in the folder, not in the
/// layout, whose own lock guards each `index.json` update): while it is held, a `.olmpack-…`
/// entry in the archive is this run's staging; without it, one is a killed run's leftover.
pub const ARCHIVE_LOCK_FILE: &str = ".olmpack.lock";

/// The exclusive lock of a `--to-archive` run, released when dropped (or when the process
/// ends, however it ends).
#[derive(Debug)]
pub struct ArchiveLock {
    _file: std::fs::File,
}

/// Checks that `dir` can hold an archive (a `:` would break the `oci:PATH:TAG` grammar);
/// creates it and its layout when missing; takes the run's lock and removes what an earlier
/// run left staged (a killed run's `.olmpack-…` folders and partial blobs), so nothing but
/// complete blobs travels with the archive. The layout is created here, before any copy,
/// so the parallel copies add their blobs to it (each through a temporary file in
/// `blobs/sha256/`) instead of each assembling a whole layout in a staging folder beside it.
pub fn prepare(dir: &Path) -> Result<ArchiveLock, ArchiveError> {
    let unusable = |reason: String| ArchiveError::Unusable {
        dir: dir.to_path_buf(),
        reason,
    };
    if dir.to_string_lossy().contains(':') {
        return Err(unusable("the path may not contain ':'".into()));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(unusable("it is not a folder".into()));
    }
    let oci = layout(dir);
    std::fs::create_dir_all(&oci).map_err(|e| unusable(e.to_string()))?;
    let lock_path = dir.join(ARCHIVE_LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| unusable(format!("cannot create {}: {e}", lock_path.display())))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(unusable(
                "another catalog mirror run is writing to it (wait for it to end)".into(),
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(unusable(format!(
                "cannot lock {}: {e}",
                lock_path.display()
            )));
        }
    }
    let lock = ArchiveLock { _file: file };
    for folder in [
        dir.to_path_buf(),
        oci.clone(),
        oci.join("blobs").join("sha256"),
    ] {
        remove_stale_staging(&folder).map_err(|e| unusable(e.to_string()))?;
    }
    create_empty_layout(&oci)?;
    Ok(lock)
}

/// Removes the `.olmpack-…` entries of `folder` (temporary files and folders of a run that
/// was killed before it could remove them; the layout's `.olmpack.lock` is not one).
fn remove_stale_staging(folder: &Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(folder) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        if !entry.file_name().to_string_lossy().starts_with(".olmpack-") {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Writes `oci-layout` and an empty `index.json` into the empty layout folder `oci` (an
/// existing layout is left as it is).
fn create_empty_layout(oci: &Path) -> Result<(), ArchiveError> {
    if oci.join("oci-layout").is_file() {
        return Ok(());
    }
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": crate::image::media::OCI_INDEX,
        "manifests": [],
    });
    crate::fsio::write(
        &oci.join("index.json"),
        &crate::image::config::canonical_json(&index),
        crate::fsio::Options::edit(0o644),
    )?;
    crate::fsio::write(
        &oci.join("oci-layout"),
        crate::transport::layout::OCI_LAYOUT_FILE_CONTENT.as_bytes(),
        crate::fsio::Options::edit(0o644),
    )?;
    Ok(())
}

/// The plan of an existing archive; `Ok(None)` for a folder without one (a new archive).
pub fn read_plan(dir: &Path) -> Result<Option<Plan>, ArchiveError> {
    let path = dir.join(PLAN_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ArchiveError::NotAnArchive {
                dir: dir.to_path_buf(),
                reason: format!("cannot read {}: {e}", path.display()),
            });
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| ArchiveError::NotAnArchive {
            dir: dir.to_path_buf(),
            reason: format!("{} is not a mirror plan: {e}", path.display()),
        })
}

/// The plan `--from-archive` needs: present, with a layout beside it.
pub fn read_existing(dir: &Path) -> Result<Plan, ArchiveError> {
    if !dir.is_dir() {
        return Err(ArchiveError::NotAnArchive {
            dir: dir.to_path_buf(),
            reason: "no such folder".into(),
        });
    }
    let plan = read_plan(dir)?.ok_or_else(|| ArchiveError::NotAnArchive {
        dir: dir.to_path_buf(),
        reason: format!("it has no {PLAN_FILE} (write one with --to-archive)"),
    })?;
    if !layout(dir).join("index.json").is_file() {
        return Err(ArchiveError::NotAnArchive {
            dir: dir.to_path_buf(),
            reason: format!("it has no {LAYOUT_DIR}/index.json"),
        });
    }
    Ok(plan)
}

/// Adds `new` to `old`: an image already listed (same kind, source and digest) keeps one
/// entry; the source becomes the latest run's.
pub fn merge(old: Option<Plan>, new: Plan) -> Plan {
    let Some(mut merged) = old else {
        return new;
    };
    merged.source = new.source;
    for image in new.images {
        let same = |i: &super::plan::PlannedImage| {
            i.kind == image.kind && i.source == image.source && i.digest == image.digest
        };
        match merged.images.iter_mut().find(|i| same(i)) {
            Some(slot) => *slot = image,
            None => merged.images.push(image),
        }
    }
    merged
}

/// Writes the plan (without the run's `pull_from`) atomically.
pub fn write_plan(dir: &Path, plan: &Plan) -> Result<(), ArchiveError> {
    let mut plan = plan.clone();
    for i in &mut plan.images {
        i.pull_from = None;
        i.error = None;
    }
    let mut bytes = serde_json::to_vec_pretty(&plan).unwrap_or_default();
    bytes.push(b'\n');
    crate::fsio::write(
        &dir.join(PLAN_FILE),
        &bytes,
        crate::fsio::Options::edit(0o644),
    )?;
    Ok(())
}

/// Whether the layout lists `name`.
pub fn has_image(dir: &Path, name: &str) -> bool {
    let Ok(index) = crate::transport::layout::read_index(&layout(dir)) else {
        return false;
    };
    index
        .get("manifests")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|m| {
            m.iter().any(|e| {
                e.pointer("/annotations/org.opencontainers.image.ref.name")
                    .and_then(serde_json::Value::as_str)
                    == Some(name)
            })
        })
}
