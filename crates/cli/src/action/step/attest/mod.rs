//! The attest step: in-toto statements about an image signed and attached beside it, as
//! cosign 3 (a Sigstore bundle referrer) and/or cosign 2 (the `.att` tag) attach them. `attest`
//! calls it for the predicate a user gives; `bundle build --push` and `catalog build --push`
//! call it last, after signing, with the predicates they generate ([`provenance`], [`sbom`]),
//! for each reference pushed at the digest pushed (nothing is read back).

pub mod provenance;
pub mod sbom;

use super::deliver::Pushed;
use crate::signature::SignatureError;
use crate::signature::attestation::{self, Attached};
use crate::signature::bundle_sign;
use crate::signature::image_signing::CosignFormat;
use crate::signature::keys::PrivateKey;
use crate::signature::store::Target;
use crate::transport::RegistryOptions;

/// One statement to attach: its predicate type and predicate.
#[derive(Debug, Clone)]
pub struct Predicate {
    /// The predicate type URI.
    pub predicate_type: String,
    /// The predicate.
    pub predicate: serde_json::Value,
}

/// What a build attests besides signing (`--attest-provenance`, `--attest-sbom`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildAttestations {
    /// SLSA provenance v1 of the build.
    pub provenance: bool,
    /// An SPDX 2.3 SBOM of the images the bundle or catalog references.
    pub sbom: bool,
}

impl BuildAttestations {
    /// Whether anything is to be attested.
    pub fn any(self) -> bool {
        self.provenance || self.sbom
    }
}

/// Signs the statement "`target` has `predicate`" with `key` and attaches it where `format`
/// says. The statement's subject is the image digest, named by its repository (`name`).
pub fn attach(
    target: &Target,
    name: &str,
    key: &PrivateKey,
    format: CosignFormat,
    predicate: &Predicate,
) -> Result<Vec<Attached>, SignatureError> {
    let statement = bundle_sign::statement(
        name,
        &target.digest,
        &predicate.predicate_type,
        predicate.predicate.clone(),
    );
    let mut out = Vec::new();
    if format != CosignFormat::Legacy {
        out.push(attestation::attach_bundle(target, key, &statement)?);
    }
    if format != CosignFormat::Bundle {
        out.push(attestation::attach_legacy(target, key, &statement)?);
    }
    Ok(out)
}

/// Why a pushed image could not be attested; the push (and signing) succeeded.
#[derive(Debug, thiserror::Error)]
#[error("pushed {reference}, but attaching its attestations failed")]
pub struct AttestPushedError {
    /// The reference pushed (`REF:TAG@sha256:…`).
    pub reference: String,
    /// Why.
    #[source]
    pub source: Box<SignatureError>,
}

/// Attests every reference of `pushed`, in order, with the predicates `predicates_for` gives
/// each, handing each attachment to `on_attested`: the attest step of `bundle build` and
/// `catalog build`, after their sign step.
pub fn attest_all(
    pushed: &[Pushed],
    registry: &RegistryOptions,
    key: &PrivateKey,
    format: CosignFormat,
    predicates_for: &mut dyn FnMut(&Pushed) -> Vec<Predicate>,
    on_attested: &mut dyn FnMut(&Pushed, &Attached),
) -> Result<(), AttestPushedError> {
    for p in pushed {
        for a in attest_pushed(p, registry, key, format, &predicates_for(p))? {
            on_attested(p, &a);
        }
    }
    Ok(())
}

/// Attaches each of `predicates` to `pushed` at its pushed digest.
pub fn attest_pushed(
    pushed: &Pushed,
    registry: &RegistryOptions,
    key: &PrivateKey,
    format: CosignFormat,
    predicates: &[Predicate],
) -> Result<Vec<Attached>, AttestPushedError> {
    let fail = |source: SignatureError| AttestPushedError {
        reference: pushed.shown.clone(),
        source: Box::new(source),
    };
    let target = super::sign::pushed_target(pushed, registry).map_err(fail)?;
    let name = pushed.reference.name();
    let mut out = Vec::new();
    for p in predicates {
        out.extend(attach(&target, &name, key, format, p).map_err(fail)?);
    }
    Ok(out)
}
