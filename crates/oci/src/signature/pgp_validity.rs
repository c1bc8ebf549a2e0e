//! Whether an OpenPGP certificate may vouch for a data signature: the checks GnuPG makes before
//! it calls a signature good, which rpgp leaves to its caller (rpgp checks the cryptography of
//! one signature against one key, not whether that key is still the certificate's).
//!
//! containers/image verifies simple signatures with gpgme and refuses any signature whose
//! status is not plain "good" (`mechanism_gpgme.go`): a revoked key (`REVKEYSIG`), an expired
//! key (`EXPKEYSIG`), an expired signature (`EXPSIG`), a key without signing usage, a subkey
//! that is not bound to the primary key or not cross-certified. The same rules here:
//!
//! - the primary key needs a valid self-signature (a user ID certification or a direct-key
//!   signature, cryptographically checked, not from the future); the newest one gives the key's
//!   expiry and usage flags;
//! - a valid key revocation (type 0x20, made by the primary key) revokes the key and all its
//!   subkeys, whatever its reason and date (as gpg);
//! - a subkey counts only with a valid binding signature (0x18) by the primary key, signing
//!   usage when the binding has key flags, and a valid embedded primary-key binding signature
//!   (0x19, the "back-signature" gpg requires by default); a valid subkey revocation (0x28)
//!   revokes it. A subkey packet appended to the trusted file by someone else has no valid
//!   binding and never verifies anything;
//! - the signing key must not have expired, neither when the signature was made nor now, and
//!   must not be newer than the signature;
//! - the data signature must be a binary or text signature whose own expiry has not passed.

use pgp::composed::{SignedPublicKey, SignedPublicSubKey};
use pgp::packet::{Signature, SignatureType, SubpacketData};
use pgp::types::{KeyDetails, Tag};

/// The key of a certificate that made a signature.
#[derive(Debug, Clone, Copy)]
pub enum SignedBy<'a> {
    /// The primary key.
    Primary,
    /// One of its subkeys.
    Subkey(&'a SignedPublicSubKey),
}

/// Why a certificate cannot vouch for a signature (a sentence naming the key).
pub type Invalid = String;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn when(secs: u64) -> String {
    crate::image::config::rfc3339_utc(secs)
}

fn created(sig: &Signature) -> Option<u64> {
    sig.created().map(|t| u64::from(t.as_secs()))
}

/// The end of a signature's own validity (creation + signature expiration time), if any.
fn sig_expiry(sig: &Signature) -> Option<u64> {
    let d = sig.signature_expiration_time()?;
    let secs = std::time::Duration::from(d).as_secs();
    (secs > 0).then(|| created(sig).unwrap_or(0).saturating_add(secs))
}

/// The end of a key's validity given the self-signature that sets it, if any.
fn key_expiry(key_created: u64, sig: &Signature) -> Option<u64> {
    let d = sig.key_expiration_time()?;
    let secs = std::time::Duration::from(d).as_secs();
    (secs > 0).then(|| key_created.saturating_add(secs))
}

/// Whether the signature carries a key flags subpacket, and then whether it allows signing
/// (none means the algorithm's usages, as gpg reads it).
fn signing_flag(sig: &Signature) -> Option<bool> {
    let config = sig.config()?;
    config
        .hashed_subpackets()
        .any(|p| matches!(p.data, SubpacketData::KeyFlags(_)))
        .then(|| sig.key_flags().sign())
}

/// A self-signature usable at `now`: made after the key, not from the future, not expired.
fn usable_self_sig(sig: &Signature, key_created: u64, now: u64) -> bool {
    match created(sig) {
        Some(c) => c >= key_created && c <= now && sig_expiry(sig).is_none_or(|e| e > now),
        None => false,
    }
}

fn reason_of(sig: &Signature) -> String {
    match sig.revocation_reason_string() {
        Some(r) if !r.is_empty() => format!(" ({})", String::from_utf8_lossy(r)),
        _ => String::new(),
    }
}

/// What the primary key's self-signatures say.
struct PrimaryState {
    expires: Option<u64>,
    can_sign: Option<bool>,
}

fn primary_state(cert: &SignedPublicKey, now: u64) -> Result<PrimaryState, Invalid> {
    let key = &cert.primary_key;
    let fpr = hex(key.fingerprint().as_bytes());
    let key_created = u64::from(key.created_at().as_secs());
    for sig in cert
        .details
        .revocation_signatures
        .iter()
        .chain(&cert.details.direct_signatures)
    {
        if sig.typ() == Some(SignatureType::KeyRevocation) && sig.verify_key(key).is_ok() {
            return Err(format!("the key {fpr} is revoked{}", reason_of(sig)));
        }
    }
    let mut newest: Option<&Signature> = None;
    let mut candidates: Vec<&Signature> = Vec::new();
    for sig in &cert.details.direct_signatures {
        if sig.typ() == Some(SignatureType::Key)
            && usable_self_sig(sig, key_created, now)
            && sig.verify_key(key).is_ok()
        {
            candidates.push(sig);
        }
    }
    for user in &cert.details.users {
        let revoked = user.signatures.iter().any(|s| {
            s.typ() == Some(SignatureType::CertRevocation)
                && s.verify_certification(key, Tag::UserId, &user.id).is_ok()
        });
        if revoked {
            continue;
        }
        for sig in &user.signatures {
            if sig.is_certification()
                && sig.typ() != Some(SignatureType::CertRevocation)
                && usable_self_sig(sig, key_created, now)
                && sig.verify_certification(key, Tag::UserId, &user.id).is_ok()
            {
                candidates.push(sig);
            }
        }
    }
    for sig in candidates {
        if newest.is_none_or(|n| created(sig) > created(n)) {
            newest = Some(sig);
        }
    }
    let Some(sig) = newest else {
        return Err(format!(
            "the key {fpr} has no valid self-signature (no user ID or direct-key signature made by the key itself)"
        ));
    };
    Ok(PrimaryState {
        expires: key_expiry(key_created, sig),
        can_sign: signing_flag(sig),
    })
}

/// What a subkey's newest binding says, or why it is not part of the certificate.
fn subkey_state(
    cert: &SignedPublicKey,
    sub: &SignedPublicSubKey,
    now: u64,
) -> Result<PrimaryState, Invalid> {
    let primary = &cert.primary_key;
    let fpr = hex(sub.key.fingerprint().as_bytes());
    let pfpr = hex(primary.fingerprint().as_bytes());
    let sub_created = u64::from(sub.key.created_at().as_secs());
    for sig in &sub.signatures {
        if sig.typ() == Some(SignatureType::SubkeyRevocation)
            && sig.verify_subkey_binding(primary, &sub.key).is_ok()
        {
            return Err(format!(
                "the subkey {fpr} of {pfpr} is revoked{}",
                reason_of(sig)
            ));
        }
    }
    let mut newest: Option<&Signature> = None;
    for sig in &sub.signatures {
        if sig.typ() == Some(SignatureType::SubkeyBinding)
            && usable_self_sig(sig, sub_created, now)
            && sig.verify_subkey_binding(primary, &sub.key).is_ok()
            && newest.is_none_or(|n| created(sig) > created(n))
        {
            newest = Some(sig);
        }
    }
    let Some(binding) = newest else {
        return Err(format!(
            "the subkey {fpr} is not bound to the key {pfpr} (no valid binding signature by the primary key)"
        ));
    };
    let backsig_ok = binding.embedded_signature().is_some_and(|back| {
        back.typ() == Some(SignatureType::KeyBinding)
            && back.verify_primary_key_binding(&sub.key, primary).is_ok()
    });
    if !backsig_ok {
        return Err(format!(
            "the signing subkey {fpr} of {pfpr} is not cross-certified (no valid primary key binding signature)"
        ));
    }
    Ok(PrimaryState {
        expires: key_expiry(sub_created, binding),
        can_sign: signing_flag(binding),
    })
}

/// Checks that `cert` (through the key `by`) may vouch for the data signature `sig` at `now`
/// (seconds since the epoch). The signature's cryptography is checked by the caller.
pub fn check(
    cert: &SignedPublicKey,
    by: SignedBy<'_>,
    sig: &Signature,
    now: u64,
) -> Result<(), Invalid> {
    if !matches!(
        sig.typ(),
        Some(SignatureType::Binary) | Some(SignatureType::Text)
    ) {
        return Err(format!(
            "the signature is of type {:?}, not a document signature",
            sig.typ()
        ));
    }
    let Some(sig_created) = created(sig) else {
        return Err("the signature has no creation time".into());
    };
    if let Some(e) = sig_expiry(sig)
        && e <= now
    {
        return Err(format!("the signature expired on {}", when(e)));
    }
    let primary = primary_state(cert, now)?;
    let pfpr = hex(cert.primary_key.fingerprint().as_bytes());
    if let Some(e) = primary.expires {
        if e <= sig_created {
            return Err(format!(
                "the key {pfpr} had expired ({}) when the signature was made ({})",
                when(e),
                when(sig_created)
            ));
        }
        if e <= now {
            return Err(format!("the key {pfpr} expired on {}", when(e)));
        }
    }
    let (state, key_created, fpr) = match by {
        SignedBy::Primary => (
            primary,
            u64::from(cert.primary_key.created_at().as_secs()),
            pfpr.clone(),
        ),
        SignedBy::Subkey(sub) => (
            subkey_state(cert, sub, now)?,
            u64::from(sub.key.created_at().as_secs()),
            hex(sub.key.fingerprint().as_bytes()),
        ),
    };
    if state.can_sign == Some(false) {
        return Err(format!(
            "the key {fpr} is not for signing (its key flags do not allow it)"
        ));
    }
    if key_created > sig_created {
        return Err(format!(
            "the key {fpr} was created ({}) after the signature ({})",
            when(key_created),
            when(sig_created)
        ));
    }
    if let Some(e) = state.expires {
        if e <= sig_created {
            return Err(format!(
                "the key {fpr} had expired ({}) when the signature was made ({})",
                when(e),
                when(sig_created)
            ));
        }
        if e <= now {
            return Err(format!("the key {fpr} expired on {}", when(e)));
        }
    }
    Ok(())
}
