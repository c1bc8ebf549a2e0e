//! `cargo bench --bench catalog_build` (the `just bench-catalog-build` recipe): how fast
//! `catalog build` turns the largest shared catalog into its image, and how fast it pushes it.
//!
//! Input: the largest catalog under `../shared/catalogs/fbc` (or `$OLMPACK_CATALOGS/fbc`): a
//! whole `catalogs/v4.18` folder (every package of one repository; an 11 MB catalog). Rows:
//! - build `library`: `image::extend::folder_layer` + `scratch_image` (walk, tar, gzip -6, both
//!   sha256, config, manifest) into a spool, the step a push or a layout streams from;
//! - build `cli`: the release binary end to end (`--no-validate`, OCI layout output);
//! - `tar|gzip`: `tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c . | gzip -6`
//!   of the same folder (two processes, so it gets two cores; olmpack uses one);
//! - push: olmpack's push of the built image (library call, as the CLI does it) against
//!   `skopeo copy oci:… docker://…` of the same image, to the same local `docker-registry`, cold
//!   (new repository) and warm (everything present).
//!
//! Medians of N runs (`BENCH_ITERS`, default 7). Under `cargo test --all-targets` it runs once
//! on `testdata/catalogs/build-small` as a smoke test.

#[path = "../tests/support/registry.rs"]
mod support;

use olmpack::image::extend::{folder_layer, scratch_image};
use olmpack::image::{Artifact, Format, Platform};
use olmpack::registry::push::{Progress, PushOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_n(n: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..n)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed()
            })
            .collect(),
    )
}

fn tree_size(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).expect("read").flatten() {
        let p = e.path();
        total += if p.is_dir() {
            tree_size(&p)
        } else {
            e.metadata().map(|m| m.len()).unwrap_or(0)
        };
    }
    total
}

/// The largest `catalogs/<version>` folder under `fbc/`.
fn largest_catalog(fbc: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    for repo in std::fs::read_dir(fbc).ok()?.flatten() {
        let Ok(versions) = std::fs::read_dir(repo.path().join("catalogs")) else {
            continue;
        };
        for v in versions.flatten() {
            let size = tree_size(&v.path());
            if best.as_ref().is_none_or(|(b, _)| size > *b) {
                best = Some((size, v.path()));
            }
        }
    }
    best.map(|(_, p)| p)
}

fn skopeo_copy(layout: &Path, dest: &str) -> Duration {
    let start = Instant::now();
    let out = Command::new("skopeo")
        .args([
            "copy",
            "--quiet",
            "--dest-tls-verify=false",
            &format!("oci:{}:v1", layout.display()),
            &format!("docker://{dest}"),
        ])
        .output()
        .expect("run skopeo");
    assert!(
        out.status.success(),
        "skopeo: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let iters: usize = if bench {
        std::env::var("BENCH_ITERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(7)
    } else {
        1
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let catalog = if bench {
        let shared = std::env::var_os("OLMPACK_CATALOGS")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("../shared/catalogs"));
        match largest_catalog(&shared.join("fbc")) {
            Some(c) => c,
            None => {
                println!(
                    "catalogs not found at {}: nothing to measure",
                    shared.display()
                );
                return;
            }
        }
    } else {
        root.join("testdata/catalogs/build-small")
    };
    let work = tempfile::tempdir().expect("tmp");
    println!(
        "catalog: {} ({:.1} MB of files), {iters} runs each, medians",
        catalog.display(),
        tree_size(&catalog) as f64 / 1e6
    );

    // Build.
    let spool = work.path().join("spool");
    std::fs::create_dir_all(&spool).expect("mkdir");
    let mut last = None;
    let lib = time_n(iters, || {
        let (layer, _) =
            folder_layer(&catalog, "configs", 0, &spool.join("configs.tar.gz")).expect("layer");
        let mut labels = BTreeMap::new();
        labels.insert(
            "operators.operatorframework.io.index.configs.v1".to_string(),
            "/configs".to_string(),
        );
        last = Some((
            scratch_image(&layer, &labels, &Platform::default(), Format::Oci, 0),
            layer.diff_size,
        ));
    });
    let (image, tar_bytes) = last.expect("built");
    let out = work.path().join("cli-out");
    let cli = time_n(iters, || {
        let _ = std::fs::remove_dir_all(&out);
        let status = Command::new(env!("CARGO_BIN_EXE_olmpack"))
            .args(["catalog", "build", "--no-validate", "--output"])
            .arg(format!("oci:{}:v1", out.display()))
            .arg(&catalog)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("olmpack runs");
        assert!(status.success());
    });
    let gz = work.path().join("ref.tar.gz");
    let tar = time_n(iters, || {
        let status = Command::new("sh")
            .arg("-c")
            .arg(
                "tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -c . \
                 | gzip -6 > \"$1\"",
            )
            .arg("sh")
            .arg(&gz)
            .current_dir(&catalog)
            .status()
            .expect("sh runs");
        assert!(status.success());
    });
    let mb = tar_bytes as f64 / 1e6;
    println!(
        "build: library {:.1} ms ({:.1} MB/s of tar), cli {:.1} ms, tar|gzip -6 {:.1} ms: library/tar {:.2}x, cli/tar {:.2}x",
        ms(lib),
        mb / lib.as_secs_f64(),
        ms(cli),
        ms(tar),
        lib.as_secs_f64() / tar.as_secs_f64(),
        cli.as_secs_f64() / tar.as_secs_f64(),
    );

    // Push.
    let reg = support::Registry::start(support::Mode::Plain);
    let opts = PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    };
    let registry = olmpack::transport::RegistryOptions::default();
    let push = |tag: &str| {
        olmpack::transport::sink::push(
            Artifact::Image(&image),
            &[tag.to_string()],
            &registry,
            &opts,
        )
        .expect("push")
    };
    let (mut ocold, mut owarm, mut scold, mut swarm) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..iters {
        let tag = format!("{}/bench/olm-catalog-{i}:v1", reg.host);
        let s = Instant::now();
        push(&tag);
        ocold.push(s.elapsed());
        let s = Instant::now();
        push(&tag);
        owarm.push(s.elapsed());
        let dest = format!("{}/bench/sk-catalog-{i}:v1", reg.host);
        scold.push(skopeo_copy(&out, &dest));
        swarm.push(skopeo_copy(&out, &dest));
    }
    let (oc, ow, sc, sw) = (median(ocold), median(owarm), median(scold), median(swarm));
    println!(
        "push ({} bytes): olmpack cold {:.1} ms, warm {:.1} ms; skopeo copy cold {:.1} ms, warm {:.1} ms: olmpack/skopeo cold {:.2}x, warm {:.2}x",
        image.layers[0].descriptor.size + image.config.descriptor.size,
        ms(oc),
        ms(ow),
        ms(sc),
        ms(sw),
        oc.as_secs_f64() / sc.as_secs_f64(),
        ow.as_secs_f64() / sw.as_secs_f64(),
    );
    if !bench {
        println!(
            "(smoke run under cargo test; `cargo bench --bench catalog_build` gives the figures)"
        );
    }
}
