//! The layering of the crate (issue 9): models (`catalog`) sit below the rule layer and the
//! network layer, so no source file under `src/catalog` may import `crate::validate`,
//! `crate::registry` or `crate::transport`. The shared grammars they need live in
//! `crate::reference`.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("list source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_catalog_model_imports_neither_rules_nor_network() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/catalog");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {}", root.display());
    let mut offenders = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for layer in ["crate::validate", "crate::registry", "crate::transport"] {
                // `crate::validate` must not match the catalog's own `catalog::validate`.
                if code.contains(layer) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "src/catalog must not import the rule or network layers:\n{}",
        offenders.join("\n")
    );
}
