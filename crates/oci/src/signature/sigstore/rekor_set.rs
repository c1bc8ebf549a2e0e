//! The Rekor signed entry timestamp cosign attaches to a `.sig` layer (the annotation
//! `dev.sigstore.cosign/bundle`), verified as containers/image verifies it
//! (`signature/internal/rekor_set.go`, `VerifyRekorSET`): the annotation is exactly
//! `{"SignedEntryTimestamp", "Payload"}`; the payload, canonicalized (RFC 8785), is signed by
//! one of the Rekor keys (ECDSA over its SHA-256); its body is a `hashedrekord` 0.0.1 entry
//! naming this key or certificate, this signature, and the SHA-256 of this payload. The
//! entry's integrated time is what a Fulcio certificate must be valid at.

use super::bundle::decode_b64;
use super::crypto::{self, Hash};
use crate::signature::public_key::PublicKey;
use serde::Deserialize;
use sha2::Digest as _;

/// cosign's Rekor receipt annotation (`cosign/bundle.RekorBundle`), read strictly (both
/// members, nothing else, each once): one reader for the policy's SET check here and the
/// keyless `.sig` layer (`signature::keyless`). `T` holds the base64 members: `String` here
/// (the payload is canonicalized as written), `B64` there (decoded as read).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "RekorBundle")]
pub(crate) struct RekorReceipt<T> {
    /// Rekor's signature over the canonical payload.
    #[serde(rename = "SignedEntryTimestamp")]
    pub(crate) signed_entry_timestamp: T,
    /// What Rekor signed.
    #[serde(rename = "Payload")]
    pub(crate) payload: ReceiptPayload<T>,
}

/// The signed payload, read strictly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "RekorPayload")]
pub(crate) struct ReceiptPayload<T> {
    /// The canonicalized entry body, base64.
    pub(crate) body: T,
    /// When the entry was logged (Unix seconds).
    #[serde(rename = "integratedTime")]
    pub(crate) integrated_time: i64,
    /// The entry's index in the log.
    #[serde(rename = "logIndex")]
    pub(crate) log_index: i64,
    /// The log id, hex.
    #[serde(rename = "logID")]
    pub(crate) log_id: String,
}

/// RFC 8785's canonical form of the payload: members sorted, no whitespace, strings as
/// ECMAScript writes them (serde_json escapes the same characters for these ASCII members).
fn canonical(p: &ReceiptPayload<String>) -> Result<String, String> {
    let q = |s: &str| serde_json::to_string(s).map_err(|e| e.to_string());
    Ok(format!(
        "{{\"body\":{},\"integratedTime\":{},\"logID\":{},\"logIndex\":{}}}",
        q(&p.body)?,
        p.integrated_time,
        q(&p.log_id)?,
        p.log_index
    ))
}

/// The keys a policy may name for Rekor: containers/image takes ECDSA keys only.
pub fn is_rekor_key(k: &PublicKey) -> bool {
    matches!(
        k,
        PublicKey::P256(_) | PublicKey::P384(_) | PublicKey::P521(_)
    )
}

/// Verifies the SET annotation `set` with `rekor_keys` for the signature `sig_b64` (as the
/// `.sig` annotation holds it) of `payload` by the key or certificate `key_or_cert_pem`.
/// Returns the integrated time (Unix seconds).
pub fn verify(
    rekor_keys: &[PublicKey],
    set: &[u8],
    key_or_cert_pem: &[u8],
    sig_b64: &str,
    payload: &[u8],
) -> Result<i64, String> {
    let untrusted: RekorReceipt<String> =
        serde_json::from_slice(set).map_err(|e| format!("the Rekor SET cannot be read: {e}"))?;
    let sig = decode_b64(&untrusted.signed_entry_timestamp)
        .ok_or("the Rekor SET's SignedEntryTimestamp is not base64")?;
    let p = untrusted.payload;
    let canon = canonical(&p)?;
    let hash = sha2::Sha256::digest(canon.as_bytes());
    if !rekor_keys
        .iter()
        .any(|k| crypto::verify_prehash(k, Hash::Sha256, &hash, &sig))
    {
        return Err("cryptographic signature verification of Rekor SET failed".into());
    }
    let body = decode_b64(&p.body).ok_or("the Rekor SET body is not base64")?;
    check_hashedrekord(&body, key_or_cert_pem, sig_b64, payload)?;
    Ok(p.integrated_time)
}

/// The `hashedrekord` 0.0.1 body names this key or certificate, this signature and this
/// payload's SHA-256.
fn check_hashedrekord(
    body: &[u8],
    key_or_cert_pem: &[u8],
    sig_b64: &str,
    payload: &[u8],
) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| format!("decoding the body of a Rekor SET payload: {e}"))?;
    if v["kind"].as_str() != Some("hashedrekord") {
        return Err(format!(
            "the Rekor entry is of kind {}, not hashedrekord",
            v["kind"]
        ));
    }
    match v["apiVersion"].as_str() {
        None => return Err("missing Rekor SET Payload API version".into()),
        Some("0.0.1") => {}
        Some(o) => {
            return Err(format!(
                "unsupported Rekor SET Payload hashedrekord version {o:?}"
            ));
        }
    }
    let spec = &v["spec"];
    let logged_key = spec["signature"]["publicKey"]["content"]
        .as_str()
        .ok_or(r#"missing "signature.publicKey" field in hashedrekord"#)?;
    let logged_pem = decode_b64(logged_key).ok_or("the logged public key is not base64")?;
    let logged = super::x509_verify::single_pem(&logged_pem, "publicKey in Rekor SET")?;
    let given = super::x509_verify::single_pem(
        key_or_cert_pem,
        "public key or cert to be matched against publicKey in Rekor SET",
    )?;
    if logged != given {
        return Err("publicKey in Rekor SET does not match".into());
    }
    let sig = decode_b64(sig_b64.trim()).ok_or("decoding signature base64 failed")?;
    let logged_sig = spec["signature"]["content"]
        .as_str()
        .and_then(decode_b64)
        .ok_or(r#"missing "signature" field in hashedrekord"#)?;
    if logged_sig != sig {
        return Err("signature in Rekor SET does not match".into());
    }
    let h = &spec["data"]["hash"];
    match h["algorithm"].as_str() {
        Some("sha256") => {}
        other => {
            return Err(format!(
                r#"unexpected "data.hash.algorithm" value {other:?}"#
            ));
        }
    }
    let value = h["value"]
        .as_str()
        .ok_or(r#"missing "data.hash.value" field in hashedrekord"#)?;
    if !value.eq_ignore_ascii_case(&super::tlog::hex(&sha2::Sha256::digest(payload))) {
        return Err("payload in Rekor SET does not match".into());
    }
    Ok(())
}

/// A public key as PEM (`PUBLIC KEY`), as containers/image re-marshals a policy key before
/// matching it with the key a Rekor entry names.
pub fn key_pem(k: &PublicKey) -> Result<Vec<u8>, String> {
    use p256::pkcs8::EncodePublicKey as _;
    let der = match k {
        PublicKey::P256(k) => k.to_public_key_der(),
        PublicKey::P384(k) => k.to_public_key_der(),
        PublicKey::P521(k) => k.to_public_key_der(),
        PublicKey::Ed25519(k) => k.to_public_key_der(),
        PublicKey::Rsa(k) => k.to_public_key_der(),
    }
    .map_err(|e| format!("cannot encode the key: {e}"))?;
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, der.as_bytes());
    let mut pem = String::from("-----BEGIN PUBLIC KEY-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END PUBLIC KEY-----\n");
    Ok(pem.into_bytes())
}
