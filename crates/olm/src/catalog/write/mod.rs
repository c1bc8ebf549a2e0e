//! Writers that reproduce `opm render`/`opm init` output byte for byte (CATALOG.md D.6).
//!
//! Why byte-exact: catalogs are generated and checked in; a tool that replaces opm in a pipeline
//! must not change a byte of the files it regenerates, or every run shows a diff.
//! - [`write_json_blob`]: one blob as Go's `json.Encoder` (4 spaces, no HTML escaping) writes it;
//! - [`write_yaml_blob`]: `---\n` and the blob as `sigs.k8s.io/yaml` (go-yaml v2) writes it;
//! - [`write_config`]: a whole [`DeclarativeConfig`] in opm's `configsByPackage` order.
//!
//! Blob writers append to a `Vec<u8>`; [`write_config_to`] streams a whole catalog to any
//! `io::Write`, so a command that has checked every input can print a large catalog without
//! holding it in memory; [`spool::Spool`] assembles the output of many sources without holding
//! their models.

pub mod spool;

use crate::gocompat::goyaml::emit as yaml;
use crate::gocompat::json;

use super::model::{Bundle, Channel, DeclarativeConfig, Deprecation, Meta, Package};
use serde::Serialize;
use std::collections::BTreeMap;

pub use olmpack_ground::gocompat::goyaml::emit::json_to_yaml;
pub use olmpack_ground::gocompat::json::{go_indent, to_compact, write_json_blob};

/// Output format of `render`, `init` and templates (`-o json|yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// opm's default: 4-space JSON, one blob after another.
    #[default]
    Json,
    /// go-yaml v2 documents, each preceded by `---`.
    Yaml,
}

/// Why a catalog could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A blob could not be serialized (only possible for invalid raw JSON in a property value).
    #[error("cannot serialize catalog blob: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The stream given to [`write_config_to`] refused the bytes.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Appends one blob as `---\n` followed by go-yaml v2's rendering of its JSON form.
pub fn write_yaml_blob<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), WriteError> {
    // The compact JSON text (raw property values copied as they are) read back into a tree that
    // borrows its strings from it: the value opm's YAML writer sees (it marshals to JSON and
    // decodes that), without a `serde_json::Value` and its allocation per string and map node.
    if let Ok(text) = json::to_compact(value) {
        let start = out.len();
        out.extend_from_slice(b"---\n");
        if yaml::json_text_to_yaml(out, &text).is_ok() {
            return Ok(());
        }
        out.truncate(start);
    }
    // Only reached on text serde_json refuses as a whole but accepts in parts (a raw value
    // nested close to serde_json's depth limit): the value built directly, its errors reported.
    let tree = serde_json::to_value(value)?;
    out.extend_from_slice(b"---\n");
    yaml::json_to_yaml(out, &tree);
    Ok(())
}

/// Appends one blob in `format`.
pub fn write_blob<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    format: Format,
) -> Result<(), WriteError> {
    match format {
        Format::Json => Ok(json::write_json_blob(out, value)?),
        Format::Yaml => write_yaml_blob(out, value),
    }
}

/// Appends a whole catalog in opm's `configsByPackage` order: packages by name (blobs whose
/// package is empty are dropped, as opm drops them, except other-schema blobs); per package the
/// `olm.package` blobs, channels by name, bundles by name (plain string order), other schemas
/// (stable by schema), deprecations; finally other-schema blobs without a package.
/// opm sorts channels and bundles with an unstable sort; equal names keep input order here.
///
/// Large catalogs are written on several threads (each blob into its own buffer, joined in
/// order), so the bytes never depend on scheduling.
pub fn write_config(
    out: &mut Vec<u8>,
    cfg: &DeclarativeConfig,
    format: Format,
) -> Result<(), WriteError> {
    let jobs = crate::parallel::cores();
    write_config_with(out, cfg, format, jobs)
}

/// Number of blobs [`write_config`] writes for `cfg` (blobs opm drops are not counted).
pub fn blob_count(cfg: &DeclarativeConfig) -> usize {
    config_order(cfg).len()
}

/// One blob of the output, in the order it is written.
#[derive(Clone, Copy)]
enum Blob<'a> {
    Package(&'a Package),
    Channel(&'a Channel),
    Bundle(&'a Bundle),
    Other(&'a Meta),
    Deprecation(&'a Deprecation),
}

/// Where a blob goes in opm's `configsByPackage` order. The field order is the sort order:
/// packages by name, then blobs without a package (only other schemas are kept); within a
/// package the `olm.package` blobs, channels by name, bundles by name, other schemas by schema,
/// deprecations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place<'a> {
    no_package: bool,
    package: &'a str,
    /// 0 package, 1 channel, 2 bundle, 3 other schema, 4 deprecations.
    rank: u8,
    /// The name or schema compared within a rank; empty where opm keeps input order.
    key: &'a str,
}

impl<'a> Blob<'a> {
    /// The blob's [`Place`], or `None` for a blob opm drops (one without a package, unless it
    /// is of another schema).
    fn place(self) -> Option<Place<'a>> {
        let (package, rank, key): (&'a str, u8, &'a str) = match self {
            Blob::Package(p) => (&p.name, 0, ""),
            Blob::Channel(c) => (&c.package, 1, &c.name),
            Blob::Bundle(b) => (&b.package, 2, &b.name),
            // Package-less blobs of other schemas stay in input order, unsorted.
            Blob::Other(o) if o.package.is_empty() => ("", 3, ""),
            Blob::Other(o) => (&o.package, 3, &o.schema),
            Blob::Deprecation(d) => (&d.package, 4, ""),
        };
        if package.is_empty() && !matches!(self, Blob::Other(_)) {
            return None;
        }
        Some(Place {
            no_package: package.is_empty(),
            package,
            rank,
            key,
        })
    }
}

impl Blob<'_> {
    fn write(self, out: &mut Vec<u8>, format: Format) -> Result<(), WriteError> {
        match self {
            Blob::Package(p) => write_blob(out, p, format),
            Blob::Channel(c) => write_blob(out, c, format),
            Blob::Bundle(b) => write_blob(out, b, format),
            Blob::Other(o) => write_blob(out, o, format),
            Blob::Deprecation(d) => write_blob(out, d, format),
        }
    }
}

/// Below this many blobs the threads cost more than they save.
const PARALLEL_BLOBS: usize = 64;

/// [`write_config`] on at most `jobs` threads.
pub fn write_config_with(
    out: &mut Vec<u8>,
    cfg: &DeclarativeConfig,
    format: Format,
    jobs: usize,
) -> Result<(), WriteError> {
    write_to_sink(out, cfg, format, jobs)
}

/// [`write_config`] streamed to `w`: the same bytes, handed over in pieces of about a megabyte
/// as they are ready, so memory holds only the pieces in flight. Bytes already handed over stay
/// written if a later blob fails, so callers check their inputs before calling it.
pub fn write_config_to<W: std::io::Write + Send>(
    w: &mut W,
    cfg: &DeclarativeConfig,
    format: Format,
) -> Result<(), WriteError> {
    let mut sink = Stream {
        w,
        buf: Vec::with_capacity(STREAM_PIECE + STREAM_PIECE / 4),
    };
    write_to_sink(&mut sink, cfg, format, crate::parallel::cores())?;
    sink.flush()
}

/// Where the writer puts finished bytes: memory, or a stream.
trait Sink {
    /// Appends bytes in output order.
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError>;
    /// The buffer a serial writer writes blobs into directly.
    fn buffer(&mut self) -> &mut Vec<u8>;
    /// Hands over what the buffer holds once it is large enough.
    fn settle(&mut self) -> Result<(), WriteError>;
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.extend_from_slice(bytes);
        Ok(())
    }
    fn buffer(&mut self) -> &mut Vec<u8> {
        self
    }
    fn settle(&mut self) -> Result<(), WriteError> {
        Ok(())
    }
}

/// Size of the pieces [`write_config_to`] hands to its stream.
const STREAM_PIECE: usize = 1 << 20;

/// A stream behind a buffer of about [`STREAM_PIECE`].
struct Stream<'w, W: std::io::Write> {
    w: &'w mut W,
    buf: Vec<u8>,
}

impl<W: std::io::Write> Stream<'_, W> {
    fn flush(&mut self) -> Result<(), WriteError> {
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        self.w.flush()?;
        Ok(())
    }
}

impl<W: std::io::Write> Sink for Stream<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        if self.buf.len() + bytes.len() > STREAM_PIECE && !self.buf.is_empty() {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        if bytes.len() >= STREAM_PIECE {
            self.w.write_all(bytes)?;
        } else {
            self.buf.extend_from_slice(bytes);
        }
        Ok(())
    }
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
    fn settle(&mut self) -> Result<(), WriteError> {
        if self.buf.len() >= STREAM_PIECE {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

fn write_to_sink<S: Sink + Send>(
    out: &mut S,
    cfg: &DeclarativeConfig,
    format: Format,
    jobs: usize,
) -> Result<(), WriteError> {
    let blobs = config_order(cfg);
    if jobs <= 1 || blobs.len() < PARALLEL_BLOBS {
        for blob in &blobs {
            blob.write(out.buffer(), format)?;
            out.settle()?;
        }
        return Ok(());
    }
    // Small contiguous chunks taken from a shared counter keep both threads busy when blob
    // sizes differ. A finished chunk is appended to `out` as soon as every chunk before it is,
    // so only the chunks written out of order wait in memory, not a second copy of the output.
    let chunks: Vec<&[Blob]> = blobs.chunks(16).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let joined = std::sync::Mutex::new(Joiner {
        out,
        next: 0,
        waiting: BTreeMap::new(),
        failed: None,
    });
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs.min(chunks.len()))
            .map(|_| {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(chunk) = chunks.get(i) else { break };
                        let mut buf = Vec::new();
                        let result = chunk
                            .iter()
                            .try_for_each(|blob| blob.write(&mut buf, format))
                            .map(|()| buf);
                        let stop = result.is_err();
                        if let Ok(mut joiner) = joined.lock() {
                            joiner.add(i, result);
                        }
                        if stop {
                            // Later chunks cannot be written any more; let the others stop.
                            next.fetch_add(chunks.len(), std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for handle in handles {
            // A writer panicked: carry the panic to the caller's guard, as a serial write
            // would have.
            if let Err(payload) = handle.join() {
                std::panic::resume_unwind(payload);
            }
        }
    });
    // A panicking writer was rethrown above, so the lock cannot be poisoned here.
    let joiner = joined
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(error) = joiner.failed {
        // The first error in chunk order is the one a serial write would have met.
        return Err(error);
    }
    // Every chunk was appended; anything left (not possible) is written here, in order.
    for chunk in chunks.get(joiner.next..).unwrap_or(&[]) {
        for blob in *chunk {
            blob.write(joiner.out.buffer(), format)?;
            joiner.out.settle()?;
        }
    }
    Ok(())
}

/// Appends chunks written on several threads to the output in chunk order.
struct Joiner<'o, S: Sink> {
    out: &'o mut S,
    /// The chunk to append next.
    next: usize,
    /// Chunks finished before all those in front of them.
    waiting: BTreeMap<usize, Result<Vec<u8>, WriteError>>,
    /// The error of the earliest failed chunk reached in order.
    failed: Option<WriteError>,
}

impl<S: Sink> Joiner<'_, S> {
    fn add(&mut self, i: usize, chunk: Result<Vec<u8>, WriteError>) {
        self.waiting.insert(i, chunk);
        while self.failed.is_none() {
            let Some(chunk) = self.waiting.remove(&self.next) else {
                break;
            };
            if let Err(error) = chunk.and_then(|bytes| self.out.put(&bytes)) {
                self.failed = Some(error);
            }
            self.next += 1;
        }
    }
}

/// The blobs of `cfg` in the order [`write_config`] writes them: every blob opm keeps, sorted
/// by its [`Place`]; equal places keep input order (the sort is stable).
fn config_order(cfg: &DeclarativeConfig) -> Vec<Blob<'_>> {
    let mut placed: Vec<(Place<'_>, Blob<'_>)> = cfg
        .packages
        .iter()
        .map(Blob::Package)
        .chain(cfg.channels.iter().map(Blob::Channel))
        .chain(cfg.bundles.iter().map(Blob::Bundle))
        .chain(cfg.others.iter().map(Blob::Other))
        .chain(cfg.deprecations.iter().map(Blob::Deprecation))
        .filter_map(|blob| blob.place().map(|place| (place, blob)))
        .collect();
    placed.sort_by(|a, b| a.0.cmp(&b.0));
    placed.into_iter().map(|(_, blob)| blob).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::{Origin, Property};
    use crate::catalog::model::{SCHEMA_BUNDLE, property_type};

    fn bundle(package: &str, i: usize) -> Bundle {
        let value = format!(
            r#"{{"packageName":"{package}","version":"1.{i}.0","note":"line one\nline two {i} \u2028"}}"#
        );
        Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: format!("{package}.v1.{i}.0"),
            package: package.into(),
            image: format!("quay.io/x/{package}@sha256:{i:064}"),
            properties: vec![Property::new(property_type::PACKAGE, value).expect("json")],
            related_images: Vec::new(),
            objects: Vec::new(),
            csv_json: None,
            origin: Origin::default(),
        }
    }

    #[test]
    fn threads_write_the_same_bytes_in_the_same_order() {
        let mut cfg = DeclarativeConfig::default();
        // Packages and bundles out of order, more blobs than the parallel threshold.
        for i in (0..150).rev() {
            cfg.bundles
                .push(bundle(if i % 3 == 0 { "b" } else { "a" }, i));
        }
        for format in [Format::Json, Format::Yaml] {
            let mut serial = Vec::new();
            write_config_with(&mut serial, &cfg, format, 1).expect("serial");
            for jobs in [2, 3, 8] {
                let mut parallel = Vec::new();
                write_config_with(&mut parallel, &cfg, format, jobs).expect("parallel");
                assert_eq!(serial, parallel, "{format:?} with {jobs} threads");
            }
            // Streamed (pieces of about a megabyte, many blobs each): the same bytes.
            let mut streamed = Vec::new();
            write_config_to(&mut streamed, &cfg, format).expect("stream");
            assert_eq!(serial, streamed, "{format:?} streamed");
            let text = String::from_utf8(serial).expect("utf-8");
            // Package "a" first, bundles by name within it.
            let a = text.find("a.v1.1.0").expect("a");
            let b = text.find("b.v1.0.0").expect("b");
            assert!(a < b);
        }
    }

    /// A stream that takes a few bytes at a time, then refuses.
    struct Trickle {
        got: Vec<u8>,
        refuse_after: usize,
    }

    impl std::io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.got.len() >= self.refuse_after {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            let n = buf.len().min(7);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn streaming_gives_the_same_bytes_and_reports_a_refusing_stream() {
        let mut cfg = DeclarativeConfig::default();
        // Large enough for several stream pieces, in parallel chunks.
        for i in 0..9000 {
            cfg.bundles.push(bundle(["c", "a", "b"][i % 3], i));
        }
        for format in [Format::Json, Format::Yaml] {
            let mut whole = Vec::new();
            write_config(&mut whole, &cfg, format).expect("memory");
            assert!(whole.len() > 2 * STREAM_PIECE, "{}", whole.len());
            let mut slow = Trickle {
                got: Vec::new(),
                refuse_after: usize::MAX,
            };
            write_config_to(&mut slow, &cfg, format).expect("stream");
            assert_eq!(whole, slow.got, "{format:?}");
            let mut broken = Trickle {
                got: Vec::new(),
                refuse_after: 1000,
            };
            let err = write_config_to(&mut broken, &cfg, format).expect_err("refused");
            assert!(matches!(err, WriteError::Io(_)), "{err}");
        }
    }
}
