//! The catalog matrix: one operator's templates rendered for every OpenShift catalog its
//! `ci.yaml` maps them to, as the pipelines' `make catalogs` (`fbc/render_catalogs.sh`) does.
//!
//! Why: each OpenShift version gets its own `catalogs/<ocp>/<package>/catalog.yaml`, rendered
//! with that version's rules (`olm.bundle.object` below 4.17, `olm.csv.metadata` from 4.17) by
//! the opm release that wrote it. This module holds what is OLM knowledge (the plan of targets,
//! which opm may have written a file, the bytes `make` leaves on disk, where an offline bundle
//! comes from, the consistency between targets); the command composes it with the renderer.

pub mod consistency;
pub mod place;

use crate::catalog::compat::OpmCompat;
use crate::catalog::repo_layout::{
    CiConfig, LayoutError, MappingType, OpmPin, PIPELINES_OPM, RepoLayout, needs_csv_metadata,
};
use std::path::PathBuf;

/// One catalog a template is rendered into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The catalog folder name (`v4.17`).
    pub ocp: String,
    /// Rendered with `--migrate-level bundle-object-to-csv-metadata`.
    pub csv_metadata: bool,
    /// Line of the name in `ci.yaml`.
    pub line: usize,
}

/// One template and the catalogs rendered from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplatePlan {
    /// `template_name`.
    pub name: String,
    /// The template file.
    pub file: PathBuf,
    /// Its type, as `ci.yaml` names it (passed to the renderer, as the script passes it to opm).
    pub template_type: MappingType,
    /// Line of the mapping row in `ci.yaml`.
    pub line: usize,
    /// The catalogs, in `ci.yaml` order.
    pub targets: Vec<Target>,
}

/// Everything one operator's matrix renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorPlan {
    /// The operator (package folder).
    pub operator: String,
    /// Its `ci.yaml`.
    pub ci_file: PathBuf,
    /// The templates, in `ci.yaml` order.
    pub templates: Vec<TemplatePlan>,
}

impl OperatorPlan {
    /// The plan of `ci`: every mapping row, every catalog name. A catalog named by two rows is
    /// refused (the script would silently keep the later one), as is a mapping whose template
    /// file is missing; both errors name the operator, `ci.yaml` and the line.
    pub fn new(layout: &RepoLayout, ci: &CiConfig) -> Result<OperatorPlan, LayoutError> {
        let fail = |line: usize, message: String| LayoutError {
            operator: Some(ci.operator.clone()),
            file: ci.file.clone(),
            line,
            message,
        };
        if ci.mappings.is_empty() {
            return Err(fail(
                0,
                "no fbc.catalog_mapping: nothing to render (the operator is not onboarded to file-based catalogs)".into(),
            ));
        }
        let mut seen: Vec<(String, usize)> = Vec::new();
        let mut templates = Vec::new();
        for m in &ci.mappings {
            let file = layout.template_file(&ci.operator, &m.template_name);
            if !file.is_file() {
                return Err(fail(
                    m.line,
                    format!(
                        "template {} does not exist ({})",
                        m.template_name,
                        file.display()
                    ),
                ));
            }
            let mut targets = Vec::new();
            for (name, line) in m.catalog_names.iter().zip(&m.catalog_lines) {
                if let Some((_, first)) = seen.iter().find(|(n, _)| n == name) {
                    return Err(fail(
                        *line,
                        format!(
                            "catalog {name} is mapped twice (also on line {first}): make catalogs would keep only the later template"
                        ),
                    ));
                }
                seen.push((name.clone(), *line));
                targets.push(Target {
                    ocp: name.clone(),
                    csv_metadata: needs_csv_metadata(name),
                    line: *line,
                });
            }
            templates.push(TemplatePlan {
                name: m.template_name.clone(),
                file,
                template_type: m.template_type,
                line: m.line,
                targets,
            });
        }
        Ok(OperatorPlan {
            operator: ci.operator.clone(),
            ci_file: ci.file.clone(),
            templates,
        })
    }

    /// Every target, with its template.
    pub fn targets(&self) -> impl Iterator<Item = (&TemplatePlan, &Target)> {
        self.templates
            .iter()
            .flat_map(|t| t.targets.iter().map(move |x| (t, x)))
    }
}

/// Who may have written a checked-in catalog: the opm release, and why it is a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    /// The opm release reproduced.
    pub compat: OpmCompat,
    /// Why: the operator's Makefile pin, the pipelines' pin, or the command line.
    pub source: WriterSource,
}

/// Where a [`Writer`] comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriterSource {
    /// `--opm-compat`.
    CommandLine,
    /// The operator's own Makefile (`OPM_VERSION ?= …`), the file and line.
    Makefile(PathBuf, usize),
    /// operator-pipelines' `fbc/Makefile` and release image (v1.71.0).
    Pipelines,
}

impl std::fmt::Display for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            WriterSource::CommandLine => write!(f, "opm {} (--opm-compat)", self.compat),
            WriterSource::Makefile(file, line) => write!(
                f,
                "opm {} (pinned at {}:{line})",
                self.compat,
                file.display()
            ),
            WriterSource::Pipelines => write!(f, "opm {} (the pipelines' pin)", self.compat),
        }
    }
}

/// The opm releases that may have written an operator's catalogs, the likeliest first: the
/// operator's own Makefile pin (what `make catalogs` in its folder runs), then the pipelines'
/// v1.71.0 (their Makefile and the release automation). `forced` (`--opm-compat`) is the only
/// one when given. A pin olmpack does not reproduce is skipped; the caller reports it.
pub fn writers(pin: Option<&OpmPin>, forced: Option<OpmCompat>) -> Vec<Writer> {
    if let Some(compat) = forced {
        return vec![Writer {
            compat,
            source: WriterSource::CommandLine,
        }];
    }
    let mut out = Vec::new();
    if let Some(p) = pin
        && let Some(compat) = p.compat
    {
        out.push(Writer {
            compat,
            source: WriterSource::Makefile(p.file.clone(), p.line),
        });
    }
    if !out.iter().any(|w| w.compat == PIPELINES_OPM) {
        out.push(Writer {
            compat: PIPELINES_OPM,
            source: WriterSource::Pipelines,
        });
    }
    out
}

/// The bytes `render_catalogs.sh` leaves on disk for opm's output: `output=$(opm …)` drops
/// every trailing newline and `echo "$output" > catalog.yaml` adds one.
pub fn as_make_writes(mut rendered: Vec<u8>) -> Vec<u8> {
    while rendered.last() == Some(&b'\n') {
        rendered.pop();
    }
    rendered.push(b'\n');
    rendered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_keeps_one_trailing_newline() {
        assert_eq!(as_make_writes(b"a\n\n\n".to_vec()), b"a\n");
        assert_eq!(as_make_writes(b"a".to_vec()), b"a\n");
        assert_eq!(as_make_writes(Vec::new()), b"\n");
    }

    #[test]
    fn writers_prefer_the_makefile_pin() {
        let pin = OpmPin {
            text: "v1.46.0".into(),
            compat: Some(OpmCompat::new(1, 46)),
            file: PathBuf::from("Makefile"),
            line: 87,
        };
        let w = writers(Some(&pin), None);
        assert_eq!(
            w.iter().map(|w| w.compat).collect::<Vec<_>>(),
            [OpmCompat::new(1, 46), PIPELINES_OPM]
        );
        assert_eq!(writers(None, None).len(), 1);
        let forced = writers(Some(&pin), Some(OpmCompat::new(1, 61)));
        assert_eq!(forced.len(), 1);
        assert_eq!(forced[0].source, WriterSource::CommandLine);
    }
}
