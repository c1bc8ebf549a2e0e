//! What can go wrong while signing or verifying, apart from a signature being refused (that is a
//! [`super::Rejection`], a verdict, not an error).

/// A signing or verification step that could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    /// A key file, keyring or configuration file could not be read.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
    /// A key file is not in a format olmpack reads, or its passphrase is wrong.
    #[error("{path}: {reason}")]
    Key {
        /// The file (or `keyData` for inline policy keys).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No passphrase was given for an operation that needs one.
    #[error("no passphrase: set COSIGN_PASSWORD (it may be empty) or give --passphrase-file FILE")]
    NoPassphrase,
    /// A registry operation failed.
    #[error(transparent)]
    Registry(#[from] crate::registry::RegistryError),
    /// Reading or writing a local image failed.
    #[error(transparent)]
    Transport(#[from] crate::transport::TransportError),
    /// Reading or writing an OCI layout failed.
    #[error(transparent)]
    Local(#[from] crate::transport::LocalError),
    /// Writing a local file failed.
    #[error(transparent)]
    Output(#[from] crate::image::OutputError),
    /// The image cannot be signed or verified where it is (an archive, a folder).
    #[error("{0}")]
    Unsupported(String),
    /// A configuration file (`registries.d`, `policy.json`) is invalid.
    #[error("{path}: {reason}")]
    Config {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A lookaside store could not be read or written.
    #[error("lookaside {url}: {reason}")]
    Lookaside {
        /// The URL of the signature.
        url: String,
        /// What failed.
        reason: String,
    },
    /// OpenPGP signing failed (a locked key, an unsupported algorithm).
    #[error("OpenPGP: {0}")]
    Pgp(String),
}

impl SignatureError {
    /// A key-file problem naming the file.
    pub fn key(path: impl Into<String>, reason: impl Into<String>) -> Self {
        SignatureError::Key {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
