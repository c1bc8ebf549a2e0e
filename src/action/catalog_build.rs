//! `catalog build` and `catalog generate-dockerfile`: a file-based catalog folder as an image.
//!
//! The image is the folder as one reproducible layer under `/configs` (see
//! [`crate::image::extend::folder_layer`]) with the label
//! `operators.operatorframework.io.index.configs.v1=/configs`, and either
//! - nothing else (no `--base`): what OLM v1 (catalogd) reads, and what OLM v0 serves with
//!   `spec.grpcPodConfig.extractContent` (CATALOG.md F.2, F.3); or
//! - a base image's layers, reused as they are, with `ENTRYPOINT ["/bin/opm"]` and
//!   `CMD ["serve", "/configs"]` and the base's environment, user and working folder kept.
//!
//! **Serve cache.** With a base (or `--cache`), a second layer carries opm's JSON serve cache
//! under `/tmp/cache` (or `--cache-dir`) and CMD gets `--cache-dir=…`, as `opm generate
//! dockerfile` images have: opm then enforces the cache's integrity at start and skips
//! rebuilding it (CATALOG.md F.2, SERVE.md A.3). olmpack cannot run opm, so it writes the cache
//! itself ([`crate::serve::cache`]) with the digest opm recomputes over the catalog folder as
//! this image holds it; `--no-cache` keeps the old image (opm rebuilds its cache at every start).
//! The cache is owned as a `RUN` step in the base would own it ([`crate::serve::owner`]): the
//! base's user and group, so a pod that runs it in its own group can still read it.
//!
//! A multi-platform base gives one image per platform (or per `--platform`), all sharing the
//! same configs layer blob, under one index.
//!
//! Base layers from a registry stay there ([`crate::image::BlobSource::Remote`]): a push to the
//! same registry mounts or skips them; they are downloaded only for a local output or another
//! registry ([`sink::deliver`], the delivery path `bundle build` shares).

use crate::findings::Report;
use crate::image::config::Platform;
use crate::image::extend::{
    ConfigEdit, extend_image, folder_layer, index_of, platform_json, scratch_image,
};
use crate::image::{Artifact, BuildError, Format, Image, ImageIndex};
use crate::location::Location;
use crate::transport::sink::{Deliverable, Delivery, DeliveryError};
use crate::transport::source::{OpenedImage, open};
use crate::transport::{RegistryOptions, TransportError, sink};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod from_image;
pub use from_image::{SourceLayer, build_from_image};

/// The label OLM v0 and v1 read to find the catalog inside the image (defined once, in
/// [`crate::catalog`], for build and render).
pub use crate::catalog::CONFIGS_LABEL;
/// Where the catalog goes by default (what opm's Dockerfile uses and OLM expects).
pub const DEFAULT_CONFIGS_DIR: &str = "/configs";
/// The entrypoint `opm generate dockerfile` sets on a catalog image with a base.
pub const OPM_ENTRYPOINT: &str = "/bin/opm";
/// The default base and builder of `opm generate dockerfile`.
pub const DEFAULT_OPM_IMAGE: &str = "quay.io/operator-framework/opm:latest";

/// Why a catalog image could not be built or delivered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogBuildError {
    /// The catalog folder is missing or not a folder.
    #[error("{} is not a catalog folder: {reason}", path.display())]
    NotAFolder {
        /// The path given.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// `--configs-dir` is not an absolute, clean path below `/`.
    #[error(
        "invalid --configs-dir {0:?}: expected an absolute path such as /configs, without .. or //"
    )]
    ConfigsDir(String),
    /// A `--label` sets the configs label to something else than `--configs-dir`.
    #[error(
        "--label {CONFIGS_LABEL}={value} contradicts --configs-dir {configs_dir}; drop the label (it is set from --configs-dir)"
    )]
    LabelConflict {
        /// The label's value.
        value: String,
        /// The configs folder.
        configs_dir: String,
    },
    /// The base has no image for a platform that was asked for.
    #[error("the base {base} has no image for platform {platform} (it has: {available})")]
    BasePlatform {
        /// The base as given.
        base: String,
        /// The platform asked for.
        platform: String,
        /// What the base offers.
        available: String,
    },
    /// The base index lists no image with a platform.
    #[error("the base {0} is an index without any platform image")]
    EmptyBase(String),
    /// The base could not be opened (not an image, unreachable, refused).
    #[error("cannot read the base image {base}: {source}")]
    Base {
        /// The base as given.
        base: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// Writing the layer or assembling the image failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Fetching base layers or pushing failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// opm's serve cache could not be built.
    #[error(transparent)]
    Cache(#[from] crate::serve::cache::CacheError),
    /// The owner of the serve cache (the base's user) could not be found.
    #[error("{base}: {source}")]
    BaseUser {
        /// The base as given.
        base: String,
        /// Why.
        #[source]
        source: crate::serve::owner::OwnerError,
    },
    /// The catalog image given as source cannot be rebuilt (not a catalog image, platforms
    /// holding different catalogs, a flag that does not apply to it).
    #[error("{source_name}: {reason}")]
    ImageSource {
        /// The source as given.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// The catalog image given as source could not be opened.
    #[error("cannot read the catalog image {source_name}: {source}")]
    Source {
        /// The source as given.
        source_name: String,
        /// Why.
        #[source]
        source: TransportError,
    },
    /// A layer of the catalog image given as source could not be read or rewritten.
    #[error("{source_name}: {source}")]
    SourceLayer {
        /// The source as given.
        source_name: String,
        /// Why.
        #[source]
        source: crate::image::ImageError,
    },
    /// A temp folder could not be created.
    #[error("cannot create a temp folder in {}: {source}", path.display())]
    Spool {
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What to build, besides the folder.
#[derive(Debug, Clone, Default)]
pub struct CatalogBuildOptions {
    /// Where the catalog goes in the image (default `/configs`).
    pub configs_dir: Option<String>,
    /// Base image source (registry, `oci:`, `oci-archive:`, `docker-archive:`); `None` =
    /// scratch.
    pub base: Option<String>,
    /// The manifest digest a signature policy verified for `base`: the only one read as the
    /// base ([`Location::pinned`]), whatever its tag names by then.
    pub base_verified: Option<String>,
    /// Platforms to build; empty = every platform of the base (linux/amd64 for scratch or a
    /// single-image base's own).
    pub platforms: Vec<Platform>,
    /// Extra labels.
    pub labels: BTreeMap<String, String>,
    /// mtime of every layer entry and the config's `created` (`SOURCE_DATE_EPOCH`, else 0).
    pub source_date_epoch: Option<u64>,
    /// How to reach the base's registry.
    pub registry: RegistryOptions,
    /// Whether to ship opm's serve cache (default: with a base).
    pub serve_cache: crate::serve::cache::ServeCache,
    /// Where the cache goes in the image (default `/tmp/cache`).
    pub cache_dir: Option<String>,
    /// Which of opm's cache formats (default JSON).
    pub cache_format: crate::serve::cache::CacheFormat,
}

/// The built image or index.
#[derive(Debug)]
pub enum BuiltArtifact {
    /// One platform.
    Image(Image),
    /// Several platforms.
    Index(ImageIndex),
}

/// A built catalog image; its configs layer (and fetched base layers) live in `spool` until
/// this is dropped.
pub struct BuiltCatalog {
    /// The image or index.
    pub artifact: BuiltArtifact,
    /// Things the user should know (whiteout files skipped...).
    pub warnings: Vec<String>,
    /// The configs layer's digest (shared by every platform image).
    pub configs_layer: String,
    /// The serve cache shipped, if any (its layer follows the configs layer).
    pub serve_cache: Option<crate::serve::cache::CacheSummary>,
    /// Who owns the serve cache's entries (one per distinct owner among the platform images).
    pub cache_owners: Vec<crate::serve::owner::CacheOwner>,
    /// For a catalog image source: what became of each of its layers (kept, dropped,
    /// rewritten without the catalog and cache); empty for a folder.
    pub source_layers: Vec<SourceLayer>,
    /// Spool folder.
    pub spool: tempfile::TempDir,
    /// The opened bases, kept as long as the image: an archive base's layers are files in its
    /// extracted folder.
    _bases: Vec<OpenedImage>,
}

impl std::fmt::Debug for BuiltCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltCatalog")
            .field("artifact", &self.artifact)
            .field("configs_layer", &self.configs_layer)
            .finish_non_exhaustive()
    }
}

impl BuiltCatalog {
    /// The value sinks take.
    pub fn artifact(&self) -> Artifact<'_> {
        match &self.artifact {
            BuiltArtifact::Image(i) => Artifact::Image(i),
            BuiltArtifact::Index(i) => Artifact::Index(i),
        }
    }

    /// The top-level digest (manifest or index) and size.
    pub fn digest(&self) -> (&str, u64) {
        let d = &self.artifact().top().descriptor;
        (d.digest.as_str(), d.size)
    }

    /// Has every base layer still in a registry fetch itself into the spool (verified) and
    /// points the image's blobs at the files, for a caller that writes the image somewhere
    /// else than through [`sink::deliver`] and wants every byte here first (a sink does not
    /// need it: [`sink::write_local`] and a push fetch remote blobs themselves).
    pub fn fetch_base_layers(&mut self) -> Result<(), TransportError> {
        if !sink::has_remote_blobs(self.artifact()) {
            return Ok(());
        }
        let dir = self.spool.path().join("base");
        std::fs::create_dir_all(&dir).map_err(|e| TransportError::io("create", &dir, e))?;
        self.artifact = match sink::fetch_remote(self.artifact(), &dir)? {
            crate::image::ImageOrIndex::Image(i) => BuiltArtifact::Image(i),
            crate::image::ImageOrIndex::Index(i) => BuiltArtifact::Index(i),
        };
        Ok(())
    }
}

impl Deliverable for BuiltCatalog {
    fn artifact(&self) -> Artifact<'_> {
        BuiltCatalog::artifact(self)
    }
}

/// Checks `--configs-dir` and returns it without its trailing `/`.
pub fn configs_dir(value: &str) -> Result<String, CatalogBuildError> {
    let err = || CatalogBuildError::ConfigsDir(value.to_string());
    let trimmed = value.trim_end_matches('/');
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Err(err());
    };
    if rest.is_empty()
        || rest
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Err(err());
    }
    Ok(trimmed.to_string())
}

fn spool() -> Result<tempfile::TempDir, CatalogBuildError> {
    let dir = tempfile::Builder::new()
        .prefix("olmpack-catalog-")
        .tempdir()
        .map_err(|source| CatalogBuildError::Spool {
            path: std::env::temp_dir(),
            source,
        })?;
    crate::interrupt::watch(dir.path());
    Ok(dir)
}

/// Builds the catalog image of `dir` (validation is the caller's first step). Nothing is
/// written outside a temp spool; sinks take the result.
pub fn build(dir: &Path, opts: &CatalogBuildOptions) -> Result<BuiltCatalog, CatalogBuildError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(CatalogBuildError::NotAFolder {
                path: dir.to_path_buf(),
                reason: "it is a file".into(),
            });
        }
        Err(e) => {
            return Err(CatalogBuildError::NotAFolder {
                path: dir.to_path_buf(),
                reason: e.to_string(),
            });
        }
    }
    let configs = configs_dir(opts.configs_dir.as_deref().unwrap_or(DEFAULT_CONFIGS_DIR))?;
    let mut labels = opts.labels.clone();
    match labels.get(CONFIGS_LABEL) {
        Some(v) if v.trim_end_matches('/') != configs => {
            return Err(CatalogBuildError::LabelConflict {
                value: v.clone(),
                configs_dir: configs,
            });
        }
        _ => {
            labels.insert(CONFIGS_LABEL.to_string(), configs.clone());
        }
    }
    let epoch = opts.source_date_epoch.unwrap_or(0);
    // The base first: a wrong base or platform fails before the folder is read.
    let (bases, base_was_index) = match &opts.base {
        Some(base) => {
            let wrap = |source: TransportError| CatalogBuildError::Base {
                base: base.to_string(),
                source,
            };
            let location = Location::parse(base).map_err(|e| wrap(e.into()))?;
            let location = match &opts.base_verified {
                Some(digest) => location.pinned(digest),
                None => location,
            };
            open_bases(&location, &opts.platforms, &opts.registry)?
        }
        None => (Vec::new(), false),
    };
    let spool = spool()?;
    let (layer, whiteouts) = folder_layer(
        dir,
        configs.trim_start_matches('/'),
        epoch,
        &spool.path().join("configs.tar.gz"),
    )?;
    let cache_dir = crate::serve::cache::cache_dir_in_image(
        opts.cache_dir
            .as_deref()
            .unwrap_or(crate::serve::cache::DEFAULT_CACHE_DIR),
        &configs,
    )?;
    // The cache is written once; each platform image gets it as a layer owned by that
    // platform's base user (one layer per distinct owner), as a RUN step there would own it.
    let mut layer_of: Vec<usize> = Vec::new();
    let cache_layers: Vec<crate::serve::cache::CacheLayer> =
        if opts.serve_cache.wanted(opts.base.is_some()) {
            let files = crate::serve::cache::cache_files_as(dir, spool.path(), opts.cache_format)?;
            let owners = if bases.is_empty() {
                vec![crate::serve::owner::CacheOwner::root(
                    "a scratch image has no user, so root",
                )]
            } else {
                let base_name = opts.base.clone().unwrap_or_default();
                bases
                    .iter()
                    .map(|(b, _)| {
                        crate::serve::owner::base_cache_owner(b).map_err(|source| {
                            CatalogBuildError::BaseUser {
                                base: base_name.clone(),
                                source,
                            }
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?
            };
            let mut layers: Vec<crate::serve::cache::CacheLayer> = Vec::new();
            for owner in owners {
                let same = |l: &crate::serve::cache::CacheLayer| {
                    (l.owner.uid, l.owner.gid) == (owner.uid, owner.gid)
                };
                match layers.iter().position(same) {
                    Some(at) => layer_of.push(at),
                    None => {
                        layer_of.push(layers.len());
                        layers.push(files.layer(&cache_dir, epoch, spool.path(), &owner)?);
                    }
                }
            }
            layers
        } else {
            Vec::new()
        };
    let cache_edit = ConfigEdit {
        labels: BTreeMap::new(),
        entrypoint: None,
        cmd: None,
        created_epoch: epoch,
        created_by: format!("olmpack catalog build: opm serve cache at {cache_dir}"),
    };
    // The cache layer for the `i`-th base (scratch: the only one).
    let with_cache = |image: Image, i: usize| -> Result<Image, CatalogBuildError> {
        match layer_of.get(i).and_then(|at| cache_layers.get(*at)) {
            Some(c) => Ok(extend_image(&image, &c.layer, &cache_edit)?),
            None => Ok(image),
        }
    };
    let mut warnings: Vec<String> = whiteouts
        .into_iter()
        .map(|w| {
            format!(
                "{} is an OCI whiteout file; left out of the image",
                w.path.display()
            )
        })
        .collect();
    if let (Some(base), Some((first, _))) = (&opts.base, bases.first())
        && !runs_opm(first)
    {
        warnings.push(format!(
            "the base {base} does not look like an opm image (its config runs {}, not {OPM_ENTRYPOINT}): the catalog image runs `{OPM_ENTRYPOINT} serve {configs}` and fails to start unless the base has {OPM_ENTRYPOINT}; use an opm image such as {DEFAULT_OPM_IMAGE}, or no --base for OLM v1 and extractContent (only the base's config was checked, not its files)",
            match first.runnable() {
                r if r.is_empty() => "nothing".to_string(),
                r => r.join(" and "),
            }
        ));
    }
    let mut images: Vec<(Image, serde_json::Value)> = Vec::new();
    let mut opened_bases = Vec::new();
    if bases.is_empty() {
        let platforms = if opts.platforms.is_empty() {
            vec![Platform::default()]
        } else {
            dedup(&opts.platforms)
        };
        for p in &platforms {
            images.push((
                with_cache(scratch_image(&layer, &labels, p, Format::Oci, epoch), 0)?,
                platform_json(p),
            ));
        }
    } else {
        let edit = ConfigEdit {
            labels: labels.clone(),
            entrypoint: Some(vec![OPM_ENTRYPOINT.to_string()]),
            cmd: Some(crate::serve::cache::serve_cmd(
                &configs,
                (!cache_layers.is_empty()).then_some(cache_dir.as_str()),
            )),
            created_epoch: epoch,
            created_by: format!("olmpack catalog build: catalog at {configs}"),
        };
        for (i, (base, platform)) in bases.into_iter().enumerate() {
            let image = with_cache(extend_image(&base.to_image(), &layer, &edit)?, i)?;
            images.push((image, platform));
            opened_bases.push(base);
        }
    }
    // One image unless several platforms are wanted: several --platform, or an index base
    // without exactly one --platform.
    let requested = dedup(&opts.platforms).len();
    let as_index = if opts.base.is_none() {
        requested > 1
    } else {
        base_was_index && requested != 1
    };
    let artifact = if as_index {
        BuiltArtifact::Index(index_of(images))
    } else {
        match images.len() {
            1 => match images.pop() {
                Some((image, _)) => BuiltArtifact::Image(image),
                None => return Err(CatalogBuildError::EmptyBase(String::new())),
            },
            _ => BuiltArtifact::Index(index_of(images)),
        }
    };
    Ok(BuiltCatalog {
        artifact,
        warnings,
        configs_layer: layer.digest,
        serve_cache: cache_layers.first().map(|c| c.summary.clone()),
        cache_owners: cache_layers.into_iter().map(|c| c.owner).collect(),
        source_layers: Vec::new(),
        spool,
        _bases: opened_bases,
    })
}

/// Whether a base's config starts opm (`ENTRYPOINT ["/bin/opm"]`, as every opm image and
/// `opm generate dockerfile` image has). A warning, not an error, when it does not: checking
/// for the file itself would download the base's layers, which a push to the base's registry
/// never needs, and a base may hold opm under a config of its own.
fn runs_opm(base: &OpenedImage) -> bool {
    let config = base.config_json();
    let first = |key: &str| {
        config
            .pointer(&format!("/config/{key}/0"))
            .and_then(|v| v.as_str().map(str::to_string))
    };
    first("Entrypoint")
        .or_else(|| first("Cmd"))
        .is_some_and(|program| program == "opm" || program.ends_with("/opm"))
}

fn dedup(platforms: &[Platform]) -> Vec<Platform> {
    let mut out: Vec<Platform> = Vec::new();
    for p in platforms {
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

/// Opens the base: every platform image wanted, each with its index `platform` object.
fn open_bases(
    location: &Location,
    platforms: &[Platform],
    registry: &RegistryOptions,
) -> Result<(Vec<(OpenedImage, serde_json::Value)>, bool), CatalogBuildError> {
    let base = location.as_str();
    let wrap = |source: TransportError| CatalogBuildError::Base {
        base: base.to_string(),
        source,
    };
    let opened = match open(location, registry).map_err(wrap)?.into_image() {
        Ok(image) => {
            let own: Option<Platform> = image.platform().parse().ok();
            for p in platforms {
                let matches = own.as_ref().is_some_and(|o| {
                    o.os == p.os
                        && o.architecture == p.architecture
                        && (p.variant.is_none() || p.variant == o.variant)
                });
                if !matches {
                    return Err(CatalogBuildError::BasePlatform {
                        base: base.to_string(),
                        platform: p.to_string(),
                        available: image.platform(),
                    });
                }
            }
            let pj = match &own {
                Some(p) => platform_json(p),
                None => platform_json(&Platform::default()),
            };
            return Ok((vec![(image, pj)], false));
        }
        Err(index) => index,
    };
    let crate::image::ImageOrIndex::Index(index) = &opened.value else {
        return Err(CatalogBuildError::EmptyBase(base.to_string()));
    };
    let image_error = |e: crate::image::ImageError| wrap(e.into());
    let all = index.entries().map_err(image_error)?;
    let available = all
        .iter()
        .filter_map(|e| e.platform.as_ref().map(ToString::to_string))
        .collect::<Vec<_>>()
        .join(", ");
    let entries: Vec<_> = if platforms.is_empty() {
        let mut seen: Vec<Platform> = Vec::new();
        all.into_iter()
            .filter(|e| {
                e.platform.as_ref().is_some_and(|p| {
                    p.os != "unknown" && !seen.contains(p) && {
                        seen.push(p.clone());
                        true
                    }
                })
            })
            .collect()
    } else {
        let mut chosen = Vec::new();
        for p in dedup(platforms) {
            let entry = index.entry_for(&p).map_err(image_error)?.ok_or_else(|| {
                CatalogBuildError::BasePlatform {
                    base: base.to_string(),
                    platform: p.to_string(),
                    available: available.clone(),
                }
            })?;
            chosen.push(entry);
        }
        chosen
    };
    if entries.is_empty() {
        return Err(CatalogBuildError::EmptyBase(base.to_string()));
    }
    let mut out = Vec::new();
    for e in entries {
        let image = opened.image(&e.descriptor).map_err(wrap)?;
        let pj = e
            .platform_json
            .clone()
            .or_else(|| e.platform.as_ref().map(platform_json))
            .unwrap_or_else(|| platform_json(&Platform::default()));
        out.push((image, pj));
    }
    Ok((out, true))
}

/// A whole `catalog build` run: the folder, what to build, whether to validate first, where
/// the image goes and where the digest is recorded.
#[derive(Debug, Clone, Default)]
pub struct CatalogBuildRun {
    /// The catalog folder.
    pub dir: PathBuf,
    /// What to build.
    pub options: CatalogBuildOptions,
    /// Check the catalog with every `catalog validate` rule first; errors stop the run before
    /// anything is built or written, warnings do not.
    pub validate: bool,
    /// Build a catalog with no olm.* blob (refused by validation otherwise, as a likely wrong
    /// path).
    pub allow_empty: bool,
    /// Where the image goes, and the file that receives its digest.
    pub delivery: Delivery,
    /// `--filter FILE`: filter the folder's catalog first (as `catalog filter --config`
    /// does, checked the same way) and build the image from what remains, so a filtered
    /// image never needs a hand-written intermediate folder.
    pub filter: Option<crate::action::catalog_filter::FilterOptions>,
    /// A catalog image to rebuild instead of the folder `dir` ([`build_from_image`]: its base
    /// layers kept, its catalog replaced by the filtered one, its serve cache regenerated);
    /// needs `filter`.
    pub image: Option<Location>,
    /// `--opm-compat`: the opm release that will load the catalog; `None` = the one the base
    /// image's tag names (`.../opm:v1.26.5`), if any. Validation then reports what that opm
    /// cannot load (`catalog/opm-load`).
    pub opm_compat: Option<crate::catalog::OpmCompat>,
}

impl CatalogBuildRun {
    /// The opm that will load the catalog: `--opm-compat`, else the one `--base` names.
    pub fn target_opm(&self) -> Option<crate::catalog::OpmCompat> {
        self.opm_compat.or_else(|| {
            self.options
                .base
                .as_deref()
                .and_then(crate::catalog::OpmCompat::named_by_image)
        })
    }
}

/// What a run reports while it goes, in order, so a front end can show it as it happens.
#[derive(Debug)]
pub enum CatalogBuildEvent<'a> {
    /// The validation report, when it has findings (given before anything is built).
    Findings(&'a Report),
    /// Something the user should know about the built image (a skipped whiteout file...).
    Warning(&'a str),
}

/// How a run ended when nothing failed.
#[derive(Debug)]
pub enum CatalogBuildOutcome {
    /// Validation found errors (already given as [`CatalogBuildEvent::Findings`]): nothing was
    /// built or written.
    Invalid,
    /// The image was built and delivered, and the digest file written.
    Built(CatalogBuildResult),
}

/// What was built and where it went.
#[derive(Debug, Clone)]
pub struct CatalogBuildResult {
    /// The top-level digest (manifest, or index of a multi-platform image).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// The configs layer's digest.
    pub configs_layer: String,
    /// Layer count of a single image, or `None` for an index.
    pub layers: Option<usize>,
    /// Platform count of an index, or `None` for a single image.
    pub platforms: Option<usize>,
    /// `REF@sha256:…` for every tag pushed.
    pub pushed: Vec<String>,
    /// The serve cache shipped, if any.
    pub serve_cache: Option<crate::serve::cache::CacheSummary>,
    /// Who owns the serve cache's entries, and why.
    pub cache_owners: Vec<crate::serve::owner::CacheOwner>,
    /// For a catalog image source: what became of each of its layers.
    pub source_layers: Vec<SourceLayer>,
}

/// Why a `catalog build` run failed, with the step that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogBuildRunError {
    /// The options are unusable (`--configs-dir`...), before anything was read.
    #[error(transparent)]
    Options(Box<CatalogBuildError>),
    /// SOURCE is another kind of source (a bundle folder, a package-manifest package, an
    /// sqlite database): the message names the kind and the command that reads it.
    #[error("{0}")]
    NotACatalog(String),
    /// The catalog could not be validated (not loadable at all).
    #[error("cannot validate {}", dir.display())]
    Validate {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<crate::catalog::load::LoadError>,
    },
    /// The image could not be built.
    #[error("cannot build {}", dir.display())]
    Build {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<CatalogBuildError>,
    },
    /// The image could not be written or pushed, or its digest recorded.
    #[error(transparent)]
    Deliver(#[from] DeliveryError),
    /// `--filter` could not be applied (configuration, catalog, or a result that would not
    /// validate).
    #[error("cannot filter {}", dir.display())]
    Filter {
        /// The catalog folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Box<crate::action::catalog_filter::FilterCatalogError>,
    },
}

/// Filters the catalog folder `dir` with `opts` into a new folder in `spool` (one file per
/// package, as `catalog filter --output-dir` writes it) and returns that folder and the
/// filter's warnings. A catalog image as source goes through [`from_image`] instead, which
/// calls [`filter_folder_with`] on the catalog it takes out of the image.
pub fn filter_folder(
    dir: &Path,
    opts: &crate::action::catalog_filter::FilterOptions,
    spool: &Path,
) -> Result<(PathBuf, Vec<String>), CatalogBuildRunError> {
    use crate::action::catalog_filter::{FilterCatalogError, read_config};
    let wrap = |e: FilterCatalogError| CatalogBuildRunError::Filter {
        dir: dir.to_path_buf(),
        source: Box::new(e),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => {
            return Err(CatalogBuildRunError::Build {
                dir: dir.to_path_buf(),
                source: Box::new(CatalogBuildError::NotAFolder {
                    path: dir.to_path_buf(),
                    reason: "--filter takes a catalog folder or a catalog image".into(),
                }),
            });
        }
    }
    let fc = read_config(opts).map_err(|e| wrap(e.into()))?;
    let load = crate::catalog::load::LoadOptions::default();
    filter_folder_with(dir, &fc, opts.format, spool, dir, &load)
}

/// [`filter_folder`] with the configuration already read (an oc-mirror
/// `ImageSetConfiguration` entry a caller mapped itself, say); `shown` names the source in
/// errors (the folder, or the image the catalog came from); `load` says how the folder is read
/// (confined to it when it came out of an image).
pub fn filter_folder_with(
    dir: &Path,
    fc: &crate::catalog::filter::config::FilterConfig,
    format: crate::catalog::write::Format,
    spool: &Path,
    shown: &Path,
    load: &crate::catalog::load::LoadOptions,
) -> Result<(PathBuf, Vec<String>), CatalogBuildRunError> {
    use crate::action::catalog_filter::{FilterCatalogError, filter_config, write_dir};
    let wrap = |e: FilterCatalogError| CatalogBuildRunError::Filter {
        dir: shown.to_path_buf(),
        source: Box::new(e),
    };
    let loaded = crate::catalog::load::load_dir_with(dir, load).map_err(|source| {
        CatalogBuildRunError::Validate {
            dir: shown.to_path_buf(),
            source: Box::new(source),
        }
    })?;
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::findings::Severity::Error)
        .map(|d| format!("{}[{}] {}", d.severity, d.rule.id(), d.message))
        .collect();
    if !errors.is_empty() {
        return Err(wrap(FilterCatalogError::Invalid(errors.join("\n"))));
    }
    let out = filter_config(loaded.config, fc, format).map_err(wrap)?;
    let target = spool.join("filtered");
    write_dir(&target, &out.config, format).map_err(wrap)?;
    Ok((target, out.warnings))
}

/// Runs `catalog build` as one call: validate (unless asked not to), build, then deliver
/// through [`sink::deliver`] (digest file staged, push, local output, digest file in place),
/// so a failure leaves no partial output.
pub fn run(
    run: &CatalogBuildRun,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<CatalogBuildOutcome, CatalogBuildRunError> {
    if let Some(value) = &run.options.configs_dir {
        configs_dir(value).map_err(|e| CatalogBuildRunError::Options(Box::new(e)))?;
    }
    // Every local output is checked before the catalog is read or a base is fetched.
    sink::check_outputs(&run.delivery)?;
    // A bundle folder (or another local kind) would otherwise fail with a page of
    // missing-schema errors about its manifests: name the kind, and the command that reads it.
    if run.image.is_none()
        && let Some(super::source::NotACatalog::Local(_)) = super::source::not_a_catalog(&run.dir)
        && let Some(message) = super::catalog_validate::not_a_catalog(&run.dir)
    {
        return Err(CatalogBuildRunError::NotACatalog(format!(
            "{message}; `olmpack catalog build` takes a catalog folder"
        )));
    }
    if let Some(image) = &run.image {
        return run_image(run, image, on_event);
    }
    // With --filter, the image is built from the filtered catalog, kept in a spool folder
    // until the run ends.
    let filtered_spool;
    let dir = match &run.filter {
        Some(f) => {
            filtered_spool = spool().map_err(|e| CatalogBuildRunError::Options(Box::new(e)))?;
            let (filtered, warnings) = filter_folder(&run.dir, f, filtered_spool.path())?;
            for w in &warnings {
                on_event(CatalogBuildEvent::Warning(w));
            }
            filtered
        }
        None => run.dir.clone(),
    };
    let dir = &dir;
    // A folder that cannot be read is left to the build, which names it. A filtered catalog
    // was already checked with every rule by the filter (which drops the findings filtering
    // causes by design: a kept entry replacing a bundle left out), so it is not checked twice.
    if run.validate && run.filter.is_none() && dir.is_dir() {
        let mut report =
            crate::validate::catalog::validate_dir_for(dir, &Default::default(), run.target_opm())
                .map_err(|source| CatalogBuildRunError::Validate {
                    dir: run.dir.clone(),
                    source: Box::new(source),
                })?;
        if run.allow_empty {
            report
                .diagnostics
                .retain(|d| d.rule != crate::findings::Rule::CatalogEmpty);
        }
        if !report.diagnostics.is_empty() {
            on_event(CatalogBuildEvent::Findings(&report));
        }
        if report.has_errors() {
            return Ok(CatalogBuildOutcome::Invalid);
        }
    }
    let built = build(dir, &run.options).map_err(|source| CatalogBuildRunError::Build {
        dir: run.dir.clone(),
        source: Box::new(source),
    })?;
    deliver_built(built, run, on_event)
}

/// [`run`] for a catalog image source: filter and rebuild ([`build_from_image`]), then
/// deliver as a folder build is delivered.
fn run_image(
    run: &CatalogBuildRun,
    image: &Location,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<CatalogBuildOutcome, CatalogBuildRunError> {
    let shown = PathBuf::from(image.as_str());
    let Some(filter) = &run.filter else {
        return Err(CatalogBuildRunError::Build {
            dir: shown,
            source: Box::new(CatalogBuildError::ImageSource {
                source_name: image.as_str().to_string(),
                reason:
                    "a catalog image as source needs --filter FILE (a folder is built as it is)"
                        .into(),
            }),
        });
    };
    let fc = crate::action::catalog_filter::read_config(filter).map_err(|e| {
        CatalogBuildRunError::Filter {
            dir: shown.clone(),
            source: Box::new(e.into()),
        }
    })?;
    let built = build_from_image(image, &fc, filter.format, &run.options)?;
    deliver_built(built, run, on_event)
}

/// The last step of [`run`] for folder and image sources alike: warnings reported, the result
/// delivered where the run asks, and what was built summed up.
fn deliver_built(
    mut built: BuiltCatalog,
    run: &CatalogBuildRun,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<CatalogBuildOutcome, CatalogBuildRunError> {
    for w in &built.warnings {
        on_event(CatalogBuildEvent::Warning(w));
    }
    let (digest, size) = {
        let (d, s) = built.digest();
        (d.to_string(), s)
    };
    let reports = sink::deliver(&mut built, &run.delivery, &run.options.registry)?;
    let (layers, platforms) = match &built.artifact {
        BuiltArtifact::Image(i) => (Some(i.layers.len()), None),
        BuiltArtifact::Index(x) => (None, Some(x.images.len())),
    };
    Ok(CatalogBuildOutcome::Built(CatalogBuildResult {
        digest,
        size,
        configs_layer: built.configs_layer.clone(),
        layers,
        platforms,
        pushed: reports.into_iter().flat_map(|r| r.refs).collect(),
        serve_cache: built.serve_cache.clone(),
        cache_owners: built.cache_owners.clone(),
        source_layers: std::mem::take(&mut built.source_layers),
    }))
}

/// Why `generate-dockerfile` refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DockerfileError {
    /// The catalog root is not a folder.
    #[error("{} is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The Dockerfile exists (opm's message: `path %q: file already exists`).
    #[error("path {:?}: file already exists", path.display().to_string())]
    Exists {
        /// The Dockerfile.
        path: PathBuf,
    },
    /// `scratch` cannot run opm to build the cache.
    #[error("invalid builder image: \"scratch\"")]
    ScratchBuilder,
    /// A label without `=`.
    #[error("invalid label {0:?}")]
    Label(String),
    /// An empty base image.
    #[error("base image is unset")]
    NoBase,
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
}

/// Parses `-l k=v` values as opm does: split at the first `=`, the last value of a key wins.
pub fn parse_dockerfile_labels(
    values: &[String],
) -> Result<BTreeMap<String, String>, DockerfileError> {
    let mut out = BTreeMap::new();
    for v in values {
        let (k, val) = v
            .split_once('=')
            .ok_or_else(|| DockerfileError::Label(v.clone()))?;
        out.insert(k.to_string(), val.to_string());
    }
    Ok(out)
}

/// The text of `opm generate dockerfile` (opm ≥ v1.44.0 template, CATALOG.md F.1) for the
/// catalog folder named `index_dir`.
pub fn dockerfile_text(
    index_dir: &str,
    base: &str,
    builder: &str,
    labels: &BTreeMap<String, String>,
) -> String {
    let mut s = String::new();
    s.push_str("# The builder image is expected to contain\n# /bin/opm (with serve subcommand)\n");
    s.push_str(&format!("FROM {builder} as builder\n\n"));
    s.push_str("# Copy FBC root into image at /configs and pre-populate serve cache\n");
    s.push_str(&format!("ADD {index_dir} /configs\n"));
    s.push_str(
        "RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\n",
    );
    s.push_str(&format!("FROM {base}\n"));
    if base == "scratch" {
        s.push_str(concat!(
            "# OLMv0 CatalogSources that use binary-less images must set:\n",
            "# spec:\n",
            "#   grpcPodConfig:\n",
            "#     extractContent:\n",
            "#       catalogDir: /configs\n",
            "#       cacheDir: /tmp/cache\n",
        ));
    } else {
        s.push_str(concat!(
            "# The base image is expected to contain\n",
            "# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n",
            "\n",
            "# Configure the entrypoint and command\n",
            "ENTRYPOINT [\"/bin/opm\"]\n",
            "CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n",
        ));
    }
    s.push_str(concat!(
        "\n",
        "COPY --from=builder /configs /configs\n",
        "COPY --from=builder /tmp/cache /tmp/cache\n",
        "\n",
        "# Set FBC-specific label for the location of the FBC root directory\n",
        "# in the image\n",
        "LABEL operators.operatorframework.io.index.configs.v1=/configs\n",
    ));
    if !labels.is_empty() {
        s.push_str("\n# Set other custom labels\n");
        for (k, v) in labels {
            s.push_str(&format!("LABEL \"{k}\"=\"{v}\"\n"));
        }
    }
    s
}

/// Writes `<parent>/<name>.Dockerfile` next to the catalog folder `dir`, as
/// `opm generate dockerfile` does; refuses to overwrite. Returns the path written.
pub fn generate_dockerfile(
    dir: &Path,
    base: &str,
    builder: &str,
    labels: &BTreeMap<String, String>,
) -> Result<PathBuf, DockerfileError> {
    if base.is_empty() {
        return Err(DockerfileError::NoBase);
    }
    if builder == "scratch" {
        return Err(DockerfileError::ScratchBuilder);
    }
    if !dir.is_dir() {
        return Err(DockerfileError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    // Go's filepath.Clean, then Base / Dir, all lexical as in opm: "catalog/" and
    // "./catalog" both name "catalog", and a symlink keeps its own name. Only a cleaned name
    // of "." or ".." (for which opm writes "..Dockerfile" / "...Dockerfile" with `ADD .`) is
    // replaced by the real folder's name and parent.
    let cleaned = clean_path(dir);
    let (name, parent) = match cleaned.file_name() {
        Some(name) => {
            let parent = match cleaned.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            (name.to_string_lossy().to_string(), parent)
        }
        None => {
            let real =
                std::fs::canonicalize(&cleaned).map_err(crate::fsio::at("resolve", &cleaned))?;
            let name = real
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| ".".to_string());
            let parent = real
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("/"));
            (name, parent)
        }
    };
    let path = parent.join(format!("{name}.Dockerfile"));
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(DockerfileError::Exists { path });
    }
    let text = dockerfile_text(&name, base, builder, labels);
    let io = |source| DockerfileError::from(crate::fsio::at("write", &path)(source));
    let mut tmp = tempfile::Builder::new()
        .prefix(".olmpack-dockerfile-")
        .tempfile_in(&parent)
        .map_err(|e| io(crate::fsio::temp_error(e)))?;
    let _interrupt = crate::interrupt::register(tmp.path());
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644)).map_err(io)?;
    }
    tmp.persist_noclobber(&path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            DockerfileError::Exists { path: path.clone() }
        } else {
            io(e.error)
        }
    })?;
    Ok(path)
}

/// Go's `filepath.Clean` on a Unix path, without touching the file system: `.` elements go,
/// `x/..` pairs cancel, `..` at the root goes, and an empty result is `.`. opm names the
/// Dockerfile from this, so a symlinked folder keeps its link name.
fn clean_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut rooted = false;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => rooted = true,
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(last) if *last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push("..".as_ref()),
            },
            Component::Normal(n) => parts.push(n),
        }
    }
    let mut out = PathBuf::from(if rooted { "/" } else { "" });
    out.extend(parts);
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_path_is_go_filepath_clean() {
        for (input, want) in [
            ("catalog", "catalog"),
            ("catalog/", "catalog"),
            ("./catalog", "catalog"),
            ("a/./b/../c", "a/c"),
            ("a/..", "."),
            ("", "."),
            (".", "."),
            ("..", ".."),
            ("../../a", "../../a"),
            ("a/../../b", "../b"),
            ("/../a", "/a"),
            ("/", "/"),
            ("//a//b/", "/a/b"),
        ] {
            assert_eq!(
                clean_path(Path::new(input)),
                PathBuf::from(want),
                "{input:?}"
            );
        }
    }

    #[test]
    fn configs_dirs() {
        assert_eq!(configs_dir("/configs").unwrap(), "/configs");
        assert_eq!(configs_dir("/a/b/").unwrap(), "/a/b");
        for bad in ["configs", "/", "/a/../b", "/a//b", "/./a", ""] {
            assert!(configs_dir(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dockerfile_matches_opm_text() {
        let text = dockerfile_text(
            "catalog",
            DEFAULT_OPM_IMAGE,
            DEFAULT_OPM_IMAGE,
            &BTreeMap::new(),
        );
        let expected = "# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM quay.io/operator-framework/opm:latest as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD catalog /configs
RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]

FROM quay.io/operator-framework/opm:latest
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT [\"/bin/opm\"]
CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
";
        assert_eq!(text, expected);
        let labels =
            parse_dockerfile_labels(&["key2=value2".into(), "key1=x".into(), "key1=value1".into()])
                .unwrap();
        let scratch = dockerfile_text("bar", "scratch", "foo", &labels);
        let expected = "# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM foo as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD bar /configs
RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL \"key1\"=\"value1\"
LABEL \"key2\"=\"value2\"
";
        assert_eq!(scratch, expected);
        assert!(parse_dockerfile_labels(&["novalue".into()]).is_err());
    }
}

/// What the command names: the platform its registry options are read for, the serve cache's
/// default place in the image, and what became of each layer of a source image.
pub mod types {
    pub use crate::image::Platform;
    pub use crate::image::strip::LayerUse;
    pub use crate::serve::cache::DEFAULT_CACHE_DIR;
}

/// The catalog image a `catalog build` SOURCE names, when it names one: a string that is not
/// an existing path and reads as an image (a registry reference, `oci:`, an archive). With
/// `filter` a string that names nothing is an error naming it (a mistyped folder is never sent
/// to a registry); without, the folder build reports it as before.
pub fn image_source(
    dir: &Path,
    filter: bool,
) -> Result<Option<Location>, crate::location::LocationError> {
    if std::fs::symlink_metadata(dir).is_ok() {
        return Ok(None);
    }
    let Some(text) = dir.to_str() else {
        return Ok(None);
    };
    match Location::parse(text) {
        Ok(l) if !matches!(l.place(), crate::location::Place::Path(_)) => Ok(Some(l)),
        Ok(_) => Ok(None),
        Err(e) if filter => Err(e),
        Err(_) => Ok(None),
    }
}

/// The `catalog build` flags that shape the image, as typed.
#[derive(Debug, Clone)]
pub struct CatalogBuildFlags<'a> {
    /// `--platform`s.
    pub platforms: &'a [String],
    /// `--label`s.
    pub labels: &'a [(String, String)],
    /// `--configs-dir`.
    pub configs_dir: &'a str,
    /// SOURCE is an image ([`image_source`]): it keeps its catalog where its label says, so
    /// only a `--configs-dir` other than the default is passed on (and refused).
    pub from_image: bool,
    /// `--base`.
    pub base: Option<&'a str>,
    /// The digest a signature policy verified for `--base` ([`CatalogBuildOptions::base_verified`]).
    pub base_verified: Option<String>,
    /// `--cache`.
    pub cache: bool,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--cache-dir`.
    pub cache_dir: &'a str,
    /// `--cache-format` (`json` or `pogreb`).
    pub cache_format: &'a str,
    /// The registry options read from the connection flags.
    pub registry: RegistryOptions,
    /// The local output is a `docker-archive:`, which holds one platform.
    pub docker_archive: bool,
}

/// The build options from the flags: platforms parsed (one only into a docker-archive),
/// labels checked, `SOURCE_DATE_EPOCH` read from the environment.
pub fn build_options(
    flags: &CatalogBuildFlags<'_>,
) -> Result<CatalogBuildOptions, super::delivery::FlagError> {
    use super::delivery::FlagError;
    use crate::serve::cache::{CacheFormat, ServeCache};
    let platforms = flags
        .platforms
        .iter()
        .map(|p| p.parse::<Platform>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| FlagError::chain(&e))?;
    if flags.docker_archive && platforms.len() > 1 {
        return Err(FlagError(
            "a docker-archive holds a single platform: give one --platform".to_string(),
        ));
    }
    Ok(CatalogBuildOptions {
        configs_dir: (!flags.from_image || flags.configs_dir != DEFAULT_CONFIGS_DIR)
            .then(|| flags.configs_dir.to_string()),
        base: flags.base.map(str::to_string),
        base_verified: flags.base_verified.clone(),
        platforms,
        labels: super::labels::label_map(flags.labels).map_err(|e| FlagError::chain(&e))?,
        source_date_epoch: crate::image::build::source_date_epoch_from_env()
            .map_err(|e| FlagError::chain(&e))?,
        registry: flags.registry.clone(),
        serve_cache: match (flags.cache, flags.no_cache) {
            (true, _) => ServeCache::Always,
            (_, true) => ServeCache::Never,
            _ => ServeCache::Auto,
        },
        cache_dir: Some(flags.cache_dir.to_string()),
        cache_format: if flags.cache_format == "pogreb" {
            CacheFormat::Pogreb
        } else {
            CacheFormat::Json
        },
    })
}
