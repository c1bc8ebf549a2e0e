//! Digests in the `<algorithm>:<hex>` form OCI uses, and a writer that hashes and counts what
//! passes through it, so a layer's compressed digest and uncompressed `diff_id` come out of one
//! streaming pass instead of a second read of the spool file.
//!
//! olmpack writes sha256 and verifies sha256 and sha512 (the algorithms image references may
//! name, as go-digest and containers/image accept them): content is always checked with the
//! algorithm its digest names, never with sha256 in its place, and any other algorithm is
//! refused rather than trusted.

use sha2::{Digest as _, Sha256, Sha512};
use std::io::{self, Write};

/// A digest algorithm olmpack can verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// `sha256:<64 hex>`, what every image olmpack writes uses.
    Sha256,
    /// `sha512:<128 hex>`, which references and manifests may name.
    Sha512,
}

impl Algorithm {
    /// The algorithm of a well-formed digest (lowercase hex of the right length); `None` for
    /// anything else, which is then refused, never verified some other way.
    pub fn of(digest: &str) -> Option<Algorithm> {
        if !crate::reference::valid_digest(digest) {
            return None;
        }
        match digest.split_once(':') {
            Some(("sha256", _)) => Some(Algorithm::Sha256),
            Some(("sha512", _)) => Some(Algorithm::Sha512),
            _ => None,
        }
    }
}

/// A running hash of one of the [`Algorithm`]s.
#[derive(Clone)]
enum Hasher {
    Sha256(Sha256),
    Sha512(Sha512),
}

impl Hasher {
    fn new(algorithm: Algorithm) -> Hasher {
        match algorithm {
            Algorithm::Sha256 => Hasher::Sha256(Sha256::new()),
            Algorithm::Sha512 => Hasher::Sha512(Sha512::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(bytes),
            Hasher::Sha512(h) => h.update(bytes),
        }
    }

    fn finish(self) -> String {
        match self {
            Hasher::Sha256(h) => format_digest(h),
            Hasher::Sha512(h) => hex_digest("sha512:", &h.finalize()),
        }
    }
}

fn hex_digest(prefix: &str, bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(prefix.len() + 2 * bytes.len());
    out.push_str(prefix);
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// The digest of `bytes` in the algorithm `expected` names (what `expected` must equal for the
/// bytes to be the content it names); `None` when olmpack cannot verify that algorithm.
pub fn digest_as(expected: &str, bytes: &[u8]) -> Option<String> {
    let mut h = Hasher::new(Algorithm::of(expected)?);
    h.update(bytes);
    Some(h.finish())
}

/// Formats a finished SHA-256 state as `sha256:<64 lowercase hex>`. The one digest formatter
/// of the crate: the registry client uses it too.
pub fn format_digest(hasher: Sha256) -> String {
    hex_digest("sha256:", &hasher.finalize())
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
    hasher: Hasher,
    count: u64,
}

impl<W: Write> HashingWriter<W> {
    /// Wraps `inner`, hashing with sha256 (what olmpack writes); nothing has been hashed yet.
    pub fn new(inner: W) -> Self {
        HashingWriter::with_algorithm(inner, Algorithm::Sha256)
    }

    /// Wraps `inner`, hashing with `algorithm` (to check content against a digest it names).
    pub fn with_algorithm(inner: W, algorithm: Algorithm) -> Self {
        HashingWriter {
            inner,
            hasher: Hasher::new(algorithm),
            count: 0,
        }
    }

    /// The writer underneath, for flushing or finishing it.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Returns the inner writer, the digest of everything written and its length.
    pub fn finish(self) -> (W, String, u64) {
        (self.inner, self.hasher.finish(), self.count)
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

/// A reader that hashes and counts what passes through it, so a blob streamed from anywhere (a
/// registry response, a layout file, an archive entry) is verified against its descriptor
/// without a second read. Reading past the descriptor's size (or `limit`) fails at once;
/// [`VerifyingReader::finish`] drains the rest and checks digest and size.
pub struct VerifyingReader<R: io::Read> {
    inner: R,
    /// `None` for a digest olmpack cannot verify: every read then fails.
    hasher: Option<Hasher>,
    count: u64,
    expected: super::descriptor::Descriptor,
    limit: u64,
    check_at_eof: bool,
}

impl<R: io::Read> VerifyingReader<R> {
    /// Wraps `inner`, which must yield exactly the bytes of `expected`; at most `limit` bytes are
    /// read before the stream is refused.
    pub fn new(inner: R, expected: super::descriptor::Descriptor, limit: u64) -> Self {
        VerifyingReader {
            inner,
            hasher: Algorithm::of(&expected.digest).map(Hasher::new),
            count: 0,
            expected,
            limit,
            check_at_eof: false,
        }
    }

    /// A reader that also checks digest and size when the stream ends, failing the last read
    /// (`InvalidData`) on a mismatch: for consumers that only know `Read` (a layout writer, an
    /// archive writer) and must never accept bytes that are not the blob's.
    pub fn strict(inner: R, expected: super::descriptor::Descriptor) -> Self {
        let limit = expected.size;
        VerifyingReader {
            check_at_eof: true,
            ..VerifyingReader::new(inner, expected, limit)
        }
    }

    /// The descriptor the bytes must match.
    pub fn expected(&self) -> &super::descriptor::Descriptor {
        &self.expected
    }

    /// Drains the rest of the stream and checks size and digest.
    pub fn finish(mut self) -> Result<(), super::error::ImageError> {
        use super::error::ImageError;
        if self.hasher.is_none() {
            return Err(ImageError::UnsupportedDigest(self.expected.digest.clone()));
        }
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
        let actual = self.actual();
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

impl<R: io::Read> VerifyingReader<R> {
    /// The digest of what was read so far, in the expected digest's algorithm.
    fn actual(&self) -> String {
        self.hasher.clone().map(Hasher::finish).unwrap_or_default()
    }
}

impl<R: io::Read> io::Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.hasher.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                super::error::ImageError::UnsupportedDigest(self.expected.digest.clone()),
            ));
        }
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && self.check_at_eof {
            let actual = self.actual();
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
        if let Some(h) = self.hasher.as_mut() {
            h.update(&buf[..n]);
        }
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

    /// sha512 content is checked with sha512 (the NIST test vector for "abc"), a sha512 digest
    /// of other bytes is refused, and an algorithm olmpack cannot verify fails every read.
    #[test]
    fn sha512_is_verified_with_sha512_and_other_algorithms_refused() {
        use std::io::Read;
        let abc512 = "sha512:ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f";
        assert_eq!(digest_as(abc512, b"abc").as_deref(), Some(abc512));
        let d = |digest: &str| crate::image::Descriptor {
            media_type: String::new(),
            digest: digest.to_string(),
            size: 3,
        };
        VerifyingReader::new(&b"abc"[..], d(abc512), 100)
            .finish()
            .unwrap();
        let mut lying = VerifyingReader::new(&b"abd"[..], d(abc512), 100);
        lying.read_to_end(&mut Vec::new()).unwrap();
        let e = lying.finish().unwrap_err().to_string();
        assert!(e.contains(abc512), "{e}");
        let mut strict = VerifyingReader::strict(&b"abd"[..], d(abc512));
        assert!(strict.read_to_end(&mut Vec::new()).is_err());
        let sha384 = format!("sha384:{}", "a".repeat(96));
        assert_eq!(digest_as(&sha384, b"abc"), None);
        let mut r = VerifyingReader::new(&b"abc"[..], d(&sha384), 100);
        assert!(r.read_to_end(&mut Vec::new()).is_err());
        assert!(
            VerifyingReader::new(&b"abc"[..], d(&sha384), 100)
                .finish()
                .is_err()
        );
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
