//! cosign's signatures made with a key, as `specs/SIGNATURE_SPEC.md` of sigstore/cosign
//! specifies them, and cosign v3's Sigstore bundles (checked with a key, offline).
//!
//! Tag-based storage: the signatures of the manifest `sha256:<hex>` are the layers of the image
//! manifest tagged `sha256-<hex>.sig` in the same repository. Each layer is one signature: its
//! blob is the payload (media type `application/vnd.dev.cosign.simplesigning.v1+json`) and its
//! `dev.cosignproject.cosign/signature` annotation is the base64 ASN.1 ECDSA signature of the
//! payload bytes (SHA-256). Signing again adds a layer; it never replaces one.
//!
//! Sigstore bundles (cosign v3 `--new-bundle-format`): OCI 1.1 referrers of the image with
//! artifact type `application/vnd.dev.sigstore.bundle.v0.3+json`, whose layer is the bundle
//! JSON; with a key, the bundle holds a DSSE envelope over an in-toto statement naming the
//! image digest. The transparency-log entries are not checked (offline, key-based trust).

use super::identity::IdentityRule;
use super::lookaside::MAX_SIGNATURES;
use super::public_key::PublicKey;
use super::store::{Target, descriptor_of};
use super::{Checked, Rejection, SignatureError, sha256_digest};
use crate::image::{Blob, Descriptor};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

/// Media type of a cosign simple-signing payload layer.
pub const PAYLOAD_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// Annotation holding the base64 signature of a payload layer.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// `critical.type` of a cosign payload (the payload reader's, which checks it).
pub use super::payload::COSIGN_PAYLOAD_TYPE as PAYLOAD_TYPE;
/// Annotation naming the predicate type of a DSSE bundle's statement.
pub const PREDICATE_ANNOTATION: &str = "dev.sigstore.bundle.predicateType";
/// Media type (and artifact type) of a Sigstore bundle v0.3.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The in-toto predicate type cosign v3 signs images with.
pub const SIGN_PREDICATE_TYPE: &str = "https://sigstore.dev/cosign/sign/v1";

/// The tag holding the cosign signatures of `digest` (`sha256-<hex>.sig`).
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// The longest tag a registry takes (the distribution spec's `[\w][\w.-]{0,127}`): a sha512
/// digest's `sha512-<128 hex>.sig` does not fit, so such an image has no tag-based cosign
/// signatures (containers/image's `sigstoreAttachmentTag` refuses it the same way).
const MAX_TAG_LEN: usize = 128;

/// The payload cosign writes, byte for byte (Go's struct order, `"optional":null`).
pub fn payload(identity: &str, digest: &str) -> Vec<u8> {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    format!(
        "{{\"critical\":{{\"identity\":{{\"docker-reference\":{}}},\"image\":{{\"docker-manifest-digest\":{}}},\"type\":{}}},\"optional\":null}}",
        q(identity),
        q(digest),
        q(PAYLOAD_TYPE)
    )
    .into_bytes()
}

/// What `sign` did.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The tag written.
    pub tag: String,
    /// The digest of the signature manifest.
    pub manifest_digest: String,
    /// How many signatures the tag holds now.
    pub count: usize,
    /// False when the very same signature was already there (nothing was written).
    pub added: bool,
}

/// Signs `target` with `key`: adds one layer to its `sha256-<hex>.sig` manifest (creating it
/// when missing), keeping every signature already there. `identity` is the
/// `critical.identity.docker-reference` (the repository, as cosign writes it).
pub fn sign(
    target: &Target,
    key: &super::keys::PrivateKey,
    identity: &str,
) -> Result<Signed, SignatureError> {
    let tag = signature_tag(&target.digest);
    if tag.len() > MAX_TAG_LEN {
        return Err(SignatureError::Unsupported(format!(
            "{}: cosign keeps signatures under the tag <algorithm>-<hex>.sig, which for {} is longer than the {MAX_TAG_LEN} characters a tag may have; sign the image by tag or by its sha256 digest",
            target.name, target.digest
        )));
    }
    let body = payload(identity, &target.digest);
    let sig_b64 = B64.encode(key.sign(&body)?);
    let mut annotations = serde_json::Map::new();
    annotations.insert(SIGNATURE_ANNOTATION.into(), sig_b64.into());
    append_layer(target, &tag, PAYLOAD_MEDIA_TYPE, body, annotations)
}

/// Adds one layer (`body` with `annotations`) to the manifest tagged `tag` beside `target`
/// (creating it when missing), keeping every layer already there: how cosign 2 stores both
/// its `.sig` signatures and its `.att` attestations. The very same layer already there
/// writes nothing.
pub(crate) fn append_layer(
    target: &Target,
    tag: &str,
    media_type: &str,
    body: Vec<u8>,
    annotations: serde_json::Map<String, serde_json::Value>,
) -> Result<Signed, SignatureError> {
    let payload_digest = sha256_digest(&body);
    let mut layers: Vec<serde_json::Value> = Vec::new();
    if let Some(existing) = target.manifest_by_tag(tag)? {
        let v: serde_json::Value = serde_json::from_slice(&existing.bytes).map_err(|e| {
            SignatureError::Unsupported(format!("{tag} exists but is not a manifest: {e}"))
        })?;
        layers = v["layers"].as_array().cloned().unwrap_or_default();
    }
    if layers.len() >= MAX_SIGNATURES {
        return Err(SignatureError::Unsupported(format!(
            "{tag} already lists {} layers, the most olmpack reads for one image ({MAX_SIGNATURES})",
            layers.len()
        )));
    }
    if layers.iter().any(|l| {
        l["digest"].as_str() == Some(payload_digest.as_str())
            && l["annotations"].as_object() == Some(&annotations)
    }) {
        let count = layers.len();
        return Ok(Signed {
            tag: tag.to_string(),
            manifest_digest: String::new(),
            count,
            added: false,
        });
    }
    let mut blobs = Vec::new();
    for l in &layers {
        if let Some(d) = descriptor_of(l) {
            blobs.push(target.existing_blob(d));
        }
    }
    let new_layer = Blob::memory(media_type, body);
    layers.push(serde_json::json!({
        "mediaType": media_type,
        "size": new_layer.descriptor.size,
        "digest": new_layer.descriptor.digest,
        "annotations": annotations,
    }));
    blobs.push(new_layer);
    let diff_ids: Vec<&str> = layers.iter().filter_map(|l| l["digest"].as_str()).collect();
    let config_bytes = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "config": {},
    }))
    .map_err(|e| SignatureError::Unsupported(e.to_string()))?;
    let config = Blob::memory(crate::image::media::OCI_CONFIG, config_bytes);
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": crate::image::media::OCI_MANIFEST,
        "config": {
            "mediaType": config.descriptor.media_type,
            "size": config.descriptor.size,
            "digest": config.descriptor.digest,
        },
        "layers": layers,
    });
    let bytes =
        serde_json::to_vec(&manifest).map_err(|e| SignatureError::Unsupported(e.to_string()))?;
    let count = layers.len();
    let manifest_digest = target.write_manifest(bytes, config, blobs, tag)?;
    Ok(Signed {
        tag: tag.to_string(),
        manifest_digest,
        count,
        added: true,
    })
}

/// Checks a payload's signature (base64, as the `.sig` annotation holds it) against the keys.
pub(crate) fn check_signature(
    keys: &[PublicKey],
    body: &[u8],
    sig_b64: &str,
) -> Result<(), Rejection> {
    let raw = B64
        .decode(sig_b64.trim().as_bytes())
        .map_err(|e| Rejection::Malformed(format!("signature is not base64: {e}")))?;
    check_signature_bytes(keys, body, &raw)
}

/// Checks raw signature bytes over `body` against the keys: any one verifying is enough.
fn check_signature_bytes(keys: &[PublicKey], body: &[u8], raw: &[u8]) -> Result<(), Rejection> {
    let raw = raw.to_vec();
    if keys.iter().any(|k| k.verify(body, &raw)) {
        Ok(())
    } else if !keys.iter().any(|k| k.can_read(&raw)) {
        let kinds: Vec<&str> = keys.iter().map(PublicKey::kind).collect();
        Err(Rejection::Malformed(format!(
            "the signature is not in the form {} key signs with: it looks like {}; a key of one kind cannot verify a signature of another, so give the public key of the key that signed",
            if keys.len() == 1 {
                format!("the {}", kinds.join(""))
            } else {
                format!("any of the {} keys", kinds.join(", "))
            },
            PublicKey::signature_form(&raw)
        )))
    } else {
        let kinds: Vec<&str> = keys.iter().map(PublicKey::kind).collect();
        Err(Rejection::WrongKey(format!(
            "the signature does not verify with the {} given ({}); it looks like {}",
            if keys.len() == 1 { "key" } else { "keys" },
            kinds.join(", "),
            PublicKey::signature_form(&raw)
        )))
    }
}

/// Checks a verified simple-signing payload: parsed strictly as containers/image does
/// ([`super::payload`]), then the digest, then the identity it claims.
fn check_payload(
    body: &[u8],
    digest: &str,
    expected: &Expected<'_>,
) -> Result<serde_json::Value, Rejection> {
    let (v, claims) = super::payload::parse(body, super::payload::Flavour::Cosign)?;
    if claims.digest != digest {
        return Err(Rejection::DigestMismatch {
            expected: digest.to_string(),
            found: claims.digest,
        });
    }
    let claimed = Some(claims.identity.as_str()).filter(|s| !s.is_empty());
    super::identity::check(expected.rule, claimed, expected.accept_unnamed)?;
    Ok(v)
}

/// What the identity a cosign signature claims is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The rule (`--identity` or the image for `verify`, the policy's `signedIdentity`).
    pub rule: &'a IdentityRule,
    /// Whether a signature that claims no identity passes (`verify`, like cosign); a policy
    /// refuses it, as containers/image does.
    pub accept_unnamed: bool,
}

impl Expected<'static> {
    /// No identity check at all: for checks of the signature and payload alone (the ported
    /// containers/image fixtures), never for reading an image.
    pub const ANY: Expected<'static> = Expected {
        rule: &IdentityRule::Any,
        accept_unnamed: true,
    };
}

/// `registry/repo` of a reference string (tag and digest dropped); the string itself when it
/// does not parse.
pub fn repository_of(reference: &str) -> String {
    crate::reference::Reference::parse(reference)
        .map(|r| r.name())
        .unwrap_or_else(|_| reference.to_string())
}

/// What vouches for a signer: keys the user gives, or keyless (a Fulcio certificate for an
/// identity, logged in Rekor, checked against a trusted root). One walk over an image's
/// signatures serves both, so they find and refuse the same things.
#[derive(Debug, Clone, Copy)]
pub enum Verifier<'a> {
    /// Any of these public keys.
    Keys(&'a [PublicKey]),
    /// The identity, issuer and trusted root of a keyless verification.
    Keyless(&'a Keyless),
}

/// Verifies every cosign signature of `target` (the `.sig` tag, then Sigstore bundle
/// referrers) against `keys`, and the identity each claims against `expected` (a payload's
/// `docker-reference`, a bundle statement's subject name).
pub fn verify(
    target: &Target,
    keys: &[PublicKey],
    expected: &Expected<'_>,
) -> Result<Vec<Checked>, SignatureError> {
    verify_with(target, Verifier::Keys(keys), expected)
}

/// Each layer of the image's `.sig` tag checked by `check`, as a [`Checked`] naming where it
/// is (`REPO:sha256-<hex>.sig layer N`); a tag that is not a manifest is one refusal. The one
/// walk over `.sig` layers: [`verify_with`] and the policy's `sigstoreSigned` evaluation
/// differ only in how a layer is checked.
pub(crate) fn sig_layers(
    target: &Target,
    out: &mut Vec<Checked>,
    mut check: impl FnMut(&serde_json::Value) -> Result<serde_json::Value, Rejection>,
) -> Result<(), SignatureError> {
    let tag = signature_tag(&target.digest);
    let attached = if tag.len() <= MAX_TAG_LEN {
        target.manifest_by_tag(&tag)?
    } else {
        None
    };
    if let Some(m) = attached {
        let where_ = format!("{}:{tag}", base_name(target));
        match serde_json::from_slice::<serde_json::Value>(&m.bytes) {
            Err(e) => out.push(Checked {
                source: where_,
                result: Err(Rejection::Malformed(format!("not a manifest: {e}"))),
            }),
            Ok(v) => {
                let layers = v["layers"].as_array().cloned().unwrap_or_default();
                // Each layer costs a blob fetch: a tag with thousands is refused whole rather
                // than walked (the bound containers/image puts on lookaside signatures).
                if layers.len() > MAX_SIGNATURES {
                    return Err(SignatureError::Unsupported(format!(
                        "{where_} lists {} signatures, more than the {MAX_SIGNATURES} olmpack reads for one image; assuming a broken or hostile registry",
                        layers.len()
                    )));
                }
                for (i, layer) in layers.iter().enumerate() {
                    let source = format!("{where_} layer {}", i + 1);
                    let result = check(layer);
                    out.push(Checked { source, result });
                }
            }
        }
    }
    Ok(())
}

/// [`verify`] with keys or keyless: a keyless `.sig` layer is read as the Sigstore bundle it
/// amounts to and a bundle referrer as it is, both through [`super::sigstore::verify`]; what
/// the payload or statement claims is checked as for keys.
pub fn verify_with(
    target: &Target,
    verifier: Verifier<'_>,
    expected: &Expected<'_>,
) -> Result<Vec<Checked>, SignatureError> {
    let mut out = Vec::new();
    sig_layers(target, &mut out, |layer| {
        check_layer(target, layer, verifier, expected)
    })?;
    out.extend(verify_bundles(target, verifier, expected)?);
    Ok(out)
}

fn check_layer(
    target: &Target,
    layer: &serde_json::Value,
    verifier: Verifier<'_>,
    expected: &Expected<'_>,
) -> Result<serde_json::Value, Rejection> {
    let mt = layer["mediaType"].as_str().unwrap_or_default();
    if mt != PAYLOAD_MEDIA_TYPE {
        return Err(Rejection::Malformed(format!(
            "layer media type is {mt:?}, expected {PAYLOAD_MEDIA_TYPE:?}"
        )));
    }
    let sig = layer["annotations"][SIGNATURE_ANNOTATION]
        .as_str()
        .ok_or_else(|| Rejection::Malformed(format!("no {SIGNATURE_ANNOTATION} annotation")))?;
    let desc = descriptor_of(layer)
        .ok_or_else(|| Rejection::Malformed("layer descriptor is invalid".into()))?;
    let body = target
        .blob(&desc)
        .map_err(|e| Rejection::Malformed(format!("cannot read the payload: {e}")))?;
    match verifier {
        Verifier::Keys(keys) => check_signed_payload(keys, &body, sig, &target.digest, expected),
        Verifier::Keyless(k) => {
            let empty = serde_json::Map::new();
            let annotations = layer["annotations"].as_object().unwrap_or(&empty);
            let v = keyless::check_layer(&body, sig, annotations, k).map_err(Rejection::Keyless)?;
            let payload = check_payload(&body, &target.digest, expected)?;
            Ok(keyless_result(payload, &v))
        }
    }
}

/// A keyless signature's verified payload (or statement) with who signed it and when, as
/// `verify` prints it: the certificate's identities and issuer, the log's time and index.
fn keyless_result(payload: serde_json::Value, v: &Verified) -> serde_json::Value {
    serde_json::json!({"payload": payload, "signer": keyless::signer_json(v)})
}

/// Checks one cosign signature: `sig_b64` (the annotation) must be a signature of `body` by
/// one of `keys` (a key set: any one verifying is enough), and `body` a strictly valid payload
/// naming `digest` and claiming an identity `expected` accepts.
pub fn check_signed_payload(
    keys: &[PublicKey],
    body: &[u8],
    sig_b64: &str,
    digest: &str,
    expected: &Expected<'_>,
) -> Result<serde_json::Value, Rejection> {
    check_signature(keys, body, sig_b64)?;
    check_payload(body, digest, expected)
}

fn base_name(target: &Target) -> String {
    target.base_name()
}

use super::keyless::{self, Keyless};
use super::sigstore::Verified;
use super::sigstore::bundle::{Bundle, MessageSignature};
use super::sigstore::pae;

/// The Sigstore bundle referrers of `target`: each listed referrer (the referrers API or its
/// fallback tag, or a layout's `index.json` entries) announcing the bundle artifact type,
/// read and kept when its manifest really is a bundle artifact whose subject is `target`.
/// Signatures and attestations alike (`dev.sigstore.bundle.predicateType` tells which, as a
/// hint only: what counts is the signed statement).
pub(crate) fn bundle_referrers(
    target: &Target,
) -> Result<Vec<(Descriptor, serde_json::Value)>, SignatureError> {
    let mut candidates: Vec<Descriptor> = Vec::new();
    if let Some(index) = target.referrers_index()? {
        for m in index["manifests"].as_array().into_iter().flatten() {
            if m["artifactType"].as_str() == Some(BUNDLE_MEDIA_TYPE)
                && let Some(d) = descriptor_of(m)
            {
                candidates.push(d);
            }
        }
    }
    // In an OCI layout, referrers are index.json entries announcing the artifact type; their
    // manifest's subject must be this image (checked below).
    for d in target.layout_artifacts(BUNDLE_MEDIA_TYPE) {
        if !candidates.contains(&d) {
            candidates.push(d);
        }
    }
    if candidates.len() > MAX_SIGNATURES {
        return Err(SignatureError::Unsupported(format!(
            "{} has {} Sigstore bundle referrers, more than the {MAX_SIGNATURES} olmpack reads for one image",
            base_name(target),
            candidates.len()
        )));
    }
    let mut out = Vec::new();
    for d in candidates {
        let Ok(bytes) = target.manifest_by_digest(&d.digest) else {
            continue;
        };
        let Ok(m) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let art = m["artifactType"]
            .as_str()
            .or(m["config"]["mediaType"].as_str());
        if art != Some(BUNDLE_MEDIA_TYPE)
            || m["subject"]["digest"].as_str() != Some(target.digest.as_str())
        {
            continue;
        }
        out.push((d, m));
    }
    Ok(out)
}

/// The bundle layer of a bundle referrer manifest `m`, read and verified against its digest.
pub(crate) fn bundle_layer(target: &Target, m: &serde_json::Value) -> Result<Vec<u8>, Rejection> {
    let layer = m["layers"]
        .as_array()
        .and_then(|l| l.first())
        .ok_or_else(|| Rejection::Malformed("bundle manifest has no layer".into()))?;
    let mt = layer["mediaType"].as_str().unwrap_or_default();
    if mt != BUNDLE_MEDIA_TYPE {
        return Err(Rejection::Malformed(format!(
            "bundle layer media type is {mt:?}, expected {BUNDLE_MEDIA_TYPE:?}"
        )));
    }
    let desc = descriptor_of(layer)
        .ok_or_else(|| Rejection::Malformed("bundle layer descriptor is invalid".into()))?;
    target
        .blob(&desc)
        .map_err(|e| Rejection::Malformed(format!("cannot read the bundle: {e}")))
}

/// Whether a bundle referrer announces an attestation (a predicate type other than cosign's
/// signing one): `verify` leaves those to `verify-attestation`, as cosign does.
pub(crate) fn announces_attestation(m: &serde_json::Value) -> bool {
    m["annotations"][PREDICATE_ANNOTATION]
        .as_str()
        .is_some_and(|p| p != SIGN_PREDICATE_TYPE)
}

/// Finds the Sigstore bundle referrers of `target` and verifies each.
fn verify_bundles(
    target: &Target,
    verifier: Verifier<'_>,
    expected: &Expected<'_>,
) -> Result<Vec<Checked>, SignatureError> {
    let mut out = Vec::new();
    for (d, m) in bundle_referrers(target)? {
        if announces_attestation(&m) {
            continue;
        }
        let source = format!("{} referrer {}", base_name(target), d.digest);
        let result = (|| {
            let body = bundle_layer(target, &m)?;
            let (statement, signer) = match verifier {
                Verifier::Keys(keys) => {
                    let manifest = || target.manifest_by_digest(&target.digest).ok();
                    (
                        check_bundle_for_image(&body, &target.digest, manifest, keys)?,
                        None,
                    )
                }
                Verifier::Keyless(k) => {
                    let v = keyless::check_image_bundle(&body, &target.digest, k)
                        .map_err(Rejection::Keyless)?;
                    let st = v.statement.clone().unwrap_or_else(
                        || serde_json::json!({"messageSignature": {"digest": target.digest}}),
                    );
                    (st, Some(v))
                }
            };
            signing_statement(&statement)?;
            let claimed = super::identity::claimed(&statement, &target.digest);
            super::identity::check(expected.rule, claimed.as_deref(), expected.accept_unnamed)?;
            Ok(match signer {
                Some(v) => keyless_result(statement, &v),
                None => statement,
            })
        })();
        out.push(Checked { source, result });
    }
    Ok(out)
}

/// A bundle's in-toto statement counts as a signature only when it is cosign's signing
/// statement: an attestation (provenance, an SBOM) signed by the same identity says something
/// else about the image, and a referrer that does not announce its type must not pass for a
/// signature (`verify-attestation` checks those).
fn signing_statement(statement: &serde_json::Value) -> Result<(), Rejection> {
    if statement.get("messageSignature").is_some() {
        return Ok(());
    }
    match statement["predicateType"].as_str() {
        Some(SIGN_PREDICATE_TYPE) => Ok(()),
        Some(other) => Err(Rejection::Malformed(format!(
            "the bundle's statement is an attestation of type {other:?}, not cosign's signing statement ({SIGN_PREDICATE_TYPE}); check it with verify-attestation"
        ))),
        None => Err(Rejection::Malformed(
            "the bundle's statement has no predicateType; cosign signs images with its signing statement".into(),
        )),
    }
}

/// Verifies one Sigstore bundle (v0.3 JSON) for the image `digest` with `keys`.
pub fn check_bundle(
    bundle: &[u8],
    digest: &str,
    keys: &[PublicKey],
) -> Result<serde_json::Value, Rejection> {
    check_bundle_for_image(bundle, digest, || None, keys)
}

/// [`check_bundle`], also accepting a message-signature bundle over the image's manifest:
/// `manifest` gives the manifest bytes (read and verified against `digest` by the caller)
/// when such a bundle is found. The verified claim returned for it names the digest and no
/// identity.
pub fn check_bundle_for_image(
    bundle: &[u8],
    digest: &str,
    manifest: impl FnOnce() -> Option<Vec<u8>>,
    keys: &[PublicKey],
) -> Result<serde_json::Value, Rejection> {
    // The one bundle reader (`sigstore::bundle`), so the key path and the keyless verifier
    // cannot read the same bytes two ways.
    let b = Bundle::from_json(bundle).map_err(Rejection::Malformed)?;
    if b.media_type != BUNDLE_MEDIA_TYPE
        && b.media_type != "application/vnd.dev.sigstore.bundle+json;version=0.3"
    {
        return Err(Rejection::Malformed(format!(
            "bundle media type is {:?}, expected {BUNDLE_MEDIA_TYPE:?}",
            b.media_type
        )));
    }
    let env = match (&b.dsse_envelope, &b.message_signature) {
        (None, Some(m)) => return check_message_signature(m, digest, manifest, keys),
        (Some(env), None) => env,
        (Some(_), Some(_)) => {
            return Err(Rejection::Malformed(
                "the bundle holds both a dsseEnvelope and a messageSignature; a Sigstore bundle holds exactly one".into(),
            ));
        }
        (None, None) => {
            return Err(Rejection::Malformed(
                "the bundle holds neither a dsseEnvelope nor a messageSignature".into(),
            ));
        }
    };
    check_envelope(env, digest, keys)
}

/// A DSSE envelope (a bundle's, or cosign 2's `.att` layer as it is) verified with the keys:
/// one signature over the pre-authentication encoding verifies, the payload is an in-toto
/// statement, and the statement's subject is the image `digest`. The statement returned is the
/// one read from the verified bytes.
pub(crate) fn check_envelope(
    env: &super::sigstore::bundle::Envelope,
    digest: &str,
    keys: &[PublicKey],
) -> Result<serde_json::Value, Rejection> {
    if env.signatures.is_empty() {
        return Err(Rejection::Malformed(
            "DSSE envelope has no signature".into(),
        ));
    }
    let message = pae(&env.payload_type, &env.payload.0);
    let mut last = Rejection::Malformed("no signature".into());
    let mut ok = false;
    for s in &env.signatures {
        match check_signature_bytes(keys, &message, &s.sig.0) {
            Ok(()) => {
                ok = true;
                break;
            }
            Err(e) => last = e,
        }
    }
    if !ok {
        return Err(last);
    }
    if env.payload_type != "application/vnd.in-toto+json" {
        return Err(Rejection::Malformed(format!(
            "DSSE payload type is {:?}, expected an in-toto statement",
            env.payload_type
        )));
    }
    let statement: serde_json::Value = serde_json::from_slice(&env.payload.0)
        .map_err(|e| Rejection::Malformed(format!("in-toto statement is not JSON: {e}")))?;
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    let subjects = statement["subject"].as_array().cloned().unwrap_or_default();
    if !subjects
        .iter()
        .any(|s| s["digest"]["sha256"].as_str() == Some(hex))
    {
        let found = subjects
            .first()
            .and_then(|s| s["digest"]["sha256"].as_str())
            .map(|h| format!("sha256:{h}"))
            .unwrap_or_else(|| "no subject".into());
        return Err(Rejection::DigestMismatch {
            expected: digest.to_string(),
            found,
        });
    }
    Ok(statement)
}

/// A message-signature bundle over an image: the message digest must be the image digest and
/// the signature verify over the manifest bytes (which hash to that digest).
fn check_message_signature(
    sig: &MessageSignature,
    digest: &str,
    manifest: impl FnOnce() -> Option<Vec<u8>>,
    keys: &[PublicKey],
) -> Result<serde_json::Value, Rejection> {
    let md = sig.message_digest.as_ref().ok_or_else(|| {
        Rejection::Malformed("the message signature names no digest; an image's is needed".into())
    })?;
    if md.algorithm != "SHA2_256" {
        return Err(Rejection::Malformed(format!(
            "message digest algorithm is {:?}; an image's digest is SHA2_256",
            md.algorithm
        )));
    }
    let found = format!(
        "sha256:{}",
        md.digest
            .0
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    if found != digest {
        return Err(Rejection::DigestMismatch {
            expected: digest.to_string(),
            found,
        });
    }
    let body = manifest()
        .filter(|m| sha256_digest(m) == digest)
        .ok_or_else(|| {
            Rejection::Malformed(format!(
                "the manifest {digest} a message signature signs could not be read"
            ))
        })?;
    check_signature_bytes(keys, &body, &sig.signature.0)?;
    Ok(serde_json::json!({"messageSignature": {"digest": digest}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One reader for bundles: the key path reads them as the keyless verifier does, so a
    /// bundle the verifier calls malformed (two signatures of different kinds, one of which
    /// the key path used to ignore) is not accepted by `verify --key` either.
    #[test]
    fn a_bundle_read_two_ways_is_refused() {
        let key = crate::signature::keys::PrivateKey::from(p256::ecdsa::SigningKey::random(
            &mut rand_core::OsRng,
        ));
        let digest = format!("sha256:{}", "a".repeat(64));
        let st = crate::signature::bundle_sign::sign_statement("quay.io/x/y", &digest);
        let good = crate::signature::bundle_sign::dsse_bundle(&key, &st).unwrap();
        let keys = [key.public()];
        assert!(check_bundle(&good, &digest, &keys).is_ok());
        let mut v: serde_json::Value = serde_json::from_slice(&good).unwrap();
        v["messageSignature"] = serde_json::json!({
            "messageDigest": {"algorithm": "SHA2_256", "digest": B64.encode([0xaa; 32])},
            "signature": "AAAA",
        });
        let both = serde_json::to_vec(&v).unwrap();
        let e = check_bundle(&both, &digest, &keys).unwrap_err();
        assert!(e.to_string().contains("both a dsseEnvelope"), "{e}");
        // And the keyless verifier reads the same bytes the same way.
        let b = crate::signature::sigstore::bundle::Bundle::from_json(&both).unwrap();
        assert!(b.dsse_envelope.is_some() && b.message_signature.is_some());
        // A field of the wrong type is refused naming its path, by the one reader.
        let mut v: serde_json::Value = serde_json::from_slice(&good).unwrap();
        v["dsseEnvelope"]["payload"] = serde_json::json!("not base64!");
        let e = check_bundle(&serde_json::to_vec(&v).unwrap(), &digest, &keys).unwrap_err();
        assert!(e.to_string().contains("dsseEnvelope.payload"), "{e}");
    }

    #[test]
    fn payload_is_cosigns_bytes() {
        let p = payload("quay.io/x/y", "sha256:ab");
        assert_eq!(
            std::str::from_utf8(&p).unwrap(),
            r#"{"critical":{"identity":{"docker-reference":"quay.io/x/y"},"image":{"docker-manifest-digest":"sha256:ab"},"type":"cosign container image signature"},"optional":null}"#
        );
        assert_eq!(signature_tag("sha256:ab"), "sha256-ab.sig");
    }

    #[test]
    fn payload_checks_refuse_each_tampering() {
        let aa = format!("sha256:{}", "a".repeat(64));
        let bb = format!("sha256:{}", "b".repeat(64));
        let d = aa.as_str();
        let ok = payload("quay.io/x/y", d);
        let repo = IdentityRule::MatchRepository("quay.io/x/y".into());
        let cli = Expected {
            rule: &repo,
            accept_unnamed: true,
        };
        let any = Expected::ANY;
        assert!(check_payload(&ok, d, &cli).is_ok());
        assert!(matches!(
            check_payload(&ok, &bb, &any),
            Err(Rejection::DigestMismatch { .. })
        ));
        assert!(matches!(
            check_payload(&payload("quay.io/x/z", d), d, &cli),
            Err(Rejection::IdentityMismatch { .. })
        ));
        assert!(matches!(
            check_payload(b"{", d, &any),
            Err(Rejection::Malformed(_))
        ));
        // A policy's default rule never accepts cosign's bare repository, nor no identity.
        let policy = IdentityRule::MatchRepoDigestOrExact("quay.io/x/y:v1".into());
        let strict = Expected {
            rule: &policy,
            accept_unnamed: false,
        };
        assert!(check_payload(&ok, d, &strict).is_err());
        assert!(check_payload(&payload("", d), d, &strict).is_err());
        assert!(check_payload(&payload("", d), d, &cli).is_ok());
    }
}
