//! Every media type and annotation key olmpack reads or writes, spelled once. Manifests,
//! indexes, configs and layers come in two families (OCI and Docker v2-2) that differ only in
//! these strings; the parsers, the builder, the sinks and the registry client all name them from
//! here, so "is this an index?" has one answer.

/// OCI image manifest.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index (also the media type of an OCI layout's `index.json`).
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Docker image manifest v2 schema 2.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker manifest list (the Docker family's multi-platform index).
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// OCI image config.
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
/// Docker image config.
pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
/// OCI gzip tar layer.
pub const OCI_LAYER_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// OCI uncompressed tar layer.
pub const OCI_LAYER_TAR: &str = "application/vnd.oci.image.layer.v1.tar";
/// OCI non-distributable gzip tar layer (deprecated in the spec, still met in the field).
pub const OCI_LAYER_NONDISTRIBUTABLE_GZIP: &str =
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip";
/// Docker gzip tar layer.
pub const DOCKER_LAYER_GZIP: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
/// Docker uncompressed tar layer.
pub const DOCKER_LAYER_TAR: &str = "application/vnd.docker.image.rootfs.diff.tar";
/// Docker foreign (non-distributable) gzip tar layer.
pub const DOCKER_LAYER_FOREIGN_GZIP: &str =
    "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";
/// The annotation an OCI layout uses to name (tag) a manifest in its `index.json`.
pub const ANNOTATION_REF_NAME: &str = "org.opencontainers.image.ref.name";
/// The annotation buildkit puts on an attestation manifest in an index to name the image it
/// describes: narrowing an index keeps the attestations of the images it keeps.
pub const ANNOTATION_REFERENCE_DIGEST: &str = "vnd.docker.reference.digest";

/// Every manifest media type a registry GET may answer with, for the `Accept` header: a client
/// that leaves one out gets a converted (or refused) manifest and a different digest.
pub const ACCEPT_MANIFESTS: [&str; 4] = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST];

/// True for the two multi-platform index media types.
pub fn is_index(media_type: &str) -> bool {
    media_type == OCI_INDEX || media_type == DOCKER_LIST
}
