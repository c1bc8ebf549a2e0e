//! Where a built image goes: the `--output` destinations (`oci:PATH[:TAG]`,
//! `oci-archive:FILE[:TAG]`, `docker-archive:FILE[:REF]`) as a value, and one function that
//! writes an image to any of them.
//!
//! `PATH` and `TAG`/`REF` are split at the first `:` after the prefix, as skopeo and
//! containers/image do, so the same strings work with both tools (a path containing `:` cannot
//! be given, as with skopeo; a docker reference may contain `:`s after the first one).

use super::archive::{write_archive_file, write_docker_archive, write_oci_archive_of};
use super::error::OutputError;
use super::layout::write_artifact_layout;
use super::model::{Artifact, Image, ImageIndex};

/// A destination for `--output`: an image in a local format, the same value (and grammar) a
/// source string reads back ([`crate::location`] spells the transports).
pub use crate::location::LocalImage as Destination;

/// Writes `image` to `dest`. `names` are the tags (OCI layout and archive) or the `RepoTags`
/// (docker-archive) to record; the caller decides them (see the build command).
pub fn write_image(image: &Image, dest: &Destination, names: &[String]) -> Result<(), OutputError> {
    write_artifact(Artifact::Image(image), dest, names)
}

/// Writes a multi-platform index to `dest`. A docker-archive holds one image per platform-less
/// `manifest.json` entry, so it is refused there: pick one platform for it.
pub fn write_index(
    index: &ImageIndex,
    dest: &Destination,
    names: &[String],
) -> Result<(), OutputError> {
    write_artifact(Artifact::Index(index), dest, names)
}

/// The one writer behind [`write_image`] and [`write_index`].
pub fn write_artifact(
    artifact: Artifact<'_>,
    dest: &Destination,
    names: &[String],
) -> Result<(), OutputError> {
    match (dest, artifact) {
        (Destination::OciLayout { path, .. }, _) => write_artifact_layout(artifact, path, names),
        (Destination::OciArchive { path, .. }, _) => write_archive_file(path, |w| {
            write_oci_archive_of(artifact, names, w, path).map(|_| ())
        }),
        (Destination::DockerArchive { path, .. }, Artifact::Image(image)) => {
            write_archive_file(path, |w| {
                write_docker_archive(image, names, w, path).map(|_| ())
            })
        }
        (Destination::DockerArchive { .. }, Artifact::Index(index)) => {
            Err(OutputError::Unsupported(format!(
                "a docker-archive holds a single platform, and this image has {}: pick one with --platform",
                index.images.len()
            )))
        }
    }
}
