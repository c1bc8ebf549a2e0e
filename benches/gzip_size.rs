//! Speed of the bundle size rule's exact tier: Go's level-6 deflate length as `goflate` counts
//! it, against compressing with zlib-rs at level 6 (what the tier did before), one thread, over
//! the manifests of ../shared/corpus's sn-operator 0.19.7 (6.8 MB, a bundle near the limit).
//! Run with `just bench-gzip-size` (or `cargo bench --bench gzip_size`); figures are printed.

use flate2::{Compress, Compression, FlushCompress, Status};
use olmpack::gocompat::flate::GoDeflate;
use std::path::PathBuf;
use std::time::Instant;

fn manifests() -> PathBuf {
    std::env::var_os("OLMPACK_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
        .join("bundles/sn-operator/0.19.7/manifests")
}

fn zlib_len(deflate: &mut Compress, data: &[u8], out: &mut [u8]) -> u64 {
    deflate.reset();
    let mut input = data;
    loop {
        let before = deflate.total_in();
        let status = deflate
            .compress(input, out, FlushCompress::Finish)
            .expect("deflate");
        let used = (deflate.total_in() - before) as usize;
        input = &input[used..];
        if status == Status::StreamEnd {
            return deflate.total_out();
        }
    }
}

fn main() {
    let dir = manifests();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIPPED: no {} (set OLMPACK_CORPUS)", dir.display());
        return;
    };
    let files: Vec<Vec<u8>> = entries
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    let mb = files.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    let rounds = if std::env::args().any(|a| a == "--bench") {
        5
    } else {
        1
    };
    let mut go = GoDeflate::new();
    let mut zlib = Compress::new(Compression::new(6), false);
    let mut out = vec![0u8; 64 * 1024];
    let (mut go_best, mut zlib_best) = (f64::MAX, f64::MAX);
    let (mut go_total, mut zlib_total) = (0, 0);
    for _ in 0..rounds {
        let start = Instant::now();
        go_total = files.iter().map(|f| go.deflate_len(f)).sum::<u64>();
        go_best = go_best.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        zlib_total = files
            .iter()
            .map(|f| zlib_len(&mut zlib, f, &mut out))
            .sum::<u64>();
        zlib_best = zlib_best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{} files, {mb:.1} MB; best of {rounds}, one thread",
        files.len()
    );
    println!(
        "goflate (Go level 6, counted): {:.2} ms/MB, {go_total} bytes of deflate",
        go_best * 1e3 / mb
    );
    println!(
        "zlib-rs level 6 (compressed):  {:.2} ms/MB, {zlib_total} bytes of deflate",
        zlib_best * 1e3 / mb
    );
}
