//! Onboarding an operator to file-based catalogs without a container: from the catalogs it is
//! published in (one per OpenShift version), the basic templates and the `ci.yaml` mapping
//! that regenerate them, as operator-pipelines' `fbc-onboarding`
//! (`operatorcert/entrypoints/fbc_onboarding.py`) makes them.
//!
//! Why: the pipelines' tool runs in a podman container, asks Pyxis for the supported indexes and
//! renders each whole index image with opm. The work it does per catalog is small: keep the
//! blobs whose `name` or `package` is the package (`get_base_template_from_catalog`), cut every
//! `olm.bundle` down to `{schema, image}` (opm renders the rest from the image again), and write
//! it as `catalog-templates/v<ocp>.yaml`; then map each template to its catalog in `ci.yaml`
//! (`fbc: {enabled: true, catalog_mapping: [{template_name, catalog_names: [v<ocp>], type:
//! olm.template.basic}]}`, `updateGraph` dropped). The template is written as `opm alpha
//! convert-template basic -o yaml` writes one ([`super::template::convert`]): the same data the
//! pipelines' PyYAML dump holds, so `catalog matrix` renders it to the same catalog.

use super::load::{MetaText, file_metas};
use std::path::Path;

/// Largest catalog file read (the biggest in the public indexes are tens of MiB).
pub const MAX_CATALOG_FILE: u64 = 512 << 20;

/// Why a template or `ci.yaml` could not be made.
#[derive(Debug, thiserror::Error)]
pub enum OnboardError {
    /// A catalog could not be listed or read.
    #[error(transparent)]
    Load(#[from] super::load::LoadError),
    /// A catalog file could not be read.
    #[error("{file}: {message}")]
    File {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
    /// `ci.yaml` is not YAML the pipelines could load.
    #[error("{file}:{line}: {message}")]
    Ci {
        /// The file.
        file: String,
        /// Line.
        line: usize,
        /// Why.
        message: String,
    },
}

/// The blobs of `package` in the catalog folder `dir` (every file opm reads, `.indexignore`
/// honoured), in file and document order: the pipelines' rule, `name == package or package ==
/// package`. Files are read with a cap and never through a link out of `dir`.
pub fn package_blobs(dir: &Path, package: &str) -> Result<Vec<MetaText>, OnboardError> {
    let files = super::load::catalog_files(dir)?;
    let mut out = Vec::new();
    for rel in files {
        let bytes =
            crate::fsio::untrusted::read(dir, Path::new(&rel), MAX_CATALOG_FILE).map_err(|e| {
                OnboardError::File {
                    file: dir.join(&rel).display().to_string(),
                    message: e.to_string(),
                }
            })?;
        // A file without the package name cannot hold one of its blobs: skip parsing it.
        if memchr::memmem::find(&bytes, package.as_bytes()).is_none() {
            continue;
        }
        let metas = file_metas(&bytes).map_err(|message| OnboardError::File {
            file: dir.join(&rel).display().to_string(),
            message,
        })?;
        out.extend(
            metas
                .into_iter()
                .filter(|m| m.name == package || m.package == package),
        );
    }
    Ok(out)
}

/// The basic template of `blobs` (see [`package_blobs`]) as `opm alpha convert-template basic
/// -o yaml` writes it; `None` when there are none (the package is not in that catalog, and the
/// pipelines write no template for it).
pub fn basic_template(blobs: &[MetaText]) -> Result<Option<Vec<u8>>, String> {
    if blobs.is_empty() {
        return Ok(None);
    }
    let mut stream = String::new();
    for m in blobs {
        stream.push_str(&m.blob);
        stream.push('\n');
    }
    super::template::convert::convert(
        stream.as_bytes(),
        super::template::convert::ConvertType::Basic,
        true,
    )
    .map(Some)
}

/// One template and the catalog it is rendered into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// `v4.18.yaml`.
    pub template_name: String,
    /// `v4.18`.
    pub catalog_name: String,
}

/// `ci.yaml` switched to FBC as `update_operator_config` does: `fbc` set to `{enabled: true,
/// catalog_mapping}` (one basic template per catalog), `updateGraph` dropped, every other key
/// kept; written with sorted keys after `---` as the pipelines' `yaml.safe_dump(config,
/// explicit_start=True)` does (comments are not kept there either). `existing` is the current
/// file's text (empty when there is none).
pub fn onboarded_ci(
    file: &str,
    existing: &str,
    mappings: &[Mapping],
) -> Result<Vec<u8>, OnboardError> {
    let fail = |line: usize, message: String| OnboardError::Ci {
        file: file.to_string(),
        line,
        message,
    };
    let docs = crate::yaml::parse_stream(existing).map_err(|e| fail(e.line, e.message))?;
    // The pipelines load ci.yaml with PyYAML's `safe_load`, which refuses a stream of more than
    // one document (an empty one counts too); rewriting only the first document
    // would silently drop the others.
    let second =
        crate::yaml::second_document_line(existing).map_err(|e| fail(e.line, e.message))?;
    if let Some(line) = second {
        return Err(fail(
            line,
            "a second YAML document: the pipelines read ci.yaml as one document (PyYAML's safe_load fails on more), and onboarding would drop the others; merge them into one".into(),
        ));
    }
    let mut config = match docs.first().map(|d| d.root.to_json()) {
        None | Some(serde_json::Value::Null) => serde_json::Map::new(),
        Some(serde_json::Value::Object(m)) => m,
        Some(_) => {
            let line = docs.first().map_or(1, |d| d.root.line);
            return Err(fail(line, "expected a mapping".into()));
        }
    };
    let mapping: Vec<serde_json::Value> = mappings
        .iter()
        .map(|m| {
            serde_json::json!({
                "template_name": m.template_name,
                "catalog_names": [m.catalog_name],
                "type": "olm.template.basic",
            })
        })
        .collect();
    config.insert(
        "fbc".into(),
        serde_json::json!({"enabled": true, "catalog_mapping": mapping}),
    );
    config.remove("updateGraph");
    let json = serde_json::to_vec(&serde_json::Value::Object(config))
        .map_err(|e| fail(1, e.to_string()))?;
    let mut out = b"---\n".to_vec();
    crate::gocompat::goyaml::emit::json_text_to_yaml(&mut out, &json)
        .map_err(|e| fail(1, e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ci_yaml_of_several_documents_is_refused_as_pyyaml_refuses_it() {
        let m = [Mapping {
            template_name: "v4.18.yaml".into(),
            catalog_name: "v4.18".into(),
        }];
        // PyYAML's safe_load: these three fail ("expected a single document in the stream").
        for (text, line) in [
            ("a: 1\n---\nb: 2\n", 2),
            ("---\n---\na: 1\n", 2),
            ("a: 1\n---\n", 2),
        ] {
            let e = onboarded_ci("ci.yaml", text, &m).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("ci.yaml:{line}: a second YAML document")),
                "{text:?}: {e}"
            );
        }
        // ... and these load as one document.
        for text in ["---\na: 1\n", "# c\n---\na: 1\n...\n", ""] {
            assert!(onboarded_ci("ci.yaml", text, &m).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn ci_keeps_other_keys_and_drops_update_graph() {
        let out = onboarded_ci(
            "ci.yaml",
            "# a comment\nupdateGraph: replaces-mode\nreviewers:\n  - someone\n",
            &[Mapping {
                template_name: "v4.18.yaml".into(),
                catalog_name: "v4.18".into(),
            }],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "---\nfbc:\n  catalog_mapping:\n  - catalog_names:\n    - v4.18\n    template_name: v4.18.yaml\n    type: olm.template.basic\n  enabled: true\nreviewers:\n- someone\n"
        );
        assert!(onboarded_ci("ci.yaml", "- a list\n", &[]).is_err());
        assert!(onboarded_ci("ci.yaml", "a: [\n", &[]).is_err());
    }
}
