//! Where every HTTP client starts: reqwest with rustls on the `ring` crypto provider.
//!
//! reqwest's default TLS brings rustls on aws-lc-rs, a second crypto library of several MB
//! (and a long C build) beside the RustCrypto crates signing already needs. reqwest is built
//! with `rustls-no-provider` instead, which makes the provider the process's job: a client
//! built before one is installed panics. Every client is therefore started here, and this
//! installs `ring` first. Certificates are checked with rustls-platform-verifier, reqwest's own
//! check, against the system's roots (plus `--ca-file` ones), built at the first handshake
//! (`roots`); only `danger_accept_invalid_certs` (the user's `--insecure`) turns it off.

mod roots;

use std::sync::Once;

/// A blocking client builder with the TLS provider installed: for clients that set no TLS
/// option of their own (tests, plain-HTTP helpers). olmpack's own clients start from
/// [`client_with_tls`] or [`Tls::builder`], which share one certificate check among them.
pub fn client_builder() -> reqwest::blocking::ClientBuilder {
    install_provider();
    reqwest::blocking::Client::builder()
}

/// Whether `url` names an HTTP(S) resource, its scheme in any case as the HTTP client reads it
/// (`HTTPS://` is https too): the one test of the commands and stores that take a URL or
/// something else (a catalogd URL or an image, a lookaside store or a `file://` folder).
pub fn is_http_url(url: &str) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        url.get(..scheme.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(scheme))
    })
}

/// The TLS setting of olmpack's HTTP clients, made once and shared by every client built from
/// it (a registry's request and token clients): HTTPS certificates are checked against the
/// system's roots plus the PEM roots of `--ca-file`, or not at all with `--insecure`.
///
/// The system's roots are loaded at the first TLS handshake, not here: reqwest's own
/// verifier reads them when the client is built, so a plain-HTTP registry (a loopback one, a
/// cluster's internal one) failed on a machine without CA certificates (a scratch or
/// distroless image) before any request, with a TLS error, and every command paid the read.
#[derive(Clone)]
pub struct Tls(
    /// The rustls configuration with the lazy verifier; `None` for `--insecure`, which keeps
    /// reqwest's own "accept anything" verifier (no roots read at all).
    Option<rustls::ClientConfig>,
);

impl Tls {
    /// Reads `ca_file` (`--ca-file`) once; `insecure` is `--insecure`.
    pub fn new(
        ca_file: Option<&std::path::Path>,
        insecure: bool,
    ) -> Result<Tls, super::RegistryError> {
        let extra = match ca_file {
            Some(ca) => read_ca_file(ca)?,
            None => Vec::new(),
        };
        if insecure {
            return Ok(Tls(None));
        }
        install_provider();
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::ring::default_provider()));
        let verifier = roots::LazyRoots::new(extra, provider.clone());
        // The provider (ring) offers TLS 1.2 and 1.3, so the safe defaults cannot be refused.
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| super::RegistryError::Source {
                source_name: "TLS".into(),
                reason: e.to_string(),
            })?
            .dangerous()
            .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
            .with_no_client_auth();
        // What reqwest offers with HTTP/2 enabled (it sets ALPN only on configs it builds).
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Tls(Some(config)))
    }

    /// A blocking client builder with this setting. Builders from one `Tls` share its
    /// verifier, so the roots are read once for all of them.
    pub fn builder(&self) -> reqwest::blocking::ClientBuilder {
        let builder = client_builder();
        match &self.0 {
            Some(config) => builder.tls_backend_preconfigured(config.clone()),
            None => builder.danger_accept_invalid_certs(true),
        }
    }
}

/// [`Tls::builder`] of a setting made for one client (a catalogd URL, a lookaside store).
pub fn client_with_tls(
    ca_file: Option<&std::path::Path>,
    insecure: bool,
) -> Result<reqwest::blocking::ClientBuilder, super::RegistryError> {
    Ok(Tls::new(ca_file, insecure)?.builder())
}

/// The certificates of a `--ca-file`: a PEM bundle of at least one.
fn read_ca_file(
    ca: &std::path::Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, super::RegistryError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let pem =
        std::fs::read(ca).map_err(|e| super::RegistryError::io("cannot read --ca-file", ca, e))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| super::RegistryError::CaFile {
            path: ca.display().to_string(),
            reason: format!("not a PEM certificate bundle: {e}"),
        })?;
    if certs.is_empty() {
        return Err(super::RegistryError::CaFile {
            path: ca.display().to_string(),
            reason: "no PEM certificate in the file".into(),
        });
    }
    Ok(certs)
}

/// Installs `ring` as rustls' process-wide provider, once. A provider installed earlier by
/// the embedding program wins (rustls refuses a second one), which is what that program asked.
pub fn install_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is already installed: then that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
