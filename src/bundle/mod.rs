//! The bundle model: a bundle folder loaded into typed annotations, dependencies and manifest
//! objects that remember where they came from.

pub mod semver_range;
