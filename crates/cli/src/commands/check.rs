//! `olmpack check --profile P [--repo ROOT] OPERATOR [VERSION] [--catalogs …]` and
//! `olmpack check --profile P --all`: the pipelines' pull-request checks; exit 0 (passed),
//! 1 (a failure), 2 (usage or I/O), as the validate commands.

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::check::{self, Profile, ReportForm, Request};
use std::path::PathBuf;

/// The pipeline whose checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileArg {
    /// community-operators-prod: the common and community suites (operator-sdk's two runs by
    /// olmpack's rules).
    Community,
    /// certified-operators and redhat-marketplace: the common and isv suites.
    Isv,
    /// Konflux FBC pipelines: validate-fbc's rules per OCP target.
    KonfluxFbc,
}

/// Report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a terminal, with a fix per finding.
    Text,
    /// One object per finding: check, type, message, file, line, fix.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub workflow annotations (::error file=FILE,line=N::).
    Github,
}

/// Arguments of `olmpack check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which pipeline's checks to run.
    #[arg(long, value_enum)]
    pub profile: ProfileArg,
    /// The repository checkout (config.yaml, operators/, catalogs/).
    #[arg(long, value_name = "ROOT", default_value = ".")]
    pub repo: PathBuf,
    /// The operator (a folder under operators/).
    #[arg(
        value_name = "OPERATOR",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub operator: Option<String>,
    /// The bundle version folder to check (default: the operator's newest bundle).
    #[arg(value_name = "VERSION")]
    pub version: Option<String>,
    /// Affected catalogs, comma-separated <ocp>/<package> (default: every catalog that holds
    /// the operator).
    #[arg(
        long,
        value_name = "OCP/PACKAGE",
        value_delimiter = ',',
        conflicts_with = "all"
    )]
    pub catalogs: Option<Vec<String>>,
    /// Check every operator of the repository (each at its newest bundle).
    #[arg(long)]
    pub all: bool,
    /// Leave out the two operator-sdk runs of the community profile.
    #[arg(long = "no-operator-sdk")]
    pub no_operator_sdk: bool,
    /// Registry prefixes allowed for bundle images under konflux-fbc (repeatable; default:
    /// config.yaml's allowed_bundle_registries).
    #[arg(long = "allowed-registry", value_name = "PREFIX")]
    pub allowed_registry: Vec<String>,
    /// The released catalogs for konflux-fbc's fbc-target-index-pruning-check: a folder with
    /// one FBC folder per OCP version (DIR/v4.18/, e.g. opm render of the index). Without it
    /// that check is not run (nothing is downloaded).
    #[arg(long = "target-index", value_name = "DIR")]
    pub target_index: Option<PathBuf>,
    /// Report format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Format,
}

/// Runs `olmpack check`.
pub fn run(args: &Args) -> Outcome {
    let profile = match args.profile {
        ProfileArg::Community => Profile::Community,
        ProfileArg::Isv => Profile::Isv,
        ProfileArg::KonfluxFbc => Profile::KonfluxFbc,
    };
    let request = Request {
        root: args.repo.clone(),
        profile,
        operator: args.operator.clone(),
        version: args.version.clone(),
        catalogs: args
            .catalogs
            .as_ref()
            .map(|c| c.iter().filter(|s| !s.is_empty()).cloned().collect()),
        osdk: !args.no_operator_sdk,
        allowed_registries: args.allowed_registry.clone(),
        target_index: args.target_index.clone(),
    };
    let outcome = check::run(&request).map_err(Failure::from)?;
    let form = match args.output {
        Format::Text => ReportForm::Text,
        Format::Json => ReportForm::Json,
        Format::Sarif => ReportForm::Sarif,
        Format::Github => ReportForm::Github,
    };
    let report = check::render(&outcome, profile, form);
    outln!("{}", report.trim_end_matches('\n'))?;
    Ok(if outcome.passed() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}
