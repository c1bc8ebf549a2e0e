//! One model check, two readers: over the broken catalog fixtures, every real catalog folder
//! of `../shared/catalogs` (the 4.18 folders and every OpenShift version's) and the corpus's
//! rendered bundles (olm.bundle blobs without their package: refused by both), `catalog serve`'s
//! load (the loader, then `ServeModel`, as the command and the cache writers build it) refuses a
//! folder exactly when `catalog validate` reports an error of the model rules, with opm's text of
//! the model check's first problem.

use crate::support::fixtures::testdata;
use crate::support::shared::{cases, shared_catalogs, shared_corpus};
use olmpack::catalog::load::{LoadOptions, load_dir};
use olmpack::catalog::model_check;
use olmpack::findings::Severity;
use olmpack::serve::model::{ServeModel, load_compact};
use olmpack::validate::catalog::opm_model::MODEL_RULES;
use olmpack::validate::catalog::validate_dir;
use std::path::{Path, PathBuf};

/// Subfolders of `dir`, sorted.
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Every folder under `dir` that holds a `catalog.yaml` or `catalog.json`.
fn catalog_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    for d in subdirs(dir) {
        if d.join("catalog.yaml").is_file() || d.join("catalog.json").is_file() {
            out.push(d.clone());
        }
        catalog_dirs(&d, out);
    }
}

/// How a folder fared: refused at load (a file opm cannot read), refused by the model check
/// (with serve's text), or served.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Unloadable,
    Refused(String),
    Served,
}

/// `catalog serve`'s verdict, as `action::catalog_serve::prepare` reaches it; the cache
/// writers' path (`ServeModel::from_dir`) must agree.
fn serve(dir: &Path) -> Verdict {
    let (loaded, metadata) = load_compact(dir, &LoadOptions::default()).expect("load");
    let verdict = if loaded.has_errors() {
        Verdict::Unloadable
    } else {
        match ServeModel::new_compact(loaded.config, metadata) {
            Ok(_) => Verdict::Served,
            Err(e) => Verdict::Refused(e.to_string()),
        }
    };
    let plain = match ServeModel::from_dir(dir) {
        Ok(_) => Verdict::Served,
        Err(olmpack::serve::ModelError::Unloadable { .. }) => Verdict::Unloadable,
        Err(e) => Verdict::Refused(e.to_string()),
    };
    assert_eq!(
        verdict,
        plain,
        "{}: the two serve loads disagree",
        dir.display()
    );
    verdict
}

/// Checks one folder; returns whether serve refused it.
fn agree(dir: &Path) -> bool {
    let verdict = serve(dir);
    let report = validate_dir(dir, &LoadOptions::default()).expect("validate");
    let errors: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let model_errors: Vec<_> = errors
        .iter()
        .filter(|d| MODEL_RULES.contains(&d.rule))
        .collect();
    match &verdict {
        Verdict::Unloadable => {
            assert!(
                !errors.is_empty(),
                "{}: serve cannot load it, validate has no error",
                dir.display()
            );
        }
        Verdict::Refused(text) => {
            assert!(
                !model_errors.is_empty(),
                "{}: serve refuses it ({text}), validate reports no model error: {errors:?}",
                dir.display()
            );
            let loaded = load_dir(dir).expect("load");
            let first = model_check::first(&loaded.config).expect("a problem");
            assert_eq!(text, &first.problem.to_string(), "{}", dir.display());
        }
        Verdict::Served => assert!(
            model_errors.is_empty(),
            "{}: serve serves it, validate reports model errors: {model_errors:?}",
            dir.display()
        ),
    }
    verdict != Verdict::Served
}

#[test]
fn serve_refuses_exactly_what_validate_reports_as_model_errors() {
    // The broken fixtures: one per rule; those of the model rules are refused, with opm's text.
    let fixtures = subdirs(&testdata("catalogs/broken"));
    let mut refused = Vec::new();
    for d in &fixtures {
        if agree(d) {
            refused.push(d.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    cases("model agreement: broken fixtures", fixtures.len(), 50);
    println!(
        "refused {} of {}: {refused:?}",
        refused.len(),
        fixtures.len()
    );
    for name in [
        "stranded",
        "skip-range",
        "skip-empty",
        "replaces-cycle",
        "package-name",
        "duplicate-version",
        "bundle-name",
        "image-reference",
        "deprecation__message",
        "bundle-image",
    ] {
        assert!(refused.iter().any(|r| r == name), "{name} is served");
    }

    // Real catalogs: every folder loads and is served (opm serves them in production).
    if let Some(catalogs) = shared_catalogs("fbc") {
        let mut dirs = Vec::new();
        catalog_dirs(&catalogs.join("fbc"), &mut dirs);
        catalog_dirs(&catalogs.join("versions"), &mut dirs);
        let refused: Vec<_> = dirs.iter().filter(|d| agree(d)).collect();
        cases("model agreement: real catalogs", dirs.len(), 150);
        assert!(refused.is_empty(), "real catalogs refused: {refused:?}");
    }

    // The corpus's rendered bundles: blobs without their package, refused by both.
    if let Some(corpus) = shared_corpus() {
        let dirs = subdirs(&corpus.join("render"));
        let refused = dirs.iter().filter(|d| agree(d)).count();
        cases("model agreement: corpus renders", dirs.len(), 100);
        assert_eq!(refused, dirs.len(), "every render lacks its package blob");
    }
}
