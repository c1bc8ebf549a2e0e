//! `olmpack bundle validate DIR...`: load and check bundles, print one report per bundle and a
//! total, and exit 0 (valid), 1 (errors, or warnings under `--strict`) or 2 (usage / I/O).

use super::flags::{ColorChoice, RegistryArgs, ReportFormat as OutputFormat};
use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Failure, Outcome};
use crate::action::bundle_image::validate_image;
use crate::findings::rules::Subject;
use crate::legacy::packagemanifest::{self as pm, PackageDir, validate as pmvalidate};
use crate::location::Location;
use crate::validate::batch::internal_error_report;
use crate::validate::bundle::validate_dirs;
use crate::validate::{Group, Options, Rule, output};
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
    /// Signature policy checked before --image is read.
    #[command(flatten)]
    pub policy: super::super::sign::PolicyArgs,
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
        return validate_mixed(&args.dirs, args.output, args.strict, &opts);
    }
    let reports = match &args.image {
        Some(reference) => {
            let registry = args.registry.options()?;
            args.policy.check(&Location::parse(reference)?, &registry)?;
            let validated = || {
                validate_image(reference, &registry, &opts)
                    .map_err(|e| Failure::usage(super::error_chain(&e)))
            };
            match crate::guard::catch(validated) {
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
        OutputFormat::Json => output::json(&reports, Subject::Bundle, args.strict, &mut out),
        OutputFormat::Jsonl => output::jsonl(&reports, Subject::Bundle, args.strict, &mut out),
        OutputFormat::Text => output::text(&reports, Subject::Bundle, args.strict, color, &mut out),
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
    // operator-sdk replaces the standard categories with the file this names.
    let categories = match std::env::var_os(crate::validate::bundle::CATEGORIES_ENV) {
        Some(path) if !path.is_empty() && optional.contains(&Group::OperatorHub) => Some(
            crate::validate::bundle::read_custom_categories(std::path::Path::new(&path)).map_err(
                |e| Failure::usage(format!("{}: {e}", crate::validate::bundle::CATEGORIES_ENV)),
            )?,
        ),
        _ => None,
    };
    Ok(Options {
        optional,
        k8s_version,
        categories,
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

/// `bundle validate` when some of the folders are package-manifest packages: each is checked
/// with the package-manifest rules, the others as bundles; one report per folder, printed by the
/// same renderers as bundles (`crate::validate::output`), then a total.
fn validate_mixed(dirs: &[PathBuf], output: OutputFormat, strict: bool, opts: &Options) -> Outcome {
    let mut reports = Vec::new();
    let mut all_packages = true;
    for dir in dirs {
        if pm::is_package_manifest_dir(dir) {
            let pkg = PackageDir::read(dir).map_err(|e| Failure::usage(e.to_string()))?;
            let checked = crate::guard::catch(|| pmvalidate::validate(&pkg))
                .map_err(|f| Failure::usage(f.describe()))?;
            reports.push(checked.to_report(&dir.display().to_string()));
        } else {
            all_packages = false;
            reports.extend(validate_dirs(std::slice::from_ref(dir), opts, Some(1)));
        }
    }
    let io_failure = reports.iter().any(|r| {
        r.has_rule(Rule::FileUnreadable)
            || r.has_rule(Rule::InternalError)
            || r.has_rule(Rule::PmUnreadable)
    });
    // Package manifests alone are counted and tagged as such; mixed with bundles, as bundles.
    let kind = if all_packages {
        Subject::PackageManifest
    } else {
        Subject::Bundle
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = match output {
        OutputFormat::Text => output::text(&reports, kind, strict, false, &mut out),
        OutputFormat::Jsonl => output::jsonl(&reports, kind, strict, &mut out),
        OutputFormat::Json => output::json(&reports, kind, strict, &mut out),
    };
    if let Err(e) = written.and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Failure::usage(format!("cannot write output: {e}")));
    }
    if io_failure {
        Ok(EXIT_USAGE)
    } else if reports.iter().all(|r| r.passed(strict)) {
        Ok(EXIT_OK)
    } else {
        Ok(EXIT_FINDINGS)
    }
}
