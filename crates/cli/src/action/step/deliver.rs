//! The deliver step: a built image (bundle or catalog) sent where the delivery says, in the
//! one order that keeps "no partial output" ([`sink::deliver`]), and what was pushed kept as
//! references with the digest each now names, for the sign step.

use crate::findings::Report;
use crate::reference::Reference;
use crate::signature::attestation::Attached;
use crate::signature::image_signing::Written;
use crate::transport::RegistryOptions;
use crate::transport::sink::{self, Deliverable, Delivery, DeliveryError};

/// One reference a delivery pushed.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// `REGISTRY/REPO:TAG@sha256:…`, as a user reads it (and as `olmpack` prints it).
    pub shown: String,
    /// The same, as a reference: the tag pushed and the digest it names.
    pub reference: Reference,
    /// The manifest (or index) digest pushed.
    pub digest: String,
}

/// Delivers `item` as `delivery` says (digest file staged, push, local output, digest file
/// in place) and gives back every reference pushed, in the order pushed.
pub fn deliver(
    item: &mut dyn Deliverable,
    delivery: &Delivery,
    registry: &RegistryOptions,
) -> Result<Vec<Pushed>, DeliveryError> {
    let reports = sink::deliver(item, delivery, registry)?;
    let mut pushed = Vec::new();
    for report in reports {
        for shown in report.refs {
            // The push wrote these from references it parsed itself: one that does not read
            // back is a push error, not the user's.
            let reference = Reference::parse(&shown)
                .map_err(|e| DeliveryError::Push(crate::transport::TransportError::from(e)))?;
            pushed.push(Pushed {
                shown,
                reference,
                digest: report.digest.clone(),
            });
        }
    }
    Ok(pushed)
}

/// What a build run (`bundle build`, `catalog build`) reports while it goes, in order, so a
/// front end can show it as it happens: both builds validate, deliver, sign and attest alike,
/// so they report alike. `W` is the build's warning, `R` its result.
#[derive(Debug)]
pub enum BuildEvent<'a, W: ?Sized, R> {
    /// The validation report, when it has findings (given before anything is built).
    Findings(&'a Report),
    /// Something the build left out or did that the user may care about.
    Warning(&'a W),
    /// The image was delivered (written, pushed, its digest recorded); signing comes next.
    Delivered(&'a R),
    /// A pushed reference was signed.
    Signed(&'a Pushed, &'a Written),
    /// An attestation of a pushed reference was attached.
    Attested(&'a Pushed, &'a Attached),
}

/// How a build run ended when nothing failed: findings are an outcome, not an error, and
/// carry no exit code (the front end chooses it).
#[derive(Debug)]
pub enum BuildOutcome<R> {
    /// Validation found errors (already given as [`BuildEvent::Findings`]): nothing was
    /// built or written.
    Invalid,
    /// The image was built and delivered, and the digest file written.
    Built(R),
}
