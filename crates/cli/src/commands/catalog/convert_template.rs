//! `olmpack catalog convert-template basic|substitutes [FILE|-]`: opm's
//! `alpha convert-template`, a catalog file turned into a template.

use super::{EXIT_OK, Failure, Outcome};
use crate::action::catalog_template::{ConvertType, convert, read_input};

/// Template type to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TypeArg {
    /// `olm.template.basic` (bundles become `{schema, image}`).
    Basic,
    /// `olm.template.substitutes` (blobs kept, no substitutions).
    Substitutes,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputArg {
    /// opm's indented JSON (the default, as in opm).
    Json,
    /// opm's YAML, after `---`.
    Yaml,
}

/// Arguments of `olmpack catalog convert-template`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The template to produce.
    #[arg(value_enum)]
    pub template_type: TypeArg,
    /// One catalog file (JSON stream or YAML), or - (the default) for standard input.
    #[arg(default_value = "-")]
    pub file: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "json")]
    pub output: OutputArg,
}

/// Runs `olmpack catalog convert-template`.
pub fn run(args: &Args) -> Outcome {
    let text = read_input(&args.file).map_err(|e| Failure::usage(e.to_string()))?;
    let to = match args.template_type {
        TypeArg::Basic => ConvertType::Basic,
        TypeArg::Substitutes => ConvertType::Substitutes,
    };
    let out = convert(&args.file, &text, to, args.output == OutputArg::Yaml)
        .map_err(|e| Failure::usage(e.to_string()))?;
    super::write_output(&out)?;
    Ok(EXIT_OK)
}
