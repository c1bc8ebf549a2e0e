//! Walking a bundle folder into the sorted list of entries a layer holds.
//!
//! The walk is where reproducibility and safety are decided, so the rules live here in one place:
//! - children are sorted by their name's bytes, each folder before its contents;
//! - symbolic links are followed and their *content* is stored (bundle images are read by tools
//!   that do not resolve links, and `docker build`'s `COPY` does the same for links given as
//!   sources), but only when the target stays inside the bundle; a link leaving it is refused,
//!   and a link leading back to a folder being walked is refused as a loop;
//! - OCI whiteout files (`.wh.*`) are skipped and reported, because in a layer they would delete
//!   files instead of adding them; nothing else is skipped: sockets, FIFOs and devices are errors.

use super::error::BuildError;
use crate::fsio::FsError;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One entry of a layer, in archive order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the image, `/`-separated, relative; folders end with `/`.
    pub name: Vec<u8>,
    /// What the entry holds.
    pub kind: EntryKind,
}

/// Folder or file; files carry the resolved path to read and the size seen at walk time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A folder entry.
    Dir,
    /// A regular file (symbolic links already resolved).
    File {
        /// The real file to read.
        source: PathBuf,
        /// The path the user knows it by (inside the bundle), for messages.
        shown: PathBuf,
        /// Its size at walk time.
        size: u64,
    },
}

/// Something the walk chose not to copy, reported to the caller instead of dropped silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedWhiteout {
    /// The whiteout file inside the bundle.
    pub path: PathBuf,
}

/// The state of one walk: the canonical bundle root links must stay in, and what was skipped.
pub struct Walker {
    root: PathBuf,
    pub(crate) whiteouts: Vec<SkippedWhiteout>,
}

impl Walker {
    /// Starts a walk confined to `root` (canonicalised here, so links can be checked against it).
    pub fn new(root: &Path) -> Result<Self, BuildError> {
        let root = fs::canonicalize(root)
            .map_err(|e| BuildError::io("open the bundle folder", root, e))?;
        Ok(Walker {
            root,
            whiteouts: Vec::new(),
        })
    }

    /// Appends the entries for the bundle folder `shown` (a path inside the bundle, as the user
    /// gave it) stored under `prefix` in the image: the parent folders of `prefix`, `prefix`
    /// itself, then everything below it, in order.
    pub fn add_folder(
        &mut self,
        shown: &Path,
        prefix: &str,
        out: &mut Vec<Entry>,
    ) -> Result<(), BuildError> {
        let real = self.resolve(shown)?;
        let meta = fs::metadata(&real).map_err(|e| BuildError::io("read", shown, e))?;
        if !meta.is_dir() {
            return Err(BuildError::NotAFolder {
                path: shown.to_path_buf(),
            });
        }
        // Parent folders first ("tests/" before "tests/scorecard/"), as `COPY x /tests/scorecard/`
        // creates them.
        let prefix = prefix.trim_matches('/');
        let mut acc = String::new();
        for part in prefix.split('/').filter(|p| !p.is_empty()) {
            acc.push_str(part);
            acc.push('/');
            let entry = Entry {
                name: acc.as_bytes().to_vec(),
                kind: EntryKind::Dir,
            };
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
        let mut ancestors = vec![real.clone()];
        self.walk_dir(&real, shown, acc.as_bytes(), &mut ancestors, out)
    }

    /// Canonicalises a path inside the bundle, refusing loops and escapes.
    fn resolve(&self, shown: &Path) -> Result<PathBuf, BuildError> {
        match fs::canonicalize(shown) {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(real) => Err(BuildError::SymlinkEscapes {
                link: shown.to_path_buf(),
                target: real,
            }),
            Err(e) if e.raw_os_error() == Some(libc_eloop()) => Err(BuildError::SymlinkLoop {
                link: shown.to_path_buf(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match fs::symlink_metadata(shown) {
                    // The path itself exists: it is a link whose target (or a link on the way)
                    // does not.
                    Ok(m) if m.file_type().is_symlink() => Err(BuildError::DanglingSymlink {
                        link: shown.to_path_buf(),
                        target: fs::read_link(shown).unwrap_or_default(),
                    }),
                    _ => Err(BuildError::io("open", shown, e)),
                }
            }
            Err(e) => Err(BuildError::io("resolve", shown, e)),
        }
    }

    fn walk_dir(
        &mut self,
        real: &Path,
        shown: &Path,
        prefix: &[u8],
        ancestors: &mut Vec<PathBuf>,
        out: &mut Vec<Entry>,
    ) -> Result<(), BuildError> {
        let mut names: Vec<OsString> = Vec::new();
        let listing = fs::read_dir(real).map_err(|e| BuildError::io("list", shown, e))?;
        for item in listing {
            let item = item.map_err(|e| BuildError::io("list", shown, e))?;
            names.push(item.file_name());
        }
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));

        for name in names {
            let child_shown = shown.join(&name);
            if name.as_bytes().starts_with(b".wh.") {
                self.whiteouts.push(SkippedWhiteout { path: child_shown });
                continue;
            }
            let child_real = real.join(&name);
            let mut entry_name = prefix.to_vec();
            entry_name.extend_from_slice(name.as_bytes());

            let lmeta = fs::symlink_metadata(&child_real)
                .map_err(|e| BuildError::io("read", &child_shown, e))?;
            let (target, meta) = if lmeta.file_type().is_symlink() {
                let target = self
                    .resolve(&child_real)
                    .map_err(|e| reshow(e, &child_shown))?;
                let meta =
                    fs::metadata(&target).map_err(|e| BuildError::io("read", &child_shown, e))?;
                (target, meta)
            } else {
                (child_real, lmeta)
            };

            if meta.is_dir() {
                if ancestors.contains(&target) {
                    return Err(BuildError::SymlinkLoop { link: child_shown });
                }
                entry_name.push(b'/');
                out.push(Entry {
                    name: entry_name.clone(),
                    kind: EntryKind::Dir,
                });
                ancestors.push(target.clone());
                self.walk_dir(&target, &child_shown, &entry_name, ancestors, out)?;
                ancestors.pop();
            } else if meta.is_file() {
                out.push(Entry {
                    name: entry_name,
                    kind: EntryKind::File {
                        source: target,
                        shown: child_shown,
                        size: meta.len(),
                    },
                });
            } else {
                return Err(BuildError::UnsupportedFileType {
                    path: child_shown,
                    kind: file_kind(&meta),
                });
            }
        }
        Ok(())
    }
}

/// Replaces the real path in a link error by the path the user knows.
fn reshow(err: BuildError, shown: &Path) -> BuildError {
    match err {
        BuildError::SymlinkEscapes { target, .. } => BuildError::SymlinkEscapes {
            link: shown.to_path_buf(),
            target,
        },
        BuildError::SymlinkLoop { .. } => BuildError::SymlinkLoop {
            link: shown.to_path_buf(),
        },
        BuildError::DanglingSymlink { target, .. } => BuildError::DanglingSymlink {
            link: shown.to_path_buf(),
            target,
        },
        BuildError::Io(e) => BuildError::Io(FsError::new(e.action, shown, e.source)),
        other => other,
    }
}

/// `ELOOP` ("too many levels of symbolic links"), without a libc dependency
/// (`io::ErrorKind::FilesystemLoop` is still unstable).
const fn libc_eloop() -> i32 {
    if cfg!(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd"
    )) {
        62
    } else {
        40
    }
}

fn file_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_char_device() {
        "character device"
    } else {
        "special file"
    }
}
