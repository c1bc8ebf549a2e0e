//! in-toto attestations of an image, attached and verified as cosign attaches and verifies
//! them, so a delivery can say what it built and from what, and a consumer can check it.
//!
//! Two places, as cosign's two generations keep them:
//! - cosign 3: a Sigstore bundle v0.3 holding a DSSE envelope over the statement, stored as an
//!   OCI 1.1 referrer of the image (artifact type `application/vnd.dev.sigstore.bundle.v0.3+json`,
//!   annotations `dev.sigstore.bundle.content: dsse-envelope` and
//!   `dev.sigstore.bundle.predicateType: <type>`), or listed in the referrers tag where the
//!   registry has no referrers API ([`super::bundle_sign::attach_statement`]);
//! - cosign 2: the `sha256-<hex>.att` tag, one layer per attestation, each layer the DSSE
//!   envelope JSON (media type `application/vnd.dsse.envelope.v1+json`) with the annotation
//!   `predicateType` ([`attach_legacy`]).
//!
//! Verification fails closed, each refusal naming its reason: the envelope must verify with a
//! key given (or, keyless, through the whole Sigstore chain of [`super::sigstore::verify`]),
//! its payload be an in-toto statement with a subject whose digest is the image's, its
//! predicate type the one asked for, and agree with the type the referrer announces. The
//! statement given back is the one decoded from the verified bytes, never the announcement.

use super::cosign::{self, SIGN_PREDICATE_TYPE};
use super::keys::PrivateKey;
use super::lookaside::MAX_SIGNATURES;
use super::sigstore::{self, Refusal};
use super::store::{Target, descriptor_of};
use super::{Rejection, SignatureError};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

/// Media type of a cosign 2 attestation layer (a DSSE envelope).
pub const DSSE_MEDIA_TYPE: &str = "application/vnd.dsse.envelope.v1+json";
/// The annotation of a cosign 2 attestation layer naming the statement's predicate type.
pub const LEGACY_PREDICATE_ANNOTATION: &str = "predicateType";
/// SLSA provenance v1's predicate type.
pub const SLSA_PROVENANCE_V1: &str = "https://slsa.dev/provenance/v1";
/// The predicate type cosign gives an SPDX JSON document (`--type spdxjson`).
pub const SPDX_JSON: &str = "https://spdx.dev/Document";

/// The predicate type of a `--type` value: cosign's short names, or a URI as given.
pub fn predicate_type(short: &str) -> Option<&str> {
    Some(match short {
        "slsaprovenance1" => SLSA_PROVENANCE_V1,
        "slsaprovenance02" | "slsaprovenance" => "https://slsa.dev/provenance/v0.2",
        "spdxjson" | "spdx" => SPDX_JSON,
        "cyclonedx" => "https://cyclonedx.org/bom",
        "vuln" => "https://cosign.sigstore.dev/attestation/vuln/v1",
        "custom" => "https://cosign.sigstore.dev/attestation/v1",
        uri if uri.contains("://") => uri,
        _ => return None,
    })
}

/// The tag holding the cosign 2 attestations of `digest` (`sha256-<hex>.att`).
pub fn attestation_tag(digest: &str) -> String {
    format!("{}.att", digest.replacen(':', "-", 1))
}

/// A DSSE envelope over `statement` signed with `key`, as cosign 2 writes it in an `.att`
/// layer.
pub fn envelope(
    key: &PrivateKey,
    statement: &serde_json::Value,
) -> Result<Vec<u8>, SignatureError> {
    let body = serde_json::to_vec(statement)
        .map_err(|e| SignatureError::Unsupported(format!("in-toto statement: {e}")))?;
    let sig = key.sign(&sigstore::pae(
        super::bundle_sign::IN_TOTO_PAYLOAD_TYPE,
        &body,
    ))?;
    serde_json::to_vec(&serde_json::json!({
        "payloadType": super::bundle_sign::IN_TOTO_PAYLOAD_TYPE,
        "payload": B64.encode(&body),
        "signatures": [{"keyid": "", "sig": B64.encode(sig)}],
    }))
    .map_err(|e| SignatureError::Unsupported(e.to_string()))
}

/// One attestation written (or found already there).
#[derive(Debug, Clone)]
pub struct Attached {
    /// The statement's predicate type.
    pub predicate_type: String,
    /// Where: `REPO@sha256:… (referrer)` or `REPO:sha256-<hex>.att`.
    pub location: String,
    /// False when the very same attestation was already there.
    pub added: bool,
}

/// Adds `statement`, signed with `key`, as one layer of the image's `.att` tag (cosign 2).
pub fn attach_legacy(
    target: &Target,
    key: &PrivateKey,
    statement: &serde_json::Value,
) -> Result<Attached, SignatureError> {
    let tag = attestation_tag(&target.digest);
    let body = envelope(key, statement)?;
    let mut annotations = serde_json::Map::new();
    annotations.insert(
        LEGACY_PREDICATE_ANNOTATION.into(),
        statement["predicateType"]
            .as_str()
            .unwrap_or_default()
            .into(),
    );
    let written = cosign::append_layer(target, &tag, DSSE_MEDIA_TYPE, body, annotations)?;
    Ok(Attached {
        predicate_type: statement["predicateType"]
            .as_str()
            .unwrap_or_default()
            .into(),
        location: format!("{}:{tag}", target.base_name()),
        added: written.added,
    })
}

/// Attaches `statement` as a Sigstore bundle referrer of `target` (cosign 3).
pub fn attach_bundle(
    target: &Target,
    key: &PrivateKey,
    statement: &serde_json::Value,
) -> Result<Attached, SignatureError> {
    let b = super::bundle_sign::attach_statement(target, key, statement)?;
    Ok(Attached {
        predicate_type: statement["predicateType"]
            .as_str()
            .unwrap_or_default()
            .into(),
        location: format!("{}@{} (referrer)", target.base_name(), b.manifest_digest),
        added: b.added,
    })
}

/// Why one attestation found beside an image was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttestationRefusal {
    /// The envelope does not verify with the key(s) given (or is not in their form).
    #[error("{0}")]
    Signature(Rejection),
    /// Keyless: the Sigstore chain refused the bundle (the check named).
    #[error("{0}")]
    Keyless(Refusal),
    /// The statement is about another image.
    #[error("subject digest: the statement is about {found}, the image is {expected}")]
    Subject {
        /// The image's digest.
        expected: String,
        /// What the statement's subject names.
        found: String,
    },
    /// The statement's predicate type is not the one asked for (`--type`).
    #[error("predicate type: the statement is {found:?}, --type asks for {wanted:?}")]
    PredicateType {
        /// `--type`, as a URI.
        wanted: String,
        /// The verified statement's predicate type.
        found: String,
    },
    /// The referrer or layer announces another predicate type than the statement it holds.
    #[error(
        "predicate type: the attachment announces {announced:?}, the signed statement is {found:?}"
    )]
    Announced {
        /// The annotation's value.
        announced: String,
        /// The verified statement's predicate type.
        found: String,
    },
    /// The envelope or statement cannot be read as the format requires.
    #[error("malformed: {0}")]
    Malformed(String),
}

/// One attestation found beside an image and its verdict.
#[derive(Debug, Clone)]
pub struct Found {
    /// Where it was found (`REPO referrer sha256:…`, `REPO:sha256-<hex>.att layer 2`).
    pub source: String,
    /// `bundle` (cosign 3 referrer) or `legacy` (the `.att` tag).
    pub format: &'static str,
    /// The verified statement, or why it was refused.
    pub result: Result<serde_json::Value, AttestationRefusal>,
}

/// What vouches for an attestation's signer: keys, or keyless (the same as for signatures).
pub use super::cosign::Verifier;

/// Every attestation of `target` (its bundle referrers announcing a predicate type other than
/// cosign's signing one, and the layers of its `.att` tag), each verified with `verifier` and
/// checked against `wanted` (a predicate type URI) when given.
pub fn verify(
    target: &Target,
    verifier: Verifier<'_>,
    wanted: Option<&str>,
) -> Result<Vec<Found>, SignatureError> {
    let mut out = Vec::new();
    for (d, m) in cosign::bundle_referrers(target)? {
        let announced = m["annotations"][super::bundle_sign::PREDICATE_ANNOTATION]
            .as_str()
            .map(str::to_string);
        // cosign's own signatures are signatures, not attestations (`verify` checks them).
        if announced.as_deref() == Some(SIGN_PREDICATE_TYPE) {
            continue;
        }
        let source = format!("{} referrer {}", target.base_name(), d.digest);
        let result = cosign::bundle_layer(target, &m)
            .map_err(AttestationRefusal::Signature)
            .and_then(|body| check_bundle(&body, &target.digest, verifier))
            .and_then(|st| check_statement(st, announced.as_deref(), wanted));
        out.push(Found {
            source,
            format: "bundle",
            result,
        });
    }
    let tag = attestation_tag(&target.digest);
    if tag.len() > 128 {
        return Ok(out);
    }
    let Some(m) = target.manifest_by_tag(&tag)? else {
        return Ok(out);
    };
    let where_ = format!("{}:{tag}", target.base_name());
    let v: serde_json::Value = match serde_json::from_slice(&m.bytes) {
        Ok(v) => v,
        Err(e) => {
            out.push(Found {
                source: where_,
                format: "legacy",
                result: Err(AttestationRefusal::Malformed(format!(
                    "not a manifest: {e}"
                ))),
            });
            return Ok(out);
        }
    };
    let layers = v["layers"].as_array().cloned().unwrap_or_default();
    if layers.len() > MAX_SIGNATURES {
        return Err(SignatureError::Unsupported(format!(
            "{where_} lists {} attestations, more than the {MAX_SIGNATURES} olmpack reads for one image; assuming a broken or hostile registry",
            layers.len()
        )));
    }
    for (i, layer) in layers.iter().enumerate() {
        let announced = layer["annotations"][LEGACY_PREDICATE_ANNOTATION]
            .as_str()
            .map(str::to_string);
        let result = legacy_layer(target, layer, verifier)
            .and_then(|st| check_statement(st, announced.as_deref(), wanted));
        out.push(Found {
            source: format!("{where_} layer {}", i + 1),
            format: "legacy",
            result,
        });
    }
    Ok(out)
}

/// A bundle's envelope verified, its statement about `digest` given back.
fn check_bundle(
    body: &[u8],
    digest: &str,
    verifier: Verifier<'_>,
) -> Result<serde_json::Value, AttestationRefusal> {
    match verifier {
        Verifier::Keys(keys) => cosign::check_bundle(body, digest, keys).map_err(from_rejection),
        Verifier::Keyless(k) => {
            let verified = super::keyless::check_image_bundle(body, digest, k)
                .map_err(AttestationRefusal::Keyless)?;
            verified.statement.ok_or_else(|| {
                AttestationRefusal::Malformed(
                    "the bundle holds a message signature, not an in-toto statement".into(),
                )
            })
        }
    }
}

/// A cosign 2 `.att` layer: its DSSE envelope verified with the keys (the same check as a
/// bundle's envelope, so both formats refuse alike).
fn legacy_layer(
    target: &Target,
    layer: &serde_json::Value,
    verifier: Verifier<'_>,
) -> Result<serde_json::Value, AttestationRefusal> {
    let mt = layer["mediaType"].as_str().unwrap_or_default();
    if mt != DSSE_MEDIA_TYPE {
        return Err(AttestationRefusal::Malformed(format!(
            "layer media type is {mt:?}, expected {DSSE_MEDIA_TYPE:?}"
        )));
    }
    let Verifier::Keys(keys) = verifier else {
        return Err(AttestationRefusal::Keyless(Refusal::Unsupported(
            "keyless attestations in the .att tag (cosign 2) are not verified; cosign 3's bundle referrer is".into(),
        )));
    };
    let desc = descriptor_of(layer)
        .ok_or_else(|| AttestationRefusal::Malformed("layer descriptor is invalid".into()))?;
    let body = target
        .blob(&desc)
        .map_err(|e| AttestationRefusal::Malformed(format!("cannot read the layer: {e}")))?;
    let env: super::sigstore::bundle::Envelope = serde_json::from_slice(&body).map_err(|e| {
        AttestationRefusal::Malformed(format!("the layer is not a DSSE envelope: {e}"))
    })?;
    cosign::check_envelope(&env, &target.digest, keys).map_err(from_rejection)
}

fn from_rejection(r: Rejection) -> AttestationRefusal {
    match r {
        Rejection::DigestMismatch { expected, found } => {
            AttestationRefusal::Subject { expected, found }
        }
        Rejection::Malformed(m) => AttestationRefusal::Malformed(m),
        other => AttestationRefusal::Signature(other),
    }
}

/// The predicate checks on a verified statement: an attestation (not cosign's signing
/// statement), the type asked for, the type announced.
fn check_statement(
    statement: serde_json::Value,
    announced: Option<&str>,
    wanted: Option<&str>,
) -> Result<serde_json::Value, AttestationRefusal> {
    let found = statement["predicateType"]
        .as_str()
        .ok_or_else(|| AttestationRefusal::Malformed("the statement has no predicateType".into()))?
        .to_string();
    if found == SIGN_PREDICATE_TYPE {
        return Err(AttestationRefusal::Malformed(
            "the statement is cosign's signing statement, a signature and not an attestation"
                .into(),
        ));
    }
    if let Some(a) = announced
        && a != found
    {
        return Err(AttestationRefusal::Announced {
            announced: a.to_string(),
            found,
        });
    }
    if let Some(w) = wanted
        && w != found
    {
        return Err(AttestationRefusal::PredicateType {
            wanted: w.to_string(),
            found,
        });
    }
    Ok(statement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_types_are_cosigns() {
        assert_eq!(predicate_type("slsaprovenance1"), Some(SLSA_PROVENANCE_V1));
        assert_eq!(predicate_type("spdxjson"), Some(SPDX_JSON));
        assert_eq!(predicate_type("https://x.dev/p"), Some("https://x.dev/p"));
        assert_eq!(predicate_type("nosuch"), None);
        assert_eq!(attestation_tag("sha256:ab"), "sha256-ab.att");
    }

    #[test]
    fn statement_checks_refuse_each_mismatch() {
        let st = serde_json::json!({"predicateType": SPDX_JSON});
        assert!(check_statement(st.clone(), Some(SPDX_JSON), Some(SPDX_JSON)).is_ok());
        assert!(matches!(
            check_statement(st.clone(), None, Some(SLSA_PROVENANCE_V1)),
            Err(AttestationRefusal::PredicateType { .. })
        ));
        assert!(matches!(
            check_statement(st, Some(SLSA_PROVENANCE_V1), None),
            Err(AttestationRefusal::Announced { .. })
        ));
    }
}
