//! What a mirror target holds that a new plan no longer uses (`catalog mirror prune`).
//!
//! A mirror run leaves a record of what it put at the target: the results folder's
//! `report.json` (a `--to` run, `--from-archive` included) or an archive's `plan.json` (a
//! `--to-archive` run, whose images go to the target by the naming rules of `--to`). Given the
//! record of the previous run and of the new one, an image of the previous record whose
//! digest no image of the new record has in the same target repository is a candidate for
//! deletion ([`candidates`]). This module reads records and does that arithmetic without the
//! network; asking the registry what hangs off each candidate (index children, signatures,
//! referrers) and what the new plan's images use there is the action's
//! (`action::catalog_mirror::prune`).
//!
//! Conservative on purpose: an image of the new record counts whatever its status (a copy
//! that failed this time still wants its old digest kept), and a repository where the new
//! record has an image of unknown digest keeps everything ([`Held`]).

use super::naming::{Destination, NamingError};
use super::plan::{Kind, Plan};
use super::results::Report;
use crate::reference::Reference;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The largest record read: a plan of 100,000 images is about 50 MiB.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// Why a record cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The file or folder cannot be read.
    #[error("cannot read {}: {why}", path.display())]
    Read {
        /// What was given (or the file inside it).
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The file is not a mirror report or plan.
    #[error("{}: not a catalog mirror report.json or archive plan.json: {why}", path.display())]
    NotARecord {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The record is of a run to another target: its digests say nothing about this one.
    #[error("{}: the run it records mirrored to {recorded}, not to {given} (give the --to of that run)", path.display())]
    OtherTarget {
        /// The file.
        path: PathBuf,
        /// The target the record names.
        recorded: String,
        /// `--to`.
        given: String,
    },
    /// `--to` or `--max-components` cannot name a target.
    #[error(transparent)]
    Naming(#[from] NamingError),
}

/// One image a record puts at the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtTarget {
    /// Its repository below the registry (`mirror/org/app`).
    pub repository: String,
    /// Its tag there.
    pub tag: String,
    /// The digest at the target; `None` when the run could not resolve it.
    pub digest: Option<String>,
    /// Catalog, bundle, related or additional.
    pub kind: Kind,
    /// The image as the catalog names it.
    pub source: String,
    /// Whether the run finished copying it (an archive's plan lists only finished images).
    pub done: bool,
}

/// A record read: the registry it names and its images.
#[derive(Debug, Clone)]
pub struct Record {
    /// The file read.
    pub file: PathBuf,
    /// The images at the target, as the record says.
    pub images: Vec<AtTarget>,
}

/// Reads the record `given` names: a results folder (its `report.json`), an archive folder
/// (its `plan.json`), or either file; checked to be of a run to `to`.
pub fn read_record(
    given: &Path,
    to: &Destination,
    max_components: Option<usize>,
) -> Result<Record, RecordError> {
    let file = if given.is_dir() {
        let report = given.join("report.json");
        let plan = given.join(super::archive::PLAN_FILE);
        if report.is_file() {
            report
        } else if plan.is_file() {
            plan
        } else {
            return Err(RecordError::Read {
                path: given.to_path_buf(),
                why: "the folder holds neither report.json (a --results-dir) nor plan.json (a --to-archive folder)".into(),
            });
        }
    } else {
        given.to_path_buf()
    };
    let bytes = read_capped(&file)?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| RecordError::NotARecord {
            path: file.clone(),
            why: e.to_string(),
        })?;
    let not_a_record = |why: String| RecordError::NotARecord {
        path: file.clone(),
        why,
    };
    let images = if value.get("summary").is_some() || value.get("settings").is_some() {
        let report: Report =
            serde_json::from_value(value).map_err(|e| not_a_record(e.to_string()))?;
        from_report(&file, &report, to)?
    } else {
        let plan: Plan = serde_json::from_value(value).map_err(|e| not_a_record(e.to_string()))?;
        from_plan(&plan, to, max_components)?
    };
    Ok(Record { file, images })
}

fn read_capped(file: &Path) -> Result<Vec<u8>, RecordError> {
    let cannot = |e: std::io::Error| RecordError::Read {
        path: file.to_path_buf(),
        why: e.to_string(),
    };
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .map_err(cannot)?
        .take(MAX_RECORD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(RecordError::NotARecord {
            path: file.to_path_buf(),
            why: format!("larger than {MAX_RECORD_BYTES} bytes"),
        });
    }
    Ok(bytes)
}

/// A results report's images: each target parsed back (it must be below `to`).
fn from_report(
    file: &Path,
    report: &Report,
    to: &Destination,
) -> Result<Vec<AtTarget>, RecordError> {
    if Destination::parse(&report.target).ok().as_ref() != Some(to) {
        return Err(RecordError::OtherTarget {
            path: file.to_path_buf(),
            recorded: report.target.clone(),
            given: to.to_string(),
        });
    }
    let mut out = Vec::new();
    for image in &report.images {
        let reference = Reference::parse(&image.target).map_err(|e| RecordError::NotARecord {
            path: file.to_path_buf(),
            why: format!("target {:?}: {}", image.target, e.reason),
        })?;
        if reference.registry != to.registry {
            return Err(RecordError::OtherTarget {
                path: file.to_path_buf(),
                recorded: image.target.clone(),
                given: to.to_string(),
            });
        }
        out.push(AtTarget {
            repository: reference.repository.clone(),
            tag: reference.tag.clone().unwrap_or_else(|| "latest".into()),
            digest: image.digest.clone().or_else(|| image.source_digest.clone()),
            kind: image.kind,
            source: image.source.clone(),
            done: image.done(),
        });
    }
    Ok(out)
}

/// An archive plan's images, named at `to` as `--from-archive --to` names them.
fn from_plan(
    plan: &Plan,
    to: &Destination,
    max_components: Option<usize>,
) -> Result<Vec<AtTarget>, RecordError> {
    let mut out = Vec::new();
    for image in &plan.images {
        out.push(AtTarget {
            repository: to.repository(&image.repository, max_components)?,
            tag: image.tag.clone(),
            digest: image.digest.clone(),
            kind: image.kind,
            source: image.source.clone(),
            done: true,
        });
    }
    Ok(out)
}

/// One image of a record at a digest: its kind, source and tag.
pub type Use = (Kind, String, String);

/// A digest of the previous record that the new one does not use in its repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The repository below the registry.
    pub repository: String,
    /// The manifest's digest.
    pub digest: String,
    /// The previous record's images at that digest there (kind, source, tag).
    pub images: Vec<Use>,
}

/// A digest kept although the new record does not name it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    /// The repository below the registry.
    pub repository: String,
    /// The manifest's digest.
    pub digest: String,
    /// Why it stays.
    pub reason: String,
}

/// The previous record's finished images whose digest no image of `new` has in the same
/// repository, one candidate per repository and digest, in repository then digest order;
/// and those held back because the new record has an image of unknown digest in their
/// repository.
pub fn candidates(previous: &Record, new: &Record) -> (Vec<Candidate>, Vec<Held>) {
    let mut used: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut unknown: BTreeMap<&str, &str> = BTreeMap::new();
    for image in &new.images {
        match &image.digest {
            Some(d) => used.entry(&image.repository).or_default().push(d),
            None => {
                unknown.entry(&image.repository).or_insert(&image.source);
            }
        }
    }
    let mut grouped: BTreeMap<(String, String), Vec<Use>> = BTreeMap::new();
    for image in previous.images.iter().filter(|i| i.done) {
        let Some(digest) = &image.digest else {
            continue;
        };
        let in_use = used
            .get(image.repository.as_str())
            .is_some_and(|ds| ds.contains(&digest.as_str()));
        if in_use {
            continue;
        }
        let entry = grouped
            .entry((image.repository.clone(), digest.clone()))
            .or_default();
        let seen = (image.kind, image.source.clone(), image.tag.clone());
        if !entry.contains(&seen) {
            entry.push(seen);
        }
    }
    let mut out = Vec::new();
    let mut held = Vec::new();
    for ((repository, digest), images) in grouped {
        if let Some(source) = unknown.get(repository.as_str()) {
            held.push(Held {
                reason: format!(
                    "the new plan's {source} goes to this repository and its digest is unknown (it could not be resolved)"
                ),
                repository,
                digest,
            });
            continue;
        }
        out.push(Candidate {
            repository,
            digest,
            images,
        });
    }
    (out, held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(repo: &str, tag: &str, digest: Option<&str>, done: bool) -> AtTarget {
        AtTarget {
            repository: repo.into(),
            tag: tag.into(),
            digest: digest.map(String::from),
            kind: Kind::Related,
            source: format!("quay.io/{repo}:{tag}"),
            done,
        }
    }

    fn record(images: Vec<AtTarget>) -> Record {
        Record {
            file: PathBuf::from("r"),
            images,
        }
    }

    #[test]
    fn only_digests_the_new_plan_does_not_use_in_their_repository() {
        let previous = record(vec![
            at("m/a", "v1", Some("sha256:1"), true),
            at("m/a", "v2", Some("sha256:2"), true),
            at("m/b", "v1", Some("sha256:1"), true),
            at("m/c", "v1", Some("sha256:3"), false),
            at("m/d", "v1", Some("sha256:4"), true),
        ]);
        let new = record(vec![
            at("m/a", "v2", Some("sha256:2"), true),
            // The same digest in another repository does not keep m/b's.
            at("m/x", "v1", Some("sha256:1"), true),
            // A failed copy still counts: its old digest stays.
            at("m/d", "v1", Some("sha256:4"), false),
            at("m/e", "v1", None, false),
        ]);
        let (c, held) = candidates(&previous, &new);
        let got: Vec<(&str, &str)> = c
            .iter()
            .map(|c| (c.repository.as_str(), c.digest.as_str()))
            .collect();
        assert_eq!(got, [("m/a", "sha256:1"), ("m/b", "sha256:1")]);
        assert!(held.is_empty());
    }

    /// An archive's plan is named at `--to` as `--from-archive` names it (with
    /// `--max-components`); a report of a run to another target is refused, naming the file.
    #[test]
    fn records_are_read_from_a_plan_or_a_report_of_this_target() {
        let dir = tempfile::tempdir().unwrap();
        let plan = r#"{"source":"c","images":[{"kind":"related","source":"quay.io/a/b/c:v1","repository":"a/b/c","tag":"v1","by_tag":true,"digest":"sha256:1"}]}"#;
        std::fs::write(dir.path().join("plan.json"), plan).unwrap();
        let to = Destination::parse("m.local:5000/ns").unwrap();
        let r = read_record(dir.path(), &to, Some(3)).unwrap();
        assert_eq!(r.images[0].repository, "ns/a-b/c");
        assert_eq!(r.images[0].digest.as_deref(), Some("sha256:1"));
        let report = r#"{"source":"c","target":"other.local/ns","settings":{"signatures":true,"platforms":[]},"images":[],"summary":{"images":0,"copied":0,"present":0,"failed":0,"blobs_copied":0,"blobs_skipped":0,"bytes_copied":0,"seconds":0.0}}"#;
        std::fs::write(dir.path().join("report.json"), report).unwrap();
        let e = read_record(dir.path(), &to, None).unwrap_err().to_string();
        assert!(
            e.contains("report.json")
                && e.contains("mirrored to other.local/ns, not to m.local:5000/ns"),
            "{e}"
        );
    }

    #[test]
    fn an_unresolved_image_of_the_new_plan_holds_its_repository() {
        let previous = record(vec![at("m/a", "v1", Some("sha256:1"), true)]);
        let new = record(vec![at("m/a", "v2", None, false)]);
        let (c, held) = candidates(&previous, &new);
        assert!(c.is_empty());
        assert_eq!(held.len(), 1);
        assert!(held[0].reason.contains("unknown"), "{:?}", held[0]);
    }
}
