//! `bundle build`: a bundle folder, validated, as a reproducible image, delivered through the
//! one delivery path ([`crate::transport::sink::deliver`]) that `catalog build` uses too.
//!
//! The order is what makes "no partial output" hold: the bundle is loaded and validated, the
//! image is built into a spool folder, and only then does the deliver step
//! ([`super::step::deliver`]) stage the digest file, push, write the local output and put the
//! digest file in place; the sign step ([`super::step::sign`]) then signs each pushed
//! reference at the digest pushed.

use super::sign::SignOptions;
/// What a build attests (`--attest-provenance`, `--attest-sbom`).
pub use super::step::attest::BuildAttestations;
use super::step::attest::provenance::{self, ProvenanceError};
use super::step::attest::{AttestPushedError, Predicate, sbom};
use super::step::bundle_build::{self as bundle_step, BundleStepError};
use super::step::deliver::Pushed;
use super::step::sign::SignPushedError;
use crate::bundle::Bundle;
use crate::image::BuildOptions;
use crate::image::build::BuildWarning;
use crate::signature::attestation::{SLSA_PROVENANCE_V1, SPDX_JSON};
use crate::transport::RegistryOptions;
use crate::transport::sink::{self, Delivery, DeliveryError};
use std::path::PathBuf;
use std::sync::Arc;

/// A whole `bundle build` run.
#[derive(Debug, Clone, Default)]
pub struct BundleBuildRun {
    /// The bundle folder (holding `manifests/` and `metadata/`).
    pub dir: PathBuf,
    /// Check the bundle with every `bundle validate` rule first; errors stop the run before
    /// anything is built or written, warnings do not. Without it only the layout is read.
    pub validate: bool,
    /// Media types, platform, labels, layering, timestamps.
    pub options: BuildOptions,
    /// Where the image goes.
    pub delivery: Delivery,
    /// How to reach the registries pushed to.
    pub registry: RegistryOptions,
    /// Sign every pushed reference at the digest pushed (the last delivery step); keys are
    /// read before the run, so a wrong passphrase costs no build.
    pub sign: Option<Arc<SignOptions>>,
    /// Attest every pushed reference after signing it (`--attest-provenance`,
    /// `--attest-sbom`), with the signing options' cosign key.
    pub attest: BuildAttestations,
}

/// What a run reports while it goes, in order (the build step's events, shared with
/// `catalog build`).
pub type BundleBuildEvent<'a> = BuildEvent<'a, BuildWarning, BundleBuildResult>;

/// How a run ended when nothing failed.
pub type BundleBuildOutcome = BuildOutcome<BundleBuildResult>;

/// The events and outcome of a build run, shared with `catalog build`.
pub use super::step::deliver::{BuildEvent, BuildOutcome};

/// What was built and where it went.
#[derive(Debug, Clone)]
pub struct BundleBuildResult {
    /// The manifest digest.
    pub digest: String,
    /// The manifest size in bytes.
    pub size: u64,
    /// The manifest media type.
    pub media_type: String,
    /// The config digest (the image ID `docker images` shows), the same wherever the image is
    /// written: a docker-archive keeps no manifest, so readers of one show a manifest digest of
    /// their own, but this one.
    pub image_id: String,
    /// Number of layers.
    pub layers: usize,
    /// `REF@sha256:…` for every tag pushed.
    pub pushed: Vec<String>,
}

/// Why a `bundle build` run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleBuildError {
    /// The bundle could not be read or built (the build step's error, shared with `bundle
    /// republish`).
    #[error(transparent)]
    Step(#[from] BundleStepError),
    /// The image could not be delivered (pushed, written) or its digest recorded.
    #[error(transparent)]
    Deliver(#[from] DeliveryError),
    /// The image was pushed but could not be signed.
    #[error(transparent)]
    Sign(#[from] SignPushedError),
    /// Attestations were asked for without a cosign key to sign them.
    #[error("--attest-provenance and --attest-sbom sign with the cosign key: add --sign-key FILE")]
    AttestNeedsKey,
    /// The source files could not be read for the provenance.
    #[error(transparent)]
    Provenance(#[from] ProvenanceError),
    /// The image was pushed (and signed) but its attestations could not be attached.
    #[error(transparent)]
    Attest(#[from] AttestPushedError),
}

/// Runs `bundle build` as one call: load and validate (unless asked not to), build, deliver,
/// sign what was pushed.
pub fn run(
    run: &BundleBuildRun,
    on_event: &mut dyn FnMut(BundleBuildEvent<'_>),
) -> Result<BundleBuildOutcome, BundleBuildError> {
    // Every local output is checked before anything is built (and long before a push).
    sink::check_outputs(&run.delivery)?;
    let attest_key = match run.sign.as_ref().and_then(|s| s.cosign_key.as_ref()) {
        Some(k) => Some(k),
        None if run.attest.any() => return Err(BundleBuildError::AttestNeedsKey),
        None => None,
    };
    let mut facts = None;
    let Some(mut built) = bundle_step::build_folder(
        &run.dir,
        run.validate,
        &run.options,
        &mut |r| on_event(BundleBuildEvent::Findings(r)),
        &mut |bundle| {
            if run.attest.any() {
                // Read now, before anything is built or pushed: an unreadable file stops the run.
                facts = Some(BundleFacts::read(bundle, run)?);
            }
            Ok::<(), BundleBuildError>(())
        },
    )?
    else {
        return Ok(BundleBuildOutcome::Invalid);
    };
    for w in &built.warnings {
        on_event(BundleBuildEvent::Warning(w));
    }
    let pushed = super::step::deliver::deliver(&mut built, &run.delivery, &run.registry)?;
    let manifest = &built.image.manifest.descriptor;
    let result = BundleBuildResult {
        digest: manifest.digest.clone(),
        size: manifest.size,
        media_type: manifest.media_type.to_string(),
        image_id: built.image.config.descriptor.digest.clone(),
        layers: built.image.layers.len(),
        pushed: pushed.iter().map(|p| p.shown.clone()).collect(),
    };
    on_event(BundleBuildEvent::Delivered(&result));
    super::step::sign::sign_all(&pushed, &run.registry, run.sign.as_deref(), &mut |p, w| {
        on_event(BundleBuildEvent::Signed(p, w));
    })?;
    if let (Some(key), Some(facts)) = (attest_key, &facts) {
        let format = run
            .sign
            .as_ref()
            .map(|s| s.cosign_format)
            .unwrap_or_default();
        super::step::attest::attest_all(
            &pushed,
            &run.registry,
            key,
            format,
            &mut |p| facts.predicates(run.attest, p),
            &mut |p, a| on_event(BundleBuildEvent::Attested(p, a)),
        )?;
    }
    Ok(BundleBuildOutcome::Built(result))
}

/// What a bundle build attests, read from the bundle before it is built.
#[derive(Debug)]
struct BundleFacts {
    provenance: provenance::Provenance,
    sbom: sbom::SbomInput,
}

impl BundleFacts {
    fn read(bundle: &Bundle, run: &BundleBuildRun) -> Result<BundleFacts, ProvenanceError> {
        let rels: Vec<String> = bundle.files.iter().map(|f| f.file.clone()).collect();
        let mut parameters = serde_json::Map::new();
        parameters.insert("tags".into(), run.delivery.push.clone().into());
        parameters.insert("platform".into(), run.options.platform.to_string().into());
        let provenance = provenance::Provenance {
            build_type: provenance::BUNDLE_BUILD_TYPE,
            source: run.dir.display().to_string(),
            files: provenance::digest_files(&bundle.root, &rels)?,
            git: provenance::git_source(&bundle.root),
            bases: Vec::new(),
            parameters,
            epoch: run.options.source_date_epoch,
        };
        let sbom = sbom::SbomInput {
            name: bundle
                .package()
                .map(str::to_string)
                .unwrap_or_else(|| run.dir.display().to_string()),
            version: bundle.csv_version().map(str::to_string),
            images: bundle.images().into_iter().collect(),
            epoch: run.options.source_date_epoch,
            ..sbom::SbomInput::default()
        };
        Ok(BundleFacts { provenance, sbom })
    }

    /// The predicates for one pushed reference (the SBOM names it).
    fn predicates(&self, wanted: BuildAttestations, pushed: &Pushed) -> Vec<Predicate> {
        let mut out = Vec::new();
        if wanted.provenance {
            out.push(Predicate {
                predicate_type: SLSA_PROVENANCE_V1.into(),
                predicate: provenance::predicate(&self.provenance),
            });
        }
        if wanted.sbom {
            let input = sbom::SbomInput {
                repository: Some(pushed.reference.name()),
                digest: Some(pushed.digest.clone()),
                ..self.sbom.clone()
            };
            out.push(Predicate {
                predicate_type: SPDX_JSON.into(),
                predicate: sbom::document(&input),
            });
        }
        out
    }
}

/// The media types a build writes (`--format`), and the image options from the build flags
/// (the bundle build step's, shared with `bundle republish`).
pub use super::step::bundle_build::{Format, build_options};
