//! `bundle/size` must give operator-framework/api's figure to the byte, so `validate::goflate`
//! counts the bits of Go's own level-6 deflate. This test runs Go itself
//! (`tests/support/goflate/main.go`, standard library only, built offline) on every manifest of
//! `../shared/corpus` and `../shared/catalogs/bundles` plus synthetic edge cases (empty, one byte, runs, noise, repeats at the
//! window's edge, sizes around Go's block and window limits) and requires the same length for
//! every file. Without Go it prints that it skipped; under `OLMPACK_REQUIRE_CORPUS=1` (CI, whose
//! `scripts/test.sh` installs Debian's `golang-go`) a missing Go is a failure.

use crate::support::go;
use crate::support::shared;

use olmpack::gocompat::flate::GoDeflate;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Edge cases: tiny inputs, long runs, incompressible bytes, repeats at distances around the
/// 32 KiB window, text around Go's 64 KiB and block-token limits.
fn synthetic(dir: &Path) -> Vec<PathBuf> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    };
    let text = |n: usize| -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0u64;
        while out.len() < n {
            i += 1;
            let w = i.wrapping_mul(2_654_435_761) % 9973;
            out.extend_from_slice(format!("  field{w}: value {i} of f{w}\n").as_bytes());
        }
        out.truncate(n);
        out
    };
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), Vec::new()),
        ("one".into(), b"a".to_vec()),
        ("run-65536".into(), vec![b'a'; 65_536]),
        ("zeros-3m".into(), vec![0; 3 << 20]),
        ("noise-1m".into(), noise(1 << 20)),
        ("noise-16384".into(), noise(16_384)),
    ];
    for n in [65_535, 65_536, 65_537, 131_072, 200_000, 1 << 20] {
        cases.push((format!("text-{n}"), text(n)));
    }
    for distance in [32_760usize, 32_767, 32_768, 32_769, 40_000] {
        let mut data = noise(distance);
        let head: Vec<u8> = data.iter().take(300).copied().collect();
        data.extend(head);
        data.extend(noise(1000));
        cases.push((format!("repeat-{distance}"), data));
    }
    // Skewed frequencies: long Huffman codes that Go must limit to 15 bits.
    let mut skewed = Vec::new();
    for (i, byte) in (0u8..40).enumerate() {
        skewed.extend(std::iter::repeat_n(byte, 1usize << (i % 20)));
    }
    cases.push(("skewed".into(), skewed));
    cases
        .into_iter()
        .map(|(name, data)| {
            let path = dir.join(name);
            std::fs::write(&path, data).expect("write case");
            path
        })
        .collect()
}

fn manifests(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.components().any(|c| c.as_os_str() == "manifests") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The manifests of `corpus/bundles` and `catalogs/bundles` (every file under `manifests/`).
const REAL_FLOOR: (usize, usize) = (1020, 627);

#[test]
fn go_and_goflate_give_the_same_length_for_every_file() {
    let Some(corpus) = shared::shared_corpus() else {
        return;
    };
    if !go::go_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut files = synthetic(tmp.path());
    let real = manifests(&corpus.join("bundles"));
    shared::cases("goflate_go corpus manifests", real.len(), REAL_FLOOR.0);
    files.extend(real);
    // The real bundles taken from the public catalogs, too (both parts, or a skip).
    let Some(catalogs) = shared::shared_catalogs("bundles") else {
        return;
    };
    let real = manifests(&catalogs.join("bundles"));
    shared::cases(
        "goflate_go catalogs/bundles manifests",
        real.len(),
        REAL_FLOOR.1,
    );
    files.extend(real);

    let mut go = go::go_run("goflate/main.go", tmp.path())
        .spawn()
        .expect("start go run");
    let list: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
    let mut stdin = go.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let out = crate::support::proc::wait_output(go, crate::support::proc::LIMIT);
    writer.join().expect("writer thread").expect("write paths");
    assert!(
        out.status.success(),
        "go run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");

    let mut deflate = GoDeflate::new();
    let (mut compared, mut mismatches) = (0usize, Vec::new());
    for line in stdout.lines() {
        let (go_len, path) = line.split_once('\t').expect("length<TAB>path");
        let data = std::fs::read(path).expect("read file");
        let ours = deflate.deflate_len(&data);
        compared += 1;
        if ours.to_string() != go_len {
            mismatches.push(format!("{path}: Go {go_len}, goflate {ours}"));
        }
    }
    println!(
        "{compared} files compared with Go, {} mismatches",
        mismatches.len()
    );
    assert_eq!(compared, files.len(), "Go answered for every file");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
