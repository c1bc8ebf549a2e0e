//! The command line: clap definitions and the single place that maps outcomes to exit codes.

use crate::commands::{self, EXIT_USAGE};
use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// olmpack: package Operator bundles and file-based catalogs for OLM without a container daemon.
#[derive(Debug, Parser)]
#[command(
    name = "olmpack",
    version,
    propagate_version = true,
    about = "Package Kubernetes Operators for OLM without a container daemon: registry+v1 bundles and file-based catalogs",
    long_about = "Package Kubernetes Operators for OLM (Operator Lifecycle Manager) without a container daemon.\n\n\
        Bundles (olmpack bundle): scaffold, validate, build and push registry+v1 bundle images, \
        inspect and pull them back.\n\n\
        Catalogs (olmpack catalog): render, validate, template, graph and add to file-based \
        catalogs (FBC), and build and push catalog images with opm's serve cache, with opm's \
        output byte for byte; serve a catalog as opm and catalogd do (olmpack catalog serve).\n\n\
        Legacy formats: package-manifest folders (bundle validate, bundle migrate, catalog \
        render) and sqlite index databases (catalog render), read-only.\n\n\
        Rules: olmpack explain RULE. Shell completions: olmpack completions SHELL. Manual pages: \
        olmpack man."
)]
pub struct Cli {
    #[command(subcommand)]
    command: TopCommand,
}

// Parsed once per process: the size difference between command groups does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum TopCommand {
    /// Work with OLM registry+v1 bundles.
    #[command(subcommand)]
    Bundle(BundleCommand),
    /// Work with file-based catalogs (FBC).
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Run the Operator pipelines' pull-request checks (community, isv, konflux-fbc) on a repository checkout.
    // VERSION is a bundle folder here, so the subcommand has no version flag.
    #[command(disable_version_flag = true)]
    Check(commands::check::Args),
    /// Copy an image or a multi-platform index (with its signatures) between registries and local formats.
    Copy(commands::copy::Args),
    /// Explain a validation rule (bundle, catalog or package manifest): what it checks, why, and an example.
    Explain(commands::explain::Args),
    /// Print the shell completion script (bash, zsh, fish, powershell, elvish) to stdout.
    Completions(commands::completions::Args),
    /// Print the manual page, or write one page per command with --output-dir.
    Man(commands::man::Args),
    /// Write the Markdown reference (commands and rules) kept in docs/reference/.
    #[command(hide = true)]
    Reference(commands::reference::Args),
    /// Sign an image: cosign (--key) and/or containers' simple signing (--gpg-key).
    Sign(commands::sign::SignCmd),
    /// Verify an image's cosign and simple signatures; exit 1 when none verifies.
    Verify(commands::sign::VerifyCmd),
    /// Attach a signed in-toto attestation (SLSA provenance, SPDX SBOM, any predicate) to an image.
    Attest(commands::attest::AttestCmd),
    /// Verify an image's attestations with a key or keyless; exit 1 when none verifies.
    #[command(name = "verify-attestation")]
    VerifyAttestation(commands::attest::VerifyAttestationCmd),
    /// Verify a Sigstore bundle for a file or digest, keyless or with a key, offline.
    #[command(name = "verify-blob")]
    VerifyBlob(commands::verify_blob::Args),
    /// cosign key pairs.
    #[command(subcommand)]
    Key(commands::sign::KeyCmd),
}

// Parsed once per process: the size of the largest variant (`catalog mirror`, with its
// `prune` subcommand inline) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Print opm's output for bundle folders, catalog folders and images (byte-identical).
    Render(commands::catalog::render::Args),
    /// Print the olm.package blob of a new package (as opm init, with checks).
    Init(commands::catalog::init::Args),
    /// Validate catalog folders with every opm validate check, and more, at file:line.
    Validate(commands::catalog::validate::Args),
    /// Render a catalog template (olm.template.basic, olm.semver, olm.template.substitutes) as opm
    /// alpha render-template does.
    Template(commands::catalog::template::Args),
    /// Turn a catalog file into a basic or substitutes template (opm alpha convert-template).
    ConvertTemplate(commands::catalog::convert_template::Args),
    /// Render an operator's templates for every OpenShift catalog its ci.yaml maps them to, as
    /// the pipelines' make catalogs writes them, and check the catalogs agree.
    Matrix(commands::catalog::matrix::Args),
    /// Move an operator to FBC without a container: basic templates and the ci.yaml mapping from
    /// the catalogs it is published in, as the pipelines' fbc-onboarding makes them.
    Onboard(commands::catalog::onboard::Args),
    /// Draw the upgrade graph (replaces, skips, skipRange, heads, deprecations) as mermaid, DOT or SVG.
    Graph(commands::catalog::graph::Args),
    /// Add a bundle (folder or image) and its channel entries to a catalog folder.
    Add(commands::catalog::add::Args),
    /// Keep only some packages, channels and versions of a catalog (catalog-filter's semantics), still valid.
    Filter(commands::catalog::filter::Args),
    /// Compare two catalogs: what changed, and which installed versions lose their upgrade path.
    Diff(commands::catalog::diff::Args),
    /// Ask a catalog (folder, image or catalogd URL): packages, versions, what OLM v1 installs, upgrades on v1 and v0.
    Query(commands::catalog::query::Args),
    /// Build a reproducible catalog image (scratch or on an opm base) into an OCI layout, an archive or a registry.
    Build(commands::catalog::build::Args),
    /// Write the Dockerfile `opm generate dockerfile` writes, for docker or buildah builds.
    GenerateDockerfile(commands::catalog::generate_dockerfile::Args),
    /// Check opm's serve cache in a catalog image or folder (`verify`).
    #[command(subcommand)]
    Cache(commands::catalog::cache::Command),
    /// Copy a catalog and every image it needs to a registry or an archive folder, and write what the cluster needs.
    Mirror(commands::catalog::mirror::Args),
    /// Serve a catalog as opm serve does (gRPC registry API, health, reflection) and as catalogd does (--http).
    Serve(commands::catalog::serve::Args),
}

#[derive(Debug, Subcommand)]
enum BundleCommand {
    /// Validate bundle folders (or, with --image, a bundle image) against the registry+v1 rules.
    Validate(commands::bundle::validate::Args),
    /// Scaffold metadata/annotations.yaml, dependencies.yaml and bundle.Dockerfile.
    Init(commands::bundle::init::Args),
    /// Build a reproducible bundle image into an OCI layout, an archive or a registry.
    Build(commands::bundle::build::Args),
    /// Show a bundle image's digest, labels, layers and files without unpacking it.
    Inspect(commands::bundle::inspect::Args),
    /// Unpack a bundle image into a folder that validate and build accept.
    Pull(commands::bundle::pull::Args),
    /// Turn a package-manifest package into one registry+v1 bundle folder per version.
    Migrate(commands::bundle::migrate::Args),
    /// Pin every image the CSV names to a digest (through the registry, mirror configurations or OCI layouts), in place.
    Pin(commands::bundle::pin::Args),
    /// Republish a bundle without a new operator version: bump spec.release, rename the CSV, build and push, add the substitution to the catalog template.
    Republish(commands::bundle::republish::Args),
    /// Render the Kubernetes objects OLM v1 applies for a bundle (as operator-controller does).
    // `--version` picks a catalog bundle here, so the subcommand has no version flag.
    #[command(disable_version_flag = true)]
    Render(commands::bundle::render::Args),
}

/// Parses the process arguments, runs the command and turns its outcome into an exit code.
/// Usage errors from clap exit 2, like every other usage error.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    // The last line of defence: a bug anywhere in a command ends in a clear message and exit 2,
    // never in Rust's panic message and exit 101. Commands write their outputs atomically at the
    // end, so a caught failure leaves no partial output behind.
    // Ctrl-C and SIGTERM clean up staged files and exit 130; `catalog serve` handles both
    // itself (graceful stop, exit 0).
    if !matches!(&cli.command, TopCommand::Catalog(CatalogCommand::Serve(_))) {
        crate::interrupt::install();
    }
    let outcome = crate::guard::catch(|| match &cli.command {
        TopCommand::Bundle(cmd) => match cmd {
            BundleCommand::Validate(a) => commands::bundle::validate::run(a),
            BundleCommand::Init(a) => commands::bundle::init::run(a),
            BundleCommand::Build(a) => commands::bundle::build::run(a),
            BundleCommand::Inspect(a) => commands::bundle::inspect::run(a),
            BundleCommand::Pull(a) => commands::bundle::pull::run(a),
            BundleCommand::Migrate(a) => commands::bundle::migrate::run(a),
            BundleCommand::Pin(a) => commands::bundle::pin::run(a),
            BundleCommand::Republish(a) => commands::bundle::republish::run(a),
            BundleCommand::Render(a) => commands::bundle::render::run(a),
        },
        TopCommand::Check(a) => commands::check::run(a),
        TopCommand::Copy(a) => commands::copy::run(a),
        TopCommand::Explain(a) => commands::explain::run(a),
        TopCommand::Catalog(cmd) => match cmd {
            CatalogCommand::Validate(a) => commands::catalog::validate::run(a),
            CatalogCommand::Build(a) => commands::catalog::build::run(a),
            CatalogCommand::GenerateDockerfile(a) => commands::catalog::generate_dockerfile::run(a),
            CatalogCommand::Render(a) => commands::catalog::render::run(a),
            CatalogCommand::Init(a) => commands::catalog::init::run(a),
            CatalogCommand::Template(a) => commands::catalog::template::run(a),
            CatalogCommand::ConvertTemplate(a) => commands::catalog::convert_template::run(a),
            CatalogCommand::Matrix(a) => commands::catalog::matrix::run(a),
            CatalogCommand::Onboard(a) => commands::catalog::onboard::run(a),
            CatalogCommand::Graph(a) => commands::catalog::graph::run(a),
            CatalogCommand::Add(a) => commands::catalog::add::run(a),
            CatalogCommand::Filter(a) => commands::catalog::filter::run(a),
            CatalogCommand::Diff(a) => commands::catalog::diff::run(a),
            CatalogCommand::Query(a) => commands::catalog::query::run(a),
            CatalogCommand::Cache(c) => commands::catalog::cache::run(c),
            CatalogCommand::Serve(a) => commands::catalog::serve::run(a),
            CatalogCommand::Mirror(a) => commands::catalog::mirror::run(a),
        },
        TopCommand::Completions(a) => commands::completions::run(a, Cli::command()),
        TopCommand::Man(a) => commands::man::run(a, Cli::command()),
        TopCommand::Reference(a) => commands::reference::run(a, Cli::command()),
        TopCommand::Sign(a) => commands::sign::run_sign(a),
        TopCommand::Verify(a) => commands::sign::run_verify(a),
        TopCommand::VerifyBlob(a) => commands::verify_blob::run(a),
        TopCommand::Attest(a) => commands::attest::run_attest(a),
        TopCommand::VerifyAttestation(a) => commands::attest::run_verify_attestation(a),
        TopCommand::Key(c) => commands::sign::run_key(c),
    })
    .unwrap_or_else(|failure| Err(commands::Failure::usage(failure.describe())));
    // An interrupted run ends in the signal watcher (`interrupted`, 130): what failed here
    // meanwhile (a staged file removed under a writer) is a consequence, not an error.
    if crate::interrupt::interrupted() {
        crate::interrupt::wait_for_exit();
    }
    match outcome {
        Ok(code) => ExitCode::from(code),
        // `olmpack … | head`: the reader chose to stop reading; end as coreutils do.
        Err(failure)
            if crate::pipe::mentions_broken_pipe(&failure.message)
                && crate::pipe::stdout_reader_gone() =>
        {
            crate::pipe::die_of_sigpipe()
        }
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::from(failure.code)
        }
    }
}
