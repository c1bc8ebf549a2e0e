//! `catalog matrix`: every template of one operator (or of all), rendered for every OpenShift
//! catalog its `ci.yaml` maps it to, written as `make catalogs` writes
//! `catalogs/<ocp>/<package>/catalog.yaml`.
//!
//! Each bundle reference is rendered once per operator (not once per target): the targets
//! differ only in the migration applied afterwards and in the opm release reproduced. For each
//! target the opm release that wrote the checked-in file is worked out (the operator's Makefile
//! pin, then the pipelines' v1.71.0; the first whose output equals the file), and kept when the
//! output changes. An operator's files are all rendered in memory, staged, then renamed into
//! place: an operator that fails leaves every file of it untouched.

use super::bundle_source::{SourceOptions, render_source};
use crate::catalog::matrix::consistency::{self, Finding, RenderedTarget};
use crate::catalog::matrix::place::Placement;
use crate::catalog::matrix::{OperatorPlan, Writer, as_make_writes, writers};
use crate::catalog::model::{Bundle, DeclarativeConfig};
use crate::catalog::render::{MigrateLevel, bundle_object_to_csv_metadata};
use crate::catalog::repo_layout::{MappingType, RepoLayout};
use crate::catalog::template::bundle_map::BundleMap;
use crate::catalog::template::{
    BundleRenderError, TemplateOptions, TemplateType, render_template_checked,
};
use crate::catalog::write::{Format, write_config_with};
use crate::location::Location;
use crate::transport::RegistryOptions;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::catalog::OpmCompat;
pub use crate::catalog::matrix::consistency::Finding as ConsistencyFinding;

/// What `catalog matrix` was asked for.
#[derive(Debug, Clone)]
pub struct MatrixRequest {
    /// `--repo`: the repository root.
    pub root: PathBuf,
    /// The operators named; empty with `all`.
    pub operators: Vec<String>,
    /// `--all`: every operator whose `ci.yaml` has an `fbc.catalog_mapping`.
    pub all: bool,
    /// `--output-dir`: write `<dir>/catalogs/<ocp>/<package>/catalog.yaml` instead of under the
    /// repository.
    pub output_dir: Option<PathBuf>,
    /// `--offline`: bundles from the repository's folders (and the bundle map), never a registry.
    pub offline: bool,
    /// `--bundle-map FILE`.
    pub bundle_map: Option<PathBuf>,
    /// `--opm-compat`: reproduce this opm release for every target.
    pub compat: Option<OpmCompat>,
    /// `--check`: render and compare, write nothing.
    pub check: bool,
    /// `-j`: operators rendered at once.
    pub jobs: Option<usize>,
    /// Registry access for the references not read locally.
    pub registry: RegistryOptions,
}

/// Why the matrix could not start (a bad repository or bundle map); per-operator failures are
/// in [`OperatorReport::error`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MatrixError {
    /// The repository layout, a `ci.yaml` or the bundle map is wrong.
    #[error("{0}")]
    Usage(String),
    /// The bundle map (`--bundle-map`) does not parse.
    #[error(transparent)]
    BundleMap(#[from] crate::catalog::template::bundle_map::BundleMapError),
}

/// What happened to one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetStatus {
    /// The checked-in file already holds these bytes.
    Unchanged,
    /// The file exists and its content changes.
    Changed,
    /// There was no file.
    New,
}

impl TargetStatus {
    /// The word printed.
    pub fn word(self) -> &'static str {
        match self {
            TargetStatus::Unchanged => "unchanged",
            TargetStatus::Changed => "changed",
            TargetStatus::New => "new",
        }
    }
}

/// One catalog file of the matrix.
#[derive(Debug, Clone)]
pub struct TargetReport {
    /// The catalog folder (`v4.17`).
    pub ocp: String,
    /// The template it was rendered from.
    pub template: String,
    /// The file written (or that would be, with `--check`).
    pub file: PathBuf,
    /// The opm release reproduced, and why.
    pub writer: Writer,
    /// Compared with the checked-in file.
    pub status: TargetStatus,
    /// Rendered with `olm.csv.metadata`.
    pub csv_metadata: bool,
}

impl TargetReport {
    /// The property that carries the bundle's metadata in this file (`olm.csv.metadata` or
    /// `olm.bundle.object`), named by the catalog model so the door prints opm's type name.
    pub fn metadata_property(&self) -> &'static str {
        if self.csv_metadata {
            crate::catalog::model::property_type::CSV_METADATA
        } else {
            crate::catalog::model::property_type::BUNDLE_OBJECT
        }
    }
}

/// Why one operator's catalogs were not written: a finding of the run (the others go on), its
/// library error kept typed for the door to print.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// What the repository, the template or a bundle says is wrong, the whole message.
    #[error("{0}")]
    Message(String),
    /// A rendered catalog could not be staged or moved into place.
    #[error("operator {operator}")]
    Write {
        /// The operator.
        operator: String,
        /// What the file system said.
        source: crate::fsio::FsError,
    },
    /// A rendered catalog could not be encoded.
    #[error("operator {operator}: {file}")]
    Encode {
        /// The operator.
        operator: String,
        /// The template it was rendered from.
        file: String,
        /// What the writer said.
        source: crate::catalog::write::WriteError,
    },
}

impl From<String> for OperatorError {
    fn from(message: String) -> Self {
        OperatorError::Message(message)
    }
}

/// One operator's outcome.
#[derive(Debug)]
pub struct OperatorReport {
    /// The operator.
    pub operator: String,
    /// Its targets (empty on error).
    pub targets: Vec<TargetReport>,
    /// Bundle references rendered.
    pub bundles: usize,
    /// Why nothing of it was written.
    pub error: Option<OperatorError>,
    /// Notes (a Makefile pin olmpack does not reproduce, ...).
    pub notes: Vec<String>,
    /// Consistency findings between its targets.
    pub findings: Vec<Finding>,
    /// Wall time.
    pub elapsed: Duration,
}

/// The whole run.
#[derive(Debug, Default)]
pub struct MatrixReport {
    /// One report per operator, in name order.
    pub operators: Vec<OperatorReport>,
}

impl MatrixReport {
    /// Whether any operator failed.
    pub fn failed(&self) -> bool {
        self.operators.iter().any(|o| o.error.is_some())
    }
}

/// Runs the matrix; `progress` is called once per operator as it finishes (from worker threads).
pub fn run(
    request: &MatrixRequest,
    progress: &(dyn Fn(&OperatorReport) + Sync),
) -> Result<MatrixReport, MatrixError> {
    let layout = RepoLayout::new(&request.root);
    if !layout.operators_dir().is_dir() {
        return Err(MatrixError::Usage(format!(
            "{}: not an operator repository (no operators/ folder)",
            request.root.display()
        )));
    }
    // A checkout is what a pull request made it: a link in catalogs/ leading out would have
    // the matrix read, and write `catalog.yaml`, outside the repository.
    confined(layout.root(), "catalogs").map_err(MatrixError::Usage)?;
    let operators: Vec<String> = if request.all {
        // A ci.yaml that cannot be read fails its operator (named, with its line), not the run.
        layout
            .operators()
            .map_err(|e| MatrixError::Usage(e.to_string()))?
            .into_iter()
            .filter(|op| match layout.read_ci(op) {
                Ok(ci) => !ci.mappings.is_empty(),
                Err(_) => true,
            })
            .collect()
    } else {
        for op in &request.operators {
            if !crate::catalog::repo_layout::is_plain_name(op) || !layout.ci_file(op).is_file() {
                return Err(MatrixError::Usage(format!(
                    "operator {op}: {} does not exist",
                    layout.ci_file(op).display()
                )));
            }
        }
        request.operators.clone()
    };
    if operators.is_empty() {
        return Err(MatrixError::Usage(format!(
            "{}: no operator has an fbc.catalog_mapping in its ci.yaml",
            layout.root().display()
        )));
    }
    let map = match &request.bundle_map {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| MatrixError::Usage(format!("{}: {e}", path.display())))?;
            BundleMap::parse(&text, path)?
        }
        None => BundleMap::default(),
    };
    let cores = crate::parallel::cores();
    let threads = request.jobs.unwrap_or(cores).max(1).min(operators.len());
    // One operator alone renders its bundle references in parallel instead.
    let inner_jobs = if threads > 1 { 1 } else { cores };
    let ctx = Ctx {
        layout: &layout,
        request,
        map: &map,
        inner_jobs,
    };
    let reports = crate::parallel::map_indexed(operators.len(), threads, None, |i| {
        let op = operators.get(i).map(String::as_str).unwrap_or_default();
        let report = ctx.operator(op);
        progress(&report);
        report
    });
    Ok(MatrixReport { operators: reports })
}

struct Ctx<'a> {
    layout: &'a RepoLayout,
    request: &'a MatrixRequest,
    map: &'a BundleMap,
    inner_jobs: usize,
}

/// One rendered catalog, before it is written.
struct Rendered {
    bytes: Vec<u8>,
    config: DeclarativeConfig,
}

impl Ctx<'_> {
    fn operator(&self, op: &str) -> OperatorReport {
        let started = Instant::now();
        let mut report = OperatorReport {
            operator: op.to_string(),
            targets: Vec::new(),
            bundles: 0,
            error: None,
            notes: Vec::new(),
            findings: Vec::new(),
            elapsed: Duration::ZERO,
        };
        if let Err(e) = self.operator_inner(op, &mut report) {
            report.error = Some(e);
            report.targets.clear();
        }
        report.elapsed = started.elapsed();
        report
    }

    fn operator_inner(&self, op: &str, report: &mut OperatorReport) -> Result<(), OperatorError> {
        confined(self.layout.root(), &format!("operators/{op}"))
            .map_err(|e| format!("operator {op}: {e}"))?;
        let ci = self.layout.read_ci(op).map_err(|e| e.to_string())?;
        let plan = OperatorPlan::new(self.layout, &ci).map_err(|e| e.to_string())?;
        let pin = self.layout.makefile_opm_pin(op);
        if let Some(p) = &pin
            && p.compat.is_none()
            && self.request.compat.is_none()
        {
            report.notes.push(format!(
                "{}:{}: OPM_VERSION {} is not a release olmpack reproduces; trying the pipelines' pin only",
                p.file.display(),
                p.line,
                p.text
            ));
        }
        let candidates = writers(pin.as_ref(), self.request.compat);
        let all_folders = Placement::read(self.layout, op);
        let placement = self.request.offline.then_some(&all_folders);
        let cache = BundleCache::default();
        let mut rendered: HashMap<(usize, bool, usize), Rendered> = HashMap::new();
        let mut staged_plan: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let mut configs: Vec<(String, String, DeclarativeConfig)> = Vec::new();
        for (ti, template) in plan.templates.iter().enumerate() {
            let text = std::fs::read(&template.file)
                .map_err(|e| format!("operator {op}: {}: {e}", template.file.display()))
                .and_then(|b| {
                    String::from_utf8(b).map_err(|_| {
                        format!("operator {op}: {}: not UTF-8 text", template.file.display())
                    })
                })?;
            for target in &template.targets {
                let existing = std::fs::read(self.layout.catalog_file(&target.ocp, op)).ok();
                let mut chosen: Option<(usize, TargetStatus)> = None;
                for (wi, writer) in candidates.iter().enumerate() {
                    let key = (ti, target.csv_metadata, wi);
                    if let std::collections::hash_map::Entry::Vacant(slot) = rendered.entry(key) {
                        slot.insert(self.render(
                            op,
                            template,
                            &text,
                            writer.compat,
                            target.csv_metadata,
                            placement,
                            &cache,
                        )?);
                    }
                    let same = match (rendered.get(&key), &existing) {
                        (Some(r), Some(old)) => &r.bytes == old,
                        _ => false,
                    };
                    if same {
                        chosen = Some((wi, TargetStatus::Unchanged));
                        break;
                    }
                    if existing.is_none() {
                        chosen = Some((wi, TargetStatus::New));
                        break;
                    }
                }
                let (wi, status) = chosen.unwrap_or((0, TargetStatus::Changed));
                let Some(out) = rendered.get(&(ti, target.csv_metadata, wi)) else {
                    return Err(format!("operator {op}: no output for {}", target.ocp).into());
                };
                let file = self.output_root().catalog_file(&target.ocp, op);
                let write = self.request.output_dir.is_some() || status != TargetStatus::Unchanged;
                if !self.request.check && write {
                    // opm loads every catalog file of a folder: a catalog.json left beside the
                    // catalog.yaml written here would make the package a duplicate.
                    if let Some(dir) = file.parent()
                        && let Some(other) = ["catalog.json", "catalog.yml"]
                            .into_iter()
                            .find(|n| dir.join(n).exists())
                    {
                        return Err(format!(
                            "operator {op}: {} sits beside the catalog.yaml this writes, and opm would read the package twice: remove it (make catalogs deletes the folder first)",
                            dir.join(other).display()
                        ).into());
                    }
                    staged_plan.push((file.clone(), out.bytes.clone()));
                }
                configs.push((
                    target.ocp.clone(),
                    template.name.clone(),
                    out.config.clone(),
                ));
                report.targets.push(TargetReport {
                    ocp: target.ocp.clone(),
                    template: template.name.clone(),
                    file,
                    writer: candidates
                        .get(wi)
                        .cloned()
                        .unwrap_or_else(|| writers(None, None).remove(0)),
                    status,
                    csv_metadata: target.csv_metadata,
                });
            }
        }
        report.bundles = cache.len();
        let targets: Vec<RenderedTarget<'_>> = configs
            .iter()
            .map(|(ocp, template, config)| RenderedTarget {
                ocp,
                template,
                config,
            })
            .collect();
        let range_of = |version: &str| {
            all_folders
                .folder_of(version)
                .and_then(|dir| consistency::supported_range_of(&dir))
        };
        report.findings = consistency::check(self.layout, &plan, &targets, &range_of);
        // Everything rendered: stage every file, then rename them all into place.
        let mut staged = Vec::new();
        for (file, bytes) in &staged_plan {
            let s = crate::fsio::stage(file, bytes, crate::fsio::Options::edit(0o644)).map_err(
                |source| OperatorError::Write {
                    operator: op.to_string(),
                    source,
                },
            )?;
            staged.push(s);
        }
        for s in staged {
            s.commit().map_err(|source| OperatorError::Write {
                operator: op.to_string(),
                source,
            })?;
        }
        Ok(())
    }

    fn output_root(&self) -> RepoLayout {
        match &self.request.output_dir {
            Some(dir) => RepoLayout::new(dir),
            None => self.layout.clone(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn render(
        &self,
        op: &str,
        template: &crate::catalog::matrix::TemplatePlan,
        text: &str,
        compat: OpmCompat,
        csv_metadata: bool,
        placement: Option<&Placement>,
        cache: &BundleCache,
    ) -> Result<Rendered, OperatorError> {
        let registry = &self.request.registry;
        let renderer = |image_ref: &str| -> Result<Vec<Bundle>, BundleRenderError> {
            let mut bundle = cache.get(image_ref, compat, || {
                let source = self.source_of(image_ref, placement)?;
                let options = SourceOptions {
                    migrate: MigrateLevel::None,
                    compat,
                    registry: registry.clone(),
                };
                render_source(&source, image_ref, &options).map(|b| b.bundle)
            })?;
            if csv_metadata {
                bundle_object_to_csv_metadata(&mut bundle).map_err(BundleRenderError::new)?;
            }
            Ok(vec![bundle])
        };
        let options = TemplateOptions {
            template_type: Some(match template.template_type {
                MappingType::Basic => TemplateType::Basic,
                MappingType::Semver => TemplateType::Semver,
                MappingType::Substitutes => TemplateType::Substitutes,
            }),
            compat,
            jobs: self.inner_jobs,
        };
        let name = template.file.display().to_string();
        let check = crate::validate::catalog::first_model_error;
        let (config, _warnings) = render_template_checked(&name, text, &options, &renderer, &check)
            .map_err(|e| format!("operator {op}: {e}"))?;
        let mut bytes = Vec::new();
        write_config_with(&mut bytes, &config, Format::Yaml, 1).map_err(|source| {
            OperatorError::Encode {
                operator: op.to_string(),
                file: name.clone(),
                source,
            }
        })?;
        Ok(Rendered {
            bytes: as_make_writes(bytes),
            config,
        })
    }

    /// Where a reference's content is read from: the bundle map, the repository's folders
    /// (`--offline`), or its registry.
    fn source_of(
        &self,
        image_ref: &str,
        placement: Option<&Placement>,
    ) -> Result<Location, BundleRenderError> {
        if let Some(source) = self.map.get(image_ref) {
            return Ok(source.clone());
        }
        match placement {
            Some(p) => {
                let placed = p.place(image_ref).map_err(BundleRenderError::new)?;
                Location::path(placed.folder).map_err(BundleRenderError::new)
            }
            // A template names bundle images, as opm reads it: never a path of this machine
            // (a template in a pull request could name one); local bundles come through
            // --offline or --bundle-map.
            None => Location::reference(image_ref)
                .map_err(|e| BundleRenderError::new(format!("{image_ref}: {e}"))),
        }
    }
}

/// Bundles rendered once per operator, keyed by reference and by the two render forms opm
/// releases differ in (object order before 1.28, csv.metadata for images in 1.28 to 1.45).
#[derive(Default)]
struct BundleCache {
    done: Mutex<CacheMap>,
}

/// (reference, objects in file order, csv.metadata for images) → the rendered bundle.
type CacheMap = HashMap<(String, bool, bool), Result<Bundle, BundleRenderError>>;

impl BundleCache {
    fn get(
        &self,
        image_ref: &str,
        compat: OpmCompat,
        render: impl FnOnce() -> Result<Bundle, BundleRenderError>,
    ) -> Result<Bundle, BundleRenderError> {
        let key = (
            image_ref.to_string(),
            compat.objects_in_file_order(),
            compat.csv_metadata_for_images(),
        );
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        let result = render();
        self.lock().insert(key, result.clone());
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheMap> {
        self.done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn len(&self) -> usize {
        let guard = self.lock();
        let refs: std::collections::HashSet<&String> = guard.keys().map(|(r, _, _)| r).collect();
        refs.len()
    }
}

/// `Err` naming the link when `sub` of the checkout `root`, or a link under it, leads out of
/// `root` ([`crate::fsio::untrusted::confined`]).
fn confined(root: &Path, sub: &str) -> Result<(), String> {
    crate::fsio::untrusted::confined(root, Path::new(sub)).map_err(|e| {
        format!(
            "{}: {e}: refusing a checkout that links out of itself",
            root.display()
        )
    })
}
