//! What a path is, by its shape alone (no image is opened): the seven kinds of source, the
//! local ones recognised as opm's `renderReference` does, and the words that name another kind
//! where a catalog is expected.

use super::CONFIGS_LABEL;
use std::collections::BTreeMap;
use std::path::Path;

/// The seven kinds of source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A registry+v1 bundle folder (`manifests/` and `metadata/`).
    BundleDir,
    /// A file-based catalog folder.
    CatalogDir,
    /// A package-manifest package folder.
    PackageManifestDir,
    /// An sqlite index database file.
    SqliteFile,
    /// A bundle image.
    BundleImage,
    /// A file-based catalog image.
    CatalogImage,
    /// An index image holding an sqlite database.
    DatabaseImage,
}

/// A folder holding both `manifests/` and `metadata/`: a bundle, as opm reads one.
pub fn is_bundle_dir(path: &Path) -> bool {
    path.join("manifests").is_dir() && path.join("metadata").is_dir()
}

/// A folder with `manifests/` or `metadata/`: a bundle folder, perhaps half made, and never a
/// package-manifest package (the legacy reader refuses such a folder too); `bundle migrate`
/// says so instead of "not a package".
pub fn has_bundle_folder(path: &Path) -> bool {
    path.join("metadata").is_dir() || path.join("manifests").is_dir()
}

/// A folder with neither `manifests/` nor `metadata/` holding at least one olm.* blob: a
/// file-based catalog given where a bundle folder is expected (`bundle validate`, `bundle
/// render`), so the message can name it instead of listing the bundle folders it lacks. Loads
/// the catalog: call it only once the folder is known not to be a bundle.
pub fn holds_catalog(path: &Path) -> bool {
    path.is_dir()
        && !has_bundle_folder(path)
        && !is_package_manifest_dir(path)
        && crate::catalog::load::load_dir(path).is_ok_and(|l| l.config.has_olm_blobs())
}

/// A package-manifest package (`<package>.package.yaml` and one folder per version).
pub fn is_package_manifest_dir(path: &Path) -> bool {
    crate::legacy::packagemanifest::is_package_manifest_dir(path)
}

/// What a path is, from the file system alone; `None` for a file that is no database (and
/// for nothing at all).
pub fn path_kind(path: &Path) -> Option<Kind> {
    if path.is_dir() {
        Some(if is_package_manifest_dir(path) {
            Kind::PackageManifestDir
        } else if is_bundle_dir(path) {
            Kind::BundleDir
        } else {
            Kind::CatalogDir
        })
    } else if crate::legacy::sqlite::is_sqlite_file(path) || looks_like_database(path) {
        Some(Kind::SqliteFile)
    } else {
        None
    }
}

/// A file named like a database (`.db`, `.sqlite`, `.sqlite3`) goes to the database reader even
/// when it is not one, so the message says what is wrong with it rather than listing the kinds
/// of source.
fn looks_like_database(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "db" | "sqlite" | "sqlite3"))
}

/// What a path given where a file-based catalog folder is expected holds instead, decided
/// from its name and the file system alone (no image is opened, nothing is read but an sqlite
/// header): [`not_a_catalog`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotACatalog {
    /// It names an image (a transport prefix, or a registry host and no such local path); which
    /// of the three image kinds is known only once its labels are read.
    Image,
    /// A local source of another kind: [`Kind::PackageManifestDir`], [`Kind::BundleDir`] or
    /// [`Kind::SqliteFile`] (a file with the SQLite header).
    Local(Kind),
}

/// Whether `path`, given where a file-based catalog is expected (`catalog validate`, `catalog
/// graph`, which read folders only), is another kind of source; `None` for anything that may
/// be a catalog (a folder, a file, a missing path, which the loader names). The same rules as
/// [`path_kind`], with two differences: an image is recognised by its name without being
/// opened, and a file merely named `.db` is left to the catalog loader (only the SQLite header
/// makes a database here).
pub fn not_a_catalog(path: &Path) -> Option<NotACatalog> {
    let s = path.display().to_string();
    let image_prefix = ["oci:", "oci-archive:", "docker-archive:", "docker://"]
        .iter()
        .any(|p| s.starts_with(p));
    let exists = std::fs::symlink_metadata(path).is_ok();
    let registry_like = !exists
        && s.split_once('/').is_some_and(|(first, _)| {
            first.contains('.') || first.contains(':') || first == "localhost"
        })
        && !s.starts_with('.')
        && !s.starts_with('/');
    if image_prefix || registry_like {
        return Some(NotACatalog::Image);
    }
    match path_kind(path)? {
        kind @ (Kind::PackageManifestDir | Kind::BundleDir) => Some(NotACatalog::Local(kind)),
        Kind::SqliteFile if path.is_file() && crate::legacy::sqlite::is_sqlite_file(path) => {
            Some(NotACatalog::Local(Kind::SqliteFile))
        }
        _ => None,
    }
}

/// The catalog folder an image's configs label names, as written: an image carrying the label
/// holds a file-based catalog (so `bundle validate --image` refuses it as a catalog image,
/// naming the folder), whatever else it carries.
pub fn catalog_label(labels: &BTreeMap<String, String>) -> Option<&str> {
    labels.get(CONFIGS_LABEL).map(String::as_str)
}

/// Whether an unpacked image's root holds a bundle: a `manifests/` folder (an image needs no
/// `metadata/`, its labels carry the annotations), as `bundle validate --image` reads one.
pub fn holds_bundle(root: &Path) -> bool {
    root.join("manifests").is_dir()
}

/// The message for a path given where a file-based catalog is expected that is another kind of
/// source ([`not_a_catalog`]), with the command that reads it; `None` for
/// anything that may be a catalog. An image, a package-manifest package, a bundle folder or an
/// sqlite database would otherwise give a raw `No such file or directory` or a page of
/// missing-schema errors. `catalog graph` words its refusal the same way.
pub fn not_a_catalog_message(path: &Path) -> Option<String> {
    let s = path.display().to_string();
    Some(match not_a_catalog(path)? {
        NotACatalog::Image => format!(
            "{s} names an image, not a catalog folder: `olmpack catalog render {s} -o yaml` prints the catalog it holds; write that to a folder (DIR/catalog.yaml) to validate or graph it"
        ),
        NotACatalog::Local(Kind::PackageManifestDir) => format!(
            "{s} is a package-manifest package (the legacy format), not a file-based catalog: `olmpack bundle validate {s}` checks it, `olmpack catalog render {s}` converts it to a catalog"
        ),
        NotACatalog::Local(Kind::BundleDir) => format!(
            "{s} is a bundle folder, not a catalog: `olmpack bundle validate {s}` checks it; `olmpack catalog render {s}` gives its olm.bundle blob and `olmpack catalog add CATALOG-DIR {s}` adds it to a catalog"
        ),
        NotACatalog::Local(_) => format!(
            "{s} is an sqlite index database, not a file-based catalog: `olmpack catalog render {s}` converts it"
        ),
    })
}
