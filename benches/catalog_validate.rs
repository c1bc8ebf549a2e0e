//! Catalog validation speed over the real catalogs of `../shared/catalogs/fbc` (or
//! `$OLMPACK_CATALOGS/fbc`): every folder in one call, as `olmpack catalog validate DIR...` runs
//! it, on all cores and on one. Prints MB/s, folders/s, peak memory, and the ratio against the
//! sum of opm v1.26.5's per-folder `opm validate` times in OPM-VERDICTS.tsv (one opm process per
//! folder, as the public pipelines run it). Run with `just bench-catalog`.

// The binary's allocator (olmpack::alloc), so the figures are the ones users get.
#[global_allocator]
static GLOBAL: olmpack::alloc::SplitAllocator = olmpack::alloc::SplitAllocator;

use olmpack::catalog::load::{self, LoadOptions};
use olmpack::validate::catalog::validate_dirs;
use std::path::PathBuf;
use std::time::Instant;

#[path = "support/measure.rs"]
mod measure;
use measure::{cpu_seconds, peak_rss_kib};

fn shared() -> PathBuf {
    std::env::var_os("OLMPACK_CATALOGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/catalogs"))
}

fn main() {
    let shared = shared();
    let Ok(verdicts) = std::fs::read_to_string(shared.join("OPM-VERDICTS.tsv")) else {
        eprintln!(
            "SKIPPED: no catalogs at {} (set OLMPACK_CATALOGS)",
            shared.display()
        );
        return;
    };
    let mut dirs = Vec::new();
    let mut opm_ms = 0.0;
    for line in verdicts
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        dirs.push(shared.join("fbc").join(cols[0]));
        opm_ms += cols
            .get(2)
            .and_then(|c| c.parse::<f64>().ok())
            .unwrap_or(0.0);
    }
    let bytes: u64 = dirs
        .iter()
        .map(|d| {
            load::load_dir_with(
                d,
                &LoadOptions {
                    jobs: Some(1),
                    ..LoadOptions::default()
                },
            )
            .map_or(0, |l| l.bytes)
        })
        .sum();
    let largest = dirs
        .iter()
        .filter_map(|d| std::fs::metadata(d.join("catalog.yaml")).ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0);
    println!(
        "catalogs: {} folders, {:.1} MB, largest file {:.1} MB; opm v1.26.5 validate: {:.2} s in all (one process per folder)",
        dirs.len(),
        bytes as f64 / 1e6,
        largest as f64 / 1e6,
        opm_ms / 1000.0
    );
    let rounds = if std::env::args().any(|a| a == "--bench") {
        5
    } else {
        1
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    for (label, jobs) in [("all cores", cores), ("one core", 1)] {
        let mut best = f64::MAX;
        let mut best_cpu = f64::MAX;
        let mut invalid = 0;
        for _ in 0..rounds {
            let start = Instant::now();
            let cpu_start = cpu_seconds();
            let reports = validate_dirs(&dirs, Some(jobs));
            best = best.min(start.elapsed().as_secs_f64());
            best_cpu = best_cpu.min(cpu_seconds() - cpu_start);
            invalid = reports
                .iter()
                .filter(|r| r.as_ref().map_or(true, |r| r.has_errors()))
                .count();
        }
        println!(
            "{label} ({jobs} threads): {:.3} s wall, {:.0} MB/s, {:.0} folders/s, {invalid} invalid, {:.1}x faster than opm; {:.3} s CPU = {:.0} MB/s per uncontended core",
            best,
            bytes as f64 / 1e6 / best,
            dirs.len() as f64 / best,
            opm_ms / 1000.0 / best,
            best_cpu,
            bytes as f64 / 1e6 / best_cpu.max(1e-9)
        );
    }
    // The loader alone (what render pays before writing).
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    for d in &dirs {
        let _ = load::load_dir_with(
            d,
            &LoadOptions {
                jobs: Some(1),
                ..LoadOptions::default()
            },
        );
    }
    let (wall, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu_start);
    println!(
        "load only (1 thread): {wall:.3} s wall, {:.0} MB/s; {cpu:.3} s CPU = {:.0} MB/s per uncontended core",
        bytes as f64 / 1e6 / wall,
        bytes as f64 / 1e6 / cpu.max(1e-9)
    );
    if let Some(kib) = peak_rss_kib() {
        println!(
            "peak memory (VmHWM): {:.1} MiB ({:.1}x the largest file)",
            kib as f64 / 1024.0,
            kib as f64 * 1024.0 / largest.max(1) as f64
        );
    }
}
