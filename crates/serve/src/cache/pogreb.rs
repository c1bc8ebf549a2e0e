//! opm's pogreb serve cache (`pkg/cache/pogrebv1.go`, opm v1.41 and later), written and checked
//! as current opm writes and checks it.
//!
//! Why: current opm prefers this format (it looks for `pogreb.v1/` before the JSON cache), so
//! images built by current opm carry it, and a user whose base image carries a current opm may
//! want the format that opm writes. Layout under the cache folder:
//! - `pogreb.v1/db/`: a pogreb database ([`crate::gocompat::pogreb`]) with the keys
//!   `packages.json` (the package index, Go JSON), `bundles/<package>/<channel>/<bundle>` (the
//!   `api.Bundle` protobuf) and `metas/<schema>/<package>` (v1.69+: blobs of other schemas, each
//!   as a 4-byte big-endian length and a `google.protobuf.Struct`);
//! - `pogreb.v1/digest`: FNV-64a of every catalog blob as Go re-encodes it (`declcfg.Meta`: keys
//!   sorted, compact, a newline), file by file in walk order, then of every key and its value in
//!   key order. Unlike the JSON cache's digest, modes and file names of the catalog do not count.
//!
//! opm writes folders 0770 and files 0660 here (with umask 0).

use super::error::{CacheError, io_err};
pub use super::format::{POGREB_DIR_MODE, POGREB_FILE_MODE};
use super::format::{Semantics, stored_metas};
use super::report::CacheSummary;
use super::report::{ChangedFile, VerifyReport};
use crate::gocompat::pogreb::{Reader, Writer};
use crate::gocompat::tar::Fnv64a;
use crate::serve::model::{ServeModel, index_to_go_json};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The cache's folder under the cache directory (opm's `FormatPogrebV1`).
pub const POGREB_DIR: &str = "pogreb.v1";
/// The hash seed olmpack writes (pogreb draws a random one; any seed reads the same, a fixed one
/// keeps images reproducible).
pub const SEED: u32 = 0x6f6c_6d70;

/// The database key of a bundle's channel membership.
pub fn bundle_key(package: &str, channel: &str, bundle: &str) -> String {
    format!("bundles/{package}/{channel}/{bundle}")
}

/// The database opm's `Build` stores for `model`, in the order olmpack puts the keys (other
/// blobs in catalog order, then bundles, then the package index).
pub fn expected_entries(model: &ServeModel) -> Result<Vec<(String, Vec<u8>)>, CacheError> {
    expected_entries_for(model, Semantics::CURRENT)
}

/// [`expected_entries`] as the opm of `semantics` stores them (v1.41-v1.68: no `metas/` keys,
/// and before v1.69 blobs of other schemas are ignored whatever their names).
pub fn expected_entries_for(
    model: &ServeModel,
    semantics: Semantics,
) -> Result<Vec<(String, Vec<u8>)>, CacheError> {
    let mut metas: Vec<(String, Vec<u8>)> = Vec::new();
    for stored in stored_metas(model.config(), semantics) {
        let (meta, package) = stored?;
        let key = format!("metas/{}/{}", meta.schema, package);
        let st = crate::gocompat::protowire::structpb_from_json(meta.blob.get().as_bytes())
            .map_err(|e| CacheError::Name(format!("a blob of schema {:?}: {e}", meta.schema)))?;
        let mut rec = (st.len() as u32).to_be_bytes().to_vec();
        rec.extend_from_slice(&st);
        match metas.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.extend_from_slice(&rec),
            None => metas.push((key, rec)),
        }
    }
    let mut out = metas;
    for (pkg, ch, b) in model.keys() {
        let wire = crate::serve::store::to_wire(model.convert_for(pkg, b, semantics)?);
        out.push((
            bundle_key(&pkg.name, &ch.name, &b.name),
            prost::Message::encode_to_vec(&wire),
        ));
    }
    out.push((
        "packages.json".into(),
        index_to_go_json(&model.index_for(semantics)),
    ));
    Ok(out)
}

/// Every blob of the catalog folder as opm's `WalkMetasFS` hands it to the digest (Go's
/// re-encoding and a newline), hashed into `h`, file by file in walk order.
fn hash_catalog_blobs(catalog: &Path, h: &mut Fnv64a) -> Result<usize, String> {
    let loaded = crate::catalog::load::load_dir(catalog).map_err(|e| e.to_string())?;
    let mut n = 0usize;
    for rel in &loaded.files {
        let path = catalog.join(rel);
        let bytes =
            std::fs::read(&path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        for m in crate::catalog::load::file_metas(&bytes)
            .map_err(|e| format!("{}: {e}", path.display()))?
        {
            let _ = h.write_all(m.blob.as_bytes());
            let _ = h.write_all(b"\n");
            n += 1;
        }
    }
    Ok(n)
}

/// opm's `ComputeDigest` for a catalog folder and the database's keys and values (`items`, in
/// any order; opm sorts the keys).
pub fn digest(catalog: &Path, items: &[(Vec<u8>, Vec<u8>)]) -> Result<String, String> {
    let mut h = Fnv64a::default();
    hash_catalog_blobs(catalog, &mut h)?;
    let mut sorted: Vec<&(Vec<u8>, Vec<u8>)> = items.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, v) in sorted {
        let _ = h.write_all(k);
        let _ = h.write_all(v);
    }
    Ok(h.hex())
}

/// Writes `base/pogreb.v1/` (database and digest) for the catalog folder `catalog` served as
/// `model`, with opm's modes.
pub fn write_pogreb_cache(
    model: &ServeModel,
    catalog: &Path,
    base: &Path,
) -> Result<CacheSummary, CacheError> {
    write_pogreb_cache_for(model, catalog, base, Semantics::CURRENT)
}

/// [`write_pogreb_cache`] as the opm of `semantics` writes it ([`expected_entries_for`]).
pub fn write_pogreb_cache_for(
    model: &ServeModel,
    catalog: &Path,
    base: &Path,
    semantics: Semantics,
) -> Result<CacheSummary, CacheError> {
    use std::os::unix::fs::PermissionsExt;
    let entries = expected_entries_for(model, semantics)?;
    let mut w = Writer::new(SEED);
    for (k, v) in &entries {
        w.put(k.as_bytes(), v)
            .map_err(|e| CacheError::Name(e.to_string()))?;
    }
    let dir = base.join(POGREB_DIR);
    let db = dir.join("db");
    std::fs::create_dir_all(&db).map_err(io_err(&db))?;
    w.write_to(&db, POGREB_FILE_MODE)
        .map_err(|e| CacheError::Name(e.to_string()))?;
    for d in [base, dir.as_path(), db.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(POGREB_DIR_MODE))
            .map_err(io_err(d))?;
    }
    let items: Vec<(Vec<u8>, Vec<u8>)> = entries
        .into_iter()
        .map(|(k, v)| (k.into_bytes(), v))
        .collect();
    let digest = digest(catalog, &items).map_err(CacheError::Name)?;
    let digest_path = dir.join("digest");
    std::fs::write(&digest_path, digest.as_bytes()).map_err(io_err(&digest_path))?;
    std::fs::set_permissions(
        &digest_path,
        std::fs::Permissions::from_mode(POGREB_FILE_MODE),
    )
    .map_err(io_err(&digest_path))?;
    let files = w.files();
    Ok(CacheSummary {
        digest,
        files: files.len(),
        bytes: files.iter().map(|(_, b)| b.len() as u64).sum(),
    })
}

fn describe_key(model: Option<&ServeModel>, key: &str) -> String {
    if key == "packages.json" {
        return "the package index (packages, channels, heads, upgrade edges)".into();
    }
    if let Some(rest) = key.strip_prefix("bundles/") {
        let mut parts = rest.splitn(3, '/');
        let (p, c, b) = (
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let from = model
            .and_then(|m| {
                m.keys()
                    .find(|(mp, mc, mb)| mp.name == p && mc.name == c && mb.name == b)
                    .and_then(|(_, _, mb)| m.origin(mb))
            })
            .map(|o| format!("; catalog file {}:{}", o.file, o.line))
            .unwrap_or_default();
        return format!("bundle {b} of package {p}, channel {c}{from}");
    }
    if let Some(rest) = key.strip_prefix("metas/") {
        return format!("blobs of schema/package {rest}");
    }
    "a key opm does not write".into()
}

/// Checks the pogreb cache under `cache_base` against the catalog folder as current opm does
/// at start (`--cache-enforce-integrity`): read the recorded digest, open the database,
/// recompute the digest over the catalog's blobs and the database's keys and values. When they
/// differ, the database this catalog gives is compared key by key to say why.
pub fn verify(catalog: &Path, cache_base: &Path, r: &mut VerifyReport) {
    let dir = cache_base.join(POGREB_DIR);
    let digest_file = dir.join("digest");
    let db_dir = dir.join("db");
    r.cache_dir = format!("{} ({POGREB_DIR}, opm v1.41+)", r.cache_dir);
    r.recorded = match std::fs::read_to_string(&digest_file) {
        Ok(s) => Some(s.trim().to_string()),
        Err(e) => {
            r.notes.push(format!(
                "opm will refuse it: integrity check failed: read existing cache digest: open {}: {}",
                shown(cache_base, &digest_file, &r.cache_dir),
                go_io_text(&e)
            ));
            None
        }
    };
    let reader = match Reader::open(&db_dir) {
        Ok(rd) => rd,
        Err(e) => {
            r.notes.push(format!(
                "opm cannot open the pogreb database ({e}): opm serve exits at start (`open cache: …`)"
            ));
            return;
        }
    };
    r.notes.extend(reader.notes.iter().cloned());
    let items = match reader.items() {
        Ok(i) => i,
        Err(e) => {
            r.notes
                .push(format!("opm cannot read the pogreb database: {e}"));
            return;
        }
    };
    // The report counts files: the database's and the digest.
    r.counts.1 = std::fs::read_dir(&db_dir).map(|d| d.count()).unwrap_or(0)
        + usize::from(digest_file.is_file());
    if let Err(e) = reader.check_log() {
        r.notes.push(format!(
            "the database's log is damaged ({e}); pogreb reads values without checking, so opm may serve damaged bundles"
        ));
    }
    match digest(catalog, &items) {
        Ok(d) => r.computed = d,
        Err(e) => {
            r.notes.push(format!(
                "opm will refuse it: integrity check failed: compute digest: {e}"
            ));
            return;
        }
    }
    match &r.recorded {
        Some(d) if *d == r.computed => {
            r.accepted = true;
            return;
        }
        Some(d) => r.notes.push(format!(
            "opm will refuse it: integrity check failed: cache requires rebuild: cache reports digest as {d:?}, but computed digest is {:?}",
            r.computed
        )),
        None => {}
    }
    let model = match ServeModel::from_dir(catalog) {
        Ok(m) => m,
        Err(e) => {
            r.notes.push(format!(
                "the catalog cannot be served ({e}), so no cache matches it"
            ));
            return;
        }
    };
    let want = match expected_entries(&model) {
        Ok(w) => w,
        Err(e) => {
            r.notes.push(e.to_string());
            return;
        }
    };
    let have: BTreeMap<Vec<u8>, Vec<u8>> = items.into_iter().collect();
    let mut wanted: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (k, v) in want {
        wanted.insert(k.into_bytes(), v);
    }
    let key_path = |k: &[u8]| format!("{POGREB_DIR}/db key {}", String::from_utf8_lossy(k));
    for (k, v) in &wanted {
        let about = describe_key(Some(&model), &String::from_utf8_lossy(k));
        match have.get(k) {
            None => r.missing.push(ChangedFile {
                path: key_path(k),
                about,
            }),
            Some(h) if h != v && !same_metas(k, h, v) => r.changed.push(ChangedFile {
                path: key_path(k),
                about,
            }),
            Some(_) => {}
        }
    }
    r.extra = have
        .keys()
        .filter(|k| !wanted.contains_key(*k))
        .map(|k| key_path(k))
        .collect();
    if r.recorded.is_some() && r.changed.is_empty() && r.missing.is_empty() && r.extra.is_empty() {
        r.notes.push(
            "every key holds what this catalog gives, so the catalog's blobs changed since the digest was computed (a blob edited, added, removed or reordered; reformatting alone does not count for this cache); rebuild the image (or the cache)"
                .into(),
        );
    }
}

/// opm appends other blobs to their key as its walkers find them (in parallel), so the same
/// blobs in another order are the same cache content.
fn same_metas(key: &[u8], a: &[u8], b: &[u8]) -> bool {
    if !key.starts_with(b"metas/") {
        return false;
    }
    let split = |mut d: &[u8]| -> Option<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        while d.len() >= 4 {
            let n = u32::from_be_bytes([d[0], d[1], d[2], d[3]]) as usize;
            let rest = &d[4..];
            if rest.len() < n {
                return None;
            }
            out.push(rest[..n].to_vec());
            d = &rest[n..];
        }
        d.is_empty().then(|| {
            out.sort();
            out
        })
    };
    matches!((split(a), split(b)), (Some(x), Some(y)) if x == y)
}

fn go_io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// A path as the report names the cache folder (`/tmp/cache/pogreb.v1/digest` for an image).
fn shown(base: &Path, path: &Path, cache_name: &str) -> String {
    let name = cache_name.split(" (").next().unwrap_or(cache_name);
    match path.strip_prefix(base) {
        Ok(rel) => PathBuf::from(name).join(rel).display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
