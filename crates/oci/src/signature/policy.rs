//! containers-policy.json(5) on read: before an image is read, the requirements the policy
//! scopes to it must all be met, or nothing further is read.
//!
//! Scopes (docker transport), most specific first, as containers/image looks them up: the
//! reference as written (`host/repo:tag` or `host/repo@digest`), the repository, each parent
//! namespace, the host, then `*.domain` wildcards from the most specific, then the
//! transport's `""` entry, then `default`. For `oci:` layouts and `oci-archive:` files: the
//! path resolved as containers/image resolves it (absolute, `.`/`..` and symbolic links
//! followed, so `dir/`, `a/../dir` and a link to `dir` are all `dir`), then each parent folder,
//! then `""` and `default`; `docker-archive:` has only `""` and `default`. Requirements:
//! `insecureAcceptAnything`, `reject`, `signedBy` (`keyType: GPGKeys`; `keyPath`, `keyPaths` or
//! `keyData`; `signedIdentity`) and `sigstoreSigned` (`keyPath`, `keyPaths`, `keyData` or
//! `keyDatas`, or `fulcio` or `pki`, with `rekorPublicKey*` where containers/image allows it;
//! `signedIdentity`: [`sigstore_trust`]). The file is checked whole when loaded ([`config`]);
//! X.509 key types and `signedBaseLayer` refuse the images they apply to, by name; nothing is
//! skipped.

pub mod config;
pub mod scopes;
pub mod sigstore_trust;

use super::cosign::Expected;
use super::identity::IdentityRule;
use super::lookaside::RegistriesD;
use super::simple::Keyring;
use super::store::Target;
use super::{SignatureError, cosign, keys};
use crate::location::{Location, Place};
use crate::transport::RegistryOptions;
use config::{IdentitySpec, Keys, Requirement};
use std::path::{Path, PathBuf};

/// A loaded policy file.
#[derive(Debug, Clone)]
pub struct Policy {
    path: String,
    file: config::PolicyFile,
    /// Where keyPath entries are relative to (the policy's folder).
    base: PathBuf,
}

/// Why the policy refused an image: names the image, the rule and the reason.
#[derive(Debug, Clone, thiserror::Error)]
#[error("policy {policy} refuses {image}: rule {scope} {rule}: {reason}")]
pub struct Refusal {
    /// The policy file.
    pub policy: String,
    /// The image.
    pub image: String,
    /// The scope whose requirements applied (`docker "quay.io/org"`, `default`).
    pub scope: String,
    /// The requirement type that failed.
    pub rule: String,
    /// Why.
    pub reason: String,
}

/// A policy check that could not be carried out, or a refusal.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The policy refused the image.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The policy or a key it names is invalid, or the signatures could not be read.
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

impl Policy {
    /// Where `--policy`/`OLMPACK_POLICY` point: a file, or `default` for
    /// `$HOME/.config/containers/policy.json` then `/etc/containers/policy.json`.
    pub fn locate(given: Option<&str>) -> Result<Option<PathBuf>, SignatureError> {
        let env = std::env::var("OLMPACK_POLICY")
            .ok()
            .filter(|v| !v.is_empty());
        let Some(v) = given.map(str::to_string).or(env) else {
            return Ok(None);
        };
        if v != "default" {
            return Ok(Some(PathBuf::from(v)));
        }
        if let Some(home) = std::env::var_os("HOME") {
            let user = Path::new(&home).join(".config/containers/policy.json");
            if user.is_file() {
                return Ok(Some(user));
            }
        }
        let system = PathBuf::from("/etc/containers/policy.json");
        if system.is_file() {
            return Ok(Some(system));
        }
        Err(SignatureError::Config {
            path: "default".into(),
            reason: "no policy.json in $HOME/.config/containers or /etc/containers".into(),
        })
    }

    /// Reads and checks a policy file whole, as containers/image does: any fault refuses it,
    /// naming the file, where in it and why.
    pub fn load(path: &Path) -> Result<Policy, SignatureError> {
        let shown = path.display().to_string();
        let bytes = crate::fsio::read(path)?;
        let file = config::parse(&bytes).map_err(|reason| SignatureError::Config {
            path: shown.clone(),
            reason: format!("invalid policy (containers-policy.json(5)): {reason}"),
        })?;
        Ok(Policy {
            path: shown,
            base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            file,
        })
    }

    /// The requirements for an image and the scope they came from.
    fn requirements_for(
        &self,
        location: &Location,
    ) -> Result<(String, &[Requirement]), SignatureError> {
        let (transport, scopes) =
            scopes::of(location).map_err(|reason| SignatureError::Config {
                path: location.as_str().to_string(),
                reason,
            })?;
        if let Some((_, table)) = self.file.transports.0.iter().find(|(t, _)| t == transport) {
            for s in scopes.iter().map(String::as_str).chain([""]) {
                if let Some((_, reqs)) = table.0.iter().find(|(k, _)| k == s) {
                    return Ok((format!("{transport} {s:?}"), &reqs.0));
                }
            }
        }
        Ok(("default".into(), &self.file.default.0))
    }

    /// Checks `location` against the policy before it is read: the manifest digest whose
    /// signatures were verified (`None` when no requirement needed signatures), which is the
    /// only one the caller may then read.
    pub fn check(
        &self,
        location: &Location,
        registry: &RegistryOptions,
        registries_d: &RegistriesD,
    ) -> Result<Option<String>, PolicyError> {
        let (scope, reqs) = self.requirements_for(location)?;
        let refuse = |rule: &str, reason: String| Refusal {
            policy: self.path.clone(),
            image: location.as_str().to_string(),
            scope: scope.clone(),
            rule: rule.to_string(),
            reason,
        };
        let mut target: Option<Target> = None;
        for req in reqs {
            let (typ, keys, spec) = match req {
                Requirement::Accept => continue,
                Requirement::Reject => {
                    return Err(refuse("reject", "the policy rejects this scope".into()).into());
                }
                Requirement::SignedBaseLayer => {
                    return Err(refuse(
                        "signedBaseLayer",
                        "signedBaseLayer is not supported (containers/image does not implement it either)".into(),
                    )
                    .into());
                }
                Requirement::SignedBy {
                    key_type,
                    keys,
                    identity,
                } => {
                    if key_type != "GPGKeys" {
                        return Err(refuse(
                            "signedBy",
                            format!("keyType {key_type:?} is not supported (only GPGKeys)"),
                        )
                        .into());
                    }
                    ("signedBy", Some(keys), identity)
                }
                Requirement::Sigstore { keys, identity } => {
                    ("sigstoreSigned", Some(keys), identity)
                }
                Requirement::SigstoreTrust(st) => ("sigstoreSigned", None, &st.identity),
            };
            let rule = bind(spec, location).map_err(|r| refuse(typ, r))?;
            if target.is_none() {
                target = Some(Target::resolve(location, registry)?);
            }
            let Some(t) = target.as_ref() else { continue };
            let expected = Expected {
                rule: &rule,
                accept_unnamed: false,
            };
            if typ == "sigstoreSigned" && t.reference().is_some() {
                let name = t.reference().map(|r| r.name()).unwrap_or_default();
                if !registries_d.settings_for(&name).use_sigstore_attachments {
                    return Err(refuse(typ, format!("registries.d does not set use-sigstore-attachments for {name}, so no sigstore signature is read")).into());
                }
            }
            let checked = match (req, keys) {
                (Requirement::SigstoreTrust(st), _) => {
                    let read = |k: &Keys| self.key_bytes(k);
                    let prepared =
                        sigstore_trust::Prepared::new(st, &read).map_err(|r| refuse(typ, r))?;
                    sigstore_trust::verify(t, &prepared, &expected)?
                }
                (Requirement::SignedBy { .. }, Some(keys)) => {
                    let ring = self.keyring(keys).map_err(|r| refuse(typ, r))?;
                    let opts = super::image_signing::VerifyOptions {
                        identity: location_identity(location),
                        registries_d: registries_d.clone(),
                        ..Default::default()
                    };
                    super::image_signing::check_simple(t, &ring, &rule, &opts)?
                }
                (_, Some(keys)) => {
                    let keys = self.cosign_keys(keys).map_err(|r| refuse(typ, r))?;
                    cosign::verify(t, &keys, &expected)?
                }
                (_, None) => continue,
            };
            if !checked.iter().any(|c| c.result.is_ok()) {
                let reason = if checked.is_empty() {
                    format!("no signature found for {}", t.digest)
                } else {
                    let mut text = checked
                        .iter()
                        .filter_map(|c| {
                            c.result
                                .as_ref()
                                .err()
                                .map(|r| format!("{}: {r}", c.source))
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                    if let Some(h) = mismatch_hint(&checked, location) {
                        text.push_str(&format!(" (hint: {h})"));
                    }
                    text
                };
                return Err(refuse(typ, reason).into());
            }
        }
        Ok(target.map(|t| t.digest))
    }

    fn key_path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// The key files or data of a requirement, each with the name errors give it.
    fn key_bytes(&self, keys: &Keys) -> Result<Vec<(String, Vec<u8>)>, String> {
        match keys {
            Keys::Paths(paths) => paths
                .iter()
                .map(|p| {
                    let path = self.key_path(p);
                    std::fs::read(&path)
                        .map(|b| (path.display().to_string(), b))
                        .map_err(|e| format!("cannot read {}: {e}", path.display()))
                })
                .collect(),
            Keys::Data(data) => Ok(data
                .iter()
                .map(|d| ("keyData".to_string(), d.clone()))
                .collect()),
        }
    }

    fn keyring(&self, keys: &Keys) -> Result<Keyring, String> {
        let mut ring = Keyring::default();
        for (name, bytes) in self.key_bytes(keys)? {
            ring.add(&bytes, &name).map_err(|e| e.to_string())?;
        }
        Ok(ring)
    }

    fn cosign_keys(&self, keys: &Keys) -> Result<Vec<keys::PublicKey>, String> {
        self.key_bytes(keys)?
            .iter()
            .map(|(name, bytes)| keys::parse_public_key(bytes, name).map_err(|e| e.to_string()))
            .collect()
    }
}

/// The identity rule of `spec` for the image at `location`. Rules relative to the image need
/// its registry reference; an `oci:` layout or an archive has none, so only `exactReference`
/// and `exactRepository` can accept its signatures (containers/image refuses the others the
/// same way).
fn bind(spec: &IdentitySpec, location: &Location) -> Result<IdentityRule, String> {
    let image = match location.place() {
        Place::Registry(r) => Some(super::identity::image_identity(r)),
        _ => None,
    };
    let need = |image: Option<String>| {
        image.ok_or_else(|| {
            format!(
                "{} has no registry reference, so signedIdentity {} cannot match it; use exactReference or exactRepository",
                location.as_str(),
                spec.name()
            )
        })
    };
    Ok(match spec {
        IdentitySpec::MatchExact => IdentityRule::MatchExact(need(image)?),
        IdentitySpec::MatchRepoDigestOrExact => IdentityRule::MatchRepoDigestOrExact(need(image)?),
        IdentitySpec::MatchRepository => IdentityRule::MatchRepository(need(image)?),
        IdentitySpec::ExactReference(r) => IdentityRule::ExactReference(r.clone()),
        IdentitySpec::ExactRepository(r) => IdentityRule::ExactRepository(r.clone()),
        IdentitySpec::RemapIdentity(prefix, signed_prefix) => IdentityRule::RemapIdentity {
            image: need(image)?,
            prefix: prefix.clone(),
            signed_prefix: signed_prefix.clone(),
        },
    })
}

/// The remapIdentity hint for a refusal caused only by signatures naming another repository.
fn mismatch_hint(checked: &[super::Checked], location: &Location) -> Option<String> {
    checked.iter().find_map(|c| match &c.result {
        Err(super::Rejection::IdentityMismatch { found, .. }) => {
            super::identity::mismatch_hint(location.as_str(), found)
        }
        _ => None,
    })
}

fn location_identity(location: &Location) -> Option<String> {
    match location.place() {
        Place::Registry(r) => Some(r.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
