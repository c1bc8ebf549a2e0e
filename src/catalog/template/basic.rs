//! The `olm.template.basic` template (opm `alpha/template/basic/basic.go`).

/// `schema` of a basic template.
pub const SCHEMA: &str = "olm.template.basic";

use super::{BundleRenderer, Located, TemplateOptions};
use crate::bundle::yaml::Document;
use crate::catalog::model::DeclarativeConfig;

/// Renders a basic template.
pub(crate) fn render(
    _docs: &[Document],
    _options: &TemplateOptions,
    _renderer: &dyn BundleRenderer,
) -> Result<DeclarativeConfig, Located> {
    Err(Located::new(0, "basic templates: not yet"))
}
