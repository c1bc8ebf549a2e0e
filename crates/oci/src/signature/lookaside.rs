//! `registries.d` (containers-registries.d(5)) and the lookaside store of simple signatures.
//!
//! Each YAML file of the folder may hold `default-docker:` and `docker:` (a map from
//! `host[:port][/path…]` namespaces to settings); the most specific namespace that contains the
//! repository wins, else `default-docker`. Settings olmpack uses: `lookaside` (read, and write
//! when there is no staging one), `lookaside-staging` (write), the older names `sigstore` and
//! `sigstore-staging`, and `use-sigstore-attachments`. With no setting at all, containers/image
//! uses `file:///var/lib/containers/sigstore` for root and
//! `file://$HOME/.local/share/containers/sigstore` otherwise; so does olmpack.
//!
//! Signatures of `host/repo@sha256:<hex>` live at `<base>/repo@sha256=<hex>/signature-N`,
//! N from 1, read until the first one that is missing.

use super::SignatureError;
use std::path::{Path, PathBuf};

/// Settings for one repository, after namespace resolution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Where signatures are read from.
    pub lookaside: Option<String>,
    /// Where signatures are written to (falls back to `lookaside`).
    pub lookaside_staging: Option<String>,
    /// Whether sigstore signatures are attached to images (cosign's `.sig` tags).
    pub use_sigstore_attachments: bool,
}

/// The parsed `registries.d` folder.
#[derive(Debug, Clone, Default)]
pub struct RegistriesD {
    default: Settings,
    namespaces: Vec<(String, Settings)>,
    /// Whether any file configured anything (else the built-in default store applies).
    configured: bool,
}

fn settings_of(v: &serde_json::Value) -> Settings {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    Settings {
        lookaside: s("lookaside").or_else(|| s("sigstore")),
        lookaside_staging: s("lookaside-staging").or_else(|| s("sigstore-staging")),
        use_sigstore_attachments: v
            .get("use-sigstore-attachments")
            .and_then(|x| x.as_bool())
            .unwrap_or(false),
    }
}

impl RegistriesD {
    /// The folder to read: `--registries-d DIR`, else `$HOME/.config/containers/registries.d`
    /// when it exists, else `/etc/containers/registries.d` (containers/image's order).
    pub fn default_dir(given: Option<&Path>) -> PathBuf {
        if let Some(d) = given {
            return d.to_path_buf();
        }
        if let Some(home) = std::env::var_os("HOME") {
            let user = Path::new(&home).join(".config/containers/registries.d");
            if user.is_dir() {
                return user;
            }
        }
        PathBuf::from("/etc/containers/registries.d")
    }

    /// Reads every `*.yaml`/`*.yml` file of `dir` (a missing folder configures nothing).
    pub fn load(dir: &Path) -> Result<Self, SignatureError> {
        let mut out = RegistriesD::default();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(source) => return Err(crate::fsio::at("read", dir)(source).into()),
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        files.sort();
        for file in files {
            let text = crate::fsio::read_to_string(&file)?;
            let docs = crate::yaml::parse_stream(&text).map_err(|e| SignatureError::Config {
                path: file.display().to_string(),
                reason: e.to_string(),
            })?;
            for doc in docs {
                let v = doc.root.to_json();
                if let Some(d) = v.get("default-docker") {
                    out.default = settings_of(d);
                    out.configured = true;
                }
                if let Some(map) = v.get("docker").and_then(|d| d.as_object()) {
                    for (ns, s) in map {
                        out.namespaces.push((ns.clone(), settings_of(s)));
                        out.configured = true;
                    }
                }
            }
        }
        Ok(out)
    }

    /// The settings for `registry/repository` (most specific namespace first, field by field
    /// as containers/image merges them: a namespace's unset field does not fall back).
    pub fn settings_for(&self, name: &str) -> Settings {
        let mut best: Option<&(String, Settings)> = None;
        for entry in &self.namespaces {
            let ns = entry.0.as_str();
            let matches = name == ns
                || (name.starts_with(ns) && name.as_bytes().get(ns.len()) == Some(&b'/'));
            if matches && best.is_none_or(|b| b.0.len() < ns.len()) {
                best = Some(entry);
            }
        }
        let mut s = best
            .map(|b| b.1.clone())
            .unwrap_or_else(|| self.default.clone());
        if !self.configured && s.lookaside.is_none() {
            s.lookaside = Some(builtin_default());
        }
        s
    }
}

fn builtin_default() -> String {
    // SAFETY-free check of the effective uid through /proc: root uses the system store.
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false);
    match (root, std::env::var_os("HOME")) {
        (false, Some(home)) => format!(
            "file://{}/.local/share/containers/sigstore",
            Path::new(&home).display()
        ),
        _ => "file:///var/lib/containers/sigstore".into(),
    }
}

/// The URL of signature number `n` (1-based) of `repository_path@digest` under `base`.
pub fn signature_url(base: &str, repository_path: &str, digest: &str, n: usize) -> String {
    let (algo, hex) = digest.split_once(':').unwrap_or(("sha256", digest));
    format!(
        "{}/{repository_path}@{algo}={hex}/signature-{n}",
        base.trim_end_matches('/')
    )
}

fn file_path(url: &str) -> Option<PathBuf> {
    url.strip_prefix("file://").map(PathBuf::from)
}

/// The most signatures read for one image, as containers/image (`maxLookasideSignatures`):
/// a store that offers more is treated as broken, not read on and on.
pub const MAX_SIGNATURES: usize = 128;
/// The largest signature read (containers/image's `MaxSignatureBodySize`); a larger one is an
/// error, not a truncated signature.
pub const MAX_SIGNATURE_BYTES: u64 = 4 << 20;

/// Reads `r` up to [`MAX_SIGNATURE_BYTES`]; more is an error.
fn read_capped(r: impl std::io::Read) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut buf = Vec::new();
    r.take(MAX_SIGNATURE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > MAX_SIGNATURE_BYTES {
        return Err(format!(
            "the signature is larger than {} MiB, the most a signature may be",
            MAX_SIGNATURE_BYTES >> 20
        ));
    }
    Ok(buf)
}

/// Reads the signatures of `repository_path@digest` from the store at `base` (`file://`,
/// `http://`, `https://`) one at a time: signature-1, -2, … until the first missing one, each
/// handed to `each` (URL, its user-info and query left out; bytes) before the next is read,
/// so at most one is held. `each` returns `false` to stop early. More than [`MAX_SIGNATURES`]
/// is an error.
pub fn for_each(
    base: &str,
    repository_path: &str,
    digest: &str,
    mut each: impl FnMut(String, Vec<u8>) -> bool,
) -> Result<(), SignatureError> {
    let http = if crate::registry::tls::is_http_url(base) {
        Some(
            crate::registry::tls::client_with_tls(None, false)
                .map_err(|e| SignatureError::Lookaside {
                    url: crate::registry::errors::redact_url(base),
                    reason: e.to_string(),
                })?
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .map_err(|e| SignatureError::Lookaside {
                    url: crate::registry::errors::redact_url(base),
                    reason: e.to_string(),
                })?,
        )
    } else if base.starts_with("file://") {
        None
    } else {
        return Err(SignatureError::Lookaside {
            url: crate::registry::errors::redact_url(base),
            reason: "only file://, http:// and https:// lookaside stores are supported".into(),
        });
    };
    for n in 1.. {
        let url = signature_url(base, repository_path, digest, n);
        // A store's URL from registries.d may carry user-info or a query: never printed.
        let shown = crate::registry::errors::redact_url(&url);
        let err = |reason: String| SignatureError::Lookaside {
            url: shown.clone(),
            reason,
        };
        if n > MAX_SIGNATURES {
            return Err(err(format!(
                "the store offers more than {MAX_SIGNATURES} signatures for one image; assuming a broken or hostile store (containers/image stops there too)"
            )));
        }
        let bytes = match (&http, file_path(&url)) {
            (None, Some(path)) => match std::fs::File::open(&path) {
                Ok(f) => read_capped(f).map_err(err)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(err(e.to_string())),
            },
            (Some(client), _) => {
                // Said in words, as the registry client says it ("connection refused by
                // HOST:PORT"), not as reqwest's "error sending request for url".
                let resp = client
                    .get(&url)
                    .send()
                    .map_err(|e| err(crate::registry::errors::describe_transport(&shown, &e)))?;
                match resp.status().as_u16() {
                    200 => read_capped(resp).map_err(err)?,
                    404 => break,
                    s => return Err(err(format!("HTTP {s}"))),
                }
            }
            _ => break,
        };
        if !each(shown, bytes) {
            break;
        }
    }
    Ok(())
}

/// Writes `signature` as the next free `signature-N` of `repository_path@digest` in the
/// `file://` store `base` (containers/image writes only to files too); an identical
/// signature already there is not written twice. Returns the URL.
pub fn write_next(
    base: &str,
    repository_path: &str,
    digest: &str,
    signature: &[u8],
) -> Result<String, SignatureError> {
    if !base.starts_with("file://") {
        return Err(SignatureError::Lookaside {
            url: crate::registry::errors::redact_url(base),
            reason: "olmpack writes signatures to file:// stores only (as skopeo does); publish the folder with a web server".into(),
        });
    }
    for n in 1..=MAX_SIGNATURES {
        let url = signature_url(base, repository_path, digest, n);
        let Some(path) = file_path(&url) else {
            break;
        };
        match std::fs::read(&path) {
            Ok(existing) if existing == signature => return Ok(url),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::fsio::write(&path, signature, crate::fsio::Options::edit(0o644)).map_err(
                    |e| SignatureError::Lookaside {
                        url: url.clone(),
                        reason: e.to_string(),
                    },
                )?;
                return Ok(url);
            }
            Err(e) => {
                return Err(SignatureError::Lookaside {
                    url,
                    reason: e.to_string(),
                });
            }
        }
    }
    Err(SignatureError::Lookaside {
        url: crate::registry::errors::redact_url(base),
        reason: format!(
            "{MAX_SIGNATURES} signatures already stored for this image, the most containers/image reads"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_layout_is_containers_image_layout() {
        assert_eq!(
            signature_url("file:///s/", "ns/repo", "sha256:abc", 2),
            "file:///s/ns/repo@sha256=abc/signature-2"
        );
    }

    #[test]
    fn most_specific_namespace_wins() {
        let d = RegistriesD {
            default: Settings {
                lookaside: Some("file:///d".into()),
                ..Settings::default()
            },
            namespaces: vec![
                (
                    "reg:5000".into(),
                    Settings {
                        lookaside: Some("file:///r".into()),
                        ..Settings::default()
                    },
                ),
                (
                    "reg:5000/ns".into(),
                    Settings {
                        lookaside: Some("file:///n".into()),
                        ..Settings::default()
                    },
                ),
            ],
            configured: true,
        };
        assert_eq!(
            d.settings_for("reg:5000/ns/x").lookaside.as_deref(),
            Some("file:///n")
        );
        assert_eq!(
            d.settings_for("reg:5000/nsx/y").lookaside.as_deref(),
            Some("file:///r")
        );
        assert_eq!(
            d.settings_for("other/y").lookaside.as_deref(),
            Some("file:///d")
        );
    }
}
