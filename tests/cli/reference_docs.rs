//! The generated reference in `docs/reference/` is what the binary writes today: `olmpack
//! reference` is run into a temporary folder and every file is compared with the committed one,
//! both ways (a page missing, extra or different fails, naming it). This is how CI regenerates
//! and diffs the documentation: a flag or rule added without `just docs` fails here.

use crate::support::cmd::olmpack;
use crate::support::proc::Bounded;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `root`, by relative path.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root").to_path_buf();
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn docs_reference_is_what_the_binary_generates() {
    let tmp = tempfile::tempdir().expect("tmp");
    olmpack()
        .args(["reference", "--output-dir"])
        .arg(tmp.path())
        .succeeds();
    let generated = files(tmp.path());
    let committed = files(&repo_root().join("docs/reference"));
    assert!(
        generated.len() > 100,
        "too few pages generated: {}",
        generated.len()
    );
    let mut stale = Vec::new();
    for (path, text) in &generated {
        match committed.get(path) {
            None => stale.push(format!("missing: docs/reference/{}", path.display())),
            Some(old) if old != text => {
                stale.push(format!("differs: docs/reference/{}", path.display()))
            }
            Some(_) => {}
        }
    }
    for path in committed.keys().filter(|p| !generated.contains_key(*p)) {
        stale.push(format!(
            "not generated any more: docs/reference/{}",
            path.display()
        ));
    }
    assert!(
        stale.is_empty(),
        "docs/reference is stale; run `just docs` (or `cargo run -- reference --output-dir docs/reference` after removing the folder) and commit:\n{}",
        stale.join("\n")
    );
}

#[test]
fn reference_refuses_a_file_as_its_folder() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").expect("write");
    let out = olmpack()
        .args(["reference", "--output-dir"])
        .arg(&file)
        .bounded_output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a folder"), "{err}");
    assert_eq!(std::fs::read(&file).expect("read"), b"x");
}
