//! Mirror benchmark: `olmpack catalog mirror` of a catalog naming a few hundred small images
//! (default 300, `BENCH_MIRROR_IMAGES`) between two local `docker-registry`s, against
//! `skopeo copy --all` of the same image list run one after another into a third registry, in
//! the same run; then the same mirror again over the complete target (its time as a fraction
//! of the first run's, and the blobs it uploaded: none expected), once with the previous
//! results folder (images recognised as present) and once without (every blob `HEAD`ed and
//! skipped); then the peak RSS of a mirror whose one related image has a large layer (default
//! 256 MiB, `BENCH_MIRROR_LAYER_MB`), as a fraction of the layer. `BENCH_MIRROR_JOBS=2,4,8`
//! adds one first run per `-j` value (each into a namespace of its own), against the same
//! skopeo figure: how the default `-j` was chosen. `BENCH_MIRROR_OLMPACK=PATH` runs another
//! olmpack binary (before/after comparisons in the same conditions).
//!
//! Run: `cargo bench --bench mirror` (or `just bench-mirror`). Under `cargo test --all-targets`
//! it runs once on 6 images and an 8 MiB layer as a smoke test.

#[path = "../tests/support/registry.rs"]
mod support;

use olmpack::image::{Blob, BlobSource, Descriptor, Image};
use olmpack::registry::auth::ResolvedCredential;
use olmpack::registry::client::{Client, ClientOptions};
use olmpack::registry::push::{self, Progress, PushOptions};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd`, polling the child's `VmHWM`; returns wall time and peak RSS in KiB.
fn run_measured(cmd: &mut Command) -> (Duration, u64) {
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let mut err = String::new();
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = std::io::Read::read_to_string(e, &mut text);
        }
        text
    });
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kib) = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            let elapsed = start.elapsed();
            if let Ok(text) = reader.join() {
                err = text;
            }
            assert!(status.success(), "{cmd:?} failed: {err}");
            return (elapsed, peak);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn silent() -> PushOptions {
    PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    }
}

fn desc(b: &Blob) -> serde_json::Value {
    serde_json::json!({"mediaType": b.descriptor.media_type, "digest": b.descriptor.digest, "size": b.descriptor.size})
}

fn image_of(layers: Vec<Blob>, n: usize) -> Image {
    let config = Blob::memory(
        "application/vnd.oci.image.config.v1+json",
        serde_json::to_vec(&serde_json::json!({"architecture": "amd64", "os": "linux", "config": {"Labels": {"n": n.to_string()}}, "rootfs": {"type": "layers", "diff_ids": []}})).expect("json"),
    );
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": desc(&config),
        "layers": layers.iter().map(desc).collect::<Vec<_>>(),
    });
    Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers,
    }
}

/// A small image: one layer shared by all, one of its own (~4 KiB).
fn small_image(n: usize, shared: &Blob) -> Image {
    let files: Vec<(String, Vec<u8>)> = vec![(
        format!("data/{n}.bin"),
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(n as u32 * 7919) >> 13) as u8)
            .collect(),
    )];
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_slice()))
        .collect();
    let own = Blob::memory(
        "application/vnd.oci.image.layer.v1.tar+gzip",
        support::gzip_tar(&refs),
    );
    image_of(vec![shared.clone(), own], n)
}

fn big_layer(dir: &Path, mb: usize) -> Blob {
    let path = dir.join("layer");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let mut hasher = Sha256::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut buf = vec![0u8; 1 << 16];
    for _ in 0..(mb << 4) {
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = (x >> 24) as u8;
        }
        file.write_all(&buf).expect("write");
        hasher.update(&buf);
    }
    file.flush().expect("flush");
    Blob {
        descriptor: Descriptor {
            media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
            digest: format!("sha256:{}", support::hex(&hasher.finalize())),
            size: (mb as u64) << 20,
        },
        source: BlobSource::File(path),
    }
}

/// A catalog folder: one package, one bundle (`bundle`), naming `related`.
fn catalog(dir: &Path, bundle: &str, related: &[String]) {
    let pkg = dir.join("bench");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    let rel: Vec<serde_json::Value> = related
        .iter()
        .enumerate()
        .map(|(i, r)| serde_json::json!({"name": format!("r{i}"), "image": r}))
        .collect();
    let blobs = [
        serde_json::json!({"schema": "olm.package", "name": "bench", "defaultChannel": "stable"}),
        serde_json::json!({"schema": "olm.channel", "package": "bench", "name": "stable", "entries": [{"name": "bench.v1.0.0"}]}),
        serde_json::json!({"schema": "olm.bundle", "name": "bench.v1.0.0", "package": "bench", "image": bundle,
            "properties": [{"type": "olm.package", "value": {"packageName": "bench", "version": "1.0.0"}}],
            "relatedImages": rel}),
    ];
    let text: String = blobs
        .iter()
        .map(|b| serde_json::to_string(b).expect("json") + "\n")
        .collect();
    std::fs::write(pkg.join("catalog.json"), text).expect("write");
}

fn report_summary(dir: &Path) -> serde_json::Value {
    let bytes = std::fs::read(dir.join("report.json")).expect("report");
    let v: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    v["summary"].clone()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let benching = std::env::args().any(|a| a == "--bench");
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (count, mb) = if benching {
        (
            env("BENCH_MIRROR_IMAGES", 300),
            env("BENCH_MIRROR_LAYER_MB", 256),
        )
    } else {
        (6, 8)
    };
    // `BENCH_MIRROR_OLMPACK=PATH` runs another olmpack binary (an earlier build, to compare
    // before and after in the same conditions).
    let olmpack_path = std::env::var("BENCH_MIRROR_OLMPACK")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_olmpack").into());
    let olmpack = olmpack_path.as_str();
    let src = support::Registry::start(support::Mode::Plain);
    let dst = support::Registry::start(support::Mode::Plain);
    let dst_skopeo = support::Registry::start(support::Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let w = work.path();
    let client = Client::new(
        &src.host,
        ResolvedCredential::anonymous(),
        &ClientOptions::default(),
    )
    .expect("client");
    let shared = Blob::memory(
        "application/vnd.oci.image.layer.v1.tar+gzip",
        support::gzip_tar(&[("etc/os-release", b"ID=bench\n")]),
    );
    let mut list = Vec::new();
    for n in 0..count {
        let repo = format!("apps/app{n:04}");
        push::push_image(
            &client,
            &small_image(n, &shared),
            &repo,
            &["v1".into()],
            &silent(),
        )
        .expect("seed");
        list.push(src.reference(&repo, "v1"));
    }
    let bundle_ref = src.reference("bundles/bench", "v1.0.0");
    push::push_image(
        &client,
        &small_image(count + 1, &shared),
        "bundles/bench",
        &["v1.0.0".into()],
        &silent(),
    )
    .expect("seed bundle");
    let cat_dir = w.join("catalog");
    catalog(&cat_dir, &bundle_ref, &list);
    let catalog_ref = src.reference("olm/bench-catalog", "v1");
    let out = Command::new(olmpack)
        .args(["catalog", "build", "--push", "-t", &catalog_ref, "--output"])
        .arg(format!("oci:{}", w.join("catimg").display()))
        .arg(&cat_dir)
        .output()
        .expect("catalog build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    list.push(bundle_ref.clone());
    list.push(catalog_ref.clone());
    let images = list.len();

    let to = format!("{}/mirror", dst.host);
    let results = w.join("results");
    let mirror = |results: &Path| {
        let mut c = Command::new(olmpack);
        c.args([
            "catalog",
            "mirror",
            &catalog_ref,
            "--to",
            &to,
            "--results-dir",
        ])
        .arg(results);
        c
    };
    let (first, first_rss) = run_measured(&mut mirror(&results));
    let s1 = report_summary(&results);
    let start = Instant::now();
    for r in &list {
        let path = r.split_once('/').map_or(r.as_str(), |(_, p)| p);
        run_measured(Command::new("skopeo").args([
            "copy",
            "--all",
            "--quiet",
            "--src-tls-verify=false",
            "--dest-tls-verify=false",
            &format!("docker://{r}"),
            &format!("docker://{}/mirror/{path}", dst_skopeo.host),
        ]));
    }
    let skopeo = start.elapsed();
    let jobs: Vec<usize> = std::env::var("BENCH_MIRROR_JOBS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|j| j.trim().parse().ok())
        .filter(|j| *j > 0)
        .collect();
    let mut by_jobs = Vec::new();
    for j in &jobs {
        let (t, _) = run_measured(
            Command::new(olmpack)
                .args(["catalog", "mirror", &catalog_ref, "--to"])
                .arg(format!("{}/mirror-j{j}", dst.host))
                .args(["-j", &j.to_string(), "--results-dir"])
                .arg(w.join(format!("results-j{j}"))),
        );
        by_jobs.push((*j, t));
    }
    let (again, _) = run_measured(&mut mirror(&results));
    let s2 = report_summary(&results);
    let fresh = w.join("results-fresh");
    let (again_fresh, _) = run_measured(&mut mirror(&fresh));
    let s3 = report_summary(&fresh);

    // Memory: a catalog whose one related image has a large layer.
    let big = image_of(vec![big_layer(w, mb)], 0);
    push::push_image(&client, &big, "apps/big", &["v1".into()], &silent()).expect("seed big");
    let big_cat = w.join("big-catalog");
    catalog(&big_cat, &bundle_ref, &[src.reference("apps/big", "v1")]);
    let (big_time, big_rss) = run_measured(
        Command::new(olmpack)
            .args(["catalog", "mirror"])
            .arg(&big_cat)
            .args(["--to", &format!("{}/big", dst.host), "--results-dir"])
            .arg(w.join("results-big")),
    );

    let secs = |d: Duration| d.as_secs_f64();
    println!(
        "catalog mirror of {images} images ({count} small related images, a bundle, the catalog), loopback registries, {} cores",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!(
        "olmpack first run        {:>8.2} s  (peak RSS {:.1} MiB; blobs copied {}, skipped {})",
        secs(first),
        first_rss as f64 / 1024.0,
        s1["blobs_copied"],
        s1["blobs_skipped"]
    );
    println!(
        "skopeo copy --all, one after another {:>8.2} s  -> olmpack is {:.1}x faster",
        secs(skopeo),
        secs(skopeo) / secs(first)
    );
    for (j, t) in &by_jobs {
        println!(
            "olmpack first run, -j {j:<2}       {:>8.2} s  -> {:.1}x faster than skopeo",
            secs(*t),
            secs(skopeo) / secs(*t)
        );
    }
    println!(
        "olmpack second run (results kept)   {:>8.2} s  = {:.1}% of the first; blobs uploaded {}, images present {}",
        secs(again),
        100.0 * secs(again) / secs(first),
        s2["blobs_copied"],
        s2["present"]
    );
    println!(
        "olmpack second run (no results)     {:>8.2} s  = {:.1}% of the first; blobs uploaded {}, skipped {}",
        secs(again_fresh),
        100.0 * secs(again_fresh) / secs(first),
        s3["blobs_copied"],
        s3["blobs_skipped"]
    );
    println!(
        "olmpack mirror with a {mb} MiB layer {:>8.2} s  peak RSS {:.1} MiB = {:.3} of the layer",
        secs(big_time),
        big_rss as f64 / 1024.0,
        big_rss as f64 / 1024.0 / mb as f64
    );
}
