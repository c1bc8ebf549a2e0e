//! `catalog mirror prune`: the manifests at a mirror target that the new plan no longer uses,
//! listed (the default) or deleted (`--delete`).
//!
//! 1. The two records are read and compared without the network
//!    ([`crate::mirror::prune::candidates`]): the previous run's images whose digest no image
//!    of the new run has in the same repository.
//! 2. For each repository holding a candidate, the registry is asked what the new plan uses
//!    there: each new image's digest, the digest its tag points at now, their index children
//!    and what is attached to them. Nothing in that set is ever listed.
//! 3. For each candidate: whether the target still has it, its index children, and what is
//!    attached to it: cosign's `sha256-<hex>.sig`, `.att` and `.sbom` tags, the referrers
//!    fallback tag `sha256-<hex>` and the referrers it lists, and the referrers API's answer.
//!    A referrer is listed only when its own manifest names the candidate as its `subject`
//!    (a fallback index is only a tag: it may list anything).
//! 4. With `delete`, each is deleted by digest ([`crate::registry::Repository::manifest_delete`];
//!    the registry removes the tags pointing at it): what is attached first, then the image,
//!    then its children, so a run cut short leaves nothing unreachable that a re-run would not
//!    find again. A registry that refuses deletions (HTTP 405) stops the run at the first
//!    refusal.

use crate::image::parse::{parse_index, parse_manifest};
use crate::mirror::naming::{Destination, NamingError};
use crate::mirror::plan::Kind;
use crate::mirror::prune::{self, AtTarget, Held, RecordError};
use crate::reference::Reference;
use crate::registry::repository::{Deleted, Repository, RepositoryError, digest_tag};
use crate::registry::{RegistryError, Remote};
use crate::transport::{RegistryOptions, TransportError};
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// What `catalog mirror prune` is asked.
#[derive(Debug, Clone, Default)]
pub struct PruneOptions {
    /// Credentials and TLS for the target registry.
    pub target: RegistryOptions,
    /// `--max-components` of the runs (naming an archive plan's images at the target).
    pub max_components: Option<usize>,
    /// Delete (otherwise only list).
    pub delete: bool,
}

/// Why a prune could not be planned or carried out (a single deletion that fails is not an
/// error: it is in the outcome).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PruneError {
    /// A record cannot be read or is of another target.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// `--to` cannot name a target.
    #[error(transparent)]
    Naming(#[from] NamingError),
    /// The target registry cannot be reached with the options given.
    #[error("cannot open {repository}")]
    Open {
        /// `registry/repository`.
        repository: String,
        /// Why.
        source: TransportError,
    },
    /// The target registry failed a question the listing needs: nothing is listed from a
    /// half-known repository.
    #[error("cannot read {repository} at the target")]
    Read {
        /// `registry/repository`.
        repository: String,
        /// Why.
        source: RepositoryError,
    },
    /// The registry does not allow deletions at all: the run stopped at the first refusal.
    #[error("nothing more was deleted")]
    Unsupported {
        /// The refusal.
        source: RepositoryError,
    },
}

/// What a listed manifest is to the previous plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "what", rename_all = "lowercase")]
pub enum What {
    /// An image of the previous plan.
    Image {
        /// Catalog, bundle, related or additional.
        kind: Kind,
        /// As the catalog named it.
        sources: Vec<String>,
        /// Its tags at the target (gone with it).
        tags: Vec<String>,
    },
    /// A manifest an index of the previous plan lists.
    Child {
        /// The index.
        of: String,
        /// `os/arch[/variant]` when the index says.
        #[serde(skip_serializing_if = "Option::is_none")]
        platform: Option<String>,
    },
    /// A signature, attestation, SBOM or referrer attached to an image being removed.
    Attached {
        /// The image it is attached to.
        of: String,
        /// Its tag (cosign's `sha256-<hex>.sig`, or the referrers fallback index's
        /// `sha256-<hex>`); none for a referrer found by its subject.
        #[serde(skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
    },
}

/// How the deletion of one manifest went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Deleted.
    Deleted,
    /// Already gone when the deletion was asked.
    Absent,
    /// The registry refused or failed: why.
    Failed(String),
}

/// One manifest to remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deletion {
    /// Its digest.
    pub digest: String,
    /// What it is.
    #[serde(flatten)]
    pub what: What,
    /// With `--delete`: how it went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

/// One repository of the target.
#[derive(Debug, Clone, Serialize)]
pub struct RepositoryPrune {
    /// `registry/repository`.
    pub repository: String,
    /// What to remove, in the order it is removed.
    pub deletions: Vec<Deletion>,
    /// Candidates the target no longer has.
    pub gone: Vec<String>,
    /// Candidates kept, and why.
    pub held: Vec<Held>,
}

/// The outcome of `catalog mirror prune`.
#[derive(Debug, Clone, Serialize)]
pub struct PruneOutcome {
    /// The previous record read.
    pub previous: PathBuf,
    /// The new record read.
    pub plan: PathBuf,
    /// `--to`.
    pub target: String,
    /// Whether deletions were asked (`--delete`).
    pub deleted: bool,
    /// Every repository with something to remove, gone or held, in name order.
    pub repositories: Vec<RepositoryPrune>,
}

impl PruneOutcome {
    /// Manifests listed (or deleted).
    pub fn count(&self) -> usize {
        self.repositories.iter().map(|r| r.deletions.len()).sum()
    }

    /// Deletions that failed.
    pub fn failures(&self) -> usize {
        self.repositories
            .iter()
            .flat_map(|r| &r.deletions)
            .filter(|d| matches!(d.outcome, Some(Outcome::Failed(_))))
            .count()
    }
}

/// Lists (and with `opts.delete` deletes) what `previous` left at `to` that `plan` does not
/// use (see the module documentation).
pub fn run(
    previous: &Path,
    plan: &Path,
    to: &str,
    opts: &PruneOptions,
) -> Result<PruneOutcome, PruneError> {
    let dest = Destination::parse(to)?;
    let old = prune::read_record(previous, &dest, opts.max_components)?;
    let new = prune::read_record(plan, &dest, opts.max_components)?;
    let (candidates, held) = prune::candidates(&old, &new);
    let mut opts_target = opts.target.clone();
    opts_target.client.shared.get_or_insert_default();
    let mut repositories: Vec<RepositoryPrune> = Vec::new();
    let mut names: BTreeSet<&str> = candidates.iter().map(|c| c.repository.as_str()).collect();
    names.extend(held.iter().map(|h| h.repository.as_str()));
    for name in names {
        let full = format!("{}/{name}", dest.registry);
        let read_error = |source: RepositoryError| PruneError::Read {
            repository: full.clone(),
            source,
        };
        let repo = open(&dest, name, &opts_target)?;
        let mut entry = RepositoryPrune {
            repository: full.clone(),
            deletions: Vec::new(),
            gone: Vec::new(),
            held: held
                .iter()
                .filter(|h| h.repository == name)
                .cloned()
                .collect(),
        };
        let mine: Vec<_> = candidates.iter().filter(|c| c.repository == name).collect();
        if !mine.is_empty() {
            let tags = tags_of(&repo).map_err(read_error)?;
            let kept = kept(
                &repo,
                &tags,
                new.images.iter().filter(|i| i.repository == name),
            );
            let kept = kept.map_err(read_error)?;
            let mut listed: HashSet<String> = HashSet::new();
            for c in mine {
                if kept.contains(&c.digest) {
                    entry.held.push(Held {
                        repository: name.to_string(),
                        digest: c.digest.clone(),
                        reason: "a tag of the new plan points at it at the target".into(),
                    });
                    continue;
                }
                let found = examine(&repo, &tags, &c.digest, &kept).map_err(read_error)?;
                let mut push = |digest: String, what: What| {
                    if !kept.contains(&digest) && listed.insert(digest.clone()) {
                        entry.deletions.push(Deletion {
                            digest,
                            what,
                            outcome: None,
                        });
                    }
                };
                for (digest, tag) in found.attached {
                    push(
                        digest,
                        What::Attached {
                            of: c.digest.clone(),
                            tag,
                        },
                    );
                }
                if found.present {
                    let mut kinds: Vec<Kind> = c.images.iter().map(|i| i.0).collect();
                    kinds.sort();
                    push(
                        c.digest.clone(),
                        What::Image {
                            kind: kinds.first().copied().unwrap_or(Kind::Related),
                            sources: c.images.iter().map(|i| i.1.clone()).collect(),
                            tags: found.tags,
                        },
                    );
                } else {
                    entry.gone.push(c.digest.clone());
                }
                for (digest, platform) in found.children {
                    push(
                        digest,
                        What::Child {
                            of: c.digest.clone(),
                            platform,
                        },
                    );
                }
            }
        }
        if opts.delete {
            for d in &mut entry.deletions {
                d.outcome = Some(match repo.manifest_delete(&d.digest) {
                    Ok(Deleted::Removed) => Outcome::Deleted,
                    Ok(Deleted::Absent) => Outcome::Absent,
                    Err(e @ RepositoryError::Registry(RegistryError::DeleteUnsupported { .. })) => {
                        return Err(PruneError::Unsupported { source: e });
                    }
                    Err(e) => Outcome::Failed(crate::mirror::plan::reason_of(&e)),
                });
            }
        }
        repositories.push(entry);
    }
    Ok(PruneOutcome {
        previous: old.file,
        plan: new.file,
        target: dest.to_string(),
        deleted: opts.delete,
        repositories,
    })
}

fn open(dest: &Destination, name: &str, opts: &RegistryOptions) -> Result<Remote, PruneError> {
    let reference = Reference {
        registry: dest.registry.clone(),
        repository: name.to_string(),
        tag: None,
        digest: None,
    };
    opts.repository(&reference)
        .map_err(|source| PruneError::Open {
            repository: format!("{}/{name}", dest.registry),
            source,
        })
}

/// The repository's tags, each with the digest it points at for the tags that can name an
/// image (not cosign's or the referrers fallback's `sha256-…` tags, which are looked up by
/// name); none when the registry does not know the repository (404).
fn tags_of(repo: &Remote) -> Result<Tags, RepositoryError> {
    let names = match repo.tags() {
        Err(RepositoryError::Registry(e)) if e.status() == Some(404) => HashSet::new(),
        other => other?,
    };
    let mut images = Vec::new();
    for tag in &names {
        if tag.starts_with("sha256-") || tag.starts_with("sha512-") {
            continue;
        }
        // A registry that leaves Docker-Content-Digest out is asked for the manifest itself.
        let digest = match repo.manifest_head(tag)? {
            Some(head) if head.digest.is_some() => head.digest,
            Some(_) => repo.manifest_find(tag)?.map(|m| m.digest),
            None => None,
        };
        if let Some(d) = digest {
            images.push((tag.clone(), d));
        }
    }
    images.sort();
    Ok(Tags { names, images })
}

/// A repository's tags, read once.
#[derive(Debug, Default)]
struct Tags {
    /// Every tag.
    names: HashSet<String>,
    /// The image tags and the digest each points at.
    images: Vec<(String, String)>,
}

/// Every digest the new plan's images use in the repository: theirs, the one each tag points
/// at now, their index children and what is attached to them.
fn kept<'a>(
    repo: &Remote,
    tags: &Tags,
    images: impl Iterator<Item = &'a AtTarget>,
) -> Result<HashSet<String>, RepositoryError> {
    let mut roots: BTreeSet<String> = BTreeSet::new();
    for image in images {
        if let Some(d) = &image.digest {
            roots.insert(d.clone());
        }
        if let Some((_, d)) = tags.images.iter().find(|(t, _)| *t == image.tag) {
            roots.insert(d.clone());
        }
    }
    let mut kept: HashSet<String> = HashSet::new();
    for root in roots {
        let found = examine(repo, tags, &root, &HashSet::new())?;
        kept.extend(found.children.into_iter().map(|(d, _)| d));
        kept.extend(found.attached.into_iter().map(|(d, _)| d));
        kept.insert(root);
    }
    Ok(kept)
}

/// What the target holds of one manifest.
#[derive(Debug, Default)]
struct Found {
    /// The target has the manifest.
    present: bool,
    /// Its tags there.
    tags: Vec<String>,
    /// The manifests it lists when it is an index, with their platforms.
    children: Vec<(String, Option<String>)>,
    /// What is attached to it: digest, and the tag that names it (none for a referrer).
    attached: Vec<(String, Option<String>)>,
}

/// Asks the repository about `digest` (see [`Found`]); a referrer is taken only when its
/// manifest names `digest` as its subject, and never when `kept` holds it.
fn examine(
    repo: &Remote,
    tags: &Tags,
    digest: &str,
    kept: &HashSet<String>,
) -> Result<Found, RepositoryError> {
    let mut found = Found::default();
    if let Some(manifest) = repo.manifest_find(digest)? {
        found.present = true;
        if let Ok(Some(entries)) = parse_index(&manifest.bytes) {
            found.children = entries
                .into_iter()
                .map(|e| {
                    let platform = e.platform.map(|p| p.to_string());
                    (e.descriptor.digest, platform)
                })
                .collect();
        }
        found.tags = tags
            .images
            .iter()
            .filter(|(_, d)| d == digest)
            .map(|(t, _)| t.clone())
            .collect();
    }
    let base = digest_tag(digest);
    for suffix in crate::transport::attached::ATTACHED_TAG_SUFFIXES {
        let tag = format!("{base}.{suffix}");
        if tags.names.contains(&tag)
            && let Some(head) = repo.manifest_head(&tag)?
            && let Some(d) = head.digest
        {
            found.attached.push((d, Some(tag)));
        }
    }
    let mut referrers: Vec<String> = Vec::new();
    if tags.names.contains(&base)
        && let Some(index) = repo.manifest_find(&base)?
    {
        found
            .attached
            .push((index.digest.clone(), Some(base.clone())));
        if let Ok(Some(entries)) = parse_index(&index.bytes) {
            referrers.extend(entries.into_iter().map(|e| e.descriptor.digest));
        }
    }
    if let Some(entries) = repo.referrers(digest)? {
        referrers.extend(entries.into_iter().map(|e| e.descriptor.digest));
    }
    for r in referrers {
        if kept.contains(&r) || found.attached.iter().any(|(d, _)| *d == r) {
            continue;
        }
        let Some(manifest) = repo.manifest_find(&r)? else {
            continue;
        };
        let subject = parse_manifest(&manifest.bytes)
            .ok()
            .and_then(|m| m.subject)
            .map(|s| s.digest);
        if subject.as_deref() == Some(digest) {
            found.attached.push((r, None));
        }
    }
    Ok(found)
}
