//! The bundle formats, named once. opm's `pkg/lib/bundle/generate.go` knows three values of the
//! `operators.operatorframework.io.bundle.mediatype.v1` annotation: `registry+v1` (the only one
//! OLM v0 installs and the only one olmpack writes), `plain` and `helm`. Every writer and check
//! spells the value through [`MediaType`], so no second spelling can drift.

use std::fmt;

/// A bundle format as the media type annotation names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaType {
    /// `registry+v1`: manifests/ with a ClusterServiceVersion, metadata/annotations.yaml.
    RegistryV1,
    /// `plain`: plain Kubernetes manifests (rukpak's format; OLM v0 cannot install it).
    Plain,
    /// `helm`: a Helm chart (OLM v0 cannot install it).
    Helm,
}

impl MediaType {
    /// Every format opm names, in its order.
    pub const ALL: [MediaType; 3] = [MediaType::RegistryV1, MediaType::Plain, MediaType::Helm];

    /// The annotation value, as opm spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            MediaType::RegistryV1 => "registry+v1",
            MediaType::Plain => "plain",
            MediaType::Helm => "helm",
        }
    }

    /// The format an annotation value names (exactly, as opm compares it); `None` for any other.
    pub fn parse(value: &str) -> Option<MediaType> {
        MediaType::ALL.into_iter().find(|m| m.as_str() == value)
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::MediaType;

    #[test]
    fn values_round_trip_and_compare_exactly() {
        for m in MediaType::ALL {
            assert_eq!(MediaType::parse(m.as_str()), Some(m));
        }
        assert_eq!(MediaType::parse("Registry+v1"), None);
        assert_eq!(MediaType::parse("plain+v0"), None);
        assert_eq!(MediaType::RegistryV1.to_string(), "registry+v1");
    }
}
