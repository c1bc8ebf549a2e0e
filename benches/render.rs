//! `catalog render` throughput: every folder of `../shared/catalogs/fbc` rendered in one call
//! (as `olmpack catalog render DIR...` does), JSON and YAML, with MB/s of catalog input, peak
//! memory, and the ratio against opm v1.26.5's per-folder render times in OPM-VERDICTS.tsv.
//! Run with `just bench-render`.

// The binary's allocator (olmpack::alloc), so the figures are the ones users get.
#[global_allocator]
static GLOBAL: olmpack::alloc::SplitAllocator = olmpack::alloc::SplitAllocator;

use olmpack::action::catalog_render::{RenderOptions, render_catalog};
use olmpack::catalog::write::Format;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "support/measure.rs"]
mod measure;
use measure::{cpu_seconds, dir_size, peak_rss_kib};

fn shared() -> PathBuf {
    std::env::var_os("OLMPACK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

fn main() {
    let fbc = shared().join("catalogs/fbc");
    let mut folders: Vec<String> = Vec::new();
    for repo in std::fs::read_dir(&fbc).into_iter().flatten().flatten() {
        for pkg in std::fs::read_dir(repo.path().join("catalogs/v4.18"))
            .into_iter()
            .flatten()
            .flatten()
        {
            folders.push(pkg.path().display().to_string());
        }
    }
    if folders.is_empty() {
        eprintln!(
            "SKIPPED: no catalogs at {} (set OLMPACK_SHARED)",
            fbc.display()
        );
        return;
    }
    folders.sort();
    let bytes: u64 = folders.iter().map(|f| dir_size(Path::new(f))).sum();
    let largest = folders
        .iter()
        .map(|f| dir_size(Path::new(f)))
        .max()
        .unwrap_or(0);
    let rounds = if std::env::args().any(|a| a == "--bench") {
        5
    } else {
        1
    };
    println!(
        "catalogs: {} folders, {:.1} MiB (largest {:.1} MiB)",
        folders.len(),
        bytes as f64 / 1048576.0,
        largest as f64 / 1048576.0
    );
    let opm_ms = opm_render_ms(&shared().join("catalogs/OPM-VERDICTS.tsv"));
    for (label, format) in [("json", Format::Json), ("yaml", Format::Yaml)] {
        let opts = RenderOptions {
            format,
            ..RenderOptions::default()
        };
        let folders_at: Vec<olmpack::location::Location> = folders
            .iter()
            .map(|s| olmpack::location::Location::parse(s).expect("a local path"))
            .collect();
        let _ = render_catalog(&folders_at, &opts); // warm the page cache
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        let mut out_bytes = 0;
        for _ in 0..rounds {
            match render_catalog(&folders_at, &opts) {
                Ok(out) => out_bytes = out.bytes.len(),
                Err(e) => {
                    eprintln!("render failed: {e}");
                    return;
                }
            }
        }
        let secs = start.elapsed().as_secs_f64() / f64::from(rounds);
        let cpu = (cpu_seconds() - cpu_start) / f64::from(rounds);
        println!(
            "render -o {label}: {:.3} s per call ({:.3} CPU s), {:.0} MB/s of catalog input ({:.0} MB per CPU second), {:.1} MiB written",
            secs,
            cpu,
            bytes as f64 / 1e6 / secs,
            bytes as f64 / 1e6 / cpu.max(1e-9),
            out_bytes as f64 / 1048576.0
        );
        if let Some(ms) = opm_ms {
            println!(
                "  opm v1.26.5 `opm render` one process per folder (OPM-VERDICTS.tsv): {:.1} s in all, {:.0}x olmpack's time",
                ms / 1000.0,
                ms / 1000.0 / secs
            );
        }
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS: {:.1} MiB", kib as f64 / 1024.0);
    }
}

/// Sum of opm's render times (ms) over the folders it rendered successfully.
fn opm_render_ms(path: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut total = 0.0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() > 4 && cols[3] == "0" {
            total += cols[4].parse::<f64>().unwrap_or(0.0);
        }
    }
    Some(total)
}
