//! RFC 3161 timestamps of a bundle's signature (`verificationMaterial.timestampVerificationData`):
//! the time a timestamp authority of the trusted root vouches the signature existed at. Rekor v2
//! entries carry no signed entry timestamp, so this is their only source of a signing time.
//!
//! Each timestamp is a DER `TimeStampResp` (RFC 3161 section 2.4.2) whose token is a CMS
//! `SignedData` (RFC 5652) over a `TSTInfo`. It counts only when all of these hold, the rules
//! sigstore-python (`rfc3161-client`) and sigstore-go (`timestamp-authority/pkg/verification`)
//! apply:
//! - the status is `granted`, the token is `SignedData` holding a `TSTInfo`, with one signer;
//! - the `TSTInfo`'s message imprint is the hash (SHA-256/384/512) of the bundle's signature bytes;
//! - the signed attributes name the `TSTInfo` content type and its digest;
//! - the signer is the leaf of a timestamp authority of the trusted root (a certificate embedded in
//!   the token must be that very certificate), with a critical timeStamping extended key usage;
//!   its signature over the signed attributes verifies with the leaf's key;
//! - the authority's chain links up to a self-signed root, every certificate valid at `genTime`;
//! - `genTime` is inside the authority's `validFor` range of the trusted root (both ends inclusive).
//!
//! The CMS and TSP structures are read with RustCrypto's `cms` and `x509-tsp` (types only, on the
//! `der`/`x509-cert` already built); the signatures are checked by [`super::crypto`].

use super::Refusal;
use super::cert::Cert;
use super::crypto::{self, Hash};
use super::trust::{self, CertificateAuthority, TrustedRoot};
use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier, SignerInfo};
use x509_cert::der::{self, Decode as _, Encode as _};
use x509_tsp::{TimeStampResp, TstInfo};

/// At most this many timestamps in one bundle (sigstore-go's and sigstore-python's limit).
pub const MAX_TIMESTAMPS: usize = 32;

const OID_SIGNED_DATA: &str = "1.2.840.113549.1.7.2";
const OID_TST_INFO: &str = "1.2.840.113549.1.9.16.1.4";
const OID_CONTENT_TYPE: &str = "1.2.840.113549.1.9.3";
const OID_MESSAGE_DIGEST: &str = "1.2.840.113549.1.9.4";
const OID_SHA256: &str = "2.16.840.1.101.3.4.2.1";
const OID_SHA384: &str = "2.16.840.1.101.3.4.2.2";
const OID_SHA512: &str = "2.16.840.1.101.3.4.2.3";
const OID_EXT_KEY_USAGE: &str = "2.5.29.37";
const OID_SUBJECT_KEY_ID: &str = "2.5.29.14";
const OID_TIME_STAMPING: &str = "1.3.6.1.5.5.7.3.8";

/// Verifies every RFC 3161 timestamp of a bundle over `signature` (the bundle's signature bytes:
/// the message signature or the DSSE envelope's one) against the timestamp authorities of
/// `root`, and returns their times (Unix seconds), in the bundle's order. Any timestamp that
/// does not verify refuses the bundle, naming which one and why: a verifier that skipped the
/// bad ones would let a forged time ride beside a good one.
pub fn verify_all(
    timestamps: &[&[u8]],
    signature: &[u8],
    root: &TrustedRoot,
) -> Result<Vec<i64>, Refusal> {
    if timestamps.len() > MAX_TIMESTAMPS {
        return Err(Refusal::Timestamp(format!(
            "the bundle carries {} timestamps, at most {MAX_TIMESTAMPS} are read",
            timestamps.len()
        )));
    }
    for (i, t) in timestamps.iter().enumerate() {
        if timestamps[..i].contains(t) {
            return Err(Refusal::Timestamp(format!(
                "timestamp {} is a duplicate of an earlier one",
                i + 1
            )));
        }
    }
    if !timestamps.is_empty() && root.timestamp_authorities.is_empty() {
        return Err(Refusal::Timestamp(
            "the bundle carries RFC 3161 timestamps but the trusted root lists no timestamp authority".into(),
        ));
    }
    let many = timestamps.len() > 1;
    timestamps
        .iter()
        .enumerate()
        .map(|(i, der)| {
            verify_one(der, signature, root).map_err(|why| {
                Refusal::Timestamp(if many {
                    format!("timestamp {}: {why}", i + 1)
                } else {
                    why
                })
            })
        })
        .collect()
}

/// One timestamp: its `genTime` (Unix seconds), or why it does not count.
fn verify_one(der_bytes: &[u8], signature: &[u8], root: &TrustedRoot) -> Result<i64, String> {
    let token = read_token(der_bytes)?;
    let (signed, tst_der, tst) = read_signed_data(&token)?;
    // The imprint: the hash of the bundle's signature.
    let imprint_hash = hash_of_oid(&tst.message_imprint.hash_algorithm.oid.to_string())
        .ok_or_else(|| {
            format!(
                "the message imprint's hash {} is none of SHA-256, SHA-384, SHA-512",
                tst.message_imprint.hash_algorithm.oid
            )
        })?;
    if imprint_hash.digest(signature) != tst.message_imprint.hashed_message.as_bytes() {
        return Err(
            "its message imprint is not the hash of this bundle's signature (it timestamps something else)"
                .into(),
        );
    }
    let gen_time = tst.gen_time.to_unix_duration().as_secs() as i64;
    let [signer] = signed.signer_infos.0.as_slice() else {
        return Err(format!(
            "the token has {} signers, a timestamp has one",
            signed.signer_infos.0.len()
        ));
    };
    let signed_attrs = check_signed_attributes(signer, &tst_der)?;
    let embedded = embedded_signer(&signed, signer)?;
    let mut why = String::from("no timestamp authority of the trusted root signed it");
    for tsa in &root.timestamp_authorities {
        match check_authority(tsa, signer, &signed_attrs, embedded.as_deref(), gen_time) {
            Ok(()) => return Ok(gen_time),
            Err(Skip::NotThisOne) => continue,
            Err(Skip::Refused(w)) => why = w,
        }
    }
    Err(why)
}

/// Why an authority of the trusted root did not vouch for a timestamp.
enum Skip {
    /// The token is not this authority's (another signer).
    NotThisOne,
    /// It is this authority's, and something is wrong (kept for the message).
    Refused(String),
}

/// Reads a `TimeStampResp` (as Sigstore bundles carry them) down to its token; a bare token
/// (`ContentInfo`) is refused: the bundle format says a response.
fn read_token(der_bytes: &[u8]) -> Result<ContentInfo, String> {
    let resp = TimeStampResp::from_der(der_bytes)
        .map_err(|e| format!("not a DER RFC 3161 TimeStampResp: {e}"))?;
    // PKIStatus granted (0) only, as rfc3161-client requires.
    let status = resp.status.status as u8;
    if status != 0 {
        return Err(format!(
            "the response's status is {status}, not granted (0)"
        ));
    }
    resp.time_stamp_token
        .ok_or_else(|| "the response carries no timestamp token".to_string())
}

/// The token's `SignedData`, the DER of its `TSTInfo` and the `TSTInfo` read.
fn read_signed_data(token: &ContentInfo) -> Result<(SignedData, Vec<u8>, TstInfo), String> {
    if token.content_type.to_string() != OID_SIGNED_DATA {
        return Err(format!(
            "the token is CMS {}, not SignedData",
            token.content_type
        ));
    }
    let signed: SignedData = token
        .content
        .decode_as()
        .map_err(|e| format!("the token's SignedData cannot be read: {e}"))?;
    let encap = &signed.encap_content_info;
    if encap.econtent_type.to_string() != OID_TST_INFO {
        return Err(format!(
            "the token signs {}, not a TSTInfo",
            encap.econtent_type
        ));
    }
    let content = encap
        .econtent
        .as_ref()
        .ok_or("the token's TSTInfo is absent (detached)")?;
    let octets: der::asn1::OctetString = content
        .decode_as()
        .map_err(|e| format!("the token's content is not an OCTET STRING: {e}"))?;
    let tst_der = octets.as_bytes().to_vec();
    let tst =
        TstInfo::from_der(&tst_der).map_err(|e| format!("the TSTInfo cannot be read: {e}"))?;
    Ok((signed, tst_der, tst))
}

/// Checks the signer's signed attributes (content type `TSTInfo`, message digest of the
/// `TSTInfo`) and returns their DER, which the signature covers.
fn check_signed_attributes(signer: &SignerInfo, tst_der: &[u8]) -> Result<Vec<u8>, String> {
    let attrs = signer
        .signed_attrs
        .as_ref()
        .ok_or("the signer has no signed attributes (a TSA signs them)")?;
    let value_of = |oid: &str| -> Result<&der::Any, String> {
        let mut found = attrs.iter().filter(|a| a.oid.to_string() == oid);
        let (Some(a), None) = (found.next(), found.next()) else {
            return Err(format!("the signed attribute {oid} is absent or repeated"));
        };
        match a.values.as_slice() {
            [v] => Ok(v),
            _ => Err(format!(
                "the signed attribute {oid} has not exactly one value"
            )),
        }
    };
    let ct: der::asn1::ObjectIdentifier = value_of(OID_CONTENT_TYPE)?
        .decode_as()
        .map_err(|e| format!("the content-type attribute cannot be read: {e}"))?;
    if ct.to_string() != OID_TST_INFO {
        return Err(format!(
            "the content-type attribute names {ct}, not TSTInfo"
        ));
    }
    let md: der::asn1::OctetString = value_of(OID_MESSAGE_DIGEST)?
        .decode_as()
        .map_err(|e| format!("the message-digest attribute cannot be read: {e}"))?;
    let hash = hash_of_oid(&signer.digest_alg.oid.to_string()).ok_or_else(|| {
        format!(
            "the signer's digest algorithm {} is none of SHA-256, SHA-384, SHA-512",
            signer.digest_alg.oid
        )
    })?;
    if hash.digest(tst_der) != md.as_bytes() {
        return Err("the message-digest attribute is not the digest of the TSTInfo".into());
    }
    // Re-encoded as DER (a SET OF, sorted): what the signer signed when its encoding was DER.
    attrs
        .to_der()
        .map_err(|e| format!("the signed attributes cannot be encoded: {e}"))
}

/// The DER of the certificate embedded in the token for `signer`, if the token embeds any.
fn embedded_signer(signed: &SignedData, signer: &SignerInfo) -> Result<Option<Vec<u8>>, String> {
    // An absent and an empty `certificates` (sigstore's TSA writes `[0]` with nothing in it
    // when asked for no certificates) both mean: none embedded.
    let Some(set) = signed.certificates.as_ref().filter(|s| !s.0.is_empty()) else {
        return Ok(None);
    };
    for c in set.0.iter() {
        let CertificateChoices::Certificate(c) = c else {
            continue;
        };
        if identifies(&signer.sid, c) {
            return c
                .to_der()
                .map(Some)
                .map_err(|e| format!("an embedded certificate cannot be encoded: {e}"));
        }
    }
    Err("the token embeds certificates, none of them its signer's".into())
}

/// Whether `sid` names certificate `c` (issuer and serial, or subject key identifier).
fn identifies(sid: &SignerIdentifier, c: &x509_cert::Certificate) -> bool {
    match sid {
        SignerIdentifier::IssuerAndSerialNumber(is) => {
            is.issuer == c.tbs_certificate.issuer
                && is.serial_number == c.tbs_certificate.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => ext(c, OID_SUBJECT_KEY_ID)
            .and_then(|v| x509_cert::ext::pkix::SubjectKeyIdentifier::from_der(v).ok())
            .is_some_and(|own| own.0 == ski.0),
    }
}

/// The value of extension `oid` of `c`, and whether it is critical.
fn ext<'c>(c: &'c x509_cert::Certificate, oid: &str) -> Option<&'c [u8]> {
    ext_critical(c, oid).map(|(v, _)| v)
}

fn ext_critical<'c>(c: &'c x509_cert::Certificate, oid: &str) -> Option<(&'c [u8], bool)> {
    c.tbs_certificate
        .extensions
        .as_ref()?
        .iter()
        .find(|e| e.extn_id.to_string() == oid)
        .map(|e| (e.extn_value.as_bytes(), e.critical))
}

/// Checks the token against one timestamp authority of the trusted root.
fn check_authority(
    tsa: &CertificateAuthority,
    signer: &SignerInfo,
    signed_attrs: &[u8],
    embedded: Option<&[u8]>,
    gen_time: i64,
) -> Result<(), Skip> {
    let chain: Vec<Cert> = tsa
        .cert_chain
        .certificates
        .iter()
        .map(|c| Cert::from_der(&c.raw_bytes.0))
        .collect::<Result<_, _>>()
        .map_err(|e| Skip::Refused(format!("the trusted root's authority {}: {e}", tsa.uri)))?;
    let Some(leaf) = chain.first() else {
        return Err(Skip::NotThisOne);
    };
    if !identifies(&signer.sid, &leaf.cert) {
        return Err(Skip::NotThisOne);
    }
    let name = if tsa.uri.is_empty() {
        leaf.cert.tbs_certificate.subject.to_string()
    } else {
        tsa.uri.clone()
    };
    let refuse = |w: String| Err(Skip::Refused(w));
    if embedded.is_some_and(|e| e != leaf.der.as_slice()) {
        return refuse(format!(
            "the certificate embedded in the token names the authority {name}'s signer but is not its certificate"
        ));
    }
    if chain.len() < 2 {
        return refuse(format!(
            "the trusted root's chain for {name} has no root certificate above its leaf"
        ));
    }
    // The signature over the signed attributes, with the signer's digest algorithm.
    let hash = hash_of_oid(&signer.digest_alg.oid.to_string()).unwrap_or(Hash::Sha256);
    if !crypto::verify(&leaf.key, hash, signed_attrs, signer.signature.as_bytes()) {
        return refuse(format!(
            "its signature does not verify with the key of the authority {name}"
        ));
    }
    // The authority's leaf is for timestamping (RFC 3161 section 2.3: critical, and only that).
    let eku = ext_critical(&leaf.cert, OID_EXT_KEY_USAGE);
    let stamping = eku.is_some_and(|(v, critical)| {
        critical
            && x509_cert::ext::pkix::ExtendedKeyUsage::from_der(v)
                .is_ok_and(|e| e.0.iter().any(|o| o.to_string() == OID_TIME_STAMPING))
    });
    if !stamping {
        return refuse(format!(
            "the authority {name}'s certificate lacks the critical timeStamping extended key usage"
        ));
    }
    let linked = chain.windows(2).all(|w| w[0].signed_by(&w[1]))
        && chain.last().is_some_and(|r| r.signed_by(r));
    if !linked {
        return refuse(format!(
            "the trusted root's chain for the authority {name} does not link up to a self-signed root"
        ));
    }
    if let Some(c) = chain.iter().find(|c| !c.valid_at(gen_time)) {
        return refuse(format!(
            "a certificate of the authority {name} ({}) was not valid at the timestamp's time {} (valid {} to {})",
            c.cert.tbs_certificate.subject,
            super::rfc3339(gen_time),
            super::rfc3339(c.not_before),
            super::rfc3339(c.not_after)
        ));
    }
    if !trust::in_range(&tsa.valid_for, gen_time) {
        return refuse(format!(
            "the timestamp's time {} is outside the trusted root's validity of the authority {name}",
            super::rfc3339(gen_time)
        ));
    }
    Ok(())
}

/// The hash of a digest algorithm OID.
fn hash_of_oid(oid: &str) -> Option<Hash> {
    match oid {
        OID_SHA256 => Some(Hash::Sha256),
        OID_SHA384 => Some(Hash::Sha384),
        OID_SHA512 => Some(Hash::Sha512),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Garbage, a truncated response and an empty list: refused or empty, never a panic.
    #[test]
    fn unreadable_timestamps_are_refused_not_panicked_on() {
        let root = TrustedRoot {
            timestamp_authorities: vec![CertificateAuthority::default()],
            ..TrustedRoot::default()
        };
        for bad in [
            &b""[..],
            b"\x30",
            b"\x30\x03\x02\x01\x00",
            b"not der at all",
        ] {
            let r = verify_all(&[bad], b"sig", &root);
            assert!(matches!(r, Err(Refusal::Timestamp(_))), "{bad:?}: {r:?}");
        }
        assert_eq!(verify_all(&[], b"sig", &root), Ok(vec![]));
        let many: Vec<&[u8]> = (0..=MAX_TIMESTAMPS).map(|_| &b"x"[..]).collect();
        assert!(verify_all(&many, b"sig", &root).is_err());
        assert!(matches!(
            verify_all(&[b"a", b"a"], b"sig", &root),
            Err(Refusal::Timestamp(w)) if w.contains("duplicate")
        ));
        assert!(matches!(
            verify_all(&[b"a"], b"sig", &TrustedRoot::default()),
            Err(Refusal::Timestamp(w)) if w.contains("no timestamp authority")
        ));
    }
}
