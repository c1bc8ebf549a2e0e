//! `olmpack bundle render`: the Kubernetes objects OLM v1 applies for a bundle (flags, one
//! action call, printing).

use super::{EXIT_FINDINGS, EXIT_OK, Failure, Outcome};
use crate::action::Location;
use crate::action::bundle_render::{
    self, BundleRenderError, CertProvider, RenderOptions, RenderSource,
};
use std::io::Write;
use std::path::PathBuf;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// YAML documents separated by `---` (as sigs.k8s.io/yaml writes each object).
    Yaml,
    /// One JSON `List` (with --permissions: the summary as JSON).
    Json,
}

/// Certificate provider for webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CertProviderArg {
    /// cert-manager: Issuer and Certificate objects, `cert-manager.io/inject-ca-from`.
    CertManager,
    /// OpenShift service-ca: `service.beta.openshift.io` annotations.
    OpenshiftServiceCa,
}

/// Arguments of `olmpack bundle render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A bundle folder, a bundle image (REF, oci:PATH[:TAG], oci-archive:FILE[:TAG],
    /// docker-archive:FILE), or with --package a catalog folder.
    pub source: String,
    /// Namespace the operator is installed in.
    #[arg(long, value_name = "NS")]
    pub install_namespace: String,
    /// Namespace the operator watches (repeat for several; none: all namespaces when the
    /// bundle supports it; `""`: all namespaces; the install namespace itself: OwnNamespace).
    #[arg(long = "watch-namespace", value_name = "W")]
    pub watch_namespaces: Vec<String>,
    /// A ClusterExtension `deploymentConfig` (YAML or JSON) applied to every Deployment.
    #[arg(long, value_name = "FILE")]
    pub deployment_config: Option<PathBuf>,
    /// Certificate provider for webhooks (without one, webhooks get no certificate objects).
    #[arg(long, value_enum)]
    pub cert_provider: Option<CertProviderArg>,
    /// Output format on stdout.
    #[arg(long, short = 'o', value_enum, default_value = "yaml")]
    pub output: OutputFormat,
    /// Write one `NN_kind_name.yaml` file per object into DIR instead of stdout.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Print what the operator is allowed to do (the rendered RBAC by scope, API group and
    /// verb, wildcards flagged) instead of the objects.
    #[arg(long)]
    pub permissions: bool,
    /// Take the bundle from a catalog folder's `olm.bundle.object` properties: its package.
    #[arg(long, value_name = "P")]
    pub package: Option<String>,
    /// With --package: the bundle version (default: the highest).
    #[arg(long, value_name = "V", requires = "package")]
    pub version: Option<String>,
    /// Registry, mirror and policy options; the policy is
    /// checked before a bundle image is read.
    #[command(flatten)]
    pub read: super::super::sign::ImageReadArgs,
}

/// Runs `olmpack bundle render`.
pub fn run(args: &Args) -> Outcome {
    let deployment_config = match &args.deployment_config {
        Some(path) => Some(
            bundle_render::read_deployment_config(path)
                .map_err(|e| Failure::usage(e.to_string()))?,
        ),
        None => None,
    };
    let opts = RenderOptions {
        install_namespace: args.install_namespace.clone(),
        watch_namespaces: args.watch_namespaces.clone(),
        cert_provider: args.cert_provider.map(|c| match c {
            CertProviderArg::CertManager => CertProvider::CertManager,
            CertProviderArg::OpenshiftServiceCa => CertProvider::OpenshiftServiceCa,
        }),
        deployment_config,
    };
    let policy = args.read.policy.gate()?;
    let registry = args.read.registry_options(&[&args.source])?;
    let location = Location::parse(&args.source)
        .map_err(|e| Failure::usage(super::error_chain(&BundleRenderError::from(e))))?;
    let src = RenderSource {
        source: args.source.clone(),
        location,
        package: args.package.clone(),
        version: args.version.clone(),
        policy,
    };
    let objects = match bundle_render::render(&src, &opts, &registry) {
        Ok(o) => o,
        Err(BundleRenderError::Render(e)) => {
            eprintln!(
                "error: {}: OLM v1 cannot install this bundle: {e}",
                args.source
            );
            return Ok(EXIT_FINDINGS);
        }
        Err(BundleRenderError::Policy(e)) => return Err(super::super::sign::policy_failure(e)),
        Err(e) => return Err(Failure::usage(super::error_chain(&e))),
    };
    let json = args.output == OutputFormat::Json;
    let bytes = if args.permissions {
        bundle_render::permissions_output(&objects, json)
    } else if let Some(dir) = &args.output_dir {
        let written = bundle_render::write_dir(dir, &objects)
            .map_err(|e| Failure::usage(super::error_chain(&e)))?;
        eprintln!("wrote {} objects to {}", written.len(), dir.display());
        return Ok(EXIT_OK);
    } else {
        bundle_render::objects_output(&objects, json)
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(&bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        Err(e) => Err(Failure::usage(format!("cannot write output: {e}"))),
    }
}
