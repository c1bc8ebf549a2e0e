//! Signing an image in the Sigstore bundle format cosign 3 writes by default: a bundle v0.3
//! (signed with a key, no transparency log) stored as an OCI 1.1 referrer of the image, as
//! sigstore/cosign `specs/BUNDLE_SPEC.md` lays it out: an artifact manifest with
//! `artifactType` `application/vnd.dev.sigstore.bundle.v0.3+json`, the empty config, one layer
//! (the bundle JSON) and `subject` = the image. A registry without the referrers API (Debian's
//! `docker-registry`, distribution 2.8) gets the referrers tag schema instead: the index
//! `sha256-<hex>` listing the referrers, merged with what it already lists.
//!
//! Two contents, as the bundle spec allows:
//! - [`BundleContent::Dsse`] (cosign 3's `sign`): a DSSE envelope over an in-toto statement
//!   whose subject is the image digest and whose predicate type is
//!   `https://sigstore.dev/cosign/sign/v1`; attestations ([`attach_statement`]) use the same
//!   envelope with their own predicate;
//! - [`BundleContent::MessageSignature`]: a signature over the manifest bytes with their
//!   SHA-256 as the message digest (what `cosign sign-blob` makes of a file).
//!
//! `tlogEntries` is written empty rather than left out: protobuf JSON may omit an empty list,
//! but sigstore-python's bundle model requires the field.
//!
//! Deterministic: ECDSA signing is RFC 6979 and no creation time is written, so signing the
//! same image with the same key twice finds its own referrer and writes nothing.

pub use super::cosign::PREDICATE_ANNOTATION;
use super::cosign::{BUNDLE_MEDIA_TYPE, SIGN_PREDICATE_TYPE};
use super::keys::PrivateKey;
use super::sigstore::pae;
use super::store::{Target, Where};
use super::{SignatureError, sha256_digest};
use crate::image::Descriptor;
use crate::image::parse::IndexEntry;
use crate::registry::repository::{Manifest, Repository};
use crate::transport::layout_repository::LayoutRepository;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

/// The in-toto payload type of a DSSE envelope.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The in-toto statement type written (v1).
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The OCI empty descriptor's media type (the config of an artifact manifest).
pub const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// Annotation naming what a bundle holds (`dsse-envelope` or `message-signature`).
pub const CONTENT_ANNOTATION: &str = "dev.sigstore.bundle.content";

/// What a bundle signs: cosign 3's DSSE statement, or a message signature over the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BundleContent {
    /// A DSSE envelope over an in-toto statement naming the image (cosign 3's default).
    #[default]
    Dsse,
    /// A signature over the manifest bytes, with their SHA-256 as the message digest.
    MessageSignature,
}

impl BundleContent {
    /// The value of the `dev.sigstore.bundle.content` annotation.
    pub fn annotation(self) -> &'static str {
        match self {
            BundleContent::Dsse => "dsse-envelope",
            BundleContent::MessageSignature => "message-signature",
        }
    }
}

/// One bundle referrer written (or found already there).
#[derive(Debug, Clone)]
pub struct BundleWritten {
    /// The digest of the referrer manifest.
    pub manifest_digest: String,
    /// False when the very same referrer was already listed (nothing was written).
    pub added: bool,
}

/// `hint` of the bundle's `publicKey`: base64 of the SHA-256 of the key's PKIX DER, as cosign
/// fills it, so a verifier holding several keys can tell which one to try.
fn key_hint(key: &PrivateKey) -> String {
    use sha2::Digest as _;
    match key.public().pkix_der() {
        Some(der) => B64.encode(sha2::Sha256::digest(der)),
        None => String::new(),
    }
}

/// The in-toto statement cosign 3 signs an image with: subject = the image (`name` is the
/// repository, which `verify` checks as it checks a `.sig` payload's `docker-reference`).
pub fn sign_statement(name: &str, digest: &str) -> serde_json::Value {
    statement(name, digest, SIGN_PREDICATE_TYPE, serde_json::json!({}))
}

/// An in-toto statement v1 about the image `digest`.
pub fn statement(
    name: &str,
    digest: &str,
    predicate_type: &str,
    predicate: serde_json::Value,
) -> serde_json::Value {
    let (algo, hex) = digest.split_once(':').unwrap_or(("sha256", digest));
    let mut subject = serde_json::Map::new();
    if !name.is_empty() {
        subject.insert("name".into(), name.into());
    }
    subject.insert("digest".into(), serde_json::json!({ algo: hex }));
    serde_json::json!({
        "_type": STATEMENT_TYPE,
        "subject": [subject],
        "predicateType": predicate_type,
        "predicate": predicate,
    })
}

/// A bundle v0.3 holding a DSSE envelope over `statement`, signed with `key`.
pub fn dsse_bundle(
    key: &PrivateKey,
    statement: &serde_json::Value,
) -> Result<Vec<u8>, SignatureError> {
    let body = serde_json::to_vec(statement)
        .map_err(|e| SignatureError::Unsupported(format!("in-toto statement: {e}")))?;
    let sig = key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, &body))?;
    let bundle = serde_json::json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": key_hint(key)}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": B64.encode(&body),
            "payloadType": IN_TOTO_PAYLOAD_TYPE,
            "signatures": [{"sig": B64.encode(sig), "keyid": ""}],
        },
    });
    serde_json::to_vec(&bundle).map_err(|e| SignatureError::Unsupported(e.to_string()))
}

/// A bundle v0.3 holding a message signature over `message` (its SHA-256 the message digest).
pub fn message_bundle(key: &PrivateKey, message: &[u8]) -> Result<Vec<u8>, SignatureError> {
    use sha2::Digest as _;
    let sig = key.sign(message)?;
    let bundle = serde_json::json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": key_hint(key)}, "tlogEntries": []},
        "messageSignature": {
            "messageDigest": {
                "algorithm": "SHA2_256",
                "digest": B64.encode(sha2::Sha256::digest(message)),
            },
            "signature": B64.encode(sig),
        },
    });
    serde_json::to_vec(&bundle).map_err(|e| SignatureError::Unsupported(e.to_string()))
}

/// Signs `target` with `key` in the bundle format and attaches the bundle as its referrer.
/// `identity` is the repository the statement names (the subject's `name`).
pub fn sign(
    target: &Target,
    key: &PrivateKey,
    identity: &str,
    content: BundleContent,
) -> Result<BundleWritten, SignatureError> {
    match content {
        BundleContent::Dsse => {
            let bundle = dsse_bundle(key, &sign_statement(identity, &target.digest))?;
            attach(target, bundle, content, Some(SIGN_PREDICATE_TYPE))
        }
        BundleContent::MessageSignature => {
            let manifest = target.manifest_by_digest(&target.digest)?;
            let bundle = message_bundle(key, &manifest)?;
            attach(target, bundle, content, None)
        }
    }
}

/// Signs `statement` (an in-toto statement about `target`) in a DSSE bundle and attaches it as
/// a referrer of `target`: what `attest` writes.
pub fn attach_statement(
    target: &Target,
    key: &PrivateKey,
    statement: &serde_json::Value,
) -> Result<BundleWritten, SignatureError> {
    let predicate = statement["predicateType"].as_str().map(str::to_string);
    let bundle = dsse_bundle(key, statement)?;
    attach(target, bundle, BundleContent::Dsse, predicate.as_deref())
}

/// Calls `f` with the repository API of the place `target` is in.
fn with_repository<R>(target: &Target, f: impl FnOnce(&dyn Repository) -> R) -> R {
    match &target.place {
        Where::Registry { repository, .. } => f(repository.as_ref()),
        Where::Layout { dir, .. } => f(&LayoutRepository::new(dir)),
    }
}

fn repo_error(e: crate::registry::RepositoryError) -> SignatureError {
    match e {
        crate::registry::RepositoryError::Registry(e) => e.into(),
        other => crate::transport::TransportError::from(other).into(),
    }
}

/// Stores `bundle` as a referrer of `target` (blobs, the artifact manifest by digest, then the
/// referrers listing: the registry's own API, or the fallback tag, or a layout's
/// `index.json` entry announcing the artifact type).
fn attach(
    target: &Target,
    bundle: Vec<u8>,
    content: BundleContent,
    predicate_type: Option<&str>,
) -> Result<BundleWritten, SignatureError> {
    with_repository(target, |repo| {
        let subject = repo.manifest_get(&target.digest).map_err(repo_error)?;
        let empty = b"{}".to_vec();
        let empty_desc = Descriptor {
            media_type: EMPTY_MEDIA_TYPE.into(),
            digest: sha256_digest(&empty),
            size: empty.len() as u64,
        };
        let bundle_desc = Descriptor {
            media_type: BUNDLE_MEDIA_TYPE.into(),
            digest: sha256_digest(&bundle),
            size: bundle.len() as u64,
        };
        let mut annotations = serde_json::Map::new();
        annotations.insert(CONTENT_ANNOTATION.into(), content.annotation().into());
        if let Some(p) = predicate_type {
            annotations.insert(PREDICATE_ANNOTATION.into(), p.into());
        }
        let title = format!("{}.sigstore.json", bundle_desc.digest.replacen(':', "-", 1));
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": crate::image::media::OCI_MANIFEST,
            "artifactType": BUNDLE_MEDIA_TYPE,
            "config": {
                "mediaType": EMPTY_MEDIA_TYPE,
                "digest": empty_desc.digest,
                "size": empty_desc.size,
            },
            "layers": [{
                "mediaType": BUNDLE_MEDIA_TYPE,
                "digest": bundle_desc.digest,
                "size": bundle_desc.size,
                "annotations": {"org.opencontainers.image.title": title},
            }],
            "subject": {
                "mediaType": subject.media_type,
                "digest": target.digest,
                "size": subject.bytes.len(),
            },
            "annotations": annotations,
        });
        let bytes = crate::image::config::canonical_json(&manifest);
        let manifest = Manifest::new(crate::image::media::OCI_MANIFEST, bytes);
        let entry_json = serde_json::json!({
            "mediaType": crate::image::media::OCI_MANIFEST,
            "digest": manifest.digest,
            "size": manifest.bytes.len(),
            "artifactType": BUNDLE_MEDIA_TYPE,
            "annotations": annotations,
        });
        let listed = already_listed(target, repo, &manifest.digest)?;
        if listed {
            return Ok(BundleWritten {
                manifest_digest: manifest.digest,
                added: false,
            });
        }
        for (desc, bytes) in [(&empty_desc, &empty), (&bundle_desc, &bundle)] {
            if !repo.blob_head(&desc.digest).map_err(repo_error)? {
                repo.blob_put(desc, bytes).map_err(repo_error)?;
            }
        }
        let entry = IndexEntry {
            descriptor: Descriptor {
                media_type: crate::image::media::OCI_MANIFEST.into(),
                digest: manifest.digest.clone(),
                size: manifest.bytes.len() as u64,
            },
            platform: None,
            platform_json: None,
            raw: entry_json,
        };
        match &target.place {
            // A layout lists the referrer by its index.json entry alone (written by
            // `referrers_put`), so the manifest goes in as a blob, not as a second entry.
            Where::Layout { .. } => repo
                .blob_put(&entry.descriptor, &manifest.bytes)
                .map_err(repo_error)?,
            Where::Registry { .. } => repo
                .manifest_put(&manifest.digest, &manifest)
                .map_err(repo_error)?,
        }
        repo.referrers_put(&target.digest, std::slice::from_ref(&entry))
            .map_err(repo_error)?;
        Ok(BundleWritten {
            manifest_digest: manifest.digest,
            added: true,
        })
    })
}

/// Whether the referrer `digest` is already listed for `target` (so signing again writes
/// nothing).
fn already_listed(
    target: &Target,
    repo: &dyn Repository,
    digest: &str,
) -> Result<bool, SignatureError> {
    if let Where::Layout { dir, .. } = &target.place {
        let index = crate::transport::layout::read_index(dir)?;
        return Ok(index["manifests"]
            .as_array()
            .is_some_and(|m| m.iter().any(|e| e["digest"].as_str() == Some(digest))));
    }
    let listed = match repo.referrers(&target.digest).map_err(repo_error)? {
        Some(entries) => entries,
        None => repo
            .fallback_referrers(&target.digest)
            .map_err(repo_error)?
            .unwrap_or_default(),
    };
    Ok(listed.iter().any(|e| e.descriptor.digest == digest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_is_dsse_v1() {
        assert_eq!(pae("t", b"ab"), b"DSSEv1 1 t 2 ab".to_vec());
    }

    #[test]
    fn statement_names_the_image() {
        let s = sign_statement("quay.io/x/y", "sha256:ab");
        assert_eq!(s["_type"], STATEMENT_TYPE);
        assert_eq!(s["subject"][0]["name"], "quay.io/x/y");
        assert_eq!(s["subject"][0]["digest"]["sha256"], "ab");
        assert_eq!(s["predicateType"], SIGN_PREDICATE_TYPE);
        let unnamed = sign_statement("", "sha256:ab");
        assert!(unnamed["subject"][0].get("name").is_none());
    }
}
