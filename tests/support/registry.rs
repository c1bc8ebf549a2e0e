//! Test harness for the registry tests and the push benchmark: the real CNCF distribution
//! registry (`/usr/bin/docker-registry`) on 127.0.0.1 with a free port and temp storage, in
//! three configurations, plus a token endpoint, a fault-injecting proxy, and hand-made bundle
//! images (so these tests do not depend on the image builder).
//!
//! Every server started here is stopped by a `Drop` guard; every wait is bounded.
#![allow(dead_code)]

use olmpack::image::{Blob, BlobSource, Descriptor, Image};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const USER: &str = "olm";
pub const PASSWORD: &str = "olm-Secret-42";
pub const HTPASSWD: &str = include_str!("../fixtures/registry/htpasswd");

/// Which registry configuration to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Plain HTTP, no auth.
    Plain,
    /// TLS (test CA) plus htpasswd Basic auth.
    TlsBasic,
    /// `silly` bearer auth with our token endpoint.
    Token,
    /// TLS (test CA) plus `silly` bearer auth whose token endpoint is plain HTTP.
    TlsTokenOverHttp,
}

/// A loopback port no server listens on, for connection-refused cases: port 1 (tcpmux), which
/// nothing on a Debian machine serves and no test binds. A free port bound and let go is not one:
/// the kernel may hand it to a registry or server another test starts meanwhile.
pub const CLOSED_PORT: u16 = 1;

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    l.local_addr().expect("local addr").port()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn sha256(b: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(b)))
}

/// A running registry; killed on drop.
pub struct Registry {
    child: Child,
    pub port: u16,
    pub host: String,
    pub dir: tempfile::TempDir,
    pub ca: Option<PathBuf>,
    pub token: Option<TokenServer>,
    pub mode: Mode,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Generates a CA and a leaf certificate for 127.0.0.1 in `dir`; returns the CA path.
pub fn make_certs(dir: &Path) -> PathBuf {
    // `openssl req` with a new unencrypted P-256 key, and then `more`.
    let req_new_key = |more: &[&str]| {
        let mut args = vec![
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        args.extend(more);
        openssl(dir, &args);
    };
    req_new_key(&[
        "-x509",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=olmpack test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    req_new_key(&[
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(dir.join("leaf.ext"), "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n").expect("write ext");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ],
    );
    dir.join("ca.crt")
}

/// Whether process `pid` holds the listening TCP socket of 127.0.0.1:`port` (read from
/// `/proc/net/tcp` and the process's file descriptors): a registry that lost the race for its
/// port to another server must not be mistaken for that server.
pub fn listens_on(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    let local = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 9 && f[1] == local && f[3] == "0A").then(|| f[9].to_string())
        })
        .collect();
    if inodes.is_empty() {
        return false;
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|t| {
            let t = t.to_string_lossy();
            inodes.iter().any(|i| t == format!("socket:[{i}]"))
        })
    })
}

impl Registry {
    /// Starts a registry on a free port. The port is probed and released before the registry
    /// binds it, so with many registries starting at once another server can take it first:
    /// then the registry exits ("address already in use") and is started again on another
    /// port (up to 8 tries), and it only counts as started once its own process holds the
    /// listening socket.
    pub fn start(mode: Mode) -> Registry {
        Registry::start_with(mode, false)
    }

    /// A registry that allows `DELETE` of manifests (`REGISTRY_STORAGE_DELETE_ENABLED=true`,
    /// distribution's switch; off by default, where a deletion is answered 405 UNSUPPORTED).
    pub fn start_deleting(mode: Mode) -> Registry {
        Registry::start_with(mode, true)
    }

    fn start_with(mode: Mode, deletes: bool) -> Registry {
        let mut last = String::new();
        for _ in 0..8 {
            match Registry::try_start(mode, deletes) {
                Ok(reg) => return reg,
                Err(why) => last = why,
            }
        }
        panic!("docker-registry did not start in 8 tries: {last}");
    }

    fn try_start(mode: Mode, deletes: bool) -> Result<Registry, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let d = dir.path();
        let mut cfg = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  maintenance:\n    uploadpurging:\n      enabled: false\nhttp:\n  addr: 127.0.0.1:{port}\n",
            d.join("storage").display()
        );
        let mut ca = None;
        let mut token = None;
        match mode {
            Mode::Plain => {}
            Mode::TlsBasic => {
                ca = Some(make_certs(d));
                std::fs::write(d.join("htpasswd"), HTPASSWD).expect("write htpasswd");
                cfg.push_str(&format!(
                    "  tls:\n    certificate: {}\n    key: {}\nauth:\n  htpasswd:\n    realm: olmpack-test\n    path: {}\n",
                    d.join("server.crt").display(),
                    d.join("server.key").display(),
                    d.join("htpasswd").display()
                ));
            }
            Mode::TlsTokenOverHttp => {
                ca = Some(make_certs(d));
                let t = TokenServer::start(USER, PASSWORD);
                cfg.push_str(&format!(
                    "  tls:\n    certificate: {}\n    key: {}\nauth:\n  silly:\n    realm: http://127.0.0.1:{}/token\n    service: test\n",
                    d.join("server.crt").display(),
                    d.join("server.key").display(),
                    t.port
                ));
                token = Some(t);
            }
            Mode::Token => {
                let t = TokenServer::start(USER, PASSWORD);
                cfg.push_str(&format!(
                    "auth:\n  silly:\n    realm: http://127.0.0.1:{}/token\n    service: test\n",
                    t.port
                ));
                token = Some(t);
            }
        }
        std::fs::write(d.join("config.yml"), cfg).expect("write config");
        let mut command = Command::new("/usr/bin/docker-registry");
        if deletes {
            command.env("REGISTRY_STORAGE_DELETE_ENABLED", "true");
        }
        let child = command
            .arg("serve")
            .arg(d.join("config.yml"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(d.join("registry.log")).expect("log file"),
            ))
            .spawn()
            .expect("start docker-registry");
        let mut reg = Registry {
            child,
            port,
            host: format!("127.0.0.1:{port}"),
            dir,
            ca,
            token,
            mode,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = reg.child.try_wait() {
                let log = std::fs::read_to_string(reg.dir.path().join("registry.log"))
                    .unwrap_or_default();
                if log.contains("address already in use") {
                    return Err(format!("port {port} taken by another server: {log}"));
                }
                panic!("docker-registry exited early ({status}): {log}");
            }
            if listens_on(reg.child.id(), port) && TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "registry did not listen on {port} within 15 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(reg)
    }

    /// `host/repo:tag`.
    pub fn reference(&self, repo: &str, tag: &str) -> String {
        format!("{}/{repo}:{tag}", self.host)
    }

    /// The olmpack flags that reach this registry: `--creds USER:PASSWORD` when it asks for
    /// them, `--ca-file` when it serves TLS.
    pub fn cli_flags(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.mode != Mode::Plain {
            v.push("--creds".to_string());
            v.push(format!("{USER}:{PASSWORD}"));
        }
        if let Some(ca) = &self.ca {
            v.push("--ca-file".to_string());
            v.push(ca.display().to_string());
        }
        v
    }
}

/// One request seen by the token endpoint.
#[derive(Debug, Clone)]
pub struct TokenCall {
    pub method: String,
    pub scopes: Vec<String>,
    pub service: Option<String>,
    pub authorized: bool,
    pub grant_type: Option<String>,
}

/// A tiny token endpoint: GET with Basic credentials, or POST with a refresh token
/// (`refresh-<PASSWORD>`); records every call.
pub struct TokenServer {
    pub port: u16,
    pub calls: Arc<Mutex<Vec<TokenCall>>>,
    _accept: AcceptLoop,
}

/// The thread accepting a loopback server's connections on `port`: dropped, it sets `stop`,
/// wakes the waiting `accept` with one connection and joins the thread.
struct AcceptLoop {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for AcceptLoop {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(b'?'));
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).to_string()
}

fn parse_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (url_decode(k), url_decode(v))
        })
        .collect()
}

/// Request line, lowercased headers, body.
pub type RawRequest = (String, Vec<(String, String)>, Vec<u8>);

/// Reads an HTTP request head and body (Content-Length only).
pub fn read_request(stream: &mut BufReader<TcpStream>) -> Option<RawRequest> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = stream.read_line(&mut line).ok()?;
        if n == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut lines = head.lines();
    let request_line = lines.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).ok()?;
    Some((request_line, headers, body))
}

impl TokenServer {
    pub fn start(user: &str, password: &str) -> TokenServer {
        use base64::Engine;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind token server");
        let port = listener.local_addr().expect("addr").port();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        );
        let refresh = format!("refresh-{password}");
        let (calls2, stop2) = (calls.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let n = AtomicUsize::new(0);
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                let mut reader = BufReader::new(conn);
                while let Some((line, headers, body)) = read_request(&mut reader) {
                    let mut parts = line.split_whitespace();
                    let method = parts.next().unwrap_or("").to_string();
                    let target = parts.next().unwrap_or("").to_string();
                    let query = target
                        .split_once('?')
                        .map(|(_, q)| q.to_string())
                        .unwrap_or_default();
                    let auth = headers
                        .iter()
                        .find(|(k, _)| k == "authorization")
                        .map(|(_, v)| v.clone());
                    let (pairs, ok) = if method == "POST" {
                        let p = parse_pairs(&String::from_utf8_lossy(&body));
                        let ok = p
                            .iter()
                            .any(|(k, v)| k == "grant_type" && v == "refresh_token")
                            && p.iter().any(|(k, v)| k == "refresh_token" && *v == refresh);
                        (p, ok)
                    } else {
                        (
                            parse_pairs(&query),
                            auth.as_deref() == Some(expected.as_str()),
                        )
                    };
                    let scopes: Vec<String> = if method == "POST" {
                        pairs
                            .iter()
                            .filter(|(k, _)| k == "scope")
                            .flat_map(|(_, v)| v.split(' ').map(str::to_string).collect::<Vec<_>>())
                            .collect()
                    } else {
                        pairs
                            .iter()
                            .filter(|(k, _)| k == "scope")
                            .map(|(_, v)| v.clone())
                            .collect()
                    };
                    calls2.lock().expect("lock").push(TokenCall {
                        method: method.clone(),
                        scopes,
                        service: pairs
                            .iter()
                            .find(|(k, _)| k == "service")
                            .map(|(_, v)| v.clone()),
                        authorized: ok,
                        grant_type: pairs
                            .iter()
                            .find(|(k, _)| k == "grant_type")
                            .map(|(_, v)| v.clone()),
                    });
                    let i = n.fetch_add(1, Ordering::SeqCst);
                    let (status, body) = if ok {
                        (
                            "200 OK",
                            format!("{{\"access_token\":\"tok-{i}\",\"expires_in\":300}}"),
                        )
                    } else {
                        ("401 Unauthorized", "{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"bad credentials\"}]}".to_string())
                    };
                    let resp = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if reader.get_mut().write_all(resp.as_bytes()).is_err() {
                        break;
                    }
                }
            }
        });
        TokenServer {
            port,
            calls,
            _accept: AcceptLoop {
                port,
                stop,
                thread: Some(thread),
            },
        }
    }

    pub fn calls(&self) -> Vec<TokenCall> {
        self.calls.lock().expect("lock").clone()
    }
}

/// What the proxy does with one request.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Forward unchanged.
    Pass,
    /// Read half the body, then close the connection without answering.
    Drop,
    /// Answer with this status and headers without forwarding.
    Status(u16, Vec<(String, String)>),
    /// Forward, then flip the last byte of the response body.
    Corrupt,
    /// Forward, but send only half the response body, then close.
    Truncate,
    /// Forward as a request for this path instead (a registry, or anyone on the path, answering
    /// a manifest request with another image: the tag swapped between two requests).
    Path(String),
}

/// A request as the proxy saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub body_len: usize,
}

type Rule = Box<dyn Fn(&Seen, usize) -> Fault + Send + Sync>;

/// A loopback HTTP proxy in front of a plain registry: one request per connection
/// (`Connection: close` both ways), faults chosen per request by a rule.
pub struct Proxy {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    _accept: AcceptLoop,
}

impl Proxy {
    pub fn start(
        upstream: u16,
        rule: impl Fn(&Seen, usize) -> Fault + Send + Sync + 'static,
    ) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let rule: Arc<Rule> = Arc::new(Box::new(rule));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                // One connection at a time keeps the request order deterministic.
                handle(conn, upstream, &rule, &seen2);
            }
        });
        Proxy {
            port,
            seen,
            _accept: AcceptLoop {
                port,
                stop,
                thread: Some(thread),
            },
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    pub fn count(&self, method: &str, path_contains: &str) -> usize {
        self.seen()
            .iter()
            .filter(|s| s.method == method && s.path.contains(path_contains))
            .count()
    }
}

fn handle(conn: TcpStream, upstream: u16, rule: &Rule, seen: &Mutex<Vec<Seen>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(conn);
    // Read the head ourselves so Drop can stop halfway through the body.
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let request_line = head.lines().next().unwrap_or("").to_string();
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let len = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let s = Seen {
        method,
        path,
        body_len: len,
    };
    let index = {
        let mut g = seen.lock().expect("lock");
        g.push(s.clone());
        g.len() - 1
    };
    let fault = rule(&s, index);
    if let Fault::Drop = fault {
        let mut half = vec![0u8; len / 2];
        let _ = reader.read_exact(&mut half);
        let _ = reader.get_ref().shutdown(Shutdown::Both);
        return;
    }
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut client = reader.into_inner();
    if let Fault::Status(code, headers) = &fault {
        let mut resp =
            format!("HTTP/1.1 {code} Injected\r\nContent-Length: 0\r\nConnection: close\r\n");
        for (k, v) in headers {
            resp.push_str(&format!("{k}: {v}\r\n"));
        }
        resp.push_str("\r\n");
        let _ = client.write_all(resp.as_bytes());
        return;
    }
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let _ = up.set_read_timeout(Some(Duration::from_secs(30)));
    let mut new_head = String::new();
    for (i, l) in head.lines().enumerate() {
        let lower = l.to_ascii_lowercase();
        if lower.starts_with("connection:") || lower.starts_with("host:") {
            continue;
        }
        match &fault {
            Fault::Path(p) if i == 0 => new_head.push_str(&l.replacen(&s.path, p, 1)),
            _ => new_head.push_str(l),
        }
        new_head.push_str("\r\n");
    }
    new_head.push_str(&format!(
        "Host: 127.0.0.1:{upstream}\r\nConnection: close\r\n\r\n"
    ));
    if up.write_all(new_head.as_bytes()).is_err() || up.write_all(&body).is_err() {
        return;
    }
    let mut resp = Vec::new();
    let _ = up.read_to_end(&mut resp);
    let Some(split) = resp.windows(4).position(|w| w == b"\r\n\r\n") else {
        return;
    };
    let (rhead, rbody) = resp.split_at(split + 4);
    let mut rbody = rbody.to_vec();
    if let Fault::Corrupt = fault
        && let Some(last) = rbody.last_mut()
    {
        *last ^= 0xff;
    }
    let rhead = String::from_utf8_lossy(rhead);
    let mut out = String::new();
    for l in rhead.trim_end().lines() {
        if l.to_ascii_lowercase().starts_with("connection:") {
            continue;
        }
        // Location headers point at the registry; rewrite them to go through us.
        out.push_str(&l.replace(
            &format!("127.0.0.1:{upstream}"),
            &format!(
                "127.0.0.1:{}",
                client.local_addr().map(|a| a.port()).unwrap_or(0)
            ),
        ));
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    if let Fault::Truncate = fault {
        rbody.truncate(rbody.len() / 2);
    }
    let _ = client.write_all(out.as_bytes());
    let _ = client.write_all(&rbody);
    let _ = client.flush();
}

/// A deterministic gzip tar of `files` (with parent dir entries).
pub fn gzip_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut dirs: Vec<String> = Vec::new();
    for (path, data) in files {
        if let Some((dir, _)) = path.rsplit_once('/')
            && !dirs.contains(&dir.to_string())
        {
            dirs.push(dir.to_string());
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Directory);
            h.set_path(format!("{dir}/")).expect("path");
            h.set_mode(0o755);
            h.set_size(0);
            h.set_mtime(0);
            h.set_cksum();
            b.append(&h, &[][..]).expect("append dir");
        }
        let mut h = tar::Header::new_gnu();
        h.set_path(path).expect("path");
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        h.set_mtime(0);
        h.set_cksum();
        b.append(&h, *data).expect("append file");
    }
    let tar = b.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    gz.write_all(&tar).expect("gzip");
    gz.finish().expect("gzip")
}

pub const ANNOTATIONS: &str = "annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: testop\n";

/// The files of the test bundle: a CSV-ish manifest, plus `extra` pseudo-random bytes in
/// `manifests/blob.bin` (to make a larger image that gzip cannot shrink).
pub fn bundle_files(extra: usize) -> Vec<(String, Vec<u8>)> {
    let mut v = vec![
        ("manifests/x.yaml".to_string(), b"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: testop.v0.1.0\nspec:\n  version: 0.1.0\n".to_vec()),
        ("manifests/crd.yaml".to_string(), "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n# padding\n".repeat(40).into_bytes()),
    ];
    if extra > 0 {
        let mut x: u64 = 0x1234_5678_9abc_def0;
        let bytes: Vec<u8> = (0..extra)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x & 0xff) as u8
            })
            .collect();
        v.push(("manifests/blob.bin".to_string(), bytes));
    }
    v.push((
        "metadata/annotations.yaml".to_string(),
        ANNOTATIONS.as_bytes().to_vec(),
    ));
    v
}

/// Writes a credential file in the format docker's `config.json` and containers' `auth.json`
/// share: one `auths` entry for `host` with `user:password` base64-encoded, as `docker login`
/// writes it.
pub fn write_auth_file(path: &Path, host: &str, user: &str, password: &str) {
    use base64::Engine;
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let body = serde_json::json!({ "auths": { host: { "auth": auth } } });
    std::fs::write(path, body.to_string()).expect("write the auth file");
}

/// Labels matching [`ANNOTATIONS`] (or, with `package`, a different package label).
pub fn labels(package: &str) -> serde_json::Value {
    serde_json::json!({
        "operators.operatorframework.io.bundle.channels.v1": "alpha",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": package,
    })
}

/// Builds a two-layer OCI bundle image (manifests/ then metadata/) with layers in files under
/// `dir`.
pub fn bundle_image(dir: &Path, extra: usize, package_label: &str) -> Image {
    let files = bundle_files(extra);
    let manifests: Vec<(&str, &[u8])> = files
        .iter()
        .filter(|(p, _)| p.starts_with("manifests/"))
        .map(|(p, d)| (p.as_str(), d.as_slice()))
        .collect();
    let metadata: Vec<(&str, &[u8])> = files
        .iter()
        .filter(|(p, _)| p.starts_with("metadata/"))
        .map(|(p, d)| (p.as_str(), d.as_slice()))
        .collect();
    image_from_layers(
        dir,
        &[manifests, metadata],
        labels(package_label),
        serde_json::json!({}),
    )
}

/// Builds an OCI image from file sets (one gzip layer each), with `labels` and extra `config`
/// fields (e.g. `Cmd`) merged into the config's `config` object.
pub fn image_from_layers(
    dir: &Path,
    sets: &[Vec<(&str, &[u8])>],
    labels: serde_json::Value,
    extra_config: serde_json::Value,
) -> Image {
    let gz: Vec<Vec<u8>> = sets.iter().map(|set| gzip_tar(set)).collect();
    image_from_gz_layers(dir, &gz, labels, extra_config)
}

/// The gzip layer `gz`, read from `path` (where it is written).
pub fn gz_file_layer(gz: &[u8], path: &Path) -> Blob {
    Blob {
        descriptor: Descriptor {
            media_type: "application/vnd.oci.image.layer.v1.tar+gzip".into(),
            digest: sha256(gz),
            size: gz.len() as u64,
        },
        source: BlobSource::File(path.to_path_buf()),
    }
}

/// The diff_id of the gzip layer `gz`: the sha256 of it gunzipped.
pub fn diff_id(gz: &[u8]) -> String {
    let mut d = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut d)
        .expect("gunzip");
    sha256(&d)
}

/// Pushes the multi-platform `index` to `reference` with olmpack's own sink, silently.
pub fn push_index(index: &olmpack::image::ImageIndex, reference: &str) {
    olmpack::transport::sink::push(
        olmpack::image::Artifact::Index(index),
        &[reference.to_string()],
        &olmpack::transport::RegistryOptions::default(),
        &olmpack::registry::push::PushOptions {
            progress: olmpack::registry::push::Progress::Silent,
            ..Default::default()
        },
    )
    .expect("push index");
}

/// [`image_from_layers`] from gzip layers as they are (crafted tars: links, odd headers).
pub fn image_from_gz_layers(
    dir: &Path,
    gz_layers: &[Vec<u8>],
    labels: serde_json::Value,
    extra_config: serde_json::Value,
) -> Image {
    let mut layers = Vec::new();
    let mut diff_ids = Vec::new();
    for (i, gz) in gz_layers.iter().enumerate() {
        let mut dec = Vec::new();
        // A crafted layer may not decompress to its end, or declare gigabytes: its diff_id is
        // then of what decompressed within 64 MiB (readers do not check diff_ids).
        let _ = flate2::read::GzDecoder::new(&gz[..])
            .take(64 << 20)
            .read_to_end(&mut dec);
        diff_ids.push(sha256(&dec));
        let path = dir.join(format!("layer{i}.tar.gz"));
        std::fs::write(&path, gz).expect("write layer");
        layers.push(gz_file_layer(gz, &path));
    }
    let mut inner = serde_json::json!({"Labels": labels});
    if let (Some(obj), Some(extra)) = (inner.as_object_mut(), extra_config.as_object()) {
        for (k, v) in extra {
            obj.insert(k.clone(), v.clone());
        }
    }
    let config = serde_json::json!({
        "architecture": "amd64",
        "os": "linux",
        "config": inner,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    });
    image_with(serde_json::to_vec(&config).expect("config json"), layers)
}

/// The image of `config` (its JSON bytes) and `layers`: the config blob and the OCI manifest
/// naming them, each with its sha256 computed here (not by the code under test), for the
/// tests that build images by hand.
pub fn image_with(config: Vec<u8>, layers: Vec<Blob>) -> Image {
    let config_blob = Blob {
        descriptor: Descriptor {
            media_type: "application/vnd.oci.image.config.v1+json".into(),
            digest: sha256(&config),
            size: config.len() as u64,
        },
        source: BlobSource::Memory(config),
    };
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config_blob.descriptor.media_type, "digest": config_blob.descriptor.digest, "size": config_blob.descriptor.size},
        "layers": layers.iter().map(|l| serde_json::json!({"mediaType": l.descriptor.media_type, "digest": l.descriptor.digest, "size": l.descriptor.size})).collect::<Vec<_>>(),
    });
    let manifest = serde_json::to_vec(&manifest).expect("manifest json");
    Image {
        manifest: Blob {
            descriptor: Descriptor {
                media_type: "application/vnd.oci.image.manifest.v1+json".into(),
                digest: sha256(&manifest),
                size: manifest.len() as u64,
            },
            source: BlobSource::Memory(manifest),
        },
        config: config_blob,
        layers,
    }
}

fn blob_bytes(b: &Blob) -> Vec<u8> {
    match &b.source {
        BlobSource::Memory(m) => m.clone(),
        BlobSource::File(p) => std::fs::read(p).expect("read blob"),
        other => panic!("blob not local: {other:?}"),
    }
}

/// Writes `image` as an OCI layout at `dir` with tag `tag` (for skopeo and `oci:` tests).
pub fn write_layout(image: &Image, dir: &Path, tag: &str) {
    let blobs = dir.join("blobs").join("sha256");
    std::fs::create_dir_all(&blobs).expect("mkdir");
    for b in image.layers.iter().chain([&image.config, &image.manifest]) {
        let hexd = b.descriptor.digest.trim_start_matches("sha256:");
        std::fs::write(blobs.join(hexd), blob_bytes(b)).expect("write blob");
    }
    std::fs::write(dir.join("oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}")
        .expect("write oci-layout");
    let index = serde_json::json!({
        "schemaVersion": 2,
        "manifests": [{"mediaType": image.manifest.descriptor.media_type, "digest": image.manifest.descriptor.digest, "size": image.manifest.descriptor.size, "annotations": {"org.opencontainers.image.ref.name": tag}}],
    });
    std::fs::write(
        dir.join("index.json"),
        serde_json::to_vec(&index).expect("index"),
    )
    .expect("write index");
}
