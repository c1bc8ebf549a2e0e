//! OLM v1 render against operator-controller v1.11.0 itself: its 7 golden regression cases byte
//! for byte, and its output (or refusal) for every bundle of the shared corpus in three modes.

use crate::support::shared::{shared_corpus, shared_olmv1};
use olmpack::bundle::Bundle;
use olmpack::olmv1::{self, RenderOptions, output};
use std::collections::BTreeMap;
use std::path::Path;

/// The expected folder's files, name → bytes.
fn expected_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        out.insert(
            e.file_name().to_string_lossy().into_owned(),
            std::fs::read(e.path()).unwrap(),
        );
    }
    out
}

/// Renders and returns name → bytes, or the error text.
fn rendered(bundle: &Path, opts: &RenderOptions) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let b = Bundle::load(bundle).map_err(|e| e.to_string())?;
    let objects = olmv1::render(&b, opts).map_err(|e| e.to_string())?;
    Ok(objects
        .iter()
        .enumerate()
        .map(|(i, o)| (output::file_name(i, o), output::to_yaml(o)))
        .collect())
}

/// The first differing file, for the failure message.
fn first_difference(
    want: &BTreeMap<String, Vec<u8>>,
    got: &BTreeMap<String, Vec<u8>>,
) -> Option<String> {
    let wn: Vec<&String> = want.keys().collect();
    let gn: Vec<&String> = got.keys().collect();
    if wn != gn {
        return Some(format!("file names differ:\n want {wn:?}\n got  {gn:?}"));
    }
    for (name, w) in want {
        let g = &got[name];
        if w != g {
            let ws = String::from_utf8_lossy(w);
            let gs = String::from_utf8_lossy(g);
            let line = ws
                .lines()
                .zip(gs.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(ws.lines().count().min(gs.lines().count()));
            return Some(format!(
                "{name} differs at line {}:\n want {:?}\n got  {:?}",
                line + 1,
                ws.lines().nth(line),
                gs.lines().nth(line)
            ));
        }
    }
    None
}

#[test]
fn upstream_golden_cases_are_byte_identical() {
    let Some(root) = shared_olmv1() else { return };
    let up = root.join("upstream");
    let cases = std::fs::read_to_string(up.join("cases.tsv")).unwrap();
    let mut ran = 0;
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        let (bundle, case, ns, watch, config) = (f[0], f[1], f[2], f[3], f[4]);
        let deployment_config = (config != "-").then(|| {
            let text = std::fs::read_to_string(up.join("deployment-configs").join(config)).unwrap();
            olmv1::config::parse(&text).unwrap()
        });
        let opts = RenderOptions {
            install_namespace: ns.into(),
            watch_namespaces: if watch == "-" {
                vec![]
            } else {
                vec![watch.into()]
            },
            cert_provider: None,
            deployment_config,
        };
        let got = rendered(&up.join("testdata/bundles").join(bundle), &opts)
            .unwrap_or_else(|e| panic!("{bundle}/{case}: {e}"));
        let want = expected_files(
            &up.join("testdata/expected-manifests")
                .join(bundle)
                .join(case),
        );
        if let Some(diff) = first_difference(&want, &got) {
            panic!("{bundle}/{case}: {diff}");
        }
        ran += 1;
    }
    assert_eq!(ran, 7, "all 7 upstream cases ran");
}

/// Corpus cases where olmpack's output differs from operator-controller's on purpose or for a
/// known reason, with that reason (`pkg/version/mode`).
const EXPLAINED: &[(&str, &str)] = &[];

#[test]
fn corpus_renders_match_operator_controller() {
    let (Some(root), Some(corpus)) = (shared_olmv1(), shared_corpus()) else {
        return;
    };
    let mut total = 0;
    let mut matched = 0;
    let mut failures = Vec::new();
    let mut pkgs: Vec<_> = std::fs::read_dir(root.join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    pkgs.sort();
    for pkg in pkgs {
        let mut versions: Vec<_> = std::fs::read_dir(&pkg)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        versions.sort();
        for mut version in versions {
            let mut rel = format!(
                "{}/{}",
                pkg.file_name().unwrap().to_string_lossy(),
                version.file_name().unwrap().to_string_lossy()
            );
            // A few corpus bundles sit one level down, in `<version>/bundle/`.
            if !version.join("all").is_dir() && version.join("bundle/all").is_dir() {
                version = version.join("bundle");
                rel.push_str("/bundle");
            }
            let bundle = corpus.join("bundles").join(&rel);
            // generate-manifests.go passes its watch namespace through `WithTargetNamespaces`, so
            // "all" is an explicit `[""]` (as `--watch-namespace ""`), not the bundle's default.
            for (mode, watch) in [
                ("all", Some("")),
                ("single", Some("olmv1-watch")),
                ("own", Some("olmv1-system")),
            ] {
                let dir = version.join(mode);
                if !dir.is_dir() {
                    continue;
                }
                total += 1;
                let opts = RenderOptions {
                    install_namespace: "olmv1-system".into(),
                    watch_namespaces: watch.map(|w| vec![w.to_string()]).unwrap_or_default(),
                    cert_provider: None,
                    deployment_config: None,
                };
                let got = rendered(&bundle, &opts);
                let key = format!("{rel}/{mode}");
                let error = dir.join("error.txt");
                let outcome = if error.is_file() {
                    let want = std::fs::read_to_string(&error).unwrap();
                    match got {
                        Err(e) if e.trim() == want.trim() => None,
                        Err(e) => Some(format!(
                            "error text differs:\n want {:?}\n got  {e:?}",
                            want.trim()
                        )),
                        Ok(_) => Some(format!("rendered, upstream refused: {}", want.trim())),
                    }
                } else {
                    match got {
                        Ok(got) => first_difference(&expected_files(&dir), &got),
                        Err(e) => Some(format!("refused ({e}), upstream rendered")),
                    }
                };
                match outcome {
                    None => matched += 1,
                    Some(diff) => {
                        if !EXPLAINED.iter().any(|(k, _)| *k == key) {
                            failures.push(format!("{key}: {diff}"));
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "olmv1 corpus: {matched}/{total} byte-identical, {} explained",
        EXPLAINED.len()
    );
    assert!(total >= 447, "the corpus has its cases ({total})");
    assert!(
        failures.is_empty(),
        "{} of {total} cases differ:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(matched + EXPLAINED.len(), total);
}
