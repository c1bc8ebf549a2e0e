//! One thin module per subcommand, laid out as the command line is (`bundle/build.rs` is
//! `olmpack bundle build`): parse-level arguments in, one library call (`action/`), exit code
//! out. The flag structs several commands share live in [`flags`]; no command module imports
//! another.
//!
//! Every command returns an [`Outcome`]: `Ok(code)` when it ran to the end (0 = success,
//! 1 = findings such as validation errors) or `Err(Failure)` for usage and I/O problems, which
//! the binary prints once and maps to its exit code (2 unless the failure says otherwise).

/// `println!` for what a command reports on stdout (a digest, a verdict line), for commands
/// whose job is something else (copy, build, sign, verify): a reader that has gone
/// (`olmpack copy … | head -0`) loses the rest of the report, and the command finishes its
/// job and keeps its exit code, as `bundle validate` does; any other write error is a
/// [`Failure`]. Evaluates to `Result<(), Failure>`. Commands whose job is the printing stop
/// at the first failed write instead (the edge, `cli`, ends them as coreutils end).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::commands::write_report(format_args!($($arg)*))
    };
}

pub mod attest;
pub mod bundle;
pub mod catalog;
pub mod check;
pub mod completions;
pub mod copy;
pub mod explain;
pub mod flags;
pub mod man;
pub mod reference;
pub mod sign;
pub mod verify_blob;

use std::fmt;

/// Exit code for a run that completed and found nothing blocking.
pub const EXIT_OK: u8 = 0;
/// Exit code for a run that completed and found validation errors (or warnings under `--strict`).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code for usage errors and I/O problems: the command could not do its job.
pub const EXIT_USAGE: u8 = 2;

/// The line [`outln!`] writes: EPIPE (the reader has gone) is not an error, the report line
/// is only lost.
pub fn write_report(line: fmt::Arguments<'_>) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out
        .write_fmt(format_args!("{line}\n"))
        .and_then(|()| out.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::usage(format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

/// A command's whole output to stdout at once (`catalog template`, `convert-template`,
/// `graph`): a failed write, EPIPE included, is a usage error naming what failed.
pub fn write_output(out: &[u8]) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::usage(format!("cannot write the output: {e}")))
}

/// Prints what a build run (`bundle build`, `catalog build`) reports as it comes: findings,
/// warnings, signatures and attestations on stderr; the delivered image goes to
/// `on_delivered`, each command printing its own lines for it.
pub fn print_build_event<W: fmt::Display + ?Sized, R>(
    event: crate::action::step::deliver::BuildEvent<'_, W, R>,
    color: bool,
    on_delivered: &mut dyn FnMut(&R),
) {
    use crate::action::step::deliver::BuildEvent;
    match event {
        BuildEvent::Findings(report) => {
            let _ = crate::validate::output::human(report, &mut std::io::stderr().lock(), color);
        }
        BuildEvent::Warning(w) => eprintln!("warning: {w}"),
        BuildEvent::Delivered(built) => on_delivered(built),
        BuildEvent::Signed(pushed, w) => {
            eprintln!("signed {} ({}): {}", pushed.digest, w.format, w.location);
        }
        BuildEvent::Attested(pushed, a) => {
            let what = if a.added {
                "attested"
            } else {
                "already attested"
            };
            eprintln!(
                "{what} {} ({}): {}",
                pushed.digest, a.predicate_type, a.location
            );
        }
    }
}

/// The exit of a build run that did not fail: validation errors (already printed) exit 1,
/// saying nothing was built from `dir`; a built image exits 0.
pub fn build_exit<R>(
    outcome: crate::action::step::deliver::BuildOutcome<R>,
    dir: &std::path::Path,
) -> Outcome {
    match outcome {
        crate::action::step::deliver::BuildOutcome::Invalid => {
            eprintln!(
                "not building {}: fix the errors above, or pass --no-validate",
                dir.display()
            );
            Ok(EXIT_FINDINGS)
        }
        crate::action::step::deliver::BuildOutcome::Built(_) => Ok(EXIT_OK),
    }
}

/// Why a command could not finish; printed once by the binary, with its cause chain.
#[derive(Debug)]
pub struct Failure {
    /// Exit code to leave with.
    pub code: u8,
    /// The whole message, cause chain included.
    pub message: String,
}

impl Failure {
    /// A usage or I/O failure (exit 2) with a message that says what to do.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    /// A failure with an explicit exit code, for commands whose checks failed (exit 1).
    pub fn with_code(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(err: E) -> Self {
        Failure::usage(error_chain(&err))
    }
}

/// Renders an error and all its sources as `outer: inner: innermost` (the library's, so
/// commands and findings spell failures the same way).
pub use crate::errors::error_chain;

/// Whether output on a stream gets colour: only on a terminal, never when `NO_COLOR` is set.
pub fn color_on(stream_is_terminal: bool) -> bool {
    stream_is_terminal && std::env::var_os("NO_COLOR").is_none()
}

/// What every command returns: an exit code when it ran to the end, or a failure to report.
pub type Outcome = Result<u8, Failure>;
