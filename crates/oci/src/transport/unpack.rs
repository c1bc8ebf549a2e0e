//! Safe layer extraction and listing. Layers are untrusted input: an entry may try to climb out
//! with `..`, an absolute path, or a link pointing outside; a tiny gzip may expand to terabytes.
//! Extraction refuses all of that, honours OCI whiteouts (`.wh.NAME` removes NAME from lower
//! layers, `.wh..wh..opq` hides a directory's lower contents), and writes regular files 0644 and
//! directories 0755 whatever the tar says (a bundle holds only YAML and JSON).

use super::tar_members;
use crate::fsio::untrusted;
use crate::image::ImageError;
use flate2::read::GzDecoder;
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Component, Path, PathBuf};

/// Limits against decompression bombs. Defaults: 1 GiB in total, 100,000 entries, 256 MiB per
/// file: orders of magnitude above the largest real bundle (6.5 MiB, 107 files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Uncompressed bytes of all files together.
    pub max_total_bytes: u64,
    /// Tar entries over all layers.
    pub max_entries: u64,
    /// Bytes of one file.
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: 1 << 30,
            max_entries: 100_000,
            max_file_bytes: 256 << 20,
        }
    }
}

/// Counters of an extraction.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Entries read.
    pub entries: u64,
    /// File bytes written.
    pub bytes: u64,
}

/// Wraps a layer stream in the right decompressor: by media type, and by gzip magic bytes when
/// the media type is unknown or lies (some tools label gzip layers as plain tar).
pub fn decompress<'a, R: Read + 'a>(
    reader: R,
    media_type: &str,
    layer: &str,
) -> Result<Box<dyn Read + 'a>, ImageError> {
    if media_type.contains("zstd") {
        return Err(ImageError::UnsafeLayer {
            layer: layer.into(),
            reason: format!("unsupported layer media type {media_type} (zstd)"),
        });
    }
    let mut buf = BufReader::new(reader);
    let magic = buf.fill_buf().map_err(|e| ImageError::UnsafeLayer {
        layer: layer.into(),
        reason: format!("cannot read: {e}"),
    })?;
    if magic.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(GzDecoder::new(buf)))
    } else {
        Ok(Box::new(buf))
    }
}

/// Normalises a tar path to a relative path with only normal components, or refuses it.
/// `./a/b/` → `a/b`; `/a`, `../a`, `a/../../b` are refused. `a/../b` is refused too: no real
/// layer needs it and it hides intent.
pub fn safe_relative(path: &Path) -> Result<Option<PathBuf>, String> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(n) => out.push(n),
            Component::ParentDir => return Err(format!("path {} contains '..'", path.display())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("absolute path {}", path.display()));
            }
        }
    }
    Ok(if out.as_os_str().is_empty() {
        None
    } else {
        Some(out)
    })
}

/// Resolves a link target lexically, relative to the link's directory, and refuses targets
/// that leave the root.
fn link_target_inside(link_rel: &Path, target: &Path) -> Result<PathBuf, String> {
    if target.is_absolute() {
        return Err(format!(
            "link {} points to absolute path {}",
            link_rel.display(),
            target.display()
        ));
    }
    let mut stack: Vec<std::ffi::OsString> = link_rel
        .parent()
        .map(|p| p.iter().map(|c| c.to_os_string()).collect())
        .unwrap_or_default();
    for c in target.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(n) => stack.push(n.to_os_string()),
            Component::ParentDir => {
                if stack.pop().is_none() {
                    return Err(format!(
                        "link {} escapes the root via {}",
                        link_rel.display(),
                        target.display()
                    ));
                }
            }
            _ => return Err(format!("link {} has an invalid target", link_rel.display())),
        }
    }
    Ok(stack.iter().collect())
}

/// Refuses a link whose target passes through a link already extracted: the lexical check above
/// cannot see that `b -> a/..` leaves the root when `a -> .` exists, so chains are not allowed.
fn link_target_avoids_links(root: &Path, link_rel: &Path, target: &Path) -> Result<(), String> {
    let mut cur: PathBuf = link_rel.parent().map(Path::to_path_buf).unwrap_or_default();
    for c in target.components() {
        match c {
            Component::Normal(n) => {
                cur.push(n);
                if std::fs::symlink_metadata(root.join(&cur))
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    return Err(format!(
                        "link {} points through another link ({}); links to links are refused",
                        link_rel.display(),
                        cur.display()
                    ));
                }
            }
            Component::ParentDir => {
                cur.pop();
            }
            _ => {}
        }
    }
    Ok(())
}

/// Refuses to write through an existing symlink in any parent of `rel` under `root`.
fn check_no_symlink_parents(root: &Path, rel: &Path) -> Result<(), String> {
    let mut cur = root.to_path_buf();
    if let Some(parent) = rel.parent() {
        for c in parent.components() {
            cur.push(c);
            if let Ok(m) = std::fs::symlink_metadata(&cur)
                && m.file_type().is_symlink()
            {
                return Err(format!(
                    "{} would be written through symlink {}",
                    rel.display(),
                    parent.display()
                ));
            }
        }
    }
    Ok(())
}

fn remove_any(p: &Path) {
    if let Ok(m) = std::fs::symlink_metadata(p) {
        if m.is_dir() {
            let _ = std::fs::remove_dir_all(p);
        } else {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
}

fn create_dirs(root: &Path, rel: &Path) -> std::io::Result<()> {
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&cur)?;
                std::fs::create_dir(&cur)?;
                set_mode(&cur, 0o755);
            }
            Err(_) => {
                std::fs::create_dir(&cur)?;
                set_mode(&cur, 0o755);
            }
        }
    }
    Ok(())
}

/// Extracts one (decompressed) layer stream on top of `root`. `stats` accumulates across layers
/// so limits cover the whole image.
pub fn unpack_layer<R: Read>(
    reader: R,
    root: &Path,
    layer: &str,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<(), ImageError> {
    let err = |reason: String| ImageError::UnsafeLayer {
        layer: layer.to_string(),
        reason,
    };
    let mut archive = tar::Archive::new(reader);
    let mut created_here: HashSet<PathBuf> = HashSet::new();
    let entries =
        tar_members::members(&mut archive).map_err(|e| err(format!("not a tar archive: {e}")))?;
    for member in entries {
        let member = member.map_err(|e| err(format!("corrupt tar: {e}")))?;
        let (mut entry, raw_path, link_name) = (member.entry, member.path, member.link);
        stats.entries += 1;
        if stats.entries > limits.max_entries {
            return Err(err(format!(
                "more than {} entries (decompression bomb?)",
                limits.max_entries
            )));
        }
        let Some(rel) = safe_relative(&raw_path).map_err(err)? else {
            continue;
        };
        let _reading = crate::guard::reading(&rel);
        let name = rel
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let parent_rel = rel.parent().map(Path::to_path_buf).unwrap_or_default();
        check_no_symlink_parents(root, &rel).map_err(err)?;
        // Whiteouts.
        if name == ".wh..wh..opq" {
            let dir = root.join(&parent_rel);
            if let Ok(rd) = std::fs::read_dir(&dir) {
                for child in rd.flatten() {
                    let child_rel = parent_rel.join(child.file_name());
                    if !created_here.contains(&child_rel) {
                        remove_any(&child.path());
                    }
                }
            }
            continue;
        }
        if let Some(hidden) = name.strip_prefix(".wh.") {
            if hidden.is_empty() || hidden == "." || hidden == ".." || hidden.contains('/') {
                return Err(err(format!("invalid whiteout {}", rel.display())));
            }
            remove_any(&root.join(&parent_rel).join(hidden));
            continue;
        }
        let dest = root.join(&rel);
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            create_dirs(root, &rel)
                .map_err(|e| err(format!("cannot create {}: {e}", rel.display())))?;
        } else if kind.is_file() || kind == tar::EntryType::Continuous {
            let size = entry.header().size().unwrap_or(0);
            if size > limits.max_file_bytes {
                return Err(err(format!(
                    "{} is {size} bytes, over the per-file limit {}",
                    rel.display(),
                    limits.max_file_bytes
                )));
            }
            create_dirs(root, &parent_rel)
                .map_err(|e| err(format!("cannot create {}: {e}", parent_rel.display())))?;
            remove_any(&dest);
            let mut out = std::fs::File::create(&dest)
                .map_err(|e| err(format!("cannot create {}: {e}", rel.display())))?;
            let budget = limits
                .max_file_bytes
                .min(limits.max_total_bytes.saturating_sub(stats.bytes));
            let n = std::io::copy(&mut (&mut entry).take(budget + 1), &mut out)
                .map_err(|e| err(format!("cannot write {}: {e}", rel.display())))?;
            if n > budget {
                drop(out);
                let _ = std::fs::remove_file(&dest);
                return Err(err(format!(
                    "size limit exceeded at {} (total limit {} bytes, decompression bomb?)",
                    rel.display(),
                    limits.max_total_bytes
                )));
            }
            stats.bytes += n;
            set_mode(&dest, 0o644);
        } else if kind.is_symlink() {
            let target = link_name
                .clone()
                .ok_or_else(|| err(format!("symlink {} has no target", rel.display())))?;
            link_target_inside(&rel, &target).map_err(err)?;
            link_target_avoids_links(root, &rel, &target).map_err(err)?;
            create_dirs(root, &parent_rel)
                .map_err(|e| err(format!("cannot create {}: {e}", parent_rel.display())))?;
            remove_any(&dest);
            std::os::unix::fs::symlink(&target, &dest)
                .map_err(|e| err(format!("cannot create symlink {}: {e}", rel.display())))?;
        } else if kind.is_hard_link() {
            let target = link_name
                .clone()
                .ok_or_else(|| err(format!("hardlink {} has no target", rel.display())))?;
            copy_hard_link(root, &rel, &target, layer, limits, stats)?;
        } else if matches!(
            kind,
            tar::EntryType::XHeader
                | tar::EntryType::XGlobalHeader
                | tar::EntryType::GNULongName
                | tar::EntryType::GNULongLink
        ) {
            continue;
        } else {
            return Err(err(format!(
                "{} is a device, fifo or other special file ({kind:?}); refusing it",
                rel.display()
            )));
        }
        created_here.insert(rel);
    }
    Ok(())
}

/// A hard link extracted as a copy of its target (the folder is edited afterwards and must not
/// alias files): the target must be a regular file already in the image, reached through no
/// symlink, and the copy counts against the size limits.
fn copy_hard_link(
    root: &Path,
    rel: &Path,
    target: &Path,
    layer: &str,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<(), ImageError> {
    let err = |reason: String| ImageError::UnsafeLayer {
        layer: layer.to_string(),
        reason,
    };
    let parent_rel = rel.parent().map(Path::to_path_buf).unwrap_or_default();
    let dest = root.join(rel);
    let target_rel = safe_relative(target)
        .map_err(|r| err(format!("hardlink {}: {r}", rel.display())))?
        .ok_or_else(|| err(format!("hardlink {} to the root", rel.display())))?;
    check_no_symlink_parents(root, &target_rel).map_err(err)?;
    let src = root.join(&target_rel);
    let meta = std::fs::symlink_metadata(&src).map_err(|_| {
        err(format!(
            "hardlink {} points to {} which is not in the image",
            rel.display(),
            target_rel.display()
        ))
    })?;
    if !meta.is_file() {
        return Err(err(format!(
            "hardlink {} points to {} which is not a regular file",
            rel.display(),
            target_rel.display()
        )));
    }
    create_dirs(root, &parent_rel)
        .map_err(|e| err(format!("cannot create {}: {e}", parent_rel.display())))?;
    remove_any(&dest);
    // A copy, not a link: the folder is edited afterwards and must not alias files.
    let n = std::fs::copy(&src, &dest)
        .map_err(|e| err(format!("cannot copy {}: {e}", rel.display())))?;
    stats.bytes += n;
    if stats.bytes > limits.max_total_bytes {
        return Err(err(format!(
            "total size limit {} exceeded (decompression bomb?)",
            limits.max_total_bytes
        )));
    }
    set_mode(&dest, 0o644);
    Ok(())
}

/// One entry of a layer listing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntryInfo {
    /// Path inside the image, relative, `/` separated.
    pub path: String,
    /// `file`, `dir`, `symlink`, `hardlink`, `whiteout` or `other`.
    pub kind: &'static str,
    /// Size in bytes (files).
    pub size: u64,
}

/// A layer's entries and the bytes of the captured files, by path.
pub type LayerListing = (Vec<EntryInfo>, BTreeMap<String, Vec<u8>>);

/// Lists a (decompressed) layer without writing anything, keeping the bytes of entries whose
/// path `capture` selects (at most `capture_limit` bytes each).
pub fn list_layer<R: Read>(
    reader: R,
    layer: &str,
    limits: &Limits,
    capture: &dyn Fn(&str) -> bool,
    capture_limit: u64,
) -> Result<LayerListing, ImageError> {
    let err = |reason: String| ImageError::UnsafeLayer {
        layer: layer.to_string(),
        reason,
    };
    let mut archive = tar::Archive::new(reader);
    let mut out = Vec::new();
    let mut captured = BTreeMap::new();
    let mut listed = 0u64;
    for member in
        tar_members::members(&mut archive).map_err(|e| err(format!("not a tar archive: {e}")))?
    {
        let member = member.map_err(|e| err(format!("corrupt tar: {e}")))?;
        let (mut entry, raw) = (member.entry, member.path);
        if out.len() as u64 >= limits.max_entries {
            return Err(err(format!("more than {} entries", limits.max_entries)));
        }
        let Some(rel) = safe_relative(&raw).map_err(err)? else {
            continue;
        };
        let _reading = crate::guard::reading(&rel);
        let path = rel.to_string_lossy().replace('\\', "/");
        let t = entry.header().entry_type();
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let kind = if name.starts_with(".wh.") {
            "whiteout"
        } else if t.is_dir() {
            "dir"
        } else if t.is_file() {
            "file"
        } else if t.is_symlink() {
            "symlink"
        } else if t.is_hard_link() {
            "hardlink"
        } else {
            "other"
        };
        let size = entry.header().size().unwrap_or(0);
        // The same decompression-bomb bound as unpacking: listing reads every byte too.
        listed = listed.saturating_add(size);
        if listed > limits.max_total_bytes {
            return Err(err(format!(
                "more than {} bytes of content",
                limits.max_total_bytes
            )));
        }
        if kind == "file" && capture(&path) {
            let mut buf = Vec::new();
            (&mut entry)
                .take(capture_limit)
                .read_to_end(&mut buf)
                .map_err(|e| err(format!("cannot read {path}: {e}")))?;
            captured.insert(path.clone(), buf);
        }
        out.push(EntryInfo {
            path: if kind == "dir" {
                format!("{path}/")
            } else {
                path
            },
            kind,
            size,
        });
    }
    Ok((out, captured))
}

/// Checks the finished tree: every link in it, followed as the kernel would (through the links
/// that later entries or layers created), must stay inside `root`. [`unpack_layer`] checks each
/// link when it is written, but a later entry can turn a component of an earlier link's target
/// into a link (`esc -> a/a/../../..`, then `a -> .`), and readers follow links. Call it after
/// the last layer; `layer` names the last one in the message.
pub fn check_links(root: &Path, layer: &str) -> Result<(), ImageError> {
    let err = |reason: String| ImageError::UnsafeLayer {
        layer: layer.to_string(),
        reason,
    };
    match untrusted::escaping_link(root) {
        Ok(None) => Ok(()),
        Ok(Some((link, _))) => Err(err(format!(
            "link {} leads out of the image once all its entries are in place (through other links); refusing the image",
            link.display()
        ))),
        Err(e) => Err(err(format!("cannot check the unpacked links: {e}"))),
    }
}

/// Extracts layers in order into `root` (which must exist and should be empty), each given as
/// (media type, reader, digest for messages).
pub fn unpack_layers<'a, I>(layers: I, root: &Path, limits: &Limits) -> Result<Stats, ImageError>
where
    I: IntoIterator<Item = (String, Box<dyn Read + 'a>, String)>,
{
    let mut stats = Stats::default();
    let mut last = String::new();
    for (media_type, reader, digest) in layers {
        let r = decompress(reader, &media_type, &digest)?;
        unpack_layer(r, root, &digest, limits, &mut stats)?;
        last = digest;
    }
    check_links(root, &last)?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_with(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        b.into_inner().unwrap()
    }

    fn file(b: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8]) {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o600);
        h.set_entry_type(tar::EntryType::Regular);
        // Write the raw name so tests can produce paths tar-rs's safe setters refuse.
        let name = path.as_bytes();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.set_cksum();
        b.append(&h, data).unwrap();
    }

    fn link(b: &mut tar::Builder<Vec<u8>>, kind: tar::EntryType, path: &str, target: &str) {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(kind);
        let name = path.as_bytes();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        let t = target.as_bytes();
        h.as_old_mut().linkname[..t.len()].copy_from_slice(t);
        h.set_cksum();
        b.append(&h, &[][..]).unwrap();
    }

    fn unpack(tars: &[Vec<u8>], limits: Limits) -> (tempfile::TempDir, Result<Stats, ImageError>) {
        let d = tempfile::tempdir().unwrap();
        let layers: Vec<(String, Box<dyn Read>, String)> = tars
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    "application/vnd.oci.image.layer.v1.tar".to_string(),
                    Box::new(std::io::Cursor::new(t.clone())) as Box<dyn Read>,
                    format!("layer{i}"),
                )
            })
            .collect();
        let r = unpack_layers(layers, d.path(), &limits);
        (d, r)
    }

    /// The error unpacking `tar` under `limits` stops with, as text (the test fails if it
    /// succeeds).
    fn refusal(tar: Vec<u8>, limits: Limits) -> String {
        unpack(&[tar], limits).1.unwrap_err().to_string()
    }

    #[test]
    fn refuses_dotdot_and_absolute() {
        for bad in ["../evil", "a/../../evil", "/etc/evil"] {
            let t = tar_with(|b| file(b, bad, b"x"));
            let (d, r) = unpack(&[t], Limits::default());
            let e = r.unwrap_err().to_string();
            assert!(e.contains("..") || e.contains("absolute"), "{bad}: {e}");
            assert!(!d.path().parent().unwrap().join("evil").exists());
        }
    }

    #[test]
    fn refuses_links_through_links() {
        let t = tar_with(|b| {
            link(b, tar::EntryType::Symlink, "a", ".");
            link(b, tar::EntryType::Symlink, "b", "a/..");
        });
        let err = unpack(&[t], Limits::default())
            .1
            .expect_err("b -> a/.. must be refused");
        assert!(err.to_string().contains("through another link"), "{err}");
        // The other order: the link is written first (no `a` yet, lexically inside) and `a`
        // turns it outward later, in the same layer or the next. The finished tree is checked.
        let first = |b: &mut tar::Builder<Vec<u8>>| {
            file(b, "dir/f", b"1");
            link(b, tar::EntryType::Symlink, "dir/esc", "../a/a/../../secret");
        };
        let one = tar_with(|b| {
            first(b);
            link(b, tar::EntryType::Symlink, "a", ".");
        });
        let two = [
            tar_with(first),
            tar_with(|b| link(b, tar::EntryType::Symlink, "a", ".")),
        ];
        for layers in [vec![one], two.to_vec()] {
            let (d, r) = unpack(&layers, Limits::default());
            let err = r.expect_err("a link turned outward later must be refused");
            assert!(
                err.to_string()
                    .contains("link dir/esc leads out of the image"),
                "{err}"
            );
            drop(d);
        }
        // Links that stay inside once everything is in place are fine.
        let ok = tar_with(|b| {
            file(b, "dir/f", b"1");
            link(b, tar::EntryType::Symlink, "dir/alias", "../a/a/dir/f");
            link(b, tar::EntryType::Symlink, "a", ".");
        });
        let (d, r) = unpack(&[ok], Limits::default());
        r.unwrap();
        assert_eq!(std::fs::read(d.path().join("dir/alias")).unwrap(), b"1");
    }

    #[test]
    fn refuses_symlink_escape_and_writing_through_symlinks() {
        let t = tar_with(|b| link(b, tar::EntryType::Symlink, "manifests/esc", "../../etc"));
        let e = refusal(t, Limits::default());
        assert!(e.contains("escapes"), "{e}");
        let t = tar_with(|b| link(b, tar::EntryType::Symlink, "abs", "/etc/passwd"));
        let e = refusal(t, Limits::default());
        assert!(e.contains("absolute"), "{e}");
        // A link inside the root is fine, but writing through it is not.
        let t = tar_with(|b| {
            file(b, "real/x", b"1");
            link(b, tar::EntryType::Symlink, "alias", "real");
            file(b, "alias/y", b"2");
        });
        let e = refusal(t, Limits::default());
        assert!(e.contains("through symlink"), "{e}");
    }

    #[test]
    fn hardlinks_must_stay_inside_and_are_copied() {
        let t = tar_with(|b| link(b, tar::EntryType::Link, "h", "../../etc/passwd"));
        assert!(unpack(&[t], Limits::default()).1.is_err());
        let t = tar_with(|b| link(b, tar::EntryType::Link, "h", "/etc/passwd"));
        assert!(unpack(&[t], Limits::default()).1.is_err());
        let t = tar_with(|b| {
            file(b, "a", b"data");
            link(b, tar::EntryType::Link, "b", "a");
        });
        let (d, r) = unpack(&[t], Limits::default());
        r.unwrap();
        assert_eq!(std::fs::read(d.path().join("b")).unwrap(), b"data");
    }

    #[test]
    fn whiteouts_and_modes() {
        use std::os::unix::fs::PermissionsExt;
        let l1 = tar_with(|b| {
            file(b, "manifests/a.yaml", b"a");
            file(b, "manifests/b.yaml", b"b");
            file(b, "metadata/old.yaml", b"o");
            file(b, "metadata/keep.yaml", b"k");
        });
        let l2 = tar_with(|b| {
            file(b, "manifests/.wh.a.yaml", b"");
            file(b, "metadata/.wh..wh..opq", b"");
            file(b, "metadata/annotations.yaml", b"n");
        });
        let (d, r) = unpack(&[l1, l2], Limits::default());
        r.unwrap();
        assert!(!d.path().join("manifests/a.yaml").exists());
        assert!(d.path().join("manifests/b.yaml").exists());
        assert!(!d.path().join("metadata/old.yaml").exists());
        assert!(!d.path().join("metadata/keep.yaml").exists());
        assert!(d.path().join("metadata/annotations.yaml").exists());
        let mode = std::fs::metadata(d.path().join("manifests/b.yaml"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o644);
        let mode = std::fs::metadata(d.path().join("manifests"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o755);
    }

    #[test]
    fn bomb_limits() {
        use std::io::Write;
        // 64 MiB of zeros gzips to ~64 KiB.
        let t = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(64 << 20);
            h.set_path("bomb").unwrap();
            h.set_cksum();
            b.append(&h, std::io::repeat(0).take(64 << 20)).unwrap();
        });
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&t).unwrap();
        let gz = gz.finish().unwrap();
        assert!(gz.len() < 1 << 20);
        let limits = Limits {
            max_total_bytes: 8 << 20,
            max_entries: 10,
            max_file_bytes: 1 << 30,
        };
        let (d, r) = unpack(&[gz], limits);
        assert!(r.unwrap_err().to_string().contains("limit"));
        assert!(!d.path().join("bomb").exists());
        let many = tar_with(|b| {
            for i in 0..20 {
                file(b, &format!("f{i}"), b"");
            }
        });
        let e = refusal(many, limits);
        assert!(e.contains("entries"), "{e}");
        let big = tar_with(|b| file(b, "f", &[0u8; 2048]));
        let small = Limits {
            max_file_bytes: 1024,
            ..Limits::default()
        };
        let e = refusal(big, small);
        assert!(e.contains("per-file"), "{e}");
    }

    #[test]
    fn devices_are_refused() {
        let t = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_entry_type(tar::EntryType::Char);
            h.set_path("dev/null").unwrap();
            h.set_cksum();
            b.append(&h, &[][..]).unwrap();
        });
        let e = refusal(t, Limits::default());
        assert!(e.contains("device"), "{e}");
    }
}
