//! `olmpack copy` of a hostile index under a memory bound (issue 40.6): a 150 KB index of 700
//! images that all share one config of 4 MiB, pushed into a real `docker-registry`. Opening
//! every image before writing anything held 700 copies of that config (3 GB, then an abort).
//! The copy runs under `prlimit --as` (util-linux: an address-space limit olmpack cannot
//! exceed), to another registry and into an `oci:` layout, and skopeo reads the result.

use crate::copy::{client, silent, skopeo_raw};
use crate::support::cmd::olmpack_path;
use crate::support::proc::Bounded;
use crate::support::registry::{self as support, Fault, Mode, Proxy, Registry};
use olmpack::image::media::{OCI_CONFIG, OCI_INDEX, OCI_LAYER_GZIP, OCI_MANIFEST};
use olmpack::image::{Blob, BlobSource, Descriptor, Image};
use olmpack::registry::push;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const REPO: &str = "hostile/index";

/// The most entries olmpack reads of an index (`olmpack::image::MAX_INDEX_ENTRIES`), written
/// out so this test also builds against code that predates the cap.
const MAX_INDEX_ENTRIES: usize = 1024;

/// `PUT /v2/REPO/manifests/REF` of a manifest or index, straight over HTTP (the registry
/// checks the digest when `REF` is one).
fn put_manifest(reg: &Registry, reference: &str, media_type: &str, bytes: &[u8]) {
    let resp = olmpack::registry::tls::client_builder()
        .build()
        .expect("HTTP client")
        .put(format!(
            "http://{}/v2/{REPO}/manifests/{reference}",
            reg.host
        ))
        .header("Content-Type", media_type)
        .body(bytes.to_vec())
        .send()
        .expect("PUT manifest");
    assert_eq!(resp.status().as_u16(), 201, "PUT manifest {reference}");
}

/// The address space a copy may use: a debug build copying a small image reserves a few
/// hundred MiB (thread stacks, allocator arenas); 700 configs of 4 MiB need 2.8 GiB.
const ADDRESS_SPACE: u64 = 1536 << 20;

/// Pushes an index of `children` images to `reg` as `REPO:v1`: each image its own manifest
/// (an annotation tells them apart), all of them one config of almost 4 MiB (the most a
/// config may have) and one small layer. Returns the index bytes and the config digest.
fn push_hostile_index(reg: &Registry, dir: &Path, children: usize) -> (Vec<u8>, String) {
    let c = client(&reg.host);
    // A config at the size cap, of bytes gzip cannot shrink, kept in a file so the test
    // itself does not hold it once per image.
    let mut pad = String::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while pad.len() < (4 << 20) - 4096 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pad.push_str(&format!("{x:016x}"));
    }
    let config_bytes = serde_json::to_vec(
        &serde_json::json!({"architecture": "amd64", "os": "linux", "pad": pad}),
    )
    .unwrap();
    let config_path = dir.join("config.json");
    std::fs::write(&config_path, &config_bytes).unwrap();
    let config = Blob {
        descriptor: Descriptor {
            media_type: OCI_CONFIG.into(),
            digest: support::sha256(&config_bytes),
            size: config_bytes.len() as u64,
        },
        source: BlobSource::File(config_path),
    };
    drop(config_bytes);
    let layer = Blob::memory(OCI_LAYER_GZIP, support::gzip_tar(&[("a.txt", b"a")]));
    let descriptor = |b: &Blob| {
        serde_json::json!({
            "mediaType": b.descriptor.media_type,
            "digest": b.descriptor.digest,
            "size": b.descriptor.size,
        })
    };
    let mut entries = Vec::new();
    for n in 0..children {
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": descriptor(&config),
            "layers": [descriptor(&layer)],
            "annotations": {"n": n.to_string()},
        });
        let manifest = Blob::memory(OCI_MANIFEST, serde_json::to_vec(&manifest).unwrap());
        if n == 0 {
            let image = Image {
                manifest: manifest.clone(),
                config: config.clone(),
                layers: vec![layer.clone()],
            };
            push::push_image(&c, &image, REPO, &[], &silent()).expect("push the first image");
        } else {
            // The blobs are there: only the manifest goes up, by digest.
            let BlobSource::Memory(bytes) = &manifest.source else {
                unreachable!()
            };
            put_manifest(reg, &manifest.descriptor.digest, OCI_MANIFEST, bytes);
        }
        let mut entry = descriptor(&manifest);
        entry["platform"] = serde_json::json!({"os": "linux", "architecture": "amd64"});
        entries.push(entry);
    }
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": entries,
    }))
    .unwrap();
    put_manifest(reg, "v1", OCI_INDEX, &index);
    (index, config.descriptor.digest)
}

/// `prlimit --as=ADDRESS_SPACE olmpack copy FROM TO`, bounded in time.
fn bounded_copy(from: &str, to: &str) -> Output {
    Command::new("prlimit")
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(olmpack_path())
        .args(["copy", from, to])
        .env("NO_COLOR", "1")
        .output_within(Duration::from_secs(600))
        .expect("run prlimit (util-linux)")
}

fn assert_copied(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: olmpack copy under a {} MiB address space failed ({:?})\nstderr: {}",
        ADDRESS_SPACE >> 20,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_index_of_700_images_sharing_a_4_mib_config_copies_in_bounded_memory() {
    let work = tempfile::tempdir().unwrap();
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let (index, config) = push_hostile_index(&src, work.path(), 700);
    assert!(
        index.len() > 100_000 && index.len() < 200_000,
        "{}",
        index.len()
    );
    // Every request to the source goes through a counting proxy.
    let proxy = Proxy::start(src.port, |_, _| Fault::Pass);
    let from = format!("{}/{REPO}:v1", proxy.host());

    // Registry to registry: the same index bytes at the target, each image there.
    let to = dst.reference("mirror/index", "v1");
    assert_copied(&bounded_copy(&from, &to), "registry to registry");
    let raw = skopeo_raw(&format!("docker://{to}")).expect("skopeo reads the copy");
    assert_eq!(
        raw, index,
        "the target holds the source's index, byte for byte"
    );
    let last =
        serde_json::from_slice::<serde_json::Value>(&index).unwrap()["manifests"][699]["digest"]
            .as_str()
            .unwrap()
            .to_string();
    skopeo_raw(&format!("docker://{}/mirror/index@{last}", dst.host))
        .expect("the last image is at the target");
    // The config is fetched from the source once, not once per image.
    assert_eq!(proxy.count("GET", &config), 1, "config downloads");

    // Registry to an OCI layout.
    let layout = work.path().join("layout");
    let to = format!("oci:{}:v1", layout.display());
    assert_copied(&bounded_copy(&from, &to), "registry to oci:");
    let raw = skopeo_raw(&to).expect("skopeo reads the layout");
    assert_eq!(raw, index);
    // Every blob once: 700 manifests, the config, the layer and the index.
    let blobs = layout.join("blobs/sha256");
    assert_eq!(std::fs::read_dir(&blobs).unwrap().count(), 703);
    for digest in [&last, &config] {
        assert!(
            blobs.join(digest.trim_start_matches("sha256:")).is_file(),
            "{digest}"
        );
    }
    assert_eq!(proxy.count("GET", &config), 2, "config downloads");
}

/// An index with more entries than olmpack reads is refused before anything is written.
#[test]
fn an_index_past_the_entry_cap_is_refused_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    let src = Registry::start(Mode::Plain);
    let c = client(&src.host);
    let config = Blob::memory(
        OCI_CONFIG,
        br#"{"architecture":"amd64","os":"linux"}"#.to_vec(),
    );
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": config.descriptor.digest, "size": config.descriptor.size},
        "layers": [],
    });
    let manifest = Blob::memory(OCI_MANIFEST, serde_json::to_vec(&manifest).unwrap());
    let image = Image {
        manifest: manifest.clone(),
        config,
        layers: Vec::new(),
    };
    push::push_image(&c, &image, REPO, &[], &silent()).expect("push");
    let entry = serde_json::json!({
        "mediaType": OCI_MANIFEST,
        "digest": manifest.descriptor.digest,
        "size": manifest.descriptor.size,
    });
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": vec![entry; MAX_INDEX_ENTRIES + 1],
    }))
    .unwrap();
    put_manifest(&src, "big", OCI_INDEX, &index);
    let layout = work.path().join("layout");
    let out = Command::new(olmpack_path())
        .args(["copy", &src.reference(REPO, "big")])
        .arg(format!("oci:{}:v1", layout.display()))
        .env("NO_COLOR", "1")
        .output_within(Duration::from_secs(120))
        .expect("run olmpack");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("lists {} manifests", MAX_INDEX_ENTRIES + 1))
            && stderr.contains(&MAX_INDEX_ENTRIES.to_string()),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!layout.exists(), "nothing written");
}
