//! `catalog validate --select-optional olmv1`: loads a catalog folder and runs the OLM v1 rules
//! over its bundles (see [`crate::validate::catalog::olmv1`]).

use crate::findings::Diagnostic;
use crate::validate::catalog::olmv1::{PackageReadiness, check};
use crate::validate::crd_upgrade::EdgeCounts;
use std::path::Path;

/// The OLM v1 findings and readiness of one catalog folder (nothing when it cannot be loaded:
/// the default rules report that).
pub fn check_dir(dir: &Path) -> (Vec<Diagnostic>, Vec<PackageReadiness>, EdgeCounts) {
    match crate::catalog::load::load_dir(dir) {
        Ok(loaded) => check(&loaded.config),
        Err(_) => (Vec::new(), Vec::new(), EdgeCounts::default()),
    }
}
