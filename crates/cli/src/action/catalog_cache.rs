//! `catalog cache verify`: would opm accept the serve cache of a catalog image, or of a catalog
//! folder and its cache folder ([`crate::cache::verify`] does the checking; the source is
//! opened here, with the catalog label read by [`super::source`]).

pub use crate::cache::VerifyReport;
use crate::location::{Location, LocationError};
use crate::transport::RegistryOptions;
use std::path::PathBuf;

/// Why the verification could not run (exit 2); the message names the source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The flags do not fit the source, the whole message.
    #[error("{0}")]
    Usage(String),
    /// The catalog folder and its cache could not be read.
    #[error(transparent)]
    Verify(crate::cache::verify::VerifyError),
    /// The source is no folder here, and read as an image it failed.
    #[error("{typed}: no such folder here, and as an image")]
    NeitherFolderNorImage {
        /// The source as typed.
        typed: String,
        /// Why the image could not be verified.
        #[source]
        error: crate::cache::verify::VerifyError,
    },
}

/// Verifies `source` (as typed; `parsed` is what the command line made of it): a catalog
/// folder with `cache_dir` (required), or a catalog image (opened with the options `registry`
/// gives, asked only then) with its catalog folder from `configs_dir` or its label and its
/// cache folder from `cache_dir`, CMD or its files. An image passes `admit` first (the
/// signature policy), which gives back the location to read (pinned to the digest it
/// verified). With `opm_version` (else, for an image, the version of its own opm binary) the
/// cache is also judged against what that opm writes ([`crate::cache::fit`]). A source that is no folder and no image is reported only once the registry
/// options are known, so their errors come first, as for every other image source.
pub fn verify<E: From<CacheError>>(
    source: &str,
    parsed: Result<Location, LocationError>,
    configs_dir: Option<&str>,
    cache_dir: Option<&str>,
    opm_version: Option<&str>,
    registry: impl FnOnce() -> Result<RegistryOptions, E>,
    admit: impl FnOnce(&Location, &RegistryOptions) -> Result<Location, E>,
) -> Result<VerifyReport, E> {
    let path = PathBuf::from(source);
    let usage = |m: String| E::from(CacheError::Usage(m));
    let opm = opm_version
        .map(str::parse::<crate::cache::OpmVersion>)
        .transpose()
        .map_err(|e| usage(format!("--opm-version: {e}")))?;
    let report = if path.is_dir() {
        let Some(cache) = cache_dir else {
            return Err(usage(format!(
                "{source}: a catalog folder needs --cache-dir CACHE (the folder opm was given as --cache-dir, holding cache/ and digest)"
            )));
        };
        let cache = PathBuf::from(cache);
        if !cache.is_dir() {
            return Err(usage(format!(
                "{}: no such folder (--cache-dir)",
                cache.display()
            )));
        }
        crate::cache::verify::verify_dir(&path, &cache).map(|mut r| {
            if let Some(v) = opm {
                crate::cache::fit::check(&mut r, &path, &cache, v, "--opm-version".into());
            }
            r
        })
    } else {
        if path.exists() {
            return Err(usage(format!(
                "{source}: a file, not a catalog folder or image (for an archive write oci-archive:{source} or docker-archive:{source})"
            )));
        }
        let opts = registry()?;
        let location = parsed.map_err(|e| {
            usage(format!(
                "{source}: no such folder here, and as an image: {e}"
            ))
        })?;
        let location = admit(&location, &opts)?;
        verify_image(source, &location, &opts, configs_dir, cache_dir, opm)
    }
    .map_err(|error| {
        E::from(if path.exists() {
            CacheError::Verify(error)
        } else {
            CacheError::NeitherFolderNorImage {
                typed: source.to_string(),
                error,
            }
        })
    })?;
    Ok(report)
}

fn verify_image(
    source: &str,
    location: &Location,
    opts: &RegistryOptions,
    configs: Option<&str>,
    cache_dir: Option<&str>,
    opm: Option<crate::cache::OpmVersion>,
) -> Result<VerifyReport, crate::cache::verify::VerifyError> {
    use crate::cache::verify::VerifyError;
    let opened = super::source::open(location, opts)?;
    let configs = super::source::configs_label_path(source, &opened.labels(), configs)
        .map_err(VerifyError::Usage)?;
    crate::cache::verify::verify_image(source, &opened, configs, cache_dir, opm)
}
