//! Credential resolution: which username/password or identity token to present to a registry,
//! and where it came from (so an authentication failure can name the source without ever
//! printing the secret).
//!
//! Order, first match wins (the union of what crane, skopeo and podman users expect):
//! 1. explicit `--creds user:pass` / `--password-stdin`;
//! 2. `--authfile FILE`;
//! 3. `$REGISTRY_AUTH_FILE`;
//! 4. `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json` (`credHelpers`, `auths`,
//!    `credsStore`);
//! 5. `$XDG_RUNTIME_DIR/containers/auth.json`;
//! 6. `${XDG_CONFIG_HOME:-~/.config}/containers/auth.json`;
//! 7. anonymous.
//!
//! Within a file, keys may name a namespace (`quay.io/org/repo`); the longest matching prefix
//! wins, as containers-auth.json(5) specifies.

mod config;
mod helper;

pub use config::{AuthFile, lookup_file};
pub use helper::run_helper;

use super::errors::RegistryError;
use std::fmt;
use std::path::PathBuf;

/// A secret string whose `Debug` and `Display` print `<redacted>`, so it cannot leak through
/// logging or error formatting by accident. Read it only with [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The secret itself, for the one place that puts it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// What to present to the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// No credentials.
    Anonymous,
    /// Username and password (Basic, or exchanged for a bearer token).
    Basic {
        /// User name (not secret).
        username: String,
        /// Password or personal access token.
        password: Secret,
    },
    /// An OAuth2 refresh token (docker config `identitytoken`, ACR), exchanged by a POST.
    IdentityToken {
        /// User name if known (sent as OAuth2 `username`, unused by most services).
        username: String,
        /// The refresh token.
        token: Secret,
    },
}

/// Where a credential came from, printed in authentication errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// No credential found anywhere.
    Anonymous,
    /// `--creds` or `--password-stdin`.
    CommandLine,
    /// A JSON auth file (docker config or containers auth.json), with the key that matched.
    File {
        /// The file.
        path: PathBuf,
        /// The `auths` key that matched.
        key: String,
    },
    /// A docker credential helper.
    Helper {
        /// Helper name (`docker-credential-<name>`).
        name: String,
        /// The config file that named it.
        config: PathBuf,
    },
}

impl fmt::Display for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialSource::Anonymous => {
                f.write_str("anonymous: no credentials found; pass --creds or log in")
            }
            CredentialSource::CommandLine => f.write_str("--creds/--password-stdin"),
            CredentialSource::File { path, key } => write!(f, "{} entry {key:?}", path.display()),
            CredentialSource::Helper { name, config } => {
                write!(
                    f,
                    "credential helper docker-credential-{name} named in {}",
                    config.display()
                )
            }
        }
    }
}

/// A credential and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCredential {
    /// The credential.
    pub credential: Credential,
    /// Where it came from.
    pub source: CredentialSource,
}

impl ResolvedCredential {
    /// No credential.
    pub fn anonymous() -> Self {
        ResolvedCredential {
            credential: Credential::Anonymous,
            source: CredentialSource::Anonymous,
        }
    }
}

/// The environment the resolver reads, captured once so tests can supply their own instead of
/// mutating the process environment.
#[derive(Debug, Clone, Default)]
pub struct AuthEnv {
    /// `$REGISTRY_AUTH_FILE`.
    pub registry_auth_file: Option<PathBuf>,
    /// `$DOCKER_CONFIG` (a directory).
    pub docker_config: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$XDG_RUNTIME_DIR`.
    pub xdg_runtime_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
}

impl AuthEnv {
    /// Reads the variables from the process environment (empty values count as unset).
    pub fn from_process() -> Self {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        AuthEnv {
            registry_auth_file: var("REGISTRY_AUTH_FILE"),
            docker_config: var("DOCKER_CONFIG"),
            home: var("HOME"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
        }
    }

    /// The candidate files in resolution order after the explicit `--authfile`.
    fn files(&self) -> Vec<PathBuf> {
        let mut v = Vec::new();
        if let Some(f) = &self.registry_auth_file {
            v.push(f.clone());
        }
        match (&self.docker_config, &self.home) {
            (Some(d), _) => v.push(d.join("config.json")),
            (None, Some(h)) => v.push(h.join(".docker").join("config.json")),
            _ => {}
        }
        if let Some(x) = &self.xdg_runtime_dir {
            v.push(x.join("containers").join("auth.json"));
        }
        match (&self.xdg_config_home, &self.home) {
            (Some(x), _) => v.push(x.join("containers").join("auth.json")),
            (None, Some(h)) => v.push(h.join(".config").join("containers").join("auth.json")),
            _ => {}
        }
        v
    }
}

/// What the user gave on the command line about credentials.
#[derive(Debug, Clone, Default)]
pub struct AuthOptions {
    /// `--creds user:pass` or username plus `--password-stdin`.
    pub explicit: Option<(String, Secret)>,
    /// `--authfile FILE`.
    pub authfile: Option<PathBuf>,
    /// The environment to read the default locations from.
    pub env: AuthEnv,
}

impl AuthOptions {
    /// Options with the process environment and nothing explicit.
    pub fn from_env() -> Self {
        AuthOptions {
            explicit: None,
            authfile: None,
            env: AuthEnv::from_process(),
        }
    }
}

/// Splits `user:pass` (the password may contain ':'); a missing ':' is a usage error.
pub fn parse_creds(s: &str) -> Result<(String, Secret), RegistryError> {
    match s.split_once(':') {
        Some((u, p)) if !u.is_empty() => Ok((u.to_string(), Secret::new(p))),
        _ => Err(RegistryError::Credentials {
            host: "the registry".into(),
            source_desc: "--creds".into(),
            reason: "expected USER:PASSWORD".into(),
        }),
    }
}

/// Resolves the credential for `registry` (as in the reference, e.g. `docker.io`,
/// `127.0.0.1:5000`) and `repository`, following the order in the module docs.
pub fn resolve(
    registry: &str,
    repository: &str,
    opts: &AuthOptions,
) -> Result<ResolvedCredential, RegistryError> {
    if let Some((user, pass)) = &opts.explicit {
        return Ok(ResolvedCredential {
            credential: Credential::Basic {
                username: user.clone(),
                password: pass.clone(),
            },
            source: CredentialSource::CommandLine,
        });
    }
    let mut files = Vec::new();
    if let Some(f) = &opts.authfile {
        files.push(f.clone());
    }
    files.extend(opts.env.files());
    for path in files {
        if let Some(found) = lookup_file(&path, registry, repository)? {
            return Ok(found);
        }
    }
    Ok(ResolvedCredential::anonymous())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_format() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s} {s:?}"), "<redacted> <redacted>");
        let c = Credential::Basic {
            username: "u".into(),
            password: s,
        };
        assert!(!format!("{c:?}").contains("hunter2"));
    }

    #[test]
    fn explicit_wins_and_creds_parse() {
        let (u, p) = parse_creds("me:pa:ss").unwrap();
        assert_eq!((u.as_str(), p.expose()), ("me", "pa:ss"));
        assert!(parse_creds("nocolon").is_err());
        let opts = AuthOptions {
            explicit: Some((u, p)),
            ..Default::default()
        };
        let r = resolve("quay.io", "a/b", &opts).unwrap();
        assert_eq!(r.source, CredentialSource::CommandLine);
    }
}
