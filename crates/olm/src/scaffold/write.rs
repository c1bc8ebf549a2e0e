//! Atomic file writes and the short diffs init prints for conflicts and dry runs.

use super::error::ScaffoldError;
use std::fs;
use std::path::Path;

/// Writes `bytes` to `path` atomically ([`crate::fsio`]): an existing file keeps its
/// permissions; a new one gets `mode`. The folder is created when missing.
pub fn atomic_write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), ScaffoldError> {
    Ok(crate::fsio::write(
        path,
        bytes,
        crate::fsio::Options::edit(mode),
    )?)
}

/// The permission bits of a file, to give a copy the same ones (0644 where unknown).
pub fn mode_of(path: &Path) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0o644
    }
}

/// Most changed lines a diff shows before it says how many more there are.
const MAX_DIFF_LINES: usize = 40;

/// A `- old` / `+ new` diff of the lines between the common head and tail of two texts: enough
/// for the one- or two-line changes init makes, and linear in the file size.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let removed = &a[head..a.len() - tail];
    let added = &b[head..b.len() - tail];
    let mut out = String::new();
    let lines = removed
        .iter()
        .map(|l| format!("- {l}"))
        .chain(added.iter().map(|l| format!("+ {l}")));
    let total = removed.len() + added.len();
    for line in lines.take(MAX_DIFF_LINES) {
        out.push_str(&line);
        out.push('\n');
    }
    if total > MAX_DIFF_LINES {
        out.push_str(&format!(
            "  ... {} more changed lines\n",
            total - MAX_DIFF_LINES
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_shows_only_the_changed_lines() {
        let d = diff("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(d, "- b\n+ B\n");
        assert_eq!(diff("a\n", "a\nb\n"), "+ b\n");
    }

    #[test]
    fn atomic_write_replaces_and_keeps_no_temp_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub").join("f.yaml");
        atomic_write(&path, b"one", 0o644).expect("write");
        atomic_write(&path, b"two", 0o644).expect("write");
        assert_eq!(fs::read(&path).expect("read"), b"two");
        let names: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .expect("list")
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }
}
