//! Ctrl-C and SIGTERM for commands that write: every temporary file or folder a command stages
//! (beside an output, or under `$TMPDIR`) is registered here while it exists, and a signal
//! removes them, says `interrupted` on stderr and exits 130 (128 + SIGINT, what shells report),
//! so an interrupted push or build leaves no hidden `.olmpack-…` behind.
//!
//! The command's threads keep running while the watcher cleans up, and see their files vanish:
//! so the watcher first marks the process interrupted ([`interrupted`]) and takes stderr for
//! good (nothing else is printed: no error quoting a removed temporary path), removes the
//! registered paths in passes until none reappears (a writer may recreate a folder), and no
//! output is committed after the mark ([`wait_for_exit`]); the command line's edge never turns
//! such a failure into an exit code of its own.
//!
//! Why a registry: the default action of SIGINT kills the process before any destructor runs,
//! so `tempfile`'s clean-up on drop never happens; the writers cannot poll for a signal inside
//! a blocking upload either. The watcher thread does the clean-up itself, then ends the
//! process. A path that was renamed into place meanwhile is gone from its temporary name, so
//! removing that name is harmless; a completed output is never touched.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The exit code of an interrupted command.
pub const EXIT_INTERRUPTED: u8 = 130;

static PATHS: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A temporary path registered for removal on a signal; dropping it unregisters the path
/// (its owner has removed it, or renamed it into place).
#[derive(Debug)]
#[must_use = "the path is unregistered when this is dropped"]
pub struct Registered(u64);

impl Drop for Registered {
    fn drop(&mut self) {
        // Once interrupted, the watcher's passes keep every path (a folder dropped on an
        // unwinding thread may be recreated by another).
        if interrupted() {
            return;
        }
        if let Ok(mut paths) = PATHS.lock() {
            paths.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Registers `path` (a temporary file or folder) to be removed if the command is interrupted.
pub fn register(path: &Path) -> Registered {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut paths) = PATHS.lock() {
        paths.push((id, path.to_path_buf()));
    }
    Registered(id)
}

/// A fresh temporary folder under the system temp dir, named `prefix` + random, created and
/// registered in one step. It stays registered until the process ends, which is harmless once
/// the folder is gone (its random name is not reused): its owner may outlive the caller (a
/// build's spool).
///
/// Both happen under the registry's lock, which the watcher takes after marking the process
/// interrupted: a signal between creating a folder and registering it left the folder behind
/// (`tempdir()` then a separate registration), and once a signal is taken no folder is made
/// (this thread waits for the watcher to end the process).
pub fn temp_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    created_watched(
        || tempfile::Builder::new().prefix(prefix).tempdir(),
        tempfile::TempDir::path,
    )
}

/// [`temp_dir`] for one file (a blob's spool).
pub fn temp_file(prefix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    created_watched(
        || tempfile::Builder::new().prefix(prefix).tempfile(),
        tempfile::NamedTempFile::path,
    )
}

/// Runs `create` and registers the path of what it made, both under [`PATHS`]' lock.
fn created_watched<T>(
    create: impl FnOnce() -> std::io::Result<T>,
    path: impl Fn(&T) -> &Path,
) -> std::io::Result<T> {
    let Ok(mut paths) = PATHS.lock() else {
        // A poisoned registry (a thread panicked holding it): made, not registered, as a
        // registration then fails too.
        return create();
    };
    if interrupted() {
        drop(paths);
        wait_for_exit();
    }
    let made = create()?;
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    paths.push((id, path(&made).to_path_buf()));
    Ok(made)
}

/// Set by the watcher when a signal arrived: from then on the process is ending, and whatever
/// fails on another thread (a file removed under it) is a consequence, not an error to report.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a signal arrived (the process is being ended by the watcher). The command line's
/// edge checks it before reporting a failure, so an interrupted run says only `interrupted`.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// For a thread that found the process interrupted: waits for the watcher to end the process
/// (it is cleaning up; a report or an exit code from here would race its `interrupted`/130).
pub fn wait_for_exit() -> ! {
    loop {
        std::thread::park_timeout(std::time::Duration::from_secs(1));
    }
}

/// Removes every registered path (files and folders alike), again and again while other
/// threads keep working: a writer can recreate a removed folder (`create_dir_all` of a path
/// inside it) or register a new one between two passes, and the process may only exit once a
/// pass finds nothing left. Bounded (about two seconds), so a stuck file system cannot hold
/// the exit.
fn remove_all() {
    let mut quiet_passes = 0;
    for _ in 0..100 {
        let paths: Vec<PathBuf> = match PATHS.lock() {
            Ok(p) => p.iter().map(|(_, path)| path.clone()).collect(),
            Err(_) => return,
        };
        let left = remove(&paths);
        quiet_passes = if left == 0 { quiet_passes + 1 } else { 0 };
        if quiet_passes >= 3 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Removes `paths`, newest first (a file staged inside a registered folder goes before it);
/// returns how many existed (removed or not: a folder filled meanwhile needs another pass).
fn remove(paths: &[PathBuf]) -> usize {
    let mut existed = 0;
    for path in paths.iter().rev() {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                existed += 1;
                let _ = std::fs::remove_dir_all(path);
            }
            Ok(_) => {
                existed += 1;
                let _ = std::fs::remove_file(path);
            }
            Err(_) => {}
        }
    }
    existed
}

#[cfg(test)]
fn is_registered(path: &Path) -> bool {
    PATHS
        .lock()
        .is_ok_and(|p| p.iter().any(|(_, registered)| registered == path))
}

/// Starts the watcher thread: on SIGINT or SIGTERM it removes every registered path, prints
/// `interrupted` and exits 130. Call once, before a command that writes starts (not for
/// `catalog serve`, which stops gracefully on the same signals).
pub fn install() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build();
    let Ok(runtime) = runtime else { return };
    // Registered on this thread, before the command runs, so no signal is missed.
    let signals = runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        Some((
            signal(SignalKind::interrupt()).ok()?,
            signal(SignalKind::terminate()).ok()?,
        ))
    });
    let Some((mut int, mut term)) = signals else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("olmpack-signals".into())
        .spawn(move || {
            runtime.block_on(async {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            });
            INTERRUPTED.store(true, Ordering::SeqCst);
            // Held until the process ends: a thread failing meanwhile (its staged file removed
            // under it) cannot print a false error, and waits instead of working on.
            let mut stderr = std::io::stderr().lock();
            remove_all();
            let _ = writeln!(stderr, "interrupted");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        });
    drop(spawned);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_paths_are_listed_until_dropped_and_removed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (file, folder) = (dir.path().join("f"), dir.path().join("d"));
        std::fs::write(&file, b"x").unwrap();
        std::fs::create_dir_all(folder.join("sub")).unwrap();
        let f = register(&file);
        assert!(is_registered(&file));
        drop(f);
        assert!(!is_registered(&file));
        assert_eq!(
            remove(&[file.clone(), folder.clone(), dir.path().join("none")]),
            2
        );
        assert_eq!(remove(&[file.clone(), folder.clone()]), 0);
        assert!(!file.exists() && !folder.exists());
    }

    #[test]
    fn temporary_folders_and_files_are_registered_as_they_are_made() {
        let dir = temp_dir("olmpack-test-").unwrap();
        assert!(dir.path().is_dir() && is_registered(dir.path()));
        let file = temp_file("olmpack-test-").unwrap();
        assert!(file.path().is_file() && is_registered(file.path()));
    }
}
