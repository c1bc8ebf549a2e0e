//! The local formats as sinks: one function that writes an image to any `--output` destination
//! ([`LocalImage`]: `oci:PATH[:TAG]`, `oci-archive:FILE[:TAG]`, `docker-archive:FILE[:REF]`),
//! handing it to the module of its format ([`super::layout`], [`super::archive`]), which also
//! reads it back ([`super::open::open`] dispatches the reading side).

use super::archive::{write_archive_file, write_docker_archive, write_oci_archive_of};
use super::layout::write_artifact_layout;
use crate::image::OutputError;
use crate::image::model::{Artifact, Image, ImageIndex};
use crate::location::LocalImage;

/// Writes `image` to `dest`. `names` are the tags (OCI layout and archive) or the `RepoTags`
/// (docker-archive) to record; the caller decides them (see the build command).
pub fn write_image(image: &Image, dest: &LocalImage, names: &[String]) -> Result<(), OutputError> {
    write_artifact(Artifact::Image(image), dest, names)
}

/// Writes a multi-platform index to `dest`. A docker-archive holds one image per platform-less
/// `manifest.json` entry, so it is refused there: pick one platform for it.
pub fn write_index(
    index: &ImageIndex,
    dest: &LocalImage,
    names: &[String],
) -> Result<(), OutputError> {
    write_artifact(Artifact::Index(index), dest, names)
}

/// The one writer behind [`write_image`] and [`write_index`]. Blobs kept in a registry stream
/// from it, verified, as they are written. An index opened from a source goes into a layout
/// one image at a time ([`ImageIndex::for_each_image`]); an archive, whose blobs go in digest
/// order, has its images opened first, their configs left where they are
/// ([`ImageIndex::complete_to_copy`]).
pub fn write_artifact(
    artifact: Artifact<'_>,
    dest: &LocalImage,
    names: &[String],
) -> Result<(), OutputError> {
    if let LocalImage::OciLayout { path, .. } = dest {
        return write_artifact_layout(artifact, path, names);
    }
    let completed;
    let artifact = match artifact {
        Artifact::Index(index) if !index.is_complete() => {
            completed = index.complete_to_copy()?;
            Artifact::Index(&completed)
        }
        other => other,
    };
    match (dest, artifact) {
        (LocalImage::OciLayout { path, .. }, _) => write_artifact_layout(artifact, path, names),
        (LocalImage::OciArchive { path, .. }, _) => write_archive_file(path, |w| {
            write_oci_archive_of(artifact, names, w, path).map(|_| ())
        }),
        (LocalImage::DockerArchive { path, .. }, Artifact::Image(image)) => {
            write_archive_file(path, |w| {
                write_docker_archive(image, names, w, path).map(|_| ())
            })
        }
        (LocalImage::DockerArchive { .. }, Artifact::Index(index)) => {
            Err(OutputError::Unsupported(format!(
                "a docker-archive holds a single platform, and this image has {}: pick one with --platform",
                index.images.len()
            )))
        }
    }
}
