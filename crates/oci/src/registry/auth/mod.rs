//! Credential resolution: which username/password or identity token to present to a registry,
//! and where it came from (so an authentication failure can name the source without ever
//! printing the secret).
//!
//! Order, first match wins (the union of what crane, skopeo and podman users expect):
//! 1. explicit `--creds user:pass` / `--password-stdin`, bound to the registry the command
//!    line names (or `--creds REGISTRY=user:pass`, to that registry): never sent to a registry
//!    only the content (a catalog, a template) names, as skopeo binds `--src-creds` to its
//!    one source;
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

/// Credentials typed on the command line, bound to the one registry they are for: a
/// registry named only by content (a catalog's bundle images, a template's) never gets them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplicitCredential {
    /// The registry host (and port) as in a reference (`quay.io`, `127.0.0.1:5000`).
    pub registry: String,
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: Secret,
}

/// What the user gave on the command line about credentials.
#[derive(Debug, Clone, Default)]
pub struct AuthOptions {
    /// `--creds`, each bound to its registry (see [`bind_creds`]).
    pub explicit: Vec<ExplicitCredential>,
    /// `--authfile FILE`.
    pub authfile: Option<PathBuf>,
    /// The environment to read the default locations from.
    pub env: AuthEnv,
}

impl AuthOptions {
    /// Options with the process environment and nothing explicit.
    pub fn from_env() -> Self {
        AuthOptions {
            explicit: Vec::new(),
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

/// Docker Hub's names for itself, spelled as in a reference.
fn canonical_registry(registry: &str) -> String {
    let r = registry.to_ascii_lowercase();
    match r.as_str() {
        "index.docker.io" | "registry-1.docker.io" => crate::reference::DOCKER_HUB.to_string(),
        _ => r,
    }
}

/// Whether `typed` starts with a registry host before `=`: a name with a dot, `localhost`, or
/// a bracketed IPv6 address, with an optional numeric port (so `user:pa=ss` stays a password),
/// followed by `USER:PASSWORD`. Without that second colon, `john.doe:2024=Winter` is the user
/// `john.doe` with the password `2024=Winter`, not the registry `john.doe:2024`: read as one,
/// a part of the password was printed as a host name in every message.
fn split_registry(typed: &str) -> Option<(&str, &str)> {
    let (host, rest) = typed.split_once('=')?;
    if rest.split_once(':').is_none_or(|(user, _)| user.is_empty()) {
        return None;
    }
    let name = if host.starts_with('[') {
        host.split_once(']').map(|(h, _)| h)?
    } else {
        match host.rsplit_once(':') {
            Some((h, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => h,
            Some(_) => return None,
            None => host,
        }
    };
    let is_host = name.starts_with('[')
        || name == "localhost"
        || (name.contains('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-'));
    is_host.then_some((host, rest))
}

/// Binds typed credentials to registries: `REGISTRY=USER:PASSWORD` to that registry,
/// `USER:PASSWORD` to each of `named` (the registries the command line names). Plain
/// credentials with no registry named are refused rather than sent everywhere. `flag` names the
/// option in messages (`--creds`, `--src-creds`).
pub fn bind_creds(
    typed: &str,
    named: &[String],
    flag: &str,
) -> Result<Vec<ExplicitCredential>, RegistryError> {
    let (hosts, creds) = match split_registry(typed) {
        Some((host, creds)) => (vec![host.to_string()], creds),
        None => (named.to_vec(), typed),
    };
    let (username, password) = parse_creds(creds).map_err(|_| RegistryError::Credentials {
        host: hosts
            .first()
            .cloned()
            .unwrap_or_else(|| "the registry".into()),
        source_desc: flag.into(),
        reason: "expected USER:PASSWORD or REGISTRY=USER:PASSWORD".into(),
    })?;
    bind_user(&username, password, &hosts, flag)
}

/// Binds a user and a password read elsewhere (`--password-stdin`) to `hosts`; none is an error
/// (see [`bind_creds`]).
pub fn bind_user(
    username: &str,
    password: Secret,
    hosts: &[String],
    flag: &str,
) -> Result<Vec<ExplicitCredential>, RegistryError> {
    if hosts.is_empty() {
        return Err(RegistryError::Credentials {
            host: "the registry".into(),
            source_desc: flag.into(),
            reason: format!(
                "no registry reference on the command line to bind the credentials to: name the registry, as {flag} REGISTRY=USER:PASSWORD"
            ),
        });
    }
    let mut out: Vec<ExplicitCredential> = Vec::new();
    for h in hosts {
        let registry = canonical_registry(h);
        if !out.iter().any(|c| c.registry == registry) {
            out.push(ExplicitCredential {
                registry,
                username: username.to_string(),
                password: password.clone(),
            });
        }
    }
    Ok(out)
}

/// Resolves the credential for `registry` (as in the reference, e.g. `docker.io`,
/// `127.0.0.1:5000`) and `repository`, following the order in the module docs.
pub fn resolve(
    registry: &str,
    repository: &str,
    opts: &AuthOptions,
) -> Result<ResolvedCredential, RegistryError> {
    let wanted = canonical_registry(registry);
    if let Some(c) = opts.explicit.iter().find(|c| c.registry == wanted) {
        return Ok(ResolvedCredential {
            credential: Credential::Basic {
                username: c.username.clone(),
                password: c.password.clone(),
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
            explicit: bind_user(&u, p, &["quay.io".into()], "--creds").unwrap(),
            ..Default::default()
        };
        let r = resolve("quay.io", "a/b", &opts).unwrap();
        assert_eq!(r.source, CredentialSource::CommandLine);
        let other = resolve("ghcr.io", "a/b", &opts).unwrap();
        assert_eq!(
            other.source,
            CredentialSource::Anonymous,
            "bound to quay.io only"
        );
    }

    #[test]
    fn creds_bind_to_the_named_registry_or_the_one_given() {
        let named = ["127.0.0.1:5000".to_string()];
        let b = bind_creds("me:pa=ss", &named, "--creds").unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(
            (
                b[0].registry.as_str(),
                b[0].username.as_str(),
                b[0].password.expose()
            ),
            ("127.0.0.1:5000", "me", "pa=ss")
        );
        let b = bind_creds("quay.io=me:pw", &named, "--creds").unwrap();
        assert_eq!(
            (b[0].registry.as_str(), b[0].password.expose()),
            ("quay.io", "pw")
        );
        let b = bind_creds("localhost:5000=me:pw", &[], "--creds").unwrap();
        assert_eq!(b[0].registry, "localhost:5000");
        let b = bind_creds("index.docker.io=me:pw", &[], "--creds").unwrap();
        assert_eq!(b[0].registry, "docker.io");
        // `me:1234=x` is a password, not a host "me" with a port.
        let b = bind_creds("me:1234=x", &named, "--creds").unwrap();
        assert_eq!(
            (b[0].username.as_str(), b[0].password.expose()),
            ("me", "1234=x")
        );
        let e = bind_creds("me:pw", &[], "--src-creds")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--src-creds REGISTRY=USER:PASSWORD"), "{e}");
        assert!(!e.contains("pw\""), "{e}");
        assert!(bind_creds("quay.io=nocolon", &[], "--creds").is_err());
        // A user name with a dot and a password of digits before an `=` reads like a host with
        // a port: without `USER:PASSWORD` after the `=` it is a user and a password, and no
        // part of the password names a registry (or is printed as one).
        let b = bind_creds("john.doe:2024=Winter", &named, "--creds").unwrap();
        assert_eq!(
            (
                b[0].registry.as_str(),
                b[0].username.as_str(),
                b[0].password.expose()
            ),
            ("127.0.0.1:5000", "john.doe", "2024=Winter")
        );
        let e = bind_creds("john.doe:2024=Winter", &[], "--creds")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("2024"), "{e}");
    }
}
