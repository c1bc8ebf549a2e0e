//! `olmpack copy SRC DST`: an image or a whole multi-platform index from any source (a registry
//! reference, `oci:`, `oci-archive:`, `docker-archive:`) to any sink, with its signatures when
//! asked: `crane cp` / `skopeo copy` over olmpack's one image model ([`crate::transport::copy`]).
//! The command line parses the source (it must exist, see [`CopyError::Source`]); this door
//! parses the target (a local target need not exist) and says which end failed.

use crate::image::Platform;
use crate::image::config::PlatformError;
use crate::location::Location;
use crate::registry::RegistryError;
use crate::registry::RetryPolicy;
use crate::registry::auth::{self, AuthOptions};
use crate::registry::client::ClientOptions;
use crate::transport::{Target, TransportError};
use std::path::PathBuf;

/// How signatures are carried (`--signatures`), and what came of it: the carry step's.
pub use super::step::carry::{CarryError, CarryOptions, Carrying, Check, SignaturesMode};
/// The options the command fills: the copy's, and each end's registry options.
pub use crate::transport::{CopyOptions, RegistryOptions};

/// One end's registry options from the copy flags (`--src-*` or `--dest-*`; `catalog mirror`
/// shares them): credentials from `authfile`, `creds` (USER:PASSWORD) and the environment's
/// default locations, plain HTTP, extra CAs, and `retries` attempts per request (at least 1).
/// `creds` bind to the registry of `named` (the end as typed on the command line; `flag` names
/// the option in messages), or to the one a `REGISTRY=` prefix names.
pub fn end_options(
    authfile: &Option<PathBuf>,
    creds: &Option<String>,
    (named, flag): (&[&str], &str),
    plain_http: bool,
    ca_file: &Option<PathBuf>,
    retries: u32,
) -> Result<RegistryOptions, RegistryError> {
    let mut auth = AuthOptions::from_env();
    auth.authfile = authfile.clone();
    if let Some(c) = creds {
        let hosts = crate::action::connection::named_registries(named);
        auth.explicit = auth::bind_creds(c, &hosts, flag)?;
    }
    Ok(RegistryOptions {
        auth,
        client: ClientOptions {
            plain_http,
            ca_file: ca_file.clone(),
            retry: RetryPolicy {
                max_attempts: retries.max(1),
                ..RetryPolicy::default()
            },
            ..ClientOptions::default()
        },
        platform: Platform::default(),
        mirrors: Default::default(),
    })
}

/// The `--platform` values, parsed; `None` (every platform) when none is given.
pub fn platforms(typed: &[String]) -> Result<Option<Vec<Platform>>, PlatformError> {
    if typed.is_empty() {
        return Ok(None);
    }
    typed
        .iter()
        .map(|p| p.parse::<Platform>())
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Why a copy did not happen (or did not finish: blobs already at the target are reused by the
/// next run, and no tag points at an incomplete image).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyError {
    /// The source string names nothing readable.
    #[error("cannot read the source {typed}")]
    Source {
        /// The source as typed.
        typed: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The target string is neither a registry reference nor a local image.
    #[error("invalid target {typed}")]
    Target {
        /// The target as typed.
        typed: String,
        /// Why.
        #[source]
        source: Box<TransportError>,
    },
    /// The copy itself failed, or `--signatures require` refused it before anything was
    /// written ([`CopyError::refused`]).
    #[error("cannot copy {source_name} to {target}")]
    Copy {
        /// The source as typed.
        source_name: String,
        /// The target as typed.
        target: String,
        /// Why (boxed: the error travels up through every layer, the report does not).
        #[source]
        source: Box<CarryError>,
    },
}

impl CopyError {
    /// Whether `--signatures require` refused the image (a check that failed, exit 1), rather
    /// than the copy failing to run.
    pub fn refused(&self) -> bool {
        matches!(
            self,
            CopyError::Copy { source, .. }
                if matches!(**source, CarryError::NothingAttached { .. } | CarryError::NotVerified { .. })
        )
    }
}

/// Copies a classified source to `target` with what is attached to it as `carry` says (the
/// carry step, [`super::step::carry`], which `catalog mirror` runs for each image too): one
/// pinned to the digest a signature policy verified ([`Location::pinned`]) is copied at that
/// digest. `identity` is the name its signatures carry (the source as typed).
pub fn copy_from(
    location: &Location,
    identity: &str,
    target: &str,
    opts: &CopyOptions,
    carry: &CarryOptions,
) -> Result<Carrying, CopyError> {
    let source = location.as_str();
    let dest: Target = target.parse().map_err(|e| CopyError::Target {
        typed: target.to_string(),
        source: Box::new(e),
    })?;
    let image = super::step::carry::Image {
        read_from: location,
        identity,
        built_here: false,
    };
    super::step::carry::copy(image, &dest, opts, carry).map_err(|e| CopyError::Copy {
        source_name: source.to_string(),
        target: target.to_string(),
        source: Box::new(e),
    })
}

/// The `registries.d` folder `dir` (`--registries-d`), whose lookaside stores the carry step
/// copies simple signatures between.
pub fn load_registries_d(
    dir: &std::path::Path,
) -> Result<crate::signature::lookaside::RegistriesD, crate::signature::SignatureError> {
    crate::signature::lookaside::RegistriesD::load(dir)
}
