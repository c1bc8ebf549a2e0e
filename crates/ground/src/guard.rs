//! Defence in depth against olmpack's own bugs. No input should make olmpack panic, but if a bug
//! does, one bad file must not cost the user the report of every other bundle in the run, and no
//! command may end with Rust's panic message and exit 101.
//!
//! - [`catch`] runs a piece of work and turns a panic inside it into an [`InternalFailure`]:
//!   `bundle validate` calls it once per bundle (the failure becomes an `internal/error` finding
//!   for that bundle only) and the command line once around every command (the failure becomes
//!   a clear error and exit 2).
//! - [`reading`] records, per thread, which file is being handled, so the failure can name it.
//!   The loader, the layer writer and the layer readers call it for every file.
//! - A panic hook, installed by the first [`catch`], keeps Rust's default message off stderr for
//!   panics that a [`catch`] handles (the message and source location go into the failure
//!   instead). A panic on a worker thread without a [`catch`] of its own, while a [`catch`] runs
//!   elsewhere (a parallel loader inside a command), is kept quiet too and recorded, so the
//!   [`catch`] that receives std's "a scoped thread panicked" reports the worker's panic and file
//!   instead. Panics while no [`catch`] runs at all reach the default hook.
//!
//! This relies on `panic = "unwind"` (Cargo's default): with `panic = "abort"` nothing can be
//! caught.
//!
//! Test hook: setting `OLMPACK_TEST_PANIC_ON=<file name>` makes [`reading`] panic when it is
//! given a file of exactly that name (`parse:<file name>`: [`parsing`], on the parser threads
//! of a large bundle). The tests use it to prove the isolation end to end through the real
//! binary. It is in every build, read once per process (it used to need the `test-hooks`
//! feature, which made the test build compile the whole crate a second time after the
//! README's `cargo run`); it needs a variable no one sets by accident holding an
//! exact file name, and all it can do is end the run with the internal-error message and exit
//! 2 it exists to test.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable of the debug-only test hook (see the module docs).
pub const TEST_PANIC_ENV: &str = "OLMPACK_TEST_PANIC_ON";

/// How many [`catch`] calls are running in the whole process.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// The first panic of a thread outside any [`catch`] while one was running elsewhere.
static ORPHAN: Mutex<Option<InternalFailure>> = Mutex::new(None);

/// The message `std::thread::scope` panics with when one of its threads panicked.
const SCOPED_THREAD_PANICKED: &str = "a scoped thread panicked";

thread_local! {
    /// The file this thread is handling, set by [`reading`].
    static CURRENT_FILE: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
    /// How many [`catch`] calls this thread is inside; the hook stays quiet when it is not 0.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// What the hook recorded about the last caught panic on this thread.
    static LAST_PANIC: RefCell<Option<InternalFailure>> = const { RefCell::new(None) };
}

/// A panic caught at an isolation boundary: olmpack failed, not the user's input. Carries what a
/// bug report needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct InternalFailure {
    /// The file being read when it happened (as given to [`reading`]), if any.
    pub file: Option<PathBuf>,
    /// The panic message.
    pub message: String,
    /// Where in olmpack's source it panicked (`src/...rs:LINE`), if known.
    pub location: Option<String>,
}

impl InternalFailure {
    /// The full sentence shown to users: what failed, where, and that it is a bug to report.
    pub fn describe(&self) -> String {
        let file = self
            .file
            .as_ref()
            .map(|f| format!(" while reading {}", f.display()))
            .unwrap_or_default();
        let location = self
            .location
            .as_ref()
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        format!(
            "internal error in olmpack{file}: {}{location}. This is a bug in olmpack, not a problem of your input: please report it to the olmpack maintainers with this message, the command and, if you can share it, the file",
            self.message
        )
    }
}

/// Marks `path` as the file this thread is handling until the returned guard is dropped (the
/// previous one is restored then, so calls nest). Cheap: one path copy per file.
pub fn reading(path: &Path) -> Reading {
    let previous = CURRENT_FILE.with(|c| c.replace(Some(path.to_path_buf())));
    let guard = Reading { previous };
    test_hook(path, "");
    guard
}

/// [`reading`] for the parse of a file, which may run on a parser thread: the test hook fires
/// here for `OLMPACK_TEST_PANIC_ON=parse:<file name>`, so tests can make that thread fail.
pub fn parsing(path: &Path) -> Reading {
    let previous = CURRENT_FILE.with(|c| c.replace(Some(path.to_path_buf())));
    let guard = Reading { previous };
    test_hook(path, "parse:");
    guard
}

/// Restores the previously handled file when dropped; see [`reading`].
#[must_use = "the file is only recorded while the guard lives"]
#[derive(Debug)]
pub struct Reading {
    previous: Option<PathBuf>,
}

impl Drop for Reading {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT_FILE.with(|c| *c.borrow_mut() = previous);
    }
}

/// Runs `work`; a panic inside it is caught and returned as an [`InternalFailure`] naming the
/// file being read at that moment, without the default panic message on stderr.
pub fn catch<T>(work: impl FnOnce() -> T) -> Result<T, InternalFailure> {
    install_hook();
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    DEPTH.with(|d| d.set(d.get().saturating_add(1)));
    let result = panic::catch_unwind(AssertUnwindSafe(work));
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
    result.map_err(|payload| {
        let here = LAST_PANIC.with(|p| p.borrow_mut().take());
        // A worker thread's panic reaches this thread as std's generic message: report the
        // worker's own panic (message, location, file) instead.
        let propagated = here
            .as_ref()
            .is_none_or(|f| f.message.contains(SCOPED_THREAD_PANICKED));
        let orphan = if propagated {
            ORPHAN.lock().ok().and_then(|mut o| o.take())
        } else {
            None
        };
        orphan.or(here).unwrap_or_else(|| InternalFailure {
            file: None,
            message: payload_text(payload.as_ref()),
            location: None,
        })
    })
}

/// Re-raises on this thread a failure caught on another one (a parallel parser's), so that the
/// [`catch`] around this thread reports it as it is: message, source location and file.
pub fn rethrow(failure: InternalFailure) -> ! {
    let message = failure.message.clone();
    if DEPTH.with(Cell::get) > 0 {
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(failure));
    } else if let Ok(mut orphan) = ORPHAN.lock() {
        orphan.get_or_insert(failure);
    }
    // resume_unwind skips the panic hook, which would overwrite what was recorded above.
    panic::resume_unwind(Box::new(message))
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let caught_here = DEPTH.with(Cell::get) > 0;
            if !caught_here && ACTIVE.load(Ordering::SeqCst) == 0 {
                default(info);
                return;
            }
            let failure = InternalFailure {
                file: CURRENT_FILE.with(|c| c.borrow().clone()),
                message: payload_text(info.payload()),
                location: info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line())),
            };
            if caught_here {
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(failure));
            } else if let Ok(mut orphan) = ORPHAN.lock() {
                orphan.get_or_insert(failure);
            }
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn test_hook(path: &Path, phase: &str) {
    static TARGET: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let target = TARGET.get_or_init(|| {
        std::env::var_os(TEST_PANIC_ENV)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string_lossy().into_owned())
    });
    if let Some(target) = target
        && let Some(name) = target.strip_prefix(phase)
        && (phase.is_empty() || !name.is_empty())
        && path.file_name().and_then(|n| n.to_str()) == Some(name)
    {
        panic!("{TEST_PANIC_ENV} test hook fired on {}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_names_the_file_being_read() {
        let failure = catch(|| {
            let _outer = reading(Path::new("bundle"));
            let _inner = reading(Path::new("bundle/manifests/csv.yaml"));
            let empty: Vec<u8> = Vec::new();
            // An out-of-bounds index: the kind of bug this module exists for.
            empty[usize::from(empty.is_empty())]
        })
        .expect_err("panics");
        assert_eq!(
            failure.file.as_deref(),
            Some(Path::new("bundle/manifests/csv.yaml"))
        );
        assert!(failure.message.contains("index out of bounds"));
        assert!(
            failure
                .location
                .as_deref()
                .is_some_and(|l| l.contains("guard.rs"))
        );
        assert!(failure.describe().contains("please report"));
        // The guards were dropped while unwinding: nothing is recorded any more.
        assert_eq!(CURRENT_FILE.with(|c| c.borrow().clone()), None);
    }

    #[test]
    fn a_worker_thread_panic_is_reported_with_its_own_message_and_file() {
        let failure = catch(|| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let _file = reading(Path::new("catalog/pkg/index.json"));
                    panic!("worker failed");
                });
            });
        })
        .expect_err("panics");
        assert_eq!(failure.message, "worker failed");
        assert_eq!(
            failure.file.as_deref(),
            Some(Path::new("catalog/pkg/index.json"))
        );
    }

    #[test]
    fn a_failure_caught_on_another_thread_is_rethrown_as_it_was() {
        let failure = catch(|| {
            let inner = std::thread::scope(|s| {
                s.spawn(|| {
                    catch(|| {
                        let _file = reading(Path::new("manifests/big.crd.yaml"));
                        panic!("parser failed");
                    })
                })
                .join()
            });
            match inner {
                Ok(Err(failure)) => rethrow(failure),
                _ => unreachable!("the worker catches its own panic"),
            }
        })
        .expect_err("rethrown");
        assert_eq!(failure.message, "parser failed");
        assert_eq!(
            failure.file.as_deref(),
            Some(Path::new("manifests/big.crd.yaml"))
        );
        assert!(failure.location.is_some_and(|l| l.contains("guard.rs")));
    }

    #[test]
    fn work_that_does_not_panic_is_returned() {
        assert_eq!(catch(|| 42), Ok(42));
    }

    #[test]
    fn guards_nest() {
        let _a = reading(Path::new("a"));
        {
            let _b = reading(Path::new("b"));
            assert_eq!(
                CURRENT_FILE.with(|c| c.borrow().clone()),
                Some(PathBuf::from("b"))
            );
        }
        assert_eq!(
            CURRENT_FILE.with(|c| c.borrow().clone()),
            Some(PathBuf::from("a"))
        );
    }
}
