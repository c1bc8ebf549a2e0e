//! Advice about a catalog report as a whole. opm reads every file under a catalog folder,
//! whatever its name (CATALOG.md A.2), so a `.git/` folder or a README inside a catalog gives a
//! screenful of syntax errors that say nothing about the catalog itself. The way out is a
//! `.indexignore` file (gitignore patterns, read by opm and olmpack alike); the hint says so once,
//! naming what to list.

use crate::findings::Report;
use crate::findings::rules::Stage;
use std::collections::BTreeMap;

/// How many places the hint names before "and N more".
const NAMED: usize = 4;

/// A hint when loading problems come from files that are not catalog data: anything under a
/// hidden folder (`.git/`, `.github/`), hidden files, and files that are not `.json`, `.yaml`
/// or `.yml` (a README, a LICENSE, a Dockerfile).
pub(super) fn indexignore(report: &Report) -> Option<String> {
    // Pattern to list -> (whether it is a folder, number of findings it would silence).
    let mut sources: BTreeMap<String, (bool, usize)> = BTreeMap::new();
    for d in &report.diagnostics {
        if d.rule.stage() != Stage::Load {
            continue;
        }
        if let Some((pattern, folder)) = d.file.as_deref().and_then(not_catalog_data) {
            sources.entry(pattern).or_insert((folder, 0)).1 += 1;
        }
    }
    if sources.is_empty() {
        return None;
    }
    let count: usize = sources.values().map(|(_, n)| n).sum();
    let mut named: Vec<String> = sources
        .iter()
        .take(NAMED)
        .map(|(p, (folder, _))| if *folder { format!("{p}/") } else { p.clone() })
        .collect();
    if sources.len() > NAMED {
        named.push(format!("and {} more", sources.len() - NAMED));
    }
    let patterns: Vec<&str> = sources.keys().map(String::as_str).collect();
    Some(format!(
        "{count} finding{} come{} from files that are not catalog data ({}): opm reads every file under a catalog, so list them in a .indexignore file in {} (one pattern per line: {}) or move them out of the catalog",
        if count == 1 { "" } else { "s" },
        if count == 1 { "s" } else { "" },
        named.join(", "),
        report.subject,
        patterns.join(", ")
    ))
}

/// The `.indexignore` pattern for a file that is not catalog data, and whether it names a
/// folder (its hidden top folder) or the file itself; `None` for a catalog file.
fn not_catalog_data(file: &str) -> Option<(String, bool)> {
    let mut parts = file.split('/').filter(|p| !p.is_empty());
    let first = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    if first.starts_with('.') && !rest.is_empty() {
        return Some((first.to_string(), true));
    }
    let name = rest.last().copied().unwrap_or(first);
    let data = matches!(
        name.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()),
        Some(ext) if ext == "json" || ext == "yaml" || ext == "yml"
    );
    (name.starts_with('.') || !data).then(|| (file.to_string(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_files_into_patterns() {
        let pattern = |p: &str, folder| Some((p.to_string(), folder));
        assert_eq!(
            not_catalog_data(".git/objects/ab/cd"),
            pattern(".git", true)
        );
        assert_eq!(not_catalog_data("README.md"), pattern("README.md", false));
        assert_eq!(
            not_catalog_data("pkg/.DS_Store"),
            pattern("pkg/.DS_Store", false)
        );
        assert_eq!(not_catalog_data("pkg/catalog.json"), None);
        assert_eq!(not_catalog_data("catalog.YAML"), None);
        assert_eq!(
            not_catalog_data("pkg/LICENSE"),
            pattern("pkg/LICENSE", false)
        );
    }
}
