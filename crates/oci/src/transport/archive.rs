//! Single-file images, written and read: `oci-archive` (a tar of an OCI layout, as skopeo and
//! buildah read it) and
//! `docker-archive` (the `docker save` / `docker load` format: `manifest.json` with `RepoTags`,
//! the config as `<hex>.json`, each layer as an uncompressed `<diff_id hex>.tar`, which is what
//! `docker save` and `skopeo copy … docker-archive:` write, so every loader accepts it).
//!
//! The writers take any `Write` (go-containerregistry's `tarball.Write` idea); the `*_file`
//! functions add the temporary-sibling-then-rename step ([`crate::fsio`]) so a file appears
//! complete or not at all. Readers extract the archive's regular files (paths checked like
//! layers) into a temp folder: an oci-archive is then read as a layout ([`super::layout`]), a
//! docker-archive gets a synthesised Docker v2-2 manifest.
//! Archive headers are as fixed as layer headers (mtime 0, uid/gid 0, 0644/0755), so an archive
//! of the same image is byte-identical.

use super::error::LocalError;
use super::layout::OCI_LAYOUT_FILE_CONTENT;
use super::unpack as reg_unpack;
use crate::fsio;
use crate::fsio::untrusted::{self, UntrustedReadError};
use crate::image::OutputError;
use crate::image::config::canonical_json;
use crate::image::digest::HashingWriter;
use crate::image::manifest::{ANNOTATION_REF_NAME, MEDIA_OCI_INDEX, descriptor_json};
use crate::image::model::{Artifact, Blob, BlobSource, Descriptor, Image};
use crate::image::verify::copy_verified;
use crate::registry::digest as reg_digest;
use flate2::read::GzDecoder;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeSet;
use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

fn header(kind: tar::EntryType, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(if kind == tar::EntryType::Directory {
        0o755
    } else {
        0o644
    });
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h
}

fn add_dir<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    shown: &Path,
) -> Result<(), OutputError> {
    let mut h = header(tar::EntryType::Directory, 0);
    tar.append_data(&mut h, name, io::empty())
        .map_err(|e| OutputError::io("write", shown, e))
}

fn add_bytes<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    bytes: &[u8],
    shown: &Path,
) -> Result<(), OutputError> {
    let mut h = header(tar::EntryType::Regular, bytes.len() as u64);
    tar.append_data(&mut h, name, bytes)
        .map_err(|e| OutputError::io("write", shown, e))
}

/// Adds a blob as a file entry, checking its digest while it is copied.
fn add_blob<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    blob: &Blob,
    shown: &Path,
) -> Result<(), OutputError> {
    let mut h = header(tar::EntryType::Regular, blob.descriptor.size);
    h.set_path(name)
        .map_err(|e| OutputError::io("write", shown, e))?;
    h.set_cksum();
    tar.get_mut()
        .write_all(h.as_bytes())
        .map_err(|e| OutputError::io("write", shown, e))?;
    copy_verified(blob, tar.get_mut(), shown)?;
    pad(tar.get_mut(), blob.descriptor.size, shown)
}

fn pad<W: Write>(w: &mut W, len: u64, shown: &Path) -> Result<(), OutputError> {
    let rem = (512 - len % 512) % 512;
    w.write_all(&[0u8; 512][..rem as usize])
        .map_err(|e| OutputError::io("write", shown, e))
}

/// Writes an oci-archive (a tar of an OCI layout holding just this image) to `out`, the image
/// named by each of `tags`. `shown` names the destination in error messages.
pub fn write_oci_archive<W: Write>(
    image: &Image,
    tags: &[String],
    out: W,
    shown: &Path,
) -> Result<W, OutputError> {
    write_oci_archive_of(Artifact::Image(image), tags, out, shown)
}

/// [`write_oci_archive`] for an image or a multi-platform index.
pub fn write_oci_archive_of<W: Write>(
    image: Artifact<'_>,
    tags: &[String],
    out: W,
    shown: &Path,
) -> Result<W, OutputError> {
    let mut tar = tar::Builder::new(out);
    add_dir(&mut tar, "blobs/", shown)?;
    add_dir(&mut tar, "blobs/sha256/", shown)?;
    let mut seen = BTreeSet::new();
    let mut blobs: Vec<(&str, &Blob)> = Vec::new();
    for blob in image.blobs() {
        let hex = hex_of(blob)?;
        if seen.insert(hex) {
            blobs.push((hex, blob));
        }
    }
    blobs.sort_by_key(|(hex, _)| *hex);
    for (hex, blob) in blobs {
        add_blob(&mut tar, &format!("blobs/sha256/{hex}"), blob, shown)?;
    }
    let manifests: Vec<Value> = if tags.is_empty() {
        vec![descriptor_json(&image.top().descriptor)]
    } else {
        tags.iter()
            .map(|t| {
                let mut d = descriptor_json(&image.top().descriptor);
                d["annotations"] = json!({ ANNOTATION_REF_NAME: t });
                d
            })
            .collect()
    };
    let index = json!({ "schemaVersion": 2, "mediaType": MEDIA_OCI_INDEX, "manifests": manifests });
    add_bytes(&mut tar, "index.json", &canonical_json(&index), shown)?;
    add_bytes(
        &mut tar,
        "oci-layout",
        OCI_LAYOUT_FILE_CONTENT.as_bytes(),
        shown,
    )?;
    tar.into_inner()
        .map_err(|e| OutputError::io("write", shown, e))
}

/// Writes a docker-archive of `image` to `out`, with `repo_tags` (e.g. `quay.io/org/b:v1`) as
/// its `RepoTags` (may be empty: `docker load` then loads it untagged).
pub fn write_docker_archive<W: Write>(
    image: &Image,
    repo_tags: &[String],
    out: W,
    shown: &Path,
) -> Result<W, OutputError> {
    let mut config_bytes = Vec::new();
    copy_verified(&image.config, &mut config_bytes, shown)?;
    let config: Value = serde_json::from_slice(&config_bytes)
        .map_err(|e| OutputError::Unsupported(format!("config is not JSON: {e}")))?;
    let diff_ids: Vec<String> = config
        .pointer("/rootfs/diff_ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if diff_ids.len() != image.layers.len() {
        return Err(OutputError::Unsupported(format!(
            "the config lists {} diff_ids for {} layers",
            diff_ids.len(),
            image.layers.len()
        )));
    }
    let config_hex = hex_of(&image.config)?;
    let mut tar = tar::Builder::new(out);
    let config_name = format!("{config_hex}.json");
    add_bytes(&mut tar, &config_name, &config_bytes, shown)?;

    let mut layer_names = Vec::new();
    let mut written = BTreeSet::new();
    for (blob, diff_id) in image.layers.iter().zip(&diff_ids) {
        let hex = diff_id
            .strip_prefix("sha256:")
            .ok_or_else(|| OutputError::Unsupported(format!("diff_id {diff_id} is not sha256")))?;
        let name = format!("{hex}.tar");
        if written.insert(name.clone()) {
            add_uncompressed_layer(&mut tar, &name, blob, diff_id, shown)?;
        }
        layer_names.push(name);
    }
    let manifest = json!([{
        "Config": config_name,
        "RepoTags": repo_tags,
        "Layers": layer_names,
    }]);
    add_bytes(&mut tar, "manifest.json", &canonical_json(&manifest), shown)?;
    tar.into_inner()
        .map_err(|e| OutputError::io("write", shown, e))
}

/// Adds a gzip layer decompressed (docker-archive layers are plain tars). The uncompressed size
/// must be in the header before the bytes, so the layer is decompressed twice: once to measure
/// and check the `diff_id`, once to copy. Bundle layers are small; this keeps memory flat.
fn add_uncompressed_layer<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    blob: &Blob,
    diff_id: &str,
    shown: &Path,
) -> Result<(), OutputError> {
    let open = || -> Result<GzDecoder<Box<dyn Read + '_>>, OutputError> {
        let reader = blob
            .open()
            .map_err(|e| OutputError::io("read", blob.location(), e))?;
        Ok(GzDecoder::new(reader))
    };
    let mut hashing = HashingWriter::new(io::sink());
    io::copy(&mut open()?, &mut hashing)
        .map_err(|e| OutputError::io("decompress", blob.location(), e))?;
    let (_, digest, size) = hashing.finish();
    if digest != diff_id {
        return Err(OutputError::BlobMismatch {
            digest: diff_id.to_string(),
            path: blob.location(),
        });
    }
    let mut h = header(tar::EntryType::Regular, size);
    let mut reader = open()?.take(size);
    tar.append_data(&mut h, name, &mut reader)
        .map_err(|e| OutputError::io("write", shown, e))
}

fn hex_of(blob: &Blob) -> Result<&str, OutputError> {
    blob.descriptor.sha256_hex().ok_or_else(|| {
        OutputError::Unsupported(format!("digest {} is not sha256", blob.descriptor.digest))
    })
}

/// Writes an archive file atomically: `write` fills a temporary sibling of `path`, which is
/// renamed to `path` only when it succeeded (and removed otherwise).
pub fn write_archive_file<F>(path: &Path, write: F) -> Result<(), OutputError>
where
    F: FnOnce(&mut BufWriter<&fs::File>) -> Result<(), OutputError>,
{
    if path.is_dir() {
        return Err(OutputError::WrongKind {
            path: path.to_path_buf(),
            found: "a folder",
            expected: "an archive file",
        });
    }
    fsio::write_with(path, fsio::Options::OUTPUT, write)
}

// ---- Reading ----

/// An image read from a local source; `dir` keeps extracted archive files alive.
#[derive(Debug)]
pub struct LoadedImage {
    /// The image.
    pub image: Image,
    /// Notes (an index was resolved to one platform).
    pub warnings: Vec<String>,
    /// Temp folder holding extracted archive content, if any.
    pub dir: Option<tempfile::TempDir>,
}

/// Extracts the regular files of an archive into a temp folder (paths checked like layers).
pub fn extract_archive(path: &Path, name: &str) -> Result<tempfile::TempDir, LocalError> {
    let dir = crate::interrupt::temp_dir("olmpack-archive-").map_err(LocalError::io(
        name,
        "create a temp folder in",
        &std::env::temp_dir(),
    ))?;
    let f = fs::File::open(path).map_err(LocalError::io(name, "open archive", path))?;
    let reader = reg_unpack::decompress(f, "", name).map_err(|e| invalid(name, e.to_string()))?;
    let mut stats = reg_unpack::Stats::default();
    let limits = reg_unpack::Limits {
        max_total_bytes: 8 << 30,
        max_entries: 1_000_000,
        max_file_bytes: 4 << 30,
    };
    reg_unpack::unpack_layer(reader, dir.path(), name, &limits, &mut stats)
        .and_then(|()| reg_unpack::check_links(dir.path(), name))
        .map_err(|e| invalid(name, e.to_string()))?;
    Ok(dir)
}

#[derive(Deserialize)]
struct DockerManifestEntry {
    #[serde(rename = "Config")]
    config: String,
    #[serde(rename = "Layers", default)]
    layers: Vec<String>,
}

/// The most bytes a docker-archive's `manifest.json` may hold (containers/image's
/// `iolimits.MaxTarFileManifestSize`).
pub const MAX_ARCHIVE_MANIFEST_BYTES: u64 = 1 << 20;

/// The most bytes an image config may hold (containers/image's `iolimits.MaxConfigBodySize`).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

fn sha256_file(mut f: fs::File, p: &Path, name: &str) -> Result<(String, u64, bool), LocalError> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut n = 0u64;
    let mut first = Vec::new();
    loop {
        let k = f.read(&mut buf).map_err(LocalError::io(name, "read", p))?;
        if k == 0 {
            break;
        }
        if first.len() < 2 {
            first.extend_from_slice(&buf[..k.min(2)]);
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((reg_digest::finish(h), n, first.starts_with(&[0x1f, 0x8b])))
}

/// Reads a `docker save` archive (single image), synthesising a Docker v2-2 manifest.
/// Every file is read beneath the extracted folder ([`untrusted`]): `manifest.json` names the
/// config and layers, and a link there must not lead to a host file or a device; the manifest
/// and config are read with containers/image's caps.
pub fn load_docker_archive(path: &Path, name: &str) -> Result<LoadedImage, LocalError> {
    let dir = extract_archive(path, name)?;
    let text = match untrusted::read(
        dir.path(),
        Path::new("manifest.json"),
        MAX_ARCHIVE_MANIFEST_BYTES,
    ) {
        Ok(text) => text,
        Err(UntrustedReadError::Missing { .. }) => {
            return Err(invalid(name, "no manifest.json: not a docker-archive"));
        }
        Err(e) => return Err(invalid(name, e.to_string())),
    };
    let mut entries: Vec<DockerManifestEntry> = serde_json::from_slice(&text)
        .map_err(|e| invalid(name, format!("manifest.json is not valid: {e}")))?;
    if entries.len() != 1 {
        return Err(invalid(
            name,
            format!("the archive holds {} images; expected one", entries.len()),
        ));
    }
    let entry = entries.remove(0);
    let inside = |rel: &str| -> Result<PathBuf, LocalError> {
        reg_unpack::safe_relative(Path::new(rel))
            .map_err(|e| invalid(name, e))?
            .ok_or_else(|| invalid(name, "empty path in manifest.json"))
    };
    let config_bytes = untrusted::read(dir.path(), &inside(&entry.config)?, MAX_CONFIG_BYTES)
        .map_err(|e| invalid(name, format!("cannot read the config: {e}")))?;
    let config_desc = Descriptor {
        media_type: crate::image::media::DOCKER_CONFIG.into(),
        digest: reg_digest::sha256(&config_bytes),
        size: config_bytes.len() as u64,
    };
    let mut layers = Vec::new();
    for l in &entry.layers {
        let rel = inside(l)?;
        let file = untrusted::open(dir.path(), &rel)
            .map_err(|e| invalid(name, format!("cannot read a layer: {e}")))?;
        // The blob is reopened by path later: name it by the path with every link resolved
        // inside the folder, so that reopening follows no link at all.
        let p = dir.path().join(
            untrusted::resolve(dir.path(), &rel)
                .map_err(|e| invalid(name, format!("cannot read a layer: {e}")))?,
        );
        let (digest, size, gz) = sha256_file(file, &p, name)?;
        let media_type = if gz {
            crate::image::media::DOCKER_LAYER_GZIP
        } else {
            crate::image::media::DOCKER_LAYER_TAR
        };
        layers.push(Blob {
            descriptor: Descriptor {
                media_type: media_type.into(),
                digest,
                size,
            },
            source: BlobSource::File(p),
        });
    }
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": crate::image::media::DOCKER_MANIFEST,
        "config": {"mediaType": config_desc.media_type, "size": config_desc.size, "digest": config_desc.digest},
        "layers": layers.iter().map(|l| serde_json::json!({"mediaType": l.descriptor.media_type, "size": l.descriptor.size, "digest": l.descriptor.digest})).collect::<Vec<_>>(),
    });
    let mbytes = serde_json::to_vec(&manifest).map_err(|e| invalid(name, e.to_string()))?;
    let mdesc = Descriptor {
        media_type: crate::image::media::DOCKER_MANIFEST.into(),
        digest: reg_digest::sha256(&mbytes),
        size: mbytes.len() as u64,
    };
    Ok(LoadedImage {
        image: Image {
            manifest: Blob {
                descriptor: mdesc,
                source: BlobSource::Memory(mbytes),
            },
            config: Blob {
                descriptor: config_desc,
                source: BlobSource::Memory(config_bytes),
            },
            layers,
        },
        warnings: vec![format!(
            "{name}: docker-archive holds no manifest; the digest shown is of a synthesised Docker v2-2 manifest"
        )],
        dir: Some(dir),
    })
}

fn invalid(name: &str, reason: impl Into<String>) -> LocalError {
    LocalError::Invalid {
        source_name: name.to_string(),
        reason: reason.into(),
    }
}
