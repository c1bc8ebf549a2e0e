//! `catalog serve`: a catalog folder or catalog image ([`super::source::open_catalog`]) loaded
//! and checked before anything listens, then served as `opm serve` does (gRPC registry API,
//! health, reflection) and, when asked, as catalogd serves it to OLM v1 clients.

use super::source::{CatalogSource, CatalogSourceError};
use crate::location::Location;
use crate::serve::http::HttpCatalog;
use crate::serve::index::ServeIndex;
use crate::serve::server::{Bound, Listen};
use crate::transport::RegistryOptions;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Why the catalog cannot be served (exit 2); the message names the source.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServeError(pub String);

impl From<CatalogSourceError> for ServeError {
    fn from(e: CatalogSourceError) -> Self {
        ServeError(e.to_string())
    }
}

/// A catalog loaded, checked and indexed, ready to be served.
pub struct Prepared {
    store: ServeIndex,
    http: Option<HttpCatalog>,
    /// Packages in the catalog.
    pub packages: usize,
    /// Bundles (not channel entries: a bundle in three channels is one bundle).
    pub bundles: usize,
    /// The folder or unpacked image (removed when the server stops).
    _source: CatalogSource,
    /// The source as the user named it, for messages.
    name: String,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("packages", &self.packages)
            .field("bundles", &self.bundles)
            .finish_non_exhaustive()
    }
}

impl Prepared {
    /// The catalog name in catalogd's URLs, when the HTTP API is served.
    pub fn http_name(&self) -> Option<String> {
        self.http.as_ref().map(|h| h.name().to_string())
    }

    /// `--cache-dir`: the serve cache at `cache_dir` (inside the image for an image source)
    /// checked as `opm serve --cache-dir` checks it at start (`--cache-enforce-integrity`, opm's
    /// default with `--cache-dir`), so a pod that opm would crash-loop is caught before it is
    /// shipped. Answers still come from the catalog, which an accepted cache's digest proves it
    /// holds. Returns the line to print when the cache is accepted.
    pub fn check_cache(&mut self, cache_dir: &str) -> Result<String, CacheCheckError> {
        let name = self.name.clone();
        let report = match &mut self._source {
            CatalogSource::Folder(folder) => {
                let path = PathBuf::from(cache_dir);
                if !path.is_dir() {
                    return Err(no_cache(&name, cache_dir));
                }
                let mut report = crate::cache::verify::verify_dir(folder, &path)
                    .map_err(|e| CacheCheckError::Unreadable(format!("{name}: {e}")))?;
                report.cache_dir = report
                    .cache_dir
                    .replace(&path.display().to_string(), cache_dir);
                report
            }
            CatalogSource::Image {
                image,
                configs,
                opened,
            } => {
                let root = image.root();
                // Inside the image: hashed with the modes its layers give, not the unpacker's.
                if !crate::cache::verify::clean_abs(cache_dir)
                    .is_some_and(|rel| root.join(rel).is_dir())
                {
                    return Err(no_cache(&name, cache_dir));
                }
                let unreadable = |e: &dyn std::fmt::Display| {
                    CacheCheckError::Unreadable(hide(&format!("{name}: {e}"), root))
                };
                let opened = opened.take().ok_or_else(|| {
                    unreadable(&"the image was closed before its cache was checked")
                })?;
                let canonical_root = root.canonicalize().map_err(|e| unreadable(&e))?;
                let rel = configs
                    .strip_prefix(&canonical_root)
                    .map_err(|_| unreadable(&"the catalog folder is outside the image"))?
                    .to_string_lossy()
                    .into_owned();
                crate::cache::verify::verify_unpacked(&name, &opened, root, &rel, cache_dir)
                    .map_err(|e| unreadable(&crate::errors::error_chain(&e)))?
            }
        };
        if !report.accepted {
            let mut text = report.to_text_limited(3);
            if let CatalogSource::Image { image, .. } = &self._source {
                text = hide(&text, image.root());
            }
            return Err(CacheCheckError::Refused(format!(
                "{name}: opm would not start on the serve cache at {cache_dir}:\n{}",
                text.trim_end()
            )));
        }
        Ok(format!(
            "serve cache {}: digest {} matches (opm starts on it); answering from the catalog it matches",
            report.cache_dir, report.computed
        ))
    }
}

/// The refusal for a cache folder that is not there.
fn no_cache(name: &str, cache_dir: &str) -> CacheCheckError {
    CacheCheckError::Refused(format!(
        "{name}: no serve cache at {cache_dir}: opm serve --cache-dir {cache_dir} exits at start (integrity check failed: read existing cache digest: no such file or directory)"
    ))
}

/// `text` without the temporary folder an image was unpacked into (`root`, and the folder
/// holding it): a message names places as the image does, never a path that is gone when
/// the command ends.
fn hide(text: &str, root: &std::path::Path) -> String {
    let mut out = text.to_string();
    for p in [root.canonicalize().ok(), Some(root.to_path_buf())]
        .into_iter()
        .flatten()
    {
        let shown = p.display().to_string();
        if shown.len() > 1 {
            out = out.replace(&shown, "");
        }
    }
    out
}

/// Why `--cache-dir` stops the server before it listens.
#[derive(Debug, thiserror::Error)]
pub enum CacheCheckError {
    /// opm would refuse the cache (exit 1: a verdict on the image, not a usage error).
    #[error("{0}")]
    Refused(String),
    /// The cache or the catalog could not be read (exit 2).
    #[error("{0}")]
    Unreadable(String),
}

impl CacheCheckError {
    /// The exit code the command leaves with.
    pub fn exit_code(&self) -> u8 {
        match self {
            CacheCheckError::Refused(_) => 1,
            CacheCheckError::Unreadable(_) => 2,
        }
    }
}

/// Opens `location` as a catalog (the options `registry` gives are asked for only for an
/// image), loads and checks it (a catalog opm refuses is refused, with its first 20 errors),
/// and builds the gRPC model and, when `http` is asked, catalogd's index under
/// `catalog_name` (default: the folder's name when it is a valid name, else `catalog`).
pub fn prepare<E: From<ServeError>>(
    location: &Location,
    registry: impl FnOnce(&Location) -> Result<(RegistryOptions, Location), E>,
    http: bool,
    catalog_name: Option<&str>,
) -> Result<Prepared, E> {
    let name = location.as_str();
    let source = super::source::open_catalog(location, |l| registry(l).map_err(Wrapped::Outer))
        .map_err(Wrapped::into_outer)?;
    let fail = |e: &dyn std::fmt::Display| E::from(ServeError(format!("{name}: {e}")));
    let root = source.dir();
    crate::serve::server::purge_freed_memory_now();
    let opts = match &source {
        CatalogSource::Folder(_) => crate::catalog::load::LoadOptions::default(),
        CatalogSource::Image { .. } => crate::catalog::load::LoadOptions::for_image(),
    };
    let (loaded, metadata) =
        crate::serve::model::load_compact(root, &opts).map_err(|e| fail(&e))?;
    if loaded.has_errors() {
        let mut msg = format!("{name}: the catalog cannot be served (opm refuses it too):");
        for d in loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::findings::Severity::Error)
            .take(20)
        {
            let place = match (&d.file, d.line) {
                (Some(f), Some(l)) => format!("{f}:{l}: "),
                (Some(f), None) => format!("{f}: "),
                _ => String::new(),
            };
            msg.push_str(&format!("\n  {place}{}", d.message));
        }
        return Err(E::from(ServeError(msg)));
    }
    let files = loaded.files;
    let store = crate::serve::model::ServeModel::new_compact(loaded.config, metadata)
        .map_err(|e| fail(&e))?;
    let (packages, bundles) = (store.index().len(), store.catalog_bundle_count());
    let store = ServeIndex::new(store);
    let http = match http {
        true => {
            let name = match catalog_name {
                Some(n) => n.to_string(),
                None => default_catalog_name(&source),
            };
            Some(HttpCatalog::index(root, &files, &name).map_err(|e| fail(&e))?)
        }
        false => None,
    };
    Ok(Prepared {
        store,
        http,
        packages,
        bundles,
        _source: source,
        name: name.to_string(),
    })
}

/// The registry callback's own error, or the opener's, kept apart so each keeps its exit code.
enum Wrapped<E> {
    Outer(E),
    Source(CatalogSourceError),
}

impl<E> From<CatalogSourceError> for Wrapped<E> {
    fn from(e: CatalogSourceError) -> Self {
        Wrapped::Source(e)
    }
}

impl<E: From<ServeError>> Wrapped<E> {
    fn into_outer(self) -> E {
        match self {
            Wrapped::Outer(e) => e,
            Wrapped::Source(e) => E::from(ServeError::from(e)),
        }
    }
}

/// Serves `prepared` on `grpc` (and catalogd's API on `http` when it was prepared) until
/// SIGTERM or SIGINT; `on_bound` is called once both listen.
pub fn serve(
    prepared: Prepared,
    grpc: SocketAddr,
    http: Option<SocketAddr>,
    on_bound: impl FnOnce(Bound),
) -> Result<(), ServeError> {
    let Prepared {
        store,
        http: catalog,
        _source: mut source,
        ..
    } = prepared;
    // Only the unpacked files are served: an image's layers are no longer needed.
    if let CatalogSource::Image { opened, .. } = &mut source {
        drop(opened.take());
    }
    let listen = Listen { grpc, http };
    crate::serve::server::serve(Arc::new(store), catalog, &listen, on_bound)
        .map_err(|e| ServeError(e.to_string()))?;
    drop(source);
    Ok(())
}

fn default_catalog_name(source: &CatalogSource) -> String {
    if let CatalogSource::Folder(p) = source {
        let name = p
            .canonicalize()
            .ok()
            .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()));
        if let Some(n) = name
            && valid_name(&n)
        {
            return n;
        }
    }
    "catalog".to_string()
}

/// A Kubernetes object name (RFC 1123 subdomain), as catalogd's URLs need.
fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 253
        && n.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}
