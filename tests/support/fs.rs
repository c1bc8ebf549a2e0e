//! File-tree helpers the integration tests share (one copy instead of one per test file).

use std::fs;
use std::path::Path;

/// Copies the tree `from` into `to` (created), so a test can change a bundle or catalog
/// without touching `testdata/`. Symbolic links are copied as the files they point to.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create dir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}
