//! Where something is, as the user typed it: a path on this machine, an image in a local format
//! (`oci:`, `oci-archive:`, `docker-archive:`), or a registry reference. Parsed once, then
//! passed down, so no layer guesses again.
//!
//! Why one type: a source string used to be classified three times on its way through
//! `catalog render`, and anything not recognised as a local path fell through to a registry
//! reference, so a mistyped folder cost eight silent seconds of retries against Docker Hub and
//! ended in a DNS error. The rules live here, once:
//! - a transport prefix names a local image (the transports are spelled only in [`Transport`]);
//! - a string naming something that exists is a path;
//! - a string that looks like a path (starts with `.`, `/` or `~`, ends with `/`, or contains a
//!   `/` without being a reference with a registry host) is a path, and a missing one is
//!   "no such file or folder: X", never a registry lookup;
//! - a registry reference must name its host (`quay.io/org/img:tag`, `localhost:5000/x`,
//!   `docker.io/library/busybox`); a bare word that is neither an existing path nor such a
//!   reference is refused with both readings named.
//!
//! Ground floor (beside [`crate::reference`]): the catalog's template bundle map uses it, and the
//! catalog model may not import the transports (see `tests/library/layering.rs`).

use crate::reference::{InvalidReference, Reference};
use std::fmt;
use std::path::{Path, PathBuf};

/// The local image formats, and the one place their prefixes are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `oci:PATH[:TAG]`: an OCI image layout folder.
    OciLayout,
    /// `oci-archive:FILE[:TAG]`: an OCI image layout as a tar file.
    OciArchive,
    /// `docker-archive:FILE[:REF]`: what `docker save` writes and `docker load` reads.
    DockerArchive,
}

impl Transport {
    /// Every local transport, in the order help texts list them.
    pub const ALL: [Transport; 3] = [
        Transport::OciLayout,
        Transport::OciArchive,
        Transport::DockerArchive,
    ];

    /// The prefix, without its colon (skopeo's transport names).
    pub fn name(self) -> &'static str {
        match self {
            Transport::OciLayout => "oci",
            Transport::OciArchive => "oci-archive",
            Transport::DockerArchive => "docker-archive",
        }
    }

    /// The transport a string starts with (`oci:x` → layout, `x`), if any.
    pub fn split(s: &str) -> Option<(Transport, &str)> {
        let (kind, rest) = s.split_once(':')?;
        Transport::ALL
            .into_iter()
            .find(|t| t.name() == kind)
            .map(|t| (t, rest))
    }

    /// The grammar of every local image string, for messages.
    pub const GRAMMAR: &'static str =
        "oci:PATH[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REF]";
}

/// An image in a local format: what `--output` writes and every source string can read back.
/// `PATH` and `TAG`/`REF` are split at the first `:` after the prefix, as skopeo and
/// containers/image do, so the same strings work with both tools (a path containing `:` cannot
/// be given, as with skopeo; a docker reference may contain `:`s after the first one). When
/// reading, a docker-archive's `REF` is ignored (the archive's only image is used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalImage {
    /// An OCI image layout folder, with an optional tag.
    OciLayout {
        /// The folder.
        path: PathBuf,
        /// The `org.opencontainers.image.ref.name` of the image.
        tag: Option<String>,
    },
    /// A tar of an OCI image layout, with an optional tag.
    OciArchive {
        /// The archive file.
        path: PathBuf,
        /// The `org.opencontainers.image.ref.name` of the image.
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

/// Why a local image string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid image {0:?}: expected {grammar}", grammar = Transport::GRAMMAR)]
pub struct LocalImageError(pub String);

impl std::str::FromStr for LocalImage {
    type Err = LocalImageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || LocalImageError(s.to_string());
        let (transport, rest) = Transport::split(s).ok_or_else(err)?;
        let (path, name) = match rest.split_once(':') {
            Some((p, n)) => (p, Some(n)),
            None => (rest, None),
        };
        if path.is_empty() || name.is_some_and(str::is_empty) {
            return Err(err());
        }
        Ok(LocalImage::new(
            transport,
            PathBuf::from(path),
            name.map(str::to_string),
        ))
    }
}

impl fmt::Display for LocalImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.transport().name(), self.path().display())?;
        if let Some(n) = self.name() {
            write!(f, ":{n}")?;
        }
        Ok(())
    }
}

impl LocalImage {
    /// The value for `transport` at `path` with an optional tag or reference.
    pub fn new(transport: Transport, path: PathBuf, name: Option<String>) -> LocalImage {
        match transport {
            Transport::OciLayout => LocalImage::OciLayout { path, tag: name },
            Transport::OciArchive => LocalImage::OciArchive { path, tag: name },
            Transport::DockerArchive => LocalImage::DockerArchive {
                path,
                reference: name,
            },
        }
    }

    /// Its format.
    pub fn transport(&self) -> Transport {
        match self {
            LocalImage::OciLayout { .. } => Transport::OciLayout,
            LocalImage::OciArchive { .. } => Transport::OciArchive,
            LocalImage::DockerArchive { .. } => Transport::DockerArchive,
        }
    }

    /// The file or folder.
    pub fn path(&self) -> &PathBuf {
        match self {
            LocalImage::OciLayout { path, .. }
            | LocalImage::OciArchive { path, .. }
            | LocalImage::DockerArchive { path, .. } => path,
        }
    }

    /// The tag or reference given in the string, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            LocalImage::OciLayout { tag, .. } | LocalImage::OciArchive { tag, .. } => {
                tag.as_deref()
            }
            LocalImage::DockerArchive { reference, .. } => reference.as_deref(),
        }
    }

    fn with_path(&self, path: PathBuf) -> LocalImage {
        LocalImage::new(self.transport(), path, self.name().map(str::to_string))
    }
}

/// What a [`Location`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A folder or file on this machine, given as a plain path (it exists).
    Path(PathBuf),
    /// An image in a local format (its file or folder exists).
    Local(LocalImage),
    /// An image in a registry, named with its host.
    Registry(Reference),
}

/// A parsed source string: what it names, and the string as typed (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    typed: String,
    place: Place,
    /// The manifest digest a signature policy verified for this image: what must be read,
    /// whatever the tag names by the time the image is opened ([`Location::pinned`]).
    verified: Option<String>,
}

/// Why a source string names nothing olmpack can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocationError {
    /// Nothing was given.
    #[error("empty source: give a folder, {grammar} or a registry reference", grammar = Transport::GRAMMAR)]
    Empty,
    /// A path (plain, or inside a transport prefix) that does not exist.
    #[error("no such file or folder: {path}{}", hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default())]
    NotFound {
        /// The path as typed.
        path: String,
        /// The other reading, when the string is also a valid Docker Hub short name.
        hint: Option<String>,
    },
    /// A bare word: neither an existing path nor a reference with a registry host.
    #[error(
        "no such file or folder: {typed} (nothing was sent to a registry: as an image reference it names no registry host{})",
        docker_hub.as_deref().map(|d| format!("; for the Docker Hub image, write {d}")).unwrap_or_default()
    )]
    Ambiguous {
        /// The string as typed.
        typed: String,
        /// The full Docker Hub reference it would be, when it is a valid short name.
        docker_hub: Option<String>,
    },
    /// A transport prefix with a malformed rest.
    #[error(transparent)]
    LocalImage(#[from] LocalImageError),
    /// A registry host was named but the reference is not valid.
    #[error(transparent)]
    Reference(#[from] InvalidReference),
    /// An image was needed and the string names a plain folder or file.
    #[error("{typed} is a {kind}, not an image: {hint}")]
    NotAnImage {
        /// The string as typed.
        typed: String,
        /// `folder` or `file`.
        kind: &'static str,
        /// What to type instead.
        hint: String,
    },
    /// A local source was needed (a bundle map's SOURCE) and the string names a registry image.
    #[error("{typed} is a registry reference; expected a folder or {grammar}", grammar = Transport::GRAMMAR)]
    NotLocal {
        /// The string as typed.
        typed: String,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.typed)
    }
}

impl Location {
    /// Classifies `s` (see the module documentation), looking at the file system once.
    pub fn parse(s: &str) -> Result<Location, LocationError> {
        Location::parse_in(s, None)
    }

    /// [`Location::parse`] with relative paths (plain or after a transport prefix) taken
    /// relative to `base`: a bundle map names folders relative to its own folder.
    pub fn parse_relative(s: &str, base: &Path) -> Result<Location, LocationError> {
        Location::parse_in(s, Some(base))
    }

    fn parse_in(s: &str, base: Option<&Path>) -> Result<Location, LocationError> {
        if s.is_empty() {
            return Err(LocationError::Empty);
        }
        let join = |p: &Path| match base {
            Some(b) if p.is_relative() && !b.as_os_str().is_empty() => b.join(p),
            _ => p.to_path_buf(),
        };
        // skopeo's spelling of a registry reference: explicit, so a short name is Docker
        // Hub's (`docker://busybox` is `docker.io/library/busybox`), as skopeo reads it.
        if let Some(reference) = s.strip_prefix("docker://") {
            return Ok(Location::reference(reference)?);
        }
        if Transport::split(s).is_some() {
            let image: LocalImage = s.parse()?;
            return Location::local(image.with_path(join(image.path())));
        }
        let path = join(Path::new(s));
        let shown = path.display().to_string();
        if std::fs::symlink_metadata(&path).is_ok() {
            return Ok(Location {
                typed: shown,
                place: Place::Path(path),
                verified: None,
            });
        }
        if looks_like_path(s) {
            let hint =
                docker_hub_reading(s).map(|d| format!("for the Docker Hub image, write {d}"));
            return Err(LocationError::NotFound { path: shown, hint });
        }
        if has_registry_host(s) {
            return Ok(Location {
                typed: s.to_string(),
                place: Place::Registry(Reference::parse(s)?),
                verified: None,
            });
        }
        Err(LocationError::Ambiguous {
            typed: s.to_string(),
            docker_hub: docker_hub_reading(s),
        })
    }

    /// A bundle reference a catalog template names, read as `opm render` reads its arguments
    /// (opm's render-template hands each `image` to it): an image reference, a bundle folder or
    /// a local image, classified as a command-line SOURCE is. The template is the user's own
    /// file, named on the command line; `catalog matrix`, which reads templates from a
    /// repository, uses [`Location::reference`] instead.
    pub fn template_bundle(typed: &str) -> Result<Location, LocationError> {
        Location::parse_in(typed, None)
    }

    /// An image reference known to be one (skopeo's `docker://` reading: a short name is
    /// Docker Hub's): an image a catalog names, or one a plan pinned to its digest. Never
    /// looked up on this machine, so a value the program built is not classified again.
    pub fn reference(typed: &str) -> Result<Location, InvalidReference> {
        Ok(Location {
            typed: typed.to_string(),
            place: Place::Registry(Reference::parse(typed)?),
            verified: None,
        })
    }

    /// A local image the program names itself (a layout it wrote): its file or folder must
    /// exist, as for a typed one.
    pub fn local(image: LocalImage) -> Result<Location, LocationError> {
        if std::fs::symlink_metadata(image.path()).is_err() {
            return Err(LocationError::NotFound {
                path: image.path().display().to_string(),
                hint: None,
            });
        }
        Ok(Location {
            typed: image.to_string(),
            place: Place::Local(image),
            verified: None,
        })
    }

    /// A folder or file the program names itself (one it wrote): it must exist.
    pub fn path(path: PathBuf) -> Result<Location, LocationError> {
        let shown = path.display().to_string();
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(LocationError::NotFound {
                path: shown,
                hint: None,
            });
        }
        Ok(Location {
            typed: shown,
            place: Place::Path(path),
            verified: None,
        })
    }

    /// The registry host a command-line string names, if it names one: a registry reference
    /// (`quay.io/org/x:1`, `docker://…`), or a target that does not exist yet written as a
    /// reference with a registry host (`REGISTRY/NAMESPACE`); folders, files and local images
    /// name none. Explicit credentials are bound to these hosts.
    pub fn registry_named(typed: &str) -> Option<String> {
        match Location::parse(typed) {
            Ok(l) => match l.place {
                Place::Registry(r) => Some(r.registry),
                _ => None,
            },
            Err(_) => Reference::parse(typed)
                .ok()
                .filter(|r| {
                    r.registry != crate::reference::DOCKER_HUB || typed.contains("docker.io")
                })
                .map(|r| r.registry),
        }
    }

    /// The string as typed (with a bundle map's folder joined to a relative path).
    pub fn as_str(&self) -> &str {
        &self.typed
    }

    /// What it names.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// The same image, to be read only at `digest` (the manifest digest its signatures were
    /// verified for): a reader opens that digest (a registry) or refuses a tag that now names
    /// another manifest (a layout or archive), so what is read is what was verified, never
    /// what a second lookup of the tag returns.
    pub fn pinned(&self, digest: &str) -> Location {
        Location {
            verified: Some(digest.to_string()),
            ..self.clone()
        }
    }

    /// The digest the image is pinned to ([`Location::pinned`]), if any.
    pub fn verified_digest(&self) -> Option<&str> {
        self.verified.as_deref()
    }

    /// Whether reading it stays on this machine.
    pub fn is_local(&self) -> bool {
        !matches!(self.place, Place::Registry(_))
    }

    /// Refuses a plain folder or file where an image is needed, saying what to type instead.
    pub fn require_image(self) -> Result<Location, LocationError> {
        match self.place {
            Place::Path(_) => Err(self.not_an_image()),
            _ => Ok(self),
        }
    }

    /// The error for a plain path given where an image is needed, with what to type instead:
    /// `oci:` for an OCI layout, `bundle validate`/`bundle build` for a bundle folder.
    pub fn not_an_image(&self) -> LocationError {
        let typed = self.typed.clone();
        let path = match &self.place {
            Place::Path(p) => p.as_path(),
            Place::Local(image) => image.path().as_path(),
            Place::Registry(_) => Path::new(&self.typed),
        };
        if !path.is_dir() {
            return LocationError::NotAnImage {
                hint: format!("name its format: oci-archive:{typed} or docker-archive:{typed}"),
                typed,
                kind: "file",
            };
        }
        let hint = if path.join("oci-layout").is_file() {
            format!("it is an OCI layout; write oci:{typed}")
        } else if path.join("manifests").is_dir() {
            format!(
                "it looks like a bundle folder; check it with `olmpack bundle validate {typed}`, or build it with `olmpack bundle build {typed}`"
            )
        } else {
            format!(
                "give an OCI layout as oci:{typed}, an archive as oci-archive:FILE or docker-archive:FILE, or a registry reference with its host"
            )
        };
        LocationError::NotAnImage {
            typed,
            kind: "folder",
            hint,
        }
    }

    /// Refuses a registry reference where only a local source may be read.
    pub fn require_local(self) -> Result<Location, LocationError> {
        match self.place {
            Place::Registry(_) => Err(LocationError::NotLocal { typed: self.typed }),
            _ => Ok(self),
        }
    }

    /// [`Location::parse_relative`] where only a local source may be read (a bundle map's
    /// SOURCE): a missing path is just that, without the registry reading.
    pub fn parse_local(s: &str, base: &Path) -> Result<Location, LocationError> {
        match Location::parse_relative(s, base) {
            Err(LocationError::Ambiguous { .. }) => Err(LocationError::NotFound {
                path: base_join(base, s),
                hint: None,
            }),
            Err(LocationError::NotFound { path, .. }) => {
                Err(LocationError::NotFound { path, hint: None })
            }
            other => other?.require_local(),
        }
    }
}

fn base_join(base: &Path, s: &str) -> String {
    let p = Path::new(s);
    if p.is_relative() && !base.as_os_str().is_empty() {
        base.join(p).display().to_string()
    } else {
        s.to_string()
    }
}

/// Whether `s` names a registry host before its first `/` (`quay.io/…`, `localhost:5000/…`),
/// which is what a registry reference must do here.
fn has_registry_host(s: &str) -> bool {
    s.split_once('/').is_some_and(|(first, _)| {
        first.contains('.') || first.contains(':') || first == "localhost" || first.starts_with('[')
    })
}

fn looks_like_path(s: &str) -> bool {
    s.starts_with('.')
        || s.starts_with('/')
        || s.starts_with('~')
        || s.ends_with('/')
        || (s.contains('/') && !has_registry_host(s))
}

/// The full Docker Hub reference a short name stands for, if it is one.
fn docker_hub_reading(s: &str) -> Option<String> {
    if s.starts_with('.') || s.starts_with('/') || s.ends_with('/') {
        return None;
    }
    let r = Reference::parse(s).ok()?;
    Some(match (&r.tag, &r.digest) {
        (_, Some(d)) => format!("{}/{}@{d}", r.registry, r.repository),
        (Some(t), None) => format!("{}/{}:{t}", r.registry, r.repository),
        (None, None) => format!("{}/{}", r.registry, r.repository),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        Location::parse(s).expect_err(s).to_string()
    }

    #[test]
    fn local_images_parse_like_skopeo() {
        let d: LocalImage = "oci:out/layout:v1".parse().unwrap();
        assert_eq!(
            d,
            LocalImage::OciLayout {
                path: "out/layout".into(),
                tag: Some("v1".into())
            }
        );
        let d: LocalImage = "oci-archive:b.tar".parse().unwrap();
        assert_eq!(
            d,
            LocalImage::OciArchive {
                path: "b.tar".into(),
                tag: None
            }
        );
        let d: LocalImage = "docker-archive:b.tar:quay.io/o/b:v1".parse().unwrap();
        assert_eq!(
            d,
            LocalImage::DockerArchive {
                path: "b.tar".into(),
                reference: Some("quay.io/o/b:v1".into())
            }
        );
        assert_eq!(d.to_string(), "docker-archive:b.tar:quay.io/o/b:v1");
        for bad in ["", "oci", "oci:", "oci:x:", "dir:x", "docker://x"] {
            assert!(bad.parse::<LocalImage>().is_err(), "{bad}");
        }
    }

    #[test]
    fn existing_paths_are_paths_and_missing_ones_never_references() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("b");
        std::fs::create_dir(&dir).unwrap();
        let s = dir.display().to_string();
        assert_eq!(
            Location::parse(&s).unwrap().place(),
            &Place::Path(dir.clone())
        );
        let missing = tmp.path().join("nope").display().to_string();
        assert_eq!(err(&missing), format!("no such file or folder: {missing}"));
        assert_eq!(err("./nosuchdir"), "no such file or folder: ./nosuchdir");
        assert_eq!(err("nosuch/"), "no such file or folder: nosuch/");
        assert_eq!(err("../../x"), "no such file or folder: ../../x");
        assert_eq!(
            err("org/app:v1"),
            "no such file or folder: org/app:v1 (for the Docker Hub image, write docker.io/org/app:v1)"
        );
        assert_eq!(
            err(&format!("oci:{missing}:v1")),
            format!("no such file or folder: {missing}")
        );
    }

    #[test]
    fn bare_words_name_both_readings() {
        assert_eq!(
            err("nosuchdir"),
            "no such file or folder: nosuchdir (nothing was sent to a registry: as an image reference it names no registry host; for the Docker Hub image, write docker.io/library/nosuchdir)"
        );
        assert_eq!(
            err("No_Such"),
            "no such file or folder: No_Such (nothing was sent to a registry: as an image reference it names no registry host)"
        );
    }

    #[test]
    fn references_with_a_host_are_registry_images() {
        for s in [
            "quay.io/a/b:1",
            "localhost:5000/x",
            "127.0.0.1:1/x/y@sha256:0000000000000000000000000000000000000000000000000000000000000000",
            "docker.io/library/busybox",
        ] {
            let loc = Location::parse(s).unwrap();
            assert!(matches!(loc.place(), Place::Registry(_)), "{s}");
            assert!(!loc.is_local());
        }
        assert!(Location::parse("quay.io/A/b").is_err());
    }

    #[test]
    fn relative_paths_join_the_base_and_a_bundle_folder_is_not_an_image() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("b/manifests")).unwrap();
        let loc = Location::parse_relative("b", tmp.path()).unwrap();
        assert_eq!(loc.place(), &Place::Path(tmp.path().join("b")));
        let e = loc.require_image().unwrap_err().to_string();
        assert!(e.contains("is a folder, not an image"), "{e}");
        assert!(e.contains("olmpack bundle validate"), "{e}");
        let e = Location::parse_relative("../../nowhere", tmp.path())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("no such file or folder: "), "{e}");
        assert!(!e.contains("registry"), "{e}");
        let e = Location::parse("quay.io/a/b:1")
            .unwrap()
            .require_local()
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a registry reference"), "{e}");
    }
}
