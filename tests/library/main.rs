//! The integration tests that drive the library directly (and Go, the reference for the Go
//! reproductions), one module per area, in one test binary.

// The fuzz harness (examples/fuzz) includes the template stand-in by path, as the example binary
// needs it; tests/support includes it too. Same file, same code: the double inclusion is harmless.
#![allow(clippy::duplicate_mod)]

#[path = "../support/mod.rs"]
mod support;

mod build_library;
mod containers_image_fixtures;
mod copy_stream;
mod corpus;
mod fuzz;
mod goflate_go;
mod gosort_go;
mod layering;
mod model_agreement;
mod olmv1_render;
mod pipeline_upstream;
mod pogreb;
mod policy_pin;
mod readme_tour;
mod serve_index;
mod substitutes_template;
mod yaml_fast;
