//! Catalog templates: opm's `alpha render-template` for `olm.template.basic`, `olm.semver` and
//! `olm.template.substitutes`; [`substitutes_add`] adds one substitution to a template's text (`bundle republish`).
//!
//! Why: operator authors keep a template per package and let a tool expand it into the FBC that
//! ships; the public pipelines run `opm alpha render-template … -o yaml` once per OpenShift
//! version and check the bytes in. olmpack reproduces opm's output exactly (including the
//! behaviour of the opm release a pipeline pins, see [`OpmCompat`]) and opm's error texts, adds the
//! file and line to every error, renders bundle references in parallel (each image once), and can
//! read a published image's content from a local folder or image (`--bundle-map`) so CI needs no
//! registry round trip.
//!
//! The template code never pulls or reads bundles itself: it asks a [`BundleRenderer`], so the
//! same logic serves registries, local images, bundle folders and tests.

pub mod basic;
pub mod bundle_map;
pub mod convert;
pub mod semver;
pub mod substitutes;
pub mod substitutes_add;

pub use crate::catalog::compat::{CompatParseError, OpmCompat};

use crate::catalog::model::{Bundle, DeclarativeConfig};
use crate::yaml::{self, Node, Value};
use std::fmt;

/// The template kinds olmpack renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateType {
    /// `olm.template.basic` (and, for opm before v1.44, the plain FBC stream).
    Basic,
    /// `olm.semver`.
    Semver,
    /// `olm.template.substitutes` (opm v1.62+).
    Substitutes,
}

impl TemplateType {
    /// The `schema` value that selects this type.
    pub fn schema(self) -> &'static str {
        match self {
            TemplateType::Basic => basic::SCHEMA,
            TemplateType::Semver => semver::SCHEMA,
            TemplateType::Substitutes => substitutes::SCHEMA,
        }
    }

    /// The type name used on the command line (`basic`, `semver`), as opm derives it.
    pub fn name(self) -> &'static str {
        match self {
            TemplateType::Basic => "basic",
            TemplateType::Semver => "semver",
            TemplateType::Substitutes => "substitutes",
        }
    }
}

/// Why one bundle reference could not be rendered; the template error names the reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BundleRenderError {
    /// What went wrong, as the image source or bundle renderer said it.
    pub message: String,
}

impl BundleRenderError {
    /// An error from any displayable cause.
    pub fn new(message: impl fmt::Display) -> Self {
        BundleRenderError {
            message: message.to_string(),
        }
    }
}

/// Turns one bundle reference of a template into `olm.bundle` blobs (opm's `BundleRenderer`).
///
/// Why a trait: the template logic must not care whether content comes from a registry, a local
/// image, a bundle folder named by `--bundle-map`, or a test double. Implementations must be
/// callable from several threads at once, because references are rendered in parallel.
pub trait BundleRenderer: Sync {
    /// Renders `image_ref`; the returned bundles carry `image_ref` as their `image`.
    fn render(&self, image_ref: &str) -> Result<Vec<Bundle>, BundleRenderError>;
}

impl<F> BundleRenderer for F
where
    F: Fn(&str) -> Result<Vec<Bundle>, BundleRenderError> + Sync,
{
    fn render(&self, image_ref: &str) -> Result<Vec<Bundle>, BundleRenderError> {
        self(image_ref)
    }
}

/// How to render a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateOptions {
    /// The type, or `None` to detect it from the first document's `schema`.
    pub template_type: Option<TemplateType>,
    /// Which opm release's output to reproduce.
    pub compat: OpmCompat,
    /// How many bundle references to render at once (at least 1).
    pub jobs: usize,
}

impl Default for TemplateOptions {
    fn default() -> Self {
        TemplateOptions {
            template_type: None,
            compat: OpmCompat::NEWEST,
            jobs: crate::parallel::cores(),
        }
    }
}

/// A template that could not be rendered: opm's message, with the file and (when known) the line
/// of the template entry it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TemplateError {
    /// The template file as the user named it (`-` for standard input).
    pub file: String,
    /// 1-based line, 0 when the error concerns the whole file.
    pub line: usize,
    /// The message, worded as opm words it (`rendering template: …`).
    pub message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.message),
            line => write!(f, "{}:{}: {}", self.file, line, self.message),
        }
    }
}

/// A located message inside a template module, before the file name and opm's outer prefix are
/// added by [`render_template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl Located {
    pub(crate) fn new(line: usize, message: impl Into<String>) -> Self {
        Located {
            line,
            message: message.into(),
        }
    }
}

/// Renders a template read from `text` (named `file` in errors) into a declarative config, the
/// way `opm alpha render-template [TYPE] FILE` does before writing it. Warnings are dropped; the
/// command uses [`render_template_checked`].
pub fn render_template(
    file: &str,
    text: &str,
    options: &TemplateOptions,
    renderer: &dyn BundleRenderer,
) -> Result<DeclarativeConfig, TemplateError> {
    render_template_with_warnings(file, text, options, renderer).map(|(cfg, _)| cfg)
}

/// opm's `declcfg.ConvertToModel` verdict on a catalog: its first error, `None` when valid.
///
/// Why injected: the substitutes template validates its entries and each result, but the
/// catalog model may not depend on the rule layer (`validate/`); the caller passes
/// `olmpack::validate::catalog::first_model_error` (the command does).
pub type ModelCheck<'a> = &'a (dyn Fn(&DeclarativeConfig) -> Option<String> + Sync);

/// [`render_template`], with a warning (`file:line: message`) for each repeated key of a basic
/// template. opm reads a basic template, and the first document for type detection, with a
/// lenient YAML decoder that keeps a repeated key's last value (a real certified template
/// repeats `schema: olm.template.basic`), so olmpack renders it the same way and says so; a
/// semver template is read strictly by opm, so there a repeated key stays an error.
pub fn render_template_with_warnings(
    file: &str,
    text: &str,
    options: &TemplateOptions,
    renderer: &dyn BundleRenderer,
) -> Result<(DeclarativeConfig, Vec<String>), TemplateError> {
    render_template_checked(file, text, options, renderer, &|_| {
        Some(
            "the substitutes template needs a catalog model check: use render_template_checked"
                .to_string(),
        )
    })
}

/// [`render_template_with_warnings`] with the catalog model check the substitutes template
/// applies to its entries and to each substitution's result (see [`ModelCheck`]).
pub fn render_template_checked(
    file: &str,
    text: &str,
    options: &TemplateOptions,
    renderer: &dyn BundleRenderer,
    check: ModelCheck,
) -> Result<(DeclarativeConfig, Vec<String>), TemplateError> {
    let fail = |line: usize, message: String| TemplateError {
        file: file.to_string(),
        line,
        message,
    };
    let (docs, duplicates) = match yaml::parse_stream_lenient(text) {
        Ok(parsed) => parsed,
        Err(err) => {
            let message = match options.template_type {
                None => format!(
                    "auto-detecting template type: decoding template input: {}",
                    err.message
                ),
                Some(TemplateType::Semver) => format!(
                    "rendering template: render: unable to read file: error converting YAML to JSON: yaml: {}",
                    err.message
                ),
                Some(TemplateType::Substitutes) => format!(
                    "rendering template: render: unable to parse template: decoding template schema: {}",
                    err.message
                ),
                Some(TemplateType::Basic) => {
                    format!(
                        "rendering template: decoding template schema: {}",
                        err.message
                    )
                }
            };
            return Err(fail(err.line, message));
        }
    };
    let first = docs.first().map(|d| &d.root);
    let template_type = match options.template_type {
        Some(t) => t,
        None => detect(first, options.compat).map_err(|l| {
            fail(
                l.line,
                format!("auto-detecting template type: {}", l.message),
            )
        })?,
    };
    let mut warnings = Vec::new();
    if let Some(duplicate) = duplicates.first() {
        if template_type == TemplateType::Semver {
            return Err(fail(
                duplicate.line,
                format!(
                    "rendering template: render: unable to read file: error converting YAML to JSON: yaml: {}",
                    duplicate.message
                ),
            ));
        }
        warnings.extend(duplicates.iter().map(|d| {
            format!(
                "{file}:{}: {}; opm keeps the last value, and so does olmpack",
                d.line, d.message
            )
        }));
    }
    let result = match template_type {
        TemplateType::Semver => semver::render(first, options, renderer),
        TemplateType::Basic => basic::render(&docs, options, renderer),
        TemplateType::Substitutes => substitutes::render(&docs, options, renderer, check),
    };
    result
        .map(|cfg| (cfg, warnings))
        .map_err(|l| fail(l.line, format!("rendering template: {}", l.message)))
}

/// opm's `detectSchema`: the first document's `schema` (key matched case-insensitively, as Go's
/// `encoding/json` does), which must name a known template type.
fn detect(first: Option<&Node>, compat: OpmCompat) -> Result<TemplateType, Located> {
    let Some(root) = first else {
        return Err(Located::new(
            0,
            "template input missing required 'schema' field",
        ));
    };
    let schema_node = match &root.value {
        Value::Map(entries) => go_field(entries, "schema"),
        _ => {
            return Err(Located::new(
                root.line,
                format!(
                    "unmarshalling template schema: json: cannot unmarshal {} into Go value of type struct {{ Schema string \"json:\\\"schema\\\"\" }}",
                    json_kind(root)
                ),
            ));
        }
    };
    let Some(node) = schema_node else {
        return Err(Located::new(
            root.line,
            "template input missing required 'schema' field",
        ));
    };
    let schema = match &node.value {
        Value::Scalar(_, yaml::ScalarKind::Null) => "",
        Value::Scalar(s, yaml::ScalarKind::Str) => s.as_str(),
        _ => {
            return Err(Located::new(
                node.line,
                format!(
                    "unmarshalling template schema: json: cannot unmarshal {} into Go struct field .schema of type string",
                    json_kind(node)
                ),
            ));
        }
    };
    match schema {
        "" => Err(Located::new(
            node.line,
            "template input missing required 'schema' field",
        )),
        basic::SCHEMA => Ok(TemplateType::Basic),
        semver::SCHEMA => Ok(TemplateType::Semver),
        // Before v1.44 a basic template was a plain FBC stream.
        crate::catalog::model::SCHEMA_PACKAGE
        | crate::catalog::model::SCHEMA_CHANNEL
        | crate::catalog::model::SCHEMA_BUNDLE
        | crate::catalog::model::SCHEMA_DEPRECATIONS
            if !compat.at_least(1, 44) =>
        {
            Ok(TemplateType::Basic)
        }
        // opm before v1.62 did not know the substitutes template.
        substitutes::SCHEMA if compat.at_least(1, 62) => Ok(TemplateType::Substitutes),
        other => Err(Located::new(
            node.line,
            format!("unknown template schema: {other}"),
        )),
    }
}

/// Go `encoding/json` field lookup: an exact key wins, else the last key equal under case folding.
pub(crate) fn go_field<'a>(entries: &'a [(yaml::Key, Node)], name: &str) -> Option<&'a Node> {
    let mut found = None;
    for (k, v) in entries {
        if k.text.eq_ignore_ascii_case(name) {
            found = Some(v);
        }
    }
    found
}

/// The JSON kind Go names in `cannot unmarshal X into …` errors.
pub(crate) fn json_kind(node: &Node) -> &'static str {
    match &node.value {
        Value::Scalar(_, yaml::ScalarKind::Null) => "null",
        Value::Scalar(_, yaml::ScalarKind::Bool(_)) => "bool",
        Value::Scalar(_, yaml::ScalarKind::Int | yaml::ScalarKind::Float) => "number",
        Value::Scalar(_, yaml::ScalarKind::Str) => "string",
        Value::Seq(_) => "array",
        Value::Map(_) => "object",
    }
}

/// One reference's rendering outcome.
pub type RenderResult = Result<Vec<Bundle>, BundleRenderError>;

/// Renders every reference once, `jobs` at a time, and returns the results in input order.
///
/// Why not opm's loop: opm renders references one after another; pulling is I/O bound, so a
/// template of twenty bundles is dominated by twenty sequential round trips.
pub fn render_all(
    refs: &[String],
    renderer: &dyn BundleRenderer,
    jobs: usize,
) -> Vec<RenderResult> {
    crate::parallel::map_indexed(refs.len(), jobs.max(1), None, |i| match refs.get(i) {
        Some(reference) => renderer.render(reference),
        None => Err(BundleRenderError::new("rendering was interrupted")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_type_case_insensitively_and_refuses_unknown() {
        let docs = yaml::parse_stream("---\nSchema: olm.semver\n").unwrap_or_default();
        assert_eq!(
            detect(docs.first().map(|d| &d.root), OpmCompat::NEWEST),
            Ok(TemplateType::Semver)
        );
        let docs = yaml::parse_stream("schema: olm.package\nname: x\n").unwrap_or_default();
        let err = detect(docs.first().map(|d| &d.root), OpmCompat::NEWEST);
        assert_eq!(
            err.map_err(|e| e.message),
            Err("unknown template schema: olm.package".to_string())
        );
        assert_eq!(
            detect(docs.first().map(|d| &d.root), OpmCompat::new(1, 26)),
            Ok(TemplateType::Basic)
        );
        let docs = yaml::parse_stream("entries: []\n").unwrap_or_default();
        let err = detect(docs.first().map(|d| &d.root), OpmCompat::NEWEST);
        assert_eq!(
            err.map_err(|e| e.message),
            Err("template input missing required 'schema' field".to_string())
        );
    }

    #[test]
    fn render_all_keeps_input_order() {
        let refs: Vec<String> = (0..20).map(|i| format!("img{i}")).collect();
        let renderer = |r: &str| -> Result<Vec<Bundle>, BundleRenderError> {
            if r == "img7" {
                return Err(BundleRenderError::new("boom"));
            }
            Ok(vec![semver::tests::bundle(r, "p", "1.0.0", r)])
        };
        let out = render_all(&refs, &renderer, 4);
        assert_eq!(out.len(), 20);
        for (i, r) in out.iter().enumerate() {
            match r {
                Ok(b) => assert_eq!(b.first().map(|b| b.image.clone()), Some(format!("img{i}"))),
                Err(e) => {
                    assert_eq!(i, 7);
                    assert_eq!(e.message, "boom");
                }
            }
        }
    }
}
