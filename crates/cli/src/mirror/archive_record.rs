//! The `archive` record of a mirror plan (`plan.json`): what an archive carries and which
//! archives it follows. Data only, so the plan can hold it and the delta code can read it
//! without the two modules importing each other (see [`super::delta`] for what it means).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What one archive carries in its own layout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    /// The sha256 of that archive's `plan.json` (absent for the archive whose plan this is:
    /// a file cannot hold its own digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The source digests of the images it carries (its layout's `img-<hex>` names).
    #[serde(default)]
    pub images: BTreeSet<String>,
    /// Every blob (manifests, configs, layers, signatures) in its layout, with the repository
    /// path (below the target namespace) of an image that uses it: where a later delta finds
    /// it at the target to mount it.
    #[serde(default)]
    pub blobs: BTreeMap<String, String>,
}

/// The `archive` record of a plan: what this archive carries and which archives it follows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveRecord {
    /// The sha256 of the predecessor's `plan.json`; absent for a full archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
    /// The archives before this one, oldest (the full one) first; empty for a full archive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<Carried>,
    /// What this archive carries itself.
    #[serde(default)]
    pub carries: Carried,
}

impl ArchiveRecord {
    /// Whether this archive needs others applied first.
    pub fn is_delta(&self) -> bool {
        self.follows.is_some()
    }

    /// The archives before this one, each with its position (1-based) for messages.
    pub(crate) fn chain_blob(&self, digest: &str) -> Option<(usize, &Carried, &String)> {
        self.chain
            .iter()
            .enumerate()
            .find_map(|(i, c)| c.blobs.get(digest).map(|repo| (i, c, repo)))
    }

    pub(crate) fn chain_image(&self, source_digest: &str) -> Option<(usize, &Carried)> {
        self.chain
            .iter()
            .enumerate()
            .find(|(_, c)| c.images.contains(source_digest))
    }
}
