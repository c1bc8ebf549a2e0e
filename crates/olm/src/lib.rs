//! OLM content for olmpack, knowing nothing of registries or image transports: the
//! registry+v1 bundle model ([`bundle`]) and what `bundle init` writes ([`scaffold`]), the
//! file-based catalog model with its templates, graphs, filter and diff ([`catalog`]), the
//! formats FBC replaced ([`legacy`]), the rules ([`validate`]) and OLM v1's rendering
//! ([`olmv1`]).
//!
//! Below it is only the ground crate; the OCI crate is a sibling it cannot see, which Cargo
//! checks.

#![deny(missing_docs)]

// The ground modules under the names the code of this crate uses (`crate::yaml`, ...).
use olmpack_ground::{
    findings, fsio, gocompat, guard, interrupt, location, parallel, reference, semver_range, yaml,
};

pub mod bundle;
pub mod catalog;
pub mod legacy;
pub mod olmv1;
pub mod pipeline;
pub mod scaffold;
pub mod validate;
