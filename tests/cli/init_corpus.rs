//! `bundle init` on every real bundle of the shared corpus: remove `metadata/`, regenerate it, and
//! check that the package and the channels come back as they were and that the validation verdict
//! is the reference validator's (`REFERENCE-VERDICTS.tsv`, or the justified disagreement of
//! `tests/corpus/expected-verdicts.tsv`).
//!
//! The corpus is `$OLMPACK_CORPUS` or `../shared/corpus` next to the crate. When it is absent the
//! test prints why and passes, unless `OLMPACK_REQUIRE_CORPUS=1`, where it fails.

use crate::support::proc::Bounded;
use olmpack::bundle::{Bundle, keys};
use olmpack::scaffold::manifests::package_from_csv_name;
use olmpack::validate::{self, Options};
use std::fs;
use std::path::{Path, PathBuf};

/// The corpus, through the one gate of tests/support/shared.rs.
fn corpus() -> Option<PathBuf> {
    crate::support::shared::shared_corpus()
}

/// The verdict each corpus bundle must have: the reference validator's
/// (`REFERENCE-VERDICTS.tsv`), except where `tests/corpus/expected-verdicts.tsv` documents and
/// justifies a disagreement (tests/library/corpus.rs checks those notes). `true` is valid.
fn expected_validity(corpus: &Path) -> std::collections::BTreeMap<String, (bool, bool)> {
    let reference = fs::read_to_string(corpus.join("REFERENCE-VERDICTS.tsv")).expect("reference");
    let ours = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/expected-verdicts.tsv"),
    )
    .expect("expected-verdicts.tsv");
    let rows = |text: &str| -> std::collections::BTreeMap<String, bool> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let cols: Vec<&str> = l.split('\t').collect();
                (cols[0].to_string(), cols.get(1) == Some(&"pass"))
            })
            .collect()
    };
    let (reference, ours) = (rows(&reference), rows(&ours));
    reference
        .into_iter()
        .map(|(name, r)| {
            let o = *ours.get(&name).unwrap_or(&r);
            (name, (r, o))
        })
        .collect()
}

/// Corpus copies leave symbolic links out.
fn copy_dir(from: &Path, to: &Path) {
    crate::support::fs::copy_dir_with(from, to, crate::support::fs::Links::Skip);
}

/// Runs `olmpack bundle init ARGS`; returns the exit code and stderr.
fn run_init(args: &[String]) -> (i32, String) {
    let output = crate::support::cmd::olmpack_cmd()
        .env("NO_COLOR", "1")
        .args(["bundle", "init"])
        .args(args)
        .bounded_output()
        .expect("run init");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every file under a folder with its bytes and mtime.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let meta = fs::metadata(&path).expect("stat");
                out.push((
                    path.clone(),
                    fs::read(&path).expect("read"),
                    meta.modified().expect("mtime"),
                ));
            }
        }
    }
    out.sort();
    out
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .expect("list")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn verdict(bundle: &Bundle) -> (bool, Vec<String>) {
    let report = validate::validate(bundle, &Options::default());
    let errors = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == validate::Severity::Error)
        .map(|d| format!("{}: {}", d.rule.id(), d.message))
        .collect();
    (!report.has_errors(), errors)
}

#[test]
fn init_regenerates_the_metadata_of_every_corpus_bundle() {
    let Some(corpus) = corpus() else { return };
    let verdicts = expected_validity(&corpus);
    let mut like_reference = 0usize;
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut checked = 0usize;
    let mut folders = 0usize;
    let mut skipped = Vec::new();
    let mut with_package_flag = Vec::new();
    let mut failures = Vec::new();
    let mut conflicted = Vec::new();
    let mut originally_valid = 0usize;
    for pkg in sorted_dirs(&corpus.join("bundles")) {
        for version in sorted_dirs(&pkg) {
            folders += 1;
            let name = version
                .strip_prefix(corpus.join("bundles"))
                .expect("prefix")
                .display()
                .to_string();
            if !version.join("manifests").is_dir() {
                skipped.push(format!("{name} (no manifests/ folder)"));
                continue;
            }
            let original = Bundle::load(&version).expect("load original");
            let Some(ann) = original.annotations.as_ref() else {
                skipped.push(format!("{name} (no annotations to compare with)"));
                continue;
            };
            let channels = ann.channels();
            let package = original.package().unwrap_or_default().to_string();
            if channels.is_empty() || package.is_empty() {
                skipped.push(format!("{name} (original has no package or channels)"));
                continue;
            }
            let (was_valid, was_errors) = verdict(&original);
            originally_valid += usize::from(was_valid);

            let copy = tmp.path().join(name.replace('/', "__"));
            copy_dir(&version, &copy);
            fs::remove_dir_all(copy.join("metadata")).expect("remove metadata");
            let joined = channels.join(",");
            let mut args = vec![copy.display().to_string(), format!("--channels={joined}")];
            // init derives the package from the CSV name (minus .vX.Y.Z); bundles whose package
            // differs from that (or whose CSV name has no semver suffix) get --package, as their
            // authors would have to pass it.
            let implied = original
                .csv()
                .and_then(|c| c.name.as_deref())
                .and_then(package_from_csv_name);
            if implied != Some(package.as_str()) {
                args.push(format!("--package={package}"));
                with_package_flag.push(name.clone());
            }
            let (code, stderr) = run_init(&args);
            if code != 0 && code != 1 {
                failures.push(format!("{name}: init exited {code}: {stderr}"));
                continue;
            }
            let regenerated = Bundle::load(&copy).expect("load regenerated");
            let Some(new_ann) = regenerated.annotations.as_ref() else {
                failures.push(format!("{name}: no annotations written"));
                continue;
            };
            if new_ann.value(keys::PACKAGE) != Some(package.as_str()) {
                failures.push(format!(
                    "{name}: package {:?}, original {package:?}",
                    new_ann.value(keys::PACKAGE)
                ));
            }
            let new_channels = new_ann.channels();
            if new_channels != channels || new_channels.iter().any(String::is_empty) {
                failures.push(format!(
                    "{name}: channels {new_channels:?}, original {channels:?}"
                ));
            }
            let (is_valid, errors) = verdict(&regenerated);
            // The verdict after init is the reference validator's on the original bundle (or
            // the documented, justified disagreement with it), not olmpack's own verdict.
            match verdicts.get(&name) {
                None => failures.push(format!("{name}: no reference verdict")),
                Some(&(reference, expected)) => {
                    like_reference += usize::from(is_valid == reference);
                    if is_valid != expected {
                        failures.push(format!(
                            "{name}: verdict {} after init; the reference says {}{}\n  before: {was_errors:?}\n  after: {errors:?}",
                            if is_valid { "valid" } else { "invalid" },
                            if reference { "valid" } else { "invalid" },
                            if expected == reference { "" } else { " (and expected-verdicts.tsv documents why olmpack differs)" },
                        ));
                    }
                }
            }
            if (code == 0) != is_valid {
                failures.push(format!(
                    "{name}: init exited {code} but the bundle is {}",
                    if is_valid { "valid" } else { "invalid" }
                ));
            }
            // Idempotence on real bundles: a second run (no flags) changes no byte.
            let before = snapshot(&copy);
            let again = run_init(&[copy.display().to_string()]);
            if again.0 != code || snapshot(&copy) != before {
                failures.push(format!(
                    "{name}: second run exited {} (first {code}) or changed files: {}",
                    again.0, again.1
                ));
            }

            // Existing metadata kept: init on the untouched bundle keeps every annotation with its
            // value (it may only add the default channel when there is one channel).
            let kept = tmp
                .path()
                .join(format!("{}--kept", name.replace('/', "__")));
            copy_dir(&version, &kept);
            let (kept_code, kept_err) = run_init(&[kept.display().to_string()]);
            if kept_code == 2 {
                failures.push(format!(
                    "{name}: init on the original bundle exited 2: {kept_err}"
                ));
            } else if kept_code == 1 && kept_err.contains("pass --force") {
                conflicted.push(name.clone());
            } else {
                let after = Bundle::load(&kept).expect("load kept");
                let labels = after.annotations_labels();
                for (key, value) in ann.labels() {
                    if key == keys::DEFAULT_CHANNEL && value.trim().is_empty() {
                        continue; // an empty default channel is dropped, with a note
                    }
                    if labels.get(&key) != Some(&value) {
                        failures.push(format!(
                            "{name}: annotation {key} was {value:?}, now {:?}",
                            labels.get(&key)
                        ));
                    }
                }
                // Every dependency the bundle declared is still declared.
                let entries = |b: &Bundle| -> Vec<serde_json::Value> {
                    b.dependencies
                        .as_ref()
                        .and_then(|d| d.root.get("dependencies"))
                        .and_then(|l| l.as_seq())
                        .map(|items| items.iter().map(|i| i.to_json()).collect())
                        .unwrap_or_default()
                };
                let now = entries(&after);
                for dep in entries(&original) {
                    if !now.contains(&dep) {
                        failures.push(format!("{name}: dependency {dep} was dropped"));
                    }
                }
                let added: Vec<&String> = labels
                    .keys()
                    .filter(|k| !ann.labels().contains_key(*k))
                    .collect();
                if added.iter().any(|k| k.as_str() != keys::DEFAULT_CHANNEL) {
                    failures.push(format!("{name}: init added annotations {added:?}"));
                }
            }
            checked += 1;
        }
    }
    println!(
        "checked {checked} bundles ({originally_valid} valid before and after, {} invalid)",
        checked - originally_valid
    );
    println!(
        "skipped {} folders that are not bundles or have nothing to compare:",
        skipped.len()
    );
    for s in &skipped {
        println!("  {s}");
    }
    println!(
        "--package passed for {} bundles whose package is not their CSV name minus the version: {}",
        with_package_flag.len(),
        with_package_flag.join(", ")
    );
    println!(
        "{} bundles have core annotations init would change (so it stops without --force): {}",
        conflicted.len(),
        conflicted.join(", ")
    );
    println!(
        "{like_reference} of {checked} regenerated bundles get the reference validator's verdict; the others differ as expected-verdicts.tsv documents"
    );
    crate::support::shared::cases_exactly(
        "init_corpus bundle folders seen",
        checked + skipped.len(),
        folders,
        150,
    );
    crate::support::shared::cases("init_corpus bundles regenerated and compared", checked, 146);
    assert!(
        failures.is_empty(),
        "{} of {checked} bundles differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
