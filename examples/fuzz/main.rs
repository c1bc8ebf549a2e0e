//! `just fuzz`: damages real bundle, catalog and template files in many ways and runs every
//! entry point on them, in-process, on every core. Prints the seed first (so a run can be replayed), progress, then
//! cases, cases per second and the panics found, each with the command that replays it and the
//! damaged file saved under `target/fuzz-crashes/`. Exit status 1 when anything panicked.
//!
//! Arguments (flags or `KEY=VALUE`, so `just fuzz SEED=123` works):
//! `SEED=N` (default: from the clock), `CASES=N` (default 200000), `CASE=N` (replay one case and
//! print what it did), `JOBS=N` (default: every core), `CORPUS=DIR` (default `../shared/corpus`,
//! whose sibling `catalogs/` gives the real catalogs and templates; `CORPUS=none` uses testdata
//! only), `MAX_BUNDLE_KB=N` (largest source bundle, catalog folder or template, default 100).

#[path = "harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

fn arg(args: &[String], key: &str) -> Option<String> {
    let lower = format!("--{}", key.to_lowercase().replace('_', "-"));
    for (i, a) in args.iter().enumerate() {
        if let Some(v) = a.strip_prefix(&format!("{key}=")) {
            return Some(v.to_string());
        }
        if let Some(v) = a.strip_prefix(&format!("{lower}=")) {
            return Some(v.to_string());
        }
        if a == &lower {
            return args.get(i + 1).cloned();
        }
    }
    None
}

fn number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn main() {
    // Images read back are unpacked into temporary folders: thousands a minute. On a disk file
    // system (an overlay in containers) that slows every case down as the run goes on (1,067 to
    // 939 cases/s over 100,000 cases, against a steady 1,347 on tmpfs), so use tmpfs unless the
    // user chose a folder.
    if std::env::var_os("TMPDIR").is_none() && Path::new("/dev/shm").is_dir() {
        // SAFETY: no other thread exists yet, so nothing reads the environment concurrently.
        unsafe { std::env::set_var("TMPDIR", "/dev/shm") };
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let seed = arg(&args, "SEED")
        .and_then(|s| number(&s))
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let cases = arg(&args, "CASES")
        .and_then(|s| number(&s))
        .unwrap_or(200_000);
    let jobs = arg(&args, "JOBS")
        .and_then(|s| number(&s))
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let max_kb = arg(&args, "MAX_BUNDLE_KB")
        .and_then(|s| number(&s))
        .unwrap_or(100);
    let corpus = match arg(&args, "CORPUS") {
        Some(c) if c == "none" => None,
        Some(c) => Some(PathBuf::from(c)),
        None => std::env::var_os("OLMPACK_CORPUS")
            .map(PathBuf::from)
            .or_else(|| Some(repo.join("../shared/corpus"))),
    }
    .filter(|c| c.is_dir());
    let sources = harness::sources(&repo, corpus.as_deref(), max_kb as usize * 1024);
    if sources.is_empty() {
        eprintln!(
            "no source bundles found under {}",
            repo.join("testdata").display()
        );
        std::process::exit(2);
    }
    let count = |kind| sources.iter().filter(|s| s.kind == kind).count();
    println!(
        "fuzz: seed {seed} (replay: just fuzz SEED={seed}), {} sources: {} bundles, {} catalogs, {} templates ({}), {jobs} threads",
        sources.len(),
        count(harness::Kind::Bundle),
        count(harness::Kind::Catalog),
        count(harness::Kind::Template),
        corpus
            .as_deref()
            .map_or("testdata only".to_string(), |c| format!(
                "testdata + {}",
                c.display()
            ))
    );

    if let Some(case) = arg(&args, "CASE").and_then(|s| number(&s)) {
        let mut ws = harness::Workspace::new().expect("create a work folder");
        let outcome =
            harness::run_case(&mut ws, &sources, seed, case, None).expect("write the case");
        println!(
            "case {case}: {} / {} damaged by {:?} ({} bytes)",
            sources[outcome.source].root.display(),
            outcome.file.display(),
            outcome.mutations,
            outcome.damaged.len()
        );
        let dir = save(&repo, seed, case, &outcome);
        println!("damaged file saved to {}", dir.display());
        for crash in &outcome.crashes {
            println!("PANIC in {}: {}", crash.stage, crash.message);
        }
        println!("panics: {}", outcome.crashes.len());
        std::process::exit(i32::from(!outcome.crashes.is_empty()));
    }

    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let found: Mutex<Vec<(u64, harness::Outcome)>> = Mutex::new(Vec::new());
    let slowest: Mutex<(f64, u64, Vec<&'static str>)> = Mutex::new((0.0, 0, Vec::new()));
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let Ok(mut ws) = harness::Workspace::new() else {
                    eprintln!("cannot create a work folder");
                    return;
                };
                let mut last: Option<PathBuf> = None;
                loop {
                    // Workers take whole batches, so a source bundle's copy is reused.
                    let batch = next.fetch_add(1, Ordering::Relaxed);
                    let first = batch * harness::BATCH;
                    if first >= cases {
                        break;
                    }
                    for case in first..(first + harness::BATCH).min(cases) {
                        let began = Instant::now();
                        match harness::run_case(&mut ws, &sources, seed, case, last.as_deref()) {
                            Ok(outcome) => {
                                let took = began.elapsed().as_secs_f64();
                                let mut slow = slowest.lock().unwrap_or_else(|e| e.into_inner());
                                if took > slow.0 {
                                    *slow = (took, case, outcome.mutations.clone());
                                }
                                drop(slow);
                                last = Some(outcome.file.clone());
                                if !outcome.crashes.is_empty() {
                                    let mut found = found.lock().unwrap_or_else(|e| e.into_inner());
                                    found.push((case, outcome));
                                }
                            }
                            Err(e) => eprintln!("case {case}: cannot write the bundle: {e}"),
                        }
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if n.is_multiple_of(20_000) {
                            let secs = start.elapsed().as_secs_f64();
                            println!("  {n} cases, {:.0} cases/s", n as f64 / secs);
                        }
                    }
                }
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    found.sort_by_key(|(case, _)| *case);
    for (case, outcome) in &found {
        let dir = save(&repo, seed, *case, outcome);
        for crash in &outcome.crashes {
            println!(
                "PANIC case {case} in {}: {} ({} / {} damaged by {:?}); replay: just fuzz SEED={seed} CASE={case}; saved in {}",
                crash.stage,
                crash.message,
                sources[outcome.source].root.display(),
                outcome.file.display(),
                outcome.mutations,
                dir.display()
            );
        }
    }
    let slow = slowest.into_inner().unwrap_or_else(|e| e.into_inner());
    println!("slowest case: {} ({:.2} s, {:?})", slow.1, slow.0, slow.2);
    let panics: usize = found.iter().map(|(_, o)| o.crashes.len()).sum();
    println!(
        "cases: {cases}, seed: {seed}, {:.1} s, {:.0} cases/s, panics: {panics} (in {} cases)",
        secs,
        cases as f64 / secs,
        found.len()
    );
    std::process::exit(i32::from(panics > 0));
}

/// Saves the damaged file where a regression case can be made from it.
fn save(repo: &Path, seed: u64, case: u64, outcome: &harness::Outcome) -> PathBuf {
    let dir = repo
        .join("target/fuzz-crashes")
        .join(format!("seed-{seed}-case-{case}"));
    let name = outcome
        .file
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_os_string());
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(name), &outcome.damaged);
    }
    dir
}
