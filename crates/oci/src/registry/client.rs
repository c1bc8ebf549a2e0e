//! A blocking distribution-API client for one registry host: TLS policy, authentication
//! (anonymous, Basic, Bearer with a token cache), retries, and request counters.
//!
//! Authentication is lazy, as in the spec: a request goes out with whatever we know; a `401`
//! carries the challenge, we answer it once and resend. A second `401` means the credentials
//! are wrong and becomes [`RegistryError::AuthFailed`], which names the credential source and
//! never the secret.

use super::auth::{Credential, ResolvedCredential};
use super::challenge;
use super::errors::{RegistryError, is_retryable_status, parse_envelope, redact_url};
use super::retry::{RetryPolicy, parse_retry_after};
use super::token::{self, BearerRealm, TokenCache};
use reqwest::Method;
use reqwest::blocking::{RequestBuilder, Response};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Transport settings. Defaults: TLS verified, 30 s connect timeout, 10 min per request, body
/// included, plus time in proportion to a blob's size ([`request_budget`]: a large layer over a
/// slow link must not time out; a stalled or trickling one does).
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Use `http://` for every host (`--plain-http`).
    pub plain_http: bool,
    /// Skip TLS certificate verification (`--insecure`); HTTPS is still used.
    pub insecure: bool,
    /// Extra PEM root certificates (`--ca-file`), added to the system roots.
    pub ca_file: Option<PathBuf>,
    /// `User-Agent` header.
    pub user_agent: String,
    /// Time allowed for a whole request, body included (`--timeout`); blobs get more in
    /// proportion to their size ([`request_budget`]).
    pub timeout: Duration,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// Retry policy for temporary failures.
    pub retry: RetryPolicy,
    /// Clients shared by every [`Client::new`] made with these options (`catalog mirror`
    /// sets one per end for its run): one HTTP connection pool, auth state and token cache
    /// per registry and credential, instead of new ones (and a new I/O thread) per request
    /// group. `None` (the default): each client stands alone.
    pub shared: Option<ClientPool>,
}

/// Clients kept for reuse, by registry and credential (see [`ClientOptions::shared`]).
/// Cloning shares the pool. A pool belongs to one set of options: the TLS and retry settings
/// of the client that fills a slot are those of the options that carry the pool.
#[derive(Clone, Default)]
pub struct ClientPool(Arc<Mutex<Vec<Client>>>, Arc<Mutex<CredentialCache>>);

/// Credentials resolved per `(registry, repository)`: a credential helper runs once per run,
/// not once per request group.
type CredentialCache = std::collections::HashMap<(String, String), ResolvedCredential>;

impl std::fmt::Debug for ClientPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |v| v.len());
        write!(f, "ClientPool({n} clients)")
    }
}

impl ClientPool {
    /// How many distinct clients the pool holds (for tests and benchmarks).
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |v| v.len())
    }

    /// Whether the pool holds no client yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The credential for `repository` on `registry`: resolved by `resolve` the first time,
    /// remembered after (a failure is not remembered).
    pub fn credential<E>(
        &self,
        registry: &str,
        repository: &str,
        resolve: impl FnOnce() -> Result<ResolvedCredential, E>,
    ) -> Result<ResolvedCredential, E> {
        let key = (registry.to_string(), repository.to_string());
        if let Some(c) = self.1.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(c);
        }
        let c = resolve()?;
        if let Ok(mut m) = self.1.lock() {
            m.insert(key, c.clone());
        }
        Ok(c)
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            plain_http: false,
            insecure: false,
            ca_file: None,
            user_agent: format!("olmpack/{}", env!("CARGO_PKG_VERSION")),
            timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            shared: None,
        }
    }
}

/// True for hosts we (like crane) talk plain HTTP to without being asked: `localhost`, `*.localhost`,
/// `127.0.0.0/8` and `::1`. Those never leave the machine, so TLS buys nothing there.
pub fn is_local_host(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(std::net::IpAddr::V6(v6)) => v6.is_loopback(),
        Err(_) => false,
    }
}

/// Request counters, so tests and benchmarks can prove what a push did (a warm re-push should
/// be a few HEADs and one manifest PUT per tag).
#[derive(Debug, Default)]
pub struct Stats {
    /// HEAD requests sent (including retries).
    pub head: AtomicUsize,
    /// GET requests sent.
    pub get: AtomicUsize,
    /// POST requests sent.
    pub post: AtomicUsize,
    /// PUT requests sent.
    pub put: AtomicUsize,
    /// PATCH requests sent.
    pub patch: AtomicUsize,
    /// Token requests sent.
    pub token: AtomicUsize,
    /// Retries performed.
    pub retries: AtomicUsize,
}

impl Stats {
    /// A snapshot `(head, get, post, put, patch, token, retries)`.
    pub fn snapshot(&self) -> [usize; 7] {
        [
            &self.head,
            &self.get,
            &self.post,
            &self.put,
            &self.patch,
            &self.token,
            &self.retries,
        ]
        .map(|a| a.load(Ordering::Relaxed))
    }
}

/// What the registry asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AuthState {
    /// Nothing learnt yet: send no credentials.
    Unknown,
    /// Basic credentials on every request.
    Basic,
    /// Bearer tokens from this realm.
    Bearer(BearerRealm),
}

/// A request body that can be replayed for a retry.
#[derive(Debug, Clone)]
pub enum Body {
    /// No body.
    Empty,
    /// Bytes in memory (manifests, configs, small blobs).
    Bytes(Vec<u8>),
    /// A byte range of a file, streamed (never read whole into memory).
    File {
        /// The file.
        path: PathBuf,
        /// First byte.
        offset: u64,
        /// Number of bytes.
        len: u64,
        /// Progress bar to advance while sending.
        progress: Option<indicatif::ProgressBar>,
    },
}

/// One request: method, URL (absolute, or a path from [`super::api`]), headers, body, the
/// token scopes it needs, and whether the client may resend it on temporary failures.
#[derive(Debug, Clone)]
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// URL, or a path from [`super::api`] (resolved against the registry).
    pub url: String,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// Body.
    pub body: Body,
    /// Token scopes (only used under Bearer auth).
    pub scopes: Vec<String>,
    /// Resend on connection errors, 408, 429 and 5xx. Off for upload bodies, whose session
    /// state is unknown after a failure: push retries those from a fresh session instead.
    pub retry: bool,
    /// The size of the body expected in answer (a blob's), for the request's deadline.
    pub expect_bytes: u64,
}

impl Request {
    /// A request with no body that may be retried.
    pub fn new(method: Method, url: impl Into<String>, scopes: &[String]) -> Self {
        Request {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: Body::Empty,
            scopes: scopes.to_vec(),
            retry: true,
            expect_bytes: 0,
        }
    }

    /// Says how large the answer's body will be (a blob's size), so its deadline allows for it.
    pub fn expecting(mut self, bytes: u64) -> Self {
        self.expect_bytes = bytes;
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: Body) -> Self {
        self.body = body;
        self
    }

    /// Disables client-level retries.
    pub fn no_retry(mut self) -> Self {
        self.retry = false;
        self
    }
}

/// A client for one registry host.
pub struct Client {
    http: reqwest::blocking::Client,
    /// The client token requests go through: [`token_redirects`] keeps a refresh token in a
    /// POST body from following a 307 or 308 to another origin.
    token_http: reqwest::blocking::Client,
    base: String,
    registry: String,
    credential: ResolvedCredential,
    retry: RetryPolicy,
    timeout: Duration,
    state: Arc<Mutex<AuthState>>,
    tokens: Arc<TokenCache>,
    /// Manifests read through this client (and every handle sharing it), by digest.
    manifests: Arc<super::cache::ManifestCache>,
    /// Request counters.
    pub stats: Stats,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("credential_source", &self.credential.source)
            .finish()
    }
}

/// The redirects a token request follows: at most 10, and no 307 or 308 to another origin.
/// Those two keep the method and the body, and a token POST's body is the refresh token
/// (reqwest drops the Authorization header across origins, but not a body). A 301, 302 or
/// 303 turns a POST into a bodiless GET, and a GET token request sends its Basic
/// credentials in the header reqwest drops.
fn token_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let origin = |u: &reqwest::Url| {
            (
                u.scheme().to_string(),
                u.host_str().map(str::to_string),
                u.port_or_known_default(),
            )
        };
        let moved = attempt
            .previous()
            .last()
            .is_some_and(|from| origin(from) != origin(attempt.url()));
        if keeps_body && moved {
            attempt
                .error("the token service redirected the request, body and all, to another origin")
        } else if attempt.previous().len() >= 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

impl Client {
    /// Builds a client for `registry` (a reference's host, e.g. `quay.io`, `127.0.0.1:5000`;
    /// Docker Hub is dialled at its API host) with a resolved credential.
    ///
    /// With [`ClientOptions::shared`], a client already made for the same registry and
    /// credential is shared instead (its connections, auth state and tokens; the request
    /// counters of the returned handle start at zero).
    pub fn new(
        registry: &str,
        credential: ResolvedCredential,
        opts: &ClientOptions,
    ) -> Result<Client, RegistryError> {
        let Some(pool) = &opts.shared else {
            return Client::build_new(registry, credential, opts);
        };
        let mut clients = pool.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients
            .iter()
            .find(|c| c.registry == registry && c.credential == credential)
        {
            return Ok(c.share());
        }
        let client = Client::build_new(registry, credential, opts)?;
        let handle = client.share();
        clients.push(client);
        Ok(handle)
    }

    /// A handle on the same connections, auth state and token cache, with its own counters.
    fn share(&self) -> Client {
        Client {
            http: self.http.clone(),
            token_http: self.token_http.clone(),
            base: self.base.clone(),
            registry: self.registry.clone(),
            credential: self.credential.clone(),
            retry: self.retry.clone(),
            timeout: self.timeout,
            state: Arc::clone(&self.state),
            tokens: Arc::clone(&self.tokens),
            manifests: Arc::clone(&self.manifests),
            stats: Stats::default(),
        }
    }

    fn build_new(
        registry: &str,
        credential: ResolvedCredential,
        opts: &ClientOptions,
    ) -> Result<Client, RegistryError> {
        let api_host = if registry == crate::reference::DOCKER_HUB {
            crate::reference::DOCKER_HUB_API
        } else {
            registry
        };
        // Loopback hosts get plain HTTP like crane, unless a TLS option says the user runs TLS
        // there (a test CA or --insecure only make sense over HTTPS).
        let tls_hint = opts.ca_file.is_some() || opts.insecure;
        let scheme = if opts.plain_http || (is_local_host(registry) && !tls_hint) {
            "http"
        } else {
            "https"
        };
        // One TLS setting for both clients: the CA file is read, and the roots loaded, once.
        let tls = super::tls::Tls::new(opts.ca_file.as_deref(), opts.insecure)?;
        let builder = || {
            tls.builder()
                .user_agent(opts.user_agent.clone())
                .timeout(opts.timeout)
                .connect_timeout(opts.connect_timeout)
        };
        let built = |b: reqwest::blocking::ClientBuilder| {
            b.build().map_err(|e| RegistryError::Transport {
                method: "BUILD".into(),
                url: registry.into(),
                cause: e.without_url().into(),
            })
        };
        let http = built(builder())?;
        let token_http = built(builder().redirect(token_redirects()))?;
        Ok(Client {
            http,
            token_http,
            base: format!("{scheme}://{api_host}"),
            registry: registry.to_string(),
            credential,
            retry: opts.retry.clone(),
            timeout: opts.timeout,
            state: Arc::new(Mutex::new(AuthState::Unknown)),
            tokens: Arc::new(TokenCache::default()),
            manifests: Arc::default(),
            stats: Stats::default(),
        })
    }

    /// The registry name this client talks to.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The manifests this client has read (see [`super::cache`]).
    pub fn manifest_cache(&self) -> &super::cache::ManifestCache {
        &self.manifests
    }

    /// The retry policy, shared with blob-level retries in push.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// Where the credential came from.
    pub fn credential_source(&self) -> String {
        self.credential.source.to_string()
    }

    /// Resolves a `Location` header (absolute or relative) to a full URL.
    pub fn resolve_location(&self, location: &str) -> String {
        if location.starts_with("http://") || location.starts_with("https://") {
            location.to_string()
        } else if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            format!("{}/{location}", self.base)
        }
    }

    fn auth_state(&self) -> AuthState {
        self.state
            .lock()
            .map(|s| s.clone())
            .unwrap_or(AuthState::Unknown)
    }

    fn set_auth_state(&self, s: AuthState) {
        if let Ok(mut g) = self.state.lock() {
            *g = s;
        }
    }

    fn build(&self, req: &Request, url: &str) -> Result<RequestBuilder, RegistryError> {
        // One deadline for the whole request, body included (reqwest's per-request timeout;
        // the client-wide one only bounds each read, which a trickling server defeats).
        let upload = match &req.body {
            Body::Empty => 0,
            Body::Bytes(b) => b.len() as u64,
            Body::File { len, .. } => *len,
        };
        let budget = request_budget(self.timeout, req.expect_bytes.saturating_add(upload));
        let mut rb = self.http.request(req.method.clone(), url).timeout(budget);
        for (k, v) in &req.headers {
            rb = rb.header(*k, v.as_str());
        }
        // Credentials go only to the registry itself: an absolute upload `Location` pointing at
        // another scheme, host or port (storage back-ends, or a hostile registry) gets none.
        let state = if same_origin(url, &self.base) {
            self.auth_state()
        } else {
            AuthState::Unknown
        };
        match state {
            AuthState::Unknown => {}
            AuthState::Basic => {
                if let Credential::Basic { username, password } = &self.credential.credential {
                    rb = rb.basic_auth(username, Some(password.expose()));
                }
            }
            AuthState::Bearer(realm) => {
                let tok = match self.tokens.get(&req.scopes) {
                    Some(t) => t,
                    None => {
                        // A registry reached over TLS must not have its credentials sent to a
                        // plain-HTTP token service.
                        if self.base.starts_with("https://")
                            && !token::realm_is_https(&realm.realm)
                            && !matches!(self.credential.credential, Credential::Anonymous)
                        {
                            return Err(RegistryError::AuthFailed {
                                host: self.registry.clone(),
                                source_desc: self.credential.source.to_string(),
                                detail: format!(
                                    "the token service {} is plain HTTP while the registry uses HTTPS: refusing to send credentials in clear text",
                                    crate::registry::errors::redact_url(&realm.realm)
                                ),
                            });
                        }
                        self.stats.token.fetch_add(1, Ordering::Relaxed);
                        let (t, life) = token::fetch(
                            &self.token_http,
                            self.timeout,
                            &realm,
                            &req.scopes,
                            &self.credential.credential,
                            &self.registry,
                            &self.credential.source.to_string(),
                        )?;
                        self.tokens.put(&req.scopes, t.clone(), life);
                        t
                    }
                };
                rb = rb.bearer_auth(tok.expose());
            }
        }
        rb = match &req.body {
            Body::Empty => rb,
            Body::Bytes(b) => rb
                .header(reqwest::header::CONTENT_LENGTH, b.len())
                .body(b.clone()),
            Body::File {
                path,
                offset,
                len,
                progress,
            } => {
                let mut f = std::fs::File::open(path)
                    .map_err(|e| RegistryError::io("cannot open blob", path, e))?;
                f.seek(SeekFrom::Start(*offset))
                    .map_err(|e| RegistryError::io("cannot seek blob", path, e))?;
                let reader = f.take(*len);
                let body = match progress {
                    Some(pb) => reqwest::blocking::Body::sized(pb.wrap_read(reader), *len),
                    None => reqwest::blocking::Body::sized(reader, *len),
                };
                rb.header(reqwest::header::CONTENT_LENGTH, *len).body(body)
            }
        };
        Ok(rb)
    }

    fn count(&self, m: &Method) {
        let c = match *m {
            Method::HEAD => &self.stats.head,
            Method::GET => &self.stats.get,
            Method::POST => &self.stats.post,
            Method::PUT => &self.stats.put,
            Method::PATCH => &self.stats.patch,
            _ => return,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Sends a request, answering one auth challenge and retrying temporary failures per the
    /// policy. Returns the response for any status except 401 (→ `AuthFailed`) and retryable
    /// statuses once attempts are exhausted (→ `Status`); callers check the status they expect
    /// with [`Client::expect`].
    pub fn send(&self, req: &Request) -> Result<Response, RegistryError> {
        let url = if req.url.starts_with("http://") || req.url.starts_with("https://") {
            req.url.clone()
        } else {
            format!("{}{}", self.base, req.url)
        };
        let max = if req.retry {
            self.retry.max_attempts.max(1)
        } else {
            1
        };
        let mut attempt = 0;
        let mut challenged = false;
        loop {
            attempt += 1;
            self.count(&req.method);
            let rb = self.build(req, &url)?;
            let result = rb.send();
            let response = match result {
                Ok(r) => r,
                Err(e) => {
                    let err = RegistryError::Transport {
                        method: req.method.to_string(),
                        url: redact_url(&url),
                        cause: e.without_url().into(),
                    };
                    if attempt < max
                        && (err.is_temporary()
                            || (self.retry.retry_refused && err.is_refused_by_listener_absence()))
                    {
                        let what = format!("{} {}", req.method, redact_url(&url));
                        // The error already names the request; say only its cause.
                        let why = super::retry::why(&err, &what);
                        self.sleep_before_retry(&what, &why, attempt, max, None);
                        continue;
                    }
                    return Err(err);
                }
            };
            let status = response.status().as_u16();
            let redirected_away = reqwest::Url::parse(&url)
                .map_or(true, |asked| asked.origin() != response.url().origin());
            if status == 401 && redirected_away {
                // A redirect target (blob storage, or a host a hostile registry points at)
                // asking for credentials gets none: challenges are taken only from the
                // registry's own answers, as containers/image takes them only from its ping.
                return Err(RegistryError::AuthFailed {
                    host: self.registry.clone(),
                    source_desc: self.credential.source.to_string(),
                    detail: format!(
                        "HTTP 401 from {}, where the registry redirected the request: credentials are sent only to the registry itself",
                        response.url().origin().ascii_serialization()
                    ),
                });
            }
            if status == 401 {
                let header = response
                    .headers()
                    .get(reqwest::header::WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let before = self.auth_state();
                if !challenged {
                    challenged = true;
                    let next = header.as_deref().and_then(challenge::pick).and_then(|c| {
                        match c.scheme.as_str() {
                            "bearer" => c.param("realm").map(|realm| {
                                AuthState::Bearer(BearerRealm {
                                    realm: realm.to_string(),
                                    service: c.param("service").map(str::to_string),
                                })
                            }),
                            "basic" => Some(AuthState::Basic),
                            _ => None,
                        }
                    });
                    if let Some(next) = next {
                        let usable = match (&next, &self.credential.credential) {
                            (AuthState::Basic, Credential::Basic { .. }) => true,
                            (AuthState::Basic, _) => false,
                            (AuthState::Bearer(_), _) => true,
                            _ => false,
                        };
                        if usable && (next != before || matches!(next, AuthState::Bearer(_))) {
                            self.tokens.forget(&req.scopes);
                            self.set_auth_state(next);
                            attempt -= 1; // answering a challenge is not a retry
                            continue;
                        }
                    }
                }
                let errors = parse_envelope(&read_capped(response, 64 * 1024));
                let detail = match errors.first() {
                    Some(e) => format!("HTTP 401 {}: {}", e.code, e.message),
                    None => "HTTP 401".to_string(),
                };
                return Err(RegistryError::AuthFailed {
                    host: self.registry.clone(),
                    source_desc: self.credential.source.to_string(),
                    detail,
                });
            }
            if is_retryable_status(status) {
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| parse_retry_after(v, SystemTime::now()));
                if attempt < max {
                    drop(response);
                    let what = format!("{} {}", req.method, redact_url(&url));
                    let why = match retry_after {
                        Some(ra) => format!("HTTP {status} (Retry-After {} s)", ra.as_secs()),
                        None => format!("HTTP {status}"),
                    };
                    self.sleep_before_retry(&what, &why, attempt, max, retry_after);
                    continue;
                }
                return Err(self.status_error(&req.method, &url, response));
            }
            return Ok(response);
        }
    }

    fn sleep_before_retry(
        &self,
        what: &str,
        why: &str,
        attempt: u32,
        max: u32,
        retry_after: Option<Duration>,
    ) {
        self.stats.retries.fetch_add(1, Ordering::Relaxed);
        super::retry::wait_before_retry(&self.retry, what, why, attempt, max, retry_after);
    }

    /// Turns an unexpected response into a [`RegistryError::Status`] with the parsed envelope.
    pub fn status_error(&self, method: &Method, url: &str, response: Response) -> RegistryError {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let body = read_capped(response, 64 * 1024);
        RegistryError::Status {
            method: method.to_string(),
            url: redact_url(url),
            status,
            errors: parse_envelope(&body),
            retry_after,
        }
    }

    /// Sends and checks the status is one of `ok`; anything else becomes an error.
    pub fn expect(&self, req: &Request, ok: &[u16]) -> Result<Response, RegistryError> {
        let resp = self.send(req)?;
        if ok.contains(&resp.status().as_u16()) {
            Ok(resp)
        } else {
            let url = if req.url.starts_with("http") {
                req.url.clone()
            } else {
                format!("{}{}", self.base, req.url)
            };
            Err(self.status_error(&req.method, &url, resp))
        }
    }
}

/// `scheme://host:port` of a URL (the whole string when it has no path).
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url, |end| &url[..after_scheme + end])
}

/// Whether `url` has the scheme, host and port of `base` (a URL or a `scheme://host:port`).
fn same_origin(url: &str, base: &str) -> bool {
    origin(url) == origin(base)
}

/// Reads at most `cap` bytes of a response body (error bodies only; never trusted to be small,
/// nor quick: the read ends at the request's deadline, see [`ClientOptions::timeout`]).
pub fn read_capped(response: Response, cap: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    let _ = response.take(cap).read_to_end(&mut buf);
    buf
}

/// The slowest transfer rate a large body is given time for beyond [`ClientOptions::timeout`]:
/// a blob of N bytes may take the timeout plus N / 64 KiB seconds, so a server sending a byte
/// now and then cannot hold a run forever, and a large layer over a slow link still arrives.
pub const MIN_TRANSFER_RATE: u64 = 64 * 1024;

/// The time allowed for a whole request (connect, send, answer and body) moving `bytes` of
/// body either way.
pub fn request_budget(timeout: Duration, bytes: u64) -> Duration {
    timeout.saturating_add(Duration::from_secs(bytes / MIN_TRANSFER_RATE))
}

/// A response header as a string.
pub fn header(response: &Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Checks a path exists (helper shared by sources that take file paths).
pub fn require_file(path: &Path) -> Result<(), RegistryError> {
    std::fs::metadata(path)
        .map(|_| ())
        .map_err(|e| RegistryError::io("cannot read", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_use_plain_http() {
        for h in [
            "localhost",
            "localhost:5000",
            "reg.localhost:1",
            "127.0.0.1:5000",
            "127.1.2.3",
            "[::1]:5000",
        ] {
            assert!(is_local_host(h), "{h}");
        }
        for h in [
            "quay.io",
            "10.0.0.1:5000",
            "localhost.example.com",
            "[2001:db8::1]:5000",
        ] {
            assert!(!is_local_host(h), "{h}");
        }
    }
}
