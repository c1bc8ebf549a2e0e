//! `catalog generate-dockerfile`: the Dockerfile `opm generate dockerfile` writes next to a
//! catalog folder, for builds that still use docker or buildah.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The default base and builder of `opm generate dockerfile`.
pub use super::step::build::DEFAULT_OPM_IMAGE;

/// Why `generate-dockerfile` refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DockerfileError {
    /// The catalog root is not a folder.
    #[error("{} is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The Dockerfile exists (opm's message: `path %q: file already exists`).
    #[error("path {:?}: file already exists", path.display().to_string())]
    Exists {
        /// The Dockerfile.
        path: PathBuf,
    },
    /// `scratch` cannot run opm to build the cache.
    #[error("invalid builder image: \"scratch\"")]
    ScratchBuilder,
    /// A label without `=`.
    #[error("invalid label {0:?}")]
    Label(String),
    /// An empty base image.
    #[error("base image is unset")]
    NoBase,
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
}

/// Parses `-l k=v` values as opm does: split at the first `=`, the last value of a key wins.
pub fn parse_dockerfile_labels(
    values: &[String],
) -> Result<BTreeMap<String, String>, DockerfileError> {
    let mut out = BTreeMap::new();
    for v in values {
        let (k, val) = v
            .split_once('=')
            .ok_or_else(|| DockerfileError::Label(v.clone()))?;
        out.insert(k.to_string(), val.to_string());
    }
    Ok(out)
}

/// The text of `opm generate dockerfile` (opm ≥ v1.44.0 template, CATALOG.md F.1) for the
/// catalog folder named `index_dir`.
pub fn dockerfile_text(
    index_dir: &str,
    base: &str,
    builder: &str,
    labels: &BTreeMap<String, String>,
) -> String {
    let mut s = String::new();
    s.push_str("# The builder image is expected to contain\n# /bin/opm (with serve subcommand)\n");
    s.push_str(&format!("FROM {builder} as builder\n\n"));
    s.push_str("# Copy FBC root into image at /configs and pre-populate serve cache\n");
    s.push_str(&format!("ADD {index_dir} /configs\n"));
    s.push_str(
        "RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\n",
    );
    s.push_str(&format!("FROM {base}\n"));
    if base == "scratch" {
        s.push_str(concat!(
            "# OLMv0 CatalogSources that use binary-less images must set:\n",
            "# spec:\n",
            "#   grpcPodConfig:\n",
            "#     extractContent:\n",
            "#       catalogDir: /configs\n",
            "#       cacheDir: /tmp/cache\n",
        ));
    } else {
        s.push_str(concat!(
            "# The base image is expected to contain\n",
            "# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n",
            "\n",
            "# Configure the entrypoint and command\n",
            "ENTRYPOINT [\"/bin/opm\"]\n",
            "CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n",
        ));
    }
    s.push_str(concat!(
        "\n",
        "COPY --from=builder /configs /configs\n",
        "COPY --from=builder /tmp/cache /tmp/cache\n",
        "\n",
        "# Set FBC-specific label for the location of the FBC root directory\n",
        "# in the image\n",
        "LABEL operators.operatorframework.io.index.configs.v1=/configs\n",
    ));
    if !labels.is_empty() {
        s.push_str("\n# Set other custom labels\n");
        for (k, v) in labels {
            s.push_str(&format!("LABEL \"{k}\"=\"{v}\"\n"));
        }
    }
    s
}

/// Writes `<parent>/<name>.Dockerfile` next to the catalog folder `dir`, as
/// `opm generate dockerfile` does; refuses to overwrite. Returns the path written.
pub fn generate_dockerfile(
    dir: &Path,
    base: &str,
    builder: &str,
    labels: &BTreeMap<String, String>,
) -> Result<PathBuf, DockerfileError> {
    if base.is_empty() {
        return Err(DockerfileError::NoBase);
    }
    if builder == "scratch" {
        return Err(DockerfileError::ScratchBuilder);
    }
    if !dir.is_dir() {
        return Err(DockerfileError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    // Go's filepath.Clean, then Base / Dir, all lexical as in opm: "catalog/" and
    // "./catalog" both name "catalog", and a symlink keeps its own name. Only a cleaned name
    // of "." or ".." (for which opm writes "..Dockerfile" / "...Dockerfile" with `ADD .`) is
    // replaced by the real folder's name and parent.
    let cleaned = clean_path(dir);
    let (name, parent) = match cleaned.file_name() {
        Some(name) => {
            let parent = match cleaned.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            (name.to_string_lossy().to_string(), parent)
        }
        None => {
            let real =
                std::fs::canonicalize(&cleaned).map_err(crate::fsio::at("resolve", &cleaned))?;
            let name = real
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| ".".to_string());
            let parent = real
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("/"));
            (name, parent)
        }
    };
    let path = parent.join(format!("{name}.Dockerfile"));
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(DockerfileError::Exists { path });
    }
    let text = dockerfile_text(&name, base, builder, labels);
    let io = |source| DockerfileError::from(crate::fsio::at("write", &path)(source));
    let mut tmp = tempfile::Builder::new()
        .prefix(".olmpack-dockerfile-")
        .tempfile_in(&parent)
        .map_err(|e| io(crate::fsio::temp_error(e)))?;
    let _interrupt = crate::interrupt::register(tmp.path());
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644)).map_err(io)?;
    }
    tmp.persist_noclobber(&path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            DockerfileError::Exists { path: path.clone() }
        } else {
            io(e.error)
        }
    })?;
    Ok(path)
}

/// Go's `filepath.Clean` on a Unix path, without touching the file system: `.` elements go,
/// `x/..` pairs cancel, `..` at the root goes, and an empty result is `.`. opm names the
/// Dockerfile from this, so a symlinked folder keeps its link name.
fn clean_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut rooted = false;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => rooted = true,
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(last) if *last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push("..".as_ref()),
            },
            Component::Normal(n) => parts.push(n),
        }
    }
    let mut out = PathBuf::from(if rooted { "/" } else { "" });
    out.extend(parts);
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_path_is_go_filepath_clean() {
        for (input, want) in [
            ("catalog", "catalog"),
            ("catalog/", "catalog"),
            ("./catalog", "catalog"),
            ("a/./b/../c", "a/c"),
            ("a/..", "."),
            ("", "."),
            (".", "."),
            ("..", ".."),
            ("../../a", "../../a"),
            ("a/../../b", "../b"),
            ("/../a", "/a"),
            ("/", "/"),
            ("//a//b/", "/a/b"),
        ] {
            assert_eq!(
                clean_path(Path::new(input)),
                PathBuf::from(want),
                "{input:?}"
            );
        }
    }

    #[test]
    fn dockerfile_matches_opm_text() {
        let text = dockerfile_text(
            "catalog",
            DEFAULT_OPM_IMAGE,
            DEFAULT_OPM_IMAGE,
            &BTreeMap::new(),
        );
        let expected = "# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM quay.io/operator-framework/opm:latest as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD catalog /configs
RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]

FROM quay.io/operator-framework/opm:latest
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT [\"/bin/opm\"]
CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
";
        assert_eq!(text, expected);
        let labels =
            parse_dockerfile_labels(&["key2=value2".into(), "key1=x".into(), "key1=value1".into()])
                .unwrap();
        let scratch = dockerfile_text("bar", "scratch", "foo", &labels);
        let expected = "# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM foo as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD bar /configs
RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL \"key1\"=\"value1\"
LABEL \"key2\"=\"value2\"
";
        assert_eq!(scratch, expected);
        assert!(parse_dockerfile_labels(&["novalue".into()]).is_err());
    }
}
