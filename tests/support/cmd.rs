//! The one way the integration tests start olmpack: the binary cargo built for this test run,
//! with a clean colour setting so output comparisons do not depend on the terminal, and a time
//! limit (a hung run is killed and fails its test instead of hanging the suite). The variants
//! below are the environments several test files need (a build time from the caller's
//! environment left out, no credentials, a working folder, a prefix such as `setpriv`), so each
//! file says only what is its own.

use super::proc::Bounded;
use std::path::Path;
use std::process::{Command, Output};

/// `catalog serve`'s flags for a test server: gRPC and the catalogd HTTP API on loopback, each
/// on a port the system picks (the server prints them), so parallel tests never collide.
pub const SERVE_ON_FREE_PORTS: [&str; 6] =
    ["--addr", "127.0.0.1", "-p", "0", "--http", "127.0.0.1:0"];

/// `olmpack` as an `assert_cmd` command (assertions on output and exit code).
pub fn olmpack() -> assert_cmd::Command {
    let mut cmd = olmpack_cmd();
    cmd.env("NO_COLOR", "1");
    cmd
}

/// The bare `assert_cmd` command for the binary, for tests that set their own environment.
pub fn olmpack_cmd() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("olmpack")
        .expect("cargo builds the olmpack binary for tests");
    cmd.timeout(super::proc::LIMIT);
    cmd
}

/// The path of the binary, for tests that start it with `std::process::Command` (servers,
/// shells, timeouts).
pub fn olmpack_path() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_olmpack"))
}

/// [`olmpack_cmd`] without the caller's `SOURCE_DATE_EPOCH`: builds whose digests a test
/// compares with golden values or with another run.
pub fn olmpack_reproducible() -> assert_cmd::Command {
    let mut cmd = olmpack_cmd();
    cmd.env_remove("SOURCE_DATE_EPOCH");
    cmd
}

/// The binary as a `std::process::Command` started in `dir`, without the caller's
/// `SOURCE_DATE_EPOCH` (builds compared with golden digests, run through other process helpers).
pub fn olmpack_reproducible_in(dir: &Path) -> Command {
    let mut cmd = Command::new(olmpack_path());
    cmd.current_dir(dir).env_remove("SOURCE_DATE_EPOCH");
    cmd
}

/// Runs `olmpack ARGS` to completion (bounded) and returns what it printed and its status.
pub fn run(args: &[&str]) -> Output {
    olmpack_cmd()
        .args(args)
        .bounded_output()
        .expect("olmpack runs")
}

/// The binary through `prefix` (`setpriv ...`, `strace ...`) when it is not empty, as a
/// `std::process::Command` the caller adds arguments to.
pub fn olmpack_through(prefix: &[&str]) -> Command {
    match prefix {
        [] => Command::new(olmpack_path()),
        [first, rest @ ..] => {
            let mut c = Command::new(first);
            c.args(rest).arg(olmpack_path());
            c
        }
    }
}

/// [`olmpack_cmd`] with `home` as `HOME` and no credential settings from the caller's
/// environment (`DOCKER_CONFIG`, `REGISTRY_AUTH_FILE`, `XDG_RUNTIME_DIR`, `XDG_CONFIG_HOME`): the
/// registry and auth tests decide every credential source themselves.
pub fn olmpack_without_credentials(home: &Path) -> assert_cmd::Command {
    let mut cmd = olmpack_cmd();
    cmd.env("HOME", home)
        .env_remove("DOCKER_CONFIG")
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_CONFIG_HOME");
    cmd
}

/// Runs `olmpack ARGS` in `dir` (as [`olmpack`]) and returns its exit code (-1 when killed by a
/// signal), stdout and stderr as text.
pub fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = olmpack()
        .current_dir(dir)
        .args(args)
        .bounded_output()
        .expect("run");
    code_and_text(&out)
}

/// A finished run's exit code (-1 when killed by a signal), stdout and stderr as text.
pub fn code_and_text(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`run_in`] that must exit 0: its stdout and stderr as text.
pub fn run_ok_in(dir: &Path, args: &[&str]) -> (String, String) {
    let (code, out, err) = run_in(dir, args);
    assert_eq!(code, 0, "olmpack {}: {err}", args.join(" "));
    (out, err)
}
