//! Validation throughput over the shared corpus, in one process: MB/s and bundles per second on
//! all cores and on one (wall clock, and per CPU second, which a busy machine disturbs less), and
//! peak RSS, then peak RSS again after validating the corpus ten times over in one call (it must
//! not grow with the number of bundles). Run with `just bench-validate` (or
//! `cargo bench --bench validate`). Goal (issue 8): at least 250 MB/s on 2 cores. The reference Go
//! validator takes about 0.3 s per bundle (process start included).

// The binary's allocator (olmpack::alloc), so the figures are the ones users get.
#[global_allocator]
static GLOBAL: olmpack::alloc::SplitAllocator = olmpack::alloc::SplitAllocator;

use olmpack::validate::Options;
use olmpack::validate::bundle::validate_dirs;
use std::path::PathBuf;
use std::time::Instant;

#[path = "support/measure.rs"]
mod measure;
use measure::{cpu_seconds, peak_rss_kib};

fn corpus() -> PathBuf {
    std::env::var_os("OLMPACK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
}

fn main() {
    let root = corpus().join("bundles");
    let Ok(packages) = std::fs::read_dir(&root) else {
        eprintln!(
            "SKIPPED: no corpus at {} (set OLMPACK_CORPUS)",
            root.display()
        );
        return;
    };
    let mut dirs: Vec<PathBuf> = packages
        .filter_map(Result::ok)
        .filter_map(|p| std::fs::read_dir(p.path()).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let opts = Options::default();
    // `cargo bench` passes --bench; under `cargo test --all-targets` one quick round is a smoke test.
    let rounds = if std::env::args().any(|a| a == "--bench") {
        10
    } else {
        1
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // "Typical" bundles: the half of the corpus at or below the median size (the field notes put
    // the median real bundle at 8 files / 105 KB; the corpus over-samples large ones).
    let mut sized: Vec<(u64, PathBuf)> = dirs.iter().map(|d| (dir_size(d), d.clone())).collect();
    sized.sort();
    let median = sized[sized.len() / 2].0;
    let typical: Vec<PathBuf> = sized
        .iter()
        .filter(|(s, _)| *s <= median)
        .map(|(_, d)| d.clone())
        .collect();
    let total: u64 = sized.iter().map(|s| s.0).sum();
    println!(
        "corpus: {} bundles, {:.1} MB, median bundle {:.0} KiB",
        dirs.len(),
        total as f64 / 1e6,
        median as f64 / 1024.0
    );
    for (set, dirs) in [
        ("whole corpus", &dirs),
        ("typical (<= median size)", &typical),
    ] {
        let bytes: u64 = dirs.iter().map(|d| dir_size(d)).sum();
        for (label, jobs) in [("all cores", cores), ("one core", 1)] {
            // Warm the page cache once so every run reads from memory.
            let _ = validate_dirs(dirs, &opts, Some(jobs));
            let start = Instant::now();
            let cpu_start = cpu_seconds();
            let mut failed = 0;
            for _ in 0..rounds {
                failed = validate_dirs(dirs, &opts, Some(jobs))
                    .iter()
                    .filter(|r| r.has_errors())
                    .count();
            }
            let secs = start.elapsed().as_secs_f64();
            let cpu = cpu_seconds() - cpu_start;
            let n = (dirs.len() * rounds) as f64;
            let mb = bytes as f64 * rounds as f64 / 1e6;
            println!(
                "{set}, {label} ({jobs} threads): {:.1} MB/s, {:.0} bundles/s wall ({:.3} s per pass); per CPU second {:.1} MB/s, {:.0} bundles/s ({:.2} ms CPU per bundle); {failed} invalid",
                mb / secs,
                n / secs,
                secs / rounds as f64,
                mb / cpu,
                n / cpu,
                cpu * 1000.0 / n,
            );
        }
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS (VmHWM): {:.1} MiB", kib as f64 / 1024.0);
    }
    // Ten times the corpus in one call: peak memory must stay where it was.
    let many: Vec<PathBuf> = (0..10).flat_map(|_| dirs.iter().cloned()).collect();
    let start = Instant::now();
    let reports = validate_dirs(&many, &opts, Some(cores));
    let secs = start.elapsed().as_secs_f64();
    if let Some(kib) = peak_rss_kib() {
        println!(
            "peak RSS (VmHWM) after {} bundles in one call ({:.1} MB/s): {:.1} MiB",
            reports.len(),
            total as f64 * 10.0 / 1e6 / secs,
            kib as f64 / 1024.0
        );
    }
}

fn dir_size(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}
