//! The steps commands are made of, each written once and shared by every command that takes
//! it: a door (`action/<command>.rs`) checks its options and chains steps; it calls steps,
//! never another door. Steps hand each other typed values (a [`crate::location::Location`],
//! a [`crate::reference::Reference`], an opened or built image), never a string to parse
//! again, and fail with typed errors that keep their causes; only `commands/` turns an error
//! into text.
//!
//! - [`attest`]: in-toto statements (SLSA provenance, an SPDX SBOM, a user's predicate) signed
//!   and attached beside an image, after the sign step;
//! - [`bundle_build`]: a bundle folder validated and built into an image (`bundle build`,
//!   `bundle republish`);
//! - [`build`]: a catalog image from a folder, on a base or on scratch, or a catalog image
//!   rebuilt around a filtered catalog ([`build::from_image`]); [`build::base`] opens a base
//!   for the platforms wanted;
//! - [`carry`]: one image copied with its signatures, attestations, referrers and lookaside
//!   simple signatures, as `--signatures require|copy|drop` says (`copy`, `catalog mirror`);
//! - [`filter`]: a catalog folder filtered into a folder a build reads;
//! - [`deliver`]: a built image written, pushed and its digest recorded, the pushed
//!   references kept as references;
//! - [`policy`]: an image admitted under `policy.json`, its location pinned to the verified
//!   digest;
//! - [`sign`]: each pushed reference signed at the digest that was pushed (the last delivery
//!   step: nothing is read back from the registry);
//! - [`trust`]: the signer (a key, or a keyless identity) and the Sigstore trusted root a
//!   verifying door reads.
//!
//! Opening sources ([`super::source`]), reading bundle images ([`super::bundle_image`]) and
//! resolving a bundle under its published reference ([`super::bundle_source`]) are the open,
//! load and resolve steps the bundle and render doors share.
//!
//! Why under `action/`: steps are what the command layer is made of, and they stay in the CLI
//! crate with the doors after the workspace split; `commands/` keeps calling `action/` only.

pub mod attest;
pub mod build;
pub mod bundle_build;
pub mod carry;
pub mod deliver;
pub mod filter;
pub mod policy;
pub mod resolve_images;
pub mod sign;
pub mod trust;
