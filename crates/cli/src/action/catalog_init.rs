//! `catalog init`: the `olm.package` blob opm init prints, checked, in opm's form.

use crate::catalog::write::Format;

/// Why no blob was written (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The flags are wrong, or the blob could not be encoded.
    #[error("{0}")]
    Usage(String),
    /// The package blob could not be made (an unreadable description or icon...).
    #[error(transparent)]
    Package(crate::catalog::init::InitError),
}

/// The blob of a new package, as opm init writes it (`format`: JSON or YAML).
pub fn init(
    package: &str,
    default_channel: &str,
    description: Option<&std::path::Path>,
    icon: Option<&std::path::Path>,
    format: Format,
) -> Result<Vec<u8>, InitError> {
    if default_channel.trim().is_empty() {
        return Err(InitError::Usage(
            "-c/--default-channel must name a channel: a package without one fails validation"
                .to_string(),
        ));
    }
    let blob = crate::catalog::init::init_package(package, default_channel, description, icon)
        .map_err(InitError::Package)?;
    let mut out = Vec::new();
    crate::catalog::write::write_blob(&mut out, &blob, format)
        .map_err(|e| InitError::Usage(e.to_string()))?;
    Ok(out)
}
