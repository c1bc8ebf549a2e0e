//! opm's JSON serve cache (`pkg/cache/json.go`), written by olmpack so that catalog images start
//! like the ones `opm generate dockerfile` builds.
//!
//! Why the JSON format: every opm from v1.26.3 to today reads it (current opm checks for its
//! pogreb format first and falls back to this one), it is plain files, and its digest is
//! reproducible. Layout under the cache folder (`/tmp/cache` by default):
//! - `cache/packages.json`: the package index ([`crate::serve::model::PackageIndex`]);
//! - `cache/<package>_<channel>_<bundle>.json`: one `api.Bundle` per channel membership;
//! - `cache/metas/<schema>/<package>/<fnv64a>.json`: blobs of other schemas (opm v1.69+);
//! - `digest`: [`crate::gocompat::tar::json_cache_digest`] of the catalog folder *as the image holds
//!   it* (modes 0755/0644, links resolved, whiteouts left out) and of `cache/`.
//!
//! Folders are 0750 and files 0640 (opm's `jsonCacheModeDir`/`jsonCacheModeFile`), owned as a
//! `RUN` step in the base would own them ([`super::owner`]): the base's user and its group (the
//! opm image: 1001 and group 0), root without a base or user. opm's digest ignores owners.

use super::error::{CacheError, io_err};
use super::format::stored_metas;
pub use super::format::{CACHE_DIR_MODE, CACHE_FILE_MODE, CacheFormat};
use super::owner::CacheOwner;
use super::profile::{CacheProfile, Semantics};
use super::report::CacheSummary;
use crate::gocompat::tar::{self as gotar, Content, TreeEntry};
use crate::image::BuildError;
use crate::image::layer::LayerBlob;
use crate::image::walk::{Entry, EntryKind, Walker};
use crate::serve::model::{ServeModel, index_to_go_json};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where `opm generate dockerfile` puts the cache, and the default of `catalog build`.
pub const DEFAULT_CACHE_DIR: &str = "/tmp/cache";
/// Mode of the catalog's folders in an olmpack image ([`crate::image::layer::DIR_MODE`]).
const IMAGE_DIR_MODE: u32 = crate::image::layer::DIR_MODE;
/// Mode of the catalog's files in an olmpack image.
const IMAGE_FILE_MODE: u32 = crate::image::layer::FILE_MODE;

/// The catalog folder as an image built from it holds it, in `fs.WalkDir` order: what opm
/// hashes when it checks the cache inside the image.
pub fn catalog_tree_in_image(dir: &Path) -> Result<Vec<TreeEntry>, BuildError> {
    let mut walker = Walker::new(dir)?;
    let mut entries = Vec::new();
    walker.add_folder(dir, "", &mut entries)?;
    let mut out = vec![TreeEntry::dir(".", IMAGE_DIR_MODE)];
    for e in entries {
        let name = String::from_utf8_lossy(&e.name).into_owned();
        match e.kind {
            EntryKind::Dir => out.push(TreeEntry::dir(
                name.trim_end_matches('/').to_string(),
                IMAGE_DIR_MODE,
            )),
            EntryKind::File { source, size, .. } => out.push(TreeEntry::file(
                name,
                IMAGE_FILE_MODE,
                size,
                Content::Path(source),
            )),
        }
    }
    Ok(out)
}

fn check_name(kind: &str, name: &str) -> Result<(), CacheError> {
    if name.contains('/') || name.contains('\0') {
        return Err(CacheError::Name(format!(
            "{kind} name {name:?} contains '/' and cannot be part of a cache file name (build with --no-cache)"
        )));
    }
    Ok(())
}

/// Writes `base/cache/…` (not the digest) for `model`, with opm's modes, as current opm
/// writes it.
pub fn write_cache_files(model: &ServeModel, base: &Path) -> Result<(usize, u64), CacheError> {
    write_cache_files_for(model, base, Semantics::CURRENT)
}

/// [`write_cache_files`] as the opm of `semantics` writes it: what its stored bundles and
/// package index hold ([`ServeModel::convert_for`]), and `metas/` only from v1.69 (older opm
/// ignores blobs of other schemas, whatever their names).
pub fn write_cache_files_for(
    model: &ServeModel,
    base: &Path,
    semantics: Semantics,
) -> Result<(usize, u64), CacheError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let cache = base.join("cache");
    let mkdir = |p: &Path| -> Result<(), CacheError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(CACHE_DIR_MODE)
            .create(p)
            .map_err(io_err(p))?;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(CACHE_DIR_MODE))
            .map_err(io_err(p))
    };
    let write = |p: &Path, bytes: &[u8]| -> Result<(), CacheError> {
        std::fs::write(p, bytes).map_err(io_err(p))?;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(CACHE_FILE_MODE))
            .map_err(io_err(p))
    };
    mkdir(base)?;
    mkdir(&cache)?;
    let mut files = 0usize;
    let mut bytes = 0u64;
    let index = index_to_go_json(&model.index_for(semantics));
    write(&cache.join("packages.json"), &index)?;
    files += 1;
    bytes += index.len() as u64;
    let mut names: HashSet<String> = HashSet::new();
    names.insert("packages.json".into());
    let mut jobs = Vec::with_capacity(model.entry_count());
    for (pkg, ch, b) in model.keys() {
        check_name("package", &pkg.name)?;
        check_name("channel", &ch.name)?;
        check_name("bundle", &b.name)?;
        let name = format!("{}_{}_{}.json", pkg.name, ch.name, b.name);
        if !names.insert(name.clone()) {
            return Err(CacheError::Name(format!(
                "two bundles map to the same cache file {name:?} (package, channel and bundle names joined by '_'); opm would keep either one, so build with --no-cache"
            )));
        }
        jobs.push((pkg, b, name));
    }
    // Converting bundles (CSV synthesis) is most of the work: one job per file, on every core.
    let written = crate::parallel::map_indexed(jobs.len(), crate::parallel::cores(), None, |i| {
        let (pkg, b, name) = &jobs[i];
        let json = model.convert_for(pkg, b, semantics)?.to_go_json();
        write(&cache.join(name), &json)?;
        Ok::<u64, CacheError>(json.len() as u64)
    });
    for w in written {
        files += 1;
        bytes += w?;
    }
    for stored in stored_metas(model.config(), semantics) {
        let (meta, package) = stored?;
        let mut dir = cache.join("metas").join(&meta.schema);
        if !package.is_empty() {
            dir = dir.join(package);
        }
        mkdir(&dir)?;
        let mut blob = meta.blob.get().as_bytes().to_vec();
        blob.push(b'\n');
        let mut h = gotar::Fnv64a::default();
        std::io::Write::write_all(&mut h, &blob).map_err(io_err(&dir))?;
        let path = dir.join(format!("{:x}.json", h.value()));
        if !path.exists() {
            files += 1;
            bytes += blob.len() as u64;
        }
        write(&path, &blob)?;
    }
    Ok((files, bytes))
}

/// Writes the whole cache (files and `digest`) under `base` for a catalog whose image tree is
/// `catalog` (see [`catalog_tree_in_image`]).
pub fn write_cache(
    model: &ServeModel,
    catalog: &[TreeEntry],
    base: &Path,
) -> Result<CacheSummary, CacheError> {
    write_cache_for(model, catalog, base, Semantics::CURRENT)
}

/// [`write_cache`] as the opm of `semantics` writes it ([`write_cache_files_for`]).
pub fn write_cache_for(
    model: &ServeModel,
    catalog: &[TreeEntry],
    base: &Path,
    semantics: Semantics,
) -> Result<CacheSummary, CacheError> {
    use std::os::unix::fs::PermissionsExt;
    let (files, bytes) = write_cache_files_for(model, base, semantics)?;
    let cache_tree =
        gotar::tree_of_dir(&base.join("cache"), Some((CACHE_DIR_MODE, CACHE_FILE_MODE)))
            .map_err(crate::fsio::at("read", &base.join("cache")))?;
    let digest = gotar::json_cache_digest(catalog, &cache_tree)?;
    let digest_path = base.join("digest");
    std::fs::write(&digest_path, digest.as_bytes()).map_err(io_err(&digest_path))?;
    std::fs::set_permissions(
        &digest_path,
        std::fs::Permissions::from_mode(CACHE_FILE_MODE),
    )
    .map_err(io_err(&digest_path))?;
    Ok(CacheSummary {
        digest,
        files,
        bytes,
    })
}

/// A cache written once in the spool, ready to become one layer per owner.
#[derive(Debug)]
pub struct CacheFiles {
    /// The folder holding `cache/` and `digest`.
    base: PathBuf,
    /// What it holds.
    pub summary: CacheSummary,
    /// Which of opm's formats.
    pub format: CacheFormat,
}

/// Builds opm's serve cache in `format` for the catalog folder `dir` into `spool`, with
/// current opm's content.
pub fn cache_files_as(
    dir: &Path,
    spool: &Path,
    format: CacheFormat,
) -> Result<CacheFiles, CacheError> {
    cache_files_for(dir, spool, &CacheProfile::unknown(Some(format)))
}

/// Builds the serve cache `profile` says for the catalog folder `dir` into `spool`: the format
/// and content the base's opm writes itself.
pub fn cache_files_for(
    dir: &Path,
    spool: &Path,
    profile: &CacheProfile,
) -> Result<CacheFiles, CacheError> {
    let model = ServeModel::from_dir(dir)?;
    let base = spool.join("serve-cache");
    let summary = match profile.format {
        CacheFormat::Json => {
            let catalog = catalog_tree_in_image(dir)?;
            write_cache_for(&model, &catalog, &base, profile.semantics)?
        }
        CacheFormat::Pogreb => {
            super::pogreb::write_pogreb_cache_for(&model, dir, &base, profile.semantics)?
        }
    };
    Ok(CacheFiles {
        base,
        summary,
        format: profile.format,
    })
}

/// A cache layer ready to add to an image.
#[derive(Debug)]
pub struct CacheLayer {
    /// The layer blob (in the spool).
    pub layer: LayerBlob,
    /// What it holds.
    pub summary: CacheSummary,
    /// Who owns its entries.
    pub owner: CacheOwner,
}

/// Builds opm's serve cache for the catalog folder `dir` into `spool` (a private temp folder).
pub fn cache_files(dir: &Path, spool: &Path) -> Result<CacheFiles, CacheError> {
    cache_files_for(dir, spool, &CacheProfile::default())
}

impl CacheFiles {
    /// The cache as a layer holding `<cache_dir>/cache/…` and `<cache_dir>/digest` (no entries
    /// for the parents of `cache_dir`, so an existing `/tmp` keeps its mode and owner), every
    /// entry owned by `owner` with opm's modes.
    pub fn layer(
        &self,
        cache_dir: &str,
        mtime: u64,
        spool: &Path,
        owner: &CacheOwner,
    ) -> Result<CacheLayer, CacheError> {
        let base = &self.base;
        let prefix = cache_dir.trim_matches('/');
        let tree = gotar::tree_of_dir(base, None).map_err(crate::fsio::at("read", base))?;
        let mut entries = Vec::with_capacity(tree.len());
        for e in tree {
            let name = if e.path == "." {
                format!("{prefix}/")
            } else if e.file.is_none() {
                format!("{prefix}/{}/", e.path)
            } else {
                format!("{prefix}/{}", e.path)
            };
            let kind = match e.file {
                None => EntryKind::Dir,
                Some((size, Content::Path(source))) => EntryKind::File {
                    shown: source.clone(),
                    source,
                    size,
                },
                Some((_, Content::Bytes(_))) => continue,
            };
            entries.push(Entry {
                name: name.into_bytes(),
                kind,
            });
        }
        let layer = crate::image::layer::write_layer_with_modes(
            &entries,
            mtime,
            &spool.join(format!("serve-cache-{}-{}.tar.gz", owner.uid, owner.gid)),
            self.format.modes().0,
            self.format.modes().1,
            (owner.uid, owner.gid),
        )?;
        Ok(CacheLayer {
            layer,
            summary: self.summary.clone(),
            owner: owner.clone(),
        })
    }
}

/// Builds opm's serve cache for the catalog folder `dir` and writes it as a layer owned by
/// `owner` (see [`CacheFiles::layer`]). `spool` is a private temp folder.
pub fn cache_layer(
    dir: &Path,
    cache_dir: &str,
    mtime: u64,
    spool: &Path,
    owner: &CacheOwner,
) -> Result<CacheLayer, CacheError> {
    cache_files(dir, spool)?.layer(cache_dir, mtime, spool, owner)
}

/// Whether `catalog build` ships a serve cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServeCache {
    /// With a base image (which runs opm) yes; a scratch image has nothing to run it.
    #[default]
    Auto,
    /// Always (`--cache`), even on a scratch image (for an opm added later, or a CatalogSource
    /// whose pod runs another image's opm on it).
    Always,
    /// Never (`--no-cache`): opm builds its cache at every start, in a temp folder.
    Never,
}

impl ServeCache {
    /// Whether a cache is built for an image with (`true`) or without a base.
    pub fn wanted(self, has_base: bool) -> bool {
        match self {
            ServeCache::Auto => has_base,
            ServeCache::Always => true,
            ServeCache::Never => false,
        }
    }
}

/// `CMD` of a catalog image on an opm base: `serve <configs>`, with `--cache-dir=<dir>` when it
/// ships a cache (as `opm generate dockerfile` writes it; opm then enforces its integrity).
pub fn serve_cmd(configs: &str, cache_dir: Option<&str>) -> Vec<String> {
    let mut cmd = vec!["serve".to_string(), configs.to_string()];
    if let Some(dir) = cache_dir {
        cmd.push(format!("--cache-dir={dir}"));
    }
    cmd
}

/// Checks a `--cache-dir` value: an absolute, clean path that is neither `/` nor inside (or
/// around) the catalog folder, since a cache inside the catalog would change what it hashes.
pub fn cache_dir_in_image(value: &str, configs: &str) -> Result<String, CacheError> {
    let bad = |why: &str| CacheError::Name(format!("--cache-dir {value:?}: {why}"));
    if !value.starts_with('/') {
        return Err(bad(
            "must be an absolute path in the image (e.g. /tmp/cache)",
        ));
    }
    let clean = value.trim_end_matches('/');
    if clean.is_empty() {
        return Err(bad("cannot be /"));
    }
    if clean
        .split('/')
        .skip(1)
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err(bad("must not contain empty, `.` or `..` parts"));
    }
    let configs = configs.trim_end_matches('/');
    let inside = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}/"));
    if inside(clean, configs) || inside(configs, clean) {
        return Err(bad(&format!(
            "must be outside the catalog folder {configs} (and not contain it)"
        )));
    }
    Ok(clean.to_string())
}
