//! SHA-256 digests in the `sha256:<hex>` form OCI uses, and a writer that hashes and counts what
//! passes through it, so a layer's compressed digest and uncompressed `diff_id` come out of one
//! streaming pass instead of a second read of the spool file.

use sha2::{Digest as _, Sha256};
use std::io::{self, Write};

/// Formats a finished SHA-256 state as `sha256:<64 lowercase hex>` (sha2 0.11 no longer formats
/// its output as hex). The one digest formatter of the crate: the registry client uses it too.
pub fn format_digest(hasher: Sha256) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = hasher.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in bytes.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// The `sha256:<hex>` digest of a byte slice (config, manifest, index bytes).
pub fn sha256_digest(bytes: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(bytes);
    format_digest(hasher)
}

/// A writer that forwards everything to `inner` while hashing and counting it.
///
/// Exists so the layer writer can stack two of them (around the gzip encoder for the `diff_id`,
/// under it for the blob digest) and never re-read what it wrote.
pub struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    count: u64,
}

impl<W: Write> HashingWriter<W> {
    /// Wraps `inner`; nothing has been hashed yet.
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            count: 0,
        }
    }

    /// The writer underneath, for flushing or finishing it.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Returns the inner writer, the `sha256:<hex>` of everything written and its length.
    pub fn finish(self) -> (W, String, u64) {
        (self.inner, format_digest(self.hasher), self.count)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Copies a blob's bytes into `out`, checking digest and size on the way (`shown` names the
/// file being written, for messages). Every sink and the read-back check use it.
pub fn copy_verified(
    blob: &super::model::Blob,
    out: &mut dyn std::io::Write,
    shown: &std::path::Path,
) -> Result<(), super::error::OutputError> {
    use super::error::OutputError;
    let mut reader = blob
        .open()
        .map_err(|e| OutputError::io("read", blob.location(), e))?;
    let mut hashing = HashingWriter::new(out);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_has_the_well_known_digest() {
        assert_eq!(
            sha256_digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn hashing_writer_matches_one_shot_digest() {
        let mut w = HashingWriter::new(Vec::new());
        w.write_all(b"hello ").unwrap();
        w.write_all(b"world").unwrap();
        let (inner, digest, count) = w.finish();
        assert_eq!(inner, b"hello world");
        assert_eq!(count, 11);
        assert_eq!(digest, sha256_digest(b"hello world"));
    }
}
