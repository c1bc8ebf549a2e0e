//! The reproducible layer writer: entries in, a `tar | gzip` blob out, streamed to a spool file
//! while both digests are computed.
//!
//! Every header field that could carry the build machine's state is fixed here:
//! mtime = `SOURCE_DATE_EPOCH` or 0, uid/gid 0 (the serve cache: the base's user, a fact of the
//! base, not of the machine), empty user and group names, mode 0644 for files and 0755 for
//! folders (whatever the umask or `chmod` said), GNU headers (long names go through
//! `././@LongLink`), no xattrs, no atime/ctime, no sparse files. gzip runs at level 6 (what
//! `gzip -6` and `docker build` use) with a fixed header: no name, mtime 0, OS byte 255
//! (flate2's `GzEncoder` default), so the same entries always give the same bytes for a given
//! zlib-rs version (pinned in Cargo.lock; the golden-digest test notices a change).

use super::digest::HashingWriter;
use super::error::BuildError;
use super::walk::{Entry, EntryKind};
use flate2::Compression;
use flate2::write::GzEncoder;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// gzip level used for every layer: the `gzip -6` / Docker default, the knee of the
/// size/speed curve (level 9 saves 0.1% for half the speed; DEPENDENCIES.md §6).
pub const GZIP_LEVEL: u32 = 6;

/// Mode of every file in a layer: readable by all, like a fresh `COPY`, whatever the source's
/// permissions were (they depend on the umask and would move the digest).
pub const FILE_MODE: u32 = 0o644;
/// Mode of every folder in a layer.
pub const DIR_MODE: u32 = 0o755;

/// What writing a layer produced: where the blob is and its two digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerBlob {
    /// The spool file holding the gzip bytes.
    pub path: PathBuf,
    /// `sha256:` of the gzip bytes (the blob digest in the manifest).
    pub digest: String,
    /// Length of the gzip bytes.
    pub size: u64,
    /// `sha256:` of the uncompressed tar (the `diff_id` in the config).
    pub diff_id: String,
    /// Length of the uncompressed tar.
    pub diff_size: u64,
}

type Stack = tar::Builder<HashingWriter<GzEncoder<HashingWriter<BufWriter<File>>>>>;

/// Writes `entries` (already sorted) as one gzip tar layer into `spool`, with every header's
/// mtime set to `mtime`.
pub(crate) fn write_layer(
    entries: &[Entry],
    mtime: u64,
    spool: &Path,
) -> Result<LayerBlob, BuildError> {
    write_layer_with_modes(entries, mtime, spool, DIR_MODE, FILE_MODE, (0, 0))
}

/// [`write_layer`] with other modes and another owner (`(uid, gid)`) for every folder and file:
/// opm's serve cache is 0750/0640 in the images `opm generate dockerfile` builds (its digest
/// covers the modes the image will have), owned by the user its `RUN` step ran as.
pub fn write_layer_with_modes(
    entries: &[Entry],
    mtime: u64,
    spool: &Path,
    dir_mode: u32,
    file_mode: u32,
    owner: (u32, u32),
) -> Result<LayerBlob, BuildError> {
    let file = File::create(spool).map_err(|e| BuildError::io("create", spool, e))?;
    let compressed = HashingWriter::new(BufWriter::with_capacity(256 * 1024, file));
    let gz = GzEncoder::new(compressed, Compression::new(GZIP_LEVEL));
    let mut tar: Stack = tar::Builder::new(HashingWriter::new(gz));
    tar.follow_symlinks(false);
    tar.sparse(false);

    let write_err = |e: io::Error| BuildError::io("write", spool, e);
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_uid(u64::from(owner.0));
        header.set_gid(u64::from(owner.1));
        header.set_mtime(mtime);
        header.set_username("").map_err(write_err)?;
        header.set_groupname("").map_err(write_err)?;
        let path = Path::new(std::ffi::OsStr::from_bytes(&entry.name));
        match &entry.kind {
            EntryKind::Dir => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(dir_mode);
                header.set_size(0);
                tar.append_data(&mut header, path, io::empty())
                    .map_err(write_err)?;
            }
            EntryKind::File {
                source,
                shown,
                size,
            } => {
                let _reading = crate::guard::reading(shown);
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(file_mode);
                header.set_size(*size);
                let file = File::open(source).map_err(|e| BuildError::io("read", shown, e))?;
                let mut reader = ExactReader {
                    file,
                    remaining: *size,
                    failed: None,
                };
                if let Err(e) = tar.append_data(&mut header, path, &mut reader) {
                    return Err(match reader.failed.take() {
                        Some(ReadFailure::Io(err)) => BuildError::io("read", shown, err),
                        Some(ReadFailure::Changed) => BuildError::FileChanged {
                            path: shown.clone(),
                            expected: *size,
                        },
                        None => write_err(e),
                    });
                }
            }
        }
    }
    let uncompressed = tar.into_inner().map_err(write_err)?;
    let (gz, diff_id, diff_size) = uncompressed.finish();
    let compressed = gz.finish().map_err(write_err)?;
    let (mut buffered, digest, size) = compressed.finish();
    buffered.flush().map_err(write_err)?;
    Ok(LayerBlob {
        path: spool.to_path_buf(),
        digest,
        size,
        diff_id,
        diff_size,
    })
}

enum ReadFailure {
    Io(io::Error),
    Changed,
}

/// Reads exactly the size announced in the tar header, and fails (instead of writing a corrupt
/// archive) when the file turns out shorter or longer than when it was listed.
struct ExactReader {
    file: File,
    remaining: u64,
    failed: Option<ReadFailure>,
}

impl ExactReader {
    fn fail(&mut self, failure: ReadFailure) -> io::Error {
        self.failed = Some(failure);
        io::Error::other("source file could not be read")
    }
}

impl Read for ExactReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            // One probe past the end: a file that grew since it was listed is an error too.
            let mut probe = [0u8; 1];
            return match self.file.read(&mut probe) {
                Ok(0) => Ok(0),
                Ok(_) => Err(self.fail(ReadFailure::Changed)),
                Err(e) => Err(self.fail(ReadFailure::Io(e))),
            };
        }
        let want = usize::try_from(self.remaining)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        match self.file.read(&mut buf[..want]) {
            Ok(0) => Err(self.fail(ReadFailure::Changed)),
            Ok(n) => {
                self.remaining -= n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(self.fail(ReadFailure::Io(e))),
        }
    }
}
