//! A serve cache that fits each base (issue 44 item 4): the opm version is read from the base's
//! opm binary (a Go program built here with opm's own `-X …/cmd/opm/version.opmVersion=` link
//! flag, in a base made by umoci), the cache written as that opm writes it (JSON before v1.41,
//! pogreb since; v1.26's bundle content; `metas/` from v1.69), and `catalog cache verify`
//! judging a cache against the opm that serves it. Also: operator-registry v1.73's
//! `pkg/cache` tests (json_test.go, meta_key_test.go, cache_test.go's custom-schema cases)
//! ported; the v1.26 cache compared with opm v1.26.5's own answers on the shared catalogs;
//! olmpack's server on every layout checked by Python grpcio.

use crate::serve_cache::{canonical, goldens};
use crate::support::cmd::olmpack_reproducible as olmpack;
use crate::support::proc::{Bounded, LIMIT};
use crate::support::shared::{self, PYTHON};
use crate::support::umoci::{base_image, umoci, unpack};
use olmpack::cache::{CacheProfile, OpmVersion, Semantics};
use olmpack::gocompat::tar::{Content, TreeEntry};
use olmpack::serve::ServeModel;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fit_catalog() -> PathBuf {
    crate::support::fixtures::testdata("catalogs/cache-fit")
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An opm stand-in: a Go program in module github.com/operator-framework/operator-registry
/// whose `cmd/opm` is linked as opm's Makefile and goreleaser link it, with the version in
/// `cmd/opm/version.opmVersion`. Go records the link flags in the binary's build information,
/// where olmpack reads them. `None` without Go.
fn fake_opm(work: &Path, version: &str) -> Option<PathBuf> {
    if !crate::support::go::go_available() {
        return None;
    }
    let src = work.join("opm-src");
    std::fs::create_dir_all(src.join("cmd/opm/version")).unwrap();
    std::fs::write(
        src.join("go.mod"),
        "module github.com/operator-framework/operator-registry\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(
        src.join("cmd/opm/version/version.go"),
        "package version\n\nvar opmVersion = \"not set\"\n\nfunc Version() string { return opmVersion }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("cmd/opm/main.go"),
        "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/operator-framework/operator-registry/cmd/opm/version\"\n)\n\nfunc main() { fmt.Println(version.Version()) }\n",
    )
    .unwrap();
    let out = work.join(format!("opm-{version}"));
    let r = Command::new("go")
        .current_dir(&src)
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GOCACHE", work.join("gocache"))
        .arg("build")
        .arg(format!(
            "-ldflags=-X 'github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion={version}'"
        ))
        .arg("-o")
        .arg(&out)
        .arg("./cmd/opm")
        .output_within(LIMIT)
        .unwrap();
    assert!(r.status.success(), "go build: {}", text(&r));
    // It runs and prints the version opm would print.
    let v = Command::new(&out).output_within(LIMIT).unwrap();
    assert_eq!(String::from_utf8_lossy(&v.stdout).trim(), version);
    Some(out)
}

/// A base image (OCI layout `dir`, tag v1) with `opm` at /bin/opm (if any), entrypoint
/// /bin/opm and user 1001, as opm's own images are.
fn base(dir: &Path, opm: Option<&Path>) -> String {
    let put_opm = |rootfs: &Path| {
        let bin = rootfs.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        if let Some(opm) = opm {
            std::fs::copy(opm, bin.join("opm")).unwrap();
        }
    };
    base_image(
        dir,
        Some(&put_opm),
        &["--config.entrypoint", "/bin/opm", "--config.user", "1001"],
    )
}

fn build(catalog: &Path, base: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    olmpack()
        .args(["catalog", "build"])
        .arg(catalog)
        .args(["--base", base, "--output"])
        .arg(format!("oci:{}:v1", out.display()))
        .args(extra)
        .output()
        .unwrap()
}

fn verify(image: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let r = olmpack()
        .args(["catalog", "cache", "verify"])
        .arg(format!("oci:{}:v1", image.display()))
        .args(extra)
        .output()
        .unwrap();
    (r.status.code(), text(&r))
}

#[test]
fn each_base_gets_the_cache_its_opm_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(opm126) = fake_opm(tmp.path(), "v1.26.5") else {
        return;
    };
    let opm169 = fake_opm(tmp.path(), "v1.69.0").unwrap();
    let b126 = base(&tmp.path().join("base126"), Some(&opm126));
    let b169 = base(&tmp.path().join("base169"), Some(&opm169));
    let bnone = base(&tmp.path().join("basenone"), None);
    let cat = fit_catalog();

    // opm v1.26.5: JSON, the bundles as v1.26 stores them, no metas/, said at build time.
    let out126 = tmp.path().join("out126");
    let r = build(&cat, &b126, &out126, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("serve cache for opm v1.26.5 (oci:")
            && text(&r).contains("/bin/opm (its build information's link flag cmd/opm/version.opmVersion)): JSON (cache/, digest) as opm v1.26.5 writes it: olm.csv.metadata kept as a property, no CSV synthesized (opm before v1.28), no deprecations (opm before v1.32), no metas/ (opm before v1.69)"),
        "{}",
        text(&r)
    );
    let root = unpack(&out126, &tmp.path().join("u126"));
    let cache = root.join("tmp/cache/cache");
    let b: Value = serde_json::from_slice(
        &std::fs::read(cache.join("fitpkg_stable_fitpkg.v1.0.0.json")).unwrap(),
    )
    .unwrap();
    let types: Vec<&str> = b["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["olm.package", "olm.csv.metadata"], "{b}");
    assert!(
        b.get("csvJson").is_none() && b.get("object").is_none(),
        "{b}"
    );
    assert!(b.get("deprecation").is_none(), "{b}");
    assert!(!cache.join("metas").exists());
    let (code, t) = verify(&out126, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(
        t.contains("content: what opm v1.26.3 up to before v1.28.0 writes")
            && t.contains("ok: the cache is what opm v1.26.5 writes for this catalog"),
        "{t}"
    );

    // opm v1.69.0: pogreb, CSV synthesized, deprecation, metas/ key.
    let out169 = tmp.path().join("out169");
    let r = build(&cat, &b169, &out169, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("pogreb.v1 as opm v1.69.0 writes it: CSV synthesized from olm.csv.metadata, deprecations, metas/ of other schemas"),
        "{}",
        text(&r)
    );
    let root169 = unpack(&out169, &tmp.path().join("u169"));
    let reader =
        olmpack::gocompat::pogreb::Reader::open(&root169.join("tmp/cache/pogreb.v1/db")).unwrap();
    let keys: Vec<String> = reader
        .items()
        .unwrap()
        .into_iter()
        .map(|(k, _)| String::from_utf8(k).unwrap())
        .collect();
    assert!(
        keys.contains(&"metas/custom.operator.io/fitpkg".to_string()),
        "{keys:?}"
    );
    let (code, t) = verify(&out169, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(
        t.contains("content: what opm v1.69.0 and later writes"),
        "{t}"
    );

    // The v1.26 cache on a v1.69 base: opm starts on it (the digest matches) but would serve
    // v1.26's answers and no custom schemas: not fit, named.
    let (code, t) = verify(&out126, &["--opm-version", "v1.69.0"]);
    assert_eq!(code, Some(1), "{t}");
    for want in [
        "ok: opm will accept this cache (the digest matches)",
        "content: what opm v1.26.3 up to before v1.28.0 writes",
        "not fit: the cache is not what opm v1.69.0 writes for this catalog (3 entries differ)",
        "1 metas/ entries of other schemas missing: opm v1.69.0 answers ExperimentalListPackageCustomSchemas with nothing for them",
        "fit:     changed cache/fitpkg_stable_fitpkg.v1.0.0.json",
        "fit:     missing cache/metas/custom.operator.io/fitpkg/",
    ] {
        assert!(t.contains(want), "{want:?} not in:\n{t}");
    }
    // The pogreb cache under opm v1.26: it cannot read it at all.
    let (code, t) = verify(&out169, &["--opm-version", "1.26.5"]);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains("opm v1.26.5 reads no pogreb cache (since v1.41.0)"),
        "{t}"
    );

    // --opm-version overrides the binary; a format that opm cannot read is refused by name.
    let r = build(
        &cat,
        &b169,
        &tmp.path().join("o2"),
        &["--opm-version", "v1.26.5", "--cache-format", "pogreb"],
    );
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r).contains("opm v1.26.5 cannot read a pogreb cache (pogreb.v1 since v1.41.0)"),
        "{}",
        text(&r)
    );
    let r = build(
        &cat,
        &b169,
        &tmp.path().join("o3"),
        &["--opm-version", "1.x"],
    );
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r).contains("\"1.x\" is not MAJOR.MINOR"),
        "{}",
        text(&r)
    );

    // No opm in the base: current content, and the build says what that means.
    let r = build(&cat, &bnone, &tmp.path().join("o4"), &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("serve cache for opm of unknown version (")
            && text(&r).contains(
                "an opm older than v1.28 serves these newer answers as they are; give --opm-version"
            ),
        "{}",
        text(&r)
    );

    // A custom blob whose schema opm's pattern refuses fails the v1.69 cache build (#1994);
    // opm v1.26 ignores it.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let mut yaml = std::fs::read_to_string(cat.join("catalog.yaml")).unwrap();
    yaml.push_str("---\nschema: custom operator\npackage: fitpkg\nname: spaced\n");
    std::fs::write(bad.join("catalog.yaml"), yaml).unwrap();
    let r = build(&bad, &b169, &tmp.path().join("o5"), &[]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(
        text(&r)
            .contains("a blob of schema \"custom operator\" (package \"fitpkg\") cannot be stored"),
        "{}",
        text(&r)
    );
    assert!(!tmp.path().join("o5").exists(), "nothing written on error");
    let r = build(&bad, &b126, &tmp.path().join("o6"), &[]);
    assert!(r.status.success(), "{}", text(&r));
}

/// operator-registry v1.73 `pkg/cache/json_test.go`: `TestJSON_StableDigest` (validFS's JSON
/// cache digest, the same `9adad9ff6cf54e4f` at v1.26.5 and v1.73.0, "DO NOT CHANGE") for the
/// cache as v1.26 and as current opm write it; `TestJSON_CheckIntegrity`'s five cases through
/// `catalog cache verify`.
#[test]
fn upstream_json_cache_tests() {
    let valid = crate::support::fixtures::testdata("catalogs/opm-cache-valid");
    let model = ServeModel::from_dir(&valid).unwrap();
    // validFS is an fstest.MapFS: "." a folder of mode 0, its files of mode 0.
    let mapfs = |names: &[&str]| -> Vec<TreeEntry> {
        let mut t = vec![TreeEntry::dir(".", 0)];
        for n in names {
            let p = valid.join(n);
            let size = std::fs::metadata(&p).unwrap().len();
            t.push(TreeEntry::file(*n, 0, size, Content::Path(p)));
        }
        t
    };
    let tree = mapfs(&["cockroachdb.json", "etcd.json"]);
    let mut cases = 0;
    for opm in ["v1.26.5", "v1.73.0"] {
        let p = CacheProfile::for_opm(
            opm.parse().unwrap(),
            Some(olmpack::cache::CacheFormat::Json),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let s = olmpack::cache::write_cache_for(&model, &tree, dir.path(), p.semantics).unwrap();
        assert_eq!(
            s.digest, "9adad9ff6cf54e4f",
            "TestJSON_StableDigest as {opm}"
        );
        cases += 1;
    }
    // TestJSON_CheckIntegrity, on disk (the folder's own modes).
    let tmp = tempfile::tempdir().unwrap();
    let fbc = tmp.path().join("fbc");
    std::fs::create_dir_all(&fbc).unwrap();
    for f in ["cockroachdb.json", "etcd.json"] {
        std::fs::copy(valid.join(f), fbc.join(f)).unwrap();
    }
    let run = |catalog: &Path, cache: &Path| {
        let v = olmpack()
            .args(["catalog", "cache", "verify"])
            .arg(catalog)
            .arg("--cache-dir")
            .arg(cache)
            .args(["--opm-version", "v1.73.0"])
            .output()
            .unwrap();
        (v.status.code(), text(&v))
    };
    let write = |cache: &Path| {
        let tree = olmpack::gocompat::tar::tree_of_dir(&fbc, None).unwrap();
        olmpack::cache::write_cache(&model, &tree, cache).unwrap();
    };
    // "non-existent cache dir" and "empty cache dir": read existing cache digest.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, t) = run(&fbc, &empty);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("read existing cache digest"), "{t}");
    let (code, t) = run(&fbc, &tmp.path().join("absent"));
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("no such folder (--cache-dir)"), "{t}");
    cases += 2;
    // "valid cache dir".
    let cache = tmp.path().join("cache");
    write(&cache);
    let (code, t) = run(&fbc, &cache);
    assert_eq!(code, Some(0), "{t}");
    cases += 1;
    // "different FBC": badBundleFS against this cache.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::copy(valid.join("etcd.json"), bad.join("etcd.json")).unwrap();
    let (code, t) = run(&bad, &cache);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("cache requires rebuild"), "{t}");
    cases += 1;
    // "different cache": a file `foo` added to cache/.
    std::fs::write(cache.join("cache/foo"), "bar").unwrap();
    let (code, t) = run(&fbc, &cache);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("cache requires rebuild"), "{t}");
    assert!(t.contains("fit:     extra cache/foo"), "{t}");
    cases += 1;
    shared::cases_exactly("upstream JSON cache tests", cases, 7, 7);
}

/// operator-registry v1.73 `pkg/cache/meta_key_test.go` (`TestValidateMetaKeyComponent`,
/// `TestNewValidatedMetaKey`) and cache_test.go's `TestCache_ListPackageCustomSchemas*` on
/// both backends, as opm v1.69+ stores the blobs: what the JSON cache's `metas/` folders and
/// the pogreb `metas/` keys hold.
#[test]
fn upstream_meta_key_and_custom_schema_cases() {
    // A schema or package outside the pattern fails the build; an empty package is allowed.
    let cases: &[(&str, bool)] = &[
        ("my-schema", true),
        ("custom.operator.io", true),
        ("", false),
        ("..", false),
        ("../foo", false),
        ("foo/..", false),
        ("foo/bar", false),
        ("foo\\bar", false),
        ("..foo", false),
        ("foo..", true),
        (".", false),
        ("...", false),
        (".hidden", false),
        ("-flag", false),
        ("_private", false),
        ("my_schema", true),
        ("123", true),
        ("v1+beta", false),
        ("custom:v1", false),
        ("has space", false),
    ];
    let v169 = CacheProfile::for_opm("v1.69.0".parse().unwrap(), None).unwrap();
    let mut ran = 0;
    for (value, ok) in cases {
        for as_package in [false, true] {
            // TestNewValidatedMetaKey: an empty packageName is allowed, an empty schema not.
            if as_package && value.is_empty() {
                continue;
            }
            let (schema, package) = if as_package {
                ("custom.operator.io", *value)
            } else {
                (*value, "testpkg")
            };
            let dir = tempfile::tempdir().unwrap();
            let blob = json!({"schema": schema, "package": package, "name": "x"});
            let cat = format!(
                "{{\"schema\":\"olm.package\",\"name\":\"testpkg\",\"defaultChannel\":\"stable\"}}\n{{\"schema\":\"olm.channel\",\"package\":\"testpkg\",\"name\":\"stable\",\"entries\":[{{\"name\":\"testpkg.v1.0.0\"}}]}}\n{{\"schema\":\"olm.bundle\",\"name\":\"testpkg.v1.0.0\",\"package\":\"testpkg\",\"image\":\"quay.io/test/testpkg:v1.0.0\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"testpkg\",\"version\":\"1.0.0\"}}}}]}}\n{blob}\n"
            );
            std::fs::write(dir.path().join("catalog.json"), cat).unwrap();
            // An empty schema is no blob opm reads at all (the loader refuses it).
            let Ok(model) = ServeModel::from_dir(dir.path()) else {
                assert!(!ok, "{value:?} refused by the loader");
                ran += 1;
                continue;
            };
            for (format, label) in [
                (olmpack::cache::CacheFormat::Json, "json"),
                (olmpack::cache::CacheFormat::Pogreb, "pogreb"),
            ] {
                let built = match format {
                    olmpack::cache::CacheFormat::Json => olmpack::cache::write_cache_files_for(
                        &model,
                        &dir.path().join(label),
                        v169.semantics,
                    )
                    .map(|_| ()),
                    olmpack::cache::CacheFormat::Pogreb => {
                        olmpack::cache::pogreb::expected_entries_for(&model, v169.semantics)
                            .map(|_| ())
                    }
                };
                assert_eq!(
                    built.is_ok(),
                    *ok,
                    "{label}: schema {schema:?} package {package:?}: {built:?}"
                );
                // Before v1.69 opm ignores other schemas: never a failure.
                let old = Semantics {
                    metas: false,
                    ..Semantics::CURRENT
                };
                assert!(
                    olmpack::cache::pogreb::expected_entries_for(&model, old).is_ok(),
                    "{value:?}"
                );
                ran += 1;
            }
        }
    }
    shared::cases("meta key cases", ran, 70);

    // TestCache_ListPackageCustomSchemas and _PackagelessBlob on both backends.
    let custom = crate::support::fixtures::testdata("catalogs/custom-schemas");
    let model = ServeModel::from_dir(&custom).unwrap();
    let json_dir = tempfile::tempdir().unwrap();
    olmpack::cache::write_cache_files_for(&model, json_dir.path(), v169.semantics).unwrap();
    let in_json = |schema: &str, pkg: &str| -> usize {
        let d = json_dir.path().join("cache/metas").join(schema).join(pkg);
        std::fs::read_dir(&d).map(|r| r.count()).unwrap_or(0)
    };
    let entries = olmpack::cache::pogreb::expected_entries_for(&model, v169.semantics).unwrap();
    let in_pogreb = |schema: &str, pkg: &str| -> usize {
        let key = format!("metas/{schema}/{pkg}");
        let Some((_, v)) = entries.iter().find(|(k, _)| *k == key) else {
            return 0;
        };
        // 4-byte big-endian length-prefixed Structs.
        let (mut n, mut at) = (0, 0);
        while at + 4 <= v.len() {
            let len = u32::from_be_bytes(v[at..at + 4].try_into().unwrap()) as usize;
            at += 4 + len;
            n += 1;
        }
        n
    };
    for count in [&in_json as &dyn Fn(&str, &str) -> usize, &in_pogreb] {
        assert_eq!(count("custom.operator.io", "testpkg"), 2);
        assert_eq!(count("nonexistent.schema", "testpkg"), 0);
        assert_eq!(count("custom.operator.io", "nonexistent"), 0);
        assert_eq!(count("custom.packageless", ""), 1);
        assert_eq!(count("custom.packageless", "testpkg"), 0);
    }
    // Packageless blobs do not leak into the package index.
    assert_eq!(model.index().keys().collect::<Vec<_>>(), ["testpkg"]);
    // Before v1.69: no metas at all.
    let old = tempfile::tempdir().unwrap();
    let v126 = CacheProfile::for_opm("v1.26.5".parse().unwrap(), None).unwrap();
    olmpack::cache::write_cache_files_for(&model, old.path(), v126.semantics).unwrap();
    assert!(!old.path().join("cache/metas").exists());
}

/// The cache olmpack writes for opm v1.26 against opm v1.26.5's own answers (the shared
/// goldens, used as they are, not adjusted for current opm): every GetBundle answer is the
/// stored bundle with `replaces` and `skips` blanked, and every GetPackage answer the package
/// index's, so a cache whose files equal them makes opm v1.26.5 answer as on its own cache.
/// The cache with current content is counted against the same answers (SERVE.md's 820 of
/// 1,186 calls that differ come from these bundles).
#[test]
fn v1_26_cache_holds_opm_v1_26_5_answers() {
    let Some(catalogs) = shared::shared_catalogs("serve") else {
        return;
    };
    let v126 = CacheProfile::for_opm("v1.26.5".parse().unwrap(), None).unwrap();
    let (mut files, mut equal, mut current_differ, mut packages) = (0, 0, 0, 0);
    for (g, folder) in goldens(&catalogs) {
        let golden: Value = serde_json::from_slice(&std::fs::read(&g).unwrap()).unwrap();
        let model = ServeModel::from_dir(&folder).unwrap();
        let old = tempfile::tempdir().unwrap();
        let now = tempfile::tempdir().unwrap();
        olmpack::cache::write_cache_files_for(&model, old.path(), v126.semantics).unwrap();
        olmpack::cache::write_cache_files_for(&model, now.path(), Semantics::CURRENT).unwrap();
        let read = |base: &Path, name: &str| -> Value {
            let mut b: Value =
                serde_json::from_slice(&std::fs::read(base.join("cache").join(name)).unwrap())
                    .unwrap();
            let o = b.as_object_mut().unwrap();
            o.remove("replaces");
            o.remove("skips");
            canonical(b)
        };
        for gb in golden["getBundle"].as_array().unwrap() {
            let r = &gb["request"];
            let name = format!(
                "{}_{}_{}.json",
                r["pkgName"].as_str().unwrap(),
                r["channelName"].as_str().unwrap(),
                r["csvName"].as_str().unwrap()
            );
            let want = canonical(gb["response"].clone());
            assert_eq!(read(old.path(), &name), want, "{}: {name}", g.display());
            equal += 1;
            if read(now.path(), &name) != want {
                current_differ += 1;
            }
        }
        let index: Value =
            serde_json::from_slice(&std::fs::read(old.path().join("cache/packages.json")).unwrap())
                .unwrap();
        for gp in golden["getPackage"].as_array().unwrap() {
            let p = &index[gp["request"]["name"].as_str().unwrap()];
            let channels: Vec<Value> = p["Channels"]
                .as_object()
                .unwrap()
                .values()
                .map(|c| json!({"csvName": c["Head"], "name": c["Name"]}))
                .collect();
            assert_eq!(
                json!({"channels": channels, "defaultChannelName": p["defaultChannel"], "name": p["name"]}),
                gp["response"],
                "{}",
                g.display()
            );
            packages += 1;
        }
        files += 1;
    }
    eprintln!(
        "v1.26 cache: {files} golden files, {equal} GetBundle answers equal to opm v1.26.5's, {packages} GetPackage; the current-content cache differs on {current_differ} of them"
    );
    shared::cases("v1.26 cache golden files", files, 63);
    assert!(current_differ > 0 && current_differ < equal);
}

/// olmpack's own server started on each cache layout (`catalog serve --cache-dir`, which checks
/// the cache as opm does before serving) and checked by Python grpcio with operator-registry's
/// `TestExperimentalListPackageCustomSchemas` cases: JSON as opm v1.26 and v1.69 write it,
/// pogreb as v1.41 and v1.69 write it. A cache of another catalog is refused at start.
#[test]
fn olmpack_serve_on_every_cache_layout() {
    if !shared::python_grpc_ready() {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let custom = root.join("testdata/catalogs/custom-schemas");
    let model = ServeModel::from_dir(&custom).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for opm in ["v1.26.5", "v1.69.0", "v1.41.0"] {
        for format in [
            olmpack::cache::CacheFormat::Json,
            olmpack::cache::CacheFormat::Pogreb,
        ] {
            let v: OpmVersion = opm.parse().unwrap();
            let Ok(p) = CacheProfile::for_opm(v, Some(format)) else {
                continue; // pogreb for v1.26
            };
            let base = tmp.path().join(format!("{opm}-{format:?}"));
            let tree = olmpack::gocompat::tar::tree_of_dir(&custom, None).unwrap();
            match format {
                olmpack::cache::CacheFormat::Json => {
                    olmpack::cache::write_cache_for(&model, &tree, &base, p.semantics).map(|_| ())
                }
                olmpack::cache::CacheFormat::Pogreb => {
                    olmpack::cache::pogreb::write_pogreb_cache_for(
                        &model,
                        &custom,
                        &base,
                        p.semantics,
                    )
                    .map(|_| ())
                }
            }
            .unwrap();
            let out = Command::new(PYTHON)
                .arg(root.join("tests/support/serve_client.py"))
                .arg("experimental")
                .arg(env!("CARGO_BIN_EXE_olmpack"))
                .arg(&custom)
                .arg(root.join("proto/registry.proto"))
                .arg("--cache-dir")
                .arg(&base)
                .output_within(LIMIT)
                .expect("run python client");
            assert!(out.status.success(), "{opm} {format:?}: {}", text(&out));
            let r: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                r["FBCCacheWithCustomSchemas"].as_array().map(Vec::len),
                Some(2),
                "{opm} {format:?}: {r}"
            );
            assert_eq!(r["FBCCachePackageless"].as_array().map(Vec::len), Some(1));
            assert_eq!(r["exitAfterSigterm"], 0, "{r}");
            ran += 1;
        }
    }
    shared::cases_exactly("serve on cache layouts", ran, 5, 5);
    // A cache of another catalog: refused at start, as opm refuses it.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(
        fit_catalog().join("catalog.yaml"),
        other.join("catalog.yaml"),
    )
    .unwrap();
    let r = olmpack()
        .args(["catalog", "serve"])
        .arg(&other)
        .args(["--addr", "127.0.0.1", "-p", "0", "--cache-dir"])
        .arg(tmp.path().join("v1.69.0-Json"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_ne!(r.status.code(), Some(0), "{}", text(&r));
    assert!(text(&r).contains("cache requires rebuild"), "{}", text(&r));
}

/// The base's opm is read as the image's final file system has it (review): a derived base
/// that deletes `/bin/opm` in an upper layer (a `.wh.opm` whiteout, made here by umoci's
/// repack after `rm`) runs `/usr/bin/opm`, so that one's version decides; the deleted v1.26.5
/// binary below used to be read. With no opm left at all (the whole `/bin` folder removed),
/// the version is unknown.
#[test]
fn an_opm_deleted_in_an_upper_layer_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(opm126) = fake_opm(tmp.path(), "v1.26.5") else {
        return;
    };
    let opm173 = fake_opm(tmp.path(), "v1.73.0").unwrap();
    // One layer: /bin/opm v1.26.5 and /usr/bin/opm v1.73.0 (entrypoint /bin/opm).
    let dir = tmp.path().join("derived");
    let b = base(&dir, None);
    let image = format!("{}:v1", dir.display());
    let bundle = tmp.path().join("derived.bundle");
    std::fs::remove_dir_all(&bundle).unwrap();
    umoci(&["unpack", "--image", &image, bundle.to_str().unwrap()]);
    let usr_bin = bundle.join("rootfs/usr/bin");
    std::fs::create_dir_all(&usr_bin).unwrap();
    std::fs::copy(&opm173, usr_bin.join("opm")).unwrap();
    std::fs::copy(&opm126, bundle.join("rootfs/bin/opm")).unwrap();
    umoci(&["repack", "--image", &image, bundle.to_str().unwrap()]);
    std::fs::remove_dir_all(&bundle).unwrap();
    // The layer above: /bin/opm deleted.
    umoci(&["unpack", "--image", &image, bundle.to_str().unwrap()]);
    std::fs::remove_file(bundle.join("rootfs/bin/opm")).unwrap();
    umoci(&["repack", "--image", &image, bundle.to_str().unwrap()]);
    std::fs::remove_dir_all(&bundle).unwrap();
    let r = build(&fit_catalog(), &b, &tmp.path().join("o1"), &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("serve cache for opm v1.73.0 (")
            && text(&r).contains("/usr/bin/opm (its build information's link flag"),
        "{}",
        text(&r)
    );

    // Only /bin/opm, then the whole /bin folder removed above it: no opm left.
    let dir = tmp.path().join("gone");
    let b = base(&dir, Some(&opm126));
    let image = format!("{}:v1", dir.display());
    let bundle = tmp.path().join("gone.bundle");
    std::fs::remove_dir_all(&bundle).unwrap();
    umoci(&["unpack", "--image", &image, bundle.to_str().unwrap()]);
    std::fs::remove_dir_all(bundle.join("rootfs/bin")).unwrap();
    umoci(&["repack", "--image", &image, bundle.to_str().unwrap()]);
    let r = build(&fit_catalog(), &b, &tmp.path().join("o2"), &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("serve cache for opm of unknown version ("),
        "{}",
        text(&r)
    );
}

/// A crafted pogreb index in a catalog image (review: the cache reads had no total cap): one
/// 4 MiB record, and all 31 slots of the first bucket pointing at it. `DB.Items` copied the
/// value once per slot (31 times the files' size; with more buckets, without bound) in both
/// `cache verify`'s integrity check and the fit check. Now an index whose slots name more bytes
/// than the log segments hold is refused as damaged before anything is copied.
#[test]
fn a_pogreb_index_naming_one_record_many_times_is_refused() {
    use olmpack::gocompat::pogreb::Writer;
    let tmp = tempfile::tempdir().unwrap();
    let b = base(&tmp.path().join("base"), None);
    let out = tmp.path().join("out");
    let r = build(&fit_catalog(), &b, &out, &["--cache-format", "pogreb"]);
    assert!(r.status.success(), "{}", text(&r));
    let bundle = tmp.path().join("out.bundle");
    let image = format!("{}:v1", out.display());
    umoci(&["unpack", "--image", &image, bundle.to_str().unwrap()]);
    let db = bundle.join("rootfs/tmp/cache/pogreb.v1/db");
    assert!(
        db.join("main.pix").is_file(),
        "no pogreb database in the image"
    );
    for e in std::fs::read_dir(&db).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let mut w = Writer::new(7);
    w.put(b"big", &vec![b'x'; 4 << 20]).unwrap();
    w.write_to(&db, 0o644).unwrap();
    let main = db.join("main.pix");
    let mut pix = std::fs::read(&main).unwrap();
    let slot: Vec<u8> = pix[512..528].to_vec();
    for i in 1..31 {
        pix[512 + i * 16..512 + i * 16 + 16].copy_from_slice(&slot);
    }
    std::fs::write(&main, &pix).unwrap();
    umoci(&["repack", "--image", &image, bundle.to_str().unwrap()]);
    let (code, t) = verify(&out, &["--opm-version", "v1.73.0"]);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains("opm cannot read the pogreb database")
            && t.contains("the index's slots name more bytes than the log segments hold"),
        "{t}"
    );
}
