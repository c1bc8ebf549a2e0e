//! `catalog render` of sqlite index databases: byte-for-byte against opm's output on the shared
//! databases (`../shared/legacy/sqlite`, skipped without it, failing in CI without it), the file
//! left untouched, databases of old schema versions built here, index images, and broken input.

use crate::support::cmd::olmpack;
use crate::support::fixtures::scratch_layout;
use crate::support::golden::first_difference;
use crate::support::proc::Bounded;
use crate::support::shared;

use olmpack::action::catalog_render::{RenderOptions, render_catalog};
use olmpack::catalog::write::Format;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every `.db` under `sqlite/` of the shared legacy data, with its expected YAML.
fn shared_dbs() -> Option<Vec<(PathBuf, PathBuf)>> {
    let dir = shared::shared_legacy("sqlite")?;
    let mut out = Vec::new();
    for tree in std::fs::read_dir(dir.join("sqlite")).unwrap().flatten() {
        for db in std::fs::read_dir(tree.path()).unwrap().flatten() {
            let path = db.path();
            if path.extension().is_some_and(|e| e == "db") {
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                let expected = dir
                    .join("expected")
                    .join(tree.file_name())
                    .join(format!("{stem}.yaml"));
                out.push((path, expected));
            }
        }
    }
    out.sort();
    shared::cases("legacy_sqlite databases", out.len(), 40);
    Some(out)
}

fn render(path: &Path, format: Format) -> Vec<u8> {
    let opts = RenderOptions {
        format,
        ..RenderOptions::default()
    };
    match render_catalog(
        &[olmpack::location::Location::parse(&path.to_string_lossy()).expect("a path")],
        &opts,
    ) {
        Ok(out) => out.bytes,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn yaml_docs(text: &str) -> Vec<Value> {
    olmpack::yaml::parse_stream(text)
        .unwrap()
        .iter()
        .map(|d| d.root.to_json())
        .collect()
}

fn json_docs(bytes: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn shared_databases_render_as_opm_does() {
    let Some(dbs) = shared_dbs() else { return };
    let mut failures = Vec::new();
    for (db, expected) in &dbs {
        let want = std::fs::read_to_string(expected).unwrap();
        let yaml = String::from_utf8(render(db, Format::Yaml)).unwrap();
        if yaml != want {
            failures.push(format!(
                "{}: {}",
                db.display(),
                first_difference(&want, &yaml)
            ));
            continue;
        }
        let json = render(db, Format::Json);
        if json_docs(&json) != yaml_docs(&want) {
            failures.push(format!(
                "{}: JSON output disagrees with the YAML",
                db.display()
            ));
        }
    }
    eprintln!(
        "sqlite render: {} of {} databases byte-identical to opm",
        dbs.len() - failures.len(),
        dbs.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_binary_prints_the_reference_yaml() {
    let Some(dbs) = shared_dbs() else { return };
    let (db, expected) = &dbs[0];
    let out = olmpack()
        .args(["catalog", "render", "-o", "yaml"])
        .arg(db)
        .succeeds();
    assert_eq!(out.stdout, std::fs::read(expected).unwrap());
}

/// Name, size, mtime and bytes of every entry of `dir`.
fn snapshot(dir: &Path) -> Vec<(String, u64, std::time::SystemTime, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let meta = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                meta.len(),
                meta.modified().unwrap(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn rendering_leaves_the_database_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("index.db");
    match shared_dbs() {
        // A real database of opm's loader, made writable so a write would succeed if tried.
        Some(dbs) => {
            std::fs::copy(&dbs[0].0, &db).unwrap();
            let mut perms = std::fs::metadata(&db).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&db, perms).unwrap();
        }
        None => build_index(&db, 13, &sample()),
    }
    // An old modification time, so a touch would show.
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    std::fs::File::options()
        .write(true)
        .open(&db)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let before = snapshot(tmp.path());
    for format in ["json", "yaml"] {
        let out = olmpack()
            .args(["catalog", "render", "-o", format])
            .arg(&db)
            .succeeds();
        assert!(!out.stdout.is_empty());
    }
    let after = snapshot(tmp.path());
    assert_eq!(before.len(), 1, "only the database before rendering");
    assert_eq!(
        before, after,
        "the database's bytes and mtime are unchanged and no -journal/-wal/-shm file appeared"
    );
}

/// (group, version, kind).
type Gvk = [&'static str; 3];

/// (name, version, replaces, provided APIs, required APIs).
type SampleBundle = (&'static str, &'static str, &'static str, Vec<Gvk>, Vec<Gvk>);

/// What a small index holds, written at any schema version by [`build_index`].
struct Sample {
    /// (name, version, replaces, provided (group, version, kind), required).
    bundles: Vec<SampleBundle>,
}

fn sample() -> Sample {
    Sample {
        bundles: vec![
            (
                "op.v1.0.0",
                "1.0.0",
                "",
                vec![["g.io", "v1", "Thing"]],
                vec![["r.io", "v1", "Need"]],
            ),
            (
                "op.v1.1.0",
                "1.1.0",
                "op.v1.0.0",
                vec![["g.io", "v1", "Thing"], ["g.io", "v1", "Other"]],
                vec![["r.io", "v1", "Need"]],
            ),
        ],
    }
}

fn csv_json(name: &str, version: &str, replaces: &str) -> String {
    format!(
        r#"{{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{{"name":"{name}"}},"spec":{{"version":"{version}","replaces":"{replaces}","icon":[{{"base64data":"PHN2Zy8+","mediatype":"image/svg+xml"}}],"relatedImages":[{{"name":"op","image":"quay.io/x/op:{version}"}}]}}}}"#
    )
}

/// Writes `sample` as opm's loader would have at schema `version` (the tables and columns of
/// that schema; from 9 on, the properties and dependencies the loader writes).
fn build_index(path: &Path, version: i64, sample: &Sample) {
    let conn = Connection::open(path).unwrap();
    let bundle_cols = match version {
        v if v >= 11 => {
            "name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT, skiprange TEXT, version TEXT, replaces TEXT, skips TEXT, substitutesfor TEXT"
        }
        v if v >= 7 => {
            "name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT, skiprange TEXT, version TEXT, replaces TEXT, skips TEXT"
        }
        v if v >= 5 => {
            "name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT, skiprange TEXT, version TEXT"
        }
        v if v >= 2 => "name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT",
        _ => "name TEXT PRIMARY KEY, csv TEXT, bundle TEXT",
    };
    let api_cols = if version >= 6 {
        "group_name TEXT, version TEXT, kind TEXT, operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT"
    } else {
        "group_name TEXT, version TEXT, kind TEXT, channel_entry_id INTEGER"
    };
    conn.execute_batch(&format!(
        "CREATE TABLE schema_migrations(version uint64, dirty bool);
         INSERT INTO schema_migrations VALUES({version}, 0);
         CREATE TABLE operatorbundle({bundle_cols});
         CREATE TABLE package(name TEXT PRIMARY KEY, default_channel TEXT);
         CREATE TABLE channel(name TEXT, package_name TEXT, head_operatorbundle_name TEXT, PRIMARY KEY(name, package_name));
         CREATE TABLE channel_entry(entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT, operatorbundle_name TEXT, replaces INTEGER, depth INTEGER);
         CREATE TABLE api(group_name TEXT, version TEXT, kind TEXT, plural TEXT NOT NULL, PRIMARY KEY(group_name, version, kind));
         CREATE TABLE api_provider({api_cols});
         CREATE TABLE api_requirer({api_cols});
         CREATE TABLE related_image(image TEXT, operatorbundle_name TEXT);"
    ))
    .unwrap();
    if version >= 8 {
        conn.execute_batch("CREATE TABLE dependencies(type TEXT, value TEXT, operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT);").unwrap();
    }
    if version >= 9 {
        conn.execute_batch("CREATE TABLE properties(type TEXT, value TEXT, operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT);").unwrap();
    }
    if version >= 12 {
        conn.execute_batch("CREATE TABLE deprecated(operatorbundle_name TEXT PRIMARY KEY);")
            .unwrap();
    }
    let head = sample.bundles.last().unwrap().0;
    conn.execute("INSERT INTO package VALUES('op', 'stable')", [])
        .unwrap();
    conn.execute("INSERT INTO channel VALUES('stable', 'op', ?1)", [head])
        .unwrap();
    // The loader's walk: the head at depth 0, then each replaced bundle.
    let mut previous: Option<i64> = None;
    for (depth, (name, ..)) in sample.bundles.iter().rev().enumerate() {
        conn.execute(
            "INSERT INTO channel_entry(channel_name, package_name, operatorbundle_name, depth) VALUES('stable', 'op', ?1, ?2)",
            rusqlite::params![name, depth as i64],
        )
        .unwrap();
        let id = conn.last_insert_rowid();
        if let Some(prev) = previous {
            conn.execute(
                "UPDATE channel_entry SET replaces = ?1 WHERE entry_id = ?2",
                [id, prev],
            )
            .unwrap();
        }
        previous = Some(id);
    }
    for (name, v, replaces, provided, required) in &sample.bundles {
        let csv = csv_json(name, v, replaces);
        let bundle =
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"x"}}}}{csv}"#);
        match version {
            v2 if v2 >= 5 => conn
                .execute(
                    "INSERT INTO operatorbundle(name, csv, bundle, bundlepath, skiprange, version) VALUES(?1, ?2, ?3, '', '', ?4)",
                    rusqlite::params![name, csv, bundle, v],
                )
                .unwrap(),
            v2 if v2 >= 2 => conn
                .execute(
                    "INSERT INTO operatorbundle(name, csv, bundle, bundlepath) VALUES(?1, ?2, ?3, '')",
                    rusqlite::params![name, csv, bundle],
                )
                .unwrap(),
            _ => conn
                .execute(
                    "INSERT INTO operatorbundle(name, csv, bundle) VALUES(?1, ?2, ?3)",
                    rusqlite::params![name, csv, bundle],
                )
                .unwrap(),
        };
        let entry: i64 = conn
            .query_row(
                "SELECT entry_id FROM channel_entry WHERE operatorbundle_name = ?1",
                [name],
                |r| r.get(0),
            )
            .unwrap();
        for (table, apis) in [("api_provider", provided), ("api_requirer", required)] {
            for [g, av, k] in apis {
                if version >= 6 {
                    conn.execute(
                        &format!("INSERT INTO {table} VALUES(?1, ?2, ?3, ?4, ?5, '')"),
                        rusqlite::params![g, av, k, name, v],
                    )
                    .unwrap();
                } else {
                    conn.execute(
                        &format!("INSERT INTO {table} VALUES(?1, ?2, ?3, ?4)"),
                        rusqlite::params![g, av, k, entry],
                    )
                    .unwrap();
                }
            }
        }
        if version >= 9 {
            let insert = "INSERT INTO properties VALUES(?1, ?2, ?3, ?4, '')";
            conn.execute(
                insert,
                rusqlite::params![
                    "olm.package",
                    format!(r#"{{"packageName":"op","version":"{v}"}}"#),
                    name,
                    v
                ],
            )
            .unwrap();
            for [g, av, k] in provided {
                conn.execute(
                    insert,
                    rusqlite::params![
                        "olm.gvk",
                        format!(r#"{{"group":"{g}","kind":"{k}","version":"{av}"}}"#),
                        name,
                        v
                    ],
                )
                .unwrap();
            }
        }
        if version >= 8 {
            // Schema 8's loader kept the dependency type inside the value; 009 removes it.
            for [g, av, k] in required {
                let value = if version == 8 {
                    format!(r#"{{"group":"{g}","kind":"{k}","type":"olm.gvk","version":"{av}"}}"#)
                } else {
                    format!(r#"{{"group":"{g}","kind":"{k}","version":"{av}"}}"#)
                };
                conn.execute(
                    "INSERT INTO dependencies VALUES('olm.gvk', ?1, ?2, ?3, '')",
                    rusqlite::params![value, name, v],
                )
                .unwrap();
            }
        }
        conn.execute(
            "INSERT INTO related_image VALUES(?1, ?2)",
            rusqlite::params![format!("quay.io/x/op:{v}"), name],
        )
        .unwrap();
    }
}

fn render_ok(db: &Path) -> String {
    let out = olmpack()
        .args(["catalog", "render", "-o", "yaml"])
        .arg(db)
        .succeeds();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_schema_from_5_renders_the_same_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    let newest = tmp.path().join("v13.db");
    build_index(&newest, 13, &sample());
    let want = render_ok(&newest);
    for needle in [
        "defaultChannel: stable",
        "replaces: op.v1.0.0",
        "type: olm.gvk.required",
        "kind: Other",
        "base64data: PHN2Zy8+",
    ] {
        assert!(want.contains(needle), "{needle} missing from\n{want}");
    }
    for version in 5..13 {
        let db = tmp.path().join(format!("v{version}.db"));
        build_index(&db, version, &sample());
        assert_eq!(render_ok(&db), want, "schema {version}");
    }
}

#[test]
fn before_schema_5_opm_hides_every_bundle() {
    // Migration 005 adds `version` as NULL (its backfill inserts new rows instead of updating),
    // and opm's listing skips bundles without a version: the channel is empty, the index invalid.
    refused_at_schema(4, "channel must contain at least one bundle");
}

#[test]
fn schema_8_dependencies_get_migration_009s_slip() {
    // Migration 009 rewrites every dependency with the first row's value (an uncorrelated
    // subquery); opm renders that, so both bundles require the same API here.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("v8.db");
    let mut s = sample();
    s.bundles[1].4 = vec![["other.io", "v2", "Else"]];
    build_index(&db, 8, &s);
    let out = render_ok(&db);
    assert_eq!(out.matches("kind: Need").count(), 2, "{out}");
    assert!(!out.contains("kind: Else"), "{out}");
}

#[test]
fn a_newer_schema_is_refused() {
    refused_at_schema(14, "schema version 14 is newer");
}

/// `catalog render` of the sample index at schema `version` fails, writes nothing and says
/// `needle`.
fn refused_at_schema(version: i64, needle: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join(format!("v{version}.db"));
    build_index(&db, version, &sample());
    olmpack()
        .args(["catalog", "render"])
        .arg(&db)
        .assert()
        .failure()
        .stdout("")
        .stderr(predicates::str::contains(needle));
}

#[test]
fn opm_compat_chooses_the_order_of_bundle_objects() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("index.db");
    build_index(&db, 13, &sample());
    let objects = |args: &[&str]| -> Vec<String> {
        let out = olmpack()
            .args(["catalog", "render"])
            .args(args)
            .arg(&db)
            .bounded_output()
            .unwrap();
        assert!(out.status.success());
        json_docs(&out.stdout)
            .iter()
            .filter(|d| d["name"] == "op.v1.1.0" && d["schema"] == "olm.bundle")
            .flat_map(|d| d["properties"].as_array().unwrap().clone())
            .filter(|p| p["type"] == "olm.bundle.object")
            .map(|p| p["value"]["data"].as_str().unwrap().to_string())
            .collect()
    };
    // The database holds the ConfigMap first, then the CSV; v1.26 keeps that order, v1.28 and
    // later sort by the base64 text ("eyJhcGlWZXJzaW9uIjoib3Bl…" < "eyJhcGlWZXJzaW9uIjoidjEi…").
    let default = objects(&[]);
    let old = objects(&["--opm-compat", "1.26"]);
    let new = objects(&["--opm-compat", "1.73"]);
    assert_eq!(default, old);
    assert_eq!(new, {
        let mut s = old.clone();
        s.sort();
        s
    });
    assert_ne!(old, new);
}

#[test]
fn an_index_image_renders_its_database() {
    use olmpack::image::extend::folder_layer;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    build_index(&root.join("index.db"), 13, &sample());
    let want = render_ok(&root.join("index.db"));
    let (layer, _) = folder_layer(&root, "database", 0, &tmp.path().join("l.tar")).unwrap();
    let image_for = |label: &str, tag: &str| {
        scratch_layout(
            &layer,
            olmpack::legacy::sqlite::DATABASE_LABEL,
            label,
            &tmp.path().join("layout"),
            tag,
        )
    };
    let good = image_for("/database/index.db", "good");
    let out = olmpack()
        .args(["catalog", "render", "-o", "yaml", &good])
        .succeeds();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    for (label, tag) in [
        ("/database/../../etc/passwd", "escape"),
        ("/database/none.db", "missing"),
    ] {
        let image = image_for(label, tag);
        olmpack()
            .args(["catalog", "render", &image])
            .assert()
            .failure()
            .stdout("")
            .stderr(predicates::str::contains(
                olmpack::legacy::sqlite::DATABASE_LABEL,
            ));
    }
}

fn assert_refused(file: &Path, why: &str) {
    let out = olmpack()
        .args(["catalog", "render", "-o", "yaml"])
        .arg(file)
        .bounded_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}: {stderr}", file.display());
    assert!(
        out.stdout.is_empty(),
        "nothing written for {}",
        file.display()
    );
    assert!(
        stderr.contains(&file.display().to_string()),
        "names the file: {stderr}"
    );
    assert!(stderr.contains(why), "{why:?} in {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn broken_databases_get_a_clear_error_and_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.db");
    build_index(&good, 13, &sample());
    let bytes = std::fs::read(&good).unwrap();

    let truncated = tmp.path().join("truncated.db");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_refused(&truncated, "truncated");

    let header_only = tmp.path().join("header.db");
    std::fs::write(&header_only, &bytes[..40]).unwrap();
    assert_refused(&header_only, "truncated");

    let random = tmp.path().join("index.db");
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&random, noise).unwrap();
    assert_refused(&random, "does not start with the SQLite header");

    let empty = tmp.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert_refused(&empty, "does not start with the SQLite header");

    let other = tmp.path().join("other.db");
    let conn = Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES(1);")
        .unwrap();
    drop(conn);
    assert_refused(&other, "not an operator index database");

    // Pages overwritten with garbage past the header: SQLite's own corruption error.
    let mut damaged = bytes.clone();
    let page = 4096.min(damaged.len() / 2);
    for b in damaged.iter_mut().skip(page).take(page) {
        *b = 0xA5;
    }
    let corrupt = tmp.path().join("corrupt.db");
    std::fs::write(&corrupt, damaged).unwrap();
    assert_refused(&corrupt, "not a readable SQLite database");
}
