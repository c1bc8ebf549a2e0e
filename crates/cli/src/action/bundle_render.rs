//! `bundle render`: the Kubernetes objects OLM v1 applies for a bundle, from a bundle folder, a
//! bundle image (any transport) or a catalog's `olm.bundle.object` properties; written to stdout
//! or, as `generate-manifests.go` writes them, one file per object into a folder.

use crate::bundle::{Bundle, MediaType, keys};
use crate::location::{Location, Place};
use crate::olmv1::{self, RenderError, RenderedObject};
/// The options the command fills (namespaces, certificate provider, deployment config).
pub use crate::olmv1::{CertProvider, RenderOptions};
use crate::transport::RegistryOptions;
use std::path::{Path, PathBuf};

/// Where the bundle comes from.
#[derive(Debug, Clone)]
pub struct RenderSource {
    /// A bundle folder, a bundle image, or (with `package`) a catalog folder, as typed (what
    /// messages call it).
    pub source: String,
    /// The same, as the command line parsed it.
    pub location: Location,
    /// Take the bundle from a catalog: its package.
    pub package: Option<String>,
    /// With `package`: the bundle version (default: the highest).
    pub version: Option<String>,
    /// `--policy`: a bundle image is checked first and read at the digest verified.
    pub policy: Option<super::step::policy::PolicyGate>,
}

/// Why `bundle render` produced nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleRenderError {
    /// The source names nothing usable.
    #[error(transparent)]
    Location(#[from] crate::location::LocationError),
    /// A bundle image could not be opened.
    #[error(transparent)]
    Image(#[from] crate::transport::TransportError),
    /// The bundle folder could not be read.
    #[error("{path}: {source}")]
    Load {
        /// The folder.
        path: String,
        /// Why.
        #[source]
        source: crate::bundle::LoadError,
    },
    /// The catalog could not be read or holds no such bundle.
    #[error("{0}")]
    Catalog(String),
    /// OLM v1's renderer refuses the bundle (its own words).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// Writing the output failed.
    #[error("{0}")]
    Write(String),
    /// The `--deployment-config` file could not be read or is no deploymentConfig.
    #[error("{0}")]
    Config(String),
    /// The signature policy refuses the image, or could not be read.
    #[error(transparent)]
    Policy(#[from] super::step::policy::PolicyCheckError),
}

/// Reads a ClusterExtension `deploymentConfig` file (YAML or JSON), for [`RenderOptions`].
pub fn read_deployment_config(path: &Path) -> Result<serde_json::Value, BundleRenderError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BundleRenderError::Config(format!("{}: {e}", path.display())))?;
    olmv1::config::parse(&text).map_err(|e| {
        BundleRenderError::Config(format!("{}: invalid deploymentConfig: {e}", path.display()))
    })
}

/// What `--permissions` prints: the rendered RBAC by scope, API group and verb, as text or
/// (`json`) as pretty JSON.
pub fn permissions_output(objects: &[RenderedObject], json: bool) -> Vec<u8> {
    let summary = olmv1::permissions::summarize(objects);
    if json {
        let mut v = serde_json::to_vec_pretty(&summary).unwrap_or_default();
        v.push(b'\n');
        v
    } else {
        olmv1::permissions::to_text(&summary).into_bytes()
    }
}

/// The objects as printed: YAML documents separated by `---`, or (`json`) one JSON `List`.
pub fn objects_output(objects: &[RenderedObject], json: bool) -> Vec<u8> {
    if json {
        olmv1::output::json_list(objects)
    } else {
        olmv1::output::yaml_stream(objects)
    }
}

/// Renders the source with `opts`.
pub fn render(
    src: &RenderSource,
    opts: &RenderOptions,
    registry: &RegistryOptions,
) -> Result<Vec<RenderedObject>, BundleRenderError> {
    let bundle = load_source(src, registry)?;
    Ok(olmv1::render(&bundle.bundle, opts)?)
}

/// A loaded bundle and the temporary folder that backs it (dropped with it).
#[derive(Debug)]
pub struct LoadedSource {
    /// The bundle.
    pub bundle: Bundle,
    /// The temp folder of an unpacked image.
    pub _dir: Option<tempfile::TempDir>,
}

/// Opens the source: folder, image, or a catalog's bundle.
pub fn load_source(
    src: &RenderSource,
    registry: &RegistryOptions,
) -> Result<LoadedSource, BundleRenderError> {
    let loc = &src.location;
    if let Some(package) = &src.package {
        let Place::Path(path) = loc.place() else {
            return Err(BundleRenderError::Catalog(format!(
                "{}: --package reads a catalog folder; render the catalog image to a folder first (`olmpack catalog render`)",
                src.source
            )));
        };
        return Ok(LoadedSource {
            bundle: catalog_bundle(path, package, src.version.as_deref())?,
            _dir: None,
        });
    }
    match loc.place() {
        Place::Path(path) if super::source::holds_catalog(path) => {
            Err(BundleRenderError::Catalog(catalog_given(path)))
        }
        Place::Path(path) => Ok(LoadedSource {
            bundle: load_folder(path)?,
            _dir: None,
        }),
        _ => {
            let loc = match &src.policy {
                Some(gate) => gate.admit(loc, registry)?,
                None => loc.clone(),
            };
            let fetched = crate::action::bundle_image::fetch_bundle(&loc, registry)?;
            let bundle = load_folder(fetched.dir.path()).map_err(|e| match e {
                BundleRenderError::Load { source, .. } => BundleRenderError::Load {
                    path: src.source.clone(),
                    source,
                },
                other => other,
            })?;
            Ok(LoadedSource {
                bundle,
                _dir: Some(fetched.dir),
            })
        }
    }
}

/// What to say when a catalog folder is given as a bundle folder: the kind, its packages, and
/// the flag that picks a bundle out of it.
fn catalog_given(path: &Path) -> String {
    let s = path.display();
    let mut packages: Vec<String> = crate::catalog::load::load_dir(path)
        .map(|l| l.config.bundles.iter().map(|b| b.package.clone()).collect())
        .unwrap_or_default();
    packages.sort();
    packages.dedup();
    let example = packages.first().map_or("NAME", String::as_str);
    format!(
        "{s} is a file-based catalog folder, not a bundle folder (it has no metadata/annotations.yaml): add --package {example} (and --version V, default the highest) to render one of its bundles; packages with bundles here: {}",
        match packages.len() {
            0 => "none".to_string(),
            n if n > 10 => format!("{}, … ({n} in all)", packages[..10].join(", ")),
            _ => packages.join(", "),
        }
    )
}

fn load_folder(path: &Path) -> Result<Bundle, BundleRenderError> {
    Bundle::load(path).map_err(|source| BundleRenderError::Load {
        path: path.display().to_string(),
        source,
    })
}

/// A catalog bundle's `olm.bundle.object` manifests and its package annotation as a bundle
/// model, read in memory (named as a bundle folder would name them).
fn catalog_bundle(
    root: &Path,
    package: &str,
    version: Option<&str>,
) -> Result<Bundle, BundleRenderError> {
    let loaded = crate::catalog::load::load_dir(root)
        .map_err(|e| BundleRenderError::Catalog(e.to_string()))?;
    let mut candidates: Vec<(semver::Version, &crate::catalog::model::Bundle)> = Vec::new();
    for b in loaded
        .config
        .bundles
        .iter()
        .filter(|b| b.package == package)
    {
        if let Some(v) = b.version() {
            candidates.push((v, b));
        }
    }
    if candidates.is_empty() {
        return Err(BundleRenderError::Catalog(format!(
            "{}: no bundle of package {package:?} in the catalog",
            root.display()
        )));
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0));
    let chosen = match version {
        Some(v) => candidates
            .iter()
            .find(|(cv, _)| cv.to_string() == v.trim_start_matches('v'))
            .ok_or_else(|| {
                let have: Vec<String> = candidates.iter().map(|(v, _)| v.to_string()).collect();
                BundleRenderError::Catalog(format!(
                    "{}: package {package:?} has no version {v} (it has {})",
                    root.display(),
                    have.join(", ")
                ))
            })?,
        None => candidates
            .last()
            .ok_or_else(|| BundleRenderError::Catalog(format!("{}: no bundle", root.display())))?,
    };
    let bundle = chosen.1;
    if bundle.objects.is_empty() {
        return Err(BundleRenderError::Catalog(format!(
            "{}: bundle {} carries no olm.bundle.object properties (its manifests are only in its image {}: render that image instead)",
            root.display(),
            bundle.name,
            bundle.image
        )));
    }
    let media_type = MediaType::RegistryV1.as_str();
    Ok(Bundle::from_objects(
        &bundle.name,
        bundle.objects.iter().map(String::as_str),
        &[
            (keys::MEDIATYPE, media_type),
            (keys::MANIFESTS, "manifests/"),
            (keys::METADATA, "metadata/"),
            (keys::PACKAGE, package),
        ],
    ))
}

/// Writes the sorted objects into `dir` as `NN_kind_name.yaml` files (the folder is created;
/// files are written atomically).
pub fn write_dir(
    dir: &Path,
    objects: &[RenderedObject],
) -> Result<Vec<PathBuf>, BundleRenderError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BundleRenderError::Write(format!("cannot create {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let path = dir.join(olmv1::output::file_name(i, o));
        crate::fsio::write(
            &path,
            &olmv1::output::to_yaml(o),
            crate::fsio::Options::OUTPUT,
        )
        .map_err(|e| BundleRenderError::Write(format!("cannot write {}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}
