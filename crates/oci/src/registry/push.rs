//! Pushing an [`Image`]: blobs first (layers, then config), the manifest last and once per tag,
//! so a tag never points at a manifest whose blobs are missing.
//!
//! Per blob: `HEAD` and skip when present; with `mount_from`, try a cross-repository mount
//! (`201` = done; `202` = the registry declined and opened an upload session we then use, as the
//! spec allows); otherwise `POST` a session. Blobs up to `chunk_threshold` go up in one
//! monolithic `PUT ?digest=` (one round trip, what oras does); bigger ones, or any blob whose
//! monolithic `PUT` the registry refuses (405/413/416/501), go up as `PATCH` chunks with
//! `Content-Range`, honouring `OCI-Chunk-Min-Length`. Bodies bigger than
//! [`PushOptions::memory_body_max`] are streamed from their files; smaller ones are read once
//! into a bounded buffer (see there for why).
//!
//! With [`PushOptions::known_blobs`] (a map shared by the pushes of one run), a blob that is
//! not in the repository but that the run already found in or uploaded to another repository
//! of the same registry is mounted from there (one `POST`) instead of uploaded again; a mount
//! the registry declines falls back to the upload.
//!
//! Retries: a failed upload body leaves the session in an unknown state (a partial append would
//! corrupt the next try), so a temporary failure restarts the blob from a fresh `POST`, with the
//! same backoff policy as single requests.

use super::client::{Body, Client, Request, header};
use super::errors::RegistryError;
use super::token::{pull_scope, push_scope};
use crate::image::{Blob, BlobSource, Image, ImageIndex};
use reqwest::Method;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// How to show progress on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A bar per blob when stderr is a terminal, one line per blob otherwise.
    Auto,
    /// One line per blob (`pushed blob sha256:… (N bytes)`), like crane's log.
    Lines,
    /// Nothing.
    Silent,
}

/// Push settings. Defaults: no mount, monolithic up to 64 MiB, 8 MiB chunks, automatic
/// progress, bodies up to 16 MiB buffered, 3 blobs at a time.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// Repository (same registry) to mount blobs from (`--mount-from`).
    pub mount_from: Option<String>,
    /// Blobs larger than this are uploaded in chunks. Bundle layers are far below the default,
    /// so a bundle push is one `PUT` per blob; a huge blob keeps each request short.
    pub chunk_threshold: u64,
    /// Chunk size for `PATCH` uploads (raised to the registry's `OCI-Chunk-Min-Length`).
    pub chunk_size: u64,
    /// Progress display.
    pub progress: Progress,
    /// Request bodies (a whole blob or one chunk) up to this size are read into memory before
    /// sending; larger ones are streamed from their file. reqwest's blocking client hands a
    /// streamed body to its runtime thread in 8 KiB pieces, one thread hand-off each, which made
    /// a 6 MB push ~35% slower than skopeo on a loaded 2-core machine; one read of a bounded
    /// buffer removes that. Default 16 MiB (every real bundle layer fits; memory stays bounded
    /// because bigger blobs stream and chunks are at most `chunk_size` or this). 0 = always
    /// stream.
    pub memory_body_max: u64,
    /// Blobs uploaded at the same time. Default 3: a bundle has two or three blobs, and on a
    /// loopback or LAN registry a push is round-trip bound, not bandwidth bound.
    pub concurrency: usize,
    /// Where the blobs pushed so far live at the target, shared by the pushes of one run
    /// (`catalog mirror`): a layer common to many images is uploaded once and mounted into the
    /// other repositories. `None` (the default): each push stands alone.
    pub known_blobs: Option<KnownBlobs>,
}

/// Blobs known to be in some repository of a registry: `(registry, digest)` to the repository.
/// Cloning shares the map, so parallel pushes of one run fill and read the same one. It is only
/// a hint: a mount from a repository that no longer holds the blob is declined by the registry
/// and the blob is uploaded.
#[derive(Debug, Clone, Default)]
pub struct KnownBlobs(Arc<Mutex<HashMap<(String, String), String>>>);

impl KnownBlobs {
    /// Records that `repository` on `registry` holds `digest` (the latest one wins, so after a
    /// declined mount the map names the repository the blob was then uploaded to).
    pub fn record(&self, registry: &str, digest: &str, repository: &str) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(
            (registry.to_string(), digest.to_string()),
            repository.to_string(),
        );
    }

    /// A repository of `registry` other than `not_in` known to hold `digest`.
    pub fn find(&self, registry: &str, digest: &str, not_in: &str) -> Option<String> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&(registry.to_string(), digest.to_string()))
            .filter(|r| r.as_str() != not_in)
            .cloned()
    }

    /// How many blobs are known (for tests and reports).
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether nothing is known yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for PushOptions {
    fn default() -> Self {
        PushOptions {
            mount_from: None,
            chunk_threshold: 64 << 20,
            chunk_size: 8 << 20,
            progress: Progress::Auto,
            memory_body_max: 16 << 20,
            concurrency: 3,
            known_blobs: None,
        }
    }
}

/// What happened to one blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobAction {
    /// Already in the repository (`HEAD` 200).
    Existing,
    /// Mounted from another repository.
    Mounted,
    /// Uploaded with one `PUT`.
    Uploaded,
    /// Uploaded in `PATCH` chunks.
    UploadedChunked,
}

/// One blob of a push report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobReport {
    /// Digest.
    pub digest: String,
    /// Size in bytes.
    pub size: u64,
    /// What was done.
    pub action: BlobAction,
}

/// The result of a push.
#[derive(Debug, Clone)]
pub struct PushReport {
    /// The manifest digest (what every tag now points at).
    pub digest: String,
    /// `registry/repo:tag@digest` per tag, in the order given.
    pub refs: Vec<String>,
    /// What happened to each blob (layers then config).
    pub blobs: Vec<BlobReport>,
}

fn with_query(url: &str, q: &str) -> String {
    if url.contains('?') {
        format!("{url}&{q}")
    } else {
        format!("{url}?{q}")
    }
}

/// Checks whether `repository` already holds `digest` (HEAD 200) and, if so, that the size the
/// registry reports agrees.
pub fn blob_exists(
    client: &Client,
    repository: &str,
    digest: &str,
    scopes: &[String],
) -> Result<bool, RegistryError> {
    let resp = client.expect(
        &Request::new(Method::HEAD, super::api::blob(repository, digest), scopes),
        &[200, 404],
    )?;
    Ok(resp.status().as_u16() == 200)
}

/// Pushes `image` to `repository` on `client`'s registry and tags it with every entry of `tags`
/// (tags, or digests for a push by digest only; empty means by digest only).
pub fn push_image(
    client: &Client,
    image: &Image,
    repository: &str,
    tags: &[String],
    opts: &PushOptions,
) -> Result<PushReport, RegistryError> {
    let mut scopes = vec![push_scope(repository)];
    if let Some(from) = &opts.mount_from
        && from != repository
    {
        scopes.push(pull_scope(from));
    }
    // Blobs kept in a repository of this registry (a base image's layers) are mounted from
    // there, so the token must allow pulling it too.
    for blob in image.blobs() {
        if let BlobSource::Remote {
            registry,
            repository: from,
            ..
        } = &blob.source
            && registry == client.registry()
            && from != repository
        {
            let scope = pull_scope(from);
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
    }
    let show_bar = opts.progress == Progress::Auto && std::io::stderr().is_terminal();
    let lines = opts.progress == Progress::Lines || (opts.progress == Progress::Auto && !show_bar);
    let all: Vec<&Blob> = image
        .layers
        .iter()
        .chain(std::iter::once(&image.config))
        .collect();
    let multi = show_bar.then(indicatif::MultiProgress::new);
    // The first HEAD goes alone: it answers the auth challenge and fills the token cache, so
    // the parallel workers below reuse one token instead of racing for several.
    let first_exists = match all.first() {
        Some(b) => Some(blob_exists(
            client,
            repository,
            &b.descriptor.digest,
            &scopes,
        )?),
        None => None,
    };
    let results = run_parallel(all.len(), opts.concurrency.max(1), |i| {
        let blob = all[i];
        let pb = multi.as_ref().map(|mp| {
            let pb = mp.add(indicatif::ProgressBar::new(blob.descriptor.size));
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
            ) {
                pb.set_style(style.progress_chars("=> "));
            }
            pb.set_message(short(&blob.descriptor.digest));
            pb
        });
        let known = if i == 0 { first_exists } else { None };
        let action = push_blob(client, repository, blob, &scopes, opts, pb.as_ref(), known);
        if let Some(pb) = &pb {
            pb.finish_and_clear();
        }
        if let Ok(action) = &action
            && (lines || show_bar)
        {
            let verb = match action {
                BlobAction::Existing => "existing",
                BlobAction::Mounted => "mounted",
                BlobAction::Uploaded | BlobAction::UploadedChunked => "pushed",
            };
            let line = format!(
                "{verb} blob {} ({} bytes)",
                blob.descriptor.digest, blob.descriptor.size
            );
            match &multi {
                Some(mp) => {
                    let _ = mp.println(line);
                }
                None => eprintln!("{line}"),
            }
        }
        action
    });
    let mut blobs = Vec::new();
    for (blob, result) in all.iter().zip(results) {
        blobs.push(BlobReport {
            digest: blob.descriptor.digest.clone(),
            size: blob.descriptor.size,
            action: result?,
        });
    }
    let refs = put_manifest(
        client,
        repository,
        &image.manifest,
        tags,
        &scopes,
        lines || show_bar,
    )?;
    Ok(PushReport {
        digest: image.manifest.descriptor.digest.clone(),
        refs,
        blobs,
    })
}

/// Puts a manifest (or index) under every tag (by digest when `tags` is empty), checking the
/// digest the registry computed. Returns `registry/repo:tag@digest` per tag.
fn put_manifest(
    client: &Client,
    repository: &str,
    manifest_blob: &Blob,
    tags: &[String],
    scopes: &[String],
    announce: bool,
) -> Result<Vec<String>, RegistryError> {
    let manifest = read_small(manifest_blob, 4 << 20)?;
    let digest = manifest_blob.descriptor.digest.clone();
    let mut refs = Vec::new();
    let targets: Vec<String> = if tags.is_empty() {
        vec![digest.clone()]
    } else {
        tags.to_vec()
    };
    for tag in &targets {
        put_manifest_bytes(
            client,
            repository,
            tag,
            &manifest_blob.descriptor.media_type,
            &manifest,
            &digest,
            scopes,
        )?;
        let name = format!("{}/{repository}", client.registry());
        refs.push(if tag.contains(':') {
            format!("{name}@{digest}")
        } else {
            format!("{name}:{tag}@{digest}")
        });
        if announce {
            eprintln!("pushed manifest {digest} as {tag}");
        }
    }
    Ok(refs)
}

/// Puts `bytes` (whose digest is `digest`) as the manifest `reference` (a tag or the digest) of
/// `repository`, checking the digest the registry computed.
pub fn put_manifest_bytes(
    client: &Client,
    repository: &str,
    reference: &str,
    media_type: &str,
    bytes: &[u8],
    digest: &str,
    scopes: &[String],
) -> Result<(), RegistryError> {
    let req = Request::new(
        Method::PUT,
        super::api::manifest(repository, reference),
        scopes,
    )
    .header("Content-Type", media_type.to_string())
    .body(Body::Bytes(bytes.to_vec()));
    let resp = client.expect(&req, &[200, 201])?;
    if let Some(got) = header(&resp, "Docker-Content-Digest")
        && got != digest
    {
        return Err(RegistryError::DigestMismatch {
            expected: digest.to_string(),
            actual: got,
        });
    }
    Ok(())
}

/// Puts one blob into `repository` (skipped when there, mounted when `opts` knows it in another
/// repository of the registry, else uploaded): what [`push_image`] does for each blob.
pub fn put_blob(
    client: &Client,
    repository: &str,
    blob: &Blob,
    opts: &PushOptions,
) -> Result<BlobAction, RegistryError> {
    let scopes = [push_scope(repository)];
    push_blob(client, repository, blob, &scopes, opts, None, None)
}

/// A cross-repository mount of `digest` from `from` into `repository`: whether the registry
/// did it (a declined mount is not an error).
pub fn mount_blob(client: &Client, repository: &str, digest: &str, from: &str) -> bool {
    try_mount(client, repository, digest, &[push_scope(repository)], from)
}

/// Pushes a multi-platform index: each image by digest (shared blobs are found existing after
/// the first image), then the index under every tag. The report lists every image's blobs.
pub fn push_index(
    client: &Client,
    index: &ImageIndex,
    repository: &str,
    tags: &[String],
    opts: &PushOptions,
) -> Result<PushReport, RegistryError> {
    let mut blobs = Vec::new();
    for image in &index.images {
        let report = push_image(client, image, repository, &[], opts)?;
        blobs.extend(report.blobs);
    }
    let mut report = put_index(client, &index.index, repository, tags, opts)?;
    report.blobs = blobs;
    Ok(report)
}

/// Puts an index under every tag (by digest when `tags` is empty), once its images are pushed:
/// the last step of [`push_index`], for a caller that pushes the images itself (one at a time,
/// as they are opened). The report lists no blobs.
pub fn put_index(
    client: &Client,
    index: &Blob,
    repository: &str,
    tags: &[String],
    opts: &PushOptions,
) -> Result<PushReport, RegistryError> {
    let scopes = [push_scope(repository)];
    let announce = opts.progress != Progress::Silent;
    let refs = put_manifest(client, repository, index, tags, &scopes, announce)?;
    Ok(PushReport {
        digest: index.descriptor.digest.clone(),
        refs,
        blobs: Vec::new(),
    })
}

fn short(digest: &str) -> String {
    digest.chars().take(19).collect()
}

/// Reads a small blob (manifest or config) into memory, refusing anything over `cap`.
pub fn read_small(blob: &Blob, cap: u64) -> Result<Vec<u8>, RegistryError> {
    if blob.descriptor.size > cap {
        return Err(RegistryError::TooLarge {
            what: format!("blob {}", blob.descriptor.digest),
            limit: cap,
        });
    }
    match &blob.source {
        BlobSource::Memory(b) => Ok(b.clone()),
        BlobSource::File(p) => {
            std::fs::read(p).map_err(|e| RegistryError::io("cannot read blob", p, e))
        }
        BlobSource::Remote {
            fetcher: Some(_), ..
        } => {
            let mut bytes = Vec::new();
            let mut reader = blob.open().map_err(|e| RegistryError::Interrupted {
                what: format!("download of blob {}", blob.descriptor.digest),
                reason: e.to_string(),
            })?;
            std::io::Read::read_to_end(&mut reader, &mut bytes)
                .map_err(|e| super::pull::read_error(&blob.descriptor.digest, &e))?;
            Ok(bytes)
        }
        BlobSource::Remote {
            registry,
            repository,
            fetcher: None,
        } => Err(RegistryError::RemoteBlobMissing {
            digest: blob.descriptor.digest.clone(),
            location: format!("{registry}/{repository}"),
        }),
    }
}

/// Streams a remote blob (one that can fetch itself) into a temporary file, verified, so it
/// can be uploaded (and its upload retried) from disk: a layer copied between two registries
/// is never held whole in memory.
fn spool_remote(blob: &Blob) -> Result<(tempfile::TempPath, Blob), RegistryError> {
    let what = || format!("download of blob {}", blob.descriptor.digest);
    // Ctrl-C during a copy removes the spool file (see crate::interrupt).
    let mut file = crate::interrupt::temp_file("olmpack-blob-")
        .map_err(|e| RegistryError::io("cannot create a spool file in", std::env::temp_dir(), e))?;
    let mut reader = blob.open().map_err(|e| RegistryError::Interrupted {
        what: what(),
        reason: e.to_string(),
    })?;
    std::io::copy(&mut reader, &mut file)
        .map_err(|e| super::pull::read_error(&blob.descriptor.digest, &e))?;
    let path = file.into_temp_path();
    let spooled = Blob {
        descriptor: blob.descriptor.clone(),
        source: BlobSource::File(path.to_path_buf()),
    };
    Ok((path, spooled))
}

fn push_blob(
    client: &Client,
    repository: &str,
    blob: &Blob,
    scopes: &[String],
    opts: &PushOptions,
    pb: Option<&indicatif::ProgressBar>,
    known_exists: Option<bool>,
) -> Result<BlobAction, RegistryError> {
    let action = place_blob(client, repository, blob, scopes, opts, pb, known_exists)?;
    if let Some(known) = &opts.known_blobs {
        known.record(client.registry(), &blob.descriptor.digest, repository);
    }
    Ok(action)
}

/// Tries a cross-repository mount of `digest` from `from` into `repository`: whether the
/// registry did it. A declined mount (202, an upload session we leave unused) or a failed
/// request is not an error: the caller uploads the blob as it would have without the hint.
fn try_mount(
    client: &Client,
    repository: &str,
    digest: &str,
    scopes: &[String],
    from: &str,
) -> bool {
    let mut scopes = scopes.to_vec();
    let pull = pull_scope(from);
    if !scopes.contains(&pull) {
        scopes.push(pull);
    }
    matches!(
        start_session(client, repository, digest, &scopes, Some(from)),
        Ok(Err(BlobAction::Mounted))
    )
}

fn place_blob(
    client: &Client,
    repository: &str,
    blob: &Blob,
    scopes: &[String],
    opts: &PushOptions,
    pb: Option<&indicatif::ProgressBar>,
    known_exists: Option<bool>,
) -> Result<BlobAction, RegistryError> {
    let exists = match known_exists {
        Some(e) => e,
        None => blob_exists(client, repository, &blob.descriptor.digest, scopes)?,
    };
    if exists {
        return Ok(BlobAction::Existing);
    }
    if let Some(from) = opts
        .known_blobs
        .as_ref()
        .and_then(|k| k.find(client.registry(), &blob.descriptor.digest, repository))
        && try_mount(client, repository, &blob.descriptor.digest, scopes, &from)
    {
        return Ok(BlobAction::Mounted);
    }
    let _spool;
    let mut blob = blob;
    if let BlobSource::Remote {
        registry,
        repository: from,
        fetcher,
    } = &blob.source
    {
        // Never downloaded just to be uploaded again when avoidable: mount it when it lives on
        // this registry; else, when it can fetch itself, stream it through a spool file; else
        // tell the caller, who fetches it (see `transport::sink::deliver`).
        let missing = || RegistryError::RemoteBlobMissing {
            digest: blob.descriptor.digest.clone(),
            location: format!("{registry}/{from}"),
        };
        if registry == client.registry()
            && from != repository
            && let Err(action) = start_session(
                client,
                repository,
                &blob.descriptor.digest,
                scopes,
                Some(from),
            )?
        {
            return Ok(action);
        }
        if fetcher.is_none() {
            return Err(missing());
        }
        let (path, spooled) = spool_remote(blob)?;
        _spool = (path, spooled);
        blob = &_spool.1;
    }
    let policy = &client_retry(client);
    let mut attempt = 0;
    loop {
        attempt += 1;
        if let Some(pb) = pb {
            pb.set_position(0);
        }
        match upload_once(client, repository, blob, scopes, opts, pb) {
            Ok(a) => return Ok(a),
            Err(e) if e.is_temporary() && attempt < policy.max_attempts => {
                client.stats.retries.fetch_add(1, Ordering::Relaxed);
                super::retry::wait_before_retry(
                    policy,
                    &format!("upload of blob {} to {repository}", blob.descriptor.digest),
                    &super::retry::why(&e, ""),
                    attempt,
                    policy.max_attempts,
                    e.retry_after(),
                );
            }
            Err(e) => return Err(e),
        }
    }
}

/// Runs `work(0..n)` on up to `workers` scoped threads and returns the results in index order.
/// After a failure no new item is started (running ones finish), so an auth error does not
/// fan out into a burst of failing requests.
fn run_parallel<T: Send>(
    n: usize,
    workers: usize,
    work: impl Fn(usize) -> Result<T, RegistryError> + Sync,
) -> Vec<Result<T, RegistryError>> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<T, RegistryError>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(n) {
            scope.spawn(|| {
                loop {
                    if failed.load(Ordering::SeqCst) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= n {
                        break;
                    }
                    let r = work(i);
                    if r.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    if let Ok(mut g) = slots.lock() {
                        g[i] = Some(r);
                    }
                }
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|p| p.into_inner());
    slots
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(RegistryError::Protocol(
                    "not attempted after an earlier blob failed".into(),
                ))
            })
        })
        .collect()
}

fn client_retry(client: &Client) -> super::retry::RetryPolicy {
    client.retry_policy().clone()
}

fn body_range(
    blob: &Blob,
    offset: u64,
    len: u64,
    pb: Option<&indicatif::ProgressBar>,
    memory_max: u64,
) -> Result<Body, RegistryError> {
    match &blob.source {
        BlobSource::Memory(b) => {
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
            let end = usize::try_from(offset + len)
                .unwrap_or(usize::MAX)
                .min(b.len());
            if let Some(pb) = pb {
                pb.inc(len);
            }
            Ok(Body::Bytes(b[start..end].to_vec()))
        }
        BlobSource::File(p) if len <= memory_max => {
            use std::io::{Read, Seek, SeekFrom};
            let mut f =
                std::fs::File::open(p).map_err(|e| RegistryError::io("cannot open blob", p, e))?;
            f.seek(SeekFrom::Start(offset))
                .map_err(|e| RegistryError::io("cannot seek blob", p, e))?;
            let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            f.take(len)
                .read_to_end(&mut buf)
                .map_err(|e| RegistryError::io("cannot read blob", p, e))?;
            if buf.len() as u64 != len {
                return Err(RegistryError::Protocol(format!(
                    "blob file {} is shorter than its descriptor size {len}",
                    p.display()
                )));
            }
            if let Some(pb) = pb {
                pb.inc(len);
            }
            Ok(Body::Bytes(buf))
        }
        BlobSource::Remote {
            registry,
            repository,
            ..
        } => Err(RegistryError::RemoteBlobMissing {
            digest: blob.descriptor.digest.clone(),
            location: format!("{registry}/{repository}"),
        }),
        BlobSource::File(p) => Ok(Body::File {
            path: p.clone(),
            offset,
            len,
            progress: pb.cloned(),
        }),
    }
}

fn start_session(
    client: &Client,
    repository: &str,
    digest: &str,
    scopes: &[String],
    mount_from: Option<&str>,
) -> Result<Result<(String, u64), BlobAction>, RegistryError> {
    let mut url = super::api::uploads(repository);
    if let Some(from) = mount_from {
        url = format!("{url}?mount={digest}&from={from}");
    }
    let resp = client.expect(&Request::new(Method::POST, url, scopes), &[201, 202])?;
    if resp.status().as_u16() == 201 {
        if mount_from.is_some() {
            return Ok(Err(BlobAction::Mounted));
        }
        return Err(RegistryError::Protocol(format!(
            "registry answered 201 to an upload POST for {digest} without a mount"
        )));
    }
    let location = header(&resp, "Location").ok_or_else(|| {
        RegistryError::Protocol("upload POST answered 202 without a Location header".into())
    })?;
    let min_chunk = header(&resp, "OCI-Chunk-Min-Length")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Ok(Ok((client.resolve_location(&location), min_chunk)))
}

fn upload_once(
    client: &Client,
    repository: &str,
    blob: &Blob,
    scopes: &[String],
    opts: &PushOptions,
    pb: Option<&indicatif::ProgressBar>,
) -> Result<BlobAction, RegistryError> {
    let d = &blob.descriptor;
    let mount_from = opts.mount_from.as_deref().filter(|f| *f != repository);
    let (location, min_chunk) =
        match start_session(client, repository, &d.digest, scopes, mount_from)? {
            Ok(session) => session,
            Err(action) => return Ok(action),
        };
    if d.size <= opts.chunk_threshold {
        let req = Request::new(
            Method::PUT,
            with_query(&location, &format!("digest={}", d.digest)),
            scopes,
        )
        .header("Content-Type", "application/octet-stream")
        .body(body_range(blob, 0, d.size, pb, opts.memory_body_max)?)
        .no_retry();
        let resp = client.send(&req)?;
        let status = resp.status().as_u16();
        if status == 201 {
            check_digest(&resp, &d.digest)?;
            return Ok(BlobAction::Uploaded);
        }
        if !matches!(status, 405 | 413 | 416 | 501) {
            return Err(client.status_error(&Method::PUT, &location, resp));
        }
        // The registry refuses monolithic uploads: start over in chunks on a fresh session.
        let (location, min_chunk) =
            match start_session(client, repository, &d.digest, scopes, None)? {
                Ok(session) => session,
                Err(action) => return Ok(action),
            };
        if let Some(pb) = pb {
            pb.set_position(0);
        }
        return upload_chunked(client, blob, scopes, opts, pb, location, min_chunk);
    }
    upload_chunked(client, blob, scopes, opts, pb, location, min_chunk)
}

fn upload_chunked(
    client: &Client,
    blob: &Blob,
    scopes: &[String],
    opts: &PushOptions,
    pb: Option<&indicatif::ProgressBar>,
    mut location: String,
    min_chunk: u64,
) -> Result<BlobAction, RegistryError> {
    let d = &blob.descriptor;
    let chunk = opts.chunk_size.max(min_chunk).max(1);
    let mut offset = 0u64;
    while offset < d.size {
        let len = chunk.min(d.size - offset);
        let req = Request::new(Method::PATCH, location.clone(), scopes)
            .header("Content-Type", "application/octet-stream")
            .header("Content-Range", format!("{}-{}", offset, offset + len - 1))
            .body(body_range(blob, offset, len, pb, opts.memory_body_max)?)
            .no_retry();
        let resp = client.expect(&req, &[202])?;
        let next = header(&resp, "Location").ok_or_else(|| {
            RegistryError::Protocol("chunk PATCH answered 202 without a Location header".into())
        })?;
        location = client.resolve_location(&next);
        offset += len;
    }
    let req = Request::new(
        Method::PUT,
        with_query(&location, &format!("digest={}", d.digest)),
        scopes,
    )
    .no_retry();
    let resp = client.expect(&req, &[201])?;
    check_digest(&resp, &d.digest)?;
    Ok(BlobAction::UploadedChunked)
}

fn check_digest(resp: &reqwest::blocking::Response, expected: &str) -> Result<(), RegistryError> {
    match header(resp, "Docker-Content-Digest") {
        Some(got) if got != expected => Err(RegistryError::DigestMismatch {
            expected: expected.to_string(),
            actual: got,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_blobs_are_shared_by_clones_and_kept_per_registry() {
        let known = KnownBlobs::default();
        let shared = known.clone();
        assert!(known.is_empty());
        shared.record("r1:5000", "sha256:aa", "ns/one");
        assert_eq!(
            known.find("r1:5000", "sha256:aa", "ns/two").as_deref(),
            Some("ns/one")
        );
        // Never from the repository that is being pushed to, nor from another registry.
        assert_eq!(known.find("r1:5000", "sha256:aa", "ns/one"), None);
        assert_eq!(known.find("r2:5000", "sha256:aa", "ns/two"), None);
        // The latest repository wins (after a declined mount, the one uploaded to).
        known.record("r1:5000", "sha256:aa", "ns/two");
        assert_eq!(
            shared.find("r1:5000", "sha256:aa", "ns/one").as_deref(),
            Some("ns/two")
        );
        assert_eq!(known.len(), 1);
    }
}
