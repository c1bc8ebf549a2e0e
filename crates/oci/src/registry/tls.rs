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
