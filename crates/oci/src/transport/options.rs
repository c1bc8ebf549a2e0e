//! How to reach registries: credentials, TLS and retry settings, and the platform to pick from
//! a multi-platform index. The command layer builds this from its flags (`RegistryArgs`); the
//! library never sees clap types.

use super::error::TransportError;
use crate::image::Platform;
use crate::mirror_config::{MirrorConfig, PullSource};
use crate::reference::Reference;
use crate::registry::Remote;
use crate::registry::auth::{self, AuthOptions};
use crate::registry::client::{Client, ClientOptions};
use std::borrow::Cow;
use std::sync::Arc;

/// Everything a transport needs to talk to a registry. `Default` is anonymous, TLS verified,
/// default retries, `linux/amd64`, and an empty environment (no auth files read); use
/// [`RegistryOptions::from_env`] to read the user's auth files.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// Where credentials come from (explicit, `--authfile`, the default files).
    pub auth: AuthOptions,
    /// TLS, plain HTTP, timeouts and retries.
    pub client: ClientOptions,
    /// The platform picked from an index by [`super::open::open_image`]; a catalog build
    /// names its platforms separately.
    pub platform: Platform,
    /// Where an image named by its public reference may really be read (`--mirror-config`):
    /// held here so every reader that opens a registry image through these options (the
    /// source opener [`super::open`], the mirror plan) goes through the same mirrors, in
    /// containers/image's order. Empty: every reference is read where it says. Writers
    /// ([`super::sink`]) never consult it: a mirror configuration says where to pull from.
    pub mirrors: Arc<MirrorConfig>,
}

impl RegistryOptions {
    /// Defaults, with credentials looked up in the process environment's auth files.
    pub fn from_env() -> Self {
        RegistryOptions {
            auth: AuthOptions::from_env(),
            ..RegistryOptions::default()
        }
    }

    /// The options for reading from one place of the mirror configuration: the same, with
    /// TLS verification off when the configuration says the place is `insecure`.
    pub fn at(&self, place: &PullSource) -> Cow<'_, RegistryOptions> {
        if !place.insecure || self.client.insecure {
            return Cow::Borrowed(self);
        }
        let mut opts = self.clone();
        opts.client.insecure = true;
        Cow::Owned(opts)
    }

    /// A client for `reference`'s registry, with the credential resolved for its repository.
    pub fn client_for(&self, reference: &Reference) -> Result<Client, TransportError> {
        let resolve = || auth::resolve(&reference.registry, &reference.repository, &self.auth);
        let cred = match &self.client.shared {
            Some(pool) => pool.credential(&reference.registry, &reference.repository, resolve)?,
            None => resolve()?,
        };
        Ok(Client::new(&reference.registry, cred, &self.client)?)
    }

    /// `reference`'s repository, through a client made by [`RegistryOptions::client_for`]:
    /// what callers outside `registry/` speak to ([`crate::registry::Repository`]).
    pub fn repository(&self, reference: &Reference) -> Result<Remote, TransportError> {
        Ok(Remote::new(
            Arc::new(self.client_for(reference)?),
            &reference.repository,
        ))
    }
}
