//! Validation throughput over the shared corpus, in one process: bundles per second on all cores
//! and on one, and peak memory. Run with `just bench-validate` (or `cargo bench --bench validate`).
//! The reference Go validator takes about 0.3 s per bundle (process start included).

use olmpack::commands::validate::validate_dirs;
use olmpack::validate::Options;
use std::path::PathBuf;
use std::time::Instant;

fn corpus() -> PathBuf {
    std::env::var_os("OLMPACK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
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
    let bytes: u64 = dirs.iter().map(|d| dir_size(d)).sum();
    let opts = Options::default();
    let rounds = 10;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "corpus: {} bundles, {:.1} MiB",
        dirs.len(),
        bytes as f64 / 1048576.0
    );
    for (label, jobs) in [("all cores", cores), ("one core", 1)] {
        // Warm the page cache once so both runs read from memory.
        let _ = validate_dirs(&dirs, &opts, Some(jobs));
        let start = Instant::now();
        let mut failed = 0;
        for _ in 0..rounds {
            failed = validate_dirs(&dirs, &opts, Some(jobs))
                .iter()
                .filter(|r| r.as_ref().map_or(true, |r| r.has_errors()))
                .count();
        }
        let secs = start.elapsed().as_secs_f64();
        let n = (dirs.len() * rounds) as f64;
        println!(
            "validate ({label}, {jobs} threads): {:.0} bundles/s, {:.2} ms/bundle, {:.1} MiB/s ({failed} invalid per round)",
            n / secs,
            secs * 1000.0 / n,
            bytes as f64 * rounds as f64 / 1048576.0 / secs
        );
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak memory (VmHWM): {:.1} MiB", kib as f64 / 1024.0);
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
