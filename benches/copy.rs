//! Copy benchmark: `olmpack copy` of a one-layer image whose layer is large (default 256 MiB,
//! `BENCH_LAYER_MB`), between two local `docker-registry`s and into an OCI layout, against
//! `skopeo copy` of the same image in the same run. Reports wall time, throughput and the peak
//! resident memory of each process: the point is that olmpack's memory does not grow with the
//! layer (the layer is streamed through a spool file, never held whole), so its peak RSS is
//! printed as a fraction of the layer size, and as a ratio to skopeo's.
//!
//! Run: `cargo bench --bench copy` (or `just bench-copy`). Under `cargo test --all-targets` it
//! runs once on an 8 MiB layer as a smoke test.

#[path = "../tests/support/registry.rs"]
mod support;

use olmpack::image::{Blob, BlobSource, Descriptor, Image};
use olmpack::registry::auth::ResolvedCredential;
use olmpack::registry::client::{Client, ClientOptions};
use olmpack::registry::push::{self, Progress, PushOptions};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd`, polling the child's `VmHWM` (a high-water mark, so the last reading before it
/// exits is its peak); returns wall time and peak RSS in KiB.
fn run_measured(cmd: &mut Command) -> (Duration, u64) {
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
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
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            assert!(status.success(), "{cmd:?} failed: {err}");
            return (elapsed, peak);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let benching = std::env::args().any(|a| a == "--bench");
    let mb: usize = if benching {
        std::env::var("BENCH_LAYER_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256)
    } else {
        8
    };
    let src = support::Registry::start(support::Mode::Plain);
    let dst = support::Registry::start(support::Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let path = work.path().join("layer");
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
    drop(file);
    let layer = Blob {
        descriptor: Descriptor {
            media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
            digest: format!("sha256:{}", support::hex(&hasher.finalize())),
            size: (mb as u64) << 20,
        },
        source: BlobSource::File(path),
    };
    let config = Blob::memory("application/vnd.oci.image.config.v1+json", b"{}".to_vec());
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config.descriptor.media_type, "digest": config.descriptor.digest, "size": config.descriptor.size},
        "layers": [{"mediaType": layer.descriptor.media_type, "digest": layer.descriptor.digest, "size": layer.descriptor.size}],
    });
    let image = Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers: vec![layer],
    };
    let client = Client::new(
        &src.host,
        ResolvedCredential::anonymous(),
        &ClientOptions::default(),
    )
    .expect("client");
    let silent = PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    };
    push::push_image(&client, &image, "bench/big", &["v1".into()], &silent).expect("seed");
    let from = src.reference("bench/big", "v1");
    let olmpack = env!("CARGO_BIN_EXE_olmpack");

    let (o_reg, o_reg_rss) = run_measured(Command::new(olmpack).args([
        "copy",
        &from,
        &dst.reference("olmpack/big", "v1"),
    ]));
    let layout = work.path().join("layout");
    let (o_oci, o_oci_rss) = run_measured(Command::new(olmpack).args([
        "copy",
        &from,
        &format!("oci:{}:v1", layout.display()),
    ]));
    let (s_reg, s_reg_rss) = run_measured(Command::new("skopeo").args([
        "copy",
        "--quiet",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        &format!("docker://{from}"),
        &format!("docker://{}", dst.reference("skopeo/big", "v1")),
    ]));
    let skopeo_layout = work.path().join("skopeo-layout");
    let (s_oci, s_oci_rss) = run_measured(Command::new("skopeo").args([
        "copy",
        "--quiet",
        "--src-tls-verify=false",
        &format!("docker://{from}"),
        &format!("oci:{}:v1", skopeo_layout.display()),
    ]));
    let mib = |kib: u64| kib as f64 / 1024.0;
    let rate = |d: Duration| mb as f64 / d.as_secs_f64();
    println!("copy of a one-layer image, layer {mb} MiB (incompressible), loopback registries");
    println!(
        "{:<28} {:>8} {:>9} {:>10} {:>12} {:>12}",
        "", "wall s", "MiB/s", "peak MiB", "peak/layer", "RSS/skopeo"
    );
    for (name, d, rss, reference) in [
        ("olmpack registry->registry", o_reg, o_reg_rss, s_reg_rss),
        ("skopeo  registry->registry", s_reg, s_reg_rss, s_reg_rss),
        ("olmpack registry->oci:", o_oci, o_oci_rss, s_oci_rss),
        ("skopeo  registry->oci:", s_oci, s_oci_rss, s_oci_rss),
    ] {
        println!(
            "{name:<28} {:>8.2} {:>9.1} {:>10.1} {:>12.3} {:>12.2}",
            d.as_secs_f64(),
            rate(d),
            mib(rss),
            mib(rss) / mb as f64,
            rss as f64 / reference.max(1) as f64
        );
    }
}
