//! `olmpack catalog render SOURCE...`: bundle folders, catalog folders and images to opm's exact
//! `render` output on stdout, streamed once every source has rendered (bad input never leaves a
//! partial output).

use super::image_source::RegistryArgs;
use super::{EXIT_OK, Failure, Outcome};
use crate::action::catalog_render::{BundleImage, RenderOptions, prepare_render};
use crate::catalog::render::{MigrateLevel, OpmCompat};
use crate::catalog::write::Format;

/// `-o json|yaml` for catalog output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// opm's JSON: 4-space indent, one blob after another.
    Json,
    /// opm's YAML: `---` before each blob, go-yaml v2 style.
    Yaml,
}

impl From<OutputFormat> for Format {
    fn from(f: OutputFormat) -> Format {
        match f {
            OutputFormat::Json => Format::Json,
            OutputFormat::Yaml => Format::Yaml,
        }
    }
}

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
    /// oci-archive:, docker-archive:); registry images keep their own. One bundle only: use
    /// --image-template for several.
    #[arg(long, value_name = "REF", conflicts_with = "image_template")]
    pub image: Option<String>,
    /// Image reference template for bundle folders, with {{.Package}}, {{.Name}} and
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
    #[command(flatten)]
    /// Registry access for image sources.
    pub registry: RegistryArgs,
}

/// Runs `catalog render`.
pub fn run(args: &Args) -> Outcome {
    let migrate: MigrateLevel = args.migrate_level.parse().map_err(Failure::usage)?;
    let compat: OpmCompat = match &args.opm_compat {
        Some(v) => v
            .parse()
            .map_err(|e: crate::catalog::CompatParseError| Failure::usage(e.to_string()))?,
        None => OpmCompat::default(),
    };
    let image = match (&args.image, &args.image_template) {
        (Some(r), _) => BundleImage::Fixed(r.clone()),
        (None, Some(t)) => BundleImage::Template(t.clone()),
        (None, None) => BundleImage::Empty,
    };
    let needs_registry = args.sources.iter().any(|s| std::fs::metadata(s).is_err());
    let registry = if needs_registry {
        args.registry.options()?
    } else {
        Default::default()
    };
    let opts = RenderOptions {
        format: args.output.into(),
        image,
        migrate,
        compat,
        registry,
    };
    let prepared =
        prepare_render(&args.sources, &opts).map_err(|e| Failure::usage(e.to_string()))?;
    for w in &prepared.warnings {
        eprintln!("warning: {w}");
    }
    prepared
        .write_to(&mut std::io::stdout())
        .map_err(|e| Failure::usage(format!("cannot write to standard output: {e}")))?;
    Ok(EXIT_OK)
}
