//! Rekor receipts, checked offline: the entry body must describe this very signature, the log
//! must be one of the trusted root, and the entry must be proven logged, by an RFC 6962
//! inclusion proof ending at a checkpoint the log signed (a signed note), and/or by Rekor v1's
//! signed entry timestamp (SET) over the canonical entry.

use super::Refusal;
use super::bundle::{B64, TlogEntry, decode_b64};
use super::crypto;
use super::trust::{LogInstance, TrustedRoot};
use crate::signature::public_key::PublicKey;
use sha2::Digest as _;

/// What the entry body must describe.
pub struct Expected<'a> {
    /// The signature bytes.
    pub signature: &'a [u8],
    /// The signing certificate (DER), or `None` with a key.
    pub certificate: Option<&'a [u8]>,
    /// The key's PKIX DER when signed with a key.
    pub key_spki: Option<&'a [u8]>,
    /// SHA-256 of what was signed: the artifact (message signatures) or the DSSE PAE.
    pub signed_digest: [u8; 32],
    /// The DSSE payload, for `dsse` and `intoto` entries.
    pub dsse_payload: Option<&'a [u8]>,
    /// The DSSE payload type.
    pub dsse_payload_type: Option<&'a str>,
}

/// The log of `entry` in `root`, with its key.
pub fn log_of<'r>(
    entry: &TlogEntry,
    root: &'r TrustedRoot,
) -> Result<(&'r LogInstance, PublicKey), Refusal> {
    let id = &entry.log_id.key_id.0;
    let log = root
        .tlogs
        .iter()
        .find(|l| {
            &l.log_id.key_id.0 == id
                || l.checkpoint_key_id
                    .as_ref()
                    .is_some_and(|c| &c.key_id.0 == id)
        })
        .ok_or_else(|| {
            Refusal::TlogUnknown(format!(
                "the entry is from a log the trusted root does not list (log id {})",
                hex(id)
            ))
        })?;
    let key = crypto::key_from_spki(&log.public_key.raw_bytes.0).ok_or_else(|| {
        Refusal::TlogUnknown(format!(
            "the key of the log {} cannot be read",
            log.base_url
        ))
    })?;
    Ok((log, key))
}

/// Checks that the entry body is this signature's (kind, signature, key or certificate,
/// digest).
pub fn check_body(entry: &TlogEntry, want: &Expected<'_>) -> Result<(), Refusal> {
    let mismatch = |w: &str| Refusal::TlogEntryMismatch(w.to_string());
    let body: serde_json::Value = serde_json::from_slice(&entry.canonicalized_body.0)
        .map_err(|e| mismatch(&format!("the entry body is not JSON: {e}")))?;
    let kind = body["kind"].as_str().unwrap_or_default();
    let version = body["apiVersion"].as_str().unwrap_or_default();
    if kind != entry.kind_version.kind || version != entry.kind_version.version {
        return Err(mismatch(&format!(
            "the body is a {kind} {version} entry, the bundle says {} {}",
            entry.kind_version.kind, entry.kind_version.version
        )));
    }
    let spec = &body["spec"];
    let b64 = |v: &serde_json::Value| v.as_str().and_then(decode_b64);
    // With a key, the log must name that key (or a certificate for it): the bundle's own
    // certificate is not trusted then, so an entry logged for it proves nothing about the key.
    let verifier_ok = |v: Option<Vec<u8>>| -> bool {
        let Some(v) = v else { return false };
        let der = pem_der(&v).unwrap_or(v);
        match (want.key_spki, want.certificate) {
            (Some(k), _) => der == k || certificate_spki(&der).is_some_and(|s| s == k),
            (None, Some(c)) => der == c,
            _ => false,
        }
    };
    match (kind, version) {
        ("hashedrekord", "0.0.1") => {
            if b64(&spec["signature"]["content"]).as_deref() != Some(want.signature) {
                return Err(mismatch("the logged signature is not the bundle's"));
            }
            if !verifier_ok(b64(&spec["signature"]["publicKey"]["content"])) {
                return Err(mismatch(
                    "the logged certificate or key is not the bundle's",
                ));
            }
            let h = &spec["data"]["hash"];
            if h["algorithm"].as_str() != Some("sha256")
                || h["value"].as_str() != Some(hex(&want.signed_digest).as_str())
            {
                return Err(mismatch("the logged digest is not the artifact's"));
            }
        }
        ("hashedrekord", "0.0.2") => {
            let s = &spec["hashedRekordV002"];
            if b64(&s["signature"]["content"]).as_deref() != Some(want.signature) {
                return Err(mismatch("the logged signature is not the bundle's"));
            }
            let v = &s["signature"]["verifier"];
            let raw =
                b64(&v["x509Certificate"]["rawBytes"]).or_else(|| b64(&v["publicKey"]["rawBytes"]));
            if !verifier_ok(raw) {
                return Err(mismatch(
                    "the logged certificate or key is not the bundle's",
                ));
            }
            if b64(&s["data"]["digest"]).as_deref() != Some(&want.signed_digest[..]) {
                return Err(mismatch("the logged digest is not the artifact's"));
            }
        }
        ("dsse", "0.0.1") | ("dsse", "0.0.2") | ("intoto", "0.0.2") => {
            let payload = want
                .dsse_payload
                .ok_or_else(|| mismatch("a DSSE entry for a bundle without an envelope"))?;
            let payload_hash = sha2::Sha256::digest(payload);
            let (hash_ok, sigs) = match kind {
                "dsse" if version == "0.0.1" => (
                    spec["payloadHash"]["value"].as_str() == Some(hex(&payload_hash).as_str()),
                    spec["signatures"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| (b64(&s["signature"]), b64(&s["verifier"])))
                        .collect::<Vec<_>>(),
                ),
                "dsse" => {
                    let s = &spec["dsseV002"];
                    (
                        b64(&s["payloadHash"]["digest"]).as_deref() == Some(&payload_hash[..]),
                        s["signatures"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|x| {
                                let v = &x["verifier"];
                                (
                                    b64(&x["content"]),
                                    b64(&v["x509Certificate"]["rawBytes"])
                                        .or_else(|| b64(&v["publicKey"]["rawBytes"])),
                                )
                            })
                            .collect(),
                    )
                }
                _ => {
                    let c = &spec["content"];
                    if c["envelope"]["payloadType"].as_str() != want.dsse_payload_type {
                        return Err(mismatch("the logged payload type is not the bundle's"));
                    }
                    (
                        c["payloadHash"]["value"].as_str() == Some(hex(&payload_hash).as_str()),
                        c["envelope"]["signatures"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|s| {
                                // intoto 0.0.2 logs the signature base64-encoded twice.
                                let once = b64(&s["sig"]);
                                let twice = once
                                    .as_deref()
                                    .and_then(|o| std::str::from_utf8(o).ok())
                                    .and_then(decode_b64);
                                (twice.or(once), b64(&s["publicKey"]))
                            })
                            .collect(),
                    )
                }
            };
            if !hash_ok {
                return Err(mismatch("the logged payload hash is not the envelope's"));
            }
            if sigs.len() != 1 {
                return Err(mismatch(&format!(
                    "the entry logs {} signatures, the envelope has one",
                    sigs.len()
                )));
            }
            let (sig, verifier) = sigs.into_iter().next().unwrap_or((None, None));
            if sig.as_deref() != Some(want.signature) {
                return Err(mismatch("the logged signature is not the envelope's"));
            }
            if !verifier_ok(verifier) {
                return Err(mismatch(
                    "the logged certificate or key is not the bundle's",
                ));
            }
        }
        _ => {
            return Err(Refusal::Unsupported(format!(
                "Rekor entries of kind {kind} {version} are not checked by olmpack"
            )));
        }
    }
    Ok(())
}

/// Checks the signed entry timestamp: the log's signature over the canonical JSON of the
/// entry (body, integrated time, log id, log index).
pub fn check_set(entry: &TlogEntry, key: &PublicKey) -> Result<(), Refusal> {
    let set = entry
        .inclusion_promise
        .as_ref()
        .ok_or_else(|| Refusal::SignedEntryTimestamp("the entry has no SET".into()))?;
    let payload = format!(
        "{{\"body\":\"{}\",\"integratedTime\":{},\"logID\":\"{}\",\"logIndex\":{}}}",
        serde_json::to_value(&entry.canonicalized_body)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        entry.integrated_time.0,
        hex(&entry.log_id.key_id.0),
        entry.log_index.0
    );
    if crypto::verify(
        key,
        crypto::default_hash(key),
        payload.as_bytes(),
        &set.signed_entry_timestamp.0,
    ) {
        Ok(())
    } else {
        Err(Refusal::SignedEntryTimestamp(
            "the signed entry timestamp does not verify with the log's key".into(),
        ))
    }
}

/// Checks the inclusion proof up to its root, then the checkpoint: signed by the log, for
/// that root and size, and naming that log as its origin.
pub fn check_inclusion(
    entry: &TlogEntry,
    log: &LogInstance,
    key: &PublicKey,
) -> Result<(), Refusal> {
    let proof = entry
        .inclusion_proof
        .as_ref()
        .ok_or_else(|| Refusal::InclusionProof("the entry has no inclusion proof".into()))?;
    let (index, size) = (proof.log_index.0, proof.tree_size.0);
    if index < 0 || size <= 0 || index >= size {
        return Err(Refusal::InclusionProof(format!(
            "index {index} is not inside a tree of size {size}"
        )));
    }
    let mut leaf_in = vec![0u8];
    leaf_in.extend_from_slice(&entry.canonicalized_body.0);
    let leaf: [u8; 32] = sha2::Sha256::digest(&leaf_in).into();
    let root =
        root_from_proof(index as u64, size as u64, leaf, &proof.hashes).ok_or_else(|| {
            Refusal::InclusionProof("the audit path has the wrong length for the tree".into())
        })?;
    if root[..] != proof.root_hash.0[..] {
        return Err(Refusal::InclusionProof(
            "the audit path does not lead to the proof's root hash".into(),
        ));
    }
    check_checkpoint(
        &proof.checkpoint.envelope,
        &entry.log_id.key_id.0,
        &log.base_url,
        key,
        size as u64,
        &proof.root_hash.0,
    )
}

/// RFC 9162 section 2.1.3.2: the root an audit path leads to, or `None` when it does not fit.
fn root_from_proof(index: u64, size: u64, leaf: [u8; 32], path: &[B64]) -> Option<[u8; 32]> {
    let node = |l: &[u8], r: &[u8]| -> [u8; 32] {
        let mut h = sha2::Sha256::new();
        h.update([1u8]);
        h.update(l);
        h.update(r);
        h.finalize().into()
    };
    let (mut f, mut s) = (index, size - 1);
    let mut r = leaf;
    for p in path {
        if p.0.len() != 32 || s == 0 {
            return None;
        }
        if f & 1 == 1 || f == s {
            r = node(&p.0, &r);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            r = node(&r, &p.0);
        }
        f >>= 1;
        s >>= 1;
    }
    (s == 0).then_some(r)
}

/// The origin a log's checkpoints carry, from its `baseUrl`: the host (and port). Rekor v1
/// writes `<host> - <tree id>` (`rekor.sigstore.dev - 1193050959916656506`), Rekor v2 the host
/// alone (`log2025-1.rekor.sigstore.dev`); both start with the host.
fn origin_host(base_url: &str) -> &str {
    let rest = base_url
        .strip_prefix("https://")
        .or_else(|| base_url.strip_prefix("http://"))
        .unwrap_or(base_url);
    rest.split('/').next().unwrap_or_default()
}

/// Checks a signed note (checkpoint): one signature line whose key hint is the log id's first
/// four bytes verifies with the log's key, the note names `size` and `root`, and its origin
/// is the log's (a note signed by the same key for another log, or a shard, is not this
/// log's word).
fn check_checkpoint(
    text: &str,
    log_id: &[u8],
    base_url: &str,
    key: &PublicKey,
    size: u64,
    root: &[u8],
) -> Result<(), Refusal> {
    let bad = |w: String| Err(Refusal::Checkpoint(w));
    if text.matches("\n\n").count() != 1 {
        return bad("the note has no single blank line before its signatures".into());
    }
    let Some(split) = text.find("\n\n") else {
        return bad("the note has no signature block".into());
    };
    let (note, sigs) = (&text[..split + 1], &text[split + 2..]);
    let lines: Vec<&str> = note.trim_end_matches('\n').split('\n').collect();
    if lines.len() < 3 || lines[0].is_empty() {
        return bad("the checkpoint lacks its origin, size or root hash line".into());
    }
    let host = origin_host(base_url);
    let origin_ok = !host.is_empty()
        && (lines[0] == host
            || lines[0]
                .strip_prefix(host)
                .is_some_and(|r| r.starts_with(" - ")));
    if !origin_ok {
        return bad(format!(
            "the checkpoint's origin {:?} is not the log {base_url} (expected {:?} or \"{host} - <tree id>\")",
            lines[0], host
        ));
    }
    if lines[1].parse::<u64>().ok() != Some(size) {
        return bad(format!(
            "the checkpoint is for a tree of size {:?}, the proof's tree has {size}",
            lines[1]
        ));
    }
    if decode_b64(lines[2]).as_deref() != Some(root) {
        return bad("the checkpoint's root hash is not the proof's".into());
    }
    if !sigs.ends_with('\n') {
        return bad("the signature block does not end with a newline".into());
    }
    let hint = log_id.get(..4).unwrap_or_default();
    for line in sigs.lines() {
        let Some(rest) = line.strip_prefix("\u{2014} ") else {
            continue;
        };
        let Some((_name, sig)) = rest.split_once(' ') else {
            continue;
        };
        let Some(raw) = decode_b64(sig) else {
            continue;
        };
        if raw.len() < 5 || &raw[..4] != hint {
            continue;
        }
        if crypto::verify(key, crypto::default_hash(key), note.as_bytes(), &raw[4..]) {
            return Ok(());
        }
        return bad("the checkpoint's signature by the log does not verify".into());
    }
    bad(format!(
        "no signature of the checkpoint is by the log {} (key hint {})",
        hex(log_id),
        hex(hint)
    ))
}

/// The DER in a PEM block (`CERTIFICATE`, `PUBLIC KEY`), as Rekor bodies carry them.
fn pem_der(pem: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(pem).ok()?;
    let b64: String = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty())
        .collect();
    if !text.trim_start().starts_with("-----BEGIN ") {
        return None;
    }
    decode_b64(&b64)
}

/// The PKIX DER of the key of a DER certificate; `None` when `der` is not a certificate.
fn certificate_spki(der: &[u8]) -> Option<Vec<u8>> {
    use x509_cert::der::{Decode as _, Encode as _};
    let c = x509_cert::Certificate::from_der(der).ok()?;
    c.tbs_certificate.subject_public_key_info.to_der().ok()
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_paths_of_a_three_leaf_tree() {
        let leaf = |b: u8| -> [u8; 32] { sha2::Sha256::digest([0u8, b]).into() };
        let node = |l: &[u8], r: &[u8]| -> [u8; 32] {
            let mut v = vec![1u8];
            v.extend_from_slice(l);
            v.extend_from_slice(r);
            sha2::Sha256::digest(&v).into()
        };
        let (a, b, c) = (leaf(0), leaf(1), leaf(2));
        let ab = node(&a, &b);
        let root = node(&ab, &c);
        assert_eq!(root_from_proof(2, 3, c, &[B64(ab.to_vec())]), Some(root));
        assert_eq!(
            root_from_proof(0, 3, a, &[B64(b.to_vec()), B64(c.to_vec())]),
            Some(root)
        );
        assert_ne!(
            root_from_proof(1, 3, a, &[B64(b.to_vec()), B64(c.to_vec())]),
            Some(root)
        );
        assert_eq!(root_from_proof(0, 3, a, &[B64(b.to_vec())]), None);
    }
}
