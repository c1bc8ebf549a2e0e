//! `olmpack completions SHELL` and `olmpack man`: the bash script parses and completes every
//! subcommand, the other shells' scripts name every subcommand, one man page per command is
//! written (atomically, reproducibly) and each parses with groff, and the top-level help speaks
//! of both bundles and catalogs.

use crate::support::cmd::olmpack;
use crate::support::proc::Bounded;
use crate::support::shared;
use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command as Process;

fn stdout_of(args: &[&str]) -> String {
    let out = olmpack().args(args).bounded_output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Every visible command path under `olmpack` (without clap's `help`), e.g. `["catalog", "graph"]`.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            // clap's `help`, and hidden commands (`reference`), which no completion or page
            // lists.
            if sub.get_name() == "help" || sub.is_hide_set() {
                continue;
            }
            let mut path = prefix.to_vec();
            path.push(sub.get_name().to_string());
            out.push(path.clone());
            walk(sub, &path, out);
        }
    }
    let mut cmd = olmpack::cli::Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &[], &mut out);
    out
}

/// Whether `tool` is installed: a printed skip on a developer's machine, a failure in CI
/// (scripts/test.sh installs zsh, groff-base and man-db).
fn have(tool: &str, debian_package: &str) -> bool {
    shared::tool(tool, debian_package)
}

#[test]
fn the_command_tree_is_the_one_documented() {
    let paths = command_paths();
    for want in [
        "bundle validate",
        "bundle build",
        "catalog graph",
        "catalog render",
        "completions",
        "man",
    ] {
        assert!(
            paths.iter().any(|p| p.join(" ") == want),
            "{want} missing from {paths:?}"
        );
    }
}

#[test]
fn bash_completion_parses_and_completes_every_subcommand() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(script.contains("complete -F _olmpack"), "{script}");
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("olmpack.bash");
    std::fs::write(&file, &script).expect("write");
    let check = Process::new("bash")
        .arg("-n")
        .arg(&file)
        .bounded_output()
        .expect("bash runs");
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Ask the completion function itself, as bash does on TAB, for each command's children.
    let paths = command_paths();
    let mut parents: BTreeSet<Vec<String>> = BTreeSet::new();
    parents.insert(Vec::new());
    for p in &paths {
        parents.insert(p[..p.len() - 1].to_vec());
    }
    for parent in parents {
        let words: Vec<String> = std::iter::once("olmpack".to_string())
            .chain(parent.iter().cloned())
            .collect();
        let line = format!("{} ", words.join(" "));
        let program = format!(
            "source {}; COMP_WORDS=({} \"\"); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; _olmpack olmpack '' {}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display(),
            words.join(" "),
            words.len(),
            words.last().map(String::as_str).unwrap_or("olmpack")
        );
        let out = Process::new("bash")
            .arg("-c")
            .arg(&program)
            .bounded_output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "`{line}<TAB>`: bash exited {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let offered: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        for child in paths
            .iter()
            .filter(|p| p.len() == parent.len() + 1 && p.starts_with(&parent))
        {
            let name = child.last().expect("name");
            assert!(
                offered.contains(name),
                "`{line}<TAB>` does not offer {name}: {offered:?}"
            );
        }
    }
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let script = stdout_of(&["completions", shell]);
        for p in command_paths() {
            let name = p.last().expect("name");
            assert!(script.contains(name.as_str()), "{shell}: no {name}");
        }
    }
    if have("zsh", "zsh") {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("_olmpack");
        std::fs::write(&file, stdout_of(&["completions", "zsh"])).expect("write");
        Process::new("zsh").arg("-n").arg(&file).succeeds();
    }
    olmpack()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("possible values"));
}

/// groff's verdict on a page: its warnings (empty when the page is clean), or `None` without
/// groff.
fn groff_warnings(page: &Path) -> Option<String> {
    if !have("groff", "groff-base") {
        return None;
    }
    let out = Process::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(page)
        .bounded_output()
        .expect("groff runs");
    assert!(out.status.success(), "groff on {}", page.display());
    Some(String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn man_writes_one_clean_page_per_command() {
    let dir = tempfile::tempdir().expect("tmp");
    let out_dir = dir.path().join("man1");
    olmpack()
        .args(["man", "--output-dir"])
        .arg(&out_dir)
        .assert()
        .success();
    let mut want: BTreeSet<String> = command_paths()
        .iter()
        .map(|p| format!("olmpack-{}.1", p.join("-")))
        .collect();
    want.insert("olmpack.1".to_string());
    let got: BTreeSet<String> = std::fs::read_dir(&out_dir)
        .expect("folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(got, want, "one page per command, nothing else");
    for name in &want {
        let page = out_dir.join(name);
        let text = std::fs::read_to_string(&page).expect("page");
        let title = name.trim_end_matches(".1");
        assert!(text.contains(&format!(".TH {title} 1")), "{name}: {text}");
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"] {
            assert!(text.contains(section), "{name} lacks {section}");
        }
        if let Some(warnings) = groff_warnings(&page) {
            assert!(warnings.is_empty(), "{name}: {warnings}");
        }
    }
    // The top page lists the command groups and says what both halves do.
    let top = std::fs::read_to_string(out_dir.join("olmpack.1")).expect("top");
    for link in [
        "olmpack\\-bundle(1)",
        "olmpack\\-catalog(1)",
        "olmpack\\-man(1)",
    ] {
        assert!(top.contains(link), "{link}: {top}");
    }
    let graph = std::fs::read_to_string(out_dir.join("olmpack-catalog-graph.1")).expect("graph");
    assert!(graph.contains("svg"), "{graph}");
    // Reproducible: the same bytes on stdout as in the folder, run after run.
    let stdout = stdout_of(&["man"]);
    assert_eq!(stdout, top);
    assert_eq!(stdout, stdout_of(&["man"]));
    if have("man", "man-db") {
        let page = out_dir.join("olmpack-catalog-graph.1");
        let out = Process::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .bounded_output()
            .expect("man");
        assert!(
            out.status.success(),
            "man -l exited {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("olmpack catalog graph"), "{text}");
    }
}

#[test]
fn man_refuses_a_file_as_output_dir_and_leaves_it_alone() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").expect("write");
    olmpack()
        .args(["man", "--output-dir"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a folder"));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "mine");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
}

#[test]
fn top_level_help_describes_bundles_and_catalogs() {
    let long = stdout_of(&["--help"]);
    for word in [
        "Bundles",
        "Catalogs",
        "file-based catalogs",
        "completions",
        "man",
    ] {
        assert!(long.contains(word), "--help lacks {word}: {long}");
    }
    let short = stdout_of(&["-h"]);
    assert!(
        short.contains("bundles and file-based catalogs"),
        "-h: {short}"
    );
}
