//! `catalog template` and `catalog convert-template`: a template rendered as opm's `alpha
//! render-template` renders it, with its bundle references read through a bundle map
//! (`--bundle-map`: local sources under published names) or from their registry, each bundle
//! rendered by [`super::bundle_source::render_source`]; and a catalog file turned into a
//! template. The renderers are wired here so the command only reads flags and prints.

use super::bundle_source::{SourceOptions, render_source};
use crate::catalog::mermaid::{MermaidOptions, write_mermaid};
use crate::catalog::model::{Bundle, DeclarativeConfig};
use crate::catalog::template::bundle_map::{BundleMap, MappedRenderer};
use crate::catalog::template::{
    BundleRenderError, BundleRenderer, TemplateOptions, render_template_checked,
};
use crate::catalog::write::{Format, write_config};
use crate::location::Location;
use std::io::Read;
use std::path::Path;

pub use crate::catalog::template::convert::ConvertType;
pub use crate::catalog::template::{OpmCompat, TemplateType};

/// Why a template could not be rendered or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The input, the bundle map or the output could not be read or written (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The template (or a bundle it names) is wrong (exit 1).
    #[error("{0}")]
    Invalid(String),
    /// The bundle map (`--bundle-map`) does not parse (exit 2).
    #[error(transparent)]
    BundleMap(#[from] crate::catalog::template::bundle_map::BundleMapError),
    /// The rendered catalog could not be encoded (exit 2).
    #[error(transparent)]
    Write(#[from] crate::catalog::write::WriteError),
}

/// What `catalog template` was asked for.
#[derive(Debug, Clone)]
pub struct TemplateRequest<'a> {
    /// `--type`; detected from the first document's schema when absent.
    pub template_type: Option<TemplateType>,
    /// `--opm-compat`.
    pub compat: OpmCompat,
    /// `-j`: bundle references rendered at once.
    pub jobs: Option<usize>,
    /// `--offline`: never contact a registry.
    pub offline: bool,
    /// `--bundle-map FILE`.
    pub bundle_map: Option<&'a Path>,
    /// How each bundle is rendered.
    pub source: SourceOptions,
    /// `--policy`: every bundle image is checked first and read at the digest verified (bundle
    /// folders are not images and pass).
    pub policy: Option<super::step::policy::PolicyGate>,
}

/// The output form of `catalog template`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// opm's JSON.
    Json,
    /// opm's YAML.
    Yaml,
    /// The upgrade graph as opm's mermaid text.
    Mermaid,
}

/// Renders the template `text` (read from `file`, named so in messages); the warnings are for
/// stderr.
pub fn render(
    file: &str,
    text: &str,
    request: &TemplateRequest<'_>,
) -> Result<(DeclarativeConfig, Vec<String>), TemplateError> {
    let map = match request.bundle_map {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| TemplateError::Usage(format!("{}: {e}", path.display())))?;
            BundleMap::parse(&text, path)?
        }
        None => BundleMap::default(),
    };
    let source_options = &request.source;
    let admit = |source: &Location| -> Result<Location, BundleRenderError> {
        match &request.policy {
            Some(gate) => gate
                .admit(source, &source_options.registry)
                .map_err(BundleRenderError::new),
            None => Ok(source.clone()),
        }
    };
    let local = |source: &Location, image_ref: &str| -> Result<Vec<Bundle>, BundleRenderError> {
        render_source(&admit(source)?, image_ref, source_options).map(|b| vec![b.bundle])
    };
    let remote = |image_ref: &str| -> Result<Vec<Bundle>, BundleRenderError> {
        let location = Location::template_bundle(image_ref).map_err(BundleRenderError::new)?;
        render_source(&admit(&location)?, image_ref, source_options).map(|b| vec![b.bundle])
    };
    let renderer = MappedRenderer {
        map: &map,
        local: &local,
        remote: (!request.offline).then_some(&remote as &dyn BundleRenderer),
    };
    let mut options = TemplateOptions {
        template_type: request.template_type,
        compat: request.compat,
        ..TemplateOptions::default()
    };
    if let Some(j) = request.jobs {
        options.jobs = j.max(1);
    }
    let check = crate::validate::catalog::first_model_error;
    render_template_checked(file, text, &options, &renderer, &check)
        .map_err(|e| TemplateError::Invalid(e.to_string()))
}

/// The rendered catalog in `output` form, and the notes the mermaid writer gives (printed as
/// they are).
pub fn write(
    cfg: &DeclarativeConfig,
    output: Output,
) -> Result<(Vec<u8>, Vec<String>), TemplateError> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let usage = TemplateError::Write;
    match output {
        Output::Json => write_config(&mut out, cfg, Format::Json).map_err(usage)?,
        Output::Yaml => write_config(&mut out, cfg, Format::Yaml).map_err(usage)?,
        Output::Mermaid => {
            let text = write_mermaid(cfg, &MermaidOptions::default(), &mut warnings)
                .map_err(|e| TemplateError::Invalid(format!("writing output: {e}")))?;
            out = text.into_bytes();
        }
    }
    Ok((out, warnings))
}

/// `catalog convert-template`: one catalog file (`text`, read from `file`) as a basic or
/// substitutes template, in opm's JSON or (with `yaml`) YAML.
pub fn convert(
    file: &str,
    text: &str,
    to: ConvertType,
    yaml: bool,
) -> Result<Vec<u8>, TemplateError> {
    crate::catalog::template::convert::convert(text.as_bytes(), to, yaml)
        .map_err(|e| TemplateError::Usage(format!("{file}: {e}")))
}

/// Reads a file, or standard input for `-`, as UTF-8 text.
pub fn read_input(file: &str) -> Result<String, TemplateError> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| TemplateError::Usage(format!("cannot read standard input: {e}")))?;
    } else {
        bytes = std::fs::read(file).map_err(|e| TemplateError::Usage(format!("{file}: {e}")))?;
    }
    String::from_utf8(bytes).map_err(|_| TemplateError::Usage(format!("{file}: not UTF-8 text")))
}
