//! `olmpack bundle pin` on real corpus bundles against a real loopback registry: each image
//! the bundle names is built small and pushed (with skopeo) under its public name below the
//! loopback registry, and an ImageDigestMirrorSet plus an ImageTagMirrorSet map the public
//! names there (NeverContactSource: the public registry is never asked). The digests written
//! must be skopeo's, the files must differ only in image strings and the added
//! `spec.relatedImages` entries, the result must validate as the original does, and a second
//! run must change nothing. A registry whose digest header disagrees with what it serves is
//! refused and nothing is written.

use crate::support::cmd::olmpack;
use crate::support::fs::copy_dir;
use crate::support::mirror::skopeo_digest;
use crate::support::proc::Bounded;
use crate::support::registry::{Fault, Mode, Proxy, Registry, image_from_layers, write_layout};
use crate::support::shared::{shared_corpus, tool};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The corpus bundles pinned (package names whose sha256 starts with 4-f, the development
/// half): kepler names three images (one only in a container and the annotation, so it must
/// be added to relatedImages), dbaas five on three registries (two missing from relatedImages).
const BUNDLES: [&str; 2] = ["kepler-operator/0.23.0", "dbaas-operator/0.5.0"];

fn csv_of(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("manifests"))
        .expect("manifests")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().ends_with(".clusterserviceversion.yaml"))
        .expect("a CSV")
}

/// The images a CSV names by tag, as written (what `bundle pin` must resolve).
fn tagged_images(csv: &str) -> Vec<String> {
    let mut out: Vec<String> = csv
        .lines()
        .filter_map(|l| {
            let t = l.trim_start().trim_start_matches("- ");
            ["image: ", "value: ", "containerImage: "]
                .iter()
                .find_map(|k| t.strip_prefix(k))
        })
        .map(|v| v.trim().trim_matches('"').to_string())
        .filter(|v| v.contains('/') && v.contains('.') && !v.contains('@') && !v.contains(' '))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Builds a small image of its own for `image` and pushes it (skopeo, from an OCI layout) to
/// `host/<image as written>`.
fn push_as(host: &str, image: &str, work: &Path) {
    let dir = work.join(image.replace(['/', ':'], "_"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let content = format!("the image {image}\n");
    let built = image_from_layers(
        &dir,
        &[vec![("etc/which", content.as_bytes())]],
        serde_json::json!({}),
        serde_json::json!({}),
    );
    let layout = dir.join("layout");
    write_layout(&built, &layout, "x");
    let out = std::process::Command::new("skopeo")
        .args([
            "copy",
            "--quiet",
            "--dest-tls-verify=false",
            &format!("oci:{}:x", layout.display()),
            &format!("docker://{host}/{image}"),
        ])
        .output()
        .expect("run skopeo");
    assert!(
        out.status.success(),
        "skopeo copy {image}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An IDMS and an ITMS (one file, two documents) sending every registry in `registries` to
/// `host/<registry>`, never to the source.
fn mirror_sets(registries: &[String], host: &str, kinds: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (kind, list) in kinds {
        out.push_str(&format!(
            "apiVersion: config.openshift.io/v1\nkind: {kind}\nmetadata:\n  name: loopback\nspec:\n  {list}:\n"
        ));
        for r in registries {
            out.push_str(&format!(
                "  - source: {r}\n    mirrors:\n    - {host}/{r}\n    mirrorSourcePolicy: NeverContactSource\n"
            ));
        }
        out.push_str("---\n");
    }
    out
}

const BOTH: [(&str, &str); 2] = [
    ("ImageDigestMirrorSet", "imageDigestMirrors"),
    ("ImageTagMirrorSet", "imageTagMirrors"),
];

fn registries_of(images: &[String]) -> Vec<String> {
    let mut r: Vec<String> = images
        .iter()
        .map(|i| i.split('/').next().unwrap_or("").to_string())
        .collect();
    r.sort();
    r.dedup();
    r
}

fn files_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).expect("under").to_path_buf(),
                    std::fs::read(&p).expect("read"),
                );
            }
        }
    }
    out
}

fn run_pin(dir: &Path, config: &Path) -> (bool, String, String) {
    let out = olmpack()
        .args(["bundle", "pin"])
        .arg(dir)
        .arg("--mirror-config")
        .arg(config)
        .args(["--retries", "1"])
        .output()
        .expect("run olmpack");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn validate_summary(dir: &Path) -> String {
    let out = olmpack()
        .args(["bundle", "validate"])
        .arg(dir)
        .output()
        .expect("run olmpack");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    format!(
        "{:?} {}",
        out.status.code(),
        text.lines()
            .last()
            .unwrap_or("")
            .split(": ")
            .nth(1)
            .unwrap_or("")
    )
}

/// The shared corpus, if it is here and skopeo too (each skip is said).
fn corpus_with_skopeo() -> Option<PathBuf> {
    let corpus = shared_corpus()?;
    tool("skopeo", "skopeo").then_some(corpus)
}

#[test]
fn pinning_real_bundles_through_mirror_sets_to_a_loopback_registry() {
    let Some(corpus) = corpus_with_skopeo() else {
        return;
    };
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tempdir");
    for rel in BUNDLES {
        let original = corpus.join("bundles").join(rel);
        let dir = work.path().join(rel.replace('/', "-"));
        copy_dir(&original, &dir);
        let before = files_of(&dir);
        let csv_path = csv_of(&dir);
        let csv_before = std::fs::read_to_string(&csv_path).expect("csv");
        let images = tagged_images(&csv_before);
        assert!(images.len() >= 3, "{rel}: {images:?}");
        for i in &images {
            push_as(&reg.host, i, work.path());
        }
        let registries = registries_of(&images);

        // An IDMS alone cannot resolve tags (its mirrors are digest-only, the source is never
        // contacted): every image is named, nothing is written.
        let idms_only = work.path().join("idms-only.yaml");
        std::fs::write(&idms_only, mirror_sets(&registries, &reg.host, &BOTH[..1])).expect("write");
        let (ok, _, stderr) = run_pin(&dir, &idms_only);
        assert!(!ok, "{rel}: tags resolved through digest-only mirrors");
        for i in &images {
            assert!(
                stderr.contains(&format!("error: {i}: ")),
                "{rel}: {i} not named:\n{stderr}"
            );
        }
        assert_eq!(files_of(&dir), before, "{rel}: a failed pin changed files");

        // IDMS + ITMS: every image pinned to skopeo's digest.
        let config = work.path().join("mirrors.yaml");
        std::fs::write(&config, mirror_sets(&registries, &reg.host, &BOTH)).expect("write");
        let (ok, stdout, stderr) = run_pin(&dir, &config);
        assert!(ok, "{rel}: {stderr}");
        assert!(stdout.contains("100% pinned"), "{stdout}");
        let csv_after = std::fs::read_to_string(&csv_path).expect("csv");
        let mut pinned_of = BTreeMap::new();
        for i in &images {
            let digest = skopeo_digest(&format!("{}/{i}", reg.host));
            let name = i.rsplit_once(':').expect("tag").0;
            let pinned = format!("{name}@{digest}");
            assert!(csv_after.contains(&pinned), "{rel}: {pinned} not written");
            assert!(
                !csv_after.contains(&format!("{i}\n")),
                "{rel}: {i} left by tag"
            );
            pinned_of.insert(i.clone(), pinned);
        }

        // Every other file is byte-for-byte the same; the CSV differs only in image strings
        // and the added relatedImages entries, each an image pinned above.
        let after = files_of(&dir);
        for (path, bytes) in &before {
            if dir.join(path) != csv_path {
                assert_eq!(
                    after.get(path),
                    Some(bytes),
                    "{rel}: {} changed",
                    path.display()
                );
            }
        }
        assert_eq!(after.len(), before.len());
        let before_lines: Vec<&str> = csv_before.lines().collect();
        let after_lines: Vec<&str> = csv_after.lines().collect();
        let mut b = 0;
        let mut added = Vec::new();
        for line in &after_lines {
            let restored = pinned_of.iter().fold(line.to_string(), |l, (tag, pin)| {
                l.replace(pin.as_str(), tag)
            });
            if b < before_lines.len() && restored == before_lines[b] {
                b += 1;
            } else {
                added.push(line.to_string());
            }
        }
        assert_eq!(
            b,
            before_lines.len(),
            "{rel}: an original line was lost or changed beyond its image"
        );
        assert!(
            !added.is_empty() && added.len() % 2 == 0,
            "{rel}: added {added:?}"
        );
        for pair in added.chunks(2) {
            let image = pair[0]
                .trim_start()
                .strip_prefix("- image: ")
                .expect("an added entry starts with its image");
            assert!(
                pinned_of.values().any(|p| p == image),
                "{rel}: added {image}"
            );
            assert!(
                pair[1].trim_start().starts_with("name: "),
                "{rel}: {pair:?}"
            );
        }
        // spec.relatedImages now lists every image.
        for pinned in pinned_of.values() {
            assert!(
                csv_after.contains(&format!("- image: {pinned}\n")),
                "{rel}: {pinned} not in relatedImages"
            );
        }

        // The pinned bundle validates as the original does.
        assert_eq!(validate_summary(&dir), validate_summary(&original), "{rel}");

        // A second run (by digest now: the IDMS mirrors answer) changes nothing.
        let (ok, stdout, stderr) = run_pin(&dir, &idms_only);
        assert!(ok, "{rel}: second run: {stderr}");
        assert!(stdout.contains("unchanged"), "{stdout}");
        assert_eq!(files_of(&dir), after, "{rel}: the second run changed files");
    }
}

#[test]
fn a_registry_whose_digest_header_lies_is_refused() {
    let Some(corpus) = corpus_with_skopeo() else {
        return;
    };
    let reg = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path().join("b");
    copy_dir(&corpus.join("bundles").join(BUNDLES[0]), &dir);
    let csv_before = std::fs::read_to_string(csv_of(&dir)).expect("csv");
    let images = tagged_images(&csv_before);
    for i in &images {
        push_as(&reg.host, i, work.path());
    }
    // The proxy answers the existence check of one tag with another image's headers.
    let liar = images[0].clone();
    let (lied_name, lied_tag) = liar.rsplit_once(':').expect("tag");
    let other = images[1].clone();
    let (other_name, other_tag) = other.rsplit_once(':').expect("tag");
    let from = format!("/v2/{lied_name}/manifests/{lied_tag}");
    let to = format!("/v2/{other_name}/manifests/{other_tag}");
    let proxy = Proxy::start(reg.port, move |s, _| {
        if s.method == "HEAD" && s.path == from {
            Fault::Path(to.clone())
        } else {
            Fault::Pass
        }
    });
    let config = work.path().join("mirrors.yaml");
    std::fs::write(
        &config,
        mirror_sets(&registries_of(&images), &proxy.host(), &BOTH),
    )
    .expect("write");
    let (ok, _, stderr) = run_pin(&dir, &config);
    assert!(!ok, "a lying registry was believed");
    assert!(
        stderr.contains(&format!("error: {liar}: ")) && stderr.contains("refused"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(csv_of(&dir)).expect("csv"),
        csv_before,
        "nothing written"
    );
}

#[test]
fn offline_pinning_reads_oci_layouts_only() {
    let Some(corpus) = shared_corpus() else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path().join("b");
    copy_dir(&corpus.join("bundles").join(BUNDLES[0]), &dir);
    let csv_path = csv_of(&dir);
    let csv_before = std::fs::read_to_string(&csv_path).expect("csv");
    let images = tagged_images(&csv_before);
    let layouts = work.path().join("layouts");
    let mut digests = BTreeMap::new();
    // Every image but the last is in the layouts: the run must fail naming that one.
    for (n, i) in images.iter().enumerate() {
        let (name, tag) = i.rsplit_once(':').expect("tag");
        let build = work.path().join(format!("build{n}"));
        std::fs::create_dir_all(&build).expect("mkdir");
        let content = format!("the image {i}\n");
        let built = image_from_layers(
            &build,
            &[vec![("etc/which", content.as_bytes())]],
            serde_json::json!({}),
            serde_json::json!({}),
        );
        if n + 1 < images.len() {
            write_layout(&built, &layouts.join(name), tag);
        }
        digests.insert(i.clone(), built.manifest.descriptor.digest.clone());
    }
    let out = olmpack()
        .args(["bundle", "pin"])
        .arg(&dir)
        .arg("--offline")
        .arg("--layout")
        .arg(&layouts)
        .output()
        .expect("run olmpack");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let missing = images.last().expect("an image");
    assert!(
        stderr.contains(&format!("error: {missing}: "))
            && stderr.contains("not in any --layout folder"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("error: ").count(),
        2,
        "only the missing image (and the summary): {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&csv_path).expect("csv"), csv_before);

    let (name, tag) = missing.rsplit_once(':').expect("tag");
    let build = work.path().join("last");
    std::fs::create_dir_all(&build).expect("mkdir");
    let content = format!("the image {missing}\n");
    let built = image_from_layers(
        &build,
        &[vec![("etc/which", content.as_bytes())]],
        serde_json::json!({}),
        serde_json::json!({}),
    );
    write_layout(&built, &layouts.join(name), tag);
    olmpack()
        .args(["bundle", "pin"])
        .arg(&dir)
        .arg("--offline")
        .arg("--layout")
        .arg(&layouts)
        .succeeds();
    let csv_after = std::fs::read_to_string(&csv_path).expect("csv");
    for (i, d) in &digests {
        let name = i.rsplit_once(':').expect("tag").0;
        assert!(
            csv_after.contains(&format!("{name}@{d}")),
            "{i} not pinned to {d}"
        );
    }
}
