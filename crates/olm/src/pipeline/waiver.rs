//! The repository's ignore lists: `config.yaml`'s `tests: [{name, ignore_operators: [regex]}]`,
//! which the pipelines turn into `tests/skip/<name>` labels. A pattern is matched at the start
//! of the operator name, as Python's `re.match` does.

use super::repo::{Repo, RepoError};
use crate::yaml::Node;

/// The ignore lists of one repository.
#[derive(Debug, Default)]
pub struct Waivers {
    entries: Vec<(String, Vec<regex::Regex>)>,
}

impl Waivers {
    /// Reads `config.yaml`'s `tests` list; a pattern that is not a regular expression the
    /// `regex` crate reads (Python's lookarounds, say) is refused at its line rather than left
    /// to never match.
    pub fn read(repo: &Repo) -> Result<Waivers, RepoError> {
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
            let mut patterns = Vec::new();
            for node in test
                .get("ignore_operators")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
            {
                let Some(p) = node.scalar_text() else {
                    continue;
                };
                let re = regex::Regex::new(&format!("^(?:{p})")).map_err(|e| RepoError::Config {
                    line: Some(node.line),
                    reason: format!("ignore_operators pattern {p:?} of {name} is not a regular expression olmpack reads: {e}"),
                })?;
                patterns.push(re);
            }
            entries.push((name.to_string(), patterns));
        }
        Ok(Waivers { entries })
    }

    /// Whether `check` is ignored for `operator`.
    pub fn ignores(&self, check: &str, operator: &str) -> bool {
        self.entries.iter().any(|(name, patterns)| {
            name == check && patterns.iter().any(|re| re.is_match(operator))
        })
    }
}
