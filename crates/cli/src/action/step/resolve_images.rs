//! Image references resolved to digests, the step `bundle pin` takes and any command given
//! `--mirror-config` can: a [`MirrorConfig`] says where each reference may be read, and each
//! place is opened here as a registry repository (through the shared connection options) or,
//! with `--layout`, as an OCI layout folder `DIR/REGISTRY/REPOSITORY` (tags as
//! `org.opencontainers.image.ref.name`). `--offline` leaves only the layouts.
//!
//! It joins the two sides the crates keep apart: the mirror rules and the resolver are the OCI
//! crate's ([`crate::mirror_config`]), the references come from the bundle model.

use crate::mirror_config::resolve::{self, Opener, ResolveError, Resolved};
use crate::mirror_config::{MirrorConfig, PullSource};
use crate::reference::Reference;
use crate::registry::Repository;
use crate::transport::RegistryOptions;
use crate::transport::layout_repository::LayoutRepository;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where references may be read from.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The mirror rules (empty: every reference is read where it says).
    pub mirrors: MirrorConfig,
    /// Registry connection options.
    pub registry: RegistryOptions,
    /// Folders of OCI layouts, one per repository (`DIR/REGISTRY/REPOSITORY`), tried before
    /// the registry at each place.
    pub layouts: Vec<PathBuf>,
    /// No registry is contacted: layouts only.
    pub offline: bool,
}

struct PlaceOpener<'a>(&'a Places);

impl Opener for PlaceOpener<'_> {
    fn open(&self, source: &PullSource) -> Result<Box<dyn Repository>, String> {
        let r = &source.reference;
        for root in &self.0.layouts {
            let dir = root.join(&r.registry).join(&r.repository);
            if dir.join("index.json").is_file() {
                return Ok(Box::new(LayoutRepository::new(&dir)));
            }
        }
        if self.0.offline {
            return Err(if self.0.layouts.is_empty() {
                "--offline and no --layout".to_string()
            } else {
                format!(
                    "not in any --layout folder (looked for {}/{})",
                    r.registry, r.repository
                )
            });
        }
        let mut options = self.0.registry.clone();
        if source.insecure {
            options.client.insecure = true;
        }
        options
            .repository(r)
            .map(|remote| Box::new(remote) as Box<dyn Repository>)
            .map_err(|e| e.to_string())
    }
}

/// Each reference of `references` resolved (each once), or why not.
pub fn resolve_all<'a>(
    places: &Places,
    references: impl IntoIterator<Item = &'a Reference>,
) -> BTreeMap<String, Result<Resolved, ResolveError>> {
    let opener = PlaceOpener(places);
    let mut out = BTreeMap::new();
    for r in references {
        out.entry(r.to_string())
            .or_insert_with(|| resolve::resolve(&places.mirrors, r, &opener));
    }
    out
}
