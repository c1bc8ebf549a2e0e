//! `olmpack bundle pull REF DIR`: unpack a bundle image into a folder that `bundle validate` and
//! `bundle build` accept. The folder appears atomically: layers are unpacked into a temp sibling
//! that is renamed into place only when every digest verified and every entry was safe, so a
//! failed pull leaves nothing behind.

use super::flags::RegistryArgs;
use super::{EXIT_OK, Failure, Outcome};
use crate::action::bundle_image::bundle_warnings;
use crate::location::Location;
use crate::transport::source::open_image;
use crate::transport::unpack::Limits;
use std::path::PathBuf;

/// Arguments of `olmpack bundle pull`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Image: REF, oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE.
    pub image: String,
    /// Folder to create (must not exist, or be empty).
    pub dir: PathBuf,
    /// Registry options.
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Signature policy checked before the image is read.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
}

/// Runs `olmpack bundle pull`.
pub fn run(args: &Args) -> Outcome {
    let source = Location::parse(&args.image)?.require_image()?;
    let dest = &args.dir;
    if let Ok(mut rd) = std::fs::read_dir(dest)
        && rd.next().is_some()
    {
        return Err(Failure::usage(format!(
            "{} is not empty; pull into a new or empty folder",
            dest.display()
        )));
    }
    if dest.exists() && !dest.is_dir() {
        return Err(Failure::usage(format!(
            "{} exists and is not a folder",
            dest.display()
        )));
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", parent.display())))?;
    let registry = args.registry.options()?;
    args.policy.check(&source, &registry)?;
    let opened = open_image(&source, &registry)?;
    let tmp = tempfile::Builder::new()
        .prefix(".olmpack-pull-")
        .tempdir_in(&parent)
        .map_err(|e| {
            Failure::usage(format!(
                "cannot create a temp folder in {}: {}",
                parent.display(),
                crate::fsio::temp_error(e)
            ))
        })?;
    let _interrupt = crate::interrupt::register(tmp.path());
    opened.unpack_into(tmp.path(), &Limits::default())?;
    let warnings = bundle_warnings(&opened, tmp.path());
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755));
    // rename(2) replaces an empty folder atomically, so the user's folder is never removed
    // before the bundle is in place.
    let kept = tmp.keep();
    if let Err(e) = std::fs::rename(&kept, dest) {
        let _ = std::fs::remove_dir_all(&kept);
        return Err(Failure::usage(format!(
            "cannot move the bundle into {}: {e}",
            dest.display()
        )));
    }
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "{}@{} -> {}",
        args.image,
        opened.image.digest(),
        dest.display()
    );
    Ok(EXIT_OK)
}
