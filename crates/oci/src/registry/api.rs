//! The distribution API's URL paths: the one place the `/v2/` prefix is spelled, in both
//! directions (building a request's path, and reading one back to word an error).
//!
//! Nothing outside `registry/` builds a path or a request: callers use a
//! [`super::repository::Repository`] (regclient's `scheme/reg` and go-containerregistry's
//! `remote` keep the wire format behind their repository API the same way).

/// The API root, asked first by tools that probe a registry.
pub const ROOT: &str = "/v2/";

/// `…/manifests/<tag or digest>` of `repository`.
pub fn manifest(repository: &str, reference: &str) -> String {
    format!("{ROOT}{repository}/manifests/{reference}")
}

/// `…/blobs/<digest>` of `repository`.
pub fn blob(repository: &str, digest: &str) -> String {
    format!("{ROOT}{repository}/blobs/{digest}")
}

/// `…/blobs/uploads/` of `repository`: where an upload session (or a mount) starts.
pub fn uploads(repository: &str) -> String {
    format!("{ROOT}{repository}/blobs/uploads/")
}

/// `…/tags/list` of `repository` (the first page).
pub fn tags(repository: &str) -> String {
    format!("{ROOT}{repository}/tags/list")
}

/// `…/referrers/<digest>` of `repository` (OCI distribution 1.1).
pub fn referrers(repository: &str, digest: &str) -> String {
    format!("{ROOT}{repository}/referrers/{digest}")
}

/// What a request path names, read back for an error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint<'a> {
    /// A manifest: repository and tag or digest.
    Manifest(&'a str, &'a str),
    /// A blob: repository and digest.
    Blob(&'a str, &'a str),
}

/// The endpoint a URL path (no scheme, host or query) names, when it is a manifest or a blob.
pub fn endpoint(path: &str) -> Option<Endpoint<'_>> {
    let rest = path.strip_prefix(ROOT)?;
    if let Some((repo, reference)) = rest.rsplit_once("/manifests/") {
        return Some(Endpoint::Manifest(repo, reference));
    }
    rest.rsplit_once("/blobs/")
        .map(|(repo, digest)| Endpoint::Blob(repo, digest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_back_as_what_they_name() {
        let m = manifest("a/b", "v1");
        assert_eq!(endpoint(&m), Some(Endpoint::Manifest("a/b", "v1")));
        let b = blob("a/b", "sha256:00");
        assert_eq!(endpoint(&b), Some(Endpoint::Blob("a/b", "sha256:00")));
        assert_eq!(endpoint(&tags("a")), None);
        assert_eq!(endpoint("/elsewhere/a/manifests/v1"), None);
    }
}
