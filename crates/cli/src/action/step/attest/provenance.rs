//! SLSA provenance v1 (<https://slsa.dev/provenance/v1>) of a `bundle build` or `catalog build`:
//! what was built, from which files (each with its SHA-256), at which git commit when the
//! folder is in a git work tree, on which base image (by digest), and by what.
//!
//! Deterministic: the same folder, flags and commit give the same bytes. No wall-clock time
//! is written; `runDetails.metadata.startedOn` and `finishedOn` are the build's declared time,
//! `SOURCE_DATE_EPOCH`, and absent without it (the image itself is stamped the same way), so a
//! rebuild attests identically and re-attesting writes nothing new.

use crate::fsio::FsError;
use std::path::{Path, PathBuf};

/// `buildDefinition.buildType` of a `bundle build`.
pub const BUNDLE_BUILD_TYPE: &str = "urn:olmpack:build-type:bundle-build:v1";
/// `buildDefinition.buildType` of a `catalog build`.
pub const CATALOG_BUILD_TYPE: &str = "urn:olmpack:build-type:catalog-build:v1";
/// `runDetails.builder.id`: olmpack run locally (a CI system that wraps it vouches for
/// itself by signing with its own key or identity).
pub const BUILDER_ID: &str = "urn:olmpack:builder:cli";

/// The most source files a provenance lists (a bundle has tens, a catalog folder thousands).
const MAX_FILES: usize = 200_000;
/// The most a source file read for its digest may hold (one catalog file can be large).
const MAX_FILE: u64 = 1 << 30;

/// One source file and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Its path relative to the source folder, `/`-separated.
    pub path: String,
    /// Lower-case hex SHA-256 of its bytes.
    pub sha256: String,
}

/// The git commit a source folder was built at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// `HEAD`'s commit id.
    pub commit: String,
    /// The `origin` remote's URL, when there is one.
    pub remote: Option<String>,
    /// Whether the folder has changes not committed (the files listed are what was built).
    pub dirty: bool,
}

/// What a provenance says.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// [`BUNDLE_BUILD_TYPE`] or [`CATALOG_BUILD_TYPE`].
    pub build_type: &'static str,
    /// The source folder as the user named it.
    pub source: String,
    /// Every file the build read, sorted by path.
    pub files: Vec<SourceFile>,
    /// The git commit, when the folder is in a git work tree.
    pub git: Option<GitSource>,
    /// The base image and the digest of each platform image built on (catalog builds).
    pub bases: Vec<(String, String)>,
    /// The build's other parameters (tags, platforms, options), as the user gave them.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// `SOURCE_DATE_EPOCH`, when set.
    pub epoch: Option<u64>,
}

/// Why the source folder could not be listed or read.
#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    /// A file or folder could not be read.
    #[error(transparent)]
    Read(#[from] FsError),
    /// The folder holds more files than a provenance lists.
    #[error("{}: more than {MAX_FILES} files; a provenance lists at most that many", .0.display())]
    TooMany(PathBuf),
    /// A file is larger than olmpack hashes for a provenance.
    #[error("{}: larger than {MAX_FILE} bytes", .0.display())]
    TooLarge(PathBuf),
}

/// The SHA-256 of each of `files` (paths relative to `root`), sorted by path.
pub fn digest_files(root: &Path, files: &[String]) -> Result<Vec<SourceFile>, ProvenanceError> {
    let mut out = Vec::with_capacity(files.len());
    for rel in files {
        let path = root.join(rel);
        let meta = std::fs::symlink_metadata(&path).map_err(crate::fsio::at("read", &path))?;
        if meta.len() > MAX_FILE {
            return Err(ProvenanceError::TooLarge(path));
        }
        let bytes = crate::fsio::read(&path)?;
        let digest = crate::image::digest::sha256_digest(&bytes);
        out.push(SourceFile {
            path: rel.replace('\\', "/"),
            sha256: digest.trim_start_matches("sha256:").to_string(),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Every regular file under `root` (symbolic links are not followed: a link out of the folder
/// is not the folder's content), relative and sorted, with its SHA-256.
pub fn folder_files(root: &Path) -> Result<Vec<SourceFile>, ProvenanceError> {
    let mut rels = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        for entry in crate::fsio::read_dir(&dir)? {
            let entry = entry.map_err(crate::fsio::at("read", &dir))?;
            let kind = entry
                .file_type()
                .map_err(crate::fsio::at("read", &entry.path()))?;
            let child = rel.join(entry.file_name());
            if kind.is_dir() {
                stack.push(child);
            } else if kind.is_file() {
                rels.push(child.to_string_lossy().into_owned());
                if rels.len() > MAX_FILES {
                    return Err(ProvenanceError::TooMany(root.to_path_buf()));
                }
            }
        }
    }
    digest_files(root, &rels)
}

/// The git commit of the work tree `dir` is in, asked of `git` itself (worktrees, packed refs
/// and submodules read as git reads them); `None` outside a work tree or without git.
pub fn git_source(dir: &Path) -> Option<GitSource> {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    if git(&["rev-parse", "--is-inside-work-tree"])? != "true" {
        return None;
    }
    let commit = git(&["rev-parse", "HEAD"])?;
    if commit.len() < 40 || !commit.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let remote = git(&["config", "--get", "remote.origin.url"]).filter(|r| !r.is_empty());
    let dirty = git(&["status", "--porcelain", "--", "."]).is_some_and(|s| !s.is_empty());
    Some(GitSource {
        commit,
        remote,
        dirty,
    })
}

/// The SLSA provenance v1 predicate.
pub fn predicate(p: &Provenance) -> serde_json::Value {
    let mut deps: Vec<serde_json::Value> = Vec::new();
    if let Some(g) = &p.git {
        let mut d = serde_json::Map::new();
        match &g.remote {
            Some(r) => d.insert("uri".into(), format!("git+{r}").into()),
            None => d.insert("name".into(), "git".into()),
        };
        d.insert("digest".into(), serde_json::json!({"gitCommit": g.commit}));
        if g.dirty {
            d.insert(
                "annotations".into(),
                serde_json::json!({"uncommittedChanges": true}),
            );
        }
        deps.push(d.into());
    }
    for (name, digest) in &p.bases {
        let (algo, hex) = digest.split_once(':').unwrap_or(("sha256", digest));
        deps.push(serde_json::json!({
            "uri": name,
            "digest": {algo: hex},
            "annotations": {"role": "base image"},
        }));
    }
    for f in &p.files {
        deps.push(serde_json::json!({"name": f.path, "digest": {"sha256": f.sha256}}));
    }
    let mut external = serde_json::Map::new();
    external.insert("source".into(), p.source.clone().into());
    for (k, v) in &p.parameters {
        external.insert(k.clone(), v.clone());
    }
    let mut metadata = serde_json::Map::new();
    if let Some(e) = p.epoch {
        let t = crate::image::config::rfc3339_utc(e);
        metadata.insert("startedOn".into(), t.clone().into());
        metadata.insert("finishedOn".into(), t.into());
    }
    serde_json::json!({
        "buildDefinition": {
            "buildType": p.build_type,
            "externalParameters": external,
            "resolvedDependencies": deps,
        },
        "runDetails": {
            "builder": {
                "id": BUILDER_ID,
                "version": {"olmpack": env!("CARGO_PKG_VERSION")},
            },
            "metadata": metadata,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_predicate_lists_files_git_and_base_without_a_clock() {
        let p = Provenance {
            build_type: CATALOG_BUILD_TYPE,
            source: "catalog".into(),
            files: vec![SourceFile {
                path: "a/b.json".into(),
                sha256: "ab".repeat(32),
            }],
            git: Some(GitSource {
                commit: "1".repeat(40),
                remote: None,
                dirty: true,
            }),
            bases: vec![(
                "quay.io/x/opm:v1".into(),
                format!("sha256:{}", "c".repeat(64)),
            )],
            ..Provenance::default()
        };
        let v = predicate(&p);
        let deps = &v["buildDefinition"]["resolvedDependencies"];
        assert_eq!(deps[0]["digest"]["gitCommit"], "1".repeat(40));
        assert_eq!(deps[1]["digest"]["sha256"], "c".repeat(64));
        assert_eq!(deps[2]["name"], "a/b.json");
        assert!(v["runDetails"]["metadata"].as_object().unwrap().is_empty());
        assert_eq!(predicate(&p), v);
    }
}
