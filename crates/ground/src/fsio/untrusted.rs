//! Reading trees and files that came from an image or an archive. Their links are data: a layer
//! can hold `configs/pkg/esc -> ../../a/a/../../..` and a later entry `a -> .`, and a reader
//! that follows links would then read the host (a private key, `/dev/zero`). So:
//!
//! - [`open`] and [`read`] open a file *beneath* a root: the kernel's `openat2` with
//!   `RESOLVE_BENEATH` (through the `rustix` crate) refuses any `..` or absolute link that would
//!   leave it, and a user-space walk ([`resolve`]) does the same on kernels without `openat2`.
//!   Only regular files are read (no fifo, device or socket), and never more than a cap.
//! - [`escaping_link`] checks a whole unpacked tree: every link resolved fully inside the root,
//!   as the kernel would follow it, so an extraction can refuse an image whose links leave it.
//! - [`read_limited`] reads a named file with a cap (archive metadata, layout indexes).
//!
//! Errors name the path inside the tree only and say the same whatever the host holds: whether
//! a host path exists is never revealed.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// Links followed in one resolution before giving up, as Linux's `MAXSYMLINKS`.
const MAX_LINK_HOPS: usize = 40;

/// Why a file of an untrusted tree was not read.
#[derive(Debug, thiserror::Error)]
pub enum UntrustedReadError {
    /// A link on the way leads out of the tree (a `..` past its root or an absolute target).
    #[error("{path}: a link in its path leads out of the folder; refusing to follow it")]
    Escapes {
        /// The path as asked, relative to the tree.
        path: String,
    },
    /// Links point to links in a loop, or too many of them.
    #[error("{path}: too many levels of links")]
    Loop {
        /// The path as asked.
        path: String,
    },
    /// No such file inside the tree.
    #[error("{path}: no such file")]
    Missing {
        /// The path as asked.
        path: String,
    },
    /// A folder, fifo, device or socket.
    #[error("{path}: not a regular file (a folder, fifo, device or socket); refusing to read it")]
    NotRegular {
        /// The path as asked.
        path: String,
    },
    /// Larger than the reader's cap.
    #[error("{path}: larger than the {limit}-byte limit")]
    TooLarge {
        /// The path as asked.
        path: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// Reading failed.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The path as asked.
        path: String,
        /// The operating-system error.
        #[source]
        source: io::Error,
    },
}

fn shown(rel: &Path) -> String {
    rel.display().to_string()
}

/// Opens the regular file `rel` beneath `root`: every link on the way (the last one too) is
/// followed only while it stays inside `root`.
pub fn open(root: &Path, rel: &Path) -> Result<File, UntrustedReadError> {
    let file = match open_kernel(root, rel) {
        Some(result) => result?,
        None => open_walk(root, rel)?,
    };
    let meta = file.metadata().map_err(|source| UntrustedReadError::Io {
        path: shown(rel),
        source,
    })?;
    if !meta.is_file() {
        return Err(UntrustedReadError::NotRegular { path: shown(rel) });
    }
    Ok(file)
}

/// Reads the regular file `rel` beneath `root` ([`open`]), refusing it when it holds more than
/// `limit` bytes (a file that grows while read is cut at the cap and refused too).
pub fn read(root: &Path, rel: &Path, limit: u64) -> Result<Vec<u8>, UntrustedReadError> {
    let file = open(root, rel)?;
    read_capped(file, rel, limit)
}

/// Reads the file at `path` (links followed: the path is the caller's, not data) with a cap,
/// refusing anything but a regular file: the metadata of an archive or layout, which must not
/// expand a small download into gigabytes of memory.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, UntrustedReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_nonblock())
        .open(path)
        .map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => UntrustedReadError::Missing { path: shown(path) },
            _ => UntrustedReadError::Io {
                path: shown(path),
                source,
            },
        })?;
    let meta = file.metadata().map_err(|source| UntrustedReadError::Io {
        path: shown(path),
        source,
    })?;
    if !meta.is_file() {
        return Err(UntrustedReadError::NotRegular { path: shown(path) });
    }
    read_capped(file, path, limit)
}

fn libc_nonblock() -> i32 {
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}

fn read_capped(file: File, rel: &Path, limit: u64) -> Result<Vec<u8>, UntrustedReadError> {
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > limit {
        return Err(UntrustedReadError::TooLarge {
            path: shown(rel),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| UntrustedReadError::Io {
            path: shown(rel),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(UntrustedReadError::TooLarge {
            path: shown(rel),
            limit,
        });
    }
    Ok(bytes)
}

/// `openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`; `None` when the kernel (or a
/// seccomp filter) does not offer the call, so the caller walks instead.
fn open_kernel(root: &Path, rel: &Path) -> Option<Result<File, UntrustedReadError>> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;
    let dir = match rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(dir) => dir,
        Err(e) => {
            return Some(Err(UntrustedReadError::Io {
                path: shown(rel),
                source: e.into(),
            }));
        }
    };
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(&dir, rel, flags, Mode::empty(), resolve) {
        Ok(fd) => Some(Ok(File::from(fd))),
        Err(Errno::NOSYS) | Err(Errno::PERM) => None,
        Err(e) => Some(Err(classify(rel, e.into()))),
    }
}

fn classify(rel: &Path, e: io::Error) -> UntrustedReadError {
    let path = shown(rel);
    match e.raw_os_error() {
        Some(code) if code == rustix::io::Errno::XDEV.raw_os_error() => {
            UntrustedReadError::Escapes { path }
        }
        Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() => {
            UntrustedReadError::Loop { path }
        }
        Some(code)
            if code == rustix::io::Errno::NOENT.raw_os_error()
                || code == rustix::io::Errno::NOTDIR.raw_os_error() =>
        {
            UntrustedReadError::Missing { path }
        }
        _ => UntrustedReadError::Io { path, source: e },
    }
}

/// The walk for kernels without `openat2`: [`resolve`] the path inside the tree, then open the
/// result without following a last link (there is none left, unless the tree changed).
pub fn open_walk(root: &Path, rel: &Path) -> Result<File, UntrustedReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let physical = resolve(root, rel)?;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(root.join(physical))
        .map_err(|e| classify(rel, e))
}

/// One step of a path being resolved.
enum Step {
    Up,
    Name(OsString),
}

fn push_steps(todo: &mut Vec<Step>, path: &Path) -> Result<(), ()> {
    let mut steps = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => steps.push(Step::Up),
            Component::Normal(n) => steps.push(Step::Name(n.to_os_string())),
            Component::RootDir | Component::Prefix(_) => return Err(()),
        }
    }
    // `todo` is a stack: the first step goes on top.
    todo.extend(steps.into_iter().rev());
    Ok(())
}

/// Resolves `rel` inside `root` as the kernel would follow it (every link expanded, the last one
/// too), returning the path with no link left in it; refuses a path that leaves `root` on the
/// way (an absolute link, a `..` above it) even when the file would not exist. Components that
/// do not exist are taken as folders, so `missing/..` counts as a step down and up.
pub fn resolve(root: &Path, rel: &Path) -> Result<PathBuf, UntrustedReadError> {
    let escapes = || UntrustedReadError::Escapes { path: shown(rel) };
    let mut todo: Vec<Step> = Vec::new();
    push_steps(&mut todo, rel).map_err(|()| escapes())?;
    let mut done = PathBuf::new();
    let mut hops = 0;
    while let Some(step) = todo.pop() {
        match step {
            Step::Up => {
                if !done.pop() {
                    return Err(escapes());
                }
            }
            Step::Name(name) => {
                done.push(&name);
                let here = root.join(&done);
                let is_link = std::fs::symlink_metadata(&here).is_ok_and(|m| m.is_symlink());
                if !is_link {
                    continue;
                }
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(UntrustedReadError::Loop { path: shown(rel) });
                }
                let target =
                    std::fs::read_link(&here).map_err(|source| UntrustedReadError::Io {
                        path: shown(rel),
                        source,
                    })?;
                done.pop();
                push_steps(&mut todo, &target).map_err(|()| escapes())?;
            }
        }
    }
    Ok(done)
}

/// The first link under `root` (in walk order) that leads out of it when followed, and why;
/// `None` when every link resolves inside. Links that only dangle are fine: they lead nowhere.
pub fn escaping_link(root: &Path) -> io::Result<Option<(PathBuf, UntrustedReadError)>> {
    escaping_link_in(root, Path::new(""))
}

/// `Ok` when `sub` of the tree `root`, and every link under it, stays inside `root`
/// ([`escaping_link_in`]); the escaping link's error otherwise, and a folder that cannot be
/// listed as [`UntrustedReadError::Io`]. The gate a reader of a checkout runs before reading a
/// part of it.
pub fn confined(root: &Path, sub: &Path) -> Result<(), UntrustedReadError> {
    match escaping_link_in(root, sub) {
        Ok(None) => Ok(()),
        Ok(Some((_, e))) => Err(e),
        Err(source) => Err(UntrustedReadError::Io {
            path: shown(sub),
            source,
        }),
    }
}

/// [`escaping_link`] for the part `sub` of the tree `root` (a checkout's `operators/<pkg>`):
/// `sub` itself must resolve inside `root`, and every link under it too; links elsewhere in
/// `root` are not looked at. Why: a pull request's checkout is checked in CI, and a link in it
/// must not make the checker read (and print) a file of the machine, nor write outside it.
pub fn escaping_link_in(
    root: &Path,
    sub: &Path,
) -> io::Result<Option<(PathBuf, UntrustedReadError)>> {
    if let Err(e) = resolve(root, sub) {
        return Ok(Some((sub.to_path_buf(), e)));
    }
    if !root.join(sub).is_dir() {
        return Ok(None);
    }
    let mut stack = vec![sub.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut names: Vec<OsString> = std::fs::read_dir(root.join(&dir))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()?;
        names.sort();
        for name in names.into_iter().rev() {
            let rel = dir.join(&name);
            let meta = std::fs::symlink_metadata(root.join(&rel))?;
            if meta.is_dir() {
                stack.push(rel);
            } else if meta.is_symlink()
                && let Err(e) = resolve(root, &rel)
            {
                return Ok(Some((rel, e)));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// `inner/` is the tree; `secret` sits next to it, outside.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("inner");
        std::fs::create_dir_all(root.join("configs/pkg")).unwrap();
        std::fs::write(d.path().join("secret"), b"host secret").unwrap();
        std::fs::write(root.join("configs/pkg/ok.json"), b"{}").unwrap();
        (d, root)
    }

    /// The chain: a link lexically inside when written, turned outward by a later `a`.
    fn chain(root: &Path) {
        symlink("../../a/../secret", root.join("configs/pkg/esc")).unwrap();
        symlink(".", root.join("a")).unwrap();
    }

    #[test]
    fn a_chain_of_links_cannot_lead_out() {
        let (_d, root) = tree();
        chain(&root);
        // Followed naively, the link reaches the host file.
        assert_eq!(
            std::fs::read(root.join("configs/pkg/esc")).unwrap(),
            b"host secret"
        );
        let rel = Path::new("configs/pkg/esc");
        for e in [
            read(&root, rel, 1 << 20).unwrap_err(),
            open_walk(&root, rel).unwrap_err(),
            resolve(&root, rel).unwrap_err(),
        ] {
            assert!(matches!(e, UntrustedReadError::Escapes { .. }), "{e}");
            assert!(!e.to_string().contains("secret"), "{e}");
        }
        let (link, _) = escaping_link(&root).unwrap().expect("found");
        assert_eq!(link, Path::new("configs/pkg/esc"));
    }

    #[test]
    fn links_inside_are_followed_and_limits_hold() {
        let (_d, root) = tree();
        symlink("pkg/ok.json", root.join("configs/alias")).unwrap();
        symlink("a/../configs", root.join("b")).unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        assert_eq!(read(&root, Path::new("configs/alias"), 10).unwrap(), b"{}");
        assert!(open_walk(&root, Path::new("b/alias")).is_ok());
        assert!(escaping_link(&root).unwrap().is_none());
        assert!(matches!(
            read(&root, Path::new("configs/alias"), 1).unwrap_err(),
            UntrustedReadError::TooLarge { .. }
        ));
        assert!(matches!(
            read(&root, Path::new("configs"), 10).unwrap_err(),
            UntrustedReadError::NotRegular { .. }
        ));
    }

    #[test]
    fn absolute_links_devices_and_loops_are_refused() {
        let (_d, root) = tree();
        symlink("/dev/zero", root.join("zero")).unwrap();
        symlink("/nonexistent/host/path", root.join("gone")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        for (rel, want_escape) in [("zero", true), ("gone", true), ("loop1", false)] {
            for e in [
                read(&root, Path::new(rel), 10).unwrap_err(),
                open_walk(&root, Path::new(rel)).unwrap_err(),
            ] {
                let escape = matches!(e, UntrustedReadError::Escapes { .. });
                assert_eq!(escape, want_escape, "{rel}: {e}");
            }
        }
        // The same words whether the host path exists or not.
        let a = read(&root, Path::new("zero"), 10).unwrap_err().to_string();
        let b = read(&root, Path::new("gone"), 10).unwrap_err().to_string();
        assert_eq!(a.replace("zero", "gone"), b);
        // A fifo inside the tree is refused without blocking.
        let fifo = root.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(matches!(
            read(&root, Path::new("fifo"), 10).unwrap_err(),
            UntrustedReadError::NotRegular { .. }
        ));
        assert!(matches!(
            read_limited(&fifo, 10).unwrap_err(),
            UntrustedReadError::NotRegular { .. }
        ));
    }
}
