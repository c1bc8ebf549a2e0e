//! Bundle images: which layer holds `metadata/`, which files a bundle image should contain,
//! and unpacking one into a folder the bundle loader reads. The transports know nothing about
//! bundles; this is where that knowledge meets them.

use crate::bundle::{Bundle, LoadError};
use crate::findings::Report;
use crate::location::Location;
use crate::registry::RegistryError;
use crate::transport::OpenedImage;
use crate::transport::unpack::EntryInfo;
use crate::transport::{RegistryOptions, TransportError};
use std::collections::BTreeMap;

/// Label comparison lives with the other image rules; re-exported for callers of this module.
pub use crate::validate::image::{BUNDLE_KEY_PREFIX, LabelMismatch, compare_labels};

/// The path of the annotations file inside a bundle image.
pub const ANNOTATIONS_PATH: &str = "metadata/annotations.yaml";

/// A bundle image unpacked into a temp folder, for `validate --image` and `render`.
#[derive(Debug)]
pub struct FetchedBundle {
    /// Unpacked bundle root holding `manifests/`, `metadata/` (and maybe `tests/`); deleted on drop.
    pub dir: tempfile::TempDir,
    /// Image config labels.
    pub labels: BTreeMap<String, String>,
    /// Manifest digest.
    pub digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// Things a bundle image should not have: an index, files outside manifests/ metadata/
    /// tests/, a runnable Entrypoint/Cmd.
    pub warnings: Vec<String>,
}

/// Pulls `source` (a registry reference or a local `oci:`/`oci-archive:`/`docker-archive:`
/// source) and unpacks it safely into a temp folder ([`super::source::unpack_bundle`]).
pub fn fetch_bundle(
    source: &Location,
    opts: &RegistryOptions,
) -> Result<FetchedBundle, TransportError> {
    let unpacked = super::source::unpack_bundle(source, opts)?;
    Ok(FetchedBundle {
        labels: unpacked.labels().clone(),
        digest: unpacked.digest().to_string(),
        media_type: unpacked.media_type().to_string(),
        warnings: unpacked.warnings().to_vec(),
        dir: unpacked.into_dir(),
    })
}

/// Why `bundle validate --image` could not judge an image as a bundle: it names the image as
/// the user gave it, never the temp folder it was unpacked into.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleImageError {
    /// The image could not be opened or unpacked.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The source string names no image (a missing path, an unqualified word).
    #[error(transparent)]
    Location(#[from] crate::location::LocationError),
    /// The image is a file-based catalog image (it carries the catalog label).
    #[error(
        "{source_name} is a catalog image (label {label}={configs}), not a bundle image: check it with `olmpack catalog render {source_name}`, or `olmpack catalog validate` on its catalog folder"
    )]
    CatalogImage {
        /// The image as given.
        source_name: String,
        /// The catalog label's name.
        label: &'static str,
        /// Where its catalog is (the label's value).
        configs: String,
    },
    /// The image holds no `manifests/` folder.
    #[error("{source_name} is not a bundle image: it has no manifests/ folder (it holds: {found})")]
    NotABundle {
        /// The image as given.
        source_name: String,
        /// Its top-level entries, comma-separated.
        found: String,
    },
    /// The unpacked bundle could not be read.
    #[error("{source_name}: {source}")]
    Load {
        /// The image as given.
        source_name: String,
        /// Why.
        #[source]
        source: LoadError,
    },
}

/// `bundle validate --image`: pulls (or opens) an image, refuses one that is no bundle with a
/// message about the image (a catalog image is named as such), unpacks it, runs every folder
/// rule, then compares its labels with its annotations and checks it looks like a bundle
/// image. The report is named `SOURCE (DIGEST)`.
pub fn validate_image(
    location: &Location,
    registry: &RegistryOptions,
    opts: &crate::validate::Options,
) -> Result<Report, BundleImageError> {
    let source = location.as_str();
    let fetched = fetch_bundle(location, registry)?;
    if let Some(configs) = super::source::catalog_label(&fetched.labels) {
        return Err(BundleImageError::CatalogImage {
            source_name: source.to_string(),
            label: super::source::CONFIGS_LABEL,
            configs: configs.to_string(),
        });
    }
    if !super::source::holds_bundle(fetched.dir.path()) {
        let mut found: Vec<String> = std::fs::read_dir(fetched.dir.path())
            .map(|rd| {
                rd.flatten()
                    .map(|e| {
                        let slash = if e.path().is_dir() { "/" } else { "" };
                        format!("{}{slash}", e.file_name().to_string_lossy())
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        return Err(BundleImageError::NotABundle {
            source_name: source.to_string(),
            found: if found.is_empty() {
                "nothing".to_string()
            } else {
                found.join(", ")
            },
        });
    }
    let bundle = Bundle::load(fetched.dir.path()).map_err(|e| BundleImageError::Load {
        source_name: source.to_string(),
        source: e,
    })?;
    let mut report = crate::validate::validate(&bundle, opts);
    crate::validate::image::check_labels(&mut report, &bundle, &fetched.labels);
    crate::validate::image::check_shape(&mut report, &fetched.warnings);
    report.subject = format!("{source} ({})", fetched.digest);
    // Finding paths are inside the image, not under a folder the user named.
    report.root = None;
    Ok(report)
}

/// The bundle-image shape warnings live with the opener.
pub use super::source::bundle_warnings;

/// Lists layer `i` (streamed, verified, nothing written), capturing `metadata/annotations.yaml`.
pub fn list_layer(
    opened: &OpenedImage,
    i: usize,
) -> Result<(Vec<crate::transport::unpack::EntryInfo>, Option<Vec<u8>>), TransportError> {
    let (entries, mut captured) = opened.list_layer(i, &|p| p == ANNOTATIONS_PATH, 1 << 20)?;
    Ok((entries, captured.remove(ANNOTATIONS_PATH)))
}

/// Finds and reads `metadata/annotations.yaml` fetching as few layers as possible.
///
/// Heuristic: olmpack and `docker build` of a `bundle.Dockerfile` put `COPY metadata` in its
/// own, last and small layer. So we try the last layer first if it is at most 1 MiB, then the
/// other layers of at most 1 MiB smallest first, then the rest; we stop at the first layer
/// holding the file. Returns the layer index, the bytes and how many layers were read. A
/// later layer could still whiteout the file; bundles never do, and `pull` honours it.
pub fn find_annotations(
    opened: &OpenedImage,
) -> Result<Option<(usize, Vec<u8>, usize)>, TransportError> {
    let layers = opened.layer_descriptors();
    let n = layers.len();
    let mut order: Vec<usize> = Vec::new();
    const SMALL: u64 = 1 << 20;
    if layers.last().is_some_and(|l| l.size <= SMALL) {
        order.push(n - 1);
    }
    let mut small: Vec<usize> = (0..n)
        .filter(|i| !order.contains(i) && layers[*i].size <= SMALL)
        .collect();
    small.sort_by_key(|i| layers[*i].size);
    order.extend(small);
    order.extend((0..n).filter(|i| layers[*i].size > SMALL));
    for (read, i) in order.into_iter().enumerate() {
        let (_, captured) = list_layer(opened, i)?;
        if let Some(bytes) = captured {
            return Ok(Some((i, bytes, read + 1)));
        }
    }
    Ok(None)
}

/// What `bundle inspect` found in an image: each layer (with its files unless asked not to
/// list them), the annotations and in which layer, and how many layers were read.
#[derive(Debug)]
pub struct Inspection {
    /// Each layer's descriptor, with its entries when they were listed.
    pub layers: Vec<(crate::image::Descriptor, Option<Vec<EntryInfo>>)>,
    /// The layer holding `metadata/annotations.yaml` and its `annotations:` mapping.
    pub annotations: Option<(usize, BTreeMap<String, String>)>,
    /// Layers fetched to find out.
    pub layers_read: usize,
}

/// Why an image could not be inspected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectError {
    /// A layer could not be fetched or read.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A layer could not be opened, fetched or read.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// `metadata/annotations.yaml` is not YAML of the expected shape.
    #[error("{source_name}: {ANNOTATIONS_PATH}: {message}")]
    Annotations {
        /// The image as given.
        source_name: String,
        /// What is wrong.
        message: String,
    },
}

/// Lists an image's layers (streamed, verified, nothing unpacked) and reads its annotations.
/// With `no_files`, only the layers needed to find the annotations are read
/// ([`find_annotations`]).
pub fn inspect(opened: &OpenedImage, no_files: bool) -> Result<Inspection, InspectError> {
    let parse = |bytes: &[u8]| {
        parse_annotations(&String::from_utf8_lossy(bytes)).map_err(|message| {
            InspectError::Annotations {
                source_name: opened.name.clone(),
                message,
            }
        })
    };
    let mut layers = Vec::new();
    let mut annotations = None;
    let mut layers_read = 0;
    if no_files {
        if let Some((i, bytes, read)) = find_annotations(opened)? {
            annotations = Some((i, parse(&bytes)?));
            layers_read = read;
        } else {
            layers_read = opened.image.layers.len();
        }
        layers = opened
            .layer_descriptors()
            .into_iter()
            .map(|d| (d, None))
            .collect();
    } else {
        for (i, d) in opened.layer_descriptors().into_iter().enumerate() {
            let (entries, captured) = list_layer(opened, i)?;
            layers_read += 1;
            if let Some(bytes) = captured {
                annotations = Some((i, parse(&bytes)?));
            }
            layers.push((d, Some(entries)));
        }
    }
    Ok(Inspection {
        layers,
        annotations,
        layers_read,
    })
}

/// Reads the `annotations:` mapping of an `annotations.yaml` (scalar values as written; lists and
/// mappings as `<non-scalar>`), for display and label comparison. Full validation is the bundle
/// loader's job.
pub fn parse_annotations(text: &str) -> Result<BTreeMap<String, String>, String> {
    let _reading = crate::guard::reading(std::path::Path::new("metadata/annotations.yaml"));
    let docs = crate::yaml::parse_stream(text).map_err(|e| format!("invalid YAML: {e}"))?;
    let mut out = BTreeMap::new();
    let Some(map) = docs
        .first()
        .and_then(|d| d.root.get("annotations"))
        .and_then(|a| a.as_map())
    else {
        return Ok(out);
    };
    for (key, value) in map {
        let text = match &value.value {
            crate::yaml::Value::Scalar(t, _) => t.to_string(),
            _ => "<non-scalar>".to_string(),
        };
        out.insert(key.text.to_string(), text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_are_read() {
        let y = "# c\nannotations:\n  operators.operatorframework.io.bundle.package.v1: etcd\n  operators.operatorframework.io.bundle.channels.v1: 'alpha,stable'\n  nested: {a: 1}\n  after: x\nother: {annotations: no}\n";
        let a = parse_annotations(y).unwrap();
        assert_eq!(
            a.get(crate::bundle::keys::PACKAGE).map(String::as_str),
            Some("etcd")
        );
        assert_eq!(
            a.get(crate::bundle::keys::CHANNELS).map(String::as_str),
            Some("alpha,stable")
        );
        assert_eq!(a.get("nested").map(String::as_str), Some("<non-scalar>"));
        assert_eq!(a.get("after").map(String::as_str), Some("x"));
        assert_eq!(a.len(), 4);
        assert!(parse_annotations("a: [").is_err());
    }

    #[test]
    fn labels_compare_key_by_key() {
        let p = |k: &str| format!("{BUNDLE_KEY_PREFIX}{k}");
        let labels: BTreeMap<String, String> = [
            (p("package.v1"), "a".to_string()),
            (p("channels.v1"), "s".into()),
            (p("only.label"), "x".into()),
            ("other".into(), "1".into()),
        ]
        .into();
        let ann: BTreeMap<String, String> = [
            (p("package.v1"), "b".to_string()),
            (p("channels.v1"), "s".into()),
            (p("only.ann"), "y".into()),
        ]
        .into();
        let m = compare_labels(&labels, &ann);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].key, p("only.ann"));
        assert_eq!(
            (m[0].label.as_deref(), m[0].annotation.as_deref()),
            (None, Some("y"))
        );
        assert_eq!(
            (m[2].label.as_deref(), m[2].annotation.as_deref()),
            (Some("a"), Some("b"))
        );
        assert!(m[2].to_string().contains("\"a\"") && m[2].to_string().contains("\"b\""));
    }
}
