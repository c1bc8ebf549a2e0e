//! `olmpack catalog template FILE`: opm's `alpha render-template`, byte for byte, with bundle
//! references rendered in parallel and optionally read from local sources (`--bundle-map`).

use super::flags::RegistryArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::bundle_source::render_source;
use crate::catalog::mermaid::{MermaidOptions, write_mermaid};
use crate::catalog::model::Bundle;
use crate::catalog::template::bundle_map::{BundleMap, MappedRenderer};
use crate::catalog::template::{
    BundleRenderError, BundleRenderer, OpmCompat, TemplateOptions, TemplateType,
    render_template_checked,
};
use crate::catalog::write::{Format, write_config};
use crate::location::Location;
use std::io::{Read, Write};
use std::path::PathBuf;

/// Template type on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TypeArg {
    /// `olm.template.basic`.
    Basic,
    /// `olm.semver`.
    Semver,
    /// `olm.template.substitutes`.
    Substitutes,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputArg {
    /// opm's JSON (the default, as in opm).
    Json,
    /// opm's YAML (what the public pipelines check in).
    Yaml,
    /// The upgrade graph as opm's mermaid text.
    Mermaid,
}

/// Arguments of `olmpack catalog template`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Template file, or - for standard input.
    pub file: String,
    /// Template type; detected from the first document's schema when absent.
    #[arg(long = "type", value_enum)]
    pub template_type: Option<TypeArg>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "json")]
    pub output: OutputArg,
    /// Migration applied to every rendered bundle: none or bundle-object-to-csv-metadata
    /// (what the public pipelines use for OpenShift 4.17 and later).
    #[arg(long, value_name = "LEVEL")]
    pub migrate_level: Option<String>,
    /// File of IMAGE-REF<TAB>SOURCE lines: the catalog keeps IMAGE-REF, the content is read from
    /// SOURCE (a bundle folder, oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE).
    #[arg(long, value_name = "FILE")]
    pub bundle_map: Option<PathBuf>,
    /// Bundle references rendered at once (default: the number of CPUs).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Reproduce the output of this opm release (e.g. 1.46, which most pipelines pin); default:
    /// the newest behaviour.
    #[arg(long, value_name = "VERSION")]
    pub opm_compat: Option<OpmCompat>,
    /// Never contact a registry: every reference must be in the bundle map or be a local source.
    #[arg(long)]
    pub offline: bool,
    /// Registry options (for references that are not in the bundle map).
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Runs `olmpack catalog template`.
pub fn run(args: &Args) -> Outcome {
    let text = read_input(&args.file)?;
    let compat = args.opm_compat.unwrap_or_default();
    let source_options = super::flags::source_options(
        args.migrate_level.as_deref(),
        args.opm_compat,
        &args.registry,
    )?;
    let map = match &args.bundle_map {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
            BundleMap::parse(&text, path)?
        }
        None => BundleMap::default(),
    };
    let local = |source: &Location, image_ref: &str| -> Result<Vec<Bundle>, BundleRenderError> {
        render_source(source, image_ref, &source_options).map(|b| vec![b.bundle])
    };
    let remote = |image_ref: &str| -> Result<Vec<Bundle>, BundleRenderError> {
        let location = Location::parse(image_ref).map_err(BundleRenderError::new)?;
        render_source(&location, image_ref, &source_options).map(|b| vec![b.bundle])
    };
    let renderer = MappedRenderer {
        map: &map,
        local: &local,
        remote: (!args.offline).then_some(&remote as &dyn BundleRenderer),
    };
    let mut options = TemplateOptions {
        template_type: args.template_type.map(|t| match t {
            TypeArg::Basic => TemplateType::Basic,
            TypeArg::Semver => TemplateType::Semver,
            TypeArg::Substitutes => TemplateType::Substitutes,
        }),
        compat,
        ..TemplateOptions::default()
    };
    if let Some(j) = args.jobs {
        options.jobs = j.max(1);
    }
    let check = crate::validate::catalog::first_model_error;
    let (cfg, warnings) = render_template_checked(&args.file, &text, &options, &renderer, &check)
        .map_err(|e| Failure::with_code(EXIT_FINDINGS, e.to_string()))?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let mut out = Vec::new();
    match args.output {
        OutputArg::Json => write_config(&mut out, &cfg, Format::Json)?,
        OutputArg::Yaml => write_config(&mut out, &cfg, Format::Yaml)?,
        OutputArg::Mermaid => {
            let mut warnings = Vec::new();
            let text = write_mermaid(&cfg, &MermaidOptions::default(), &mut warnings)
                .map_err(|e| Failure::with_code(EXIT_FINDINGS, format!("writing output: {e}")))?;
            for w in warnings {
                eprintln!("{w}");
            }
            out = text.into_bytes();
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::usage(format!("cannot write the output: {e}")))?;
    Ok(EXIT_OK)
}

/// Reads a file, or standard input for `-`.
pub fn read_input(file: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
    } else {
        bytes = std::fs::read(file).map_err(|e| Failure::usage(format!("{file}: {e}")))?;
    }
    String::from_utf8(bytes).map_err(|_| Failure::usage(format!("{file}: not UTF-8 text")))
}
