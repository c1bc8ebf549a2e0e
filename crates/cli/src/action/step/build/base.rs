//! The base of a catalog image, opened once: every platform image wanted, each with the
//! `platform` object its index entry gives it (the open step, for a base or for a catalog image
//! rebuilt on itself).

use super::{CatalogBuildError, dedup};
use crate::action::source::open_any;
use crate::image::config::Platform;
use crate::image::extend::platform_json;
use crate::location::Location;
use crate::transport::OpenedImage;
use crate::transport::{RegistryOptions, TransportError};

/// Opens the base: every platform image wanted, each with its index `platform` object.
pub fn open_bases(
    location: &Location,
    platforms: &[Platform],
    registry: &RegistryOptions,
) -> Result<(Vec<(OpenedImage, serde_json::Value)>, bool), CatalogBuildError> {
    let base = location.as_str();
    let wrap = |source: TransportError| CatalogBuildError::Base {
        base: base.to_string(),
        source,
    };
    let opened = match open_any(location, registry).map_err(wrap)?.into_image() {
        Ok(image) => {
            let own: Option<Platform> = image.platform().parse().ok();
            for p in platforms {
                let matches = own.as_ref().is_some_and(|o| {
                    o.os == p.os
                        && o.architecture == p.architecture
                        && (p.variant.is_none() || p.variant == o.variant)
                });
                if !matches {
                    return Err(CatalogBuildError::BasePlatform {
                        base: base.to_string(),
                        platform: p.to_string(),
                        available: image.platform(),
                    });
                }
            }
            let pj = match &own {
                Some(p) => platform_json(p),
                None => platform_json(&Platform::default()),
            };
            return Ok((vec![(image, pj)], false));
        }
        Err(index) => index,
    };
    let crate::image::ImageOrIndex::Index(index) = &opened.value else {
        return Err(CatalogBuildError::EmptyBase(base.to_string()));
    };
    let image_error = |e: crate::image::ImageError| wrap(e.into());
    let all = index.entries().map_err(image_error)?;
    let available = all
        .iter()
        .filter_map(|e| e.platform.as_ref().map(ToString::to_string))
        .collect::<Vec<_>>()
        .join(", ");
    let entries: Vec<_> = if platforms.is_empty() {
        let mut seen: Vec<Platform> = Vec::new();
        all.into_iter()
            .filter(|e| {
                e.platform.as_ref().is_some_and(|p| {
                    p.os != "unknown" && !seen.contains(p) && {
                        seen.push(p.clone());
                        true
                    }
                })
            })
            .collect()
    } else {
        let mut chosen = Vec::new();
        for p in dedup(platforms) {
            let entry = index.entry_for(&p).map_err(image_error)?.ok_or_else(|| {
                CatalogBuildError::BasePlatform {
                    base: base.to_string(),
                    platform: p.to_string(),
                    available: available.clone(),
                }
            })?;
            chosen.push(entry);
        }
        chosen
    };
    if entries.is_empty() {
        return Err(CatalogBuildError::EmptyBase(base.to_string()));
    }
    let mut out = Vec::new();
    for e in entries {
        let image = opened.image(&e.descriptor).map_err(wrap)?;
        let pj = e
            .platform_json
            .clone()
            .or_else(|| e.platform.as_ref().map(platform_json))
            .unwrap_or_else(|| platform_json(&Platform::default()));
        out.push((image, pj));
    }
    Ok((out, true))
}
