//! The YAML fast path against libyaml: for every YAML file of the shared corpus and of testdata/,
//! whenever the fast path answers, its documents (values, keys, scalar kinds, lines, columns and
//! document indexes) and duplicate-key reports must equal the general parser's, and the general
//! parser must accept the file. The corpus part is skipped when `../shared/corpus` is absent,
//! and fails instead when `OLMPACK_REQUIRE_CORPUS=1` (as in tests/library/corpus.rs).

use crate::support::fixtures::repo_root as repo;
use crate::support::shared;
use olmpack::yaml;
use std::path::{Path, PathBuf};

fn corpus_dir() -> Option<PathBuf> {
    shared::shared_corpus()
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
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
    // Every YAML file here is text: an unreadable one is a failure, not a refusal.
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Some(fast) = yaml::parse_stream_fast(&text) else {
        return false;
    };
    match yaml::parse_stream_general(&text) {
        Ok(general) => assert_eq!(fast, general, "{}: trees differ", path.display()),
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
    shared::cases("yaml_fast corpus YAML files", total, 1290);
    // The point of the fast path: it must answer for most real manifests.
    assert!(
        answered * 100 >= total * 98,
        "fast path answered only {answered} of {total}"
    );
}

/// How much of the corpus still goes to libyaml, and why (the fast path's refusal sites):
/// printed for the record, and bounded so a regression in coverage is noticed.
#[test]
fn few_corpus_bytes_go_to_libyaml() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let mut files = Vec::new();
    yaml_files(&corpus, &mut files);
    let (mut bytes, mut refused_bytes, mut refused) = (0usize, 0usize, 0usize);
    let mut reasons = std::collections::BTreeMap::new();
    shared::cases("yaml_fast corpus streams measured", files.len(), 1290);
    for path in &files {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        bytes += text.len();
        if yaml::parse_stream_fast(&text).is_none() {
            refused += 1;
            refused_bytes += text.len();
            let at = yaml::last_fast_refusal();
            let entry = reasons.entry(at).or_insert((0usize, 0usize));
            entry.0 += 1;
            entry.1 += text.len();
        }
    }
    eprintln!(
        "corpus: {refused} of {} streams ({refused_bytes} of {bytes} bytes) go to libyaml; by fast.rs refusal line (streams, bytes): {reasons:?}",
        files.len()
    );
    assert!(
        refused_bytes * 20 <= bytes,
        "{refused_bytes} of {bytes} bytes refused by the fast path"
    );
}

#[test]
fn fast_path_equals_libyaml_on_testdata() {
    let (answered, total) = check_all(&repo().join("testdata"));
    eprintln!("testdata: fast path answered {answered} of {total} YAML files, all identical");
    shared::cases("yaml_fast testdata YAML files", total, 500);
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
        let general = yaml::parse_stream_general(text).expect("valid");
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

/// The fast path answers for `text` and builds exactly libyaml's documents.
fn answered_and_same(text: &str) {
    let fast = yaml::parse_stream_fast(text).unwrap_or_else(|| {
        panic!(
            "fast path refused {text:?} (at fast.rs line {})",
            yaml::last_fast_refusal()
        )
    });
    let general = yaml::parse_stream_general(text).expect("libyaml accepts");
    assert_eq!(fast, general, "{text:?}");
}

/// Whatever the fast path answers for `text` is exactly libyaml's answer (it may refuse).
fn same_if_answered(text: &str) {
    if let Some(fast) = yaml::parse_stream_fast(text) {
        let general = yaml::parse_stream_general(text)
            .unwrap_or_else(|e| panic!("fast path accepted {text:?}, libyaml: {e}"));
        assert_eq!(fast, general, "{text:?}");
    }
}

#[test]
fn hand_written_constructs_take_the_fast_path() {
    let mut files = Vec::new();
    yaml_files(&repo().join("testdata/yaml-fast"), &mut files);
    assert!(files.len() >= 2);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read");
        answered_and_same(&text);
    }
}

#[test]
fn comments_match_libyaml() {
    for text in [
        "# c\na: 1\n",
        "a: 1 # c\nb: 2\n",
        "a: a#b\nb: a #b\nc: 'x'   #c\nd: \"y\"  # c\ne: |  # c\n  text\n",
        "a: # c\n  b: 1\n",
        "a:\n  - b\n  # c\n  - d\n# end\n",
        "- foo\n  # c\n- bar\n",
        "a: |\n  # not a comment\n  x\nb: 1\n",
        "a: |\n# c\nb: 1\n",
        "a: 'it''s' # c\n",
        "a: 'multi\n  line' # c\n",
        "a: \"multi\n  line\" # c\n",
        "# only\n---\na: 1\n",
        "a: 1\n---\n# only a comment\n",
        "- # c\n  x\n",
        "k: v # c: d\n",
        "a: x\n# c\ttab inside a comment\nb: 1\n",
    ] {
        answered_and_same(text);
    }
    // A comment ends a plain scalar: what follows deeper is libyaml's to judge.
    for text in [
        "x: foo\n  # c\n  bar\n",
        "x: foo # c\n  bar\n",
        "a: 1\n---\n# only\n---\nb: 2\n",
        "a: \"x\"#c\n",
        "a: |#c\n  x\n",
    ] {
        same_if_answered(text);
    }
}

#[test]
fn block_scalars_match_libyaml() {
    for text in [
        "a: >\n  one\n  two\n\n  three\n    more\n  back\n\n  end\nb: >-\n  x\nc: >+\n  y\nd: end\n",
        "- >\n folded\n text\n",
        "a: >-\n  a\n  b\n\n  c\n",
        "a: >+\n  x\n\n\n",
        "a: |+\n  x\n\n",
        "a: |+\n  x\n\n\nb: 1\n",
        "a: |+\n  x\n\n---\nb: 1\n",
        "a: |\n  x\n     \n  y\n",
        "a: >\n  x\n     \n  y\n",
        "a: |\n  x\n  \ty\n  z\n",
        "a: >\n  x\n  \ty\n  z\n",
        "a: |2\n  \tx\n",
        "- |1\n  x\n",
        "a:\n- |2\n   x\n",
        "a: |\n  x\n# c\tc\nb: 1\n",
    ] {
        answered_and_same(text);
    }
    for text in [
        "a: |\n  x\n\ty\n",
        "a: |\n\tx\n",
        "a: |\n  \tx\n",
        "a: |\n     \n  x\n",
        "a: |+\n\nb: 1\n",
        "a: |+\n  x",
        "a: >\n  x\n  y",
        "a: |+\n  x\n  \n   ",
    ] {
        same_if_answered(text);
    }
}

#[test]
fn flow_collections_and_keys_match_libyaml() {
    for text in [
        "k: [a, \"b\", 'c', 1, ~, [x, {y: 1}], {}, []]\n",
        "k: {a: 1, \"b c\": [2], 'd': {e: f},}\n",
        "k: [a, b,]\n",
        "k: [ a , b ]   # c\n",
        "a: \"é\" # c\nb: [é, \"é\", x]\n",
        "a: [a b, c  d]\n",
        "a: {\"x\": 1, y: \"2\"}\n",
        "a: [-1, -x, .5]\n",
        "a: [urn:a:b, c:d, a:b:c]\n",
        "[a, b]\n",
        "{a: [1, 2]}\n",
        "\"a b\": 1\n'c': 2\n\"é\": x\n",
        "a:\n",
        "a:\nb: 1\n",
        "- \n- x\n",
        "-\n",
        "a: # c\nb:\n  - # c\n  -\n  - x\n",
        "- a:\n  b: 1\n",
    ] {
        answered_and_same(text);
    }
    // Flow collections over several lines (as in dxoperator's CRDs): breaks after `[`, `,`
    // and before `]`, comments and blank lines between items, nested collections.
    for text in [
        "a:\n  enum: [DecimalExponent, BinarySI,\n         DecimalSI]\n  type: string\n",
        "a:\n  enum: [DecimalExponent,\n    BinarySI, DecimalSI]\nb: 1\n",
        "a: [\n  x,\n  y]\n",
        "a: [x, # c\n  y]  # d\n",
        "a: [x,\n\n  # c\n  y,\n  ]\n",
        "a: {k: v,\n  \"q\": [1,\n    2], 'r': {s: t}\n  }\nb: x\n",
        "- [a,\n  b]\n- {c: d,\n   e: f}\n",
        "a: &x [1,\n  2]\nb: *x\n",
        "a:\n- [\"é\", b,\n   c]\n",
        "ports:\n- :8081\n- a:b\nx: :80\n",
    ] {
        answered_and_same(text);
    }
    // Doubtful continuation lines (not deeper than the block, tabs, plain scalars or keys
    // broken over lines, a flow collection used as a key) are libyaml's.
    for text in [
        "a: [1,\n2]\n",
        "a:\n  b: [1,\n  2]\n",
        "- [a,\n- b]\n",
        "a: [1,\n\t2]\n",
        "a: [x\n  y]\n",
        "a: {k:\n  v}\n",
        "a: {k\n  : v}\n",
        "[a,\n b]: c\n",
        "a: [1,\n  2]x\n",
        "a: [1,\n  2\n",
        "a: [1,\n---\n  2]\n",
        "a: [1,\n  - 2]\n",
        "- :\n",
        "- ::\n",
        "a: :x: y\n",
    ] {
        assert!(yaml::parse_stream_fast(text).is_none(), "{text:?}");
        same_if_answered(text);
    }
    for text in [
        "a: [a:, b]\n",
        "a: [a, b\n",
        "a: {x: 1, x: 2}\n",
        "a: [,]\n",
        "a: [a,,b]\n",
        "a: {a}\n",
        "a: {a: }\n",
        "a: {a:1}\n",
        "a: [a #b]\n",
        "a: [a]x\n",
        "[a]: b\n",
        "\"a\" : b\n",
        "\"a\\\"b\": c\n",
        "'it''s': v\n",
        "\"\": v\n",
        "\"<<\": v\n",
        "a: [\"x\\qy\"]\n",
        "a: \"\\x+1\"\n",
    ] {
        same_if_answered(text);
    }
}

#[test]
fn duplicate_keys_are_reported_as_libyaml_reports_them() {
    let mut wide = String::new();
    for i in 0..40 {
        wide.push_str(&format!("k{i}: {i}\n"));
    }
    wide.push_str("k1: again\nk39: last\n");
    for text in [
        "a: 1\nb: 2\na: 3\n",
        "a:\n  x: 1\n  x: 2\n  x: 3\nb: {}\nb:\n  c: 1\n  c: 2\n",
        "a: 1\n---\nb: 1\nb: 2\n---\nc: 1\n",
        "- a: 1\n  a: 2\n",
        "\"a\": 1\na: 2\n",
        "a: &x 1\na: *x\nb: *x\n",
        wide.as_str(),
    ] {
        answered_and_same(text);
    }
    // In flow mappings they stay with libyaml.
    same_if_answered("a: {x: 1, x: 2}\n");
}

#[test]
fn anchors_and_aliases_match_libyaml() {
    for text in [
        "a: &x 1\nb: *x\n",
        "a: &x\n  k: v\n  l: [1, 2]\nb: *x\nc:\n  *x\n",
        "a: &x\nb: *x\n",
        "- &x foo\n- *x\n- &y\n  k: v\n- *y\n",
        "a: &x # c\n  k: v\nb: *x # c\n",
        "a: &x [1, 2]\nb: *x\n",
        "a: &x 'q'\nb: &x |\n  lit\nc: *x\n",
        "a: &a-b_c 1\nb: *a-b_c\n",
    ] {
        answered_and_same(text);
    }
    // Ordinary reuse, as CRD schemas and Helm-made CSVs do, in block style.
    let mut text = String::from("base: &b\n  x: 1\n  z:\n  - a\n  - b\nitems:\n");
    for i in 0..300 {
        text.push_str(&format!("- name: n{i}\n  spec: *b\n"));
    }
    answered_and_same(&text);
    // An alias bomb in block style and aliasing past go-yaml's ratio are libyaml's to refuse.
    let mut bomb = String::from("a: &a\n");
    bomb.push_str(&"  - x\n".repeat(10));
    let mut prev = 'a';
    for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h'] {
        bomb.push_str(&format!("{name}: &{name}\n"));
        bomb.push_str(&format!("  - *{prev}\n").repeat(10));
        prev = name;
    }
    assert!(yaml::parse_stream_fast(&bomb).is_none());
    let err = yaml::parse_stream(&bomb).expect_err("bomb");
    assert!(err.message.contains("alias"), "{err}");
    let mut heavy = String::from("base: &b\n");
    for i in 0..200 {
        heavy.push_str(&format!("  k{i}: v\n"));
    }
    heavy.push_str("items:\n");
    heavy.push_str(&"- *b\n".repeat(200));
    assert!(yaml::parse_stream_fast(&heavy).is_none());
    assert!(yaml::parse_stream(&heavy).is_err());
    for text in [
        "a: &x\n- 1\n- 2\nb: *x\n",
        "&x a: 1\n",
        "&x\na: 1\n",
        "a: &x b: c\n",
        "a: *y\n",
        "a: &x\n  - 1\nb: [*x]\n",
        "a: &x{ 1\n",
        "- &x\n- a\n",
        "a: &x\n  b: *x\n",
        "<<: *x\n",
        "a: &x 1\nb:\n  <<: *x\n",
    ] {
        same_if_answered(text);
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
    answered_and_same(dup);
    let err = yaml::parse_stream(dup).expect_err("duplicate");
    assert!(err.duplicate_key, "{err}");
    assert!(err.message.contains("first defined on line 1"), "{err}");
}

/// Every YAML file of the real bundles (`../shared/corpus/bundles` and
/// `../shared/catalogs/bundles`) takes the fast path, with exactly libyaml's trees: none of
/// them costs a libyaml parse any more (the last one was dxoperator's CRD, with flow sequences
/// over two lines).
#[test]
fn no_real_bundle_falls_back_to_libyaml() {
    // Both parts, or none (a skip, a failure in CI): half the data would pass on half the files.
    let (Some(corpus), Some(catalogs)) = (corpus_dir(), shared::shared_catalogs("bundles")) else {
        return;
    };
    let mut files = Vec::new();
    yaml_files(&corpus.join("bundles"), &mut files);
    let from_corpus = files.len();
    yaml_files(&catalogs.join("bundles"), &mut files);
    shared::cases("yaml_fast corpus/bundles YAML files", from_corpus, 1271);
    shared::cases(
        "yaml_fast catalogs/bundles YAML files",
        files.len() - from_corpus,
        772,
    );
    let mut refused = Vec::new();
    for path in &files {
        if !compare(path) {
            refused.push((path.display().to_string(), yaml::last_fast_refusal()));
        }
    }
    eprintln!(
        "bundles: fast path answered {} of {} YAML files, all identical; refused: {refused:?}",
        files.len() - refused.len(),
        files.len()
    );
    assert!(refused.is_empty(), "left to libyaml: {refused:?}");
}
