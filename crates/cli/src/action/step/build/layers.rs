//! The layer work of rebuilding a catalog image ([`super::from_image`]): reading a source
//! layer, writing a rewritten one, the image without its catalog and cache, and the
//! `--cache-dir` argument of its command line.

use super::CatalogBuildError;
use crate::image::strip::{Areas, LayerUse};
use crate::image::{Blob, BlobSource, Descriptor, Image, ImageError};
use crate::transport::OpenedImage;
use crate::transport::unpack;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// One platform's plan: what to take out, what each layer becomes, where the new cache goes
/// (none: no cache), and CMD when it changes.
pub(super) struct Plan {
    pub(super) areas: Areas,
    pub(super) uses: Vec<LayerUse>,
    pub(super) cache_dir: Option<String>,
    pub(super) cmd: Option<Vec<String>>,
}

impl Plan {
    /// What a rewrite depends on besides the layer: the folders taken out.
    pub(super) fn areas_key(&self) -> String {
        format!("{:?}", self.areas)
    }
}

/// `--cache-dir=X` or `--cache-dir X` in an argument list.
pub(super) fn cache_dir_arg(args: &[String]) -> Option<String> {
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
pub(super) fn without_cache_dir(args: &[String]) -> Vec<String> {
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

pub(super) fn io_error(digest: &str, source: std::io::Error) -> ImageError {
    ImageError::Read {
        digest: digest.to_string(),
        source,
    }
}

pub(super) fn layer_error(name: &str, source: ImageError) -> CatalogBuildError {
    CatalogBuildError::SourceLayer {
        source_name: name.to_string(),
        source,
    }
}

/// Opens layer `i` of `image` (verified, decompressed) and runs `f` on its tar stream.
pub(super) fn read_layer<T>(
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
pub(super) struct GzipLayer {
    inner: crate::image::digest::HashingWriter<
        flate2::write::GzEncoder<crate::image::digest::HashingWriter<BufWriter<std::fs::File>>>,
    >,
}

impl GzipLayer {
    pub(super) fn create(path: &Path) -> std::io::Result<GzipLayer> {
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

    pub(super) fn finish(self, path: &Path) -> std::io::Result<crate::image::layer::LayerBlob> {
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
pub(super) fn base_without(
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
pub(super) fn same_tree(a: &Path, b: &Path) -> bool {
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
