//! Catalog templates against real data: the public pipelines' templates
//! (`../shared/catalogs/packages/<repo>/operators/<pkg>/catalog-templates/`), rendered with a
//! bundle map that points each published image at its bundle folder, must reproduce the
//! checked-in `catalogs/v4.NN/<pkg>/catalog.yaml` byte for byte (with
//! `--migrate-level bundle-object-to-csv-metadata` for 4.17+, as the pipelines run opm). Each
//! file is tried with the newest behaviour and with `--opm-compat 1.46`; the counts are printed.
//!
//! The data lives outside the repository (`../shared/catalogs`, or `$OLMPACK_CATALOGS`). When it
//! is absent the test says so and passes, unless `OLMPACK_REQUIRE_CORPUS=1` (set by CI).

use crate::support::cmd::olmpack;
use crate::support::proc::Bounded;
use crate::support::shared;
use olmpack::yaml::{Node, Value, parse_stream};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `olmpack catalog template --offline -o yaml --bundle-map MAP TEMPLATE`: the render the
/// template tests compare with opm's, every bundle read from a local folder through the map
/// (no registry), so the comparisons run offline.
pub(crate) fn template_offline(map: &Path, template: &Path) -> assert_cmd::Command {
    let mut cmd = olmpack();
    cmd.args([
        "catalog",
        "template",
        "--offline",
        "-o",
        "yaml",
        "--bundle-map",
    ])
    .arg(map)
    .arg(template);
    cmd
}

fn catalogs_dir() -> Option<PathBuf> {
    shared::shared_catalogs("packages")
}

fn str_of(node: Option<&Node>) -> &str {
    node.and_then(Node::as_str).unwrap_or_default()
}

/// One `fbc.catalog_mapping` row.
struct Mapping {
    template: PathBuf,
    catalogs: Vec<String>,
}

struct Package {
    repo_root: PathBuf,
    name: String,
    mappings: Vec<Mapping>,
}

fn packages(dir: &Path) -> Vec<Package> {
    let mut out = Vec::new();
    let mut repos: Vec<_> = std::fs::read_dir(dir.join("packages"))
        .expect("packages/ readable")
        .flatten()
        .map(|e| e.path())
        .collect();
    repos.sort();
    for repo in repos {
        let mut pkgs: Vec<_> = std::fs::read_dir(repo.join("operators"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        pkgs.sort();
        for pkg in pkgs {
            let Ok(ci) = std::fs::read_to_string(pkg.join("ci.yaml")) else {
                continue;
            };
            let docs = parse_stream(&ci).expect("ci.yaml parses");
            let Some(root) = docs.first().map(|d| &d.root) else {
                continue;
            };
            let mut mappings = Vec::new();
            for m in root
                .path(&["fbc", "catalog_mapping"])
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                mappings.push(Mapping {
                    template: pkg
                        .join("catalog-templates")
                        .join(str_of(m.get("template_name"))),
                    catalogs: m
                        .get("catalog_names")
                        .and_then(Node::as_seq)
                        .unwrap_or_default()
                        .iter()
                        .map(|n| str_of(Some(n)).to_string())
                        .collect(),
                });
            }
            out.push(Package {
                repo_root: repo.clone(),
                name: pkg
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                mappings,
            });
        }
    }
    out
}

/// image → bundle folder, from every catalog of the package (image and `olm.package` version of
/// each bundle) and the folders `operators/<pkg>/<version>/`.
fn bundle_map(pkg: &Package) -> BTreeMap<String, PathBuf> {
    let mut map = BTreeMap::new();
    let Ok(versions) = std::fs::read_dir(pkg.repo_root.join("catalogs")) else {
        return map;
    };
    for v in versions.flatten() {
        let file = v.path().join(&pkg.name).join("catalog.yaml");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for doc in parse_stream(&text).unwrap_or_default() {
            let root = &doc.root;
            if str_of(root.get("schema")) != "olm.bundle" {
                continue;
            }
            let image = str_of(root.get("image"));
            for p in root
                .get("properties")
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                if str_of(p.get("type")) == "olm.package" {
                    let version = str_of(p.path(&["value", "version"]));
                    let folder = pkg
                        .repo_root
                        .join("operators")
                        .join(&pkg.name)
                        .join(version);
                    if folder.is_dir() {
                        map.insert(image.to_string(), folder);
                    }
                }
            }
        }
    }
    map
}

/// Images named anywhere in a YAML tree under a key `image` (any case).
fn images(node: &Node, out: &mut BTreeSet<String>) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                if k.text.eq_ignore_ascii_case("image") && !str_of(Some(v)).is_empty() {
                    out.insert(str_of(Some(v)).to_string());
                } else {
                    images(v, out);
                }
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| images(i, out)),
        Value::Scalar(..) => {}
    }
}

/// Channel entry names of every channel blob in a YAML tree (the template's entries or the
/// catalog's documents).
fn channel_entries(node: &Node, out: &mut BTreeSet<String>) {
    match &node.value {
        Value::Map(_) if str_of(node.get("schema")) == "olm.channel" => {
            for e in node
                .get("entries")
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                out.insert(format!(
                    "{} {}",
                    str_of(node.get("name")),
                    str_of(e.get("name"))
                ));
            }
        }
        Value::Map(entries) => entries.iter().for_each(|(_, v)| channel_entries(v, out)),
        Value::Seq(items) => items.iter().for_each(|i| channel_entries(i, out)),
        Value::Scalar(..) => {}
    }
}

/// Why a checked-in catalog cannot come from this version of the template (the repository
/// snapshot holds a template edited after the catalog was last regenerated), or `None`.
fn stale(template: &Path, expected: &[u8]) -> Option<String> {
    let t = std::fs::read_to_string(template).ok()?;
    let tdocs = parse_stream(&t).ok()?;
    let cdocs = parse_stream(std::str::from_utf8(expected).ok()?).ok()?;
    let mut timages = BTreeSet::new();
    let mut tchannels = BTreeSet::new();
    for d in &tdocs {
        images(&d.root, &mut timages);
        channel_entries(&d.root, &mut tchannels);
    }
    let mut cimages = BTreeSet::new();
    let mut cchannels = BTreeSet::new();
    for d in &cdocs {
        if str_of(d.root.get("schema")) == "olm.bundle" {
            cimages.insert(str_of(d.root.get("image")).to_string());
        }
        channel_entries(&d.root, &mut cchannels);
    }
    if timages != cimages {
        return Some(format!(
            "the template names {} images, the catalog holds {} bundles ({} in common)",
            timages.len(),
            cimages.len(),
            timages.intersection(&cimages).count()
        ));
    }
    if !tchannels.is_empty() && tchannels != cchannels {
        return Some(format!(
            "the template's channels list {} entries, the catalog's {}",
            tchannels.len(),
            cchannels.len()
        ));
    }
    None
}

fn minor_of(catalog: &str) -> (u32, u32) {
    let t = catalog.trim_start_matches('v');
    let mut it = t.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// Template/catalog pairs whose template names an image that no bundle folder of
/// `../shared/catalogs/packages` holds (the data has only the bundles still in the repository).
const KNOWN_UNMAPPABLE: &[&str] = &[];

/// Checked-in catalogs made from an older version of their template (`stale` says why: the
/// template lists channels or images the catalog does not have yet).
const KNOWN_STALE: &[&str] = &[
    "ecr-secret-operator/basic.yaml v4.16",
    "ecr-secret-operator/basic.yaml v4.17",
    "ecr-secret-operator/basic.yaml v4.18",
    "ecr-secret-operator/basic.yaml v4.19",
    "ecr-secret-operator/basic.yaml v4.20",
    "ecr-secret-operator/basic.yaml v4.21",
    "ecr-secret-operator/basic.yaml v4.22",
    "kubernaut-operator/semver.yaml v4.18",
    "kubernaut-operator/semver.yaml v4.19",
    "kubernaut-operator/semver.yaml v4.20",
    "kubernaut-operator/semver.yaml v4.21",
    "kubernaut-operator/semver.yaml v4.22",
];

/// The pairs reproduced byte for byte on the shared data (34 of the 46 pairs; the other 12 are
/// [`KNOWN_STALE`]).
const TEMPLATE_FLOOR: usize = 34;

#[test]
fn real_templates_reproduce_checked_in_catalogs() {
    let Some(dir) = catalogs_dir() else { return };
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut total = 0usize;
    let mut identical = 0usize;
    let mut unmappable: Vec<String> = Vec::new();
    let mut stale_labels: Vec<String> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let mut by_compat: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for pkg in packages(&dir) {
        let map = bundle_map(&pkg);
        let map_file = tmp.path().join(format!("{}.map", pkg.name));
        let text: String = map
            .iter()
            .map(|(image, folder)| format!("{image}\t{}\n", folder.display()))
            .collect();
        std::fs::write(&map_file, text).expect("map written");
        for m in &pkg.mappings {
            for catalog in &m.catalogs {
                let expected_file = pkg
                    .repo_root
                    .join("catalogs")
                    .join(catalog)
                    .join(&pkg.name)
                    .join("catalog.yaml");
                total += 1;
                let label = format!(
                    "{}/{} {catalog}",
                    pkg.name,
                    m.template
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default()
                );
                let Ok(expected) = std::fs::read(&expected_file) else {
                    eprintln!("missing    {label}: no {}", expected_file.display());
                    missing.push(label);
                    continue;
                };
                if let Some(why) = stale(&m.template, &expected) {
                    eprintln!("stale      {label}: {why}");
                    stale_labels.push(label);
                    continue;
                }
                let migrate = minor_of(catalog) >= (4, 17);
                let mut matched = None;
                let mut last_err = String::new();
                for compat in ["newest", "1.46"] {
                    let mut cmd = template_offline(&map_file, &m.template);
                    if migrate {
                        cmd.args(["--migrate-level", "bundle-object-to-csv-metadata"]);
                    }
                    if compat != "newest" {
                        cmd.args(["--opm-compat", compat]);
                    }
                    let out = cmd.bounded_output().expect("olmpack runs");
                    if !out.status.success() {
                        last_err = String::from_utf8_lossy(&out.stderr).into_owned();
                        continue;
                    }
                    if out.stdout == expected {
                        matched = Some(compat);
                        break;
                    }
                    last_err = format!(
                        "output differs ({} vs {} bytes)",
                        out.stdout.len(),
                        expected.len()
                    );
                }
                match matched {
                    Some(c) => {
                        identical += 1;
                        *by_compat.entry(c).or_default() += 1;
                        eprintln!("identical  {label} (opm-compat {c})");
                    }
                    None if last_err.contains("not in the bundle map") => {
                        eprintln!("unmappable {label}: {}", last_err.trim());
                        unmappable.push(label);
                    }
                    None => {
                        eprintln!("DIFFERENT  {label}: {}", last_err.trim());
                        failures.push(label);
                    }
                }
            }
        }
    }
    eprintln!(
        "catalog template: {identical} of {total} catalog.yaml files byte-identical ({by_compat:?}); {} name an image with no bundle folder in the data; {} checked-in files were made from an older version of the template; {} mapped catalogs are missing",
        unmappable.len(),
        stale_labels.len(),
        missing.len()
    );
    assert!(failures.is_empty(), "not reproduced: {failures:?}");
    // Every pair is accounted for once, and the pairs that cannot be compared are exactly the
    // ones known from the data (a new one is a failure, not a silent exclusion).
    assert_eq!(
        identical + unmappable.len() + stale_labels.len() + missing.len() + failures.len(),
        total
    );
    assert_eq!(
        unmappable, KNOWN_UNMAPPABLE,
        "pairs naming an image with no bundle folder"
    );
    assert_eq!(
        stale_labels, KNOWN_STALE,
        "checked-in catalogs older than their template"
    );
    assert_eq!(
        missing,
        Vec::<String>::new(),
        "mapped catalogs missing from the data"
    );
    shared::cases(
        "catalog_template template/catalog pairs reproduced",
        identical,
        TEMPLATE_FLOOR,
    );
}

/// `-o mermaid` of a real semver template equals `catalog graph -o mermaid` of the checked-in
/// catalog it produces (opm prints both with the same writer).
#[test]
fn real_template_mermaid_matches_graph_of_checked_in_catalog() {
    let Some(dir) = catalogs_dir() else { return };
    let repo = dir.join("packages/certified-operators");
    let pkg = Package {
        repo_root: repo.clone(),
        name: "kurrentdb-operator".into(),
        mappings: vec![],
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let map_file = tmp.path().join("map");
    let text: String = bundle_map(&pkg)
        .iter()
        .map(|(image, folder)| format!("{image}\t{}\n", folder.display()))
        .collect();
    std::fs::write(&map_file, text).expect("map");
    let mermaid = olmpack()
        .args([
            "catalog",
            "template",
            "--offline",
            "-o",
            "mermaid",
            "--opm-compat",
            "1.46",
            "--bundle-map",
        ])
        .arg(&map_file)
        .arg(repo.join("operators/kurrentdb-operator/catalog-templates/template.yaml"))
        .succeeds();
    let graph = olmpack()
        .args(["catalog", "graph", "-o", "mermaid", "--draw-v0-semantics"])
        .arg(repo.join("catalogs/v4.18"))
        .succeeds();
    assert_eq!(
        String::from_utf8_lossy(&mermaid.stdout),
        String::from_utf8_lossy(&graph.stdout)
    );
}
