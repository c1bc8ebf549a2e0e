//! The command line: clap definitions and the single place that maps outcomes to exit codes.

use crate::commands::{self, EXIT_USAGE};
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// olmpack: package Operator bundles into OCI images without a container daemon.
#[derive(Debug, Parser)]
#[command(name = "olmpack", version, about, propagate_version = true)]
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
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Print opm's output for bundle folders, catalog folders and images (byte-identical).
    Render(commands::catalog_render::Args),
    /// Print the olm.package blob of a new package (as opm init, with checks).
    Init(commands::catalog_init::Args),
    /// Validate catalog folders with every opm validate check, and more, at file:line.
    Validate(commands::catalog_validate::Args),
    /// Render a catalog template (olm.template.basic, olm.semver) as opm alpha render-template does.
    Template(commands::catalog_template::Args),
    /// Draw the upgrade graph (replaces, skips, skipRange, heads, deprecations) as mermaid, DOT or SVG.
    Graph(commands::catalog_graph::Args),
    /// Add a bundle (folder or image) and its channel entries to a catalog folder.
    Add(commands::catalog_add::Args),
    /// Build a reproducible catalog image (scratch or on an opm base) into an OCI layout, an archive or a registry.
    Build(commands::catalog_build::Args),
    /// Write the Dockerfile `opm generate dockerfile` writes, for docker or buildah builds.
    GenerateDockerfile(commands::catalog_build::DockerfileArgs),
    /// Serve a catalog as opm serve does (gRPC registry API, health, reflection) and as catalogd does (--http).
    Serve(commands::catalog_serve::Args),
}

#[derive(Debug, Subcommand)]
enum BundleCommand {
    /// Validate bundle folders (or, with --image, a bundle image) against the registry+v1 rules.
    Validate(commands::validate::Args),
    /// Scaffold metadata/annotations.yaml, dependencies.yaml and bundle.Dockerfile.
    Init(commands::init::Args),
    /// Build a reproducible bundle image into an OCI layout, an archive or a registry.
    Build(commands::build::Args),
    /// Show a bundle image's digest, labels, layers and files without unpacking it.
    Inspect(commands::inspect::Args),
    /// Unpack a bundle image into a folder that validate and build accept.
    Pull(commands::pull::Args),
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
    let outcome = crate::guard::catch(|| match &cli.command {
        TopCommand::Bundle(cmd) => match cmd {
            BundleCommand::Validate(a) => commands::validate::run(a),
            BundleCommand::Init(a) => commands::init::run(a),
            BundleCommand::Build(a) => commands::build::run(a),
            BundleCommand::Inspect(a) => commands::inspect::run(a),
            BundleCommand::Pull(a) => commands::pull::run(a),
        },
        TopCommand::Catalog(cmd) => match cmd {
            CatalogCommand::Validate(a) => commands::catalog_validate::run(a),
            CatalogCommand::Build(a) => commands::catalog_build::run(a),
            CatalogCommand::GenerateDockerfile(a) => commands::catalog_build::run_dockerfile(a),
            CatalogCommand::Render(a) => commands::catalog_render::run(a),
            CatalogCommand::Init(a) => commands::catalog_init::run(a),
            CatalogCommand::Template(a) => commands::catalog_template::run(a),
            CatalogCommand::Graph(a) => commands::catalog_graph::run(a),
            CatalogCommand::Add(a) => commands::catalog_add::run(a),
            CatalogCommand::Serve(a) => commands::catalog_serve::run(a),
        },
    })
    .unwrap_or_else(|failure| Err(commands::Failure::usage(failure.describe())));
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::from(failure.code)
        }
    }
}
