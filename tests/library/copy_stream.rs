//! `transport::copy` of an image whose layer is far larger than any body olmpack buffers: the
//! layer goes from one real registry to another, and into an OCI layout, through the blob's own
//! fetcher and a spool file, uploaded in bounded chunks. (How little memory that takes is a
//! benchmark figure, `just bench-copy`, not an assertion here.)

use crate::support::registry::{self as support, Mode, Registry};
use olmpack::image::{Blob, BlobSource, Descriptor, Image};
use olmpack::location::Location;
use olmpack::registry::auth::ResolvedCredential;
use olmpack::registry::client::{Client, ClientOptions};
use olmpack::registry::push::{self, BlobAction, Progress, PushOptions};
use olmpack::transport::{CopyOptions, Target, copy};
use sha2::{Digest, Sha256};
use std::io::Write;

const LAYER_BYTES: usize = 48 << 20;
const CHUNK: u64 = 4 << 20;

fn big_layer(path: &std::path::Path) -> Descriptor {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut hasher = Sha256::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut buf = vec![0u8; 1 << 16];
    let mut left = LAYER_BYTES;
    while left > 0 {
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = (x >> 24) as u8;
        }
        let n = left.min(buf.len());
        file.write_all(&buf[..n]).expect("write");
        hasher.update(&buf[..n]);
        left -= n;
    }
    file.flush().expect("flush");
    Descriptor {
        media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
        digest: format!("sha256:{}", support::hex(&hasher.finalize())),
        size: LAYER_BYTES as u64,
    }
}

#[test]
fn a_large_layer_is_streamed_between_registries_and_into_a_layout() {
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let work = tempfile::tempdir().expect("tmp");
    let layer_path = work.path().join("layer");
    let layer = Blob {
        descriptor: big_layer(&layer_path),
        source: BlobSource::File(layer_path),
    };
    let config = Blob::memory("application/vnd.oci.image.config.v1+json", b"{}".to_vec());
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config.descriptor.media_type, "digest": config.descriptor.digest, "size": config.descriptor.size},
        "layers": [{"mediaType": layer.descriptor.media_type, "digest": layer.descriptor.digest, "size": layer.descriptor.size}],
    });
    let image = Image {
        manifest: Blob::memory(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).expect("json"),
        ),
        config,
        layers: vec![layer.clone()],
    };
    let silent = PushOptions {
        progress: Progress::Silent,
        ..PushOptions::default()
    };
    let client = Client::new(
        &src.host,
        ResolvedCredential::anonymous(),
        &ClientOptions::default(),
    )
    .expect("client");
    push::push_image(&client, &image, "big/image", &["v1".into()], &silent).expect("seed");

    let source = Location::parse(&src.reference("big/image", "v1")).expect("source");
    let opts = CopyOptions {
        push: PushOptions {
            chunk_threshold: CHUNK,
            chunk_size: CHUNK,
            memory_body_max: 0,
            ..silent
        },
        ..CopyOptions::default()
    };
    let target: Target = dst.reference("big/copy", "v1").parse().expect("target");
    let report = copy(&source, &target, &opts).expect("copy between registries");
    assert_eq!(report.digest, image.manifest.descriptor.digest);
    let pushed = report
        .blobs
        .iter()
        .find(|b| b.digest == layer.descriptor.digest)
        .expect("the layer is in the report");
    // Chunked from the spool file: no request body held the layer whole.
    assert_eq!(pushed.action, BlobAction::UploadedChunked);

    let layout = work.path().join("layout");
    let target: Target = format!("oci:{}:v1", layout.display())
        .parse()
        .expect("target");
    let report = copy(&source, &target, &CopyOptions::default()).expect("copy into a layout");
    assert_eq!(report.digest, image.manifest.descriptor.digest);
    let hex = layer.descriptor.digest.trim_start_matches("sha256:");
    let mut file = std::fs::File::open(layout.join("blobs/sha256").join(hex)).expect("layer blob");
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = std::io::Read::read(&mut file, &mut buf).expect("read");
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    assert_eq!(
        format!("sha256:{}", support::hex(&hasher.finalize())),
        layer.descriptor.digest
    );
}
