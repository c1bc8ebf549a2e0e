//! Delta mirror archives (`catalog mirror --to-archive DIR --since PREVIOUS`, applied with
//! `--from-archive`) against real loopback registries (`docker-registry`), checked with skopeo
//! and curl.
//!
//! The source: four versions of a catalog folder whose images (pushed to a source registry)
//! share one large base layer; each version adds an image, one moves a tag to a new image and
//! one drops an image. A full archive of version 1 and three deltas (the second written from
//! the plan file alone) are applied in order into an empty registry: every image of the last
//! plan has the digest a direct mirror of version 4 gives, and the registry holds the same
//! repositories plus the one dropped. A gap, a wrong order, a tampered blob and a plan that
//! names a blob its chain does not hold are refused, with nothing pushed.

use super::copy::{client, silent, skopeo_raw};
use crate::support::json::strings;
use crate::support::registry::{Mode, Registry, sha256};
use olmpack::registry::push;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A mirror run (support's, three minutes to finish): its exit code and stderr, where the
/// delta's report is.
fn run(args: &[&str], cwd: &Path) -> (i32, String) {
    let (code, _, err) = crate::support::mirror::run(args, cwd);
    (code, err)
}

/// 256 KiB that gzip cannot shrink: the base layer every image shares.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u8
        })
        .collect()
}

/// Pushes `repo:tag` (the shared base layer and one of its own) to the source; its reference.
fn push_app(src: &Registry, d: &Path, repo: &str, tag: &str, base: &[u8]) -> String {
    let sub = d.join(format!("img-{}-{tag}", repo.replace('/', "-")));
    std::fs::create_dir_all(&sub).expect("mkdir");
    let own = format!("{repo}:{tag}\n").repeat(200);
    let image = crate::support::registry::image_from_layers(
        &sub,
        &[vec![("base.bin", base)], vec![("own.txt", own.as_bytes())]],
        json!({}),
        json!({}),
    );
    push::push_image(
        &client(&src.host),
        &image,
        repo,
        &[tag.to_string()],
        &silent(),
    )
    .expect("push");
    format!("{}/{repo}:{tag}", src.host)
}

/// A catalog folder: one package `op` whose one bundle names `bundle` and relates `related`.
fn write_catalog(dir: &Path, bundle: &str, related: &[&String]) {
    let related = related.iter().map(|r| r.to_string()).collect();
    crate::support::mirror::write_catalog(dir, &[("op", bundle, related)]);
}

fn repositories(host: &str) -> BTreeSet<String> {
    let out = std::process::Command::new("curl")
        .args(["-sf", &format!("http://{host}/v2/_catalog")])
        .output()
        .expect("curl");
    let v: Value = serde_json::from_slice(&out.stdout).expect("catalog json");
    strings(&v["repositories"])
}

fn plan(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("plan.json")).expect("plan")).expect("json")
}

fn plan_digest(dir: &Path) -> String {
    sha256(&std::fs::read(dir.join("plan.json")).expect("plan"))
}

/// The blob files of an archive's layout, by digest, with their sizes.
fn blob_files(dir: &Path) -> BTreeMap<String, u64> {
    let blobs = dir.join("oci/blobs/sha256");
    std::fs::read_dir(&blobs)
        .expect("blobs")
        .map(|e| {
            let e = e.expect("entry");
            (
                format!("sha256:{}", e.file_name().to_string_lossy()),
                e.metadata().expect("meta").len(),
            )
        })
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .args(["-r", &from.display().to_string(), &to.display().to_string()])
        .status()
        .expect("cp");
    assert!(status.success());
}

struct Chain {
    _src: Registry,
    dir: tempfile::TempDir,
    /// A1 (full), A2, A3, A4 (deltas).
    archives: Vec<PathBuf>,
    /// The last catalog folder.
    last: PathBuf,
    base_layer: String,
}

/// Four catalog versions on a source registry; a full archive of the first and a delta of
/// each next one (A3 written from A2's plan file alone).
fn chain() -> Option<Chain> {
    if !crate::support::shared::tool("skopeo", "skopeo") {
        return None;
    }
    let src = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let base = noise(7, 256 << 10);
    let bundle = push_app(&src, d, "bundles/op", "v1", &base);
    let a1 = push_app(&src, d, "apps/a", "v1", &base);
    let b1 = push_app(&src, d, "apps/b", "v1", &base);
    let c1 = push_app(&src, d, "apps/c", "v1", &base);
    let d1 = push_app(&src, d, "apps/d", "v1", &base);
    let a2 = push_app(&src, d, "apps/a", "v2", &base);
    let e1 = push_app(&src, d, "apps/e", "v1", &base);
    let versions: [Vec<&String>; 4] = [
        vec![&a1, &b1],
        vec![&a1, &b1, &c1],      // adds c
        vec![&a1, &c1, &d1],      // adds d, drops b
        vec![&a2, &c1, &d1, &e1], // a moves to a new image, adds e
    ];
    let mut archives: Vec<PathBuf> = Vec::new();
    let mut last = PathBuf::new();
    for (i, related) in versions.iter().enumerate() {
        let folder = d.join(format!("catalog-v{}", i + 1));
        write_catalog(&folder, &bundle, related);
        let archive = d.join(format!("A{}", i + 1));
        let archive_s = archive.display().to_string();
        let folder_s = folder.display().to_string();
        let mut args = vec![
            "catalog",
            "mirror",
            &folder_s,
            "--catalog-name",
            "olm/catalog:latest",
            "--to-archive",
            &archive_s,
        ];
        // The second delta is written from its predecessor's plan file alone.
        let since = match i {
            0 => None,
            2 => Some(archives[1].join("plan.json").display().to_string()),
            _ => Some(archives[i - 1].display().to_string()),
        };
        if let Some(since) = &since {
            args.extend(["--since", since.as_str()]);
        }
        let (code, err) = run(&args, d);
        assert_eq!(code, 0, "writing A{}: {err}", i + 1);
        archives.push(archive);
        last = folder;
    }
    let base_layer = sha256(&gzip_of_base(&base));
    Some(Chain {
        _src: src,
        dir,
        archives,
        last,
        base_layer,
    })
}

/// The digest of the base layer as the fixture builds it (the same gzip tar).
fn gzip_of_base(base: &[u8]) -> Vec<u8> {
    crate::support::registry::gzip_tar(&[("base.bin", base)])
}

fn apply(archive: &Path, to: &str, d: &Path, results: &str) -> (i32, String) {
    run(
        &[
            "catalog",
            "mirror",
            "--from-archive",
            &archive.display().to_string(),
            "--to",
            to,
            "--results-dir",
            results,
        ],
        d,
    )
}

#[test]
fn three_deltas_applied_in_order_equal_a_direct_mirror() {
    let Some(c) = chain() else { return };
    let d = c.dir.path();
    let [a1, a2, a3, a4] = [0, 1, 2, 3].map(|i| c.archives[i].clone());
    // Each delta names its predecessor by the digest of its plan, not by its path.
    for (prev, next) in [(&a1, &a2), (&a2, &a3), (&a3, &a4)] {
        assert_eq!(
            plan(next)["archive"]["follows"],
            plan_digest(prev).as_str(),
            "{}",
            next.display()
        );
    }
    assert_eq!(
        plan(&a4)["archive"]["chain"].as_array().map(Vec::len),
        Some(3)
    );
    // The shared base layer is in the full archive only; no delta holds a blob an earlier
    // archive holds but manifests and configs (what opening a new image reads).
    assert!(blob_files(&a1).contains_key(&c.base_layer));
    let mut seen: BTreeMap<String, u64> = blob_files(&a1);
    for delta in [&a2, &a3, &a4] {
        let files = blob_files(delta);
        assert!(!files.contains_key(&c.base_layer), "{}", delta.display());
        let delta_plan = plan(delta);
        let carried: BTreeSet<&str> = delta_plan["archive"]["carries"]["blobs"]
            .as_object()
            .expect("carries")
            .keys()
            .map(String::as_str)
            .collect();
        for (digest, size) in &files {
            assert!(carried.contains(digest.as_str()), "{digest} unrecorded");
            assert!(
                !seen.contains_key(digest) || *size < 16 << 10,
                "{}: {digest} ({size} bytes) is in an earlier archive",
                delta.display()
            );
        }
        seen.extend(files);
    }
    // The plan of the last delta is the whole set: 6 images (catalog, bundle, a:v2, c, d, e).
    let images = plan(&a4)["images"].as_array().expect("images").clone();
    assert_eq!(images.len(), 6, "{images:#?}");

    // Applied in order into an empty registry.
    let chained = Registry::start(Mode::Plain);
    let to = format!("{}/m", chained.host);
    for (i, archive) in [&a1, &a2, &a3, &a4].iter().enumerate() {
        let (code, err) = apply(archive, &to, d, &format!("results-{i}"));
        assert_eq!(code, 0, "applying A{}: {err}", i + 1);
    }
    // A direct mirror of version 4.
    let direct = Registry::start(Mode::Plain);
    let to_direct = format!("{}/m", direct.host);
    let (code, err) = run(
        &[
            "catalog",
            "mirror",
            &c.last.display().to_string(),
            "--catalog-name",
            "olm/catalog:latest",
            "--to",
            &to_direct,
            "--results-dir",
            "direct-results",
        ],
        d,
    );
    assert_eq!(code, 0, "direct mirror: {err}");
    let report: Value = serde_json::from_slice(
        &std::fs::read(d.join("direct-results/report.json")).expect("report"),
    )
    .expect("json");
    let mut checked = 0;
    for image in report["images"].as_array().expect("images") {
        let target = image["target"].as_str().expect("target");
        let path = target.split_once('/').expect("host").1;
        let want = skopeo_raw(&format!("docker://{target}")).map(|b| sha256(&b));
        let got = skopeo_raw(&format!("docker://{}/{path}", chained.host)).map(|b| sha256(&b));
        assert_eq!(got, want, "{path}");
        assert_eq!(
            got.as_ref().ok(),
            image["digest"].as_str().map(str::to_string).as_ref()
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
    crate::support::shared::cases(
        "mirror delta chain images equal to a direct mirror",
        checked,
        6,
    );
    // The same repositories, plus the one version 3 dropped (deletions are not a delta's job).
    let chained_repos = repositories(&chained.host);
    let direct_repos = repositories(&direct.host);
    let extra: Vec<&String> = chained_repos.difference(&direct_repos).collect();
    assert_eq!(extra, ["m/apps/b"], "{chained_repos:?} vs {direct_repos:?}");
    assert!(direct_repos.is_subset(&chained_repos));
    // Applying the last delta again uploads nothing.
    let (code, err) = apply(&a4, &to, d, "results-again");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("blobs: 0 copied"), "{err}");
}

#[test]
fn a_gap_a_wrong_order_and_a_tampered_delta_are_refused_before_any_push() {
    let Some(c) = chain() else { return };
    let d = c.dir.path();
    let [a1, a2, a3] = [0, 1, 2].map(|i| c.archives[i].clone());
    // A delta applied to an empty registry: its predecessor (archive 1 of 1) is named.
    let empty = Registry::start(Mode::Plain);
    let (code, err) = apply(&a2, &format!("{}/m", empty.host), d, "r0");
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("archive 1 of 1") && err.contains(&plan_digest(&a1)),
        "{err}"
    );
    assert!(repositories(&empty.host).is_empty(), "something was pushed");

    // A gap: A1 applied, then A3 without A2. A2 is named by its plan digest.
    let reg = Registry::start(Mode::Plain);
    let to = format!("{}/m", reg.host);
    let (code, err) = apply(&a1, &to, d, "r1");
    assert_eq!(code, 0, "{err}");
    let after_full = repositories(&reg.host);
    // Applying `archive` fails naming every one of `needles`, and pushes nothing.
    let refused = |archive: &Path, results: &str, needles: &[&str]| {
        let (code, err) = apply(archive, &to, d, results);
        assert_ne!(code, 0, "{}: {err}", archive.display());
        for needle in needles {
            assert!(
                err.contains(needle),
                "{}: no {needle:?} in {err}",
                archive.display()
            );
        }
        assert_eq!(
            repositories(&reg.host),
            after_full,
            "{} pushed something",
            archive.display()
        );
    };
    refused(
        &a3,
        "r2",
        &["archive 2 of 2", &plan_digest(&a2), "nothing was pushed"],
    );

    // A tampered layer of A2 (a gzip blob, same size, one byte changed): refused, naming
    // the file.
    let tampered = d.join("A2-tampered");
    copy_tree(&a2, &tampered);
    let blobs = tampered.join("oci/blobs/sha256");
    let path = blob_files(&tampered)
        .keys()
        .map(|digest| blobs.join(digest.trim_start_matches("sha256:")))
        .find(|p| std::fs::read(p).is_ok_and(|b| b.starts_with(&[0x1f, 0x8b])))
        .expect("a layer in the delta");
    let mut bytes = std::fs::read(&path).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, bytes).expect("write");
    refused(&tampered, "r3", &[&path.display().to_string(), "altered"]);

    // A delta whose plan no longer records where the shared layer is: refused by name.
    let unrecorded = d.join("A2-unrecorded");
    copy_tree(&a2, &unrecorded);
    let mut p = plan(&unrecorded);
    let removed = p["archive"]["chain"][0]["blobs"]
        .as_object_mut()
        .expect("blobs")
        .remove(&c.base_layer);
    assert!(removed.is_some(), "the chain records the base layer");
    std::fs::write(
        unrecorded.join("plan.json"),
        serde_json::to_vec_pretty(&p).expect("json"),
    )
    .expect("write");
    refused(
        &unrecorded,
        "r4",
        &[&c.base_layer, "neither this archive nor"],
    );

    // In order, A2 then A3 go in.
    for (archive, results) in [(&a2, "r5"), (&a3, "r6")] {
        let (code, err) = apply(archive, &to, d, results);
        assert_eq!(code, 0, "{err}");
    }
}

#[test]
fn since_mistakes_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join("cat")).expect("mkdir");
    // `catalog mirror cat TARGET-FLAG TARGET --since SINCE`: a usage error (exit 2), its stderr.
    let usage_error = |target: [&str; 2], since: &str| {
        let (code, err) = run(
            &[
                "catalog", "mirror", "cat", target[0], target[1], "--since", since,
            ],
            d,
        );
        assert_eq!(code, 2, "--since {since}: {err}");
        err
    };
    // A mistyped PREVIOUS is named before anything is created.
    let err = usage_error(["--to-archive", "new"], "no-such-archive");
    assert!(err.contains("no-such-archive"), "{err}");
    assert!(!d.join("new").exists());
    // A plan file that is not a plan: its line named.
    std::fs::write(d.join("plan.json"), "{\n \"source\": 3\n}\n").expect("write");
    let err = usage_error(["--to-archive", "new"], "plan.json");
    assert!(err.contains("plan.json") && err.contains("line 2"), "{err}");
    // --since goes with --to-archive only.
    let err = usage_error(["--to", "127.0.0.1:1/x"], "a");
    assert!(err.contains("--to-archive"), "{err}");
}
