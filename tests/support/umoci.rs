//! Base images made by umoci, an independent OCI tool, for the `catalog build --base` and
//! cache tests (`cache_owner.rs`, `catalog_build_filter.rs`, `serve_cache*.rs`): each needs a
//! small image with a file or two and a config, and reads the built image back with umoci.

use super::proc::tool_ok;
use std::path::{Path, PathBuf};

/// Runs umoci; fails the test, with umoci's stderr, when umoci fails.
pub fn umoci(args: &[&str]) {
    tool_ok("umoci", args);
}

/// A base image at the OCI layout `dir`, tag `v1`, made by umoci: `rootfs`, when given, writes
/// files into an unpacked root file system (beside `dir`, as `dir.bundle`) that is repacked as
/// one layer; `config` is umoci's `config` flags (`--config.user`, `--config.entrypoint`),
/// applied when not empty. Returns the `oci:` reference olmpack reads.
pub fn base_image(dir: &Path, rootfs: Option<&dyn Fn(&Path)>, config: &[&str]) -> String {
    let layout = dir.display().to_string();
    let image = format!("{layout}:v1");
    umoci(&["init", "--layout", &layout]);
    umoci(&["new", "--image", &image]);
    if let Some(fill) = rootfs {
        let bundle = dir.with_extension("bundle");
        let bundle = bundle.to_str().expect("utf-8 path");
        umoci(&["unpack", "--image", &image, bundle]);
        fill(&Path::new(bundle).join("rootfs"));
        umoci(&["repack", "--image", &image, bundle]);
    }
    if !config.is_empty() {
        umoci(&[&["config", "--image", &image][..], config].concat());
    }
    format!("oci:{image}")
}

/// Unpacks the image tagged `v1` in the layout `layout` at `at` (as root, owners and modes are
/// kept); returns its root file system.
pub fn unpack(layout: &Path, at: &Path) -> PathBuf {
    umoci(&[
        "unpack",
        "--image",
        &format!("{}:v1", layout.display()),
        at.to_str().expect("utf-8 path"),
    ]);
    at.join("rootfs")
}
