//! What the query layer hands the model: opm's `api.Bundle` (the fields the conversion reads)
//! and the conversion's error. Below the query layer, the model and the check, which all name
//! them.

pub(super) use crate::gocompat::json::kind_name as kind_of;

/// Why an index could not be converted; the messages are opm's where opm has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A listed package has no channel (`GetPackage`).
    #[error("package {0} not found")]
    PackageNotFound(String),
    /// A bundle's `bundle` column is not a sequence of JSON objects, or lacks a CSV.
    #[error("bundle {bundle:?}: {message}")]
    BundleObjects {
        /// The bundle name.
        bundle: String,
        /// What is wrong.
        message: String,
    },
    /// A bundle is listed in a package the index does not have.
    #[error("unknown package {package:?} for bundle {bundle:?}")]
    UnknownPackage {
        /// The package name.
        package: String,
        /// The bundle name.
        bundle: String,
    },
    /// A bundle is listed in a channel its package does not have.
    #[error("populate channels: unknown channel {channel:?} for bundle {bundle:?}")]
    UnknownChannel {
        /// The channel name.
        channel: String,
        /// The bundle name.
        bundle: String,
    },
    /// A property or dependency value does not parse, or the CSV's related images do not.
    #[error("populate channels: convert bundle {bundle:?}: {message}")]
    ConvertBundle {
        /// The bundle name.
        bundle: String,
        /// What is wrong.
        message: String,
    },
    /// The default channel's head cannot be read for the package icon.
    #[error("populate package icons: {0}")]
    Icon(String),
    /// opm's model validation failed (`invalid index`); one line per finding.
    #[error("invalid index:\n{}", .0.join("\n"))]
    Invalid(Vec<String>),
}

/// opm's `api.Bundle`, the fields the conversion reads.
#[derive(Debug, Default)]
pub(super) struct ApiBundle {
    pub(super) csv_name: String,
    pub(super) package_name: String,
    pub(super) channel_name: String,
    pub(super) csv_json: String,
    pub(super) objects: Vec<String>,
    pub(super) bundle_path: String,
    pub(super) version: String,
    pub(super) skip_range: String,
    pub(super) replaces: String,
    pub(super) skips: Vec<String>,
    pub(super) dependencies: Vec<(String, String)>,
    pub(super) properties: Vec<(String, String)>,
}
