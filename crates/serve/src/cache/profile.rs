//! Which serve cache fits a base: the opm version a base runs decides both the cache's format
//! and what its stored bundles hold, since opm serves a cache as it is written.
//!
//! Why: catalog images for several OpenShift versions sit on bases with different opm versions.
//! opm v1.26.3 reads the JSON cache, v1.41 and later write pogreb (and still read JSON), v1.69
//! and later also keep every blob of a non-core schema (`metas/<schema>/<package>/…`, opm #1981,
//! #1994) and refuse a catalog whose custom blob has a schema or package outside
//! `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`. What a stored `api.Bundle` holds changed too: before v1.28
//! (#1094) `olm.csv.metadata` stayed among the properties and no CSV was synthesized from it;
//! before v1.32 (#1161) deprecations were not read. An opm serves the bundles as the cache
//! holds them, so a cache written with current semantics makes opm v1.26 answer like current
//! opm (SERVE.md: 820 of 1,186 calls differ), and one written for v1.26 makes a current opm
//! answer like v1.26. The version is read from the base's opm binary (Go build information:
//! the `-X …/cmd/opm/version.opmVersion=` link flag, or the operator-registry module version)
//! or given with `--opm-version`.

use super::format::CacheFormat;
pub use super::format::Semantics;
use std::fmt;

/// An opm release (`v1.26.5`): enough to choose a cache for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpmVersion {
    /// Always 1 so far.
    pub major: u32,
    /// The number the cache changes follow.
    pub minor: u32,
    /// Patch release.
    pub patch: u32,
}

impl fmt::Display for OpmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Why an `--opm-version` value is not a version.
#[derive(Debug, thiserror::Error)]
#[error(
    "opm version {0:?} is not MAJOR.MINOR[.PATCH] (e.g. v1.26.5 or 1.73): give the version `opm version` prints"
)]
pub struct OpmVersionError(pub String);

impl std::str::FromStr for OpmVersion {
    type Err = OpmVersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || OpmVersionError(s.to_string());
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        // A pre-release or build suffix (v1.26.5-rc1, v1.47.0+git) names the same cache format.
        let core = t.split(['-', '+']).next().unwrap_or("");
        let mut parts = core.split('.');
        let num = |p: Option<&str>| -> Result<Option<u32>, OpmVersionError> {
            match p {
                None => Ok(None),
                Some(x)
                    if !x.is_empty() && x.len() <= 6 && x.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    x.parse().map(Some).map_err(|_| bad())
                }
                Some(_) => Err(bad()),
            }
        };
        let major = num(parts.next())?.ok_or_else(bad)?;
        let minor = num(parts.next())?.ok_or_else(bad)?;
        let patch = num(parts.next())?.unwrap_or(0);
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(OpmVersion {
            major,
            minor,
            patch,
        })
    }
}

impl OpmVersion {
    const fn at_least(self, minor: u32) -> bool {
        self.major > 1 || (self.major == 1 && self.minor >= minor)
    }
}

/// The cache written for a base: its format and what it holds, and for which opm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheProfile {
    /// JSON or pogreb.
    pub format: CacheFormat,
    /// What the stored bundles hold.
    pub semantics: Semantics,
    /// The opm it was chosen for (`None`: unknown, current opm's content).
    pub opm: Option<OpmVersion>,
}

impl Default for CacheProfile {
    fn default() -> Self {
        CacheProfile {
            format: CacheFormat::Json,
            semantics: Semantics::CURRENT,
            opm: None,
        }
    }
}

/// The oldest opm that reads a JSON cache (v1.26.3, #1051).
pub const JSON_SINCE: OpmVersion = OpmVersion {
    major: 1,
    minor: 26,
    patch: 3,
};

/// Why no cache fits the base.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// An opm too old for any serve cache.
    #[error(
        "opm {0} reads no serve cache (--cache-dir needs v1.26.3 or later): build with --no-cache"
    )]
    TooOld(OpmVersion),
    /// A format that opm cannot read.
    #[error(
        "opm {0} cannot read a pogreb cache (pogreb.v1 since v1.41.0): use --cache-format json"
    )]
    PogrebTooNew(OpmVersion),
}

impl CacheProfile {
    /// The cache opm `v` writes itself: JSON before v1.41, pogreb since, each with the
    /// semantics of `v`. `forced` is a `--cache-format` the user chose (JSON is read by every
    /// version; pogreb only from v1.41).
    pub fn for_opm(v: OpmVersion, forced: Option<CacheFormat>) -> Result<Self, ProfileError> {
        if v < JSON_SINCE {
            return Err(ProfileError::TooOld(v));
        }
        let native = if v.at_least(41) {
            CacheFormat::Pogreb
        } else {
            CacheFormat::Json
        };
        let format = match forced {
            Some(CacheFormat::Pogreb) if !v.at_least(41) => {
                return Err(ProfileError::PogrebTooNew(v));
            }
            Some(f) => f,
            None => native,
        };
        Ok(CacheProfile {
            format,
            semantics: Semantics {
                csv_from_metadata: v.at_least(28),
                deprecations: v.at_least(32),
                metas: v.at_least(69),
            },
            opm: Some(v),
        })
    }

    /// No version known: `format` (JSON by default) with current opm's content.
    pub fn unknown(forced: Option<CacheFormat>) -> Self {
        CacheProfile {
            format: forced.unwrap_or_default(),
            ..CacheProfile::default()
        }
    }

    /// One sentence for the build output: what the cache holds and which opm serves it so.
    pub fn describe(&self) -> String {
        let format = match self.format {
            CacheFormat::Json => "JSON (cache/, digest)",
            CacheFormat::Pogreb => "pogreb.v1",
        };
        let Some(v) = self.opm else {
            return format!(
                "{format} with current opm's content (CSV synthesized from olm.csv.metadata, deprecations, metas/ of other schemas): an opm older than v1.28 serves these newer answers as they are; give --opm-version to write what the base's opm writes"
            );
        };
        let s = self.semantics;
        let mut what = Vec::new();
        what.push(if s.csv_from_metadata {
            "CSV synthesized from olm.csv.metadata"
        } else {
            "olm.csv.metadata kept as a property, no CSV synthesized (opm before v1.28)"
        });
        what.push(if s.deprecations {
            "deprecations"
        } else {
            "no deprecations (opm before v1.32)"
        });
        what.push(if s.metas {
            "metas/ of other schemas"
        } else {
            "no metas/ (opm before v1.69)"
        });
        format!("{format} as opm {v} writes it: {}", what.join(", "))
    }
}

/// Where the opm version of a base was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundVersion {
    /// The version.
    pub version: OpmVersion,
    /// Where it came from (file and what in it).
    pub from: String,
}

/// Largest opm binary read for its version (opm is ~50-100 MiB).
pub const MAX_OPM_BINARY: u64 = 512 << 20;

/// The opm version recorded in a Go binary: the `-X …/cmd/opm/version.opmVersion=vX` link flag
/// Go keeps in the build information (what opm's Makefile and goreleaser set), else the
/// operator-registry module version when the binary was built as a module (`go install
/// …/cmd/opm@vX`). `None` when neither is there (a stripped or renamed build): then
/// `--opm-version` says it.
pub fn opm_version_in_binary(bytes: &[u8]) -> Option<(OpmVersion, &'static str)> {
    const FLAG: &[u8] = b"cmd/opm/version.opmVersion=";
    if let Some(at) = find(bytes, FLAG) {
        let rest = &bytes[at + FLAG.len()..];
        let rest = rest.strip_prefix(b"'").unwrap_or(rest);
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')))
            .unwrap_or(rest.len());
        if let Some(v) = std::str::from_utf8(&rest[..end])
            .ok()
            .and_then(|s| s.parse().ok())
        {
            return Some((
                v,
                "its build information's link flag cmd/opm/version.opmVersion",
            ));
        }
    }
    const MODULE: &[u8] = b"\tgithub.com/operator-framework/operator-registry\tv";
    let mut from = 0usize;
    while let Some(at) = find(&bytes[from..], MODULE) {
        let start = from + at + MODULE.len() - 1;
        let rest = &bytes[start..];
        let end = rest
            .iter()
            .position(|b| *b == b'\t' || *b == b'\n')
            .unwrap_or(rest.len());
        // `mod` (the main module) or `dep`; "(devel)" is not a version and parses as none.
        if let Some(v) = std::str::from_utf8(&rest[..end])
            .ok()
            .and_then(|s| s.parse().ok())
        {
            return Some((
                v,
                "its build information's operator-registry module version",
            ));
        }
        from = start;
    }
    None
}

/// The paths (inside the image, no leading `/`) where a base keeps its opm: the entrypoint's
/// program when it is called `opm`, then `bin/opm` (opm's own images) and `usr/bin/opm`
/// (OpenShift's operator-registry images).
fn opm_paths(base: &crate::transport::OpenedImage) -> Vec<String> {
    let mut out = Vec::new();
    let config = base.config_json();
    if let Some(p) = config
        .pointer("/config/Entrypoint/0")
        .and_then(serde_json::Value::as_str)
        .filter(|p| p.rsplit('/').next() == Some("opm"))
    {
        out.push(p.trim_start_matches('/').to_string());
    }
    for p in ["bin/opm", "usr/bin/opm"] {
        if !out.iter().any(|o| o == p) {
            out.push(p.to_string());
        }
    }
    out
}

/// The version of the opm a base image runs, read from its opm binary (top layer first; only
/// the layers above the one holding it are read, each file capped at [`MAX_OPM_BINARY`]).
/// A candidate path counts as it is in the image's final file system: a layer above the one
/// holding it can delete it (a `.wh.` whiteout of the file or of a folder above it, an opaque
/// folder) or replace it, and then the next candidate is read (an opm deleted by a derived image
/// is not the one it runs).
/// `Ok(None)`: no opm found, or one whose version is not recorded.
pub fn base_opm_version(
    base: &crate::transport::OpenedImage,
) -> Result<Option<FoundVersion>, crate::transport::TransportError> {
    let paths = opm_paths(base);
    // What the top-most layer that says anything about each candidate says: its bytes, or
    // `None` when it is deleted or is not a regular file there.
    let mut decided: Vec<Option<Option<Vec<u8>>>> = vec![None; paths.len()];
    for i in (0..base.layer_descriptors().len()).rev() {
        let (entries, mut captured) =
            base.list_layer(i, &|p| paths.iter().any(|q| q == p), MAX_OPM_BINARY)?;
        for (path, state) in paths.iter().zip(decided.iter_mut()) {
            if state.is_none() {
                *state = layer_says(path, &entries, &mut captured);
            }
        }
        // The first candidate still in the image decides, once every one before it is known.
        for (path, state) in paths.iter().zip(&decided) {
            match state {
                None => break,
                Some(None) => continue,
                Some(Some(bytes)) => {
                    return Ok(
                        opm_version_in_binary(bytes).map(|(version, how)| FoundVersion {
                            version,
                            from: format!("/{path} ({how})"),
                        }),
                    );
                }
            }
        }
        if decided.iter().all(|s| matches!(s, Some(None))) {
            return Ok(None);
        }
    }
    Ok(None)
}

/// What one layer (`entries`, with the candidates' bytes in `captured`) says of `path`:
/// `Some(Some(bytes))` it holds the file, `Some(None)` it deletes or hides it (a whiteout of it
/// or of a folder above it, an opaque folder above it, or something other than a regular file
/// at it or at a folder above it), `None` nothing (look in the layer below).
fn layer_says(
    path: &str,
    entries: &[crate::transport::unpack::EntryInfo],
    captured: &mut std::collections::BTreeMap<String, Vec<u8>>,
) -> Option<Option<Vec<u8>>> {
    if let Some(bytes) = captured.remove(path) {
        return Some(Some(bytes));
    }
    let mut hidden = false;
    for e in entries {
        let p = e.path.trim_end_matches('/');
        if p == path {
            // A link, folder or device where opm was: not a program olmpack reads.
            return Some(None);
        }
        let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
        let under = |d: &str| d.is_empty() || path.starts_with(&format!("{d}/"));
        if let Some(gone) = name.strip_prefix(".wh.") {
            let gone_path = if dir.is_empty() {
                gone.to_string()
            } else {
                format!("{dir}/{gone}")
            };
            hidden |= (gone == ".wh..opq" && under(dir))
                || gone_path == path
                || path.starts_with(&format!("{gone_path}/"));
        } else if e.kind != "dir" && path.starts_with(&format!("{p}/")) {
            // A file or link replaces a folder above the candidate.
            hidden = true;
        }
    }
    hidden.then_some(None)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> OpmVersion {
        s.parse().unwrap()
    }

    #[test]
    fn versions_parse_as_opm_prints_them() {
        assert_eq!(v("v1.26.5").to_string(), "v1.26.5");
        assert_eq!(v("1.73").to_string(), "v1.73.0");
        assert_eq!(v("v1.47.0-rc1").to_string(), "v1.47.0");
        for bad in ["", "v", "1", "v1.x", "1.2.3.4", "(devel)", "v1..2"] {
            assert!(bad.parse::<OpmVersion>().is_err(), "{bad}");
        }
    }

    #[test]
    fn each_base_gets_the_cache_its_opm_writes() {
        let p = CacheProfile::for_opm(v("v1.26.5"), None).unwrap();
        assert_eq!(p.format, CacheFormat::Json);
        assert!(!p.semantics.csv_from_metadata && !p.semantics.deprecations && !p.semantics.metas);
        let p = CacheProfile::for_opm(v("v1.41.0"), None).unwrap();
        assert_eq!(p.format, CacheFormat::Pogreb);
        assert!(p.semantics.csv_from_metadata && p.semantics.deprecations && !p.semantics.metas);
        let p = CacheProfile::for_opm(v("v1.69.0"), None).unwrap();
        assert_eq!(p.semantics, Semantics::CURRENT);
        assert!(CacheProfile::for_opm(v("v1.26.2"), None).is_err());
        assert!(CacheProfile::for_opm(v("v1.40.9"), Some(CacheFormat::Pogreb)).is_err());
        let p = CacheProfile::for_opm(v("v1.73.0"), Some(CacheFormat::Json)).unwrap();
        assert_eq!(p.format, CacheFormat::Json);
    }

    #[test]
    fn the_version_is_read_from_go_build_information() {
        let ld = b"\x00build\t-ldflags=\"-X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=v1.26.5 -X x=y\"\n";
        assert_eq!(opm_version_in_binary(ld).unwrap().0, v("v1.26.5"));
        let quoted = b"-X 'github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=v1.73.0'";
        assert_eq!(opm_version_in_binary(quoted).unwrap().0, v("v1.73.0"));
        let module = b"path\tgithub.com/operator-framework/operator-registry/cmd/opm\nmod\tgithub.com/operator-framework/operator-registry\t(devel)\t\ndep\tgithub.com/operator-framework/operator-registry\tv1.47.0\th1:x\n";
        assert_eq!(opm_version_in_binary(module).unwrap().0, v("v1.47.0"));
        assert!(opm_version_in_binary(b"no version here").is_none());
        assert!(opm_version_in_binary(b"cmd/opm/version.opmVersion=").is_none());
    }
}
