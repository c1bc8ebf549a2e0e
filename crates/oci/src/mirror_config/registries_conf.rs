//! containers-registries.conf(5), version 2, the part that says where images are read from:
//! `[[registry]]` with `prefix`, `location`, `insecure`, `blocked`, `mirror-by-digest-only`, and
//! `[[registry.mirror]]` with `location`, `insecure`, `pull-from-mirror`. The settings that do
//! not decide where a named image is read (`unqualified-search-registries`,
//! `short-name-mode`, `[aliases]`, `credential-helpers`) are accepted and have no effect; any
//! other key, and the version 1 tables (`[registries.search]`, ...), are refused by name.
//! Checks are containers/image's `postProcessRegistries`.

use super::{Mirror, MirrorUse, Rule, clean_location};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    registry: Vec<RawRegistry>,
    #[serde(default, rename = "unqualified-search-registries")]
    _search: Option<toml::Value>,
    #[serde(default, rename = "short-name-mode")]
    _short: Option<toml::Value>,
    #[serde(default, rename = "aliases")]
    _aliases: Option<toml::Value>,
    #[serde(default, rename = "credential-helpers")]
    _helpers: Option<toml::Value>,
    #[serde(default, rename = "additional-layer-store-auth-helper")]
    _layer_helper: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistry {
    #[serde(default)]
    prefix: String,
    #[serde(default)]
    location: String,
    #[serde(default)]
    insecure: bool,
    #[serde(default)]
    blocked: bool,
    #[serde(default, rename = "mirror-by-digest-only")]
    mirror_by_digest_only: bool,
    #[serde(default, rename = "pull-from-mirror")]
    pull_from_mirror: String,
    #[serde(default)]
    mirror: Vec<RawMirror>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMirror {
    #[serde(default)]
    location: String,
    #[serde(default)]
    insecure: bool,
    #[serde(default, rename = "pull-from-mirror")]
    pull_from_mirror: String,
}

/// Whether `text` is meant as TOML: its first meaningful line is a table header or a
/// `key = value` line (YAML would say `key: value`).
pub fn looks_like_toml(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| {
            l.starts_with('[') || l.split_once('=').is_some_and(|(k, _)| !k.contains(':'))
        })
}

/// The rules of a registries.conf.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Rule>, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        e.to_string()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    })?;
    let mut rules: Vec<Rule> = Vec::new();
    for r in file.registry {
        let location = clean_location(&r.location, "location")?;
        let prefix = if r.prefix.is_empty() {
            if location.is_empty() {
                return Err("invalid condition: both location and prefix are unset".to_string());
            }
            location.clone()
        } else {
            let p = clean_location(&r.prefix, "prefix")?;
            if !p.starts_with("*.") && location.is_empty() {
                return Err(format!(
                    "invalid condition: location is unset and prefix {p:?} is not in the format *.example.com"
                ));
            }
            p
        };
        if !r.pull_from_mirror.is_empty() {
            return Err(format!(
                "pull-from-mirror must not be set for a non-mirror registry {prefix:?}"
            ));
        }
        let mut mirrors = Vec::new();
        for m in r.mirror {
            let loc = clean_location(&m.location, "mirror location")?;
            if loc.is_empty() {
                return Err("invalid condition: mirror location is unset".to_string());
            }
            if r.mirror_by_digest_only && !m.pull_from_mirror.is_empty() {
                return Err(format!(
                    "cannot set mirror usage mirror-by-digest-only for the registry ({prefix:?}) and pull-from-mirror for per-mirror ({loc:?}) at the same time"
                ));
            }
            let used_for = match m.pull_from_mirror.as_str() {
                _ if r.mirror_by_digest_only => MirrorUse::DigestOnly,
                "" | "all" => MirrorUse::All,
                "digest-only" => MirrorUse::DigestOnly,
                "tag-only" => MirrorUse::TagOnly,
                other => {
                    return Err(format!(
                        "unsupported pull-from-mirror value {other:?} for mirror {loc:?}"
                    ));
                }
            };
            mirrors.push(Mirror {
                location: loc,
                insecure: m.insecure,
                used_for,
            });
        }
        if let Some(other) = rules.iter().find(|o| o.prefix == prefix) {
            return Err(format!(
                "prefix {prefix:?} is defined twice (location {:?} and {location:?})",
                other.location
            ));
        }
        rules.push(Rule {
            prefix,
            location,
            insecure: r.insecure,
            blocked: r.blocked,
            mirrors,
            file: path.to_path_buf(),
        });
    }
    Ok(rules)
}
