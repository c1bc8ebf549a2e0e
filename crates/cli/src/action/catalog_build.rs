//! `catalog build`: the door. It checks the options and the outputs, names a source of
//! another kind, validates the folder (or filters it, [`step::filter`]), and chains the
//! steps: [`step::build`] builds the image (what it holds is told there),
//! [`step::deliver`] writes and pushes it, and [`step::sign`] signs what was pushed. A failure
//! leaves no partial output.

use super::step::build::{BuiltArtifact, BuiltCatalog, CatalogBuildError, configs_dir};
use super::step::deliver::Pushed;
/// What `--filter` was asked for.
pub use super::step::filter::FilterOptions;
use super::step::{self};
use crate::image::config::Platform;
use crate::location::Location;
use crate::transport::RegistryOptions;
use crate::transport::sink::{self, Delivery};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How to sign what a build pushes.
pub use super::sign::{SignOptions, Written};
/// What a build attests (`--attest-provenance`, `--attest-sbom`).
pub use super::step::attest::BuildAttestations;
use super::step::attest::provenance::{self, Provenance};
use super::step::attest::{Predicate, sbom};
pub use super::step::build::{
    CONFIGS_LABEL, CatalogBuildOptions, CatalogBuildRunError, DEFAULT_CONFIGS_DIR, OPM_ENTRYPOINT,
    SourceLayer,
};
use crate::signature::attestation::{SLSA_PROVENANCE_V1, SPDX_JSON};

/// A whole `catalog build` run: the folder, what to build, whether to validate first, where
/// the image goes and where the digest is recorded.
#[derive(Debug, Clone, Default)]
pub struct CatalogBuildRun {
    /// The catalog folder.
    pub dir: PathBuf,
    /// What to build.
    pub options: CatalogBuildOptions,
    /// Check the catalog with every `catalog validate` rule first; errors stop the run before
    /// anything is built or written, warnings do not.
    pub validate: bool,
    /// Build a catalog with no olm.* blob (refused by validation otherwise, as a likely wrong
    /// path).
    pub allow_empty: bool,
    /// Where the image goes, and the file that receives its digest.
    pub delivery: Delivery,
    /// `--filter FILE`: filter the folder's catalog first (as `catalog filter --config`
    /// does, checked the same way) and build the image from what remains, so a filtered
    /// image never needs a hand-written intermediate folder.
    pub filter: Option<FilterOptions>,
    /// A catalog image to rebuild instead of the folder `dir` ([`step::build::build_from_image`]: its base
    /// layers kept, its catalog replaced by the filtered one, its serve cache regenerated);
    /// needs `filter`.
    pub image: Option<Location>,
    /// `--opm-compat`: the opm release that will load the catalog; `None` = the one the base
    /// image's tag names (`.../opm:v1.26.5`), if any. Validation then reports what that opm
    /// cannot load (`catalog/opm-load`).
    pub opm_compat: Option<crate::catalog::OpmCompat>,
    /// Sign every pushed reference at the digest pushed (the last delivery step); keys are
    /// read before the run, so a wrong passphrase costs no build.
    pub sign: Option<Arc<SignOptions>>,
    /// Attest every pushed reference after signing it (`--attest-provenance`,
    /// `--attest-sbom`), with the signing options' cosign key.
    pub attest: BuildAttestations,
}

impl CatalogBuildRun {
    /// The opm that will load the catalog: `--opm-compat`, else the one `--base` names.
    pub fn target_opm(&self) -> Option<crate::catalog::OpmCompat> {
        self.opm_compat.or_else(|| {
            self.options
                .base
                .as_ref()
                .and_then(|b| crate::catalog::OpmCompat::named_by_image(b.as_str()))
        })
    }
}

/// What a run reports while it goes, in order (the build step's events, shared with
/// `bundle build`).
pub type CatalogBuildEvent<'a> = BuildEvent<'a, str, CatalogBuildResult>;

/// How a run ended when nothing failed.
pub type CatalogBuildOutcome = BuildOutcome<Box<CatalogBuildResult>>;

/// The events and outcome of a build run, shared with `bundle build`.
pub use super::step::deliver::{BuildEvent, BuildOutcome};

/// What was built and where it went.
#[derive(Debug, Clone)]
pub struct CatalogBuildResult {
    /// The top-level digest (manifest, or index of a multi-platform image).
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// The configs layer's digest.
    pub configs_layer: String,
    /// Layer count of a single image, or `None` for an index.
    pub layers: Option<usize>,
    /// Platform count of an index, or `None` for a single image.
    pub platforms: Option<usize>,
    /// `REF@sha256:…` for every tag pushed.
    pub pushed: Vec<String>,
    /// The serve cache shipped, if any.
    pub serve_cache: Option<crate::cache::CacheSummary>,
    /// Who owns the serve cache's entries, and why.
    pub cache_owners: Vec<crate::cache::owner::CacheOwner>,
    /// Which cache was written for which opm, and how its version was known.
    pub cache_choice: Option<step::build::CacheChoice>,
    /// For a catalog image source: what became of each of its layers.
    pub source_layers: Vec<SourceLayer>,
}

/// Runs `catalog build` as one call: validate (unless asked not to), build, then deliver
/// (digest file staged, push, local output, digest file in place) and sign what was pushed,
/// so a failure leaves no partial output.
pub fn run(
    run: &CatalogBuildRun,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<CatalogBuildOutcome, CatalogBuildRunError> {
    if let Some(value) = &run.options.configs_dir {
        configs_dir(value).map_err(|e| CatalogBuildRunError::Options(Box::new(e)))?;
    }
    // Every local output is checked before the catalog is read or a base is fetched.
    sink::check_outputs(&run.delivery)?;
    if run.attest.any()
        && run
            .sign
            .as_ref()
            .and_then(|s| s.cosign_key.as_ref())
            .is_none()
    {
        return Err(CatalogBuildRunError::AttestUsage(
            "--attest-provenance and --attest-sbom sign with the cosign key: add --sign-key FILE"
                .into(),
        ));
    }
    if let Some(image) = &run.image {
        if run.attest.any() {
            return Err(CatalogBuildRunError::AttestUsage(format!(
                "{}: attestations are generated for a catalog built from a folder, not for an image rebuilt with --filter",
                image.as_str()
            )));
        }
        return run_image(run, image, on_event);
    }
    refuse_other_kinds(&run.dir)?;
    // With --filter, the image is built from the filtered catalog, kept in a spool folder
    // until the run ends.
    let filtered_spool;
    let dir = match &run.filter {
        Some(f) => {
            filtered_spool =
                step::build::spool().map_err(|e| CatalogBuildRunError::Options(Box::new(e)))?;
            let (filtered, warnings) =
                step::filter::filter_folder(&run.dir, f, filtered_spool.path())?;
            for w in &warnings {
                on_event(CatalogBuildEvent::Warning(w));
            }
            filtered
        }
        None => run.dir.clone(),
    };
    // A folder that cannot be read is left to the build, which names it. A filtered catalog
    // was already checked with every rule by the filter (which drops the findings filtering
    // causes by design: a kept entry replacing a bundle left out), so it is not checked twice.
    if run.validate && run.filter.is_none() && dir.is_dir() && !validate(run, &dir, on_event)? {
        return Ok(CatalogBuildOutcome::Invalid);
    }
    // What the attestations say is read before anything is built or pushed.
    let facts = if run.attest.any() {
        Some(CatalogFacts::read(run, &dir)?)
    } else {
        None
    };
    let built =
        step::build::build(&dir, &run.options).map_err(|source| CatalogBuildRunError::Build {
            dir: run.dir.clone(),
            source: Box::new(source),
        })?;
    deliver_built(built, run, facts, on_event)
}

/// What a catalog build attests: the folder's files and the images its bundles name.
#[derive(Debug)]
struct CatalogFacts {
    provenance: Provenance,
    images: Vec<String>,
}

impl CatalogFacts {
    fn read(run: &CatalogBuildRun, dir: &Path) -> Result<CatalogFacts, CatalogBuildRunError> {
        let fail =
            |source: Box<dyn std::error::Error + Send + Sync>| CatalogBuildRunError::AttestSource {
                dir: run.dir.clone(),
                source,
            };
        let loaded = crate::catalog::load::load_dir(dir).map_err(|e| fail(Box::new(e)))?;
        let mut images = std::collections::BTreeSet::new();
        for b in &loaded.config.bundles {
            if !b.image.is_empty() {
                images.insert(b.image.clone());
            }
            for r in &b.related_images {
                if !r.image.is_empty() {
                    images.insert(r.image.clone());
                }
            }
        }
        let mut parameters = serde_json::Map::new();
        parameters.insert("tags".into(), run.delivery.push.clone().into());
        if let Some(b) = &run.options.base {
            parameters.insert("base".into(), b.as_str().into());
        }
        let provenance = Provenance {
            build_type: provenance::CATALOG_BUILD_TYPE,
            source: run.dir.display().to_string(),
            files: provenance::digest_files(dir, &loaded.files).map_err(|e| fail(Box::new(e)))?,
            git: provenance::git_source(&run.dir),
            bases: Vec::new(),
            parameters,
            epoch: run.options.source_date_epoch,
        };
        Ok(CatalogFacts {
            provenance,
            images: images.into_iter().collect(),
        })
    }

    fn predicates(
        &self,
        wanted: BuildAttestations,
        bases: &[(String, String)],
        run: &CatalogBuildRun,
        pushed: &Pushed,
    ) -> Vec<Predicate> {
        let mut out = Vec::new();
        if wanted.provenance {
            let p = Provenance {
                bases: bases.to_vec(),
                ..self.provenance.clone()
            };
            out.push(Predicate {
                predicate_type: SLSA_PROVENANCE_V1.into(),
                predicate: provenance::predicate(&p),
            });
        }
        if wanted.sbom {
            out.push(Predicate {
                predicate_type: SPDX_JSON.into(),
                predicate: sbom::document(&sbom::SbomInput {
                    name: pushed.reference.name(),
                    version: pushed.reference.tag.clone(),
                    repository: Some(pushed.reference.name()),
                    digest: Some(pushed.digest.clone()),
                    images: self.images.clone(),
                    epoch: run.options.source_date_epoch,
                }),
            });
        }
        out
    }
}

/// A bundle folder (or another local kind) would otherwise fail with a page of missing-schema
/// errors about its manifests: name the kind, and the command that reads it.
fn refuse_other_kinds(dir: &Path) -> Result<(), CatalogBuildRunError> {
    if let Some(super::source::NotACatalog::Local(_)) = super::source::not_a_catalog(dir)
        && let Some(message) = super::source::not_a_catalog_message(dir)
    {
        return Err(CatalogBuildRunError::NotACatalog(format!(
            "{message}; `olmpack catalog build` takes a catalog folder"
        )));
    }
    Ok(())
}

/// Checks the folder with every `catalog validate` rule; findings go to `on_event`. Whether
/// the build may go on (no errors).
fn validate(
    run: &CatalogBuildRun,
    dir: &Path,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<bool, CatalogBuildRunError> {
    let mut report =
        crate::validate::catalog::validate_dir_for(dir, &Default::default(), run.target_opm())
            .map_err(|source| CatalogBuildRunError::Validate {
                dir: run.dir.clone(),
                source: Box::new(source),
            })?;
    if run.allow_empty {
        report
            .diagnostics
            .retain(|d| d.rule != crate::findings::Rule::CatalogEmpty);
    }
    if !report.diagnostics.is_empty() {
        on_event(CatalogBuildEvent::Findings(&report));
    }
    Ok(!report.has_errors())
}

/// [`run`] for a catalog image source: filter and rebuild
/// ([`step::build::build_from_image`]), then deliver as a folder build is delivered.
fn run_image(
    run: &CatalogBuildRun,
    image: &Location,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<CatalogBuildOutcome, CatalogBuildRunError> {
    let shown = PathBuf::from(image.as_str());
    let Some(filter) = &run.filter else {
        return Err(CatalogBuildRunError::Build {
            dir: shown,
            source: Box::new(CatalogBuildError::ImageSource {
                source_name: image.as_str().to_string(),
                reason:
                    "a catalog image as source needs --filter FILE (a folder is built as it is)"
                        .into(),
            }),
        });
    };
    let fc = step::filter::read_config(filter).map_err(|e| CatalogBuildRunError::Filter {
        dir: shown.clone(),
        source: Box::new(e.into()),
    })?;
    let built = step::build::build_from_image(image, &fc, filter.format, &run.options)?;
    deliver_built(built, run, None, on_event)
}

/// The last steps of [`run`] for folder and image sources alike: warnings reported, the
/// result delivered where the run asks, what was built summed up, and what was pushed signed.
fn deliver_built(
    mut built: BuiltCatalog,
    run: &CatalogBuildRun,
    facts: Option<CatalogFacts>,
    on_event: &mut dyn FnMut(CatalogBuildEvent<'_>),
) -> Result<CatalogBuildOutcome, CatalogBuildRunError> {
    for w in &built.warnings {
        on_event(CatalogBuildEvent::Warning(w));
    }
    let (digest, size) = {
        let (d, s) = built.digest();
        (d.to_string(), s)
    };
    let pushed = step::deliver::deliver(&mut built, &run.delivery, &run.options.registry)?;
    let (layers, platforms) = match &built.artifact {
        BuiltArtifact::Image(i) => (Some(i.layers.len()), None),
        BuiltArtifact::Index(x) => (None, Some(x.images.len())),
    };
    let result = CatalogBuildResult {
        digest,
        size,
        configs_layer: built.configs_layer.clone(),
        layers,
        platforms,
        pushed: pushed.iter().map(|p| p.shown.clone()).collect(),
        serve_cache: built.serve_cache.clone(),
        cache_owners: built.cache_owners.clone(),
        cache_choice: built.cache_choice.clone(),
        source_layers: std::mem::take(&mut built.source_layers),
    };
    on_event(CatalogBuildEvent::Delivered(&result));
    let signed = &mut |p: &_, w: &_| on_event(CatalogBuildEvent::Signed(p, w));
    step::sign::sign_all(&pushed, &run.options.registry, run.sign.as_deref(), signed)?;
    let key = run.sign.as_ref().and_then(|s| s.cosign_key.as_ref());
    if let (Some(facts), Some(key)) = (&facts, key) {
        let format = run
            .sign
            .as_ref()
            .map(|s| s.cosign_format)
            .unwrap_or_default();
        step::attest::attest_all(
            &pushed,
            &run.options.registry,
            key,
            format,
            &mut |p| facts.predicates(run.attest, &built.bases, run, p),
            &mut |p, a| on_event(CatalogBuildEvent::Attested(p, a)),
        )
        .map_err(|e| CatalogBuildRunError::Attest(Box::new(e)))?;
    }
    Ok(CatalogBuildOutcome::Built(Box::new(result)))
}

/// What the command names: the platform its registry options are read for, the serve cache's
/// default place in the image, and what became of each layer of a source image.
pub mod types {
    pub use crate::cache::DEFAULT_CACHE_DIR;
    pub use crate::image::Platform;
    pub use crate::image::strip::LayerUse;
}

/// The `catalog build` flags that shape the image, as typed.
#[derive(Debug, Clone)]
pub struct CatalogBuildFlags<'a> {
    /// `--platform`s.
    pub platforms: &'a [String],
    /// `--label`s.
    pub labels: &'a [(String, String)],
    /// `--configs-dir`.
    pub configs_dir: &'a str,
    /// SOURCE is an image ([`image_source`]): it keeps its catalog where its label says, so
    /// only a `--configs-dir` other than the default is passed on (and refused).
    pub from_image: bool,
    /// `--base`.
    pub base: Option<Location>,
    /// The digest a signature policy verified for `--base` ([`CatalogBuildOptions::base_verified`]).
    pub base_verified: Option<String>,
    /// `--cache`.
    pub cache: bool,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--cache-dir`.
    pub cache_dir: &'a str,
    /// `--cache-format` (`auto`, `json` or `pogreb`).
    pub cache_format: &'a str,
    /// `--opm-version`.
    pub opm_version: Option<&'a str>,
    /// The registry options read from the connection flags.
    pub registry: RegistryOptions,
    /// The local output is a `docker-archive:`, which holds one platform.
    pub docker_archive: bool,
}

/// The build options from the flags: platforms parsed (one only into a docker-archive),
/// labels checked, `SOURCE_DATE_EPOCH` read from the environment.
pub fn build_options(
    flags: &CatalogBuildFlags<'_>,
) -> Result<CatalogBuildOptions, super::delivery::FlagError> {
    use super::delivery::FlagError;
    use crate::cache::{CacheFormat, ServeCache};
    let platforms = flags
        .platforms
        .iter()
        .map(|p| p.parse::<Platform>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(FlagError::chain)?;
    if flags.docker_archive && platforms.len() > 1 {
        return Err(FlagError::Conflict(
            "a docker-archive holds a single platform: give one --platform".to_string(),
        ));
    }
    Ok(CatalogBuildOptions {
        configs_dir: (!flags.from_image || flags.configs_dir != DEFAULT_CONFIGS_DIR)
            .then(|| flags.configs_dir.to_string()),
        base: flags.base.clone(),
        base_verified: flags.base_verified.clone(),
        platforms,
        labels: super::labels::label_map(flags.labels).map_err(FlagError::chain)?,
        source_date_epoch: crate::image::build::source_date_epoch_from_env()
            .map_err(FlagError::chain)?,
        registry: flags.registry.clone(),
        serve_cache: match (flags.cache, flags.no_cache) {
            (true, _) => ServeCache::Always,
            (_, true) => ServeCache::Never,
            _ => ServeCache::Auto,
        },
        cache_dir: Some(flags.cache_dir.to_string()),
        cache_format: match flags.cache_format {
            "pogreb" => Some(CacheFormat::Pogreb),
            "json" => Some(CacheFormat::Json),
            _ => None,
        },
        opm_version: flags
            .opm_version
            .map(str::parse)
            .transpose()
            .map_err(FlagError::chain)?,
    })
}
