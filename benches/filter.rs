//! `olmpack catalog filter` and `catalog diff` against catalog-filter's figures
//! (`../shared/filter/TIMES.tsv`): the release binary run as a user runs it, one process per
//! case, wall time and peak RSS (polled from /proc) per run.
//!
//! - five-fold: every 4.18 catalog of `../shared/catalogs/fbc` copied five times under other
//!   package names (as `just bench-serve` builds it), 20 packages filtered to their heads; the
//!   reference takes 1.16 s and 180 MiB there (its 63 readable catalogs x5, 82 MB);
//! - every shared case (`../shared/filter/cases`): summed wall time against the summed
//!   reference times;
//! - diff: the five-fold catalog against a copy with one bundle in ten removed.
//!
//! Run with `just bench-filter`; figures are printed, never asserted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn shared() -> PathBuf {
    std::env::var_os("OLMPACK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// The packages a catalog file's blobs belong to (top-level `package:` keys of the YAML).
fn package_names(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("package: "))
        .map(|p| p.trim().to_string())
        .collect()
}

/// The shared 4.18 catalogs, `copies` times, packages renamed in copies 1.. (as the serve
/// bench builds it). Returns the package names and the bytes written.
fn build_catalog(fbc: &Path, out: &Path, copies: usize) -> (Vec<String>, u64) {
    let mut bytes = 0;
    let mut seen = std::collections::BTreeSet::new();
    let mut sources = Vec::new();
    for repo in ["community-operators-prod", "certified-operators"] {
        let dir = fbc.join(repo).join("catalogs/v4.18");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let text =
                std::fs::read_to_string(dir.join(&name).join("catalog.yaml")).unwrap_or_default();
            let (name, text) = if seen.insert(name.clone()) {
                (name, text)
            } else {
                let mut text = text;
                for pkg in package_names(&text) {
                    text = text.replace(&pkg, &format!("{pkg}-certified"));
                }
                (format!("{name}-certified"), text)
            };
            sources.push((name, text));
        }
    }
    let mut packages = Vec::new();
    for n in 0..copies {
        for (name, text) in &sources {
            let (dir_name, text) = if n == 0 {
                (name.clone(), text.clone())
            } else {
                let mut text = text.clone();
                for pkg in package_names(&text) {
                    text = text.replace(&pkg, &format!("{pkg}-copy{n}"));
                }
                (format!("{name}-copy{n}"), text)
            };
            packages.extend(package_names(&text));
            let dir = out.join(&dir_name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("catalog.yaml"), &text).unwrap();
            bytes += text.len() as u64;
        }
    }
    packages.sort();
    (packages, bytes)
}

fn status_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Runs `bin args`, returns wall time, peak RSS (KiB, polled) and the exit code.
fn run(bin: &Path, args: &[&std::ffi::OsStr]) -> (Duration, u64, Option<i32>) {
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start olmpack");
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        peak = peak.max(status_kib(pid));
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    (start.elapsed(), peak, status.code())
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_olmpack"));
    let shared = shared();
    let fbc = shared.join("catalogs/fbc");
    if !fbc.is_dir() {
        eprintln!(
            "SKIPPED: no catalogs at {} (set OLMPACK_SHARED)",
            fbc.display()
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let five = tmp.path().join("five");
    let (packages, bytes) = build_catalog(&fbc, &five, 5);
    // 20 packages spread over the catalog.
    let step = (packages.len() / 20).max(1);
    let chosen: Vec<&String> = packages.iter().step_by(step).take(20).collect();
    let mut config = String::from(
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n",
    );
    for p in &chosen {
        config.push_str(&format!("  - name: {p}\n"));
    }
    let cfg = tmp.path().join("twenty.yaml");
    std::fs::write(&cfg, config).unwrap();
    let mut walls = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..3 {
        let (wall, peak, code) = run(
            &bin,
            &[
                "catalog".as_ref(),
                "filter".as_ref(),
                five.as_os_str(),
                "--config".as_ref(),
                cfg.as_os_str(),
                // The job catalog-filter does (its figures are the reference): no closure.
                "--no-dependencies".as_ref(),
            ],
        );
        assert_eq!(
            code,
            Some(0),
            "catalog filter failed on the five-fold catalog"
        );
        walls.push(wall.as_secs_f64());
        peaks.push(peak);
    }
    walls.sort_by(f64::total_cmp);
    let wall = walls[1];
    let peak = peaks.iter().copied().max().unwrap_or(0) as f64 / 1024.0;
    println!(
        "filter five-fold ({} packages, {:.0} MB YAML), 20 packages (heads): {:.3} s wall (median of 3), {:.0} MiB peak RSS; reference 1.16 s, 180 MiB: {:.1}x faster, {:.2}x its memory",
        packages.len(),
        bytes as f64 / 1e6,
        wall,
        peak,
        1.16 / wall,
        peak / 180.0
    );

    // Every shared case, one process each.
    let cases_dir = shared.join("filter/cases");
    let times = std::fs::read_to_string(shared.join("filter/TIMES.tsv")).unwrap_or_default();
    let reference: std::collections::HashMap<&str, f64> = times
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?, f.next()?.parse().ok()?))
        })
        .collect();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    let (mut ours, mut theirs, mut n) = (0.0, 0.0, 0);
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let Some(ref_ms) = reference.get(name.as_str()) else {
            continue;
        };
        let catalog = shared.join(
            std::fs::read_to_string(case.join("catalog.txt"))
                .unwrap_or_default()
                .trim(),
        );
        let cfg = case.join("config.yaml");
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "catalog".as_ref(),
            "filter".as_ref(),
            catalog.as_os_str(),
            "--config".as_ref(),
            cfg.as_os_str(),
            "--no-dependencies".as_ref(),
        ];
        let full = std::fs::read_to_string(case.join("args.txt")).unwrap_or_default();
        if full.contains("--full") {
            args.push("--full".as_ref());
        }
        let (wall, _, _) = run(&bin, &args);
        ours += wall.as_secs_f64() * 1000.0;
        theirs += ref_ms;
        n += 1;
    }
    if n > 0 {
        println!(
            "filter, {n} shared cases (one process each): {ours:.0} ms in all, reference {theirs:.0} ms: {:.1}x faster",
            theirs / ours
        );
    }

    // Diff: the five-fold catalog against a copy with one bundle entry in ten dropped.
    let changed = tmp.path().join("changed");
    let mut dropped = 0;
    for entry in std::fs::read_dir(&five).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path().join("catalog.yaml")).unwrap();
        let docs: Vec<&str> = text.split("\n---\n").collect();
        let mut kept = Vec::new();
        for (i, d) in docs.iter().enumerate() {
            if d.contains("schema: olm.bundle") && i % 10 == 3 {
                dropped += 1;
                continue;
            }
            kept.push(*d);
        }
        let dir = changed.join(entry.file_name());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("catalog.yaml"), kept.join("\n---\n")).unwrap();
    }
    let (wall, peak, code) = run(
        &bin,
        &[
            "catalog".as_ref(),
            "diff".as_ref(),
            five.as_os_str(),
            changed.as_os_str(),
            "-o".as_ref(),
            "json".as_ref(),
        ],
    );
    println!(
        "diff five-fold vs {dropped} bundles dropped ({} packages each side): {:.2} s wall, {:.0} MiB peak RSS (exit {code:?}); goal: two versions of 809 packages under 10 s, so about {:.1} s scaled to 809",
        packages.len(),
        wall.as_secs_f64(),
        peak as f64 / 1024.0,
        wall.as_secs_f64() * 809.0 / packages.len() as f64
    );
}
