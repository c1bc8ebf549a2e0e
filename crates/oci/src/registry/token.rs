//! The bearer-token flow of the distribution token spec: GET the realm with `service` and one
//! `scope` per repository (basic credentials when we have them), or, with an identity token,
//! POST an OAuth2 `grant_type=refresh_token` form. Tokens are cached per scope set and reused
//! until shortly before they expire, so a push makes one token request, not one per blob.

use super::auth::{Credential, Secret};
use super::errors::{RegistryError, redact_url};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Lifetime assumed when the token service does not say (the spec's default is 60 s).
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(60);

/// The largest token response read (containers/image's cap): a token service is a remote
/// party, and one that never stops sending must not fill memory.
pub const MAX_TOKEN_RESPONSE_BYTES: u64 = 1 << 20;

/// `repository:<name>:pull` — read access.
pub fn pull_scope(repository: &str) -> String {
    format!("repository:{repository}:pull")
}

/// `repository:<name>:pull,push` — what a push needs (HEAD and mount need pull too).
pub fn push_scope(repository: &str) -> String {
    format!("repository:{repository}:pull,push")
}

/// `repository:<name>:delete` — what distribution's token authorization asks of a manifest
/// `DELETE` (its `appendAccessRecords`: the method maps to the `delete` action alone).
pub fn delete_scope(repository: &str) -> String {
    format!("repository:{repository}:delete")
}

#[derive(Deserialize)]
struct TokenResponse {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// Parameters of a Bearer challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerRealm {
    /// Token service URL.
    pub realm: String,
    /// `service` parameter, if the challenge had one.
    pub service: Option<String>,
}

/// Cached tokens keyed by the sorted scope set.
#[derive(Default)]
pub struct TokenCache {
    tokens: Mutex<HashMap<String, (Secret, Instant)>>,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCache(<redacted>)")
    }
}

fn key(scopes: &[String]) -> String {
    let mut s: Vec<&str> = scopes.iter().map(String::as_str).collect();
    s.sort_unstable();
    s.dedup();
    s.join(" ")
}

impl TokenCache {
    /// A token for `scopes` still valid for a few seconds, if cached.
    pub fn get(&self, scopes: &[String]) -> Option<Secret> {
        let map = self.tokens.lock().ok()?;
        map.get(&key(scopes))
            .filter(|(_, exp)| *exp > Instant::now())
            .map(|(t, _)| t.clone())
    }

    /// Stores a token with its lifetime (a tenth is kept as a safety margin, at least 1 s).
    pub fn put(&self, scopes: &[String], token: Secret, lifetime: Duration) {
        let margin = (lifetime / 10).max(Duration::from_secs(1));
        if let Ok(mut map) = self.tokens.lock() {
            map.insert(
                key(scopes),
                (token, Instant::now() + lifetime.saturating_sub(margin)),
            );
        }
    }

    /// Drops a token the registry refused.
    pub fn forget(&self, scopes: &[String]) {
        if let Ok(mut map) = self.tokens.lock() {
            map.remove(&key(scopes));
        }
    }
}

/// Percent-encodes for `application/x-www-form-urlencoded` (reqwest's `form` feature is off).
fn form_encode(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        let mut out = String::new();
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Whether a token realm is an HTTPS URL, judged as the HTTP client will read it (scheme in
/// any case, spaces around it trimmed): `HTTP://host/token` is plain HTTP too, so a textual
/// `starts_with("http://")` let credentials go to it in clear text.
pub fn realm_is_https(realm: &str) -> bool {
    reqwest::Url::parse(realm.trim()).is_ok_and(|u| u.scheme() == "https")
}

/// Asks the token service for a token covering `scopes`, the whole exchange within `timeout`.
/// `host` and `source_desc` only feed error messages. Returns the token and its lifetime.
pub fn fetch(
    http: &reqwest::blocking::Client,
    timeout: Duration,
    realm: &BearerRealm,
    scopes: &[String],
    credential: &Credential,
    host: &str,
    source_desc: &str,
) -> Result<(Secret, Duration), RegistryError> {
    let token_err = |reason: String| RegistryError::Token {
        host: host.into(),
        realm: redact_url(&realm.realm),
        reason,
    };
    let transport = |method: &str, e: reqwest::Error| RegistryError::Transport {
        method: method.into(),
        url: redact_url(&realm.realm),
        cause: e.without_url().into(),
    };
    let service = realm.service.clone().unwrap_or_default();
    let response = match credential {
        Credential::IdentityToken { username, token } => {
            let scope = scopes.join(" ");
            let mut pairs = vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", token.expose()),
                ("client_id", "olmpack"),
                ("service", service.as_str()),
                ("scope", scope.as_str()),
            ];
            if !username.is_empty() {
                pairs.push(("username", username.as_str()));
            }
            http.post(&realm.realm)
                .timeout(timeout)
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(form_encode(&pairs))
                .send()
                .map_err(|e| transport("POST", e))?
        }
        Credential::Basic { .. } | Credential::Anonymous => {
            let mut query: Vec<(&str, &str)> = Vec::new();
            if realm.service.is_some() {
                query.push(("service", service.as_str()));
            }
            for s in scopes {
                query.push(("scope", s.as_str()));
            }
            let mut req = http.get(&realm.realm).timeout(timeout).query(&query);
            if let Credential::Basic { username, password } = credential {
                req = req.basic_auth(username, Some(password.expose()));
            }
            req.send().map_err(|e| transport("GET", e))?
        }
    };
    let status = response.status().as_u16();
    if status == 401 || status == 403 {
        return Err(RegistryError::AuthFailed {
            host: host.into(),
            source_desc: source_desc.into(),
            detail: format!(
                "the token service {} answered HTTP {status}",
                redact_url(&realm.realm)
            ),
        });
    }
    if !(200..300).contains(&status) {
        return Err(token_err(format!("HTTP {status}")));
    }
    let mut body = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(response, MAX_TOKEN_RESPONSE_BYTES + 1),
        &mut body,
    )
    .map_err(|e| token_err(format!("cannot read the response: {e}")))?;
    if body.len() as u64 > MAX_TOKEN_RESPONSE_BYTES {
        return Err(token_err(format!(
            "response larger than {} KiB: refused",
            MAX_TOKEN_RESPONSE_BYTES / 1024
        )));
    }
    let parsed: TokenResponse = serde_json::from_slice(&body).map_err(|e| {
        token_err(super::errors::printable(&format!(
            "response is not token JSON: {e}"
        )))
    })?;
    let token = parsed
        .token
        .filter(|t| !t.is_empty())
        .or(parsed.access_token.filter(|t| !t.is_empty()))
        .ok_or_else(|| token_err("response has neither \"token\" nor \"access_token\"".into()))?;
    let lifetime = parsed
        .expires_in
        .filter(|s| *s > 0)
        .map_or(DEFAULT_TOKEN_LIFETIME, Duration::from_secs);
    Ok((Secret::new(token), lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The realm's scheme is read as the HTTP client reads it: a capitalised or padded
    /// `http://` is still plain HTTP, where a registry over TLS sends no credentials.
    #[test]
    fn a_realm_is_https_only_when_the_client_would_use_tls() {
        assert!(realm_is_https("https://auth.example/token"));
        assert!(realm_is_https("HTTPS://auth.example/token"));
        for plain in [
            "http://auth.example/token",
            "HTTP://auth.example/token",
            " http://auth.example/token",
            "\thttp://auth.example/token",
            "not a url",
            "",
        ] {
            assert!(!realm_is_https(plain), "{plain:?}");
        }
    }

    #[test]
    fn cache_keys_ignore_order_and_expire() {
        let c = TokenCache::default();
        let a = vec![pull_scope("a"), push_scope("b")];
        let b = vec![push_scope("b"), pull_scope("a")];
        c.put(&a, Secret::new("t"), Duration::from_secs(60));
        assert_eq!(
            c.get(&b).map(|s| s.expose().to_string()).as_deref(),
            Some("t")
        );
        assert!(c.get(&[pull_scope("a")]).is_none());
        c.put(&a, Secret::new("t"), Duration::from_millis(500));
        assert!(
            c.get(&a).is_none(),
            "a token inside its safety margin is not reused"
        );
        c.put(&a, Secret::new("t"), Duration::from_secs(60));
        c.forget(&b);
        assert!(c.get(&a).is_none());
    }

    #[test]
    fn form_encoding() {
        assert_eq!(
            form_encode(&[("scope", "repository:a/b:pull push"), ("x", "é")]),
            "scope=repository%3Aa%2Fb%3Apull+push&x=%C3%A9"
        );
    }
}
