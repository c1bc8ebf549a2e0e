//! The image-reading half of the fuzz harness: the bundle image a case has just built is read
//! back damaged. Its layer (the uncompressed tar, damaged, then given plain or gzipped) goes
//! through the layer lister and the extractor, which must neither panic nor write outside their
//! target folder; its oci-archive (damaged) goes through `unpack_image`, the path of
//! `bundle validate --image`, `bundle inspect` and `catalog render` for local images.

use super::{Rng, Stages, damage};
use olmpack::image::model::Image;
use olmpack::transport::RegistryOptions;
use olmpack::transport::archive::write_oci_archive;
use olmpack::transport::unpack::{Limits, Stats, decompress, list_layer, unpack_layer};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Small limits, so damaged sizes cannot make a case slow.
const LIMITS: Limits = Limits {
    max_total_bytes: 64 << 20,
    max_entries: 10_000,
    max_file_bytes: 16 << 20,
};

/// Every path under `dir`, except under `skip`, in order.
fn listing(dir: &Path, skip: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.starts_with(skip) {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The layer of `image` damaged and read back, and its oci-archive damaged and unpacked;
/// `work` is a folder of the case's own. An extraction that changes anything in `work` outside
/// its target folder is reported like a panic.
pub fn run_image_read(image: &Image, work: &Path, variant: u64, stages: &mut Stages) {
    let mut rng = Rng::for_case(variant, 0x1A7E_2000);
    let mut escaped = None;
    stages.run("layer read", || {
        let Some(layer) = image.layers.first() else {
            return;
        };
        let mut tar = Vec::new();
        let read = layer
            .open()
            .ok()
            .and_then(|r| decompress(r, &layer.descriptor.media_type, "layer").ok())
            .and_then(|mut r| r.read_to_end(&mut tar).ok());
        if read.is_none() {
            return;
        }
        let mutations = damage(&mut rng, &mut tar);
        let bytes = if rng.below(2) == 0 {
            tar
        } else {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            let _ = gz.write_all(&tar);
            gz.finish().unwrap_or_default()
        };
        if let Ok(r) = decompress(&bytes[..], "", "layer") {
            let _ = list_layer(r, "layer", &LIMITS, &|p| p.ends_with(".yaml"), 1 << 20);
        }
        let root = work.join("unpacked");
        let _ = fs::remove_dir_all(&root);
        if fs::create_dir_all(&root).is_err() {
            return;
        }
        let before = listing(work, &root);
        if let Ok(r) = decompress(&bytes[..], "", "layer") {
            let _ = unpack_layer(r, &root, "layer", &LIMITS, &mut Stats::default());
        }
        if listing(work, &root) != before {
            escaped = Some(format!(
                "extraction of a layer damaged by {mutations:?} changed files outside its target folder"
            ));
        }
        let _ = fs::remove_dir_all(&root);
    });
    if let Some(message) = escaped {
        stages.fail("layer read", message);
    }
    stages.run("archive read", || {
        let archive = work.join("image.tar");
        let Ok(mut bytes) = write_oci_archive(image, &["v1".to_string()], Vec::new(), &archive)
        else {
            return;
        };
        damage(&mut rng, &mut bytes);
        if fs::write(&archive, &bytes).is_err() {
            return;
        }
        let source = format!("oci-archive:{}:v1", archive.display());
        if let Ok(location) = olmpack::location::Location::parse(&source) {
            let _ = olmpack::transport::unpack_image(&location, &RegistryOptions::default());
        }
        let _ = fs::remove_file(&archive);
    });
}
