//! `sigstoreSigned` with `fulcio`, `pki` or `rekorPublicKey*`, evaluated as containers/image
//! evaluates it (`policy_eval_sigstore.go`: `prepareTrustRoot`, `isSignatureAccepted`), and
//! satisfied by either signature format: a cosign `.sig` layer (its annotations carry the
//! certificate, the chain and the Rekor SET) or a Sigstore bundle referrer (the bundle's
//! certificate and transparency-log entry), which containers/image cannot read yet.
//!
//! - keys with Rekor: the SET must verify with a Rekor key and name one of the keys, this
//!   signature and this payload; only that key may then verify the payload.
//! - `fulcio` (always with Rekor): the SET as above, naming the certificate; the certificate
//!   must chain to the CA (through the chain given with the signature, its last entry left
//!   out as containers/image leaves it out) at the SET's integrated time, for code signing,
//!   with the OIDC issuer and the subject email asked for.
//! - `pki`: the certificate chains to the roots (through the policy's and the signature's
//!   intermediates) now, for code signing, with the subject email and hostname asked for.
//!
//! Then the payload is checked as with a key: its signature by the certificate's (or the
//! vouched key's) public key, its digest, and its identity under `signedIdentity`.

use super::config::{Keys, Signer, SigstoreTrust};
use crate::signature::cosign::{self, Expected};
use crate::signature::public_key::PublicKey;
use crate::signature::sigstore::bundle::Bundle;
use crate::signature::sigstore::cert::Cert;
use crate::signature::sigstore::{pae, rekor_set, tlog, x509_verify};
use crate::signature::store::{Target, descriptor_of};
use crate::signature::{Checked, Rejection, SignatureError, keys};
use sha2::Digest as _;

/// The annotation holding the Rekor SET of a `.sig` layer.
pub const SET_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// The annotation holding the signing certificate (PEM) of a `.sig` layer.
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// The annotation holding the certificate chain (PEM, the root last) of a `.sig` layer.
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";

/// A requirement's trust with its files read and parsed (`prepareTrustRoot`).
#[derive(Debug, Clone)]
pub struct Prepared {
    signer: Prepped,
    rekor: Vec<PublicKey>,
}

#[derive(Debug, Clone)]
enum Prepped {
    Keys(Vec<PublicKey>),
    Fulcio {
        cas: Vec<Cert>,
        issuer: String,
        email: String,
    },
    Pki {
        roots: Vec<Cert>,
        intermediates: Vec<Cert>,
        email: Option<String>,
        hostname: Option<String>,
    },
}

/// Reads the files or data of a [`Keys`], each with the name errors give it.
pub type Reader<'a> = &'a dyn Fn(&Keys) -> Result<Vec<(String, Vec<u8>)>, String>;

impl Prepared {
    /// Reads what `t` names (keys, CA certificates, Rekor keys) through `read`; any file that
    /// cannot be read or parsed fails the requirement, naming it.
    pub fn new(t: &SigstoreTrust, read: Reader<'_>) -> Result<Prepared, String> {
        let signer = match &t.signer {
            Signer::Keys(k) => Prepped::Keys(
                read(k)?
                    .iter()
                    .map(|(name, b)| keys::parse_public_key(b, name).map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?,
            ),
            Signer::Fulcio {
                ca,
                oidc_issuer,
                subject_email,
            } => Prepped::Fulcio {
                cas: one_pool(read, ca, "Fulcio CA")?,
                issuer: oidc_issuer.clone(),
                email: subject_email.clone(),
            },
            Signer::Pki {
                roots,
                intermediates,
                subject_email,
                subject_hostname,
            } => Prepped::Pki {
                roots: one_pool(read, roots, "PKI CA Roots")?,
                intermediates: match intermediates {
                    None => Vec::new(),
                    Some(k) => {
                        let (name, b) = read(k)?.into_iter().next().ok_or("no intermediates")?;
                        x509_verify::certificates_from_pem(&b).map_err(|e| {
                            format!("loading trusted intermediate certificates from {name}: {e}")
                        })?
                    }
                },
                email: subject_email.clone(),
                hostname: subject_hostname.clone(),
            },
        };
        let mut rekor = Vec::new();
        if let Some(k) = &t.rekor_keys {
            for (i, (name, b)) in read(k)?.iter().enumerate() {
                let key = keys::parse_public_key(b, name)
                    .map_err(|e| format!("parsing Rekor public key {}: {e}", i + 1))?;
                if !rekor_set::is_rekor_key(&key) {
                    return Err(format!(
                        "Rekor public key {} ({name}) is not using ECDSA",
                        i + 1
                    ));
                }
                rekor.push(key);
            }
        }
        if matches!(signer, Prepped::Fulcio { .. }) && rekor.is_empty() {
            return Err("fulcio is specified without a Rekor public key".into());
        }
        Ok(Prepared { signer, rekor })
    }
}

fn one_pool(read: Reader<'_>, k: &Keys, what: &str) -> Result<Vec<Cert>, String> {
    let (name, b) = read(k)?
        .into_iter()
        .next()
        .ok_or_else(|| format!("no {what}"))?;
    x509_verify::pool_from_pem(&b, what).map_err(|e| format!("{name}: {e}"))
}

fn refused(why: String) -> Rejection {
    Rejection::KeyNotValid(why)
}

/// The one certificate of a PEM annotation (`parseLeafCertFromPEM`).
fn leaf_from_pem(pem: &[u8]) -> Result<Cert, Rejection> {
    let certs = x509_verify::certificates_from_pem(pem)
        .map_err(|e| Rejection::Malformed(format!("parsing leaf certificate: {e}")))?;
    match <[Cert; 1]>::try_from(certs) {
        Ok([c]) => Ok(c),
        Err(v) if v.is_empty() => Err(Rejection::Malformed(
            "no certificate found in signature certificate data".into(),
        )),
        Err(_) => Err(Rejection::Malformed(
            "unexpected multiple certificates present in signature certificate data".into(),
        )),
    }
}

/// The intermediates a signature's chain offers: all but its last certificate (the root,
/// which only the policy may give).
fn offered_intermediates(chain: Option<&[u8]>) -> Result<Vec<Cert>, Rejection> {
    let Some(chain) = chain.filter(|c| !c.is_empty()) else {
        return Ok(Vec::new());
    };
    let mut certs = x509_verify::certificates_from_pem(chain)
        .map_err(|e| Rejection::Malformed(format!("loading certificate chain: {e}")))?;
    certs.pop();
    Ok(certs)
}

/// The certificate checks of `fulcio` at `t`: chain, issuer, email.
fn check_fulcio(
    leaf: &Cert,
    inters: &[Cert],
    cas: &[Cert],
    issuer: &str,
    email: &str,
    t: i64,
) -> Result<(), Rejection> {
    x509_verify::verify(leaf, inters, cas, t).map_err(|e| {
        refused(format!(
            "Fulcio certificate: verifying the leaf certificate failed: {e}"
        ))
    })?;
    let got = x509_verify::fulcio_issuer(leaf)
        .map_err(|e| refused(format!("Fulcio certificate: {e}")))?;
    if got != issuer {
        return Err(refused(format!(
            "Fulcio certificate: unexpected OIDC issuer {got:?} (the policy requires {issuer:?})"
        )));
    }
    let emails = x509_verify::emails(leaf);
    if !emails.iter().any(|e| e == email) {
        return Err(refused(format!(
            "Fulcio certificate: required email {email:?} not found (got {emails:?})"
        )));
    }
    Ok(())
}

/// The certificate checks of `pki` now: chain, email, hostname.
fn check_pki(
    leaf: &Cert,
    inters: &[Cert],
    roots: &[Cert],
    email: Option<&str>,
    hostname: Option<&str>,
    now: i64,
) -> Result<(), Rejection> {
    x509_verify::verify(leaf, inters, roots, now).map_err(|e| {
        refused(format!(
            "PKI certificate: verifying the leaf certificate failed: {e}"
        ))
    })?;
    if let Some(email) = email {
        let emails = x509_verify::emails(leaf);
        if !emails.iter().any(|e| e == email) {
            return Err(refused(format!(
                "PKI certificate: required email {email:?} not found (got {emails:?})"
            )));
        }
    }
    if let Some(host) = hostname {
        x509_verify::verify_hostname(leaf, host)
            .map_err(|e| refused(format!("PKI certificate: unexpected subject hostname: {e}")))?;
    }
    Ok(())
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Checks one cosign `.sig` layer: `payload` (its blob) with its `annotations`, for the image
/// `digest`, under `p`; the verified payload, or why it is refused.
pub fn check_layer(
    p: &Prepared,
    payload: &[u8],
    annotations: &serde_json::Map<String, serde_json::Value>,
    digest: &str,
    expected: &Expected<'_>,
) -> Result<serde_json::Value, Rejection> {
    let ann = |k: &str| annotations.get(k).and_then(|v| v.as_str());
    let missing = |k: &str| Rejection::Malformed(format!("missing {k} annotation"));
    // Go's base64 decoder skips line breaks, and cosign wraps long (RSA) signatures.
    let sig: String = ann(cosign::SIGNATURE_ANNOTATION)
        .ok_or_else(|| missing(cosign::SIGNATURE_ANNOTATION))?
        .chars()
        .filter(|c| *c != '\n' && *c != '\r')
        .collect();
    let sig = sig.as_str();
    let keys: Vec<PublicKey> = match &p.signer {
        Prepped::Keys(keys) if p.rekor.is_empty() => keys.clone(),
        Prepped::Keys(keys) => {
            let set = ann(SET_ANNOTATION).ok_or_else(|| missing(SET_ANNOTATION))?;
            vec![first_logged(keys, "the Rekor SET", |k| {
                let pem = key_pem(k)?;
                Ok(rekor_set::verify(&p.rekor, set.as_bytes(), &pem, sig, payload).map(|_| ()))
            })?]
        }
        Prepped::Fulcio { cas, issuer, email } => {
            let set = ann(SET_ANNOTATION).ok_or_else(|| missing(SET_ANNOTATION))?;
            let cert =
                ann(CERTIFICATE_ANNOTATION).ok_or_else(|| missing(CERTIFICATE_ANNOTATION))?;
            let t = rekor_set::verify(&p.rekor, set.as_bytes(), cert.as_bytes(), sig, payload)
                .map_err(|e| refused(format!("Rekor SET: {e}")))?;
            let inters = offered_intermediates(ann(CHAIN_ANNOTATION).map(str::as_bytes))?;
            let leaf = leaf_from_pem(cert.as_bytes())?;
            check_fulcio(&leaf, &inters, cas, issuer, email, t)?;
            vec![leaf.key]
        }
        Prepped::Pki {
            roots,
            intermediates,
            email,
            hostname,
        } => {
            let cert =
                ann(CERTIFICATE_ANNOTATION).ok_or_else(|| missing(CERTIFICATE_ANNOTATION))?;
            let mut inters = intermediates.clone();
            inters.extend(offered_intermediates(
                ann(CHAIN_ANNOTATION).map(str::as_bytes),
            )?);
            let leaf = leaf_from_pem(cert.as_bytes())?;
            check_pki(
                &leaf,
                &inters,
                roots,
                email.as_deref(),
                hostname.as_deref(),
                now(),
            )?;
            vec![leaf.key]
        }
    };
    cosign::check_signed_payload(&keys, payload, sig, digest, expected)
}

/// With keys and Rekor: the first key the log entry names (`check` says why each other one
/// does not), as containers/image accepts only the key the Rekor entry was made for.
fn first_logged(
    keys: &[PublicKey],
    entry: &str,
    mut check: impl FnMut(&PublicKey) -> Result<Result<(), String>, Rejection>,
) -> Result<PublicKey, Rejection> {
    let mut failures = Vec::new();
    for k in keys {
        match check(k)? {
            Ok(()) => return Ok(k.clone()),
            Err(e) => failures.push(e),
        }
    }
    Err(refused(format!(
        "no public key verified against {entry}: {}",
        failures.join(", ")
    )))
}

fn key_pem(k: &PublicKey) -> Result<Vec<u8>, Rejection> {
    rekor_set::key_pem(k).map_err(Rejection::Malformed)
}

fn spki(k: &PublicKey) -> Result<Vec<u8>, Rejection> {
    let pem = key_pem(k)?;
    x509_verify::single_pem(&pem, "key").map_err(Rejection::Malformed)
}

/// Checks one Sigstore bundle (a referrer of the image `digest`) under `p`: its certificate
/// (or the vouched key) as a `.sig` layer's would be checked, its transparency-log entry's
/// SET in place of the SET annotation, then its signature and statement as `verify` checks
/// them. `manifest` gives the image manifest for a message-signature bundle.
pub fn check_bundle(
    p: &Prepared,
    bytes: &[u8],
    digest: &str,
    manifest: impl FnOnce() -> Option<Vec<u8>>,
    expected: &Expected<'_>,
) -> Result<serde_json::Value, Rejection> {
    let b = Bundle::from_json(bytes).map_err(Rejection::Malformed)?;
    let vm = &b.verification_material;
    let (cert_der, chain_rest): (Option<Vec<u8>>, Vec<Vec<u8>>) =
        match (&vm.certificate, &vm.x509_certificate_chain) {
            (Some(c), _) => (Some(c.raw_bytes.0.clone()), Vec::new()),
            (None, Some(ch)) => {
                let mut all = ch.certificates.iter().map(|c| c.raw_bytes.0.clone());
                (all.next(), all.collect())
            }
            (None, None) => (None, Vec::new()),
        };
    // What the log must have recorded: this signature over this digest.
    let (signature, signed_digest, dsse) = match (&b.message_signature, &b.dsse_envelope) {
        (Some(m), None) => {
            let d = m
                .message_digest
                .as_ref()
                .and_then(|d| <[u8; 32]>::try_from(d.digest.0.as_slice()).ok())
                .ok_or_else(|| {
                    Rejection::Malformed("the message signature names no SHA-256 digest".into())
                })?;
            (m.signature.0.clone(), d, None)
        }
        (None, Some(env)) => {
            let [s] = env.signatures.as_slice() else {
                return Err(Rejection::Malformed(format!(
                    "the DSSE envelope has {} signatures, a Sigstore bundle has one",
                    env.signatures.len()
                )));
            };
            let d: [u8; 32] = sha2::Sha256::digest(pae(&env.payload_type, &env.payload.0)).into();
            (s.sig.0.clone(), d, Some(env))
        }
        _ => {
            return Err(Rejection::Malformed(
                "the bundle must hold exactly one of messageSignature and dsseEnvelope".into(),
            ));
        }
    };
    let logged = |certificate: Option<&[u8]>, key_spki: Option<&[u8]>| -> Result<i64, String> {
        let want = tlog::Expected {
            signature: &signature,
            certificate,
            key_spki,
            signed_digest,
            dsse_payload: dsse.map(|e| e.payload.0.as_slice()),
            dsse_payload_type: dsse.map(|e| e.payload_type.as_str()),
        };
        let mut why = String::from("the bundle has no transparency-log entry");
        for entry in &vm.tlog_entries {
            if let Err(e) = tlog::check_body(entry, &want) {
                why = e.to_string();
                continue;
            }
            if !p.rekor.iter().any(|k| tlog::check_set(entry, k).is_ok()) {
                why = "the entry's signed entry timestamp does not verify with any Rekor public key of the policy".into();
                continue;
            }
            return Ok(entry.integrated_time.0);
        }
        Err(why)
    };
    let need_cert = || -> Result<Cert, Rejection> {
        let der = cert_der
            .as_ref()
            .ok_or_else(|| Rejection::Malformed("the bundle carries no certificate".into()))?;
        Cert::from_der(der)
            .map_err(|e| Rejection::Malformed(format!("parsing leaf certificate: {e}")))
    };
    let chain: Vec<Cert> = chain_rest
        .iter()
        .map(|d| Cert::from_der(d))
        .collect::<Result<_, _>>()
        .map_err(|e| Rejection::Malformed(format!("loading certificate chain: {e}")))?;
    // The bundle's chain may end with a root: as with `.sig`, only the policy gives roots.
    let offered: Vec<Cert> = chain.into_iter().filter(|c| !c.signed_by(c)).collect();
    let keys: Vec<PublicKey> = match &p.signer {
        Prepped::Keys(keys) if p.rekor.is_empty() => keys.clone(),
        Prepped::Keys(keys) => {
            vec![first_logged(keys, "the bundle's Rekor entry", |k| {
                Ok(logged(None, Some(&spki(k)?)).map(|_| ()))
            })?]
        }
        Prepped::Fulcio { cas, issuer, email } => {
            let leaf = need_cert()?;
            let t =
                logged(Some(&leaf.der), None).map_err(|e| refused(format!("Rekor entry: {e}")))?;
            check_fulcio(&leaf, &offered, cas, issuer, email, t)?;
            vec![leaf.key]
        }
        Prepped::Pki {
            roots,
            intermediates,
            email,
            hostname,
        } => {
            let leaf = need_cert()?;
            let mut inters = intermediates.clone();
            inters.extend(offered);
            check_pki(
                &leaf,
                &inters,
                roots,
                email.as_deref(),
                hostname.as_deref(),
                now(),
            )?;
            vec![leaf.key]
        }
    };
    let statement = cosign::check_bundle_for_image(bytes, digest, manifest, &keys)?;
    let claimed = crate::signature::identity::claimed(&statement, digest);
    crate::signature::identity::check(expected.rule, claimed.as_deref(), expected.accept_unnamed)?;
    Ok(statement)
}

/// Every cosign signature of `target` (the `.sig` layers, then the Sigstore bundle
/// referrers that are signatures, not attestations) checked under `p`.
pub fn verify(
    target: &Target,
    p: &Prepared,
    expected: &Expected<'_>,
) -> Result<Vec<Checked>, SignatureError> {
    let mut out = Vec::new();
    cosign::sig_layers(target, &mut out, |layer| {
        let mt = layer["mediaType"].as_str().unwrap_or_default();
        if mt != cosign::PAYLOAD_MEDIA_TYPE {
            return Err(Rejection::Malformed(format!(
                "layer media type is {mt:?}, expected {:?}",
                cosign::PAYLOAD_MEDIA_TYPE
            )));
        }
        let empty = serde_json::Map::new();
        let annotations = layer["annotations"].as_object().unwrap_or(&empty);
        let desc = descriptor_of(layer)
            .ok_or_else(|| Rejection::Malformed("layer descriptor is invalid".into()))?;
        let body = target
            .blob(&desc)
            .map_err(|e| Rejection::Malformed(format!("cannot read the payload: {e}")))?;
        check_layer(p, &body, annotations, &target.digest, expected)
    })?;
    for (d, m) in cosign::bundle_referrers(target)? {
        if cosign::announces_attestation(&m) {
            continue;
        }
        let source = format!("{} referrer {}", target.base_name(), d.digest);
        let result = cosign::bundle_layer(target, &m).and_then(|body| {
            let manifest = || target.manifest_by_digest(&target.digest).ok();
            check_bundle(p, &body, &target.digest, manifest, expected)
        });
        out.push(Checked { source, result });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
