//! Serving a catalog as opm does: the `api.Bundle` model opm's caches hold, the JSON and pogreb
//! serve caches and their digests, the gRPC registry API with health and reflection, the
//! point-query index, and catalogd's HTTP API. It stands on the OLM crate (the catalog) and
//! the OCI crate (caches read from and written into images).

#![deny(missing_docs)]

// The lower crates' modules under the names the code of this crate uses.
use olmpack_ground::{findings, fsio, gocompat, interrupt, parallel};
use olmpack_oci::{image, registry, transport};
use olmpack_olm::catalog;

pub mod cache;
pub mod serve;
