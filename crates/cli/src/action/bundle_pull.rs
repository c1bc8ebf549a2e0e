//! `bundle pull`: a bundle image unpacked into a folder that `bundle validate` and `bundle
//! build` accept. The folder appears atomically: layers are unpacked into a temp sibling that
//! is renamed into place only when every digest verified and every entry was safe, so a
//! failed pull leaves nothing behind.

use crate::location::Location;
use crate::transport::unpack::Limits;
use crate::transport::{RegistryOptions, TransportError};
use std::path::{Path, PathBuf};

/// Why a pull failed (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PullError {
    /// The destination is unusable, or the bundle could not be moved there.
    #[error("{0}")]
    Dest(String),
    /// The image could not be opened or unpacked.
    #[error(transparent)]
    Transport(#[from] TransportError),
}

/// A pulled bundle.
#[derive(Debug)]
pub struct Pulled {
    /// Manifest digest.
    pub digest: String,
    /// What a bundle image should not have ([`super::source::bundle_warnings`]).
    pub warnings: Vec<String>,
}

/// Pulls the image `source` into `dest` (new, or an empty folder). The destination is checked
/// first; `registry` is asked for the registry options only then.
pub fn pull<E: From<PullError>>(
    source: &Location,
    dest: &Path,
    registry: impl FnOnce(&Location) -> Result<(RegistryOptions, Location), E>,
) -> Result<Pulled, E> {
    let fail = |m: String| E::from(PullError::Dest(m));
    if let Ok(mut rd) = std::fs::read_dir(dest)
        && rd.next().is_some()
    {
        return Err(fail(format!(
            "{} is not empty; pull into a new or empty folder",
            dest.display()
        )));
    }
    if dest.exists() && !dest.is_dir() {
        return Err(fail(format!(
            "{} exists and is not a folder",
            dest.display()
        )));
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
    // The registry options, and the location to read (pinned to the digest a signature
    // policy verified, if one did).
    let (registry, source) = registry(source)?;
    let opened = super::source::open(&source, &registry).map_err(PullError::from)?;
    let tmp = tempfile::Builder::new()
        .prefix(".olmpack-pull-")
        .tempdir_in(&parent)
        .map_err(|e| {
            fail(format!(
                "cannot create a temp folder in {}: {}",
                parent.display(),
                crate::fsio::temp_error(e)
            ))
        })?;
    let _interrupt = crate::interrupt::register(tmp.path());
    opened
        .unpack_into(tmp.path(), &Limits::default())
        .map_err(PullError::from)?;
    let warnings = super::source::bundle_warnings(&opened, tmp.path());
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755));
    // rename(2) replaces an empty folder atomically, so the user's folder is never removed
    // before the bundle is in place.
    let kept = tmp.keep();
    if let Err(e) = std::fs::rename(&kept, dest) {
        let _ = std::fs::remove_dir_all(&kept);
        return Err(fail(format!(
            "cannot move the bundle into {}: {e}",
            dest.display()
        )));
    }
    Ok(Pulled {
        digest: opened.image.digest().to_string(),
        warnings,
    })
}
