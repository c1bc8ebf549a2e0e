//! `olmpack catalog generate-dockerfile`: the Dockerfile `opm generate dockerfile` writes, for
//! builds that still use docker or buildah (`action::catalog_dockerfile` writes it).

use super::{EXIT_OK, Outcome};
use crate::action::catalog_dockerfile::{self, DEFAULT_OPM_IMAGE};
use std::path::PathBuf;

/// Arguments of `olmpack catalog generate-dockerfile`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Writes <parent>/<DIR name>.Dockerfile exactly as `opm generate dockerfile` (opm v1.44 and later)
does, for builds that still use docker or buildah; fails if that file exists. `catalog build`
builds the image without a daemon.

DIR is cleaned lexically as opm does (a symlinked folder keeps its link's name: `catalog ->
real` gives catalog.Dockerfile with `ADD catalog`). One difference: when DIR cleans to `.` or
`..`, opm writes `..Dockerfile` / `...Dockerfile` with `ADD .` / `ADD ..`; olmpack uses the
real folder's name and parent instead (`.` inside /x/catalog gives /x/catalog.Dockerfile with
`ADD catalog`).")]
pub struct Args {
    /// The catalog folder.
    pub dir: PathBuf,
    /// Image for the final stage (`scratch` for a binary-less image).
    #[arg(short = 'i', long, value_name = "REF", default_value = DEFAULT_OPM_IMAGE)]
    pub base_image: String,
    /// Image that runs opm to pre-populate the serve cache.
    #[arg(short = 'b', long, value_name = "REF", default_value = DEFAULT_OPM_IMAGE)]
    pub builder_image: String,
    /// Extra label KEY=VALUE (repeatable; the last value of a key wins).
    #[arg(short = 'l', long = "extra-labels", value_name = "KEY=VALUE")]
    pub extra_labels: Vec<String>,
}

/// Runs `olmpack catalog generate-dockerfile`.
pub fn run(args: &Args) -> Outcome {
    let labels = catalog_dockerfile::parse_dockerfile_labels(&args.extra_labels)?;
    let path = catalog_dockerfile::generate_dockerfile(
        &args.dir,
        &args.base_image,
        &args.builder_image,
        &labels,
    )?;
    eprintln!("wrote {}", path.display());
    Ok(EXIT_OK)
}
