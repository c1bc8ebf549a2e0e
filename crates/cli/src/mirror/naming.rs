//! Where each mirrored image goes, decided once here so a plan, a re-run and an archive pushed
//! later all agree: `REGISTRY/NAMESPACE/<original repository path>` (what oc-mirror v2 does),
//! with the path folded to fit `--max-components`, and a derived tag for images that were
//! referenced by digest only (a registry that garbage-collects untagged manifests would
//! otherwise drop them).

use crate::reference::Reference;

/// The prefix of the tag given to an image that is referenced by digest only.
pub const DERIVED_TAG_PREFIX: &str = "mirror-";
/// How many hex characters of the digest the derived tag keeps (128 bits).
pub const DERIVED_TAG_HEX: usize = 32;

/// Why a destination or a target name cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NamingError {
    /// `--to` is not `REGISTRY[/NAMESPACE]`.
    #[error(
        "invalid --to {given:?}: {reason} (expected REGISTRY/NAMESPACE, e.g. mirror.example.com:5000/olm)"
    )]
    Destination {
        /// As typed.
        given: String,
        /// Why.
        reason: String,
    },
    /// `--max-components` leaves no room for the image's own name.
    #[error(
        "--max-components {max} leaves no room below the namespace {namespace:?} ({used} components)"
    )]
    TooFewComponents {
        /// The limit.
        max: usize,
        /// The namespace.
        namespace: String,
        /// Its components.
        used: usize,
    },
}

/// A destination registry and namespace (`--to mirror.example.com:5000/olm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// Host and port.
    pub registry: String,
    /// Path below the host (may be empty), without slashes at either end.
    pub namespace: String,
}

impl Destination {
    /// Parses `REGISTRY[/NAMESPACE]`: the registry must be a host (with a `.` or a port, or
    /// `localhost`), so a typo is not silently taken as a Docker Hub user.
    pub fn parse(given: &str) -> Result<Destination, NamingError> {
        let err = |reason: &str| NamingError::Destination {
            given: given.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = given.trim_end_matches('/');
        if trimmed.contains('@') {
            return Err(err("a destination has no digest"));
        }
        let (registry, namespace) = trimmed.split_once('/').unwrap_or((trimmed, ""));
        if registry.is_empty()
            || !(registry.contains('.') || registry.contains(':') || registry == "localhost")
        {
            return Err(err("the first part must be a registry host"));
        }
        if namespace
            .rsplit('/')
            .next()
            .is_some_and(|l| l.contains(':'))
        {
            return Err(err("a destination has no tag"));
        }
        // Checked with the reference grammar (a dummy image name below it).
        let probe = if namespace.is_empty() {
            format!("{registry}/x")
        } else {
            format!("{registry}/{namespace}/x")
        };
        Reference::parse(&probe).map_err(|e| err(&e.reason))?;
        Ok(Destination {
            registry: registry.to_string(),
            namespace: namespace.to_string(),
        })
    }

    /// The target repository (without registry) for an original repository path.
    pub fn repository(
        &self,
        original: &str,
        max_components: Option<usize>,
    ) -> Result<String, NamingError> {
        let ns: Vec<&str> = self
            .namespace
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let mut path: Vec<String> = original.split('/').map(str::to_string).collect();
        if let Some(max) = max_components {
            if max <= ns.len() {
                return Err(NamingError::TooFewComponents {
                    max,
                    namespace: self.namespace.clone(),
                    used: ns.len(),
                });
            }
            let room = max - ns.len();
            while path.len() > room {
                // Fold the two leading components into one: `a/b/c` → `a-b/c`.
                let first = path.remove(0);
                if let Some(next) = path.first_mut() {
                    *next = format!("{first}-{next}");
                }
            }
        }
        let mut all: Vec<String> = ns.iter().map(|s| s.to_string()).collect();
        all.extend(path);
        Ok(all.join("/"))
    }

    /// The target of `source`, tagged with `tag`.
    pub fn target(
        &self,
        source: &Reference,
        tag: &str,
        max_components: Option<usize>,
    ) -> Result<Reference, NamingError> {
        Ok(Reference {
            registry: self.registry.clone(),
            repository: self.repository(&source.repository, max_components)?,
            tag: Some(tag.to_string()),
            digest: None,
        })
    }
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}", self.registry)
        } else {
            write!(f, "{}/{}", self.registry, self.namespace)
        }
    }
}

/// The tag an image referenced by digest only gets at the target: `mirror-` and the first 32
/// hex characters of its digest. Deterministic (the same image always gets the same tag),
/// distinct from cosign's `sha256-<hex>.sig` tags and the referrers fallback `sha256-<hex>`.
pub fn derived_tag(digest: &str) -> String {
    let hex = digest.split_once(':').map_or(digest, |(_, h)| h);
    let n = hex.len().min(DERIVED_TAG_HEX);
    format!("{DERIVED_TAG_PREFIX}{}", &hex[..n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_the_original_path_below_the_namespace() {
        let d = Destination::parse("mirror.example.com:5000/olm/").unwrap();
        let s = Reference::parse("quay.io/org/team/app:v1").unwrap();
        assert_eq!(
            d.target(&s, "v1", None).unwrap().to_string(),
            "mirror.example.com:5000/olm/org/team/app:v1"
        );
        assert_eq!(
            d.repository("org/team/app", Some(3)).unwrap(),
            "olm/org-team/app"
        );
        assert_eq!(
            d.repository("org/team/app", Some(2)).unwrap(),
            "olm/org-team-app"
        );
        assert!(d.repository("a", Some(1)).is_err());
        let bare = Destination::parse("localhost:5000").unwrap();
        assert_eq!(bare.repository("a/b", None).unwrap(), "a/b");
    }

    #[test]
    fn destinations_must_name_a_host() {
        assert!(Destination::parse("olm/ns").is_err());
        assert!(Destination::parse("reg.io/ns:v1").is_err());
        assert!(Destination::parse("reg.io/ns@sha256:00").is_err());
        assert!(Destination::parse("reg.io/NS").is_err());
    }

    #[test]
    fn derived_tags_are_short_and_stable() {
        let d = format!("sha256:{}", "ab".repeat(32));
        assert_eq!(derived_tag(&d), format!("mirror-{}", "ab".repeat(16)));
    }
}
