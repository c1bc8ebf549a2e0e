//! The one atomic file writer: every output file (an `index.json`, an archive, a digest file, a
//! scaffolded manifest, a catalog file changed by `catalog add`) is written into a temporary
//! sibling, flushed to disk and renamed over its path, so a reader, a crash or a full disk sees
//! the old file or the new one, never half of one.
//!
//! Why one: the same dance was written four times (layouts, archives, `bundle init`, `catalog
//! add`) with small differences (one did not sync, one did not keep permissions). Callers still
//! choose what differs on purpose: the mode of a new file, whether an existing file keeps its
//! permissions, whether a missing folder is created, and whether several files are staged first
//! and renamed only when all of them could be written ([`Staged`]).

pub mod untrusted;

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file operation that failed, with the path it was on: the one file-error type.
///
/// Why one: "cannot read X", "cannot create Y" was written as an `Io { action, path, source }`
/// variant in every layer's error enum; they wrap this instead (`#[error(transparent)]` or with
/// their own prefix), so the file is always named the same way and the OS error kept as the
/// cause. The message says the OS error too, so a caller that prints only `to_string()` still
/// tells the user why; `errors::error_chain` does not repeat it.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}: {source}", path.display())]
pub struct FsError {
    /// What was being done (`create`, `write`, `set permissions of`).
    pub action: &'static str,
    /// Where.
    pub path: PathBuf,
    /// The operating-system error.
    #[source]
    pub source: io::Error,
}

impl FsError {
    /// The failure of `action` on `path`.
    pub fn new(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        FsError {
            action,
            path: path.into(),
            source,
        }
    }
}

/// A closure turning an I/O error from `action` on `path` into an [`FsError`], for the file
/// operations the helpers below do not cover (`map_err(fsio::at("rename", &p))`).
pub fn at<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> FsError + 'a {
    move |source| FsError {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Reads a whole file; a failure names it ("cannot read X").
pub fn read(path: &Path) -> Result<Vec<u8>, FsError> {
    fs::read(path).map_err(at("read", path))
}

/// Reads a whole UTF-8 file; a failure (including bytes that are not UTF-8) names it.
pub fn read_to_string(path: &Path) -> Result<String, FsError> {
    fs::read_to_string(path).map_err(at("read", path))
}

/// Opens a folder for listing; a failure names it ("cannot list X").
pub fn read_dir(path: &Path) -> Result<fs::ReadDir, FsError> {
    fs::read_dir(path).map_err(at("list", path))
}

/// Creates a folder and its missing parents; a failure names it ("cannot create X").
pub fn create_dir_all(path: &Path) -> Result<(), FsError> {
    fs::create_dir_all(path).map_err(at("create", path))
}

/// How a file is written: the permissions of a new file, whether an existing one keeps its
/// own, and whether a missing folder is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Permission bits of the new file.
    pub mode: u32,
    /// An existing file keeps its permissions (a user's file edited in place).
    pub keep_mode: bool,
    /// Create the parent folder when it is missing.
    pub create_parent: bool,
}

impl Options {
    /// A build output (an image's `index.json`, an archive, a digest file): 0644, the parent
    /// folder must exist.
    pub const OUTPUT: Options = Options {
        mode: 0o644,
        keep_mode: false,
        create_parent: false,
    };

    /// A user's file written or edited in place: an existing file keeps its permissions, a new
    /// one gets `mode`, and its folder is created.
    pub fn edit(mode: u32) -> Options {
        Options {
            mode,
            keep_mode: true,
            create_parent: true,
        }
    }
}

/// The folder a temporary sibling of `path` is created in.
pub fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// An error from creating a temporary file or folder, without the temporary's own name:
/// `tempfile` appends ` at path "/…/.olmpack-XXXX"`, a name the user never gave and that no
/// longer exists, so messages name the user's path instead (the caller adds it).
pub fn temp_error(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.find(" at path ") {
        Some(at) if e.get_ref().is_some() => io::Error::new(e.kind(), text[..at].to_string()),
        _ => e,
    }
}

/// Checks, before anything is written or sent anywhere, that `path` can be created where it
/// is: its folder exists, is a folder and accepts a new file. A command whose outputs are all
/// checked first fails before a push leaves the machine, not after (issue 26 item 1).
pub fn check_creatable(path: &Path) -> Result<(), FsError> {
    let parent = parent_of(path);
    match fs::metadata(&parent) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(FsError {
                action: "create",
                path: path.to_path_buf(),
                source: io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "the folder {} does not exist (create it first)",
                        parent.display()
                    ),
                ),
            });
        }
        Err(e) => return Err(at("create", path)(e)),
        Ok(meta) if !meta.is_dir() => {
            return Err(FsError {
                action: "create",
                path: path.to_path_buf(),
                source: io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a folder", parent.display()),
                ),
            });
        }
        Ok(_) => {}
    }
    // An unnamed file, gone when dropped: proves the folder takes new files (permissions,
    // read-only mounts) without leaving anything behind.
    tempfile::tempfile_in(&parent)
        .map(drop)
        .map_err(|e| at("create", path)(temp_error(e)))
}

/// A file written next to its final path, not yet renamed into place: lets a caller check that
/// every output can be written before any of them appears (dropped = removed).
#[derive(Debug)]
pub struct Staged {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    /// Removes the temporary file if the command is interrupted before it is committed.
    _interrupt: crate::interrupt::Registered,
}

impl Staged {
    /// Renames the staged file to its final path, then syncs the folder so the rename itself
    /// survives a crash (where the platform lets a folder be opened).
    pub fn commit(self) -> Result<(), FsError> {
        // Interrupted: no output appears after the signal (the watcher removes this file).
        if crate::interrupt::interrupted() {
            crate::interrupt::wait_for_exit();
        }
        let path = self.path;
        self.tmp
            .persist(&path)
            .map_err(|e| at("write", &path)(e.error))?;
        if let Ok(dir) = fs::File::open(parent_of(&path)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Fills a temporary sibling of `path` with `fill` (buffered), syncs it and gives it its
/// permissions; [`Staged::commit`] puts it in place. On any error nothing is left behind.
pub fn stage_with<E, F>(path: &Path, opts: Options, fill: F) -> Result<Staged, E>
where
    E: From<FsError>,
    F: FnOnce(&mut BufWriter<&fs::File>) -> Result<(), E>,
{
    if path.is_dir() {
        return Err(at("write", path)(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a folder",
        ))
        .into());
    }
    let parent = parent_of(path);
    if opts.create_parent {
        fs::create_dir_all(&parent).map_err(at("create", &parent))?;
    }
    let tmp = tempfile::Builder::new()
        .prefix(".olmpack-")
        .tempfile_in(&parent)
        .map_err(|e| at("create", path)(temp_error(e)))?;
    let interrupt = crate::interrupt::register(tmp.path());
    {
        let mut buffered = BufWriter::with_capacity(256 * 1024, tmp.as_file());
        fill(&mut buffered)?;
        buffered.flush().map_err(at("write", path))?;
    }
    tmp.as_file().sync_all().map_err(at("write", path))?;
    let perms = match fs::metadata(path) {
        Ok(meta) if opts.keep_mode => meta.permissions(),
        _ => mode_permissions(opts.mode),
    };
    fs::set_permissions(tmp.path(), perms).map_err(at("set permissions of", tmp.path()))?;
    Ok(Staged {
        tmp,
        path: path.to_path_buf(),
        _interrupt: interrupt,
    })
}

/// [`stage_with`] for bytes already in memory.
pub fn stage(path: &Path, bytes: &[u8], opts: Options) -> Result<Staged, FsError> {
    stage_with(path, opts, |w| {
        w.write_all(bytes).map_err(at("write", path))
    })
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8], opts: Options) -> Result<(), FsError> {
    stage(path, bytes, opts)?.commit()
}

/// Writes `path` atomically from `fill` (for streamed content such as an archive).
pub fn write_with<E, F>(path: &Path, opts: Options, fill: F) -> Result<(), E>
where
    E: From<FsError>,
    F: FnOnce(&mut BufWriter<&fs::File>) -> Result<(), E>,
{
    Ok(stage_with(path, opts, fill)?.commit()?)
}

#[cfg(unix)]
fn mode_permissions(mode: u32) -> fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    fs::Permissions::from_mode(mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        n.sort();
        n
    }

    #[test]
    fn replaces_keeps_or_sets_modes_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/f");
        assert!(write(&path, b"x", Options::OUTPUT).is_err(), "no parent");
        write(&path, b"one", Options::edit(0o600)).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        write(&path, b"two", Options::edit(0o644)).unwrap();
        assert_eq!(mode(&path), 0o600, "an edited file keeps its mode");
        write(&path, b"three", Options::OUTPUT).unwrap();
        assert_eq!(mode(&path), 0o644);
        assert_eq!(fs::read(&path).unwrap(), b"three");
        assert_eq!(names(&dir.path().join("sub")), ["f"]);
    }

    #[test]
    fn a_failed_fill_or_a_dropped_stage_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write(&path, b"old", Options::OUTPUT).unwrap();
        let failed: Result<(), FsError> = write_with(&path, Options::OUTPUT, |w| {
            w.write_all(b"half").map_err(at("write", &path))?;
            Err(at("write", &path)(io::Error::other("disk full")))
        });
        assert!(failed.is_err());
        drop(stage(&path, b"new", Options::OUTPUT).unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["f"]);
    }
}
