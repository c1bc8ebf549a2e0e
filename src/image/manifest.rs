//! Media types and the image manifest. OCI and Docker v2-2 differ only in the media type strings
//! (the manifest structure, `schemaVersion: 2`, `config`, `layers`, is the same), so the choice is
//! a value picked at build time, not a second code path.

use super::model::Descriptor;
use serde_json::{Value, json};

/// Which family of media types the image uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// OCI image spec media types (the default: what every current registry and tool expects).
    #[default]
    Oci,
    /// Docker image manifest v2 schema 2, for old registries (the seed design's compatibility
    /// target, and what `docker build` of a bundle.Dockerfile produces).
    Docker,
}

impl Format {
    /// Media type of the manifest.
    pub fn manifest_media_type(self) -> &'static str {
        match self {
            Format::Oci => MEDIA_OCI_MANIFEST,
            Format::Docker => MEDIA_DOCKER_MANIFEST,
        }
    }

    /// Media type of the config blob.
    pub fn config_media_type(self) -> &'static str {
        match self {
            Format::Oci => "application/vnd.oci.image.config.v1+json",
            Format::Docker => "application/vnd.docker.container.image.v1+json",
        }
    }

    /// Media type of a gzip tar layer.
    pub fn layer_media_type(self) -> &'static str {
        match self {
            Format::Oci => "application/vnd.oci.image.layer.v1.tar+gzip",
            Format::Docker => "application/vnd.docker.image.rootfs.diff.tar.gzip",
        }
    }
}

/// Media type of an OCI image manifest.
pub const MEDIA_OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of a Docker v2-2 manifest.
pub const MEDIA_DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Media type of an OCI image index (the `index.json` of a layout).
pub const MEDIA_OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// The annotation an OCI layout uses to name (tag) a manifest.
pub const ANNOTATION_REF_NAME: &str = "org.opencontainers.image.ref.name";

/// A descriptor as JSON (`digest`, `mediaType`, `size`).
pub fn descriptor_json(d: &Descriptor) -> Value {
    json!({ "mediaType": d.media_type, "digest": d.digest, "size": d.size })
}

/// The manifest JSON for a config and its layers. The manifest repeats its own `mediaType`
/// (optional in OCI, required by Docker v2-2) so registries never have to guess.
pub fn manifest_json(format: Format, config: &Descriptor, layers: &[Descriptor]) -> Value {
    json!({
        "schemaVersion": 2,
        "mediaType": format.manifest_media_type(),
        "config": descriptor_json(config),
        "layers": layers.iter().map(descriptor_json).collect::<Vec<_>>(),
    })
}
