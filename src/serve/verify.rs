//! `catalog cache verify`: would opm accept this serve cache, and if not, why.
//!
//! Why: a stale cache is fatal at runtime (`opm serve --cache-dir` enforces integrity and the
//! pod crash-loops on `integrity check failed: cache requires rebuild`), typically after an image
//! was filtered or rebuilt (oc-mirror, HyperShift). The check recomputes the digest exactly as
//! opm does ([`super::gotar`]) over the catalog and cache as opm will see them (for an image:
//! the modes its layers give), then, to say *why*, rebuilds the cache this catalog gives and
//! compares it file by file with the shipped one.

use super::cache::{CACHE_DIR_MODE, CACHE_FILE_MODE};
use super::gotar::{self, TreeEntry};
use super::model::ServeModel;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Why a verification could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// Reading the folder or image failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The image could not be read.
    #[error(transparent)]
    Transport(#[from] crate::transport::TransportError),
    /// The image could not be read.
    #[error(transparent)]
    Registry(#[from] crate::registry::RegistryError),
    /// Usage: what is missing to know where the catalog or cache is.
    #[error("{0}")]
    Usage(String),
    /// Hashing failed.
    #[error(transparent)]
    Tar(#[from] gotar::TarError),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> VerifyError {
    let what = what.into();
    move |source| VerifyError::Io { what, source }
}

/// One cache file that differs from what the catalog gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Path under the cache folder (`cache/…`).
    pub path: String,
    /// What it holds and where that comes from in the catalog.
    pub about: String,
}

/// The verdict.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// The catalog folder (as named in the image or given).
    pub catalog: String,
    /// The cache folder.
    pub cache_dir: String,
    /// The digest the cache records (`digest` file), if any.
    pub recorded: Option<String>,
    /// The digest opm computes now.
    pub computed: String,
    /// Whether `opm serve --cache-dir … --cache-enforce-integrity` starts on it.
    pub accepted: bool,
    /// Why not, or things to know (one sentence each).
    pub notes: Vec<String>,
    /// Cache files whose bytes differ from what the catalog gives.
    pub changed: Vec<ChangedFile>,
    /// Cache files the catalog gives but the cache lacks.
    pub missing: Vec<ChangedFile>,
    /// Cache files the catalog does not give.
    pub extra: Vec<String>,
    /// Cache entries whose mode is not opm's (the digest covers modes).
    pub modes: Vec<String>,
    /// Files in the catalog folder / in the cache.
    pub counts: (usize, usize),
}

/// Verifies a catalog folder and the cache folder opm was given (`--cache-dir`), with the
/// modes they have on disk (what opm would hash running here).
pub fn verify_dir(catalog: &Path, cache_dir: &Path) -> Result<VerifyReport, VerifyError> {
    let catalog_tree =
        gotar::tree_of_dir(catalog, None).map_err(io(format!("{}", catalog.display())))?;
    let cache = cache_dir.join("cache");
    let cache_tree = if cache.is_dir() {
        gotar::tree_of_dir(&cache, None).map_err(io(format!("{}", cache.display())))?
    } else {
        Vec::new()
    };
    verify_trees(
        catalog,
        &catalog_tree,
        cache_dir,
        &cache_tree,
        catalog.display().to_string(),
        cache_dir.display().to_string(),
    )
}

/// Verifies the cache of a catalog image: the catalog folder from the configs label (or
/// `configs`), the cache folder from CMD's `--cache-dir` (or `cache_dir`), hashed with the
/// modes the image's layers give them.
pub fn verify_image(
    source: &str,
    opts: &crate::transport::RegistryOptions,
    configs: Option<&str>,
    cache_dir: Option<&str>,
) -> Result<VerifyReport, VerifyError> {
    let location =
        crate::location::Location::parse(source).map_err(|e| VerifyError::Usage(e.to_string()))?;
    let opened = crate::transport::source::open_image(&location, opts)?;
    let labels = opened.labels();
    let configs = match configs.or(labels
        .get(crate::catalog::CONFIGS_LABEL)
        .map(String::as_str))
    {
        Some(c) => clean_abs(c).ok_or_else(|| {
            VerifyError::Usage(format!(
                "{source}: the catalog folder {c:?} is not a clean absolute path"
            ))
        })?,
        None => {
            return Err(VerifyError::Usage(format!(
                "{source}: no {} label: not a catalog image (give --configs-dir)",
                crate::catalog::CONFIGS_LABEL
            )));
        }
    };
    let config = opened.config_json();
    let cmd: Vec<String> = config["config"]["Cmd"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let from_cmd = cmd.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--cache-dir=")
            .map(str::to_string)
            .or_else(|| {
                (a == "--cache-dir")
                    .then(|| cmd.get(i + 1).cloned())
                    .flatten()
            })
    });
    let cache_dir = match cache_dir.map(str::to_string).or(from_cmd) {
        Some(c) => clean_abs(&c).ok_or_else(|| {
            VerifyError::Usage(format!(
                "{source}: the cache folder {c:?} is not a clean absolute path"
            ))
        })?,
        None => {
            return Err(VerifyError::Usage(format!(
                "{source}: its CMD ({cmd:?}) has no --cache-dir, so opm ignores any cache and builds one at every start; give --cache-dir to check a cache anyway"
            )));
        }
    };
    let root = tempfile::Builder::new()
        .prefix("olmpack-verify-")
        .tempdir()
        .map_err(io("create a temp folder"))?;
    opened.unpack_into(root.path(), &crate::transport::unpack::Limits::default())?;
    // The modes the layers give (the unpacker normalizes them; opm sees these).
    let modes = layer_modes(&opened, &[&configs, &cache_dir])?;
    let with_modes = |base: &str, tree: Vec<TreeEntry>| -> Vec<TreeEntry> {
        tree.into_iter()
            .map(|mut e| {
                let full = if e.path == "." {
                    base.to_string()
                } else {
                    format!("{base}/{}", e.path)
                };
                if let Some(m) = modes.get(&full) {
                    e.mode = *m;
                }
                e
            })
            .collect()
    };
    let catalog_dir = root.path().join(&configs);
    if !catalog_dir.is_dir() {
        return Err(VerifyError::Usage(format!(
            "{source}: the image has no catalog folder /{configs}"
        )));
    }
    let catalog_tree = with_modes(
        &configs,
        gotar::tree_of_dir(&catalog_dir, None).map_err(io(format!("/{configs}")))?,
    );
    let cache_base = root.path().join(&cache_dir);
    let cache = cache_base.join("cache");
    let cache_tree = if cache.is_dir() {
        with_modes(
            &format!("{cache_dir}/cache"),
            gotar::tree_of_dir(&cache, None).map_err(io(format!("/{cache_dir}/cache")))?,
        )
    } else {
        Vec::new()
    };
    let mut report = verify_trees(
        &catalog_dir,
        &catalog_tree,
        &cache_base,
        &cache_tree,
        format!("{source} /{configs}"),
        format!("/{cache_dir}"),
    )?;
    for w in &opened.warnings {
        report.notes.push(w.clone());
    }
    Ok(report)
}

/// `a/b` for `/a/b/`; `None` for relative paths, `.`/`..`/empty parts or `/`.
fn clean_abs(p: &str) -> Option<String> {
    let rel = p.strip_prefix('/')?.trim_end_matches('/');
    if rel.is_empty()
        || rel
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return None;
    }
    Some(rel.to_string())
}

/// Mode of every entry under `prefixes` (relative, no leading `/`), the last layer winning.
fn layer_modes(
    opened: &crate::transport::source::OpenedImage,
    prefixes: &[&str],
) -> Result<HashMap<String, u32>, VerifyError> {
    let mut modes = HashMap::new();
    for (i, desc) in opened.layer_descriptors().iter().enumerate() {
        let mut vr = opened.open_layer(i)?;
        {
            let r = crate::transport::unpack::decompress(&mut vr, &desc.media_type, &desc.digest)
                .map_err(crate::transport::TransportError::from)?;
            let mut archive = tar::Archive::new(r);
            let entries = archive
                .entries()
                .map_err(io(format!("layer {}", desc.digest)))?;
            for e in entries {
                let e = e.map_err(io(format!("layer {}", desc.digest)))?;
                let Ok(path) = e.path() else { continue };
                let path = path.to_string_lossy();
                let path = path.trim_start_matches("./").trim_start_matches('/');
                let path = path.trim_end_matches('/').to_string();
                if prefixes
                    .iter()
                    .any(|p| path == *p || path.starts_with(&format!("{p}/")))
                    && let Ok(m) = e.header().mode()
                {
                    modes.insert(path, m & 0o7777);
                }
            }
        }
        vr.finish()
            .map_err(crate::transport::TransportError::from)?;
    }
    Ok(modes)
}

/// The verdict for a catalog (folder `catalog_dir`, hashed as `catalog_tree`) and a cache
/// folder `cache_base` (its `cache/` hashed as `cache_tree`).
pub fn verify_trees(
    catalog_dir: &Path,
    catalog_tree: &[TreeEntry],
    cache_base: &Path,
    cache_tree: &[TreeEntry],
    catalog_name: String,
    cache_name: String,
) -> Result<VerifyReport, VerifyError> {
    let mut r = VerifyReport {
        catalog: catalog_name,
        cache_dir: cache_name,
        counts: (
            catalog_tree.iter().filter(|e| e.file.is_some()).count(),
            cache_tree.iter().filter(|e| e.file.is_some()).count(),
        ),
        ..VerifyReport::default()
    };
    let digest_file = cache_base.join("digest");
    r.recorded = std::fs::read_to_string(&digest_file)
        .ok()
        .map(|s| s.trim().to_string());
    let has_cache = cache_base.join("cache").is_dir();
    r.computed = gotar::json_cache_digest(catalog_tree, cache_tree)?;
    if cache_base.join("pogreb.v1").is_dir() {
        r.notes.push(
            "the cache folder also holds pogreb.v1/: opm v1.41 and later read that cache instead of this one"
                .into(),
        );
    }
    match (&r.recorded, has_cache) {
        (None, _) | (_, false) => {
            r.notes.push(format!(
                "no JSON serve cache here (opm needs both {0}/cache/ and {0}/digest): opm with --cache-dir fails or rebuilds it",
                r.cache_dir
            ));
        }
        (Some(d), true) if *d == r.computed => r.accepted = true,
        (Some(d), true) => r.notes.push(format!(
            "opm will refuse it: integrity check failed: cache requires rebuild: cache reports digest as {d:?}, but computed digest is {:?}",
            r.computed
        )),
    }
    for e in cache_tree {
        let want = if e.file.is_some() {
            CACHE_FILE_MODE
        } else {
            CACHE_DIR_MODE
        };
        if e.mode != want {
            r.modes.push(format!(
                "cache/{} has mode {:04o} (opm writes {want:04o})",
                e.path.trim_start_matches("./"),
                e.mode
            ));
        }
    }
    if r.accepted {
        return Ok(r);
    }
    // Why: rebuild the cache this catalog gives and compare.
    let model = match ServeModel::from_dir(catalog_dir) {
        Ok(m) => m,
        Err(e) => {
            r.notes.push(format!(
                "the catalog cannot be served ({e}), so no cache matches it"
            ));
            return Ok(r);
        }
    };
    let expected = tempfile::Builder::new()
        .prefix("olmpack-verify-cache-")
        .tempdir()
        .map_err(io("create a temp folder"))?;
    if let Err(e) = super::cache::write_cache_files(&model, expected.path()) {
        r.notes.push(e.to_string());
        return Ok(r);
    }
    // What each expected file holds, for messages.
    let mut about: BTreeMap<String, String> = BTreeMap::new();
    about.insert(
        "cache/packages.json".into(),
        "the package index (packages, channels, heads, upgrade edges)".into(),
    );
    for (p, c, b) in model.keys() {
        let from = model
            .origin(b)
            .map(|o| format!("; catalog file {}:{}", o.file, o.line))
            .unwrap_or_default();
        about.insert(
            format!("cache/{}_{}_{}.json", p.name, c.name, b.name),
            format!(
                "bundle {} of package {}, channel {}{from}",
                b.name, p.name, c.name
            ),
        );
    }
    let files = |base: &Path| -> Result<BTreeMap<String, PathBuf>, VerifyError> {
        let dir = base.join("cache");
        if !dir.is_dir() {
            return Ok(BTreeMap::new());
        }
        Ok(gotar::tree_of_dir(&dir, None)
            .map_err(io(format!("{}", dir.display())))?
            .into_iter()
            .filter_map(|e| match e.file {
                Some((_, gotar::Content::Path(p))) => Some((format!("cache/{}", e.path), p)),
                _ => None,
            })
            .collect())
    };
    let want = files(expected.path())?;
    let have = files(cache_base)?;
    let describe = |k: &str| ChangedFile {
        path: k.to_string(),
        about: about
            .get(k)
            .cloned()
            .unwrap_or_else(|| "a blob of another schema".into()),
    };
    for (k, p) in &want {
        match have.get(k) {
            None => r.missing.push(describe(k)),
            Some(h) => {
                let a = std::fs::read(p).map_err(io(k.clone()))?;
                let b = std::fs::read(h).map_err(io(k.clone()))?;
                if a != b {
                    r.changed.push(describe(k));
                }
            }
        }
    }
    r.extra = have
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    if r.recorded.is_some()
        && has_cache
        && r.changed.is_empty()
        && r.missing.is_empty()
        && r.extra.is_empty()
        && r.modes.is_empty()
    {
        r.notes.push(
            "every cache file is what this catalog gives, so the catalog folder's bytes changed since the digest was computed: a file edited (even only reformatted), added, removed or renamed, or its mode changed; rebuild the image (or the cache)"
                .into(),
        );
    }
    Ok(r)
}

impl VerifyReport {
    /// The report as text, one fact per line.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "catalog: {} ({} files)\n",
            self.catalog, self.counts.0
        ));
        s.push_str(&format!(
            "cache:   {} ({} files)\n",
            self.cache_dir, self.counts.1
        ));
        s.push_str(&format!(
            "digest:  recorded {}, computed {}\n",
            self.recorded.as_deref().unwrap_or("(none)"),
            self.computed
        ));
        if self.accepted {
            s.push_str("ok: opm will accept this cache (the digest matches)\n");
        }
        for n in &self.notes {
            s.push_str(&format!("{n}\n"));
        }
        for c in &self.changed {
            s.push_str(&format!("changed: {} ({})\n", c.path, c.about));
        }
        for c in &self.missing {
            s.push_str(&format!("missing: {} ({})\n", c.path, c.about));
        }
        for e in &self.extra {
            s.push_str(&format!("extra:   {e} (this catalog gives no such file)\n"));
        }
        for m in &self.modes {
            s.push_str(&format!("mode:    {m}\n"));
        }
        s
    }
}
