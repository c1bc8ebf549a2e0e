//! An image's keyless signatures (a Fulcio certificate, logged in Rekor), verified offline
//! through the one Sigstore verifier ([`super::sigstore::verify`]), whichever of cosign's two
//! places holds them:
//!
//! - the `sha256-<hex>.sig` tag (cosign 2, and what containers/image reads): each layer is a
//!   simple-signing payload whose annotations carry the signature
//!   (`dev.cosignproject.cosign/signature`), the certificate (`dev.sigstore.cosign/certificate`),
//!   its chain (`dev.sigstore.cosign/chain`) and the Rekor receipt (`dev.sigstore.cosign/bundle`:
//!   the signed entry timestamp over the entry body). That is the content of a Sigstore bundle
//!   v0.1 (a message signature over the payload, a certificate, a tlog entry with its SET and
//!   no inclusion proof), so [`layer_bundle`] writes it as one and the Sigstore verifier checks
//!   it: no second verifier to drift from the first;
//! - Sigstore bundle referrers (cosign 3): the bundle signs the image digest, as a message
//!   signature over the manifest or a DSSE in-toto statement whose subject is the image
//!   ([`check_image_bundle`]).
//!
//! What the payload or statement then claims (the digest, the repository) is checked by the
//! caller ([`super::cosign`]) exactly as for key-signed signatures.

use super::sigstore::bundle::{
    B64, Bundle, CertificateChain, HashOutput, I64, InclusionPromise, KindVersion, LogId,
    MessageSignature, RawBytes, TlogEntry, VerificationMaterial, decode_b64,
};
use super::sigstore::rekor_set::RekorReceipt;
use super::sigstore::{self, Artifact, Refusal, Signer, Verified, trust::TrustedRoot};

/// Annotation of a keyless `.sig` layer holding the signing certificate (PEM).
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// Annotation holding the certificate's issuers (PEM). Not trusted: the CAs come only from the
/// trusted root, as in sigstore-python and cosign with a trusted root.
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
/// Annotation holding the Rekor receipt (`{"SignedEntryTimestamp", "Payload": {...}}`).
pub const BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// Annotation holding an RFC 3161 timestamp (refused: not verified by olmpack yet).
pub const RFC3161_ANNOTATION: &str = "dev.sigstore.cosign/rfc3161timestamp";
/// The media type the layer's content is read as (Sigstore bundle v0.1: no inclusion proof is
/// required, the signed entry timestamp is the log's promise).
const V01: &str = "application/vnd.dev.sigstore.bundle+json;version=0.1";

/// Who may have signed, the trust anchors, and the time the log's time is checked against:
/// what a keyless verification of an image needs, read once by the caller.
#[derive(Debug, Clone)]
pub struct Keyless {
    /// The identity and issuer to match ([`Signer::Keyless`]).
    pub signer: Signer,
    /// The trusted root (Fulcio CAs, Rekor and CT log keys).
    pub root: TrustedRoot,
    /// Now, in Unix seconds.
    pub now: i64,
}

impl Keyless {
    /// The one Sigstore verifier, with these anchors.
    pub fn verify(&self, bundle: &Bundle, artifact: &Artifact) -> Result<Verified, Refusal> {
        sigstore::verify(bundle, artifact, &self.signer, &self.root, self.now)
    }
}

fn annotation<'a>(
    annotations: &'a serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Option<&'a str> {
    annotations.get(name).and_then(|v| v.as_str())
}

/// The Sigstore bundle (v0.1) a keyless `.sig` layer amounts to: `payload` (the layer's blob,
/// what was signed), `signature` (its `dev.cosignproject.cosign/signature` annotation, base64)
/// and its other annotations. Refused, naming what is missing, when the layer is
/// not a keyless signature (no certificate: signed with a key) or carries no Rekor receipt.
pub fn layer_bundle(
    payload: &[u8],
    signature: &str,
    annotations: &serde_json::Map<String, serde_json::Value>,
) -> Result<Bundle, Refusal> {
    let pem = annotation(annotations, CERTIFICATE_ANNOTATION).ok_or_else(|| {
        Refusal::CertificateChain(format!(
            "the layer has no {CERTIFICATE_ANNOTATION} annotation: it was signed with a key, not keyless; verify it with --key"
        ))
    })?;
    let (label, leaf) = x509_cert::der::pem::decode_vec(pem.trim().as_bytes()).map_err(|e| {
        Refusal::Malformed(format!(
            "{CERTIFICATE_ANNOTATION} is not a PEM certificate: {e}"
        ))
    })?;
    if label != "CERTIFICATE" {
        return Err(Refusal::Malformed(format!(
            "{CERTIFICATE_ANNOTATION} holds a PEM {label:?}, not a CERTIFICATE"
        )));
    }
    if annotations.contains_key(RFC3161_ANNOTATION) {
        return Err(Refusal::Unsupported(format!(
            "the layer carries an RFC 3161 timestamp ({RFC3161_ANNOTATION}), which olmpack does not verify yet"
        )));
    }
    let sig = decode_b64(signature)
        .ok_or_else(|| Refusal::Malformed("the layer's signature is not base64".into()))?;
    let receipt = annotation(annotations, BUNDLE_ANNOTATION).ok_or_else(|| {
        Refusal::TlogUnknown(format!(
            "the layer has no {BUNDLE_ANNOTATION} annotation: nothing shows the signature was logged in Rekor"
        ))
    })?;
    let receipt: RekorReceipt<B64> = serde_json::from_str(receipt)
        .map_err(|e| Refusal::Malformed(format!("{BUNDLE_ANNOTATION}: {e}")))?;
    let key_id = hex_bytes(&receipt.payload.log_id).ok_or_else(|| {
        Refusal::Malformed(format!(
            "{BUNDLE_ANNOTATION}: the logID {:?} is not hex",
            receipt.payload.log_id
        ))
    })?;
    // The body says what kind of entry it is; a body that is not JSON keeps an empty kind and
    // is refused by the entry check, naming it.
    let kind_version = serde_json::from_slice::<serde_json::Value>(&receipt.payload.body.0)
        .map(|b| KindVersion {
            kind: b["kind"].as_str().unwrap_or_default().to_string(),
            version: b["apiVersion"].as_str().unwrap_or_default().to_string(),
        })
        .unwrap_or_default();
    let signed = Artifact::of_bytes(payload);
    Ok(Bundle {
        media_type: V01.to_string(),
        verification_material: VerificationMaterial {
            x509_certificate_chain: Some(CertificateChain {
                certificates: vec![RawBytes {
                    raw_bytes: B64(leaf),
                }],
            }),
            tlog_entries: vec![TlogEntry {
                log_index: I64(receipt.payload.log_index),
                log_id: LogId {
                    key_id: B64(key_id),
                },
                kind_version,
                integrated_time: I64(receipt.payload.integrated_time),
                inclusion_promise: Some(InclusionPromise {
                    signed_entry_timestamp: receipt.signed_entry_timestamp,
                }),
                inclusion_proof: None,
                canonicalized_body: receipt.payload.body,
            }],
            ..VerificationMaterial::default()
        },
        message_signature: Some(MessageSignature {
            message_digest: Some(HashOutput {
                algorithm: "SHA2_256".into(),
                digest: B64(signed.sha256.to_vec()),
            }),
            signature: B64(sig),
        }),
        dsse_envelope: None,
    })
}

/// Verifies a keyless `.sig` layer: `payload` signed by a certificate of the identity asked
/// for, logged in Rekor. What the payload claims is the caller's to check.
pub fn check_layer(
    payload: &[u8],
    signature: &str,
    annotations: &serde_json::Map<String, serde_json::Value>,
    keyless: &Keyless,
) -> Result<Verified, Refusal> {
    let bundle = layer_bundle(payload, signature, annotations)?;
    keyless.verify(&bundle, &Artifact::of_bytes(payload))
}

/// Verifies a Sigstore bundle (JSON) of the image `digest`: a message signature over the
/// manifest (whose SHA-256 is the digest) or a DSSE statement whose subject is the digest.
pub fn check_image_bundle(
    bundle: &[u8],
    digest: &str,
    keyless: &Keyless,
) -> Result<Verified, Refusal> {
    let bundle = Bundle::from_json(bundle).map_err(Refusal::Malformed)?;
    let artifact = artifact_of_digest(digest).ok_or_else(|| {
        Refusal::Unsupported(format!(
            "the image digest {digest} is not sha256; Sigstore bundles of images sign a sha256 digest"
        ))
    })?;
    keyless.verify(&bundle, &artifact)
}

/// The artifact a `sha256:<hex>` digest names.
pub fn artifact_of_digest(digest: &str) -> Option<Artifact> {
    let hex = digest.strip_prefix("sha256:")?;
    let b = hex_bytes(hex)?;
    Some(Artifact {
        sha256: b.try_into().ok()?,
    })
}

/// Bytes of a hex string (either case); `None` when it is not hex.
fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a verified keyless signature vouches for, as `verify` prints it beside the payload.
pub fn signer_json(v: &Verified) -> serde_json::Value {
    serde_json::json!({
        "identities": v.identities,
        "issuer": v.issuer,
        "signingTime": sigstore::rfc3339(v.signing_time),
        "logIndex": v.log_index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(pairs: &[(&str, &str)]) -> serde_json::Map<String, serde_json::Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect()
    }

    #[test]
    fn a_layer_without_a_certificate_is_a_key_signature() {
        let e = layer_bundle(b"{}", "AA==", &ann(&[])).unwrap_err();
        assert!(matches!(e, Refusal::CertificateChain(_)), "{e}");
        assert!(e.to_string().contains("verify it with --key"), "{e}");
    }

    #[test]
    fn digests_and_hex_are_read_strictly() {
        let d = format!("sha256:{}", "ab".repeat(32));
        assert_eq!(artifact_of_digest(&d).unwrap().sha256, [0xab; 32]);
        assert!(artifact_of_digest("sha256:zz").is_none());
        assert!(artifact_of_digest(&format!("sha512:{}", "ab".repeat(64))).is_none());
        assert!(artifact_of_digest(&format!("sha256:{}", "ab".repeat(31))).is_none());
        assert_eq!(hex_bytes("0aFf"), Some(vec![0x0a, 0xff]));
        assert_eq!(hex_bytes("abc"), None);
        assert_eq!(hex_bytes("é1"), None);
    }
}
