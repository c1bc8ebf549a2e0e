//! `olmpack copy SRC DST`: flags in, one call to [`crate::action::copy`], the resulting digest
//! on stdout (so `d=$(olmpack copy …)` composes, as crane's digest output does) and what
//! happened on stderr.

use super::flags::{CarryArgs, SignaturesMode};
use super::{EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::copy::{self, Check, CopyError, CopyOptions, RegistryOptions};
use std::path::PathBuf;

/// Arguments of `olmpack copy`.
#[derive(clap::Args)]
pub struct Args {
    /// Source: REF (with its registry host), oci:PATH[:TAG], oci-archive:FILE[:TAG] or
    /// docker-archive:FILE.
    pub source: String,
    /// Target: REF, oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REF].
    pub target: String,
    /// Copy every platform of an index (the default; the index keeps its digest).
    #[arg(long, conflicts_with = "platform")]
    pub all: bool,
    /// Copy only this platform of an index (repeatable): the index is rewritten to those
    /// entries, and so gets a new digest.
    #[arg(long, value_name = "OS/ARCH[/VARIANT]")]
    pub platform: Vec<String>,
    /// What to do with what is attached to the image and each image of an index (cosign's
    /// sha256-HEX.sig/.att/.sbom tags, OCI referrers such as Sigstore bundles, attestations
    /// and SBOMs, and with --registries-d the lookaside simple signatures): drop it (default),
    /// copy it along, or require a signature (checked before anything is copied).
    #[arg(long, value_enum, value_name = "MODE")]
    pub signatures: Option<SignaturesMode>,
    /// The older spelling of --signatures copy.
    #[arg(long, hide = true, conflicts_with = "signatures")]
    pub with_signatures: bool,
    /// Keys and stores for carrying signatures.
    #[command(flatten)]
    pub carry: CarryArgs,
    /// Auth file (docker config.json or containers auth.json) for the source registry.
    #[arg(long, value_name = "FILE")]
    pub src_authfile: Option<PathBuf>,
    /// Auth file for the target registry.
    #[arg(long, value_name = "FILE")]
    pub dest_authfile: Option<PathBuf>,
    /// Credentials for the source registry only (REGISTRY=USER:PASSWORD binds them to another
    /// registry instead).
    #[arg(long, value_name = "[REGISTRY=]USER:PASSWORD")]
    pub src_creds: Option<String>,
    /// Credentials for the target registry only (REGISTRY=USER:PASSWORD binds them to another
    /// registry instead).
    #[arg(long, value_name = "[REGISTRY=]USER:PASSWORD")]
    pub dest_creds: Option<String>,
    /// Talk plain HTTP to the source registry (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub src_plain_http: bool,
    /// Talk plain HTTP to the target registry (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub dest_plain_http: bool,
    /// PEM file of extra CA certificates for the source registry's TLS.
    #[arg(long, value_name = "FILE")]
    pub src_ca_file: Option<PathBuf>,
    /// PEM file of extra CA certificates for the target registry's TLS.
    #[arg(long, value_name = "FILE")]
    pub dest_ca_file: Option<PathBuf>,
    /// Attempts per request on connection errors, 408, 429 and 5xx (1 = no retry).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,
    /// Seconds allowed for each registry request, answer and body included; a blob gets one
    /// more second per 64 KiB of its size [default: 600].
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// Signature policy checked before the source is read.
    #[command(flatten)]
    pub policy: super::sign::PolicyArgs,
}

impl std::fmt::Debug for Args {
    /// Written by hand so credentials never reach a debug print of the arguments.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Args")
            .field("source", &self.source)
            .field("target", &self.target)
            .field("platform", &self.platform)
            .field("signatures", &self.signatures)
            .field("with_signatures", &self.with_signatures)
            .finish_non_exhaustive()
    }
}

/// One end's registry options from the copy flags (shared with `catalog mirror`); `named`
/// is that end as typed, and `flag` its credentials option.
pub fn end(
    authfile: &Option<PathBuf>,
    creds: &Option<String>,
    named: (&[&str], &str),
    plain_http: bool,
    ca_file: &Option<PathBuf>,
    retries: u32,
) -> Result<RegistryOptions, Failure> {
    Ok(copy::end_options(
        authfile, creds, named, plain_http, ca_file, retries,
    )?)
}

/// Runs `olmpack copy`.
pub fn run(args: &Args) -> Outcome {
    let platforms = copy::platforms(&args.platform).map_err(|e| Failure::usage(e.to_string()))?;
    let mut opts = CopyOptions {
        source: end(
            &args.src_authfile,
            &args.src_creds,
            (&[args.source.as_str()], "--src-creds"),
            args.src_plain_http,
            &args.src_ca_file,
            args.retries,
        )?,
        target: end(
            &args.dest_authfile,
            &args.dest_creds,
            (&[args.target.as_str()], "--dest-creds"),
            args.dest_plain_http,
            &args.dest_ca_file,
            args.retries,
        )?,
        platforms,
        ..CopyOptions::default()
    };
    let mode = match (args.signatures, args.with_signatures) {
        (Some(mode), _) => mode,
        (None, true) => SignaturesMode::Copy,
        (None, false) => SignaturesMode::Drop,
    };
    let carry = args.carry.options(mode)?;
    if let Some(secs) = args.timeout {
        opts.source.client.timeout = std::time::Duration::from_secs(secs);
        opts.target.client.timeout = std::time::Duration::from_secs(secs);
    }
    // Classified once, here: an image (a folder or plain file is refused with what to type).
    let source = Location::parse(&args.source)
        .and_then(Location::require_image)
        .map_err(|e| CopyError::Source {
            typed: args.source.clone(),
            source: Box::new(e),
        })?;
    // Copied at the digest the policy verified (when one did).
    let source = args.policy.check(&source, &opts.source)?;
    let done = match copy::copy_from(&source, &args.source, &args.target, &opts, &carry) {
        Ok(done) => done,
        Err(e) if e.refused() => {
            return Err(Failure::with_code(
                super::EXIT_FINDINGS,
                super::error_chain(&e),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let report = &done.report;
    if let Some(from) = &report.narrowed_from {
        eprintln!(
            "the index was narrowed to {}: it is a new index (the source index is {from})",
            report.platforms.join(", ")
        );
    }
    for a in &report.attached {
        match &a.tag {
            Some(tag) => eprintln!("copied {tag} ({}) attached to {}", a.digest, a.subject),
            None => eprintln!("copied referrer {} of {}", a.digest, a.subject),
        }
    }
    if mode != SignaturesMode::Drop {
        eprintln!("carried for {}: {}", args.source, done.carried);
    }
    if done.check != Check::NotAsked {
        eprintln!("--signatures require: {}", done.check);
    }
    eprintln!("copied {} to {}", args.source, report.target);
    outln!("{}", report.digest)?;
    Ok(EXIT_OK)
}
