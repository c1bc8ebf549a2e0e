//! `bundle republish`: a published bundle fixed without a new operator version, in one step.
//! The CSV's `spec.release` is bumped (or set), the CSV renamed `<package>-v<version>-<release>`,
//! the bundle built and pushed (and signed) as `bundle build` does, and the substitution
//! `{name: <pushed image by digest>, base: <old name>}` added to the catalog's
//! `olm.template.substitutes` template, so the next `catalog template` puts the new bundle in
//! the old one's place in every channel (opm v1.62+'s semantics).
//!
//! All or nothing on the user's files: the edited CSV goes into a copy of the bundle's folders
//! that is validated and built; the new substitution is checked (reuse, cycles) and the edited
//! template rendered in full, the new bundle read from the copy, all before the push; both
//! edits are staged beside their files and renamed into place only after the push (and the
//! signing) succeeded. On any error the folder and the template are as they were.

use super::bundle_source::{SourceOptions, render_source};
use super::step::bundle_build::{self as bundle_step, BundleStepError};
use super::step::deliver::{self, Pushed};
use super::step::sign::{SignOptions, SignPushedError, Written, sign_all};
use crate::bundle::pin::EditError;
use crate::bundle::release::{self, NextRelease, ReleaseError};
use crate::bundle::{Bundle, LoadError};
use crate::catalog::OpmCompat;
use crate::catalog::model::Bundle as CatalogBundle;
use crate::catalog::render::MigrateLevel;
use crate::catalog::template::substitutes_add::{self, AddError, Addition};
use crate::catalog::template::{
    BundleRenderError, BundleRenderer, TemplateOptions, render_all, render_template_checked,
};
use crate::findings::Report;
use crate::fsio::{self, FsError};
use crate::image::build::BuildWarning;
use crate::image::walk::{EntryKind, Walker};
use crate::image::{BuildError, BuildOptions};
use crate::location::Location;
use crate::reference::{InvalidReference, Reference};
use crate::transport::RegistryOptions;
use crate::transport::sink::{Delivery, DeliveryError};
use crate::yaml;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::bundle::release::NextRelease as Release;

/// A whole `bundle republish` run.
#[derive(Debug, Clone)]
pub struct RepublishRun {
    /// The bundle folder (its CSV is edited).
    pub dir: PathBuf,
    /// The registry reference to push to; without a tag, `v<version>-<release>`.
    pub to: String,
    /// The `olm.template.substitutes` template to add the substitution to.
    pub template: Option<PathBuf>,
    /// How the release is chosen.
    pub release: NextRelease,
    /// Media types, platform, labels, layering, timestamps (as `bundle build`).
    pub options: BuildOptions,
    /// How to reach the registry pushed to, and the ones the template's substitutes are in.
    pub registry: RegistryOptions,
    /// Sign the pushed reference at the digest pushed.
    pub sign: Option<Arc<SignOptions>>,
}

/// What the run is about to do, given before anything is built.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The CSV file.
    pub csv: PathBuf,
    /// `metadata.name` now.
    pub old_name: String,
    /// `spec.release` now (empty when none).
    pub old_release: String,
    /// The new `metadata.name`.
    pub name: String,
    /// The new `spec.release`.
    pub release: String,
    /// Where the image goes (`REGISTRY/REPO:TAG`).
    pub to: String,
}

/// What a run reports while it goes.
#[derive(Debug)]
pub enum RepublishEvent<'a> {
    /// The new release and name.
    Planned(&'a Plan),
    /// The validation report of the edited bundle, when it has findings.
    Findings(&'a Report),
    /// Something the build left out that the user may care about.
    Warning(&'a BuildWarning),
    /// The image was pushed (`REF:TAG@sha256:…`).
    Pushed(&'a str),
    /// The pushed reference was signed.
    Signed(&'a Pushed, &'a Written),
}

/// What was done.
#[derive(Debug, Clone)]
pub struct Republished {
    /// The plan carried out.
    pub plan: Plan,
    /// The manifest digest pushed.
    pub digest: String,
    /// The substitution added (`name`, `base`) and the template it went to.
    pub substitution: Option<(String, String, PathBuf)>,
}

/// How a run ended when nothing failed.
#[derive(Debug)]
pub enum RepublishOutcome {
    /// The edited bundle has validation errors (given as [`RepublishEvent::Findings`]): nothing
    /// was pushed or written.
    Invalid,
    /// Pushed, and the CSV (and template) written.
    Done(Box<Republished>),
}

/// Why a run stopped; in every case the user's files are unchanged (the one exception is
/// [`RepublishError::Commit`], which says what was written).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RepublishError {
    /// The folder cannot be read as a bundle.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// No single CSV, or no package.
    #[error("{}: {why}", dir.display())]
    Bundle {
        /// The bundle folder.
        dir: PathBuf,
        /// What is missing.
        why: String,
    },
    /// `--to` is not a registry reference to push to.
    #[error("--to {value}: {why}")]
    To {
        /// As given.
        value: String,
        /// Why.
        why: String,
    },
    /// The release or name asked for is refused.
    #[error("{}{}: {}", file.display(), line_suffix(error.line), error.message)]
    Release {
        /// The CSV file.
        file: PathBuf,
        /// The rule broken, at its line.
        error: ReleaseError,
    },
    /// The CSV's text cannot be edited in place.
    #[error("{}{}: {}", file.display(), line_suffix(error.line), error.message)]
    Edit {
        /// The file.
        file: PathBuf,
        /// Where and why.
        error: EditError,
    },
    /// The substitution cannot be added to the template.
    #[error("{}{}: {}", file.display(), line_suffix(error.line), error.message)]
    Template {
        /// The template file.
        file: PathBuf,
        /// Where and why.
        error: AddError,
    },
    /// The edited template does not render (opm's message, with the file and line).
    #[error("{message}; nothing was pushed or written")]
    Render {
        /// What the renderer said.
        message: String,
    },
    /// A file could not be read, copied or written.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The bundle's folders could not be copied for the build.
    #[error("cannot stage {}", dir.display())]
    Stage {
        /// The bundle folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: BuildError,
    },
    /// The bundle could not be built.
    #[error(transparent)]
    Build(#[from] BundleStepError),
    /// The image could not be pushed.
    #[error("the push failed; nothing was written")]
    Deliver {
        /// Why.
        #[source]
        source: DeliveryError,
    },
    /// The image was pushed but could not be signed.
    #[error("the CSV and template were not written")]
    Sign {
        /// Why.
        #[source]
        source: SignPushedError,
    },
    /// The image was pushed but a staged file could not be put in place.
    #[error("pushed {pushed}, but {written}")]
    Commit {
        /// The pushed reference.
        pushed: String,
        /// What was and was not written.
        written: String,
    },
}

fn line_suffix(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

/// The CSV of `bundle`: its file (relative to the bundle's root) and its document index.
fn the_csv(bundle: &Bundle, dir: &Path) -> Result<(PathBuf, usize), RepublishError> {
    let object = bundle.one_csv().map_err(|why| RepublishError::Bundle {
        dir: dir.to_path_buf(),
        why,
    })?;
    Ok((PathBuf::from(&object.file), object.doc))
}

fn parse_doc(text: &str, doc: usize, file: &Path) -> Result<yaml::Node, RepublishError> {
    let docs = yaml::parse_stream(text).map_err(|e| RepublishError::Edit {
        file: file.to_path_buf(),
        error: EditError {
            line: e.line,
            message: e.message,
        },
    })?;
    docs.into_iter()
        .nth(doc)
        .map(|d| d.root)
        .ok_or_else(|| RepublishError::Edit {
            file: file.to_path_buf(),
            error: EditError {
                line: 0,
                message: "the CSV document changed while it was read".into(),
            },
        })
}

/// Copies the folders a bundle image holds (manifests, metadata, tests/scorecard) into `into`,
/// by the build's own walk: links are followed inside the bundle and refused out of it.
fn stage_copy(bundle: &Bundle, into: &Path) -> Result<(), RepublishError> {
    let stage = |source: BuildError| RepublishError::Stage {
        dir: bundle.root.clone(),
        source,
    };
    let mut walker = Walker::new(&bundle.root).map_err(stage)?;
    let mut folders = vec![bundle.manifests_path(), bundle.metadata_path()];
    let scorecard = bundle.root.join("tests/scorecard");
    if scorecard.is_dir() {
        folders.push(scorecard);
    }
    for dir in folders {
        let Ok(rel) = dir.strip_prefix(&bundle.root) else {
            continue;
        };
        let mut entries = Vec::new();
        walker
            .add_folder(&dir, &rel.to_string_lossy(), &mut entries)
            .map_err(stage)?;
        for entry in entries {
            let target = into.join(OsStr::from_bytes(&entry.name));
            match entry.kind {
                EntryKind::Dir => fsio::create_dir_all(&target)?,
                EntryKind::File { source, .. } => {
                    std::fs::copy(&source, &target).map_err(fsio::at("copy", &source))?;
                }
            }
        }
    }
    Ok(())
}

/// The CSV edit `bundle republish` makes: which file, the release before and after, and the
/// edited text (checked to read back as planned).
struct CsvEdit {
    rel: PathBuf,
    csv_path: PathBuf,
    current: release::Current,
    planned: release::Planned,
    edited: String,
}

/// Reads the bundle's one CSV, plans the next release and name, and edits the text, refusing
/// an edit that does not read back as the plan.
fn edit_csv(bundle: &Bundle, run: &RepublishRun, package: &str) -> Result<CsvEdit, RepublishError> {
    let (rel, doc) = the_csv(bundle, &run.dir)?;
    let csv_path = bundle.root.join(&rel);
    let text = fsio::read_to_string(&csv_path)?;
    let root = parse_doc(&text, doc, &csv_path)?;
    let release_error = |error: ReleaseError| RepublishError::Release {
        file: csv_path.clone(),
        error,
    };
    let current = release::current(&root).map_err(release_error)?;
    let planned = release::plan(&current, package, &run.release).map_err(release_error)?;
    let edited =
        release::rewrite(&text, &root, &planned).map_err(|error| RepublishError::Edit {
            file: csv_path.clone(),
            error,
        })?;
    // The edit reads back as the plan, or nothing goes further.
    let again = release::current(&parse_doc(&edited, doc, &csv_path)?).map_err(release_error)?;
    if again.name != planned.name
        || again.release != planned.release
        || again.version != current.version
    {
        return Err(RepublishError::Edit {
            file: csv_path.clone(),
            error: EditError {
                line: 0,
                message:
                    "the edited CSV does not read back as planned (a bug; nothing was written)"
                        .into(),
            },
        });
    }
    Ok(CsvEdit {
        rel,
        csv_path,
        current,
        planned,
        edited,
    })
}

/// The substitution of the republished bundle (`pullspec`, named `new_name`) for `old_name`,
/// checked against the template's chain, appended, and the whole template rendered as it will
/// be; the template staged beside itself.
fn substitute(
    run: &RepublishRun,
    (path, text, facts): (&PathBuf, &String, &substitutes_add::TemplateFacts),
    pullspec: &str,
    copy: &Path,
    old_name: &str,
    new_name: &str,
) -> Result<(fsio::Staged, (String, String, PathBuf)), RepublishError> {
    let source = SourceOptions {
        migrate: MigrateLevel::None,
        compat: OpmCompat::NEWEST,
        registry: run.registry.clone(),
    };
    let renderer = |image: &str| -> Result<Vec<CatalogBundle>, BundleRenderError> {
        let location = if image == pullspec {
            Location::path(copy.to_path_buf())
        } else {
            Location::template_bundle(image)
        }
        .map_err(BundleRenderError::new)?;
        render_source(&location, image, &source).map(|b| vec![b.bundle])
    };
    let names: Vec<String> = facts.substitutions.iter().map(|s| s.name.clone()).collect();
    // Each substitute's bundle name, to follow chains; one that cannot be read is named.
    let mut bundle_of: BTreeMap<String, String> = BTreeMap::new();
    for ((name, rendered), s) in names
        .iter()
        .zip(render_all(&names, &renderer, crate::parallel::cores()))
        .zip(&facts.substitutions)
    {
        match rendered.map(|b| b.into_iter().next()) {
            Ok(Some(b)) => {
                bundle_of.insert(name.clone(), b.name);
            }
            Ok(None) => {}
            Err(e) => {
                return Err(RepublishError::Render {
                    message: format!(
                        "{}:{}: cannot read the substitute {name} (needed to check the new substitution against the chain): {e}",
                        path.display(),
                        s.line
                    ),
                });
            }
        }
    }
    let addition = Addition {
        name: pullspec.to_string(),
        base: old_name.to_string(),
        bundle: new_name.to_string(),
    };
    let template_error = |error: AddError| RepublishError::Template {
        file: path.clone(),
        error,
    };
    substitutes_add::check(facts, &bundle_of, &addition).map_err(template_error)?;
    let new_text =
        substitutes_add::append(text, &addition.name, &addition.base).map_err(template_error)?;
    let check = crate::validate::catalog::first_model_error;
    render_template_checked(
        &path.display().to_string(),
        &new_text,
        &TemplateOptions::default(),
        &renderer as &dyn BundleRenderer,
        &check,
    )
    .map_err(|e| RepublishError::Render {
        message: e.to_string(),
    })?;
    let file = fsio::stage(path, new_text.as_bytes(), fsio::Options::edit(0o644))?;
    Ok((file, (addition.name, addition.base, path.clone())))
}

/// Puts the staged files in place, in order; a failure says what was already written.
fn commit(staged: Vec<fsio::Staged>, pushed: &str) -> Result<(), RepublishError> {
    let mut done: Vec<PathBuf> = Vec::new();
    for file in staged {
        let path = file.path().to_path_buf();
        if let Err(e) = file.commit() {
            let written = if done.is_empty() {
                "nothing was written".to_string()
            } else {
                format!(
                    "only {} was written",
                    done.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(RepublishError::Commit {
                pushed: pushed.to_string(),
                written: format!("{e}; {written}"),
            });
        }
        done.push(path);
    }
    Ok(())
}

/// Runs `bundle republish`.
pub fn run(
    run: &RepublishRun,
    on_event: &mut dyn FnMut(RepublishEvent<'_>),
) -> Result<RepublishOutcome, RepublishError> {
    let to_error = |why: String| RepublishError::To {
        value: run.to.clone(),
        why,
    };
    let mut to = Reference::parse(&run.to).map_err(|e: InvalidReference| to_error(e.reason))?;
    if to.digest.is_some() {
        return Err(to_error(
            "name a tag or only the repository: the digest is the image's, known once built".into(),
        ));
    }

    // The bundle, its CSV and the new identity.
    let bundle = Bundle::load(&run.dir)?;
    let package = bundle
        .package()
        .ok_or_else(|| RepublishError::Bundle {
            dir: run.dir.clone(),
            why: "metadata/annotations.yaml names no package (operators.operatorframework.io.bundle.package.v1)".into(),
        })?
        .to_string();
    let CsvEdit {
        rel,
        csv_path,
        current,
        planned,
        edited,
    } = edit_csv(&bundle, run, &package)?;
    if to.tag.is_none() {
        to = to.with_tag(&format!("v{}-{}", current.version, planned.release));
    }
    let plan = Plan {
        csv: csv_path.clone(),
        old_name: current.name.clone(),
        old_release: current.release.to_string(),
        name: planned.name.clone(),
        release: planned.release.to_string(),
        to: to.to_string(),
    };
    on_event(RepublishEvent::Planned(&plan));

    // The template is read and its substitutions checked before anything is built.
    let template = match &run.template {
        Some(path) => {
            let text = fsio::read_to_string(path)?;
            let facts =
                substitutes_add::facts(&text).map_err(|error| RepublishError::Template {
                    file: path.clone(),
                    error,
                })?;
            Some((path.clone(), text, facts))
        }
        None => None,
    };

    // The edited bundle, in a copy of its folders, validated and built.
    let staging = tempfile::Builder::new()
        .prefix("olmpack-republish-")
        .tempdir()
        .map_err(|e| fsio::FsError::new("create", std::env::temp_dir(), e))?;
    let copy = staging.path().join("bundle");
    fsio::create_dir_all(&copy)?;
    stage_copy(&bundle, &copy)?;
    drop(bundle);
    fsio::write(&copy.join(&rel), edited.as_bytes(), fsio::Options::OUTPUT)?;
    // Findings name the user's folder (their paths are relative to it), not the copy.
    let Some(mut built) = bundle_step::build_folder(
        &copy,
        true,
        &run.options,
        &mut |r| {
            let mut shown = r.clone();
            shown.subject = format!("{} (as republished)", run.dir.display());
            shown.root = Some(run.dir.display().to_string());
            on_event(RepublishEvent::Findings(&shown))
        },
        &mut |_| Ok::<(), RepublishError>(()),
    )?
    else {
        return Ok(RepublishOutcome::Invalid);
    };
    for w in &built.warnings {
        on_event(RepublishEvent::Warning(w));
    }
    let digest = built.image.manifest.descriptor.digest.clone();
    let pullspec = to.pinned(&digest);

    // The substitution: checked, appended, and the whole template rendered as it will be.
    let mut staged = Vec::new();
    let mut substitution = None;
    if let Some((path, text, facts)) = &template {
        let (file, added) = substitute(
            run,
            (path, text, facts),
            &pullspec,
            &copy,
            &current.name,
            &planned.name,
        )?;
        staged.push(file);
        substitution = Some(added);
    }
    // The CSV is staged beside itself only now: the build read the copy.
    staged.insert(
        0,
        fsio::stage(&csv_path, edited.as_bytes(), fsio::Options::edit(0o644))?,
    );

    // The push, the signature, then the user's files.
    let delivery = Delivery {
        output: None,
        push: vec![to.to_string()],
        push_options: Default::default(),
        digest_file: None,
    };
    let pushed = deliver::deliver(&mut built, &delivery, &run.registry)
        .map_err(|source| RepublishError::Deliver { source })?;
    for p in &pushed {
        on_event(RepublishEvent::Pushed(&p.shown));
    }
    sign_all(&pushed, &run.registry, run.sign.as_deref(), &mut |p, w| {
        on_event(RepublishEvent::Signed(p, w));
    })
    .map_err(|source| RepublishError::Sign { source })?;
    commit(staged, &to.pinned(&digest))?;
    Ok(RepublishOutcome::Done(Box::new(Republished {
        plan,
        digest,
        substitution,
    })))
}
