//! The certificate check of olmpack's HTTPS clients: rustls-platform-verifier over the
//! system's roots plus `--ca-file`'s, built at the first TLS handshake instead of when the
//! client is built.
//!
//! Building it reads every file of the system's CA store (`/etc/ssl/certs`, or
//! `SSL_CERT_FILE`/`SSL_CERT_DIR`) and fails when there is none, so a client that never speaks
//! TLS (a plain-HTTP registry) should not build it. The system-only verifier is built once per
//! process and shared; one with `--ca-file` roots once per [`super::Tls`] (a registry's clients
//! share theirs).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_platform_verifier::Verifier;
use std::sync::{Arc, OnceLock};

/// A verifier built, or why it could not be.
type Built = Result<Arc<Verifier>, rustls::Error>;

/// The system-roots verifier, shared by every client without extra roots.
static SYSTEM: OnceLock<Built> = OnceLock::new();

/// A [`ServerCertVerifier`] that builds the platform verifier when a certificate is first
/// checked. Signatures are checked with the provider's algorithms, as the platform verifier
/// checks them, without building it.
#[derive(Debug)]
pub(super) struct LazyRoots {
    extra: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    own: OnceLock<Built>,
}

impl LazyRoots {
    /// A verifier trusting the system's roots plus `extra`.
    pub(super) fn new(extra: Vec<CertificateDer<'static>>, provider: Arc<CryptoProvider>) -> Self {
        LazyRoots {
            extra,
            provider,
            own: OnceLock::new(),
        }
    }

    fn verifier(&self) -> Result<&Verifier, rustls::Error> {
        let cell = if self.extra.is_empty() {
            &SYSTEM
        } else {
            &self.own
        };
        let built = cell.get_or_init(|| {
            Verifier::new_with_extra_roots(self.extra.iter().cloned(), self.provider.clone())
                .map(Arc::new)
                .map_err(|e| match e {
                    // The platform verifier's words name no remedy.
                    rustls::Error::General(why) if why.contains("No CA certificates") => {
                        rustls::Error::General(
                            "no CA certificates on this system to check the server's against \
                             (install ca-certificates, or give the server's CA with --ca-file)"
                                .into(),
                        )
                    }
                    other => other,
                })
        });
        match built {
            Ok(v) => Ok(v),
            Err(e) => Err(e.clone()),
        }
    }
}

impl ServerCertVerifier for LazyRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
