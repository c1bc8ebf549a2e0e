//! Template bench: a real template's bundles rendered from a local registry (the Debian
//! `docker-registry`), by `olmpack catalog template` with `-j 1` (opm's one-after-another order)
//! and `-j N` (default), against the sum of single-bundle renders (`olmpack catalog render REF`,
//! one process per bundle, which is how opm's per-bundle pulls add up). Also the same template
//! through `--bundle-map` (bundle folders, no registry).
//!
//! Data: the kube-green bundle folders of `../shared/catalogs/packages` (10 bundles), built and
//! pushed by olmpack to a fresh local registry, and a semver template naming them.
//!
//! Run: `cargo bench --bench catalog_template` (env `BENCH_ITERS`, default 5). Under
//! `cargo test --all-targets` it runs once as a smoke test.

#[path = "../tests/support/registry.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn olmpack() -> Command {
    Command::new(env!("CARGO_BIN_EXE_olmpack"))
}

fn run(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("olmpack runs");
    let d = start.elapsed();
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let smoke = !std::env::args().any(|a| a == "--bench");
    let iters: usize = if smoke {
        1
    } else {
        std::env::var("BENCH_ITERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(5)
    };
    let pkg_dir = std::env::var_os("OLMPACK_CATALOGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/catalogs"))
        .join("packages/community-operators-prod/operators/kube-green");
    if !pkg_dir.is_dir() {
        eprintln!("SKIPPED: {} not found", pkg_dir.display());
        return;
    }
    let mut versions: Vec<String> = std::fs::read_dir(&pkg_dir)
        .expect("package folder")
        .flatten()
        .filter(|e| e.path().join("manifests").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    versions.sort_by_key(|v| {
        v.split('.')
            .map(|x| x.parse::<u64>().unwrap_or(0))
            .collect::<Vec<_>>()
    });
    let reg = support::Registry::start(support::Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let mut template = String::from("schema: olm.semver\nstable:\n  bundles:\n");
    let mut map = String::new();
    let mut refs = Vec::new();
    for v in &versions {
        let reference = reg.reference("kube-green-bundle", v);
        let folder = pkg_dir.join(v);
        run(olmpack()
            .args([
                "bundle",
                "build",
                "--no-validate",
                "--push",
                "--plain-http",
                "-t",
                &reference,
            ])
            .arg(&folder));
        template.push_str(&format!("  - image: {reference}\n"));
        map.push_str(&format!("{reference}\t{}\n", folder.display()));
        refs.push(reference);
    }
    let template_file = tmp.path().join("semver.yaml");
    std::fs::write(&template_file, template).expect("template");
    let map_file = tmp.path().join("bundles.map");
    std::fs::write(&map_file, map).expect("map");
    let cores = std::thread::available_parallelism().map_or(1, usize::from);

    let tpl = |jobs: Option<usize>, with_map: bool| {
        let mut c = olmpack();
        c.args(["catalog", "template", "-o", "yaml", "--plain-http"]);
        if let Some(j) = jobs {
            c.args(["-j", &j.to_string()]);
        }
        if with_map {
            c.arg("--bundle-map").arg(&map_file).arg("--offline");
        }
        c.arg(&template_file);
        c
    };
    let mut rows: Vec<(String, Vec<Duration>)> = vec![
        ("template, registry, -j 1".into(), vec![]),
        (format!("template, registry, -j {}", cores.max(4)), vec![]),
        ("sum of single-bundle renders (registry)".into(), vec![]),
        ("template, --bundle-map folders".into(), vec![]),
    ];
    for _ in 0..iters {
        rows[0].1.push(run(&mut tpl(Some(1), false)));
        rows[1].1.push(run(&mut tpl(Some(cores.max(4)), false)));
        let mut sum = Duration::ZERO;
        for r in &refs {
            sum += run(olmpack().args(["catalog", "render", "--plain-http", "-o", "yaml", r]));
        }
        rows[2].1.push(sum);
        rows[3].1.push(run(&mut tpl(None, true)));
    }
    println!(
        "catalog template bench: {} kube-green bundles, {iters} iteration(s), {cores} CPU(s), median wall time",
        refs.len()
    );
    for (name, times) in rows {
        println!("  {name:<45} {:>9.1} ms", median(times));
    }
}
