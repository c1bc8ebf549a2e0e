//! `catalog onboard`: an operator moved to file-based catalogs without a container. From the
//! catalogs it is published in (the repository's `catalogs/<ocp>/` folders, or a folder or
//! catalog image per OpenShift version), the basic templates
//! `operators/<op>/catalog-templates/v<ocp>.yaml` and the `ci.yaml` `fbc` mapping that make
//! `catalog matrix` (the pipelines' `make catalogs`) give those catalogs back, as operator-
//! pipelines' `fbc-onboarding` writes them ([`crate::catalog::onboard`]). Every file is staged
//! and renamed into place only once all were made.

use super::source::{CatalogSource, open_catalog};
use crate::catalog::onboard::{Mapping, basic_template, onboarded_ci, package_blobs};
use crate::catalog::repo_layout::{OcpVersion, RepoLayout};
use crate::location::Location;
use crate::transport::RegistryOptions;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `catalog onboard` was asked for.
#[derive(Debug, Clone)]
pub struct OnboardRequest {
    /// `--repo`.
    pub root: PathBuf,
    /// The operator folder under `operators/`.
    pub operator: String,
    /// `--package`: the package name when it is not the one its bundles declare.
    pub package: Option<String>,
    /// `--from OCP=SOURCE`, in order, each source parsed by the command; empty: every
    /// `catalogs/<ocp>/` folder of the repository.
    pub sources: Vec<(String, Location)>,
    /// `--output-dir`: write `<dir>/operators/<op>/…` instead of into the repository.
    pub output_dir: Option<PathBuf>,
    /// `--force`: replace an existing `fbc` mapping and templates of the same name.
    pub force: bool,
    /// Registry access for catalog images.
    pub registry: RegistryOptions,
}

/// One catalog read.
#[derive(Debug, Clone)]
pub struct OnboardTarget {
    /// `v4.18`.
    pub catalog: String,
    /// Where it was read.
    pub source: String,
    /// The template written, or `None` when the package is not in that catalog.
    pub template: Option<PathBuf>,
    /// Blobs of the package found.
    pub blobs: usize,
    /// Of them, bundles.
    pub bundles: usize,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct OnboardReport {
    /// The package name used.
    pub package: String,
    /// Where it came from.
    pub package_from: String,
    /// One per catalog, in version order.
    pub targets: Vec<OnboardTarget>,
    /// The `ci.yaml` written.
    pub ci: PathBuf,
    /// Wall time.
    pub elapsed: Duration,
}

/// Why onboarding failed; nothing was written. The causes stay typed so the command prints
/// the whole chain (a catalog that cannot be opened says why, down to the registry's answer).
#[derive(Debug, thiserror::Error)]
pub enum OnboardError {
    /// The request or the repository does not fit (the message says how).
    #[error("{0}")]
    Usage(String),
    /// A published catalog could not be opened or read.
    #[error("{catalog}")]
    Catalog {
        /// The OpenShift catalog it is (`v4.16`).
        catalog: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file could not be staged or renamed into place.
    #[error(transparent)]
    Write(#[from] crate::fsio::FsError),
}

/// The package name as the pipelines find it: the first bundle's
/// `operators.operatorframework.io.bundle.package.v1` annotation, else the folder name.
fn package_of(layout: &RepoLayout, operator: &str) -> (String, String) {
    for (version, dir) in layout.bundle_dirs(operator) {
        let file = Path::new("metadata/annotations.yaml");
        let Ok(bytes) = crate::fsio::untrusted::read(&dir, file, 1 << 20) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let Ok(docs) = crate::yaml::parse_stream(&text) else {
            continue;
        };
        let name = docs.first().and_then(|d| {
            d.root
                .get("annotations")?
                .get("operators.operatorframework.io.bundle.package.v1")?
                .as_str()
                .map(str::to_string)
        });
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            return (
                name,
                format!("operators/{operator}/{version}/metadata/annotations.yaml"),
            );
        }
        break;
    }
    (operator.to_string(), "the operator folder's name".into())
}

/// `4.18` or `v4.18` as the pipelines name the catalog (`v4.18`); the command names `--from`'s
/// catalogs with it before it parses their sources, so a wrong version is reported first.
pub fn catalog_name(ocp: &str) -> Result<String, OnboardError> {
    let name = if ocp.starts_with('v') {
        ocp.to_string()
    } else {
        format!("v{ocp}")
    };
    if OcpVersion::parse(&name).is_none() {
        return Err(OnboardError::Usage(format!(
            "--from {ocp}=…: the OpenShift version must be like v4.18 (the catalog folder name)"
        )));
    }
    Ok(name)
}

/// Runs the onboarding. `progress` is called once per catalog read.
pub fn run(
    req: &OnboardRequest,
    progress: &dyn Fn(&OnboardTarget),
) -> Result<OnboardReport, OnboardError> {
    let started = Instant::now();
    let layout = RepoLayout::new(&req.root);
    if !crate::catalog::repo_layout::is_plain_name(&req.operator) {
        return Err(OnboardError::Usage(format!(
            "operator {:?}: a folder name under operators/ (no '/', not '.' or '..')",
            req.operator
        )));
    }
    let op_dir = layout.operator_dir(&req.operator);
    if !op_dir.is_dir() {
        return Err(OnboardError::Usage(format!(
            "{}: no such operator folder",
            op_dir.display()
        )));
    }
    let out_layout = match &req.output_dir {
        Some(d) => RepoLayout::new(d),
        None => layout.clone(),
    };
    let (ci_in, existing) = read_ci(&layout, req)?;
    let (package, package_from) = match &req.package {
        Some(p) => (p.clone(), "--package".to_string()),
        None => package_of(&layout, &req.operator),
    };
    let sources = catalog_sources(&layout, req)?;
    let mut targets = Vec::new();
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut mappings = Vec::new();
    for (catalog, source) in &sources {
        let (template, blobs, bundles) = read_catalog(req, catalog, source, &package)?;
        let target_file = template.map(|bytes| {
            let name = format!("{catalog}.yaml");
            let file = out_layout.template_file(&req.operator, &name);
            files.push((file.clone(), bytes));
            mappings.push(Mapping {
                template_name: name,
                catalog_name: catalog.clone(),
            });
            file
        });
        let t = OnboardTarget {
            catalog: catalog.clone(),
            source: source.to_string(),
            template: target_file,
            blobs,
            bundles,
        };
        progress(&t);
        targets.push(t);
    }
    if mappings.is_empty() {
        return Err(OnboardError::Usage(format!(
            "package {package:?} (from {package_from}) is in none of the {} catalogs read; nothing written",
            sources.len()
        )));
    }
    let ci_out = out_layout.ci_file(&req.operator);
    let ci = onboarded_ci(&ci_in.display().to_string(), &existing, &mappings)
        .map_err(|e| OnboardError::Usage(e.to_string()))?;
    // Templates already there are the user's: only --force replaces them.
    if !req.force
        && let Some((file, _)) = files.iter().find(|(file, _)| file.exists())
    {
        return Err(OnboardError::Usage(format!(
            "{}: exists; --force replaces the templates of the same name (nothing written)",
            file.display()
        )));
    }
    files.push((ci_out.clone(), ci));
    write_all(&files)?;
    Ok(OnboardReport {
        package,
        package_from,
        targets,
        ci: ci_out,
        elapsed: started.elapsed(),
    })
}

/// The operator's `ci.yaml` path and text (empty when there is none), refused when it is on FBC
/// already and `--force` was not given.
fn read_ci(layout: &RepoLayout, req: &OnboardRequest) -> Result<(PathBuf, String), OnboardError> {
    let ci_in = layout.ci_file(&req.operator);
    // A checkout is someone else's content: ci.yaml is read with a cap like every such file.
    let existing = if ci_in.exists() {
        let bytes = crate::fsio::untrusted::read_limited(&ci_in, 1 << 20)
            .map_err(|e| OnboardError::Usage(format!("{}: {e}", ci_in.display())))?;
        String::from_utf8(bytes)
            .map_err(|_| OnboardError::Usage(format!("{}: not UTF-8 text", ci_in.display())))?
    } else {
        String::new()
    };
    if !req.force
        && let Ok(ci) = crate::catalog::repo_layout::parse_ci(&req.operator, &ci_in, &existing)
        && ci.fbc_enabled
    {
        return Err(OnboardError::Usage(format!(
            "{}: the operator is already on FBC (fbc.enabled: true); --force replaces its mapping and templates",
            ci_in.display()
        )));
    }
    Ok((ci_in, existing))
}

/// The catalogs to read, `(v<ocp>, source)` in version order: given, else the operator's folder
/// in every `catalogs/<ocp>/` of the repository (where `make catalogs` writes it; the rest of
/// that catalog holds other operators' folders only). A version named twice is refused.
fn catalog_sources(
    layout: &RepoLayout,
    req: &OnboardRequest,
) -> Result<Vec<(String, Location)>, OnboardError> {
    let mut sources: Vec<(String, Location)> = Vec::new();
    if req.sources.is_empty() {
        for name in layout.catalog_names() {
            let dir = layout.catalogs_dir().join(&name).join(&req.operator);
            if OcpVersion::parse(&name).is_some() && dir.is_dir() {
                let folder =
                    Location::path(dir).map_err(|e| OnboardError::Usage(format!("{name}: {e}")))?;
                sources.push((name, folder));
            }
        }
        if sources.is_empty() {
            return Err(OnboardError::Usage(format!(
                "{}: no catalogs/v<ocp>/{} folders; name the published catalogs with --from v4.18=FOLDER-OR-IMAGE",
                layout.catalogs_dir().display(),
                req.operator
            )));
        }
    } else {
        for (ocp, source) in &req.sources {
            sources.push((catalog_name(ocp)?, source.clone()));
        }
    }
    sources.sort_by_key(|(name, _)| OcpVersion::parse(name));
    if let Some(w) = sources.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(OnboardError::Usage(format!(
            "--from names {} twice",
            w[0].0
        )));
    }
    Ok(sources)
}

/// One published catalog opened and its package read: the basic template it gives (`None` when
/// the package is not in it), how many of the package's blobs it holds, and of them bundles.
fn read_catalog(
    req: &OnboardRequest,
    catalog: &str,
    location: &Location,
    package: &str,
) -> Result<(Option<Vec<u8>>, usize, usize), OnboardError> {
    let opened = open_catalog(location, |l: &Location| {
        Ok::<_, super::source::CatalogSourceError>((req.registry.clone(), l.clone()))
    })
    .map_err(|e| OnboardError::Catalog {
        catalog: catalog.to_string(),
        source: Box::new(e),
    })?;
    let dir: PathBuf = match &opened {
        CatalogSource::Folder(p) => p.clone(),
        CatalogSource::Image { configs, .. } => configs.clone(),
    };
    let blobs = package_blobs(&dir, package).map_err(|e| OnboardError::Catalog {
        catalog: catalog.to_string(),
        source: Box::new(e),
    })?;
    let bundles = blobs
        .iter()
        .filter(|m| m.schema == crate::catalog::model::SCHEMA_BUNDLE)
        .count();
    let template = basic_template(&blobs)
        .map_err(|e| OnboardError::Usage(format!("{catalog}: {location}: {e}")))?;
    Ok((template, blobs.len(), bundles))
}

/// Everything made: stages every file, then renames them all into place.
fn write_all(files: &[(PathBuf, Vec<u8>)]) -> Result<(), OnboardError> {
    let mut staged = Vec::new();
    for (file, bytes) in files {
        let s = crate::fsio::stage(file, bytes, crate::fsio::Options::edit(0o644))?;
        staged.push(s);
    }
    for s in staged {
        s.commit()?;
    }
    Ok(())
}
