//! `cargo bench --bench build` (the `just bench-build` recipe): how fast `bundle build` turns a
//! bundle into layers, against `tar --sort=name … | gzip -6` over the same files measured in the
//! same run, and how much memory it needs.
//!
//! Inputs: testdata/bundles/valid-basic (tiny), the largest corpus bundle (when the corpus is
//! there: `$OLMPACK_CORPUS` or `../shared/corpus`), and a synthetic 50 MB bundle of YAML-like
//! text generated into a temp dir. Each is timed as
//! - `library`: `image::build_in` (walk, tar, gzip -6, both sha256, config, manifest) into a
//!   spool folder: the step a push streams from;
//! - `cli`: the release binary end to end (`--no-validate`, OCI layout output);
//! - `tar|gzip`: `tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c manifests
//!   metadata | gzip -6 > file`, the reproducible-builds recipe (two processes: it gets the
//!   pipeline parallelism of two cores for free, olmpack runs on one thread).
//!
//! The median of N runs is reported with throughput in MB/s of uncompressed layer (tar) bytes.
//! Peak memory: each input is built once more in a child process (this binary, re-run with
//! `OLMPACK_BENCH_CHILD=<dir>`), which reports its `VmHWM` from /proc/self/status: that is the
//! builder alone and must not grow with the bundle. The CLI's peak (`/usr/bin/time -f %M`) is
//! shown too: it also loads the bundle model (`Bundle::load` keeps manifest texts for the
//! validator), which does grow with the bundle.

use olmpack::image::build::{BuildOptions, BundleInput};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    if let Some(dir) = std::env::var_os("OLMPACK_BENCH_CHILD") {
        child(Path::new(&dir));
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it:
    // then only a one-run smoke pass over the tiny bundle, so the test suite stays fast.
    let full = std::env::args().any(|a| a == "--bench");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut inputs: Vec<(String, PathBuf, usize)> = vec![(
        "valid-basic".into(),
        root.join("testdata/bundles/valid-basic"),
        20,
    )];
    if !full {
        inputs[0].2 = 1;
        run_table(&inputs, tmp.path());
        println!("(smoke run under cargo test; `cargo bench --bench build` gives the figures)");
        return;
    }
    let corpus = std::env::var_os("OLMPACK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/corpus"));
    if let Some(largest) = largest_bundle(&corpus.join("bundles")) {
        let name = format!(
            "corpus largest ({})",
            largest
                .strip_prefix(corpus.join("bundles"))
                .unwrap_or(&largest)
                .display()
        );
        inputs.push((name, largest, 7));
    } else {
        eprintln!(
            "corpus not found at {}: largest-bundle row skipped",
            corpus.display()
        );
    }
    let synthetic = tmp.path().join("synthetic-50mb");
    make_synthetic(&synthetic, 50 * 1024 * 1024);
    inputs.push(("synthetic 50 MB".into(), synthetic, 5));

    run_table(&inputs, tmp.path());
    println!(
        "(median of 20/7/5 runs; lib/tar < 1.5 is the target; lib RSS: VmHWM of a child that \
         only builds; cli RSS: /usr/bin/time max RSS of the binary, which also loads the bundle \
         model)"
    );
}

/// Times every input and prints one row each.
fn run_table(inputs: &[(String, PathBuf, usize)], tmp: &Path) {
    println!(
        "{:<52} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>11} {:>11}",
        "bundle",
        "tar MB",
        "library",
        "cli",
        "tar|gzip",
        "lib MB/s",
        "lib/tar",
        "lib RSS",
        "cli RSS"
    );
    for (name, dir, runs) in inputs {
        let spool = tmp.join("spool");
        let (lib, tar_bytes) = median(*runs, || {
            let _ = fs::remove_dir_all(&spool);
            fs::create_dir_all(&spool).unwrap();
            let start = Instant::now();
            let input = bundle_input(dir);
            let (image, _) =
                olmpack::image::build_in(&input, &BuildOptions::default(), &spool).expect("build");
            let took = start.elapsed();
            let _ = image;
            (took, layer_tar_bytes(&spool))
        });
        let out = tmp.join("cli-out");
        let (cli, _) = median(*runs, || {
            let _ = fs::remove_dir_all(&out);
            let start = Instant::now();
            let status = Command::new(env!("CARGO_BIN_EXE_olmpack"))
                .args(["bundle", "build", "--no-validate", "--output"])
                .arg(format!("oci:{}", out.display()))
                .arg(dir)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .expect("olmpack runs");
            assert!(status.success());
            (start.elapsed(), 0)
        });
        let gz = tmp.join("ref.tar.gz");
        let (tar, _) = median(*runs, || {
            let start = Instant::now();
            let status = Command::new("sh")
                .arg("-c")
                .arg(
                    "tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c \
                     manifests metadata | gzip -6 > \"$1\"",
                )
                .arg("sh")
                .arg(&gz)
                .current_dir(dir)
                .status()
                .expect("sh runs");
            assert!(status.success());
            (start.elapsed(), 0)
        });
        let peak = child_peak_kib(dir);
        let cli_peak = cli_peak_kib(dir, &out);
        let mb = tar_bytes as f64 / 1e6;
        println!(
            "{:<52} {:>10.2} {:>8.1}ms {:>8.1}ms {:>7.1}ms {:>9.1} {:>7.2}x {:>7} KiB {:>7} KiB",
            name,
            mb,
            ms(lib),
            ms(cli),
            ms(tar),
            mb / lib.as_secs_f64(),
            lib.as_secs_f64() / tar.as_secs_f64(),
            peak.map_or("?".into(), |k| k.to_string()),
            cli_peak.map_or("?".into(), |k| k.to_string()),
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `f` `runs` times and returns the median duration and the last value.
fn median(runs: usize, mut f: impl FnMut() -> (Duration, u64)) -> (Duration, u64) {
    let mut times = Vec::with_capacity(runs);
    let mut last = 0;
    for _ in 0..runs {
        let (t, v) = f();
        times.push(t);
        last = v;
    }
    times.sort();
    (times[times.len() / 2], last)
}

/// Sum of the uncompressed sizes of the layers in `spool` (decompressed after timing).
fn layer_tar_bytes(spool: &Path) -> u64 {
    let mut total = 0;
    for e in fs::read_dir(spool).unwrap() {
        let file = fs::File::open(e.unwrap().path()).unwrap();
        total += std::io::copy(
            &mut flate2::read::GzDecoder::new(file),
            &mut std::io::sink(),
        )
        .unwrap();
    }
    total
}

/// The library input for a bundle folder: annotations read with a minimal flat reader (the
/// benchmark measures packaging, not YAML parsing).
fn bundle_input(dir: &Path) -> BundleInput {
    let mut ann = BTreeMap::new();
    if let Ok(text) = fs::read_to_string(dir.join("metadata/annotations.yaml")) {
        for line in text.lines().filter(|l| l.starts_with("  ")) {
            if let Some((k, v)) = line.trim().split_once(':') {
                ann.insert(k.trim().to_string(), v.trim().trim_matches('"').to_string());
            }
        }
    }
    BundleInput::from_annotations(dir, ann).expect("bundle folders")
}

fn child(dir: &Path) {
    let spool = tempfile::tempdir().unwrap();
    olmpack::image::build_in(&bundle_input(dir), &BuildOptions::default(), spool.path())
        .expect("build");
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or("VmHWM: 0 kB");
    println!("{}", hwm.split_whitespace().nth(1).unwrap_or("0"));
}

fn child_peak_kib(dir: &Path) -> Option<u64> {
    let out = Command::new(std::env::current_exe().ok()?)
        .env("OLMPACK_BENCH_CHILD", dir)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Peak RSS of the CLI (`--no-validate`, OCI layout) from `/usr/bin/time -f %M`, when present.
fn cli_peak_kib(dir: &Path, out: &Path) -> Option<u64> {
    let _ = fs::remove_dir_all(out);
    let result = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_olmpack"))
        .args(["bundle", "build", "--no-validate", "--output"])
        .arg(format!("oci:{}", out.display()))
        .arg(dir)
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&result.stderr);
    stderr.lines().last()?.trim().parse().ok()
}

fn largest_bundle(bundles: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    for pkg in fs::read_dir(bundles).ok()? {
        for ver in fs::read_dir(pkg.ok()?.path()).ok()? {
            let dir = ver.ok()?.path();
            if !dir.join("manifests").is_dir() {
                continue;
            }
            let size = tree_size(&dir.join("manifests")) + tree_size(&dir.join("metadata"));
            if best.as_ref().is_none_or(|(s, _)| size > *s) {
                best = Some((size, dir));
            }
        }
    }
    best.map(|(_, d)| d)
}

fn tree_size(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                tree_size(&p)
            } else {
                fs::metadata(&p).map_or(0, |m| m.len())
            }
        })
        .sum()
}

/// A bundle of `total` bytes of YAML-like text (words from a small vocabulary picked by a
/// fixed xorshift generator, so it compresses about as well as real manifests do), in 100 KB
/// files, plus an annotations.yaml.
fn make_synthetic(dir: &Path, total: usize) {
    const WORDS: &[&str] = &[
        "apiVersion:",
        "kind:",
        "metadata:",
        "name:",
        "namespace:",
        "spec:",
        "properties:",
        "type: string",
        "type: object",
        "description:",
        "x-kubernetes-preserve-unknown-fields",
        "containers",
        "image:",
        "quay.io/example/operator",
        "v1beta1",
        "openAPIV3Schema",
        "required:",
        "- name",
        "items:",
        "format: int64",
        "enum:",
        "default:",
        "true",
        "false",
    ];
    fs::create_dir_all(dir.join("manifests")).unwrap();
    fs::create_dir_all(dir.join("metadata")).unwrap();
    fs::write(
        dir.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  \
         operators.operatorframework.io.bundle.manifests.v1: manifests/\n  \
         operators.operatorframework.io.bundle.metadata.v1: metadata/\n  \
         operators.operatorframework.io.bundle.package.v1: synthetic\n",
    )
    .unwrap();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let per_file = 100 * 1024;
    for i in 0..total.div_ceil(per_file) {
        let mut text = String::with_capacity(per_file + 64);
        while text.len() < per_file {
            let r = next();
            let indent = (r % 8) as usize * 2;
            text.push_str(&" ".repeat(indent));
            text.push_str(WORDS[(r >> 8) as usize % WORDS.len()]);
            text.push(' ');
            text.push_str(WORDS[(r >> 20) as usize % WORDS.len()]);
            text.push_str(&format!(" {}\n", (r >> 32) % 100_000));
        }
        let mut f = fs::File::create(dir.join(format!("manifests/object-{i:04}.yaml"))).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }
}
