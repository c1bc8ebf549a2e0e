//! Images made of a folder layer on top of a base image (or on nothing): what `catalog build`
//! produces. Pure functions of their inputs, like [`super::build`]: the same folder, base and
//! options give the same bytes.
//!
//! - [`folder_layer`]: one folder as one reproducible layer under a path prefix (`configs/`),
//!   with the walk and header rules of [`super::walk`] and [`super::layer`];
//! - [`scratch_image`]: that layer alone, with labels and a platform;
//! - [`assemble`]: a config and layers under a manifest of the chosen format;
//! - [`extend_image`]: a base image's layers kept as they are (same descriptors, so a push mounts
//!   or skips them), the layer added on top, and the base config edited, not rebuilt: its
//!   environment, user, working folder, exposed ports and history stay; labels are added,
//!   entrypoint and command set, `rootfs.diff_ids` and (when the base keeps one) `history`
//!   extended;
//! - [`index_of`]: per-platform images under one index.

use super::config::{Platform, canonical_json, config_json, rfc3339_utc};

use super::error::BuildError;
use super::layer::{LayerBlob, write_layer};
use super::manifest::{Format, MEDIA_DOCKER_MANIFEST, descriptor_json, manifest_json};
use super::media;
use super::model::{Blob, BlobSource, Descriptor, Image, ImageIndex};
use super::walk::{SkippedWhiteout, Walker};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Media type of a Docker manifest list (the Docker form of an index).
pub use super::media::DOCKER_LIST as MEDIA_DOCKER_LIST;

/// Writes the folder `dir` as one gzip layer into `spool_file`, its content under `prefix`
/// (e.g. `configs`, giving `configs/`, `configs/pkg/`, `configs/pkg/catalog.yaml`). Files are
/// stored as they are (dotfiles such as `.indexignore` included), sorted by name, mode 0644/0755,
/// owner 0, mtime `mtime`. Whiteout files (`.wh.*`) are skipped and returned.
pub fn folder_layer(
    dir: &Path,
    prefix: &str,
    mtime: u64,
    spool_file: &Path,
) -> Result<(LayerBlob, Vec<SkippedWhiteout>), BuildError> {
    let mut walker = Walker::new(dir)?;
    let mut entries = Vec::new();
    walker.add_folder(dir, &format!("{}/", prefix.trim_matches('/')), &mut entries)?;
    let layer = write_layer(&entries, mtime, spool_file)?;
    Ok((layer, walker.whiteouts))
}

fn layer_blob(layer: &LayerBlob, media_type: &str) -> Blob {
    Blob {
        descriptor: Descriptor {
            media_type: media_type.to_string(),
            digest: layer.digest.clone(),
            size: layer.size,
        },
        source: BlobSource::File(layer.path.clone()),
    }
}

/// An image holding only `layer`: no entrypoint (nothing to run), the given labels and platform.
pub fn scratch_image(
    layer: &LayerBlob,
    labels: &BTreeMap<String, String>,
    platform: &Platform,
    format: Format,
    created_epoch: u64,
) -> Image {
    let config = Blob::memory(
        format.config_media_type(),
        canonical_json(&config_json(
            labels,
            platform,
            std::slice::from_ref(&layer.diff_id),
            created_epoch,
        )),
    );
    let layer = layer_blob(layer, format.layer_media_type());
    assemble(format, config, vec![layer])
}

/// The image of `config` and `layers` with its manifest written in `format`: the one place a
/// manifest is put together around blobs already made (a scratch image, an extended one).
pub fn assemble(format: Format, config: Blob, layers: Vec<Blob>) -> Image {
    let descs: Vec<Descriptor> = layers.iter().map(|l| l.descriptor.clone()).collect();
    let manifest = Blob::memory(
        format.manifest_media_type(),
        canonical_json(&manifest_json(format, &config.descriptor, &descs)),
    );
    Image {
        manifest,
        config,
        layers,
    }
}

/// What [`extend_image`] changes in the base config.
#[derive(Debug, Clone, Default)]
pub struct ConfigEdit {
    /// Labels to set (over the base's labels of the same key).
    pub labels: BTreeMap<String, String>,
    /// `Entrypoint` to set, when some.
    pub entrypoint: Option<Vec<String>>,
    /// `Cmd` to set, when some.
    pub cmd: Option<Vec<String>>,
    /// `created` of the config and of the added history entry.
    pub created_epoch: u64,
    /// `created_by` of the added history entry (fixed text: a path here would make the digest
    /// depend on where the folder was).
    pub created_by: String,
}

/// The OCI media type for a Docker v2-2 one (layers and config); others unchanged. The bytes
/// (and so the digests) are the same in both formats: only the label on the descriptor changes.
pub fn oci_media_type(media_type: &str) -> &str {
    match media_type {
        media::DOCKER_LAYER_GZIP => media::OCI_LAYER_GZIP,
        media::DOCKER_LAYER_TAR => media::OCI_LAYER_TAR,
        media::DOCKER_LAYER_FOREIGN_GZIP => media::OCI_LAYER_NONDISTRIBUTABLE_GZIP,
        media::DOCKER_CONFIG | "" => media::OCI_CONFIG,
        other => other,
    }
}

/// `base` with `layer` added on top and its config edited by `edit`. The base's layer blobs are
/// reused as they are (their sources untouched: files, or remote blobs a push mounts). The
/// result is always an OCI image: a Docker v2-2 base's descriptors get the OCI media types of the
/// same bytes (digests unchanged), because OCI layouts and archives cannot name Docker
/// manifests for skopeo and containers/image, and one format keeps the digest the same whatever
/// the output.
pub fn extend_image(
    base: &Image,
    layer: &LayerBlob,
    edit: &ConfigEdit,
) -> Result<Image, BuildError> {
    let bad = |reason: &str| BuildError::BaseConfig {
        reason: reason.to_string(),
    };
    let format = Format::Oci;
    let BlobSource::Memory(config_bytes) = &base.config.source else {
        return Err(bad("the config is not in memory"));
    };
    let mut config: Value =
        serde_json::from_slice(config_bytes).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let obj = config
        .as_object_mut()
        .ok_or_else(|| bad("not a JSON object"))?;
    // rootfs.diff_ids: one per layer, ours appended.
    let diff_ids = obj
        .get_mut("rootfs")
        .and_then(|r| r.get_mut("diff_ids"))
        .and_then(Value::as_array_mut)
        .ok_or_else(|| bad("no rootfs.diff_ids"))?;
    if diff_ids.len() != base.layers.len() {
        return Err(bad(&format!(
            "rootfs.diff_ids lists {} layers but the manifest has {}",
            diff_ids.len(),
            base.layers.len()
        )));
    }
    diff_ids.push(Value::String(layer.diff_id.clone()));
    let created = rfc3339_utc(edit.created_epoch);
    if let Some(history) = obj.get_mut("history").and_then(Value::as_array_mut) {
        history.push(json!({ "created": created, "created_by": edit.created_by }));
    }
    obj.insert("created".into(), Value::String(created));
    let run = obj
        .entry("config")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| bad("config is not an object"))?;
    if let Some(ep) = &edit.entrypoint {
        run.insert("Entrypoint".into(), json!(ep));
    }
    if let Some(cmd) = &edit.cmd {
        run.insert("Cmd".into(), json!(cmd));
    }
    if !edit.labels.is_empty() {
        let labels = run.entry("Labels").or_insert_with(|| json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        if let Some(map) = labels.as_object_mut() {
            for (k, v) in &edit.labels {
                map.insert(k.clone(), Value::String(v.clone()));
            }
        }
    }
    let config_blob = Blob::memory(
        oci_media_type(&base.config.descriptor.media_type),
        canonical_json(&config),
    );
    let mut layers = base.layers.clone();
    for l in &mut layers {
        l.descriptor.media_type = oci_media_type(&l.descriptor.media_type).to_string();
    }
    layers.push(layer_blob(layer, format.layer_media_type()));
    Ok(assemble(format, config_blob, layers))
}

/// An index of `images`, each with its `platform` object (written as given, so fields such as
/// `os.version` of a base index are kept). Docker v2-2 images get a Docker manifest list, others
/// an OCI index.
pub fn index_of(images: Vec<(Image, Value)>) -> ImageIndex {
    let docker = images
        .iter()
        .all(|(i, _)| i.manifest.descriptor.media_type == MEDIA_DOCKER_MANIFEST)
        && !images.is_empty();
    let media_type = if docker {
        MEDIA_DOCKER_LIST
    } else {
        super::manifest::MEDIA_OCI_INDEX
    };
    let manifests: Vec<Value> = images
        .iter()
        .map(|(image, platform)| {
            let mut d = descriptor_json(&image.manifest.descriptor);
            d["platform"] = platform.clone();
            d
        })
        .collect();
    let index = json!({ "schemaVersion": 2, "mediaType": media_type, "manifests": manifests });
    ImageIndex::new(
        Blob::memory(media_type, canonical_json(&index)),
        images.into_iter().map(|(i, _)| i).collect(),
    )
}

/// The `platform` object of an index entry for `p`.
pub fn platform_json(p: &Platform) -> Value {
    let mut v = json!({ "architecture": p.architecture, "os": p.os });
    if let Some(variant) = &p.variant {
        v["variant"] = Value::String(variant.clone());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_layer(dir: &Path) -> LayerBlob {
        let src = dir.join("cat");
        std::fs::create_dir_all(src.join("pkg")).unwrap();
        std::fs::write(
            src.join("pkg/catalog.yaml"),
            "schema: olm.package\nname: pkg\n",
        )
        .unwrap();
        std::fs::write(src.join(".indexignore"), "*.md\n").unwrap();
        folder_layer(&src, "/configs", 0, &dir.join("l.tgz"))
            .unwrap()
            .0
    }

    #[test]
    fn base_config_is_kept_and_extended() {
        let tmp = tempfile::tempdir().unwrap();
        let layer = fake_layer(tmp.path());
        let base_config = json!({
            "architecture": "arm64", "os": "linux",
            "config": {"Env": ["PATH=/bin"], "User": "1001", "WorkingDir": "/w", "Labels": {"a": "1"}},
            "rootfs": {"type": "layers", "diff_ids": ["sha256:aa"]},
            "history": [{"created_by": "base"}],
        });
        let base = Image {
            manifest: Blob::memory(super::super::manifest::MEDIA_OCI_MANIFEST, b"{}".to_vec()),
            config: Blob::memory(
                "application/vnd.oci.image.config.v1+json",
                serde_json::to_vec(&base_config).unwrap(),
            ),
            layers: vec![Blob {
                descriptor: Descriptor {
                    media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
                    digest: format!("sha256:{}", "b".repeat(64)),
                    size: 3,
                },
                source: BlobSource::Remote {
                    registry: "r".into(),
                    repository: "base".into(),
                    fetcher: None,
                },
            }],
        };
        let edit = ConfigEdit {
            labels: [("k".to_string(), "v".to_string())].into(),
            entrypoint: Some(vec!["/bin/opm".into()]),
            cmd: Some(vec!["serve".into(), "/configs".into()]),
            created_epoch: 0,
            created_by: "x".into(),
        };
        let out = extend_image(&base, &layer, &edit).unwrap();
        assert_eq!(out.layers.len(), 2);
        assert_eq!(out.layers[0].descriptor, base.layers[0].descriptor);
        let BlobSource::Memory(c) = &out.config.source else {
            panic!()
        };
        let c: Value = serde_json::from_slice(c).unwrap();
        assert_eq!(c["config"]["Env"], json!(["PATH=/bin"]));
        assert_eq!(c["config"]["User"], "1001");
        assert_eq!(c["config"]["WorkingDir"], "/w");
        assert_eq!(c["config"]["Labels"], json!({"a": "1", "k": "v"}));
        assert_eq!(c["config"]["Entrypoint"], json!(["/bin/opm"]));
        assert_eq!(c["rootfs"]["diff_ids"][1], json!(layer.diff_id));
        assert_eq!(c["history"].as_array().unwrap().len(), 2);
        // A config whose diff_ids do not match its layers is refused.
        let mut short = base.clone();
        short.layers.clear();
        assert!(extend_image(&short, &layer, &edit).is_err());
    }

    #[test]
    fn index_entries_carry_platforms() {
        let tmp = tempfile::tempdir().unwrap();
        let layer = fake_layer(tmp.path());
        let p: Platform = "linux/arm64/v8".parse().unwrap();
        let a = scratch_image(
            &layer,
            &BTreeMap::new(),
            &Platform::default(),
            Format::Oci,
            0,
        );
        let b = scratch_image(&layer, &BTreeMap::new(), &p, Format::Oci, 0);
        let index = index_of(vec![
            (a, platform_json(&Platform::default())),
            (b, platform_json(&p)),
        ]);
        // The shared layer is stored once.
        assert_eq!(index.blobs().len(), 1 + 2 + 2 + 1);
        let BlobSource::Memory(bytes) = &index.index.source else {
            panic!()
        };
        let v: Value = serde_json::from_slice(bytes).unwrap();
        assert_eq!(v["manifests"][1]["platform"]["variant"], "v8");
    }
}
