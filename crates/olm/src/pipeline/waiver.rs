//! The repository's ignore lists: `config.yaml`'s `tests: [{name, ignore_operators: [regex]}]`,
//! which the pipelines turn into `tests/skip/<name>` labels. A pattern is matched at the start
//! of the operator name, as Python's `re.match` does.

use super::repo::Repo;
use crate::yaml::Node;

/// The ignore lists of one repository.
#[derive(Debug, Default)]
pub struct Waivers {
    entries: Vec<(String, Vec<regex::Regex>)>,
}

impl Waivers {
    /// Reads `config.yaml`'s `tests` list; a pattern that is not a valid regex never matches.
    pub fn read(repo: &Repo) -> Waivers {
        let mut entries = Vec::new();
        let tests = repo
            .config
            .as_ref()
            .and_then(|c| c.at(&["tests"]))
            .and_then(Node::as_seq)
            .unwrap_or(&[]);
        for test in tests {
            let Some(name) = test.get("name").and_then(Node::scalar_text) else {
                continue;
            };
            let patterns = test
                .get("ignore_operators")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
                .iter()
                .filter_map(Node::scalar_text)
                .filter_map(|p| regex::Regex::new(&format!("^(?:{p})")).ok())
                .collect();
            entries.push((name.to_string(), patterns));
        }
        Waivers { entries }
    }

    /// Whether `check` is ignored for `operator`.
    pub fn ignores(&self, check: &str, operator: &str) -> bool {
        self.entries.iter().any(|(name, patterns)| {
            name == check && patterns.iter().any(|re| re.is_match(operator))
        })
    }
}
