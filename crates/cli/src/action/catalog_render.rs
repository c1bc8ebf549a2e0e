//! `catalog render`: any mix of bundle folders, catalog folders and images in, opm's exact
//! output out (CATALOG.md D).
//!
//! Each source is classified as opm's `renderReference` does: a folder holding both `manifests/`
//! and `metadata/` is a bundle, any other folder is a catalog (loaded, not validated), a file
//! starting with the SQLite header is an index database ([`crate::legacy::sqlite`]), anything
//! else is an image (registry reference, `oci:`, `oci-archive:`, `docker-archive:`), which is a
//! catalog when its config carries `operators.operatorframework.io.index.database.v1` (sqlite) or
//! `operators.operatorframework.io.index.configs.v1` (FBC) and a bundle
//! when it carries `operators.operatorframework.io.bundle.package.v1`. Every input then goes
//! through opm's post-processing. Nothing is written before every source has been read and
//! checked, so a failing source never leaves a partial output; several sources are serialized
//! one by one as they are finished ([`Spool`]), so memory does not grow with their number.

use super::source::{Kind, Source, UnpackedSource};
/// Why an `--opm-compat` value is not a release olmpack reproduces.
pub use crate::catalog::CompatParseError;
use crate::catalog::load;
use crate::catalog::model::DeclarativeConfig;
use crate::catalog::render::{BundleFiles, expand_image_template, finish_config, render_bundle};
/// The render options `catalog render` takes from its flags.
pub use crate::catalog::render::{MigrateLevel, OpmCompat};
/// The two output formats of catalog blobs (opm's JSON and YAML).
pub use crate::catalog::write::Format;
use crate::catalog::write::{self, spool::Spool};
use crate::location::{Location, Place};
use crate::transport::RegistryOptions;
use std::path::Path;

/// The image reference written into bundles rendered from folders.
#[derive(Debug, Clone, Default)]
pub enum BundleImage {
    /// None: `image: ""` (opm's default for bundle folders); a warning is printed.
    #[default]
    Empty,
    /// One reference, for the single bundle folder or local bundle image rendered (more than one
    /// such bundle is refused: they would all claim the same image).
    Fixed(String),
    /// A template over `{{.Package}}`, `{{.Name}}`, `{{.Version}}` (opm's
    /// `--alpha-image-ref-template`).
    Template(String),
}

/// What `catalog render` was asked for.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// `-o json|yaml`.
    pub format: Format,
    /// Image reference for bundle folders.
    pub image: BundleImage,
    /// `--migrate-level`.
    pub migrate: MigrateLevel,
    /// `--opm-compat`.
    pub compat: OpmCompat,
    /// Registry access for image sources.
    pub registry: RegistryOptions,
    /// Whether `compat` was asked for (`--opm-compat`): an sqlite database then follows it;
    /// otherwise it renders as opm v1.26 did (see [`crate::legacy::sqlite`]).
    pub compat_given: bool,
    /// Accept a catalog source (folder or image) with no olm.* blob; refused otherwise as a
    /// likely wrong path.
    pub allow_empty: bool,
}

/// The rendered output and notes for stderr.
#[derive(Debug, Default)]
pub struct RenderOutput {
    /// Everything to print, exactly as opm prints it.
    pub bytes: Vec<u8>,
    /// Warnings (empty images, skipped files), one line each.
    pub warnings: Vec<String>,
    /// Number of blobs written.
    pub blobs: usize,
}

/// Why rendering failed; the message names the source and, where known, the file.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A bundle (folder or image) could not be rendered.
    #[error("render {source_ref:?}: {message}")]
    Source {
        /// The source as given.
        source_ref: String,
        /// What went wrong.
        message: String,
    },
}

fn fail(source: &str, message: impl std::fmt::Display) -> RenderError {
    RenderError::Source {
        source_ref: source.to_string(),
        message: message.to_string(),
    }
}

/// Every source rendered and checked, ready to be written: no input can fail any more, so the
/// output can be streamed ([`PreparedRender::write_to`]) without ever leaving a partial one
/// behind because of bad input.
#[derive(Debug)]
pub struct PreparedRender {
    output: Prepared,
    /// Warnings (empty images, skipped files), one line each, for stderr before the output.
    pub warnings: Vec<String>,
}

/// The output in waiting.
#[derive(Debug)]
enum Prepared {
    /// One source: its model, written on every thread when asked.
    One(DeclarativeConfig, Format),
    /// Several: each serialized as soon as it was finished and its model dropped, so memory
    /// does not grow with the number of sources ([`Spool`]).
    Many(Spool),
}

impl PreparedRender {
    /// Number of blobs the output holds.
    pub fn blobs(&self) -> usize {
        match &self.output {
            Prepared::One(cfg, _) => write::blob_count(cfg),
            Prepared::Many(spool) => spool.len(),
        }
    }

    /// Writes the output, exactly as opm prints it, to `w` in pieces as they are ready.
    pub fn write_to<W: std::io::Write + Send>(self, w: &mut W) -> Result<(), write::WriteError> {
        match self.output {
            Prepared::One(cfg, format) => write::write_config_to(w, &cfg, format),
            Prepared::Many(spool) => spool.write_to(w),
        }
    }
}

/// Renders every source and writes them, combined, in opm's order, into memory.
pub fn render_catalog(
    sources: &[Location],
    opts: &RenderOptions,
) -> Result<RenderOutput, RenderError> {
    let mut prepared = prepare_render(sources, opts)?;
    let blobs = prepared.blobs();
    let warnings = std::mem::take(&mut prepared.warnings);
    let mut bytes = Vec::new();
    prepared
        .write_to(&mut bytes)
        .map_err(|e| fail("output", e))?;
    Ok(RenderOutput {
        bytes,
        warnings,
        blobs,
    })
}

/// Renders and checks every source (all the work that can fail on input), keeping what
/// [`PreparedRender::write_to`] needs: the model of a single source, or the serialized blobs of
/// several.
pub fn prepare_render(
    sources: &[Location],
    opts: &RenderOptions,
) -> Result<PreparedRender, RenderError> {
    let mut warnings = Vec::new();
    if let [location] = sources {
        let source = location.as_str();
        let (mut cfg, _) = render_source(location, opts, &mut warnings)?;
        finish(&mut cfg, source, opts)?;
        warn_empty_images(source, &empty_images(&cfg), &mut warnings);
        return Ok(PreparedRender {
            output: Prepared::One(cfg, opts.format),
            warnings,
        });
    }
    let spool = Spool::new(opts.format);
    let mut fixed_image_users: Vec<&str> = Vec::new();
    let mut preloaded = preload_catalogs(sources, opts, &spool);
    for (i, location) in sources.iter().enumerate() {
        let source = location.as_str();
        let (empty, took_image) = match preloaded.get_mut(i).and_then(Option::take) {
            Some(loaded) => (loaded?, false),
            None => {
                let (mut cfg, took_image) = render_source(location, opts, &mut warnings)?;
                finish(&mut cfg, source, opts)?;
                spool
                    .add(i, &cfg, crate::parallel::cores())
                    .map_err(|e| fail(source, e))?;
                (empty_images(&cfg), took_image)
            }
        };
        if took_image && matches!(opts.image, BundleImage::Fixed(_)) {
            fixed_image_users.push(source);
            if fixed_image_users.len() > 1 {
                return Err(fail(
                    source,
                    format!(
                        "--image gives one reference, but {} bundle sources would all get it ({}); use --image-template with {{{{.Package}}}}, {{{{.Name}}}} or {{{{.Version}}}} instead",
                        fixed_image_users.len(),
                        fixed_image_users.join(", ")
                    ),
                ));
            }
        }
        warn_empty_images(source, &empty, &mut warnings);
    }
    Ok(PreparedRender {
        output: Prepared::Many(spool),
        warnings,
    })
}

/// Gives the bundles of a legacy source (a package-manifest folder, an sqlite database) that
/// have no image the one `--image` / `--image-template` names, so the flags the empty-image
/// warning advises are applied there too. `--image` is one reference, so it is taken only
/// when a single bundle lacks an image; for more it is refused, naming the template flag.
/// Returns whether a bundle took `--image` (several sources may not share it).
fn fill_images(
    cfg: &mut DeclarativeConfig,
    source: &str,
    image: &BundleImage,
) -> Result<bool, RenderError> {
    let empty = cfg.bundles.iter().filter(|b| b.image.is_empty()).count();
    match image {
        BundleImage::Empty => Ok(false),
        _ if empty == 0 => Ok(false),
        BundleImage::Fixed(reference) => {
            if empty > 1 {
                return Err(fail(
                    source,
                    format!(
                        "--image gives one reference, but {empty} bundles of this source have no image; use --image-template with {{{{.Package}}}}, {{{{.Name}}}} or {{{{.Version}}}} to name each"
                    ),
                ));
            }
            for b in cfg.bundles.iter_mut().filter(|b| b.image.is_empty()) {
                b.image = reference.clone();
            }
            Ok(true)
        }
        BundleImage::Template(template) => {
            for b in cfg.bundles.iter_mut().filter(|b| b.image.is_empty()) {
                let version = b.version_text();
                b.image = expand_image_template(template, &b.package, &b.name, &version)
                    .map_err(|e| fail(source, e))?;
            }
            Ok(false)
        }
    }
}

/// One source read as `catalog render` reads it, with render's post-processing: the model
/// `catalog filter` and `catalog diff` work on, and the warnings render would print.
pub fn load_source(
    location: &Location,
    opts: &RenderOptions,
) -> Result<(DeclarativeConfig, Vec<String>), RenderError> {
    let mut warnings = Vec::new();
    let (mut cfg, _) = render_source(location, opts, &mut warnings)?;
    finish(&mut cfg, location.as_str(), opts)?;
    Ok((cfg, warnings))
}

/// [`load_source`] keeping only the packages `keep` accepts when the source is a catalog folder
/// ([`load::load_dir_keeping`]: the others never sit in memory whole; their `olm.package`
/// blobs stay, by name); any other source is loaded whole.
pub fn load_source_keeping(
    location: &Location,
    opts: &RenderOptions,
    keep: load::PackageKeep<'_>,
) -> Result<(DeclarativeConfig, Vec<String>), RenderError> {
    let Some(path) = catalog_dir(location) else {
        return load_source(location, opts);
    };
    let source = location.as_str();
    let loaded = load::load_dir_keeping(path, &load::LoadOptions::default(), keep)
        .map_err(|e| fail(source, e))?;
    let mut cfg = checked(source, loaded)?;
    finish(&mut cfg, source, opts)?;
    Ok((cfg, Vec::new()))
}

/// Names of the bundles of `cfg` that have no image.
fn empty_images(cfg: &DeclarativeConfig) -> Vec<String> {
    cfg.bundles
        .iter()
        .filter(|b| b.image.is_empty())
        .map(|b| b.name.clone())
        .collect()
}

fn warn_empty_images(source: &str, names: &[String], warnings: &mut Vec<String>) {
    for name in names {
        warnings.push(format!(
            "{source}: bundle {name:?} has an empty image; pass --image or --image-template so the catalog can pull it"
        ));
    }
}

/// Render's post-processing of one source ([`finish_config`]), then the decoded bundle objects
/// and CSV dropped: they are never written, and a folder of `olm.bundle.object` catalogs would
/// otherwise hold each manifest twice more (decoded, and the CSV copied) until the output is
/// written. A source with no olm.* blob is refused unless `allow_empty` (a bundle always has
/// one, so only catalogs can be empty).
fn finish(
    cfg: &mut DeclarativeConfig,
    source: &str,
    opts: &RenderOptions,
) -> Result<(), RenderError> {
    if !opts.allow_empty && !cfg.has_olm_blobs() {
        return Err(fail(source, crate::catalog::model::EMPTY_CATALOG));
    }
    finish_config(cfg, opts.migrate).map_err(|e| fail(source, e))?;
    for b in &mut cfg.bundles {
        b.objects = Vec::new();
        b.csv_json = None;
    }
    Ok(())
}

/// A folder source that is not a bundle folder: a catalog (opm's `renderReference` order).
fn catalog_dir(location: &Location) -> Option<&Path> {
    match location.place() {
        Place::Path(path) if super::source::path_kind(path) == Some(Kind::CatalogDir) => Some(path),
        _ => None,
    }
}

/// Renders one source; the flag says whether its bundle took its image from `opts.image`.
fn render_source(
    location: &Location,
    opts: &RenderOptions,
    warnings: &mut Vec<String>,
) -> Result<(DeclarativeConfig, bool), RenderError> {
    let source = location.as_str();
    let opened =
        super::source::open_source(location, &opts.registry).map_err(|e| fail(source, e))?;
    if let Some(image) = image_of(&opened) {
        warnings.extend(image.warnings().iter().map(|w| format!("{source}: {w}")));
    }
    match &opened {
        Source::PackageManifestDir(path) => {
            let mut cfg = crate::legacy::packagemanifest::catalog::render_dir(path)
                .map_err(|e| fail(source, e))?;
            let took = fill_images(&mut cfg, source, &opts.image)?;
            Ok((cfg, took))
        }
        Source::BundleDir(path) => {
            let files = BundleFiles::read_dir(path).map_err(|e| fail(source, e))?;
            let cfg = bundle_config(source, &files, &opts.image, opts.compat, warnings)?;
            Ok((cfg, true))
        }
        Source::CatalogDir(path) => Ok((load_catalog(source, path)?, false)),
        Source::SqliteFile(path) => {
            let mut cfg = render_database(source, path, None, opts)?;
            let took = fill_images(&mut cfg, source, &opts.image)?;
            Ok((cfg, took))
        }
        Source::DatabaseImage { file, label, .. } => {
            let mut cfg = render_database(source, file, Some(label), opts)?;
            let took = fill_images(&mut cfg, source, &opts.image)?;
            Ok((cfg, took))
        }
        Source::CatalogImage { configs, .. } => Ok((
            load_catalog_with(source, configs, &load::LoadOptions::for_image())?,
            false,
        )),
        Source::BundleImage(image) => render_bundle_image(location, image, opts, warnings),
    }
}

/// The unpacked image behind an image source.
fn image_of(source: &Source) -> Option<&UnpackedSource> {
    match source {
        Source::BundleImage(image)
        | Source::CatalogImage { image, .. }
        | Source::DatabaseImage { image, .. } => Some(image),
        _ => None,
    }
}

/// Catalog folders among several sources, loaded, finished ([`finish`]) and added to `spool`
/// in parallel (one folder per thread), each model dropped as soon as it is spooled; the names
/// of bundles without an image for each, in the order given. `None` for every other source, and
/// for all when there are fewer than two (one folder then gets every thread for its files and
/// documents).
fn preload_catalogs(
    sources: &[Location],
    render: &RenderOptions,
    spool: &Spool,
) -> Vec<Option<Result<Vec<String>, RenderError>>> {
    let mut slots: Vec<Option<Result<Vec<String>, RenderError>>> = Vec::new();
    slots.resize_with(sources.len(), || None);
    let catalogs: Vec<usize> = sources
        .iter()
        .enumerate()
        .filter(|(_, s)| catalog_dir(s).is_some())
        .map(|(i, _)| i)
        .collect();
    let jobs = crate::parallel::cores();
    if catalogs.len() < 2 || jobs < 2 {
        return slots;
    }
    let opts = load::LoadOptions {
        jobs: Some(1),
        ..load::LoadOptions::default()
    };
    let loaded = crate::parallel::map_indexed(catalogs.len(), jobs, None, |n| {
        let i = catalogs.get(n).copied()?;
        let location = sources.get(i)?;
        let (source, path) = (location.as_str(), catalog_dir(location)?);
        let done = load_catalog_with(source, path, &opts).and_then(|mut cfg| {
            finish(&mut cfg, source, render)?;
            spool.add(i, &cfg, 1).map_err(|e| fail(source, e))?;
            Ok(empty_images(&cfg))
        });
        Some((i, done))
    });
    for (i, result) in loaded.into_iter().flatten() {
        if let Some(slot) = slots.get_mut(i) {
            *slot = Some(result);
        }
    }
    slots
}

fn load_catalog(source: &str, path: &Path) -> Result<DeclarativeConfig, RenderError> {
    load_catalog_with(source, path, &load::LoadOptions::default())
}

fn load_catalog_with(
    source: &str,
    path: &Path,
    opts: &load::LoadOptions,
) -> Result<DeclarativeConfig, RenderError> {
    let loaded = load::load_dir_with(path, opts).map_err(|e| fail(source, e))?;
    checked(source, loaded)
}

/// The loaded catalog, or its first error (file and line) as a render error.
fn checked(source: &str, loaded: load::Loaded) -> Result<DeclarativeConfig, RenderError> {
    if let Some(d) = loaded
        .diagnostics
        .iter()
        .find(|d| d.severity == crate::findings::Severity::Error)
    {
        let at = match (&d.file, d.line) {
            (Some(f), Some(l)) => format!("{f}:{l}: "),
            (Some(f), None) => format!("{f}: "),
            _ => String::new(),
        };
        return Err(fail(source, format!("{at}{}", d.message)));
    }
    Ok(loaded.config)
}

fn bundle_config(
    source: &str,
    files: &BundleFiles,
    image: &BundleImage,
    compat: OpmCompat,
    warnings: &mut Vec<String>,
) -> Result<DeclarativeConfig, RenderError> {
    let image_ref = match image {
        BundleImage::Empty => String::new(),
        BundleImage::Fixed(r) => r.clone(),
        BundleImage::Template(t) => {
            let probe = render_bundle(files, "").map_err(|e| fail(source, e))?;
            expand_image_template(t, &probe.bundle.package, &probe.bundle.name, &probe.version)
                .map_err(|e| fail(source, e))?
        }
    };
    one_bundle(source, files, &image_ref, compat, warnings)
}

fn one_bundle(
    source: &str,
    files: &BundleFiles,
    image_ref: &str,
    compat: OpmCompat,
    warnings: &mut Vec<String>,
) -> Result<DeclarativeConfig, RenderError> {
    let (bundle, mut notes) = super::bundle_source::render_bundle_files(files, image_ref, compat)
        .map_err(|e| fail(source, e))?;
    warnings.append(&mut notes);
    let mut cfg = DeclarativeConfig::default();
    cfg.bundles.push(bundle);
    Ok(cfg)
}

/// Renders a bundle image. One from a registry keeps the reference as given (as opm does); one
/// from a local transport (`oci:`, `oci-archive:`, `docker-archive:`) has no pullable
/// reference, so it gets `--image` / `--image-template` like a folder, or an empty image (with
/// the same warning).
fn render_bundle_image(
    location: &Location,
    image: &UnpackedSource,
    opts: &RenderOptions,
    warnings: &mut Vec<String>,
) -> Result<(DeclarativeConfig, bool), RenderError> {
    let source = location.as_str();
    let mut files = BundleFiles::read_dir(image.root()).map_err(|e| fail(source, e))?;
    files.source = source.to_string();
    if location.is_local() {
        let cfg = bundle_config(source, &files, &opts.image, opts.compat, warnings)?;
        return Ok((cfg, true));
    }
    Ok((
        one_bundle(source, &files, source, opts.compat, warnings)?,
        false,
    ))
}

/// An sqlite index database (a file or the one inside an index image) rendered as opm does.
/// Its bundle objects keep the database's order (opm v1.26, the release of the sqlite era)
/// unless `--opm-compat` names a release that sorts them (1.28 and later).
fn render_database(
    source: &str,
    file: &Path,
    shown: Option<&str>,
    opts: &RenderOptions,
) -> Result<DeclarativeConfig, RenderError> {
    let compat = opts.compat_given.then_some(opts.compat);
    crate::legacy::sqlite::render_database(file, compat).map_err(|e| {
        // The error names the file; for a file source that is the source itself, for an image
        // a temporary path, so the file is named as the image label names it instead.
        let message = e.to_string();
        let at = format!("{}: ", file.display());
        let message = message.strip_prefix(&at).unwrap_or(&message);
        match shown {
            Some(label) => fail(source, format!("{label}: {message}")),
            None => fail(source, message),
        }
    })
}
