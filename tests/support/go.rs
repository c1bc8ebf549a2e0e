//! Go itself as a reference implementation for the tests that compare olmpack with Go's standard
//! library (`goflate_go.rs`: compress/flate lengths; `gosort_go.rs`: sort.Slice order). Debian's
//! `golang-go`, installed by `scripts/test.sh`.

use super::proc::Bounded;
use std::path::Path;
use std::process::{Command, Stdio};

/// Whether `go` runs here. Without it a test prints that it skipped; under
/// `OLMPACK_REQUIRE_CORPUS=1` (CI) a missing Go is a failure.
pub fn go_available() -> bool {
    let found = Command::new("go")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status_within(super::proc::SHORT)
        .is_ok_and(|s| s.success());
    if !found {
        super::shared::skip(
            "Go is not installed (Debian package golang-go; scripts/test.sh installs it)",
        );
    }
    found
}

/// `go run` of one of the programs under `tests/support/`, offline and self-contained (no module
/// download, no toolchain switch, its build cache under `cache_dir`), all three streams piped.
pub fn go_run(program: &str, cache_dir: &Path) -> Command {
    let mut go = Command::new("go");
    go.arg("run")
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/support")
                .join(program),
        )
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GO111MODULE", "off")
        .env("GOCACHE", cache_dir.join("gocache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    go
}
