//! `catalog mirror`: a catalog and every image it needs, to a registry or to disk and back.
//!
//! The pieces, each usable alone: [`plan`] (which images, resolved once), [`naming`] (where
//! each goes), [`results`]
//! (what is written for the cluster), [`image_policy`] (the OpenShift signature policies for
//! what was mirrored), [`archive`] (the disk format), [`delta`] (archives that carry only what the ones before them lack), [`imageset`] (the user's oc-mirror
//! `ImageSetConfiguration`, every catalog it names). The run itself (parallel
//! copies through [`crate::transport::copy()`], resume, results) is the door
//! `action::catalog_mirror`. Sources are read through their mirrors (`--mirror-config`) by the
//! registry options themselves ([`crate::mirror_config`]), not here.

pub mod archive;
pub mod archive_record;
pub mod delta;
pub mod image_policy;
pub mod imageset;
pub mod install;
pub mod naming;
pub mod plan;
pub mod prune;
pub mod results;

pub use naming::{Destination, derived_tag};
pub use plan::{Kind, Plan, PlannedImage};
pub use results::{ImageResult, Report, Status};
