//! `olmpack bundle pin DIR [--mirror-config FILE]… [--layout DIR]… [--offline]`: every image
//! the bundle's CSV names resolved to a digest and rewritten in place, `spec.relatedImages`
//! completed ([`crate::action::bundle_pin`]).

use super::flags::ConnectionArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::bundle_pin::{self, MirrorConfig, PinError, PinPlaces};
use crate::action::connection::Platform;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `olmpack bundle pin`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bundle folder (its CSV is edited in place).
    pub dir: PathBuf,
    /// Where images may be read instead of where they say: an ImageDigestMirrorSet,
    /// ImageTagMirrorSet or ImageContentSourcePolicy (YAML) or a registries.conf (TOML), with
    /// containers/image's rules (mirrors in order, then the source unless blocked /
    /// NeverContactSource; digest-only mirrors are not used for tags). Repeatable.
    #[arg(long = "mirror-config", value_name = "FILE")]
    pub mirror_config: Vec<PathBuf>,
    /// A folder of OCI layouts, one per repository at DIR/REGISTRY/REPOSITORY (tags as
    /// org.opencontainers.image.ref.name), read before any registry. Repeatable.
    #[arg(long = "layout", value_name = "DIR")]
    pub layouts: Vec<PathBuf>,
    /// Contact no registry: resolve from --layout folders only.
    #[arg(long)]
    pub offline: bool,
    /// Registry connection options.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `olmpack bundle pin`.
pub fn run(args: &Args) -> Outcome {
    if args.offline && args.layouts.is_empty() {
        return Err(Failure::usage(
            "--offline needs at least one --layout DIR to resolve from",
        ));
    }
    let mirrors = MirrorConfig::load(&args.mirror_config)
        .map_err(|e| Failure::usage(super::error_chain(&e)))?;
    let places = PinPlaces {
        mirrors,
        registry: args.connection.options(Platform::default(), &[])?,
        layouts: args.layouts.clone(),
        offline: args.offline,
    };
    let report = match bundle_pin::pin(&args.dir, &places) {
        Ok(r) => r,
        Err(PinError::Unresolved { unresolved, total }) => {
            let mut err = std::io::stderr().lock();
            for u in &unresolved {
                let _ = writeln!(err, "error: {}: {}", u.image, u.reason);
                for s in &u.sites {
                    let _ = writeln!(err, "  named at {s}");
                }
            }
            return Err(Failure::with_code(
                EXIT_FINDINGS,
                format!(
                    "{} of {total} images could not be pinned; nothing was written",
                    unresolved.len()
                ),
            ));
        }
        Err(e) => return Err(Failure::usage(super::error_chain(&e))),
    };
    for i in &report.images {
        match &i.place {
            Some(p) if i.pinned != i.image => {
                let via = if i.mirror { " (mirror)" } else { "" };
                outln!("pinned {} -> {} from {p}{via}", i.image, i.pinned)?;
            }
            _ => outln!("already pinned {}", i.image)?,
        }
    }
    for a in &report.added {
        outln!("added to spec.relatedImages: {} {}", a.name, a.image)?;
    }
    let state = if report.changed {
        "written"
    } else {
        "unchanged"
    };
    outln!(
        "{} images, 100% pinned; {} {state}",
        report.images.len(),
        report.csv.display()
    )?;
    Ok(EXIT_OK)
}
