//! The repository's own test data (`testdata/`), named once: the bundle most tests start from
//! (or copy and break in one place) and the folder everything else is found under.

use olmpack::image::extend::scratch_image;
use olmpack::image::layer::LayerBlob;
use std::path::{Path, PathBuf};

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

/// Writes a one-layer scratch image (`layer`, with the one label `key` = `value`) as tag `tag` of
/// the OCI layout `dir` and returns its `oci:` reference.
pub fn scratch_layout(layer: &LayerBlob, key: &str, value: &str, dir: &Path, tag: &str) -> String {
    let labels = [(key.to_string(), value.to_string())].into();
    let image = scratch_image(
        layer,
        &labels,
        &olmpack::image::Platform::default(),
        olmpack::image::Format::Oci,
        0,
    );
    olmpack::transport::layout::write_layout(&image, dir, &[tag.to_string()]).unwrap();
    format!("oci:{}:{tag}", dir.display())
}
