//! Recomputes every digest and size of an image and checks the manifest and config agree with
//! its blobs (go-containerregistry's `validate.Image`). Tests run it on every sink's output read
//! back; a pusher can run it before uploading.

use super::config::canonical_json;
use super::digest::{Algorithm, HashingWriter, sha256_digest};
use super::error::OutputError;
use super::manifest::descriptor_json;
use super::model::{Blob, Image};
use flate2::read::GzDecoder;
use serde_json::Value;
use std::io;

/// Checks `image`: each blob's bytes match its descriptor, the manifest lists exactly the config
/// and layers (in order), and the config's `rootfs.diff_ids` are the layers' uncompressed
/// digests.
pub fn verify_image(image: &Image) -> Result<(), OutputError> {
    for blob in image.blobs() {
        check_blob(blob)?;
    }
    let manifest = read_json(&image.manifest)?;
    let mismatch = |what: &str| {
        OutputError::Unsupported(format!(
            "manifest {} {what}",
            image.manifest.descriptor.digest
        ))
    };
    if manifest.get("config") != Some(&descriptor_json(&image.config.descriptor)) {
        return Err(mismatch("does not point at the config blob"));
    }
    let layers: Vec<Value> = image
        .layers
        .iter()
        .map(|l| descriptor_json(&l.descriptor))
        .collect();
    if manifest.get("layers") != Some(&Value::Array(layers)) {
        return Err(mismatch("does not list the layer blobs in order"));
    }
    let config = read_json(&image.config)?;
    let diff_ids = config.pointer("/rootfs/diff_ids").and_then(Value::as_array);
    let diff_ids = diff_ids.ok_or_else(|| mismatch("has a config without rootfs.diff_ids"))?;
    if diff_ids.len() != image.layers.len() {
        return Err(mismatch(
            "has a config whose diff_ids do not match the layer count",
        ));
    }
    for (layer, diff_id) in image.layers.iter().zip(diff_ids) {
        let reader = layer
            .open()
            .map_err(|e| OutputError::io("read", layer.location(), e))?;
        let mut hashing = HashingWriter::new(io::sink());
        io::copy(&mut GzDecoder::new(reader), &mut hashing)
            .map_err(|e| OutputError::io("decompress", layer.location(), e))?;
        let (_, digest, _) = hashing.finish();
        if Some(digest.as_str()) != diff_id.as_str() {
            return Err(OutputError::BlobMismatch {
                digest: diff_id.to_string(),
                path: layer.location(),
            });
        }
    }
    Ok(())
}

/// True when `bytes` is the canonical encoding of the JSON it holds (sorted keys, no spaces).
pub fn is_canonical_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes).is_ok_and(|v| canonical_json(&v) == bytes)
}

fn check_blob(blob: &Blob) -> Result<(), OutputError> {
    let mut sink = io::sink();
    copy_verified(blob, &mut sink, &blob.location())
}

fn read_json(blob: &Blob) -> Result<Value, OutputError> {
    let mut bytes = Vec::new();
    copy_verified(blob, &mut bytes, &blob.location())?;
    debug_assert_eq!(sha256_digest(&bytes), blob.descriptor.digest);
    serde_json::from_slice(&bytes).map_err(|e| OutputError::BadLayout {
        path: blob.location(),
        reason: format!("not JSON: {e}"),
    })
}

/// Copies a blob's bytes into `out`, checking digest and size on the way (`shown` names the
/// file being written, for messages). Every sink and the read-back check use it.
pub fn copy_verified(
    blob: &Blob,
    out: &mut dyn std::io::Write,
    shown: &std::path::Path,
) -> Result<(), OutputError> {
    let algorithm = Algorithm::of(&blob.descriptor.digest).ok_or_else(|| {
        OutputError::Unsupported(format!(
            "cannot verify digest {}: only sha256 and sha512 are supported",
            blob.descriptor.digest
        ))
    })?;
    let mut reader = blob
        .open()
        .map_err(|e| OutputError::io("read", blob.location(), e))?;
    let mut hashing = HashingWriter::with_algorithm(out, algorithm);
    std::io::copy(&mut reader, &mut hashing).map_err(|e| OutputError::io("write", shown, e))?;
    let (out, digest, size) = hashing.finish();
    out.flush()
        .map_err(|e| OutputError::io("write", shown, e))?;
    if digest != blob.descriptor.digest || size != blob.descriptor.size {
        return Err(OutputError::BlobMismatch {
            digest: blob.descriptor.digest.clone(),
            path: blob.location(),
        });
    }
    Ok(())
}
