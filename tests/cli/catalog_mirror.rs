//! `olmpack catalog mirror` against real loopback registries (`docker-registry`), checked with
//! skopeo and the written files parsed back.
//!
//! The fixture: bundle images that olmpack built from two real bundle folders of
//! `../shared/corpus/` and pushed to a "source" registry; three small two-platform related
//! images pushed there too (one named by tag, two by digest, one of those with a cosign-style
//! `.sig` tag); a catalog (the bundles rendered by olmpack, their relatedImages pointed at
//! those images, one bundle named by digest and one by tag) built by olmpack into a catalog
//! image on the source. Tests: the plan (`--dry-run` copies nothing), the mirror (every digest
//! equal at the target, the `.sig` along, results YAML parsed back, opm renders the mirrored
//! catalog when /work/tools/opm or opm on PATH exists), the re-run (no blob uploaded, seen by a
//! proxy in front of the target), faults (dropped connections, 500s, a truncated blob: the
//! first run fails some images, the re-run completes), the archive round trip (the source
//! registry stopped before pushing the archive), and a layer shared by several images (uploaded
//! once, mounted into the other repositories; declined mounts fall back to uploads).

use super::copy::{client, platform_index, sig_tag, signature_for, silent, skopeo_raw};
use crate::support::mirror::{registry_catalog, run, write_catalog};
use crate::support::proc::Bounded;
use crate::support::registry::{Fault, Mode, Proxy, Registry, sha256};
use olmpack::image::ImageIndex;
use olmpack::registry::push;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Fixture {
    src: Registry,
    dir: tempfile::TempDir,
    /// `S/olm/catalog:v1`.
    catalog: String,
    /// Every image the catalog needs, as the catalog names it, with its digest.
    images: Vec<(String, String)>,
    /// The digest of the signed related index and of its signature.
    signed: (String, String),
}

/// Two bundle folders of the corpus that pass validation (two ACK controllers: small, and
/// their CSVs' alm-examples parse as JSON, which opm render requires of a catalog image).
fn corpus_bundles(corpus: &Path) -> Vec<PathBuf> {
    let verdicts =
        std::fs::read_to_string(corpus.join("REFERENCE-VERDICTS.tsv")).expect("verdicts");
    let picked: Vec<PathBuf> = verdicts
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            let (name, verdict) = (f.next()?, f.next()?);
            (verdict == "pass" && name.starts_with("ack-"))
                .then(|| corpus.join("bundles").join(name))
        })
        .filter(|p| p.join("manifests").is_dir())
        .take(2)
        .collect();
    crate::support::shared::cases("catalog mirror corpus bundles", picked.len(), 2);
    picked
}

/// A two-platform index whose layers depend on `seed` (so each related image is distinct).
fn related_index(dir: &Path, seed: usize) -> ImageIndex {
    let sub = dir.join(format!("rel{seed}"));
    std::fs::create_dir_all(&sub).expect("mkdir");
    platform_index(&sub, 1000 + seed * 97, 1500 + seed * 89)
}

fn fixture() -> Option<Fixture> {
    let corpus = crate::support::shared::shared_corpus()?;
    if !crate::support::shared::tool("skopeo", "skopeo") {
        return None;
    }
    let src = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // Related images: a by tag, b by digest, c by digest and signed.
    let c = client(&src.host);
    let mut related = Vec::new();
    let mut signed = (String::new(), String::new());
    for (seed, (repo, by_digest)) in [("rel/a", false), ("rel/b", true), ("rel/c", true)]
        .into_iter()
        .enumerate()
    {
        let index = related_index(d, seed);
        push::push_index(&c, &index, repo, &["v1".to_string()], &silent()).expect("push index");
        let digest = index.index.descriptor.digest.clone();
        if repo == "rel/c" {
            let sig = signature_for(&digest);
            push::push_image(&c, &sig, repo, &[sig_tag(&digest)], &silent()).expect("push sig");
            signed = (digest.clone(), sig.manifest.descriptor.digest.clone());
        }
        let name = if by_digest {
            format!("{}/{repo}@{digest}", src.host)
        } else {
            format!("{}/{repo}:v1", src.host)
        };
        related.push((name, digest));
    }
    // Bundle images built by olmpack from real bundle folders, then the catalog.
    let catalog_dir = d.join("catalog");
    let mut images = related.clone();
    for (i, bundle) in corpus_bundles(&corpus).iter().enumerate() {
        let ver = bundle.file_name().unwrap().to_string_lossy().to_string();
        let pkg = bundle
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let tagged = format!("{}/bundles/{pkg}:{ver}", src.host);
        let (code, out, err) = run(
            &[
                "bundle",
                "build",
                "--no-validate",
                "--push",
                "-t",
                &tagged,
                "--output",
                &format!("oci:{}", d.join(format!("b{i}")).display()),
                &bundle.display().to_string(),
            ],
            d,
        );
        assert_eq!(code, 0, "bundle build {}: {err}", bundle.display());
        let digest = out.split_whitespace().next().expect("digest").to_string();
        let (code, rendered, err) = run(
            &[
                "catalog",
                "render",
                &tagged,
                "-o",
                "json",
                "--migrate-level",
                "bundle-object-to-csv-metadata",
            ],
            d,
        );
        assert_eq!(code, 0, "render {tagged}: {err}");
        let mut blobs: Vec<Value> = serde_json::Deserializer::from_str(&rendered)
            .into_iter::<Value>()
            .map(|v| v.expect("json"))
            .collect();
        let bundle_blob = blobs
            .iter_mut()
            .find(|b| b["schema"] == "olm.bundle")
            .expect("olm.bundle");
        // One bundle named by digest, the other by tag.
        let image = if i == 0 {
            format!("{}/bundles/{pkg}@{digest}", src.host)
        } else {
            tagged.clone()
        };
        bundle_blob["image"] = json!(image);
        let mut rel: Vec<Value> = related
            .iter()
            .enumerate()
            .map(|(n, (r, _))| json!({"name": format!("r{n}"), "image": r}))
            .collect();
        rel.push(json!({"name": "", "image": image}));
        bundle_blob["relatedImages"] = json!(rel);
        let name = bundle_blob["name"].clone();
        let package = bundle_blob["package"]
            .as_str()
            .expect("package")
            .to_string();
        images.push((image, digest));
        let mut text = String::new();
        for v in [
            json!({"schema": "olm.package", "name": package, "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": package, "name": "stable", "entries": [{"name": name}]}),
        ]
        .iter()
        .chain(blobs.iter())
        {
            text.push_str(&serde_json::to_string_pretty(v).expect("json"));
            text.push('\n');
        }
        let pdir = catalog_dir.join(&package);
        std::fs::create_dir_all(&pdir).expect("mkdir");
        std::fs::write(pdir.join("catalog.json"), text).expect("write catalog");
    }
    let catalog = format!("{}/olm/catalog:v1", src.host);
    let (code, out, err) = run(
        &[
            "catalog",
            "build",
            &catalog_dir.display().to_string(),
            "--push",
            "-t",
            &catalog,
            "--platform",
            "linux/amd64",
            "--platform",
            "linux/arm64",
            "--output",
            &format!("oci:{}", d.join("catimg").display()),
        ],
        d,
    );
    assert_eq!(code, 0, "catalog build: {err}");
    let catalog_digest = out.split_whitespace().next().expect("digest").to_string();
    images.push((catalog.clone(), catalog_digest));
    Some(Fixture {
        src,
        dir,
        catalog,
        images,
        signed,
    })
}

fn raw_digest(reference: &str) -> Result<String, String> {
    skopeo_raw(&format!("docker://{reference}")).map(|b| sha256(&b))
}

fn report(results: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(results.join("report.json")).expect("report"))
        .expect("report json")
}

/// Every image of the fixture is at the target report names, with the source's digest.
fn assert_all_mirrored(expected: &[(String, String)], report: &Value) -> usize {
    let images = report["images"].as_array().expect("images");
    assert_eq!(images.len(), expected.len(), "{report:#}");
    let mut checked = 0;
    for (source, digest) in expected {
        let entry = images
            .iter()
            .find(|i| i["source"] == source.as_str())
            .unwrap_or_else(|| panic!("{source} missing from the report"));
        assert_eq!(entry["digest"], digest.as_str(), "{entry:#}");
        let target = entry["target"].as_str().expect("target");
        assert_eq!(raw_digest(target).expect("skopeo"), *digest, "{target}");
        checked += 1;
    }
    checked
}

#[test]
fn plan_mirror_results_and_resume() {
    let Some(f) = fixture() else { return };
    let dst = Registry::start(Mode::Plain);
    let d = f.dir.path();
    let to = format!("{}/mirror", dst.host);
    // The plan: every image, nothing copied.
    let (code, plan, err) = run(
        &["catalog", "mirror", &f.catalog, "--to", &to, "--dry-run"],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        plan.contains(&format!(
            "total: {} images (1 catalog, 2 bundles, 3 related)",
            f.images.len()
        )),
        "{plan}"
    );
    let derived = format!("mirror-{}", &f.signed.0[7..39]);
    assert!(
        plan.contains(&format!("{to}/rel/c:{derived}")),
        "digest-only images get the derived tag: {plan}"
    );
    assert!(
        registry_catalog(&dst.host).is_empty(),
        "--dry-run copied something"
    );
    assert!(!d.join("mirror-results").exists());

    // The mirror.
    let (code, _, err) = run(
        &["catalog", "mirror", &f.catalog, "--to", &to, "-j", "4"],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("mirrored 6 images: 6 copied"), "{err}");
    let results = d.join("mirror-results");
    let r = report(&results);
    let checked = assert_all_mirrored(&f.images, &r);
    crate::support::shared::cases("catalog mirror images checked with skopeo", checked, 6);
    // The signature came along.
    let sig = raw_digest(&format!("{to}/rel/c:{}", sig_tag(&f.signed.0))).expect("sig at target");
    assert_eq!(sig, f.signed.1);
    // The results, parsed back.
    let mapping = std::fs::read_to_string(results.join("mapping.txt")).expect("mapping");
    assert_eq!(mapping.lines().count(), 6, "{mapping}");
    for (source, _) in &f.images {
        assert!(
            mapping.contains(&format!("{source}={}", dst.host)),
            "{mapping}"
        );
    }
    let parse = |name: &str| -> Value {
        let text = std::fs::read_to_string(results.join(name)).expect(name);
        let docs = olmpack::yaml::parse_stream(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(docs.len(), 1, "{name}");
        docs[0].root.to_json()
    };
    let idms = parse("idms.yaml");
    assert_eq!(idms["kind"], "ImageDigestMirrorSet");
    let mirrors = idms["spec"]["imageDigestMirrors"]
        .as_array()
        .expect("mirrors");
    let src_host = &f.src.host;
    assert!(
        mirrors
            .iter()
            .any(|m| m["source"] == format!("{src_host}/rel/c")
                && m["mirrors"][0] == format!("{to}/rel/c")),
        "{idms:#}"
    );
    let itms = parse("itms.yaml");
    assert!(
        itms["spec"]["imageTagMirrors"]
            .as_array()
            .expect("tag mirrors")
            .iter()
            .any(|m| m["source"] == format!("{src_host}/rel/a")),
        "{itms:#}"
    );
    let catalog_digest = &f.images.last().expect("catalog").1;
    let pinned = format!("{to}/olm/catalog@{catalog_digest}");
    let cs = parse("catalogsource.yaml");
    assert_eq!(cs["kind"], "CatalogSource");
    assert_eq!(cs["spec"]["image"], pinned.as_str());
    let cc = parse("clustercatalog.yaml");
    assert_eq!(cc["spec"]["source"]["image"]["ref"], pinned.as_str());
    // opm reads the mirrored catalog image (not in CI: opm is not installed there).
    let opm = ["/work/tools/opm", "opm"]
        .into_iter()
        .find_map(crate::support::shared::find_program);
    match opm {
        Some(opm) => {
            let out = std::process::Command::new(opm)
                .args(["render", "--use-http", &pinned, "-o", "json"])
                .succeeds();
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                text.matches("\"schema\": \"olm.bundle\"").count(),
                2,
                "{text}"
            );
        }
        None => eprintln!("SKIPPED: opm render of the mirrored catalog (no opm)"),
    }

    // --filter on the catalog image: one package kept, the catalog rebuilt (a new digest),
    // only the images of the kept bundle (and the related images it names) mirrored.
    let first_pkg = f.images[3]
        .0
        .split("/bundles/")
        .nth(1)
        .expect("bundle")
        .split(['@', ':'])
        .next()
        .expect("pkg")
        .to_string();
    std::fs::write(
        d.join("filter.yaml"),
        format!("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: {first_pkg}\n"),
    )
    .expect("write filter");
    let filtered_to = format!("{}/filtered", dst.host);
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            &f.catalog,
            "--to",
            &filtered_to,
            "--filter",
            "filter.yaml",
            "--results-dir",
            "filtered-results",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    let fr = report(&d.join("filtered-results"));
    let kinds: Vec<&str> = fr["images"]
        .as_array()
        .expect("images")
        .iter()
        .filter_map(|i| i["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["catalog", "bundle", "related", "related", "related"],
        "{fr:#}"
    );
    let filtered_catalog = fr["images"][0]["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    assert_ne!(
        &filtered_catalog, catalog_digest,
        "the filtered catalog is a new image"
    );
    let (code, rendered, err) = run(
        &[
            "catalog",
            "render",
            &format!("{filtered_to}/olm/catalog@{filtered_catalog}"),
            "-o",
            "json",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rendered.matches("\"schema\": \"olm.package\"").count(),
        1,
        "{rendered}"
    );
    assert!(rendered.contains(&first_pkg), "{rendered}");

    // A re-run over a complete target: every image present, no blob uploaded (counted by a
    // proxy in front of the target, which the re-run is pointed at with the same names).
    let uploads = Arc::new(AtomicUsize::new(0));
    let seen = uploads.clone();
    let proxy = Proxy::start(dst.port, move |s, _| {
        if s.method == "POST"
            || s.method == "PATCH"
            || (s.method == "PUT" && s.path.contains("/blobs/"))
        {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        Fault::Pass
    });
    let via_proxy = format!("{}/mirror", proxy.host());
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            &f.catalog,
            "--to",
            &via_proxy,
            "--results-dir",
            "again",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("blobs: 0 copied"), "{err}");
    assert_eq!(uploads.load(Ordering::SeqCst), 0, "a re-run uploaded blobs");
    // The same results folder: every image recognised as present without copying.
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            &f.catalog,
            "--to",
            &via_proxy,
            "--results-dir",
            "again",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("6 already present"), "{err}");
    assert_eq!(uploads.load(Ordering::SeqCst), 0);
}

#[test]
fn faults_then_resume_and_archive_round_trip() {
    let Some(f) = fixture() else { return };
    let d = f.dir.path();
    let dst = Registry::start(Mode::Plain);
    let to = format!("{}/m", dst.host);
    // Faults on the images (not the catalog, which the plan must read): every 5th request a
    // 500, every 7th a dropped connection, the first layer blob of rel/b truncated.
    let faults = Arc::new(AtomicUsize::new(0));
    let count = faults.clone();
    let truncated = Arc::new(AtomicUsize::new(0));
    let trunc = truncated.clone();
    let proxy = Proxy::start(f.src.port, move |s, n| {
        if s.path.contains("/olm/catalog/") {
            return Fault::Pass;
        }
        if s.method == "GET"
            && s.path.contains("/rel/b/blobs/")
            && trunc.fetch_add(1, Ordering::SeqCst) == 0
        {
            count.fetch_add(1, Ordering::SeqCst);
            return Fault::Truncate;
        }
        if n % 5 == 4 {
            count.fetch_add(1, Ordering::SeqCst);
            return Fault::Status(500, vec![]);
        }
        if n % 7 == 6 {
            count.fetch_add(1, Ordering::SeqCst);
            return Fault::Drop;
        }
        Fault::Pass
    });
    // The catalog names the source registry; the proxy stands in for it through the
    // registries.conf rewriting.
    let conf = d.join("registries.conf");
    std::fs::write(
        &conf,
        format!(
            "[[registry]]\nlocation = \"{src}\"\n[[registry.mirror]]\nlocation = \"{proxy}\"\n",
            src = f.src.host,
            proxy = proxy.host()
        ),
    )
    .expect("write conf");
    let conf = conf.display().to_string();
    let proxied_catalog = f.catalog.replace(&f.src.host, &proxy.host());
    let (first, _, err1) = run(
        &[
            "catalog",
            "mirror",
            &proxied_catalog,
            "--to",
            &to,
            "--registries-conf",
            &conf,
            "--retries",
            "1",
            "-j",
            "2",
        ],
        d,
    );
    let r1 = report(&d.join("mirror-results"));
    let failed_first = r1["summary"]["failed"].as_u64().expect("failed");
    assert!(first == 0 || first == 1, "{err1}");
    assert_eq!(first == 1, failed_first > 0, "{err1}");
    // Re-runs (with retries) complete; each copies only what is missing.
    let mut runs = 1;
    let mut code = first;
    let mut err = err1.clone();
    while code != 0 && runs < 4 {
        let out = run(
            &[
                "catalog",
                "mirror",
                &proxied_catalog,
                "--to",
                &to,
                "--registries-conf",
                &conf,
            ],
            d,
        );
        code = out.0;
        err = out.2;
        runs += 1;
    }
    assert_eq!(code, 0, "after {runs} runs: {err}");
    eprintln!(
        "FAULTS: {} injected ({} truncated blob); first run: {failed_first} of 6 images failed; complete after {runs} runs",
        faults.load(Ordering::SeqCst),
        truncated.load(Ordering::SeqCst).min(1)
    );
    assert!(faults.load(Ordering::SeqCst) > 0, "no fault was injected");
    let r = report(&d.join("mirror-results"));
    // Sources are named as the catalog names them (the proxy was only where they were read);
    // the catalog as it was given on the command line.
    let mut expected = f.images.clone();
    if let Some(last) = expected.last_mut() {
        last.0 = proxied_catalog.clone();
    }
    assert_all_mirrored(&expected, &r);
    drop(proxy);

    // The archive: written from the source, written again (nothing new), then pushed with the
    // source registry stopped.
    let archive = d.join("archive");
    let archive_s = archive.display().to_string();
    let (code, _, err) = run(
        &["catalog", "mirror", &f.catalog, "--to-archive", &archive_s],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("6 copied"), "{err}");
    let (code, _, err) = run(
        &["catalog", "mirror", &f.catalog, "--to-archive", &archive_s],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("6 already present"),
        "second --to-archive: {err}"
    );
    // The source registry is stopped: the push reads only the archive.
    let Fixture {
        src,
        images,
        signed,
        dir,
        ..
    } = f;
    drop(src);
    let dst2 = Registry::start(Mode::Plain);
    let to2 = format!("{}/fromdisk", dst2.host);
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "--from-archive",
            &archive_s,
            "--to",
            &to2,
            "--results-dir",
            "disk-results",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let r = report(&dir.path().join("disk-results"));
    let checked = assert_all_mirrored(&images, &r);
    crate::support::shared::cases("catalog mirror archive round trip images", checked, 6);
    let sig = raw_digest(&format!("{to2}/rel/c:{}", sig_tag(&signed.0))).expect("sig from archive");
    assert_eq!(sig, signed.1);
}

#[test]
fn mistakes_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "./no-such-catalog",
            "--to",
            "127.0.0.1:1/x",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-catalog"), "{err}");
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "--from-archive",
            "missing-dir",
            "--to",
            "127.0.0.1:1/x",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is not a mirror archive") && err.contains("missing-dir"),
        "{err}"
    );
    std::fs::create_dir(d.join("cat")).expect("mkdir");
    let (code, _, err) = run(&["catalog", "mirror", "cat", "--to", "olm/namespace"], d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("registry host"), "{err}");
    std::fs::write(
        d.join("r.conf"),
        "[[registry]]\nlocation = \"a.io\"\nbogus = true\n",
    )
    .expect("write");
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "cat",
            "--to",
            "127.0.0.1:1/x",
            "--registries-conf",
            "r.conf",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("r.conf") && err.contains("bogus") && err.contains("line 3"),
        "{err}"
    );
}

/// `catalog mirror` of a catalog folder whose bundle and related images all share one layer.
fn write_shared_catalog(dir: &Path, bundle: &str, related: &[String]) {
    write_catalog(dir, &[("shared", bundle, related.to_vec())]);
}

/// A layer common to several images goes up once per run and is mounted into the other
/// repositories of the target (requests counted by a proxy in front of the target; every blob
/// then checked at the target itself with curl, every manifest digest with skopeo); when the
/// target declines the mounts, the images are uploaded as before and the run still succeeds.
#[test]
fn shared_layer_uploaded_once_then_mounted() {
    if !crate::support::shared::tool("skopeo", "skopeo") {
        return;
    }
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let c = client(&src.host);
    let base: Vec<(&str, &[u8])> = vec![("etc/os-release", b"ID=shared\n")];
    // (repository, manifest digest, its blobs)
    let mut images: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut shared: Option<String> = None;
    for n in 0..4 {
        let sub = d.join(format!("img{n}"));
        std::fs::create_dir_all(&sub).expect("mkdir");
        let own = format!("image {n}\n");
        let image = crate::support::registry::image_from_layers(
            &sub,
            &[base.clone(), vec![("own.txt", own.as_bytes())]],
            json!({}),
            json!({}),
        );
        let layer = image.layers[0].descriptor.digest.clone();
        assert_eq!(shared.get_or_insert(layer.clone()), &layer);
        let repo = if n == 0 {
            "bundles/shared".to_string()
        } else {
            format!("apps/app{n}")
        };
        push::push_image(&c, &image, &repo, &["v1".into()], &silent()).expect("push");
        let blobs = image
            .layers
            .iter()
            .chain([&image.config])
            .map(|b| b.descriptor.digest.clone())
            .collect();
        images.push((repo, image.manifest.descriptor.digest.clone(), blobs));
    }
    let shared = shared.expect("shared layer");
    let hex = &shared["sha256:".len()..];
    let related: Vec<String> = images[1..]
        .iter()
        .map(|(r, _, _)| format!("{}/{r}:v1", src.host))
        .collect();
    write_shared_catalog(
        &d.join("catalog"),
        &format!("{}/{}:v1", src.host, images[0].0),
        &related,
    );
    let decline = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = decline.clone();
    let proxy = Proxy::start(dst.port, move |s, _| {
        if flag.load(Ordering::SeqCst) && s.method == "POST" && s.path.contains("mount=") {
            Fault::Status(404, Vec::new())
        } else {
            Fault::Pass
        }
    });
    let at_target = |ns: &str| {
        let mut checked = 0;
        for (repo, digest, blobs) in &images {
            let target = format!("{}/{ns}/{repo}:v1", dst.host);
            assert_eq!(raw_digest(&target).expect("skopeo"), *digest, "{target}");
            for blob in blobs {
                let status = std::process::Command::new("curl")
                    .args(["-sfI", "-o", "/dev/null"])
                    .arg(format!("http://{}/v2/{ns}/{repo}/blobs/{blob}", dst.host))
                    .status()
                    .expect("curl");
                assert!(status.success(), "{blob} missing from {ns}/{repo}");
                checked += 1;
            }
        }
        checked
    };
    let uploads_of_shared = |ns: &str| {
        proxy
            .seen()
            .iter()
            .filter(|s| {
                s.method == "PUT"
                    && s.path.starts_with(&format!("/v2/{ns}/"))
                    && s.path.contains("/blobs/uploads/")
                    && s.path.contains(hex)
            })
            .count()
    };
    let mount_posts = |ns: &str| {
        proxy
            .seen()
            .iter()
            .filter(|s| {
                s.method == "POST"
                    && s.path.starts_with(&format!("/v2/{ns}/"))
                    && s.path.contains(&format!("mount={shared}"))
            })
            .count()
    };

    // One copy at a time: the first image with the layer uploads it, the three others mount it.
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "catalog",
            "--to",
            &format!("{}/m", proxy.host()),
            "-j",
            "1",
            "--results-dir",
            "r1",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        uploads_of_shared("m"),
        1,
        "the shared layer was uploaded more than once"
    );
    assert_eq!(mount_posts("m"), 3);
    let r = report(&d.join("r1"));
    let entries: Vec<&Value> = r["images"]
        .as_array()
        .expect("images")
        .iter()
        .filter(|i| i["kind"] != "catalog")
        .collect();
    assert_eq!(entries.len(), 4, "{r:#}");
    let copied: u64 = entries
        .iter()
        .filter_map(|i| i["blobs_copied"].as_u64())
        .sum();
    let skipped: u64 = entries
        .iter()
        .filter_map(|i| i["blobs_skipped"].as_u64())
        .sum();
    assert_eq!((copied, skipped), (9, 3), "{r:#}");
    assert_eq!(at_target("m"), 12);

    // Again into the complete target without the results: each image that the target holds at
    // the source's digest is one manifest HEAD there, no blob asked about (the catalog, built
    // from a folder, is a local source and is copied again: its blobs are found).
    let before = proxy.seen().len();
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "catalog",
            "--to",
            &format!("{}/m", proxy.host()),
            "--results-dir",
            "r1-fresh",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    let again: Vec<_> = proxy.seen()[before..].to_vec();
    let blob_heads = again
        .iter()
        .filter(|s| {
            s.method == "HEAD"
                && s.path.contains("/blobs/")
                && !s.path.starts_with("/v2/m/catalog/")
        })
        .count();
    assert_eq!(blob_heads, 0, "{again:?}");
    let manifest_heads = again
        .iter()
        .filter(|s| s.method == "HEAD" && s.path.contains("/manifests/v1"))
        .count();
    assert_eq!(manifest_heads, 4, "{again:?}");
    let writes: Vec<_> = again
        .iter()
        .filter(|s| s.method == "PUT" || s.method == "POST")
        .collect();
    assert!(
        writes
            .iter()
            .all(|s| s.path.starts_with("/v2/m/catalog/manifests/")),
        "{writes:?}"
    );
    let r = report(&d.join("r1-fresh"));
    let present = r["images"]
        .as_array()
        .expect("images")
        .iter()
        .filter(|i| i["kind"] != "catalog" && i["status"] == "present")
        .count();
    assert_eq!(present, 4, "{r:#}");

    // The target declines every mount: each repository gets the layer uploaded, nothing fails.
    decline.store(true, Ordering::SeqCst);
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            "catalog",
            "--to",
            &format!("{}/n", proxy.host()),
            "-j",
            "1",
            "--results-dir",
            "r2",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mount_posts("n"), 3, "the mounts were tried");
    assert_eq!(
        uploads_of_shared("n"),
        4,
        "a declined mount falls back to an upload"
    );
    assert_eq!(at_target("n"), 12);
}

/// Pushes `n` small images (a layer of their own each) to `src` as `apps/tls{i}:v1` plus a
/// bundle image, and writes a catalog folder naming them; returns (reference, digest) of each.
fn small_catalog(src: &Registry, d: &Path, n: usize) -> Vec<(String, String)> {
    let c = client(&src.host);
    let mut images = Vec::new();
    for i in 0..=n {
        let sub = d.join(format!("small{i}"));
        std::fs::create_dir_all(&sub).expect("mkdir");
        let own = format!("small image {i}\n");
        let image = crate::support::registry::image_from_layers(
            &sub,
            &[vec![("own.txt", own.as_bytes())]],
            json!({}),
            json!({}),
        );
        let repo = if i == 0 {
            "bundles/small".to_string()
        } else {
            format!("apps/small{i}")
        };
        push::push_image(&c, &image, &repo, &["v1".into()], &silent()).expect("push");
        images.push((
            format!("{}/{repo}:v1", src.host),
            image.manifest.descriptor.digest.clone(),
        ));
    }
    let related: Vec<String> = images[1..].iter().map(|(r, _)| r.clone()).collect();
    write_shared_catalog(&d.join("catalog"), &images[0].0, &related);
    images
}

/// `skopeo inspect --raw` of a reference on a TLS registry with Basic auth (verification off,
/// the test CA is not the system's): the digest of what it holds.
fn tls_digest(reference: &str) -> String {
    let creds = format!(
        "{}:{}",
        crate::support::registry::USER,
        crate::support::registry::PASSWORD
    );
    let out = std::process::Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", "--creds", &creds])
        .arg(format!("docker://{reference}"))
        .output()
        .expect("run skopeo");
    assert!(
        out.status.success(),
        "{reference}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    sha256(&out.stdout)
}

/// The TLS flags of both ends against a registry serving TLS with a certificate no system
/// trusts (the harness's own CA): without a flag the run fails and says the registry speaks
/// HTTPS; with the wrong CA it fails naming TLS; with `--dest-tls-verify=false` or the right
/// `--dest-ca-file` it succeeds (digests checked by skopeo). Then the same registry as the
/// source of a second mirror: `--src-tls-verify=false` and `--src-ca-file` succeed, nothing
/// else does.
#[test]
fn tls_flags_against_a_registry_with_an_untrusted_certificate() {
    if !crate::support::shared::tool("skopeo", "skopeo") {
        return;
    }
    let src = Registry::start(Mode::Plain);
    let tls = Registry::start(Mode::TlsBasic);
    let third = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let images = small_catalog(&src, d, 2);
    let other = d.join("other-ca");
    std::fs::create_dir_all(&other).expect("mkdir");
    let wrong_ca = crate::support::registry::make_certs(&other);
    let good_ca = tls.ca.clone().expect("the TLS registry's CA");
    let creds = format!(
        "{}:{}",
        crate::support::registry::USER,
        crate::support::registry::PASSWORD
    );
    let to = |ns: &str| format!("{}/{ns}", tls.host);
    let mirror = |extra: &[&str], ns: &str, results: &str| {
        let mut args = vec![
            "catalog".to_string(),
            "mirror".into(),
            "catalog".into(),
            "--to".into(),
            to(ns),
            "--dest-creds".into(),
            creds.clone(),
            "--results-dir".into(),
            results.into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&refs, d)
    };

    // No flag: plain HTTP to a TLS server, refused with what to do.
    // `--retries 1` on the runs bound to fail: a TLS failure is a connection error, retried.
    let (code, out, err) = mirror(&["--retries", "1"], "m0", "r0");
    assert_eq!(code, 1, "{out}{err}");
    let text = format!("{out}{err}");
    assert!(text.contains("may serve HTTPS (TLS)"), "{text}");
    assert!(text.contains("--dest-tls-verify=false"), "{text}");
    // A CA that did not sign the certificate: HTTPS, and verification fails.
    let wrong = wrong_ca.display().to_string();
    let (code, out, err) = mirror(&["--dest-ca-file", &wrong, "--retries", "1"], "m1", "r1");
    assert_eq!(code, 1, "{out}{err}");
    let text = format!("{out}{err}");
    assert!(text.contains("TLS with 127.0.0.1"), "{text}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    // Verification skipped, then the right CA: both succeed, every digest equal.
    let (code, out, err) = mirror(&["--dest-tls-verify=false"], "m2", "r2");
    assert_eq!(code, 0, "{out}{err}");
    let good = good_ca.display().to_string();
    let (code, out, err) = mirror(&["--dest-ca-file", &good], "m3", "r3");
    assert_eq!(code, 0, "{out}{err}");
    let mut checked = 0;
    for ns in ["m2", "m3"] {
        for (reference, digest) in &images {
            let path = reference.split_once('/').expect("host/path").1;
            assert_eq!(&tls_digest(&format!("{}/{path}", to(ns))), digest);
            checked += 1;
        }
    }
    assert_eq!(checked, 6);

    // The TLS registry as the only source: the mirrored catalog image read back from it, its
    // images read from their copies there (`--registries-conf`: the TLS flags of the source
    // end apply to every source registry, so none may be the plain one).
    let catalog = format!("{}/catalog:latest", to("m2"));
    let conf = d.join("registries.conf");
    std::fs::write(
        &conf,
        format!(
            "[[registry]]\nprefix = \"{}\"\nlocation = \"{}\"\n",
            src.host,
            to("m2")
        ),
    )
    .expect("write registries.conf");
    let conf = conf.display().to_string();
    let from_tls = |extra: &[&str], ns: &str| {
        let mut args = vec![
            "catalog",
            "mirror",
            catalog.as_str(),
            "--src-creds",
            creds.as_str(),
            "--registries-conf",
            conf.as_str(),
            "--to",
        ];
        let target = format!("{}/{ns}", third.host);
        args.push(&target);
        args.extend(["--results-dir", ns]);
        args.extend(extra);
        run(&args, d)
    };
    let (code, out, err) = from_tls(&["--retries", "1"], "s0");
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("may serve HTTPS (TLS)"),
        "{out}{err}"
    );
    let (code, out, err) = from_tls(&["--src-ca-file", &wrong, "--retries", "1"], "s1");
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("TLS with 127.0.0.1"),
        "{out}{err}"
    );
    for (extra, ns) in [
        (vec!["--src-tls-verify=false"], "s2"),
        (vec!["--src-ca-file", good.as_str()], "s3"),
    ] {
        let (code, out, err) = from_tls(&extra, ns);
        assert_eq!(code, 0, "{extra:?}: {out}{err}");
        let r = report(&d.join(ns));
        let done = r["images"]
            .as_array()
            .expect("images")
            .iter()
            .filter(|i| i["status"] == "copied")
            .count();
        assert_eq!(done, 4, "{r:#}");
        for (reference, digest) in &images {
            let path = reference.split_once('/').expect("host/path").1;
            let target = format!("{}/{ns}/{path}", third.host);
            assert_eq!(&raw_digest(&target).expect("skopeo"), digest, "{target}");
        }
    }
}

/// `--platform` narrows a two-platform index to the one named: the target index lists only
/// that platform (read back with skopeo), its digest is new and the report and the output
/// say the index was rewritten; a single-platform image keeps its digest.
#[test]
fn platform_narrows_an_index() {
    if !crate::support::shared::tool("skopeo", "skopeo") {
        return;
    }
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let index = related_index(d, 7);
    let c = client(&src.host);
    push::push_index(&c, &index, "apps/multi", &["v1".into()], &silent()).expect("push index");
    let images = small_catalog(&src, d, 1);
    let multi = format!("{}/apps/multi:v1", src.host);
    let mut related: Vec<String> = images[1..].iter().map(|(r, _)| r.clone()).collect();
    related.push(multi.clone());
    write_shared_catalog(&d.join("catalog"), &images[0].0, &related);
    let (code, out, err) = run(
        &[
            "catalog",
            "mirror",
            "catalog",
            "--to",
            &format!("{}/p", dst.host),
            "--platform",
            "linux/arm64",
            "--results-dir",
            "r",
        ],
        d,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("index rewritten to linux/arm64"),
        "{out}{err}"
    );
    let r = report(&d.join("r"));
    let entry = r["images"]
        .as_array()
        .expect("images")
        .iter()
        .find(|i| i["source"] == multi.as_str())
        .expect("the index in the report")
        .clone();
    assert_eq!(entry["narrowed_to"], json!(["linux/arm64"]), "{entry:#}");
    let source_digest = index.index.descriptor.digest.clone();
    assert_eq!(entry["source_digest"], source_digest.as_str(), "{entry:#}");
    let target = format!("docker://{}/p/apps/multi:v1", dst.host);
    let raw = skopeo_raw(&target).expect("skopeo");
    let digest = sha256(&raw);
    assert_ne!(digest, source_digest, "the index was rewritten");
    assert_eq!(entry["digest"], digest.as_str(), "{entry:#}");
    let parsed: Value = serde_json::from_slice(&raw).expect("index json");
    let manifests = parsed["manifests"].as_array().expect("manifests");
    assert_eq!(manifests.len(), 1, "{parsed:#}");
    assert_eq!(manifests[0]["platform"]["architecture"], "arm64");
    assert_eq!(
        manifests[0]["digest"],
        index.images[1].manifest.descriptor.digest.as_str()
    );
    // The arm64 image itself is there, byte for byte; the amd64 one is not.
    let arm = format!(
        "docker://{}/p/apps/multi@{}",
        dst.host, index.images[1].manifest.descriptor.digest
    );
    assert_eq!(
        sha256(&skopeo_raw(&arm).expect("skopeo")),
        index.images[1].manifest.descriptor.digest
    );
    let amd = format!(
        "docker://{}/p/apps/multi@{}",
        dst.host, index.images[0].manifest.descriptor.digest
    );
    assert!(skopeo_raw(&amd).is_err(), "the amd64 image was copied");
    // A single image is not an index: same digest, nothing rewritten.
    for (reference, digest) in &images {
        let path = reference.split_once('/').expect("host/path").1;
        assert_eq!(
            &raw_digest(&format!("{}/p/{path}", dst.host)).expect("skopeo"),
            digest
        );
    }
}

/// A mirror run reads each manifest from the source once (issue 42: the plan resolved a tag,
/// then the copy read the same manifest again by digest, and the catalog was read three or
/// four times). Every request to the source goes through a proxy that records it; a request
/// by tag counts for the manifest the tag names, so a tag read then a digest read of the same
/// manifest is two reads of it.
#[test]
fn each_manifest_is_read_once_per_run() {
    let Some(f) = fixture() else { return };
    let d = f.dir.path();
    let dst = Registry::start(Mode::Plain);
    let proxy = Proxy::start(f.src.port, |_, _| Fault::Pass);
    let conf = d.join("registries.conf");
    std::fs::write(
        &conf,
        format!(
            "[[registry]]\nlocation = \"{src}\"\n[[registry.mirror]]\nlocation = \"{proxy}\"\n",
            src = f.src.host,
            proxy = proxy.host()
        ),
    )
    .expect("write conf");
    let proxied_catalog = f.catalog.replace(&f.src.host, &proxy.host());
    let (code, _, err) = run(
        &[
            "catalog",
            "mirror",
            &proxied_catalog,
            "--to",
            &format!("{}/once", dst.host),
            "--registries-conf",
            &conf.display().to_string(),
            "-j",
            "2",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    // What each tag names: the fixture's tagged images and the cosign signature tag.
    let mut tags: std::collections::HashMap<(String, String), String> = f
        .images
        .iter()
        .filter_map(|(name, digest)| {
            let path = name.split_once('/')?.1;
            let (repo, tag) = path.rsplit_once(':')?;
            (!path.contains('@')).then(|| ((repo.to_string(), tag.to_string()), digest.clone()))
        })
        .collect();
    tags.insert(
        ("rel/c".to_string(), sig_tag(&f.signed.0)),
        f.signed.1.clone(),
    );
    let mut reads: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for s in proxy.seen() {
        if s.method != "GET" {
            continue;
        }
        let Some((repo, reference)) = s
            .path
            .strip_prefix("/v2/")
            .and_then(|p| p.rsplit_once("/manifests/"))
        else {
            continue;
        };
        let key = (repo.to_string(), reference.to_string());
        let manifest = tags.get(&key).cloned().unwrap_or(key.1);
        *reads.entry((key.0, manifest)).or_default() += 1;
    }
    let catalog_repo = "olm/catalog".to_string();
    let catalog_digest = &f.images.last().expect("catalog").1;
    eprintln!(
        "MANIFEST GETS: {} manifests, {} GETs; catalog index {}; most for one manifest {}",
        reads.len(),
        reads.values().sum::<usize>(),
        reads
            .get(&(catalog_repo, catalog_digest.clone()))
            .copied()
            .unwrap_or(0),
        reads.values().max().copied().unwrap_or(0)
    );
    let again: Vec<_> = reads.iter().filter(|(_, n)| **n > 1).collect();
    assert!(again.is_empty(), "manifests read more than once: {again:?}");
    assert!(reads.len() >= 6, "{reads:?}");
}
