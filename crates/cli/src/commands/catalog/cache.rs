//! `olmpack catalog cache verify`: would opm accept the serve cache of a catalog image (or of a
//! catalog folder and its cache folder), and if not, why. Exit 0 accepted (or no cache and
//! none asked for), 1 refused, 2 usage or I/O.

use super::flags::ConnectionArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Outcome};
use crate::action::Location;

/// `catalog cache ...` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Check a serve cache as `opm serve --cache-dir ... --cache-enforce-integrity` will.
    Verify(VerifyArgs),
}

/// Arguments of `olmpack catalog cache verify`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
SOURCE is a catalog image (REF, oci:PATH[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE) or a
catalog folder. For an image, the catalog folder is the one its
operators.operatorframework.io.index.configs.v1 label names and the cache folder the one its CMD
passes as --cache-dir, else the one serve cache the image holds (a scratch image built with
--cache); both can be overridden. The digest is recomputed with the modes the image's layers give,
and the cache's owners, modes and readers are reported: the image's user (a cache it cannot read
is refused) and an arbitrary uid in group 0, with a warning when the image's user reads it only
through group 0. For a folder, --cache-dir names the cache folder (the one holding cache/ and
digest), hashed as it is on disk.

When the digest does not match, the cache this catalog gives is rebuilt and compared file by file:
changed, missing and extra cache files are named, with the catalog file each bundle comes from.

When the version of the opm that will serve the cache is known (--opm-version, or the version
recorded in the image's opm binary), the cache is also rebuilt as that opm writes it and compared:
opm serves bundles as the cache stores them, so a cache written for another opm (e.g. for v1.26: no
CSV synthesized from olm.csv.metadata, no deprecations, no metas/ of other schemas) makes it answer
like that other opm. The report says which opm generations' content the cache holds.

Exit codes: 0 opm will accept the cache and it holds what that opm writes (or the image has none
and its CMD asks for none: opm builds one at start), 1 it will not, or the cache was written for
another opm (or a cache asked for is not there, or the image's user cannot read it), 2 usage or
I/O error.")]
pub struct VerifyArgs {
    /// The catalog image or folder.
    pub source: String,
    /// The cache folder (for a folder SOURCE: required; for an image: instead of CMD's).
    #[arg(long, value_name = "PATH")]
    pub cache_dir: Option<String>,
    /// The catalog folder inside an image (instead of the configs label).
    #[arg(long, value_name = "PATH")]
    pub configs_dir: Option<String>,
    /// The version of the opm that will serve the cache (e.g. v1.69.0; for an image, default:
    /// the version recorded in its opm binary): the cache must also hold what that opm writes
    /// (its format, its bundles' content, metas/ from v1.69).
    #[arg(long, value_name = "VERSION")]
    pub opm_version: Option<String>,
    /// Registry connection flags.
    #[command(flatten, next_help_heading = "Registry options")]
    pub registry: ConnectionArgs,
    /// Signature policy checked before a catalog image is read.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
}

/// Runs `olmpack catalog cache ...`.
pub fn run(cmd: &Command) -> Outcome {
    match cmd {
        Command::Verify(args) => verify(args),
    }
}

fn verify(args: &VerifyArgs) -> Outcome {
    let report = crate::action::catalog_cache::verify(
        &args.source,
        Location::parse(&args.source),
        args.configs_dir.as_deref(),
        args.cache_dir.as_deref(),
        args.opm_version.as_deref(),
        || args.registry.options(Default::default(), &[&args.source]),
        |location, registry| args.policy.check(location, registry),
    )?;
    outln!("{}", report.to_text().trim_end_matches('\n'))?;
    Ok(if report.passes() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}
