//! Mirror configuration: where an image named by its public reference can really be read.
//! Three file forms say it, and all three become the same rules here: OpenShift's
//! `ImageDigestMirrorSet` and `ImageTagMirrorSet` (and the older `ImageContentSourcePolicy`)
//! in [`openshift`], and containers-registries.conf(5) (v2) in [`registries_conf`].
//!
//! The semantics are containers/image's `pkg/sysregistriesv2` (what CRI-O and skopeo do with
//! the `registries.conf` the Machine Config Operator writes from an IDMS or ITMS):
//! - the rule whose prefix matches the reference (at a `/`, `:` or `@` boundary, or a
//!   `*.example.com` subdomain prefix) is chosen, the longest prefix winning (`FindRegistry`);
//! - its mirrors are tried in order, skipping those that may not serve this kind of reference
//!   (`mirror-by-digest-only`, `pull-from-mirror = "digest-only"` / `"tag-only"`; an IDMS mirror
//!   is digest-only, an ITMS mirror tag-only), each with the matched prefix replaced by its
//!   location (`PullSourcesFromReference`, `rewriteReference`);
//! - then the source itself, unless the rule is `blocked` (`mirrorSourcePolicy:
//!   NeverContactSource` in an IDMS or ITMS, which the Machine Config Operator writes as
//!   `blocked = true`).
//!
//! Several files (`--mirror-config` given more than once) add up: rules for the same prefix are
//! merged as the Machine Config Operator merges an IDMS and an ITMS for one source (mirrors in
//! order, without repeats; the source blocked when either says so).

pub mod openshift;
pub mod registries_conf;
pub mod resolve;

use crate::reference::Reference;
use std::path::{Path, PathBuf};

/// Which references a mirror may serve (`pull-from-mirror`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorUse {
    /// Tags and digests (`all`, or unset).
    All,
    /// Only references by digest (an IDMS or ICSP mirror, `digest-only`).
    DigestOnly,
    /// Only references by tag (an ITMS mirror, `tag-only`).
    TagOnly,
}

/// One mirror of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirror {
    /// Where the prefix is replaced to (`host[:port][/path]`).
    pub location: String,
    /// Plain HTTP or unverified TLS allowed (`insecure = true`).
    pub insecure: bool,
    /// Which references it may serve.
    pub used_for: MirrorUse,
}

/// One rule: a source prefix and where to read it from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// What a reference starts with (`registry[/namespace[/repository]]` or `*.domain`).
    pub prefix: String,
    /// The source's own location (the prefix replaced by it; empty for a wildcard prefix,
    /// which leaves the reference as it is).
    pub location: String,
    /// The source's `insecure`.
    pub insecure: bool,
    /// The source may not be contacted (`blocked`, `NeverContactSource`).
    pub blocked: bool,
    /// Mirrors, in order.
    pub mirrors: Vec<Mirror>,
    /// The file that said it, for messages.
    pub file: PathBuf,
}

/// One place to try: a rewritten reference and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullSource {
    /// The reference at that place (the same tag or digest).
    pub reference: Reference,
    /// Plain HTTP or unverified TLS allowed for it.
    pub insecure: bool,
    /// Whether it is a mirror (not the source).
    pub mirror: bool,
}

/// Why a mirror configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MirrorConfigError {
    /// The file cannot be read.
    #[error(transparent)]
    Read(#[from] crate::fsio::FsError),
    /// The file is not one of the forms understood, or says something wrong.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong (with the line when known).
        message: String,
    },
    /// A rewritten reference is not a reference.
    #[error("{file}: rewriting {reference} with prefix {prefix:?} gives {rewritten:?}: {reason}")]
    Rewrite {
        /// The file of the rule.
        file: String,
        /// The reference.
        reference: String,
        /// The rule's prefix.
        prefix: String,
        /// What came out.
        rewritten: String,
        /// Why it is not a reference.
        reason: String,
    },
}

/// Every rule of the files read, merged by prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirrorConfig {
    /// The rules, in the order first seen.
    pub rules: Vec<Rule>,
}

impl MirrorConfig {
    /// Reads each file (an IDMS, ITMS or ICSP YAML file of one or more documents, a
    /// `kind: List` of them, or a registries.conf TOML file) and merges their rules.
    pub fn load(paths: &[PathBuf]) -> Result<MirrorConfig, MirrorConfigError> {
        let mut config = MirrorConfig::default();
        for path in paths {
            let text = crate::fsio::read_to_string(path)?;
            for rule in parse_file(path, &text)? {
                config.add(rule, path)?;
            }
        }
        Ok(config)
    }

    /// Adds `rule`, merged with a rule of the same prefix (see the module documentation).
    pub fn add(&mut self, rule: Rule, path: &Path) -> Result<(), MirrorConfigError> {
        let Some(same) = self.rules.iter_mut().find(|r| r.prefix == rule.prefix) else {
            self.rules.push(rule);
            return Ok(());
        };
        if same.location != rule.location {
            return Err(MirrorConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "prefix {:?} is given location {:?} here and {:?} in {}",
                    rule.prefix,
                    rule.location,
                    same.location,
                    same.file.display()
                ),
            });
        }
        same.blocked |= rule.blocked;
        same.insecure |= rule.insecure;
        for m in rule.mirrors {
            match same.mirrors.iter_mut().find(|x| x.location == m.location) {
                // The same mirror for digests (IDMS) and for tags (ITMS) serves both.
                Some(x) if x.used_for != m.used_for => {
                    x.used_for = MirrorUse::All;
                    x.insecure |= m.insecure;
                }
                Some(_) => {}
                None => same.mirrors.push(m),
            }
        }
        Ok(())
    }

    /// The rule for `reference`: the longest matching prefix, the first one written on a tie
    /// (`FindRegistry` keeps a later rule only when its prefix is strictly longer).
    pub fn rule_for(&self, reference: &Reference) -> Option<&Rule> {
        let full = reference.to_string();
        self.rules
            .iter()
            .filter(|r| matching_prefix(&full, &r.prefix).is_some())
            .rev()
            .max_by_key(|r| r.prefix.len())
    }

    /// Whether `reference` names a place the configuration marks `insecure` (a mirror, or a
    /// source location, with `insecure = true`) though no rule's prefix matches it: a
    /// reference an earlier step pinned to the mirror that served it (the mirror plan) is
    /// read with the same TLS setting the configuration gave that mirror.
    pub fn insecure_place(&self, reference: &Reference) -> bool {
        let full = reference.to_string();
        let under = |location: &str| {
            !location.is_empty()
                && !location.starts_with('*')
                && matching_prefix(&full, location).is_some()
        };
        self.rules.iter().any(|r| {
            (r.insecure && under(&r.location))
                || r.mirrors.iter().any(|m| m.insecure && under(&m.location))
        })
    }

    /// Where to read `reference` from, in order (`PullSourcesFromReference`): the mirrors that
    /// may serve it, then the source unless it is blocked. A reference no rule matches is read
    /// from where it says.
    pub fn pull_sources(
        &self,
        reference: &Reference,
    ) -> Result<Vec<PullSource>, MirrorConfigError> {
        let Some(rule) = self.rule_for(reference) else {
            return Ok(vec![PullSource {
                reference: reference.clone(),
                insecure: false,
                mirror: false,
            }]);
        };
        let by_digest = reference.digest.is_some();
        let mut out = Vec::new();
        for m in &rule.mirrors {
            let allowed = match m.used_for {
                MirrorUse::All => true,
                MirrorUse::DigestOnly => by_digest,
                MirrorUse::TagOnly => !by_digest,
            };
            if allowed {
                out.push(PullSource {
                    reference: rewrite(reference, rule, &m.location)?,
                    insecure: m.insecure,
                    mirror: true,
                });
            }
        }
        if !rule.blocked {
            out.push(PullSource {
                reference: rewrite(reference, rule, &rule.location)?,
                insecure: rule.insecure,
                mirror: false,
            });
        }
        Ok(out)
    }
}

/// What trying one place gave ([`MirrorConfig::first_served`]).
#[derive(Debug)]
pub enum Attempt<T, E> {
    /// The place has it: stop here.
    Served(T),
    /// The place does not have it, or cannot be reached or read (absent, denied, down): go on
    /// to the next place, as containers/image passes over a mirror; the text says why.
    Passed(String),
    /// The place answered wrongly (content that is not what it claims): stop, try no other
    /// place (a place that lies is not a place that lacks the image).
    Refused(E),
}

/// Why no place served a reference ([`MirrorConfig::first_served`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotServed<E: std::error::Error + 'static> {
    /// No place had it; each place tried and why, in order.
    #[error("{reference}: no place served it ({})", describe_attempts(.attempts))]
    Passed {
        /// The reference as written.
        reference: String,
        /// `(place, why)` for each place tried.
        attempts: Vec<(String, String)>,
    },
    /// A place answered wrongly.
    #[error("{place} (for {reference}): {error}")]
    Refused {
        /// The reference as written.
        reference: String,
        /// The place that answered.
        place: String,
        /// What was wrong.
        #[source]
        error: E,
    },
    /// The configuration cannot rewrite it.
    #[error(transparent)]
    Config(#[from] MirrorConfigError),
}

/// `place: why; ...`, or why nothing could be tried.
pub fn describe_attempts(attempts: &[(String, String)]) -> String {
    if attempts.is_empty() {
        return "no place may be contacted for it: its source is blocked and no mirror serves this kind of reference".to_string();
    }
    attempts
        .iter()
        .map(|(p, w)| format!("{p}: {w}"))
        .collect::<Vec<_>>()
        .join("; ")
}

impl MirrorConfig {
    /// The one loop every reader of a registry image goes through when a mirror
    /// configuration is given (the transport's source opener, the mirror plan, `bundle pin`):
    /// each place of [`MirrorConfig::pull_sources`] is handed to `attempt` in order, and the
    /// first that serves wins (containers/image's `newImageSource` over
    /// `PullSourcesFromReference`). Returns what it served and the place.
    pub fn first_served<T, E: std::error::Error + 'static>(
        &self,
        reference: &Reference,
        mut attempt: impl FnMut(&PullSource) -> Attempt<T, E>,
    ) -> Result<(T, PullSource), NotServed<E>> {
        let mut attempts = Vec::new();
        for source in self.pull_sources(reference)? {
            match attempt(&source) {
                Attempt::Served(t) => return Ok((t, source)),
                Attempt::Passed(why) => attempts.push((source.reference.to_string(), why)),
                Attempt::Refused(error) => {
                    return Err(NotServed::Refused {
                        reference: reference.to_string(),
                        place: source.reference.to_string(),
                        error,
                    });
                }
            }
        }
        Err(NotServed::Passed {
            reference: reference.to_string(),
            attempts,
        })
    }
}

/// The length of `prefix` when it matches `full` (`refMatchingPrefix`, with
/// `refMatchingSubdomainPrefix` for `*.domain`), else `None`.
pub fn matching_prefix(full: &str, prefix: &str) -> Option<usize> {
    if let Some(domain) = prefix.strip_prefix('*') {
        let index = full.find(domain)?;
        if full[..index].contains('/') {
            return None;
        }
        let end = index + domain.len();
        return match full.as_bytes().get(end) {
            None | Some(b':' | b'/' | b'@') => Some(end),
            _ => None,
        };
    }
    if !full.starts_with(prefix) {
        return None;
    }
    match full.as_bytes().get(prefix.len()) {
        None | Some(b':' | b'/' | b'@') => Some(prefix.len()),
        _ => None,
    }
}

/// `reference` with the rule's matched prefix replaced by `location` (`rewriteReference`); an
/// empty location (a wildcard rule's source) leaves it as it is.
fn rewrite(
    reference: &Reference,
    rule: &Rule,
    location: &str,
) -> Result<Reference, MirrorConfigError> {
    if location.is_empty() {
        return Ok(reference.clone());
    }
    let full = reference.to_string();
    let len = matching_prefix(&full, &rule.prefix).unwrap_or(0);
    let rewritten = format!("{location}{}", &full[len..]);
    Reference::parse(&rewritten).map_err(|e| MirrorConfigError::Rewrite {
        file: rule.file.display().to_string(),
        reference: full.clone(),
        prefix: rule.prefix.clone(),
        rewritten: rewritten.clone(),
        reason: e.reason,
    })
}

/// The rules of one file: TOML when it parses as a registries.conf, else YAML (an IDMS, ITMS,
/// ICSP or a list of them).
fn parse_file(path: &Path, text: &str) -> Result<Vec<Rule>, MirrorConfigError> {
    let invalid = |message: String| MirrorConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    if registries_conf::looks_like_toml(text) {
        registries_conf::parse(text, path).map_err(invalid)
    } else {
        openshift::parse(text, path).map_err(invalid)
    }
}

/// Checks a location or prefix as containers/image's `parseLocation` does (no URI scheme, no
/// trailing slash kept), and that it can start a reference.
pub(crate) fn clean_location(input: &str, what: &str) -> Result<String, String> {
    let trimmed = input.trim_end_matches('/');
    if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
        return Err(format!(
            "invalid {what} {input:?}: URI schemes are not supported"
        ));
    }
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    let probe = trimmed.strip_prefix("*.").unwrap_or(trimmed);
    // A location names a registry host first: check it parses as one with a repository under it.
    let named = if probe.contains('/')
        || probe.contains('.')
        || probe.contains(':')
        || probe == "localhost"
    {
        format!("{probe}/x")
    } else {
        return Err(format!(
            "invalid {what} {input:?}: it must start with a registry host (with a '.' or a port)"
        ));
    };
    Reference::parse(&named).map_err(|e| format!("invalid {what} {input:?}: {}", e.reason))?;
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests;
