//! `olmpack catalog mirror`: flags in, one call to [`crate::action::catalog_mirror::run`], the
//! plan or the progress and summary out, exit 1 when an image could not be copied.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::catalog_mirror::types::{self as mirror, ImageResult, Platform, Status};
use crate::action::catalog_mirror::{
    self, MirrorError, MirrorEvent, MirrorOptions, MirrorOutcome, MirrorSource, MirrorTarget,
};
use crate::action::step::filter::FilterOptions;
use crate::location::Place;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;

/// Arguments of `olmpack catalog mirror`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    /// What else `catalog mirror` does to a mirror target.
    #[command(subcommand)]
    pub command: Option<MirrorCommand>,
    /// The catalog: an image reference (with its registry host), oci:DIR[:TAG],
    /// oci-archive:FILE[:TAG], or a catalog folder (built into an image as `catalog build` does).
    #[arg(
        required_unless_present_any = ["from_archive", "config"],
        conflicts_with_all = ["from_archive", "config"]
    )]
    pub source: Option<String>,
    /// Mirror what an oc-mirror v2 ImageSetConfiguration (v2alpha1) names, with no SOURCE:
    /// every catalog of mirror.operators (registry references, oci:// layouts, catalog
    /// folders) filtered by its entry, additionalImages, minus blockedImages, for the
    /// architectures of mirror.platform. Every requested package, channel and version range is
    /// checked against every catalog before anything is copied; a field olmpack does not act
    /// on is refused by name.
    #[arg(long, value_name = "ISC.yaml", conflicts_with_all = ["from_archive", "filter"])]
    pub config: Option<PathBuf>,
    /// With --config: drop the packages a catalog lacks (shown in the table) and mirror the
    /// rest, instead of refusing the run.
    #[arg(long, requires = "config")]
    pub allow_missing: bool,
    /// Target REGISTRY/NAMESPACE: each image goes to REGISTRY/NAMESPACE/<its repository path>.
    #[arg(long, value_name = "REGISTRY/NAMESPACE", required_unless_present_any = ["to_archive", "dry_run"], conflicts_with = "to_archive")]
    pub to: Option<String>,
    /// Write the images and the plan into an archive folder instead (one OCI layout).
    #[arg(long, value_name = "DIR")]
    pub to_archive: Option<PathBuf>,
    /// With --to-archive: write a delta archive, holding only the images and layers that
    /// PREVIOUS (an archive folder, or its plan.json alone) and the archives before it lack,
    /// plus the plan of the whole set naming its predecessor by the sha256 of its plan.json.
    /// --from-archive applies deltas in order and refuses one whose predecessors' content the
    /// target lacks.
    #[arg(long, value_name = "PREVIOUS", requires = "to_archive")]
    pub since: Option<PathBuf>,
    /// Push an archive written by --to-archive (reads nothing from the source registries).
    #[arg(long, value_name = "DIR")]
    pub from_archive: Option<PathBuf>,
    /// Filter the catalog first (catalog filter's FilterConfiguration or ImageSetConfiguration);
    /// a catalog folder source only, for now.
    #[arg(long, value_name = "FILE")]
    pub filter: Option<PathBuf>,
    /// With an ImageSetConfiguration: which mirror.operators[].catalog to use.
    #[arg(long, value_name = "REF", requires = "filter")]
    pub filter_catalog: Option<String>,
    /// With --filter: keep the selection as it is, without the bundles its bundles require
    /// (olm.package.required, olm.gvk.required), as catalog-filter and oc-mirror do.
    #[arg(long, requires = "filter")]
    pub no_dependencies: bool,
    /// Print the plan (every image, its target, digest and size, with totals); copy nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Images copied at the same time [default: 8, or the number of cores when more].
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// At most N path components below the registry (folds the leading ones with '-').
    #[arg(long, value_name = "N")]
    pub max_components: Option<usize>,
    /// Copy only these platforms of each index (repeatable): indexes are rewritten (new digests).
    #[arg(long, value_name = "OS/ARCH[/VARIANT]")]
    pub platform: Vec<String>,
    /// Do not copy signatures, attestations and referrers along (same as --signatures drop).
    #[arg(long, conflicts_with = "signatures")]
    pub no_signatures: bool,
    /// What to do with what is attached to each image (cosign's .sig, .att and .sbom tags,
    /// OCI referrers such as Sigstore bundles, attestations and SBOMs, and with --registries-d
    /// the lookaside simple signatures): copy it along (default), drop it, or require a
    /// signature (verified with --verify-key, --verify-gpg-keyring or a signature-checking
    /// --policy, else only its presence is checked): an image refused is not copied and is
    /// left out of the cluster files; the catalog built here from a folder is not refused.
    #[arg(long, value_enum, value_name = "MODE")]
    pub signatures: Option<SignaturesMode>,
    /// Keys and stores for carrying signatures.
    #[command(flatten)]
    pub carry: CarryArgs,
    /// Where the cluster files and the report go.
    #[arg(long, value_name = "DIR", default_value = "mirror-results")]
    pub results_dir: PathBuf,
    /// Read source images through mirrors: an ImageDigestMirrorSet, ImageTagMirrorSet or
    /// ImageContentSourcePolicy (YAML) or a registries.conf (TOML), with containers/image's
    /// rules (mirrors in order, then the source unless blocked / NeverContactSource;
    /// digest-only mirrors serve only digests, tag-only ones only tags). Results still name
    /// each image by its source name; each line says the mirror that served it. Repeatable
    /// (--registries-conf is the old spelling).
    #[arg(long = "mirror-config", alias = "registries-conf", value_name = "FILE")]
    pub mirror_config: Vec<PathBuf>,
    /// Also write, per mirrored package, an OLM v1 ClusterExtension and an OLM v0
    /// Subscription with its OperatorGroup into DIR/<catalog>/ (the channel and versions the
    /// run kept, the catalog as the CatalogSource and ClusterCatalog written name it, a
    /// service account placeholder): sketches to edit, not applied.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["to_archive", "from_archive", "dry_run"])]
    pub install_sketches: Option<PathBuf>,
    /// Target repository and tag of the catalog image for a folder or local source (with
    /// --config, each entry's targetCatalog and targetTag say it).
    #[arg(long, value_name = "NAME[:TAG]", conflicts_with = "config")]
    pub catalog_name: Option<String>,
    /// Base image for a folder source's catalog image (as catalog build --base; default
    /// scratch); with --config, for every folder catalog the file names.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Auth file (docker config.json or containers auth.json) for the source registries.
    #[arg(long, value_name = "FILE")]
    pub src_authfile: Option<PathBuf>,
    /// Auth file for the target registry.
    #[arg(long, value_name = "FILE")]
    pub dest_authfile: Option<PathBuf>,
    /// Credentials for the catalog image's registry only, never for the registries the
    /// catalog's content names (REGISTRY=USER:PASSWORD binds them to that registry instead;
    /// auth files give per-registry credentials for the rest).
    #[arg(long, value_name = "[REGISTRY=]USER:PASSWORD")]
    pub src_creds: Option<String>,
    /// Credentials for the target registry (--to's host; or REGISTRY=USER:PASSWORD).
    #[arg(long, value_name = "[REGISTRY=]USER:PASSWORD")]
    pub dest_creds: Option<String>,
    /// Talk plain HTTP to the source registries (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub src_plain_http: bool,
    /// Talk plain HTTP to the target registry (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub dest_plain_http: bool,
    /// PEM file of extra CA certificates for the source registries' TLS.
    #[arg(long, value_name = "FILE")]
    pub src_ca_file: Option<PathBuf>,
    /// PEM file of extra CA certificates for the target registry's TLS.
    #[arg(long, value_name = "FILE")]
    pub dest_ca_file: Option<PathBuf>,
    /// Verify the source registries' TLS certificates (--src-tls-verify=false to skip).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub src_tls_verify: bool,
    /// Verify the target registry's TLS certificate (--dest-tls-verify=false to skip).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub dest_tls_verify: bool,
    /// Attempts per request on connection errors, 408, 429 and 5xx (1 = no retry).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,
    /// Seconds allowed for each registry request, answer and body included; a blob gets one
    /// more second per 64 KiB of its size [default: 600].
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// Signature policy checked before each image is read: the catalog and --base (a refusal
    /// stops the run), every bundle and operand image (a refusal fails that image); with
    /// --from-archive each image as the oci: image read from the archive.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
    /// OpenShift signature policies for what was mirrored.
    #[command(flatten)]
    pub image_policy: ImagePolicyArgs,
}

/// The subcommands of `catalog mirror`.
#[derive(Debug, clap::Subcommand)]
pub enum MirrorCommand {
    /// List what an earlier run left at the target that the new run no longer uses (digests by
    /// repository, with their index children, signatures and referrers); --delete removes it.
    Prune(super::mirror_prune::Args),
}

use crate::commands::flags::CarryArgs;
/// `--signatures`: the one enum `copy` shares.
pub use crate::commands::flags::SignaturesMode;

/// Writing an OpenShift `ClusterImagePolicy` (or `ImagePolicy`) beside the IDMS.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Image policy options")]
pub struct ImagePolicyArgs {
    /// Write clusterimagepolicy.yaml beside idms.yaml: a ClusterImagePolicy
    /// (config.openshift.io/v1) requiring signatures by this cosign public key on every
    /// mirrored repository (scopes: the source repositories, which the IDMS redirects; the
    /// catalog's mirror repository with its identity remapped to its source).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["to_archive", "image_policy_fulcio_ca"])]
    pub image_policy_key: Option<PathBuf>,
    /// Keyless instead: the Fulcio CA certificate (PEM) the signing certificates chain to;
    /// needs --image-policy-rekor-key, --image-policy-oidc-issuer and --image-policy-email.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "to_archive",
        requires_all = ["image_policy_rekor_key", "image_policy_oidc_issuer", "image_policy_email"]
    )]
    pub image_policy_fulcio_ca: Option<PathBuf>,
    /// The Rekor public key (PEM): required with --image-policy-fulcio-ca, optional with
    /// --image-policy-key (then signatures must be in that log).
    #[arg(long, value_name = "FILE")]
    pub image_policy_rekor_key: Option<PathBuf>,
    /// The OIDC issuer the signing certificates name (keyless).
    #[arg(long, value_name = "URL", requires = "image_policy_fulcio_ca")]
    pub image_policy_oidc_issuer: Option<String>,
    /// The signer's email the signing certificates name (keyless).
    #[arg(long, value_name = "EMAIL", requires = "image_policy_fulcio_ca")]
    pub image_policy_email: Option<String>,
    /// Write a namespaced ImagePolicy in NAMESPACE (imagepolicy.yaml) instead of a
    /// ClusterImagePolicy.
    #[arg(long, value_name = "NAMESPACE")]
    pub image_policy_namespace: Option<String>,
}

impl std::fmt::Debug for Args {
    /// Written by hand so credentials never reach a debug print of the arguments.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Args")
            .field("source", &self.source)
            .field("to", &self.to)
            .field("to_archive", &self.to_archive)
            .field("from_archive", &self.from_archive)
            .finish_non_exhaustive()
    }
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn image_line(r: &ImageResult) -> String {
    let line = image_status_line(r);
    match &r.mirror {
        Some(m) if r.status != Status::Failed => format!("{line} [from mirror {m}]"),
        _ => line,
    }
}

/// One image's status, without where it was read.
fn image_status_line(r: &ImageResult) -> String {
    match r.status {
        Status::Failed => format!(
            "failed  {} {}: {}",
            r.kind,
            r.source,
            r.reason.as_deref().unwrap_or("")
        ),
        Status::Present => format!("present {} {} -> {}", r.kind, r.source, r.target),
        Status::Copied => {
            // An archive's layout reports no per-blob actions: its size is what is known.
            let what = if r.blobs_copied + r.blobs_skipped == 0 {
                r.size
                    .map_or_else(String::new, |s| format!(" ({})", human(s)))
            } else {
                format!(
                    " ({} blobs copied, {} skipped, {})",
                    r.blobs_copied,
                    r.blobs_skipped,
                    human(r.bytes_copied)
                )
            };
            let mut line = format!("copied  {} {} -> {}{what}", r.kind, r.source, r.target);
            if !r.narrowed_to.is_empty() {
                line.push_str(&format!(
                    "; index rewritten to {} (new digest {})",
                    r.narrowed_to.join(", "),
                    r.digest.as_deref().unwrap_or("")
                ));
            }
            if let Some(carried) = &r.carried {
                line.push_str(&format!("; carried {carried}"));
            }
            if let Some(check) = &r.signature_check {
                line.push_str(&format!("; --signatures require: {check}"));
            }
            line
        }
    }
}

/// Runs `olmpack catalog mirror`: flags into [`MirrorOptions`], one library call, progress
/// on stderr, then the plan (`--dry-run`) or the report.
pub fn run(args: &Args) -> Outcome {
    if let Some(MirrorCommand::Prune(prune)) = &args.command {
        return super::mirror_prune::run(prune);
    }
    let mut opts = options(args)?;
    let source = match (&args.from_archive, &args.source, &args.config) {
        (Some(dir), _, _) => MirrorSource::Archive(dir.clone()),
        (None, None, Some(config)) => {
            // --base is the base of every folder catalog of the file (built here).
            if let Some(base) = &args.base {
                let base = Location::parse(base)
                    .map_err(|e| Failure::usage(format!("--base {base}: {e}")))?;
                opts.base = Some(base);
            }
            MirrorSource::ImageSet(config.clone())
        }
        (None, Some(s), _) => {
            let unreadable = |message: String| MirrorError::Catalog {
                source_name: s.clone(),
                source: message.into(),
            };
            let location = Location::parse(s).map_err(|e| unreadable(e.to_string()))?;
            // --base matters only to a folder source, whose catalog image is built here.
            if let (Place::Path(_), Some(base)) = (location.place(), &args.base) {
                let base = Location::parse(base).map_err(|e| unreadable(e.to_string()))?;
                opts.base = Some(base);
            }
            MirrorSource::Catalog(s.clone(), location)
        }
        (None, None, None) => {
            return Err(Failure::usage(
                "give a catalog SOURCE, --config ISC.yaml or --from-archive DIR",
            ));
        }
    };
    let target = match (&args.to, &args.to_archive) {
        (Some(to), _) => MirrorTarget::Registry(to.clone()),
        (None, Some(dir)) => MirrorTarget::Archive(dir.clone()),
        // A dry run without a target still lists what would be copied.
        (None, None) => MirrorTarget::Registry("mirror.invalid/plan".into()),
    };
    let terminal = std::io::stderr().is_terminal();
    let bar: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);
    let on_event = |event: MirrorEvent<'_>| match event {
        MirrorEvent::Checked(checks) => eprint!("{}", catalog_mirror::table(checks)),
        MirrorEvent::Planned(plan) => {
            if !args.dry_run {
                eprintln!("plan: {} images", plan.images.len());
                if terminal && let Ok(mut slot) = bar.lock() {
                    let pb = indicatif::ProgressBar::new(plan.images.len() as u64);
                    if let Ok(style) = indicatif::ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} images {elapsed} {msg}",
                    ) {
                        pb.set_style(style);
                    }
                    *slot = Some(pb);
                }
            }
        }
        MirrorEvent::Image(r) => {
            let line = image_line(r);
            match bar.lock().ok().as_deref().and_then(Option::as_ref) {
                Some(pb) => {
                    if r.status == Status::Failed {
                        pb.println(line);
                    }
                    pb.inc(1);
                }
                None => eprintln!("{line}"),
            }
        }
    };
    let outcome = match catalog_mirror::run(&source, &target, &opts, &on_event) {
        Ok(outcome) => outcome,
        Err(MirrorError::Policy(e)) => return Err(super::super::sign::policy_failure(e)),
        Err(e @ MirrorError::Missing(_)) => {
            eprintln!("{e}");
            return Ok(EXIT_FINDINGS);
        }
        Err(e) => return Err(e.into()),
    };

    if let Ok(mut slot) = bar.lock()
        && let Some(pb) = slot.take()
    {
        pb.finish_and_clear();
    }
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    if outcome.report.is_none() {
        return print_plan(args, &outcome);
    }
    print_report(args, &target, &outcome)
}

/// The mirror options from the flags: platforms, both registry ends, rewrites, limits.
fn options(args: &Args) -> Result<MirrorOptions, Failure> {
    let platforms = if args.platform.is_empty() {
        None
    } else {
        Some(
            args.platform
                .iter()
                .map(|p| {
                    p.parse::<Platform>()
                        .map_err(|e| Failure::usage(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?,
        )
    };
    let source_named: Vec<&str> = args.source.iter().map(String::as_str).collect();
    let target_named: Vec<&str> = args.to.iter().map(String::as_str).collect();
    let mut source_opts = crate::commands::copy::end(
        &args.src_authfile,
        &args.src_creds,
        (&source_named, "--src-creds"),
        args.src_plain_http,
        &args.src_ca_file,
        args.retries,
    )?;
    source_opts.client.insecure = !args.src_tls_verify;
    let mut target_opts = crate::commands::copy::end(
        &args.dest_authfile,
        &args.dest_creds,
        (&target_named, "--dest-creds"),
        args.dest_plain_http,
        &args.dest_ca_file,
        args.retries,
    )?;
    target_opts.client.insecure = !args.dest_tls_verify;
    if let Some(secs) = args.timeout {
        source_opts.client.timeout = std::time::Duration::from_secs(secs);
        target_opts.client.timeout = std::time::Duration::from_secs(secs);
    }
    let source_opts =
        crate::action::connection::with_mirror_config(source_opts, &args.mirror_config)
            .map_err(|e| Failure::usage(super::super::error_chain(&e)))?;
    if args.jobs == Some(0) {
        return Err(Failure::usage("-j/--jobs must be at least 1"));
    }
    if args.max_components == Some(0) {
        return Err(Failure::usage("--max-components must be at least 1"));
    }
    Ok(MirrorOptions {
        source: source_opts.clone(),
        target: target_opts,
        platforms,
        carry: args
            .carry
            .options(match (args.no_signatures, args.signatures) {
                (true, _) => SignaturesMode::Drop,
                (false, mode) => mode.unwrap_or(SignaturesMode::Copy),
            })?,
        jobs: args.jobs.unwrap_or_else(mirror::default_jobs),
        max_components: args.max_components,
        dry_run: args.dry_run,
        results_dir: args.results_dir.clone(),
        filter: args.filter.as_ref().map(|config| FilterOptions {
            config: config.clone(),
            catalog: args.filter_catalog.clone(),
            no_dependencies: args.no_dependencies,
            registry: source_opts,
            ..FilterOptions::default()
        }),
        catalog_name: args.catalog_name.clone(),
        base: None,
        policy: args.policy.gate()?,
        check_targets: false,
        allow_missing: args.allow_missing,
        check_only: false,
        install_sketches: args.install_sketches.clone(),
        image_policy: catalog_mirror::image_policy_request(&catalog_mirror::ImagePolicyFlags {
            key: args.image_policy.image_policy_key.as_deref(),
            fulcio_ca: args.image_policy.image_policy_fulcio_ca.as_deref(),
            rekor_key: args.image_policy.image_policy_rekor_key.as_deref(),
            oidc_issuer: args.image_policy.image_policy_oidc_issuer.as_deref(),
            email: args.image_policy.image_policy_email.as_deref(),
            namespace: args.image_policy.image_policy_namespace.as_deref(),
        })?,
        since: args.since.clone(),
    })
}

/// The `--dry-run` plan, one line per image: kind, source, target, digest, size; then totals.
fn print_plan(args: &Args, outcome: &MirrorOutcome) -> Outcome {
    let plan = &outcome.plan;
    // The plan, one line per image: kind, source, target, digest, size.
    let dest = args
        .to
        .as_deref()
        .map(mirror::Destination::parse)
        .transpose()?;
    let mut failed = 0;
    for i in &plan.images {
        let target = match &dest {
            Some(d) => d
                .repository(&i.repository, args.max_components)
                .map(|r| format!("{}/{r}:{}", d.registry, i.tag))
                .unwrap_or_else(|e| format!("({e})")),
            None => match &args.to_archive {
                Some(dir) => format!(
                    "{}:{}",
                    mirror::layout(dir).display(),
                    i.digest
                        .as_deref()
                        .map(mirror::image_name)
                        .unwrap_or_default()
                ),
                None => format!("{}:{}", i.repository, i.tag),
            },
        };
        match &i.error {
            Some(e) => {
                failed += 1;
                outln!("{}\t{}\t-\t-\t-\t{e}", i.kind, i.source)?;
            }
            None => outln!(
                "{}\t{}\t{}\t{}\t{}{}",
                i.kind,
                i.source,
                target,
                i.digest.as_deref().unwrap_or("-"),
                i.size.map_or_else(|| "?".to_string(), |s| s.to_string()),
                i.mirror
                    .as_deref()
                    .map_or_else(String::new, |m| format!("\tfrom mirror {m}"))
            )?,
        }
    }
    let (count, bytes, unknown) = plan.totals();
    let count_of = |k: mirror::Kind| plan.images.iter().filter(|i| i.kind == k).count();
    outln!(
        "total: {count} images ({} catalog, {} bundles, {} related), {} ({bytes} bytes){}{}; nothing copied (--dry-run)",
        count_of(mirror::Kind::Catalog),
        count_of(mirror::Kind::Bundle),
        count_of(mirror::Kind::Related),
        human(bytes),
        if unknown > 0 {
            format!(", {unknown} sizes unknown")
        } else {
            String::new()
        },
        if failed > 0 {
            format!(", {failed} cannot be resolved")
        } else {
            String::new()
        }
    )?;
    Ok(if failed > 0 { EXIT_FINDINGS } else { EXIT_OK })
}

/// The summary of a run, where the results went, and each failure.
fn print_report(args: &Args, target: &MirrorTarget, outcome: &MirrorOutcome) -> Outcome {
    let Some(report) = &outcome.report else {
        return Ok(EXIT_OK);
    };
    let s = &report.summary;
    eprintln!(
        "mirrored {} images: {} copied, {} already present, {} failed; blobs: {} copied, {} skipped; {} uploaded in {:.1} s",
        s.images,
        s.copied,
        s.present,
        s.failed,
        s.blobs_copied,
        s.blobs_skipped,
        human(s.bytes_copied),
        s.seconds
    );
    if let MirrorTarget::Registry(_) = target {
        let ok = report.images.iter().find(|r| r.status != Status::Failed);
        let example = ok.map(|r| (r.source.as_str(), r.target.as_str()));
        if let Some(note) = crate::action::sign::mirror_note(report.settings.signatures, example) {
            eprintln!("{note}");
        }
    }
    match target {
        MirrorTarget::Registry(_) => eprintln!("results written to {}", args.results_dir.display()),
        MirrorTarget::Archive(dir) => eprintln!("archive written to {}", dir.display()),
    }
    if s.failed > 0 {
        for r in report.images.iter().filter(|r| r.status == Status::Failed) {
            eprintln!(
                "error: {} {}: {}",
                r.kind,
                r.source,
                r.reason.as_deref().unwrap_or("")
            );
        }
        return Ok(EXIT_FINDINGS);
    }
    Ok(EXIT_OK)
}
