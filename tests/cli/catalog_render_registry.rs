//! `catalog render` of a bundle image in a real registry (the Debian `docker-registry`, plain
//! HTTP and TLS with Basic auth), with the same registry flags as `bundle validate --image`:
//! real bundles of `../shared/catalogs/bundles` pushed and rendered from the registry give the
//! blob opm wrote for them in a published catalog (the reference, not olmpack's render of the
//! folder).

use super::catalog_render::{OpmBundle, one_bundle_blob, opm_bundles, same_as_opm};
use crate::support::cmd::run as olmpack;
use crate::support::registry as support;
use crate::support::shared;

use std::path::Path;
use support::{Mode, Registry};

/// The smallest real bundle of each object form (a quick push), from the index.
fn smallest_of_each_form(catalogs: &Path) -> Vec<OpmBundle> {
    let size = |b: &OpmBundle| walk_size(&catalogs.join("bundles").join(&b.folder));
    let mut all = opm_bundles(catalogs);
    all.sort_by_key(|b| (b.form.clone(), size(b)));
    let mut out: Vec<OpmBundle> = Vec::new();
    for b in all {
        if !out.iter().any(|o| o.form == b.form) {
            out.push(b);
        }
    }
    out
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk_size(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

#[test]
fn bundle_image_in_a_registry_renders_to_the_catalog_blob() {
    let testdata = crate::support::fixtures::valid_basic();
    let real = shared::shared_catalogs("bundles").map(|c| {
        let picked = smallest_of_each_form(&c);
        (c, picked)
    });
    let mut compared = 0;
    for mode in [Mode::Plain, Mode::TlsBasic] {
        let reg = Registry::start(mode);
        let conn = reg.cli_flags();
        let conn: Vec<&str> = conn.iter().map(String::as_str).collect();
        let push = |folder: &Path, reference: &str| {
            let folder = folder.to_str().unwrap();
            let mut build = vec!["bundle", "build", folder, "--push", "-t", reference];
            build.extend(&conn);
            let built = olmpack(&build);
            assert!(
                built.status.success(),
                "{}",
                String::from_utf8_lossy(&built.stderr)
            );
        };

        // Our bundle: the image field is the reference it was rendered from.
        let reference = reg.reference("olm/kvstore-bundle", "v1.2.0");
        push(&testdata, &reference);
        let mut render = vec!["catalog", "render", "-o", "json", &reference];
        render.extend(&conn);
        let from_image = olmpack(&render);
        assert!(
            from_image.status.success(),
            "{}",
            String::from_utf8_lossy(&from_image.stderr)
        );
        let blob = one_bundle_blob(&from_image.stdout).unwrap();
        assert_eq!(blob["image"], reference.as_str());
        assert_eq!(blob["package"], "kvstore-operator");

        // Real bundles: opm's blob from the published catalog, rendered with its reference and
        // object form.
        if let Some((catalogs, picked)) = &real {
            for (i, b) in picked.iter().enumerate() {
                let reference = reg.reference("olm/real", &format!("b{i}"));
                push(&catalogs.join("bundles").join(&b.folder), &reference);
                let mut render = vec![
                    "catalog",
                    "render",
                    "-o",
                    "json",
                    "--migrate-level",
                    b.migrate_level(),
                    &reference,
                ];
                render.extend(&conn);
                let out = olmpack(&render);
                assert!(
                    out.status.success(),
                    "{}: {}",
                    b.folder,
                    String::from_utf8_lossy(&out.stderr)
                );
                // Rendered from the registry, the image is the reference it was pulled by, in
                // the image field and in relatedImages; opm's blob names the published
                // reference there. Everything else is compared as opm wrote it.
                let mut got = one_bundle_blob(&out.stdout).unwrap();
                assert_eq!(got["image"], reference.as_str(), "{}", b.folder);
                got["image"] = b.image.as_str().into();
                if let Some(list) = got["relatedImages"].as_array_mut() {
                    for r in list.iter_mut() {
                        if r["image"] == reference.as_str() {
                            r["image"] = b.image.as_str().into();
                        }
                    }
                    // opm sorts relatedImages by image: the renamed entry takes its place.
                    list.sort_by(|a, b| a["image"].as_str().cmp(&b["image"].as_str()));
                }
                same_as_opm(&got, b).unwrap();
                compared += 1;
            }
        }

        // A reference that is not there: an error naming it, nothing on stdout.
        let missing = reg.reference("olm/nothing", "v0");
        let mut render = vec!["catalog", "render", &missing];
        render.extend(&conn);
        let out = olmpack(&render);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("olm/nothing"));
    }
    if real.is_some() {
        // Both object forms, in both registry modes.
        shared::cases(
            "catalog_render_registry real bundles from a registry",
            compared,
            4,
        );
    }
}
