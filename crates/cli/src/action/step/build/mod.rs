//! The build step of `catalog build` (and of `catalog mirror`, which builds the same images):
//! a file-based catalog folder as an image, or a catalog image rebuilt around a filtered
//! catalog ([`from_image`]). Nothing here reads flags, validates, or delivers: a door validates
//! first and hands the result to [`super::deliver`].
//!
//! The image is the folder as one reproducible layer under `/configs` (see
//! [`crate::image::extend::folder_layer`]) with the label
//! `operators.operatorframework.io.index.configs.v1=/configs`, and either
//! - nothing else (no base): what OLM v1 (catalogd) reads, and what OLM v0 serves with
//!   `spec.grpcPodConfig.extractContent` (CATALOG.md F.2, F.3); or
//! - a base image's layers, reused as they are, with `ENTRYPOINT ["/bin/opm"]` and
//!   `CMD ["serve", "/configs"]` and the base's environment, user and working folder kept.
//!
//! **Serve cache.** With a base (or `--cache`), a second layer carries opm's JSON serve cache
//! under `/tmp/cache` (or `--cache-dir`) and CMD gets `--cache-dir=…`, as `opm generate
//! dockerfile` images have: opm then enforces the cache's integrity at start and skips
//! rebuilding it (CATALOG.md F.2, SERVE.md A.3). olmpack cannot run opm, so it writes the cache
//! itself ([`crate::cache`]) with the digest opm recomputes over the catalog folder as
//! this image holds it; `--no-cache` keeps the old image (opm rebuilds its cache at every start).
//! The cache is owned as a `RUN` step in the base would own it ([`crate::cache::owner`]): the
//! base's user and group, so a pod that runs it in its own group can still read it.
//!
//! A multi-platform base gives one image per platform (or per `--platform`), all sharing the
//! same configs layer blob, under one index ([`base`] opens it).
//!
//! Base layers from a registry stay there ([`crate::image::BlobSource::Remote`]): a push to the
//! same registry mounts or skips them; they are downloaded only for a local output or another
//! registry ([`crate::transport::sink::deliver`], the delivery path `bundle build` shares).

use crate::image::config::Platform;
use crate::image::extend::{
    ConfigEdit, extend_image, folder_layer, index_of, platform_json, scratch_image,
};
use crate::image::{Artifact, Format, Image, ImageIndex};
use crate::location::Location;
use crate::transport::OpenedImage;
use crate::transport::sink::Deliverable;
use crate::transport::{RegistryOptions, TransportError, sink};
use std::collections::BTreeMap;
use std::path::Path;

pub mod base;
mod error;
pub use error::{CatalogBuildError, CatalogBuildRunError};
pub mod from_image;
mod layers;
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

/// What to build, besides the folder.
#[derive(Debug, Clone, Default)]
pub struct CatalogBuildOptions {
    /// Where the catalog goes in the image (default `/configs`).
    pub configs_dir: Option<String>,
    /// Base image source (registry, `oci:`, `oci-archive:`, `docker-archive:`); `None` =
    /// scratch.
    pub base: Option<Location>,
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
    pub serve_cache: crate::cache::ServeCache,
    /// Where the cache goes in the image (default `/tmp/cache`).
    pub cache_dir: Option<String>,
    /// Which of opm's cache formats (`--cache-format`; default: the one the base's opm writes,
    /// JSON when its version is unknown).
    pub cache_format: Option<crate::cache::CacheFormat>,
    /// The base's opm version (`--opm-version`), when it cannot be read from the base.
    pub opm_version: Option<crate::cache::OpmVersion>,
}

/// The serve cache chosen for a base, and how its opm's version was known: printed at build
/// time, so that a cache with newer semantics than the base's opm never ships silently.
#[derive(Debug, Clone)]
pub struct CacheChoice {
    /// Format and content.
    pub profile: crate::cache::CacheProfile,
    /// Where the opm version came from (`--opm-version`, the base's binary, or why unknown).
    pub known_from: String,
}

/// The cache the base's opm reads: `--opm-version` first, else the version recorded in the
/// base's opm binary, else unknown (JSON with current opm's content, which every opm since
/// v1.26.3 reads, said so at build time).
pub(crate) fn choose_cache(
    opts: &CatalogBuildOptions,
    base: Option<&OpenedImage>,
    base_name: &str,
) -> Result<CacheChoice, CatalogBuildError> {
    use crate::cache::CacheProfile;
    if let Some(v) = opts.opm_version {
        return Ok(CacheChoice {
            profile: CacheProfile::for_opm(v, opts.cache_format)?,
            known_from: "--opm-version".into(),
        });
    }
    let Some(b) = base else {
        return Ok(CacheChoice {
            profile: CacheProfile::unknown(opts.cache_format),
            known_from: "no base to read opm from".into(),
        });
    };
    let found = crate::cache::profile::base_opm_version(b).map_err(|source| {
        CatalogBuildError::BaseOpm {
            base: base_name.to_string(),
            source,
        }
    })?;
    Ok(match found {
        Some(f) => CacheChoice {
            profile: CacheProfile::for_opm(f.version, opts.cache_format)?,
            known_from: format!("{base_name} {}", f.from),
        },
        None => CacheChoice {
            profile: CacheProfile::unknown(opts.cache_format),
            known_from: format!(
                "{base_name}: no opm binary with a recorded version (looked for the entrypoint, /bin/opm, /usr/bin/opm)"
            ),
        },
    })
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
    pub serve_cache: Option<crate::cache::CacheSummary>,
    /// Who owns the serve cache's entries (one per distinct owner among the platform images).
    pub cache_owners: Vec<crate::cache::owner::CacheOwner>,
    /// Which cache was written and why (with a serve cache).
    pub cache_choice: Option<CacheChoice>,
    /// For a catalog image source: what became of each of its layers (kept, dropped,
    /// rewritten without the catalog and cache); empty for a folder.
    pub source_layers: Vec<SourceLayer>,
    /// The base (or source) image as named, with the manifest digest of each platform image
    /// built on: what a provenance lists as resolved dependencies.
    pub bases: Vec<(String, String)>,
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

pub(crate) fn spool() -> Result<tempfile::TempDir, CatalogBuildError> {
    crate::interrupt::temp_dir("olmpack-catalog-").map_err(|source| CatalogBuildError::Spool {
        path: std::env::temp_dir(),
        source,
    })
}

/// Builds the catalog image of `dir` (validation is the caller's first step). Nothing is
/// written outside a temp spool; sinks take the result.
pub fn build(dir: &Path, opts: &CatalogBuildOptions) -> Result<BuiltCatalog, CatalogBuildError> {
    check_folder(dir)?;
    let configs = configs_dir(opts.configs_dir.as_deref().unwrap_or(DEFAULT_CONFIGS_DIR))?;
    let labels = labels_with_configs(&opts.labels, &configs)?;
    let epoch = opts.source_date_epoch.unwrap_or(0);
    // The base first: a wrong base or platform fails before the folder is read.
    let (bases, base_was_index) = match &opts.base {
        Some(base) => {
            let location = match &opts.base_verified {
                Some(digest) => base.pinned(digest),
                None => base.clone(),
            };
            base::open_bases(&location, &opts.platforms, &opts.registry)?
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
    let cache_dir = crate::cache::cache_dir_in_image(
        opts.cache_dir
            .as_deref()
            .unwrap_or(crate::cache::DEFAULT_CACHE_DIR),
        &configs,
    )?;
    let cache = CacheLayers::build(dir, opts, &bases, &cache_dir, spool.path())?;
    let mut warnings: Vec<String> = whiteouts.into_iter().map(whiteout_warning).collect();
    if let (Some(base), Some((first, _))) = (&opts.base, bases.first())
        && !runs_opm(first)
    {
        warnings.push(not_opm_warning(base.as_str(), first, &configs));
    }
    let mut images: Vec<(Image, serde_json::Value)> = Vec::new();
    let mut opened_bases = Vec::new();
    let mut base_digests = Vec::new();
    if bases.is_empty() {
        let platforms = if opts.platforms.is_empty() {
            vec![Platform::default()]
        } else {
            dedup(&opts.platforms)
        };
        for p in &platforms {
            images.push((
                cache.on(
                    scratch_image(&layer, &labels, p, Format::Oci, epoch),
                    0,
                    epoch,
                )?,
                platform_json(p),
            ));
        }
    } else {
        let edit = ConfigEdit {
            labels: labels.clone(),
            entrypoint: Some(vec![OPM_ENTRYPOINT.to_string()]),
            cmd: Some(crate::cache::serve_cmd(
                &configs,
                (!cache.layers.is_empty()).then_some(cache_dir.as_str()),
            )),
            created_epoch: epoch,
            created_by: format!("olmpack catalog build: catalog at {configs}"),
        };
        for (base, _) in &bases {
            base_digests.push((
                opts.base
                    .as_ref()
                    .map(|b| b.as_str().to_string())
                    .unwrap_or_default(),
                base.image.manifest.descriptor.digest.clone(),
            ));
        }
        for (i, (base, platform)) in bases.into_iter().enumerate() {
            let image = cache.on(extend_image(&base.to_image(), &layer, &edit)?, i, epoch)?;
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
        serve_cache: cache.layers.first().map(|c| c.summary.clone()),
        cache_owners: cache.layers.into_iter().map(|c| c.owner).collect(),
        cache_choice: cache.choice,
        source_layers: Vec::new(),
        bases: base_digests,
        spool,
        _bases: opened_bases,
    })
}

/// The catalog folder must be a folder.
fn check_folder(dir: &Path) -> Result<(), CatalogBuildError> {
    let reason = match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => "it is a file".to_string(),
        Err(e) => e.to_string(),
    };
    Err(CatalogBuildError::NotAFolder {
        path: dir.to_path_buf(),
        reason,
    })
}

/// The image labels: `labels` with the configs label set to `configs` (a `--label` giving it
/// another value is refused).
fn labels_with_configs(
    labels: &BTreeMap<String, String>,
    configs: &str,
) -> Result<BTreeMap<String, String>, CatalogBuildError> {
    let mut labels = labels.clone();
    match labels.get(CONFIGS_LABEL) {
        Some(v) if v.trim_end_matches('/') != configs => {
            return Err(CatalogBuildError::LabelConflict {
                value: v.clone(),
                configs_dir: configs.to_string(),
            });
        }
        _ => {
            labels.insert(CONFIGS_LABEL.to_string(), configs.to_string());
        }
    }
    Ok(labels)
}

/// The warning for a whiteout file left out of the configs layer.
pub(crate) fn whiteout_warning(w: crate::image::walk::SkippedWhiteout) -> String {
    format!(
        "{} is an OCI whiteout file; left out of the image",
        w.path.display()
    )
}

/// The warning for a base whose config does not run opm ([`runs_opm`]).
fn not_opm_warning(base: &str, first: &OpenedImage, configs: &str) -> String {
    format!(
        "the base {base} does not look like an opm image (its config runs {}, not {OPM_ENTRYPOINT}): the catalog image runs `{OPM_ENTRYPOINT} serve {configs}` and fails to start unless the base has {OPM_ENTRYPOINT}; use an opm image such as {DEFAULT_OPM_IMAGE}, or no --base for OLM v1 and extractContent (only the base's config was checked, not its files)",
        match first.runnable() {
            r if r.is_empty() => "nothing".to_string(),
            r => r.join(" and "),
        }
    )
}

/// The serve cache of a folder build: written once, then one layer per distinct owner among
/// the platform images (each owned by that platform's base user, as a RUN step there would
/// own it), and which layer each base gets.
struct CacheLayers {
    layers: Vec<crate::cache::CacheLayer>,
    /// For the `i`-th base (scratch: the only one), the index of its layer.
    layer_of: Vec<usize>,
    cache_dir: String,
    choice: Option<CacheChoice>,
}

impl CacheLayers {
    fn build(
        dir: &Path,
        opts: &CatalogBuildOptions,
        bases: &[(OpenedImage, serde_json::Value)],
        cache_dir: &str,
        spool: &Path,
    ) -> Result<CacheLayers, CatalogBuildError> {
        let mut out = CacheLayers {
            layers: Vec::new(),
            layer_of: Vec::new(),
            cache_dir: cache_dir.to_string(),
            choice: None,
        };
        if !opts.serve_cache.wanted(opts.base.is_some()) {
            return Ok(out);
        }
        let epoch = opts.source_date_epoch.unwrap_or(0);
        let base_name = opts
            .base
            .as_ref()
            .map(|b| b.as_str().to_string())
            .unwrap_or_default();
        let choice = choose_cache(opts, bases.first().map(|(b, _)| b), &base_name)?;
        let files = crate::cache::cache_files_for(dir, spool, &choice.profile)?;
        out.choice = Some(choice);
        let owners = if bases.is_empty() {
            vec![crate::cache::owner::CacheOwner::root(
                "a scratch image has no user, so root",
            )]
        } else {
            let base_name = opts
                .base
                .as_ref()
                .map(|b| b.as_str().to_string())
                .unwrap_or_default();
            bases
                .iter()
                .map(|(b, _)| {
                    crate::cache::owner::base_cache_owner(b).map_err(|source| {
                        CatalogBuildError::BaseUser {
                            base: base_name.clone(),
                            source,
                        }
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        };
        for owner in owners {
            let same =
                |l: &crate::cache::CacheLayer| (l.owner.uid, l.owner.gid) == (owner.uid, owner.gid);
            match out.layers.iter().position(same) {
                Some(at) => out.layer_of.push(at),
                None => {
                    out.layer_of.push(out.layers.len());
                    out.layers
                        .push(files.layer(cache_dir, epoch, spool, &owner)?);
                }
            }
        }
        Ok(out)
    }

    /// `image` with the cache layer of the `i`-th base on top (none: `image` as it is).
    fn on(&self, image: Image, i: usize, epoch: u64) -> Result<Image, CatalogBuildError> {
        match self.layer_of.get(i).and_then(|at| self.layers.get(*at)) {
            Some(c) => {
                let cache_edit = ConfigEdit {
                    labels: BTreeMap::new(),
                    entrypoint: None,
                    cmd: None,
                    created_epoch: epoch,
                    created_by: format!(
                        "olmpack catalog build: opm serve cache at {}",
                        self.cache_dir
                    ),
                };
                Ok(extend_image(&image, &c.layer, &cache_edit)?)
            }
            None => Ok(image),
        }
    }
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

pub(crate) fn dedup(platforms: &[Platform]) -> Vec<Platform> {
    let mut out: Vec<Platform> = Vec::new();
    for p in platforms {
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_dirs() {
        assert_eq!(configs_dir("/configs").unwrap(), "/configs");
        assert_eq!(configs_dir("/a/b/").unwrap(), "/a/b");
        for bad in ["configs", "/", "/a/../b", "/a//b", "/./a", ""] {
            assert!(configs_dir(bad).is_err(), "{bad}");
        }
    }
}
