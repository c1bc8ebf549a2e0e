//! Push benchmark: olmpack's registry client against `skopeo copy oci:… docker://…` of the same
//! image, to the same local `docker-registry`, in the same run. Two bundles, built by olmpack:
//! the testdata bundle (typical) and the largest corpus bundle. Rows: olmpack push only (the same
//! work as skopeo copy), olmpack build + push (`b+`), and skopeo. Cold = a new repository (every
//! blob uploaded); warm = the same repository again (every blob present: HEADs and one manifest
//! PUT per tag).
//!
//! olmpack is measured in-process (library call, client built per push, as a CLI run would);
//! skopeo is a process per copy, so its start-up cost is measured separately and reported.
//!
//! Run: `cargo bench --bench registry_push` (env `BENCH_ITERS`, default 7). Under
//! `cargo test --all-targets` it runs once as a smoke test.

#[path = "../tests/support/registry.rs"]
mod support;

use olmpack::commands::flags::RegistryArgs;
use olmpack::registry::push::{BlobAction, Progress, PushOptions};
use std::process::Command;
use std::time::{Duration, Instant};

fn stats(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(v[v.len() / 2]);
    let mean = v.iter().map(|d| ms(*d)).sum::<f64>() / v.len() as f64;
    (median, mean, ms(v[0]))
}

/// Runs `f` once and returns how long it took, with its result.
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

fn skopeo_copy(layout: &std::path::Path, tag: &str, dest: &str) -> Duration {
    let start = Instant::now();
    let out = Command::new("skopeo")
        .args([
            "copy",
            "--quiet",
            "--dest-tls-verify=false",
            &format!("oci:{}:{tag}", layout.display()),
            &format!("docker://{dest}"),
        ])
        .output()
        .expect("run skopeo");
    let d = start.elapsed();
    assert!(
        out.status.success(),
        "skopeo: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this binary without it, as a
    // one-iteration smoke test.
    let bench = std::env::args().any(|a| a == "--bench");
    let iters: usize = if bench {
        std::env::var("BENCH_ITERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(7)
    } else {
        1
    };
    let reg = support::Registry::start(support::Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let opts = PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    };
    let args = RegistryArgs::default();

    // skopeo start-up cost, for reading the numbers below.
    let mut startup = Vec::new();
    for _ in 0..iters {
        let s = Instant::now();
        let _ = Command::new("skopeo")
            .arg("--version")
            .output()
            .expect("skopeo");
        startup.push(s.elapsed());
    }
    let (m, _, _) = stats(startup);
    println!("skopeo process start-up (skopeo --version): median {m:.1} ms");
    println!(
        "{:<10} {:<8} {:<6} {:>10} {:>10} {:>10}  notes",
        "image", "tool", "mode", "median ms", "mean ms", "min ms"
    );

    // The bundles the issue names: a typical one (the testdata bundle) and the largest corpus
    // bundle, built by olmpack; olmpack's timings are build + push, skopeo copies the same image
    // from an OCI layout.
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = std::env::var_os("OLMPACK_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/corpus"));
    let mut bundles = vec![("typical", root.join("testdata/bundles/valid-basic"))];
    let largest = corpus.join("bundles/sn-operator/0.19.7");
    if largest.is_dir() {
        bundles.push(("largest", largest));
    } else {
        println!(
            "(largest corpus bundle not found at {}: skipped)",
            largest.display()
        );
    }
    for (name, bundle_dir) in bundles {
        let dir = work.path().join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let build = || {
            let bundle = olmpack::bundle::Bundle::load_layout(&bundle_dir).expect("bundle");
            let input = olmpack::image::BundleInput::from_annotations(
                &bundle_dir,
                bundle.annotations_labels(),
            )
            .expect("input");
            olmpack::image::build(&input, &olmpack::image::BuildOptions::default()).expect("build")
        };
        let push = |image: &olmpack::image::Image, tag: &str| {
            olmpack::transport::sink::push(
                olmpack::image::Artifact::Image(image),
                &[tag.to_string()],
                &args.options(&[tag]).expect("options"),
                &opts,
            )
            .expect("push")
            .remove(0)
        };
        let built = build();
        let image = built.image.clone();
        let size: u64 = image.layers.iter().map(|l| l.descriptor.size).sum::<u64>()
            + image.config.descriptor.size;
        let layout = dir.join("layout");
        olmpack::transport::write_image(
            &image,
            &olmpack::image::Destination::OciLayout {
                path: layout.clone(),
                tag: Some("v1".into()),
            },
            &["v1".to_string()],
        )
        .expect("layout");

        let (mut ocold, mut owarm, mut scold, mut swarm) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut pcold, mut pwarm) = (Vec::new(), Vec::new());
        let mut warm_requests = [0usize; 7];
        for i in 0..iters {
            // Push only, of the image already built (what skopeo copy does), then build + push.
            let tag = format!("{}/bench/olmp-{name}-{i}:v1", reg.host);
            pcold.push(timed(|| push(&image, &tag)).0);
            pwarm.push(timed(|| push(&image, &tag)).0);
            let tag = format!("{}/bench/olm-{name}-{i}:v1", reg.host);
            let (t, r) = timed(|| push(&build().image, &tag));
            ocold.push(t);
            assert!(r.0.blobs.iter().all(|b| b.action == BlobAction::Uploaded));
            let (t, r) = timed(|| push(&build().image, &tag));
            owarm.push(t);
            assert!(r.0.blobs.iter().all(|b| b.action == BlobAction::Existing));
            warm_requests = r.1;
            // skopeo cold then warm
            let dest = format!("{}/bench/sk-{name}-{i}:v1", reg.host);
            scold.push(skopeo_copy(&layout, "v1", &dest));
            swarm.push(skopeo_copy(&layout, "v1", &dest));
        }
        let [head, get, post, put, patch, _, _] = warm_requests;
        for (tool, mode, v, note) in [
            ("olmpack", "cold", pcold, "push only".to_string()),
            ("olmpack", "warm", pwarm, "push only".to_string()),
            (
                "olmpack",
                "b+cold",
                ocold,
                format!("{} blobs, {size} bytes", image.layers.len() + 1),
            ),
            (
                "olmpack",
                "b+warm",
                owarm,
                format!("requests: {head} HEAD, {get} GET, {post} POST, {put} PUT, {patch} PATCH"),
            ),
            ("skopeo", "cold", scold, String::new()),
            ("skopeo", "warm", swarm, String::new()),
        ] {
            let (median, mean, min) = stats(v);
            println!(
                "{name:<10} {tool:<8} {mode:<6} {median:>10.1} {mean:>10.1} {min:>10.1}  {note}"
            );
        }
    }
}
