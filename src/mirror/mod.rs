//! `catalog mirror`: a catalog and every image it needs, to a registry or to disk and back.
//!
//! The pieces, each usable alone: [`plan`] (which images, resolved once), [`naming`] (where
//! each goes), [`regconf`] (reading sources through their registries' mirrors), [`results`]
//! (what is written for the cluster), [`image_policy`] (the OpenShift signature policies for
//! what was mirrored), [`archive`] (the disk format), [`imageset`] (the user's oc-mirror
//! `ImageSetConfiguration`, every catalog it names). The run itself (parallel
//! copies through [`crate::transport::copy()`], resume, results) is the door
//! `action::catalog_mirror`.

pub mod archive;
pub mod image_policy;
pub mod imageset;
pub mod install;
pub mod naming;
pub mod plan;
pub mod prune;
pub mod regconf;
pub mod results;

pub use naming::{Destination, derived_tag};
pub use plan::{Kind, Plan, PlannedImage};
pub use results::{ImageResult, Report, Status};
