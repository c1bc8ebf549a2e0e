//! The rule layer: checks that judge what the models load, for bundles ([`bundle`]) and
//! file-based catalogs ([`catalog`]), one module per concern, every finding naming a rule
//! record from [`crate::findings::rules`]. [`batch`] runs either over many folders, each
//! isolated; [`output`] prints the reports.
//!
//! The models (`crate::bundle`, `crate::catalog`) sit below this layer and never import it.

pub mod batch;
pub mod bundle;
pub mod catalog;
pub mod crd_upgrade;
pub mod names;
pub mod opm_output;
pub mod output;
pub mod target;

pub use bundle::{Options, image, validate};
pub use olmpack_ground::findings::{Diagnostic, Group, Report, Rule, Severity, diagnostic, rules};
