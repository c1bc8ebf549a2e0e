//! `catalog graph`: a catalog folder (or one catalog file) loaded, the package and channel
//! asked for checked, and its upgrade graph drawn as opm's mermaid text, DOT or an SVG.
//!
//! The source is a path, not a [`super::Location`]: the command reads local catalogs only, and
//! a path that names an image (or another kind of local source) is refused with the same hint
//! as `catalog validate` ([`super::source::not_a_catalog_message`]).

use crate::catalog::graph::{build, to_dot, to_svg};
use crate::catalog::load::{load_dir, load_file};
use crate::catalog::mermaid::{MermaidOptions, write_mermaid};
use crate::findings::Severity;
use std::path::Path;

/// The drawing asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    /// opm's mermaid text (`opm alpha render-graph`).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// A standalone SVG picture.
    Svg,
}

/// Options from the flags.
#[derive(Debug, Clone)]
pub struct GraphOptions {
    /// Only this package.
    pub package: Option<String>,
    /// Only channels with this name.
    pub channel: Option<String>,
    /// The drawing.
    pub format: GraphFormat,
    /// Accept a catalog with no olm.* blob.
    pub allow_empty: bool,
    /// Mermaid: draw what OLM v0 does with the graph.
    pub draw_v0_semantics: bool,
    /// Mermaid: only edges from this bundle up.
    pub minimum_edge: Option<String>,
}

/// A drawn graph.
#[derive(Debug)]
pub struct Drawn {
    /// The drawing, as printed.
    pub text: String,
    /// Notes from drawing it (mermaid's), for stderr.
    pub warnings: Vec<String>,
}

/// Why no graph was drawn; the command maps the two to its exit codes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// The input or the flags are wrong (a path of another kind, an unreadable folder, an
    /// empty catalog, a package or channel it does not have, flags that do not go together).
    #[error("{0}")]
    Usage(String),
    /// The catalog was read but does not load, or its graph cannot be drawn.
    #[error("{0}")]
    Catalog(String),
    /// The catalog folder could not be read.
    #[error(transparent)]
    Load(#[from] crate::catalog::load::LoadError),
}

/// Loads the catalog at `dir` and draws its graph.
pub fn draw(dir: &Path, opts: &GraphOptions) -> Result<Drawn, GraphError> {
    if let Some(message) = super::source::not_a_catalog_message(dir) {
        return Err(GraphError::Usage(message));
    }
    let loaded = if dir.is_dir() {
        load_dir(dir)?
    } else {
        load_file(dir).map_err(|e| GraphError::Usage(format!("{}: {e}", dir.display())))?
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
        return Err(GraphError::Catalog(format!(
            "the catalog does not load:\n{}",
            text.join("\n")
        )));
    }
    let cfg = &loaded.config;
    if !opts.allow_empty && !cfg.has_olm_blobs() {
        return Err(GraphError::Usage(format!(
            "{} holds no catalog: {}",
            dir.display(),
            crate::catalog::model::EMPTY_CATALOG
        )));
    }
    if let Some(p) = &opts.package
        && !cfg.packages.iter().any(|x| &x.name == p)
        && !cfg.channels.iter().any(|c| &c.package == p)
    {
        return Err(GraphError::Usage(format!(
            "package {p:?} is not in {}",
            dir.display()
        )));
    }
    if let Some(c) = &opts.channel
        && !cfg
            .channels
            .iter()
            .any(|x| &x.name == c && opts.package.as_ref().is_none_or(|p| &x.package == p))
    {
        return Err(GraphError::Usage(format!(
            "channel {c:?} is not in {}{}",
            match &opts.package {
                Some(p) => format!("package {p:?} of "),
                None => String::new(),
            },
            dir.display()
        )));
    }
    if opts.format != GraphFormat::Mermaid
        && (opts.draw_v0_semantics || opts.minimum_edge.is_some())
    {
        return Err(GraphError::Usage(
            "--draw-v0-semantics and --minimum-edge shape opm's mermaid output: use them with -o mermaid"
                .to_string(),
        ));
    }
    match opts.format {
        GraphFormat::Mermaid => {
            let mut warnings = Vec::new();
            let options = MermaidOptions {
                package: opts.package.clone(),
                channel: opts.channel.clone(),
                plain: !opts.draw_v0_semantics,
                minimum_edge: opts.minimum_edge.clone(),
            };
            let text = write_mermaid(cfg, &options, &mut warnings)
                .map_err(|e| GraphError::Catalog(e.to_string()))?;
            Ok(Drawn { text, warnings })
        }
        GraphFormat::Dot | GraphFormat::Svg => {
            let graphs = build(cfg, opts.package.as_deref(), opts.channel.as_deref())
                .map_err(|e| GraphError::Catalog(e.to_string()))?;
            if graphs.is_empty() {
                return Err(GraphError::Usage("no channel matches".to_string()));
            }
            let text = match opts.format {
                GraphFormat::Dot => to_dot(&graphs),
                _ => to_svg(&graphs),
            };
            Ok(Drawn {
                text,
                warnings: Vec::new(),
            })
        }
    }
}
