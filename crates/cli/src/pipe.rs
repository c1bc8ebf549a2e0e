//! A closed stdout (`olmpack … | head`) is the reader's choice, not a failure of olmpack.
//!
//! Why: Rust ignores SIGPIPE, so once the reader of a pipe has gone, every write to stdout
//! fails with EPIPE: `println!` panics and `writeln!` returns an error, which the command
//! line then reported as an internal error (exit 2), even after a `copy` had finished.
//! coreutils and Go tools such as skopeo leave the default SIGPIPE action, so the same write
//! ends them silently, killed by SIGPIPE (the shell reports 141). The command line's edge does
//! the same, once, for every command: when a command stopped because its stdout's reader is
//! gone, olmpack ends by SIGPIPE, without a message. Only then: a failure of its own (a
//! registry refusing a push) is still reported even if stdout was closed too, and SIGPIPE
//! stays ignored while commands run, so a closed socket or a child's closed stdin is an
//! error the command handles rather than the end of the process.

use std::os::fd::AsRawFd;

/// The status a shell reports for a process killed by SIGPIPE (128 + 13).
pub const EXIT_SIGPIPE: u8 = 141;

/// Whether stdout is a pipe (or socket) whose reader has gone: `poll` reports `POLLERR` on
/// the write end of a pipe whose read end is closed (`POLLHUP` for a socket's).
pub fn stdout_reader_gone() -> bool {
    let mut fds = [libc::pollfd {
        fd: std::io::stdout().as_raw_fd(),
        events: 0,
        revents: 0,
    }];
    // SAFETY: one valid pollfd, a zero timeout; poll only writes `revents`.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    n > 0 && fds[0].revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// Whether a failure's message says a write hit a closed pipe (`Broken pipe (os error 32)`,
/// as std formats EPIPE, in a caught `println!` panic or a returned write error).
pub fn mentions_broken_pipe(message: &str) -> bool {
    message.contains(&format!("(os error {})", libc::EPIPE))
}

/// Ends the process as coreutils and skopeo end when their reader has gone: killed by
/// SIGPIPE (default action restored first), silently; exit 141 should the signal not end it.
pub fn die_of_sigpipe() -> ! {
    // SAFETY: restoring a signal's default action and raising it on this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(i32::from(EXIT_SIGPIPE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epipe_is_recognised_in_std_messages() {
        let e = std::io::Error::from_raw_os_error(libc::EPIPE);
        assert!(mentions_broken_pipe(&format!(
            "failed printing to stdout: {e}"
        )));
        let other = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(!mentions_broken_pipe(&other.to_string()));
    }
}
