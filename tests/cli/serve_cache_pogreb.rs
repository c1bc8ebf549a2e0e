//! opm's pogreb serve cache (opm v1.41+, issue 31): `catalog build --cache-format pogreb` writes
//! it, `catalog cache verify` and `catalog serve --cache-dir` check it as current opm does at
//! start. The database bytes themselves are checked against the real pogreb library in
//! `tests/library/pogreb.rs`; here the image is unpacked by umoci (owners and modes kept) and
//! read as the base's user in a child process (`setpriv`).

use crate::support::cmd::olmpack_reproducible as olmpack;
use olmpack::gocompat::pogreb::Reader;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

fn catalog() -> PathBuf {
    crate::support::fixtures::testdata("catalogs/build-small")
}

fn umoci(args: &[&str]) {
    crate::support::proc::tool_ok("umoci", args);
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `catalog cache verify CATALOG --cache-dir CACHE`.
fn cache_verify(catalog: &Path, cache: &Path) -> std::process::Output {
    olmpack()
        .args(["catalog", "cache", "verify"])
        .arg(catalog)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

/// Builds the small catalog (scratch, `--cache`) with a pogreb cache, unpacks it with umoci.
fn built(tmp: &Path) -> (String, PathBuf) {
    let out = tmp.join("image");
    let r = olmpack()
        .args(["catalog", "build"])
        .arg(catalog())
        .args(["--cache", "--cache-format", "pogreb", "--output"])
        .arg(format!("oci:{}:v1", out.display()))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("folders 0770, files 0660"),
        "{}",
        text(&r)
    );
    let bundle = tmp.join("bundle");
    umoci(&[
        "unpack",
        "--image",
        &format!("{}:v1", out.display()),
        bundle.to_str().unwrap(),
    ]);
    (format!("oci:{}:v1", out.display()), bundle)
}

#[test]
fn a_pogreb_cache_is_built_verified_and_refused_when_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let (image, bundle) = built(tmp.path());
    let rootfs = bundle.join("rootfs");
    let cache = rootfs.join("tmp/cache");
    // opm's layout and modes.
    let mut entries = 0;
    for (rel, mode) in [
        ("pogreb.v1", 0o770),
        ("pogreb.v1/db", 0o770),
        ("pogreb.v1/digest", 0o660),
        ("pogreb.v1/db/00000-1.psg", 0o660),
        ("pogreb.v1/db/00000-1.psg.pmt", 0o660),
        ("pogreb.v1/db/db.pmt", 0o660),
        ("pogreb.v1/db/index.pmt", 0o660),
        ("pogreb.v1/db/main.pix", 0o660),
        ("pogreb.v1/db/overflow.pix", 0o660),
    ] {
        let m = std::fs::metadata(cache.join(rel)).unwrap();
        assert_eq!(m.mode() & 0o7777, mode, "{rel}");
        entries += 1;
    }
    assert_eq!(entries, 9);
    assert!(!cache.join("cache").exists(), "no JSON cache beside it");
    // The database holds the index and one bundle per channel membership.
    let db = Reader::open(&cache.join("pogreb.v1/db")).unwrap();
    let packages = db.get(b"packages.json").unwrap().expect("packages.json");
    let index: serde_json::Value = serde_json::from_slice(&packages).unwrap();
    let mut bundles = 0;
    for (pkg, p) in index.as_object().unwrap() {
        for (ch, c) in p["Channels"].as_object().unwrap() {
            for b in c["Bundles"].as_object().unwrap().keys() {
                let key = format!("bundles/{pkg}/{ch}/{b}");
                assert!(db.get(key.as_bytes()).unwrap().is_some(), "{key}");
                bundles += 1;
            }
        }
    }
    assert!(bundles > 0);
    assert_eq!(db.count() as usize, bundles + 1);

    let v = olmpack()
        .args([
            "catalog",
            "cache",
            "verify",
            &image,
            "--cache-dir",
            "/tmp/cache",
        ])
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    assert!(text(&v).contains("pogreb.v1"), "{}", text(&v));
    assert!(text(&v).contains("ok: opm will accept"), "{}", text(&v));

    // A folder: the same verdict, and catalog serve --cache-dir refuses a stale cache.
    let configs = rootfs.join("configs");
    let v = cache_verify(&configs, &cache);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    // Reformatting a file does not change this digest (blobs are re-encoded); a changed blob does.
    let file = configs.join("build-other/catalog.json");
    let body = std::fs::read_to_string(&file).unwrap();
    let changed = format!("\n{body}\n");
    std::fs::write(&file, &changed).unwrap();
    let v = cache_verify(&configs, &cache);
    assert_eq!(v.status.code(), Some(0), "whitespace only: {}", text(&v));
    std::fs::write(
        &file,
        format!("{body}\n{{\"schema\":\"acme.example\",\"package\":\"x\",\"k\":1}}\n"),
    )
    .unwrap();
    let v = cache_verify(&configs, &cache);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    let t = text(&v);
    assert!(
        t.contains("integrity check failed: cache requires rebuild: cache reports digest as"),
        "{t}"
    );
    assert!(
        t.contains("missing: pogreb.v1/db key metas/acme.example/x"),
        "{t}"
    );
    let s = olmpack()
        .args(["catalog", "serve"])
        .arg(&configs)
        .args(["-p", "0", "--addr", "127.0.0.1", "--cache-dir"])
        .arg(&cache)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(s.status.code(), Some(1), "{}", text(&s));
    assert!(
        text(&s).contains("opm would not start on the serve cache"),
        "{}",
        text(&s)
    );
}

#[test]
fn a_damaged_database_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (_image, bundle) = built(tmp.path());
    let rootfs = bundle.join("rootfs");
    let cache = rootfs.join("tmp/cache");
    std::fs::write(cache.join("pogreb.v1/db/main.pix"), b"not pogreb").unwrap();
    let v = cache_verify(&rootfs.join("configs"), &cache);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(
        text(&v).contains("opm cannot open the pogreb database (main.pix: database is corrupted"),
        "{}",
        text(&v)
    );
}

/// operator-registry's `TestPogrebV1_StableDigest` (the digest of `validFS`'s pogreb cache,
/// which opm's test says must never change) and its `TestPogrebV1_CheckIntegrity` cases: empty
/// cache folder, valid, different catalog, different cache (a key added to the database).
#[test]
fn upstream_pogreb_digest_and_integrity_cases() {
    let valid = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/opm-cache-valid");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("image");
    let r = olmpack()
        .args(["catalog", "build"])
        .arg(&valid)
        .args(["--cache", "--cache-format", "pogreb", "--output"])
        .arg(format!("oci:{}:v1", out.display()))
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r));
    // TestPogrebV1_StableDigest.
    assert!(text(&r).contains("digest 485a767449dd66d4"), "{}", text(&r));
    let bundle = tmp.path().join("bundle");
    umoci(&[
        "unpack",
        "--image",
        &format!("{}:v1", out.display()),
        bundle.to_str().unwrap(),
    ]);
    let rootfs = bundle.join("rootfs");
    let cache = rootfs.join("tmp/cache");
    let verify = |catalog: &Path, cache: &Path| {
        let v = cache_verify(catalog, cache);
        (v.status.code(), text(&v))
    };
    let mut cases = 0;
    // "empty cache dir": read existing cache digest fails.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, t) = verify(&rootfs.join("configs"), &empty);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("read existing cache digest"), "{t}");
    cases += 1;
    // "valid cache dir".
    let (code, t) = verify(&rootfs.join("configs"), &cache);
    assert_eq!(code, Some(0), "{t}");
    assert!(
        t.contains("digest:  recorded 485a767449dd66d4, computed 485a767449dd66d4"),
        "{t}"
    );
    cases += 1;
    // "different FBC": another catalog against this cache.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(valid.join("etcd.json"), other.join("etcd.json")).unwrap();
    let (code, t) = verify(&other, &cache);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("cache requires rebuild"), "{t}");
    cases += 1;
    // "different cache": a bundle key added to the database.
    let db = cache.join("pogreb.v1/db");
    let reader = Reader::open(&db).unwrap();
    let mut w = olmpack::gocompat::pogreb::Writer::new(9);
    for (k, v) in reader.items().unwrap() {
        w.put(&k, &v).unwrap();
    }
    w.put(b"bundles/foo/bar/baz", b"\x0a\x03baz").unwrap();
    w.write_to(&db, 0o660).unwrap();
    let (code, t) = verify(&rootfs.join("configs"), &cache);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("cache requires rebuild"), "{t}");
    assert!(
        t.contains("extra:   pogreb.v1/db key bundles/foo/bar/baz"),
        "{t}"
    );
    cases += 1;
    assert_eq!(cases, 4);
}
