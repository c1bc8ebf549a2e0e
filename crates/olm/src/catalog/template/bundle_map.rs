//! `--bundle-map FILE`: published image references whose content is read from local sources.
//!
//! Why: a template must name the published images (that string lands in the catalog), but CI has
//! just built those bundles and holds them as folders or local images; pulling them back from a
//! registry is slow and needs credentials and network. A map line `IMAGE-REF<TAB>SOURCE` keeps
//! the reference and reads the content from SOURCE (a bundle folder, `oci:`, `oci-archive:` or
//! `docker-archive:`).

use super::{BundleRenderError, BundleRenderer};
use crate::catalog::model::Bundle;
use crate::location::{Location, Transport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A parsed bundle map: reference → source, in file order for messages.
#[derive(Debug, Clone, Default)]
pub struct BundleMap {
    /// The map file, for messages.
    pub file: PathBuf,
    entries: HashMap<String, Location>,
}

/// A bundle map line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct BundleMapError {
    /// The map file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl BundleMap {
    /// Parses map text. Empty lines and lines starting with `#` are ignored. A relative folder
    /// or `oci:`/archive path is taken relative to the map file's folder, so a map can be checked
    /// in next to the bundles it names. Every SOURCE is classified here, once: one that does not
    /// exist, or that is a registry reference, is refused with its line (a map is for reading
    /// locally, so a typo never becomes a registry lookup, even without `--offline`).
    pub fn parse(text: &str, file: &Path) -> Result<BundleMap, BundleMapError> {
        let base = file.parent().unwrap_or(Path::new(""));
        let mut entries = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let fail = |message: String| BundleMapError {
                file: file.display().to_string(),
                line: i + 1,
                message,
            };
            let line = raw.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let Some((reference, source)) = line.split_once('\t') else {
                return Err(fail(format!(
                    "expected IMAGE-REF<TAB>SOURCE (a bundle folder or {})",
                    Transport::GRAMMAR
                )));
            };
            let (reference, source) = (reference.trim(), source.trim());
            if reference.is_empty() || source.is_empty() {
                return Err(fail("empty image reference or source".into()));
            }
            let source = Location::parse_local(source, base).map_err(|e| fail(e.to_string()))?;
            if let Some(previous) = entries.insert(reference.to_string(), source.clone())
                && previous != source
            {
                return Err(fail(format!(
                    "{reference} is mapped twice ({previous} and {source})"
                )));
            }
        }
        Ok(BundleMap {
            file: file.to_path_buf(),
            entries,
        })
    }

    /// The local source mapped to `reference`.
    pub fn get(&self, reference: &str) -> Option<&Location> {
        self.entries.get(reference)
    }

    /// Number of mapped references.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Renders a local source (`source`) as if it were the image `image_ref`.
pub type LocalRender<'a> =
    dyn Fn(&Location, &str) -> Result<Vec<Bundle>, BundleRenderError> + Sync + 'a;

/// A renderer that reads mapped references locally and hands the others to `remote` (a registry
/// renderer), or refuses them when there is none.
pub struct MappedRenderer<'a> {
    /// The map.
    pub map: &'a BundleMap,
    /// Renders a mapped source with the published reference as its image.
    pub local: &'a LocalRender<'a>,
    /// Renders references the map does not name.
    pub remote: Option<&'a dyn BundleRenderer>,
}

impl BundleRenderer for MappedRenderer<'_> {
    fn render(&self, image_ref: &str) -> Result<Vec<Bundle>, BundleRenderError> {
        match (self.map.get(image_ref), self.remote) {
            (Some(source), _) => (self.local)(source, image_ref).map_err(|e| {
                BundleRenderError::new(format!("{image_ref} (mapped to {source}): {}", e.message))
            }),
            (None, Some(remote)) => remote
                .render(image_ref)
                .map_err(|e| BundleRenderError::new(format!("{image_ref}: {}", e.message))),
            (None, None) if image_ref.is_empty() => Err(BundleRenderError::new(
                "a bundle entry has an empty image reference",
            )),
            (None, None) if self.map.file.as_os_str().is_empty() => {
                Err(BundleRenderError::new(format!(
                    "{image_ref}: not in the bundle map (none given) and not reachable (no registry access in this run)"
                )))
            }
            (None, None) => Err(BundleRenderError::new(format!(
                "{image_ref}: not in the bundle map {} and not reachable (no registry access in this run)",
                self.map.file.display()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_resolves_relative_sources() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let m = tmp.path();
        for dir in ["bundles/1.0.0", "abs/layout"] {
            std::fs::create_dir_all(m.join(dir)).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(m.join("x.tar"), b"").unwrap_or_else(|e| panic!("{e}"));
        let text = format!(
            "# comment\n\nquay.io/a/b:1\tbundles/1.0.0\nquay.io/a/b:2\toci:{}:tag\nquay.io/a/b:3\toci-archive:x.tar\n",
            m.join("abs/layout").display()
        );
        let map = BundleMap::parse(&text, &m.join("map.tsv")).unwrap_or_default();
        let get = |r: &str| map.get(r).map(ToString::to_string);
        let at = |p: &str| m.join(p).display().to_string();
        assert_eq!(get("quay.io/a/b:1"), Some(at("bundles/1.0.0")));
        assert_eq!(
            get("quay.io/a/b:2"),
            Some(format!("oci:{}:tag", at("abs/layout")))
        );
        assert_eq!(
            get("quay.io/a/b:3"),
            Some(format!("oci-archive:{}", at("x.tar")))
        );
        let err = BundleMap::parse("a b\n", Path::new("m")).err();
        assert_eq!(err.map(|e| e.line), Some(1));
    }

    #[test]
    fn missing_and_registry_sources_are_refused_with_their_line() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = tmp.path().join("sub/map.tsv");
        let err = |text: &str| {
            BundleMap::parse(text, &file)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let e = err("# x\nquay.io/a/b:1\t../../nowhere/1.0.0\n");
        assert!(e.contains("map.tsv:2: no such file or folder: "), "{e}");
        assert!(!e.contains("registry host"), "{e}");
        let e = err("quay.io/a/b:1\tquay.io/a/b:1\n");
        assert!(
            e.contains("map.tsv:1: quay.io/a/b:1 is a registry reference"),
            "{e}"
        );
    }

    #[test]
    fn unmapped_reference_is_named() {
        let map = BundleMap::default();
        let local =
            |_: &Location, _: &str| -> Result<Vec<Bundle>, BundleRenderError> { Ok(vec![]) };
        let r = MappedRenderer {
            map: &map,
            local: &local,
            remote: None,
        };
        let err = r
            .render("quay.io/x/y:1")
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(
            err.starts_with("quay.io/x/y:1: not in the bundle map"),
            "{err}"
        );
    }
}
