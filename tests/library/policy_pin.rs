//! The policy check hands the digest it verified to the read (issue 39 item 1), through the
//! library: `check_policy` gives back a location pinned to that digest, and an `oci:` layout
//! whose tag is re-pointed between the check and the read is refused, not read.

use crate::support::registry::{image_from_layers, labels, write_layout};
use olmpack::action::sign::{self, SignOptions, check_policy};
use olmpack::location::Location;
use olmpack::signature::keys;
use olmpack::transport::{RegistryOptions, TransportError};

fn image(dir: &std::path::Path, n: &str) -> olmpack::image::Image {
    std::fs::create_dir_all(dir).expect("mkdir");
    let csv = format!("kind: ClusterServiceVersion\nmetadata:\n  name: op.v{n}\n");
    image_from_layers(
        dir,
        &[vec![("manifests/csv.yaml", csv.as_bytes())]],
        labels("op"),
        serde_json::json!({}),
    )
}

#[test]
fn a_layout_tag_repointed_after_the_check_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let signed = image(&d.join("s"), "1");
    let unsigned = image(&d.join("u"), "2");
    let layout = d.join("layout");
    write_layout(&signed, &layout, "v1");
    // The unsigned image's blobs beside it, so re-pointing the tag makes a readable image.
    let other = d.join("other");
    write_layout(&unsigned, &other, "v1");
    for e in std::fs::read_dir(other.join("blobs/sha256"))
        .expect("blobs")
        .flatten()
    {
        std::fs::copy(e.path(), layout.join("blobs/sha256").join(e.file_name())).expect("copy");
    }
    let pair = keys::generate(b"pw").expect("key");
    std::fs::write(d.join("c.pub"), &pair.public_pem).expect("write");
    let key = keys::decrypt_private_key(pair.private_pem.as_bytes(), b"pw", "c.key").expect("key");
    let location = Location::parse(&format!("oci:{}:v1", layout.display())).expect("location");
    let registry = RegistryOptions::default();
    sign::sign(
        &location,
        &registry,
        &SignOptions {
            cosign_key: Some(key),
            cosign_format: sign::CosignFormat::Legacy,
            identity: Some("example.com/op/x:v1".into()),
            ..SignOptions::default()
        },
    )
    .expect("signed");
    let policy = serde_json::json!({
        "default": [{"type": "reject"}],
        "transports": {"oci": {"": [{
            "type": "sigstoreSigned",
            "keyPath": d.join("c.pub"),
            "signedIdentity": {"type": "exactRepository", "dockerRepository": "example.com/op/x"},
        }]}}
    });
    std::fs::write(d.join("policy.json"), policy.to_string()).expect("write");
    let policy_path = d.join("policy.json").display().to_string();
    let checked = check_policy(Some(&policy_path), &location, &registry).expect("admitted");
    assert_eq!(
        checked.verified_digest(),
        Some(signed.manifest.descriptor.digest.as_str()),
        "the check hands on the digest it verified"
    );
    // The tag now names the unsigned image (the layout changed between check and read).
    let index_path = layout.join("index.json");
    let index = std::fs::read_to_string(&index_path).expect("read");
    std::fs::write(
        &index_path,
        index.replace(
            &signed.manifest.descriptor.digest,
            &unsigned.manifest.descriptor.digest,
        ),
    )
    .expect("write");
    match olmpack::transport::open(&checked, &registry) {
        Err(TransportError::NotVerified { actual, .. }) => {
            assert_eq!(actual, unsigned.manifest.descriptor.digest)
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(o) => panic!(
            "read {} although {} was verified",
            o.value.digest(),
            signed.manifest.descriptor.digest
        ),
    }
    // Unpinned, the same string reads the unsigned image: the pin is what refused it.
    let opened = olmpack::transport::open(&location, &registry).expect("opens");
    assert_eq!(opened.value.digest(), unsigned.manifest.descriptor.digest);
}
