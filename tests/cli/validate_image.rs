//! End to end across the commands: `bundle build --push` to a real registry, `bundle validate
//! --image` of what was pushed, `bundle pull` then `bundle build` back to the same digest, and the
//! image-only rules (`"image/labels"`, `"image/shape"`) on images made to break them.

use crate::support::cmd::run as olmpack;
use crate::support::fixtures::valid_basic;
use crate::support::registry as support;

use std::path::Path;
use support::{Mode, PASSWORD, Registry};

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The first stdout line of `bundle build`: `sha256:<hex> <size>`.
fn digest_of(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    first
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn build_push_validate_image_pull_and_rebuild_round_trip() {
    for mode in [Mode::Plain, Mode::TlsBasic] {
        let reg = Registry::start(mode);
        let reference = reg.reference("olm/kvstore-bundle", "v1.2.0");
        let second = reg.reference("olm/kvstore-bundle", "stable");
        let conn = reg.cli_flags();
        let conn: Vec<&str> = conn.iter().map(String::as_str).collect();

        let dir = valid_basic();
        // `bundle build valid-basic --push`, with `-t` each of `tags`.
        let build_push = |tags: &[&str]| {
            let mut args = vec!["bundle", "build", dir.to_str().expect("utf-8"), "--push"];
            for &tag in tags {
                args.extend(["-t", tag]);
            }
            args.extend(&conn);
            olmpack(&args)
        };
        let built = build_push(&[&reference, &second]);
        assert!(
            built.status.success(),
            "build --push failed: {}",
            text(&built)
        );
        let digest = digest_of(&built);
        assert!(digest.starts_with("sha256:"), "{}", text(&built));
        let stdout = String::from_utf8_lossy(&built.stdout);
        for r in [&reference, &second] {
            assert!(
                stdout.contains(&format!("{r}@{digest}")),
                "missing {r}@{digest} in {stdout}"
            );
        }
        assert!(!text(&built).contains(PASSWORD), "password leaked");

        // validate --image of what was pushed: valid, labels equal annotations.
        let mut args = vec!["bundle", "validate", "--image", &reference, "-o", "json"];
        args.extend(&conn);
        let validated = olmpack(&args);
        assert_eq!(validated.status.code(), Some(0), "{}", text(&validated));
        let json: serde_json::Value = serde_json::from_slice(&validated.stdout).expect("json");
        assert_eq!(json["passed"], true, "{json}");
        assert!(
            !json["outputs"]
                .as_array()
                .expect("outputs")
                .iter()
                .any(|o| o["rule"] == "image/labels"),
            "{json}"
        );

        // pull, then build the pulled folder: the same digest (round trip).
        let work = tempfile::tempdir().expect("tmp");
        let pulled = work.path().join("pulled");
        let mut args = vec![
            "bundle",
            "pull",
            &reference,
            pulled.to_str().expect("utf-8"),
        ];
        args.extend(&conn);
        let out = olmpack(&args);
        assert!(out.status.success(), "pull failed: {}", text(&out));
        let layout = format!("oci:{}:v1.2.0", work.path().join("layout").display());
        let rebuilt = olmpack(&[
            "bundle",
            "build",
            pulled.to_str().expect("utf-8"),
            "--output",
            &layout,
        ]);
        assert!(rebuilt.status.success(), "{}", text(&rebuilt));
        assert_eq!(
            digest_of(&rebuilt),
            digest,
            "pull then build must give the pushed digest"
        );

        // Re-pushing the same image uploads no blob (every HEAD finds it).
        let again = build_push(&[&reference]);
        assert!(again.status.success(), "{}", text(&again));
        assert_eq!(digest_of(&again), digest);
    }
}

#[test]
fn push_without_a_tag_is_a_usage_error() {
    let out = olmpack(&[
        "bundle",
        "build",
        valid_basic().to_str().expect("utf-8"),
        "--push",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--push needs at least one -t REF"),
        "{}",
        text(&out)
    );
}

#[test]
fn label_that_disagrees_with_annotations_fails_image_labels() {
    let work = tempfile::tempdir().expect("tmp");
    // The hand-made image's annotations.yaml says package "testop"; its label says "other".
    let image = support::bundle_image(work.path(), 0, "other");
    let layout = work.path().join("layout");
    support::write_layout(&image, &layout, "v1");
    let source = format!("oci:{}:v1", layout.display());
    let out = olmpack(&["bundle", "validate", "--image", &source, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let finding = json["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .find(|o| o["rule"] == "image/labels")
        .unwrap_or_else(|| panic!("no image/labels finding: {json}"));
    let message = finding["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"other\"") && message.contains("\"testop\""),
        "both values named: {message}"
    );
    assert_eq!(finding["type"], "error");
    assert_eq!(finding["file"], "metadata/annotations.yaml");
}

#[test]
fn image_index_and_runnable_config_warn_image_shape() {
    let work = tempfile::tempdir().expect("tmp");
    let layout = work.path().join("layout");
    let dest = format!("oci:{}:v1", layout.display());
    let out = olmpack(&[
        "bundle",
        "build",
        valid_basic().to_str().expect("utf-8"),
        "--output",
        &dest,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    wrap_in_index(&layout);
    let out = olmpack(&["bundle", "validate", "--image", &dest, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "warnings only: {}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let shapes: Vec<&serde_json::Value> = json["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .filter(|o| o["rule"] == "image/shape")
        .collect();
    assert!(
        !shapes.is_empty(),
        "an index must give an image/shape warning: {json}"
    );
    assert!(shapes.iter().all(|o| o["type"] == "warning"), "{json}");
    let strict = olmpack(&["bundle", "validate", "--image", &dest, "--strict"]);
    assert_eq!(
        strict.status.code(),
        Some(1),
        "--strict fails on the warning: {}",
        text(&strict)
    );
}

/// Replaces the layout's tagged manifest with an image index pointing at it.
fn wrap_in_index(layout: &Path) {
    let index_path = layout.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).expect("index")).expect("json");
    let entry = index["manifests"][0].clone();
    let image_index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": entry["mediaType"],
            "digest": entry["digest"],
            "size": entry["size"],
            "platform": {"os": "linux", "architecture": "amd64"}
        }]
    });
    let bytes = serde_json::to_vec(&image_index).expect("index bytes");
    let digest = support::sha256(&bytes);
    let hex = digest.trim_start_matches("sha256:");
    std::fs::write(layout.join("blobs/sha256").join(hex), &bytes).expect("write index blob");
    index["manifests"][0] = serde_json::json!({
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "digest": digest,
        "size": bytes.len(),
        "annotations": entry["annotations"],
    });
    std::fs::write(&index_path, serde_json::to_vec(&index).expect("index.json"))
        .expect("write index.json");
}
