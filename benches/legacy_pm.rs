//! `catalog render` of package-manifest packages: every package of `../shared/legacy/packages`
//! rendered in one call (`olmpack catalog render PKG...`), YAML and JSON, with MB/s of package
//! input, peak memory, and the reference's time for the same packages: opm v1.26.5's
//! `initializer` plus `opm render index.db`, one process each per package (TIMES.tsv).
//! Run with `just bench-legacy-pm`.

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

fn legacy() -> PathBuf {
    std::env::var_os("OLMPACK_LEGACY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/legacy"))
}

fn main() {
    let root = legacy();
    let mut packages: Vec<String> = Vec::new();
    for tree in std::fs::read_dir(root.join("packages"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for pkg in std::fs::read_dir(tree.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            packages.push(pkg.path().display().to_string());
        }
    }
    if packages.is_empty() {
        eprintln!(
            "SKIPPED: no packages at {} (set OLMPACK_LEGACY)",
            root.display()
        );
        return;
    }
    packages.sort();
    let bytes: u64 = packages.iter().map(|p| dir_size(Path::new(p))).sum();
    let rounds = if std::env::args().any(|a| a == "--bench") {
        3
    } else {
        1
    };
    println!(
        "package manifests: {} packages, {:.1} MiB",
        packages.len(),
        bytes as f64 / 1048576.0
    );
    let reference = reference_ms(&root.join("TIMES.tsv"));
    for (label, format) in [("yaml", Format::Yaml), ("json", Format::Json)] {
        let opts = RenderOptions {
            format,
            ..RenderOptions::default()
        };
        let packages_at: Vec<olmpack::location::Location> = packages
            .iter()
            .map(|s| olmpack::location::Location::parse(s).expect("a local path"))
            .collect();
        let _ = render_catalog(&packages_at, &opts); // warm the page cache
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        let mut out_bytes = 0;
        for _ in 0..rounds {
            match render_catalog(&packages_at, &opts) {
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
            "render -o {label}: {:.3} s per call ({:.3} CPU s), {:.1} MB/s of package input, {:.2} ms per package, {:.1} MiB written",
            secs,
            cpu,
            bytes as f64 / 1e6 / secs,
            secs * 1000.0 / packages.len() as f64,
            out_bytes as f64 / 1048576.0
        );
        if let Some((init, render, n)) = reference {
            println!(
                "  reference (TIMES.tsv, {n} packages): initializer {:.1} s + opm render index.db {:.1} s = {:.1} s ({:.0} ms per package), {:.0}x olmpack's time",
                init / 1000.0,
                render / 1000.0,
                (init + render) / 1000.0,
                (init + render) / n as f64,
                (init + render) / 1000.0 / secs
            );
        }
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS: {:.1} MiB", kib as f64 / 1024.0);
    }
}

/// Sums of the reference's `initializer` and `opm render index.db` times (ms), and the count.
fn reference_ms(path: &Path) -> Option<(f64, f64, usize)> {
    let text = std::fs::read_to_string(path).ok()?;
    let (mut init, mut render, mut n) = (0.0, 0.0, 0);
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [_, a, b, ..] = cols.as_slice()
            && let (Ok(a), Ok(b)) = (a.parse::<f64>(), b.parse::<f64>())
        {
            init += a;
            render += b;
            n += 1;
        }
    }
    Some((init, render, n))
}
