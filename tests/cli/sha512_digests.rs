//! sha512 image digests (issue 39 item 12): an `oci:` layout whose manifest, config and layers
//! are all addressed by sha512 (`blobs/sha512/<hex>`, as go-digest and containers/image allow),
//! written here from a sha256 layout. skopeo reads it as the reference; olmpack reads,
//! unpacks and copies it, verifying every blob with sha512, and refuses a blob whose bytes do
//! not match its sha512 digest (same size, one byte changed) and a manifest that lies.

use crate::signing::{code, olmpack, out, text, tool};
use crate::support::registry::{bundle_image, write_layout};
use sha2::Digest as _;
use std::path::Path;

fn sha512(bytes: &[u8]) -> String {
    let mut s = String::from("sha512:");
    for b in sha2::Sha512::digest(bytes).iter() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn blob(dir: &Path, digest: &str) -> std::path::PathBuf {
    let (algo, hex) = digest.split_once(':').expect("digest");
    dir.join("blobs").join(algo).join(hex)
}

/// Rewrites the sha256 layout `from` (one image tagged `v1`) as a sha512 layout `to`; the
/// manifest digest and the first layer's digest.
fn sha512_layout(from: &Path, to: &Path) -> (String, String) {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from.join("index.json")).expect("index"))
            .expect("json");
    let entry = &index["manifests"][0];
    let old_manifest =
        std::fs::read(blob(from, entry["digest"].as_str().expect("digest"))).expect("manifest");
    let mut manifest: serde_json::Value = serde_json::from_slice(&old_manifest).expect("json");
    std::fs::create_dir_all(to.join("blobs/sha512")).expect("mkdir");
    let move_blob = |desc: &mut serde_json::Value| {
        let bytes =
            std::fs::read(blob(from, desc["digest"].as_str().expect("digest"))).expect("blob");
        let d = sha512(&bytes);
        std::fs::write(blob(to, &d), &bytes).expect("write");
        desc["digest"] = d.into();
    };
    move_blob(&mut manifest["config"]);
    for l in manifest["layers"].as_array_mut().expect("layers") {
        move_blob(l);
    }
    let first_layer = manifest["layers"][0]["digest"]
        .as_str()
        .expect("layer")
        .to_string();
    let bytes = serde_json::to_vec(&manifest).expect("json");
    let md = sha512(&bytes);
    std::fs::write(blob(to, &md), &bytes).expect("write");
    let new_index = serde_json::json!({
        "schemaVersion": 2,
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": md,
            "size": bytes.len(),
            "annotations": {"org.opencontainers.image.ref.name": "v1"},
        }],
    });
    std::fs::write(to.join("index.json"), new_index.to_string()).expect("write");
    std::fs::write(to.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).expect("write");
    (md, first_layer)
}

#[test]
fn a_sha512_layout_is_read_verified_with_sha512() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    std::fs::create_dir_all(d.join("img")).expect("mkdir");
    let image = bundle_image(&d.join("img"), 3, "sha512-operator");
    write_layout(&image, &d.join("l256"), "v1");
    let layout = d.join("l512");
    let (manifest_digest, layer) = sha512_layout(&d.join("l256"), &layout);
    let name = format!("oci:{}:v1", layout.display());
    // The reference: skopeo reads the sha512 layout (and finds the manifest olmpack must find).
    let raw = out(tool("skopeo").args(["inspect", "--raw", &name]));
    assert!(raw.status.success(), "skopeo: {}", text(&raw));
    assert_eq!(sha512(&raw.stdout), manifest_digest);
    let mut failures = Vec::new();
    let inspect = out(&mut olmpack(
        d,
        &["bundle", "inspect", &name, "--no-files", "-o", "json"],
    ));
    if !inspect.status.success() || !text(&inspect).contains(&manifest_digest) {
        failures.push(format!(
            "bundle inspect: exit {}: {}",
            code(&inspect),
            text(&inspect)
        ));
    }
    let pulled = d.join("pulled");
    let pull = out(&mut olmpack(
        d,
        &["bundle", "pull", &name, pulled.to_str().expect("utf8")],
    ));
    if !pull.status.success() || !pulled.join("metadata/annotations.yaml").is_file() {
        failures.push(format!(
            "bundle pull: exit {}: {}",
            code(&pull),
            text(&pull)
        ));
    }
    // A copy keeps the sha512 blobs where a layout keeps them; skopeo reads the copy.
    let copied = d.join("copied");
    let copy = out(&mut olmpack(
        d,
        &["copy", &name, &format!("oci:{}:v1", copied.display())],
    ));
    if !copy.status.success() || !blob(&copied, &manifest_digest).is_file() {
        failures.push(format!("copy: exit {}: {}", code(&copy), text(&copy)));
    } else {
        // skopeo 1.9.3's `inspect` without --raw checks a config with sha256 whatever its
        // digest names ("config.json digest sha256:… does not match expected sha512:…"), so
        // the manifest is what it is asked for.
        let raw =
            out(tool("skopeo").args(["inspect", "--raw", &format!("oci:{}:v1", copied.display())]));
        if !raw.status.success() || sha512(&raw.stdout) != manifest_digest {
            failures.push(format!("skopeo reading the copy: {}", text(&raw)));
        }
    }
    // A layer that lies: same size, one byte changed. Refused, naming the sha512 digest.
    let path = blob(&layout, &layer);
    let mut bytes = std::fs::read(&path).expect("layer");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).expect("write");
    let lying = d.join("lying");
    let o = out(&mut olmpack(
        d,
        &["bundle", "pull", &name, lying.to_str().expect("utf8")],
    ));
    if o.status.success() || !text(&o).contains(&layer) || lying.join("metadata").exists() {
        failures.push(format!(
            "a lying sha512 layer: exit {}: {}",
            code(&o),
            text(&o)
        ));
    }
    // A manifest that lies: its bytes changed under its sha512 name.
    let mpath = blob(&layout, &manifest_digest);
    let m = std::fs::read_to_string(&mpath).expect("manifest").replacen(
        "\"schemaVersion\":2",
        "\"schemaVersion\": 2",
        1,
    );
    std::fs::write(&mpath, m).expect("write");
    let o = out(&mut olmpack(d, &["bundle", "inspect", &name, "--no-files"]));
    if o.status.success() || !text(&o).contains(&manifest_digest) {
        failures.push(format!(
            "a lying sha512 manifest: exit {}: {}",
            code(&o),
            text(&o)
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
