//! OCI images for olmpack, knowing nothing of OLM: the image model every source yields and
//! every sink takes ([`image`]), the distribution protocol and credentials ([`registry`]), the
//! one place a source string becomes an image and an image reaches its destinations
//! ([`transport`]: registry, `oci:`, `oci-archive:`, `docker-archive:`), and image signatures
//! ([`signature`]: cosign, containers' simple signing, `policy.json`).
//!
//! Below it is only the ground crate; the OLM crate is a sibling it cannot see, which Cargo
//! checks.

#![deny(missing_docs)]

// The ground modules under the names the code of this crate uses (`crate::fsio`, ...).
use olmpack_ground::{bundle_keys, errors, fsio, guard, interrupt, location, reference, yaml};

pub mod image;
pub mod mirror_config;
pub mod registry;
pub mod signature;
pub mod transport;
