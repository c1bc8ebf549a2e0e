//! `olmpack catalog graph DIR`: the upgrade graph of a catalog as mermaid (opm's format), DOT
//! or an SVG olmpack draws itself.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::catalog_graph::{self, GraphError, GraphOptions};
use std::path::PathBuf;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// opm's mermaid text (`opm alpha render-graph`).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// A standalone SVG picture.
    Svg,
}

/// Arguments of `olmpack catalog graph`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Catalog folder (or a single catalog file).
    pub dir: PathBuf,
    /// Only this package.
    #[arg(long, value_name = "PACKAGE")]
    pub package: Option<String>,
    /// Only channels with this name.
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "mermaid")]
    pub output: GraphFormat,
    /// Accept a catalog with no olm.* blob (an empty folder is otherwise refused as a likely
    /// wrong path).
    #[arg(long)]
    pub allow_empty: bool,
    /// Mermaid: also draw what OLM v0 does with the graph (entries a skip removes styled
    /// `skipped`, the links from them red and dashed), as opm's render-graph did before v1.57
    /// and does with this flag since.
    #[arg(long)]
    pub draw_v0_semantics: bool,
    /// Mermaid: only edges from this bundle up (opm's render-graph --minimum-edge): its package
    /// only, and references to lower versions dropped.
    #[arg(long, value_name = "BUNDLE")]
    pub minimum_edge: Option<String>,
}

/// Runs `olmpack catalog graph`.
pub fn run(args: &Args) -> Outcome {
    let opts = GraphOptions {
        package: args.package.clone(),
        channel: args.channel.clone(),
        format: match args.output {
            GraphFormat::Mermaid => catalog_graph::GraphFormat::Mermaid,
            GraphFormat::Dot => catalog_graph::GraphFormat::Dot,
            GraphFormat::Svg => catalog_graph::GraphFormat::Svg,
        },
        allow_empty: args.allow_empty,
        draw_v0_semantics: args.draw_v0_semantics,
        minimum_edge: args.minimum_edge.clone(),
    };
    let drawn = catalog_graph::draw(&args.dir, &opts).map_err(|e| match e {
        GraphError::Catalog(m) => Failure::with_code(EXIT_FINDINGS, m),
        other => Failure::usage(super::error_chain(&other)),
    })?;
    for w in drawn.warnings {
        eprintln!("{w}");
    }
    super::write_output(drawn.text.as_bytes())?;
    Ok(EXIT_OK)
}
