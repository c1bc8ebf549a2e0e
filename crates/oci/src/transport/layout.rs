//! OCI image layout folders (`oci-layout`, `index.json`, `blobs/<algorithm>/<hex>`: sha256, or
//! sha512 where a manifest names it), written and read:
//! the `oci:PATH[:TAG]` transport in both directions, so the two can never disagree on where a
//! blob lives ([`blob_path`]). An `oci-archive` is this layout inside a tar ([`super::archive`]).
//!
//! Reading verifies every manifest, index and config against its digest; layers stay in the
//! layout's files and are verified while they stream.
//!
//! Writing is atomic from a reader's point of view:
//! - a new (or empty) folder is assembled in a temporary sibling and renamed into place, so it
//!   either appears complete or not at all;
//! - an existing layout gets its blobs first (content-addressed, so adding them cannot break any
//!   image already there; a blob already present with the right size is kept, as
//!   go-containerregistry's layout writer does), then a new `index.json` replaces the old one
//!   with one rename. Other images in the layout are kept; an entry with the same
//!   `org.opencontainers.image.ref.name` as one of ours is replaced (a tag names one image).
//!
//! Writing is safe between concurrent writers (a CI matrix building into one layout): the
//! read-modify-write of `index.json` happens under an exclusive lock on the layout's
//! [`LOCK_FILE`] (see [`lock_layout`]), so no writer replaces `index.json` with a copy that misses
//! another writer's tag. Blobs are written before the lock is taken (content-addressed, each
//! through its own temporary file and rename, so concurrent copies of the same blob are
//! harmless). Two writers racing to create the same new layout: one rename wins, the other
//! finds a layout in place and adds to it under the lock. Anything else that writes a layout's
//! `index.json` (catalog build, a pull into a layout) must take the same lock.

use super::error::LocalError;
use crate::fsio;
use crate::image::OutputError;
use crate::image::config::canonical_json;
use crate::image::digest::HashingWriter;
use crate::image::manifest::descriptor_json;
use crate::image::media;
use crate::image::media::{ANNOTATION_REF_NAME, OCI_INDEX as MEDIA_OCI_INDEX};
use crate::image::model::{Artifact, Blob, BlobSource, Descriptor, Image, ImageIndex};
use crate::image::parse::{IndexEntry, parse_index, parse_manifest};
use crate::image::verify::copy_verified;
use crate::reference::valid_digest;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Content of the `oci-layout` marker file.
pub const OCI_LAYOUT_FILE_CONTENT: &str = r#"{"imageLayoutVersion":"1.0.0"}"#;

/// The lock file inside a layout that every writer of its `index.json` locks (an advisory
/// `flock`-style lock: the kernel releases it when its holder exits, so a file left behind
/// never blocks anyone). Hidden, so tools listing the layout do not trip over it.
pub const LOCK_FILE: &str = ".olmpack.lock";

/// How long a writer waits for another writer's lock when [`LOCK_TIMEOUT_ENV`] is not set.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// Environment variable overriding [`DEFAULT_LOCK_TIMEOUT`], in seconds (fractions allowed): for
/// tests, and for CI runs that queue more writers than a minute covers.
pub const LOCK_TIMEOUT_ENV: &str = "OLMPACK_LOCK_TIMEOUT";

/// An exclusive lock on a layout, held until dropped (closing the file releases it).
#[derive(Debug)]
pub struct LayoutLock {
    _file: fs::File,
}

/// Takes the exclusive lock on the layout `dir` (creating [`LOCK_FILE`] in it), waiting up to
/// [`LOCK_TIMEOUT_ENV`] seconds (default [`DEFAULT_LOCK_TIMEOUT`]) for another writer to finish.
/// Fails with [`OutputError::Locked`] when the wait runs out, instead of waiting forever or
/// writing without it.
pub fn lock_layout(dir: &Path) -> Result<LayoutLock, OutputError> {
    wait_for_lock(dir, lock_timeout())
}

fn wait_for_lock(dir: &Path, timeout: Duration) -> Result<LayoutLock, OutputError> {
    let path = dir.join(LOCK_FILE);
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| OutputError::io("create the lock file", &path, e))?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(LayoutLock { _file: file }),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => return Err(OutputError::io("lock", &path, e)),
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(OutputError::Locked {
                path: dir.to_path_buf(),
                lock_file: LOCK_FILE,
                waited,
            });
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn lock_timeout() -> Duration {
    std::env::var(LOCK_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .unwrap_or(DEFAULT_LOCK_TIMEOUT)
}

/// Writes `image` into the layout folder `dir`, naming it with each of `tags` (an index entry
/// per tag; no entry without a tag when `tags` is empty). Creates the folder when it does not
/// exist; refuses an existing non-empty folder that is not an OCI layout. Safe to run from
/// several processes at once on the same `dir`: every tag ends up in `index.json`.
pub fn write_layout(image: &Image, dir: &Path, tags: &[String]) -> Result<(), OutputError> {
    write_artifact_layout(Artifact::Image(image), dir, tags)
}

/// [`write_layout`] for a multi-platform index: every image's blobs (shared ones once), the
/// index blob, and `index.json` entries pointing at the index.
pub fn write_index_layout(
    index: &ImageIndex,
    dir: &Path,
    tags: &[String],
) -> Result<(), OutputError> {
    write_artifact_layout(Artifact::Index(index), dir, tags)
}

/// The one layout writer behind [`write_layout`] and [`write_index_layout`]: both take the
/// layout lock for their `index.json` update.
pub fn write_artifact_layout(
    artifact: Artifact<'_>,
    dir: &Path,
    tags: &[String],
) -> Result<(), OutputError> {
    let image = artifact;
    // A writer that loses the race to create a new layout tries again, and then finds it.
    let mut attempts = 0;
    loop {
        attempts += 1;
        let created = match layout_state(dir)? {
            LayoutState::Layout => return add_to_layout(image, dir, tags),
            LayoutState::Missing | LayoutState::Empty => write_new_layout(image, dir, tags),
        };
        match created {
            Err(_) if attempts < 3 && dir.join("oci-layout").exists() => continue,
            other => return other,
        }
    }
}

enum LayoutState {
    Missing,
    Empty,
    Layout,
}

fn layout_state(dir: &Path) -> Result<LayoutState, OutputError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(LayoutState::Missing),
        Err(e) => Err(OutputError::io("inspect", dir, e)),
        Ok(meta) if !meta.is_dir() => Err(OutputError::WrongKind {
            path: dir.to_path_buf(),
            found: "a file",
            expected: "a folder (an OCI layout)",
        }),
        Ok(_) => {
            if dir.join("oci-layout").exists() {
                Ok(LayoutState::Layout)
            } else if is_empty_dir(dir)? {
                Ok(LayoutState::Empty)
            } else if dir.join("oci-layout").exists() {
                // Another writer's new layout was renamed into place meanwhile.
                Ok(LayoutState::Layout)
            } else {
                Err(OutputError::NotALayout {
                    path: dir.to_path_buf(),
                })
            }
        }
    }
}

fn is_empty_dir(dir: &Path) -> Result<bool, OutputError> {
    let mut entries = fs::read_dir(dir).map_err(|e| OutputError::io("list", dir, e))?;
    Ok(entries.next().is_none())
}

fn write_new_layout(image: Artifact<'_>, dir: &Path, tags: &[String]) -> Result<(), OutputError> {
    let parent = fsio::parent_of(dir);
    let tmp = tempfile::Builder::new()
        .prefix(".olmpack-layout-")
        .tempdir_in(&parent)
        .map_err(|e| OutputError::io("create", dir, fsio::temp_error(e)))?;
    let _interrupt = crate::interrupt::register(tmp.path());
    fs::write(tmp.path().join("oci-layout"), OCI_LAYOUT_FILE_CONTENT)
        .map_err(|e| OutputError::io("write", dir.join("oci-layout"), e))?;
    write_blobs(image, tmp.path())?;
    let index = json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_OCI_INDEX,
        "manifests": index_entries(&image.top().descriptor, tags),
    });
    fs::write(tmp.path().join("index.json"), canonical_json(&index))
        .map_err(|e| OutputError::io("write", dir.join("index.json"), e))?;
    // The temp folder is private (0700); a layout is meant to be shared like any output.
    set_dir_mode(tmp.path(), 0o755)?;
    // Interrupted: no layout appears after the signal (the watcher removes `tmp`).
    if crate::interrupt::interrupted() {
        crate::interrupt::wait_for_exit();
    }
    // rename(2) replaces an empty folder, and fails (leaving nothing behind: `tmp` is removed on
    // drop) if someone filled it meanwhile.
    fs::rename(tmp.path(), dir).map_err(|e| OutputError::io("create", dir, e))?;
    // The folder is in place; nothing left for the TempDir to clean up.
    let _ = tmp.keep();
    Ok(())
}

fn set_dir_mode(dir: &Path, mode: u32) -> Result<(), OutputError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| OutputError::io("set permissions of", dir, e))
}

fn index_entries(manifest: &Descriptor, tags: &[String]) -> Vec<Value> {
    if tags.is_empty() {
        return vec![descriptor_json(manifest)];
    }
    tags.iter()
        .map(|tag| {
            let mut d = descriptor_json(manifest);
            d["annotations"] = json!({ ANNOTATION_REF_NAME: tag });
            d
        })
        .collect()
}

fn add_to_layout(image: Artifact<'_>, dir: &Path, tags: &[String]) -> Result<(), OutputError> {
    let marker = dir.join("oci-layout");
    let text = fs::read(&marker).map_err(|e| OutputError::io("read", &marker, e))?;
    let layout: Value = serde_json::from_slice(&text).map_err(|e| OutputError::BadLayout {
        path: marker.clone(),
        reason: e.to_string(),
    })?;
    if layout
        .get("imageLayoutVersion")
        .and_then(Value::as_str)
        .is_none()
    {
        return Err(OutputError::BadLayout {
            path: marker,
            reason: "no imageLayoutVersion".into(),
        });
    }
    // Blobs first, without the lock: content-addressed and each renamed into place whole.
    write_blobs(image, dir)?;
    // Then the read-modify-write of index.json, under the lock, from a fresh read.
    let _lock = lock_layout(dir)?;
    let mut index = read_index(dir)?;
    let manifests = manifests_mut(&mut index, dir)?;
    manifests.retain(|m| {
        let name = m.pointer("/annotations/org.opencontainers.image.ref.name");
        !name
            .and_then(Value::as_str)
            .is_some_and(|n| tags.iter().any(|t| t == n))
    });
    manifests.extend(index_entries(&image.top().descriptor, tags));
    Ok(fsio::write(
        &dir.join("index.json"),
        &canonical_json(&index),
        fsio::Options::OUTPUT,
    )?)
}

/// The `manifests` array of the layout's `index.json` (read from `dir` into `index`), to edit;
/// an index without one is a broken layout.
fn manifests_mut<'a>(index: &'a mut Value, dir: &Path) -> Result<&'a mut Vec<Value>, OutputError> {
    index
        .get_mut("manifests")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| OutputError::BadLayout {
            path: dir.join("index.json"),
            reason: "no manifests array".into(),
        })
}

/// Lists `descriptor` in the layout's `index.json` (under the lock, from a fresh read): once per
/// tag, replacing an entry with the same tag, or untagged when `tags` is empty and no untagged
/// entry lists it yet. Its blobs must be in the layout already (what the repository API's
/// manifest and referrers writes do, [`super::layout_repository`]).
pub fn add_index_entries(
    dir: &Path,
    descriptor: &Value,
    tags: &[String],
) -> Result<(), OutputError> {
    let _lock = lock_layout(dir)?;
    let mut index = read_index(dir)?;
    let manifests = manifests_mut(&mut index, dir)?;
    let ref_name = |m: &Value| {
        m.pointer("/annotations/org.opencontainers.image.ref.name")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if tags.is_empty() {
        if manifests
            .iter()
            .any(|m| ref_name(m).is_none() && m.get("digest") == descriptor.get("digest"))
        {
            return Ok(());
        }
        manifests.push(descriptor.clone());
    } else {
        manifests.retain(|m| ref_name(m).is_none_or(|n| !tags.contains(&n)));
        for tag in tags {
            let mut d = descriptor.clone();
            d["annotations"] = json!({ ANNOTATION_REF_NAME: tag });
            manifests.push(d);
        }
    }
    Ok(fsio::write(
        &dir.join("index.json"),
        &canonical_json(&index),
        fsio::Options::OUTPUT,
    )?)
}

/// Reads and parses a layout's `index.json`.
pub fn read_index(dir: &Path) -> Result<Value, OutputError> {
    let path = dir.join("index.json");
    let text = fs::read(&path).map_err(|e| OutputError::io("read", &path, e))?;
    let index: Value = serde_json::from_slice(&text).map_err(|e| OutputError::BadLayout {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if !index.is_object() {
        return Err(OutputError::BadLayout {
            path,
            reason: "not a JSON object".into(),
        });
    }
    Ok(index)
}

/// Writes every blob of `image` under `dir/blobs/sha256/`, skipping blobs already present with
/// the right content (size and digest re-checked, so a corrupt blob is replaced, not trusted),
/// each through a temporary file renamed once its digest is checked.
/// Writes every blob of `image` the layout lacks. An index's images are written one at a
/// time as they open ([`crate::image::ImageIndex::for_each_image`]), and a blob written once
/// in this call (a config or layer the images share) is not looked at again.
fn write_blobs(image: Artifact<'_>, dir: &Path) -> Result<(), OutputError> {
    let mut done = std::collections::HashSet::new();
    let mut write = |blob: &Blob| -> Result<(), OutputError> {
        if !done.insert(blob.descriptor.digest.clone()) {
            return Ok(());
        }
        let target = blob_path(dir, &blob.descriptor.digest)
            .filter(|_| blob.descriptor.algorithm_hex().is_some())
            .ok_or_else(|| {
                OutputError::Unsupported(format!(
                    "digest {} is neither sha256 nor sha512",
                    blob.descriptor.digest
                ))
            })?;
        if let Some(blobs_dir) = target.parent() {
            fs::create_dir_all(blobs_dir).map_err(|e| OutputError::io("create", blobs_dir, e))?;
        }
        if let Ok(meta) = fs::metadata(&target)
            && meta.is_file()
            && meta.len() == blob.descriptor.size
            && file_digest(&target, &blob.descriptor.digest).as_deref()
                == Some(blob.descriptor.digest.as_str())
        {
            return Ok(());
        }
        fsio::write_with(&target, fsio::Options::OUTPUT, |w| {
            copy_verified(blob, w, &target)
        })?;
        Ok(())
    };
    match image {
        Artifact::Image(image) => image.blobs().try_for_each(&mut write),
        Artifact::Index(index) => {
            index.for_each_image(|image| image.blobs().try_for_each(&mut write))?;
            write(&index.index)
        }
    }
}

/// The digest of a file's content in the algorithm `expected` names, `None` when it cannot be
/// read.
fn file_digest(path: &Path, expected: &str) -> Option<String> {
    let algorithm = crate::image::digest::Algorithm::of(expected)?;
    let mut file = fs::File::open(path).ok()?;
    let mut hashing = HashingWriter::with_algorithm(std::io::sink(), algorithm);
    std::io::copy(&mut file, &mut hashing).ok()?;
    Some(hashing.finish().1)
}

// ---- Reading ----

#[derive(Deserialize)]
struct LayoutEntry {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    size: u64,
    #[serde(default)]
    annotations: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Index {
    #[serde(default)]
    manifests: Vec<LayoutEntry>,
}

/// Where the blob `digest` lives in the layout `dir` (`blobs/<algorithm>/<hex>`); `None` for a
/// string that is not a digest, so a digest from a manifest can never name a path outside.
pub fn blob_path(dir: &Path, digest: &str) -> Option<PathBuf> {
    if !valid_digest(digest) {
        return None;
    }
    let (algo, hex) = digest.split_once(':')?;
    Some(dir.join("blobs").join(algo).join(hex))
}

fn invalid(name: &str, reason: impl Into<String>) -> LocalError {
    LocalError::Invalid {
        source_name: name.to_string(),
        reason: reason.into(),
    }
}

fn blob_file(layout: &Path, digest: &str, name: &str) -> Result<PathBuf, LocalError> {
    blob_path(layout, digest).ok_or_else(|| invalid(name, format!("invalid digest {digest:?}")))
}

/// The blob `digest` of the layout, at most `cap` bytes, verified against its digest.
pub fn read_verified(
    layout: &Path,
    digest: &str,
    cap: u64,
    name: &str,
) -> Result<Vec<u8>, LocalError> {
    let p = blob_file(layout, digest, name)?;
    let meta = fs::metadata(&p).map_err(LocalError::io(name, "read blob", &p))?;
    if meta.len() > cap {
        return Err(invalid(
            name,
            format!("blob {digest} is larger than {cap} bytes"),
        ));
    }
    let bytes = crate::fsio::untrusted::read_limited(&p, cap)
        .map_err(|e| invalid(name, format!("cannot read blob {digest}: {e}")))?;
    // Checked with the algorithm the digest names (sha256 or sha512), never another.
    let actual = crate::image::digest::digest_as(digest, &bytes).ok_or_else(|| {
        invalid(
            name,
            format!("cannot verify digest {digest}: only sha256 and sha512 are supported"),
        )
    })?;
    if actual != digest {
        return Err(LocalError::DigestMismatch {
            source_name: name.to_string(),
            expected: digest.to_string(),
            actual,
        });
    }
    Ok(bytes)
}

/// The media types an `index.json` entry must have to be read as the image a tag names: a
/// manifest or an index, OCI or Docker (containers/image's `oci/layout` reference resolution;
/// an entry of another type is not an image and is passed over).
pub const TAGGABLE_MEDIA_TYPES: [&str; 4] = media::ACCEPT_MANIFESTS;

/// Where each tag of a layout's `index.json` points, as the position of its entry: the one rule
/// by which every reader of an `oci:PATH:TAG` (opening, `verify`, `--policy`) picks the image,
/// so what is verified is what is read. `entries` yields each entry's
/// `org.opencontainers.image.ref.name` and `mediaType`. When several entries carry one tag, the
/// **first** with a manifest or index media type ([`TAGGABLE_MEDIA_TYPES`]) wins, as in
/// containers/image (`getManifestDescriptor` in `oci/layout`), which skopeo reads with; the
/// layout writer never makes such duplicates (it replaces an entry with the same tag).
pub fn tag_positions<'a>(
    entries: impl IntoIterator<Item = (Option<&'a str>, Option<&'a str>)>,
) -> std::collections::HashMap<&'a str, usize> {
    let mut out = std::collections::HashMap::new();
    for (i, (tag, media_type)) in entries.into_iter().enumerate() {
        if let Some(tag) = tag
            && media_type.is_some_and(|m| TAGGABLE_MEDIA_TYPES.contains(&m))
        {
            out.entry(tag).or_insert(i);
        }
    }
    out
}

/// What an `index.json` entry (or a tag in it) points at: one image, or an index of images.
#[derive(Debug)]
pub enum LayoutRoot {
    /// A single-platform image.
    Image(Image),
    /// A multi-platform index: its descriptor, bytes and entries; each entry's image is read
    /// with [`image_at`].
    Index {
        /// The index descriptor.
        descriptor: Descriptor,
        /// The index bytes (verified).
        bytes: Vec<u8>,
        /// Its entries.
        entries: Vec<IndexEntry>,
    },
}

/// The most bytes a layout's `index.json` may hold: an index is a manifest (the 4 MiB of
/// containers/image's `iolimits.MaxManifestBodySize`); an oci-archive of a few KiB could
/// otherwise expand into gigabytes read whole.
pub const MAX_INDEX_BYTES: u64 = 4 << 20;

/// Reads the manifest (or index) that `tag` names in the layout's `index.json` (the only entry
/// when `tag` is `None`), verified against its digest.
pub fn read_root(layout: &Path, tag: Option<&str>, name: &str) -> Result<LayoutRoot, LocalError> {
    let index_path = layout.join("index.json");
    let text = crate::fsio::untrusted::read_limited(&index_path, MAX_INDEX_BYTES).map_err(|e| {
        invalid(
            name,
            format!("cannot read the OCI layout index index.json: {e}"),
        )
    })?;
    let mut index: Index = serde_json::from_slice(&text)
        .map_err(|e| invalid(name, format!("index.json is not valid: {e}")))?;
    let entry = match tag {
        Some(t) => {
            let position = tag_positions(index.manifests.iter().map(|m| {
                (
                    m.annotations
                        .get(media::ANNOTATION_REF_NAME)
                        .map(String::as_str),
                    Some(m.media_type.as_str()),
                )
            }))
            .get(t)
            .copied()
            // A digest names the first entry listing it (an untagged referrer, say).
            .or_else(|| {
                valid_digest(t)
                    .then(|| index.manifests.iter().position(|m| m.digest == t))
                    .flatten()
            })
            .ok_or_else(|| invalid(name, format!("no manifest tagged {t:?} in index.json")))?;
            index.manifests.swap_remove(position)
        }
        None => {
            let mut m = index.manifests;
            if m.len() != 1 {
                return Err(invalid(
                    name,
                    format!("index.json lists {} manifests; name one with :TAG", m.len()),
                ));
            }
            m.remove(0)
        }
    };
    let mut desc = Descriptor {
        media_type: entry.media_type.clone(),
        digest: entry.digest.clone(),
        size: entry.size,
    };
    let bytes = read_verified(layout, &desc.digest, 4 << 20, name)?;
    desc.size = bytes.len() as u64;
    let is_index = media::is_index(&desc.media_type);
    match parse_index(&bytes).map_err(|e| invalid(name, e.to_string()))? {
        Some(entries) => Ok(LayoutRoot::Index {
            descriptor: desc,
            bytes,
            entries,
        }),
        None if is_index => Err(invalid(name, "an index without a manifests list")),
        None => Ok(LayoutRoot::Image(image_at(layout, desc, bytes, name)?)),
    }
}

/// The image whose manifest is `desc` (with its verified `bytes`) in the layout: config read
/// and verified, layers left in the layout's files. A layer's file is not looked at until it
/// is read: a delta mirror archive leaves out the layers its target already holds, and a push
/// finds them there (or mounts them) without reading them; a layer missing when it is read
/// fails that read, naming its file.
pub fn image_at(
    layout: &Path,
    mut desc: Descriptor,
    bytes: Vec<u8>,
    name: &str,
) -> Result<Image, LocalError> {
    let parsed = parse_manifest(&bytes).map_err(|e| invalid(name, e.to_string()))?;
    let config = read_verified(layout, &parsed.config.digest, 4 << 20, name)?;
    let mut layers = Vec::new();
    for l in parsed.layers {
        let p = blob_file(layout, &l.digest, name)?;
        layers.push(Blob {
            descriptor: l,
            source: BlobSource::File(p),
        });
    }
    desc.size = bytes.len() as u64;
    if desc.media_type.is_empty() {
        desc.media_type = media::OCI_MANIFEST.to_string();
    }
    Ok(Image {
        manifest: Blob {
            descriptor: desc,
            source: BlobSource::Memory(bytes),
        },
        config: Blob {
            descriptor: parsed.config,
            source: BlobSource::Memory(config),
        },
        layers,
    })
}

/// Reads the manifest bytes an index entry names, verified.
pub fn read_manifest(layout: &Path, desc: &Descriptor, name: &str) -> Result<Vec<u8>, LocalError> {
    read_verified(layout, &desc.digest, 4 << 20, name)
}

/// The single-platform image `tag` names in the layout `dir` (the only entry when `tag` is
/// `None`), manifest and config verified, layers left in the layout's files: for tests and for
/// anyone who wants to push or check a layout that was written.
pub fn read_image(dir: &Path, tag: Option<&str>) -> Result<Image, LocalError> {
    let name = dir.display().to_string();
    match read_root(dir, tag, &name)? {
        LayoutRoot::Image(image) => Ok(image),
        LayoutRoot::Index { descriptor, .. } => Err(invalid(
            &name,
            format!(
                "{} is a multi-platform image index, not one image",
                descriptor.digest
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(media_type: &str, bytes: Vec<u8>) -> Blob {
        Blob::memory(media_type, bytes)
    }

    /// A small image whose digest depends on `n`.
    fn image(n: usize) -> Image {
        let config = blob(
            "application/vnd.oci.image.config.v1+json",
            format!("{{\"n\":{n}}}").into_bytes(),
        );
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor_json(&config.descriptor),
            "layers": [],
        });
        Image {
            manifest: blob(
                "application/vnd.oci.image.manifest.v1+json",
                super::canonical_json(&manifest),
            ),
            config,
            layers: Vec::new(),
        }
    }

    fn tags(dir: &Path) -> Vec<String> {
        let index = read_index(dir).expect("index");
        let mut tags: Vec<String> = index["manifests"]
            .as_array()
            .expect("manifests")
            .iter()
            .filter_map(|m| m.pointer("/annotations/org.opencontainers.image.ref.name"))
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        tags.sort();
        tags
    }

    /// Threads stand in for processes: each open of the lock file is its own lock holder.
    #[test]
    fn concurrent_writers_keep_every_tag_on_new_and_existing_layouts() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("layout");
        for round in 0..2 {
            std::thread::scope(|s| {
                for i in 0..8 {
                    let dir = &dir;
                    s.spawn(move || {
                        let n = round * 8 + i;
                        write_layout(&image(n), dir, &[format!("t{n:02}")]).expect("written");
                    });
                }
            });
            let want: Vec<String> = (0..(round + 1) * 8).map(|n| format!("t{n:02}")).collect();
            assert_eq!(tags(&dir), want);
        }
        for n in 0..16 {
            let read = read_image(&dir, Some(&format!("t{n:02}"))).expect("readable");
            assert_eq!(read.manifest.descriptor, image(n).manifest.descriptor);
        }
    }

    /// One tag on two entries: the first (with a manifest media type) is the one read, as
    /// containers/image resolves it; an entry of another media type is passed over.
    #[test]
    fn a_tag_listed_twice_names_its_first_manifest_entry() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("layout");
        for n in 0..3 {
            write_layout(&image(n), &dir, &[format!("t{n}")]).expect("written");
        }
        let mut index = read_index(&dir).expect("index");
        let entries = index["manifests"].as_array_mut().expect("manifests");
        for e in entries.iter_mut() {
            e["annotations"][ANNOTATION_REF_NAME] = json!("v1");
        }
        entries[0]["mediaType"] = json!("application/vnd.example.not-an-image");
        fs::write(dir.join("index.json"), canonical_json(&index)).expect("write");
        let read = read_image(&dir, Some("v1")).expect("readable");
        assert_eq!(read.manifest.descriptor, image(1).manifest.descriptor);
        let names = [Some("v1"), Some("v1"), Some("v1")];
        let types = [Some("x"), Some(media::OCI_MANIFEST), Some(media::OCI_INDEX)];
        let positions = tag_positions(names.into_iter().zip(types));
        assert_eq!(positions.get("v1"), Some(&1));
    }

    #[test]
    fn a_held_lock_times_out_with_a_clear_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("layout");
        write_layout(&image(0), &dir, &["a".into()]).expect("written");
        let held = lock_layout(&dir).expect("lock");
        // The wait itself, with a short timeout (the environment variable is for processes).
        let err = wait_for_lock(&dir, Duration::from_millis(50)).expect_err("times out");
        assert!(matches!(err, OutputError::Locked { .. }), "{err}");
        assert!(
            err.to_string().contains("locked by another writer"),
            "{err}"
        );
        drop(held);
        wait_for_lock(&dir, Duration::from_millis(50)).expect("free again");
    }
}
