//! `olmpack bundle validate DIR...`: load and check bundles, print one report per bundle and a
//! total, and exit 0 (valid), 1 (errors, or warnings under `--strict`) or 2 (usage / I/O).

use super::image_source::RegistryArgs;
use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome};
use crate::action::bundle_image::fetch_bundle;
use crate::bundle::Bundle;
use crate::validate::batch::{internal_error_report, validate_dirs};
use crate::validate::{self, Group, Options, Report, Rule, render};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Output format of the validate command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// One line per finding and a summary per bundle.
    Text,
    /// operator-sdk's json-alpha1 shape plus rule, file and line.
    #[value(alias = "json-alpha1")]
    Json,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

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
    /// operator-sdk compatible `key=value` options (k8s-version is understood).
    #[arg(
        long = "optional-values",
        value_name = "KEY=VALUE",
        value_delimiter = ','
    )]
    pub optional_values: Vec<String>,
    /// List every rule with its id, severity and group, then exit.
    #[arg(long = "list-rules")]
    pub list_rules: bool,
    /// When to use colour in text output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Number of bundles validated at once (default: the number of CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Registry connection flags for --image.
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Runs `olmpack bundle validate`.
pub fn run(args: &Args) -> Outcome {
    if args.list_rules {
        return list_rules();
    }
    let opts = options(args)?;
    // Package-manifest folders (`<package>.package.yaml` + version folders) get their own rules.
    if args.image.is_none()
        && args
            .dirs
            .iter()
            .any(|d| crate::legacy::packagemanifest::is_package_manifest_dir(d))
    {
        return super::bundle_migrate::validate_dirs(&args.dirs, args.output, args.strict, &opts);
    }
    let reports = match &args.image {
        Some(reference) => {
            match crate::guard::catch(|| validate_image(reference, &args.registry, &opts)) {
                Ok(report) => vec![report?],
                Err(failure) => vec![internal_error_report(reference, None, &failure)],
            }
        }
        None => validate_dirs(&args.dirs, &opts, args.jobs),
    };
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => super::color_on(std::io::stdout().is_terminal()),
    };
    // Stdout is line-buffered even into a pipe: one write for the whole report, not one per line.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    // A bundle that could not be read at all, or on which olmpack itself failed, is reported like
    // a finding (the other bundles keep their full report), then the run exits 2.
    let io_failure = reports
        .iter()
        .any(|r| r.has_rule(Rule::FileUnreadable) || r.has_rule(Rule::InternalError));
    let written = match args.output {
        OutputFormat::Json => render::json(&reports, args.strict, &mut out),
        OutputFormat::Text => render::text(&reports, "bundle", args.strict, color, &mut out),
    };
    if let Err(e) = written.and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::usage(format!("cannot write output: {e}")));
    }
    if io_failure {
        Ok(EXIT_USAGE)
    } else if reports.iter().all(|r| r.passed(args.strict)) {
        Ok(EXIT_OK)
    } else {
        Ok(EXIT_FINDINGS)
    }
}

/// Pulls (or opens) a bundle image, unpacks it to a temp folder, runs every folder rule, then
/// compares its labels with its annotations and checks it looks like a bundle image.
pub fn validate_image(
    reference: &str,
    registry: &RegistryArgs,
    opts: &Options,
) -> Result<Report, Failure> {
    let fetched = fetch_bundle(reference, &registry.options()?)?;
    let bundle =
        Bundle::load(fetched.dir.path()).map_err(|e| Failure::usage(super::error_chain(&e)))?;
    let mut report = validate::validate(&bundle, opts);
    validate::image::check_labels(&mut report, &bundle, &fetched.labels);
    validate::image::check_shape(&mut report, &fetched.warnings);
    report.bundle = format!("{reference} ({})", fetched.digest);
    Ok(report)
}

/// Builds validation options from the flags.
pub fn options(args: &Args) -> Result<Options, Failure> {
    let mut optional = Vec::new();
    for sel in &args.select_optional {
        for g in Group::parse_selection(sel).map_err(Failure::usage)? {
            if !optional.contains(&g) {
                optional.push(g);
            }
        }
    }
    let mut k8s = args.k8s_version.clone();
    for kv in &args.optional_values {
        match kv.split_once('=') {
            Some(("k8s-version", v)) => k8s = Some(v.to_string()),
            Some((_, _)) => {}
            None => {
                return Err(Failure::usage(format!(
                    "--optional-values expects key=value, got \"{kv}\""
                )));
            }
        }
    }
    let k8s_version = match k8s {
        Some(text) => Some(parse_k8s_version(&text).ok_or_else(|| {
            Failure::usage(format!(
                "--k8s-version \"{text}\" is not a Kubernetes version such as 1.25 or v1.25.0"
            ))
        })?),
        None => None,
    };
    Ok(Options {
        optional,
        k8s_version,
    })
}

fn parse_k8s_version(text: &str) -> Option<semver::Version> {
    let t = text.trim().trim_start_matches('v');
    let mut parts = t.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().unwrap_or("0").parse().ok()?;
    let patch = parts.next().unwrap_or("0").parse().ok()?;
    Some(semver::Version::new(major, minor, patch))
}

fn list_rules() -> Outcome {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for rule in Rule::ALL.iter().filter(|r| !r.is_catalog()) {
        let _ = writeln!(
            out,
            "{:<40} {:<8} {:<15} {}",
            rule.id(),
            rule.default_severity().as_str(),
            rule.group().name(),
            rule.summary()
        );
    }
    Ok(EXIT_OK)
}
