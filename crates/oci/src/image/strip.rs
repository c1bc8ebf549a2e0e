//! Taking folders out of an image's layers: what `catalog build` does to a catalog image whose
//! catalog (`/configs`) and serve cache (`/tmp/cache`) it replaces.
//!
//! Why a tar reader of its own: a layer that holds a catalog *and* other files (a squashed
//! image, opm's older single-stage Dockerfile whose `RUN … --cache-only` step also wrote other
//! files) must be rewritten without the catalog, and every other entry must come out exactly as
//! it went in: its header blocks, PAX records (file capabilities, sub-second times, long names),
//! GNU long-name blocks and data are copied byte for byte, so nothing of the base changes but
//! what was asked. Each logical entry (its extension headers, its header and its data) is one
//! unit routed whole to the kept output, to the taken-out output, or to both.
//!
//! A layer whose entries are all inside the folders taken out (or are the folders' parents,
//! such as `tmp/`) is dropped whole ([`LayerUse::Drop`]); a layer without any of them is kept
//! as it is (same blob, same digest: [`LayerUse::Keep`]); only a mixed one is rewritten
//! ([`LayerUse::Rewrite`]). OCI whiteouts count as what they remove: `.wh.configs` and
//! `configs/.wh..wh..opq` belong to `configs`.

use super::error::ImageError;
use std::io::{self, Read, Write};

/// A layer's verdict once listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerUse {
    /// Nothing of the folders: the layer stays as it is.
    Keep,
    /// Only the folders (and their parents): the layer goes.
    Drop,
    /// Both: the layer is rewritten without the folders.
    Rewrite,
}

/// Where one entry goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Outside the folders.
    Other,
    /// Inside one of the folders, by its index (or a whiteout of something inside).
    Area(usize),
    /// A folder that is a parent of one of the folders (`tmp/` for `tmp/cache`).
    Parent,
    /// An opaque whiteout of a parent folder: hides lower content of both kinds.
    Both,
}

/// What [`scan`] counted in a layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Entries inside the folders.
    pub area: usize,
    /// Entries outside them (parents not counted).
    pub other: usize,
    /// Entries inside each folder, in the order [`Areas::new`] was given them.
    pub per_area: Vec<usize>,
}

impl Scan {
    /// Whether the layer stays, goes, or is rewritten.
    pub fn verdict(&self) -> LayerUse {
        match (self.area, self.other) {
            (0, _) => LayerUse::Keep,
            (_, 0) => LayerUse::Drop,
            _ => LayerUse::Rewrite,
        }
    }
}

/// The folders taken out, as clean relative paths (`configs`, `tmp/cache`).
#[derive(Debug, Clone)]
pub struct Areas(Vec<String>);

impl Areas {
    /// `folders` as absolute or relative paths; `/`, `.` and empty ones are ignored.
    pub fn new<S: AsRef<str>>(folders: &[S]) -> Areas {
        Areas(
            folders
                .iter()
                .map(|f| f.as_ref().trim_matches('/').to_string())
                .filter(|f| !f.is_empty() && f != ".")
                .collect(),
        )
    }

    fn which(&self, path: &str) -> Option<usize> {
        self.0.iter().position(|a| {
            path == a
                || path
                    .strip_prefix(a.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    }

    fn inside(&self, path: &str) -> bool {
        self.which(path).is_some()
    }

    fn parent_of_one(&self, path: &str) -> bool {
        self.0
            .iter()
            .any(|a| path.is_empty() || a.strip_prefix(path).is_some_and(|r| r.starts_with('/')))
    }

    fn part(&self, path: &str, is_dir: bool) -> Part {
        let (parent, name) = match path.rsplit_once('/') {
            Some((p, n)) => (p, n),
            None => ("", path),
        };
        if name == ".wh..wh..opq" {
            return if let Some(i) = self.which(parent) {
                Part::Area(i)
            } else if self.parent_of_one(parent) {
                Part::Both
            } else {
                Part::Other
            };
        }
        if let Some(hidden) = name.strip_prefix(".wh.") {
            let target = if parent.is_empty() {
                hidden.to_string()
            } else {
                format!("{parent}/{hidden}")
            };
            return match self.which(&target) {
                Some(i) => Part::Area(i),
                None => Part::Other,
            };
        }
        if let Some(i) = self.which(path) {
            Part::Area(i)
        } else if is_dir && self.parent_of_one(path) {
            Part::Parent
        } else {
            Part::Other
        }
    }
}

/// A tar path as a clean relative path: `./a/b/` is `a/b`, a leading `/` goes (as container
/// runtimes read it), `..` is refused.
fn clean(raw: &[u8], layer: &str) -> Result<String, ImageError> {
    let text = String::from_utf8_lossy(raw);
    let mut parts = Vec::new();
    for p in text.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                return Err(ImageError::UnsafeLayer {
                    layer: layer.to_string(),
                    reason: format!("path {text} contains '..'"),
                });
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

const BLOCK: usize = 512;
/// Largest PAX or GNU long-name record read (real ones are a few hundred bytes).
const MAX_EXTENSION: u64 = 1 << 20;

fn read_block<R: Read>(r: &mut R, buf: &mut [u8; BLOCK]) -> io::Result<bool> {
    let mut filled = 0;
    while filled < BLOCK {
        match r.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "tar stream ends inside a header block",
                ));
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

fn checksum_ok(block: &[u8; BLOCK], header: &tar::Header) -> bool {
    let Ok(want) = header.cksum() else {
        return false;
    };
    let sum: u32 = block[..148]
        .iter()
        .chain(&[b' '; 8])
        .chain(&block[156..])
        .map(|b| u32::from(*b))
        .sum();
    sum == want
}

/// One logical tar entry as the router sees it.
struct EntryView<'a> {
    path: &'a str,
    kind: tar::EntryType,
    link: Option<&'a str>,
}

/// Where an entry's bytes go: (kept output, taken-out output).
type Route = (bool, bool);

/// The names the extension headers before an entry give it (a PAX `path`/`linkpath`, or
/// GNU's long name and long link), which win over its header's own.
#[derive(Default)]
struct LongNames {
    long_name: Option<Vec<u8>>,
    long_link: Option<Vec<u8>>,
    pax_path: Option<Vec<u8>>,
    pax_link: Option<Vec<u8>>,
}

impl LongNames {
    /// Keeps what one extension header (`kind`, its data without padding) says.
    fn record(&mut self, kind: tar::EntryType, mut data: Vec<u8>) -> Result<(), String> {
        match kind {
            tar::EntryType::XHeader => {
                for ext in tar::PaxExtensions::new(&data) {
                    let ext = ext.map_err(|e| format!("a bad PAX record: {e}"))?;
                    match ext.key_bytes() {
                        b"path" => self.pax_path = Some(ext.value_bytes().to_vec()),
                        b"linkpath" => self.pax_link = Some(ext.value_bytes().to_vec()),
                        _ => {}
                    }
                }
            }
            tar::EntryType::GNULongName => {
                let end = data.iter().position(|b| *b == 0).unwrap_or(data.len());
                data.truncate(end);
                self.long_name = Some(data);
            }
            _ => {
                let end = data.iter().position(|b| *b == 0).unwrap_or(data.len());
                data.truncate(end);
                self.long_link = Some(data);
            }
        }
        Ok(())
    }

    /// The entry's path and link target: PAX first, then GNU's, then the header's.
    fn take(&mut self, header: &tar::Header) -> (Vec<u8>, Option<Vec<u8>>) {
        let path = self
            .pax_path
            .take()
            .or_else(|| self.long_name.take())
            .unwrap_or_else(|| header.path_bytes().into_owned());
        let link = self
            .pax_link
            .take()
            .or_else(|| self.long_link.take())
            .or_else(|| header.link_name_bytes().map(|l| l.into_owned()));
        (path, link)
    }
}

/// Walks a (decompressed) tar stream entry by entry, asking `route` where each goes and
/// copying its raw bytes there. The end-of-archive blocks and anything after them go to `kept`
/// as they are; `taken` gets two zero blocks. Returns after the whole stream was read.
fn walk<R: Read>(
    mut r: R,
    layer: &str,
    mut kept: Option<&mut dyn Write>,
    mut taken: Option<&mut dyn Write>,
    route: &mut dyn FnMut(&EntryView<'_>) -> Result<Route, ImageError>,
) -> Result<(), ImageError> {
    let bad = |reason: String| ImageError::UnsafeLayer {
        layer: layer.to_string(),
        reason,
    };
    let read_err = |e: io::Error| bad(format!("cannot read: {e}"));
    let write_err = |e: io::Error| ImageError::Read {
        digest: layer.to_string(),
        source: e,
    };
    let mut block = [0u8; BLOCK];
    let mut group: Vec<u8> = Vec::new();
    let mut names = LongNames::default();
    loop {
        if !read_block(&mut r, &mut block).map_err(read_err)? {
            // No end-of-archive blocks: tolerated (some writers omit them), but nothing may
            // be pending.
            if !group.is_empty() {
                return Err(bad("the tar stream ends after an extension header".into()));
            }
            if let Some(t) = taken.as_deref_mut() {
                t.write_all(&[0u8; 2 * BLOCK]).map_err(write_err)?;
            }
            return Ok(());
        }
        if block.iter().all(|b| *b == 0) {
            if let Some(k) = kept.as_deref_mut() {
                k.write_all(&block).map_err(write_err)?;
                io::copy(&mut r, k).map_err(read_err)?;
            } else {
                io::copy(&mut r, &mut io::sink()).map_err(read_err)?;
            }
            if let Some(t) = taken.as_deref_mut() {
                t.write_all(&[0u8; 2 * BLOCK]).map_err(write_err)?;
            }
            return Ok(());
        }
        let head = block;
        let header = tar::Header::from_byte_slice(&head);
        if !checksum_ok(&head, header) {
            return Err(bad(
                "a tar header's checksum is wrong (corrupt layer)".into()
            ));
        }
        let kind = header.entry_type();
        let size = header
            .entry_size()
            .map_err(|e| bad(format!("a tar header's size is unreadable: {e}")))?;
        let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
        group.extend_from_slice(&block);
        if matches!(
            kind,
            tar::EntryType::XHeader | tar::EntryType::GNULongName | tar::EntryType::GNULongLink
        ) {
            if size > MAX_EXTENSION {
                return Err(bad(format!("an extension header of {size} bytes")));
            }
            let mut data = vec![0u8; padded as usize];
            r.read_exact(&mut data).map_err(read_err)?;
            group.extend_from_slice(&data);
            data.truncate(size as usize);
            names.record(kind, data).map_err(bad)?;
            continue;
        }
        // Old GNU sparse files carry more sparse maps in blocks after the header.
        if kind == tar::EntryType::GNUSparse
            && header.as_gnu().is_some_and(tar::GnuHeader::is_extended)
        {
            loop {
                if !read_block(&mut r, &mut block).map_err(read_err)? {
                    return Err(bad("the tar stream ends inside a sparse header".into()));
                }
                group.extend_from_slice(&block);
                // `GnuExtSparseHeader`: 21 sparse entries of 24 bytes, then `isextended`.
                if block[504] == 0 {
                    break;
                }
            }
        }
        let (to_kept, to_taken) = if kind == tar::EntryType::XGlobalHeader {
            (true, false)
        } else {
            let (raw_path, raw_link) = names.take(header);
            let path = clean(&raw_path, layer)?;
            let link = match &raw_link {
                Some(l) if kind.is_hard_link() => Some(clean(l, layer)?),
                Some(l) => Some(String::from_utf8_lossy(l).into_owned()),
                None => None,
            };
            route(&EntryView {
                path: &path,
                kind,
                link: link.as_deref(),
            })?
        };
        names = LongNames::default();
        if to_kept && let Some(k) = kept.as_deref_mut() {
            k.write_all(&group).map_err(write_err)?;
        }
        if to_taken && let Some(t) = taken.as_deref_mut() {
            t.write_all(&group).map_err(write_err)?;
        }
        group.clear();
        // The data, in chunks, to where the entry goes.
        let mut left = padded;
        let mut buf = vec![0u8; 64 * 1024];
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            r.read_exact(&mut buf[..n]).map_err(read_err)?;
            if to_kept && let Some(k) = kept.as_deref_mut() {
                k.write_all(&buf[..n]).map_err(write_err)?;
            }
            if to_taken && let Some(t) = taken.as_deref_mut() {
                t.write_all(&buf[..n]).map_err(write_err)?;
            }
            left -= n as u64;
        }
    }
}

/// Lists a (decompressed) layer: how many entries are inside the folders and how many outside.
pub fn scan<R: Read>(reader: R, areas: &Areas, layer: &str) -> Result<Scan, ImageError> {
    let mut scan = Scan {
        per_area: vec![0; areas.0.len()],
        ..Scan::default()
    };
    walk(reader, layer, None, None, &mut |e| {
        match areas.part(e.path, e.kind.is_dir()) {
            Part::Area(i) => {
                scan.area += 1;
                scan.per_area[i] += 1;
            }
            Part::Other => scan.other += 1,
            Part::Both => {
                scan.area += 1;
                scan.other += 1;
            }
            Part::Parent => {}
        }
        Ok((false, false))
    })?;
    Ok(scan)
}

/// Splits a (decompressed) layer: entries outside the folders (and the folders' parents) to
/// `kept` when given, entries inside folder number `take` to `taken` (a tar stream of its own,
/// for reading the old catalog), entries inside the other folders nowhere. A kept hard link to
/// a file taken out, or a taken one to a file kept, is refused: the two halves must each stand
/// alone.
pub fn split<R: Read>(
    reader: R,
    areas: &Areas,
    take: usize,
    layer: &str,
    kept: Option<&mut dyn Write>,
    taken: &mut dyn Write,
) -> Result<(), ImageError> {
    walk(reader, layer, kept, Some(taken), &mut |e| {
        let part = areas.part(e.path, e.kind.is_dir());
        let route = match part {
            Part::Area(i) => (false, i == take),
            Part::Other | Part::Parent => (true, false),
            Part::Both => (true, true),
        };
        if let (true, Some(target)) = (e.kind.is_hard_link(), e.link) {
            let broken =
                (route.0 && areas.inside(target)) || (route.1 && areas.which(target) != Some(take));
            if broken {
                return Err(ImageError::UnsafeLayer {
                    layer: layer.to_string(),
                    reason: format!(
                        "{} is a hard link to {target}, across the folders being replaced ({})",
                        e.path,
                        areas.0.join(", ")
                    ),
                });
            }
        }
        Ok(route)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        b.into_inner().unwrap()
    }

    fn add(b: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8]) {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(if path.ends_with('/') {
            tar::EntryType::Directory
        } else {
            tar::EntryType::Regular
        });
        b.append_data(&mut h, path, data).unwrap();
    }

    fn names(tar_bytes: &[u8]) -> Vec<String> {
        tar::Archive::new(tar_bytes)
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn verdicts_and_whiteouts() {
        let areas = Areas::new(&["/configs", "/tmp/cache"]);
        let only = tar_of(|b| {
            add(b, "configs/", b"");
            add(b, "configs/p/catalog.json", b"{}");
            add(b, "tmp/", b"");
            add(b, "tmp/cache/digest", b"x");
            add(b, ".wh.configs", b"");
            add(b, "tmp/cache/.wh..wh..opq", b"");
        });
        let s = scan(&only[..], &areas, "l").unwrap();
        assert_eq!((s.area, s.other, s.per_area.clone()), (5, 0, vec![3, 2]));
        assert_eq!(s.verdict(), LayerUse::Drop);
        let none = tar_of(|b| add(b, "etc/passwd", b"root"));
        assert_eq!(
            scan(&none[..], &areas, "l").unwrap().verdict(),
            LayerUse::Keep
        );
        // `configs2` and `tmp/cachex` are not the folders.
        let near = tar_of(|b| {
            add(b, "configs2/x", b"");
            add(b, "tmp/cachex", b"");
        });
        assert_eq!(scan(&near[..], &areas, "l").unwrap().area, 0);
    }

    #[test]
    fn split_copies_kept_entries_byte_for_byte() {
        let long = format!("usr/share/{}/file", "d".repeat(150));
        let layer = tar_of(|b| {
            add(b, "bin/opm", b"binary");
            add(b, "configs/p/catalog.json", b"{\"schema\":\"olm.package\"}");
            add(b, &long, b"long");
            add(b, "tmp/cache/cache/packages.json", b"[]");
        });
        let areas = Areas::new(&["configs", "tmp/cache"]);
        let (mut kept, mut taken) = (Vec::new(), Vec::new());
        split(&layer[..], &areas, 0, "l", Some(&mut kept), &mut taken).unwrap();
        assert_eq!(names(&kept), ["bin/opm", long.as_str()]);
        assert_eq!(names(&taken), ["configs/p/catalog.json"]);
        // The kept entries are the source's bytes: the source without the other entries.
        let expected = tar_of(|b| {
            add(b, "bin/opm", b"binary");
            add(b, &long, b"long");
        });
        assert_eq!(kept[..kept.len() - 1024], expected[..expected.len() - 1024]);
        // A hard link across the line is refused.
        let linked = tar_of(|b| {
            add(b, "configs/a", b"x");
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Link);
            h.set_size(0);
            b.append_link(&mut h, "etc/a", "configs/a").unwrap();
        });
        let err = split(
            &linked[..],
            &areas,
            0,
            "l",
            Some(&mut Vec::new()),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("hard link"), "{err}");
        // `..` is refused.
        let mut bad = tar::Header::new_gnu();
        bad.as_old_mut().name[..9].copy_from_slice(b"../escape");
        bad.set_size(0);
        bad.set_cksum();
        let escaping = tar_of(|b| b.append(&bad, &[][..]).unwrap());
        assert!(scan(&escaping[..], &areas, "l").is_err());
    }
}
