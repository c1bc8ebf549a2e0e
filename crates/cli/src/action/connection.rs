//! The registry connection every image-reading command shares (credentials, TLS, retries),
//! turned into the library's [`RegistryOptions`]: the flag structs in `commands/flags.rs`
//! hold what was typed (and read `--password-stdin`, which is the terminal's business), this
//! says what it means.

use crate::location::Location;
use crate::mirror_config::MirrorConfig;
/// Why a mirror configuration file cannot be used.
pub use crate::mirror_config::MirrorConfigError;
use crate::registry::RegistryError;
use crate::registry::RetryPolicy;
use crate::registry::auth::{self, AuthOptions, Secret};
use crate::registry::client::ClientOptions;
use std::path::PathBuf;

/// The platform an image is read (or built) for.
pub use crate::image::Platform;
/// What every image-reading action takes.
pub use crate::transport::RegistryOptions;

/// Credentials as given.
#[derive(Clone)]
pub enum Credentials {
    /// `--creds USER:PASSWORD` as typed.
    Typed(String),
    /// `--creds USER` with the password read from standard input.
    UserAndPassword(String, String),
}

impl std::fmt::Debug for Credentials {
    /// Written by hand so a password never reaches a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<redacted>)")
    }
}

/// The connection settings, as typed.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// Auth file read before the default locations.
    pub authfile: Option<PathBuf>,
    /// Explicit credentials.
    pub creds: Option<Credentials>,
    /// Extra CA certificates for TLS.
    pub ca_file: Option<PathBuf>,
    /// Plain HTTP (automatic for loopback hosts).
    pub plain_http: bool,
    /// Skip TLS certificate verification.
    pub insecure: bool,
    /// Attempts per request (`None` or 0: the default policy; a number also retries refused
    /// connections).
    pub retries: Option<u32>,
    /// Seconds per request, body included (`None`: the default, see [`ClientOptions::timeout`]).
    pub timeout: Option<u64>,
}

impl Connection {
    /// Credential options: the explicit credentials bound to the registries of `named` (the
    /// image references the command line names; see [`named_registries`]) or to the one
    /// `REGISTRY=` names, the auth file, and the process environment for the default locations.
    pub fn auth_options(&self, named: &[&str]) -> Result<AuthOptions, RegistryError> {
        let mut opts = AuthOptions::from_env();
        opts.authfile = self.authfile.clone();
        let hosts = named_registries(named);
        match &self.creds {
            Some(Credentials::Typed(c)) => opts.explicit = auth::bind_creds(c, &hosts, "--creds")?,
            Some(Credentials::UserAndPassword(user, pw)) => {
                opts.explicit = match user.split_once('=') {
                    Some((host, user)) => auth::bind_user(
                        user,
                        Secret::new(pw.clone()),
                        &[host.to_string()],
                        "--creds",
                    )?,
                    None => auth::bind_user(user, Secret::new(pw.clone()), &hosts, "--creds")?,
                };
            }
            None => {}
        }
        Ok(opts)
    }

    /// Transport options. `ca_file` and `insecure` imply HTTPS even for loopback hosts (which
    /// otherwise get plain HTTP automatically).
    pub fn client_options(&self) -> ClientOptions {
        ClientOptions {
            plain_http: self.plain_http,
            insecure: self.insecure,
            ca_file: self.ca_file.clone(),
            retry: match self.retries {
                None | Some(0) => RetryPolicy::default(),
                Some(n) => RetryPolicy {
                    max_attempts: n,
                    retry_refused: true,
                    ..RetryPolicy::default()
                },
            },
            timeout: self.timeout.map_or(
                ClientOptions::default().timeout,
                std::time::Duration::from_secs,
            ),
            ..ClientOptions::default()
        }
    }

    /// The registry options, for `platform`, with explicit credentials bound to the
    /// registries `named` on the command line.
    pub fn options(
        &self,
        platform: Platform,
        named: &[&str],
    ) -> Result<RegistryOptions, RegistryError> {
        Ok(RegistryOptions {
            auth: self.auth_options(named)?,
            client: self.client_options(),
            platform,
            mirrors: Default::default(),
        })
    }
}

/// `opts` reading images through the mirror configuration `files` (IDMS, ITMS, ICSP or
/// registries.conf, merged), so every reader given these options tries the mirrors first;
/// `opts` unchanged when no file is given.
pub fn with_mirror_config(
    mut opts: RegistryOptions,
    files: &[PathBuf],
) -> Result<RegistryOptions, MirrorConfigError> {
    if !files.is_empty() {
        opts.mirrors = std::sync::Arc::new(MirrorConfig::load(files)?);
    }
    Ok(opts)
}

/// The registry hosts of the strings a command line names that are registry references
/// (`quay.io/org/x:1`, `docker://…`, a `REGISTRY/NAMESPACE` target); folders, files and local
/// images name none. Explicit credentials are bound to these.
pub fn named_registries(named: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for typed in named {
        if let Some(h) = Location::registry_named(typed)
            && !out.contains(&h)
        {
            out.push(h);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_bind_to_the_registries_named() {
        assert_eq!(
            named_registries(&[
                "quay.io/a/b:1",
                "docker://127.0.0.1:5000/x",
                "oci:/nonexistent"
            ]),
            ["quay.io", "127.0.0.1:5000"]
        );
        let typed = Connection {
            creds: Some(Credentials::Typed("me:pw".into())),
            ..Connection::default()
        };
        let opts = typed.auth_options(&["quay.io/a/b:1"]).expect("bound");
        assert_eq!(opts.explicit.len(), 1);
        assert_eq!(opts.explicit[0].registry, "quay.io");
        assert!(typed.auth_options(&[]).is_err(), "nothing named: refused");
        let stdin = Connection {
            creds: Some(Credentials::UserAndPassword(
                "127.0.0.1:5000=me".into(),
                "pw".into(),
            )),
            ..Connection::default()
        };
        let opts = stdin.auth_options(&["quay.io/a/b:1"]).expect("bound");
        assert_eq!(opts.explicit.len(), 1);
        assert_eq!(
            (
                opts.explicit[0].registry.as_str(),
                opts.explicit[0].username.as_str()
            ),
            ("127.0.0.1:5000", "me")
        );
    }
}
