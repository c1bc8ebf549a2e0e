//! `olmpack catalog onboard`: an operator moved to file-based catalogs without a container
//! (the pipelines' `fbc-onboarding`): basic templates and the ci.yaml `fbc` mapping made from
//! the catalogs it is published in.

use super::{EXIT_OK, Failure, Outcome, flags::RegistryArgs};
use crate::action::Location;
use crate::action::catalog_onboard::{self, OnboardRequest, OnboardTarget};
use std::path::PathBuf;

/// Arguments of `olmpack catalog onboard`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
For each published catalog (one per OpenShift version), the blobs of the package (those whose name
or package is the package name, as the pipelines' fbc-onboarding picks them) are written as a basic
template operators/<op>/catalog-templates/v<ocp>.yaml, every olm.bundle cut down to its image
(opm alpha convert-template basic output). ci.yaml gets fbc: {enabled: true, catalog_mapping: one
olm.template.basic template per catalog}, updateGraph is dropped, other keys are kept (keys sorted,
comments not kept, as the pipelines' yaml.safe_dump writes it). A catalog without the package gets
no template. Nothing is written unless every file could be made.

The catalogs: by default every catalogs/v<ocp>/ folder of the repository; or --from v4.18=SOURCE
per version, SOURCE a catalog folder or a catalog image (REF, oci:PATH[:TAG], oci-archive:FILE,
docker-archive:FILE) such as the index image of that OpenShift version.

Then `olmpack catalog matrix OPERATOR` renders the templates back into catalogs/<ocp>/<op>/;
`--check` there says whether they give the published catalogs back byte for byte.

Exit codes: 0 written, 2 usage or I/O error (nothing written).")]
pub struct Args {
    /// The operator folder under operators/.
    #[arg(value_name = "OPERATOR")]
    pub operator: String,
    /// The repository checkout (config.yaml, operators/, catalogs/).
    #[arg(long, value_name = "ROOT", default_value = ".")]
    pub repo: PathBuf,
    /// A published catalog: OCP=SOURCE (e.g. v4.18=registry.redhat.io/redhat/community-operator-index:v4.18
    /// or v4.18=catalogs/v4.18); repeat per version. Default: the repository's catalogs/v*/.
    #[arg(long = "from", value_name = "OCP=SOURCE")]
    pub from: Vec<String>,
    /// The package name (default: the bundles' operators.operatorframework.io.bundle.package.v1
    /// annotation, else the folder name).
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// Write DIR/operators/<op>/... instead of into the repository.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Onboard again: replace an existing fbc mapping and templates of the same names.
    #[arg(long)]
    pub force: bool,
    /// Registry options (for catalog images).
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Runs `olmpack catalog onboard`.
pub fn run(args: &Args) -> Outcome {
    let mut sources = Vec::new();
    for f in &args.from {
        let Some((ocp, source)) = f.split_once('=') else {
            return Err(Failure::usage(format!(
                "--from {f}: expected OCP=SOURCE (e.g. v4.18=catalogs/v4.18)"
            )));
        };
        let catalog =
            catalog_onboard::catalog_name(ocp).map_err(|e| Failure::usage(e.to_string()))?;
        let location = Location::parse(source)
            .map_err(|e| Failure::usage(format!("{catalog}: {source}: {e}")))?;
        sources.push((catalog, location));
    }
    let request = OnboardRequest {
        root: args.repo.clone(),
        operator: args.operator.clone(),
        package: args.package.clone(),
        sources,
        output_dir: args.output_dir.clone(),
        force: args.force,
        registry: args.registry.options(&[])?,
    };
    let progress = |t: &OnboardTarget| match &t.template {
        Some(file) => eprintln!(
            "{}: {} blobs ({} bundles) from {} -> {}",
            t.catalog,
            t.blobs,
            t.bundles,
            t.source,
            file.display()
        ),
        None => eprintln!("{}: package not in {} (no template)", t.catalog, t.source),
    };
    let report = catalog_onboard::run(&request, &progress)
        .map_err(|e| Failure::usage(crate::errors::error_chain(&e)))?;
    let written = report
        .targets
        .iter()
        .filter(|t| t.template.is_some())
        .count();
    outln!(
        "onboarded {} (package {} from {}): {written} templates, {} in {:.2}s",
        args.operator,
        report.package,
        report.package_from,
        report.ci.display(),
        report.elapsed.as_secs_f64()
    )?;
    Ok(EXIT_OK)
}
