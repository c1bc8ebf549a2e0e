//! The signing certificate: issued by a Fulcio CA of the trusted root, valid when it signed,
//! for code signing, naming the identity and issuer asked for (cosign's matching), and logged
//! in a CT log (its embedded SCT, RFC 6962).

use super::Refusal;
use super::crypto::{self, Hash};
use super::trust::{self, TrustedRoot};
use crate::signature::public_key::PublicKey;
use sha2::Digest as _;
use x509_cert::Certificate;
use x509_cert::der::{self, Decode as _, Encode as _};
use x509_cert::ext::pkix::name::GeneralName;

/// Fulcio's v1 issuer extension (the raw issuer URL as the extension's value).
pub const OID_ISSUER_V1: &str = "1.3.6.1.4.1.57264.1.1";
/// Fulcio's v2 issuer extension (a DER UTF8String).
pub const OID_ISSUER_V2: &str = "1.3.6.1.4.1.57264.1.8";
/// Fulcio's OtherName SAN (a username identity).
const OID_OTHERNAME_SAN: &str = "1.3.6.1.4.1.57264.1.7";
/// The embedded SCT list extension (RFC 6962 section 3.3).
const OID_SCT_LIST: &str = "1.3.6.1.4.1.11129.2.4.2";
const OID_SAN: &str = "2.5.29.17";
const OID_KEY_USAGE: &str = "2.5.29.15";
const OID_EXT_KEY_USAGE: &str = "2.5.29.37";
const OID_BASIC_CONSTRAINTS: &str = "2.5.29.19";
const OID_CODE_SIGNING: &str = "1.3.6.1.5.5.7.3.3";

/// A parsed certificate with what verification keeps asking for.
#[derive(Debug, Clone)]
pub struct Cert {
    /// The DER as given.
    pub der: Vec<u8>,
    /// The parsed certificate.
    pub cert: Certificate,
    /// Its public key.
    pub key: PublicKey,
    /// notBefore, Unix seconds.
    pub not_before: i64,
    /// notAfter, Unix seconds.
    pub not_after: i64,
}

impl Cert {
    /// Parses a DER certificate whose key Sigstore signs with.
    pub fn from_der(der: &[u8]) -> Result<Cert, String> {
        let cert = Certificate::from_der(der).map_err(|e| format!("not a DER certificate: {e}"))?;
        let spki = cert
            .tbs_certificate
            .subject_public_key_info
            .to_der()
            .map_err(|e| e.to_string())?;
        let key = crypto::key_from_spki(&spki)
            .ok_or("its public key is not a kind Sigstore signs with".to_string())?;
        let v = &cert.tbs_certificate.validity;
        let secs = |t: x509_cert::time::Time| t.to_unix_duration().as_secs() as i64;
        Ok(Cert {
            der: der.to_vec(),
            not_before: secs(v.not_before),
            not_after: secs(v.not_after),
            key,
            cert,
        })
    }

    fn ext(&self, oid: &str) -> Option<&[u8]> {
        self.cert
            .tbs_certificate
            .extensions
            .as_ref()?
            .iter()
            .find(|e| e.extn_id.to_string() == oid)
            .map(|e| e.extn_value.as_bytes())
    }

    /// Whether `self` (a certificate) was signed by `issuer`'s key, under `issuer`'s name.
    pub fn signed_by(&self, issuer: &Cert) -> bool {
        if self.cert.tbs_certificate.issuer != issuer.cert.tbs_certificate.subject {
            return false;
        }
        let Ok(tbs) = self.cert.tbs_certificate.to_der() else {
            return false;
        };
        let alg = self.cert.signature_algorithm.oid.to_string();
        let Some(sig) = self.cert.signature.as_bytes() else {
            return false;
        };
        if crypto::is_ed25519(&alg) {
            return crypto::verify(&issuer.key, Hash::Sha256, &tbs, sig);
        }
        match crypto::hash_of_algorithm(&alg) {
            Some(h) => crypto::verify(&issuer.key, h, &tbs, sig),
            None => false,
        }
    }

    /// Whether the certificate was valid at `t` (Unix seconds; both ends inclusive).
    pub fn valid_at(&self, t: i64) -> bool {
        self.not_before <= t && t <= self.not_after
    }

    fn is_ca(&self) -> bool {
        self.ext(OID_BASIC_CONSTRAINTS)
            .and_then(|b| x509_cert::ext::pkix::BasicConstraints::from_der(b).ok())
            .is_some_and(|b| b.ca)
    }

    /// The identities of the subject alternative names: emails, URIs, Fulcio's OtherName.
    pub fn identities(&self) -> Vec<String> {
        let Some(san) = self
            .ext(OID_SAN)
            .and_then(|b| x509_cert::ext::pkix::SubjectAltName::from_der(b).ok())
        else {
            return Vec::new();
        };
        san.0
            .iter()
            .filter_map(|n| match n {
                GeneralName::Rfc822Name(s) => Some(s.to_string()),
                GeneralName::UniformResourceIdentifier(s) => Some(s.to_string()),
                GeneralName::DnsName(s) => Some(s.to_string()),
                GeneralName::OtherName(o) if o.type_id.to_string() == OID_OTHERNAME_SAN => o
                    .value
                    .decode_as::<der::asn1::Utf8StringRef<'_>>()
                    .ok()
                    .map(|s| s.as_str().to_string()),
                _ => None,
            })
            .collect()
    }

    /// The OIDC issuer Fulcio wrote: the v2 extension (a DER UTF8String), else the legacy v1
    /// one (the raw URL bytes), as cosign reads them.
    pub fn oidc_issuer(&self) -> Option<String> {
        if let Some(v) = self.ext(OID_ISSUER_V2) {
            return der::asn1::Utf8StringRef::from_der(v)
                .ok()
                .map(|s| s.as_str().to_string());
        }
        self.ext(OID_ISSUER_V1)
            .and_then(|v| std::str::from_utf8(v).ok())
            .map(str::to_string)
    }
}

/// Checks the signing certificate `leaf` against the Fulcio CAs of `root` at the signing time
/// `t`: issued by a CA valid then, every certificate of the chain valid then, for code
/// signing and not a CA. Returns the issuing certificate (for the SCT).
pub fn verify_chain(leaf: &Cert, root: &TrustedRoot, t: i64) -> Result<Cert, Refusal> {
    if leaf.is_ca() {
        return Err(Refusal::CertificateUsage(
            "the signing certificate is a CA certificate".into(),
        ));
    }
    if let Some(ku) = leaf
        .ext(OID_KEY_USAGE)
        .and_then(|b| x509_cert::ext::pkix::KeyUsage::from_der(b).ok())
        && !ku.digital_signature()
    {
        return Err(Refusal::CertificateUsage(
            "the signing certificate's key usage lacks digitalSignature".into(),
        ));
    }
    let code_signing = leaf
        .ext(OID_EXT_KEY_USAGE)
        .and_then(|b| x509_cert::ext::pkix::ExtendedKeyUsage::from_der(b).ok())
        .is_some_and(|e| e.0.iter().any(|o| o.to_string() == OID_CODE_SIGNING));
    if !code_signing {
        return Err(Refusal::CertificateUsage(
            "the signing certificate is not for code signing (no extended key usage codeSigning)"
                .into(),
        ));
    }
    let mut why = String::from("no certificate authority in the trusted root");
    for ca in &root.certificate_authorities {
        let chain: Vec<Cert> = ca
            .cert_chain
            .certificates
            .iter()
            .filter_map(|c| Cert::from_der(&c.raw_bytes.0).ok())
            .collect();
        let Some(issuer) = chain.first() else {
            continue;
        };
        if !leaf.signed_by(issuer) {
            why = format!(
                "the certificate was not issued by any certificate authority of the trusted root (last tried: {})",
                ca.uri
            );
            continue;
        }
        // The CA's own chain must hold together up to a self-signed root.
        let linked = chain.windows(2).all(|w| w[0].signed_by(&w[1]))
            && chain.last().is_some_and(|r| r.signed_by(r));
        if !linked {
            why = format!("the trusted root's chain for {} does not link up", ca.uri);
            continue;
        }
        if !trust::in_range(&ca.valid_for, t) {
            why = format!(
                "the certificate authority {} was not trusted at the signing time {}",
                ca.uri,
                super::rfc3339(t)
            );
            continue;
        }
        if let Some(c) = chain.iter().find(|c| !c.valid_at(t)) {
            return Err(Refusal::CertificateTime(format!(
                "a CA certificate of the chain ({}) was not valid at the signing time {}",
                c.cert.tbs_certificate.subject,
                super::rfc3339(t)
            )));
        }
        return Ok(issuer.clone());
    }
    Err(Refusal::CertificateChain(why))
}

/// Checks an embedded SCT of `leaf` (issued by `issuer`) against the CT logs of `root`: at
/// least one SCT must be signed by a known CT log over the precertificate.
pub fn verify_sct(leaf: &Cert, issuer: &Cert, root: &TrustedRoot) -> Result<(), Refusal> {
    let ext = leaf.ext(OID_SCT_LIST).ok_or_else(|| {
        Refusal::Sct("the certificate has no embedded SCT (RFC 6962 extension)".into())
    })?;
    let list = der::asn1::OctetStringRef::from_der(ext)
        .map_err(|e| Refusal::Sct(format!("the SCT extension is not an OCTET STRING: {e}")))?;
    let scts = parse_sct_list(list.as_bytes())
        .ok_or_else(|| Refusal::Sct("the SCT list cannot be read (RFC 6962 encoding)".into()))?;
    // The precertificate: the certificate's TBS without the SCT list.
    let mut tbs = leaf.cert.tbs_certificate.clone();
    if let Some(exts) = tbs.extensions.as_mut() {
        exts.retain(|e| e.extn_id.to_string() != OID_SCT_LIST);
    }
    let tbs = tbs
        .to_der()
        .map_err(|e| Refusal::Sct(format!("cannot re-encode the certificate: {e}")))?;
    let issuer_spki = issuer
        .cert
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .map_err(|e| Refusal::Sct(e.to_string()))?;
    let issuer_key_hash = sha2::Sha256::digest(&issuer_spki);
    let mut why = "no SCT".to_string();
    for sct in &scts {
        let Some(log) = root.ctlogs.iter().find(|l| l.log_id.key_id.0 == sct.log_id) else {
            why = "no SCT is from a CT log of the trusted root".into();
            continue;
        };
        let Some(key) = crypto::key_from_spki(&log.public_key.raw_bytes.0) else {
            why = format!("the CT log {} has a key olmpack cannot read", log.base_url);
            continue;
        };
        if !trust::in_range(&log.public_key.valid_for, (sct.timestamp / 1000) as i64) {
            why = format!(
                "the CT log {} key was not valid when the SCT was made",
                log.base_url
            );
            continue;
        }
        let mut msg = vec![0u8, 0u8];
        msg.extend_from_slice(&sct.timestamp.to_be_bytes());
        msg.extend_from_slice(&1u16.to_be_bytes());
        msg.extend_from_slice(&issuer_key_hash);
        let n = tbs.len() as u32;
        msg.extend_from_slice(&n.to_be_bytes()[1..]);
        msg.extend_from_slice(&tbs);
        msg.extend_from_slice(&(sct.extensions.len() as u16).to_be_bytes());
        msg.extend_from_slice(&sct.extensions);
        // RFC 5246's HashAlgorithm: an unknown value is refused, never read as SHA-256.
        let hash = match sct.hash_alg {
            4 => Hash::Sha256,
            5 => Hash::Sha384,
            6 => Hash::Sha512,
            other => {
                why = format!(
                    "the SCT's hash algorithm {other} is none of SHA-256 (4), SHA-384 (5), SHA-512 (6)"
                );
                continue;
            }
        };
        if crypto::verify(&key, hash, &msg, &sct.signature) {
            return Ok(());
        }
        why = format!(
            "the SCT does not verify with the key of the CT log {}",
            log.base_url
        );
    }
    Err(Refusal::Sct(why))
}

struct Sct {
    log_id: Vec<u8>,
    timestamp: u64,
    extensions: Vec<u8>,
    hash_alg: u8,
    signature: Vec<u8>,
}

/// Reads a TLS-encoded `SignedCertificateTimestampList`; `None` when it is not one.
fn parse_sct_list(b: &[u8]) -> Option<Vec<Sct>> {
    let mut r = Reader(b);
    let total = r.u16()? as usize;
    let mut list = Reader(r.take(total)?);
    let mut out = Vec::new();
    while !list.0.is_empty() {
        let len = list.u16()? as usize;
        let mut s = Reader(list.take(len)?);
        if s.u8()? != 0 {
            continue; // only v1 SCTs exist
        }
        let log_id = s.take(32)?.to_vec();
        let timestamp = u64::from_be_bytes(s.take(8)?.try_into().ok()?);
        let elen = s.u16()? as usize;
        let extensions = s.take(elen)?.to_vec();
        let hash_alg = s.u8()?;
        let _sig_alg = s.u8()?;
        let slen = s.u16()? as usize;
        let signature = s.take(slen)?.to_vec();
        out.push(Sct {
            log_id,
            timestamp,
            extensions,
            hash_alg,
            signature,
        });
    }
    (!r.0.is_empty()).then_some(()).map_or(Some(out), |_| None)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
}
