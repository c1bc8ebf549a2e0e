//! A tar stream's members with their long names, read with a cap. The `tar` crate (0.4.46)
//! reads a GNU long-name (`L`), long-link (`K`) or PAX (`x`) header whole, with an unbounded
//! `read_to_end`, before its caller sees the member: a 1 MiB gzip layer declaring a 5 GB
//! long name took 5 GB of memory. Go's `archive/tar` refuses such headers over 1 MiB
//! (`maxSpecialFileSize`); so does this iterator. It runs the crate in raw mode (the crate still
//! frames the stream) and applies the extension headers itself, as the crate would: a GNU long
//! name wins over a PAX `path`, which wins over the header's name; likewise for link targets.
//! A PAX `size` that differs from the header's, and GNU sparse members (whose extra map blocks
//! raw mode cannot frame), are refused: no image layer needs them and olmpack refuses sparse
//! files anyway.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The most bytes one extension header (long name, long link, PAX records) may hold: Go's
/// `archive/tar` limit.
pub const MAX_EXTENSION_BYTES: u64 = 1 << 20;

/// One member of a tar stream, its extension headers applied.
pub struct Member<'a, R: Read> {
    /// The member itself (read it for a file's bytes).
    pub entry: tar::Entry<'a, R>,
    /// Its path: the GNU long name, the PAX `path` or the header's name, in that order.
    pub path: PathBuf,
    /// Its link target (links), from the same three places; `None` when it has none.
    pub link: Option<PathBuf>,
}

/// The members of an archive ([`members`]).
pub struct Members<'a, R: Read> {
    entries: tar::Entries<'a, R>,
}

/// Iterates over the members of `archive`, extension headers capped at
/// [`MAX_EXTENSION_BYTES`] and applied.
pub fn members<R: Read>(archive: &mut tar::Archive<R>) -> io::Result<Members<'_, R>> {
    Ok(Members {
        entries: archive.entries()?.raw(true),
    })
}

fn refuse(reason: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, reason)
}

/// A name from an extension header: up to its first NUL.
fn name_of(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Some(end) = bytes.iter().position(|b| *b == 0) {
        bytes.truncate(end);
    }
    bytes
}

fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

#[derive(Default)]
struct Pending {
    long_name: Option<Vec<u8>>,
    long_link: Option<Vec<u8>>,
    pax: Option<Vec<u8>>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.long_name.is_none() && self.long_link.is_none() && self.pax.is_none()
    }

    fn pax_value(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        let Some(pax) = &self.pax else {
            return Ok(None);
        };
        let mut found = None;
        for ext in tar::PaxExtensions::new(pax) {
            let ext = ext.map_err(|e| refuse(format!("a bad PAX record: {e}")))?;
            if ext.key_bytes() == key {
                found = Some(ext.value_bytes().to_vec());
            }
        }
        Ok(found)
    }
}

fn read_extension<R: Read>(entry: &mut tar::Entry<'_, R>, what: &str) -> io::Result<Vec<u8>> {
    let size = entry.size();
    if size > MAX_EXTENSION_BYTES {
        return Err(refuse(format!(
            "a {what} header of {size} bytes (over the {MAX_EXTENSION_BYTES}-byte limit)"
        )));
    }
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    entry.take(MAX_EXTENSION_BYTES + 1).read_to_end(&mut data)?;
    Ok(data)
}

impl<'a, R: Read> Iterator for Members<'a, R> {
    type Item = io::Result<Member<'a, R>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut pending = Pending::default();
        loop {
            let mut entry = match self.entries.next() {
                None if !pending.is_empty() => {
                    return Some(Err(refuse(
                        "the tar stream ends after an extension header".into(),
                    )));
                }
                None => return None,
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(entry)) => entry,
            };
            let header = entry.header();
            let recognized = header.as_gnu().is_some() || header.as_ustar().is_some();
            let kind = header.entry_type();
            if recognized && kind.is_gnu_sparse() {
                return Some(Err(refuse("a GNU sparse file (not supported)".into())));
            }
            let slot = if !recognized {
                None
            } else if kind.is_gnu_longname() {
                Some((&mut pending.long_name, "GNU long name"))
            } else if kind.is_gnu_longlink() {
                Some((&mut pending.long_link, "GNU long link"))
            } else if kind.is_pax_local_extensions() {
                Some((&mut pending.pax, "PAX"))
            } else {
                None
            };
            if let Some((slot, what)) = slot {
                if slot.is_some() {
                    return Some(Err(refuse(format!(
                        "two {what} headers describe the same member"
                    ))));
                }
                match read_extension(&mut entry, what) {
                    Ok(data) => *slot = Some(data),
                    Err(e) => return Some(Err(e)),
                }
                continue;
            }
            return Some(finish(entry, pending));
        }
    }
}

fn finish<'a, R: Read>(entry: tar::Entry<'a, R>, pending: Pending) -> io::Result<Member<'a, R>> {
    if let Some(size) = pending.pax_value(b"size")? {
        let declared = std::str::from_utf8(&size)
            .ok()
            .and_then(|s| s.parse::<u64>().ok());
        if declared != Some(entry.size()) {
            return Err(refuse(
                "a PAX size record that differs from the header's size (not supported)".into(),
            ));
        }
    }
    let pax_path = pending.pax_value(b"path")?;
    let pax_link = pending.pax_value(b"linkpath")?;
    let path = match (pending.long_name, pax_path) {
        (Some(name), _) => path_of(&name_of(name)),
        (None, Some(name)) => path_of(&name),
        (None, None) => path_of(&entry.header().path_bytes()),
    };
    let link = match (pending.long_link, pax_link) {
        (Some(name), _) => Some(path_of(&name_of(name))),
        (None, Some(name)) => Some(path_of(&name)),
        (None, None) => entry.header().link_name_bytes().map(|b| path_of(&b)),
    };
    Ok(Member { entry, path, link })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_header(kind: tar::EntryType, name: &str, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_cksum();
        h
    }

    /// A member as the tests compare it: path, link target, bytes.
    type Seen = (String, Option<String>, Vec<u8>);

    fn collect(bytes: &[u8]) -> io::Result<Vec<Seen>> {
        let mut archive = tar::Archive::new(bytes);
        let mut out = Vec::new();
        for m in members(&mut archive)? {
            let mut m = m?;
            let mut data = Vec::new();
            m.entry.read_to_end(&mut data)?;
            out.push((
                m.path.display().to_string(),
                m.link.map(|l| l.display().to_string()),
                data,
            ));
        }
        Ok(out)
    }

    #[test]
    fn long_names_and_pax_records_apply_as_the_tar_crate_applies_them() {
        let long = format!("manifests/{}.yaml", "x".repeat(200));
        let target = format!("{}/t", "y".repeat(150));
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(2);
        b.append_data(&mut h, &long, &b"ok"[..]).unwrap();
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "l", &target).unwrap();
        b.append_pax_extensions([("path", &b"pax/name"[..])])
            .unwrap();
        let mut h = tar::Header::new_ustar();
        h.set_size(1);
        b.append_data(&mut h, "short", &b"p"[..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let got = collect(&bytes).unwrap();
        assert_eq!(got[0], (long.clone(), None, b"ok".to_vec()));
        assert_eq!(got[1].1.as_deref(), Some(target.as_str()));
        assert_eq!(got[2], ("pax/name".into(), None, b"p".to_vec()));
        // The crate's own (non-raw) reading agrees.
        let mut archive = tar::Archive::new(&bytes[..]);
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(names, [long, "l".into(), "pax/name".into()]);
    }

    #[test]
    fn oversize_extension_headers_are_refused_before_they_are_read() {
        for kind in [
            tar::EntryType::GNULongName,
            tar::EntryType::GNULongLink,
            tar::EntryType::XHeader,
        ] {
            let mut bytes = raw_header(kind, "././@LongLink", 3 << 30)
                .as_bytes()
                .to_vec();
            // Only a little of the declared size follows: the refusal must come first.
            bytes.extend_from_slice(&[b'a'; 4096]);
            let err = collect(&bytes).unwrap_err().to_string();
            assert!(
                err.contains("over the 1048576-byte limit"),
                "{kind:?}: {err}"
            );
        }
        // At the limit is fine.
        let name = vec![b'n'; MAX_EXTENSION_BYTES as usize];
        let mut bytes = raw_header(
            tar::EntryType::GNULongName,
            "././@LongLink",
            name.len() as u64,
        )
        .as_bytes()
        .to_vec();
        bytes.extend_from_slice(&name);
        bytes.extend_from_slice(raw_header(tar::EntryType::Regular, "f", 0).as_bytes());
        bytes.extend_from_slice(&[0u8; 1024]);
        assert_eq!(collect(&bytes).unwrap()[0].0.len(), name.len());
    }

    #[test]
    fn dangling_and_duplicate_extensions_and_sparse_are_refused() {
        let mut dangling = raw_header(tar::EntryType::GNULongName, "././@LongLink", 2)
            .as_bytes()
            .to_vec();
        dangling.extend_from_slice(&[b'a'; 512]);
        assert!(
            collect(&dangling)
                .unwrap_err()
                .to_string()
                .contains("ends after")
        );
        let mut twice = dangling.clone();
        twice.extend_from_slice(&dangling);
        assert!(
            collect(&twice)
                .unwrap_err()
                .to_string()
                .contains("two GNU long name")
        );
        let sparse = raw_header(tar::EntryType::GNUSparse, "s", 0)
            .as_bytes()
            .to_vec();
        assert!(collect(&sparse).unwrap_err().to_string().contains("sparse"));
    }
}
