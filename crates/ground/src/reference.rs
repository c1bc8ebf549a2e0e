//! Image references, `host[:port]/repo[:tag][@digest]`, parsed and validated with the
//! distribution grammar (`distribution/reference`), including Docker Hub's defaults:
//! no host means `docker.io`, a single-component repository gets `library/`, and the API lives
//! on `registry-1.docker.io`.

use std::fmt;

/// The registry the user means when a reference has no host.
pub const DOCKER_HUB: &str = "docker.io";
/// Where Docker Hub's distribution API actually answers.
pub const DOCKER_HUB_API: &str = "registry-1.docker.io";

/// A parsed image reference. `registry` is kept as the user wrote it (normalised for Docker Hub)
/// so the output names what the user typed; [`Reference::api_host`] gives the host to dial.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// Registry host with optional port, e.g. `quay.io`, `127.0.0.1:5000`, `docker.io`.
    pub registry: String,
    /// Repository path, lowercase, e.g. `library/busybox`, `org/bundle`.
    pub repository: String,
    /// Tag, if given.
    pub tag: Option<String>,
    /// `algo:hex` digest, if given.
    pub digest: Option<String>,
}

/// Why a string is not an image reference: shared by every layer that names images (rules,
/// catalogs, the registry client), so none of them needs the network client to say so.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid image reference {input:?}: {reason}")]
pub struct InvalidReference {
    /// What the user typed.
    pub input: String,
    /// Which rule it broke.
    pub reason: String,
}

fn invalid(input: &str, reason: impl Into<String>) -> InvalidReference {
    InvalidReference {
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*`: a path component of a repository name.
fn valid_component(c: &str) -> bool {
    let b = c.as_bytes();
    if b.is_empty() || !is_alnum(b[0]) || !is_alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if is_alnum(b[i]) {
            i += 1;
            continue;
        }
        // A separator run: ".", "_", "__" or any number of "-".
        let start = i;
        while i < b.len() && !is_alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[\w][\w.-]{0,127}`.
fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|&x| x.is_ascii_alphanumeric() || x == b'_' || x == b'.' || x == b'-')
}

/// Checks `sha256:<64 lowercase hex>` (or sha512 with 128): the only digests we can verify.
pub fn valid_digest(d: &str) -> bool {
    match d.split_once(':') {
        Some(("sha256", hex)) => {
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|x| x.is_ascii_digit() || (b'a'..=b'f').contains(&x))
        }
        Some(("sha512", hex)) => {
            hex.len() == 128
                && hex
                    .bytes()
                    .all(|x| x.is_ascii_digit() || (b'a'..=b'f').contains(&x))
        }
        _ => false,
    }
}

fn valid_host(h: &str) -> bool {
    // host[:port], host may be a DNS name, an IPv4 address or a bracketed IPv6 address.
    let (host, port) = if let Some(rest) = h.strip_prefix('[') {
        match rest.split_once(']') {
            Some((v6, tail)) => {
                if v6.parse::<std::net::Ipv6Addr>().is_err() {
                    return false;
                }
                (None, tail.strip_prefix(':'))
            }
            None => return false,
        }
    } else {
        match h.rsplit_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(h), None),
        }
    };
    if let Some(p) = port
        && (p.is_empty() || p.parse::<u16>().is_err())
    {
        return false;
    }
    match host {
        None => true,
        Some(host) => {
            !host.is_empty()
                && host.split('.').all(|label| {
                    !label.is_empty()
                        && label
                            .bytes()
                            .all(|x| x.is_ascii_alphanumeric() || x == b'-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                })
        }
    }
}

impl Reference {
    /// Parses and validates a reference, applying Docker Hub defaults. Uppercase repositories
    /// are refused (the registry would refuse them later with a less clear message).
    pub fn parse(input: &str) -> Result<Reference, InvalidReference> {
        if input.is_empty() {
            return Err(invalid(input, "empty reference"));
        }
        if input.len() > 4096 {
            return Err(invalid(input, "reference too long"));
        }
        let (name_tag, digest) = match input.split_once('@') {
            Some((n, d)) => {
                if !valid_digest(d) {
                    return Err(invalid(
                        input,
                        "digest must be sha256:<64 lowercase hex> or sha512:<128 hex>",
                    ));
                }
                (n, Some(d.to_string()))
            }
            None => (input, None),
        };
        // A tag is after the last ':' that follows the last '/'.
        let last_slash = name_tag.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match name_tag[last_slash..].rfind(':') {
            Some(i) => {
                let (n, t) = name_tag.split_at(last_slash + i);
                (n, Some(t[1..].to_string()))
            }
            None => (name_tag, None),
        };
        if let Some(t) = &tag
            && !valid_tag(t)
        {
            return Err(invalid(
                input,
                format!("invalid tag {t:?}: use letters, digits, '_', '.', '-', at most 128"),
            ));
        }
        let (registry, repository) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.')
                    || first.contains(':')
                    || first == "localhost"
                    || first.starts_with('[') =>
            {
                (first.to_string(), rest.to_string())
            }
            _ => (DOCKER_HUB.to_string(), name.to_string()),
        };
        let registry = match registry.as_str() {
            "index.docker.io" | "registry-1.docker.io" => DOCKER_HUB.to_string(),
            _ => registry,
        };
        if !valid_host(&registry) {
            return Err(invalid(
                input,
                format!("invalid registry host {registry:?}"),
            ));
        }
        if repository.is_empty() {
            return Err(invalid(input, "missing repository"));
        }
        if repository.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(invalid(input, "repository name must be lowercase"));
        }
        if let Some(bad) = repository.split('/').find(|c| !valid_component(c)) {
            return Err(invalid(
                input,
                format!(
                    "invalid repository component {bad:?}: use lowercase letters and digits separated by '.', '_', '__' or '-'"
                ),
            ));
        }
        if repository.len() > 255 {
            return Err(invalid(input, "repository name longer than 255 characters"));
        }
        let repository = if registry == DOCKER_HUB && !repository.contains('/') {
            format!("library/{repository}")
        } else {
            repository
        };
        Ok(Reference {
            registry,
            repository,
            tag,
            digest,
        })
    }

    /// The host (and port) to send API requests to: Docker Hub's API host differs from its name.
    pub fn api_host(&self) -> &str {
        if self.registry == DOCKER_HUB {
            DOCKER_HUB_API
        } else {
            &self.registry
        }
    }

    /// What goes after `/manifests/`: the digest when pinned, else the tag, else `latest`.
    pub fn manifest_reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The same repository with another tag and no digest (for pushing several tags).
    pub fn with_tag(&self, tag: &str) -> Reference {
        Reference {
            tag: Some(tag.to_string()),
            digest: None,
            ..self.clone()
        }
    }

    /// `registry/repository` without tag or digest.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// `registry/repository@digest`: the pinned form printed after a push.
    pub fn pinned(&self, digest: &str) -> String {
        format!("{}@{digest}", self.name())
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

// Shared name and version grammars. They live here, with the image reference grammar and with
// no network, because both the models (`catalog`) and the rule layer (`validate::names`) need
// them, and models must not import the rule layer.

/// RFC 1123 subdomain: lowercase alphanumerics, `-` and `.`, at most 253 characters; what
/// Kubernetes requires of most object names. Returns the reason when invalid.
pub fn dns1123_subdomain(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > 253 {
        return Err(format!(
            "must be no more than 253 characters (it has {})",
            name.len()
        ));
    }
    if name.split('.').all(is_label_body) {
        Ok(())
    } else {
        Err("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')".into())
    }
}

/// RFC 1123 label: like a subdomain without dots, at most 63 characters.
pub fn dns1123_label(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > 63 {
        return Err(format!(
            "must be no more than 63 characters (it has {})",
            name.len()
        ));
    }
    if is_label_body(name) {
        Ok(())
    } else {
        Err("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name')".into())
    }
}

fn is_label_body(part: &str) -> bool {
    let bytes = part.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Checks an image pullspec the way docker/distribution's `ParseNormalizedNamed` does
/// (`[host[:port]/]path[:tag][@algo:hex]`, lowercase path), with the same parser the registry
/// client uses for `-t` and `--image`.
pub fn image_pullspec(image: &str) -> Result<(), String> {
    if image.trim() != image {
        return Err("image reference has surrounding white space".into());
    }
    Reference::parse(image)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Parses a strict semantic version (no `v` prefix, no leading zeros), as blang's `Parse` does.
pub fn semver(text: &str) -> Result<semver::Version, String> {
    semver::Version::parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn docker_hub_defaults() {
        let r = Reference::parse("busybox").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("docker.io", "library/busybox", None)
        );
        assert_eq!(r.api_host(), "registry-1.docker.io");
        assert_eq!(r.manifest_reference(), "latest");
        let r = Reference::parse("org/app:v1").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("docker.io", "org/app")
        );
        let r = Reference::parse("index.docker.io/library/alpine:3").unwrap();
        assert_eq!(r.registry, "docker.io");
    }

    #[test]
    fn host_port_tag_digest() {
        let r = Reference::parse(&format!("127.0.0.1:5000/a/b/c:tag@{D}")).unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "a/b/c");
        assert_eq!(r.tag.as_deref(), Some("tag"));
        assert_eq!(r.manifest_reference(), D);
        assert_eq!(r.to_string(), format!("127.0.0.1:5000/a/b/c:tag@{D}"));
        let r = Reference::parse("localhost/x").unwrap();
        assert_eq!(r.registry, "localhost");
        let r = Reference::parse("localhost:5000/x").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.tag.as_deref()),
            ("localhost:5000", None)
        );
        let r = Reference::parse("[::1]:5000/x:1").unwrap();
        assert_eq!(r.registry, "[::1]:5000");
        assert_eq!(
            Reference::parse("quay.io/o/r").unwrap().pinned(D),
            format!("quay.io/o/r@{D}")
        );
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "",
            "Upper/Case:tag",
            "quay.io/Org/x",
            "a//b",
            "a/b:",
            "a/-b",
            "a/b..c",
            "a/b@sha256:abc",
            "a/b:t@md5:0000",
            "host:99999/x",
            "a/b:-tag",
            "quay.io/",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad} should be rejected");
        }
        let err = Reference::parse("quay.io/Org/x").unwrap_err().to_string();
        assert!(err.contains("lowercase"), "{err}");
    }

    #[test]
    fn separators() {
        assert!(valid_component("a__b"));
        assert!(valid_component("a---b"));
        assert!(valid_component("a.b_c"));
        assert!(!valid_component("a___b"));
        assert!(!valid_component("a._b"));
    }
}
