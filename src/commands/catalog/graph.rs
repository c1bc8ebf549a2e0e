//! `olmpack catalog graph DIR`: the upgrade graph of a catalog as mermaid (opm's format), DOT
//! or an SVG olmpack draws itself.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::catalog::graph::{build, to_dot, to_svg};
use crate::catalog::load::{load_dir, load_file};
use crate::catalog::mermaid::{MermaidOptions, write_mermaid};
use crate::findings::Severity;
use std::io::Write;
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
    if let Some(message) = crate::validate::catalog::not_a_catalog(&args.dir) {
        return Err(Failure::usage(message));
    }
    let loaded = if args.dir.is_dir() {
        load_dir(&args.dir)?
    } else {
        load_file(&args.dir).map_err(|e| Failure::usage(format!("{}: {e}", args.dir.display())))?
    };
    let errors: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !errors.is_empty() {
        let text: Vec<String> = errors
            .iter()
            .map(|d| {
                format!(
                    "{}:{}: {}",
                    d.file.as_deref().unwrap_or("?"),
                    d.line.unwrap_or(0),
                    d.message
                )
            })
            .collect();
        return Err(Failure::with_code(
            EXIT_FINDINGS,
            format!("the catalog does not load:\n{}", text.join("\n")),
        ));
    }
    let cfg = &loaded.config;
    if !args.allow_empty && !cfg.has_olm_blobs() {
        return Err(Failure::usage(format!(
            "{} holds no catalog: {}",
            args.dir.display(),
            crate::catalog::model::EMPTY_CATALOG
        )));
    }
    if let Some(p) = &args.package
        && !cfg.packages.iter().any(|x| &x.name == p)
        && !cfg.channels.iter().any(|c| &c.package == p)
    {
        return Err(Failure::usage(format!(
            "package {p:?} is not in {}",
            args.dir.display()
        )));
    }
    if let Some(c) = &args.channel
        && !cfg
            .channels
            .iter()
            .any(|x| &x.name == c && args.package.as_ref().is_none_or(|p| &x.package == p))
    {
        return Err(Failure::usage(format!(
            "channel {c:?} is not in {}{}",
            match &args.package {
                Some(p) => format!("package {p:?} of "),
                None => String::new(),
            },
            args.dir.display()
        )));
    }
    if args.output != GraphFormat::Mermaid
        && (args.draw_v0_semantics || args.minimum_edge.is_some())
    {
        return Err(Failure::usage(
            "--draw-v0-semantics and --minimum-edge shape opm's mermaid output: use them with -o mermaid",
        ));
    }
    let out = match args.output {
        GraphFormat::Mermaid => {
            let mut warnings = Vec::new();
            let options = MermaidOptions {
                package: args.package.clone(),
                channel: args.channel.clone(),
                plain: !args.draw_v0_semantics,
                minimum_edge: args.minimum_edge.clone(),
            };
            let text = write_mermaid(cfg, &options, &mut warnings)
                .map_err(|e| Failure::with_code(EXIT_FINDINGS, e.to_string()))?;
            for w in warnings {
                eprintln!("{w}");
            }
            text
        }
        GraphFormat::Dot | GraphFormat::Svg => {
            let graphs = build(cfg, args.package.as_deref(), args.channel.as_deref())
                .map_err(|e| Failure::with_code(EXIT_FINDINGS, e.to_string()))?;
            if graphs.is_empty() {
                return Err(Failure::usage("no channel matches".to_string()));
            }
            match args.output {
                GraphFormat::Dot => to_dot(&graphs),
                _ => to_svg(&graphs),
            }
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::usage(format!("cannot write the output: {e}")))?;
    Ok(EXIT_OK)
}
