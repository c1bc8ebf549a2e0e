//! `olmpack bundle build`: validate a bundle folder, build its reproducible image, write it to an
//! OCI layout or an archive, and print the manifest digest.
//!
//! Output contract: stdout holds one line, `sha256:<hex> <size>` (the manifest digest and its
//! size in bytes, like `sha256sum` puts the hash first), then with `--push` one `REF@sha256:<hex>`
//! line per pushed tag, so
//! `read -r digest size < <(olmpack bundle build)` works; everything meant for humans (warnings,
//! validation findings, where the image went) goes to stderr. `--digest-file` gets the bare
//! digest (no newline, as buildah's and podman's `--digestfile`), written atomically.
//!
//! Names: an `oci:`/`oci-archive:` destination uses its own `:TAG`, else the tag part of each
//! `-t REF`, else `latest`. A `docker-archive:` destination records its own `:REF`, else every
//! `-t REF`, as `RepoTags` (`:latest` added when a reference has no tag).

use super::flags::RegistryArgs;
use super::{Failure, Outcome, error_chain};
use crate::action::bundle_build::{self, BundleBuildResult, BundleBuildRun, Format};
use crate::action::delivery::{self, DeliveryFlags, Destination};
use crate::action::labels::parse_label;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Where the image goes when neither `--output` nor `--push` is given.
pub const DEFAULT_OUTPUT: &str = "oci:bundle-image";

/// Arguments of `olmpack bundle build`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Output: stdout gets `sha256:<manifest digest> <manifest size>`, then `REF@sha256:<digest>` per tag
pushed with --push; messages go to stderr.
Reproducible: mtimes are SOURCE_DATE_EPOCH (or 0), owners 0, modes 0644/0755, so the same bundle
gives the same digest on any machine.
Concurrent builds into one oci: layout are safe: each updates index.json under a lock on
LAYOUT/.olmpack.lock, waiting up to OLMPACK_LOCK_TIMEOUT seconds (default 60) for it.
Exit codes: 0 built, 1 validation errors (nothing written), 2 usage or I/O error (nothing written).")]
pub struct Args {
    /// The bundle folder (holding manifests/ and metadata/).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Image reference to name the image with (repeatable); its tag names the image in OCI
    /// outputs, the whole reference goes to docker-archive RepoTags.
    #[arg(short = 't', long = "tag", value_name = "REF")]
    pub tags: Vec<String>,
    /// oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REF]
    /// [default: oci:bundle-image]
    #[arg(long, value_name = "DEST", value_parser = check::<Destination>)]
    pub output: Option<String>,
    /// Media types of the manifest, config and layers.
    #[arg(long, value_enum, default_value_t = FormatArg::Oci)]
    pub format: FormatArg,
    /// Extra image label KEY=VALUE (repeatable); may not contradict an annotation.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Push the image to every `-t REF` (a registry reference each). Without `--output`, nothing
    /// is written locally.
    #[arg(long)]
    pub push: bool,
    /// Repository to mount existing blobs from when pushing (cross-repository blob mount).
    #[arg(long, value_name = "REPO", requires = "push")]
    pub mount_from: Option<String>,
    /// Also write the manifest digest (sha256:...) to this file.
    #[arg(long, value_name = "FILE")]
    pub digest_file: Option<PathBuf>,
    /// Build even when validation finds errors (validation is skipped).
    #[arg(long)]
    pub no_validate: bool,
    /// Put all folders in one layer instead of one layer per folder.
    #[arg(long)]
    pub single_layer: bool,
    /// Registry connection flags for --push; `--platform` is the platform recorded in the image.
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Sign what is pushed (cosign and/or simple signing).
    #[command(flatten)]
    pub sign: Box<super::super::sign::SignArgs>,
    /// Attest what is pushed (SLSA provenance, SPDX SBOM).
    #[command(flatten)]
    pub attest: super::super::sign::BuildAttestArgs,
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// OCI image manifest and media types.
    Oci,
    /// Docker image manifest v2 schema 2.
    Docker,
}

/// Checks a value at parse time but keeps it as a string, so `Args` stays small (clippy's
/// `large_enum_variant` on the command enum) and the parsed form is made where it is used.
fn check<T: std::str::FromStr>(s: &str) -> Result<String, String>
where
    T::Err: std::fmt::Display,
{
    s.parse::<T>()
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

/// Runs `olmpack bundle build`: flags into a [`BundleBuildRun`], one library call, the digest
/// on stdout.
pub fn run(args: &Args) -> Outcome {
    if args.push && args.tags.is_empty() {
        return Err(Failure::usage(
            "--push needs at least one -t REF to push to",
        ));
    }
    let attest = args.attest.wanted(&args.sign, args.push)?;
    let signing = super::super::sign::build_sign_options(&args.sign, args.push)?;
    // Read once (`--password-stdin` reads stdin), only for a push.
    let registry_opts = if args.push {
        args.registry.options(
            &args
                .tags
                .iter()
                .chain(&args.output)
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )?
    } else {
        Default::default()
    };
    // With --push, a local copy is written only when --output asks for one.
    let planned = delivery::plan(&DeliveryFlags {
        output: args.output.as_deref(),
        default_output: DEFAULT_OUTPUT,
        tags: &args.tags,
        push: args.push,
        mount_from: args.mount_from.as_deref(),
        digest_file: args.digest_file.as_deref(),
    })?;
    let options = bundle_build::build_options(
        match args.format {
            FormatArg::Oci => Format::Oci,
            FormatArg::Docker => Format::Docker,
        },
        &args.registry.platform,
        &args.labels,
        args.single_layer,
    )?;
    let request = BundleBuildRun {
        dir: args.dir.clone(),
        validate: !args.no_validate,
        options,
        delivery: planned.delivery.clone(),
        // Read only for a push (`--password-stdin` reads stdin).
        registry: registry_opts,
        sign: signing.map(std::sync::Arc::new),
        attest,
    };
    let color = super::color_on(std::io::stderr().is_terminal());
    let mut printed: Result<(), Failure> = Ok(());
    let outcome = bundle_build::run(&request, &mut |event| {
        super::print_build_event(event, color, &mut |built| {
            printed = print_built(&planned, built)
        })
    });
    printed?;
    super::build_exit(
        outcome.map_err(|e| Failure::usage(error_chain(&e)))?,
        &args.dir,
    )
}

/// Where the image went, and the digest lines on stdout (before any signing, so a signing
/// failure still leaves the pushed references printed).
fn print_built(planned: &delivery::Planned, built: &BundleBuildResult) -> Result<(), Failure> {
    let (dest, names) = (&planned.dest, &planned.names);
    if let Some(dest) = dest {
        eprintln!(
            "wrote {} ({} layer{}, {}) as {}",
            dest,
            built.layers,
            if built.layers == 1 { "" } else { "s" },
            built.media_type,
            if names.is_empty() {
                "(untagged)".to_string()
            } else {
                names.join(", ")
            },
        );
    }
    if planned.is_docker_archive() {
        eprintln!(
            "note: a docker-archive keeps no manifest, only uncompressed layers: tools that read it \
             (bundle inspect, validate --image, pull, docker load) show another manifest digest. \
             The digest printed on stdout is the one a registry gets with --push; the image ID \
             {} is the same in both",
            built.image_id
        );
    }
    outln!("{} {}", built.digest, built.size)?;
    for reference in &built.pushed {
        outln!("{reference}")?;
    }
    Ok(())
}
