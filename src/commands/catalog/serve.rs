//! `olmpack catalog serve SOURCE`: serves a catalog folder or catalog image as `opm serve` does
//! (the gRPC registry API OLM v0 queries, gRPC health and reflection) and, with `--http`, as
//! catalogd serves it to OLM v1 clients. The catalog is loaded and checked before anything
//! listens; a failure at start is written to the termination log as opm writes its fatal errors.

use super::flags::RegistryArgs;
use super::{EXIT_OK, Failure, Outcome};
use crate::location::{Location, Place};
use crate::serve::http::HttpCatalog;
use crate::serve::server::{Bound, Listen, serve};
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// opm's default termination log (what Kubernetes reads as the container's last words).
const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";

/// Arguments of `olmpack catalog serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A catalog folder, or a catalog image (a registry reference, oci:PATH[:TAG],
    /// oci-archive:FILE[:TAG], docker-archive:FILE).
    #[arg(value_name = "SOURCE")]
    pub source: String,
    /// gRPC port (opm's default).
    #[arg(short = 'p', long, default_value_t = 50051)]
    pub port: u16,
    /// Address the gRPC port listens on: every interface by default, as opm; 127.0.0.1 (or
    /// localhost) keeps it local.
    #[arg(long, value_name = "IP", default_value_t = IpAddr::V4(Ipv4Addr::UNSPECIFIED), value_parser = parse_ip)]
    pub addr: IpAddr,
    /// Also serve catalogd's HTTP API (OLM v1) on this address, e.g. 127.0.0.1:8080 or :8080.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Catalog name in the HTTP URLs (/catalogs/NAME/api/v1/all); default: the folder's name
    /// when it is a valid name, else `catalog`.
    #[arg(long, value_name = "NAME")]
    pub catalog_name: Option<String>,
    /// Where a fatal error is written, as opm does (Kubernetes' terminationMessagePath). The
    /// default file is only written when it already exists; a path given here is created.
    #[arg(short = 't', long, value_name = "FILE")]
    pub termination_log: Option<PathBuf>,
    /// Check the serve cache at PATH (in the image for an image source) as `opm serve
    /// --cache-dir PATH` checks it at start (JSON or pogreb.v1): one opm would refuse stops
    /// here with opm's reason, exit 1.
    #[arg(long, value_name = "PATH")]
    pub cache_dir: Option<String>,
    #[command(flatten)]
    /// Registry access for image sources.
    pub registry: RegistryArgs,
    /// Signature policy checked before an image source is read.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
}

/// Runs `catalog serve` until SIGTERM or SIGINT.
pub fn run(args: &Args) -> Outcome {
    match run_inner(args) {
        Ok(code) => Ok(code),
        Err(failure) => {
            termination_log(args.termination_log.as_deref(), &failure.message);
            Err(failure)
        }
    }
}

fn run_inner(args: &Args) -> Outcome {
    let http_addr = args.http.as_deref().map(parse_http_addr).transpose()?;
    let started = std::time::Instant::now();
    let source = open_source(args)?;
    let root = source.dir();
    if let Some(cache_dir) = &args.cache_dir {
        check_cache(args, &source, cache_dir)?;
    }
    let (loaded, metadata) = crate::serve::model::load_compact(root)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.source)))?;
    if loaded.has_errors() {
        let mut msg = format!(
            "{}: the catalog cannot be served (opm refuses it too):",
            args.source
        );
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
        return Err(Failure::usage(msg));
    }
    let files = loaded.files;
    let store = crate::serve::model::ServeModel::new_compact(loaded.config, metadata)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.source)))?;
    // Bundles, not channel entries (a bundle in three channels is one bundle).
    let (packages, bundles) = (store.index().len(), store.catalog_bundle_count());
    let store = crate::serve::index::ServeIndex::new(store);
    let http = match http_addr {
        Some(_) => {
            let name = match &args.catalog_name {
                Some(n) => n.clone(),
                None => default_catalog_name(&source),
            };
            Some(
                HttpCatalog::index(root, &files, &name)
                    .map_err(|e| Failure::usage(format!("{}: {e}", args.source)))?,
            )
        }
        None => None,
    };
    let http_name = http.as_ref().map(|h| h.name().to_string());
    let listen = Listen {
        grpc: SocketAddr::new(args.addr, args.port),
        http: http_addr,
    };
    let source_name = args.source.clone();
    serve(Arc::new(store), http, &listen, |bound: Bound| {
        eprintln!(
            "serving {source_name}: {packages} packages, {bundles} bundles, gRPC on {} (loaded in {} ms)",
            bound.grpc,
            started.elapsed().as_millis()
        );
        if let (Some(addr), Some(name)) = (bound.http, &http_name) {
            eprintln!("catalogd HTTP API on http://{addr}/catalogs/{name}/api/v1/all");
        }
    })
    .map_err(|e| Failure::usage(e.to_string()))?;
    drop(source);
    Ok(EXIT_OK)
}

/// An IP address, or `localhost` (the loopback address, as `--addr localhost` is meant).
fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if s.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    s.parse()
        .map_err(|_| format!("{s:?} is not an IP address (such as 127.0.0.1, ::1 or localhost)"))
}

/// `:8080` (every interface, as Go spells it), `127.0.0.1:8080`, `[::1]:8080`.
fn parse_http_addr(s: &str) -> Result<SocketAddr, Failure> {
    let full = if s.starts_with(':') {
        format!("0.0.0.0{s}")
    } else {
        s.to_string()
    };
    full.parse().map_err(|_| {
        Failure::usage(format!(
            "--http {s:?}: expected an address like 127.0.0.1:8080 or :8080"
        ))
    })
}

/// The catalog being served: a folder as given, or an image unpacked into a temporary folder
/// (removed when the server stops).
enum Source {
    Folder(PathBuf),
    Image {
        _unpacked: tempfile::TempDir,
        configs: PathBuf,
    },
}

impl Source {
    fn dir(&self) -> &Path {
        match self {
            Source::Folder(p) => p,
            Source::Image { configs, .. } => configs,
        }
    }
}

fn open_source(args: &Args) -> Result<Source, Failure> {
    // One classification for every source string: a path is never sent to a registry.
    let location = Location::parse(&args.source).map_err(|e| Failure::usage(e.to_string()))?;
    match location.place() {
        Place::Path(path) if path.is_dir() => Ok(Source::Folder(path.to_path_buf())),
        Place::Path(_) => Err(Failure::usage(format!(
            "{}: is a file: pass a catalog folder or a catalog image",
            args.source
        ))),
        Place::Local(_) | Place::Registry(_) => {
            let opts = args.registry.options()?;
            args.policy.check(&location, &opts)?;
            let image = crate::transport::source::unpack_image(&location, &opts)
                .map_err(|e| Failure::usage(format!("{}: {e}", args.source)))?;
            let Some(label) = image.labels.get(crate::catalog::CONFIGS_LABEL) else {
                return Err(Failure::usage(format!(
                    "{}: not a catalog image (no {} label)",
                    args.source,
                    crate::catalog::CONFIGS_LABEL
                )));
            };
            let configs = crate::action::catalog_render::configs_dir(image.dir.path(), label)
                .map_err(|e| Failure::usage(format!("{}: {e}", args.source)))?;
            Ok(Source::Image {
                _unpacked: image.dir,
                configs,
            })
        }
    }
}

/// `--cache-dir`: the cache checked as opm checks it at start (`--cache-enforce-integrity`,
/// opm's default with `--cache-dir`). Answers still come from the catalog, which an accepted
/// cache's digest proves it holds.
fn check_cache(args: &Args, source: &Source, cache_dir: &str) -> Result<(), Failure> {
    let path = match source {
        Source::Folder(_) => PathBuf::from(cache_dir),
        Source::Image {
            _unpacked: unpacked,
            ..
        } => unpacked.path().join(cache_dir.trim_start_matches('/')),
    };
    if !path.is_dir() {
        return Err(Failure::with_code(
            1,
            format!(
                "{}: no serve cache at {cache_dir}: opm serve --cache-dir {cache_dir} exits at start (integrity check failed: read existing cache digest: no such file or directory)",
                args.source
            ),
        ));
    }
    let mut report = crate::serve::verify::verify_dir(source.dir(), &path)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.source)))?;
    report.cache_dir = report
        .cache_dir
        .replace(&path.display().to_string(), cache_dir);
    if !report.accepted {
        return Err(Failure::with_code(
            1,
            format!(
                "{}: opm would not start on the serve cache at {cache_dir}:\n{}",
                args.source,
                report.to_text().trim_end()
            ),
        ));
    }
    eprintln!(
        "serve cache {}: digest {} matches (opm starts on it); answering from the catalog it matches",
        report.cache_dir, report.computed
    );
    Ok(())
}

fn default_catalog_name(source: &Source) -> String {
    if let Source::Folder(p) = source {
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

/// Writes a fatal error where Kubernetes looks for it, as opm's logrus hook does. The default
/// path is only written when it exists (in a pod, Kubernetes mounts it), so running olmpack
/// by hand never creates `/dev/termination-log`; an explicit path is created.
fn termination_log(explicit: Option<&Path>, message: &str) {
    let (path, create) = match explicit {
        Some(p) => (p, true),
        None => (Path::new(DEFAULT_TERMINATION_LOG), false),
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(create)
        .truncate(false)
        .open(path);
    match file {
        Ok(mut f) => {
            let _ = writeln!(f, "{message}");
        }
        Err(e) if create => eprintln!(
            "warning: unable to write the termination log {}: {e}",
            path.display()
        ),
        Err(_) => {}
    }
}
