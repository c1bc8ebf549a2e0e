//! `catalog query SOURCE`: a catalog folder, a catalog image, or a running catalogd (or
//! `olmpack catalog serve --http`) URL, loaded and asked what a cluster administrator asks
//! ([`crate::olmv1::query`]): packages, channels, versions, what OLM v1 installs today, where
//! an installed version upgrades to on OLM v1 and on OLM v0, and where the two differ.

use crate::action::Location;
use crate::catalog::model::DeclarativeConfig;
use crate::olmv1::query::{Query, QueryPackage, answer, upgrade_differences};
use crate::olmv1::upgrade::UpgradeChoice;
use crate::transport::RegistryOptions;

pub use crate::olmv1::query::{Installable, Query as QueryOptions};

/// Why a query could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The folder or image could not be opened as a catalog.
    #[error(transparent)]
    Source(#[from] crate::action::source::CatalogSourceError),
    /// The URL did not answer with a catalog, or the catalog folder could not be read.
    #[error("{0}: {1}")]
    Url(String, String),
    /// The URL could not be reached, said as the registry client says it (`connection refused
    /// by HOST:PORT`, `TLS with HOST failed: invalid peer certificate: UnknownIssuer`) rather
    /// than as reqwest's "error sending request for url".
    #[error("{url}")]
    Http {
        /// The URL, without any user-info or query string.
        url: String,
        /// What went wrong, in words.
        #[source]
        source: crate::registry::RegistryError,
    },
}

/// The answer.
#[derive(Debug, serde::Serialize)]
pub struct Answer {
    /// The packages asked about.
    pub packages: Vec<QueryPackage>,
    /// With `--upgrade-report`: every (package, channel, installed version) where OLM v0 and
    /// OLM v1 upgrade differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differences: Option<Vec<(String, UpgradeChoice)>>,
}

/// The longest catalog read from a URL: a whole public catalog's `api/v1/all` is a few hundred
/// MB at most, and a server that sends more is not one to believe.
const MAX_URL_BYTES: u64 = 512 << 20;

/// The options a catalogd URL is read with: the TLS ones only (`--ca-file`, `--insecure`);
/// registry credentials are not sent to a catalog server.
pub fn url_options(ca_file: Option<std::path::PathBuf>, insecure: bool) -> RegistryOptions {
    let mut o = RegistryOptions::default();
    o.client.ca_file = ca_file;
    o.client.insecure = insecure;
    o
}

/// Reads a catalogd `…/catalogs/NAME` base URL: its `api/v1/all`.
fn load_url(
    url: &str,
    tls: &crate::registry::client::ClientOptions,
) -> Result<DeclarativeConfig, QueryError> {
    use crate::registry::errors::{NetError, RegistryError, body_read_failure};
    use std::io::Read;
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        QueryError::Url(
            "the catalog URL".into(),
            format!(
                "not a valid URL ({e}); a user name or password with '/', '?', '#' or '@' in \
                 it must be percent-encoded"
            ),
        )
    })?;
    let mut all = parsed.clone();
    let path = parsed.path().trim_end_matches('/');
    if !path.ends_with("/api/v1/all") {
        all.set_path(&format!("{path}/api/v1/all"));
    }
    // User-info (`https://user:password@host/…`, which reqwest sends as Basic credentials) and
    // query strings stay out of every message.
    let (shown, shown_all) = (printable(&parsed), printable(&all));
    let fail = |e: String| QueryError::Url(shown.clone(), e);
    let http = |e: reqwest::Error| QueryError::Http {
        url: shown.clone(),
        source: RegistryError::Transport {
            method: "GET".into(),
            url: shown_all.clone(),
            // Without its URL: the error keeps the user-info for its Debug form.
            cause: NetError(e.without_url()),
        },
    };
    // A redirect may not leave https for plain http.
    let secure = all.scheme() == "https";
    let client = crate::registry::tls::client_with_tls(tls.ca_file.as_deref(), tls.insecure)
        .map_err(|e| fail(e.to_string()))?
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if secure && attempt.url().scheme() != "https" {
                attempt.error("a redirect from https to plain http is refused")
            } else if attempt.previous().len() >= 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        }))
        .timeout(std::time::Duration::from_secs(300))
        .build()
        .map_err(http)?;
    let resp = client.get(all).send().map_err(http)?;
    if !resp.status().is_success() {
        return Err(fail(format!("GET {shown_all}: {}", resp.status())));
    }
    let mut bytes = Vec::new();
    resp.take(MAX_URL_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("GET {shown_all}: {}", body_read_failure(&e))))?;
    if bytes.len() as u64 > MAX_URL_BYTES {
        return Err(fail(format!(
            "GET {shown_all}: the catalog is larger than {MAX_URL_BYTES} bytes"
        )));
    }
    let loaded = crate::catalog::load::load_bytes("api/v1/all", &bytes);
    if loaded.has_errors() {
        let first = loaded
            .diagnostics
            .iter()
            .find(|d| d.severity == crate::findings::Severity::Error)
            .map(|d| d.message.clone())
            .unwrap_or_default();
        return Err(fail(format!("GET {shown_all}: not a catalog: {first}")));
    }
    Ok(loaded.config)
}

/// Whether `source` is a catalogd URL rather than a folder or image (the scheme in any case).
pub fn is_url(source: &str) -> bool {
    crate::registry::tls::is_http_url(source)
}

/// A catalog URL as it may be printed: without user-info, query or fragment. One that does
/// not parse is not printed at all: where its user-info ends cannot be told (a password with
/// a raw `/` reads as a host and a path).
pub fn shown_url(source: &str) -> String {
    reqwest::Url::parse(source).map_or_else(|_| "the catalog URL".into(), |u| printable(&u))
}

/// `url` without user-info, query or fragment.
fn printable(url: &reqwest::Url) -> String {
    let mut u = url.clone();
    // Err only for URLs that cannot carry user-info (no host): nothing to remove then.
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// Loads `source` and answers `query`; `report` adds the v0-against-v1 differences.
pub fn query(
    source: &str,
    location: Option<&Location>,
    registry: &RegistryOptions,
    query: &Query,
    report: bool,
) -> Result<Answer, QueryError> {
    let cfg = match location {
        Some(l) if !is_url(source) => {
            // A folder, or a catalog image unpacked (its configs label followed), read as
            // `catalog validate` reads a folder: bundle manifests kept.
            let opened = crate::action::source::open_catalog::<QueryError>(l, |l| {
                Ok((registry.clone(), l.clone()))
            })?;
            let loaded = crate::catalog::load::load_dir(opened.dir())
                .map_err(|e| QueryError::Url(source.to_string(), e.to_string()))?;
            loaded.config
        }
        _ => load_url(source, &registry.client)?,
    };
    let (_, readiness) = crate::validate::catalog::olmv1::check_bundles(&cfg);
    Ok(Answer {
        packages: answer(&cfg, &readiness, query),
        differences: report.then(|| upgrade_differences(&cfg, query.package.as_deref())),
    })
}
