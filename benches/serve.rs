//! `olmpack catalog serve` start-up and ListBundles, against opm v1.26.5's figures (SERVE.md
//! A.8: 344 packages / 141 MB, no cache: 22.4 s to SERVING, 583 MiB peak; ListBundles 3.3 s).
//! Catalogs: every folder of `../shared/catalogs/fbc` in one catalog ("combined", 67 packages;
//! the two package names both repositories use are renamed in the certified copy), and that
//! catalog plus four copies under other package names (335 packages). The release binary is
//! started as a user would start it, timed until `grpc.health.v1.Health/Check` answers SERVING,
//! its peak RSS read from /proc, then one ListBundles is streamed by a tonic client.
//! Run with `just bench-serve`; figures are printed, never asserted.

use olmpack::serve::api::ListBundlesRequest;
use olmpack::serve::api::registry_client::RegistryClient;
use prost::Message as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

fn shared() -> PathBuf {
    std::env::var_os("OLMPACK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// Copies every package folder of the shared 4.18 catalogs into `out`, `copies` times in all;
/// copy `n > 0` renames each package (and everything naming it) with a `-copyN` suffix.
fn build_catalog(fbc: &Path, out: &Path, copies: usize) -> (usize, u64) {
    let mut packages = 0;
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
            // Both repositories publish two packages under one name: rename the second.
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
    for n in 0..copies {
        for (name, text) in &sources {
            let (dir_name, text) = if n == 0 {
                (name.clone(), text.clone())
            } else {
                // Rename every package the file holds (a folder's name is not always its
                // package's), and with it every bundle and image naming it.
                let mut text = text.clone();
                for pkg in package_names(&text) {
                    text = text.replace(&pkg, &format!("{pkg}-copy{n}"));
                }
                (format!("{name}-copy{n}"), text)
            };
            let dir = out.join(&dir_name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("catalog.yaml"), &text).unwrap();
            packages += 1;
            bytes += text.len() as u64;
        }
    }
    (packages, bytes)
}

/// The packages a catalog file's blobs belong to (top-level `package:` keys of the YAML).
fn package_names(text: &str) -> std::collections::BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("package: "))
        .map(|p| p.trim().to_string())
        .collect()
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

struct Run {
    serving: Duration,
    peak_at_serving_kib: u64,
    list_secs: f64,
    list_msgs: u64,
    list_bytes: u64,
    peak_after_kib: u64,
    rss_after_kib: u64,
}

fn measure(bin: &Path, catalog: &Path, rt: &tokio::runtime::Runtime) -> Run {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(["catalog", "serve"])
        .arg(catalog)
        .args(["--addr", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start olmpack");
    let pid = child.id();
    let addr = format!("http://127.0.0.1:{port}");
    let run = rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(300);
        let serving = loop {
            if let Ok(ch) = tonic::transport::Endpoint::from_shared(addr.clone())
                .unwrap()
                .connect()
                .await
            {
                let mut h = HealthClient::new(ch);
                if let Ok(r) = h
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await
                    && r.get_ref().status == 1
                {
                    break start.elapsed();
                }
            }
            assert!(Instant::now() < deadline, "never SERVING");
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let peak_at_serving_kib = status_kib(pid, "VmHWM:");
        let ch = tonic::transport::Endpoint::from_shared(addr.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut client = RegistryClient::new(ch).max_decoding_message_size(usize::MAX);
        let t = Instant::now();
        let mut stream = client
            .list_bundles(ListBundlesRequest {})
            .await
            .unwrap()
            .into_inner();
        let (mut msgs, mut bytes) = (0u64, 0u64);
        while let Some(b) = stream.message().await.unwrap() {
            msgs += 1;
            bytes += b.encoded_len() as u64;
        }
        Run {
            serving,
            peak_at_serving_kib,
            list_secs: t.elapsed().as_secs_f64(),
            list_msgs: msgs,
            list_bytes: bytes,
            peak_after_kib: status_kib(pid, "VmHWM:"),
            rss_after_kib: status_kib(pid, "VmRSS:"),
        }
    });
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = child.wait();
    run
}

fn main() {
    let fbc = shared().join("catalogs/fbc");
    if !fbc.is_dir() {
        eprintln!("SKIPPED: {} not found", fbc.display());
        return;
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_olmpack"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // opm v1.26.5, no cache (SERVE.md A.8): (packages, MB, s to SERVING, peak MiB, ListBundles s).
    let opm = [(86, 36.0, 5.2, 178.0, 0.75), (344, 141.0, 22.4, 583.0, 3.3)];
    println!(
        "catalog                 packages   MB   SERVING   peak MiB   ListBundles (msgs, MB)        RSS after"
    );
    for (label, copies) in [("fbc combined", 1usize), ("combined + 4 copies", 5)] {
        let dir = tempfile::tempdir().unwrap();
        let (packages, bytes) = build_catalog(&fbc, dir.path(), copies);
        let mut runs: Vec<Run> = (0..3).map(|_| measure(&bin, dir.path(), &rt)).collect();
        runs.sort_by_key(|r| r.serving);
        let r = &runs[1]; // the median start
        let mb = bytes as f64 / 1e6;
        println!(
            "{label:<22} {packages:>8} {mb:>5.1} {:>8.3}s {:>9.1} {:>8.3}s ({}, {:.1})   {:>10.1} MiB",
            r.serving.as_secs_f64(),
            r.peak_at_serving_kib as f64 / 1024.0,
            r.list_secs,
            r.list_msgs,
            r.list_bytes as f64 / 1e6,
            r.rss_after_kib as f64 / 1024.0,
        );
        println!(
            "    peak RSS after ListBundles {:.1} MiB; starts (s): {}",
            r.peak_after_kib as f64 / 1024.0,
            runs.iter()
                .map(|r| format!("{:.3}", r.serving.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let (op, omb, os, omem, olist) = if packages > 200 { opm[1] } else { opm[0] };
        println!(
            "    vs opm v1.26.5 no cache at {op} packages / {omb} MB: start {:.1}x faster, peak {:.1}x smaller, ListBundles {:.1}x faster (opm {os} s, {omem} MiB, {olist} s)",
            os / r.serving.as_secs_f64(),
            omem / (r.peak_after_kib as f64 / 1024.0),
            olist / r.list_secs,
        );
    }
}
