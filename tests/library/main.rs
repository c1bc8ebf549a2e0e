//! The integration tests that drive the library directly (and Go, the reference for the Go
//! reproductions), one module per area, in one test binary.

#[path = "../support/mod.rs"]
mod support;

mod build_library;
mod corpus;
mod fuzz;
mod goflate_go;
mod gosort_go;
mod layering;
mod yaml_fast;
