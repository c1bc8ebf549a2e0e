//! One bundle source (a bundle folder, a local image or a registry reference) rendered into the
//! `olm.bundle` blob opm would write for the published image `image_ref`.
//!
//! [`render_bundle_files`] holds the per-bundle steps (render, then the object form of the opm
//! release asked for); `catalog render` (`action::catalog_render`) uses it too, so both agree.
//! [`render_source`] is a function of (source, published reference) because templates and
//! `catalog add` render content under a name it was not read from.
//!
//! Why here: templates, `catalog add` and `--bundle-map` all need "render this content under
//! that name", with opm's per-input clean-up and the version-dependent object form applied in
//! one place, so their outputs agree byte for byte.

use crate::catalog::OpmCompat;
use crate::catalog::model::{Bundle, DeclarativeConfig};
use crate::catalog::render::{
    BundleFiles, MigrateLevel, bundle_object_to_csv_metadata, finish_config, move_objects_to_end,
    objects_in_file_order, render_bundle,
};
use crate::catalog::template::BundleRenderError;
use crate::location::{Location, Place};
use crate::transport::RegistryOptions;
use std::path::Path;

/// How to render.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Migration applied after rendering.
    pub migrate: MigrateLevel,
    /// opm release to reproduce.
    pub compat: OpmCompat,
    /// Registry access for image sources.
    pub registry: RegistryOptions,
}

/// A rendered bundle and the channel annotations of its metadata (for `catalog add`).
#[derive(Debug, Clone)]
pub struct SourceBundle {
    /// The blob.
    pub bundle: Bundle,
    /// `operators.operatorframework.io.bundle.channels.v1`, split on commas.
    pub channels: Vec<String>,
    /// `operators.operatorframework.io.bundle.channel.default.v1`.
    pub default_channel: Option<String>,
    /// Notes opm would only log.
    pub warnings: Vec<String>,
}

/// Renders `source` (folder, `oci:`, `oci-archive:`, `docker-archive:` or registry reference) as
/// the bundle image `image_ref`.
pub fn render_source(
    source: &Location,
    image_ref: &str,
    options: &SourceOptions,
) -> Result<SourceBundle, BundleRenderError> {
    if let Place::Path(path) = source.place()
        && path.is_dir()
    {
        return render_dir(path, image_ref, options);
    }
    let unpacked =
        super::source::unpack(source, &options.registry).map_err(BundleRenderError::new)?;
    let mut out = render_dir(unpacked.root(), image_ref, options)?;
    out.warnings.extend(unpacked.warnings().iter().cloned());
    Ok(out)
}

fn render_dir(
    root: &Path,
    image_ref: &str,
    options: &SourceOptions,
) -> Result<SourceBundle, BundleRenderError> {
    let files = BundleFiles::read_dir(root).map_err(BundleRenderError::new)?;
    let (bundle, warnings) =
        render_bundle_files(&files, image_ref, options.compat).map_err(BundleRenderError::new)?;
    let mut cfg = DeclarativeConfig {
        bundles: vec![bundle],
        ..DeclarativeConfig::default()
    };
    finish_config(&mut cfg, options.migrate).map_err(BundleRenderError::new)?;
    let bundle = cfg
        .bundles
        .pop()
        .ok_or_else(|| BundleRenderError::new("no bundle rendered"))?;
    let (channels, default_channel) = channel_annotations(&files);
    Ok(SourceBundle {
        bundle,
        channels,
        default_channel,
        warnings,
    })
}

/// One bundle's files rendered as the `olm.bundle` blob for `image_ref`, in the object form of
/// the opm release `compat` (manifest order before 1.28; only `olm.csv.metadata` for a bundle
/// with an image from 1.28 to 1.45), with opm's notes. The per-input clean-up
/// ([`finish_config`]) is left to the caller, which applies it to the whole input.
pub fn render_bundle_files(
    files: &BundleFiles,
    image_ref: &str,
    compat: OpmCompat,
) -> Result<(Bundle, Vec<String>), String> {
    let rendered = render_bundle(files, image_ref).map_err(|e| e.to_string())?;
    let mut bundle = rendered.bundle;
    if compat.objects_in_file_order() {
        objects_in_file_order(&mut bundle);
    }
    if compat.csv_metadata_for_images() && !image_ref.is_empty() {
        move_objects_to_end(&mut bundle);
        bundle_object_to_csv_metadata(&mut bundle).map_err(|e| e.to_string())?;
    }
    Ok((bundle, rendered.warnings))
}

/// The channel annotations from the first metadata file that has them.
fn channel_annotations(files: &BundleFiles) -> (Vec<String>, Option<String>) {
    for (_, content) in &files.metadata {
        let Ok(text) = std::str::from_utf8(content) else {
            continue;
        };
        let Ok(docs) = crate::yaml::parse_stream(text) else {
            continue;
        };
        let Some(ann) = docs.first().and_then(|d| d.root.get("annotations")) else {
            continue;
        };
        let channels = ann
            .get(crate::bundle::keys::CHANNELS)
            .and_then(|n| n.scalar_text())
            .map(|s| {
                s.split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let default = ann
            .get(crate::bundle::keys::DEFAULT_CHANNEL)
            .and_then(|n| n.scalar_text())
            .map(String::from)
            .filter(|s| !s.is_empty());
        return (channels, default);
    }
    (Vec::new(), None)
}
