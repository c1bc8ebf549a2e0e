//! Fetching from a registry: manifests and indexes by tag or digest (verified when pinned), and
//! blobs as verifying streams or into files, so every byte is verified against its digest
//! before anything uses it. A mismatch is a hard error naming the digest; a partial file is
//! removed. What the bytes mean (parsing, media types) is the image module's
//! ([`crate::image::parse`], [`crate::image::media`]); turning a reference into an image value
//! is the transport's (`transport::open`).

use super::client::{Client, Request, header};
use super::errors::RegistryError;
use super::token::pull_scope;
use crate::image::Descriptor;
use crate::image::ImageError;
pub use crate::image::digest::VerifyingReader;
use crate::reference::Reference;
use reqwest::Method;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Manifests are small; anything bigger is refused before it is read.
pub use crate::image::parse::MAX_MANIFEST_BYTES;

/// What the image module says about content is reported through the registry error when the
/// content came from a registry (with the same words: a digest mismatch is one).
impl From<ImageError> for RegistryError {
    fn from(err: ImageError) -> Self {
        match err {
            ImageError::DigestMismatch { expected, actual } => {
                RegistryError::DigestMismatch { expected, actual }
            }
            ImageError::TooLarge { what, limit } => RegistryError::TooLarge { what, limit },
            ImageError::Read { digest, source } => read_error(&digest, &source),
            // Image errors quote content (media types, digests) the registry chose.
            other => RegistryError::Protocol(super::errors::printable(&other.to_string())),
        }
    }
}

/// Fetches the manifest or index `what` (a tag or digest) of `reference`'s repository as
/// bytes, verified when `what` is a digest: `(bytes, media type, digest)`.
pub fn fetch_manifest_bytes(
    client: &Client,
    reference: &Reference,
    what: &str,
) -> Result<(Vec<u8>, String, String), RegistryError> {
    fetch_manifest(client, &reference.repository, what)
}

/// [`fetch_manifest_bytes`] by repository name. A manifest this client (or a handle sharing
/// it) read before by digest is not read again ([`super::cache`]).
pub fn fetch_manifest(
    client: &Client,
    repository: &str,
    what: &str,
) -> Result<(Vec<u8>, String, String), RegistryError> {
    if what.starts_with("sha256:")
        && let Some((bytes, media_type)) = client.manifest_cache().get(repository, what)
    {
        return Ok((bytes, media_type, what.to_string()));
    }
    let fetched = get_manifest(client, repository, what, &[pull_scope(repository)])?;
    client
        .manifest_cache()
        .put(repository, &fetched.2, &fetched.0, &fetched.1);
    Ok(fetched)
}

fn sha256_digest(bytes: &[u8]) -> String {
    super::digest::sha256(bytes)
}

fn get_manifest(
    client: &Client,
    repository: &str,
    what: &str,
    scopes: &[String],
) -> Result<(Vec<u8>, String, String), RegistryError> {
    let accept = crate::image::media::ACCEPT_MANIFESTS.join(", ");
    let req = Request::new(Method::GET, super::api::manifest(repository, what), scopes)
        .header("Accept", accept);
    let resp = client.expect(&req, &[200])?;
    let ct = header(&resp, "Content-Type").unwrap_or_default();
    let mut bytes = Vec::new();
    resp.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            RegistryError::Protocol(format!(
                "cannot read manifest {what}: {}",
                super::errors::body_read_failure(&e)
            ))
        })?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(RegistryError::TooLarge {
            what: format!("manifest {what}"),
            limit: MAX_MANIFEST_BYTES,
        });
    }
    let mut digest = sha256_digest(&bytes);
    if what.contains(':') {
        // A pinned digest is checked with the algorithm it names; one olmpack cannot verify
        // is refused rather than trusted.
        digest = crate::image::digest::digest_as(what, &bytes).ok_or_else(|| {
            RegistryError::Protocol(format!(
                "cannot verify {what}: only sha256 and sha512 digests are supported; pull by tag or by such a digest"
            ))
        })?;
    }
    if what.contains(':') && digest != what {
        return Err(RegistryError::DigestMismatch {
            expected: what.to_string(),
            actual: digest,
        });
    }
    let media_type = crate::image::parse::declared_media_type(&bytes)
        .unwrap_or_else(|| ct.split(';').next().unwrap_or("").trim().to_string());
    Ok((bytes, media_type, digest))
}

/// Opens a blob as a verifying stream. Call [`VerifyingReader::finish`] after reading.
pub fn open_blob(
    client: &Client,
    repository: &str,
    desc: &Descriptor,
    limit: u64,
) -> Result<VerifyingReader<Box<dyn Read>>, RegistryError> {
    if desc.size > limit {
        return Err(RegistryError::TooLarge {
            what: format!("blob {}", desc.digest),
            limit,
        });
    }
    if desc.algorithm_hex().is_none() {
        return Err(RegistryError::Protocol(format!(
            "cannot verify digest {}: only sha256 and sha512 are supported",
            desc.digest
        )));
    }
    let req = Request::new(
        Method::GET,
        super::api::blob(repository, &desc.digest),
        &[pull_scope(repository)],
    )
    .expecting(desc.size);
    let resp = client.expect(&req, &[200])?;
    Ok(VerifyingReader::new(Box::new(resp), desc.clone(), limit))
}

/// Downloads a blob to `dest` (through `dest.partial`), verified; on any error no file is left.
pub fn fetch_blob_to_file(
    client: &Client,
    repository: &str,
    desc: &Descriptor,
    dest: &Path,
    limit: u64,
) -> Result<(), RegistryError> {
    let partial: PathBuf = dest.with_extension("partial");
    // One download into `partial`, renamed over `dest` once verified; on any error the partial
    // file is removed.
    let once = || {
        let result = (|| {
            let mut reader = open_blob(client, repository, desc, limit)?;
            let mut out = std::fs::File::create(&partial)
                .map_err(|e| RegistryError::io("cannot create", &partial, e))?;
            std::io::copy(&mut reader, &mut out).map_err(|e| read_error(&desc.digest, &e))?;
            out.flush()
                .map_err(|e| RegistryError::io("cannot write", &partial, e))?;
            reader.finish()?;
            std::fs::rename(&partial, dest)
                .map_err(|e| RegistryError::io("cannot rename", &partial, e))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        result
    };
    // A stream cut mid-body is retried from the start with the client's policy (the partial
    // file is discarded); a digest or size mismatch is not: the registry would serve the same.
    let policy = client.retry_policy().clone();
    let mut attempt = 0;
    loop {
        attempt += 1;
        match once() {
            Err(e) if e.is_temporary() && attempt < policy.max_attempts => {
                client
                    .stats
                    .retries
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                super::retry::wait_before_retry(
                    &policy,
                    &format!("download of blob {} from {repository}", desc.digest),
                    &super::retry::why(&e, ""),
                    attempt,
                    policy.max_attempts,
                    e.retry_after(),
                );
            }
            other => return other,
        }
    }
}

/// Maps a read error of a blob stream: oversize is a protocol error, anything else (EOF,
/// reset) an interruption worth retrying.
pub fn read_error(digest: &str, e: &std::io::Error) -> RegistryError {
    if e.kind() == std::io::ErrorKind::InvalidData {
        RegistryError::Protocol(format!("downloading blob {digest}: {e}"))
    } else {
        RegistryError::Interrupted {
            what: format!("download of blob {digest}"),
            reason: super::errors::body_read_failure(e),
        }
    }
}

/// Fetches a small blob (a config) into memory, verified; refuses anything over 4 MiB.
pub fn fetch_small_blob(
    client: &Client,
    repository: &str,
    desc: &Descriptor,
) -> Result<Vec<u8>, RegistryError> {
    let mut reader = open_blob(client, repository, desc, MAX_MANIFEST_BYTES)?;
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .map_err(|e| RegistryError::Protocol(format!("reading blob {}: {e}", desc.digest)))?;
    reader.finish()?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_stream_is_worth_retrying_and_an_oversized_one_is_not() {
        let cut = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "cut");
        assert!(read_error("sha256:x", &cut).is_temporary());
        let big = std::io::Error::new(std::io::ErrorKind::InvalidData, "big");
        assert!(!read_error("sha256:x", &big).is_temporary());
        let mismatch: RegistryError = ImageError::DigestMismatch {
            expected: "sha256:a".into(),
            actual: "sha256:b".into(),
        }
        .into();
        assert!(
            mismatch.to_string().contains("digest mismatch"),
            "{mismatch}"
        );
    }
}
