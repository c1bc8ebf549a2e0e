//! catalogd's HTTP API (OLM v1, SERVE.md B) over a catalog folder: `/catalogs/<name>/api/v1/all`
//! (every blob as JSON Lines, with `Last-Modified`, `If-Modified-Since`, `Range`, `HEAD`) and
//! `/catalogs/<name>/api/v1/metas?schema=&package=&name=`, gzip when asked, and catalogd's
//! 400/404/405 answers.
//!
//! catalogd stores the JSON Lines in a file; we write nothing. At start every file is read once
//! to learn each blob's length and keys; a request re-encodes just the files it needs, one at a
//! time, so memory stays at one file whatever the catalog size and however many clients read.

use crate::catalog::load::{MetaText, file_metas};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use olmpack_olm::olmv1::validators::dns1123_subdomain_messages as dns1123_subdomain;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;
use tokio::sync::mpsc;

mod range;
use range::RangeAsk;

/// Where one file's blobs sit in the JSON Lines stream.
#[derive(Debug)]
struct FileSpan {
    /// The file, absolute.
    path: PathBuf,
    /// Offset of its first byte in the whole stream.
    start: u64,
    /// Bytes of its lines (each blob plus `\n`).
    len: u64,
}

/// One blob: its file, its place in the stream, and its index keys.
#[derive(Debug)]
struct BlobRef {
    file: usize,
    /// Index of the blob within its file.
    nth: usize,
    schema: String,
    package: String,
    name: String,
}

/// The served catalog: layout of the JSON Lines stream and the blob index.
#[derive(Debug)]
pub struct HttpCatalog {
    name: String,
    files: Vec<FileSpan>,
    blobs: Vec<BlobRef>,
    total: u64,
    modified: SystemTime,
}

impl HttpCatalog {
    /// Reads every file of the catalog once (`files` relative to `root`, in opm's walk order)
    /// and records where each blob's line falls. `name` is the catalog name of the URLs.
    pub fn index(root: &std::path::Path, files: &[String], name: &str) -> Result<Self, String> {
        let mut spans = Vec::with_capacity(files.len());
        let mut blobs = Vec::new();
        let mut total = 0u64;
        for (i, rel) in files.iter().enumerate() {
            let path = root.join(rel);
            let metas = read_metas(&path)?;
            let mut len = 0u64;
            for (nth, m) in metas.into_iter().enumerate() {
                len += m.blob.len() as u64 + 1;
                blobs.push(BlobRef {
                    file: i,
                    nth,
                    schema: m.schema,
                    package: m.package,
                    name: m.name,
                });
            }
            spans.push(FileSpan {
                path,
                start: total,
                len,
            });
            total += len;
        }
        // Go's http.ServeContent sends Last-Modified in whole seconds.
        let now = SystemTime::now();
        let secs = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Ok(HttpCatalog {
            name: name.to_string(),
            files: spans,
            blobs,
            total,
            modified: SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs),
        })
    }

    /// The catalog name of the URLs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of `/api/v1/all`.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether the catalog has no blobs at all.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

fn read_metas(path: &std::path::Path) -> Result<Vec<MetaText>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    file_metas(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The blob lines of one file, checked against the length recorded at start (a file changed
/// underneath would otherwise shift every range).
fn file_lines(span: &FileSpan) -> Result<Vec<MetaText>, String> {
    let metas = read_metas(&span.path)?;
    let len: u64 = metas.iter().map(|m| m.blob.len() as u64 + 1).sum();
    if len != span.len {
        return Err(format!(
            "{}: changed since the server started",
            span.path.display()
        ));
    }
    Ok(metas)
}

/// The router for catalogd's routes under `/catalogs/`.
pub fn router(catalog: Arc<HttpCatalog>) -> Router {
    let compression = tower_http::compression::CompressionLayer::new()
        .gzip(true)
        .no_br()
        .no_deflate()
        .no_zstd()
        .compress_when(tower_http::compression::predicate::SizeAbove::new(1400));
    Router::new()
        .route("/catalogs/{catalog}/api/v1/all", axum::routing::any(all))
        .route(
            "/catalogs/{catalog}/api/v1/metas",
            axum::routing::any(metas),
        )
        .fallback(|| async { text(StatusCode::NOT_FOUND, "404 page not found") })
        .with_state(catalog)
        .layer(compression)
}

/// `http.Error`: the text plus a newline, as plain text, with `nosniff`.
fn text(code: StatusCode, message: &str) -> Response {
    let mut r = (code, format!("{message}\n")).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The checks every route makes first: method, catalog name, catalog present.
fn precheck(method: &Method, name: &str, catalog: &HttpCatalog) -> Option<Response> {
    if method != Method::GET && method != Method::HEAD {
        return Some(text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"));
    }
    let errs = dns1123_subdomain(name);
    if !errs.is_empty() {
        return Some(text(
            StatusCode::BAD_REQUEST,
            &format!("invalid catalog name: {}", errs.join("; ")),
        ));
    }
    if name != catalog.name {
        return Some(text(StatusCode::NOT_FOUND, "404 Not Found"));
    }
    None
}

/// What the conditional headers decide (Go's `checkPreconditions`, If-Match/None-Match aside:
/// there is no ETag).
enum Precondition {
    Proceed,
    NotModified,
    Failed,
}

fn preconditions(headers: &HeaderMap, modified: SystemTime) -> Precondition {
    let date = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
    };
    if let Some(t) = date(header::IF_UNMODIFIED_SINCE)
        && modified > t
    {
        return Precondition::Failed;
    }
    if let Some(t) = date(header::IF_MODIFIED_SINCE)
        && modified <= t
    {
        return Precondition::NotModified;
    }
    Precondition::Proceed
}

fn not_modified(modified: SystemTime) -> Response {
    let mut r = StatusCode::NOT_MODIFIED.into_response();
    r.headers_mut().insert(
        header::LAST_MODIFIED,
        hv(&httpdate::fmt_http_date(modified)),
    );
    r
}

fn hv(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static(""))
}

async fn all(
    method: Method,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
    State(catalog): State<Arc<HttpCatalog>>,
) -> Response {
    if let Some(r) = precheck(&method, &name, &catalog) {
        return r;
    }
    match preconditions(&headers, catalog.modified) {
        Precondition::Failed => return StatusCode::PRECONDITION_FAILED.into_response(),
        Precondition::NotModified => return not_modified(catalog.modified),
        Precondition::Proceed => {}
    }
    let size = catalog.total;
    let raw = |name: header::HeaderName| headers.get(name).map(HeaderValue::as_bytes);
    let asked = raw(header::RANGE)
        .filter(|_| range::if_range_holds(raw(header::IF_RANGE), catalog.modified));
    let (status, start, end) = match range::ask(asked, size) {
        RangeAsk::Whole => (StatusCode::OK, 0, size),
        RangeAsk::Part { start, length } => (StatusCode::PARTIAL_CONTENT, start, start + length),
        RangeAsk::NoOverlap => {
            let mut r = text(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "invalid range: failed to overlap",
            );
            r.headers_mut()
                .insert(header::CONTENT_RANGE, hv(&format!("bytes */{size}")));
            return r;
        }
        RangeAsk::Invalid => return text(StatusCode::RANGE_NOT_SATISFIABLE, "invalid range"),
    };
    let body = if method == Method::HEAD {
        Body::empty()
    } else {
        stream_all(catalog.clone(), start, end)
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl"),
    );
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::LAST_MODIFIED,
        hv(&httpdate::fmt_http_date(catalog.modified)),
    );
    h.insert(header::CONTENT_LENGTH, hv(&(end - start).to_string()));
    if status == StatusCode::PARTIAL_CONTENT {
        h.insert(
            header::CONTENT_RANGE,
            hv(&RangeAsk::content_range(start, end - start, size)),
        );
    }
    r
}

/// Bytes `[start, end)` of the JSON Lines stream, produced file by file off the async threads.
fn stream_all(catalog: Arc<HttpCatalog>, start: u64, end: u64) -> Body {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    tokio::task::spawn_blocking(move || {
        for span in &catalog.files {
            let (s, e) = (span.start, span.start + span.len);
            if e <= start || s >= end || span.len == 0 {
                continue;
            }
            let lines = match file_lines(span) {
                Ok(l) => l,
                Err(msg) => {
                    let _ = tx.blocking_send(Err(std::io::Error::other(msg)));
                    return;
                }
            };
            let mut buf = Vec::with_capacity(span.len as usize);
            for m in lines {
                buf.extend_from_slice(m.blob.as_bytes());
                buf.push(b'\n');
            }
            let from = start.saturating_sub(s) as usize;
            let to = (end.min(e) - s) as usize;
            let chunk = Bytes::from(buf).slice(from..to);
            if tx.blocking_send(Ok(chunk)).is_err() {
                return;
            }
        }
    });
    Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
}

async fn metas(
    method: Method,
    UrlPath(name): UrlPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    State(catalog): State<Arc<HttpCatalog>>,
) -> Response {
    if let Some(r) = precheck(&method, &name, &catalog) {
        return r;
    }
    let (mut schema, mut package, mut blob_name) = (String::new(), String::new(), String::new());
    let mut seen = (false, false, false);
    for (k, v) in url_pairs(query.as_deref().unwrap_or("")) {
        match k.as_str() {
            // Go's `Query().Get` keeps the first value of a repeated key.
            "schema" if !seen.0 => (schema, seen.0) = (v, true),
            "package" if !seen.1 => (package, seen.1) = (v, true),
            "name" if !seen.2 => (blob_name, seen.2) = (v, true),
            "schema" | "package" | "name" => {}
            _ => return text(StatusCode::BAD_REQUEST, "400 Bad Request"),
        }
    }
    let modified = catalog.modified;
    match preconditions(&headers, modified) {
        Precondition::Failed => return StatusCode::PRECONDITION_FAILED.into_response(),
        Precondition::NotModified => return not_modified(modified),
        Precondition::Proceed => {}
    }
    let mut r = if method == Method::HEAD {
        Response::new(Body::empty())
    } else {
        let wanted: Vec<(usize, usize)> = catalog
            .blobs
            .iter()
            .filter(|b| {
                // catalogd indexes only non-empty keys: an empty schema means "any schema" but
                // a blob without a schema is never in its index.
                (if schema.is_empty() {
                    !b.schema.is_empty()
                } else {
                    b.schema == schema
                }) && (package.is_empty() || b.package == package)
                    && (blob_name.is_empty() || b.name == blob_name)
            })
            .map(|b| (b.file, b.nth))
            .collect();
        Response::new(
            if schema.is_empty() && package.is_empty() && blob_name.is_empty() {
                stream_all(catalog.clone(), 0, catalog.total)
            } else {
                stream_blobs(catalog.clone(), wanted)
            },
        )
    };
    let h = r.headers_mut();
    h.insert(
        header::LAST_MODIFIED,
        hv(&httpdate::fmt_http_date(modified)),
    );
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl"),
    );
    r
}

/// The chosen blobs (file, index in file), in stream order.
fn stream_blobs(catalog: Arc<HttpCatalog>, wanted: Vec<(usize, usize)>) -> Body {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    tokio::task::spawn_blocking(move || {
        for group in wanted.chunk_by(|a, b| a.0 == b.0) {
            let span = &catalog.files[group[0].0];
            let lines = match file_lines(span) {
                Ok(l) => l,
                Err(msg) => {
                    let _ = tx.blocking_send(Err(std::io::Error::other(msg)));
                    return;
                }
            };
            let mut buf = Vec::new();
            for (_, nth) in group {
                if let Some(m) = lines.get(*nth) {
                    buf.extend_from_slice(m.blob.as_bytes());
                    buf.push(b'\n');
                }
            }
            if tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
                return;
            }
        }
    });
    Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// `application/x-www-form-urlencoded` pairs, as Go's `url.ParseQuery` reads them.
fn url_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_names_are_dns1123_subdomains() {
        assert!(dns1123_subdomain("operatorhubio").is_empty());
        assert!(dns1123_subdomain("a.b-c").is_empty());
        assert_eq!(dns1123_subdomain("Bad_Name").len(), 1);
        assert_eq!(dns1123_subdomain("").len(), 1);
    }

    #[test]
    fn query_pairs_unescape() {
        assert_eq!(
            url_pairs("schema=olm.package&name=a%2Db+c"),
            vec![
                ("schema".to_string(), "olm.package".to_string()),
                ("name".to_string(), "a-b c".to_string())
            ]
        );
    }
}
