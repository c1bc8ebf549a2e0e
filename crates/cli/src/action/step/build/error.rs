//! Why a catalog build failed: the build step's own errors, and a whole run's, with the step
//! that failed (the filter and deliver steps' errors among them).

use super::CONFIGS_LABEL;
use crate::image::BuildError;
use crate::transport::TransportError;
use crate::transport::sink::DeliveryError;
use std::path::PathBuf;

/// Why a catalog image could not be built or delivered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogBuildError {
    /// The catalog folder is missing or not a folder.
    #[error("{} is not a catalog folder: {reason}", path.display())]
    NotAFolder {
        /// The path given.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// `--configs-dir` is not an absolute, clean path below `/`.
    #[error(
        "invalid --configs-dir {0:?}: expected an absolute path such as /configs, without .. or //"
    )]
    ConfigsDir(String),
    /// A `--label` sets the configs label to something else than `--configs-dir`.
    #[error(
        "--label {CONFIGS_LABEL}={value} contradicts --configs-dir {configs_dir}; drop the label (it is set from --configs-dir)"
    )]
    LabelConflict {
        /// The label's value.
        value: String,
        /// The configs folder.
        configs_dir: String,
    },
    /// The base has no image for a platform that was asked for.
    #[error("the base {base} has no image for platform {platform} (it has: {available})")]
    BasePlatform {
        /// The base as given.
        base: String,
        /// The platform asked for.
        platform: String,
        /// What the base offers.
        available: String,
    },
    /// The base index lists no image with a platform.
    #[error("the base {0} is an index without any platform image")]
    EmptyBase(String),
    /// The base could not be opened (not an image, unreachable, refused).
    #[error("cannot read the base image {base}: {source}")]
    Base {
        /// The base as given.
        base: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// Writing the layer or assembling the image failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Fetching base layers or pushing failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// opm's serve cache could not be built.
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
    /// No serve cache fits the base's opm (too old, or a format it cannot read).
    #[error(transparent)]
    CacheProfile(#[from] crate::cache::profile::ProfileError),
    /// The base's opm binary could not be read for its version.
    #[error("{base}: reading its opm binary for the serve cache's format: {source}")]
    BaseOpm {
        /// The base as given.
        base: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// The owner of the serve cache (the base's user) could not be found.
    #[error("{base}: {source}")]
    BaseUser {
        /// The base as given.
        base: String,
        /// Why.
        #[source]
        source: crate::cache::owner::OwnerError,
    },
    /// The catalog image given as source cannot be rebuilt (not a catalog image, platforms
    /// holding different catalogs, a flag that does not apply to it).
    #[error("{source_name}: {reason}")]
    ImageSource {
        /// The source as given.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// The catalog image given as source could not be opened.
    #[error("cannot read the catalog image {source_name}: {source}")]
    Source {
        /// The source as given.
        source_name: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// A layer of the catalog image given as source could not be read or rewritten.
    #[error("{source_name}: {source}")]
    SourceLayer {
        /// The source as given.
        source_name: String,
        /// Why.
        #[source]
        source: crate::image::ImageError,
    },
    /// A temp folder could not be created.
    #[error("cannot create a temp folder in {}: {source}", path.display())]
    Spool {
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Why a `catalog build` run failed, with the step that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogBuildRunError {
    /// The options are unusable (`--configs-dir`...), before anything was read.
    #[error(transparent)]
    Options(Box<CatalogBuildError>),
    /// SOURCE is another kind of source (a bundle folder, a package-manifest package, an
    /// sqlite database): the message names the kind and the command that reads it.
    #[error("{0}")]
    NotACatalog(String),
    /// The catalog could not be validated (not loadable at all).
    #[error("cannot validate {}", dir.display())]
    Validate {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<crate::catalog::load::LoadError>,
    },
    /// The image could not be built.
    #[error("cannot build {}", dir.display())]
    Build {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<CatalogBuildError>,
    },
    /// The image could not be written or pushed, or its digest recorded.
    #[error(transparent)]
    Deliver(#[from] DeliveryError),
    /// The image was pushed but could not be signed.
    #[error(transparent)]
    Sign(#[from] crate::action::step::sign::SignPushedError),
    /// The image was pushed (and signed) but its attestations could not be attached.
    #[error(transparent)]
    Attest(Box<crate::action::step::attest::AttestPushedError>),
    /// Attestations were asked for in a way the build cannot give them.
    #[error("{0}")]
    AttestUsage(String),
    /// The catalog folder could not be read for its attestations.
    #[error("cannot read {} for its attestations", dir.display())]
    AttestSource {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `--filter` could not be applied (configuration, catalog, or a result that would not
    /// validate).
    #[error("cannot filter {}", dir.display())]
    Filter {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<crate::action::step::filter::FilterCatalogError>,
    },
}
