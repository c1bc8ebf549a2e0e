//! The layering of the workspace. Which crate may use which is Cargo's to enforce (a crate
//! cannot name one it does not depend on); the first test pins that graph, so a new arrow
//! between crates is a decision someone writes down here, not a line slipped into a
//! manifest. The other tests hold the rules inside a crate that Cargo cannot see: the catalog
//! model below the rules, the Go reproductions in one place, the image model below the
//! transports, and thin command modules.

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

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The olmpack crates a manifest depends on, in any dependency table.
fn olmpack_dependencies(manifest: &Path) -> Vec<String> {
    let text = fs::read_to_string(manifest).expect("read manifest");
    let mut deps: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("olmpack-"))
        .filter_map(|rest| rest.split([' ', '=']).next())
        .map(|name| format!("olmpack-{name}"))
        .collect();
    deps.sort();
    deps.dedup();
    deps
}

/// The direction of the house (ARCHITECTURE.md): ground below all; the OCI crate and the OLM
/// crate side by side, neither seeing the other; serve above both; the command line on top.
#[test]
fn crates_depend_only_downward() {
    let root = workspace();
    let expected: [(&str, &[&str]); 6] = [
        ("crates/ground/Cargo.toml", &[]),
        ("crates/oci/Cargo.toml", &["olmpack-ground"]),
        ("crates/olm/Cargo.toml", &["olmpack-ground"]),
        (
            "crates/serve/Cargo.toml",
            &["olmpack-ground", "olmpack-oci", "olmpack-olm"],
        ),
        (
            "crates/cli/Cargo.toml",
            &[
                "olmpack-ground",
                "olmpack-oci",
                "olmpack-olm",
                "olmpack-serve",
            ],
        ),
        ("Cargo.toml", &["olmpack-cli"]),
    ];
    for (manifest, allowed) in expected {
        let found = olmpack_dependencies(&root.join(manifest));
        assert_eq!(
            found,
            allowed.to_vec(),
            "{manifest}: olmpack crates depended on"
        );
    }
    let mut members: Vec<String> = fs::read_dir(root.join("crates"))
        .expect("list crates/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    members.sort();
    assert_eq!(
        members,
        ["cli", "ground", "oci", "olm", "serve"],
        "a new crate needs its place here"
    );
}

#[test]
fn the_catalog_model_imports_neither_rules_nor_network() {
    let root = workspace().join("crates/olm/src/catalog");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {}", root.display());
    let mut offenders = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // The network layers are in another crate, which Cargo keeps out of reach.
            for layer in ["crate::validate"] {
                // `crate::validate` must not match the catalog's own `catalog::validate`.
                if code.contains(layer) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the catalog model must not import the rule layer:\n{}",
        offenders.join("\n")
    );
}

/// Every Go reproduction once (issue 25 item 5): Go's JSON formatter, `%q`, go-yaml's
/// plain-scalar resolution and emitter and Go's tar writer live in the ground crate's `gocompat`; a second copy
/// elsewhere would drift from the first one character at a time.
#[test]
fn go_reproductions_live_in_gocompat_once() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for krate in ["ground", "oci", "olm", "serve", "cli"] {
        rust_files(&root.join("crates").join(krate).join("src"), &mut files);
    }
    let gocompat = root.join("crates/ground/src/gocompat");
    let markers = [
        "impl Formatter for ",
        "impl serde_json::ser::Formatter for ",
        "fn go_quote",
        "fn resolve_plain",
        "fn resolves_to_string",
        "fn go_key_cmp",
        "fn json_cache_digest",
        "fn go_indent",
    ];
    let mut seen = vec![0usize; markers.len()];
    let mut offenders = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (i, m) in markers.iter().enumerate() {
                if code.contains(m) {
                    seen[i] += 1;
                    if !file.starts_with(&gocompat) {
                        offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "Go reproductions outside gocompat:\n{}",
        offenders.join("\n")
    );
    // One formatter, one resolution module, one emitter, one tar digest, one indent.
    assert_eq!(seen[0] + seen[1], 1, "Go JSON formatters: {seen:?}");
    assert_eq!(seen[5], 1, "go_key_cmp: {seen:?}");
    assert_eq!(seen[6], 1, "json_cache_digest: {seen:?}");
    assert_eq!(seen[7], 1, "go_indent: {seen:?}");
}

/// The image model (issue 25 item 1) sits below the transports: parsing, media types and
/// digest verification live in `crates/oci/src/image` and fail with the image's own error, so nothing
/// there may reach for the registry client or a transport (a broken local image must never
/// become a registry error). Remote blobs fetch themselves through a trait the transport
/// implements.
#[test]
fn the_image_model_imports_no_transport() {
    let root = workspace().join("crates/oci/src/image");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() >= 10, "sources under {}", root.display());
    let mut offenders = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for layer in ["crate::registry", "crate::transport"] {
                if code.contains(layer) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "crates/oci/src/image must not import the registry or transport layers:\n{}",
        offenders.join("\n")
    );
}

/// The command line (issue 25 item 2): a module under `crates/cli/src/commands/` reads flags, makes one
/// call into `action/` and prints; the library work is below it. So it imports nothing but
/// `action` (which re-exports the types a command names, e.g. `action::*::types`), the command
/// modules' own items (`super::`, `crate::commands`), the report printers (`validate::output`),
/// the atomic output writer (`fsio`) and the error-chain formatter. `flags.rs` is held to the
/// same rule: `action::connection` turns the shared flags into the library's options.
/// Every command has moved; none is excepted any more.
#[test]
fn commands_import_only_actions_flags_and_printers() {
    const ALLOWED: [&str; 6] = [
        "crate::action",
        // Source strings are parsed once, here, into `Location`s the actions take (item 4).
        "crate::location",
        "crate::commands",
        "crate::validate::output",
        "crate::fsio",
        "crate::errors::error_chain",
    ];
    let root = workspace().join("crates/cli/src/commands");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() >= 25, "sources under {}", root.display());
    let mut offenders = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .expect("under crates/cli/src/commands")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(file).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                let path: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                rest = &rest[at + "crate::".len()..];
                // `crate::{a, b}` is refused too: each import is spelled out, so each is checked.
                if ALLOWED.iter().any(|a| path.starts_with(a)) {
                    continue;
                }
                offenders.push(format!(
                    "crates/cli/src/commands/{rel}:{}: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "crates/cli/src/commands may import only action/, the flag structs and the printers:\n{}",
        offenders.join("\n")
    );
}

/// Doors call steps, never other doors (issue 42 item 4): a command's module under
/// `crates/cli/src/action/` may use the steps (`action/step/`), the openers and flag helpers every door
/// shares, and nothing of another command's module, so no command runs another command's
/// script. The pairs listed last are the ones not moved into steps yet; the list may only
/// shrink.
#[test]
fn doors_call_steps_not_other_doors() {
    let action = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/cli/src/action");
    let shared = [
        "step",
        "source",
        "bundle_image",
        "bundle_source",
        "connection",
        "delivery",
        "labels",
        "Location",
    ];
    let not_yet = [
        ("catalog_diff", "catalog_render"),
        ("catalog_filter", "catalog_render"),
        ("catalog_mirror", "catalog_render"),
        ("catalog_mirror", "sign"),
        ("catalog_mirror", "default_jobs"),
        ("catalog_validate", "catalog_olmv1"),
        ("reference", "explain"),
        ("bundle_build", "sign"),
        ("catalog_build", "sign"),
    ];
    let mut doors = Vec::new();
    for entry in fs::read_dir(&action).expect("list crates/cli/src/action") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            doors.push((name.to_string(), path.clone()));
        }
    }
    let names: Vec<String> = doors.iter().map(|(n, _)| n.clone()).collect();
    let mut offenders = Vec::new();
    for (door, file) in &doors {
        if shared.contains(&door.as_str()) {
            continue;
        }
        // A door's own submodules (`catalog_mirror.rs` and `catalog_mirror/`) are the door.
        let mut files = vec![file.clone()];
        let own = file.with_extension("");
        if own.is_dir() {
            rust_files(&own, &mut files);
        }
        for (file, n, line) in files.iter().flat_map(|f| {
            let text = fs::read_to_string(f).expect("read source");
            text.lines()
                .enumerate()
                .map(|(n, l)| (f.clone(), n, l.to_string()))
                .collect::<Vec<_>>()
        }) {
            let code = line.split("//").next().unwrap_or("");
            for other in &names {
                if other == door || shared.contains(&other.as_str()) {
                    continue;
                }
                let used = [
                    format!("super::{other}::"),
                    format!("super::{other};"),
                    format!("crate::action::{other}::"),
                    format!("crate::action::{other};"),
                    format!("crate::action::{other}::{{"),
                ]
                .iter()
                .any(|p| code.contains(p.as_str()));
                if used && !not_yet.contains(&(door.as_str(), other.as_str())) {
                    offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a door calls another door (move the shared part into crates/cli/src/action/step/):\n{}",
        offenders.join("\n")
    );
}
