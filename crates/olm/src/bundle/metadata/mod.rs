//! The bundle's metadata files as olmpack writes them: `metadata/annotations.yaml`
//! ([`annotations`]) and `metadata/dependencies.yaml` ([`dependencies`]). They live with the
//! bundle model because two producers write them: `bundle init` (the scaffold) and
//! `bundle migrate` (a package-manifest version turned into a bundle); neither owns the format.

pub mod annotations;
pub mod dependencies;

use crate::yaml::YamlError;
use std::path::PathBuf;

/// Why an existing metadata file cannot be read for rewriting. Every variant names the file
/// (and line), so the message alone says which file to open.
#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    /// The file does not parse as YAML.
    #[error("{}:{}: invalid YAML: {} (column {})", .path.display(), .error.line, .error.message, .error.col)]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The parse error, with line and column (not a `#[source]`: the message already says
        /// all of it, and the cause chain would repeat it).
        error: YamlError,
    },
    /// The annotations file has a shape that cannot be kept verbatim.
    #[error("{}:{line}: {message}", .path.display())]
    Annotations {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
}
