//! Manifests a client has read, kept by repository and digest, so a run reads each manifest
//! from the registry once: the plan of `catalog mirror` resolves a tag, the copy then reads
//! the same manifest by digest, the catalog is opened to render and copied. Every handle of a
//! pooled client ([`super::ClientOptions::shared`]) shares one cache.
//!
//! Only content addressed by a verified digest is kept (the bytes hash to the key), so a hit
//! is exactly what the registry would send; a tag is never answered from here (a tag moves).
//! The cache is bounded ([`MAX_CACHED_BYTES`]); past it, manifests are read again.

use std::collections::HashMap;
use std::sync::Mutex;

/// The most manifest bytes kept per client (a catalog's index with its images is a few KiB
/// each; tens of thousands fit).
pub const MAX_CACHED_BYTES: usize = 64 << 20;

/// A manifest's bytes and media type.
type Entry = (Vec<u8>, String);

/// Manifests by `(repository, digest)`, with their total size in bytes.
type Kept = (HashMap<(String, String), Entry>, usize);

/// Manifests by `(repository, digest)`.
#[derive(Debug, Default)]
pub struct ManifestCache {
    inner: Mutex<Kept>,
}

impl ManifestCache {
    /// The manifest `digest` of `repository` when it was read before: `(bytes, media type)`.
    pub fn get(&self, repository: &str, digest: &str) -> Option<Entry> {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .0
            .get(&(repository.to_string(), digest.to_string()))
            .cloned()
    }

    /// Keeps a manifest whose bytes hash to `digest` (the caller checked).
    pub fn put(&self, repository: &str, digest: &str, bytes: &[u8], media_type: &str) {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let key = (repository.to_string(), digest.to_string());
        if guard.0.contains_key(&key) || guard.1 + bytes.len() > MAX_CACHED_BYTES {
            return;
        }
        guard.1 += bytes.len();
        guard
            .0
            .insert(key, (bytes.to_vec(), media_type.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_by_repository_and_digest_within_the_bound() {
        let c = ManifestCache::default();
        c.put("a", "sha256:1", b"x", "m");
        assert_eq!(c.get("a", "sha256:1"), Some((b"x".to_vec(), "m".into())));
        assert_eq!(c.get("b", "sha256:1"), None);
        let big = vec![0u8; MAX_CACHED_BYTES];
        c.put("a", "sha256:2", &big, "m");
        assert_eq!(
            c.get("a", "sha256:2"),
            None,
            "past the bound nothing is kept"
        );
    }
}
