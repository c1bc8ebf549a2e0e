//! Media types and the image manifest. OCI and Docker v2-2 differ only in the media type strings
//! (the manifest structure, `schemaVersion: 2`, `config`, `layers`, is the same), so the choice is
//! a value picked at build time, not a second code path.

use super::media;
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
            Format::Oci => media::OCI_CONFIG,
            Format::Docker => media::DOCKER_CONFIG,
        }
    }

    /// Media type of a gzip tar layer.
    pub fn layer_media_type(self) -> &'static str {
        match self {
            Format::Oci => media::OCI_LAYER_GZIP,
            Format::Docker => media::DOCKER_LAYER_GZIP,
        }
    }
}

pub use super::media::{
    ANNOTATION_REF_NAME, DOCKER_MANIFEST as MEDIA_DOCKER_MANIFEST, OCI_INDEX as MEDIA_OCI_INDEX,
    OCI_MANIFEST as MEDIA_OCI_MANIFEST,
};

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
