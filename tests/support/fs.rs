//! File-tree helpers the integration tests share (one copy instead of one per test file).

use std::fs;
use std::path::Path;

/// What a tree copy does with a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// A link is copied as the file it points to (a link to a folder fails the copy): what most
    /// tests want from `testdata/`, which holds no links.
    AsFiles,
    /// A link to a folder is copied as that folder, a link to a file as the file.
    Follow,
    /// Links are left out (real corpora may hold links the test must not follow).
    Skip,
}

/// Copies the tree `from` into `to` (created), so a test can change a bundle or catalog
/// without touching `testdata/`. Symbolic links are copied as the files they point to.
pub fn copy_dir(from: &Path, to: &Path) {
    copy_dir_with(from, to, Links::AsFiles);
}

/// [`copy_dir`] with the handling of symbolic links chosen.
pub fn copy_dir_with(from: &Path, to: &Path, links: Links) {
    fs::create_dir_all(to).expect("create dir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        let is_dir = match links {
            Links::Follow => entry.path().is_dir(),
            Links::AsFiles | Links::Skip => kind.is_dir(),
        };
        if is_dir {
            copy_dir_with(&entry.path(), &target, links);
        } else if links == Links::Skip && !kind.is_file() {
            continue;
        } else {
            fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}
