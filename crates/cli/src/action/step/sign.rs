//! The sign step: the last step of a delivery. Each reference a build pushed is signed at the
//! digest the push wrote, from what the push reported: nothing is read back from the registry
//! (a read would cost a request per tag and, if the tag moved in between, sign someone
//! else's image).

use super::deliver::Pushed;
use crate::signature::SignatureError;
use crate::signature::image_signing::sign_target;
pub use crate::signature::image_signing::{SignOptions, Written};
use crate::signature::store::{Target, Where};
use crate::transport::RegistryOptions;

/// Why a pushed image could not be signed; the push itself succeeded.
#[derive(Debug, thiserror::Error)]
#[error("pushed {reference}, but signing it failed")]
pub struct SignPushedError {
    /// The reference pushed (`REF:TAG@sha256:…`).
    pub reference: String,
    /// Why (boxed: signature errors are large, and this one rides in every build error).
    #[source]
    pub source: Box<SignatureError>,
}

/// Signs every reference of `pushed`, in order, as `opts` say (nothing without options),
/// handing each signature to `on_signed` as it is written: the sign step of `bundle build`,
/// `catalog build` and `bundle republish`.
pub fn sign_all(
    pushed: &[Pushed],
    registry: &RegistryOptions,
    opts: Option<&SignOptions>,
    on_signed: &mut dyn FnMut(&Pushed, &Written),
) -> Result<(), SignPushedError> {
    let Some(opts) = opts else {
        return Ok(());
    };
    for p in pushed {
        for w in sign_pushed(p, registry, opts)? {
            on_signed(p, &w);
        }
    }
    Ok(())
}

/// Signs `pushed` at its pushed digest as `opts` say (cosign, simple signing, or both).
pub fn sign_pushed(
    pushed: &Pushed,
    registry: &RegistryOptions,
    opts: &SignOptions,
) -> Result<Vec<Written>, SignPushedError> {
    let fail = |source: SignatureError| SignPushedError {
        reference: pushed.shown.clone(),
        source: Box::new(source),
    };
    let target = pushed_target(pushed, registry).map_err(fail)?;
    sign_target(&target, opts).map_err(fail)
}

/// What was pushed, as the signature code's target at the pushed digest (nothing read back):
/// the sign and attest steps both write beside it.
pub fn pushed_target(
    pushed: &Pushed,
    registry: &RegistryOptions,
) -> Result<Target, SignatureError> {
    let repository = registry.repository(&pushed.reference)?;
    Ok(Target {
        name: pushed.shown.clone(),
        place: Where::Registry {
            repository: Box::new(repository),
            reference: pushed.reference.clone(),
        },
        digest: pushed.digest.clone(),
    })
}
