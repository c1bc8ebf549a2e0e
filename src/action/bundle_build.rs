//! `bundle build`: a bundle folder, validated, as a reproducible image, delivered through the
//! one delivery path ([`crate::transport::sink::deliver`]) that `catalog build` uses too.
//!
//! The order is what makes "no partial output" hold: the bundle is loaded and validated, the
//! image is built into a spool folder, and only then does the deliver step
//! ([`super::step::deliver`]) stage the digest file, push, write the local output and put the
//! digest file in place; the sign step ([`super::step::sign`]) then signs each pushed
//! reference at the digest pushed.

use super::sign::{SignOptions, Written};
use super::step::bundle_build::{self as bundle_step, BundleStepError};
use super::step::deliver::Pushed;
use super::step::sign::SignPushedError;
use crate::bundle::loader::LoadError;
use crate::findings::Report;
use crate::image::build::BuildWarning;
use crate::image::{BuildError, BuildOptions};
use crate::transport::RegistryOptions;
use crate::transport::sink::{self, Delivery, DeliveryError};
use std::path::PathBuf;
use std::sync::Arc;

/// A whole `bundle build` run.
#[derive(Debug, Clone, Default)]
pub struct BundleBuildRun {
    /// The bundle folder (holding `manifests/` and `metadata/`).
    pub dir: PathBuf,
    /// Check the bundle with every `bundle validate` rule first; errors stop the run before
    /// anything is built or written, warnings do not. Without it only the layout is read.
    pub validate: bool,
    /// Media types, platform, labels, layering, timestamps.
    pub options: BuildOptions,
    /// Where the image goes.
    pub delivery: Delivery,
    /// How to reach the registries pushed to.
    pub registry: RegistryOptions,
    /// Sign every pushed reference at the digest pushed (the last delivery step); keys are
    /// read before the run, so a wrong passphrase costs no build.
    pub sign: Option<Arc<SignOptions>>,
}

/// What a run reports while it goes, in order, so a front end can show it as it happens.
#[derive(Debug)]
pub enum BundleBuildEvent<'a> {
    /// The validation report, when it has findings (given before anything is built).
    Findings(&'a Report),
    /// Something the build left out that the user may care about.
    Warning(&'a BuildWarning),
    /// The image was delivered (written, pushed, its digest recorded); signing comes next.
    Delivered(&'a BundleBuildResult),
    /// A pushed reference was signed.
    Signed(&'a Pushed, &'a Written),
}

/// How a run ended when nothing failed: findings are an outcome, not an error, and carry no
/// exit code (the front end chooses it).
#[derive(Debug)]
pub enum BundleBuildOutcome {
    /// Validation found errors (already given as [`BundleBuildEvent::Findings`]): nothing was
    /// built or written.
    Invalid,
    /// The image was built and delivered, and the digest file written.
    Built(BundleBuildResult),
}

/// What was built and where it went.
#[derive(Debug, Clone)]
pub struct BundleBuildResult {
    /// The manifest digest.
    pub digest: String,
    /// The manifest size in bytes.
    pub size: u64,
    /// The manifest media type.
    pub media_type: String,
    /// The config digest (the image ID `docker images` shows), the same wherever the image is
    /// written: a docker-archive keeps no manifest, so readers of one show a manifest digest of
    /// their own, but this one.
    pub image_id: String,
    /// Number of layers.
    pub layers: usize,
    /// `REF@sha256:…` for every tag pushed.
    pub pushed: Vec<String>,
}

/// Why a `bundle build` run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleBuildError {
    /// The bundle could not be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The bundle's annotations point its folders outside it.
    #[error(transparent)]
    Input(BuildError),
    /// The image could not be built.
    #[error("cannot build {}", dir.display())]
    Build {
        /// The bundle folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: BuildError,
    },
    /// The image could not be delivered (pushed, written) or its digest recorded.
    #[error(transparent)]
    Deliver(#[from] DeliveryError),
    /// The image was pushed but could not be signed.
    #[error(transparent)]
    Sign(#[from] SignPushedError),
}

/// Runs `bundle build` as one call: load and validate (unless asked not to), build, deliver,
/// sign what was pushed.
pub fn run(
    run: &BundleBuildRun,
    on_event: &mut dyn FnMut(BundleBuildEvent<'_>),
) -> Result<BundleBuildOutcome, BundleBuildError> {
    // Every local output is checked before anything is built (and long before a push).
    sink::check_outputs(&run.delivery)?;
    let Some(mut built) =
        bundle_step::build_folder(&run.dir, run.validate, &run.options, &mut |r| {
            on_event(BundleBuildEvent::Findings(r))
        })?
    else {
        return Ok(BundleBuildOutcome::Invalid);
    };
    for w in &built.warnings {
        on_event(BundleBuildEvent::Warning(w));
    }
    let pushed = super::step::deliver::deliver(&mut built, &run.delivery, &run.registry)?;
    let manifest = &built.image.manifest.descriptor;
    let result = BundleBuildResult {
        digest: manifest.digest.clone(),
        size: manifest.size,
        media_type: manifest.media_type.to_string(),
        image_id: built.image.config.descriptor.digest.clone(),
        layers: built.image.layers.len(),
        pushed: pushed.iter().map(|p| p.shown.clone()).collect(),
    };
    on_event(BundleBuildEvent::Delivered(&result));
    if let Some(opts) = &run.sign {
        for p in &pushed {
            for w in super::step::sign::sign_pushed(p, &run.registry, opts)? {
                on_event(BundleBuildEvent::Signed(p, &w));
            }
        }
    }
    Ok(BundleBuildOutcome::Built(result))
}

/// The media types a build writes (`--format`), and the image options from the build flags
/// (the bundle build step's, shared with `bundle republish`).
pub use super::step::bundle_build::{Format, build_options};

impl From<BundleStepError> for BundleBuildError {
    fn from(e: BundleStepError) -> Self {
        match e {
            BundleStepError::Load(e) => BundleBuildError::Load(e),
            BundleStepError::Input(e) => BundleBuildError::Input(e),
            BundleStepError::Build { dir, source } => BundleBuildError::Build { dir, source },
        }
    }
}
