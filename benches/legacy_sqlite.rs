//! `catalog render` of sqlite index databases: every database of `../shared/legacy/sqlite`
//! rendered in one call (as `olmpack catalog render A.db B.db ...` does), JSON and YAML, with
//! MB/s of database input, time per package, peak memory, and the ratio against opm v1.26.5's
//! `opm render index.db` time per package in `../shared/legacy/TIMES.tsv` (one process each).
//! Run with `just bench-legacy-sqlite`.

// The binary's allocator (olmpack::alloc), so the figures are the ones users get.
#[global_allocator]
static GLOBAL: olmpack::alloc::SplitAllocator = olmpack::alloc::SplitAllocator;

use olmpack::action::catalog_render::{RenderOptions, render_catalog};
use olmpack::catalog::write::Format;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

#[path = "support/measure.rs"]
mod measure;
use measure::{cpu_seconds, peak_rss_kib};

fn legacy() -> PathBuf {
    std::env::var_os("OLMPACK_LEGACY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/legacy"))
}

fn main() {
    let root = legacy();
    // (tree/package, path)
    let mut dbs: Vec<(String, String)> = Vec::new();
    for tree in std::fs::read_dir(root.join("sqlite"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for db in std::fs::read_dir(tree.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = db.path();
            if path.extension().is_some_and(|e| e == "db") {
                let stem = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                let key = format!("{}/{stem}", tree.file_name().to_string_lossy());
                dbs.push((key, path.display().to_string()));
            }
        }
    }
    if dbs.is_empty() {
        eprintln!(
            "SKIPPED: no databases under {} (set OLMPACK_LEGACY)",
            root.join("sqlite").display()
        );
        return;
    }
    dbs.sort();
    let paths: Vec<String> = dbs.iter().map(|(_, p)| p.clone()).collect();
    let bytes: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let times = opm_times(&root.join("TIMES.tsv"));
    let opm_ms: Vec<f64> = dbs
        .iter()
        .filter_map(|(k, _)| times.get(k).copied())
        .collect();
    let rounds = if std::env::args().any(|a| a == "--bench") {
        5
    } else {
        1
    };
    println!(
        "databases: {}, {:.1} MiB in all",
        dbs.len(),
        bytes as f64 / 1048576.0
    );
    for (label, format) in [("json", Format::Json), ("yaml", Format::Yaml)] {
        let opts = RenderOptions {
            format,
            ..RenderOptions::default()
        };
        let paths_at: Vec<olmpack::location::Location> = paths
            .iter()
            .map(|s| olmpack::location::Location::parse(s).expect("a local path"))
            .collect();
        let _ = render_catalog(&paths_at, &opts); // warm the page cache
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        let mut out_bytes = 0;
        for _ in 0..rounds {
            match render_catalog(&paths_at, &opts) {
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
            "render -o {label}: {:.3} s per call ({:.3} CPU s), {:.1} MB/s of database input, {:.2} ms per package, {:.1} MiB written",
            secs,
            cpu,
            bytes as f64 / 1e6 / secs,
            secs * 1000.0 / dbs.len() as f64,
            out_bytes as f64 / 1048576.0
        );
        if opm_ms.len() == dbs.len() {
            let total: f64 = opm_ms.iter().sum();
            println!(
                "  opm v1.26.5 `opm render index.db`, one process per package (TIMES.tsv): {:.0} ms per package, {:.1} s in all, {:.0}x olmpack's time",
                total / opm_ms.len() as f64,
                total / 1000.0,
                total / 1000.0 / secs
            );
        } else {
            println!(
                "  TIMES.tsv covers {} of the {} databases: no ratio",
                opm_ms.len(),
                dbs.len()
            );
        }
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS: {:.1} MiB", kib as f64 / 1024.0);
    }
}

/// `opm_render_db_ms` per `tree/package`.
fn opm_times(path: &std::path::Path) -> HashMap<String, f64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut header: Vec<&str> = Vec::new();
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        if i == 0 {
            header = cols;
            continue;
        }
        let col = header.iter().position(|h| *h == "opm_render_db_ms");
        if let (Some(name), Some(ms)) = (cols.first(), col.and_then(|c| cols.get(c)))
            && let Ok(ms) = ms.parse::<f64>()
        {
            out.insert(name.to_string(), ms);
        }
    }
    out
}
