//! Registry errors as data: the method, a redacted URL, the status and the spec's error envelope
//! are kept as fields (not pre-formatted strings) so callers can decide what to retry and what to
//! print. The retry loop only asks [`RegistryError::is_temporary`].

use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// One entry of the distribution spec's error envelope `{"errors":[{code,message,detail}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EnvelopeError {
    /// Spec code such as `BLOB_UNKNOWN`, `DIGEST_INVALID`, `UNAUTHORIZED`, `TOOMANYREQUESTS`.
    #[serde(default)]
    pub code: String,
    /// Human text from the registry.
    #[serde(default)]
    pub message: String,
    /// Free-form detail, kept as compact JSON text (registries put objects and strings here).
    #[serde(default, deserialize_with = "detail_as_text")]
    pub detail: Option<String>,
}

fn detail_as_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match value {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
    })
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    errors: Vec<EnvelopeError>,
}

/// Parses a response body as the spec's error envelope; bodies that are not one give an empty
/// list (proxies and load balancers answer with HTML). Every text is made [`printable`]: it is
/// the registry's, and ends up on a terminal.
pub fn parse_envelope(body: &[u8]) -> Vec<EnvelopeError> {
    serde_json::from_slice::<Envelope>(body)
        .map(|e| e.errors)
        .unwrap_or_default()
        .into_iter()
        .map(|e| EnvelopeError {
            code: printable(&e.code),
            message: printable(&e.message),
            detail: e.detail.as_deref().map(printable),
        })
        .collect()
}

/// Text from a registry made safe to print: control characters (C0 including newline and
/// carriage return, DEL, C1) are written as `\u{1b}` escapes, so a registry cannot move the
/// cursor, retitle the terminal, clear the screen or forge lines of output.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Renders parsed envelope errors as `CODE: message (detail)`, joined by `; `.
fn render_errors(errors: &[EnvelopeError]) -> String {
    errors
        .iter()
        .map(|e| {
            let mut s = if e.code.is_empty() {
                e.message.clone()
            } else {
                format!("{}: {}", e.code, e.message)
            };
            if let Some(d) = &e.detail {
                s.push_str(&format!(" ({d})"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The HTTP library's error behind [`RegistryError::Transport`], kept for the retry decision
/// (`is_connect`, `is_timeout`) but not chained into messages: its causes are the library's
/// internals (`client error (Connect)`, `tcp connect error`), which the variant's message
/// replaces with what happened, in words.
#[derive(Debug)]
pub struct NetError(pub reqwest::Error);

impl From<reqwest::Error> for NetError {
    fn from(e: reqwest::Error) -> Self {
        NetError(e)
    }
}

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&innermost(&self.0))
    }
}

impl std::error::Error for NetError {}

/// The `host[:port]` of a URL (`http://127.0.0.1:5000/a/b` → `127.0.0.1:5000`).
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?']).next().unwrap_or(rest)
}

/// The host of a URL without its port (`quay.io:443` → `quay.io`, `[::1]:5000` → `::1`).
fn host_only(url: &str) -> &str {
    let a = authority(url);
    if let Some(v6) = a.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    a.rsplit_once(':').map_or(a, |(h, _)| h)
}

/// Why reading a response body failed, in words: a body cut by the request's deadline says so
/// (reqwest's own text is only "request or response body error").
pub fn body_read_failure(e: &std::io::Error) -> String {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        let timed_out = err
            .downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
            || err
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
        if timed_out {
            return "timed out: the request took longer than its deadline (--timeout)".into();
        }
        next = err.source();
    }
    e.to_string()
}

/// The last cause of an error chain: the one that says what happened.
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

/// What went wrong with a request that got no answer, in the words a user needs: the one
/// wording of network failures, for registry requests and the other HTTP reads (a lookaside
/// store, a catalogd URL).
pub fn describe_transport(url: &str, e: &reqwest::Error) -> String {
    match net_failure(e) {
        NetFailure::Refused => format!("connection refused by {}", authority(url)),
        NetFailure::Unresolved => format!("cannot resolve {}", host_only(url)),
        NetFailure::TimedOut => format!("{} did not answer in time", authority(url)),
        NetFailure::Tls(why) => format!("TLS with {} failed: {why}", authority(url)),
        NetFailure::Other(why) => why,
    }
}

/// The kinds of network failure a message distinguishes.
enum NetFailure {
    Refused,
    Unresolved,
    TimedOut,
    Tls(String),
    Other(String),
}

fn net_failure(e: &reqwest::Error) -> NetFailure {
    let mut chain: Vec<&(dyn std::error::Error + 'static)> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        chain.push(err);
        next = err.source();
    }
    let io_kind = chain
        .iter()
        .find_map(|c| c.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    let text: Vec<String> = chain.iter().map(|c| c.to_string().to_lowercase()).collect();
    let mentions = |needle: &str| text.iter().any(|t| t.contains(needle));
    if io_kind == Some(std::io::ErrorKind::ConnectionRefused) || mentions("connection refused") {
        NetFailure::Refused
    } else if mentions("dns error")
        || mentions("failed to lookup address")
        || mentions("name or service not known")
        || mentions("no such host")
    {
        NetFailure::Unresolved
    } else if e.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
        NetFailure::TimedOut
    } else if mentions("certificate") || mentions("tls") || mentions("handshake") {
        NetFailure::Tls(innermost(e))
    } else {
        NetFailure::Other(innermost(e))
    }
}

/// A status answer in words: a 404 on a manifest says which tag or digest is missing where,
/// the registry's error codes are kept for the rest.
fn describe_status(method: &str, url: &str, status: u16, errors: &[EnvelopeError]) -> String {
    let path = url.split_once("://").map_or(url, |(_, r)| r);
    let path = &path[authority(url).len()..];
    let path = path.split('?').next().unwrap_or(path);
    let code = |c: &str| errors.iter().any(|e| e.code == c);
    if status == 404
        && let Some(endpoint) = super::api::endpoint(path)
    {
        let place = |repo: &str| format!("{}/{repo}", authority(url));
        match endpoint {
            super::api::Endpoint::Manifest(repo, reference) => {
                if code("NAME_UNKNOWN") {
                    return format!("repository {} not found", place(repo));
                }
                let what = if reference.contains(':') {
                    "digest"
                } else {
                    "tag"
                };
                return format!("{what} {reference} not found in {}", place(repo));
            }
            super::api::Endpoint::Blob(repo, digest) => {
                if code("NAME_UNKNOWN") {
                    return format!("repository {} not found", place(repo));
                }
                return format!("blob {digest} not found in {}", place(repo));
            }
        }
    }
    let mut out = format!("{method} {url}: HTTP {status}");
    if !errors.is_empty() {
        out.push_str(": ");
        out.push_str(&render_errors(errors));
    } else if status == 400 && url.starts_with("http://") {
        // A TLS server answers a plain-HTTP request with a bare 400 (Go's "Client sent an
        // HTTP request to an HTTPS server"); loopback hosts get plain HTTP unless told.
        out.push_str(&format!(
            ": {} may serve HTTPS (TLS) and plain HTTP was used because it is a loopback host: give its CA certificate (--ca-file, --src-ca-file, --dest-ca-file) or skip TLS verification (--insecure, --src-tls-verify=false, --dest-tls-verify=false)",
            authority(url)
        ));
    }
    out
}

/// Removes the query string and any user-info from a URL before it is stored in an error: upload
/// session URLs carry state tokens and some registries sign their redirects, and a URL from
/// the user or a configuration (a lookaside store) may carry `user:password@`. The URL is read
/// as the HTTP client reads it; one that does not parse and holds an `@` keeps only its scheme,
/// since where its user-info ends cannot be told (a password with a raw `/` or `?`).
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let had_query = u.query().is_some();
            // Err only for URLs that cannot carry user-info (no host): nothing to remove.
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            let mut out = u.to_string();
            if had_query {
                out.push_str("?<redacted>");
            }
            out
        }
        Err(_) if url.contains('@') => match url.split_once("://") {
            Some((scheme, _)) => format!("{scheme}://<redacted>"),
            None => "<redacted>".into(),
        },
        Err(_) => match url.split_once('?') {
            Some((base, _)) => format!("{base}?<redacted>"),
            None => url.to_string(),
        },
    }
}

/// Everything that can go wrong talking to a registry or reading an image.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The image reference does not follow the distribution grammar.
    #[error("invalid image reference {input:?}: {reason}")]
    InvalidReference {
        /// What the user typed.
        input: String,
        /// Which rule it broke.
        reason: String,
    },
    /// A blob kept in another registry (a base image's layer) is not in the target repository
    /// and could not be mounted there; the caller fetches it and pushes again.
    #[error(
        "blob {digest} is in {location}, not in the target repository, and could not be mounted"
    )]
    RemoteBlobMissing {
        /// The blob.
        digest: String,
        /// `registry/repository` holding it.
        location: String,
    },
    /// The HTTP request could not be sent or its response not read (DNS, TCP, TLS, timeout),
    /// said in plain words (`connection refused by 127.0.0.1:5000`, `cannot resolve quay.io`)
    /// rather than as the HTTP library's chain of internal errors.
    #[error("{method} {url}: {}", describe_transport(url, &cause.0))]
    Transport {
        /// HTTP method.
        method: String,
        /// Redacted URL.
        url: String,
        /// The underlying error: not a `source`, so its internals stay out of messages.
        cause: NetError,
    },
    /// The registry answered with a status the operation did not expect.
    #[error("{}", describe_status(method, url, *status, errors))]
    Status {
        /// HTTP method.
        method: String,
        /// Redacted URL.
        url: String,
        /// HTTP status code.
        status: u16,
        /// Parsed error envelope (empty when the body was not one).
        errors: Vec<EnvelopeError>,
        /// `Retry-After` as a delay, when the registry sent one.
        retry_after: Option<Duration>,
    },
    /// The registry (or its token service) refused the credentials.
    #[error("authentication failed for {host}: check credentials (source: {source_desc}){}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    AuthFailed {
        /// Registry host.
        host: String,
        /// Where the credentials came from, for the user to know what to fix.
        source_desc: String,
        /// HTTP status and registry message, never the secret.
        detail: String,
    },
    /// Credentials could not be read (unreadable auth file, failing credential helper).
    #[error("cannot read credentials for {host} from {source_desc}: {reason}")]
    Credentials {
        /// Registry host.
        host: String,
        /// Which file or helper.
        source_desc: String,
        /// What went wrong (never contains the secret).
        reason: String,
    },
    /// The token service answered but its response cannot be used.
    #[error("token service {realm} for {host}: {reason}")]
    Token {
        /// Registry host.
        host: String,
        /// Redacted realm URL.
        realm: String,
        /// What was wrong.
        reason: String,
    },
    /// Content bytes do not hash to the digest that names them.
    #[error("digest mismatch for {expected}: the content received hashes to {actual}; refusing it")]
    DigestMismatch {
        /// The digest the manifest (or reference) promised.
        expected: String,
        /// The digest of the bytes actually received.
        actual: String,
    },
    /// Content is bigger than its descriptor says or than a safety limit allows.
    #[error("{what} is too large: more than {limit} bytes")]
    TooLarge {
        /// What was being read.
        what: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// The registry broke the protocol (missing Location, unknown media type, bad JSON...).
    #[error("{0}")]
    Protocol(String),
    /// A transfer was cut off mid-stream (connection reset, early EOF); worth retrying.
    #[error("{what} was interrupted: {reason}")]
    Interrupted {
        /// What was being transferred.
        what: String,
        /// The I/O error.
        reason: String,
    },
    /// The registry refuses to delete manifests at all (HTTP 405, the spec's `UNSUPPORTED`):
    /// deletion is switched off there, so asking for the next digest would be refused too. Its
    /// own variant so a caller stops at the first one and says what to switch on.
    #[error("{repository}: the registry does not allow deleting manifests (DELETE answered HTTP 405{}); deletion is switched off on it: a distribution registry (docker-registry, registry:2) needs storage.delete.enabled: true in its configuration (REGISTRY_STORAGE_DELETE_ENABLED=true)", if detail.is_empty() { String::new() } else { format!(" {detail}") })]
    DeleteUnsupported {
        /// `registry/repository` asked.
        repository: String,
        /// The registry's error code and message, when it sent some.
        detail: String,
    },
    /// A local file could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
    /// A layer tar cannot be unpacked safely.
    #[error("unsafe or invalid layer {layer}: {reason}")]
    Unpack {
        /// The layer digest.
        layer: String,
        /// What was refused.
        reason: String,
    },
    /// An image source string or local image could not be used.
    #[error("image source {source_name}: {reason}")]
    Source {
        /// The source as typed.
        source_name: String,
        /// What was wrong.
        reason: String,
    },
    /// A CA file (`--ca-file`, `--src-ca-file`, `--dest-ca-file`) holds no certificate to
    /// trust: named as what it is, not as an image source.
    #[error("CA file {path}: {reason}")]
    CaFile {
        /// The file as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl RegistryError {
    /// True for errors worth retrying: connection problems, timeouts, 408, 429 and 500/502/503/504.
    /// Everything else (auth, 4xx, digest mismatch) fails at once: retrying cannot fix it, and
    /// so does a connection refused by a loopback address or an explicit port (nothing listens
    /// there; [`crate::registry::retry::RetryPolicy::retry_refused`] asks for it anyway).
    pub fn is_temporary(&self) -> bool {
        match self {
            RegistryError::Transport { .. } if self.is_refused_by_listener_absence() => false,
            RegistryError::Transport { cause, .. } => {
                let source = &cause.0;
                source.is_connect()
                    || source.is_timeout()
                    || source.is_request()
                    || source.is_body()
                    || source.is_decode()
            }
            RegistryError::Status { status, .. } => is_retryable_status(*status),
            RegistryError::Interrupted { .. } => true,
            _ => false,
        }
    }

    /// True for a connection refused by a loopback address or by an explicit port: nothing
    /// listens there, which retrying with backoff does not change (the default policy fails at
    /// once; an explicit `--retries` still retries it).
    pub fn is_refused_by_listener_absence(&self) -> bool {
        match self {
            RegistryError::Transport { url, cause, .. } => {
                let host = host_only(url);
                let loopback = host == "localhost"
                    || host
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback());
                let explicit_port =
                    authority(url).len() > host.len() && !authority(url).ends_with(']');
                matches!(net_failure(&cause.0), NetFailure::Refused) && (loopback || explicit_port)
            }
            _ => false,
        }
    }

    /// The `Retry-After` delay the registry asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            RegistryError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The HTTP status code when the error came from a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            RegistryError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// [`RegistryError::Io`] for `context` ("cannot read blob") on `path`: the file error says
    /// "cannot" itself, so the callers' wording is kept as it was.
    pub(crate) fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        let action = context.strip_prefix("cannot ").unwrap_or(context);
        RegistryError::Io(crate::fsio::FsError::new(action, path, source))
    }
}

/// Statuses retried by every mainstream client (crane, oras): request timeout, too many
/// requests and the gateway-style server errors. 501 and 505 are permanent.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
}

impl From<crate::reference::InvalidReference> for RegistryError {
    fn from(err: crate::reference::InvalidReference) -> Self {
        RegistryError::InvalidReference {
            input: err.input,
            reason: err.reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_with_missing_fields_and_object_detail() {
        let body = br#"{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry","detail":{"digest":"sha256:ab"}},{"code":"TOOMANYREQUESTS"}]}"#;
        let errs = parse_envelope(body);
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].code, "BLOB_UNKNOWN");
        assert_eq!(errs[0].detail.as_deref(), Some(r#"{"digest":"sha256:ab"}"#));
        assert_eq!(errs[1].message, "");
        assert!(parse_envelope(b"<html>bad gateway</html>").is_empty());
    }

    #[test]
    fn urls_are_redacted() {
        assert_eq!(
            redact_url(&format!(
                "http://127.0.0.1:5000{}uuid?_state=SECRET&digest=x",
                super::super::api::uploads("a")
            )),
            format!(
                "http://127.0.0.1:5000{}uuid?<redacted>",
                super::super::api::uploads("a")
            )
        );
        assert_eq!(redact_url("https://user:pw@host/x/"), "https://host/x/");
        assert_eq!(redact_url("https://host/x/"), "https://host/x/");
        // A lookaside signature's path holds an `@`: kept, the user-info not.
        assert_eq!(
            redact_url("http://u:pw@127.0.0.1:8/sigs/x/y@sha256=ab/signature-1?t=pw"),
            "http://127.0.0.1:8/sigs/x/y@sha256=ab/signature-1?<redacted>"
        );
        // A raw `/`, `?` or `@` in a password: the URL does not parse, and nothing of it but
        // the scheme is kept.
        for raw in [
            "https://alice:pa/ss@127.0.0.1:8/catalogs/x",
            "http://alice:S3C?RET@127.0.0.1:8/x",
            "http://alice:p@ss@127.0.0.1:notaport/x",
        ] {
            let shown = redact_url(raw);
            assert!(
                !shown.contains("alice") && !shown.contains("ss") && !shown.contains("RET"),
                "{shown}"
            );
        }
    }

    #[test]
    fn status_error_renders_envelope() {
        let e = RegistryError::Status {
            method: "PUT".into(),
            url: "http://h/x".into(),
            status: 400,
            errors: parse_envelope(
                br#"{"errors":[{"code":"DIGEST_INVALID","message":"digest did not match"}]}"#,
            ),
            retry_after: None,
        };
        assert_eq!(
            e.to_string(),
            "PUT http://h/x: HTTP 400: DIGEST_INVALID: digest did not match"
        );
        assert!(!e.is_temporary());
    }
}
