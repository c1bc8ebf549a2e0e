//! A stand-in for pulling bundle images when rendering templates, shared by the template case
//! tests and the fuzz harness so both check the template logic alone: `HOST/PKG:VERSION` is
//! bundle `PKG.vVERSION` of package PKG, and a reference without a tag fails as an unknown
//! manifest would. The property value is built with `serde_json`, so damaged references (quotes,
//! control characters) still give valid JSON.

use olmpack::catalog::model::{Bundle, Origin, Property};
use olmpack::catalog::template::BundleRenderError;

/// Renders `image` as described in the module documentation.
pub fn stand_in(image: &str) -> Result<Vec<Bundle>, BundleRenderError> {
    let (repo, version) = image
        .rsplit_once(':')
        .filter(|(r, _)| !r.is_empty())
        .ok_or_else(|| BundleRenderError::new(format!("{image}: manifest unknown")))?;
    let package = repo.rsplit('/').next().unwrap_or(repo);
    let value = serde_json::json!({ "packageName": package, "version": version }).to_string();
    let property = Property::new("olm.package", value).map_err(BundleRenderError::new)?;
    Ok(vec![Bundle {
        schema: "olm.bundle".into(),
        name: format!("{package}.v{version}"),
        package: package.into(),
        image: image.into(),
        properties: vec![property],
        related_images: Vec::new(),
        objects: Vec::new(),
        csv_json: None,
        origin: Origin::default(),
    }])
}
