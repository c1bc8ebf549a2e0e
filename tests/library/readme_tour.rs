//! The README's short tour and set-up stay true to the command line: every `olmpack …` and
//! `cargo run … -- …` line in a `sh` block of README.md parses with the binary's own clap
//! definition (a renamed command or flag fails here), and every relative link in the README and
//! under docs/ names a file that exists.

use crate::support::fixtures::repo_root;
use clap::Parser;
use std::path::Path;

/// The command lines of the README's `sh` blocks: comments and output redirections dropped.
fn tour_lines(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let line = line.split(" #").next().unwrap_or("").trim();
        let line = line.split(" > ").next().unwrap_or("").trim();
        if let Some(rest) = line
            .strip_prefix("cargo run --profile ci -- ")
            .or_else(|| line.strip_prefix("cargo run --release -- "))
        {
            out.push(format!("olmpack {rest}"));
        } else if line.starts_with("olmpack ") {
            out.push(line.to_string());
        }
    }
    out
}

#[test]
fn every_readme_command_parses() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let lines = tour_lines(&readme);
    assert!(lines.len() >= 15, "too few commands found: {lines:?}");
    let mut bad = Vec::new();
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Err(e) = olmpack::cli::Cli::try_parse_from(&words) {
            bad.push(format!(
                "{line}\n  {}",
                e.to_string().lines().next().unwrap_or("")
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "README commands that do not parse:\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_mistyped_flag_is_caught() {
    let lines = tour_lines("```sh\nolmpack bundle validate dir --no-such-flag\n```\n");
    let words: Vec<&str> = lines[0].split_whitespace().collect();
    assert!(olmpack::cli::Cli::try_parse_from(&words).is_err());
}

/// Relative Markdown links (`](path)` or `](path#anchor)`) of one file.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with('#') && !target.starts_with("mailto:") {
            out.push(target.split('#').next().unwrap_or("").to_string());
        }
    }
    out
}

#[test]
fn documentation_links_name_files_that_exist() {
    let root = repo_root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    walk(&root.join("docs"), &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        let dir = file.parent().expect("parent");
        for link in relative_links(&text) {
            if !link.is_empty() && !dir.join(&link).exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(files.len() > 10, "{files:?}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
