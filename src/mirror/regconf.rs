//! `--registries-conf FILE`: where to read source images from when their registry is itself
//! mirrored, in a small subset of containers-registries.conf(5) (v2 format):
//!
//! ```toml
//! [[registry]]
//! prefix = "registry.redhat.io/rhel9"      # optional, defaults to location
//! location = "registry.redhat.io/rhel9"
//!
//! [[registry.mirror]]
//! location = "mirror.internal:5000/rh/rhel9"
//! ```
//!
//! A source reference whose name starts with a `prefix` (at a `/` boundary; the longest one
//! wins) is read from each mirror in turn, then from `location`, with the prefix replaced; the
//! first that answers is used. Only `prefix`, `location` and `[[registry.mirror]] location`
//! are read; any other key (`insecure`, `blocked`, `pull-from-mirror`, wildcards,
//! `unqualified-search-registries`) is refused by name, so a file that means more than olmpack
//! does is never half-applied. The name recorded in the results stays the source's own.

use crate::reference::Reference;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Why the file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegConfError {
    /// Unreadable.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not the subset understood.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when the parser knows it.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    registry: Vec<RawRegistry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistry {
    #[serde(default)]
    prefix: Option<String>,
    location: String,
    #[serde(default)]
    mirror: Vec<RawMirror>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMirror {
    location: String,
}

/// One `[[registry]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// What a source name starts with.
    pub prefix: String,
    /// Mirrors, tried in order.
    pub mirrors: Vec<String>,
    /// The registry itself, tried last.
    pub location: String,
}

/// The rules of a file; `Default` rewrites nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rewrites {
    /// In file order.
    pub rules: Vec<Rule>,
}

impl Rewrites {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Rewrites, RegConfError> {
        let text = std::fs::read_to_string(path).map_err(|source| RegConfError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Rewrites::parse(&text).map_err(|message| RegConfError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses the text of a file.
    pub fn parse(text: &str) -> Result<Rewrites, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            e.to_string()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })?;
        let mut rules = Vec::new();
        for r in file.registry {
            let prefix = r.prefix.unwrap_or_else(|| r.location.clone());
            if prefix.contains('*') {
                return Err(format!(
                    "prefix {prefix:?}: wildcard prefixes are not supported"
                ));
            }
            for name in [&prefix, &r.location]
                .into_iter()
                .chain(r.mirror.iter().map(|m| &m.location))
            {
                Reference::parse(&format!("{}/x", name.trim_end_matches('/')))
                    .map_err(|e| format!("{name:?} is not a registry/path: {}", e.reason))?;
            }
            rules.push(Rule {
                prefix: prefix.trim_end_matches('/').to_string(),
                mirrors: r
                    .mirror
                    .into_iter()
                    .map(|m| m.location.trim_end_matches('/').to_string())
                    .collect(),
                location: r.location.trim_end_matches('/').to_string(),
            });
        }
        Ok(Rewrites { rules })
    }

    /// Where to read `reference` from, in order: the mirrors and the location of the longest
    /// matching prefix, or the reference itself.
    pub fn candidates(&self, reference: &Reference) -> Vec<Reference> {
        let name = reference.name();
        let rule = self
            .rules
            .iter()
            .filter(|r| name == r.prefix || name.starts_with(&format!("{}/", r.prefix)))
            .max_by_key(|r| r.prefix.len());
        let Some(rule) = rule else {
            return vec![reference.clone()];
        };
        let rest = &name[rule.prefix.len()..];
        let mut out = Vec::new();
        for base in rule.mirrors.iter().chain(std::iter::once(&rule.location)) {
            let mut text = format!("{base}{rest}");
            if let Some(t) = &reference.tag {
                text = format!("{text}:{t}");
            }
            if let Some(d) = &reference.digest {
                text = format!("{text}@{d}");
            }
            if let Ok(r) = Reference::parse(&text)
                && !out.contains(&r)
            {
                out.push(r);
            }
        }
        if out.is_empty() {
            out.push(reference.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_rewrites_to_mirrors_then_the_location() {
        let r = Rewrites::parse(
            r#"
[[registry]]
location = "quay.io/org"
[[registry.mirror]]
location = "m.local:5000/q/org"

[[registry]]
prefix = "quay.io/org/special"
location = "other.io/special"
"#,
        )
        .unwrap();
        let src = Reference::parse("quay.io/org/app:v1").unwrap();
        let c: Vec<String> = r.candidates(&src).iter().map(ToString::to_string).collect();
        assert_eq!(c, ["m.local:5000/q/org/app:v1", "quay.io/org/app:v1"]);
        let special = Reference::parse("quay.io/org/special/x:v1").unwrap();
        let c: Vec<String> = r
            .candidates(&special)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(c, ["other.io/special/x:v1"]);
        let other = Reference::parse("quay.io/organic/x:v1").unwrap();
        assert_eq!(r.candidates(&other), vec![other.clone()]);
    }

    #[test]
    fn keys_outside_the_subset_are_refused_by_name() {
        let e =
            Rewrites::parse("[[registry]]\nlocation = \"a.io\"\ninsecure = true\n").unwrap_err();
        assert!(e.contains("insecure"), "{e}");
        assert!(Rewrites::parse("unqualified-search-registries = [\"a.io\"]\n").is_err());
        assert!(
            Rewrites::parse("[[registry]]\nprefix = \"*.a.io\"\nlocation = \"b.io\"\n").is_err()
        );
    }
}
