//! olmpack: package, validate and push Kubernetes Operator bundles (OLM `registry+v1`) as OCI
//! images without a container daemon.
//!
//! The library is `olmpack-cli` (crates/cli) and the crates below it; this package holds the
//! binary, the tests and the benches. It is its own package so the whole-program (fat LTO) pass,
//! which runs at the opt-level of the package that owns the binary, can run at 3 while the
//! command line compiles for size (docs/design/binary-size.md). Everything is re-exported here
//! under the paths the tests and benches use (`olmpack::catalog`, `olmpack::action`, ...).

pub use olmpack_cli::*;
