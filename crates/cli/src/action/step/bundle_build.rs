//! The bundle build step: a bundle folder loaded, checked with every `bundle validate` rule
//! when asked, and built into a reproducible image in a spool, before anything is delivered.
//! `bundle build` and `bundle republish` both take it, so a republished bundle is built exactly
//! as `bundle build` builds one.

use crate::bundle::Bundle;
use crate::bundle::loader::LoadError;
use crate::findings::Report;
use crate::image::build::{BuildWarning, BundleInput};
use crate::image::{BuildError, BuildOptions, BuiltImage};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The media types a build writes (`--format`).
pub use crate::image::Format;

/// Why a bundle folder could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleStepError {
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
}

/// Builds the bundle folder `dir`. With `validate`, the findings go to `on_findings` before
/// anything is built, and errors among them end the step with `None`; without it only the
/// layout is read. `on_loaded` sees the loaded (and valid) bundle before it is built, for what a
/// caller must read from it first (a build's attestation facts): its error ends the step. The
/// warnings kept in the image are the ones a user may care about (not the `bundle.Dockerfile`
/// that `bundle init` wrote into the folder).
pub fn build_folder<E: From<BundleStepError>>(
    dir: &Path,
    validate: bool,
    options: &BuildOptions,
    on_findings: &mut dyn FnMut(&Report),
    on_loaded: &mut dyn FnMut(&Bundle) -> Result<(), E>,
) -> Result<Option<BuiltImage>, E> {
    // The loaded bundle is dropped before building: the builder streams files from disk.
    let (input, root) = {
        let bundle = if validate {
            Bundle::load(dir)
        } else {
            Bundle::load_layout(dir)
        }
        .map_err(BundleStepError::from)?;
        if validate {
            let report = crate::validate::validate(&bundle, &crate::validate::Options::default());
            if !report.diagnostics.is_empty() {
                on_findings(&report);
            }
            if report.has_errors() {
                return Ok(None);
            }
        }
        on_loaded(&bundle)?;
        let input = BundleInput::new(
            &bundle.root,
            bundle.manifests_path(),
            bundle.metadata_path(),
            bundle.annotations_labels(),
        )
        .map_err(BundleStepError::Input)?;
        (input, bundle.root.clone())
    };
    let mut built =
        crate::image::build(&input, options).map_err(|source| BundleStepError::Build {
            dir: dir.to_path_buf(),
            source,
        })?;
    built.warnings.retain(|w| !is_own_scaffold(&root, w));
    Ok(Some(built))
}

/// Whether a warning is about the `bundle.Dockerfile` that `bundle init --dockerfile` wrote into
/// the bundle folder: it belongs there (its COPY lines are relative to that folder), so its
/// absence from the image is no news. A Dockerfile of the user's own is still reported.
fn is_own_scaffold(root: &Path, warning: &BuildWarning) -> bool {
    let BuildWarning::NotPackaged { path } = warning else {
        return false;
    };
    if path.file_name() != Some(OsStr::new(crate::scaffold::DOCKERFILE))
        || path.parent() != Some(root)
    {
        return false;
    }
    let marker = crate::scaffold::dockerfile::marker().as_bytes();
    let mut head = vec![0; marker.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == marker)
}

/// The image options from the build flags: `--format`, `--platform` (empty: linux/amd64),
/// `--label`s (checked against each other), `--single-layer`, and `SOURCE_DATE_EPOCH` from
/// the environment.
pub fn build_options(
    format: Format,
    platform: &str,
    labels: &[(String, String)],
    single_layer: bool,
) -> Result<BuildOptions, crate::action::delivery::FlagError> {
    use crate::action::delivery::FlagError;
    let platform: crate::image::Platform = if platform.is_empty() {
        crate::image::Platform::default()
    } else {
        platform.parse().map_err(FlagError::chain)?
    };
    Ok(BuildOptions {
        format,
        platform,
        extra_labels: crate::action::labels::label_map(labels).map_err(FlagError::chain)?,
        single_layer,
        source_date_epoch: crate::image::build::source_date_epoch_from_env()
            .map_err(FlagError::chain)?,
    })
}
