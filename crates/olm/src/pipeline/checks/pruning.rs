//! Konflux's `fbc-target-index-pruning-check` (konflux-ci/konflux-operator-tasks,
//! `task/fbc-target-index-pruning-check/0.1`): a catalog fragment must keep every channel and
//! every channel entry the released target index already has for its packages, except in
//! channels whose names hold `dev-preview`, `pre-ga` or `candidate`. Users upgrade along the
//! released channels; a fragment that drops one strands them, and the hosted task only says so
//! after the build.
//!
//! The task renders `TARGET_INDEX:<ocp>` from the network; here the released catalogs are a
//! folder the user names (`--target-index DIR`, one FBC folder per OCP version as the
//! checkout's `catalogs/` has them, e.g. `opm render` output of the index), never a download.
//!
//! One difference on purpose: the task compares names with `grep -Fw` over a space-joined list
//! (`-w` treats `-` and `.` as word ends), so it takes a removed `stable` channel for kept while
//! a `stable-v2` channel stays (and reports each of its entries as pruned instead), and misses a
//! removed entry `op.v1.1` while `op.v1.1.0` stays. Here names compare whole, so the first is
//! reported as the channel it is and the second is reported at all.

use super::super::finding::Finding;
use super::super::repo::OperatorCatalog;
use crate::catalog::load::{self, LoadOptions};
use crate::catalog::model::{SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use crate::yaml::Node;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The check's id: the Konflux task's name.
pub const CHECK: &str = "fbc-target-index-pruning-check";

/// Whether pruning a channel of this name is allowed: the task's
/// `.*(dev-preview|pre-ga|candidate).*`, matched unanchored and case-sensitively by bash `=~`.
pub fn pruning_allowed(channel: &str) -> bool {
    ["dev-preview", "pre-ga", "candidate"]
        .iter()
        .any(|word| channel.contains(word))
}

/// The channels of one OCP version's target index: package -> channels in the index's order,
/// each with its entry names.
type IndexChannels = HashMap<String, Vec<(String, Vec<String>)>>;

/// One OCP version's target index as read, or why it could not be.
type IndexRead = Arc<Result<IndexChannels, String>>;

/// The released catalogs the fragments are compared with: one folder per OCP version, each
/// read once per run (a whole-repository run asks for the same version once per operator).
#[derive(Debug)]
pub struct TargetIndex {
    root: PathBuf,
    /// Packages to keep when reading (the checkout's package folders under `catalogs/<ocp>/`):
    /// a released index holds thousands of packages the fragments never name.
    keep: BTreeSet<String>,
    read: Mutex<HashMap<String, IndexRead>>,
}

impl TargetIndex {
    /// The target index rooted at `root`; `keep` are the package names fragments may hold.
    pub fn new(root: &Path, keep: BTreeSet<String>) -> Self {
        TargetIndex {
            root: root.to_path_buf(),
            keep,
            read: Mutex::new(HashMap::new()),
        }
    }

    fn channels(&self, ocp: &str) -> IndexRead {
        let mut read = match self.read.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        read.entry(ocp.to_string())
            .or_insert_with(|| Arc::new(self.load(ocp, &|p: &str| self.keep.contains(p), true)))
            .clone()
    }

    /// One package's released channels when the fragment names a package that is not one of
    /// the checkout's folder names (the shared read left it out); read for it alone, so a
    /// package named unlike its folder is still compared, not passed unchecked.
    fn channels_of(&self, ocp: &str, package: &str) -> Result<IndexChannels, String> {
        self.load(ocp, &|p: &str| p == package, false)
    }

    fn load(
        &self,
        ocp: &str,
        keep: &(dyn Fn(&str) -> bool + Sync),
        need_packages: bool,
    ) -> Result<IndexChannels, String> {
        let dir = self.root.join(ocp);
        if !dir.is_dir() {
            return Err(format!(
                "Unable to render the fragment target index: {} is not a folder",
                dir.display()
            ));
        }
        let loaded = load::load_dir_keeping(&dir, &LoadOptions::default(), keep)
            .map_err(|e| e.to_string())?;
        if let Some(d) = loaded
            .diagnostics
            .iter()
            .find(|d| d.severity == crate::findings::Severity::Error)
        {
            return Err(format!(
                "Unable to render the fragment target index {}: {}",
                dir.display(),
                d.message
            ));
        }
        if need_packages && loaded.config.packages.is_empty() && loaded.config.channels.is_empty() {
            return Err(format!(
                "No OLM packages detected in target index ({}).",
                dir.display()
            ));
        }
        let mut out: IndexChannels = HashMap::new();
        for c in loaded.config.channels {
            let entries = c
                .entries
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.name)
                .collect();
            out.entry(c.package).or_default().push((c.name, entries));
        }
        Ok(out)
    }
}

/// A channel of the fragment: its line and its entry names.
struct FragmentChannel<'a> {
    line: usize,
    entries: BTreeSet<&'a str>,
}

/// The check on each affected catalog (a fragment) against the target index of its OCP version.
pub fn catalogs(catalogs: &[OperatorCatalog], index: &TargetIndex, out: &mut Vec<Finding>) {
    for catalog in catalogs {
        let Ok(blobs) = &catalog.blobs else {
            continue; // reported once by the caller as an unreadable catalog
        };
        let schema = |b: &Node, s: &str| b.get("schema").and_then(Node::as_str) == Some(s);
        let text = |b: &Node, k: &str| b.get(k).and_then(Node::scalar_text).map(str::to_string);
        let mut fragment: HashMap<(String, String), FragmentChannel<'_>> = HashMap::new();
        let mut packages: Vec<String> = Vec::new();
        for blob in blobs.iter().filter(|b| schema(b, SCHEMA_CHANNEL)) {
            let (Some(package), Some(name)) = (text(blob, "package"), text(blob, "name")) else {
                continue;
            };
            let entries: Vec<&str> = blob
                .get("entries")
                .and_then(Node::as_seq)
                .unwrap_or(&[])
                .iter()
                .filter_map(|e| e.get("name").and_then(Node::scalar_text))
                .collect();
            if !packages.contains(&package) {
                packages.push(package.clone());
            }
            fragment
                .entry((package, name))
                .or_insert(FragmentChannel {
                    line: blob.line,
                    entries: BTreeSet::new(),
                })
                .entries
                .extend(entries);
        }
        if packages.is_empty() {
            out.push(
                Finding::error(CHECK, "No OLM packages detected in FBC fragment.")
                    .at(&catalog.file, None),
            );
            continue;
        }
        let read = index.channels(&catalog.ocp);
        let channels = match read.as_ref() {
            Ok(c) => c,
            Err(why) => {
                out.push(Finding::error(CHECK, why.clone()).at(&catalog.file, None));
                continue;
            }
        };
        for package in &packages {
            let alone;
            let channels = if index.keep.contains(package) {
                channels
            } else {
                alone = index.channels_of(&catalog.ocp, package);
                match &alone {
                    Ok(c) => c,
                    Err(why) => {
                        out.push(Finding::error(CHECK, why.clone()).at(&catalog.file, None));
                        continue;
                    }
                }
            };
            let Some(released) = channels.get(package) else {
                continue; // a package new to the index: nothing released to prune
            };
            let package_line = blobs
                .iter()
                .find(|b| schema(b, SCHEMA_PACKAGE) && text(b, "name").as_deref() == Some(package))
                .map(|b| b.line);
            for (channel, entries) in released {
                let allowed = pruning_allowed(channel);
                match fragment.get(&(package.clone(), channel.clone())) {
                    None if !allowed => out.push(
                        Finding::error(
                            CHECK,
                            format!("FBC fragment prunes entire {package}.{channel} channel."),
                        )
                        .at(&catalog.file, package_line),
                    ),
                    None => {}
                    Some(_) if allowed => {}
                    Some(kept) => {
                        for entry in entries {
                            if !kept.entries.contains(entry.as_str()) {
                                out.push(
                                    Finding::error(
                                        CHECK,
                                        format!(
                                            "FBC fragment prunes {entry} from {package}.{channel} channel."
                                        ),
                                    )
                                    .at(&catalog.file, Some(kept.line)),
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pruning_allowed;

    /// The task's `.*(dev-preview|pre-ga|candidate).*` under bash `=~`: anywhere in the name,
    /// case-sensitive.
    #[test]
    fn the_allowed_channels_are_the_tasks() {
        for yes in [
            "candidate",
            "candidate-v1.2",
            "stable-dev-preview",
            "pre-ga",
            "v2-pre-ga-x",
        ] {
            assert!(pruning_allowed(yes), "{yes}");
        }
        for no in [
            "stable",
            "fast",
            "Candidate",
            "preview",
            "dev",
            "pre_ga",
            "",
        ] {
            assert!(!pruning_allowed(no), "{no}");
        }
    }
}
