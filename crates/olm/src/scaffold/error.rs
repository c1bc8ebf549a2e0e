//! Why `bundle init` could not plan or write a bundle. Every variant carries the path (and line
//! when known) so the message alone tells the user which file to open.

use crate::yaml::YamlError;
use std::path::PathBuf;

/// A reason init stops before (or while) writing. Conflicts between existing values and flags are
/// not errors: they are part of the [`super::Plan`], so `--force` and `--dry-run` can see them.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The folder given does not exist.
    #[error("folder {} does not exist", .0.display())]
    NotFound(PathBuf),
    /// The path given is a file.
    #[error("{} is not a folder: pass the folder holding the manifests", .0.display())]
    NotADirectory(PathBuf),
    /// A flat folder of manifests and no `--output-dir`: init never moves user files.
    #[error(
        "{} holds manifests but no manifests/ folder, and init never moves your files. Either \
         pass --output-dir OUT to write a bundle with copies of the manifests in OUT/manifests/ \
         and its metadata in OUT/metadata/ (for example --output-dir {}), or move the \
         manifests into {}/manifests/ yourself and run init again",
        .dir.display(), .dir.join("bundle").display(), .dir.display()
    )]
    FlatWithoutOutputDir {
        /// The flat folder.
        dir: PathBuf,
    },
    /// A file or folder could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
    /// A YAML file does not parse.
    #[error("{}:{}: invalid YAML: {} (column {})", .path.display(), .error.line, .error.message, .error.col)]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The parse error, with line and column (not a `#[source]`: the message already says
        /// all of it, and the cause chain would repeat it).
        error: YamlError,
    },
    /// A file is not UTF-8 text.
    #[error("{}: not UTF-8 text", .0.display())]
    NotText(PathBuf),
    /// No ClusterServiceVersion among the manifests.
    #[error("no ClusterServiceVersion found in {}{hint}", .dir.display())]
    NoCsv {
        /// The folder searched.
        dir: PathBuf,
        /// Where the bundle may be instead, when that can be guessed (starts with `; `).
        hint: String,
    },
    /// More than one ClusterServiceVersion: a bundle is one operator version.
    #[error(
        "more than one ClusterServiceVersion: {} (a bundle holds exactly one; keep one and move the others to their own bundles)",
        files.join(" and ")
    )]
    ManyCsvs {
        /// The files (with document index when one file holds several).
        files: Vec<String>,
    },
    /// The package name cannot be derived and was not given.
    #[error(
        "cannot derive the package name from the CSV name {csv_name:?} (it has no .vX.Y.Z version \
         suffix) and no annotations.yaml sets it: pass --package NAME"
    )]
    NoPackage {
        /// The CSV's `metadata.name` (empty when missing).
        csv_name: String,
    },
    /// No channel given and none recorded in an existing annotations.yaml.
    #[error(
        "no channels: pass --channels (for example --channels stable or --channels stable,fast); \
         init does not pick one for you, because a wrong channel ships the bundle to the wrong users"
    )]
    NoChannels,
    /// A channel or package name given on the command line is unusable.
    #[error("{0}")]
    BadValue(String),
    /// An existing metadata file (annotations, dependencies) cannot be kept or merged.
    #[error(transparent)]
    Metadata(#[from] crate::bundle::metadata::MetadataError),
    /// An annotation cannot be expressed as a Dockerfile LABEL.
    #[error(
        "annotation {key} contains a line break, which a bundle.Dockerfile LABEL cannot carry: \
         remove the line break or drop --dockerfile"
    )]
    DockerfileValue {
        /// The annotation key.
        key: String,
    },
}
