//! The output of a render of many sources, assembled without holding their models.
//!
//! opm writes every source of one `render` call as one catalog, ordered by package across all
//! of them ([`super::write_config`]), so nothing can be printed before the last source is read.
//! Holding every source's model until then costs about 1.3 times the input (660 MB for the 809
//! package catalogs of the two public repositories). A [`Spool`] instead takes each source as
//! soon as it is finished: its blobs are serialized at once (on the thread that loaded it), kept
//! in memory up to [`MEMORY_LIMIT`] and in an unnamed temporary file beyond, and only their
//! place in opm's order is remembered. The model is then dropped, so memory holds the sources
//! being loaded, not all of them; [`Spool::write_to`] copies the bytes out in order.

use super::{Blob, Format, WriteError, config_order};
use crate::catalog::model::DeclarativeConfig;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;
use tempfile::SpooledTempFile;

/// Serialized output kept in memory before it moves to a temporary file.
pub const MEMORY_LIMIT: usize = 8 << 20;

/// Blobs of a source serialized per piece of work when several threads share one source.
const CHUNK: usize = 16;

/// Serialized blobs of many sources with their places in opm's order.
pub struct Spool {
    format: Format,
    store: Mutex<Store>,
}

struct Store {
    bytes: SpooledTempFile,
    /// Bytes written to `bytes` so far (the offset of the next source).
    end: u64,
    entries: Vec<Entry>,
}

/// Where one serialized blob sits in opm's order (its [`super::Place`], owned), and in the spool.
struct Entry {
    no_package: bool,
    package: Box<str>,
    rank: u8,
    key: Box<str>,
    /// Equal keys keep input order: the source's position, then the blob's within it.
    source: usize,
    seq: usize,
    offset: u64,
    len: u64,
}

impl Entry {
    fn order(&self) -> (bool, &str, u8, &str, usize, usize) {
        (
            self.no_package,
            &self.package,
            self.rank,
            &self.key,
            self.source,
            self.seq,
        )
    }
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spool")
            .field("format", &self.format)
            .field("blobs", &self.len())
            .finish()
    }
}

impl Spool {
    /// An empty spool for output in `format`.
    pub fn new(format: Format) -> Self {
        Spool {
            format,
            store: Mutex::new(Store {
                bytes: SpooledTempFile::new(MEMORY_LIMIT),
                end: 0,
                entries: Vec::new(),
            }),
        }
    }

    /// Number of blobs the output holds.
    pub fn len(&self) -> usize {
        self.store.lock().map_or(0, |s| s.entries.len())
    }

    /// Whether no blob was added yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Serializes every blob of `cfg`, source number `source` of the render (sources are
    /// numbered in the order given; equal sort keys keep that order), on up to `jobs` threads.
    pub fn add(
        &self,
        source: usize,
        cfg: &DeclarativeConfig,
        jobs: usize,
    ) -> Result<(), WriteError> {
        let blobs = config_order(cfg);
        let chunks: Vec<&[Blob]> = blobs.chunks(CHUNK).collect();
        let jobs = if blobs.len() < super::PARALLEL_BLOBS {
            1
        } else {
            jobs
        };
        let written = crate::parallel::map_indexed(chunks.len(), jobs, None, |i| {
            let mut buf = Vec::new();
            let mut lens = Vec::new();
            for blob in chunks.get(i).copied().unwrap_or(&[]) {
                let start = buf.len();
                blob.write(&mut buf, self.format)?;
                lens.push((buf.len() - start) as u64);
            }
            Ok::<_, WriteError>((buf, lens))
        });
        let mut store = self.store.lock().map_err(|_| poisoned())?;
        let mut offset = store.end;
        let mut blob_iter = blobs.iter().enumerate();
        for piece in written {
            let (buf, lens) = piece?;
            store.bytes.write_all(&buf).map_err(spool_error)?;
            for len in lens {
                let Some((seq, blob)) = blob_iter.next() else {
                    break;
                };
                // `config_order` keeps only blobs that have a place.
                if let Some(place) = blob.place() {
                    store.entries.push(Entry {
                        no_package: place.no_package,
                        package: place.package.into(),
                        rank: place.rank,
                        key: place.key.into(),
                        source,
                        seq,
                        offset,
                        len,
                    });
                }
                offset += len;
            }
            store.end = offset;
        }
        Ok(())
    }

    /// Writes every blob added, in opm's order, to `w`; ranges that follow each other in the
    /// spool are copied in pieces of up to a megabyte.
    pub fn write_to<W: Write>(self, w: &mut W) -> Result<(), WriteError> {
        let mut store = self.store.into_inner().map_err(|_| poisoned())?;
        let mut entries = std::mem::take(&mut store.entries);
        entries.sort_unstable_by(|a, b| a.order().cmp(&b.order()));
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for e in &entries {
            match ranges.last_mut() {
                Some((start, len)) if *start + *len == e.offset => *len += e.len,
                _ => ranges.push((e.offset, e.len)),
            }
        }
        drop(entries);
        let mut buf = vec![0u8; super::STREAM_PIECE];
        for (start, len) in ranges {
            store
                .bytes
                .seek(SeekFrom::Start(start))
                .map_err(spool_error)?;
            let mut left = len;
            while left > 0 {
                let n = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
                let piece = buf.get_mut(..n).unwrap_or_default();
                store.bytes.read_exact(piece).map_err(spool_error)?;
                w.write_all(piece)?;
                left -= n as u64;
            }
        }
        w.flush()?;
        Ok(())
    }
}

/// A thread panicked while it held the spool: the caller's guard reports the panic itself.
fn poisoned() -> std::io::Error {
    std::io::Error::other("catalog output spool unusable after a panic")
}

fn spool_error(e: std::io::Error) -> WriteError {
    WriteError::Io(std::io::Error::new(
        e.kind(),
        format!(
            "the temporary file that holds the output until every source is read failed (TMPDIR must name a writable folder with room for it): {e}"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model::{Bundle, Channel, Deprecation, Meta, Origin, Package, Property};
    use crate::catalog::model::{
        SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE, property_type,
    };

    fn bundle(package: &str, name: &str) -> Bundle {
        Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: name.into(),
            package: package.into(),
            image: format!("quay.io/x/{name}"),
            properties: vec![
                Property::new(
                    property_type::PACKAGE,
                    format!(r#"{{"packageName":"{package}"}}"#),
                )
                .expect("json"),
            ],
            related_images: Vec::new(),
            objects: Vec::new(),
            csv_json: None,
            origin: Origin::default(),
        }
    }

    fn source(package: &str, names: &[&str]) -> DeclarativeConfig {
        let mut cfg = DeclarativeConfig::default();
        cfg.packages.push(Package {
            schema: SCHEMA_PACKAGE.into(),
            name: package.into(),
            default_channel: "stable".into(),
            icon: None,
            description: String::new(),
            properties: Vec::new(),
            origin: Origin::default(),
        });
        cfg.channels.push(Channel {
            schema: SCHEMA_CHANNEL.into(),
            name: "stable".into(),
            package: package.into(),
            entries: Some(Vec::new()),
            properties: Vec::new(),
            origin: Origin::default(),
        });
        for n in names {
            cfg.bundles.push(bundle(package, n));
        }
        cfg
    }

    /// A blob of another schema.
    fn meta(schema: &str, package: &str, name: &str, json: &str) -> Meta {
        Meta {
            schema: schema.into(),
            package: package.into(),
            name: name.into(),
            blob: serde_json::value::RawValue::from_string(json.to_string()).expect("json"),
            origin: Origin::default(),
        }
    }

    /// A blob of a schema of its own without a package (`{"schema":"example.free","n":N}`).
    fn free(name: &str, n: u32) -> Meta {
        let json = format!(r#"{{"schema":"example.free","n":{n}}}"#);
        meta("example.free", "", name, &json)
    }

    fn merged(sources: &[DeclarativeConfig]) -> DeclarativeConfig {
        let mut all = DeclarativeConfig::default();
        for s in sources {
            all.packages.extend(s.packages.iter().cloned());
            all.channels.extend(s.channels.iter().cloned());
            all.bundles.extend(s.bundles.iter().cloned());
            all.deprecations.extend(s.deprecations.iter().cloned());
            all.others.extend(s.others.iter().cloned());
        }
        all
    }

    /// Sources whose packages interleave, share a package, repeat names, and carry blobs of
    /// other schemas with and without a package: the spool writes what the model writer writes.
    #[test]
    fn spooled_output_equals_the_combined_model() {
        let mut a = source("zeta", &["zeta.v2", "zeta.v1"]);
        a.others.push(free("first", 1));
        let b = source("alpha", &["alpha.v1"]);
        let mut c = source("zeta", &["zeta.v1", "zeta.v0"]);
        c.others.push(free("second", 2));
        c.others.push(meta(
            "example.a",
            "zeta",
            "x",
            r#"{"schema":"example.a","package":"zeta"}"#,
        ));
        c.deprecations.push(Deprecation {
            schema: SCHEMA_DEPRECATIONS.into(),
            package: "zeta".into(),
            entries: Vec::new(),
            origin: Origin::default(),
        });
        // A bundle without a package is dropped, as opm drops it.
        c.bundles.push(bundle("", "orphan"));
        let mut many = source("mid", &[]);
        for i in (0..100).rev() {
            many.bundles.push(bundle("mid", &format!("mid.v{i}")));
        }
        let sources = [a, b, c, many];
        for format in [Format::Json, Format::Yaml] {
            let mut want = Vec::new();
            super::super::write_config_with(&mut want, &merged(&sources), format, 1)
                .expect("model");
            for jobs in [1, 3] {
                let spool = Spool::new(format);
                // Added out of order, as loader threads finish.
                for i in [2, 0, 3, 1] {
                    spool.add(i, &sources[i], jobs).expect("add");
                }
                let mut got = Vec::new();
                spool.write_to(&mut got).expect("write");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{format:?}, {jobs} threads"
                );
            }
        }
    }

    /// Output beyond the memory limit moves to the temporary file and comes back unchanged.
    #[test]
    fn large_output_goes_through_the_temporary_file() {
        let mut big = DeclarativeConfig::default();
        let filler = "x".repeat(1 << 16);
        for i in 0..((MEMORY_LIMIT >> 16) + 64) {
            let mut b = bundle("big", &format!("big.v{i:05}"));
            b.properties
                .push(Property::new("example.filler", format!("{filler:?}")).expect("json"));
            big.bundles.push(b);
        }
        let spool = Spool::new(Format::Json);
        spool.add(0, &big, 2).expect("add");
        assert!(spool.store.lock().expect("lock").bytes.is_rolled());
        let mut got = Vec::new();
        spool.write_to(&mut got).expect("write");
        let mut want = Vec::new();
        super::super::write_config_with(&mut want, &big, Format::Json, 1).expect("model");
        assert!(got == want, "spooled output differs from the model's");
    }
}
