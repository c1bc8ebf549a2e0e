//! `olmpack bundle pull REF DIR`: unpack a bundle image into a folder that `bundle validate` and
//! `bundle build` accept ([`crate::action::bundle_pull`]: atomically, nothing left on failure).

use super::flags::RegistryArgs;
use super::{EXIT_OK, Failure, Outcome};
use crate::action::{Location, bundle_pull};
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
    let pulled = bundle_pull::pull(&source, dest, |source| {
        let registry = args.registry.options(&[&args.image])?;
        let source = args.policy.check(source, &registry)?;
        Ok::<_, Failure>((registry, source))
    })?;
    for w in &pulled.warnings {
        eprintln!("warning: {w}");
    }
    outln!("{}@{} -> {}", args.image, pulled.digest, dest.display())?;
    Ok(EXIT_OK)
}
