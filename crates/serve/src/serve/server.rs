//! The process that `olmpack catalog serve` runs: the gRPC server (`api.Registry`, health,
//! reflection v1 and v1alpha, as opm registers them) and, when asked, catalogd's HTTP API, both
//! stopped cleanly on SIGTERM or SIGINT (in-flight calls finish, new ones are refused).

use super::api::registry_server::RegistryServer;
use super::health::AlwaysServing;
use super::http::{HttpCatalog, router};
use super::index::ServeIndex;
use super::registry::Registry;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long in-flight calls may run on after SIGTERM or SIGINT.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The async runtime could not start (threads, file descriptors).
    #[error("cannot start the server runtime: {0}")]
    Runtime(std::io::Error),
    /// A listening address could not be bound.
    #[error("cannot listen on {addr} ({what}): {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// `gRPC` or `HTTP`.
        what: &'static str,
        /// The OS error (e.g. address in use).
        source: std::io::Error,
    },
    /// The reflection service could not read the API descriptors (a build problem).
    #[error("cannot set up gRPC reflection: {0}")]
    Reflection(String),
    /// The gRPC server failed while serving.
    #[error("gRPC server failed: {0}")]
    Grpc(String),
    /// The HTTP server failed while serving.
    #[error("HTTP server failed: {0}")]
    Http(std::io::Error),
}

/// What to listen on.
#[derive(Debug, Clone)]
pub struct Listen {
    /// The gRPC address (opm: `:<port>`, every interface).
    pub grpc: SocketAddr,
    /// catalogd's HTTP API, if wanted.
    pub http: Option<SocketAddr>,
}

/// The addresses actually bound (port 0 becomes a real port), reported once listening.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// gRPC.
    pub grpc: SocketAddr,
    /// HTTP, if any.
    pub http: Option<SocketAddr>,
}

/// Serves `store` (and `http`, if given) until SIGTERM or SIGINT. `on_bound` runs once both
/// listeners are bound, before the first request is accepted (the caller prints the addresses).
pub fn serve(
    store: Arc<ServeIndex>,
    http: Option<HttpCatalog>,
    listen: &Listen,
    on_bound: impl FnOnce(Bound),
) -> Result<(), ServeError> {
    purge_freed_memory_now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("olmpack-serve")
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(run(store, http, listen, on_bound))
}

/// Makes mimalloc (the allocator of small blocks, see `crate::alloc`) return freed pages to the
/// system at once instead of after its default 10 ms delay. A server's memory is freed call by
/// call: with the delay, the pages of one call's answer (a CSV of up to a few hundred KB, its
/// copies and its encoding) are still held when the next call allocates, and the resident size
/// of a serve process grew by 50 % over a GetBundle sweep (measured: 79 MiB peak instead of
/// 53 MiB on the 61 shared packages). A long-running server trades a few `madvise` calls for
/// the footprint a pod's memory limit is set by. `catalog serve` sets it before loading too:
/// the loader's short-lived blocks (parsed values swapped for compact forms, file texts) then
/// go back as they are freed rather than adding up to the start's peak (measured at 305
/// packages: peak resident size at SERVING 81 MiB instead of 90 MiB).
pub fn purge_freed_memory_now() {
    unsafe extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    /// `mi_option_purge_delay` in mimalloc.h (v2 and v3).
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    // SAFETY: mimalloc is linked into every olmpack binary (crate `mimalloc`), and setting an
    // option is allowed at any time from any thread (options are atomics in mimalloc).
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    return_load_memory();
}

/// Hands back to the system what loading the catalog freed but both allocators still hold:
/// mimalloc's pages of the loader threads' short-lived blocks (abandoned when those threads
/// ended, purged only when a thread next allocates in them) and glibc's free chunks of the
/// large blocks (file texts, growing vectors) below the top of its heap, which `free` leaves
/// mapped. Called once, after the index is built and before the first request.
fn return_load_memory() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
        fn malloc_trim(pad: std::ffi::c_ulong) -> std::ffi::c_int;
    }
    // SAFETY: mimalloc is linked into every olmpack binary; `mi_collect` may be called from any
    // thread at any time. `malloc_trim` is glibc's (the system allocator on our Linux targets)
    // and only releases free memory.
    unsafe {
        mi_collect(true);
        malloc_trim(0);
    }
}

async fn bind(addr: SocketAddr, what: &'static str) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, what, source })
}

async fn run(
    store: Arc<ServeIndex>,
    http: Option<HttpCatalog>,
    listen: &Listen,
    on_bound: impl FnOnce(Bound),
) -> Result<(), ServeError> {
    let grpc_listener = bind(listen.grpc, "gRPC").await?;
    let http_listener = match (listen.http, &http) {
        (Some(addr), Some(_)) => Some(bind(addr, "HTTP").await?),
        _ => None,
    };
    let bound = Bound {
        grpc: grpc_listener.local_addr().unwrap_or(listen.grpc),
        http: http_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .or(listen.http),
    };

    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        let _ = stop_tx.send(true);
    });

    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .include_reflection_service(false)
        .register_encoded_file_descriptor_set(super::api::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .include_reflection_service(false)
        .register_encoded_file_descriptor_set(super::api::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|e| ServeError::Reflection(e.to_string()))?;

    let experimental = super::api::experimental_registry_server::ExperimentalRegistryServer::new(
        super::experimental::Experimental::new(store.clone()),
    );
    let registry = RegistryServer::new(Registry::new(store));
    let health = tonic_health::pb::health_server::HealthServer::new(AlwaysServing);
    let mut grpc_stop = stop_rx.clone();
    let grpc = tonic::transport::Server::builder()
        .add_service(registry)
        .add_service(experimental)
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .serve_with_incoming_shutdown(
            // TCP_NODELAY, as grpc-go sets it: with Nagle's algorithm a small answer waits for
            // the client's delayed ACK (tens of milliseconds per call).
            tonic::transport::server::TcpIncoming::from(grpc_listener).with_nodelay(Some(true)),
            async move {
                let _ = grpc_stop.wait_for(|s| *s).await;
            },
        );

    on_bound(bound);

    let http_task = match (http_listener, http) {
        (Some(listener), Some(catalog)) => {
            let app = router(Arc::new(catalog));
            let mut http_stop = stop_rx.clone();
            Some(tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = http_stop.wait_for(|s| *s).await;
                    })
                    .await
            }))
        }
        _ => None,
    };

    // In-flight calls get a grace period after the signal; a client that never reads its
    // stream must not keep the process alive (the kubelet would SIGKILL it anyway).
    let mut grace = stop_rx.clone();
    tokio::select! {
        r = grpc => r.map_err(|e| ServeError::Grpc(e.to_string()))?,
        _ = async move {
            let _ = grace.wait_for(|s| *s).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => return Ok(()),
    }
    if let Some(task) = http_task {
        match task.await {
            Ok(r) => r.map_err(ServeError::Http)?,
            Err(e) => return Err(ServeError::Http(std::io::Error::other(e.to_string()))),
        }
    }
    Ok(())
}

/// SIGTERM (the kubelet stopping the pod) or SIGINT (Ctrl-C).
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
