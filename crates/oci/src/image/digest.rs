//! SHA-256 digests in the `sha256:<hex>` form OCI uses, and a writer that hashes and counts what
//! passes through it, so a layer's compressed digest and uncompressed `diff_id` come out of one
//! streaming pass instead of a second read of the spool file.

use sha2::{Digest as _, Sha256};
use std::io::{self, Write};

/// Formats a finished SHA-256 state as `sha256:<64 lowercase hex>`. The one digest formatter
/// of the crate: the registry client uses it too.
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

/// A reader that hashes and counts what passes through it, so a blob streamed from anywhere (a
/// registry response, a layout file, an archive entry) is verified against its descriptor
/// without a second read. Reading past the descriptor's size (or `limit`) fails at once;
/// [`VerifyingReader::finish`] drains the rest and checks digest and size.
pub struct VerifyingReader<R: io::Read> {
    inner: R,
    hasher: Sha256,
    count: u64,
    expected: super::model::Descriptor,
    limit: u64,
    check_at_eof: bool,
}

impl<R: io::Read> VerifyingReader<R> {
    /// Wraps `inner`, which must yield exactly the bytes of `expected`; at most `limit` bytes are
    /// read before the stream is refused.
    pub fn new(inner: R, expected: super::model::Descriptor, limit: u64) -> Self {
        VerifyingReader {
            inner,
            hasher: Sha256::new(),
            count: 0,
            expected,
            limit,
            check_at_eof: false,
        }
    }

    /// A reader that also checks digest and size when the stream ends, failing the last read
    /// (`InvalidData`) on a mismatch: for consumers that only know `Read` (a layout writer, an
    /// archive writer) and must never accept bytes that are not the blob's.
    pub fn strict(inner: R, expected: super::model::Descriptor) -> Self {
        let limit = expected.size;
        VerifyingReader {
            check_at_eof: true,
            ..VerifyingReader::new(inner, expected, limit)
        }
    }

    /// The descriptor the bytes must match.
    pub fn expected(&self) -> &super::model::Descriptor {
        &self.expected
    }

    /// Drains the rest of the stream and checks size and digest.
    pub fn finish(mut self) -> Result<(), super::error::ImageError> {
        use super::error::ImageError;
        let mut sink = [0u8; 64 * 1024];
        loop {
            match io::Read::read(&mut self, &mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    return Err(ImageError::SizeMismatch {
                        digest: self.expected.digest.clone(),
                        expected: self.expected.size,
                        actual: self.count,
                    });
                }
                Err(source) => {
                    return Err(ImageError::Read {
                        digest: self.expected.digest.clone(),
                        source,
                    });
                }
            }
        }
        let actual = format_digest(self.hasher.clone());
        if actual != self.expected.digest {
            return Err(ImageError::DigestMismatch {
                expected: self.expected.digest.clone(),
                actual,
            });
        }
        if self.count != self.expected.size {
            return Err(ImageError::SizeMismatch {
                digest: self.expected.digest.clone(),
                expected: self.expected.size,
                actual: self.count,
            });
        }
        Ok(())
    }
}

impl<R: io::Read> io::Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && self.check_at_eof {
            let actual = format_digest(self.hasher.clone());
            if actual != self.expected.digest || self.count != self.expected.size {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    super::error::ImageError::DigestMismatch {
                        expected: self.expected.digest.clone(),
                        actual,
                    },
                ));
            }
        }
        self.count += n as u64;
        if self.count > self.limit || self.count > self.expected.size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "blob {} is larger than its descriptor size {} (or the limit {})",
                    self.expected.digest, self.expected.size, self.limit
                ),
            ));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
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

    #[test]
    fn verifying_reader_refuses_altered_bytes() {
        use std::io::Read;
        let data = b"hello".to_vec();
        let d = crate::image::Descriptor {
            media_type: String::new(),
            digest: sha256_digest(&data),
            size: 5,
        };
        let mut r = VerifyingReader::new(&b"hellp"[..], d.clone(), 100);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        let e = r.finish().unwrap_err().to_string();
        assert!(e.contains(&d.digest), "{e}");
        let r = VerifyingReader::new(&b"hello"[..], d.clone(), 100);
        r.finish().unwrap();
        let mut r = VerifyingReader::new(&b"hello world"[..], d, 100);
        assert!(r.read_to_end(&mut Vec::new()).is_err());
    }
}
