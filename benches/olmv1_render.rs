//! OLM v1 render speed over every bundle of `../shared/corpus/bundles` (or `$OLMPACK_CORPUS`) in
//! three modes (all namespaces, a watch namespace, the install namespace), in one process, as the
//! reference ran operator-controller v1.11.0's renderer: load, validate, render, write the YAML.
//! Prints renders/s, peak memory after the first tenth and after all (flat when memory does not
//! grow with the bundle count), and the ratio against the sum of the reference's per-render times
//! in `../shared/olmv1/TIMES.tsv` (one renderer process per bundle and mode). Run with
//! `just bench-olmv1`.

#[global_allocator]
static GLOBAL: olmpack::alloc::SplitAllocator = olmpack::alloc::SplitAllocator;

use olmpack::bundle::Bundle;
use olmpack::olmv1::{self, RenderOptions, output};
use std::path::PathBuf;
use std::time::Instant;

#[path = "support/measure.rs"]
mod measure;
use measure::{cpu_seconds, peak_rss_kib};

fn shared(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(default))
}

fn main() {
    let corpus = shared("OLMPACK_CORPUS", "../shared/corpus");
    let olmv1_dir = shared("OLMPACK_OLMV1", "../shared/olmv1");
    let Ok(times) = std::fs::read_to_string(olmv1_dir.join("TIMES.tsv")) else {
        eprintln!(
            "SKIPPED: no {}/TIMES.tsv (set OLMPACK_OLMV1)",
            olmv1_dir.display()
        );
        return;
    };
    let mut cases = Vec::new();
    let mut reference_ms = 0.0;
    for line in times
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 3 {
            continue;
        }
        let dir = corpus.join("bundles").join(cols[0]);
        if !dir.is_dir() {
            continue;
        }
        let watch = match cols[1] {
            "single" => vec!["olmv1-watch".to_string()],
            "own" => vec!["olmv1-system".to_string()],
            _ => vec![],
        };
        reference_ms += cols[2].parse::<f64>().unwrap_or(0.0);
        cases.push((dir, watch));
    }
    assert!(
        !cases.is_empty(),
        "no corpus bundle found under {}",
        corpus.display()
    );
    let tenth = (cases.len() / 10).max(1);
    let mut rss_tenth = None;
    let (mut objects, mut refused, mut bytes) = (0usize, 0usize, 0usize);
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    for (i, (dir, watch)) in cases.iter().enumerate() {
        let Ok(bundle) = Bundle::load(dir) else {
            refused += 1;
            continue;
        };
        let opts = RenderOptions {
            install_namespace: "olmv1-system".into(),
            watch_namespaces: watch.clone(),
            ..RenderOptions::default()
        };
        match olmv1::render(&bundle, &opts) {
            Ok(rendered) => {
                objects += rendered.len();
                for o in &rendered {
                    bytes += output::to_yaml(o).len();
                }
            }
            Err(_) => refused += 1,
        }
        if i + 1 == tenth {
            rss_tenth = peak_rss_kib();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let n = cases.len();
    println!(
        "olmv1 render: {n} renders (bundles x modes), {objects} objects, {refused} refused, {:.1} MB of YAML",
        bytes as f64 / 1e6
    );
    println!(
        "olmpack: {:.3} s wall ({:.2} ms per render, {:.0} renders/s), {:.3} s CPU",
        secs,
        secs * 1000.0 / n as f64,
        n as f64 / secs,
        cpu
    );
    let rss_one = peak_rss_kib();
    // A second pass over every case: if memory grew with the number of renders, the peak would
    // rise again; flat memory keeps it where the largest bundle put it.
    for (dir, watch) in &cases {
        if let Ok(bundle) = Bundle::load(dir) {
            let opts = RenderOptions {
                install_namespace: "olmv1-system".into(),
                watch_namespaces: watch.clone(),
                ..RenderOptions::default()
            };
            if let Ok(rendered) = olmv1::render(&bundle, &opts) {
                for o in &rendered {
                    std::hint::black_box(output::to_yaml(o));
                }
            }
        }
    }
    println!(
        "peak RSS: {} KiB after {tenth} renders, {} KiB after all {n}, {} KiB after {} (a second pass)",
        rss_tenth.map_or("?".into(), |k| k.to_string()),
        rss_one.map_or("?".into(), |k| k.to_string()),
        peak_rss_kib().map_or("?".into(), |k| k.to_string()),
        2 * n
    );
    println!(
        "reference (operator-controller v1.11.0 renderer, one process per render, TIMES.tsv): {:.2} s; ratio {:.1}x by wall time, {:.1}x by CPU time (on a loaded machine the wall time counts other processes)",
        reference_ms / 1000.0,
        reference_ms / 1000.0 / secs,
        reference_ms / 1000.0 / cpu
    );
}
