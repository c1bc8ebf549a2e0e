//! Where the real data of `../shared/` is, for the tests that read it, and the one policy for
//! whatever a test needs from outside the repository (data, tools, privileges): absent, it is a
//! printed skip on a developer's machine and a failure in CI (`OLMPACK_REQUIRE_CORPUS=1`, or
//! `OLMPACK_CI=1`). The gate checks that the data is there (a floor of files per folder), not
//! only that a folder exists, and every loop over real data reports how many cases it ran
//! through [`cases`], which fails below a stated floor.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Whether this run is CI: every missing datum, tool or privilege fails instead of skipping.
/// `OLMPACK_REQUIRE_CORPUS=1` is the historical switch; `OLMPACK_CI=1` says the same.
pub fn ci() -> bool {
    ["OLMPACK_REQUIRE_CORPUS", "OLMPACK_CI"]
        .iter()
        .any(|k| std::env::var(k).as_deref() == Ok("1"))
}

/// A test cannot run because `what` is missing: a panic in CI, a printed `SKIPPED:` otherwise.
/// The caller returns after it.
pub fn skip(what: &str) {
    if ci() {
        panic!("{what} (CI: OLMPACK_REQUIRE_CORPUS=1 or OLMPACK_CI=1 turns a skip into a failure)");
    }
    eprintln!("SKIPPED: {what}");
}

/// Whether `program` is on `PATH` (or is an existing path); a [`skip`] naming the Debian
/// package to install otherwise.
pub fn tool(program: &str, debian_package: &str) -> bool {
    if find_program(program).is_some() {
        return true;
    }
    skip(&format!(
        "`{program}` not found on PATH (apt-get install {debian_package}; scripts/test.sh installs it)"
    ));
    false
}

/// Debian's python, the one the gRPC client tests run (its packaged grpcio).
pub const PYTHON: &str = "/usr/bin/python3";

/// Whether [`PYTHON`] has grpc and grpc_tools (the serve tests' client); a [`skip`] naming the
/// Debian packages otherwise.
pub fn python_grpc_ready() -> bool {
    use super::proc::Bounded;
    let ok = std::process::Command::new(PYTHON)
        .args(["-c", "import grpc, grpc_tools"])
        .output_within(super::proc::SHORT)
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(&format!(
            "{PYTHON} lacks grpc/grpc_tools (apt-get install python3-grpcio python3-grpc-tools)"
        ));
    }
    ok
}

/// `program` resolved against `PATH` like a shell does.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A loop over real data ran `ran` cases; fails unless `ran >= floor` (and `floor > 0`, so a
/// loop over nothing never passes). Prints `CASES <label>: <ran> (floor <floor>)` and, when
/// `OLMPACK_CASES_LOG` names a file, appends `<label>\t<ran>\t<floor>` to it (scripts/test.sh
/// prints that table after the suite).
pub fn cases(label: &str, ran: usize, floor: usize) {
    assert!(
        floor > 0,
        "{label}: a floor of 0 would accept a loop over nothing"
    );
    println!("CASES {label}: {ran} (floor {floor})");
    if let Some(log) = std::env::var_os("OLMPACK_CASES_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "{label}\t{ran}\t{floor}");
        }
    }
    assert!(
        ran >= floor,
        "{label}: ran {ran} cases over the real data, fewer than its floor of {floor}: data missing or a loop that skips"
    );
}

/// [`cases`] where the data says how many there must be (`want`, e.g. lines of an index).
pub fn cases_exactly(label: &str, ran: usize, want: usize, floor: usize) {
    cases(label, ran, floor);
    assert_eq!(ran, want, "{label}: ran {ran} cases, the data has {want}");
}

/// `../shared` beside the crate, or `$OLMPACK_SHARED`.
pub fn shared_root() -> PathBuf {
    std::env::var_os("OLMPACK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// `$<var>` or `<shared root>/<sub>`.
fn part(var: &str, sub: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| shared_root().join(sub))
}

/// The floor of files under each probed folder (the counts of the data as shipped, see each
/// folder's SOURCE.md): a folder that exists but lost its data fails the gate in CI.
const FLOORS: &[(&str, usize)] = &[
    ("catalogs/fbc", 67),
    ("catalogs/bundles", 894),
    ("catalogs/packages", 415),
    ("catalogs/serve", 65),
    ("catalogs/opm-render", 126),
    ("catalogs/versions", 88),
    ("corpus/bundles", 1325),
    ("corpus/render", 147),
    ("legacy/expected", 173),
    ("legacy/packages", 1793),
    ("legacy/sqlite", 40),
];

/// Regular files under `dir`, counted up to `limit` (enough to decide a floor).
fn count_files(dir: &Path, limit: usize) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else {
                n += 1;
                if n >= limit {
                    return n;
                }
            }
        }
    }
    n
}

/// Whether `<dir>/<probe>` holds its data (at least its floor of files, or one file for a
/// folder without a stated floor); `key` is `<part>/<probe>` for the floor table.
fn has_data(dir: &Path, probe: &str, key: &str) -> Result<(), String> {
    let folder = dir.join(probe);
    if !folder.is_dir() {
        return Err(format!("{} is not a folder", folder.display()));
    }
    let floor = FLOORS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(1, |(_, f)| *f);
    let n = count_files(&folder, floor);
    if n < floor {
        return Err(format!(
            "{} holds {n} files, fewer than its {floor}",
            folder.display()
        ));
    }
    Ok(())
}

/// Says once per test binary, on the real stderr (not captured, so a plain `cargo test` on a
/// fresh clone shows it), that the real-data tests are skipped, what they would cover and how
/// to get the data; each skipped test still notes its own skip in its captured output.
fn say_skipped_once(what: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "note: {what}, so the tests that compare olmpack with opm and operator-sdk on \
             real bundles, catalogs and legacy packages skip those parts (they pass). To run them, \
             put the shared data folder beside this repository as ../shared (corpus/, catalogs/, \
             legacy/), or point OLMPACK_SHARED (or OLMPACK_CORPUS, OLMPACK_CATALOGS, OLMPACK_LEGACY) \
             at it; OLMPACK_REQUIRE_CORPUS=1 (as CI sets it) turns a missing folder into a failure."
        );
    });
}

/// The gate: `Some(dir)` when `<dir>/<probe>` holds its data; a [`skip`] otherwise.
fn gate(var: &str, sub: &str, probe: &str) -> Option<PathBuf> {
    let dir = part(var, sub);
    match has_data(&dir, probe, &format!("{sub}/{probe}")) {
        Ok(()) => Some(dir),
        Err(why) => {
            if !ci() {
                say_skipped_once(&why);
            }
            skip(&format!("shared data: {why} (set {var} or OLMPACK_SHARED)"));
            None
        }
    }
}

/// `../shared/catalogs` (or `$OLMPACK_CATALOGS`) when it holds `probe` (e.g. `fbc`, `packages`).
pub fn shared_catalogs(probe: &str) -> Option<PathBuf> {
    gate("OLMPACK_CATALOGS", "catalogs", probe)
}

/// `../shared/corpus` (or `$OLMPACK_CORPUS`): the real bundles with the reference verdicts.
pub fn shared_corpus() -> Option<PathBuf> {
    let dir = gate("OLMPACK_CORPUS", "corpus", "bundles")?;
    if !dir.join("REFERENCE-VERDICTS.tsv").is_file() {
        skip(&format!(
            "shared data: {} has no REFERENCE-VERDICTS.tsv (set OLMPACK_CORPUS)",
            dir.display()
        ));
        return None;
    }
    Some(dir)
}

/// `../shared/legacy` (or `$OLMPACK_LEGACY`) when it holds `probe` (e.g. `packages`, `sqlite`):
/// real package-manifest packages and sqlite databases with opm's output for each.
pub fn shared_legacy(probe: &str) -> Option<PathBuf> {
    let dir = gate("OLMPACK_LEGACY", "legacy", probe)?;
    // Every probe of legacy is compared with opm's output.
    if probe != "expected" {
        has_data(&dir, "expected", "legacy/expected")
            .map_err(|why| skip(&format!("shared data: {why} (set OLMPACK_LEGACY)")))
            .ok()?;
    }
    Some(dir)
}

/// `../shared` itself when its `catalogs/<probe>` and `corpus/bundles` hold their data (tests
/// that read both parts).
pub fn shared_all(probe: &str) -> Option<PathBuf> {
    let catalogs = shared_catalogs(probe)?;
    let corpus = shared_corpus()?;
    // Both parts must be siblings under one root for the tests that join paths from it.
    let root = catalogs.parent().map(Path::to_path_buf)?;
    if root.join("corpus") != corpus {
        skip(&format!(
            "shared data: {} and {} are not under one root (set OLMPACK_SHARED)",
            catalogs.display(),
            corpus.display()
        ));
        return None;
    }
    Some(root)
}

/// `filter/` of the shared root (or `$OLMPACK_FILTER`): catalog-filter's outputs on real
/// catalogs, and the shared root its `catalog.txt` paths are relative to.
pub fn shared_filter() -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("OLMPACK_FILTER")
        .map(PathBuf::from)
        .unwrap_or_else(|| shared_root().join("filter"));
    if dir.join("cases").is_dir() && count_files(&dir.join("cases"), 400) >= 400 {
        let root = dir.parent().map(PathBuf::from).unwrap_or_default();
        return Some((dir, root));
    }
    skip(&format!(
        "shared data: filter references not found at {} (set OLMPACK_FILTER)",
        dir.display()
    ));
    None
}

/// `olmv1/` of the shared root (or `$OLMPACK_OLMV1`): operator-controller's golden renders
/// and the renderer's output for every corpus bundle.
pub fn shared_olmv1() -> Option<PathBuf> {
    let dir = std::env::var_os("OLMPACK_OLMV1")
        .map(PathBuf::from)
        .unwrap_or_else(|| shared_root().join("olmv1"));
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
