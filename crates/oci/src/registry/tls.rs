//! Where every HTTP client starts: reqwest with rustls on the `ring` crypto provider.
//!
//! reqwest's default TLS brings rustls on aws-lc-rs, a second crypto library of several MB
//! (and a long C build) beside the RustCrypto crates signing already needs. reqwest is built
//! with `rustls-no-provider` instead, which makes the provider the process's job: a client
//! built before one is installed panics. Every client is therefore started here, and this
//! installs `ring` first. Verification is unchanged: reqwest still checks certificates with
//! rustls-platform-verifier against the system's roots (plus `--ca-file` ones), and only
//! `danger_accept_invalid_certs` (the user's `--insecure`) turns it off.

use std::sync::Once;

/// A blocking client builder with the TLS provider installed: the only way olmpack (and its
/// tests) should start a `reqwest` client, so none can panic for want of a provider.
pub fn client_builder() -> reqwest::blocking::ClientBuilder {
    install_provider();
    reqwest::blocking::Client::builder()
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

/// `builder` trusting the PEM roots of `ca_file` (`--ca-file`) beside the system's: one reader
/// of that file for the registry client and for the other HTTP clients (a catalogd URL).
pub fn with_ca_file(
    mut builder: reqwest::blocking::ClientBuilder,
    ca_file: Option<&std::path::Path>,
) -> Result<reqwest::blocking::ClientBuilder, super::RegistryError> {
    let Some(ca) = ca_file else {
        return Ok(builder);
    };
    let pem =
        std::fs::read(ca).map_err(|e| super::RegistryError::io("cannot read --ca-file", ca, e))?;
    let certs =
        reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| super::RegistryError::Source {
            source_name: ca.display().to_string(),
            reason: format!("not a PEM certificate bundle: {e}"),
        })?;
    if certs.is_empty() {
        return Err(super::RegistryError::Source {
            source_name: ca.display().to_string(),
            reason: "no certificate in the file".into(),
        });
    }
    for c in certs {
        builder = builder.add_root_certificate(c);
    }
    Ok(builder)
}
