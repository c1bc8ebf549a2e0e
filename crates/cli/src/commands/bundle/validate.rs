//! `olmpack bundle validate DIR...`: load and check bundles, print one report per bundle and a
//! total, and exit 0 (valid), 1 (errors, or warnings under `--strict`) or 2 (usage / I/O).

use super::flags::{ColorChoice, ReportFormat as OutputFormat};
use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome};
use crate::action::Location;
use crate::action::bundle_validate::{self, Options};
use crate::validate::output;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Arguments of `olmpack bundle validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Bundle folders (each holding manifests/ and metadata/). Several are checked in parallel.
    /// A package-manifest package (<package>.package.yaml + version folders) gets the
    /// packagemanifest/* rules.
    #[arg(value_name = "DIR", required_unless_present_any = ["list_rules", "image"])]
    pub dirs: Vec<PathBuf>,
    /// Validate a bundle image instead of folders: a registry reference, or oci:PATH[:TAG],
    /// oci-archive:FILE[:TAG], docker-archive:FILE. Adds the label-versus-annotations check.
    #[arg(long, value_name = "REF", conflicts_with = "dirs")]
    pub image: Option<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Fail on warnings too (operator-sdk treats some of olmpack's warnings as errors).
    #[arg(long)]
    pub strict: bool,
    /// Also run optional rule groups: operatorhub, good-practices, bundle-objects, all
    /// (comma-separated or repeated; operator-sdk's `name=operatorhub` is accepted).
    #[arg(long = "select-optional", value_name = "GROUP", value_delimiter = ',')]
    pub select_optional: Vec<String>,
    /// Target Kubernetes version: APIs removed at or before it are errors, not warnings.
    #[arg(long = "k8s-version", value_name = "VERSION")]
    pub k8s_version: Option<String>,
    /// Where the bundle will run: ocp-4.12 ... ocp-4.22, ocp-5.0, olmv0, olmv1 (comma-separated
    /// or repeated). Removed APIs are judged per target's Kubernetes, kinds a target refuses
    /// are reported (target/kind), olmv1 runs the OLM v1 rules, and every finding names the
    /// targets it affects. The facts and their sources: docs/guide/targets.md.
    #[arg(long = "target", value_name = "TARGET", value_delimiter = ',')]
    pub targets: Vec<String>,
    /// operator-sdk compatible `key=value` options (k8s-version is understood).
    #[arg(
        long = "optional-values",
        value_name = "KEY=VALUE",
        value_delimiter = ','
    )]
    pub optional_values: Vec<String>,
    /// Also check the upgrade from this bundle folder to each DIR as OLM v1's CRD upgrade
    /// preflight does (olmv1/crd-upgrade-* rules): removed fields and stored versions, type,
    /// scope, enum, bound, default and required changes.
    #[arg(
        long = "upgrade-from",
        value_name = "OLD_DIR",
        conflicts_with = "image"
    )]
    pub upgrade_from: Option<PathBuf>,
    /// List every rule with its id, severity and group, then exit.
    #[arg(long = "list-rules")]
    pub list_rules: bool,
    /// When to use colour in text output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Number of bundles validated at once (default: the number of CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Registry, mirror and policy options; the policy is
    /// checked before --image is read.
    #[command(flatten)]
    pub read: super::super::sign::ImageReadArgs,
}

/// Runs `olmpack bundle validate`.
pub fn run(args: &Args) -> Outcome {
    if args.list_rules {
        return list_rules();
    }
    let opts = options(args)?;
    let mut validated = match &args.image {
        Some(reference) => {
            let registry = args.read.registry_options(&[reference])?;
            let location = args
                .read
                .policy
                .check(&Location::parse(reference)?, &registry)?;
            bundle_validate::validate_image(&location, &registry, &opts)
                .map_err(|e| Failure::usage(super::error_chain(&e)))?
        }
        None => bundle_validate::validate_folders(&args.dirs, &opts, args.jobs)
            .map_err(Failure::usage)?,
    };
    if let Some(old) = &args.upgrade_from {
        bundle_validate::add_upgrade_checks(&mut validated, &args.dirs, old)
            .map_err(Failure::usage)?;
    }
    // Package-manifest reports are printed without colour, as they always were.
    let color = match args.color {
        _ if validated.packages => false,
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => super::color_on(std::io::stdout().is_terminal()),
    };
    // Stdout is line-buffered even into a pipe: one write for the whole report, not one per line.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    // A bundle that could not be read at all, or on which olmpack itself failed, is reported like
    // a finding (the other bundles keep their full report), then the run exits 2.
    let (reports, kind, strict) = (&validated.reports, validated.subject, args.strict);
    let written = match args.output {
        OutputFormat::Json => output::json(reports, kind, strict, &mut out),
        OutputFormat::Jsonl => output::jsonl(reports, kind, strict, &mut out),
        OutputFormat::Text => output::text(reports, kind, strict, color, &mut out),
    };
    if let Err(e) = written.and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::usage(format!("cannot write output: {e}")));
    }
    if validated.io_failure {
        Ok(EXIT_USAGE)
    } else if validated.passed(strict) {
        Ok(EXIT_OK)
    } else {
        Ok(EXIT_FINDINGS)
    }
}

/// Builds validation options from the flags.
pub fn options(args: &Args) -> Result<Options, Failure> {
    bundle_validate::options(
        &args.select_optional,
        args.k8s_version.as_deref(),
        &args.optional_values,
        &args.targets,
    )
    .map_err(Failure::usage)
}

fn list_rules() -> Outcome {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in bundle_validate::rule_lines() {
        let _ = writeln!(out, "{line}");
    }
    Ok(EXIT_OK)
}
