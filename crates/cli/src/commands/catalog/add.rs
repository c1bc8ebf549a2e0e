//! `olmpack catalog add CATALOG-DIR BUNDLE`: what `opm index add` did for sqlite catalogs, for
//! file-based ones: render the bundle, add it and its channel entries to the package's file,
//! validate, write atomically.

use super::flags::RegistryArgs;
use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::bundle_source::render_source;
use crate::action::catalog_add::{AddFileError, AddOptions, add_to_catalog};
use crate::action::catalog_add::{AddMode, AddOutcome, MigrateLevel};
use std::path::PathBuf;

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Edges from the CSV: spec.replaces, spec.skips, the olm.skipRange annotation.
    Replaces,
    /// Edges as the semver template would link the bundle in each channel.
    Semver,
}

/// Arguments of `olmpack catalog add`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Catalog folder.
    pub catalog_dir: PathBuf,
    /// The bundle: a folder, oci:PATH[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE or a
    /// registry reference.
    pub bundle: String,
    /// Channel to add the bundle to (repeatable); default: the bundle's channel annotation.
    #[arg(long = "channel", value_name = "CHANNEL")]
    pub channels: Vec<String>,
    /// Image reference written into the catalog (default: BUNDLE when it is a registry
    /// reference; required for a folder or a local image).
    #[arg(long, value_name = "REF")]
    pub image: Option<String>,
    /// How the new channel entries get their edges.
    #[arg(long, value_enum, default_value = "replaces")]
    pub mode: ModeArg,
    /// none or bundle-object-to-csv-metadata; default: the form the package's file already uses.
    #[arg(long, value_name = "LEVEL")]
    pub migrate_level: Option<String>,
    /// Registry options.
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Signature policy checked before a BUNDLE image is read.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
}

/// Runs `olmpack catalog add`.
pub fn run(args: &Args) -> Outcome {
    let bundle = Location::parse(&args.bundle)?;
    let image = match (&args.image, bundle.is_local()) {
        (Some(i), _) => i.clone(),
        (None, false) => args.bundle.clone(),
        (None, true) => {
            return Err(Failure::usage(format!(
                "{} is a local bundle: pass --image REF, the reference the catalog will name",
                args.bundle
            )));
        }
    };
    let options = super::flags::source_options(
        None,
        None,
        &args.registry,
        &[Some(args.bundle.as_str()), args.image.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>(),
    )?;
    // Read at the digest the policy verified (when one did), however often it is rendered.
    let bundle = args.policy.check(&bundle, &options.registry)?;
    let migrate = match &args.migrate_level {
        None => None,
        Some(level) => Some(level.parse::<MigrateLevel>().map_err(Failure::usage)?),
    };
    let render = |level: MigrateLevel| {
        let mut options = options.clone();
        options.migrate = level;
        render_source(&bundle, &image, &options).map_err(|e| e.message)
    };
    let add = AddOptions {
        channels: args.channels.clone(),
        mode: match args.mode {
            ModeArg::Replaces => AddMode::Replaces,
            ModeArg::Semver => AddMode::Semver,
        },
        migrate,
    };
    let report = match add_to_catalog(&args.catalog_dir, &render, &add) {
        Ok(r) => r,
        Err(e @ (AddFileError::Invalid(_) | AddFileError::Add(_) | AddFileError::Broken(_))) => {
            return Err(Failure::with_code(EXIT_FINDINGS, e.to_string()));
        }
        Err(e @ AddFileError::Output { .. }) => return Err(Failure::usage(super::error_chain(&e))),
        Err(e) => return Err(Failure::usage(e.to_string())),
    };
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    match report.outcome {
        AddOutcome::Added => outln!(
            "added {} to {} (channels: {})",
            report.bundle,
            args.catalog_dir.join(&report.file).display(),
            report.channels.join(", ")
        )?,
        AddOutcome::AlreadyPresent => outln!(
            "{} is already in {}; nothing changed",
            report.bundle,
            args.catalog_dir.join(&report.file).display()
        )?,
    }
    Ok(EXIT_OK)
}
