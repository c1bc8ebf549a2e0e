//! `catalog init`: the `olm.package` blob `opm init` writes (CATALOG.md E.1), with two fixes:
//! the package name is checked (opm lets a bad name through to fail at `validate`), and the
//! icon's media type comes from its content (as opm does, through the `infer` port of the
//! library opm uses, plus an SVG sniffer as opm registers one).

use crate::catalog::model::{Icon, Package, SCHEMA_PACKAGE};
use std::path::Path;

/// Why the package blob could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The package name is not a DNS-1123 label.
    #[error(
        "invalid package name {0:?}: it must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters); opm validate rejects it"
    )]
    BadName(String),
    /// The icon is not a recognised image.
    #[error(
        "{path}: detected invalid type {detected:?}: not an image (PNG, JPEG, GIF, WebP, SVG, ICO, BMP, TIFF, AVIF, HEIF are)"
    )]
    NotAnImage {
        /// The icon file.
        path: String,
        /// What was detected (empty when unknown).
        detected: String,
    },
    /// A file could not be read.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
}

/// Whether `name` is a DNS-1123 label, the rule opm validate applies to package names.
pub fn is_dns1123_label(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Whether the bytes are an SVG document: optional BOM, XML declaration, comments and doctype,
/// then an `<svg` element (what opm's `go-is-svg` matcher accepts).
pub fn is_svg(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("<?") {
            let Some(end) = r.find("?>") else {
                return false;
            };
            rest = r[end + 2..].trim_start();
        } else if let Some(r) = rest.strip_prefix("<!--") {
            let Some(end) = r.find("-->") else {
                return false;
            };
            rest = r[end + 3..].trim_start();
        } else if rest
            .as_bytes()
            .get(..9)
            .is_some_and(|b| b.eq_ignore_ascii_case(b"<!doctype"))
        {
            let Some(end) = rest.find('>') else {
                return false;
            };
            rest = rest[end + 1..].trim_start();
        } else {
            break;
        }
    }
    rest.strip_prefix("<svg")
        .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/'))
}

/// The MIME type of an icon, from its content; an error unless it is an image.
pub fn icon_media_type(path: &str, bytes: &[u8]) -> Result<String, InitError> {
    let detected = match infer::get(bytes) {
        Some(t) if t.mime_type().starts_with("image/") => t.mime_type().to_string(),
        // `infer` reads an SVG with an XML declaration as text/xml; opm's SVG matcher wins.
        _ if is_svg(bytes) => "image/svg+xml".to_string(),
        Some(t) => t.mime_type().to_string(),
        None => String::new(),
    };
    if detected.starts_with("image/") {
        Ok(detected)
    } else {
        Err(InitError::NotAnImage {
            path: path.to_string(),
            detected,
        })
    }
}

/// The `olm.package` blob for `opm init NAME [-c CHANNEL] [-d FILE] [-i FILE]`.
pub fn init_package(
    name: &str,
    default_channel: &str,
    description_file: Option<&Path>,
    icon_file: Option<&Path>,
) -> Result<Package, InitError> {
    if !is_dns1123_label(name) {
        return Err(InitError::BadName(name.to_string()));
    }
    let read = crate::fsio::read;
    let description = match description_file {
        Some(p) => String::from_utf8_lossy(&read(p)?).into_owned(),
        None => String::new(),
    };
    let icon = match icon_file {
        Some(p) => {
            let bytes = read(p)?;
            let mediatype = icon_media_type(&p.display().to_string(), &bytes)?;
            Some(Icon {
                base64data: Some(bytes),
                mediatype,
            })
        }
        None => None,
    };
    Ok(Package {
        schema: SCHEMA_PACKAGE.to_string(),
        name: name.to_string(),
        default_channel: default_channel.to_string(),
        icon,
        description,
        properties: Vec::new(),
        origin: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multibyte_text_is_not_an_svg_and_does_not_panic() {
        assert!(!is_svg("12345678é".as_bytes()));
        assert!(!is_svg("<!doctypé".as_bytes()));
        assert!(icon_media_type("icon", "12345678é".as_bytes()).is_err());
        assert!(is_svg(b"<!DOCTYPE svg><svg xmlns='x'/>"));
    }

    #[test]
    fn names_and_types() {
        assert!(is_dns1123_label("my-operator2"));
        assert!(!is_dns1123_label("My_Operator"));
        assert!(!is_dns1123_label("-x"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_svg(
            b"<?xml version=\"1.0\"?>\n<!-- c -->\n<svg xmlns=\"x\"></svg>"
        ));
        assert!(!is_svg(b"<html></html>"));
        assert_eq!(
            icon_media_type("x", b"\x89PNG\r\n\x1a\n0000").unwrap(),
            "image/png"
        );
        assert!(icon_media_type("x", b"hello").is_err());
    }
}
