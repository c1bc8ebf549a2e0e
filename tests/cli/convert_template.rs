//! `catalog convert-template` (opm `alpha convert-template`) on the public catalogs in
//! `../shared/catalogs/fbc/*/catalogs/*/*/catalog.yaml`: each is converted to a substitutes
//! template (JSON and YAML), which `catalog template` must render back to the same bytes as
//! `catalog render` of the catalog (opm's normal form; most checked-in files are exactly that,
//! the test counts them, a few were written in another blob order); the
//! basic conversion must cut every bundle to `{schema, image}` and keep every other blob. The
//! count of catalogs is asserted.

use crate::support::cmd::olmpack;
use crate::support::shared;
use std::path::PathBuf;

fn catalog_files() -> Option<Vec<PathBuf>> {
    let dir = shared::shared_catalogs("fbc")?;
    let mut out = Vec::new();
    for repo in std::fs::read_dir(dir.join("fbc")).ok()?.flatten() {
        for version in std::fs::read_dir(repo.path().join("catalogs"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for pkg in std::fs::read_dir(version.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let file = pkg.path().join("catalog.yaml");
                if file.is_file() {
                    out.push(file);
                }
            }
        }
    }
    out.sort();
    Some(out)
}

#[test]
fn substitutes_conversion_renders_back_to_the_same_bytes() {
    let Some(files) = catalog_files() else {
        return;
    };
    assert!(files.len() >= 60, "only {} catalogs", files.len());
    let tmp = tempfile::tempdir().expect("tmp");
    let mut checked = 0;
    let mut identical_to_file = 0;
    for file in &files {
        let rendered = olmpack()
            .args(["catalog", "render", "-o", "yaml"])
            .arg(file.parent().expect("package folder"))
            .output()
            .expect("runs");
        assert!(rendered.status.success(), "{}", file.display());
        let original = rendered.stdout;
        if std::fs::read(file).ok().as_deref() == Some(original.as_slice()) {
            identical_to_file += 1;
        }
        for format in ["json", "yaml"] {
            let out = olmpack()
                .args(["catalog", "convert-template", "substitutes", "-o", format])
                .arg(file)
                .output()
                .expect("runs");
            assert!(
                out.status.success(),
                "{}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let template = tmp.path().join(format!("t.{format}"));
            std::fs::write(&template, &out.stdout).expect("write");
            let back = olmpack()
                .args(["catalog", "template", "--offline", "-o", "yaml"])
                .arg(&template)
                .output()
                .expect("runs");
            assert!(
                back.status.success(),
                "{}: {}",
                file.display(),
                String::from_utf8_lossy(&back.stderr)
            );
            assert!(
                back.stdout == original,
                "{} ({format}) does not round-trip",
                file.display()
            );
            checked += 1;
        }
    }
    eprintln!(
        "convert-template substitutes: {checked} round trips over {} catalogs, {identical_to_file} of them byte-identical to the checked-in file",
        files.len()
    );
    assert_eq!(checked, files.len() * 2);
}

#[test]
fn basic_conversion_keeps_only_bundle_images() {
    let Some(files) = catalog_files() else {
        return;
    };
    let file = files.first().expect("a catalog");
    let out = olmpack()
        .args(["catalog", "convert-template", "basic"])
        .arg(file)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["schema"], "olm.template.basic");
    let entries = v["entries"].as_array().expect("entries");
    let original = olmpack::catalog::load::load_file(file).expect("loads");
    let bundles: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e["schema"] == "olm.bundle")
        .collect();
    assert_eq!(bundles.len(), original.config.bundles.len());
    for (b, o) in bundles.iter().zip(&original.config.bundles) {
        assert_eq!(b.as_object().map(|m| m.len()), Some(2), "{b}");
        assert_eq!(b["image"], o.image.as_str());
    }
    assert_eq!(
        entries.len(),
        original.config.bundles.len()
            + original.config.packages.len()
            + original.config.channels.len()
            + original.config.deprecations.len()
            + original.config.others.len()
    );
    // A missing file is a usage error naming it.
    let missing = olmpack()
        .args(["catalog", "convert-template", "basic", "no-such.yaml"])
        .output()
        .expect("runs");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no-such.yaml"));
}
