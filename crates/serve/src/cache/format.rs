//! What every cache module shares, below them all: which format a cache is written in, with
//! the file modes opm gives each, what the stored bundles hold by opm version, and which blobs
//! of other schemas are stored under opm's name rule. Why a file of its own: the JSON writer
//! calls the pogreb writer and both read the profile, so these sit beneath the three instead of
//! in one of them (no import circle between them), and both writers store the same blobs.

use super::error::CacheError;
use crate::catalog::model::{DeclarativeConfig, Meta, SCHEMA_PACKAGE};

/// Mode of the cache's folders (opm's `jsonCacheModeDir`).
pub const CACHE_DIR_MODE: u32 = 0o750;
/// Mode of the cache's files (opm's `jsonCacheModeFile`).
pub const CACHE_FILE_MODE: u32 = 0o640;
/// Mode of the cache's folders (opm's `pogrebV1CacheModeDir`).
pub const POGREB_DIR_MODE: u32 = 0o770;
/// Mode of the cache's files (opm's `pogrebV1CacheModeFile`).
pub const POGREB_FILE_MODE: u32 = 0o660;

/// Which of opm's serve-cache formats `catalog build` writes: JSON (read by every opm since
/// v1.26.3) or pogreb (what opm v1.41 and later write themselves; opm before v1.41 cannot
/// read it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheFormat {
    /// `cache/` and `digest` ([`super::write::write_cache`]).
    #[default]
    Json,
    /// `pogreb.v1/` ([`super::pogreb`]).
    Pogreb,
}

impl CacheFormat {
    /// Folder and file modes opm gives this format.
    pub fn modes(self) -> (u32, u32) {
        match self {
            CacheFormat::Json => (CACHE_DIR_MODE, CACHE_FILE_MODE),
            CacheFormat::Pogreb => (POGREB_DIR_MODE, POGREB_FILE_MODE),
        }
    }
}

/// What a stored `api.Bundle` and the package index hold, by opm version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Semantics {
    /// opm v1.28+ (#1094): `olm.csv.metadata` is left out of `properties` and a CSV is
    /// synthesized from it when the bundle has no CSV object. Before: kept, none synthesized.
    pub csv_from_metadata: bool,
    /// opm v1.32+ (#1161): `olm.deprecations` fill the deprecation fields.
    pub deprecations: bool,
    /// opm v1.69+ (#1981): blobs of other schemas are stored (`metas/`), and one whose schema or
    /// package is outside opm's pattern fails the build.
    pub metas: bool,
}

impl Semantics {
    /// Current opm's (what olmpack serves).
    pub const CURRENT: Semantics = Semantics {
        csv_from_metadata: true,
        deprecations: true,
        metas: true,
    };
}

/// `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`, opm's check on the schema and package of other blobs.
fn valid_component(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The blobs of other schemas the opm of `semantics` stores (`metas/<schema>/<package>`; none
/// before v1.69), in catalog order, each with the package it is filed under (a package blob
/// under its own name). One whose schema or package is outside opm's pattern is an error where
/// opm's build fails; both writers stop there, after the blobs before it, as opm does. Written
/// once so the JSON and the pogreb cache store the same blobs under the same rule.
pub fn stored_metas(
    config: &DeclarativeConfig,
    semantics: Semantics,
) -> impl Iterator<Item = Result<(&Meta, &str), CacheError>> {
    let others: &[Meta] = if semantics.metas { &config.others } else { &[] };
    others.iter().map(|meta| {
        let package = if meta.schema == SCHEMA_PACKAGE {
            &meta.name
        } else {
            &meta.package
        };
        if !valid_component(&meta.schema) || (!package.is_empty() && !valid_component(package)) {
            return Err(CacheError::Name(format!(
                "a blob of schema {:?} (package {:?}) cannot be stored: opm requires both to match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$",
                meta.schema, package
            )));
        }
        Ok((meta, package.as_str()))
    })
}
