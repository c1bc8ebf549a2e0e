//! "What is this source?", answered once: a [`Location`] opened as one of the seven kinds of
//! source olmpack reads (bundle folder, catalog folder, package-manifest folder, sqlite file,
//! bundle image, catalog image, index database image), with the temporary folder an image is
//! unpacked into and the label and path rules that say where its catalog, database or bundle
//! is.
//!
//! The order is opm's `renderReference`: a folder holding both `manifests/` and `metadata/` is a
//! bundle, a package-manifest package (`<package>.package.yaml` and version folders) is one,
//! any other folder is a catalog; a file starting with the SQLite header (or named `.db`,
//! `.sqlite`, `.sqlite3`, so the database reader says what is wrong with it) is an index
//! database; anything else is an image, whose config labels say what it holds:
//! `operators.operatorframework.io.index.database.v1` an index database, then
//! `operators.operatorframework.io.index.configs.v1` a file-based catalog, then
//! `operators.operatorframework.io.bundle.package.v1` a bundle.
//!
//! Why one place: `catalog render`, templates, `catalog add`, `bundle validate --image`,
//! `bundle render`, `catalog serve` and `catalog cache verify` all ask the question; asked in
//! each, the answers (and the rules for a label that points outside the image) drifted apart.

use crate::location::{Location, Place};
use crate::mirror_config::PullSource;
use crate::transport::{Opened, OpenedImage, UnpackedImage, open_image, unpack_image};
use crate::transport::{RegistryOptions, TransportError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Label of a file-based catalog image naming its catalog folder.
pub use crate::catalog::CONFIGS_LABEL;
/// Label of an index image naming its sqlite database.
pub use crate::legacy::sqlite::DATABASE_LABEL;
/// Label of a bundle image naming its package.
pub const BUNDLE_PACKAGE_LABEL: &str = crate::bundle::keys::PACKAGE;

/// Top-level entries a bundle image may hold.
const BUNDLE_DIRS: [&str; 3] = ["manifests", "metadata", "tests"];

pub mod kind;
pub use kind::*;

/// An image unpacked into a temporary folder (removed on drop, and on Ctrl-C), with its
/// labels, which say what it holds.
#[derive(Debug)]
pub struct UnpackedSource {
    image: UnpackedImage,
}

impl UnpackedSource {
    /// The unpacked root file system.
    pub fn root(&self) -> &Path {
        self.image.dir.path()
    }

    /// The image config's labels.
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.image.labels
    }

    /// Notes from opening it (an index resolved to one platform, a bundle image's odd shape).
    pub fn warnings(&self) -> &[String] {
        &self.image.warnings
    }

    /// Where a mirror configuration had it read from, when a rule applied to its name.
    pub fn read_from(&self) -> Option<&PullSource> {
        self.image.read_from.as_ref()
    }

    /// The manifest digest.
    pub fn digest(&self) -> &str {
        &self.image.digest
    }

    /// The manifest media type.
    pub fn media_type(&self) -> &str {
        &self.image.media_type
    }

    /// The temporary folder, for a caller that outlives this value's other parts.
    pub fn into_dir(self) -> tempfile::TempDir {
        self.image.dir
    }

    /// What the labels say it is: a database label first, then the catalog label, then the
    /// bundle package label (opm's order); `None` when none is there.
    pub fn kind(&self) -> Option<Kind> {
        let labels = self.labels();
        if labels.contains_key(DATABASE_LABEL) {
            Some(Kind::DatabaseImage)
        } else if catalog_label(labels).is_some() {
            Some(Kind::CatalogImage)
        } else if labels.contains_key(BUNDLE_PACKAGE_LABEL) {
            Some(Kind::BundleImage)
        } else {
            None
        }
    }

    /// The catalog folder the configs label names ([`configs_dir`]), `None` without the label.
    pub fn configs_dir(&self) -> Option<Result<PathBuf, String>> {
        let label = self.labels().get(CONFIGS_LABEL)?;
        Some(configs_dir(self.root(), label))
    }

    /// The database file the database label names ([`database_file`]) and the label's value,
    /// `None` without the label.
    pub fn database_file(&self) -> Option<Result<(PathBuf, &str), String>> {
        let label = self.labels().get(DATABASE_LABEL)?;
        Some(database_file(self.root(), label).map(|file| (file, label.as_str())))
    }

    /// Why its labels say nothing olmpack reads (opm's words, listing the labels found).
    pub fn type_error(&self) -> String {
        let labels = self.labels();
        if labels.is_empty() {
            return "image type could not be determined: image has no labels".into();
        }
        let list: Vec<String> = labels.iter().map(|(k, v)| format!("  {k}={v}")).collect();
        format!(
            "image type could not be determined, found labels\n{}",
            list.join("\n")
        )
    }
}

/// Opens any image source (index resolved to the registry options' platform) and unpacks all
/// its layers safely into a new temporary folder.
pub fn unpack(
    location: &Location,
    registry: &RegistryOptions,
) -> Result<UnpackedSource, TransportError> {
    Ok(UnpackedSource {
        image: unpack_image(location, registry)?,
    })
}

/// Opens an image source without unpacking it (manifest and config read, layers left where
/// they are), for the callers that stream or list its layers.
pub fn open(
    location: &Location,
    registry: &RegistryOptions,
) -> Result<OpenedImage, TransportError> {
    open_image(location, registry)
}

/// Opens an image source as it is, an image or an index (nothing resolved to a platform), for
/// the callers that pick platforms themselves (a catalog build's base).
pub fn open_any(location: &Location, registry: &RegistryOptions) -> Result<Opened, TransportError> {
    crate::transport::open(location, registry)
}

/// Opens an image source with every image of an index (what a copy or a mirror reads), so a
/// missing platform image is found before anything is written.
pub fn open_all(location: &Location, registry: &RegistryOptions) -> Result<Opened, TransportError> {
    crate::transport::open_artifact(location, registry)
}

/// [`unpack`], the image kept open as well (its layers are read again only if asked).
fn unpack_keeping_open(
    location: &Location,
    registry: &RegistryOptions,
) -> Result<(UnpackedSource, OpenedImage), TransportError> {
    let (image, opened) =
        crate::transport::unpack_image_opened(location, registry, "olmpack-image-")?;
    Ok((UnpackedSource { image }, opened))
}

/// Opens and unpacks an image as a bundle image: the temporary folder is named for a bundle,
/// and the warnings say what a bundle image should not have ([`bundle_warnings`]).
pub fn unpack_bundle(
    location: &Location,
    registry: &RegistryOptions,
) -> Result<UnpackedSource, TransportError> {
    let (mut image, opened) =
        crate::transport::unpack_image_opened(location, registry, "olmpack-bundle-")?;
    image.warnings = bundle_warnings(&opened, image.dir.path());
    Ok(UnpackedSource { image })
}

/// Warnings about an unpacked bundle image: index resolution, extra top-level files, and a
/// runnable config.
pub fn bundle_warnings(opened: &OpenedImage, root: &Path) -> Vec<String> {
    let mut w = opened.warnings.clone();
    if let Ok(rd) = std::fs::read_dir(root) {
        let mut extra: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| !BUNDLE_DIRS.contains(&n.as_str()))
            .collect();
        extra.sort();
        if !extra.is_empty() {
            w.push(format!(
                "{}: the image holds files outside manifests/, metadata/ and tests/: {}",
                opened.name,
                extra.join(", ")
            ));
        }
    }
    let run = opened.runnable();
    if !run.is_empty() {
        w.push(format!(
            "{}: a bundle image is data, not a program, but its config sets {}",
            opened.name,
            run.join(" and ")
        ));
    }
    w
}

/// A source opened as what it is.
#[derive(Debug)]
pub enum Source {
    /// A bundle folder.
    BundleDir(PathBuf),
    /// A catalog folder.
    CatalogDir(PathBuf),
    /// A package-manifest package folder.
    PackageManifestDir(PathBuf),
    /// An sqlite database file.
    SqliteFile(PathBuf),
    /// A bundle image, unpacked.
    BundleImage(UnpackedSource),
    /// A catalog image, unpacked, and its catalog folder.
    CatalogImage {
        /// The unpacked image.
        image: UnpackedSource,
        /// The folder the configs label names, inside it.
        configs: PathBuf,
    },
    /// An index database image, unpacked, and its database file.
    DatabaseImage {
        /// The unpacked image.
        image: UnpackedSource,
        /// The file the database label names, inside it.
        file: PathBuf,
        /// The label's value (how messages name the file).
        label: String,
    },
}

impl Source {
    /// Which of the seven kinds it is.
    pub fn kind(&self) -> Kind {
        match self {
            Source::BundleDir(_) => Kind::BundleDir,
            Source::CatalogDir(_) => Kind::CatalogDir,
            Source::PackageManifestDir(_) => Kind::PackageManifestDir,
            Source::SqliteFile(_) => Kind::SqliteFile,
            Source::BundleImage(_) => Kind::BundleImage,
            Source::CatalogImage { .. } => Kind::CatalogImage,
            Source::DatabaseImage { .. } => Kind::DatabaseImage,
        }
    }
}

/// Why a source could not be opened as any kind.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// A plain file that is no database.
    #[error(
        "is a file: pass a bundle folder, a catalog folder, an sqlite index database or an image reference"
    )]
    File,
    /// The image could not be opened or unpacked.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// A label names a path that is not a clean one inside the image, or is missing.
    #[error("{0}")]
    Label(String),
    /// The image carries none of the labels that say what it holds.
    #[error("{0}")]
    Untyped(String),
}

/// Opens `location` as one of the seven kinds (see the module documentation); an image is
/// unpacked into a temporary folder owned by the result.
pub fn open_source(location: &Location, registry: &RegistryOptions) -> Result<Source, OpenError> {
    if let Place::Path(path) = location.place() {
        return match path_kind(path) {
            Some(Kind::PackageManifestDir) => Ok(Source::PackageManifestDir(path.clone())),
            Some(Kind::BundleDir) => Ok(Source::BundleDir(path.clone())),
            Some(Kind::CatalogDir) => Ok(Source::CatalogDir(path.clone())),
            Some(_) => Ok(Source::SqliteFile(path.clone())),
            None => Err(OpenError::File),
        };
    }
    let image = unpack(location, registry)?;
    if let Some(found) = image.database_file() {
        let (file, label) = found.map_err(OpenError::Label)?;
        let label = label.to_string();
        return Ok(Source::DatabaseImage { image, file, label });
    }
    if let Some(configs) = image.configs_dir() {
        let configs = configs.map_err(OpenError::Label)?;
        return Ok(Source::CatalogImage { image, configs });
    }
    if image.labels().contains_key(BUNDLE_PACKAGE_LABEL) {
        return Ok(Source::BundleImage(image));
    }
    Err(OpenError::Untyped(image.type_error()))
}

/// A source that must be a catalog: a folder as given, or a catalog image and the folder its
/// configs label names.
#[derive(Debug)]
pub enum CatalogSource {
    /// A folder.
    Folder(PathBuf),
    /// A catalog image, unpacked (removed when this is dropped).
    Image {
        /// The unpacked image (boxed: it is most of the enum's size).
        image: Box<UnpackedSource>,
        /// Its catalog folder.
        configs: PathBuf,
        /// The image, still open: its layers' tar headers give the modes and owners a
        /// container sees (the unpacked files have the unpacker's), which a serve cache's
        /// digest covers. Released once the cache is checked, or before serving.
        opened: Option<Box<OpenedImage>>,
    },
}

impl CatalogSource {
    /// The catalog folder.
    pub fn dir(&self) -> &Path {
        match self {
            CatalogSource::Folder(p) => p,
            CatalogSource::Image { configs, .. } => configs,
        }
    }
}

/// Why a source is no catalog `catalog serve` can read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogSourceError {
    /// A plain file.
    #[error("{0}: is a file: pass a catalog folder or a catalog image")]
    File(String),
    /// The image could not be opened or unpacked.
    #[error("{0}: {1}")]
    Transport(String, TransportError),
    /// The image has no catalog label.
    #[error("{0}: not a catalog image (no {CONFIGS_LABEL} label)")]
    NotACatalog(String),
    /// The catalog label names no clean folder inside the image.
    #[error("{0}: {1}")]
    Label(String, String),
}

/// Opens `location` as a catalog: a folder as it is, an image unpacked and its configs label
/// followed. `registry` is asked for the registry options only when the source is an image
/// (reading `--password-stdin` or checking a signature policy has no business for a folder),
/// and gives back the location to read with them (pinned to the digest a signature policy
/// verified, so the image unpacked is the one checked).
pub fn open_catalog<E: From<CatalogSourceError>>(
    location: &Location,
    registry: impl FnOnce(&Location) -> Result<(RegistryOptions, Location), E>,
) -> Result<CatalogSource, E> {
    let source = location.as_str();
    match location.place() {
        Place::Path(path) if path.is_dir() => Ok(CatalogSource::Folder(path.clone())),
        Place::Path(_) => Err(CatalogSourceError::File(source.to_string()).into()),
        Place::Local(_) | Place::Registry(_) => {
            let (opts, location) = registry(location)?;
            let (image, opened) = unpack_keeping_open(&location, &opts)
                .map_err(|e| CatalogSourceError::Transport(source.to_string(), e))?;
            let configs = image
                .configs_dir()
                .ok_or_else(|| CatalogSourceError::NotACatalog(source.to_string()))?
                .map_err(|e| CatalogSourceError::Label(source.to_string(), e))?;
            Ok(CatalogSource::Image {
                image: Box::new(image),
                configs,
                opened: Some(Box::new(opened)),
            })
        }
    }
}

/// The catalog folder a configs label `label` names, inside the unpacked image `root`. The
/// label is image data: one with a `..`, `.` or empty component is refused, and the folder,
/// with links resolved, must stay under `root`, so nothing outside the image is ever read (or
/// quoted in an error).
pub fn configs_dir(root: &Path, label: &str) -> Result<PathBuf, String> {
    let bad = || {
        format!(
            "label {CONFIGS_LABEL}={label:?} is not a clean path inside the image (expected e.g. /configs)"
        )
    };
    let rel = label.strip_prefix('/').unwrap_or(label);
    let rel = rel.strip_suffix('/').unwrap_or(rel);
    if rel
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(bad());
    }
    let rel = crate::transport::unpack::safe_relative(Path::new(rel))
        .map_err(|_| bad())?
        .ok_or_else(bad)?;
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot read the unpacked image: {e}"))?;
    let dir = root.join(inside_image(&root, &rel).ok_or_else(bad)?);
    if !dir.is_dir() {
        return Err(format!(
            "label {CONFIGS_LABEL}={label:?} names a folder the image does not have"
        ));
    }
    Ok(dir)
}

/// `rel` with the image's links resolved inside `root` ([`crate::fsio::untrusted::resolve`]),
/// `None` when a link leads out of it. The resolution never looks at a path outside the
/// image, so whether a host path exists shows in no message.
fn inside_image(root: &Path, rel: &Path) -> Option<PathBuf> {
    crate::fsio::untrusted::resolve(root, rel).ok()
}

/// The database file a database label `label` names, inside the unpacked image `root`, held to
/// the same rules as the configs label ([`configs_dir`]): a clean path that stays in the image.
pub fn database_file(root: &Path, label: &str) -> Result<PathBuf, String> {
    let bad = || {
        format!(
            "label {DATABASE_LABEL}={label:?} is not a clean path inside the image (expected e.g. /database/index.db)"
        )
    };
    let rel = label.strip_prefix('/').unwrap_or(label);
    if rel
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(bad());
    }
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot read the unpacked image: {e}"))?;
    let file = root.join(inside_image(&root, Path::new(rel)).ok_or_else(bad)?);
    if !file.exists() {
        return Err(format!(
            "label {DATABASE_LABEL}={label:?} names a file the image does not have"
        ));
    }
    if !file.is_file() {
        return Err(bad());
    }
    Ok(file)
}

/// The catalog folder of a catalog image as `catalog cache verify` reads it without unpacking:
/// `given` (its `--configs-dir`) or the configs label, as a clean absolute path inside the
/// image (`configs`, without the leading `/`).
pub fn configs_label_path(
    source: &str,
    labels: &BTreeMap<String, String>,
    given: Option<&str>,
) -> Result<String, String> {
    match given.or(labels.get(CONFIGS_LABEL).map(String::as_str)) {
        Some(c) => crate::cache::verify::clean_abs(c).ok_or_else(|| {
            format!("{source}: the catalog folder {c:?} is not a clean absolute path")
        }),
        None => Err(format!(
            "{source}: no {CONFIGS_LABEL} label: not a catalog image (give --configs-dir)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A clean label whose folder a link in the image turns outward (the chain a later entry
    /// completes) is refused, with the same words whether the host path exists or not.
    #[test]
    fn labels_cannot_leave_the_image_through_links() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("image");
        std::fs::create_dir_all(root.join("real/configs")).unwrap();
        std::fs::create_dir_all(d.path().join("outside/configs")).unwrap();
        std::fs::write(d.path().join("outside/index.db"), b"x").unwrap();
        symlink(".", root.join("a")).unwrap();
        symlink("a/a/../outside/configs", root.join("esc")).unwrap();
        symlink("a/a/../nowhere/configs", root.join("gone")).unwrap();
        symlink("a/a/../outside/index.db", root.join("db")).unwrap();
        symlink("real/configs", root.join("inside")).unwrap();
        assert_eq!(
            configs_dir(&root, "/inside").unwrap(),
            root.canonicalize().unwrap().join("real/configs")
        );
        let esc = configs_dir(&root, "/esc").unwrap_err();
        let gone = configs_dir(&root, "/gone").unwrap_err();
        assert!(esc.contains("not a clean path inside the image"), "{esc}");
        assert_eq!(esc.replace("esc", "gone"), gone);
        let db = database_file(&root, "/db").unwrap_err();
        assert!(db.contains("not a clean path inside the image"), "{db}");
        assert!(
            configs_dir(&root, "/missing")
                .unwrap_err()
                .contains("does not have")
        );
    }
}
