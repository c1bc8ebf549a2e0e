//! OLM v1: the Kubernetes objects operator-controller (v1.11.0) applies for a `registry+v1`
//! bundle, rendered offline and byte for byte as its regression test writes them, and the
//! reasons it would refuse a bundle.
//!
//! Why here and not in a cluster: operator-controller's renderer
//! (`internal/operator-controller/rukpak/render/registryv1`) lives only inside the controller, so
//! authors learn at install time that a bundle cannot be installed and what RBAC it gets. This
//! module replays it: [`load`] reads the bundle as its `source.FromFS` does, [`validators`] runs
//! its thirteen bundle checks with their messages, [`generate`] its ten generators, [`typed`]
//! the Go type round trip every object goes through, and [`output`] the sorting, file names and
//! YAML of `generate-manifests.go`. [`compat`] lists what the installer refuses beyond the
//! renderer, for the `olmv1` rule group; [`permissions`] summarizes the rendered RBAC.

pub mod compat;
pub mod config;
pub mod crd_upgrade;
pub mod generate;
pub mod load;
pub mod output;
pub mod permissions;
pub mod query;
pub mod typed;
pub mod upgrade;
pub mod validators;
pub mod value_path;

use serde_json::Value;

/// Which certificate provider fills in webhook certificates (none: webhooks render without
/// certificate objects, as the renderer does when none is configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertProvider {
    /// cert-manager: an Issuer and a Certificate per webhook deployment, CA injection annotations.
    CertManager,
    /// OpenShift's service-ca operator: annotations only.
    OpenshiftServiceCa,
}

/// What to render for: the renderer's `Options`.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// The namespace the operator is installed in.
    pub install_namespace: String,
    /// Watch namespaces (empty: the bundle's default, all namespaces when it supports that).
    pub watch_namespaces: Vec<String>,
    /// The certificate provider for webhooks.
    pub cert_provider: Option<CertProvider>,
    /// A ClusterExtension `deploymentConfig`, already checked by [`config::parse`].
    pub deployment_config: Option<Value>,
}

/// One rendered object with the keys the output is sorted by.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedObject {
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace` (empty when cluster-scoped or unset).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// The object as its Go value marshals to JSON (keys sorted).
    pub value: Value,
}

impl RenderedObject {
    /// Wraps an object value, reading its sort keys.
    pub fn new(value: Value) -> RenderedObject {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
        RenderedObject {
            kind: text(value.get("kind")),
            namespace: text(value.pointer("/metadata/namespace")),
            name: text(value.pointer("/metadata/name")),
            value,
        }
    }
}

/// Why a bundle could not be rendered: the renderer's own texts, with the prefixes its
/// regression generator prints (`error parsing bundle directory: …` for reading,
/// `error converting registry+v1 bundle: …` for validation and generation).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The bundle folder could not be read as `source.FromFS` reads it.
    #[error("error parsing bundle directory: {0}")]
    Load(String),
    /// A validator, the options or a generator refused it.
    #[error("error converting registry+v1 bundle: {0}")]
    Convert(String),
}

/// Renders a loaded bundle: validators, options, generators, then the objects sorted by kind,
/// namespace and name as `generate-manifests.go` writes them.
pub fn render(
    bundle: &crate::bundle::Bundle,
    opts: &RenderOptions,
) -> Result<Vec<RenderedObject>, RenderError> {
    let rv1 = load::RegistryV1::from_bundle(bundle).map_err(RenderError::Load)?;
    render_registry_v1(&rv1, opts)
}

/// Renders an already loaded [`load::RegistryV1`].
pub fn render_registry_v1(
    rv1: &load::RegistryV1,
    opts: &RenderOptions,
) -> Result<Vec<RenderedObject>, RenderError> {
    let errors = validators::validate(rv1);
    if !errors.is_empty() {
        let text: Vec<String> = errors.into_iter().map(|v| v.message).collect();
        return Err(RenderError::Convert(text.join("\n")));
    }
    let targets = generate::target_namespaces(rv1, opts).map_err(RenderError::Convert)?;
    let mut objects = generate::generate(rv1, opts, &targets).map_err(RenderError::Convert)?;
    output::sort(&mut objects);
    Ok(objects)
}
