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
use std::fmt;
use std::path::PathBuf;

/// A destination for `--output`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// An OCI image layout folder, with an optional tag.
    OciLayout {
        /// The folder.
        path: PathBuf,
        /// The `org.opencontainers.image.ref.name` to give the image.
        tag: Option<String>,
    },
    /// A tar of an OCI image layout, with an optional tag.
    OciArchive {
        /// The archive file.
        path: PathBuf,
        /// The `org.opencontainers.image.ref.name` to give the image.
        tag: Option<String>,
    },
    /// A `docker load` archive, with an optional reference for `RepoTags`.
    DockerArchive {
        /// The archive file.
        path: PathBuf,
        /// e.g. `quay.io/org/bundle:v1`.
        reference: Option<String>,
    },
}

/// Why a `--output` value was refused.
#[derive(Debug, thiserror::Error)]
#[error(
    "invalid output {0:?}: expected oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REF]"
)]
pub struct DestinationError(pub String);

impl std::str::FromStr for Destination {
    type Err = DestinationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || DestinationError(s.to_string());
        let (kind, rest) = s.split_once(':').ok_or_else(err)?;
        let (path, name) = match rest.split_once(':') {
            Some((p, n)) => (p, Some(n)),
            None => (rest, None),
        };
        if path.is_empty() || name.is_some_and(str::is_empty) {
            return Err(err());
        }
        let path = PathBuf::from(path);
        let name = name.map(str::to_string);
        match kind {
            "oci" => Ok(Destination::OciLayout { path, tag: name }),
            "oci-archive" => Ok(Destination::OciArchive { path, tag: name }),
            "docker-archive" => Ok(Destination::DockerArchive {
                path,
                reference: name,
            }),
            _ => Err(err()),
        }
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, path, name) = match self {
            Destination::OciLayout { path, tag } => ("oci", path, tag),
            Destination::OciArchive { path, tag } => ("oci-archive", path, tag),
            Destination::DockerArchive { path, reference } => ("docker-archive", path, reference),
        };
        write!(f, "{kind}:{}", path.display())?;
        if let Some(n) = name {
            write!(f, ":{n}")?;
        }
        Ok(())
    }
}

impl Destination {
    /// The file or folder written.
    pub fn path(&self) -> &PathBuf {
        match self {
            Destination::OciLayout { path, .. }
            | Destination::OciArchive { path, .. }
            | Destination::DockerArchive { path, .. } => path,
        }
    }

    /// The tag or reference given in the destination string, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            Destination::OciLayout { tag, .. } | Destination::OciArchive { tag, .. } => {
                tag.as_deref()
            }
            Destination::DockerArchive { reference, .. } => reference.as_deref(),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse_like_skopeo() {
        let d: Destination = "oci:out/layout:v1".parse().unwrap();
        assert_eq!(
            d,
            Destination::OciLayout {
                path: "out/layout".into(),
                tag: Some("v1".into())
            }
        );
        let d: Destination = "oci-archive:b.tar".parse().unwrap();
        assert_eq!(
            d,
            Destination::OciArchive {
                path: "b.tar".into(),
                tag: None
            }
        );
        let d: Destination = "docker-archive:b.tar:quay.io/o/b:v1".parse().unwrap();
        assert_eq!(
            d,
            Destination::DockerArchive {
                path: "b.tar".into(),
                reference: Some("quay.io/o/b:v1".into())
            }
        );
        assert_eq!(d.to_string(), "docker-archive:b.tar:quay.io/o/b:v1");
        for bad in ["", "oci", "oci:", "oci:x:", "dir:x", "docker://x"] {
            assert!(bad.parse::<Destination>().is_err(), "{bad}");
        }
    }
}
