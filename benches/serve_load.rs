//! `olmpack catalog serve` under load: 32 gRPC clients (Python grpcio, `tests/support/serve_client.py
//! load`, a client olmpack did not write) streaming ListBundles and calling GetBundle for 15 s
//! against the largest shared catalog (`certified-operators/cloud-native-postgresql`, 6 MB of
//! bundles with CSV metadata). Prints calls per second, failures and the server's peak RSS, as a
//! ratio to its RSS with one client (the same run's first seconds are not separable, so a second
//! short run with one client is the reference) and to opm v1.26.5's RSS after queries on 86
//! packages (SERVE.md A.8: 65 MiB). Moved out of the test suite (issue 34 item 5): the suite
//! keeps the correctness half (no failed call under 32 clients); speed and memory are figures.
//! Run with `just bench-serve-load`; `CLIENTS=N SECONDS=S` change the load. Figures are printed,
//! never asserted.

use std::path::PathBuf;
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";
/// opm v1.26.5's RSS after queries on the 86-package catalog (SERVE.md A.8).
const OPM_RSS_AFTER_QUERIES_MIB: f64 = 65.0;

fn catalogs() -> PathBuf {
    std::env::var_os("OLMPACK_CATALOGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/catalogs"))
}

fn load(folder: &std::path::Path, clients: usize, seconds: f64) -> serde_json::Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(PYTHON)
        .arg(root.join("tests/support/serve_client.py"))
        .arg("load")
        .arg(env!("CARGO_BIN_EXE_olmpack"))
        .arg(folder)
        .arg(root.join("proto/registry.proto"))
        .arg(clients.to_string())
        .arg(seconds.to_string())
        .output()
        .expect("run the Python client");
    assert!(
        out.status.success(),
        "load client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the client prints JSON")
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // and the suite has the correctness half already (tests/cli/catalog_serve.rs).
    if !std::env::args().any(|a| a == "--bench") {
        println!("serve_load: run with `cargo bench --bench serve_load` (just bench-serve-load)");
        return;
    }
    let folder = catalogs().join("fbc/certified-operators/catalogs/v4.18/cloud-native-postgresql");
    if !folder.is_dir() {
        println!(
            "SKIPPED: {} not found (set OLMPACK_CATALOGS)",
            folder.display()
        );
        return;
    }
    let ready = Command::new(PYTHON)
        .args(["-c", "import grpc, grpc_tools"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        println!("SKIPPED: {PYTHON} lacks grpc/grpc_tools (python3-grpcio python3-grpc-tools)");
        return;
    }
    let clients: usize = std::env::var("CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let seconds: f64 = std::env::var("SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15.0);
    let one = load(&folder, 1, 3.0);
    let many = load(&folder, clients, seconds);
    let mib = |v: &serde_json::Value| v["peakRssKiB"].as_f64().unwrap_or(0.0) / 1024.0;
    let per_s = |v: &serde_json::Value, k: &str| {
        v[k].as_f64().unwrap_or(0.0) / v["seconds"].as_f64().unwrap_or(1.0)
    };
    println!(
        "catalog serve load, {} ({} bundles):",
        folder.display(),
        many["bundles"]
    );
    println!(
        "  1 client, 3 s:        {:8.1} ListBundles/s {:8.1} GetBundle/s, peak RSS {:6.1} MiB, failures {}",
        per_s(&one, "listBundles"),
        per_s(&one, "getBundle"),
        mib(&one),
        one["failures"].as_array().map_or(0, Vec::len)
    );
    println!(
        "  {clients} clients, {seconds} s:  {:8.1} ListBundles/s {:8.1} GetBundle/s, peak RSS {:6.1} MiB, failures {}",
        per_s(&many, "listBundles"),
        per_s(&many, "getBundle"),
        mib(&many),
        many["failures"].as_array().map_or(0, Vec::len)
    );
    println!(
        "  peak RSS under load / with one client: {:.2}x; / opm v1.26.5 after queries (86 packages, SERVE.md A.8): {:.2}x",
        mib(&many) / mib(&one).max(1.0),
        mib(&many) / OPM_RSS_AFTER_QUERIES_MIB
    );
    println!(
        "  exit after SIGTERM: {} (1 client), {} ({clients} clients)",
        one["exitAfterSigterm"], many["exitAfterSigterm"]
    );
}
