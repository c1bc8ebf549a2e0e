//! The serve model (`olmpack::serve::model`) against opm's own answers on the shared catalogs
//! (`../shared/catalogs/serve/`, opm v1.26.5, adjusted for current opm as its SOURCE.md says),
//! and opm's serve cache written by `catalog build`.

use crate::support::cmd::olmpack_reproducible as olmpack;
use crate::support::proc::Bounded;
use crate::support::shared;

use olmpack::serve::{ApiBundle, ServeModel};
use serde_json::{Value, json};
use shared::shared_catalogs;
use std::path::{Path, PathBuf};

/// (golden file, catalog folder) for every golden.
pub(crate) fn goldens(catalogs: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        let dir = catalogs.join("serve").join(repo);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let pkg = f.file_stem().unwrap().to_string_lossy().into_owned();
            let folder = catalogs
                .join("fbc")
                .join(repo)
                .join("catalogs/v4.18")
                .join(&pkg);
            out.push((f, folder));
        }
    }
    out
}

/// Sorts a list of objects by their canonical text, in place.
fn sort_by_text(v: &mut Value) {
    if let Value::Array(items) = v {
        items.sort_by_key(|i| i.to_string());
    }
}

/// The SOURCE.md canonical form of a Bundle: lists sorted, property/dependency values parsed.
pub(crate) fn canonical(mut b: Value) -> Value {
    let obj = b.as_object_mut().unwrap();
    for key in ["properties", "dependencies"] {
        if let Some(Value::Array(items)) = obj.get_mut(key) {
            for item in items.iter_mut() {
                if let Some(v) = item.get("value").and_then(Value::as_str) {
                    let parsed: Value = serde_json::from_str(v).unwrap();
                    item["value"] = parsed;
                }
            }
        }
    }
    for key in [
        "providedApis",
        "requiredApis",
        "properties",
        "dependencies",
        "skips",
    ] {
        if let Some(v) = obj.get_mut(key) {
            sort_by_text(v);
        }
    }
    b
}

/// Goldens adjusted for current opm: no `olm.csv.metadata` in properties.
fn adjust_golden(mut b: Value) -> Value {
    if let Some(Value::Array(props)) = b.get_mut("properties") {
        props.retain(|p| p["type"] != "olm.csv.metadata");
        if props.is_empty() {
            b.as_object_mut().unwrap().remove("properties");
        }
    }
    b
}

/// Ours, as GetBundle sends it; a CSV synthesized from `olm.csv.metadata` (which v1.26.5 did
/// not do) is checked for its identity and then left out of the comparison.
fn ours_as_get_bundle(mut b: ApiBundle, golden_has_csv: bool, synthesized: &mut usize) -> Value {
    b.replaces.clear();
    b.skips.clear();
    if !golden_has_csv && !b.csv_json.is_empty() {
        let csv: Value = serde_json::from_str(&b.csv_json).unwrap();
        assert_eq!(csv["kind"], "ClusterServiceVersion");
        assert_eq!(csv["apiVersion"], "operators.coreos.com/v1alpha1");
        assert_eq!(csv["metadata"]["name"], b.csv_name.as_str());
        assert_eq!(csv["spec"]["version"], b.version.as_str());
        assert_eq!(csv["spec"]["install"]["strategy"], "deployment");
        assert_eq!(b.object, vec![b.csv_json.clone()]);
        b.csv_json.clear();
        b.object.clear();
        *synthesized += 1;
    }
    serde_json::to_value(&b).unwrap()
}

#[test]
fn model_matches_opm_goldens() {
    let Some(catalogs) = shared_catalogs("serve") else {
        return;
    };
    let mut files = 0;
    let mut bundles = 0;
    let mut synthesized = 0;
    for (golden_file, folder) in goldens(&catalogs) {
        let golden: Value = serde_json::from_slice(&std::fs::read(&golden_file).unwrap()).unwrap();
        let model =
            ServeModel::from_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        let name = golden_file.display().to_string();

        // GetPackage: channels (sorted) with their heads, default channel.
        for gp in golden["getPackage"].as_array().unwrap() {
            let pkg = &model.index()[gp["request"]["name"].as_str().unwrap()];
            let channels: Vec<Value> = pkg
                .channels
                .values()
                .map(|c| json!({"csvName": c.head, "name": c.name}))
                .collect();
            let ours = json!({
                "channels": channels,
                "defaultChannelName": pkg.default_channel,
                "name": pkg.name,
            });
            assert_eq!(ours, gp["response"], "{name}: getPackage");
        }
        assert_eq!(
            golden["listPackages"].as_array().unwrap().len(),
            model.index().len(),
            "{name}: listPackages"
        );

        // ListBundles: one per channel membership, with that channel's edges.
        let lb = golden["listBundles"].as_array().unwrap();
        assert_eq!(lb.len(), model.entry_count(), "{name}: listBundles count");
        for g in lb {
            let (_, _, cb) = model
                .lookup(
                    g["packageName"].as_str().unwrap(),
                    g["channelName"].as_str().unwrap(),
                    g["csvName"].as_str().unwrap(),
                )
                .unwrap();
            assert_eq!(g["replaces"].as_str().unwrap_or(""), cb.replaces, "{name}");
            let mut skips: Vec<String> = cb.skips().to_vec();
            skips.sort();
            let want: Vec<String> = g["skips"]
                .as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            assert_eq!(want, skips, "{name}: skips of {g}");
        }

        // GetBundle: the whole stored bundle, trimmed.
        for gb in golden["getBundle"].as_array().unwrap() {
            let req = &gb["request"];
            let ours = model
                .bundle(
                    req["pkgName"].as_str().unwrap(),
                    req["channelName"].as_str().unwrap(),
                    req["csvName"].as_str().unwrap(),
                )
                .unwrap();
            let want = canonical(adjust_golden(gb["response"].clone()));
            let has_csv = want.get("csvJson").is_some();
            let got = canonical(ours_as_get_bundle(ours, has_csv, &mut synthesized));
            if got != want {
                let g = serde_json::to_string_pretty(&got).unwrap();
                let w = serde_json::to_string_pretty(&want).unwrap();
                let at = g
                    .lines()
                    .zip(w.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "{name}: getBundle {req} differs at line {at}:\n ours: {:?}\n opm:  {:?}",
                    g.lines().nth(at),
                    w.lines().nth(at)
                );
            }
            bundles += 1;
        }
        files += 1;
    }
    eprintln!(
        "serve model: {files} golden files, {bundles} getBundle answers equal ({synthesized} with a CSV synthesized from olm.csv.metadata)"
    );
    shared::cases("serve_cache opm golden files", files, 63);
}

use crate::support::go;

/// Copies a catalog folder as an image holds it: folders 0755, files 0644.
fn copy_as_in_image(src: &Path, dst: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dst).unwrap();
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(0o755)).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        let meta = std::fs::metadata(e.path()).unwrap();
        if meta.is_dir() {
            copy_as_in_image(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

/// Every catalog folder of `../shared/catalogs/fbc` (one per package).
fn fbc_folders(catalogs: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        let dir = catalogs.join("fbc").join(repo).join("catalogs/v4.18");
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

/// Runs the Go reimplementation of opm's digest on (catalog, cache) pairs.
fn go_digests(pairs: &[(PathBuf, PathBuf)], work: &Path) -> Vec<String> {
    let mut cmd = go::go_run("gofstar/main.go", work);
    for (a, b) in pairs {
        cmd.arg(a).arg(b);
    }
    let out = cmd
        .output_within(crate::support::proc::LIMIT)
        .expect("go run");
    assert!(
        out.status.success(),
        "go: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn cache_digest_is_opms_on_every_shared_catalog() {
    let Some(catalogs) = shared_catalogs("fbc") else {
        return;
    };
    if !go::go_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut pairs = Vec::new();
    let mut ours = Vec::new();
    for (i, folder) in fbc_folders(&catalogs).iter().enumerate() {
        let model =
            ServeModel::from_dir(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        let configs = tmp.path().join(format!("{i}/configs"));
        let cache = tmp.path().join(format!("{i}/cache"));
        copy_as_in_image(folder, &configs);
        let tree = olmpack::cache::catalog_tree_in_image(folder).unwrap();
        let summary = olmpack::cache::write_cache(&model, &tree, &cache).unwrap();
        assert_eq!(
            std::fs::read_to_string(cache.join("digest")).unwrap(),
            summary.digest
        );
        // The files read back as what the model holds.
        let index: olmpack::serve::PackageIndex =
            serde_json::from_slice(&std::fs::read(cache.join("cache/packages.json")).unwrap())
                .unwrap();
        assert!(
            &index == model.index(),
            "{}: packages.json",
            folder.display()
        );
        for (p, c, b) in model.keys() {
            let file = cache.join(format!("cache/{}_{}_{}.json", p.name, c.name, b.name));
            let stored: ApiBundle = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            assert!(stored == model.convert(p, b).unwrap(), "{}", file.display());
        }
        pairs.push((configs, cache));
        ours.push(summary.digest);
    }
    let theirs = go_digests(&pairs, tmp.path());
    assert_eq!(theirs.len(), ours.len());
    let same = ours.iter().zip(&theirs).filter(|(a, b)| a == b).count();
    for ((a, b), (c, _)) in ours.iter().zip(&theirs).zip(&pairs) {
        assert_eq!(a, b, "digest of {}", c.display());
    }
    eprintln!(
        "serve cache digest: {same} of {} shared catalogs equal to Go's fsToTar+FNV",
        ours.len()
    );
    shared::cases("serve_cache catalogs with opm's cache digest", same, 67);
}

#[test]
fn go_tar_edge_cases_match_go() {
    // Long names (PAX and USTAR prefix/name split), non-ASCII names, empty files, sizes on a
    // block boundary, odd modes: the cases real caches can hit.
    if !go::go_available() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("cat");
    let deep = cat.join(format!("{}/{}", "d".repeat(60), "e".repeat(70)));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join(format!("{}.json", "f".repeat(90))), b"{}").unwrap();
    std::fs::write(
        cat.join(format!("{}.yaml", "g".repeat(120))),
        vec![b'x'; 512],
    )
    .unwrap();
    std::fs::write(cat.join("caf\u{e9}.json"), b"").unwrap();
    std::fs::write(cat.join("a.json"), vec![b'y'; 1025]).unwrap();
    std::fs::set_permissions(cat.join("a.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::create_dir_all(cat.join("a")).unwrap();
    std::fs::write(cat.join("a/b"), b"z").unwrap();
    let cache = tmp.path().join("cache");
    std::fs::create_dir_all(cache.join("cache")).unwrap();
    std::fs::write(
        cache.join(format!(
            "cache/{}_stable_{}.json",
            "p".repeat(60),
            "b".repeat(60)
        )),
        b"{}",
    )
    .unwrap();
    let ours = olmpack::gocompat::tar::json_cache_digest(
        &olmpack::gocompat::tar::tree_of_dir(&cat, None).unwrap(),
        &olmpack::gocompat::tar::tree_of_dir(&cache.join("cache"), None).unwrap(),
    )
    .unwrap();
    let theirs = go_digests(&[(cat, cache)], tmp.path());
    assert_eq!(vec![ours], theirs);
}

/// The manifest and config of the single image of an OCI layout.
fn image_of(layout: &Path) -> (Value, Value) {
    let blob = |d: &str| -> Value {
        let hex = d.strip_prefix("sha256:").unwrap();
        serde_json::from_slice(&std::fs::read(layout.join("blobs/sha256").join(hex)).unwrap())
            .unwrap()
    };
    let index: Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let manifest = blob(index["manifests"][0]["digest"].as_str().unwrap());
    let config = blob(manifest["config"]["digest"].as_str().unwrap());
    (manifest, config)
}

/// Extracts every layer of the image into `root` (modes kept); returns each layer's entries
/// as (path, mode).
fn unpack(layout: &Path, manifest: &Value, root: &Path) -> Vec<Vec<(String, u32)>> {
    let mut out = Vec::new();
    for l in manifest["layers"].as_array().unwrap() {
        let hex = l["digest"]
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap();
        let gz = std::fs::read(layout.join("blobs/sha256").join(hex)).unwrap();
        let mut entries = Vec::new();
        let mut a = tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]));
        for e in a.entries().unwrap() {
            let e = e.unwrap();
            entries.push((
                e.path().unwrap().to_string_lossy().into_owned(),
                e.header().mode().unwrap(),
            ));
        }
        let mut a = tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]));
        a.set_preserve_permissions(true);
        a.unpack(root).unwrap();
        out.push(entries);
    }
    out
}

fn built_digest(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn catalog_build_ships_a_cache_opm_accepts() {
    if !go::go_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/build-small");
    let base = tmp.path().join("base");
    let base_ref = crate::support::umoci::base_image(&base, None, &[]);
    let build = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "catalog".to_string(),
            "build".into(),
            catalog.display().to_string(),
            "--output".into(),
            format!("oci:{}", out.display()),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        olmpack().args(&args).bounded_output().unwrap()
    };

    // With a base: configs layer, then the cache layer; CMD as opm generate dockerfile sets it.
    let out1 = tmp.path().join("with-cache");
    let r = build(&["--base", &base_ref], &out1);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stderr).contains("serve cache: "));
    let (manifest, config) = image_of(&out1);
    assert_eq!(
        config["config"]["Cmd"],
        json!(["serve", "/configs", "--cache-dir=/tmp/cache"])
    );
    assert_eq!(config["config"]["Entrypoint"], json!(["/bin/opm"]));
    let root = tmp.path().join("root");
    let layers = unpack(&out1, &manifest, &root);
    assert_eq!(layers.len(), 2);
    // The cache layer: opm's modes, no entry for /tmp itself (its mode stays the base's).
    let cache_layer = &layers[1];
    assert!(cache_layer.iter().all(|(p, _)| p.starts_with("tmp/cache")));
    for (p, mode) in cache_layer {
        let want = if p.ends_with('/') { 0o750 } else { 0o640 };
        assert_eq!(*mode, want, "{p}");
    }
    assert!(
        cache_layer
            .iter()
            .any(|(p, _)| p == "tmp/cache/cache/packages.json")
    );
    // The digest opm recomputes over the image's /configs and /tmp/cache/cache.
    let digest = std::fs::read_to_string(root.join("tmp/cache/digest")).unwrap();
    let go = go_digests(
        &[(root.join("configs"), root.join("tmp/cache"))],
        tmp.path(),
    );
    assert_eq!(go, vec![digest.clone()]);

    // `catalog cache verify` accepts the image, and the unpacked folder with its cache.
    let v = olmpack()
        .args([
            "catalog",
            "cache",
            "verify",
            &format!("oci:{}", out1.display()),
        ])
        .bounded_output()
        .unwrap();
    let text = String::from_utf8_lossy(&v.stdout).into_owned();
    assert_eq!(
        v.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&v.stderr)
    );
    assert!(text.contains("ok: opm will accept this cache"), "{text}");
    let verify_dir = || {
        let v = olmpack()
            .args(["catalog", "cache", "verify"])
            .arg(root.join("configs"))
            .arg("--cache-dir")
            .arg(root.join("tmp/cache"))
            .bounded_output()
            .unwrap();
        (
            v.status.code(),
            String::from_utf8_lossy(&v.stdout).into_owned(),
        )
    };
    assert_eq!(verify_dir().0, Some(0));
    // A tampered catalog file: refused, the bundle's cache files and its catalog file named.
    let cat_file = root.join("configs/build-demo/catalog.yaml");
    let original = std::fs::read_to_string(&cat_file).unwrap();
    std::fs::write(
        &cat_file,
        original.replace("build-demo-bundle:v0.2.0", "build-demo-bundle:v0.2.1"),
    )
    .unwrap();
    let (code, text) = verify_dir();
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("opm will refuse it"), "{text}");
    assert!(
        text.contains("changed: cache/build-demo_stable_build-demo.v0.2.0.json")
            && text.contains("catalog file build-demo/catalog.yaml:"),
        "{text}"
    );
    // Only reformatted: same cache content, still refused, and said so.
    std::fs::write(&cat_file, format!("{original}# a comment\n")).unwrap();
    let (code, text) = verify_dir();
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("the catalog folder's bytes changed"),
        "{text}"
    );
    std::fs::write(&cat_file, &original).unwrap();
    assert_eq!(verify_dir().0, Some(0));
    // A tampered, a missing and an extra cache file, each named.
    let cache_file = root.join("tmp/cache/cache/build-demo_stable_build-demo.v0.1.0.json");
    std::fs::write(&cache_file, b"{}").unwrap();
    std::fs::remove_file(root.join("tmp/cache/cache/packages.json")).unwrap();
    std::fs::write(root.join("tmp/cache/cache/stray.json"), b"{}").unwrap();
    let (code, text) = verify_dir();
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("changed: cache/build-demo_stable_build-demo.v0.1.0.json"),
        "{text}"
    );
    assert!(text.contains("missing: cache/packages.json"), "{text}");
    assert!(text.contains("extra:   cache/stray.json"), "{text}");

    // Reproducible: the same catalog gives the same image.
    let out2 = tmp.path().join("again");
    let r2 = build(&["--base", &base_ref], &out2);
    assert_eq!(built_digest(&r), built_digest(&r2));
    assert!(!built_digest(&r).is_empty());

    // --no-cache: no cache layer, the old CMD.
    let out3 = tmp.path().join("no-cache");
    let r3 = build(&["--base", &base_ref, "--no-cache"], &out3);
    assert!(r3.status.success());
    let (m3, c3) = image_of(&out3);
    assert_eq!(m3["layers"].as_array().unwrap().len(), 1);
    assert_eq!(c3["config"]["Cmd"], json!(["serve", "/configs"]));

    // Scratch: no cache unless asked; --cache adds it (no CMD: nothing to run).
    let out4 = tmp.path().join("scratch");
    assert!(build(&[], &out4).status.success());
    assert_eq!(image_of(&out4).0["layers"].as_array().unwrap().len(), 1);
    let out5 = tmp.path().join("scratch-cache");
    assert!(
        build(&["--cache", "--cache-dir", "/var/cache/opm"], &out5)
            .status
            .success()
    );
    let (m5, _) = image_of(&out5);
    let root5 = tmp.path().join("root5");
    let layers5 = unpack(&out5, &m5, &root5);
    assert!(
        layers5[1]
            .iter()
            .all(|(p, _)| p.starts_with("var/cache/opm"))
    );
    // The cache digest does not depend on where the cache is.
    assert_eq!(
        std::fs::read_to_string(root5.join("var/cache/opm/digest")).unwrap(),
        digest
    );

    // A cache folder inside the catalog, or relative: a usage error, nothing written.
    for bad in ["/configs/cache", "tmp/cache", "/"] {
        let out6 = tmp.path().join("bad");
        let r6 = build(&["--base", &base_ref, "--cache-dir", bad], &out6);
        assert_eq!(r6.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&r6.stderr).contains("--cache-dir"),
            "{}",
            String::from_utf8_lossy(&r6.stderr)
        );
        assert!(!out6.exists());
    }
}
