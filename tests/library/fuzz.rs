//! The fuzz harness in CI: a fixed-seed pass over damaged real files (bounded, well under two
//! minutes on two cores in a debug build), and every regression case under
//! `testdata/yaml-regressions/` and `testdata/catalogs/regressions/`. Longer runs with a fresh
//! seed: `just fuzz` (see examples/fuzz/main.rs). A panic fails the test and prints the command
//! that replays it.

#[path = "../../examples/fuzz/harness.rs"]
mod harness;

use crate::support::fixtures::repo_root as repo;
use crate::support::fs::copy_dir;
use crate::support::shared;
use olmpack::yaml;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

const SEED: u64 = 20261123;
const CASES: u64 = 1200;

fn corpus_dir() -> Option<PathBuf> {
    shared::shared_corpus()
}

#[test]
fn fixed_seed_pass_finds_no_panic() {
    let corpus = corpus_dir();
    let sources = harness::sources(&repo(), corpus.as_deref(), 100 * 1024);
    assert!(sources.len() > 100, "only {} sources", sources.len());
    for kind in [harness::Kind::Catalog, harness::Kind::Template] {
        assert!(
            sources.iter().any(|s| s.kind == kind),
            "no {kind:?} among the sources"
        );
    }
    let next = AtomicU64::new(0);
    let crashes: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let mut ws = harness::Workspace::new().expect("work folder");
                let mut last: Option<PathBuf> = None;
                loop {
                    let batch = next.fetch_add(1, Ordering::Relaxed);
                    let first = batch * harness::BATCH;
                    if first >= CASES {
                        break;
                    }
                    for case in first..(first + harness::BATCH).min(CASES) {
                        let outcome = harness::run_case(&mut ws, &sources, SEED, case, last.as_deref())
                            .expect("write the damaged bundle");
                        last = Some(outcome.file.clone());
                        for crash in &outcome.crashes {
                            crashes.lock().unwrap_or_else(|e| e.into_inner()).push(format!(
                                "case {case}: panic in {}: {} ({} / {} damaged by {:?}); replay: just fuzz SEED={SEED} CASE={case} MAX_BUNDLE_KB=100{}",
                                crash.stage,
                                crash.message,
                                sources[outcome.source].root.display(),
                                outcome.file.display(),
                                outcome.mutations,
                                if corpus.is_none() { " CORPUS=none" } else { "" }
                            ));
                        }
                    }
                }
            });
        }
    });
    let crashes = crashes.into_inner().unwrap_or_else(|e| e.into_inner());
    assert!(
        crashes.is_empty(),
        "{} panics:\n{}",
        crashes.len(),
        crashes.join("\n")
    );
}

/// Every regression file: what the YAML layer must make of it, then the whole pipeline.
#[test]
fn regression_cases_never_panic() {
    let dir = repo().join("testdata/yaml-regressions");
    let expected: &[(&str, Option<&str>)] = &[
        // (file, Some(value of key `a`) when it must parse, None when it must be an error)
        ("block-literal-at-eof.yaml", Some("b")),
        ("block-folded-at-eof.yaml", Some("b")),
        ("block-strip-at-eof.yaml", Some("b")),
        (
            "tag-before-comma-in-flow-sequence.yaml",
            Some("<list of 2>"),
        ),
        (
            "tag-before-comma-in-flow-mapping.yaml",
            Some("<mapping of 2>"),
        ),
        ("alias-bomb.yaml", None),
    ];
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/yaml-regressions")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= expected.len());
    for (name, value) in expected {
        let text = std::fs::read_to_string(dir.join(name)).expect("read");
        match (yaml::parse_stream(&text), value) {
            (Ok(docs), Some(value)) => {
                let got = docs
                    .first()
                    .and_then(|d| d.root.get("a"))
                    .map(|n| n.to_string());
                assert_eq!(got.as_deref(), Some(*value), "{name}");
            }
            (Err(e), None) => assert!(e.message.contains("alias"), "{name}: {e}"),
            (other, _) => panic!("{name}: unexpected {other:?}"),
        }
    }
    let temp = tempfile::tempdir().expect("temp");
    for file in &files {
        let bytes = std::fs::read(file).expect("read");
        for target in [
            "manifests/regression.yaml",
            "manifests/kvstore-operator.clusterserviceversion.yaml",
            "metadata/annotations.yaml",
        ] {
            let bundle = temp.path().join("bundle");
            let _ = std::fs::remove_dir_all(&bundle);
            copy_dir(&repo().join("testdata/bundles/valid-basic"), &bundle);
            std::fs::write(bundle.join(target), &bytes).expect("write");
            let crashes = harness::run_pipeline(&bundle, &temp.path().join("spool"), &bytes, 0);
            assert!(
                crashes.is_empty(),
                "{} as {target}: {crashes:?}",
                file.display()
            );
        }
    }
}

/// Every catalog regression folder (`testdata/catalogs/regressions/`): every catalog entry
/// point, in each variant of output format and migration, without a panic.
#[test]
fn catalog_regression_cases_never_panic() {
    let dir = repo().join("testdata/catalogs/regressions");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/catalogs/regressions")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    assert!(!folders.is_empty());
    for folder in &folders {
        let ignore = std::fs::read(folder.join(".indexignore")).unwrap_or_default();
        for variant in 0..6 {
            let crashes = harness::run_catalog_pipeline(folder, &ignore, variant);
            assert!(
                crashes.is_empty(),
                "{} (variant {variant}): {crashes:?}",
                folder.display()
            );
        }
    }
}
