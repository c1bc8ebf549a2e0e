//! `olmpack catalog build`: flags in, one library call (`action::catalog_build`), digest out. Output contract as `bundle build`: stdout gets
//! `sha256:<digest> <size>` (the manifest, or the index of a multi-platform image), then one
//! `REF@sha256:…` line per pushed tag; messages go to stderr; `--digest-file` gets the bare
//! digest, written atomically.

use super::flags::ConnectionArgs;
use super::{Failure, Outcome, error_chain};
use crate::action::Location;
use crate::action::catalog_build::types::{DEFAULT_CACHE_DIR, LayerUse, Platform};
use crate::action::catalog_build::{
    self, CatalogBuildFlags, CatalogBuildResult, CatalogBuildRun, DEFAULT_CONFIGS_DIR,
    FilterOptions,
};
use crate::action::delivery::{self, DeliveryFlags};
use crate::action::labels::parse_label;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Where the image goes when neither `--output` nor `--push` is given.
pub const DEFAULT_OUTPUT: &str = "oci:catalog-image";

/// Arguments of `olmpack catalog build`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Without --base the image is FROM scratch: only /configs and the label
operators.operatorframework.io.index.configs.v1=/configs. That is all OLM v1 (catalogd) reads.
OLM v0 serves such an image only with a CatalogSource that sets
spec.grpcPodConfig.extractContent {catalogDir: /configs}; in its default mode OLM v0 runs the
image, which then needs --base (an opm image with /bin/opm and grpc_health_probe).

With --base the base's layers are reused unchanged (mounted or skipped when pushing to its
registry), the catalog layer is added, then a layer with opm's serve cache (as `opm generate
dockerfile` images have it: /tmp/cache, or --cache-dir; folders 0750, files 0640, owned as a RUN
step in the base would own them: the base's User and its group, or group 0 when its /etc/passwd
does not list it; root when it names none), and the config
gets ENTRYPOINT [\"/bin/opm\"] and CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"],
keeping the base's environment, user and working folder. opm (v1.26.3 and later) then checks the
cache's digest and starts on it in about a second instead of rebuilding it (seconds to tens of
seconds and hundreds of MiB for big catalogs). With --no-cache: no cache layer and CMD
[\"serve\", \"/configs\"] (opm builds its cache in a temp folder at every start; needs a writable
/tmp). `olmpack catalog cache verify IMAGE` checks a shipped cache the way opm will.
A scratch image gets a cache only with --cache (owned by root, readable by group 0).

A multi-platform base gives one image per platform (or per --platform) sharing one catalog
layer, under one index.

With --filter, SOURCE may also be a catalog image (REF, oci:PATH[:TAG], oci-archive:,
docker-archive:): its layers are kept as they are (its opm, user, labels, entrypoint and CMD),
except the ones holding the catalog (where its configs label points) or its serve cache (CMD's
--cache-dir, else /tmp/cache): those are dropped, or rewritten without them when they hold other
files too. The filtered catalog goes back where it was, with a new serve cache where the image
had one (--no-cache: none, and no --cache-dir in CMD; --cache: one even if it had none). A
multi-platform image gives a multi-platform image, each platform on its own layers.

Output: stdout gets `sha256:<digest> <size>` (manifest, or index), then `REF@sha256:<digest>`
per tag pushed with --push; messages go to stderr.
Reproducible: mtimes are SOURCE_DATE_EPOCH (or 0), owners 0, modes 0644/0755, entries sorted.
Exit codes: 0 built, 1 validation errors (nothing written), 2 usage or I/O error (nothing written).")]
pub struct Args {
    /// The catalog folder (its content goes under --configs-dir, as `ADD DIR /configs`), or
    /// with --filter a catalog image to rebuild (REF, oci:PATH[:TAG], oci-archive:FILE,
    /// docker-archive:FILE).
    #[arg(value_name = "SOURCE")]
    pub dir: PathBuf,
    /// Image reference to name the image with (repeatable); its tag names the image in OCI
    /// outputs, the whole reference goes to docker-archive RepoTags.
    #[arg(short = 't', long = "tag", value_name = "REF")]
    pub tags: Vec<String>,
    /// Base image (an opm image): REF, oci:PATH[:TAG], oci-archive:FILE[:TAG] or
    /// docker-archive:FILE. Without it: a scratch image holding only the catalog.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REF] (single platform)
    /// [default: oci:catalog-image]
    #[arg(long, value_name = "DEST")]
    pub output: Option<String>,
    /// Push the image to every `-t REF`. Without `--output`, nothing is written locally.
    #[arg(long)]
    pub push: bool,
    /// Folder of the catalog inside the image (also the label's value and serve's argument).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_CONFIGS_DIR)]
    pub configs_dir: String,
    /// Platform to build (repeatable): picks from a multi-platform base; several without a
    /// base give an index of scratch images. Default: every platform of the base, or
    /// linux/amd64.
    #[arg(long = "platform", value_name = "OS/ARCH[/VARIANT]")]
    pub platforms: Vec<String>,
    /// Extra image label KEY=VALUE (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Also write the digest (sha256:...) to this file.
    #[arg(long, value_name = "FILE")]
    pub digest_file: Option<PathBuf>,
    /// Build without validating the catalog first (no check at all, an empty catalog included).
    #[arg(long)]
    pub no_validate: bool,
    /// Accept a catalog with no olm.* blob (an empty folder is otherwise refused as a likely
    /// wrong path).
    #[arg(long)]
    pub allow_empty: bool,
    /// Ship opm's serve cache even without --base (default: only with a base).
    #[arg(long, conflicts_with = "no_cache")]
    pub cache: bool,
    /// Ship no serve cache: opm builds one in a temp folder at every start.
    #[arg(long)]
    pub no_cache: bool,
    /// Where the serve cache goes in the image (CMD gets --cache-dir=PATH).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_CACHE_DIR)]
    pub cache_dir: String,
    /// The serve cache's format: auto (what the base's opm writes: json before v1.41, pogreb
    /// from v1.41; json when its version is unknown), json (read by every opm since v1.26.3) or
    /// pogreb (opm v1.41 and later; older opm cannot read it).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = ["auto", "json", "pogreb"])]
    pub cache_format: String,
    /// The version of the opm that will serve the image (e.g. v1.26.5), when it cannot be read
    /// from the base's opm binary: the cache is written as that opm writes it (format, what
    /// its bundles hold, metas/ from v1.69).
    #[arg(long, value_name = "VERSION")]
    pub opm_version: Option<String>,
    /// Filter the catalog first with this configuration (a `FilterConfiguration` or an
    /// oc-mirror `ImageSetConfiguration`, as `catalog filter --config` reads) and build the
    /// image from what remains. SOURCE may be a folder or a catalog image.
    #[arg(long, value_name = "FILE")]
    pub filter: Option<PathBuf>,
    /// With --filter: the `mirror.operators[]` entry of an ImageSetConfiguration to use.
    #[arg(long, value_name = "REF", requires = "filter")]
    pub filter_catalog: Option<String>,
    /// With --filter: keep the selection as it is, without the bundles its bundles require
    /// (olm.package.required, olm.gvk.required), as catalog-filter and oc-mirror do.
    #[arg(long, requires = "filter")]
    pub no_dependencies: bool,
    /// The opm release that will load the catalog (e.g. 1.26): what it cannot load, though
    /// current opm can, fails validation (catalog/opm-load). Default: the release the --base
    /// tag names (quay.io/operator-framework/opm:v1.26.5 is 1.26), else the newest.
    #[arg(long, value_name = "VERSION")]
    pub opm_compat: Option<crate::action::catalog_render::OpmCompat>,
    /// Registry connection flags (for --base and --push).
    #[command(flatten, next_help_heading = "Registry options")]
    pub registry: ConnectionArgs,
    /// Sign what is pushed (cosign and/or simple signing).
    #[command(flatten)]
    pub sign: Box<super::super::sign::SignArgs>,
    /// Attest what is pushed (SLSA provenance, SPDX SBOM).
    #[command(flatten)]
    pub attest: super::super::sign::BuildAttestArgs,
    /// Signature policy checked before --base is read.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
}

/// Runs `olmpack catalog build`: flags into a [`CatalogBuildRun`], one library call, its
/// events printed as they come.
pub fn run(args: &Args) -> Outcome {
    if args.push && args.tags.is_empty() {
        return Err(Failure::usage(
            "--push needs at least one -t REF to push to",
        ));
    }
    let (request, planned) = request(args)?;
    let color = super::color_on(std::io::stderr().is_terminal());
    let mut printed: Result<(), Failure> = Ok(());
    let outcome = catalog_build::run(&request, &mut |event| {
        super::print_build_event(event, color, &mut |built| {
            printed = print_built(args, &planned, built)
        })
    });
    printed?;
    super::build_exit(
        outcome.map_err(|e| Failure::usage(error_chain(&e)))?,
        &args.dir,
    )
}

/// The run the flags ask for: keys read (before anything is built), registries and policy
/// checked, the outputs planned.
fn request(args: &Args) -> Result<(CatalogBuildRun, delivery::Planned), Failure> {
    let attest = args.attest.wanted(&args.sign, args.push)?;
    let signing = super::super::sign::build_sign_options(&args.sign, args.push)?;
    // Read once (`--password-stdin` reads stdin).
    let registry_opts = args.registry.options(
        Platform::default(),
        // The IMAGE source too: `catalog build REGISTRY/IMAGE --creds …` reads it.
        &std::iter::once(args.dir.to_str().unwrap_or_default())
            .chain(
                args.tags
                    .iter()
                    .chain(&args.output)
                    .chain(&args.base)
                    .map(String::as_str),
            )
            .collect::<Vec<_>>(),
    )?;
    // Each image is read at the digest the policy verified (when one did).
    let (base, base_verified) = match &args.base {
        Some(base) => {
            let location = Location::parse(base)?;
            let checked = args.policy.check(&location, &registry_opts)?;
            let verified = checked.verified_digest().map(str::to_string);
            (Some(location), verified)
        }
        None => (None, None),
    };
    let image = match image_source(&args.dir, args.filter.is_some())? {
        Some(location) => Some(args.policy.check(&location, &registry_opts)?),
        None => None,
    };
    let planned = delivery::plan(&DeliveryFlags {
        output: args.output.as_deref(),
        default_output: DEFAULT_OUTPUT,
        tags: &args.tags,
        push: args.push,
        mount_from: None,
        digest_file: args.digest_file.as_deref(),
    })?;
    let options = catalog_build::build_options(&CatalogBuildFlags {
        platforms: &args.platforms,
        labels: &args.labels,
        configs_dir: &args.configs_dir,
        from_image: image.is_some(),
        base,
        base_verified,
        cache: args.cache,
        no_cache: args.no_cache,
        cache_dir: &args.cache_dir,
        cache_format: &args.cache_format,
        opm_version: args.opm_version.as_deref(),
        registry: registry_opts,
        docker_archive: planned.is_docker_archive(),
    })?;
    let run = CatalogBuildRun {
        dir: args.dir.clone(),
        options,
        validate: !args.no_validate,
        allow_empty: args.allow_empty,
        filter: args.filter.as_ref().map(|config| FilterOptions {
            config: config.clone(),
            catalog: args.filter_catalog.clone(),
            no_dependencies: args.no_dependencies,
            ..Default::default()
        }),
        image,
        delivery: planned.delivery.clone(),
        opm_compat: args.opm_compat,
        sign: signing.map(std::sync::Arc::new),
        attest,
    };
    Ok((run, planned))
}

/// The catalog image a `catalog build` SOURCE names, when it names one: a string that is not
/// an existing path and reads as an image (a registry reference, `oci:`, an archive). With
/// `filter` a string that names nothing is an error naming it (a mistyped folder is never sent
/// to a registry); without, the folder build reports it as before.
fn image_source(
    dir: &std::path::Path,
    filter: bool,
) -> Result<Option<Location>, crate::location::LocationError> {
    if std::fs::symlink_metadata(dir).is_ok() {
        return Ok(None);
    }
    let Some(text) = dir.to_str() else {
        return Ok(None);
    };
    match Location::parse(text) {
        Ok(l) if !matches!(l.place(), crate::location::Place::Path(_)) => Ok(Some(l)),
        Ok(_) => Ok(None),
        Err(e) if filter => Err(e),
        Err(_) => Ok(None),
    }
}

/// What was built, where it went, and the digest lines on stdout (before any signing, so a
/// signing failure still leaves the pushed references printed).
fn print_built(
    args: &Args,
    planned: &delivery::Planned,
    built: &CatalogBuildResult,
) -> Result<(), Failure> {
    let (dest, names) = (&planned.dest, &planned.names);
    if let Some(dest) = dest {
        let content = match (built.layers, built.platforms) {
            (_, Some(n)) => format!("{n} platforms"),
            (Some(n), None) => format!("{n} layer{}", if n == 1 { "" } else { "s" }),
            (None, None) => String::new(),
        };
        eprintln!(
            "wrote {dest} ({content}, catalog layer {}) as {}",
            built.configs_layer,
            if names.is_empty() {
                "(untagged)".to_string()
            } else {
                names.join(", ")
            },
        );
    }
    print_source_layers(args, built);
    if let Some(c) = &built.serve_cache {
        eprintln!(
            "serve cache: {} files, {} bytes, digest {} (opm checks it at start)",
            c.files, c.bytes, c.digest
        );
        if let Some(choice) = &built.cache_choice {
            eprintln!(
                "serve cache for opm {} ({}): {}",
                choice
                    .profile
                    .opm
                    .map_or("of unknown version".to_string(), |v| v.to_string()),
                choice.known_from,
                choice.profile.describe()
            );
        }
        let (dm, fm) = built
            .cache_choice
            .as_ref()
            .map_or((0o750, 0o640), |c| c.profile.format.modes());
        for o in &built.cache_owners {
            eprintln!(
                "serve cache owner: {}:{}, folders {dm:04o}, files {fm:04o} ({})",
                o.uid, o.gid, o.reason
            );
        }
    }
    outln!("{} {}", built.digest, built.size)?;
    for r in &built.pushed {
        outln!("{r}")?;
    }
    Ok(())
}

/// What became of each layer of a catalog image source.
fn print_source_layers(args: &Args, built: &CatalogBuildResult) {
    if built.source_layers.is_empty() {
        return;
    }
    let kept = built
        .source_layers
        .iter()
        .filter(|l| l.action == LayerUse::Keep)
        .count();
    eprintln!(
        "source {}: {kept} of its layers kept as they are",
        args.dir.display()
    );
    for l in &built.source_layers {
        match (&l.action, &l.rewritten) {
            (LayerUse::Drop, _) => eprintln!(
                "source layer {} dropped (only the catalog or serve cache)",
                l.digest
            ),
            (LayerUse::Rewrite, Some(new)) => eprintln!(
                "source layer {} rewritten without the catalog and serve cache: {new}",
                l.digest
            ),
            _ => {}
        }
    }
}
