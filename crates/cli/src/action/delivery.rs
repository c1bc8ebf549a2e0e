//! The output and push flags `bundle build` and `catalog build` share (`--output`, `-t`,
//! `--push`, `--mount-from`, `--digest-file`), turned into the [`Delivery`] the builds take,
//! so both builds name their outputs by the same rules.

/// A local output (`oci:`, `oci-archive:`, `docker-archive:`), as `--output` names one.
pub use crate::image::Destination;
use crate::registry::push::PushOptions;
use crate::transport::sink::{Delivery, output_names};
use std::path::PathBuf;

/// Why the flags name no delivery (a usage error); the cause is kept, and the command
/// prints it with its whole chain.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// The flags do not go together.
    #[error("{0}")]
    Conflict(String),
    /// A flag's value is not valid.
    #[error(transparent)]
    Invalid(Box<dyn std::error::Error + Send + Sync>),
}

impl FlagError {
    /// The error of a flag's value, kept with its causes.
    pub(crate) fn chain(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        FlagError::Invalid(Box::new(e))
    }
}

/// The delivery flags, as typed.
#[derive(Debug, Clone, Copy)]
pub struct DeliveryFlags<'a> {
    /// `--output`.
    pub output: Option<&'a str>,
    /// Where the image goes when neither `--output` nor `--push` is given.
    pub default_output: &'a str,
    /// `-t` references.
    pub tags: &'a [String],
    /// `--push` (to every `-t`; without `--output`, nothing is written locally).
    pub push: bool,
    /// `--mount-from`.
    pub mount_from: Option<&'a str>,
    /// `--digest-file`.
    pub digest_file: Option<&'a std::path::Path>,
}

/// Where a build goes.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The local output, if any (with `--push`, only when `--output` asks for one).
    pub dest: Option<Destination>,
    /// The names recorded in the local output ([`output_names`]).
    pub names: Vec<String>,
    /// What the build delivers.
    pub delivery: Delivery,
}

impl Planned {
    /// Whether the local output is a `docker-archive:` (one platform, no manifest kept).
    pub fn is_docker_archive(&self) -> bool {
        matches!(self.dest, Some(Destination::DockerArchive { .. }))
    }
}

/// The delivery the flags ask for: the local output parsed (the default one when nothing is
/// asked), its names, the references to push to.
pub fn plan(flags: &DeliveryFlags<'_>) -> Result<Planned, FlagError> {
    let parse = |s: &str| s.parse::<Destination>().map_err(FlagError::chain);
    let dest = match (flags.output, flags.push) {
        (Some(out), _) => Some(parse(out)?),
        (None, false) => Some(parse(flags.default_output)?),
        (None, true) => None,
    };
    let names = match &dest {
        Some(dest) => output_names(dest, flags.tags).map_err(FlagError::chain)?,
        None => Vec::new(),
    };
    let delivery = Delivery {
        output: dest.clone().map(|d| (d, names.clone())),
        push: if flags.push {
            flags.tags.to_vec()
        } else {
            Vec::new()
        },
        push_options: PushOptions {
            mount_from: flags.mount_from.map(str::to_string),
            ..PushOptions::default()
        },
        digest_file: flags.digest_file.map(PathBuf::from),
    };
    Ok(Planned {
        dest,
        names,
        delivery,
    })
}
