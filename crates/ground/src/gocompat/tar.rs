//! opm's serve-cache digest: FNV-64a over Go's `archive/tar` serialization of a folder
//! (`fsToTar`, operator-registry `pkg/cache/tar.go`), reproduced byte for byte.
//!
//! Why by hand: the digest must be the one opm recomputes at start (`--cache-enforce-integrity`
//! refuses the cache otherwise), and it hashes the tar stream Go's writer makes, not the files.
//! What `fsToTar` writes for each entry of `fs.WalkDir` (lexical order per folder, a folder
//! before its contents, symbolic links skipped): `tar.FileInfoHeader` with `Name` = the path
//! relative to the root (`.` for the root, no trailing `/`), mode = permission bits, uid/gid 0,
//! no user/group names, zero times (written as mtime 0). Go's writer picks USTAR when the name
//! fits (≤ 100 bytes, or splittable into prefix/name), else a PAX `path` record first
//! (`PaxHeaders.0/<name>`); then the content padded to 512 bytes; two zero blocks close it.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits (Go's `hash/fnv.New64a`).
#[derive(Debug, Clone, Copy)]
pub struct Fnv64a(u64);

impl Default for Fnv64a {
    fn default() -> Self {
        Fnv64a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64a {
    /// The hash so far as Go prints `fmt.Sprintf("%x", h.Sum(nil))`: 16 lowercase hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.0
    }
}

impl Write for Fnv64a {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut h = self.0;
        for &b in buf {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where an entry's content comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A file on disk (read when hashed).
    Path(PathBuf),
    /// Bytes in memory.
    Bytes(Vec<u8>),
}

/// One entry of a folder as `fs.WalkDir` visits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Path relative to the root, `/`-separated, `.` for the root itself.
    pub path: String,
    /// Permission bits (e.g. `0o750`), plus setuid/setgid/sticky when set.
    pub mode: u32,
    /// `None` for a folder.
    pub file: Option<(u64, Content)>,
}

impl TreeEntry {
    /// A folder.
    pub fn dir(path: impl Into<String>, mode: u32) -> TreeEntry {
        TreeEntry {
            path: path.into(),
            mode,
            file: None,
        }
    }

    /// A regular file.
    pub fn file(path: impl Into<String>, mode: u32, size: u64, content: Content) -> TreeEntry {
        TreeEntry {
            path: path.into(),
            mode,
            file: Some((size, content)),
        }
    }
}

/// A folder on disk as `fs.WalkDir(os.DirFS(root), ".")` lists it, with the modes on disk, or
/// `force` = (folder mode, file mode) to describe it as it will be in an image. Symbolic links
/// are skipped, as `fsToTar` skips them; other non-regular files are an error (Go's
/// `FileInfoHeader` would encode them, but no catalog has them).
pub fn tree_of_dir(root: &Path, force: Option<(u32, u32)>) -> io::Result<Vec<TreeEntry>> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(root)?;
    let bits = |m: &std::fs::Metadata| m.permissions().mode() & 0o7777;
    let mut out = vec![TreeEntry::dir(
        ".",
        force.map_or_else(|| bits(&meta), |(d, _)| d),
    )];
    walk(root, "", force, &mut out)?;
    Ok(out)
}

fn walk(
    dir: &Path,
    rel: &str,
    force: Option<(u32, u32)>,
    out: &mut Vec<TreeEntry>,
) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for name in names {
        let path = dir.join(&name);
        let child = format!("{rel}{}", String::from_utf8_lossy(name.as_bytes()));
        let meta = std::fs::symlink_metadata(&path)?;
        let ft = meta.file_type();
        let mode = meta.permissions().mode() & 0o7777;
        if ft.is_symlink() {
            continue;
        } else if ft.is_dir() {
            out.push(TreeEntry::dir(
                child.clone(),
                force.map_or(mode, |(d, _)| d),
            ));
            walk(&path, &format!("{child}/"), force, out)?;
        } else if ft.is_file() {
            out.push(TreeEntry::file(
                child,
                force.map_or(mode, |(_, f)| f),
                meta.len(),
                Content::Path(path),
            ));
        } else {
            return Err(io::Error::other(format!(
                "{}: not a regular file or folder",
                path.display()
            )));
        }
    }
    Ok(())
}

const BLOCK: usize = 512;

fn put_str(block: &mut [u8], at: usize, len: usize, s: &[u8]) {
    // Go's formatString: copy what fits, NUL-terminate when shorter; a long value whose last
    // kept byte is `/` gets that slash (and those before it) replaced by the NUL.
    let n = s.len().min(len);
    block[at..at + n].copy_from_slice(&s[..n]);
    if s.len() < len {
        block[at + s.len()] = 0;
    }
    if s.len() > len && block[at + len - 1] == b'/' {
        let kept = s[..len]
            .iter()
            .rposition(|&c| c != b'/')
            .map_or(0, |i| i + 1);
        block[at + kept] = 0;
    }
}

fn put_octal(block: &mut [u8], at: usize, len: usize, x: u64) {
    // Go's formatOctal: zero-padded to len-1 digits, NUL-terminated.
    let s = format!("{x:o}");
    let padded = if s.len() + 1 < len {
        format!("{}{s}", "0".repeat(len - 1 - s.len()))
    } else {
        s
    };
    put_str(block, at, len, padded.as_bytes());
}

fn checksum_and_magic(block: &mut [u8; BLOCK]) {
    block[257..263].copy_from_slice(b"ustar\0");
    block[263..265].copy_from_slice(b"00");
    let sum: u64 = block
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(c)
            }
        })
        .sum();
    put_octal(block, 148, 7, sum);
    block[155] = b' ';
}

/// Go's `splitUSTARPath`.
fn split_ustar(name: &str) -> Option<(&str, &str)> {
    let bytes = name.as_bytes();
    if bytes.len() <= 100 || !name.is_ascii() {
        return None;
    }
    let mut length = bytes.len();
    if length > 156 {
        length = 156;
    } else if bytes[length - 1] == b'/' {
        length -= 1;
    }
    let i = name[..length].rfind('/')?;
    let nlen = bytes.len() - i - 1;
    if i == 0 || nlen > 100 || nlen == 0 || i > 155 {
        return None;
    }
    Some((&name[..i], &name[i + 1..]))
}

fn to_ascii(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii() && *c != '\0').collect()
}

/// Go's `formatPAXRecord`.
fn pax_record(k: &str, v: &str) -> String {
    let mut size = k.len() + v.len() + 3;
    size += size.to_string().len();
    let mut record = format!("{size} {k}={v}\n");
    if record.len() != size {
        size = record.len();
        record = format!("{size} {k}={v}\n");
    }
    record
}

/// Go's `path.Join(dir, "PaxHeaders.0", file)` for `path.Split(name)`.
fn pax_name(name: &str) -> String {
    let (dir, file) = match name.rfind('/') {
        Some(i) => (&name[..=i], &name[i + 1..]),
        None => ("", name),
    };
    let dir = dir.trim_end_matches('/');
    let joined = if dir.is_empty() {
        format!("PaxHeaders.0/{file}")
    } else {
        format!("{dir}/PaxHeaders.0/{file}")
    };
    // path.Join cleans: only `.`/`..` segments or empty file names could change it, and
    // fs.WalkDir never yields those below the root.
    joined.trim_end_matches('/').to_string()
}

fn pad<W: Write>(w: &mut W, size: u64) -> io::Result<()> {
    let rem = (size % BLOCK as u64) as usize;
    if rem != 0 {
        w.write_all(&[0u8; BLOCK][..BLOCK - rem])?;
    }
    Ok(())
}

fn write_header<W: Write>(w: &mut W, e: &TreeEntry) -> io::Result<()> {
    let size = e.file.as_ref().map_or(0, |(s, _)| *s);
    let typeflag = if e.file.is_some() { b'0' } else { b'5' };
    let name = e.path.as_str();
    let ustar_ok = name.is_ascii() && name.len() <= 100;
    let split = if ustar_ok { None } else { split_ustar(name) };
    if ustar_ok || split.is_some() {
        let (prefix, short) = split.unwrap_or(("", name));
        let block = entry_block(short.as_bytes(), prefix.as_bytes(), e.mode, size, typeflag);
        return w.write_all(&block);
    }
    // PAX: an extended header carrying the path, then the header with the ASCII-only name.
    let data = pax_record("path", name);
    let mut raw_name = to_ascii(&pax_name(name));
    raw_name.truncate(100);
    let raw_name = raw_name.trim_end_matches('/');
    let mut xh = [0u8; BLOCK];
    put_str(&mut xh, 0, 100, raw_name.as_bytes());
    put_octal(&mut xh, 100, 8, 0);
    put_octal(&mut xh, 108, 8, 0);
    put_octal(&mut xh, 116, 8, 0);
    put_octal(&mut xh, 124, 12, data.len() as u64);
    put_octal(&mut xh, 136, 12, 0);
    xh[156] = b'x';
    checksum_and_magic(&mut xh);
    w.write_all(&xh)?;
    w.write_all(data.as_bytes())?;
    pad(w, data.len() as u64)?;
    let block = entry_block(to_ascii(name).as_bytes(), b"", e.mode, size, typeflag);
    w.write_all(&block)
}

/// The USTAR header of one entry (`name` and `prefix` as Go's tar writer stores them): the
/// one layout for the plain header and the header after a PAX record.
fn entry_block(name: &[u8], prefix: &[u8], mode: u32, size: u64, typeflag: u8) -> [u8; BLOCK] {
    let mut block = [0u8; BLOCK];
    put_str(&mut block, 0, 100, name);
    put_octal(&mut block, 100, 8, u64::from(mode));
    put_octal(&mut block, 108, 8, 0);
    put_octal(&mut block, 116, 8, 0);
    put_octal(&mut block, 124, 12, size);
    put_octal(&mut block, 136, 12, 0);
    block[156] = typeflag;
    put_str(&mut block, 157, 100, b"");
    put_str(&mut block, 265, 32, b"");
    put_str(&mut block, 297, 32, b"");
    put_octal(&mut block, 329, 8, 0);
    put_octal(&mut block, 337, 8, 0);
    put_str(&mut block, 345, 155, prefix);
    checksum_and_magic(&mut block);
    block
}

/// Why a tree could not be serialized: which entry, and the I/O error.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct TarError {
    /// The entry (relative path).
    pub path: String,
    /// The I/O error (a file shorter or longer than listed is one too).
    #[source]
    pub source: io::Error,
}

/// Writes `entries` as Go's `fsToTar` does (their order is the caller's: `fs.WalkDir` order).
pub fn write_tar<W: Write>(entries: &[TreeEntry], w: &mut W) -> Result<(), TarError> {
    let fail = |e: &TreeEntry, source: io::Error| TarError {
        path: e.path.clone(),
        source,
    };
    let mut buf = vec![0u8; 64 * 1024];
    for e in entries {
        write_header(w, e).map_err(|s| fail(e, s))?;
        let Some((size, content)) = &e.file else {
            continue;
        };
        let written = match content {
            Content::Bytes(b) => {
                w.write_all(b).map_err(|s| fail(e, s))?;
                b.len() as u64
            }
            Content::Path(p) => {
                let mut f = std::fs::File::open(p).map_err(|s| fail(e, s))?;
                let mut n = 0u64;
                loop {
                    let k = f.read(&mut buf).map_err(|s| fail(e, s))?;
                    if k == 0 {
                        break;
                    }
                    n += k as u64;
                    if n > *size {
                        break;
                    }
                    w.write_all(&buf[..k]).map_err(|s| fail(e, s))?;
                }
                n
            }
        };
        if written != *size {
            return Err(fail(
                e,
                io::Error::other(format!(
                    "changed while being read (listed with {size} bytes, read {written})"
                )),
            ));
        }
        pad(w, *size).map_err(|s| fail(e, s))?;
    }
    w.write_all(&[0u8; 2 * BLOCK]).map_err(|source| TarError {
        path: ".".into(),
        source,
    })
}

/// opm's JSON-cache digest: FNV-64a of `fsToTar(catalog)` then `fsToTar(cache/)`, as 16 hex
/// digits (`jsonBackend.ComputeDigest`).
pub fn json_cache_digest(catalog: &[TreeEntry], cache: &[TreeEntry]) -> Result<String, TarError> {
    let mut h = Fnv64a::default();
    write_tar(catalog, &mut h)?;
    if !cache.is_empty() {
        write_tar(cache, &mut h)?;
    }
    Ok(h.hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv64a_matches_go() {
        // Go: fnv.New64a() of "" and of "a".
        assert_eq!(Fnv64a::default().hex(), "cbf29ce484222325");
        let mut h = Fnv64a::default();
        h.write_all(b"a").unwrap();
        assert_eq!(h.hex(), "af63dc4c8601ec8c");
    }

    #[test]
    fn pax_records_and_names() {
        assert_eq!(pax_record("path", "abc"), "12 path=abc\n");
        assert_eq!(pax_name("x/y/z"), "x/y/PaxHeaders.0/z");
        assert_eq!(pax_name("z"), "PaxHeaders.0/z");
        let long = format!("{}/{}", "a".repeat(10), "b".repeat(100));
        assert_eq!(split_ustar(&long), Some(("aaaaaaaaaa", &*"b".repeat(100))));
        assert_eq!(split_ustar(&"c".repeat(101)), None);
    }
}
