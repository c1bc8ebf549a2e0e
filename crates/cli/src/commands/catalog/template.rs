//! `olmpack catalog template FILE`: opm's `alpha render-template`, byte for byte, with bundle
//! references rendered in parallel and optionally read from local sources (`--bundle-map`).

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome, error_chain};
use crate::action::catalog_template::{
    self, OpmCompat, Output, TemplateError, TemplateRequest, TemplateType, read_input,
};
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
    /// Registry, mirror and policy options; the policy is
    /// checked before each bundle image is read (a bundle map's images too).
    #[command(flatten)]
    pub read: super::super::sign::ImageReadArgs,
}

/// Runs `olmpack catalog template`.
pub fn run(args: &Args) -> Outcome {
    let text = read_input(&args.file).map_err(failure)?;
    let mut source = super::flags::source_options(
        args.migrate_level.as_deref(),
        args.opm_compat,
        &args.read.registry,
        // A template names its images in the file: --creds must name its registry.
        &[],
    )?;
    source.registry = args.read.mirrors.apply(source.registry)?;
    let request = TemplateRequest {
        template_type: args.template_type.map(|t| match t {
            TypeArg::Basic => TemplateType::Basic,
            TypeArg::Semver => TemplateType::Semver,
            TypeArg::Substitutes => TemplateType::Substitutes,
        }),
        compat: args.opm_compat.unwrap_or_default(),
        jobs: args.jobs,
        offline: args.offline,
        bundle_map: args.bundle_map.as_deref(),
        source,
        policy: args.read.policy.gate()?,
    };
    let (cfg, warnings) = catalog_template::render(&args.file, &text, &request).map_err(failure)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let output = match args.output {
        OutputArg::Json => Output::Json,
        OutputArg::Yaml => Output::Yaml,
        OutputArg::Mermaid => Output::Mermaid,
    };
    let (out, notes) = catalog_template::write(&cfg, output).map_err(failure)?;
    for w in notes {
        eprintln!("{w}");
    }
    super::write_output(&out)?;
    Ok(EXIT_OK)
}

/// A template that is wrong exits 1; anything that could not be read or written, 2.
fn failure(e: TemplateError) -> Failure {
    match e {
        TemplateError::Invalid(m) => Failure::with_code(EXIT_FINDINGS, m),
        other => Failure::usage(error_chain(&other)),
    }
}
