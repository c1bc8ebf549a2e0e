//! The one way the integration tests start olmpack: the binary cargo built for this test run,
//! with a clean colour setting so output comparisons do not depend on the terminal, and a time
//! limit (a hung run is killed and fails its test instead of hanging the suite).

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
