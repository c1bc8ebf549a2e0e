//! Byte-for-byte comparisons of olmpack's catalog writers and renderer against opm's output on
//! real data in `../shared/catalogs` and `../shared/corpus` (or `$OLMPACK_SHARED`). Skipped, with a
//! message, when that folder is absent, and failing instead when `OLMPACK_REQUIRE_CORPUS=1`.

use olmpack::catalog::write::{write_json_blob, write_yaml_blob};
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("OLMPACK_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    if dir.join("catalogs").is_dir() {
        return Some(dir);
    }
    if std::env::var("OLMPACK_REQUIRE_CORPUS").as_deref() == Ok("1") {
        panic!(
            "shared data not found at {} and OLMPACK_REQUIRE_CORPUS=1",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED: shared data not found at {} (set OLMPACK_SHARED)",
        dir.display()
    );
    None
}

fn files_with_suffix(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_with_suffix(&p, suffix, out);
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push(p);
        }
    }
    out.sort();
}

/// The first line where two outputs differ, for a readable failure.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let w = String::from_utf8_lossy(want);
    let g = String::from_utf8_lossy(got);
    for (n, (a, b)) in w.lines().zip(g.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n  opm:     {a:?}\n  olmpack: {b:?}", n + 1);
        }
    }
    format!(
        "lengths differ: opm {} lines, olmpack {} lines",
        w.lines().count(),
        g.lines().count()
    )
}

#[test]
fn writers_reproduce_opm_render_json_and_yaml() {
    let Some(shared) = shared_dir() else { return };
    let mut files = Vec::new();
    files_with_suffix(
        &shared.join("catalogs/opm-render"),
        ".render.json",
        &mut files,
    );
    assert!(!files.is_empty(), "no *.render.json under opm-render");
    let (mut json_ok, mut yaml_ok, mut yaml_total) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let blobs: Vec<Box<RawValue>> = serde_json::Deserializer::from_str(&text)
            .into_iter::<Box<RawValue>>()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut json = Vec::new();
        let mut yaml = Vec::new();
        for b in &blobs {
            write_json_blob(&mut json, b).unwrap();
            write_yaml_blob(&mut yaml, b).unwrap();
        }
        if json == text.as_bytes() {
            json_ok += 1;
        } else {
            failures.push(format!(
                "{} (json): {}",
                path.display(),
                first_difference(text.as_bytes(), &json)
            ));
        }
        let yaml_path = PathBuf::from(
            path.to_string_lossy()
                .replace(".render.json", ".render.yaml"),
        );
        if let Ok(want) = std::fs::read(&yaml_path) {
            yaml_total += 1;
            if want == yaml {
                yaml_ok += 1;
            } else {
                failures.push(format!(
                    "{} (yaml): {}",
                    yaml_path.display(),
                    first_difference(&want, &yaml)
                ));
            }
        }
    }
    println!(
        "opm-render: JSON byte-identical {json_ok} of {}, YAML byte-identical {yaml_ok} of {yaml_total}",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
