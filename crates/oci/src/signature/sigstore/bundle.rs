//! The Sigstore bundle (`dev.sigstore.bundle.v1.Bundle`, media types v0.1 to v0.3) in its
//! protobuf-JSON form, read and written with serde: the one model both verification and any
//! writer share, so a bundle olmpack reads is the bundle it would write back.
//!
//! protobuf-JSON spells `bytes` as base64 and `int64` as a string (a number is accepted on
//! input): [`B64`] and [`I64`] carry those rules.

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The media types of the bundle versions olmpack reads.
pub const MEDIA_TYPES: [&str; 4] = [
    "application/vnd.dev.sigstore.bundle+json;version=0.1",
    "application/vnd.dev.sigstore.bundle+json;version=0.2",
    "application/vnd.dev.sigstore.bundle+json;version=0.3",
    "application/vnd.dev.sigstore.bundle.v0.3+json",
];

/// protobuf-JSON `bytes`: base64 on the wire (standard or URL-safe alphabet on input, as
/// protobuf's JSON mapping accepts), the raw bytes in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct B64(pub Vec<u8>);

impl Serialize for B64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for B64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        decode_b64(&s)
            .map(B64)
            .ok_or_else(|| serde::de::Error::custom(format!("not base64: {:.40}", s)))
    }
}

/// Decodes base64 in either alphabet, padded or not (protobuf-JSON's rule).
pub fn decode_b64(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let s = s.trim();
    STANDARD
        .decode(s)
        .or_else(|_| STANDARD_NO_PAD.decode(s))
        .or_else(|_| URL_SAFE.decode(s))
        .or_else(|_| URL_SAFE_NO_PAD.decode(s))
        .ok()
}

/// protobuf-JSON `int64`: a decimal string on the wire (a JSON number accepted on input).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct I64(pub i64);

impl Serialize for I64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> Deserialize<'de> for I64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            N(i64),
            S(String),
        }
        match Either::deserialize(d)? {
            Either::N(n) => Ok(I64(n)),
            Either::S(s) => s
                .parse()
                .map(I64)
                .map_err(|_| serde::de::Error::custom(format!("not an int64: {s:?}"))),
        }
    }
}

/// A Sigstore bundle: the signature, what vouches for its key, and the log's receipts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// Which bundle version this is (one of [`MEDIA_TYPES`]).
    pub media_type: String,
    /// Certificate or key hint, transparency-log entries, timestamps.
    pub verification_material: VerificationMaterial,
    /// A signature over an artifact's digest (blobs; cosign `sign-blob`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_signature: Option<MessageSignature>,
    /// A DSSE envelope (in-toto statements; cosign 3 image signatures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsse_envelope: Option<Envelope>,
}

/// What a verifier needs beside the signature.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VerificationMaterial {
    /// The signing certificate (bundle v0.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<RawBytes>,
    /// The signing certificate then its issuers (bundles v0.1 and v0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x509_certificate_chain: Option<CertificateChain>,
    /// A hint naming the key of a key-signed bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<PublicKeyHint>,
    /// The Rekor entries of the signature.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tlog_entries: Vec<TlogEntry>,
    /// RFC 3161 timestamps of the signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_verification_data: Option<TimestampVerificationData>,
}

/// DER bytes (a certificate, a key, a timestamp).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RawBytes {
    /// The DER.
    #[serde(default)]
    pub raw_bytes: B64,
}

/// Certificates, leaf first.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CertificateChain {
    /// Leaf first, then each issuer.
    #[serde(default)]
    pub certificates: Vec<RawBytes>,
}

/// The hint of a key-signed bundle (not trusted: the verifier is given the key).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PublicKeyHint {
    /// Free text naming the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// RFC 3161 timestamps over the signature.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TimestampVerificationData {
    /// The DER `TimeStampResp`s (or tokens).
    #[serde(default)]
    pub rfc3161_timestamps: Vec<SignedTimestamp>,
}

/// One RFC 3161 timestamp.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SignedTimestamp {
    /// The DER timestamp token.
    #[serde(default)]
    pub signed_timestamp: B64,
}

/// A signature over an artifact's digest.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MessageSignature {
    /// The digest signed (optional: the artifact given is what counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_digest: Option<HashOutput>,
    /// The signature bytes.
    #[serde(default)]
    pub signature: B64,
}

/// A digest and its algorithm.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HashOutput {
    /// `SHA2_256` and friends.
    #[serde(default)]
    pub algorithm: String,
    /// The digest bytes.
    #[serde(default)]
    pub digest: B64,
}

/// A DSSE envelope.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    /// The signed payload.
    #[serde(default)]
    pub payload: B64,
    /// Its type (`application/vnd.in-toto+json`).
    #[serde(default)]
    pub payload_type: String,
    /// The signatures over its pre-authentication encoding.
    #[serde(default)]
    pub signatures: Vec<EnvelopeSignature>,
}

/// One DSSE signature.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EnvelopeSignature {
    /// The signature over PAE(payloadType, payload).
    #[serde(default)]
    pub sig: B64,
    /// The signer's key id, if named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyid: Option<String>,
}

/// A Rekor entry with its receipts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TlogEntry {
    /// The entry's index in the log.
    #[serde(default)]
    pub log_index: I64,
    /// Which log (the SHA-256 of its key).
    #[serde(default)]
    pub log_id: LogId,
    /// The entry's kind and version (`hashedrekord` `0.0.1`, ...).
    #[serde(default)]
    pub kind_version: KindVersion,
    /// When the log took the entry (Rekor v1; 0 in Rekor v2).
    #[serde(default)]
    pub integrated_time: I64,
    /// The signed entry timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inclusion_promise: Option<InclusionPromise>,
    /// The Merkle inclusion proof and the checkpoint it ends at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inclusion_proof: Option<InclusionProof>,
    /// The entry body as the log holds it.
    #[serde(default)]
    pub canonicalized_body: B64,
}

/// A log's identity.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LogId {
    /// The SHA-256 of the log's public key (DER).
    #[serde(default)]
    pub key_id: B64,
}

/// An entry's kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KindVersion {
    /// `hashedrekord`, `dsse`, `intoto`.
    #[serde(default)]
    pub kind: String,
    /// `0.0.1`, `0.0.2`.
    #[serde(default)]
    pub version: String,
}

/// Rekor v1's signed entry timestamp.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InclusionPromise {
    /// The log's signature over the canonical entry.
    #[serde(default)]
    pub signed_entry_timestamp: B64,
}

/// An RFC 6962 inclusion proof.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InclusionProof {
    /// The entry's index in the tree.
    #[serde(default)]
    pub log_index: I64,
    /// The tree's root.
    #[serde(default)]
    pub root_hash: B64,
    /// The tree's size.
    #[serde(default)]
    pub tree_size: I64,
    /// The audit path.
    #[serde(default)]
    pub hashes: Vec<B64>,
    /// The signed checkpoint (note) of that tree.
    #[serde(default)]
    pub checkpoint: Checkpoint,
}

/// A signed note.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// The note text with its signature lines.
    #[serde(default)]
    pub envelope: String,
}

impl Bundle {
    /// Reads a bundle; `name` names the file in errors.
    pub fn from_json(bytes: &[u8]) -> Result<Bundle, String> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." {
                format!("not a Sigstore bundle: {inner}")
            } else {
                format!("not a Sigstore bundle: at {path}: {inner}")
            }
        })
    }

    /// The bundle as protobuf-JSON.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }

    /// The version number of the media type (1, 2, 3), or `None` for one olmpack does not know.
    pub fn minor_version(&self) -> Option<u8> {
        match MEDIA_TYPES.iter().position(|m| *m == self.media_type)? {
            0 => Some(1),
            1 => Some(2),
            _ => Some(3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_protobuf_json() {
        let j = br#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"certificate":{"rawBytes":"AAE="},"tlogEntries":[{"logIndex":"7","logId":{"keyId":"AQ=="},"kindVersion":{"kind":"hashedrekord","version":"0.0.1"},"integratedTime":12,"canonicalizedBody":"e30="}]},"messageSignature":{"signature":"AgM="}}"#;
        let b = Bundle::from_json(j).unwrap();
        assert_eq!(b.verification_material.tlog_entries[0].log_index, I64(7));
        assert_eq!(
            b.verification_material.tlog_entries[0].integrated_time,
            I64(12)
        );
        let again = Bundle::from_json(&b.to_json()).unwrap();
        assert_eq!(b, again);
        assert_eq!(b.minor_version(), Some(3));
        let e = Bundle::from_json(
            br#"{"mediaType":"x","verificationMaterial":{"certificate":{"rawBytes":"!!"}}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("verificationMaterial.certificate.rawBytes"),
            "{e}"
        );
    }
}
