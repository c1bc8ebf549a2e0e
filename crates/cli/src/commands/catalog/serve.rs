//! `olmpack catalog serve SOURCE`: serves a catalog folder or catalog image as `opm serve` does
//! (the gRPC registry API OLM v0 queries, gRPC health and reflection) and, with `--http`, as
//! catalogd serves it to OLM v1 clients. The catalog is loaded and checked before anything
//! listens; a failure at start is written to the termination log as opm writes its fatal errors.

use super::flags::RegistryArgs;
use super::{EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::catalog_serve;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

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
    // One classification for every source string: a path is never sent to a registry.
    let location = Location::parse(&args.source).map_err(|e| Failure::usage(e.to_string()))?;
    let mut prepared = catalog_serve::prepare(
        &location,
        |location| {
            let opts = args.registry.options(&[&args.source])?;
            let location = args.policy.check(location, &opts)?;
            Ok::<_, Failure>((opts, location))
        },
        http_addr.is_some(),
        args.catalog_name.as_deref(),
    )?;
    if let Some(cache_dir) = &args.cache_dir {
        let note = prepared
            .check_cache(cache_dir)
            .map_err(|e| Failure::with_code(e.exit_code(), e.to_string()))?;
        eprintln!("{note}");
    }
    let (packages, bundles) = (prepared.packages, prepared.bundles);
    let http_name = prepared.http_name();
    let grpc = SocketAddr::new(args.addr, args.port);
    let source_name = args.source.clone();
    catalog_serve::serve(prepared, grpc, http_addr, |bound| {
        eprintln!(
            "serving {source_name}: {packages} packages, {bundles} bundles, gRPC on {} (loaded in {} ms)",
            bound.grpc,
            started.elapsed().as_millis()
        );
        if let (Some(addr), Some(name)) = (bound.http, &http_name) {
            eprintln!("catalogd HTTP API on http://{addr}/catalogs/{name}/api/v1/all");
        }
    })?;
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
