//! pogreb's file format (`olmpack::gocompat::pogreb`) against the real library: the same puts
//! with the same hash seed give the same bytes as github.com/akrylysov/pogreb v0.10.2 (the
//! version operator-registry v1.73 uses) wrote here with `tests/support/pogreb/main.go` (see
//! its README: SHA-256 of each file), and what is written reads back through `Get` and `Items`.
//! MurmurHash3 vectors are pogreb's own (`internal/hash/murmurhash32_test.go`).

use olmpack::gocompat::pogreb::{Reader, Writer, murmur3_32};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// `TestSum32WithSeed`, all 7 cases.
#[test]
fn murmur3_matches_pogrebs_test_vectors() {
    let cases: [(&[u8], u32, u32); 7] = [
        (b"", 0, 0),
        (b"", 1, 1_364_076_727),
        (&[1], 0, 3_831_157_163),
        (&[1, 2], 0, 1_690_789_502),
        (&[1, 2, 3], 0, 2_161_234_436),
        (&[1, 2, 3, 4], 0, 1_043_635_621),
        (&[1, 2, 3, 4, 5], 0, 2_727_459_272),
    ];
    for (input, seed, want) in cases {
        assert_eq!(murmur3_32(input, seed), want, "{input:?} seed {seed}");
    }
}

type Pairs = Vec<(String, Vec<u8>)>;

fn small() -> Pairs {
    vec![
        ("packages.json".into(), br#"{"a":1}"#.to_vec()),
        ("bundles/p/c/b".into(), vec![0x0a, 0x01, b'b']),
        ("metas/s/p".into(), Vec::new()),
    ]
}

/// 2000 keys (splits up to 94 buckets, overflow chains, a freed overflow bucket) and 21 of them
/// overwritten.
fn many() -> Pairs {
    let key = |i: usize| format!("bundles/pkg{}/stable/op.v0.{i}.0", i % 37);
    let mut out: Pairs = (0..2000)
        .map(|i| {
            (
                key(i),
                format!("value-{i}-").repeat(i % 13 + 1).into_bytes(),
            )
        })
        .collect();
    for i in (0..2000).step_by(97) {
        out.push((key(i), format!("over-{i}").into_bytes()));
    }
    out
}

/// 300 empty values under the largest seed.
fn empty() -> Pairs {
    (0..300).map(|i| (format!("k{i}"), Vec::new())).collect()
}

fn sha(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// What pogreb v0.10.2 wrote (file, size, SHA-256).
const SMALL: [(&str, usize, &str); 6] = [
    (
        "00000-1.psg",
        587,
        "a58a7fff6882fc763e8ada7d903594845f50941add7051b41e70bdf309a87c10",
    ),
    (
        "00000-1.psg.pmt",
        619,
        "263565360daa9d51c5db82933f2a8531ded8adf3bcc24059618982ef32a0b588",
    ),
    (
        "db.pmt",
        552,
        "1ea0d870bf6e561174db3532e99e6b81b7fa98d01d6140681ba600d95c41e0cb",
    ),
    (
        "index.pmt",
        649,
        "d3c8b432cf8dae79cb9135eda0948a1475ca8f9a855f389bd225ad2edf10da54",
    ),
    (
        "main.pix",
        1024,
        "7618a20a0de624be2be84eec5e8b92f8b261bd2201df921be53b7c3182beafee",
    ),
    (
        "overflow.pix",
        512,
        "8f50fac4d9ac89ecc22d8a39769fabf88332d09a16e5d4d805eaa23a30c50e64",
    ),
];
const MANY: [(&str, usize, &str); 6] = [
    (
        "00000-1.psg",
        232_066,
        "443040f6d0e8f9d466b8b79484f8d9a6f557351cedf9f1f8eb19eab866714fd9",
    ),
    (
        "00000-1.psg.pmt",
        627,
        "ba4d078347eb617c5df629813995c437541a5cf77a469920c4698d56e47742e7",
    ),
    (
        "db.pmt",
        552,
        "7c07421c32f07072e8f839601632913ba32048aff76678e02ce5f9ef22f7d810",
    ),
    (
        "index.pmt",
        660,
        "f025358a0fbfb35cc6c44cc8640ff3f25553a1bc4e24aeb2fbbb7f46cf8b49da",
    ),
    (
        "main.pix",
        48_128,
        "593e701136eceac98b586c152a14f98067a77030edf612f150d3c070e558d4a7",
    ),
    (
        "overflow.pix",
        9728,
        "f54e4d4b93e2ca0aef46b6556a6dcc330d7d01143dde81f244651352a0de1245",
    ),
];
const EMPTY: [(&str, usize, &str); 6] = [
    (
        "00000-1.psg",
        4602,
        "c456a2cc1e68f979a30032b062e53e8696aa7656209f1f50ce9d0ad58062061e",
    ),
    (
        "00000-1.psg.pmt",
        621,
        "9ddacb65e7cfcaa0cd785186722dc3abc695b16f0dc35d5892af3b77d7a727e5",
    ),
    (
        "db.pmt",
        556,
        "721563be85aee458ff3eb0f5a57b0101e97e36d009069709f15daadfd31ff49a",
    ),
    (
        "index.pmt",
        660,
        "53a60f2ef95a41413188587af980ccc6a676e23344ba248ba74649aba73f5050",
    ),
    (
        "main.pix",
        7680,
        "a887bcb7005f1eba1d54a94639338bf7b889da55b9f36350cc83679c8216c1f1",
    ),
    (
        "overflow.pix",
        2048,
        "6fbbe45ff92800ff53b5f4f455569eb92135552fee3a2209dadfe805e8e19e96",
    ),
];

fn check(name: &str, seed: u32, pairs: Pairs, want: &[(&str, usize, &str); 6]) {
    let mut w = Writer::new(seed);
    for (k, v) in &pairs {
        w.put(k.as_bytes(), v).unwrap();
    }
    let files = w.files();
    assert_eq!(files.len(), 6);
    for ((file, bytes), (wf, wlen, wsha)) in files.iter().zip(want) {
        assert_eq!(file, wf, "{name}");
        assert_eq!(bytes.len(), *wlen, "{name}: {file} size");
        assert_eq!(
            sha(bytes),
            *wsha,
            "{name}: {file} bytes differ from pogreb's"
        );
    }
    // Read back: the last value of every key, through Get and Items.
    let dir = tempfile::tempdir().unwrap();
    w.write_to(dir.path(), 0o660).unwrap();
    let r = Reader::open(dir.path()).unwrap();
    let expected: BTreeMap<Vec<u8>, Vec<u8>> = pairs
        .into_iter()
        .map(|(k, v)| (k.into_bytes(), v))
        .collect();
    assert_eq!(r.count() as usize, expected.len(), "{name}");
    for (k, v) in &expected {
        assert_eq!(r.get(k).unwrap().as_ref(), Some(v), "{name}: get");
    }
    assert_eq!(r.get(b"no such key").unwrap(), None);
    let items: BTreeMap<Vec<u8>, Vec<u8>> = r.items().unwrap().into_iter().collect();
    assert_eq!(items, expected, "{name}: items");
    assert!(r.check_log().unwrap() >= expected.len());
    assert!(r.notes.is_empty());
}

#[test]
fn writer_gives_pogrebs_bytes_and_reads_back() {
    check("small", 42, small(), &SMALL);
    check("many", 7, many(), &MANY);
    check("empty", u32::MAX, empty(), &EMPTY);
}

#[test]
fn damaged_databases_are_errors_not_panics() {
    let mut w = Writer::new(1);
    for (k, v) in many() {
        w.put(k.as_bytes(), &v).unwrap();
    }
    let files = w.files();
    let mut cases = 0;
    for (victim, _) in &files {
        for cut in [0usize, 100, 511, 513, 4000] {
            let dir = tempfile::tempdir().unwrap();
            for (name, bytes) in &files {
                let b = if name == victim {
                    &bytes[..cut.min(bytes.len())]
                } else {
                    &bytes[..]
                };
                std::fs::write(dir.path().join(name), b).unwrap();
            }
            // Either it refuses to open, or reading reports the damage; nothing panics.
            if let Ok(r) = Reader::open(dir.path()) {
                let _ = r.items();
                let _ = r.get(b"bundles/pkg0/stable/op.v0.0.0");
                let _ = r.check_log();
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 30);
    // A flipped byte in a value fails the record's CRC.
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in &files {
        let mut b = bytes.clone();
        if *name == "00000-1.psg" {
            b[600] ^= 0xff;
        }
        std::fs::write(dir.path().join(name), b).unwrap();
    }
    let r = Reader::open(dir.path()).unwrap();
    assert!(r.check_log().unwrap_err().to_string().contains("CRC-32"));
    // A lock file left behind is named.
    std::fs::write(dir.path().join("lock"), b"").unwrap();
    let r = Reader::open(dir.path()).unwrap();
    assert!(r.notes[0].contains("lock"));
}
