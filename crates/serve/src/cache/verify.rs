//! `catalog cache verify`: would opm accept this serve cache, and if not, why.
//!
//! Why: a stale cache is fatal at runtime (`opm serve --cache-dir` enforces integrity and the
//! pod crash-loops on `integrity check failed: cache requires rebuild`), typically after an image
//! was filtered or rebuilt (oc-mirror, HyperShift). The check recomputes the digest exactly as
//! opm does ([`crate::gocompat::tar`]) over the catalog and cache as opm will see them (for an image:
//! the modes its layers give), then, to say *why*, rebuilds the cache this catalog gives and
//! compares it file by file with the shipped one.

use super::report::{CacheEntryOwner, ChangedFile, VerifyReport};
use super::write::{CACHE_DIR_MODE, CACHE_FILE_MODE};
use crate::gocompat::tar::{self as gotar, TreeEntry};
use crate::serve::model::ServeModel;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Why a verification could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A local file or folder could not be read.
    #[error(transparent)]
    Fs(#[from] crate::fsio::FsError),
    /// Reading inside the image failed (a layer, a path as the image names it).
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

/// Verifies a catalog folder and the cache folder opm was given (`--cache-dir`), with the
/// modes they have on disk (what opm would hash running here).
pub fn verify_dir(catalog: &Path, cache_dir: &Path) -> Result<VerifyReport, VerifyError> {
    let catalog_tree =
        gotar::tree_of_dir(catalog, None).map_err(crate::fsio::at("read", catalog))?;
    let cache = cache_dir.join("cache");
    let cache_tree = if cache.is_dir() {
        gotar::tree_of_dir(&cache, None).map_err(crate::fsio::at("read", &cache))?
    } else {
        Vec::new()
    };
    let mut report = verify_trees(
        catalog,
        &catalog_tree,
        cache_dir,
        &cache_tree,
        catalog.display().to_string(),
        cache_dir.display().to_string(),
    )?;
    if report.recorded.is_some() || cache.is_dir() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        report.ownership = gotar::tree_of_dir(cache_dir, None)
            .map_err(crate::fsio::at("read", cache_dir))?
            .into_iter()
            .filter_map(|e| {
                let m = std::fs::symlink_metadata(cache_dir.join(&e.path)).ok()?;
                Some(CacheEntryOwner {
                    dir: e.file.is_none(),
                    path: e.path,
                    uid: m.uid(),
                    gid: m.gid(),
                    mode: m.permissions().mode() & 0o7777,
                })
            })
            .collect();
    }
    Ok(report)
}

/// Where the cache folder of an image was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CacheDirFrom {
    /// Given by the caller.
    Flag,
    /// CMD's `--cache-dir` (opm enforces its integrity at start).
    Cmd,
    /// Found in the image's files (CMD names none: a scratch image, or a cache for a pod that
    /// runs another image's opm on it).
    Found,
}

/// Folders of the unpacked image (outside the catalog folder) that hold a serve cache: JSON
/// (`cache/` and `digest`) or pogreb (`pogreb.v1/`). Symlinks are not followed; the walk is
/// bounded in depth and entries.
fn find_caches(root: &Path, configs: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack: Vec<(PathBuf, String, usize)> = vec![(root.to_path_buf(), String::new(), 0)];
    let mut seen = 0usize;
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = read
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        let is_cache = (names.iter().any(|n| n == "cache") && dir.join("digest").is_file())
            || names.iter().any(|n| n == "pogreb.v1");
        if is_cache && !rel.is_empty() {
            found.push(rel.clone());
            continue;
        }
        for n in names.into_iter().rev() {
            seen += 1;
            let child = if rel.is_empty() {
                n.clone()
            } else {
                format!("{rel}/{n}")
            };
            if child == configs || matches!(child.as_str(), "proc" | "sys" | "dev") {
                continue;
            }
            if depth < 8 && seen < 200_000 {
                stack.push((dir.join(&n), child, depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// Verifies the cache of an opened catalog image `source`: the catalog folder `configs` (from
/// the configs label or the caller, already a clean path inside the image, see
/// `action::source`), the cache folder from `cache_dir`, else CMD's `--cache-dir`, else the one
/// serve cache the image holds; hashed with the modes the image's layers give them, and
/// judged for who can read it (the image's user, an arbitrary uid in group 0).
///
/// The cache is also judged against the opm that will serve it ([`super::fit`]): `opm`, else
/// the version recorded in the image's own opm binary (none found: not judged).
pub fn verify_image(
    source: &str,
    opened: &crate::transport::OpenedImage,
    configs: String,
    cache_dir: Option<&str>,
    opm: Option<crate::cache::OpmVersion>,
) -> Result<VerifyReport, VerifyError> {
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
    let given = match (cache_dir, from_cmd) {
        (Some(c), _) => Some((c.to_string(), CacheDirFrom::Flag)),
        (None, Some(c)) => Some((c, CacheDirFrom::Cmd)),
        (None, None) => None,
    };
    let given = match given {
        Some((c, from)) => Some((
            clean_abs(&c).ok_or_else(|| {
                VerifyError::Usage(format!(
                    "{source}: the cache folder {c:?} is not a clean absolute path"
                ))
            })?,
            from,
        )),
        None => None,
    };
    let root = crate::interrupt::temp_dir("olmpack-verify-").map_err(io("create a temp folder"))?;
    opened.unpack_into(root.path(), &crate::transport::unpack::Limits::default())?;
    let mut report = verify_in(source, opened, root.path(), &configs, given, &cmd)?;
    if report.no_cache {
        return Ok(report);
    }
    let target = match opm {
        Some(v) => Some((v, "--opm-version".to_string())),
        None => super::profile::base_opm_version(opened)?
            .map(|f| (f.version, format!("{source} {}", f.from))),
    };
    match (target, report.cache_base.clone()) {
        (Some((v, from)), Some(base)) => super::fit::check(
            &mut report,
            &root.path().join(&configs),
            &root.path().join(base),
            v,
            from,
        ),
        (None, _) => report.notes.push(
            "the image's opm version is unknown (no opm binary with a recorded version): give --opm-version to check that the cache holds what that opm writes".into(),
        ),
        _ => {}
    }
    Ok(report)
}

/// [`verify_image`] for an image already unpacked at `root` (`catalog serve IMAGE
/// --cache-dir`): the cache folder `cache_dir` (an absolute path inside the image) is hashed
/// with the modes and owners the image's layers give, as opm sees them in a container, not
/// with the modes the unpacker wrote.
pub fn verify_unpacked(
    source: &str,
    opened: &crate::transport::OpenedImage,
    root: &Path,
    configs: &str,
    cache_dir: &str,
) -> Result<VerifyReport, VerifyError> {
    let given = clean_abs(cache_dir).ok_or_else(|| {
        VerifyError::Usage(format!(
            "{source}: the cache folder {cache_dir:?} is not a clean absolute path"
        ))
    })?;
    verify_in(
        source,
        opened,
        root,
        configs,
        Some((given, CacheDirFrom::Flag)),
        &[],
    )
}

/// The verdict on the cache of `opened`, unpacked at `root`, its catalog at `configs`.
fn verify_in(
    source: &str,
    opened: &crate::transport::OpenedImage,
    root: &Path,
    configs: &str,
    given: Option<(String, CacheDirFrom)>,
    cmd: &[String],
) -> Result<VerifyReport, VerifyError> {
    let config = opened.config_json();
    let configs = configs.to_string();
    let catalog_dir = root.join(&configs);
    if !catalog_dir.is_dir() {
        return Err(VerifyError::Usage(format!(
            "{source}: the image has no catalog folder /{configs}"
        )));
    }
    let (cache_dir, from) = match given {
        Some(g) => g,
        None => {
            let found = find_caches(root, &configs);
            match found.as_slice() {
                [] => {
                    return Ok(VerifyReport {
                        catalog: format!("{source} /{configs}"),
                        accepted: true,
                        no_cache: true,
                        notes: vec![format!(
                            "no serve cache: opm will build one at start ({source}: its CMD names no --cache-dir and the image holds no cache)"
                        )],
                        ..VerifyReport::default()
                    });
                }
                [one] => (one.clone(), CacheDirFrom::Found),
                many => {
                    return Err(VerifyError::Usage(format!(
                        "{source}: its CMD names no --cache-dir and it holds several serve caches ({}); give --cache-dir",
                        many.iter()
                            .map(|m| format!("/{m}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
        }
    };
    // The modes and owners the layers give (the unpacker normalizes them; opm sees these).
    let meta = layer_meta(opened, &[&configs, &cache_dir])?;
    let with_modes = |base: &str, tree: Vec<TreeEntry>| -> Vec<TreeEntry> {
        tree.into_iter()
            .map(|mut e| {
                let full = if e.path == "." {
                    base.to_string()
                } else {
                    format!("{base}/{}", e.path)
                };
                if let Some(m) = meta.get(&full) {
                    e.mode = m.mode;
                }
                e
            })
            .collect()
    };
    let catalog_tree = with_modes(
        &configs,
        gotar::tree_of_dir(&catalog_dir, None).map_err(io(format!("/{configs}")))?,
    );
    let cache_base = root.join(&cache_dir);
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
    report.cache_base = Some(cache_dir.clone());
    if from == CacheDirFrom::Found {
        let scratch = cmd.is_empty()
            && !opened
                .runnable()
                .iter()
                .any(|r| r.starts_with("Entrypoint"));
        report.notes.insert(
            0,
            format!(
                "its CMD names no --cache-dir; the image holds a serve cache at /{cache_dir}{}",
                if scratch {
                    format!(
                        " (for a CatalogSource with grpcPodConfig.extractContent set cacheDir: /{cache_dir})"
                    )
                } else {
                    String::new()
                }
            ),
        );
    }
    if !report.no_cache {
        // Who owns the cache, and who can read it.
        report.ownership = cache_ownership(&cache_base, &cache_dir, &meta);
        judge_readers(
            &mut report,
            root,
            &crate::cache::owner::config_user(&config),
        );
    }
    for w in &opened.warnings {
        report.notes.push(w.clone());
    }
    Ok(report)
}

/// The owner and mode of every entry of the cache folder (itself included), from the layers;
/// an entry no layer lists (a parent the runtime creates) is root's, 0755.
fn cache_ownership(
    cache_base: &Path,
    cache_dir: &str,
    meta: &HashMap<String, EntryMeta>,
) -> Vec<CacheEntryOwner> {
    let Ok(tree) = gotar::tree_of_dir(cache_base, None) else {
        return Vec::new();
    };
    tree.into_iter()
        .map(|e| {
            let full = if e.path == "." {
                cache_dir.to_string()
            } else {
                format!("{cache_dir}/{}", e.path)
            };
            let m = meta.get(&full).copied().unwrap_or(EntryMeta {
                mode: 0o755,
                uid: 0,
                gid: 0,
            });
            CacheEntryOwner {
                path: e.path,
                uid: m.uid,
                gid: m.gid,
                mode: m.mode,
                dir: e.file.is_none(),
            }
        })
        .collect()
}

/// Reads a regular file of the unpacked image (`None` when absent or not a regular file).
fn image_file(root: &Path, rel: &str) -> Option<Vec<u8>> {
    let p = root.join(rel);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() {
        return None;
    }
    std::fs::read(p).ok()
}

/// `/tmp/cache/cache/x.json` for the entry `cache/x.json` of the cache folder `/tmp/cache`.
fn entry_path(cache_dir: &str, path: &str) -> String {
    match path {
        "." | "" => cache_dir.to_string(),
        p => format!("{cache_dir}/{p}"),
    }
}

/// An arbitrary uid in group 0, as OpenShift's restricted SCC runs images.
const ARBITRARY_UID: u32 = 1_000_650_000;

/// Adds who reads the cache: the image's user (refused when it cannot: opm exits at start) and
/// an arbitrary uid in group 0; warns when the image's user reads it only through group 0.
fn judge_readers(report: &mut VerifyReport, root: &Path, user: &str) {
    use crate::cache::owner::{Access, access};
    use crate::gocompat::execuser::{ExecUser, exec_user};
    if report.ownership.is_empty() {
        return;
    }
    let ownership = report.ownership.clone();
    let reach = |who: &ExecUser| -> (Option<String>, bool) {
        let mut via_group0 = false;
        for e in &ownership {
            match access(e.uid, e.gid, e.mode, e.dir, who) {
                Access::Denied => return (Some(e.path.clone()), false),
                Access::Group(0) => via_group0 = true,
                _ => {}
            }
        }
        (None, via_group0)
    };
    let passwd = image_file(root, "etc/passwd");
    let group = image_file(root, "etc/group");
    match exec_user(user, passwd.as_deref(), group.as_deref()) {
        Err(e) => report.warnings.push(format!(
            "the image's User {user:?} cannot be resolved ({e}): a container runtime refuses to start it"
        )),
        Ok(who) => {
            let name = if user.is_empty() {
                "the image's user (none named: root)".to_string()
            } else {
                format!(
                    "the image's user {user:?} (uid {}, gid {}{})",
                    who.uid,
                    who.gid,
                    if who.sgids.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", groups {}",
                            who.sgids
                                .iter()
                                .map(u32::to_string)
                                .collect::<Vec<_>>()
                                .join(",")
                        )
                    }
                )
            };
            match reach(&who) {
                (Some(path), _) => {
                    report.accepted = false;
                    report.readers.push(format!("{name} cannot read it"));
                    report.notes.push(format!(
                        "opm run as {name} cannot read {}: it exits at start with `detect cache format: … permission denied`",
                        entry_path(&report.cache_dir, &path)
                    ));
                }
                (None, true) if who.uid != 0 => {
                    report
                        .readers
                        .push(format!("{name} reads it only through group 0"));
                    report.warnings.push(format!(
                        "{name} reads the cache only through group 0: a pod that runs it in another group (runAsGroup) cannot, and opm exits at start with `permission denied`; own the cache as the image's user (olmpack catalog build does)"
                    ));
                }
                (None, _) => report.readers.push(format!("{name} reads it")),
            }
        }
    }
    let arbitrary = ExecUser {
        uid: ARBITRARY_UID,
        gid: 0,
        sgids: Vec::new(),
        name: None,
    };
    match reach(&arbitrary) {
        (Some(path), _) => {
            report.readers.push(
                "an arbitrary uid in group 0 (OpenShift's restricted SCC) cannot read it".into(),
            );
            report.warnings.push(format!(
                "an arbitrary uid in group 0 (OpenShift's restricted SCC) cannot read {}: on OpenShift opm exits at start with `permission denied`",
                entry_path(&report.cache_dir, &path)
            ));
        }
        (None, _) => report
            .readers
            .push("an arbitrary uid in group 0 (OpenShift's restricted SCC) reads it".into()),
    }
}

/// `a/b` for `/a/b/`; `None` for relative paths, `.`/`..`/empty parts or `/`.
/// `/a/b/` as `a/b`: an absolute path inside an image with no `.`, `..` or empty component
/// (`None` otherwise); the catalog and cache folders an image names are held to it.
pub fn clean_abs(p: &str) -> Option<String> {
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

/// Mode and owner of a layer entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntryMeta {
    mode: u32,
    uid: u32,
    gid: u32,
}

/// Mode and owner of every entry under `prefixes` (relative, no leading `/`), the last layer
/// winning.
fn layer_meta(
    opened: &crate::transport::OpenedImage,
    prefixes: &[&str],
) -> Result<HashMap<String, EntryMeta>, VerifyError> {
    let mut meta = HashMap::new();
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
                let h = e.header();
                if prefixes
                    .iter()
                    .any(|p| path == *p || path.starts_with(&format!("{p}/")))
                    && let Ok(m) = h.mode()
                {
                    let id = |v: std::io::Result<u64>| {
                        v.ok().and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
                    };
                    meta.insert(
                        path,
                        EntryMeta {
                            mode: m & 0o7777,
                            uid: id(h.uid()),
                            gid: id(h.gid()),
                        },
                    );
                }
            }
        }
        vr.finish()
            .map_err(crate::transport::TransportError::from)?;
    }
    Ok(meta)
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
    if cache_base.join(super::pogreb::POGREB_DIR).is_dir() {
        // Current opm looks for its pogreb cache first and reads only that one.
        if cache_base.join("cache").is_dir() {
            r.notes.push(format!(
                "{} also holds a JSON cache (cache/, digest): opm before v1.41 reads that one, current opm reads pogreb.v1/ (checked here)",
                r.cache_dir
            ));
        }
        super::pogreb::verify(catalog_dir, cache_base, &mut r);
        return Ok(r);
    }
    let digest_file = cache_base.join("digest");
    r.recorded = std::fs::read_to_string(&digest_file)
        .ok()
        .map(|s| s.trim().to_string());
    let has_cache = cache_base.join("cache").is_dir();
    r.computed = gotar::json_cache_digest(catalog_tree, cache_tree)?;
    match (&r.recorded, has_cache) {
        (None, false) => {
            // Nothing to compare: one line, not one per missing file.
            r.notes.push(format!(
                "no JSON serve cache at {0} (opm needs both {0}/cache/ and {0}/digest): opm serve --cache-dir {0} exits at start (`read existing cache digest: … no such file or directory`) unless told not to enforce integrity",
                r.cache_dir
            ));
            return Ok(r);
        }
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
    explain_mismatch(catalog_dir, cache_base, has_cache, &mut r)?;
    Ok(r)
}

/// Why a cache is refused: the cache this catalog gives, rebuilt in a temporary folder and
/// compared file by file with the one there (missing, changed and extra files, each said
/// what it holds), or a note when the catalog cannot be served at all.
fn explain_mismatch(
    catalog_dir: &Path,
    cache_base: &Path,
    has_cache: bool,
    r: &mut VerifyReport,
) -> Result<(), VerifyError> {
    let model = match ServeModel::from_dir(catalog_dir) {
        Ok(m) => m,
        Err(e) => {
            r.notes.push(format!(
                "the catalog cannot be served ({e}), so no cache matches it"
            ));
            return Ok(());
        }
    };
    let expected =
        crate::interrupt::temp_dir("olmpack-verify-cache-").map_err(io("create a temp folder"))?;
    if let Err(e) = super::write::write_cache_files(&model, expected.path()) {
        r.notes.push(e.to_string());
        return Ok(());
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
            .map_err(crate::fsio::at("read", &dir))?
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
    Ok(())
}

impl VerifyReport {
    /// The report as text, one fact per line.
    pub fn to_text(&self) -> String {
        self.to_text_limited(usize::MAX)
    }

    /// [`Self::to_text`] with at most `per_list` lines of each list (changed, missing, extra,
    /// modes) and a count of the rest: a refusal at start stays a few lines long, the whole
    /// list is `catalog cache verify`'s.
    pub fn to_text_limited(&self, per_list: usize) -> String {
        let mut s = String::new();
        if self.no_cache {
            for n in &self.notes {
                s.push_str(&format!("{n}\n"));
            }
            return s;
        }
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
        if let Some(owners) = self.owner_summary() {
            s.push_str(&format!("owner:   {owners}\n"));
        }
        for r in &self.readers {
            s.push_str(&format!("reader:  {r}\n"));
        }
        if self.accepted {
            s.push_str("ok: opm will accept this cache (the digest matches)\n");
        }
        if let Some(f) = &self.fit {
            s.push_str(&format!("opm:     {} ({})\n", f.target, f.from));
            if let Some(h) = &f.holds {
                s.push_str(&format!("content: what {h} writes\n"));
            } else {
                s.push_str("content: what no opm generation writes for this catalog\n");
            }
            if f.fits {
                s.push_str(&format!(
                    "ok: the cache is what opm {} writes for this catalog\n",
                    f.target
                ));
            } else {
                s.push_str(&format!(
                    "not fit: the cache is not what opm {} writes for this catalog ({} entries differ)\n",
                    f.target,
                    f.differ.len()
                ));
            }
            for w in &f.why {
                s.push_str(&format!("{w}\n"));
            }
            for d in f.differ.iter().take(per_list) {
                s.push_str(&format!("fit:     {d}\n"));
            }
            if f.differ.len() > per_list {
                s.push_str(&format!(
                    "         … and {} more\n",
                    f.differ.len() - per_list
                ));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("{n}\n"));
        }
        let mut list = |lines: Vec<String>| {
            for l in lines.iter().take(per_list) {
                s.push_str(l);
                s.push('\n');
            }
            if lines.len() > per_list {
                s.push_str(&format!("         … and {} more\n", lines.len() - per_list));
            }
        };
        list(
            self.changed
                .iter()
                .map(|c| format!("changed: {} ({})", c.path, c.about))
                .collect(),
        );
        list(
            self.missing
                .iter()
                .map(|c| format!("missing: {} ({})", c.path, c.about))
                .collect(),
        );
        list(
            self.extra
                .iter()
                .map(|e| format!("extra:   {e} (this catalog gives no such file)"))
                .collect(),
        );
        list(self.modes.iter().map(|m| format!("mode:    {m}")).collect());
        for w in &self.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        s
    }

    /// `1001:0 on all 9 entries; folders 0750, files 0640` (owners by count, then the modes).
    pub fn owner_summary(&self) -> Option<String> {
        if self.ownership.is_empty() {
            return None;
        }
        let mut owners: BTreeMap<(u32, u32), usize> = BTreeMap::new();
        let mut dir_modes: BTreeMap<u32, usize> = BTreeMap::new();
        let mut file_modes: BTreeMap<u32, usize> = BTreeMap::new();
        for e in &self.ownership {
            *owners.entry((e.uid, e.gid)).or_default() += 1;
            let modes = if e.dir {
                &mut dir_modes
            } else {
                &mut file_modes
            };
            *modes.entry(e.mode).or_default() += 1;
        }
        let total = self.ownership.len();
        let who = if owners.len() == 1 {
            let ((u, g), _) = owners.iter().next()?;
            format!("{u}:{g} on all {total} entries")
        } else {
            owners
                .iter()
                .map(|((u, g), n)| format!("{u}:{g} on {n}"))
                .collect::<Vec<_>>()
                .join(", ")
                + &format!(" of {total} entries")
        };
        let list = |m: &BTreeMap<u32, usize>| {
            m.keys()
                .map(|k| format!("{k:04o}"))
                .collect::<Vec<_>>()
                .join("/")
        };
        Some(format!(
            "{who}; folders {}, files {}",
            list(&dir_modes),
            if file_modes.is_empty() {
                "none".to_string()
            } else {
                list(&file_modes)
            }
        ))
    }
}
