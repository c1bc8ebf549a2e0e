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
//!   ([`super::filter_folder_with`]), written as one layer at the same path, and opm's serve
//!   cache is written for it where the source had one (owned by the image's user, as
//!   `catalog build --base` owns it);
//! - the config is the source's: entrypoint, CMD, user, environment and labels stay;
//!   `rootfs.diff_ids` and `history` follow the layers.
//!
//! A multi-platform source gives a multi-platform result: each platform keeps its own base
//! layers and gets the same catalog layer and cache. The platforms must hold the same catalog
//! (they do when built from one folder); otherwise the build stops and says which differ.

use super::{
    BuiltArtifact, BuiltCatalog, CONFIGS_LABEL, CatalogBuildError, CatalogBuildOptions,
    CatalogBuildRunError, configs_dir, dedup, open_bases, spool,
};
use crate::catalog::filter::config::FilterConfig;
use crate::image::extend::{ConfigEdit, extend_image, folder_layer, index_of};
use crate::image::strip::{self, Areas, LayerUse};
use crate::image::{Blob, BlobSource, Descriptor, Image, ImageError};
use crate::location::Location;
use crate::serve::cache::{CacheLayer, DEFAULT_CACHE_DIR, ServeCache, cache_dir_in_image};
use crate::transport::source::OpenedImage;
use crate::transport::unpack::{self, Limits};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    let name = source.as_str().to_string();
    let shown = PathBuf::from(&name);
    let fail = |e: CatalogBuildError| CatalogBuildRunError::Build {
        dir: shown.clone(),
        source: Box::new(e),
    };
    let refuse = |reason: String| {
        fail(CatalogBuildError::ImageSource {
            source_name: name.clone(),
            reason,
        })
    };
    if let Some(base) = &opts.base {
        return Err(refuse(format!(
            "--base {base} does not apply to a catalog image source: its own layers are the base"
        )));
    }
    let (mut platforms, was_index) =
        open_bases(source, &opts.platforms, &opts.registry).map_err(|e| match e {
            CatalogBuildError::Base { source, .. } => fail(CatalogBuildError::Source {
                source_name: name.clone(),
                source,
            }),
            CatalogBuildError::BasePlatform {
                platform,
                available,
                ..
            } => refuse(format!(
                "no image for platform {platform} (it has: {available})"
            )),
            other => fail(other),
        })?;
    let spool = spool().map_err(fail)?;
    let fetched = spool.path().join("source");
    std::fs::create_dir_all(&fetched).map_err(|source| {
        fail(CatalogBuildError::Spool {
            path: fetched.clone(),
            source,
        })
    })?;
    // Every layer is read to know what it holds, so each is fetched once (verified).
    for (image, _) in &mut platforms {
        image
            .fetch_layers(&fetched)
            .map_err(|e| fail(CatalogBuildError::Transport(e)))?;
    }

    // Where the catalog is: the configs label, the same on every platform.
    let mut configs: Option<String> = None;
    for (image, _) in &platforms {
        let labels = image.labels();
        let label = crate::action::source::catalog_label(&labels)
            .map(str::to_string)
            .ok_or_else(|| {
                refuse(format!(
                    "not a catalog image: its {} image has no {CONFIGS_LABEL} label",
                    image.platform()
                ))
            })?;
        let dir = configs_dir(&label).map_err(|_| {
            refuse(format!(
                "its {CONFIGS_LABEL} label {label:?} is not a clean absolute path"
            ))
        })?;
        match &configs {
            Some(c) if *c != dir => {
                return Err(refuse(format!(
                    "its platforms keep the catalog in different folders ({c} and {dir})"
                )));
            }
            _ => configs = Some(dir),
        }
    }
    let Some(configs) = configs else {
        return Err(fail(CatalogBuildError::EmptyBase(name.clone())));
    };
    if let Some(asked) = &opts.configs_dir {
        let asked = configs_dir(asked).map_err(fail)?;
        if asked != configs {
            return Err(refuse(format!(
                "--configs-dir {asked} differs from the folder the image keeps its catalog in ({configs}, its {CONFIGS_LABEL} label); the catalog stays there"
            )));
        }
    }
    let mut labels = opts.labels.clone();
    if let Some(v) = labels.remove(CONFIGS_LABEL)
        && v.trim_end_matches('/') != configs
    {
        return Err(fail(CatalogBuildError::LabelConflict {
            value: v,
            configs_dir: configs.clone(),
        }));
    }

    // Per platform: where its cache is, and what each layer holds.
    let epoch = opts.source_date_epoch.unwrap_or(0);
    let mut plans: Vec<Plan> = Vec::new();
    let mut scans: HashMap<(String, String), strip::Scan> = HashMap::new();
    for (image, _) in &platforms {
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
            opts.cache_dir
                .clone()
                .unwrap_or_else(|| DEFAULT_CACHE_DIR.to_string())
        });
        let cache_dir = cache_dir_in_image(&cache_dir, &configs)
            .map_err(|e| fail(CatalogBuildError::Cache(e)))?;
        let areas = Areas::new(&[configs.as_str(), cache_dir.as_str()]);
        let mut uses = Vec::new();
        let mut cache_found = false;
        for (i, layer) in image.image.layers.iter().enumerate() {
            let key = (layer.descriptor.digest.clone(), cache_dir.clone());
            let scan = match scans.get(&key) {
                Some(s) => s.clone(),
                None => {
                    let s = read_layer(image, i, &name, |r, digest| strip::scan(r, &areas, digest))
                        .map_err(fail)?;
                    scans.insert(key, s.clone());
                    s
                }
            };
            cache_found |= scan.per_area.get(1).is_some_and(|n| *n > 0);
            uses.push(scan.verdict());
        }
        let ship = match opts.serve_cache {
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
            return Err(refuse(format!(
                "its Entrypoint names --cache-dir={cache_dir}, so opm would look for a cache; build with a cache (without --no-cache)"
            )));
        }
        plans.push(Plan {
            areas,
            uses,
            cache_dir: ship.then_some(cache_dir),
            cmd: new_cmd,
        });
    }

    // Take the old catalog out of each platform (the same layers: once) and rewrite the mixed
    // layers without the catalog and cache.
    let mut rewritten: HashMap<(String, String), crate::image::layer::LayerBlob> = HashMap::new();
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
        let root = spool.path().join(format!("catalog-{p}"));
        std::fs::create_dir_all(&root).map_err(|source| {
            fail(CatalogBuildError::Spool {
                path: root.clone(),
                source,
            })
        })?;
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
            let taken_path = spool.path().join("taken.tar");
            let out_path = spool.path().join(format!(
                "rewritten-{}.tar.gz",
                layer.descriptor.sha256_hex().unwrap_or("layer")
            ));
            let blob = read_layer(image, i, &name, |r, digest| {
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
            .map_err(fail)?;
            if let Some(b) = blob {
                rewritten.insert(key, b);
            }
            if !reuse {
                let file = std::fs::File::open(&taken_path).map_err(|source| {
                    fail(CatalogBuildError::Spool {
                        path: taken_path.clone(),
                        source,
                    })
                })?;
                unpack::unpack_layer(
                    std::io::BufReader::new(file),
                    &root,
                    &layer.descriptor.digest,
                    &CATALOG_LIMITS,
                    &mut stats,
                )
                .map_err(|e| fail(layer_error(&name, e)))?;
            }
        }
        if !reuse {
            if let Some(last) = image.image.layers.last() {
                unpack::check_links(&root, &last.descriptor.digest)
                    .map_err(|e| fail(layer_error(&name, e)))?;
            }
            let dir = root.join(configs.trim_start_matches('/'));
            if !dir.is_dir() {
                return Err(refuse(format!(
                    "its {} image holds no catalog at {configs} (where its {CONFIGS_LABEL} label points)",
                    image.platform()
                )));
            }
            if let Some((_, first, first_platform)) = catalogs.first()
                && !same_tree(first, &dir)
            {
                return Err(refuse(format!(
                    "its {first_platform} and {} images hold different catalogs at {configs}; pick one with --platform",
                    image.platform()
                )));
            }
            catalogs.push((touched, dir, image.platform()));
        }
    }
    let Some((_, catalog_dir, _)) = catalogs.first() else {
        return Err(fail(CatalogBuildError::EmptyBase(name.clone())));
    };

    // The filtered catalog, its layer and its cache.
    let (filtered, mut warnings) = super::filter_folder_with(
        catalog_dir,
        filter,
        format,
        spool.path(),
        &shown,
        &crate::catalog::load::LoadOptions::for_image(),
    )?;
    let (configs_layer, whiteouts) = folder_layer(
        &filtered,
        configs.trim_start_matches('/'),
        epoch,
        &spool.path().join("configs.tar.gz"),
    )
    .map_err(|e| fail(e.into()))?;
    warnings.extend(whiteouts.into_iter().map(|w| {
        format!(
            "{} is an OCI whiteout file; left out of the image",
            w.path.display()
        )
    }));
    let wants_cache = plans.iter().any(|p| p.cache_dir.is_some());
    let files = if wants_cache {
        Some(
            crate::serve::cache::cache_files(&filtered, spool.path())
                .map_err(|e| fail(e.into()))?,
        )
    } else {
        None
    };
    let mut cache_layers: Vec<(String, CacheLayer)> = Vec::new();
    let mut images: Vec<(Image, Value)> = Vec::new();
    let mut layer_report: Vec<SourceLayer> = Vec::new();
    for (p, (image, platform)) in platforms.iter().enumerate() {
        let plan = &plans[p];
        let base = base_without(image, plan, &rewritten).map_err(fail)?;
        for (i, l) in image.image.layers.iter().enumerate() {
            let entry = SourceLayer {
                digest: l.descriptor.digest.clone(),
                action: plan.uses[i],
                rewritten: rewritten
                    .get(&(l.descriptor.digest.clone(), plan.areas_key()))
                    .filter(|_| plan.uses[i] == LayerUse::Rewrite)
                    .map(|b| b.digest.clone()),
            };
            if !layer_report.contains(&entry) {
                layer_report.push(entry);
            }
        }
        let edit = ConfigEdit {
            labels: labels.clone(),
            entrypoint: None,
            cmd: plan.cmd.clone(),
            created_epoch: epoch,
            created_by: format!("olmpack catalog build --filter: catalog at {configs}"),
        };
        let mut built = extend_image(&base, &configs_layer, &edit).map_err(|e| fail(e.into()))?;
        if let (Some(dir), Some(files)) = (&plan.cache_dir, &files) {
            let owner = crate::serve::owner::base_cache_owner(image).map_err(|source| {
                fail(CatalogBuildError::BaseUser {
                    base: name.clone(),
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
                        .layer(dir, epoch, spool.path(), &owner)
                        .map_err(|e| fail(e.into()))?;
                    cache_layers.push((dir.clone(), layer));
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
            built = extend_image(&built, &cache_layers[at].1.layer, &cache_edit)
                .map_err(|e| fail(e.into()))?;
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
            None => return Err(fail(CatalogBuildError::EmptyBase(name.clone()))),
        }
    };
    // Catalog and rewritten layers are files of the spool; the source images are kept so
    // the files of an extracted archive live as long as the result.
    Ok(BuiltCatalog {
        artifact,
        warnings,
        configs_layer: configs_layer.digest,
        serve_cache: cache_layers.first().map(|(_, c)| c.summary.clone()),
        cache_owners: cache_layers.into_iter().map(|(_, c)| c.owner).collect(),
        source_layers: layer_report,
        spool,
        _bases: platforms.into_iter().map(|(i, _)| i).collect(),
    })
}

/// One platform's plan: what to take out, what each layer becomes, where the new cache goes
/// (none: no cache), and CMD when it changes.
struct Plan {
    areas: Areas,
    uses: Vec<LayerUse>,
    cache_dir: Option<String>,
    cmd: Option<Vec<String>>,
}

impl Plan {
    /// What a rewrite depends on besides the layer: the folders taken out.
    fn areas_key(&self) -> String {
        format!("{:?}", self.areas)
    }
}

/// `--cache-dir=X` or `--cache-dir X` in an argument list.
fn cache_dir_arg(args: &[String]) -> Option<String> {
    args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--cache-dir=")
            .map(str::to_string)
            .or_else(|| {
                (a == "--cache-dir")
                    .then(|| args.get(i + 1).cloned())
                    .flatten()
            })
    })
}

/// `args` without its `--cache-dir` (either spelling).
fn without_cache_dir(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--cache-dir" {
            skip = true;
            continue;
        }
        if a.starts_with("--cache-dir=") {
            continue;
        }
        out.push(a.clone());
    }
    out
}

fn io_error(digest: &str, source: std::io::Error) -> ImageError {
    ImageError::Read {
        digest: digest.to_string(),
        source,
    }
}

fn layer_error(name: &str, source: ImageError) -> CatalogBuildError {
    CatalogBuildError::SourceLayer {
        source_name: name.to_string(),
        source,
    }
}

/// Opens layer `i` of `image` (verified, decompressed) and runs `f` on its tar stream.
fn read_layer<T>(
    image: &OpenedImage,
    i: usize,
    name: &str,
    f: impl FnOnce(&mut dyn std::io::Read, &str) -> Result<T, ImageError>,
) -> Result<T, CatalogBuildError> {
    let mut vr = image.open_layer(i).map_err(CatalogBuildError::Transport)?;
    let desc = vr.expected().clone();
    let out = {
        let mut r = unpack::decompress(&mut vr, &desc.media_type, &desc.digest)
            .map_err(|e| layer_error(name, e))?;
        f(&mut r, &desc.digest).map_err(|e| layer_error(name, e))?
    };
    vr.finish().map_err(|e| layer_error(name, e))?;
    Ok(out)
}

/// A rewritten layer being written: tar bytes in, gzip blob out, both digests computed.
struct GzipLayer {
    inner: crate::image::digest::HashingWriter<
        flate2::write::GzEncoder<crate::image::digest::HashingWriter<BufWriter<std::fs::File>>>,
    >,
}

impl GzipLayer {
    fn create(path: &Path) -> std::io::Result<GzipLayer> {
        let file = std::fs::File::create(path)?;
        let compressed =
            crate::image::digest::HashingWriter::new(BufWriter::with_capacity(256 * 1024, file));
        let gz = flate2::write::GzEncoder::new(
            compressed,
            flate2::Compression::new(crate::image::layer::GZIP_LEVEL),
        );
        Ok(GzipLayer {
            inner: crate::image::digest::HashingWriter::new(gz),
        })
    }

    fn finish(self, path: &Path) -> std::io::Result<crate::image::layer::LayerBlob> {
        let (gz, diff_id, diff_size) = self.inner.finish();
        let compressed = gz.finish()?;
        let (mut file, digest, size) = compressed.finish();
        file.flush()?;
        Ok(crate::image::layer::LayerBlob {
            path: path.to_path_buf(),
            digest,
            size,
            diff_id,
            diff_size,
        })
    }
}

impl Write for GzipLayer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The source image without its catalog and cache: layers kept, rewritten or dropped as
/// planned, `rootfs.diff_ids` and (when it lists one entry per layer) `history` following.
fn base_without(
    image: &OpenedImage,
    plan: &Plan,
    rewritten: &HashMap<(String, String), crate::image::layer::LayerBlob>,
) -> Result<Image, CatalogBuildError> {
    let bad =
        |reason: String| CatalogBuildError::Build(crate::image::BuildError::BaseConfig { reason });
    let mut config = image.config_json();
    let diff_ids: Vec<Value> = config
        .pointer("/rootfs/diff_ids")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| bad("no rootfs.diff_ids".into()))?;
    if diff_ids.len() != image.image.layers.len() {
        return Err(bad(format!(
            "rootfs.diff_ids lists {} layers but the manifest has {}",
            diff_ids.len(),
            image.image.layers.len()
        )));
    }
    // History entries that made a layer, in order: only trusted when they match the layers.
    let history: Option<Vec<Value>> = config
        .get("history")
        .and_then(Value::as_array)
        .cloned()
        .filter(|h| {
            h.iter()
                .filter(|e| e.get("empty_layer").and_then(Value::as_bool) != Some(true))
                .count()
                == diff_ids.len()
        });
    let mut layers = Vec::new();
    let mut new_diff_ids = Vec::new();
    let mut new_history: Vec<Value> = Vec::new();
    let mut h = history.as_ref().map(|h| h.iter());
    for (i, layer) in image.image.layers.iter().enumerate() {
        // Empty-layer history entries before this layer's stay.
        let mut own: Option<Value> = None;
        if let Some(it) = h.as_mut() {
            for e in it.by_ref() {
                if e.get("empty_layer").and_then(Value::as_bool) == Some(true) {
                    new_history.push(e.clone());
                } else {
                    own = Some(e.clone());
                    break;
                }
            }
        }
        match plan.uses[i] {
            LayerUse::Keep => {
                layers.push(layer.clone());
                new_diff_ids.push(diff_ids[i].clone());
                new_history.extend(own);
            }
            LayerUse::Drop => {}
            LayerUse::Rewrite => {
                let Some(blob) =
                    rewritten.get(&(layer.descriptor.digest.clone(), plan.areas_key()))
                else {
                    return Err(bad(format!(
                        "layer {} was not rewritten",
                        layer.descriptor.digest
                    )));
                };
                layers.push(Blob {
                    descriptor: Descriptor {
                        media_type: crate::image::media::OCI_LAYER_GZIP.to_string(),
                        digest: blob.digest.clone(),
                        size: blob.size,
                    },
                    source: BlobSource::File(blob.path.clone()),
                });
                new_diff_ids.push(Value::String(blob.diff_id.clone()));
                if let Some(mut e) = own {
                    e["comment"] = json!(
                        "olmpack catalog build: rewritten without the catalog and serve cache"
                    );
                    new_history.push(e);
                }
            }
        }
    }
    if let Some(it) = h.as_mut() {
        new_history.extend(it.cloned());
    }
    config["rootfs"]["diff_ids"] = Value::Array(new_diff_ids);
    if history.is_some() {
        config["history"] = Value::Array(new_history);
    }
    Ok(Image {
        manifest: image.image.manifest.clone(),
        config: Blob::memory(
            &image.image.config.descriptor.media_type,
            crate::image::config::canonical_json(&config),
        ),
        layers,
    })
}

/// Whether two folders hold the same names, kinds and bytes.
fn same_tree(a: &Path, b: &Path) -> bool {
    fn list(root: &Path) -> Option<Vec<(PathBuf, Option<Vec<u8>>)>> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let mut names: Vec<_> = std::fs::read_dir(&dir)
                .ok()?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .collect();
            names.sort();
            for p in names {
                let rel = p.strip_prefix(root).ok()?.to_path_buf();
                let meta = std::fs::symlink_metadata(&p).ok()?;
                if meta.is_dir() {
                    out.push((rel, None));
                    stack.push(p);
                } else if meta.file_type().is_symlink() {
                    let t = std::fs::read_link(&p).ok()?;
                    out.push((rel, Some(t.as_os_str().as_encoded_bytes().to_vec())));
                } else {
                    out.push((rel, Some(std::fs::read(&p).ok()?)));
                }
            }
        }
        out.sort();
        Some(out)
    }
    match (list(a), list(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}
