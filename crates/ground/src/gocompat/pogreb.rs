//! pogreb's on-disk format (github.com/akrylysov/pogreb v0.10, file format version 2), read and
//! written without Go.
//!
//! Why: opm v1.41 and later write their serve cache as a pogreb database (`pogreb.v1/db/`) and
//! prefer it over the JSON cache. Checking such a cache (`catalog cache verify`) means reading
//! every key and value as pogreb's `Get` and `Items` would, and shipping one (`catalog build
//! --cache-format pogreb`) means writing files pogreb opens as its own. Layout of a closed
//! database folder (every file starts with a 512-byte header: the signature `pogreb\x0e\xfd`
//! and the little-endian format version 2):
//! - `00000-1.psg`: the write-ahead log segment (id 0, sequence 1): records `key size (u16) |
//!   value size (u31, top bit = delete) | key | value | CRC-32 IEEE (u32)`, little-endian;
//! - `main.pix` / `overflow.pix`: the linear-hashing index, 512-byte buckets of 31 slots
//!   (`hash u32 | segment u16 | key size u16 | value size u32 | offset u32`) and the offset of an
//!   overflow bucket (i64); keys hash with MurmurHash3 x86-32 under the database's seed;
//! - `db.pmt`, `index.pmt`, `00000-1.psg.pmt`: Go `encoding/gob` streams of `dbMeta` (the hash
//!   seed), `indexMeta` (level, keys, buckets, split bucket, free overflow buckets) and
//!   `segmentMeta` (put/delete counts);
//! - `lock`: present only while a process has the database open (or after a crash, when pogreb
//!   replays the log to rebuild the index at the next open).
//!
//! [`Writer`] reproduces pogreb's insert and split sequence exactly, so that for the same seed
//! and the same puts it writes the same bytes as pogreb itself (checked against files written
//! by the real library, `tests/library/pogreb.rs`).

use std::collections::BTreeMap;
use std::path::Path;

/// The 8 bytes every pogreb file starts with.
pub const SIGNATURE: [u8; 8] = *b"pogreb\x0e\xfd";
/// The file format version pogreb v0.9 and later write.
pub const FORMAT_VERSION: u32 = 2;
/// Size of every file's header.
const HEADER_SIZE: usize = 512;
/// Size of an index bucket.
const BUCKET_SIZE: usize = 512;
/// Slots in a bucket (the most that fit 512 bytes with the overflow pointer).
const SLOTS: usize = 31;
/// pogreb splits a bucket when keys / (buckets * 31) exceeds this.
const LOAD_FACTOR: f64 = 0.7;
/// Largest key pogreb stores.
pub const MAX_KEY_LEN: usize = u16::MAX as usize;
/// Largest value pogreb stores (512 MiB).
pub const MAX_VALUE_LEN: usize = 512 << 20;
/// The one segment file a database written in one go has.
pub const SEGMENT_NAME: &str = "00000-1.psg";

/// Why a pogreb database could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PogrebError {
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] crate::fsio::FsError),
    /// A file is not what pogreb writes (pogreb says "database is corrupted").
    #[error("{file}: database is corrupted: {why}")]
    Corrupted {
        /// The file (name inside the database folder).
        file: String,
        /// What is wrong.
        why: String,
    },
    /// A key or value is larger than pogreb stores.
    #[error("{0}")]
    TooLarge(String),
}

fn corrupted(file: &str, why: impl Into<String>) -> PogrebError {
    PogrebError::Corrupted {
        file: file.to_string(),
        why: why.into(),
    }
}

/// MurmurHash3 x86-32, pogreb's key hash (`internal/hash.Sum32WithSeed`).
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h1 = seed;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k1 = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, b) in tail.iter().enumerate() {
            k1 ^= u32::from(*b) << (8 * i);
        }
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 ^= k1;
    }
    h1 ^= data.len() as u32;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^= h1 >> 16;
    h1
}

/// CRC-32 IEEE (Go's `crc32.ChecksumIEEE`), the checksum of every log record.
fn crc32(data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(data);
    c.sum()
}

fn header() -> Vec<u8> {
    let mut h = vec![0u8; HEADER_SIZE];
    h[..8].copy_from_slice(&SIGNATURE);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h
}

fn check_header(file: &str, data: &[u8]) -> Result<(), PogrebError> {
    if data.len() < HEADER_SIZE {
        return Err(corrupted(
            file,
            format!("{} bytes, shorter than the 512-byte header", data.len()),
        ));
    }
    if data[..8] != SIGNATURE {
        return Err(corrupted(file, "no pogreb signature"));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    hash: u32,
    segment_id: u16,
    key_size: u16,
    value_size: u32,
    offset: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bucket {
    slots: [Slot; SLOTS],
    next: i64,
}

impl Default for Bucket {
    fn default() -> Self {
        Bucket {
            slots: [Slot::default(); SLOTS],
            next: 0,
        }
    }
}

impl Bucket {
    fn encode(&self, out: &mut [u8]) {
        for (i, s) in self.slots.iter().enumerate() {
            let b = &mut out[i * 16..i * 16 + 16];
            b[0..4].copy_from_slice(&s.hash.to_le_bytes());
            b[4..6].copy_from_slice(&s.segment_id.to_le_bytes());
            b[6..8].copy_from_slice(&s.key_size.to_le_bytes());
            b[8..12].copy_from_slice(&s.value_size.to_le_bytes());
            b[12..16].copy_from_slice(&s.offset.to_le_bytes());
        }
        out[SLOTS * 16..SLOTS * 16 + 8].copy_from_slice(&self.next.to_le_bytes());
    }

    fn decode(data: &[u8]) -> Bucket {
        let mut b = Bucket::default();
        let u32_at =
            |o: usize| u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([data[o], data[o + 1]]);
        for (i, s) in b.slots.iter_mut().enumerate() {
            let o = i * 16;
            *s = Slot {
                hash: u32_at(o),
                segment_id: u16_at(o + 4),
                key_size: u16_at(o + 6),
                value_size: u32_at(o + 8),
                offset: u32_at(o + 12),
            };
        }
        let o = SLOTS * 16;
        let mut n = [0u8; 8];
        n.copy_from_slice(&data[o..o + 8]);
        b.next = i64::from_le_bytes(n);
        b
    }
}

/// Go `encoding/gob` for the three metadata structs pogreb keeps (fixed types, so the type
/// definitions are the exact bytes a fresh Go process sends: `dbMeta` gets type id 65,
/// `segmentMeta` 66, `indexMeta` 67 and `[]int64` 68, the order in which opm's pogreb first
/// encodes them).
mod gob {
    /// `dbMeta{HashSeed uint32}` type definition.
    pub const DB_META_TYPE: &str =
        "21ff810301010664624d65746101ff82000101010848617368536565640106000000";
    /// `segmentMeta{Full bool; PutRecords, DeleteRecords, DeletedKeys, DeletedBytes uint32}`.
    pub const SEGMENT_META_TYPE: &str = "64ff830301010b7365676d656e744d65746101ff84000105010446756c6c010200010a5075745265636f726473010600010d44656c6574655265636f726473010600010b44656c657465644b657973010600010c44656c6574656442797465730106000000";
    /// `indexMeta{Level uint8; NumKeys, NumBuckets, SplitBucketIndex uint32;
    /// FreeOverflowBuckets []int64}` and `[]int64`.
    pub const INDEX_META_TYPE: &str = "6aff8503010109696e6465784d65746101ff8600010501054c6576656c01060001074e756d4b657973010600010a4e756d4275636b657473010600011053706c69744275636b6574496e6465780106000113467265654f766572666c6f774275636b65747301ff8800000015ff87020101075b5d696e74363401ff880001040000";
    /// Type ids of the values.
    pub const DB_META_ID: i64 = 65;
    pub const SEGMENT_META_ID: i64 = 66;
    pub const INDEX_META_ID: i64 = 67;

    pub fn hex(s: &str) -> Vec<u8> {
        // The constants above are valid hex (checked by a test).
        (0..s.len() / 2 * 2)
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
            .collect()
    }

    pub fn put_uint(out: &mut Vec<u8>, v: u64) {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        let bytes = v.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push((-((8 - skip) as i64)) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }

    pub fn put_int(out: &mut Vec<u8>, v: i64) {
        let u = if v < 0 {
            ((!v as u64) << 1) | 1
        } else {
            (v as u64) << 1
        };
        put_uint(out, u);
    }

    /// One value message: length, type id, the struct's (field delta, value) pairs, 0.
    pub fn message(id: i64, fields: &[(usize, Field)]) -> Vec<u8> {
        let mut body = Vec::new();
        put_int(&mut body, id);
        let mut last = 0usize;
        for (n, f) in fields {
            let zero = match f {
                Field::Uint(v) => *v == 0,
                Field::Bool(v) => !*v,
                Field::Ints(v) => v.is_empty(),
            };
            if zero {
                continue;
            }
            put_uint(&mut body, (n - last) as u64);
            last = *n;
            match f {
                Field::Uint(v) => put_uint(&mut body, *v),
                Field::Bool(v) => put_uint(&mut body, u64::from(*v)),
                Field::Ints(v) => {
                    put_uint(&mut body, v.len() as u64);
                    for i in v {
                        put_int(&mut body, *i);
                    }
                }
            }
        }
        body.push(0);
        let mut out = Vec::new();
        put_uint(&mut out, body.len() as u64);
        out.extend_from_slice(&body);
        out
    }

    /// A field value.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Field {
        Uint(u64),
        Bool(bool),
        Ints(Vec<i64>),
    }

    /// The kinds of a struct's fields, in declaration order (field 1 first).
    #[derive(Debug, Clone, Copy)]
    pub enum Kind {
        Uint,
        Ints,
    }

    struct Cursor<'a> {
        data: &'a [u8],
        pos: usize,
    }

    impl Cursor<'_> {
        fn byte(&mut self) -> Result<u8, String> {
            let b = *self.data.get(self.pos).ok_or("gob: truncated")?;
            self.pos += 1;
            Ok(b)
        }
        fn uint(&mut self) -> Result<u64, String> {
            let b = self.byte()?;
            if b < 0x80 {
                return Ok(u64::from(b));
            }
            let n = (-(b as i8)) as usize;
            if n > 8 {
                return Err(format!("gob: bad unsigned integer length {n}"));
            }
            let mut v = 0u64;
            for _ in 0..n {
                v = (v << 8) | u64::from(self.byte()?);
            }
            Ok(v)
        }
        fn int(&mut self) -> Result<i64, String> {
            let u = self.uint()?;
            Ok(if u & 1 == 1 {
                !((u >> 1) as i64)
            } else {
                (u >> 1) as i64
            })
        }
    }

    /// Decodes the first value of a gob stream whose fields have `kinds`, skipping type
    /// definitions. Fields absent from the stream are zero.
    pub fn decode(data: &[u8], kinds: &[Kind]) -> Result<Vec<Field>, String> {
        let mut c = Cursor { data, pos: 0 };
        loop {
            let len = c.uint()? as usize;
            let end = c
                .pos
                .checked_add(len)
                .filter(|e| *e <= data.len())
                .ok_or("gob: message longer than the file")?;
            let id = c.int()?;
            if id < 0 {
                c.pos = end;
                continue;
            }
            let mut out: Vec<Field> = kinds
                .iter()
                .map(|k| match k {
                    Kind::Uint => Field::Uint(0),
                    Kind::Ints => Field::Ints(Vec::new()),
                })
                .collect();
            let mut field = 0usize;
            loop {
                let delta = c.uint()? as usize;
                if delta == 0 {
                    break;
                }
                field = field.saturating_add(delta);
                let kind = kinds
                    .get(field - 1)
                    .ok_or_else(|| format!("gob: unknown field {field}"))?;
                out[field - 1] = match kind {
                    Kind::Uint => Field::Uint(c.uint()?),
                    Kind::Ints => {
                        let n = c.uint()? as usize;
                        if n > data.len() {
                            return Err("gob: slice longer than the file".into());
                        }
                        let mut v = Vec::with_capacity(n);
                        for _ in 0..n {
                            v.push(c.int()?);
                        }
                        Field::Ints(v)
                    }
                };
            }
            if c.pos > end {
                return Err("gob: value overruns its message".into());
            }
            return Ok(out);
        }
    }
}

/// Index metadata (`index.pmt`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct IndexMeta {
    level: u8,
    num_keys: u32,
    num_buckets: u32,
    split_bucket: u32,
    free_overflow: Vec<i64>,
}

/// Segment metadata (`<segment>.pmt`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SegmentMeta {
    full: bool,
    put_records: u32,
    delete_records: u32,
    deleted_keys: u32,
    deleted_bytes: u32,
}

fn gob_file(type_def: &str, value: Vec<u8>) -> Vec<u8> {
    let mut out = header();
    out.extend_from_slice(&gob::hex(type_def));
    out.extend_from_slice(&value);
    out
}

fn encode_db_meta(seed: u32) -> Vec<u8> {
    gob_file(
        gob::DB_META_TYPE,
        gob::message(gob::DB_META_ID, &[(1, gob::Field::Uint(u64::from(seed)))]),
    )
}

fn encode_segment_meta(m: &SegmentMeta) -> Vec<u8> {
    use gob::Field::{Bool, Uint};
    gob_file(
        gob::SEGMENT_META_TYPE,
        gob::message(
            gob::SEGMENT_META_ID,
            &[
                (1, Bool(m.full)),
                (2, Uint(u64::from(m.put_records))),
                (3, Uint(u64::from(m.delete_records))),
                (4, Uint(u64::from(m.deleted_keys))),
                (5, Uint(u64::from(m.deleted_bytes))),
            ],
        ),
    )
}

fn encode_index_meta(m: &IndexMeta) -> Vec<u8> {
    use gob::Field::{Ints, Uint};
    gob_file(
        gob::INDEX_META_TYPE,
        gob::message(
            gob::INDEX_META_ID,
            &[
                (1, Uint(u64::from(m.level))),
                (2, Uint(u64::from(m.num_keys))),
                (3, Uint(u64::from(m.num_buckets))),
                (4, Uint(u64::from(m.split_bucket))),
                (5, Ints(m.free_overflow.clone())),
            ],
        ),
    )
}

fn read_gob(file: &str, data: &[u8], kinds: &[gob::Kind]) -> Result<Vec<gob::Field>, PogrebError> {
    check_header(file, data)?;
    gob::decode(&data[HEADER_SIZE..], kinds).map_err(|e| corrupted(file, e))
}

fn as_u64(f: &gob::Field) -> u64 {
    match f {
        gob::Field::Uint(v) => *v,
        gob::Field::Bool(b) => u64::from(*b),
        gob::Field::Ints(_) => 0,
    }
}

/// One record of the log.
fn encode_record(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(10 + key.len() + value.len());
    data.extend_from_slice(&(key.len() as u16).to_le_bytes());
    data.extend_from_slice(&(value.len() as u32).to_le_bytes());
    data.extend_from_slice(key);
    data.extend_from_slice(value);
    let sum = crc32(&data);
    data.extend_from_slice(&sum.to_le_bytes());
    data
}

/// The linear-hashing index, in memory, with pogreb's exact insert and split steps.
#[derive(Debug, Clone, Default)]
struct Index {
    main: Vec<Bucket>,
    /// Overflow buckets by position (offset = 512 + 512 * position); freed ones keep their
    /// old bytes until reused, as on disk.
    overflow: Vec<Bucket>,
    meta: IndexMeta,
}

/// Where a bucket lives: main by index, or overflow by file offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Main(usize),
    Overflow(i64),
}

fn overflow_pos(off: i64) -> usize {
    ((off as usize).saturating_sub(HEADER_SIZE)) / BUCKET_SIZE
}

impl Index {
    fn new() -> Index {
        Index {
            main: vec![Bucket::default()],
            overflow: Vec::new(),
            meta: IndexMeta {
                num_buckets: 1,
                ..IndexMeta::default()
            },
        }
    }

    fn bucket_index(&self, hash: u32) -> u32 {
        let level = u32::from(self.meta.level);
        let mask = |bits: u32| -> u32 {
            if bits >= 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            }
        };
        let b = hash & mask(level);
        if b < self.meta.split_bucket {
            hash & mask(level + 1)
        } else {
            b
        }
    }

    fn get(&self, at: At) -> Bucket {
        match at {
            At::Main(i) => self.main[i],
            At::Overflow(off) => self.overflow[overflow_pos(off)],
        }
    }

    fn set(&mut self, at: At, b: Bucket) {
        match at {
            At::Main(i) => self.main[i] = b,
            At::Overflow(off) => self.overflow[overflow_pos(off)] = b,
        }
    }

    fn create_overflow(&mut self) -> i64 {
        if !self.meta.free_overflow.is_empty() {
            return self.meta.free_overflow.remove(0);
        }
        self.overflow.push(Bucket::default());
        (HEADER_SIZE + (self.overflow.len() - 1) * BUCKET_SIZE) as i64
    }
}

/// pogreb's `slotWriter`: fills a bucket and chains overflow buckets as it goes.
struct SlotWriter {
    at: At,
    bucket: Bucket,
    slot: usize,
    prev: Vec<(At, Bucket)>,
}

impl SlotWriter {
    fn fresh(at: At) -> SlotWriter {
        SlotWriter {
            at,
            bucket: Bucket::default(),
            slot: 0,
            prev: Vec::new(),
        }
    }

    fn insert(&mut self, s: Slot, idx: &mut Index) {
        if self.slot == SLOTS {
            let off = idx.create_overflow();
            self.bucket.next = off;
            self.prev.push((self.at, self.bucket));
            self.at = At::Overflow(off);
            self.bucket = Bucket::default();
            self.slot = 0;
        }
        self.bucket.slots[self.slot] = s;
        self.slot += 1;
    }

    fn write(self, idx: &mut Index) {
        for (at, b) in self.prev.into_iter().rev() {
            idx.set(at, b);
        }
        idx.set(self.at, self.bucket);
    }
}

/// Writes a pogreb database as `pogreb.Open`, `Put`… and `Close` in one fresh process would.
#[derive(Debug, Clone)]
pub struct Writer {
    seed: u32,
    segment: Vec<u8>,
    index: Index,
    seg_meta: SegmentMeta,
}

impl Writer {
    /// A new empty database whose keys hash with `seed` (pogreb draws a random one; a fixed
    /// one makes the output reproducible, and any seed reads back the same).
    pub fn new(seed: u32) -> Writer {
        Writer {
            seed,
            segment: header(),
            index: Index::new(),
            seg_meta: SegmentMeta::default(),
        }
    }

    /// Number of keys.
    pub fn len(&self) -> u32 {
        self.index.meta.num_keys
    }

    /// Whether no key was put.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key_at(&self, s: &Slot) -> &[u8] {
        let start = s.offset as usize + 6;
        &self.segment[start..start + s.key_size as usize]
    }

    /// `DB.Put`: appends a record and indexes it (an existing key is overwritten, its old
    /// record counted as deleted, as pogreb does).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), PogrebError> {
        if key.len() > MAX_KEY_LEN {
            return Err(PogrebError::TooLarge(format!(
                "key of {} bytes: pogreb stores keys up to {MAX_KEY_LEN} bytes",
                key.len()
            )));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(PogrebError::TooLarge(format!(
                "value of {} bytes for key {:?}: pogreb stores values up to 512 MiB",
                value.len(),
                String::from_utf8_lossy(key)
            )));
        }
        let rec = encode_record(key, value);
        if self.segment.len() as u64 + rec.len() as u64 > u64::from(u32::MAX) {
            return Err(PogrebError::TooLarge(
                "the database would exceed one 4 GiB log segment".into(),
            ));
        }
        let offset = self.segment.len() as u32;
        self.segment.extend_from_slice(&rec);
        self.seg_meta.put_records += 1;
        let new = Slot {
            hash: murmur3_32(key, self.seed),
            segment_id: 0,
            key_size: key.len() as u16,
            value_size: value.len() as u32,
            offset,
        };
        // findInsertionBucket
        let start = At::Main(self.index.bucket_index(new.hash) as usize);
        let mut at = start;
        let (mut sw, overwrite) = loop {
            let b = self.index.get(at);
            let mut found = None;
            let mut i = 0;
            while i < SLOTS {
                let s = b.slots[i];
                if s.offset == 0 {
                    found = Some((i, false));
                    break;
                }
                if s.hash == new.hash && s.key_size == new.key_size && self.key_at(&s) == key {
                    self.seg_meta.deleted_keys += 1;
                    self.seg_meta.deleted_bytes += 10 + u32::from(s.key_size) + s.value_size;
                    found = Some((i, true));
                    break;
                }
                i += 1;
            }
            if let Some((slot, overwrite)) = found {
                break (
                    SlotWriter {
                        at,
                        bucket: b,
                        slot,
                        prev: Vec::new(),
                    },
                    overwrite,
                );
            }
            if b.next == 0 {
                break (
                    SlotWriter {
                        at,
                        bucket: b,
                        slot: SLOTS,
                        prev: Vec::new(),
                    },
                    false,
                );
            }
            at = At::Overflow(b.next);
        };
        sw.insert(new, &mut self.index);
        sw.write(&mut self.index);
        if overwrite {
            return Ok(());
        }
        self.index.meta.num_keys += 1;
        let load = f64::from(self.index.meta.num_keys)
            / (f64::from(self.index.meta.num_buckets) * SLOTS as f64);
        if load > LOAD_FACTOR {
            self.split();
        }
        Ok(())
    }

    fn split(&mut self) {
        let idx = &mut self.index;
        let updated = idx.meta.split_bucket as usize;
        let mut kept = SlotWriter::fresh(At::Main(updated));
        idx.main.push(Bucket::default());
        let mut moved = SlotWriter::fresh(At::Main(idx.main.len() - 1));
        idx.meta.split_bucket += 1;
        if u64::from(idx.meta.split_bucket) == 1u64 << idx.meta.level {
            idx.meta.level += 1;
            idx.meta.split_bucket = 0;
        }
        let mut freed = Vec::new();
        let mut at = Some(At::Main(updated));
        while let Some(cur) = at {
            let b = idx.get(cur);
            for s in b.slots {
                if s.offset == 0 {
                    break;
                }
                if idx.bucket_index(s.hash) as usize == updated {
                    kept.insert(s, idx);
                } else {
                    moved.insert(s, idx);
                }
            }
            at = if b.next != 0 {
                freed.push(b.next);
                Some(At::Overflow(b.next))
            } else {
                None
            };
        }
        idx.meta.free_overflow.extend(freed);
        moved.write(idx);
        kept.write(idx);
        idx.meta.num_buckets += 1;
    }

    /// The database's files (name, bytes), as `Close` leaves them.
    pub fn files(&self) -> Vec<(&'static str, Vec<u8>)> {
        let mut main = header();
        for b in &self.index.main {
            let mut buf = [0u8; BUCKET_SIZE];
            b.encode(&mut buf);
            main.extend_from_slice(&buf);
        }
        let mut overflow = header();
        for b in &self.index.overflow {
            let mut buf = [0u8; BUCKET_SIZE];
            b.encode(&mut buf);
            overflow.extend_from_slice(&buf);
        }
        vec![
            (SEGMENT_NAME, self.segment.clone()),
            ("00000-1.psg.pmt", encode_segment_meta(&self.seg_meta)),
            ("db.pmt", encode_db_meta(self.seed)),
            ("index.pmt", encode_index_meta(&self.index.meta)),
            ("main.pix", main),
            ("overflow.pix", overflow),
        ]
    }

    /// Writes the database into the folder `dir` (created if needed), each file with mode
    /// `file_mode`.
    pub fn write_to(&self, dir: &Path, file_mode: u32) -> Result<(), PogrebError> {
        use std::os::unix::fs::PermissionsExt;
        crate::fsio::create_dir_all(dir)?;
        for (name, bytes) in self.files() {
            let p = dir.join(name);
            std::fs::write(&p, &bytes).map_err(crate::fsio::at("write", &p))?;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(file_mode))
                .map_err(crate::fsio::at("set permissions of", &p))?;
        }
        Ok(())
    }
}

/// A key and its value.
pub type Item = (Vec<u8>, Vec<u8>);

/// A closed pogreb database, read as pogreb's `Open` + `Get`/`Items` would see it.
#[derive(Debug, Clone)]
pub struct Reader {
    seed: u32,
    index: Index,
    segments: BTreeMap<u16, Vec<u8>>,
    /// Things pogreb would do differently from reading (a `lock` file left behind).
    pub notes: Vec<String>,
}

impl Reader {
    /// Opens the database folder `dir` (read only; pogreb itself would also take a lock and
    /// rewrite the metadata files at close).
    pub fn open(dir: &Path) -> Result<Reader, PogrebError> {
        let read = |name: &str| -> Result<Vec<u8>, PogrebError> {
            let p = dir.join(name);
            Ok(crate::fsio::read(&p)?)
        };
        let mut notes = Vec::new();
        if dir.join("lock").exists() {
            notes.push(
                "a `lock` file is left in the database folder: pogreb treats the database as not closed properly and rebuilds its index from the log at open (which needs write access)".to_string(),
            );
        }
        let main = read("main.pix")?;
        check_header("main.pix", &main)?;
        let overflow = read("overflow.pix")?;
        check_header("overflow.pix", &overflow)?;
        let mut index = Index {
            main: Vec::new(),
            overflow: Vec::new(),
            meta: IndexMeta {
                num_buckets: 1,
                ..IndexMeta::default()
            },
        };
        let buckets = |data: &[u8]| -> Vec<Bucket> {
            data[HEADER_SIZE..]
                .chunks_exact(BUCKET_SIZE)
                .map(Bucket::decode)
                .collect()
        };
        index.main = buckets(&main);
        index.overflow = buckets(&overflow);
        let mut seed = 0;
        if main.len() > HEADER_SIZE {
            use gob::Kind;
            let m = read_gob(
                "index.pmt",
                &read("index.pmt")?,
                &[Kind::Uint, Kind::Uint, Kind::Uint, Kind::Uint, Kind::Ints],
            )?;
            index.meta = IndexMeta {
                level: u8::try_from(as_u64(&m[0]))
                    .map_err(|_| corrupted("index.pmt", "level above 255"))?,
                num_keys: as_u64(&m[1]) as u32,
                num_buckets: as_u64(&m[2]) as u32,
                split_bucket: as_u64(&m[3]) as u32,
                free_overflow: match &m[4] {
                    gob::Field::Ints(v) => v.clone(),
                    _ => Vec::new(),
                },
            };
            if index.meta.num_keys > 0 {
                let d = read_gob("db.pmt", &read("db.pmt")?, &[Kind::Uint])?;
                seed = as_u64(&d[0]) as u32;
            }
        } else {
            index.main = vec![Bucket::default()];
        }
        if index.meta.num_buckets as usize > index.main.len() || index.meta.level > 31 {
            return Err(corrupted(
                "index.pmt",
                format!(
                    "{} buckets recorded, main.pix holds {}",
                    index.meta.num_buckets,
                    index.main.len()
                ),
            ));
        }
        let mut segments = BTreeMap::new();
        let entries = crate::fsio::read_dir(dir)?;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".psg") else {
                continue;
            };
            let id_text = stem.split('-').next().unwrap_or("");
            let id: u16 = id_text
                .parse()
                .map_err(|_| corrupted(&name, "not a segment name (NNNNN-SEQ.psg)"))?;
            let data = read(&name)?;
            check_header(&name, &data)?;
            segments.insert(id, data);
        }
        Ok(Reader {
            seed,
            index,
            segments,
            notes,
        })
    }

    /// Number of keys the index records (`DB.Count`).
    pub fn count(&self) -> u32 {
        self.index.meta.num_keys
    }

    fn chain(&self, start: usize) -> Result<Vec<Bucket>, PogrebError> {
        let mut out = Vec::new();
        let Some(first) = self.index.main.get(start) else {
            return Err(corrupted("main.pix", format!("no bucket {start}")));
        };
        out.push(*first);
        let mut next = first.next;
        while next != 0 {
            if out.len() > self.index.overflow.len() + 1 {
                return Err(corrupted("overflow.pix", "overflow buckets form a loop"));
            }
            let pos = overflow_pos(next);
            let ok = next >= HEADER_SIZE as i64
                && (next as usize - HEADER_SIZE).is_multiple_of(BUCKET_SIZE);
            let b =
                self.index.overflow.get(pos).filter(|_| ok).ok_or_else(|| {
                    corrupted("overflow.pix", format!("no bucket at offset {next}"))
                })?;
            out.push(*b);
            next = b.next;
        }
        Ok(out)
    }

    fn key_value(&self, s: &Slot) -> Result<(&[u8], &[u8]), PogrebError> {
        let seg = self.segments.get(&s.segment_id).ok_or_else(|| {
            corrupted(
                "main.pix",
                format!("a slot names segment {} which is absent", s.segment_id),
            )
        })?;
        let start = s.offset as usize + 6;
        let mid = start + s.key_size as usize;
        let end = mid + s.value_size as usize;
        if end > seg.len() {
            return Err(corrupted(
                &format!("{:05}-*.psg", s.segment_id),
                format!("a record at offset {} runs past the end", s.offset),
            ));
        }
        Ok((&seg[start..mid], &seg[mid..end]))
    }

    /// `DB.Get`: the value of `key`, or `None`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, PogrebError> {
        let hash = murmur3_32(key, self.seed);
        for b in self.chain(self.index.bucket_index(hash) as usize)? {
            for s in b.slots {
                if s.offset == 0 {
                    break;
                }
                if s.hash != hash || s.key_size as usize != key.len() {
                    continue;
                }
                let (k, v) = self.key_value(&s)?;
                if k == key {
                    return Ok(Some(v.to_vec()));
                }
            }
        }
        Ok(None)
    }

    /// `DB.Items`: every key and value, bucket by bucket (pogreb's order).
    ///
    /// The index is the cache's content, so hostile: slots are counted before any value is
    /// copied, and an index whose slots name more bytes than the log segments hold (pogreb's
    /// index points at each record once; a crafted one can point many slots at one large value
    /// and make the copy many times the files' size) is refused as damaged.
    pub fn items(&self) -> Result<Vec<Item>, PogrebError> {
        let mut slots = Vec::new();
        let mut named = 0u64;
        let held: u64 = self.segments.values().map(|s| s.len() as u64).sum();
        for i in 0..self.index.meta.num_buckets as usize {
            for b in self.chain(i)? {
                for s in b.slots {
                    if s.offset == 0 {
                        break;
                    }
                    named = named
                        .saturating_add(u64::from(s.key_size))
                        .saturating_add(u64::from(s.value_size));
                    if named > held {
                        return Err(corrupted(
                            "main.pix",
                            format!(
                                "the index's slots name more bytes than the log segments hold ({held}): a damaged or crafted index"
                            ),
                        ));
                    }
                    slots.push(s);
                }
            }
        }
        let mut out = Vec::with_capacity(slots.len());
        for s in &slots {
            let (k, v) = self.key_value(s)?;
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    /// Checks every record of every log segment against its CRC-32 (pogreb does so only when
    /// it replays a log), naming the first bad one.
    pub fn check_log(&self) -> Result<usize, PogrebError> {
        let mut records = 0usize;
        for (id, seg) in &self.segments {
            let name = format!("{id:05}-*.psg");
            let mut pos = HEADER_SIZE;
            while pos < seg.len() {
                if pos + 6 > seg.len() {
                    return Err(corrupted(
                        &name,
                        format!("truncated record at offset {pos}"),
                    ));
                }
                let ks = u16::from_le_bytes([seg[pos], seg[pos + 1]]) as usize;
                let vs =
                    (u32::from_le_bytes([seg[pos + 2], seg[pos + 3], seg[pos + 4], seg[pos + 5]])
                        & 0x7fff_ffff) as usize;
                let end = pos + 6 + ks + vs;
                if end + 4 > seg.len() {
                    return Err(corrupted(
                        &name,
                        format!("truncated record at offset {pos}"),
                    ));
                }
                let want = u32::from_le_bytes([seg[end], seg[end + 1], seg[end + 2], seg[end + 3]]);
                if crc32(&seg[pos..end]) != want {
                    return Err(corrupted(
                        &name,
                        format!("the record at offset {pos} fails its CRC-32"),
                    ));
                }
                records += 1;
                pos = end + 4;
            }
        }
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_naming_one_record_many_times_are_refused_before_copying() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Writer::new(1);
        w.put(b"k", &[b'v'; 1000]).unwrap();
        w.write_to(dir.path(), 0o644).unwrap();
        assert_eq!(Reader::open(dir.path()).unwrap().items().unwrap().len(), 1);
        let main = dir.path().join("main.pix");
        let mut pix = std::fs::read(&main).unwrap();
        let slot = pix[HEADER_SIZE..HEADER_SIZE + 16].to_vec();
        for i in 1..SLOTS {
            pix[HEADER_SIZE + i * 16..HEADER_SIZE + (i + 1) * 16].copy_from_slice(&slot);
        }
        std::fs::write(&main, &pix).unwrap();
        let e = Reader::open(dir.path()).unwrap().items().unwrap_err();
        assert!(
            e.to_string()
                .contains("name more bytes than the log segments hold"),
            "{e}"
        );
    }

    #[test]
    fn gob_unsigned_and_signed_integers_as_go_encodes_them() {
        let mut v = Vec::new();
        gob::put_uint(&mut v, 256);
        assert_eq!(v, [0xfe, 0x01, 0x00]);
        v.clear();
        gob::put_int(&mut v, -65);
        assert_eq!(v, [0xff, 0x81]);
        v.clear();
        gob::put_int(&mut v, 68);
        assert_eq!(v, [0xff, 0x88]);
    }

    #[test]
    fn the_gob_type_definitions_are_whole_messages() {
        for t in [
            gob::DB_META_TYPE,
            gob::SEGMENT_META_TYPE,
            gob::INDEX_META_TYPE,
        ] {
            assert_eq!(t.len() % 2, 0);
            assert_eq!(gob::hex(t).len() * 2, t.len());
        }
        // A value decodes after its type definition.
        let f = read_gob("db.pmt", &encode_db_meta(42), &[gob::Kind::Uint]).unwrap();
        assert_eq!(f, vec![gob::Field::Uint(42)]);
    }

    #[test]
    fn a_truncated_gob_file_is_an_error_not_a_panic() {
        let mut data = encode_db_meta(7);
        data.truncate(HEADER_SIZE + 5);
        assert!(read_gob("db.pmt", &data, &[gob::Kind::Uint]).is_err());
        assert!(read_gob("db.pmt", b"short", &[gob::Kind::Uint]).is_err());
    }
}
