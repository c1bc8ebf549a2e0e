//! `bundle pin`: every image a bundle's CSV names resolved to a digest and rewritten in place
//! (containers, init containers, `RELATED_IMAGE_*` values, `spec.relatedImages`, the
//! `containerImage` annotation), and `spec.relatedImages` completed with every image, so a
//! disconnected cluster can mirror the bundle by its list and pull by digest.
//!
//! All or nothing: every reference is resolved first; one that cannot be is named with each
//! place tried and nothing is written. The CSV is edited as text at each image's position
//! ([`crate::bundle::pin`]); the result is parsed again and must name exactly the pinned images
//! before it replaces the file (atomically). A run on a pinned bundle changes nothing.

use crate::action::step::resolve_images::{self, Places};
use crate::bundle::pin::{self, Edit, EditError, ImageSite, NewRelatedImage, SiteKind};
use crate::bundle::{Bundle, LoadError};
use crate::fsio::{self, FsError};
use crate::mirror_config::resolve::ResolveError;
use crate::reference::Reference;
use crate::yaml;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use crate::action::step::resolve_images::Places as PinPlaces;
pub use crate::mirror_config::{MirrorConfig, MirrorConfigError};

/// One image of the bundle and what it became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedImage {
    /// As written.
    pub image: String,
    /// As rewritten (the same when it named a digest already).
    pub pinned: String,
    /// Where the digest was read (`None`: no place was asked).
    pub place: Option<String>,
    /// Whether that place is a mirror.
    pub mirror: bool,
    /// How many places of the CSV name it.
    pub sites: usize,
}

/// What `bundle pin` did.
#[derive(Debug, Clone)]
pub struct PinReport {
    /// The CSV file.
    pub csv: PathBuf,
    /// Every image, sorted.
    pub images: Vec<PinnedImage>,
    /// The entries added to `spec.relatedImages`.
    pub added: Vec<NewRelatedImage>,
    /// Whether the file changed.
    pub changed: bool,
}

/// An image that could not be pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// The image as written.
    pub image: String,
    /// Where the CSV names it (`file:line` and the kind of place).
    pub sites: Vec<String>,
    /// Why.
    pub reason: String,
}

/// Why `bundle pin` wrote nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// The folder cannot be read as a bundle.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// No single CSV.
    #[error("{dir}: {why}")]
    Csv {
        /// The bundle folder.
        dir: PathBuf,
        /// What was found instead.
        why: String,
    },
    /// A file could not be read or written.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// A mirror configuration is unusable.
    #[error(transparent)]
    MirrorConfig(#[from] MirrorConfigError),
    /// Some images could not be resolved.
    #[error("{} of {total} images could not be pinned; nothing was written", unresolved.len())]
    Unresolved {
        /// Each of them.
        unresolved: Vec<Unresolved>,
        /// How many images the CSV names.
        total: usize,
    },
    /// The text cannot be edited in place.
    #[error("{}:{}", file.display(), source)]
    Edit {
        /// The CSV file.
        file: PathBuf,
        /// Where and why.
        #[source]
        source: EditError,
    },
    /// The edited text does not read back as the pinned CSV (a bug; nothing was written).
    #[error("{}: the edited CSV does not read back as expected ({why}); nothing was written", file.display())]
    Verify {
        /// The CSV file.
        file: PathBuf,
        /// What differs.
        why: String,
    },
}

/// The pinned form of `image` (written as `written`): the name as written, without its tag,
/// with `@digest`.
fn pinned_text(written: &str, reference: &Reference, digest: &str) -> String {
    let name = match &reference.tag {
        Some(t) => written.strip_suffix(&format!(":{t}")).unwrap_or(written),
        None => written,
    };
    format!("{name}@{digest}")
}

fn site_label(file: &Path, s: &ImageSite) -> String {
    let who = if s.name.is_empty() {
        String::new()
    } else {
        format!(" {}", s.name)
    };
    format!("{}:{} ({}{who})", file.display(), s.line, s.kind.label())
}

/// Pins the bundle folder `dir` through `places`.
pub fn pin(dir: &Path, places: &Places) -> Result<PinReport, PinError> {
    let csv = read_csv(dir)?;
    let sites = pin::image_sites(&csv.root);
    let (mut images, pinned_of) = resolve_sites(places, &csv.file, &sites)?;
    let edits = edits_of(&sites, &pinned_of);
    let added = related_images_to_add(&sites, &pinned_of);
    images.sort_by(|a, b| a.image.cmp(&b.image));
    if edits.is_empty() && added.is_empty() {
        return Ok(PinReport {
            csv: csv.file,
            images,
            added,
            changed: false,
        });
    }
    let file = csv.file;
    let out =
        pin::rewrite(&csv.text, &csv.root, &edits, &added).map_err(|source| PinError::Edit {
            file: file.clone(),
            source,
        })?;
    verify(&out, csv.doc, &sites, &pinned_of, &added).map_err(|why| PinError::Verify {
        file: file.clone(),
        why,
    })?;
    fsio::write(&file, out.as_bytes(), fsio::Options::edit(0o644))?;
    Ok(PinReport {
        csv: file,
        images,
        added,
        changed: true,
    })
}

/// The bundle's one CSV as text, with the YAML tree of its document parsed from that text.
struct CsvText {
    /// The CSV file.
    file: PathBuf,
    /// Its text, as edited.
    text: String,
    /// Which document of the file is the CSV.
    doc: usize,
    /// That document, with positions in `text`.
    root: yaml::Node,
}

/// Reads the one CSV of the bundle folder `dir` (none or several is an error naming the folder).
fn read_csv(dir: &Path) -> Result<CsvText, PinError> {
    let bundle = Bundle::load(dir)?;
    let object = bundle.one_csv().map_err(|why| PinError::Csv {
        dir: dir.to_path_buf(),
        why,
    })?;
    let file = bundle.root.join(&object.file);
    let text = fsio::read_to_string(&file)?;
    // The positions are the text's own: parse it again rather than trust a cached tree.
    let docs = yaml::parse_stream(&text).map_err(|e| PinError::Edit {
        file: file.clone(),
        source: EditError {
            line: e.line,
            message: e.message,
        },
    })?;
    let root = docs
        .into_iter()
        .nth(object.doc)
        .map(|d| d.root)
        .ok_or_else(|| PinError::Csv {
            dir: dir.to_path_buf(),
            why: format!("{} changed while it was read", object.file),
        })?;
    Ok(CsvText {
        file,
        text,
        doc: object.doc,
        root,
    })
}

/// Resolves every distinct image the CSV's `sites` name: each image with where its digest was
/// read, and the pinned text of each image as written. All or nothing: one image that does not
/// parse or resolve makes the whole answer an error listing every such image.
fn resolve_sites(
    places: &Places,
    file: &Path,
    sites: &[ImageSite],
) -> Result<(Vec<PinnedImage>, BTreeMap<String, String>), PinError> {
    // Parse each distinct image; resolve those that parse.
    let mut parsed: BTreeMap<String, Result<Reference, String>> = BTreeMap::new();
    for s in sites {
        parsed.entry(s.image.clone()).or_insert_with(|| {
            Reference::parse(&s.image).map_err(|e| format!("not an image reference: {}", e.reason))
        });
    }
    let references: Vec<&Reference> = parsed.values().filter_map(|r| r.as_ref().ok()).collect();
    let resolved = resolve_images::resolve_all(places, references);

    let mut images = Vec::new();
    let mut unresolved = Vec::new();
    let mut pinned_of: BTreeMap<String, String> = BTreeMap::new();
    for (image, reference) in &parsed {
        let here: Vec<&ImageSite> = sites.iter().filter(|s| &s.image == image).collect();
        let fail = |reason: String| Unresolved {
            image: image.clone(),
            sites: here.iter().map(|s| site_label(file, s)).collect(),
            reason,
        };
        let reference = match reference {
            Ok(r) => r,
            Err(why) => {
                unresolved.push(fail(why.clone()));
                continue;
            }
        };
        match resolved.get(&reference.to_string()) {
            Some(Ok(got)) => {
                let pinned = match &reference.digest {
                    Some(_) => image.clone(),
                    None => pinned_text(image, reference, &got.digest),
                };
                pinned_of.insert(image.clone(), pinned.clone());
                images.push(PinnedImage {
                    image: image.clone(),
                    pinned,
                    place: Some(got.place.clone()),
                    mirror: got.mirror,
                    sites: here.len(),
                });
            }
            Some(Err(ResolveError::NotFound { attempts, .. })) => {
                let tried = attempts
                    .iter()
                    .map(|(p, w)| format!("{p}: {w}"))
                    .collect::<Vec<_>>();
                unresolved.push(fail(if tried.is_empty() {
                    "no place may be contacted for it (its source is blocked and no mirror serves this kind of reference)".to_string()
                } else {
                    format!("no place answered ({})", tried.join("; "))
                }));
            }
            Some(Err(e)) => unresolved.push(fail(e.to_string())),
            None => unresolved.push(fail("not resolved".to_string())),
        }
    }
    if !unresolved.is_empty() {
        return Err(PinError::Unresolved {
            unresolved,
            total: parsed.len(),
        });
    }
    Ok((images, pinned_of))
}

/// The text edits that pin each site whose image changes.
fn edits_of(sites: &[ImageSite], pinned_of: &BTreeMap<String, String>) -> Vec<Edit> {
    sites
        .iter()
        .filter_map(|s| {
            let new = pinned_of.get(&s.image)?;
            (new != &s.image).then(|| Edit {
                line: s.line,
                col: s.col,
                old: s.image.clone(),
                new: new.clone(),
            })
        })
        .collect()
}

/// The `spec.relatedImages` entries to add: every pinned image not listed yet, named after the
/// container or variable that uses it (the annotation last), each name made unique.
fn related_images_to_add(
    sites: &[ImageSite],
    pinned_of: &BTreeMap<String, String>,
) -> Vec<NewRelatedImage> {
    let listed: BTreeSet<&str> = sites
        .iter()
        .filter(|s| s.kind == SiteKind::RelatedImage)
        .filter_map(|s| pinned_of.get(&s.image).map(String::as_str))
        .collect();
    let mut names: BTreeSet<String> = sites
        .iter()
        .filter(|s| s.kind == SiteKind::RelatedImage)
        .map(|s| s.name.clone())
        .collect();
    let mut added: Vec<NewRelatedImage> = Vec::new();
    // Containers and their variables name an image better than the annotation does.
    let namers = sites
        .iter()
        .filter(|s| !matches!(s.kind, SiteKind::RelatedImage | SiteKind::Annotation))
        .chain(sites.iter().filter(|s| s.kind == SiteKind::Annotation));
    for s in namers {
        let Some(image) = pinned_of.get(&s.image) else {
            continue;
        };
        if listed.contains(image.as_str()) || added.iter().any(|a| &a.image == image) {
            continue;
        }
        let base = pin::suggested_name(s);
        let mut name = base.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        names.insert(name.clone());
        added.push(NewRelatedImage {
            name,
            image: image.clone(),
        });
    }
    added
}

/// The edited text, parsed again, names the pinned images at the same places and lists the
/// added entries.
fn verify(
    out: &str,
    doc: usize,
    before: &[ImageSite],
    pinned_of: &BTreeMap<String, String>,
    added: &[NewRelatedImage],
) -> Result<(), String> {
    let docs = yaml::parse_stream(out).map_err(|e| e.to_string())?;
    let root = docs
        .into_iter()
        .nth(doc)
        .map(|d| d.root)
        .ok_or("the document is gone")?;
    let after = pin::image_sites(&root);
    let want: Vec<(SiteKind, String, String)> = before
        .iter()
        .map(|s| {
            (
                s.kind,
                s.name.clone(),
                pinned_of.get(&s.image).cloned().unwrap_or_default(),
            )
        })
        .chain(
            added
                .iter()
                .map(|a| (SiteKind::RelatedImage, a.name.clone(), a.image.clone())),
        )
        .collect();
    let got: Vec<(SiteKind, String, String)> = after
        .iter()
        .map(|s| (s.kind, s.name.clone(), s.image.clone()))
        .collect();
    if want != got {
        let first = want
            .iter()
            .zip(&got)
            .find(|(w, g)| w != g)
            .map(|(w, g)| format!("expected {} {:?}, found {:?}", w.0.label(), w.2, g.2))
            .unwrap_or_else(|| {
                format!("{} image places expected, {} found", want.len(), got.len())
            });
        return Err(first);
    }
    Ok(())
}
