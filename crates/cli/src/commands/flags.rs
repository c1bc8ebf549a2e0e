//! The flags several commands share, so they are spelled and checked once: the registry flags
//! every command that touches images flattens in ([`RegistryArgs`], or [`ConnectionArgs`]
//! alone where a command takes its own platforms), handed to `action::connection` for the
//! library's [`RegistryOptions`]; the report and catalog output formats; the render options of
//! `catalog template` and `catalog add`. Nothing else: opening images lives in
//! `transport::open`, pushing in `transport::sink`, bundle-image knowledge in
//! `action::bundle_image`.

use super::Failure;
use crate::action::bundle_source::SourceOptions;
use crate::action::catalog_render::{Format, MigrateLevel, OpmCompat};
use crate::action::connection::{Connection, Credentials, Platform, RegistryOptions};
use std::io::Read;
use std::path::PathBuf;

/// The registry connection flags (credentials, TLS, retries), without a platform: flattened
/// into [`RegistryArgs`] for the commands that pick one platform, and alone into `catalog
/// build`, which takes several `--platform`s of its own.
#[derive(Clone, Default, clap::Args)]
pub struct ConnectionArgs {
    /// Credentials as USER:PASSWORD (or just USER with --password-stdin), sent only to the
    /// registry of the image named on the command line, never to registries that content (a
    /// catalog, a template) names; REGISTRY=USER:PASSWORD binds them to REGISTRY instead.
    #[arg(long, value_name = "[REGISTRY=]USER[:PASSWORD]")]
    pub creds: Option<String>,
    /// Read the password from standard input (use with --creds USER).
    #[arg(long)]
    pub password_stdin: bool,
    /// Auth file (docker config.json or containers auth.json format) to read credentials from
    /// before the default locations.
    #[arg(long, value_name = "FILE")]
    pub authfile: Option<PathBuf>,
    /// PEM file of extra CA certificates to trust for registry TLS.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Talk plain HTTP to the registry (automatic for localhost and 127.0.0.0/8).
    #[arg(long)]
    pub plain_http: bool,
    /// Skip TLS certificate verification.
    #[arg(long)]
    pub insecure: bool,
    /// Attempts per request on connection errors, 408, 429 and 5xx (1 = no retry, 0 = default)
    /// [default: 5; a connection refused by a loopback address or an explicit port is not
    /// retried unless N is given].
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Seconds allowed for each registry request, answer and body included; a blob gets one
    /// more second per 64 KiB of its size [default: 600].
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
}

impl std::fmt::Debug for ConnectionArgs {
    /// Written by hand so `--creds USER:PASSWORD` never reaches a debug print of the arguments.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let creds = self.creds.as_ref().map(|c| match c.split_once(':') {
            Some((u, _)) => format!("{u}:<redacted>"),
            None => c.clone(),
        });
        f.debug_struct("ConnectionArgs")
            .field("creds", &creds)
            .field("password_stdin", &self.password_stdin)
            .field("authfile", &self.authfile)
            .field("ca_file", &self.ca_file)
            .field("plain_http", &self.plain_http)
            .field("insecure", &self.insecure)
            .field("retries", &self.retries)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ConnectionArgs {
    /// The connection as typed: `--creds`, `--password-stdin` (read now, once), `--authfile`,
    /// TLS and retries.
    pub fn connection(&self) -> Result<Connection, Failure> {
        let creds = match (&self.creds, self.password_stdin) {
            (Some(c), false) => Some(Credentials::Typed(c.clone())),
            (Some(typed), true) => {
                // USER, or REGISTRY=USER (the registry may carry a port: `host:5000=me`).
                let user = match typed.split_once('=') {
                    Some((registry, user)) => {
                        let user = user.split(':').next().unwrap_or("");
                        if user.is_empty() {
                            String::new()
                        } else {
                            format!("{registry}={user}")
                        }
                    }
                    None => typed.split(':').next().unwrap_or("").to_string(),
                };
                if user.is_empty() {
                    return Err(Failure::usage("--password-stdin needs --creds USER"));
                }
                let mut pw = String::new();
                std::io::stdin().read_to_string(&mut pw).map_err(|e| {
                    Failure::usage(format!("cannot read the password from stdin: {e}"))
                })?;
                let pw = pw.trim_end_matches(['\n', '\r']).to_string();
                Some(Credentials::UserAndPassword(user, pw))
            }
            (None, true) => return Err(Failure::usage("--password-stdin needs --creds USER")),
            (None, false) => None,
        };
        Ok(Connection {
            authfile: self.authfile.clone(),
            creds,
            ca_file: self.ca_file.clone(),
            plain_http: self.plain_http,
            insecure: self.insecure,
            retries: self.retries,
            timeout: self.timeout,
        })
    }

    /// The library's registry options from the flags (reads `--password-stdin` now, once), for
    /// `platform`; `--creds` bound to the registries of the references in `named` (what the
    /// command line names).
    pub fn options(&self, platform: Platform, named: &[&str]) -> Result<RegistryOptions, Failure> {
        Ok(self.connection()?.options(platform, named)?)
    }
}

/// Registry flags shared by `inspect`, `pull`, `validate --image`, `build --push` and `catalog
/// render`: the connection flags and one `--platform`.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Registry and platform options")]
pub struct RegistryArgs {
    /// Credentials, TLS and retries.
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Platform: recorded in the image by `build`; picked from a multi-platform index by
    /// `validate --image`, `inspect` and `pull`.
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", default_value = "linux/amd64")]
    pub platform: String,
}

impl RegistryArgs {
    /// The platform flag, parsed.
    /// An empty value (as `Default` gives) means linux/amd64.
    pub fn platform(&self) -> Result<Platform, Failure> {
        if self.platform.is_empty() {
            return Ok(Platform::default());
        }
        self.platform
            .parse::<Platform>()
            .map_err(|e| Failure::usage(e.to_string()))
    }

    /// The library's registry options from the flags (reads `--password-stdin` now, once);
    /// `--creds` bound to the registries of the references in `named` (what the command line
    /// names).
    pub fn options(&self, named: &[&str]) -> Result<RegistryOptions, Failure> {
        self.connection.options(self.platform()?, named)
    }
}

/// `--mirror-config FILE`, repeatable: where an image named by its public reference is really
/// read, for the commands that read images by name (render, template, validate --image,
/// inspect, mirror). Only parsed here; the files are read by `action::connection` and the
/// mirrors are tried by the library's source opener, the same step for every command.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct MirrorConfigArgs {
    /// Read images through mirrors: an ImageDigestMirrorSet, ImageTagMirrorSet or
    /// ImageContentSourcePolicy (YAML) or a registries.conf (TOML). containers/image's rules:
    /// the longest matching source prefix, its mirrors in order, then the source unless blocked
    /// (NeverContactSource); digest-only (IDMS) mirrors serve only references by digest,
    /// tag-only (ITMS) ones only tags. Repeatable; the files add up.
    #[arg(long = "mirror-config", value_name = "FILE")]
    pub mirror_config: Vec<PathBuf>,
}

impl MirrorConfigArgs {
    /// `opts` reading through the mirror configuration files given (unchanged without any);
    /// an unreadable or malformed file is a usage error naming it.
    pub fn apply(&self, opts: RegistryOptions) -> Result<RegistryOptions, Failure> {
        crate::action::connection::with_mirror_config(opts, &self.mirror_config)
            .map_err(|e| Failure::usage(super::error_chain(&e)))
    }
}

/// `-o text|json|jsonl` of `bundle validate` and `catalog validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// One line per finding and a summary per bundle or catalog.
    Text,
    /// operator-sdk's json-alpha1 shape plus rule, file and line (catalogs: neutral keys).
    #[value(alias = "json-alpha1")]
    Json,
    /// JSON Lines: one object per bundle or catalog per line, the stable machine format.
    #[value(name = "jsonl", alias = "json-lines")]
    Jsonl,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// `-o json|yaml` of the commands that print catalog blobs (`catalog render`, `catalog init`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CatalogFormat {
    /// opm's JSON: 4-space indent, one blob after another.
    Json,
    /// opm's YAML: `---` before each blob, go-yaml v2 style.
    Yaml,
}

impl From<CatalogFormat> for Format {
    fn from(f: CatalogFormat) -> Format {
        match f {
            CatalogFormat::Json => Format::Json,
            CatalogFormat::Yaml => Format::Yaml,
        }
    }
}

/// The render options of `catalog template` and `catalog add` from their common flags
/// (`named`: the references the command line names, for `--creds`).
pub fn source_options(
    migrate_level: Option<&str>,
    compat: Option<OpmCompat>,
    registry: &RegistryArgs,
    named: &[&str],
) -> Result<SourceOptions, Failure> {
    let migrate = match migrate_level {
        None => MigrateLevel::None,
        Some(level) => level.parse::<MigrateLevel>().map_err(Failure::usage)?,
    };
    Ok(SourceOptions {
        migrate,
        compat: compat.unwrap_or_default(),
        registry: registry.options(named)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_args_hides_the_password() {
        let a = RegistryArgs {
            connection: ConnectionArgs {
                creds: Some("me:s3cr3t:x".into()),
                ..ConnectionArgs::default()
            },
            ..RegistryArgs::default()
        };
        let d = format!("{a:?}");
        assert!(d.contains("me:<redacted>") && !d.contains("s3cr3t"), "{d}");
    }
}

/// The keyless verification flags, as cosign names them: shared by `verify-blob` and
/// `verify-attestation` so both read identities the same way (the trust step checks them).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct KeylessArgs {
    /// Keyless: the identity the certificate must name (an email or URI of its SAN).
    #[arg(long, value_name = "ID")]
    pub certificate_identity: Option<String>,
    /// Keyless: a regular expression the identity must match (unanchored, Go RE2 as cosign:
    /// \d \w \s \b are ASCII).
    #[arg(long, value_name = "RE")]
    pub certificate_identity_regexp: Option<String>,
    /// Keyless: the OIDC issuer the certificate must name.
    #[arg(long, value_name = "URL")]
    pub certificate_oidc_issuer: Option<String>,
    /// Keyless: a regular expression the OIDC issuer must match (unanchored, Go RE2).
    #[arg(long, value_name = "RE")]
    pub certificate_oidc_issuer_regexp: Option<String>,
    /// trusted_root.json (Fulcio CAs, Rekor and CT log keys); default: sigstore.dev's public-good
    /// root carried in olmpack. Nothing is fetched.
    #[arg(long, value_name = "FILE")]
    pub trusted_root: Option<PathBuf>,
}

impl KeylessArgs {
    /// The identity flags as the trust step reads them (one conversion for every door).
    pub fn identity(&self) -> crate::action::sign::KeylessIdentity {
        crate::action::sign::KeylessIdentity {
            identity: self.certificate_identity.clone(),
            identity_regexp: self.certificate_identity_regexp.clone(),
            issuer: self.certificate_oidc_issuer.clone(),
            issuer_regexp: self.certificate_oidc_issuer_regexp.clone(),
        }
    }
}

/// `--signatures`: what happens to what is attached to each image copied (`copy`, `catalog
/// mirror`): one enum, so the two commands mean the same by each word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SignaturesMode {
    /// Copy it along when there is some.
    Copy,
    /// Leave it behind.
    Drop,
    /// Refuse an image without a signature before copying it (verified with --verify-key,
    /// --verify-gpg-keyring or a signature-checking --policy; else only its presence is
    /// checked), then copy it with what is attached.
    Require,
}

impl From<SignaturesMode> for crate::action::copy::SignaturesMode {
    fn from(m: SignaturesMode) -> Self {
        use crate::action::copy::SignaturesMode as M;
        match m {
            SignaturesMode::Copy => M::Copy,
            SignaturesMode::Drop => M::Drop,
            SignaturesMode::Require => M::Require,
        }
    }
}

/// The flags of carrying signatures that `copy` and `catalog mirror` share besides
/// `--signatures`: what `require` verifies with (named as `olmpack verify` names its keys,
/// with `verify-` in front: these commands sign nothing, but `--key` would read as one), and
/// the registries.d folder naming the lookaside stores of simple signatures.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CarryArgs {
    /// cosign public key (PEM) that --signatures require verifies each image's signatures
    /// with (repeatable; as olmpack verify --key): an image with no signature verifying is
    /// refused before anything is copied.
    #[arg(long, value_name = "FILE")]
    pub verify_key: Vec<PathBuf>,
    /// OpenPGP keyring that --signatures require verifies simple signatures with
    /// (repeatable; as olmpack verify --gpg-keyring).
    #[arg(long, value_name = "FILE")]
    pub verify_gpg_keyring: Vec<PathBuf>,
    /// registries.d folder naming the lookaside stores: simple signatures (signature-N) of
    /// each image are copied from the source's lookaside to the target's lookaside-staging
    /// (else lookaside), which must be a file:// folder. Without it no lookaside store is
    /// read or written.
    #[arg(long = "registries-d", value_name = "DIR")]
    pub registries_d: Option<PathBuf>,
}

impl CarryArgs {
    /// The carry options for `mode`: the keys read now (a mistyped file is named before
    /// anything is copied), the registries.d folder read when given.
    pub fn options(
        &self,
        mode: SignaturesMode,
    ) -> Result<crate::action::copy::CarryOptions, Failure> {
        let verifying = !self.verify_key.is_empty() || !self.verify_gpg_keyring.is_empty();
        if verifying && mode != SignaturesMode::Require {
            return Err(Failure::usage(
                "--verify-key and --verify-gpg-keyring are what --signatures require verifies with; add --signatures require",
            ));
        }
        let verify = if verifying {
            Some(crate::action::sign::verify_options(
                &crate::action::sign::VerifyFlags {
                    registries_d: self.registries_d.as_deref(),
                    cosign_keys: &self.verify_key,
                    gpg_keyrings: &self.verify_gpg_keyring,
                    ..Default::default()
                },
            )?)
        } else {
            None
        };
        let lookaside = match &self.registries_d {
            Some(dir) if !dir.is_dir() => {
                return Err(Failure::usage(format!(
                    "--registries-d {}: no such folder",
                    dir.display()
                )));
            }
            Some(dir) => Some(crate::action::copy::load_registries_d(dir)?),
            None => None,
        };
        Ok(crate::action::copy::CarryOptions {
            mode: mode.into(),
            lookaside,
            verify,
        })
    }
}
