//! `olmpack catalog render SOURCE...`: bundle folders, catalog folders and images to opm's exact
//! `render` output on stdout, streamed once every source has rendered (bad input never leaves a
//! partial output).

use super::flags::CatalogFormat as OutputFormat;
use super::{EXIT_OK, Failure, Outcome};
use crate::action::catalog_render::{BundleImage, RenderError, RenderOptions, prepare_render};
use crate::action::catalog_render::{CompatParseError, MigrateLevel, OpmCompat};

/// Arguments of `olmpack catalog render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Bundle folders (holding manifests/ and metadata/), catalog folders, or images (a registry
    /// reference, oci:PATH[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE). A
    /// package-manifest package (<package>.package.yaml + version folders) renders as opm's
    /// initializer + `opm render index.db` do.
    #[arg(value_name = "SOURCE", required = true)]
    pub sources: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "json")]
    pub output: OutputFormat,
    /// Image reference written into the bundle rendered from a folder or a local image (oci:,
    /// oci-archive:, docker-archive:), or into the one bundle without an image of a
    /// package-manifest folder or sqlite database; registry images keep their own. One bundle
    /// only: use --image-template for several.
    #[arg(long, value_name = "REF", conflicts_with = "image_template")]
    pub image: Option<String>,
    /// Image reference template for bundle folders, and for the bundles without an image of
    /// package-manifest folders and sqlite databases, with {{.Package}}, {{.Name}} and
    /// {{.Version}} (opm's --alpha-image-ref-template).
    #[arg(long, value_name = "TEMPLATE", alias = "alpha-image-ref-template")]
    pub image_template: Option<String>,
    /// Migration applied to every input: none, or bundle-object-to-csv-metadata (the form of
    /// OpenShift 4.17 and later catalogs).
    #[arg(long, value_name = "LEVEL", default_value = "none")]
    pub migrate_level: String,
    /// Reproduce the output of this opm release (e.g. 1.26, 1.46); default: the newest.
    #[arg(long, value_name = "VERSION")]
    pub opm_compat: Option<String>,
    /// Accept a catalog with no olm.* blob (an empty folder is otherwise refused as a likely
    /// wrong path).
    #[arg(long)]
    pub allow_empty: bool,
    /// Registry, mirror and policy options; the policy is
    /// checked before each image source is read.
    #[command(flatten)]
    pub read: super::super::sign::ImageReadArgs,
}

/// Runs `catalog render`.
pub fn run(args: &Args) -> Outcome {
    let migrate: MigrateLevel = args.migrate_level.parse().map_err(Failure::usage)?;
    let compat: OpmCompat = match &args.opm_compat {
        Some(v) => v
            .parse()
            .map_err(|e: CompatParseError| Failure::usage(e.to_string()))?,
        None => OpmCompat::default(),
    };
    let image = match (&args.image, &args.image_template) {
        (Some(r), _) => BundleImage::Fixed(r.clone()),
        (None, Some(t)) => BundleImage::Template(t.clone()),
        (None, None) => BundleImage::Empty,
    };
    let sources = parse_sources(&args.sources).map_err(|e| Failure::usage(e.to_string()))?;
    let registry = if sources.iter().any(|s| !s.is_local()) {
        args.read
            .registry
            .options(&args.sources.iter().map(String::as_str).collect::<Vec<_>>())?
    } else {
        Default::default()
    };
    let registry = args.read.mirrors.apply(registry)?;
    let sources = sources
        .iter()
        .map(|source| args.read.policy.check(source, &registry))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = RenderOptions {
        format: args.output.into(),
        image,
        migrate,
        compat,
        registry,
        compat_given: args.opm_compat.is_some(),
        allow_empty: args.allow_empty,
    };
    let prepared = prepare_render(&sources, &opts).map_err(|e| Failure::usage(e.to_string()))?;
    for w in &prepared.warnings {
        eprintln!("warning: {w}");
    }
    prepared
        .write_to(&mut std::io::stdout())
        .map_err(|e| Failure::usage(format!("cannot write to standard output: {e}")))?;
    Ok(EXIT_OK)
}

/// Every source string classified ([`crate::action::Location::parse`]), the first that names
/// nothing readable refused before anything is read.
fn parse_sources(sources: &[String]) -> Result<Vec<crate::action::Location>, RenderError> {
    sources
        .iter()
        .map(|s| {
            crate::action::Location::parse(s).map_err(|e| RenderError::Source {
                source_ref: s.clone(),
                message: e.to_string(),
            })
        })
        .collect()
}
