//! Local image sources, named like skopeo's transports: `oci:PATH[:TAG]` (an OCI layout
//! folder), `oci-archive:FILE[:TAG]` (that folder as a tar) and `docker-archive:FILE`
//! (`docker save` output). Each is read into the shared [`Image`] model with layers left in
//! files, so `inspect` treats them exactly like a registry image.
//!
//! Moved here from `registry/` (it never talked to a registry): reading a local layout is a
//! transport like the registry one, and both now sit behind [`super::source::open`].

use super::unpack as reg_unpack;
use crate::image::{Blob, BlobSource, Descriptor, Image};
use crate::reference::valid_digest;
use crate::registry::RegistryError;
use crate::registry::digest as reg_digest;
use crate::registry::pull::{DOCKER_LIST, IndexEntry, OCI_INDEX, parse_index, parse_manifest};
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

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

fn src_err(source: &str, reason: impl Into<String>) -> RegistryError {
    RegistryError::Source {
        source_name: source.to_string(),
        reason: reason.into(),
    }
}

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

fn blob_path(layout: &Path, digest: &str) -> Result<PathBuf, String> {
    if !valid_digest(digest) {
        return Err(format!("invalid digest {digest:?}"));
    }
    let (algo, hex) = digest.split_once(':').ok_or("invalid digest")?;
    Ok(layout.join("blobs").join(algo).join(hex))
}

fn read_verified(
    layout: &Path,
    digest: &str,
    cap: u64,
    name: &str,
) -> Result<Vec<u8>, RegistryError> {
    let p = blob_path(layout, digest).map_err(|r| src_err(name, r))?;
    let meta = std::fs::metadata(&p).map_err(|e| RegistryError::io("cannot read blob", &p, e))?;
    if meta.len() > cap {
        return Err(RegistryError::TooLarge {
            what: format!("blob {digest}"),
            limit: cap,
        });
    }
    let bytes = std::fs::read(&p).map_err(|e| RegistryError::io("cannot read blob", &p, e))?;
    let actual = reg_digest::sha256(&bytes);
    if actual != digest {
        return Err(RegistryError::DigestMismatch {
            expected: digest.to_string(),
            actual,
        });
    }
    Ok(bytes)
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

/// Reads the manifest (or index) that `tag` names in the layout's `index.json` (the only entry
/// when `tag` is `None`), verified against its digest.
pub fn read_root(
    layout: &Path,
    tag: Option<&str>,
    name: &str,
) -> Result<LayoutRoot, RegistryError> {
    let index_path = layout.join("index.json");
    let text = std::fs::read(&index_path)
        .map_err(|e| RegistryError::io("cannot read OCI layout index", &index_path, e))?;
    let index: Index = serde_json::from_slice(&text)
        .map_err(|e| src_err(name, format!("index.json is not valid: {e}")))?;
    let entry = match tag {
        Some(t) => index
            .manifests
            .into_iter()
            .find(|m| {
                m.annotations
                    .get("org.opencontainers.image.ref.name")
                    .map(String::as_str)
                    == Some(t)
            })
            .ok_or_else(|| src_err(name, format!("no manifest tagged {t:?} in index.json")))?,
        None => {
            let mut m = index.manifests;
            if m.len() != 1 {
                return Err(src_err(
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
    let is_index = desc.media_type == OCI_INDEX || desc.media_type == DOCKER_LIST;
    match parse_index(&bytes)? {
        Some(entries) => Ok(LayoutRoot::Index {
            descriptor: desc,
            bytes,
            entries,
        }),
        None if is_index => Err(src_err(name, "an index without a manifests list")),
        None => Ok(LayoutRoot::Image(image_at(layout, desc, bytes, name)?)),
    }
}

/// The image whose manifest is `desc` (with its verified `bytes`) in the layout: config read
/// and verified, layers left in the layout's files.
pub fn image_at(
    layout: &Path,
    mut desc: Descriptor,
    bytes: Vec<u8>,
    name: &str,
) -> Result<Image, RegistryError> {
    let parsed = parse_manifest(&bytes)?;
    let config = read_verified(layout, &parsed.config.digest, 4 << 20, name)?;
    let mut layers = Vec::new();
    for l in parsed.layers {
        let p = blob_path(layout, &l.digest).map_err(|r| src_err(name, r))?;
        crate::registry::client::require_file(&p)?;
        layers.push(Blob {
            descriptor: l,
            source: BlobSource::File(p),
        });
    }
    desc.size = bytes.len() as u64;
    if desc.media_type.is_empty() {
        desc.media_type = crate::registry::pull::OCI_MANIFEST.to_string();
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
pub fn read_manifest(
    layout: &Path,
    desc: &Descriptor,
    name: &str,
) -> Result<Vec<u8>, RegistryError> {
    read_verified(layout, &desc.digest, 4 << 20, name)
}

/// Extracts the regular files of an archive into a temp folder (paths checked like layers).
pub fn extract_archive(path: &Path, name: &str) -> Result<tempfile::TempDir, RegistryError> {
    let dir = tempfile::Builder::new()
        .prefix("olmpack-archive-")
        .tempdir()
        .map_err(|e| RegistryError::io("cannot create temp dir in", std::env::temp_dir(), e))?;
    let f =
        std::fs::File::open(path).map_err(|e| RegistryError::io("cannot open archive", path, e))?;
    let reader = reg_unpack::decompress(f, "", name)?;
    let mut stats = reg_unpack::Stats::default();
    let limits = reg_unpack::Limits {
        max_total_bytes: 8 << 30,
        max_entries: 1_000_000,
        max_file_bytes: 4 << 30,
    };
    reg_unpack::unpack_layer(reader, dir.path(), name, &limits, &mut stats)
        .map_err(|e| src_err(name, e.to_string()))?;
    Ok(dir)
}

#[derive(Deserialize)]
struct DockerManifestEntry {
    #[serde(rename = "Config")]
    config: String,
    #[serde(rename = "Layers", default)]
    layers: Vec<String>,
}

fn sha256_file(p: &Path) -> Result<(String, u64, bool), RegistryError> {
    let mut f = std::fs::File::open(p).map_err(|e| RegistryError::io("cannot read", p, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut n = 0u64;
    let mut first = Vec::new();
    loop {
        let k = f
            .read(&mut buf)
            .map_err(|e| RegistryError::io("cannot read", p, e))?;
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
pub fn load_docker_archive(path: &Path, name: &str) -> Result<LoadedImage, RegistryError> {
    let dir = extract_archive(path, name)?;
    let mpath = dir.path().join("manifest.json");
    let text = std::fs::read(&mpath)
        .map_err(|_| src_err(name, "no manifest.json: not a docker-archive"))?;
    let mut entries: Vec<DockerManifestEntry> = serde_json::from_slice(&text)
        .map_err(|e| src_err(name, format!("manifest.json is not valid: {e}")))?;
    if entries.len() != 1 {
        return Err(src_err(
            name,
            format!("the archive holds {} images; expected one", entries.len()),
        ));
    }
    let entry = entries.remove(0);
    let inside = |rel: &str| -> Result<PathBuf, RegistryError> {
        let r = reg_unpack::safe_relative(Path::new(rel))
            .map_err(|e| src_err(name, e))?
            .ok_or_else(|| src_err(name, "empty path in manifest.json"))?;
        Ok(dir.path().join(r))
    };
    let config_bytes = std::fs::read(inside(&entry.config)?)
        .map_err(|e| src_err(name, format!("cannot read config {}: {e}", entry.config)))?;
    let config_desc = Descriptor {
        media_type: "application/vnd.docker.container.image.v1+json".into(),
        digest: reg_digest::sha256(&config_bytes),
        size: config_bytes.len() as u64,
    };
    let mut layers = Vec::new();
    for l in &entry.layers {
        let p = inside(l)?;
        let (digest, size, gz) = sha256_file(&p)?;
        let media_type = if gz {
            "application/vnd.docker.image.rootfs.diff.tar.gzip"
        } else {
            "application/vnd.docker.image.rootfs.diff.tar"
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
        "mediaType": crate::registry::pull::DOCKER_MANIFEST,
        "config": {"mediaType": config_desc.media_type, "size": config_desc.size, "digest": config_desc.digest},
        "layers": layers.iter().map(|l| serde_json::json!({"mediaType": l.descriptor.media_type, "size": l.descriptor.size, "digest": l.descriptor.digest})).collect::<Vec<_>>(),
    });
    let mbytes = serde_json::to_vec(&manifest).map_err(|e| src_err(name, e.to_string()))?;
    let mdesc = Descriptor {
        media_type: crate::registry::pull::DOCKER_MANIFEST.into(),
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
