//! Delta archives: `--to-archive DIR --since PREVIOUS` writes only what the archives before it
//! lack, and `--from-archive DIR` applies it on top of them.
//!
//! Every archive's `plan.json` carries an `archive` record ([`ArchiveRecord`]): which images
//! and blobs the archive itself carries (each blob with the repository it lands in below the
//! target namespace), and, for a delta, the same for every archive before it, oldest first,
//! each named by the sha256 of its `plan.json` (an identity that survives moving or renaming
//! the folder; a path would not). So the plan of the last archive alone says what the whole
//! chain holds: `--since` accepts the plan file without its folder.
//!
//! Writing a delta: an image the chain carries (same source digest) is not copied at all; an
//! image new to the chain is copied whole into the layout, then every layer the chain already
//! holds is removed from it. Manifests and configs of a new image are kept even when the chain
//! holds them: opening an image for a copy reads them (a few KiB; the layers are the bytes).
//!
//! Applying a delta (`--from-archive`), before anything is pushed ([`check_apply`]): every
//! blob file the delta holds is checked against its digest; every blob a new image needs and
//! the delta lacks must be one the chain records, and must be at the target already, in the
//! repository the record names; every image the chain carries must be at the target under
//! its tag. The target's content is the proof that the earlier archives were applied, not a
//! record kept beside it: a record can say "applied" of a registry that was since emptied,
//! garbage-collected or pruned, while what the registry holds cannot lie about itself. A gap
//! (or a delta applied before its predecessor) is refused naming the first archive of the
//! chain whose content the target lacks, by its plan digest.

use super::plan::Plan;
use crate::fsio::untrusted;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use super::archive_record::{ArchiveRecord, Carried};

/// The largest `plan.json` read (a plan lists digests: tens of thousands of images and blobs
/// fit many times over).
pub const PLAN_CAP: u64 = 256 << 20;
/// The largest manifest or `index.json` read from a layout.
const MANIFEST_CAP: u64 = 4 << 20;
const INDEX_CAP: u64 = 64 << 20;
/// How deep indexes may nest (an index of indexes is legal; a loop is not).
const MAX_DEPTH: usize = 4;

/// Why a delta cannot be written or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaError {
    /// `--since` names something that is not an archive or a plan.
    #[error("--since {}: {reason}", path.display())]
    Since {
        /// As given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file of the archive cannot be read or is not what it should be.
    #[error("{}: {reason}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The delta needs something neither it nor the archives before it hold.
    #[error(
        "{}: {what} needs {digest}, which neither this archive nor the {chain} archive(s) before it hold (as its plan records them); nothing was pushed",
        dir.display()
    )]
    NotInChain {
        /// The archive.
        dir: PathBuf,
        /// The image (as the catalog names it).
        what: String,
        /// The digest missing.
        digest: String,
        /// How many archives precede it.
        chain: usize,
    },
    /// The target lacks what an earlier archive of the chain carries.
    #[error(
        "{}: the target lacks what archive {} of {} before it carries (its plan.json has digest {}): {} item(s), first {}; apply the archives in order ({}), then this one; nothing was pushed",
        .0.dir.display(), .0.position, .0.total, .0.plan, .0.missing, .0.first, .0.order
    )]
    Gap(Box<Gap>),
}

/// What [`DeltaError::Gap`] names (boxed: the error travels in every `Result` of the run).
#[derive(Debug)]
pub struct Gap {
    /// The archive being applied.
    pub dir: PathBuf,
    /// The first archive (1-based) whose content is missing.
    pub position: usize,
    /// How many archives precede this one.
    pub total: usize,
    /// Its plan digest.
    pub plan: String,
    /// How many images and blobs are missing.
    pub missing: usize,
    /// The first one (a target name or a blob digest).
    pub first: String,
    /// The plan digests of the chain in order.
    pub order: String,
}

/// The previous archive named by `--since`: its plan's digest and its record.
#[derive(Debug, Clone)]
pub struct Previous {
    /// sha256 of its `plan.json`.
    pub digest: String,
    /// Its record (read, or worked out from its layout for a plan written before records).
    pub record: ArchiveRecord,
}

impl Previous {
    /// The chain a delta after it records: the previous archive's chain, then itself.
    pub fn chain_after(&self) -> Vec<Carried> {
        let mut chain = self.record.chain.clone();
        chain.push(Carried {
            plan: Some(self.digest.clone()),
            ..self.record.carries.clone()
        });
        chain
    }

    /// Every blob the chain up to and including the previous archive holds.
    pub fn blobs(&self) -> BTreeSet<String> {
        self.record
            .chain
            .iter()
            .chain(std::iter::once(&self.record.carries))
            .flat_map(|c| c.blobs.keys().cloned())
            .collect()
    }

    /// Every image (source digest) the chain carries.
    pub fn images(&self) -> BTreeSet<String> {
        self.record
            .chain
            .iter()
            .chain(std::iter::once(&self.record.carries))
            .flat_map(|c| c.images.iter().cloned())
            .collect()
    }
}

/// Reads `--since PATH`: an archive folder or its `plan.json`. A plan without a record (an
/// archive written before delta archives) is worked out from its folder's layout; given as a
/// lone file it is refused (nothing says what its layout held).
pub fn read_previous(path: &Path) -> Result<Previous, DeltaError> {
    let since = |reason: String| DeltaError::Since {
        path: path.to_path_buf(),
        reason,
    };
    let (plan_path, dir) = if path.is_dir() {
        (path.join(super::archive::PLAN_FILE), Some(path))
    } else if path.is_file() {
        (path.to_path_buf(), None)
    } else {
        return Err(since(
            "no such archive folder or plan file (give the folder a --to-archive run wrote, or its plan.json)".into(),
        ));
    };
    let bytes = untrusted::read_limited(&plan_path, PLAN_CAP).map_err(|e| since(e.to_string()))?;
    let digest = crate::image::digest::sha256_digest(&bytes);
    let plan: Plan = serde_json::from_slice(&bytes).map_err(|e| {
        since(format!(
            "{} is not a mirror plan: {e} (line {})",
            plan_path.display(),
            e.line()
        ))
    })?;
    let record = match (plan.archive.clone(), dir) {
        (Some(r), _) => r,
        (None, Some(dir)) => ArchiveRecord {
            carries: walk(dir, &plan)?.carried(),
            ..ArchiveRecord::default()
        },
        (None, None) => {
            return Err(since(format!(
                "{} records no archive content (written by an older olmpack): give its archive folder instead",
                plan_path.display()
            )));
        }
    };
    Ok(Previous { digest, record })
}

/// What a blob is to the image that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A manifest or index.
    Manifest,
    /// An image configuration.
    Config,
    /// A layer of an image the plan names (the bytes a delta leaves out when the chain has them).
    Layer,
    /// A layer of something attached (signatures, attestations): kept whole.
    AttachedLayer,
}

/// One blob found by walking a layout.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its role.
    pub role: Role,
    /// The repository (below the target namespace) of an image that uses it.
    pub repository: String,
    /// Its size as the manifest declares it.
    pub size: u64,
    /// Whether the layout holds its file.
    pub present: bool,
    /// The image (as the catalog names it) that needs it, for messages.
    pub needed_by: String,
}

/// What a layout holds, walked from its `index.json`.
#[derive(Debug, Default)]
pub struct Walk {
    /// Source digests of the images it names (`img-<hex>`).
    pub images: BTreeSet<String>,
    /// Every blob reachable from `index.json`.
    pub blobs: BTreeMap<String, Found>,
}

impl Walk {
    /// The record of what the layout carries (blobs whose file is present).
    pub fn carried(&self) -> Carried {
        Carried {
            plan: None,
            images: self.images.clone(),
            blobs: self
                .blobs
                .iter()
                .filter(|(_, f)| f.present)
                .map(|(d, f)| (d.clone(), f.repository.clone()))
                .collect(),
        }
    }
}

/// Walks the archive `dir`'s layout: every entry of `index.json`, every manifest under it
/// (read capped and verified), every config and layer they name (whether its file is there;
/// not read). An `img-<hex>` entry's blobs belong to the repository of the plan's image of that
/// source digest; an attached artifact's (a `sha256-<hex>.sig` tag, a referrer) to the
/// repository of the image it is attached to.
pub fn walk(dir: &Path, plan: &Plan) -> Result<Walk, DeltaError> {
    let layout = super::archive::layout(dir);
    let index_path = layout.join("index.json");
    let damaged = |path: &Path, reason: String| DeltaError::Damaged {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = untrusted::read(&layout, Path::new("index.json"), INDEX_CAP)
        .map_err(|e| damaged(&index_path, e.to_string()))?;
    let index: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| damaged(&index_path, format!("not JSON: {e} (line {})", e.line())))?;
    let entries = index
        .get("manifests")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| damaged(&index_path, "no manifests list".into()))?;
    let by_digest: BTreeMap<&str, &super::plan::PlannedImage> = plan
        .images
        .iter()
        .filter_map(|i| i.digest.as_deref().map(|d| (d, i)))
        .collect();
    let mut out = Walk::default();
    let mut walker = Walker {
        layout: &layout,
        found: &mut out.blobs,
        owners: BTreeMap::new(),
    };
    let name_of = |e: &serde_json::Value| {
        e.pointer("/annotations/org.opencontainers.image.ref.name")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    let digest_of = |e: &serde_json::Value| -> Result<String, DeltaError> {
        e.get("digest")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| damaged(&index_path, "an entry without a digest".into()))
    };
    // The images first, so an attached artifact finds the repository of its subject.
    for entry in entries {
        let Some(hex) = name_of(entry).and_then(|n| n.strip_prefix("img-").map(str::to_string))
        else {
            continue;
        };
        let source = format!("sha256:{hex}");
        let (repository, needed_by) = by_digest
            .get(source.as_str())
            .map(|i| (i.repository.clone(), i.source.clone()))
            .unwrap_or_default();
        out.images.insert(source);
        walker.manifest(&digest_of(entry)?, &repository, &needed_by, true, 0)?;
    }
    for entry in entries {
        let name = name_of(entry);
        if name.as_deref().is_some_and(|n| n.starts_with("img-")) {
            continue;
        }
        let digest = digest_of(entry)?;
        // cosign's tags name their subject (`sha256-<hex>.sig`, the referrers fallback
        // `sha256-<hex>`); an untagged referrer names it in its `subject`.
        let subject = match name.as_deref().and_then(|n| n.strip_prefix("sha256-")) {
            Some(rest) => Some(format!(
                "sha256:{}",
                rest.split('.').next().unwrap_or_default()
            )),
            None => walker.subject_of(&digest)?,
        };
        let repository = subject
            .and_then(|s| walker.owners.get(&s).cloned())
            .unwrap_or_default();
        walker.manifest(&digest, &repository, &digest, false, 0)?;
    }
    Ok(out)
}

struct Walker<'a> {
    layout: &'a Path,
    found: &'a mut BTreeMap<String, Found>,
    /// Manifest digest to the repository of the image it belongs to.
    owners: BTreeMap<String, String>,
}

impl Walker<'_> {
    fn rel(digest: &str) -> Result<PathBuf, String> {
        crate::transport::layout::blob_path(Path::new(""), digest)
            .ok_or_else(|| format!("{digest} is not a digest"))
    }

    fn present(&self, digest: &str) -> bool {
        Self::rel(digest).is_ok_and(|rel| untrusted::open(self.layout, &rel).is_ok())
    }

    fn read(&self, digest: &str) -> Result<Vec<u8>, DeltaError> {
        let damaged = |reason: String| DeltaError::Damaged {
            path: self.layout.join("blobs"),
            reason,
        };
        let rel = Self::rel(digest).map_err(damaged)?;
        let bytes =
            untrusted::read(self.layout, &rel, MANIFEST_CAP).map_err(|e| DeltaError::Damaged {
                path: self.layout.join(&rel),
                reason: e.to_string(),
            })?;
        let actual = crate::image::digest::digest_as(digest, &bytes);
        if actual.as_deref() != Some(digest) {
            return Err(DeltaError::Damaged {
                path: self.layout.join(&rel),
                reason: format!(
                    "holds {} instead of {digest} (the archive was altered)",
                    actual.unwrap_or_else(|| "an unsupported digest".into())
                ),
            });
        }
        Ok(bytes)
    }

    fn subject_of(&self, digest: &str) -> Result<Option<String>, DeltaError> {
        let bytes = self.read(digest)?;
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        Ok(v.pointer("/subject/digest")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string))
    }

    fn add(&mut self, digest: &str, role: Role, size: u64, repository: &str, needed_by: &str) {
        let present = self.present(digest);
        self.found.entry(digest.to_string()).or_insert(Found {
            role,
            repository: repository.to_string(),
            size,
            present,
            needed_by: needed_by.to_string(),
        });
    }

    fn manifest(
        &mut self,
        digest: &str,
        repository: &str,
        needed_by: &str,
        image: bool,
        depth: usize,
    ) -> Result<(), DeltaError> {
        if depth > MAX_DEPTH {
            return Err(DeltaError::Damaged {
                path: self.layout.join("index.json"),
                reason: format!("indexes nest deeper than {MAX_DEPTH} levels under {digest}"),
            });
        }
        let bytes = self.read(digest)?;
        self.owners
            .entry(digest.to_string())
            .or_insert_with(|| repository.to_string());
        self.add(
            digest,
            Role::Manifest,
            bytes.len() as u64,
            repository,
            needed_by,
        );
        let v: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| DeltaError::Damaged {
                path: self.layout.join("blobs").join(digest.replace(':', "/")),
                reason: format!("not a manifest: {e}"),
            })?;
        let descriptors = |key: &str| -> Vec<(String, u64)> {
            v.get(key)
                .and_then(serde_json::Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|d| {
                            Some((
                                d.get("digest")?.as_str()?.to_string(),
                                d.get("size").and_then(serde_json::Value::as_u64)?,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        for (child, _) in descriptors("manifests") {
            self.manifest(&child, repository, needed_by, image, depth + 1)?;
        }
        if let Some(config) = v.get("config")
            && let (Some(d), Some(size)) = (
                config.get("digest").and_then(serde_json::Value::as_str),
                config.get("size").and_then(serde_json::Value::as_u64),
            )
        {
            self.add(d, Role::Config, size, repository, needed_by);
        }
        let role = if image {
            Role::Layer
        } else {
            Role::AttachedLayer
        };
        for (layer, size) in descriptors("layers") {
            self.add(&layer, role, size, repository, needed_by);
        }
        Ok(())
    }
}

/// After a `--since` run: removes from the layout every image layer the chain already holds,
/// and returns the record of what the archive now carries.
pub fn prune(dir: &Path, plan: &Plan, previous: &Previous) -> Result<ArchiveRecord, DeltaError> {
    let held = previous.blobs();
    let mut walked = walk(dir, plan)?;
    let layout = super::archive::layout(dir);
    for (digest, found) in walked.blobs.iter_mut() {
        if found.role != Role::Layer || !found.present || !held.contains(digest) {
            continue;
        }
        let Some(path) = crate::transport::layout::blob_path(&layout, digest) else {
            continue;
        };
        match std::fs::remove_file(&path) {
            Ok(()) => found.present = false,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => found.present = false,
            Err(e) => {
                return Err(DeltaError::Damaged {
                    path,
                    reason: format!("cannot remove: {e}"),
                });
            }
        }
    }
    Ok(ArchiveRecord {
        follows: Some(previous.digest.clone()),
        chain: previous.chain_after(),
        carries: walked.carried(),
    })
}

/// The record of a full archive (no `--since`).
pub fn full_record(dir: &Path, plan: &Plan) -> Result<ArchiveRecord, DeltaError> {
    Ok(ArchiveRecord {
        carries: walk(dir, plan)?.carried(),
        ..ArchiveRecord::default()
    })
}

/// What the target must already hold for a delta to be applied, found by [`check_apply`].
#[derive(Debug, Default)]
pub struct Assumed {
    /// Images the chain carries, by source digest, with the digest the target holds under
    /// their tags: not pushed again.
    pub images: BTreeMap<String, String>,
    /// Blobs new images need from the chain: digest to the repository (below the target
    /// namespace) that holds it at the target, to mount from.
    pub blobs: BTreeMap<String, String>,
}

/// How [`check_apply`] asks the target what it holds.
pub trait TargetProbe: Sync {
    /// The digest the target holds under `image`'s tag (a planned image), if any.
    fn image_digest(&self, image: &super::plan::PlannedImage) -> Option<String>;
    /// Whether the target's repository for `repository` holds `digest`; the target name of the
    /// repository for messages.
    fn has_blob(&self, repository: &str, digest: &str) -> (bool, String);
    /// The target name of `image`, for messages.
    fn name(&self, image: &super::plan::PlannedImage) -> String;
}

/// Checks a delta before anything is pushed (see the module documentation): its own blob
/// files against their digests, every blob and image it needs against its chain, and the
/// target for what the chain carries. Returns what the target holds already.
pub fn check_apply(
    dir: &Path,
    plan: &Plan,
    record: &ArchiveRecord,
    probe: &dyn TargetProbe,
    jobs: usize,
) -> Result<Assumed, DeltaError> {
    let walked = walk(dir, plan)?;
    let layout = super::archive::layout(dir);
    // 1. Every blob file the delta holds is what its name says (manifests were read and
    //    checked by the walk; configs and layers are hashed here, streamed).
    let files: Vec<(&String, &Found)> = walked
        .blobs
        .iter()
        .filter(|(_, f)| f.present && f.role != Role::Manifest)
        .collect();
    let checked = crate::parallel::map_indexed(files.len(), jobs.max(1), None, |i| {
        verify_file(&layout, files[i].0, files[i].1.size)
    });
    for r in checked {
        r?;
    }
    // 2. What is missing from the delta must be in its chain.
    let mut assumed = Assumed::default();
    let chain = record.chain.len();
    // (position in the chain, target name or digest) of what the target must hold.
    let mut wanted: Vec<(usize, Want)> = Vec::new();
    for (digest, found) in walked.blobs.iter().filter(|(_, f)| !f.present) {
        let Some((position, _, repository)) = record.chain_blob(digest) else {
            return Err(DeltaError::NotInChain {
                dir: dir.to_path_buf(),
                what: found.needed_by.clone(),
                digest: digest.clone(),
                chain,
            });
        };
        assumed.blobs.insert(digest.clone(), repository.clone());
        wanted.push((position, Want::Blob(repository.clone(), digest.clone())));
    }
    for image in &plan.images {
        let Some(digest) = &image.digest else {
            continue;
        };
        if walked.images.contains(digest) {
            continue;
        }
        let Some((position, _)) = record.chain_image(digest) else {
            return Err(DeltaError::NotInChain {
                dir: dir.to_path_buf(),
                what: image.source.clone(),
                digest: digest.clone(),
                chain,
            });
        };
        wanted.push((position, Want::Image(image)));
    }
    // 3. The target holds what the chain carries.
    // An image narrowed by --platform is at the target under the digest of its rewritten
    // index, which the chain records among its blobs.
    let answers =
        crate::parallel::map_indexed(wanted.len(), jobs.max(1), None, |i| match &wanted[i].1 {
            Want::Blob(repository, digest) => {
                let (ok, name) = probe.has_blob(repository, digest);
                (ok.then(String::new), format!("blob {digest} in {name}"))
            }
            Want::Image(image) => {
                let at = probe
                    .image_digest(image)
                    .filter(|d| image.digest.as_ref() == Some(d) || record.chain_blob(d).is_some());
                (at, probe.name(image))
            }
        });
    let mut missing: Vec<(usize, String)> = Vec::new();
    for ((position, want), (at, name)) in wanted.iter().zip(answers) {
        match (want, at) {
            (_, None) => missing.push((*position, name)),
            (Want::Image(image), Some(at)) => {
                if let Some(d) = &image.digest {
                    assumed.images.insert(d.clone(), at);
                }
            }
            (Want::Blob(..), Some(_)) => {}
        }
    }
    missing.sort();
    if let Some((position, first)) = missing.first() {
        let plan_digest = record.chain[*position]
            .plan
            .clone()
            .unwrap_or_else(|| "unknown".into());
        return Err(DeltaError::Gap(Box::new(Gap {
            dir: dir.to_path_buf(),
            position: position + 1,
            total: chain,
            plan: plan_digest,
            missing: missing.iter().filter(|(p, _)| p == position).count(),
            first: first.clone(),
            order: record
                .chain
                .iter()
                .map(|c| c.plan.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(", "),
        })));
    }
    Ok(assumed)
}

enum Want<'a> {
    Blob(String, String),
    Image(&'a super::plan::PlannedImage),
}

/// Hashes the blob file `digest` of `layout` (opened beneath it, no link out) and checks its
/// size and digest.
fn verify_file(layout: &Path, digest: &str, size: u64) -> Result<(), DeltaError> {
    let Some(rel) = crate::transport::layout::blob_path(Path::new(""), digest) else {
        return Err(DeltaError::Damaged {
            path: layout.to_path_buf(),
            reason: format!("{digest} is not a digest"),
        });
    };
    let path = layout.join(&rel);
    let damaged = |reason: String| DeltaError::Damaged {
        path: path.clone(),
        reason,
    };
    let mut file = untrusted::open(layout, &rel).map_err(|e| damaged(e.to_string()))?;
    let algorithm = crate::image::digest::Algorithm::of(digest)
        .ok_or_else(|| damaged(format!("unsupported digest {digest}")))?;
    let mut hashing =
        crate::image::digest::HashingWriter::with_algorithm(std::io::sink(), algorithm);
    std::io::copy(&mut std::io::Read::take(&mut file, size + 1), &mut hashing)
        .map_err(|e| damaged(e.to_string()))?;
    let (_, actual, len) = hashing.finish();
    if len != size || actual != digest {
        return Err(damaged(format!(
            "holds {len} bytes with digest {actual}; the manifest says {size} bytes with {digest} (the archive was altered)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_after_a_delta_ends_with_it() {
        let prev = Previous {
            digest: "sha256:bb".into(),
            record: ArchiveRecord {
                follows: Some("sha256:aa".into()),
                chain: vec![Carried {
                    plan: Some("sha256:aa".into()),
                    images: ["sha256:1".to_string()].into(),
                    blobs: [("sha256:x".to_string(), "r".to_string())].into(),
                }],
                carries: Carried {
                    plan: None,
                    images: ["sha256:2".to_string()].into(),
                    blobs: [("sha256:y".to_string(), "s".to_string())].into(),
                },
            },
        };
        let chain = prev.chain_after();
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[1].plan.as_deref(), Some("sha256:bb"));
        assert_eq!(prev.blobs().len(), 2);
        assert_eq!(prev.images().len(), 2);
    }
}
