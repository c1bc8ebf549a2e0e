//! `olmpack catalog mirror --config ISC.yaml` (no SOURCE): the user's oc-mirror v2
//! `ImageSetConfiguration` as is, against real loopback registries (`docker-registry`), the
//! target checked with skopeo and curl, and on the real per-version catalogs of
//! `../shared/catalogs/versions/`.
//!
//! What is pinned: every catalog the file names is mirrored (two catalog folders, one per
//! "OpenShift version", each under its own tag), `additionalImages` are copied,
//! `blockedImages` are not; each requested package, channel and range is checked against every
//! catalog before anything is copied (a missing one refuses the run with the table and the
//! target registry stays empty; `--allow-missing` drops it and goes on); a field olmpack does
//! not act on is refused by name with its file and line.

use super::copy::{client, silent, skopeo_raw};
use crate::support::mirror::{registry_catalog, run, tags, write_catalog};
use crate::support::registry::{Mode, Registry, sha256};
use crate::support::shared::{shared_catalogs, tool};
use olmpack::registry::push;
use serde_json::{Value, json};
use std::path::Path;

/// Pushes a small image of its own to `src` as `repo:v1`; returns its reference and digest.
fn push_small(src: &Registry, d: &Path, repo: &str) -> (String, String) {
    let sub = d.join(repo.replace('/', "_"));
    std::fs::create_dir_all(&sub).expect("mkdir");
    let own = format!("content of {repo}\n");
    let image = crate::support::registry::image_from_layers(
        &sub,
        &[vec![("own.txt", own.as_bytes())]],
        json!({}),
        json!({}),
    );
    push::push_image(&client(&src.host), &image, repo, &["v1".into()], &silent()).expect("push");
    (
        format!("{}/{repo}:v1", src.host),
        image.manifest.descriptor.digest.clone(),
    )
}

struct Setup {
    src: Registry,
    dir: tempfile::TempDir,
    /// (reference, digest) by name: bundle-a, bundle-b, rel-a, rel-b, extra, blocked.
    images: Vec<(String, String)>,
}

/// Two catalog folders `v4.16` (package a) and `v4.18` (packages a and b) on one source
/// registry's images; `extra` is named by no catalog, `blocked` is a related image of b.
fn setup() -> Setup {
    let src = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let names = [
        "bundles/a",
        "bundles/b",
        "apps/rel-a",
        "apps/rel-b",
        "apps/extra",
        "apps/blocked",
    ];
    let images: Vec<(String, String)> = names.iter().map(|n| push_small(&src, d, n)).collect();
    write_catalog(
        &d.join("v4.16"),
        &[("a", &images[0].0, vec![images[2].0.clone()])],
    );
    write_catalog(
        &d.join("v4.18"),
        &[
            ("a", &images[0].0, vec![images[2].0.clone()]),
            (
                "b",
                &images[1].0,
                vec![images[3].0.clone(), images[5].0.clone()],
            ),
        ],
    );
    Setup { src, dir, images }
}

fn isc(d: &Path, body: &str) -> String {
    let text = format!(
        "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n{body}"
    );
    std::fs::write(d.join("isc.yaml"), text).expect("write isc");
    "isc.yaml".into()
}

/// Every catalog of the file, the additional image, not the blocked one; each digest equal
/// at the target (skopeo), the repositories and tags as the registry lists them (curl).
#[test]
fn config_mirrors_every_catalog_additional_images_and_not_blocked_ones() {
    if !tool("skopeo", "skopeo") || !tool("curl", "curl") {
        return;
    }
    let s = setup();
    let d = s.dir.path();
    let dst = Registry::start(Mode::Plain);
    let config = isc(
        d,
        &format!(
            "  operators:\n    - catalog: {d16}\n      packages:\n        - name: a\n    - catalog: {d18}\n      packages:\n        - name: a\n        - name: b\n          channels:\n            - name: stable\n              minVersion: 1.0.0\n  additionalImages:\n    - name: {extra}\n  blockedImages:\n    - name: {blocked}\n",
            d16 = d.join("v4.16").display(),
            d18 = d.join("v4.18").display(),
            extra = s.images[4].0,
            blocked = s.images[5].0.trim_end_matches(":v1"),
        ),
    );
    let to = format!("{}/mirror", dst.host);
    let (code, _out, err) = run(&["catalog", "mirror", "--config", &config, "--to", &to], d);
    assert_eq!(code, 0, "{err}");
    // The check table, one column per catalog, before the copies.
    assert!(err.contains("package\tchannel\trange\t"), "{err}");
    assert!(
        err.contains("b\tstable\t>=1.0.0\t-\tok (1 bundles)"),
        "{err}"
    );
    assert!(
        err.contains("1 image(s) left out by mirror.blockedImages"),
        "{err}"
    );
    let repos = registry_catalog(&dst.host);
    let src_host = &s.src.host;
    let _ = src_host;
    assert_eq!(
        repos,
        [
            "mirror/apps/extra",
            "mirror/apps/rel-a",
            "mirror/apps/rel-b",
            "mirror/bundles/a",
            "mirror/bundles/b",
            "mirror/catalog",
        ],
        "{err}"
    );
    assert_eq!(tags(&dst.host, "mirror/catalog"), ["v4.16", "v4.18"]);
    for (i, (reference, digest)) in s.images.iter().enumerate().take(5) {
        let path = reference.split_once('/').map(|(_, p)| p).expect("path");
        let target = format!("docker://{}/mirror/{path}", dst.host);
        let raw = skopeo_raw(&target).unwrap_or_else(|e| panic!("{i} {target}: {e}"));
        assert_eq!(sha256(&raw), *digest, "{target}");
    }
    // The mirror sets name every catalog's images and the additional one, not the blocked one.
    let report: Value = serde_json::from_slice(
        &std::fs::read(d.join("mirror-results/report.json")).expect("report"),
    )
    .expect("json");
    let kinds: Vec<&str> = report["images"]
        .as_array()
        .expect("images")
        .iter()
        .filter_map(|i| i["kind"].as_str())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "catalog").count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == "additional").count(), 1);
    assert!(!report.to_string().contains("apps/blocked"), "{report:#}");
}

/// A package missing from one catalog refuses the run before anything is copied: the table
/// names it, the target registry holds nothing; `--allow-missing` drops it from that catalog
/// and mirrors the rest.
#[test]
fn config_checks_every_catalog_before_copying() {
    if !tool("curl", "curl") {
        return;
    }
    let s = setup();
    let d = s.dir.path();
    let dst = Registry::start(Mode::Plain);
    let config = isc(
        d,
        &format!(
            "  operators:\n    - catalog: {d16}\n      packages:\n        - name: a\n        - name: b\n    - catalog: {d18}\n      packages:\n        - name: a\n        - name: b\n",
            d16 = d.join("v4.16").display(),
            d18 = d.join("v4.18").display(),
        ),
    );
    let to = format!("{}/mirror", dst.host);
    let (code, _out, err) = run(&["catalog", "mirror", "--config", &config, "--to", &to], d);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("b\t*\t*\tMISSING package\tok (1 bundles)"),
        "{err}"
    );
    assert!(err.contains("nothing was copied"), "{err}");
    assert!(registry_catalog(&dst.host).is_empty());
    assert!(!d.join("mirror-results").exists());
    let (code, _out, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            &config,
            "--to",
            &to,
            "--allow-missing",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(tags(&dst.host, "mirror/catalog"), ["v4.16", "v4.18"]);
    assert!(registry_catalog(&dst.host).contains(&"mirror/bundles/b".to_string()));
}

/// A field olmpack does not act on is refused by name, with the file and line, exit 2, and
/// nothing read or written.
#[test]
fn config_refuses_unsupported_fields_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    for (body, line, name) in [
        (
            "  platform:\n    channels:\n      - name: stable-4.18\n",
            5,
            "mirror.platform.channels",
        ),
        ("  helm:\n    repositories: []\n", 4, "mirror.helm"),
        (
            "  operators:\n    - catalog: registry.example/c:v1\n      targetCatalogSourceTemplate: t.yaml\n",
            6,
            "targetCatalogSourceTemplate",
        ),
    ] {
        let config = isc(d, body);
        let (code, _out, err) = run(
            &[
                "catalog",
                "mirror",
                "--config",
                &config,
                "--to",
                "127.0.0.1:9/x",
            ],
            d,
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("isc.yaml:{line}: field")), "{err}");
        assert!(err.contains(name), "{err}");
        assert!(!d.join("mirror-results").exists());
    }
    let (code, _out, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            "nope.yaml",
            "--to",
            "127.0.0.1:9/x",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope.yaml"), "{err}");
    // Flags the file's entries replace are refused, and --base (the folder catalogs' base) is
    // read, not dropped: a malformed one is named.
    let config = isc(d, "  operators:\n    - catalog: registry.example/c:v1\n");
    let (code, _out, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            &config,
            "--catalog-name",
            "x/c:1",
            "--to",
            "127.0.0.1:9/x",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--catalog-name"), "{err}");
    let (code, _out, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            &config,
            "--base",
            "Bad Base::",
            "--to",
            "127.0.0.1:9/x",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--base Bad Base::"), "{err}");
    assert!(!d.join("mirror-results").exists());
}

/// The real per-version catalogs (OpenShift 4.12, 4.16, 4.22 of certified-operators, and the
/// 4.18 catalog of 43 packages): a package only 4.18 has, a channel 4.12 and 4.18 lack, a
/// version range 4.22 lacks (its stable channel holds 26.6.0 only), each named in the table; refused before any registry is asked (the run has no
/// network: `--to` points at a closed port and no image is resolved).
#[test]
fn config_per_version_check_on_real_catalogs() {
    let Some(catalogs) = shared_catalogs("versions") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let versions = catalogs.join("versions/certified-operators");
    let packages = "      packages:\n        - name: trident-operator\n          channels:\n            - name: stable\n              maxVersion: 25.6.0\n        - name: stackable-commons-operator\n          defaultChannel: \"25.3\"\n          channels:\n            - name: \"25.3\"\n        - name: stackable-airflow-operator\n";
    let mut body = String::from("  operators:\n");
    for c in [
        versions.join("v4.12"),
        versions.join("v4.16"),
        catalogs.join("fbc/certified-operators/catalogs/v4.18"),
        versions.join("v4.22"),
    ] {
        body.push_str(&format!("    - catalog: {}\n{packages}", c.display()));
    }
    let config = isc(d, &body);
    let (code, _out, err) = run(
        &[
            "catalog",
            "mirror",
            "--config",
            &config,
            "--to",
            "127.0.0.1:9/x",
        ],
        d,
    );
    assert_eq!(code, 1, "{err}");
    let row = |prefix: &str| {
        err.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no row {prefix}: {err}"))
            .split('\t')
            .skip(3)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let present = |cells: &[String]| {
        cells
            .iter()
            .map(|c| c.starts_with("ok"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        present(&row("trident-operator\tstable\t")),
        [true, true, true, false],
        "{err}"
    );
    assert_eq!(
        present(&row("stackable-commons-operator\t25.3\t")),
        [false, true, false, true],
        "{err}"
    );
    let airflow = row("stackable-airflow-operator\t*\t*");
    assert_eq!(present(&airflow), [false, false, true, false], "{err}");
    assert_eq!(airflow[0], "MISSING package");
    assert!(
        err.contains("missing from 4 catalog(s); nothing was copied"),
        "{err}"
    );
    assert!(!d.join("mirror-results").exists());
}
