//! containers-policy.json(5) on read: before an image is read, the requirements the policy
//! scopes to it must all be met, or nothing further is read.
//!
//! Scopes (docker transport), most specific first, as containers/image looks them up: the
//! reference as written (`host/repo:tag` or `host/repo@digest`), the repository, each parent
//! namespace, the host, then `*.domain` wildcards from the most specific, then the
//! transport's `""` entry, then `default`. For `oci:` layouts: the layout path with `:tag`, the
//! path, each parent folder, then `""` and `default`. Requirements: `insecureAcceptAnything`,
//! `reject`, `signedBy` (`keyType: GPGKeys`; `keyPath`, `keyPaths` or `keyData`;
//! `signedIdentity`) and `sigstoreSigned` (`keyPath` or `keyData`; `signedIdentity`). Other
//! requirement types and identity rules are refused by name, never skipped.

use super::lookaside::RegistriesD;
use super::simple::{IdentityRule, Keyring};
use super::store::Target;
use super::{SignatureError, cosign, keys};
use crate::location::{LocalImage, Location, Place};
use crate::transport::RegistryOptions;
use base64::Engine as _;
use std::path::{Path, PathBuf};

/// A loaded policy file.
#[derive(Debug, Clone)]
pub struct Policy {
    path: String,
    json: serde_json::Value,
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

    /// Reads and checks the shape of a policy file.
    pub fn load(path: &Path) -> Result<Policy, SignatureError> {
        let shown = path.display().to_string();
        let bytes = crate::fsio::read(path)?;
        let json: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| SignatureError::Config {
                path: shown.clone(),
                reason: format!("not valid JSON: {e}"),
            })?;
        if !json["default"].is_array() {
            return Err(SignatureError::Config {
                path: shown,
                reason: "\"default\" must be a list of requirements (containers-policy.json(5))"
                    .into(),
            });
        }
        Ok(Policy {
            path: shown,
            base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            json,
        })
    }

    /// The requirements for an image and the scope they came from.
    fn requirements_for(&self, location: &Location) -> (String, Vec<serde_json::Value>) {
        let (transport, scopes) = scopes_of(location);
        let table = &self.json["transports"][transport];
        for s in &scopes {
            if let Some(reqs) = table.get(s).and_then(|v| v.as_array()) {
                return (format!("{transport} {s:?}"), reqs.clone());
            }
        }
        if let Some(reqs) = table.get("").and_then(|v| v.as_array()) {
            return (format!("{transport} \"\""), reqs.clone());
        }
        (
            "default".into(),
            self.json["default"].as_array().cloned().unwrap_or_default(),
        )
    }

    /// Checks `location` against the policy before it is read.
    pub fn check(
        &self,
        location: &Location,
        registry: &RegistryOptions,
        registries_d: &RegistriesD,
    ) -> Result<(), PolicyError> {
        let (scope, reqs) = self.requirements_for(location);
        let refuse = |rule: &str, reason: String| Refusal {
            policy: self.path.clone(),
            image: location.as_str().to_string(),
            scope: scope.clone(),
            rule: rule.to_string(),
            reason,
        };
        if reqs.is_empty() {
            return Err(refuse(
                "(none)",
                "an empty requirement list rejects everything".into(),
            )
            .into());
        }
        let mut target: Option<Target> = None;
        for req in &reqs {
            let typ = req["type"].as_str().unwrap_or_default();
            match typ {
                "insecureAcceptAnything" => {}
                "reject" => return Err(refuse(typ, "the policy rejects this scope".into()).into()),
                "signedBy" | "sigstoreSigned" => {
                    if target.is_none() {
                        target = Some(Target::resolve(location, registry)?);
                    }
                    let Some(t) = target.as_ref() else { continue };
                    let rule = self
                        .identity_rule(req, location)
                        .map_err(|r| refuse(typ, r))?;
                    let checked = if typ == "signedBy" {
                        if req["keyType"].as_str().unwrap_or("GPGKeys") != "GPGKeys" {
                            return Err(refuse(
                                typ,
                                format!(
                                    "keyType {:?} is not supported (only GPGKeys)",
                                    req["keyType"]
                                ),
                            )
                            .into());
                        }
                        let ring = self.keyring(req).map_err(|r| refuse(typ, r))?;
                        let opts = crate::action::sign::VerifyOptions {
                            identity: location_identity(location),
                            registries_d: registries_d.clone(),
                            ..Default::default()
                        };
                        crate::action::sign::check_simple(t, &ring, &rule, &opts)?
                    } else {
                        let key = self.cosign_key(req).map_err(|r| refuse(typ, r))?;
                        if t.reference().is_some() {
                            let name = t.reference().map(|r| r.name()).unwrap_or_default();
                            if !registries_d.settings_for(&name).use_sigstore_attachments {
                                return Err(refuse(typ, format!("registries.d does not set use-sigstore-attachments for {name}, so no sigstore signature is read")).into());
                            }
                        }
                        cosign::verify(t, &[key], None)?
                            .into_iter()
                            .map(|mut c| {
                                if let Ok(p) = &c.result {
                                    let claimed = p["critical"]["identity"]["docker-reference"]
                                        .as_str()
                                        .unwrap_or_default();
                                    if !claimed.is_empty() && !rule.accepts(claimed) {
                                        c.result = Err(super::Rejection::IdentityMismatch {
                                            expected: rule.describe(),
                                            found: claimed.to_string(),
                                        });
                                    }
                                }
                                c
                            })
                            .collect()
                    };
                    if !checked.iter().any(|c| c.result.is_ok()) {
                        let reason = if checked.is_empty() {
                            format!("no signature found for {}", t.digest)
                        } else {
                            checked
                                .iter()
                                .map(|c| match &c.result {
                                    Err(r) => format!("{}: {r}", c.source),
                                    Ok(_) => String::new(),
                                })
                                .collect::<Vec<_>>()
                                .join("; ")
                        };
                        return Err(refuse(typ, reason).into());
                    }
                }
                other => {
                    return Err(refuse(
                        other,
                        format!("requirement type {other:?} is not supported"),
                    )
                    .into());
                }
            }
        }
        Ok(())
    }

    fn key_path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    fn keyring(&self, req: &serde_json::Value) -> Result<Keyring, String> {
        let mut ring = Keyring::default();
        let mut any = false;
        let mut paths: Vec<String> = Vec::new();
        if let Some(p) = req["keyPath"].as_str() {
            paths.push(p.into());
        }
        for p in req["keyPaths"].as_array().into_iter().flatten() {
            if let Some(p) = p.as_str() {
                paths.push(p.into());
            }
        }
        for p in paths {
            let path = self.key_path(&p);
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("cannot read keyPath {}: {e}", path.display()))?;
            ring.add(&bytes, &path.display().to_string())
                .map_err(|e| e.to_string())?;
            any = true;
        }
        if let Some(d) = req["keyData"].as_str() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(d)
                .map_err(|e| format!("keyData is not base64: {e}"))?;
            ring.add(&bytes, "keyData").map_err(|e| e.to_string())?;
            any = true;
        }
        if any {
            Ok(ring)
        } else {
            Err("signedBy needs keyPath, keyPaths or keyData".into())
        }
    }

    fn cosign_key(&self, req: &serde_json::Value) -> Result<keys::PublicKey, String> {
        if let Some(p) = req["keyPath"].as_str() {
            let path = self.key_path(p);
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("cannot read keyPath {}: {e}", path.display()))?;
            return keys::parse_public_key(&bytes, &path.display().to_string())
                .map_err(|e| e.to_string());
        }
        if let Some(d) = req["keyData"].as_str() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(d)
                .map_err(|e| format!("keyData is not base64: {e}"))?;
            return keys::parse_public_key(&bytes, "keyData").map_err(|e| e.to_string());
        }
        Err("sigstoreSigned needs keyPath or keyData (Fulcio and keyless are not supported)".into())
    }

    fn identity_rule(
        &self,
        req: &serde_json::Value,
        location: &Location,
    ) -> Result<IdentityRule, String> {
        let image = match location.place() {
            Place::Registry(r) => r.to_string(),
            _ => return Ok(IdentityRule::Any),
        };
        let si = &req["signedIdentity"];
        let typ = si["type"].as_str().unwrap_or("matchRepoDigestOrExact");
        Ok(match typ {
            "matchRepoDigestOrExact" => IdentityRule::MatchRepoDigestOrExact(image),
            "matchRepository" => IdentityRule::MatchRepository(image),
            "matchExact" => IdentityRule::MatchExact(image),
            "exactReference" => IdentityRule::Exact(
                si["dockerReference"]
                    .as_str()
                    .ok_or("exactReference needs dockerReference")?
                    .to_string(),
                false,
            ),
            "exactRepository" => IdentityRule::Exact(
                si["dockerRepository"]
                    .as_str()
                    .ok_or("exactRepository needs dockerRepository")?
                    .to_string(),
                true,
            ),
            other => return Err(format!("signedIdentity type {other:?} is not supported")),
        })
    }
}

fn location_identity(location: &Location) -> Option<String> {
    match location.place() {
        Place::Registry(r) => Some(r.to_string()),
        _ => None,
    }
}

/// The transport name and the scopes of an image, most specific first.
fn scopes_of(location: &Location) -> (&'static str, Vec<String>) {
    match location.place() {
        Place::Registry(r) => {
            let mut scopes = Vec::new();
            if let Some(d) = &r.digest {
                scopes.push(format!("{}@{d}", r.name()));
            } else {
                scopes.push(format!(
                    "{}:{}",
                    r.name(),
                    r.tag.as_deref().unwrap_or("latest")
                ));
            }
            let mut name = r.name();
            scopes.push(name.clone());
            while let Some(i) = name.rfind('/') {
                name.truncate(i);
                scopes.push(name.clone());
            }
            // *.example.com wildcards, most specific first.
            let host = r.registry.split(':').next().unwrap_or_default().to_string();
            let mut parts: Vec<&str> = host.split('.').collect();
            while parts.len() > 1 {
                parts.remove(0);
                scopes.push(format!("*.{}", parts.join(".")));
            }
            ("docker", scopes)
        }
        Place::Local(LocalImage::OciLayout { path, tag: name }) => {
            let abs = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let mut scopes = Vec::new();
            if let Some(t) = name {
                scopes.push(format!("{}:{t}", abs.display()));
            }
            let mut p = abs.as_path();
            scopes.push(p.display().to_string());
            while let Some(parent) = p.parent() {
                scopes.push(parent.display().to_string());
                p = parent;
            }
            ("oci", scopes)
        }
        Place::Local(LocalImage::OciArchive { .. }) => ("oci-archive", Vec::new()),
        Place::Local(LocalImage::DockerArchive { .. }) => ("docker-archive", Vec::new()),
        Place::Path(_) => ("dir", Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_scopes_go_from_specific_to_general() {
        let loc = Location::parse("registry.example.com:5000/ns/sub/app:v1").unwrap();
        let (t, s) = scopes_of(&loc);
        assert_eq!(t, "docker");
        assert_eq!(
            s,
            vec![
                "registry.example.com:5000/ns/sub/app:v1",
                "registry.example.com:5000/ns/sub/app",
                "registry.example.com:5000/ns/sub",
                "registry.example.com:5000/ns",
                "registry.example.com:5000",
                "*.example.com",
                "*.com",
            ]
        );
    }
}
