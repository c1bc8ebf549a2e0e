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
/// [`client_with_tls`], which shares one certificate check among them.
pub fn client_builder() -> reqwest::blocking::ClientBuilder {
    install_provider();
    reqwest::blocking::Client::builder()
}

/// A blocking client builder whose HTTPS connections check certificates against the system's
/// roots plus the PEM roots of `ca_file` (`--ca-file`), or not at all with `insecure`
/// (`--insecure`): the one TLS setting of the registry client and the other HTTP clients (a
/// catalogd URL, a lookaside store).
///
/// The system's roots are loaded at the first TLS handshake, not here: reqwest's own
/// verifier reads them when the client is built, so a plain-HTTP registry (a loopback one, a
/// cluster's internal one) failed on a machine without CA certificates (a scratch or
/// distroless image) before any request, with a TLS error, and every command paid the read.
pub fn client_with_tls(
    ca_file: Option<&std::path::Path>,
    insecure: bool,
) -> Result<reqwest::blocking::ClientBuilder, super::RegistryError> {
    let extra = match ca_file {
        Some(ca) => read_ca_file(ca)?,
        None => Vec::new(),
    };
    let builder = client_builder();
    if insecure {
        // reqwest's own "accept anything" verifier: no roots are read at all.
        return Ok(builder.danger_accept_invalid_certs(true));
    }
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::ring::default_provider()));
    let verifier = roots::LazyRoots::new(extra, provider.clone());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| super::RegistryError::Source {
            source_name: "TLS".into(),
            reason: e.to_string(),
        })?
        .dangerous()
        .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
        .with_no_client_auth();
    // What reqwest offers with HTTP/2 enabled (it sets ALPN only on configs it builds itself).
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(builder.tls_backend_preconfigured(config))
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
