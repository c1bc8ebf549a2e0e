//! `olmpack catalog init`: opm init's exact output, plus the name check and icon detection.

use crate::support::cmd::olmpack;
use crate::support::proc::Bounded;
use predicates::prelude::*;
use predicates::str::contains;

#[test]
fn json_and_yaml_as_opm_init_writes_them() {
    olmpack()
        .args(["catalog", "init", "foo", "-c", "stable"])
        .assert()
        .success()
        .stdout("{\n    \"schema\": \"olm.package\",\n    \"name\": \"foo\",\n    \"defaultChannel\": \"stable\"\n}\n");
    olmpack()
        .args(["catalog", "init", "foo", "-c", "stable", "-o", "yaml"])
        .assert()
        .success()
        .stdout("---\ndefaultChannel: stable\nname: foo\nschema: olm.package\n");
}

#[test]
fn description_and_icon_types_from_content() {
    let dir = tempfile::tempdir().unwrap();
    let desc = dir.path().join("README.md");
    std::fs::write(&desc, "# Demo\n\nLine two: yes\n").unwrap();
    // An SVG icon named .png: the type comes from the content.
    let svg = dir.path().join("icon.png");
    std::fs::write(
        &svg,
        "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )
    .unwrap();
    let out = olmpack()
        .args([
            "catalog", "init", "demo", "-c", "stable", "-o", "yaml", "-d",
        ])
        .arg(&desc)
        .arg("-i")
        .arg(&svg)
        .bounded_output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("  mediatype: image/svg+xml\n"), "{text}");
    assert!(
        text.contains("description: |\n  # Demo\n\n  Line two: yes\n"),
        "{text}"
    );
    let png = dir.path().join("icon.svg");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    olmpack()
        .args(["catalog", "init", "demo", "-c", "stable", "-i"])
        .arg(&png)
        .assert()
        .success()
        .stdout(contains("\"mediatype\": \"image/png\""));
    let gif = dir.path().join("icon.gif");
    std::fs::write(&gif, b"GIF89a\x01\0\x01\0").unwrap();
    olmpack()
        .args(["catalog", "init", "demo", "-c", "stable", "-i"])
        .arg(&gif)
        .assert()
        .success()
        .stdout(contains("\"mediatype\": \"image/gif\""));
}

#[test]
fn bad_name_and_non_image_icon_are_refused() {
    olmpack()
        .args(["catalog", "init", "My_Operator", "-c", "stable"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains("DNS-1123"));
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("icon.png");
    std::fs::write(&txt, "not an image").unwrap();
    olmpack()
        .args(["catalog", "init", "demo", "-c", "stable", "-i"])
        .arg(&txt)
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains("icon.png").and(contains("not an image")));
}
