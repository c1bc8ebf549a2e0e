//! `catalog build IMAGE --filter FILE`: a catalog image rebuilt with a filtered catalog and a
//! fresh serve cache, on its own base.
//!
//! Why not a layer on top (what oc-mirror does): the old catalog and, worse, the old serve
//! cache would stay below it. opm enforces the cache's integrity at start, so an image whose
//! `/configs` changed over an old `/tmp/cache` crash-loops with "cache requires rebuild"
//! (openshift/hypershift #9711, oc-mirror #899). Here the source's layers are read, and:
//! - a layer holding only the catalog folder (the configs label's path) or the serve cache
//!   (CMD's `--cache-dir`, else `/tmp/cache`), and their parent folders, is dropped: the
//!   layout of `opm generate dockerfile` images (`COPY /configs`, `COPY /tmp/cache`), of
//!   opm's older single-stage Dockerfile (`ADD /configs`, `RUN … --cache-only`) and of
//!   olmpack's own;
//! - a layer that also holds other files (a squashed image) is rewritten without them, every
//!   other entry copied byte for byte ([`crate::image::strip`]);
//! - every other layer is kept as it is (same blob: the base's opm, user files, certificates);
//! - the catalog, read from the source's own layers, is filtered
//!   ([`crate::action::step::filter::filter_folder_with`]), written as one layer at the same path, and opm's serve
//!   cache is written for it where the source had one (owned by the image's user, as
//!   `catalog build --base` owns it);
//! - the config is the source's: entrypoint, CMD, user, environment and labels stay;
//!   `rootfs.diff_ids` and `history` follow the layers.
//!
//! A multi-platform source gives a multi-platform result: each platform keeps its own base
//! layers and gets the same catalog layer and cache. The platforms must hold the same catalog
//! (they do when built from one folder); otherwise the build stops and says which differ.

use super::base::open_bases;
use super::layers::{
    GzipLayer, Plan, base_without, cache_dir_arg, io_error, layer_error, read_layer, same_tree,
    without_cache_dir,
};
use super::{
    BuiltArtifact, BuiltCatalog, CONFIGS_LABEL, CatalogBuildError, CatalogBuildOptions,
    CatalogBuildRunError, configs_dir, dedup, spool,
};
use crate::cache::{CacheLayer, DEFAULT_CACHE_DIR, ServeCache, cache_dir_in_image};
use crate::catalog::filter::config::FilterConfig;
use crate::image::Image;
use crate::image::extend::{ConfigEdit, extend_image, folder_layer, index_of};
use crate::image::strip::{self, Areas, LayerUse};
use crate::location::Location;
use crate::transport::OpenedImage;
use crate::transport::unpack::{self, Limits};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Bounds for reading the old catalog out of the source (a whole public index's catalog is a
/// few hundred MiB in some 10,000 files).
const CATALOG_LIMITS: Limits = Limits {
    max_total_bytes: 8 << 30,
    max_entries: 2_000_000,
    max_file_bytes: 1 << 30,
};

/// What happened to one layer of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLayer {
    /// The source layer's digest.
    pub digest: String,
    /// Kept, dropped, or rewritten.
    pub action: LayerUse,
    /// The rewritten layer's digest, when rewritten.
    pub rewritten: Option<String>,
}

/// Builds the filtered image of the catalog image `source` (registry reference, `oci:`,
/// `oci-archive:`, `docker-archive:`): see the module documentation. `opts` is read as for a
/// folder build, except that the catalog stays where the source's configs label puts it
/// (`opts.configs_dir` must be unset or that path), `opts.base` must be unset (the source is
/// its own base), `opts.platforms` picks platforms of a multi-platform source, and
/// `opts.serve_cache` decides the cache: `Auto` replaces the source's (none when it had none),
/// `Always` also adds one at `opts.cache_dir` (appending `--cache-dir` to a CMD that runs
/// `serve`), `Never` drops it (and `--cache-dir` from CMD). Nothing is written outside a temp
/// spool; deliver the result with [`crate::transport::sink::deliver`].
pub fn build_from_image(
    source: &Location,
    filter: &FilterConfig,
    format: crate::catalog::write::Format,
    opts: &CatalogBuildOptions,
) -> Result<BuiltCatalog, CatalogBuildRunError> {
    let cx = Rebuild {
        name: source.as_str().to_string(),
        shown: PathBuf::from(source.as_str()),
        opts,
    };
    if let Some(base) = &opts.base {
        return Err(cx.refuse(format!(
            "--base {} does not apply to a catalog image source: its own layers are the base",
            base.as_str()
        )));
    }
    let (platforms, was_index, spool) = cx.open(source)?;
    let configs = cx.configs_folder(&platforms)?;
    let mut labels = opts.labels.clone();
    if let Some(v) = labels.remove(CONFIGS_LABEL)
        && v.trim_end_matches('/') != configs
    {
        return Err(cx.fail(CatalogBuildError::LabelConflict {
            value: v,
            configs_dir: configs.clone(),
        }));
    }
    // Per platform: where its cache is, and what each layer holds.
    let mut scans: HashMap<(String, String), strip::Scan> = HashMap::new();
    let plans = platforms
        .iter()
        .map(|(image, _)| cx.plan(image, &configs, &mut scans))
        .collect::<Result<Vec<Plan>, _>>()?;
    let (rewritten, catalog_dir) = cx.take_catalogs(&platforms, &plans, spool.path(), &configs)?;

    // The filtered catalog, its layer and its cache.
    let epoch = opts.source_date_epoch.unwrap_or(0);
    let (filtered, mut warnings) = crate::action::step::filter::filter_folder_with(
        &catalog_dir,
        filter,
        format,
        spool.path(),
        &cx.shown,
        &crate::catalog::load::LoadOptions::for_image(),
    )?;
    let (configs_layer, whiteouts) = folder_layer(
        &filtered,
        configs.trim_start_matches('/'),
        epoch,
        &spool.path().join("configs.tar.gz"),
    )
    .map_err(|e| cx.fail(e.into()))?;
    warnings.extend(whiteouts.into_iter().map(super::whiteout_warning));
    let mut choice = None;
    let files = if plans.iter().any(|p| p.cache_dir.is_some()) {
        // The source image runs its own opm: the cache it reads is the one it gets.
        let c = super::choose_cache(opts, platforms.first().map(|(i, _)| i), &cx.name)
            .map_err(|e| cx.fail(e))?;
        let f = crate::cache::cache_files_for(&filtered, spool.path(), &c.profile)
            .map_err(|e| cx.fail(e.into()))?;
        choice = Some(c);
        Some(f)
    } else {
        None
    };
    let mut cache_layers: Vec<(String, CacheLayer)> = Vec::new();
    let mut images: Vec<(Image, Value)> = Vec::new();
    let mut layer_report: Vec<SourceLayer> = Vec::new();
    for (p, (image, platform)) in platforms.iter().enumerate() {
        let plan = &plans[p];
        report_layers(image, plan, &rewritten, &mut layer_report);
        let base = base_without(image, plan, &rewritten).map_err(|e| cx.fail(e))?;
        let edit = ConfigEdit {
            labels: labels.clone(),
            entrypoint: None,
            cmd: plan.cmd.clone(),
            created_epoch: epoch,
            created_by: format!("olmpack catalog build --filter: catalog at {configs}"),
        };
        let mut built =
            extend_image(&base, &configs_layer, &edit).map_err(|e| cx.fail(e.into()))?;
        if let (Some(dir), Some(files)) = (&plan.cache_dir, &files) {
            built = cx.with_cache(built, image, dir, files, spool.path(), &mut cache_layers)?;
        }
        images.push((built, platform.clone()));
    }
    let requested = dedup(&opts.platforms).len();
    let artifact = if was_index && requested != 1 {
        BuiltArtifact::Index(index_of(images))
    } else {
        match images.pop() {
            Some((image, _)) if images.is_empty() => BuiltArtifact::Image(image),
            Some(last) => {
                images.push(last);
                BuiltArtifact::Index(index_of(images))
            }
            None => return Err(cx.fail(CatalogBuildError::EmptyBase(cx.name.clone()))),
        }
    };
    // Catalog and rewritten layers are files of the spool; the source images are kept so
    // the files of an extracted archive live as long as the result.
    Ok(BuiltCatalog {
        artifact,
        warnings,
        configs_layer: configs_layer.digest,
        cache_choice: choice.filter(|_| !cache_layers.is_empty()),
        serve_cache: cache_layers.first().map(|(_, c)| c.summary.clone()),
        cache_owners: cache_layers.into_iter().map(|(_, c)| c.owner).collect(),
        source_layers: layer_report,
        bases: platforms
            .iter()
            .map(|(i, _)| (i.name.clone(), i.image.manifest.descriptor.digest.clone()))
            .collect(),
        spool,
        _bases: platforms.into_iter().map(|(i, _)| i).collect(),
    })
}

/// Records what became of each layer of `image` (once per distinct layer and outcome).
fn report_layers(
    image: &OpenedImage,
    plan: &Plan,
    rewritten: &Rewritten,
    report: &mut Vec<SourceLayer>,
) {
    for (i, l) in image.image.layers.iter().enumerate() {
        let entry = SourceLayer {
            digest: l.descriptor.digest.clone(),
            action: plan.uses[i],
            rewritten: rewritten
                .get(&(l.descriptor.digest.clone(), plan.areas_key()))
                .filter(|_| plan.uses[i] == LayerUse::Rewrite)
                .map(|b| b.digest.clone()),
        };
        if !report.contains(&entry) {
            report.push(entry);
        }
    }
}

/// The rewritten layers, by source layer digest and the folders taken out of it.
type Rewritten = HashMap<(String, String), crate::image::layer::LayerBlob>;

/// The opened platforms of the source, each with its index `platform` object.
type Platforms = Vec<(OpenedImage, Value)>;

/// One rebuild: the source's name for messages, and the options.
struct Rebuild<'a> {
    name: String,
    shown: PathBuf,
    opts: &'a CatalogBuildOptions,
}

impl Rebuild<'_> {
    fn fail(&self, e: CatalogBuildError) -> CatalogBuildRunError {
        CatalogBuildRunError::Build {
            dir: self.shown.clone(),
            source: Box::new(e),
        }
    }

    fn refuse(&self, reason: String) -> CatalogBuildRunError {
        self.fail(CatalogBuildError::ImageSource {
            source_name: self.name.clone(),
            reason,
        })
    }

    fn spool_error(&self, path: &std::path::Path, source: std::io::Error) -> CatalogBuildRunError {
        self.fail(CatalogBuildError::Spool {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Opens the platforms wanted and fetches every layer once (verified): each is read to
    /// know what it holds.
    fn open(
        &self,
        source: &Location,
    ) -> Result<(Platforms, bool, tempfile::TempDir), CatalogBuildRunError> {
        let (mut platforms, was_index) =
            open_bases(source, &self.opts.platforms, &self.opts.registry).map_err(|e| match e {
                CatalogBuildError::Base { source, .. } => self.fail(CatalogBuildError::Source {
                    source_name: self.name.clone(),
                    source,
                }),
                CatalogBuildError::BasePlatform {
                    platform,
                    available,
                    ..
                } => self.refuse(format!(
                    "no image for platform {platform} (it has: {available})"
                )),
                other => self.fail(other),
            })?;
        let spool = spool().map_err(|e| self.fail(e))?;
        let fetched = spool.path().join("source");
        std::fs::create_dir_all(&fetched).map_err(|e| self.spool_error(&fetched, e))?;
        for (image, _) in &mut platforms {
            image
                .fetch_layers(&fetched)
                .map_err(|e| self.fail(CatalogBuildError::Transport(e)))?;
        }
        Ok((platforms, was_index, spool))
    }

    /// Where the catalog is: the configs label, the same on every platform (and the
    /// `--configs-dir` asked for, if any).
    fn configs_folder(&self, platforms: &Platforms) -> Result<String, CatalogBuildRunError> {
        let mut configs: Option<String> = None;
        for (image, _) in platforms {
            let labels = image.labels();
            let label = crate::action::source::catalog_label(&labels)
                .map(str::to_string)
                .ok_or_else(|| {
                    self.refuse(format!(
                        "not a catalog image: its {} image has no {CONFIGS_LABEL} label",
                        image.platform()
                    ))
                })?;
            let dir = configs_dir(&label).map_err(|_| {
                self.refuse(format!(
                    "its {CONFIGS_LABEL} label {label:?} is not a clean absolute path"
                ))
            })?;
            match &configs {
                Some(c) if *c != dir => {
                    return Err(self.refuse(format!(
                        "its platforms keep the catalog in different folders ({c} and {dir})"
                    )));
                }
                _ => configs = Some(dir),
            }
        }
        let Some(configs) = configs else {
            return Err(self.fail(CatalogBuildError::EmptyBase(self.name.clone())));
        };
        if let Some(asked) = &self.opts.configs_dir {
            let asked = configs_dir(asked).map_err(|e| self.fail(e))?;
            if asked != configs {
                return Err(self.refuse(format!(
                    "--configs-dir {asked} differs from the folder the image keeps its catalog in ({configs}, its {CONFIGS_LABEL} label); the catalog stays there"
                )));
            }
        }
        Ok(configs)
    }

    /// One platform's plan: where its cache is, what each layer holds, whether a cache ships
    /// and how CMD follows it.
    fn plan(
        &self,
        image: &OpenedImage,
        configs: &str,
        scans: &mut HashMap<(String, String), strip::Scan>,
    ) -> Result<Plan, CatalogBuildRunError> {
        let config = image.config_json();
        let args = |key: &str| -> Vec<String> {
            config["config"][key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let entrypoint = args("Entrypoint");
        let cmd = args("Cmd");
        let named = cache_dir_arg(&entrypoint).or_else(|| cache_dir_arg(&cmd));
        let cache_dir = named.clone().unwrap_or_else(|| {
            self.opts
                .cache_dir
                .clone()
                .unwrap_or_else(|| DEFAULT_CACHE_DIR.to_string())
        });
        let cache_dir = cache_dir_in_image(&cache_dir, configs)
            .map_err(|e| self.fail(CatalogBuildError::Cache(e)))?;
        let areas = Areas::new(&[configs, cache_dir.as_str()]);
        let mut uses = Vec::new();
        let mut cache_found = false;
        for (i, layer) in image.image.layers.iter().enumerate() {
            let key = (layer.descriptor.digest.clone(), cache_dir.clone());
            let scan = match scans.get(&key) {
                Some(s) => s.clone(),
                None => {
                    let s = read_layer(image, i, &self.name, |r, digest| {
                        strip::scan(r, &areas, digest)
                    })
                    .map_err(|e| self.fail(e))?;
                    scans.insert(key, s.clone());
                    s
                }
            };
            cache_found |= scan.per_area.get(1).is_some_and(|n| *n > 0);
            uses.push(scan.verdict());
        }
        let ship = match self.opts.serve_cache {
            ServeCache::Never => false,
            ServeCache::Always => true,
            ServeCache::Auto => named.is_some() || cache_found,
        };
        // CMD follows the cache: without one opm must not be told to enforce it; a cache
        // added to an image that serves without one must be named.
        let new_cmd = if !ship && cache_dir_arg(&cmd).is_some() {
            Some(without_cache_dir(&cmd))
        } else if ship && named.is_none() && cmd.iter().any(|a| a == "serve") {
            let mut c = cmd.clone();
            c.push(format!("--cache-dir={cache_dir}"));
            Some(c)
        } else {
            None
        };
        if !ship && cache_dir_arg(&entrypoint).is_some() {
            return Err(self.refuse(format!(
                "its Entrypoint names --cache-dir={cache_dir}, so opm would look for a cache; build with a cache (without --no-cache)"
            )));
        }
        Ok(Plan {
            areas,
            uses,
            cache_dir: ship.then_some(cache_dir),
            cmd: new_cmd,
        })
    }

    /// Takes the old catalog out of each platform (the same layers: once), checks the
    /// platforms hold the same one, and rewrites the mixed layers without the catalog and
    /// cache. Returns the rewritten layers and the catalog folder.
    fn take_catalogs(
        &self,
        platforms: &Platforms,
        plans: &[Plan],
        spool: &std::path::Path,
        configs: &str,
    ) -> Result<(Rewritten, PathBuf), CatalogBuildRunError> {
        let mut rewritten: Rewritten = HashMap::new();
        let mut catalogs: Vec<(Vec<String>, PathBuf, String)> = Vec::new();
        for (p, (image, _)) in platforms.iter().enumerate() {
            let plan = &plans[p];
            let touched: Vec<String> = image
                .image
                .layers
                .iter()
                .zip(&plan.uses)
                .filter(|(_, u)| **u != LayerUse::Keep)
                .map(|(l, _)| l.descriptor.digest.clone())
                .collect();
            let reuse = catalogs.iter().any(|(t, _, _)| *t == touched);
            let root = spool.join(format!("catalog-{p}"));
            std::fs::create_dir_all(&root).map_err(|e| self.spool_error(&root, e))?;
            self.split_layers(image, plan, spool, &root, reuse, &mut rewritten)?;
            if reuse {
                continue;
            }
            if let Some(last) = image.image.layers.last() {
                unpack::check_links(&root, &last.descriptor.digest)
                    .map_err(|e| self.fail(layer_error(&self.name, e)))?;
            }
            let dir = root.join(configs.trim_start_matches('/'));
            if !dir.is_dir() {
                return Err(self.refuse(format!(
                    "its {} image holds no catalog at {configs} (where its {CONFIGS_LABEL} label points)",
                    image.platform()
                )));
            }
            if let Some((_, first, first_platform)) = catalogs.first()
                && !same_tree(first, &dir)
            {
                return Err(self.refuse(format!(
                    "its {first_platform} and {} images hold different catalogs at {configs}; pick one with --platform",
                    image.platform()
                )));
            }
            catalogs.push((touched, dir, image.platform()));
        }
        match catalogs.into_iter().next() {
            Some((_, dir, _)) => Ok((rewritten, dir)),
            None => Err(self.fail(CatalogBuildError::EmptyBase(self.name.clone()))),
        }
    }

    /// Splits every layer of `image` the plan touches: what lies in the catalog and cache
    /// folders is unpacked under `root` (unless `reuse`: another platform's catalog is the
    /// same), and a mixed layer is rewritten without it (once per layer).
    fn split_layers(
        &self,
        image: &OpenedImage,
        plan: &Plan,
        spool: &std::path::Path,
        root: &std::path::Path,
        reuse: bool,
        rewritten: &mut Rewritten,
    ) -> Result<(), CatalogBuildRunError> {
        let mut stats = unpack::Stats::default();
        for (i, layer) in image.image.layers.iter().enumerate() {
            let action = plan.uses[i];
            if action == LayerUse::Keep {
                continue;
            }
            let key = (layer.descriptor.digest.clone(), plan.areas_key());
            let need_rewrite = action == LayerUse::Rewrite && !rewritten.contains_key(&key);
            if reuse && !need_rewrite {
                continue;
            }
            let taken_path = spool.join("taken.tar");
            let out_path = spool.join(format!(
                "rewritten-{}.tar.gz",
                layer.descriptor.sha256_hex().unwrap_or("layer")
            ));
            let blob = read_layer(image, i, &self.name, |r, digest| {
                let mut taken = BufWriter::new(
                    std::fs::File::create(&taken_path).map_err(|e| io_error(digest, e))?,
                );
                let blob = if need_rewrite {
                    let mut w = GzipLayer::create(&out_path).map_err(|e| io_error(digest, e))?;
                    strip::split(r, &plan.areas, 0, digest, Some(&mut w), &mut taken)?;
                    Some(w.finish(&out_path).map_err(|e| io_error(digest, e))?)
                } else {
                    strip::split(r, &plan.areas, 0, digest, None, &mut taken)?;
                    None
                };
                taken.flush().map_err(|e| io_error(digest, e))?;
                Ok(blob)
            })
            .map_err(|e| self.fail(e))?;
            if let Some(b) = blob {
                rewritten.insert(key, b);
            }
            if !reuse {
                let file = std::fs::File::open(&taken_path)
                    .map_err(|e| self.spool_error(&taken_path, e))?;
                unpack::unpack_layer(
                    std::io::BufReader::new(file),
                    root,
                    &layer.descriptor.digest,
                    &CATALOG_LIMITS,
                    &mut stats,
                )
                .map_err(|e| self.fail(layer_error(&self.name, e)))?;
            }
        }
        Ok(())
    }

    /// `built` with the serve cache at `dir` on top, owned by `image`'s user; one cache layer
    /// per folder and owner, shared by the platforms that agree.
    fn with_cache(
        &self,
        built: Image,
        image: &OpenedImage,
        dir: &str,
        files: &crate::cache::CacheFiles,
        spool: &std::path::Path,
        cache_layers: &mut Vec<(String, CacheLayer)>,
    ) -> Result<Image, CatalogBuildRunError> {
        let epoch = self.opts.source_date_epoch.unwrap_or(0);
        let owner = crate::cache::owner::base_cache_owner(image).map_err(|source| {
            self.fail(CatalogBuildError::BaseUser {
                base: self.name.clone(),
                source,
            })
        })?;
        let at = match cache_layers
            .iter()
            .position(|(d, c)| d == dir && (c.owner.uid, c.owner.gid) == (owner.uid, owner.gid))
        {
            Some(at) => at,
            None => {
                let layer = files
                    .layer(dir, epoch, spool, &owner)
                    .map_err(|e| self.fail(e.into()))?;
                cache_layers.push((dir.to_string(), layer));
                cache_layers.len() - 1
            }
        };
        let cache_edit = ConfigEdit {
            labels: Default::default(),
            entrypoint: None,
            cmd: None,
            created_epoch: epoch,
            created_by: format!("olmpack catalog build: opm serve cache at {dir}"),
        };
        extend_image(&built, &cache_layers[at].1.layer, &cache_edit)
            .map_err(|e| self.fail(e.into()))
    }
}
