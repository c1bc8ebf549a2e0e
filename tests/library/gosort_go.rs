//! opm orders relatedImages with Go's `sort.Slice`, which is not stable: entries with the same
//! image land where Go's pattern-defeating quicksort puts them, and `catalog render` must put them
//! there too (`catalog::render::gosort`). This test runs Go itself (`tests/support/gosort/main.go`,
//! standard library only, built offline) on thousands of generated key lists (every length up to
//! 300, few distinct keys so that ties abound, random, sorted, reversed, organ-pipe and constant
//! shapes, and the lengths where the ninther, pattern breaking and heap sort take over) and
//! requires the same order of equal keys for every list. Without Go it prints that it skipped;
//! under `OLMPACK_REQUIRE_CORPUS=1` (CI, whose `scripts/test.sh` installs Debian's `golang-go`) a
//! missing Go is a failure.

use crate::support::go;

use olmpack::gocompat::sort::sort_slice;
use std::io::Write;

/// Key lists of every shape the sort treats differently.
fn cases() -> Vec<Vec<u32>> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for len in 0..=300u32 {
        for distinct in [1u64, 2, 3, 5, 8, 40] {
            out.push((0..len).map(|_| (next() % distinct) as u32).collect());
        }
        out.push((0..len).map(|i| i / 3).collect());
        out.push((0..len).rev().map(|i| i / 3).collect());
        out.push((0..len).map(|i| (i.min(len - i)) / 2).collect());
        out.push((0..len).map(|i| i % 7).collect());
    }
    // Long lists: the ninther (50 and more), the recursion limit and heap sort.
    for len in [1000u32, 4096, 10_000] {
        out.push((0..len).map(|_| (next() % 3) as u32).collect());
        out.push((0..len).map(|i| (len - i) / 5).collect());
        out.push(
            (0..len)
                .map(|i| if i % 2 == 0 { i } else { len - i } / 4)
                .collect(),
        );
    }
    out
}

#[test]
fn go_and_gosort_order_equal_keys_the_same_way() {
    if !go::go_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let cases = cases();
    let mut go = go::go_run("gosort/main.go", tmp.path())
        .spawn()
        .expect("start go run");
    let input: String = cases
        .iter()
        .map(|keys| {
            let words: Vec<String> = keys.iter().map(u32::to_string).collect();
            format!("{}\n", words.join(" "))
        })
        .collect();
    let mut stdin = go.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = crate::support::proc::wait_output(go, crate::support::proc::LIMIT);
    writer.join().expect("writer thread").expect("write cases");
    assert!(
        out.status.success(),
        "go run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), cases.len(), "Go answered for every case");

    let mut mismatches = Vec::new();
    for (keys, go_line) in cases.iter().zip(lines) {
        let mut entries: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
        sort_slice(&mut entries, &|a, b| a.0 < b.0);
        let ours: Vec<String> = entries.iter().map(|e| e.1.to_string()).collect();
        if ours.join(" ") != go_line {
            mismatches.push(format!("length {}: keys {keys:?}", keys.len()));
        }
    }
    println!(
        "{} key lists compared with Go's sort.Slice, {} mismatches",
        cases.len(),
        mismatches.len()
    );
    assert!(
        mismatches.is_empty(),
        "{}",
        mismatches
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
