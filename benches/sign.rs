//! Signing benchmark (issue 28's speed targets, printed as ratios to them, never asserted):
//! - verifying 1,000 cosign signatures of 1,000 images in one OCI layout, with one
//!   `olmpack verify oci:LAYOUT --key cosign.pub` process (target: under 2 s on 2 cores), and
//!   1,000 simple (OpenPGP) signatures checked in-process;
//! - what signing adds to a push: a bundle image pushed to a local `docker-registry`, then the
//!   same push followed by a cosign signature (target: under 50 ms added).
//!
//! Run: `just bench-sign` (`cargo bench --bench sign`; env `BENCH_ITERS`, default 7). Under
//! `cargo test --all-targets` it runs once with 50 images as a smoke test.

#[path = "../tests/support/registry.rs"]
mod support;

use olmpack::commands::flags::RegistryArgs;
use olmpack::image::{Blob, Image};
use olmpack::location::Location;
use olmpack::registry::push::{Progress, PushOptions};
use olmpack::signature::{cosign, keys, simple, store::Target};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn tiny_image(i: usize) -> Image {
    let config = Blob::memory(
        "application/vnd.oci.image.config.v1+json",
        format!("{{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{{\"Labels\":{{\"n\":\"{i}\"}}}},\"rootfs\":{{\"type\":\"layers\",\"diff_ids\":[]}}}}").into_bytes(),
    );
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config.descriptor.media_type, "digest": config.descriptor.digest, "size": config.descriptor.size},
        "layers": [],
    });
    Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers: Vec::new(),
    }
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
    let n = if bench { 1000 } else { 50 };
    let work = tempfile::tempdir().expect("tmp");
    let key = p256::ecdsa::SigningKey::random(&mut rand_core::OsRng);
    std::fs::write(
        work.path().join("cosign.pub"),
        keys::public_key_pem(key.verifying_key()).expect("pem"),
    )
    .expect("write pub");

    // A layout of n images, each signed once (signing is set-up here, timed below).
    let layout = work.path().join("layout");
    let tags: Vec<String> = (0..n).map(|i| format!("img{i}")).collect();
    let start = Instant::now();
    for (i, tag) in tags.iter().enumerate() {
        olmpack::transport::layout::write_layout(
            &tiny_image(i),
            &layout,
            std::slice::from_ref(tag),
        )
        .expect("layout");
    }
    let opts = olmpack::transport::RegistryOptions::default();
    for tag in &tags {
        let loc = Location::parse(&format!("oci:{}:{tag}", layout.display())).expect("loc");
        let target = Target::resolve(&loc, &opts).expect("resolve");
        cosign::sign(
            &target,
            &key.clone().into(),
            &format!("quay.io/bench/{tag}"),
        )
        .expect("sign");
    }
    println!(
        "set-up: {n} images written and cosign-signed into one layout in {:.2} s",
        start.elapsed().as_secs_f64()
    );

    let mut verify_times = Vec::new();
    for _ in 0..iters {
        let s = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_olmpack"))
            .args(["verify", &format!("oci:{}", layout.display()), "--key"])
            .arg(work.path().join("cosign.pub"))
            .args(["-o", "json"])
            .output()
            .expect("run olmpack verify");
        verify_times.push(s.elapsed());
        assert!(
            out.status.success(),
            "verify: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["images"].as_array().map(Vec::len), Some(n));
    }
    let ms = median(verify_times);
    let per_1000 = ms * 1000.0 / n as f64;
    println!(
        "cosign verify, {n} images of one layout, one process: median {ms:.0} ms ({:.2} ms per signature; {per_1000:.0} ms per 1,000 = {:.2}x the 2 s budget)",
        ms / n as f64,
        per_1000 / 2000.0
    );

    // 1,000 simple signatures (OpenPGP, ed25519 via GnuPG when present): payload check + signature.
    let gpg_home = work.path().join("gnupg");
    std::fs::create_dir_all(&gpg_home).expect("mkdir");
    let generated = Command::new("gpg")
        .env("GNUPGHOME", &gpg_home)
        .args([
            "--batch",
            "--quiet",
            "--passphrase",
            "",
            "--quick-gen-key",
            "Bench <b@example.invalid>",
            "ed25519",
            "sign",
            "never",
        ])
        .output();
    if generated.is_ok_and(|o| o.status.success()) {
        let sec = Command::new("gpg")
            .env("GNUPGHOME", &gpg_home)
            .args(["--batch", "--export-secret-keys"])
            .output()
            .expect("gpg export");
        let signer = simple::GpgSigner::from_bytes(&sec.stdout, "bench", Vec::new()).expect("key");
        let ring = simple::Keyring::from_bytes(&sec.stdout, "bench").expect("ring");
        let digest = format!("sha256:{}", "ab".repeat(32));
        let sigs: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                signer
                    .sign(&simple::payload(
                        &format!("quay.io/bench/img:{i}"),
                        &digest,
                        0,
                    ))
                    .expect("sign")
            })
            .collect();
        let mut times = Vec::new();
        for _ in 0..iters {
            let s = Instant::now();
            for (i, sig) in sigs.iter().enumerate() {
                let (body, _) = ring.verify_message(sig).expect("verify");
                let rule =
                    simple::IdentityRule::MatchRepoDigestOrExact(format!("quay.io/bench/img:{i}"));
                simple::check_payload(&body, &digest, &rule).expect("payload");
            }
            times.push(s.elapsed());
        }
        let ms = median(times);
        println!(
            "simple signing verify, {n} OpenPGP (ed25519) signatures in-process: median {ms:.0} ms ({:.2} ms per signature)",
            ms / n as f64
        );
        let _ = Command::new("gpgconf")
            .env("GNUPGHOME", &gpg_home)
            .args(["--kill", "gpg-agent"])
            .output();
    } else {
        println!("(gpg not available: simple signing figure skipped)");
    }

    // Signing overhead on a push.
    let reg = support::Registry::start(support::Mode::Plain);
    let dir = work.path().join("bundle");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let image = support::bundle_image(&dir, 3, "bench-operator");
    let args = RegistryArgs::default();
    let ropts = args.options(&[]).expect("options");
    let popts = PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    };
    let push = |tag: &str| {
        olmpack::transport::sink::push(
            olmpack::image::Artifact::Image(&image),
            &[tag.to_string()],
            &ropts,
            &popts,
        )
        .expect("push")
    };
    let (mut plain, mut signed, mut sign_only) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..iters.max(3) {
        let tag = format!("{}/bench/plain-{i}:v1", reg.host);
        let s = Instant::now();
        push(&tag);
        plain.push(s.elapsed());
        let tag = format!("{}/bench/signed-{i}:v1", reg.host);
        let s = Instant::now();
        push(&tag);
        let t = Instant::now();
        let loc = Location::parse(&tag).expect("loc");
        let target = Target::resolve(&loc, &ropts).expect("resolve");
        cosign::sign(
            &target,
            &key.clone().into(),
            &format!("{}/bench/signed-{i}", reg.host),
        )
        .expect("sign");
        sign_only.push(t.elapsed());
        signed.push(s.elapsed());
    }
    let (p, sgn, so) = (median(plain), median(signed), median(sign_only));
    println!(
        "push of a bundle image: median {p:.1} ms; push + cosign sign: {sgn:.1} ms; the signing step alone: {so:.1} ms ({:.2}x the 50 ms budget)",
        so / 50.0
    );
}
