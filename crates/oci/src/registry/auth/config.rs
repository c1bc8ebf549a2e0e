//! Docker `config.json` and containers `auth.json` files: the same `auths` map, plus docker's
//! `credHelpers` and `credsStore`.

use super::{Credential, CredentialSource, ResolvedCredential, Secret, helper};
use crate::registry::errors::RegistryError;
use base64::Engine;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The parts of a docker config / containers auth file that hold credentials.
#[derive(Debug, Default, Deserialize)]
pub struct AuthFile {
    /// Registry (or namespace) key to entry.
    #[serde(default)]
    pub auths: BTreeMap<String, AuthEntry>,
    /// Registry host to helper name.
    #[serde(default, rename = "credHelpers")]
    pub cred_helpers: BTreeMap<String, String>,
    /// Default helper for every registry.
    #[serde(default, rename = "credsStore")]
    pub creds_store: Option<String>,
}

/// One `auths` entry.
#[derive(Default, Deserialize)]
pub struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default, alias = "identityToken")]
    identitytoken: Option<String>,
}

impl std::fmt::Debug for AuthEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthEntry(<redacted>)")
    }
}

/// Normalises an `auths` key to `host[/path]`: no scheme, no trailing `/`, no `/v1` or `/v2`
/// API suffix, Docker Hub aliases folded to `docker.io`.
fn normalise_key(key: &str) -> String {
    let k = key.trim();
    let k = k
        .strip_prefix("https://")
        .or_else(|| k.strip_prefix("http://"))
        .unwrap_or(k);
    let mut k = k.trim_end_matches('/').to_string();
    for suffix in ["/v1", "/v2"] {
        if let Some(s) = k.strip_suffix(suffix) {
            k = s.to_string();
        }
    }
    let (host, path) = match k.split_once('/') {
        Some((h, p)) => (h.to_string(), Some(p.to_string())),
        None => (k.clone(), None),
    };
    let host = match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".to_string(),
        _ => host,
    };
    match path {
        Some(p) => format!("{host}/{p}"),
        None => host,
    }
}

/// The server name a credential helper expects: Docker Hub's legacy URL, else the host.
fn helper_server(registry: &str) -> String {
    if registry == "docker.io" {
        "https://index.docker.io/v1/".to_string()
    } else {
        registry.to_string()
    }
}

/// Looks `registry`/`repository` up in one file. A missing file is not an error (it is simply
/// not there); an unreadable or malformed one is, since silently falling back to anonymous
/// would turn a typo into a confusing 401.
pub fn lookup_file(
    path: &Path,
    registry: &str,
    repository: &str,
) -> Result<Option<ResolvedCredential>, RegistryError> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(RegistryError::Credentials {
                host: registry.into(),
                source_desc: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    let file: AuthFile = serde_json::from_slice(&text).map_err(|e| RegistryError::Credentials {
        host: registry.into(),
        source_desc: path.display().to_string(),
        // Only the position and the kind of error: serde_json's message can quote the offending
        // value, which in an auth file is a credential.
        reason: format!(
            "not a valid auth file: {:?} error at line {} column {}",
            e.classify(),
            e.line(),
            e.column()
        ),
    })?;
    lookup(&file, path, registry, repository)
}

fn lookup(
    file: &AuthFile,
    path: &Path,
    registry: &str,
    repository: &str,
) -> Result<Option<ResolvedCredential>, RegistryError> {
    // 1. A helper for this registry.
    let helper_name = file
        .cred_helpers
        .iter()
        .find(|(k, _)| normalise_key(k) == registry)
        .map(|(_, v)| v.clone());
    if let Some(name) = helper_name
        && let Some(c) = helper::run_helper(&name, &helper_server(registry), registry, path)?
    {
        return Ok(Some(c));
    }
    // 2. The longest matching `auths` key.
    let full = format!("{registry}/{repository}");
    let mut best: Option<(&String, &AuthEntry, usize)> = None;
    for (key, entry) in &file.auths {
        let norm = normalise_key(key);
        let matches = norm == registry || full == norm || full.starts_with(&format!("{norm}/"));
        if matches && best.is_none_or(|(_, _, len)| norm.len() > len) {
            best = Some((key, entry, norm.len()));
        }
    }
    if let Some((key, entry, _)) = best
        && let Some(credential) = decode_entry(entry, path, registry)?
    {
        return Ok(Some(ResolvedCredential {
            credential,
            source: CredentialSource::File {
                path: path.to_path_buf(),
                key: key.clone(),
            },
        }));
    }
    // 3. The default store.
    if let Some(store) = &file.creds_store
        && !store.is_empty()
        && let Some(c) = helper::run_helper(store, &helper_server(registry), registry, path)?
    {
        return Ok(Some(c));
    }
    Ok(None)
}

fn decode_entry(
    entry: &AuthEntry,
    path: &Path,
    registry: &str,
) -> Result<Option<Credential>, RegistryError> {
    let bad = |reason: &str| RegistryError::Credentials {
        host: registry.into(),
        source_desc: path.display().to_string(),
        reason: reason.into(),
    };
    let (mut username, mut password) = (entry.username.clone(), entry.password.clone());
    if let Some(auth) = entry.auth.as_deref().filter(|a| !a.is_empty()) {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .map_err(|_| bad("the \"auth\" field is not valid base64"))?;
        let text = String::from_utf8(raw).map_err(|_| bad("the \"auth\" field is not UTF-8"))?;
        let (u, p) = text
            .split_once(':')
            .ok_or_else(|| bad("the \"auth\" field is not base64 of USER:PASSWORD"))?;
        username = Some(u.to_string());
        password = Some(p.to_string());
    }
    if let Some(token) = entry.identitytoken.as_deref().filter(|t| !t.is_empty()) {
        return Ok(Some(Credential::IdentityToken {
            username: username.unwrap_or_default(),
            token: Secret::new(token),
        }));
    }
    match (username, password) {
        (Some(u), Some(p)) if !u.is_empty() => Ok(Some(Credential::Basic {
            username: u,
            password: Secret::new(p),
        })),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn write(dir: &Path, name: &str, json: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, json).unwrap();
        p
    }

    #[test]
    fn namespace_keys_longest_prefix_wins() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "auth.json",
            &format!(
                r#"{{"auths":{{"quay.io":{{"auth":"{}"}},"quay.io/org":{{"auth":"{}"}},"quay.io/org/repo":{{"username":"c","password":"pc"}},"https://index.docker.io/v1/":{{"auth":"{}"}}}}}}"#,
                b64("a:pa"),
                b64("b:pb"),
                b64("hub:ph")
            ),
        );
        let user =
            |reg: &str, repo: &str| match lookup_file(&p, reg, repo).unwrap().map(|r| r.credential)
            {
                Some(Credential::Basic { username, .. }) => username,
                other => format!("{other:?}"),
            };
        assert_eq!(user("quay.io", "other/x"), "a");
        assert_eq!(user("quay.io", "org/x"), "b");
        assert_eq!(user("quay.io", "org/repo"), "c");
        assert_eq!(user("quay.io", "org/repo2"), "b");
        assert_eq!(user("docker.io", "library/busybox"), "hub");
        assert_eq!(user("ghcr.io", "x"), "None");
    }

    #[test]
    fn identity_token_and_errors_without_secret() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "c.json",
            r#"{"auths":{"r.io":{"auth":"PHRva2VuPjo=","identitytoken":"refresh-123"}}}"#,
        );
        let r = lookup_file(&p, "r.io", "x").unwrap().unwrap();
        assert!(
            matches!(r.credential, Credential::IdentityToken { ref token, .. } if token.expose() == "refresh-123")
        );
        let p = write(
            d.path(),
            "bad.json",
            r#"{"auths":{"r.io":{"auth":"not base64 SECRETVALUE"}}}"#,
        );
        let e = lookup_file(&p, "r.io", "x").unwrap_err().to_string();
        assert!(e.contains("base64") && !e.contains("SECRETVALUE"), "{e}");
        assert!(
            lookup_file(&d.path().join("missing.json"), "r.io", "x")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn resolution_order_follows_the_env() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".docker")).unwrap();
        std::fs::create_dir_all(home.join(".config/containers")).unwrap();
        write(
            &home.join(".config/containers"),
            "auth.json",
            &format!(r#"{{"auths":{{"r.io":{{"auth":"{}"}}}}}}"#, b64("podman:p")),
        );
        let env = super::super::AuthEnv {
            home: Some(home.clone()),
            ..Default::default()
        };
        let opts = super::super::AuthOptions {
            env: env.clone(),
            ..Default::default()
        };
        let r = super::super::resolve("r.io", "x", &opts).unwrap();
        assert!(
            matches!(r.credential, Credential::Basic { ref username, .. } if username == "podman")
        );
        write(
            &home.join(".docker"),
            "config.json",
            &format!(r#"{{"auths":{{"r.io":{{"auth":"{}"}}}}}}"#, b64("docker:p")),
        );
        let r = super::super::resolve("r.io", "x", &opts).unwrap();
        assert!(
            matches!(r.credential, Credential::Basic { ref username, .. } if username == "docker")
        );
        let af = write(
            d.path(),
            "explicit.json",
            &format!(r#"{{"auths":{{"r.io":{{"auth":"{}"}}}}}}"#, b64("file:p")),
        );
        let opts2 = super::super::AuthOptions {
            authfile: Some(af),
            env,
            ..Default::default()
        };
        let r = super::super::resolve("r.io", "x", &opts2).unwrap();
        assert!(
            matches!(r.credential, Credential::Basic { ref username, .. } if username == "file")
        );
        assert!(r.source.to_string().contains("explicit.json"));
        let r = super::super::resolve("other.io", "x", &opts2).unwrap();
        assert_eq!(r.credential, Credential::Anonymous);
    }
}
