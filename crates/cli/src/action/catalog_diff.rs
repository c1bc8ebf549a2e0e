//! `catalog diff OLD NEW`: both sources read as `catalog render` reads them (folders, images,
//! layouts, archives), compared ([`crate::catalog::diff`]), and the report rendered.

use crate::action::catalog_render::{RenderError, RenderOptions, load_source};
use crate::catalog::diff::{CatalogDiff, diff, render_json, render_markdown, render_text};
use crate::location::Location;
use crate::transport::RegistryOptions;

/// How the report is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DiffFormat {
    /// For a terminal.
    #[default]
    Text,
    /// Stable keys, for tools.
    Json,
    /// A pull-request comment.
    Markdown,
}

/// Which changes fail the run (exit 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FailOn {
    /// None: the report is informative (exit 0).
    #[default]
    Nothing,
    /// Upgrade-path regressions.
    Regression,
    /// Any change.
    Any,
}

/// The comparison, its rendering, and whether it fails the run.
#[derive(Debug)]
pub struct DiffOutput {
    /// The comparison.
    pub diff: CatalogDiff,
    /// The rendered report.
    pub text: String,
    /// Whether `--fail-on` names something that happened.
    pub failed: bool,
    /// Notes from reading the sources.
    pub warnings: Vec<String>,
}

/// Reads both sources and compares them.
pub fn diff_catalogs(
    old: &Location,
    new: &Location,
    format: DiffFormat,
    fail_on: FailOn,
    registry: &RegistryOptions,
) -> Result<DiffOutput, RenderError> {
    let opts = RenderOptions {
        registry: registry.clone(),
        ..Default::default()
    };
    let (o, mut warnings) = load_source(old, &opts)?;
    let (n, w) = load_source(new, &opts)?;
    warnings.extend(w);
    let d = diff(&o, &n);
    let text = match format {
        DiffFormat::Text => render_text(&d),
        DiffFormat::Json => render_json(&d),
        DiffFormat::Markdown => render_markdown(&d),
    };
    let failed = match fail_on {
        FailOn::Nothing => false,
        FailOn::Regression => d.has_regressions(),
        FailOn::Any => d.has_changes(),
    };
    Ok(DiffOutput {
        diff: d,
        text,
        failed,
        warnings,
    })
}
