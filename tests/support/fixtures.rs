//! The repository's own test data (`testdata/`), named once: the bundle most tests start from
//! (or copy and break in one place) and the folder everything else is found under.

use std::path::PathBuf;

/// The repository root (the crate's manifest folder).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path under `testdata/`.
pub fn testdata(rel: &str) -> PathBuf {
    repo_root().join("testdata").join(rel)
}

/// `testdata/bundles/valid-basic`: a small bundle with no findings, the starting point of the
/// bundle tests.
pub fn valid_basic() -> PathBuf {
    testdata("bundles/valid-basic")
}
