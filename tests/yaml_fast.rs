//! The YAML fast path against libyaml: for every YAML file of the shared corpus and of testdata/,
//! whenever the fast path answers, its documents (values, keys, scalar kinds, lines, columns and
//! document indexes) must equal the general parser's, and the general parser must accept the
//! file without a duplicate key. The corpus part is skipped when `../shared/corpus` is absent,
//! and fails instead when `OLMPACK_REQUIRE_CORPUS=1` (as in tests/corpus.rs).

#[path = "support/shared.rs"]
mod shared;
use olmpack::bundle::yaml;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir() -> Option<PathBuf> {
    shared::shared_corpus()
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Compares both paths on one file; returns whether the fast path answered.
fn compare(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Some(fast) = yaml::parse_stream_fast(&text) else {
        return false;
    };
    match yaml::parse_stream_general(&text) {
        Ok((general, duplicates)) => {
            assert!(
                duplicates.is_empty(),
                "{}: fast path accepted a file with duplicate keys {duplicates:?}",
                path.display()
            );
            assert_eq!(fast, general, "{}: trees differ", path.display());
        }
        Err(e) => panic!(
            "{}: fast path accepted a file libyaml rejects: {e}",
            path.display()
        ),
    }
    true
}

fn check_all(root: &Path) -> (usize, usize) {
    let mut files = Vec::new();
    yaml_files(root, &mut files);
    let answered = files.iter().filter(|p| compare(p)).count();
    (answered, files.len())
}

#[test]
fn fast_path_equals_libyaml_on_the_corpus() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let (answered, total) = check_all(&corpus);
    eprintln!("corpus: fast path answered {answered} of {total} YAML files, all identical");
    assert!(total > 100, "only {total} YAML files in the corpus");
    // The point of the fast path: it must answer for most real manifests.
    assert!(
        answered * 10 >= total * 8,
        "fast path answered only {answered} of {total}"
    );
}

#[test]
fn fast_path_equals_libyaml_on_testdata() {
    let (answered, total) = check_all(&repo().join("testdata"));
    eprintln!("testdata: fast path answered {answered} of {total} YAML files, all identical");
    assert!(total > 0);
}

#[test]
fn multi_document_streams_keep_indexes_and_lines() {
    for text in [
        "a: 1\n---\nb: 2\n",
        "---\na: 1\n---\nb:\n- x\n",
        "\n\n---\na: 1\n---\n",
        "a: 1\n---\n",
        "kind: A\nspec:\n  x: 'q'\n---\nkind: B\n",
    ] {
        let fast = yaml::parse_stream_fast(text).unwrap_or_else(|| panic!("refused {text:?}"));
        let (general, _) = yaml::parse_stream_general(text).expect("valid");
        assert_eq!(fast, general, "{text:?}");
    }
    // Empty documents in the middle, other markers and directives go to libyaml.
    for text in [
        "a: 1\n---\n---\nb: 2\n",
        "--- a\n",
        "a: 1\n...\n",
        "%YAML 1.1\n---\na: 1\n",
        "~\n",
        "",
    ] {
        assert!(yaml::parse_stream_fast(text).is_none(), "{text:?}");
    }
}

#[test]
fn deep_nesting_and_errors_keep_libyaml_messages() {
    let deep = "- ".repeat(2000) + "x\n";
    assert!(yaml::parse_stream_fast(&deep).is_none());
    let fast_path = yaml::parse_stream(&deep).expect_err("too deep");
    let general = yaml::parse_stream_general(&deep).expect_err("too deep");
    assert_eq!(fast_path, general);
    let dup = "a: 1\nb: 2\na: 3\n";
    assert!(yaml::parse_stream_fast(dup).is_none());
    let err = yaml::parse_stream(dup).expect_err("duplicate");
    assert!(err.duplicate_key, "{err}");
}
