//! Where the real data of `../shared/` is, for the tests that read it: one policy for all of
//! them. Absent data is a printed skip, or a failure under `OLMPACK_REQUIRE_CORPUS=1` (CI).
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/catalogs` (or `$OLMPACK_CATALOGS`) when it holds `probe` (e.g. `fbc`, `packages`).
pub fn shared_catalogs(probe: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("OLMPACK_CATALOGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/catalogs"));
    if dir.join(probe).is_dir() {
        return Some(dir);
    }
    if std::env::var("OLMPACK_REQUIRE_CORPUS").as_deref() == Ok("1") {
        panic!(
            "catalogs not found at {} and OLMPACK_REQUIRE_CORPUS=1",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED: catalogs not found at {} (set OLMPACK_CATALOGS)",
        dir.display()
    );
    None
}

/// `../shared/corpus` (or `$OLMPACK_CORPUS`): the real bundles with the reference verdicts.
pub fn shared_corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("OLMPACK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("OLMPACK_REQUIRE_CORPUS").as_deref() == Ok("1") {
        panic!(
            "corpus not found at {} and OLMPACK_REQUIRE_CORPUS=1",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED corpus part: not found at {} (set OLMPACK_CORPUS)",
        dir.display()
    );
    None
}

/// `../shared/legacy` (or `$OLMPACK_LEGACY`) when it holds `probe` (e.g. `packages`, `sqlite`):
/// real package-manifest packages and sqlite databases with opm's output for each.
pub fn shared_legacy(probe: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("OLMPACK_LEGACY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/legacy"));
    if dir.join(probe).is_dir() {
        return Some(dir);
    }
    if std::env::var("OLMPACK_REQUIRE_CORPUS").as_deref() == Ok("1") {
        panic!(
            "legacy data not found at {} and OLMPACK_REQUIRE_CORPUS=1",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED: legacy data not found at {} (set OLMPACK_LEGACY)",
        dir.display()
    );
    None
}

/// `../shared/olmv1` (or `$OLMPACK_OLMV1`): operator-controller's golden renders and the
/// renderer's output for every corpus bundle.
pub fn shared_olmv1() -> Option<PathBuf> {
    let dir = std::env::var_os("OLMPACK_OLMV1")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/olmv1"));
    if dir.join("upstream").is_dir() {
        return Some(dir);
    }
    if std::env::var("OLMPACK_REQUIRE_CORPUS").as_deref() == Ok("1") {
        panic!(
            "olmv1 references not found at {} and OLMPACK_REQUIRE_CORPUS=1",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED: olmv1 references not found at {} (set OLMPACK_OLMV1)",
        dir.display()
    );
    None
}
