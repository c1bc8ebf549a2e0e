//! Pulling: manifests (OCI and Docker v2-2, single or index/list), and blobs streamed to temp
//! files through a hasher, so every byte is verified against its digest before anything uses
//! it. A mismatch is a hard error naming the digest; the partial file is removed.

use super::client::{Client, Request, header};
use super::errors::RegistryError;
use super::token::pull_scope;
use crate::image::{Blob, BlobSource, Descriptor, Image};
use crate::reference::Reference;
use reqwest::Method;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// OCI image manifest media type.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index media type.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Docker v2 schema 2 manifest media type.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker manifest list media type.
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// Manifests are small; anything bigger is refused before it is read (the spec suggests 4 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// `os/architecture[/variant]`, used to pick a manifest out of an index: the same type the
/// builder records in the config, so `--platform` means one thing everywhere.
pub use crate::image::Platform;

#[derive(Deserialize)]
struct RawDescriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    size: u64,
    #[serde(default)]
    platform: Option<RawPlatform>,
}

#[derive(Deserialize)]
struct RawPlatform {
    #[serde(default)]
    os: String,
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    variant: Option<String>,
}

#[derive(Deserialize)]
struct RawManifest {
    #[serde(rename = "schemaVersion", default)]
    schema_version: u32,
    #[serde(rename = "mediaType", default)]
    media_type: Option<String>,
    #[serde(default)]
    config: Option<RawDescriptor>,
    #[serde(default)]
    layers: Option<Vec<RawDescriptor>>,
    #[serde(default)]
    manifests: Option<Vec<RawDescriptor>>,
}

/// A single-image manifest reduced to what we use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedManifest {
    /// Config descriptor.
    pub config: Descriptor,
    /// Layer descriptors in order.
    pub layers: Vec<Descriptor>,
}

fn to_desc(d: RawDescriptor) -> Result<Descriptor, RegistryError> {
    if !crate::reference::valid_digest(&d.digest) {
        return Err(RegistryError::Protocol(format!(
            "manifest names an invalid digest {:?}",
            d.digest
        )));
    }
    Ok(Descriptor {
        media_type: d.media_type,
        digest: d.digest,
        size: d.size,
    })
}

/// Parses an image manifest (OCI or Docker v2-2). Schema 1 and indexes are refused here.
pub fn parse_manifest(bytes: &[u8]) -> Result<ParsedManifest, RegistryError> {
    let raw: RawManifest = serde_json::from_slice(bytes)
        .map_err(|e| RegistryError::Protocol(format!("manifest is not valid JSON: {e}")))?;
    if raw.schema_version == 1 {
        return Err(RegistryError::Protocol(
            "Docker schema 1 manifests are not supported; rebuild the image".into(),
        ));
    }
    if raw.manifests.is_some() {
        return Err(RegistryError::Protocol(
            "expected an image manifest, got an index".into(),
        ));
    }
    let config = raw
        .config
        .ok_or_else(|| RegistryError::Protocol("manifest has no config".into()))?;
    let layers = raw
        .layers
        .unwrap_or_default()
        .into_iter()
        .map(to_desc)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ParsedManifest {
        config: to_desc(config)?,
        layers,
    })
}

/// One entry of an image index (or Docker manifest list): the manifest it points at and the
/// platform it claims, kept as raw JSON too so a derived index can copy fields olmpack does not
/// model (`os.version`, `os.features`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    /// The per-platform manifest.
    pub descriptor: Descriptor,
    /// `os/architecture[/variant]`, when the entry names one (attestations and other
    /// artifacts in an index often do not, or say `unknown/unknown`).
    pub platform: Option<Platform>,
    /// The entry's `platform` object as written.
    pub platform_json: Option<serde_json::Value>,
}

/// Parses an image index or manifest list into its entries; `Ok(None)` when `bytes` is a
/// single-image manifest instead.
pub fn parse_index(bytes: &[u8]) -> Result<Option<Vec<IndexEntry>>, RegistryError> {
    #[derive(Deserialize)]
    struct RawIndex {
        #[serde(default)]
        manifests: Option<Vec<serde_json::Value>>,
    }
    let raw: RawIndex = serde_json::from_slice(bytes)
        .map_err(|e| RegistryError::Protocol(format!("manifest is not valid JSON: {e}")))?;
    let Some(list) = raw.manifests else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(list.len());
    for value in list {
        let platform_json = value.get("platform").cloned();
        let d: RawDescriptor = serde_json::from_value(value).map_err(|e| {
            RegistryError::Protocol(format!("index entry is not a descriptor: {e}"))
        })?;
        let platform = d.platform.as_ref().and_then(|p| {
            let mut text = format!("{}/{}", p.os, p.architecture);
            if let Some(v) = p.variant.as_deref().filter(|v| !v.is_empty()) {
                text = format!("{text}/{v}");
            }
            text.parse::<Platform>().ok()
        });
        out.push(IndexEntry {
            descriptor: to_desc(d)?,
            platform,
            platform_json,
        });
    }
    Ok(Some(out))
}

/// Fetches the manifest or index `what` (a tag or digest) of `reference`'s repository as
/// bytes, verified when `what` is a digest: `(bytes, media type, digest)`.
pub fn fetch_manifest_bytes(
    client: &Client,
    reference: &Reference,
    what: &str,
) -> Result<(Vec<u8>, String, String), RegistryError> {
    let scopes = [pull_scope(&reference.repository)];
    get_manifest(client, reference, what, &scopes)
}

/// A manifest as fetched, after index resolution.
#[derive(Debug, Clone)]
pub struct FetchedManifest {
    /// The image manifest bytes (verified against `digest`).
    pub bytes: Vec<u8>,
    /// Its media type.
    pub media_type: String,
    /// Its digest.
    pub digest: String,
    /// Parsed content.
    pub parsed: ParsedManifest,
    /// Notes for the user (an index was resolved to one platform).
    pub warnings: Vec<String>,
}

fn sha256_digest(bytes: &[u8]) -> String {
    super::digest::sha256(bytes)
}

fn get_manifest(
    client: &Client,
    reference: &Reference,
    what: &str,
    scopes: &[String],
) -> Result<(Vec<u8>, String, String), RegistryError> {
    let accept = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST].join(", ");
    let req = Request::new(
        Method::GET,
        format!("/v2/{}/manifests/{what}", reference.repository),
        scopes,
    )
    .header("Accept", accept);
    let resp = client.expect(&req, &[200])?;
    let ct = header(&resp, "Content-Type").unwrap_or_default();
    let mut bytes = Vec::new();
    resp.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| RegistryError::Protocol(format!("cannot read manifest {what}: {e}")))?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(RegistryError::TooLarge {
            what: format!("manifest {what}"),
            limit: MAX_MANIFEST_BYTES,
        });
    }
    let digest = sha256_digest(&bytes);
    if what.contains(':') && !what.starts_with("sha256:") {
        // A pinned digest olmpack cannot verify is refused rather than trusted.
        return Err(RegistryError::Protocol(format!(
            "cannot verify {what}: only sha256 digests are supported; pull by tag or sha256 digest"
        )));
    }
    if what.contains(':') && digest != what {
        return Err(RegistryError::DigestMismatch {
            expected: what.to_string(),
            actual: digest,
        });
    }
    let media_type = serde_json::from_slice::<RawManifest>(&bytes)
        .ok()
        .and_then(|m| m.media_type)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| ct.split(';').next().unwrap_or("").trim().to_string());
    Ok((bytes, media_type, digest))
}

/// Fetches the manifest `reference` names, resolving an index or manifest list to `platform`
/// (reported as a warning: a bundle should be a single manifest).
pub fn fetch_manifest(
    client: &Client,
    reference: &Reference,
    platform: &Platform,
) -> Result<FetchedManifest, RegistryError> {
    let scopes = [pull_scope(&reference.repository)];
    let (bytes, media_type, digest) =
        get_manifest(client, reference, reference.manifest_reference(), &scopes)?;
    let raw: RawManifest = serde_json::from_slice(&bytes)
        .map_err(|e| RegistryError::Protocol(format!("manifest is not valid JSON: {e}")))?;
    if let Some(list) = raw.manifests {
        let chosen = select_platform(list, platform).ok_or_else(|| {
            RegistryError::Protocol(format!(
                "{reference} is an image index with no manifest for platform {platform}"
            ))
        })?;
        let (mbytes, mtype, mdigest) = get_manifest(client, reference, &chosen.digest, &scopes)?;
        let parsed = parse_manifest(&mbytes)?;
        let warning = format!(
            "{reference} is a multi-platform image index ({digest}); resolved to {platform} manifest {mdigest}: a bundle image should be a single manifest"
        );
        return Ok(FetchedManifest {
            bytes: mbytes,
            media_type: mtype,
            digest: mdigest,
            parsed,
            warnings: vec![warning],
        });
    }
    let parsed = parse_manifest(&bytes)?;
    Ok(FetchedManifest {
        bytes,
        media_type,
        digest,
        parsed,
        warnings: Vec::new(),
    })
}

/// Picks the index entry for `platform` (variant only compared when asked for).
fn select_platform(list: Vec<RawDescriptor>, platform: &Platform) -> Option<RawDescriptor> {
    list.into_iter().find(|d| {
        d.platform.as_ref().is_some_and(|p| {
            p.os == platform.os
                && p.architecture == platform.architecture
                && (platform.variant.is_none() || p.variant == platform.variant)
        })
    })
}

/// A reader that hashes and counts what passes through, for streaming verification.
pub struct VerifyingReader<R: Read> {
    inner: R,
    hasher: Sha256,
    count: u64,
    expected: Descriptor,
    limit: u64,
}

impl<R: Read> VerifyingReader<R> {
    /// Wraps `inner`, which must yield exactly the bytes of `expected`; at most `limit` bytes are
    /// read before the stream is refused.
    pub fn new(inner: R, expected: Descriptor, limit: u64) -> Self {
        VerifyingReader {
            inner,
            hasher: Sha256::new(),
            count: 0,
            expected,
            limit,
        }
    }

    /// Drains the rest of the stream and checks size and digest.
    pub fn finish(mut self) -> Result<(), RegistryError> {
        let mut sink = [0u8; 64 * 1024];
        loop {
            match self.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(read_error(&self.expected.digest, &e)),
            }
        }
        let actual = super::digest::finish(self.hasher.clone());
        if actual != self.expected.digest {
            return Err(RegistryError::DigestMismatch {
                expected: self.expected.digest.clone(),
                actual,
            });
        }
        if self.count != self.expected.size {
            return Err(RegistryError::Protocol(format!(
                "blob {} is {} bytes but its descriptor says {}",
                self.expected.digest, self.count, self.expected.size
            )));
        }
        Ok(())
    }
}

impl<R: Read> Read for VerifyingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        if self.count > self.limit || self.count > self.expected.size {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
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
    if !desc.digest.starts_with("sha256:") {
        return Err(RegistryError::Protocol(format!(
            "cannot verify digest {}: only sha256 is supported",
            desc.digest
        )));
    }
    let req = Request::new(
        Method::GET,
        format!("/v2/{repository}/blobs/{}", desc.digest),
        &[pull_scope(repository)],
    );
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
    // A stream cut mid-body is retried from the start with the client's policy (the partial
    // file is discarded); a digest or size mismatch is not: the registry would serve the same.
    let policy = client.retry_policy().clone();
    let mut attempt = 0;
    loop {
        attempt += 1;
        match fetch_blob_once(client, repository, desc, dest, limit) {
            Err(e) if e.is_temporary() && attempt < policy.max_attempts => {
                client
                    .stats
                    .retries
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                super::retry::wait_before_retry(
                    &policy,
                    &format!("download of blob {} from {repository}", desc.digest),
                    &crate::errors::error_chain(&e),
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
            reason: e.to_string(),
        }
    }
}

fn fetch_blob_once(
    client: &Client,
    repository: &str,
    desc: &Descriptor,
    dest: &Path,
    limit: u64,
) -> Result<(), RegistryError> {
    let partial: PathBuf = dest.with_extension("partial");
    let result = (|| {
        let mut reader = open_blob(client, repository, desc, limit)?;
        let mut out = std::fs::File::create(&partial)
            .map_err(|e| RegistryError::io("cannot create", &partial, e))?;
        std::io::copy(&mut reader, &mut out).map_err(|e| read_error(&desc.digest, &e))?;
        out.flush()
            .map_err(|e| RegistryError::io("cannot write", &partial, e))?;
        reader.finish()?;
        std::fs::rename(&partial, dest).map_err(|e| RegistryError::io("cannot rename", &partial, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// Pull limits. Defaults: 1 GiB per blob (bundles are kilobytes to a few megabytes).
#[derive(Debug, Clone)]
pub struct PullOptions {
    /// Platform for an index.
    pub platform: Platform,
    /// Largest blob accepted.
    pub max_blob_bytes: u64,
}

impl Default for PullOptions {
    fn default() -> Self {
        PullOptions {
            platform: Platform::default(),
            max_blob_bytes: 1 << 30,
        }
    }
}

/// A pulled image whose blobs are verified files in `dir` (kept alive with the value).
#[derive(Debug)]
pub struct PulledImage {
    /// The image (manifest and config in memory, layers as files).
    pub image: Image,
    /// Warnings from manifest resolution.
    pub warnings: Vec<String>,
    /// The temp directory holding the layer files.
    pub dir: tempfile::TempDir,
}

/// Pulls manifest, config and every layer of `reference`, verifying each digest.
pub fn pull_image(
    client: &Client,
    reference: &Reference,
    opts: &PullOptions,
) -> Result<PulledImage, RegistryError> {
    let m = fetch_manifest(client, reference, &opts.platform)?;
    let dir = tempfile::Builder::new()
        .prefix("olmpack-pull-")
        .tempdir()
        .map_err(|e| RegistryError::io("cannot create temp dir in", std::env::temp_dir(), e))?;
    let config = fetch_small_blob(client, &reference.repository, &m.parsed.config)?;
    let mut layers = Vec::new();
    for (i, desc) in m.parsed.layers.iter().enumerate() {
        let path = dir.path().join(format!("layer-{i}"));
        fetch_blob_to_file(
            client,
            &reference.repository,
            desc,
            &path,
            opts.max_blob_bytes,
        )?;
        layers.push(Blob {
            descriptor: desc.clone(),
            source: BlobSource::File(path),
        });
    }
    let image = Image {
        manifest: Blob {
            descriptor: Descriptor {
                media_type: m.media_type.clone(),
                digest: m.digest.clone(),
                size: m.bytes.len() as u64,
            },
            source: BlobSource::Memory(m.bytes),
        },
        config: Blob {
            descriptor: m.parsed.config.clone(),
            source: BlobSource::Memory(config),
        },
        layers,
    };
    Ok(PulledImage {
        image,
        warnings: m.warnings,
        dir,
    })
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
    fn platform_parsing() {
        assert_eq!(
            "linux/arm64/v8".parse::<Platform>().unwrap().to_string(),
            "linux/arm64/v8"
        );
        assert!("linux".parse::<Platform>().is_err());
        assert_eq!(Platform::default().to_string(), "linux/amd64");
    }

    #[test]
    fn verifying_reader_refuses_altered_bytes() {
        let data = b"hello".to_vec();
        let d = Descriptor {
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

    #[test]
    fn manifests_parse_and_schema1_is_refused() {
        let m = br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"c","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":2},"layers":[]}"#;
        assert_eq!(parse_manifest(m).unwrap().config.size, 2);
        assert!(parse_manifest(br#"{"schemaVersion":1}"#).is_err());
        assert!(parse_manifest(br#"{"schemaVersion":2,"manifests":[]}"#).is_err());
    }
}
