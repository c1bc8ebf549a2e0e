//! What `catalog serve` keeps in memory to answer every point query without converting a
//! bundle again: built once at start, in parallel, from the [`ServeModel`].
//!
//! - per catalog bundle, the channel-independent `api.Bundle` without its CSV (name, package,
//!   image, version, provided and required APIs, dependencies, properties, deprecation), already
//!   in wire form: a GetBundle or a ListBundles message is a copy of it plus the channel entry's
//!   fields; this is small (the CSV metadata, most of a catalog's bytes, is not in it);
//! - the names each bundle replaces or skips, to the channel entries that do
//!   (GetChannelEntriesThatReplace), and each provided API to the bundles that provide it
//!   (the three *Provide* RPCs), in the order opm's loops produce them;
//! - the CSV current opm synthesizes from `olm.csv.metadata` is made while the catalog loads
//!   and kept compressed without its package's icon ([`super::model::CompactMetadata`]): an
//!   answer with a CSV decompresses it and copies the package's icon in, never synthesizes.
//!
//! The README's serving section has the measurements and the alternatives measured.

use super::api;
use super::model::{CacheBundle, CacheChannel, CachePackage, PackageIndex, ServeModel};
use super::store::to_wire;
use crate::gocompat::quote::go_quote;
use prost::Message as _;
use std::collections::{BTreeSet, HashMap};

/// (group, version, kind).
pub type Gvk = (String, String, String);

/// The serving index of one catalog (see the module documentation).
#[derive(Debug)]
pub struct ServeIndex {
    model: ServeModel,
    /// Per catalog bundle: its `api.Bundle` without channel fields and CSV, encoded (a few
    /// hundred bytes, where the message's many small strings took several times that), or
    /// the text of the error its conversion gives.
    base: Vec<Result<Box<[u8]>, String>>,
    /// Every (channel, package, bundle) in ListBundles order (current opm's B-tree key).
    list_order: Vec<(String, String, String)>,
    /// Name replaced or skipped -> the GetChannelEntriesThatReplace answer.
    replaced: HashMap<String, Vec<api::ChannelEntry>>,
    /// Provided API -> (package, channel, bundle) of every membership providing it, in
    /// (package, channel, bundle) order.
    providers: HashMap<Gvk, Vec<(String, String, String)>>,
    /// opm's provider search reads every stored bundle: the first that fails to convert (in
    /// ListBundles order) fails every *Provide* call.
    provide_error: Option<String>,
}

impl ServeIndex {
    /// Builds the index of `model` (bundles converted on every core).
    pub fn new(mut model: ServeModel) -> ServeIndex {
        let n = model.catalog_bundle_count();
        let base = crate::parallel::map_indexed(n, crate::parallel::cores(), None, |bi| {
            model
                .bundle_base(bi)
                .map(|b| to_wire(b).encode_to_vec().into_boxed_slice())
                .map_err(|e| e.to_string())
        });
        let index = model.index();
        let mut list_order = Vec::with_capacity(model.entry_count());
        let mut replaced: HashMap<String, Vec<api::ChannelEntry>> = HashMap::new();
        let mut providers: HashMap<Gvk, Vec<(String, String, String)>> = HashMap::new();
        for p in index.values() {
            for c in p.channels.values() {
                for b in c.bundles.values() {
                    list_order.push((c.name.clone(), p.name.clone(), b.name.clone()));
                    let entry = || api::ChannelEntry {
                        package_name: p.name.clone(),
                        channel_name: c.name.clone(),
                        bundle_name: b.name.clone(),
                        replaces: b.replaces.clone(),
                    };
                    replaced
                        .entry(b.replaces.clone())
                        .or_default()
                        .push(entry());
                    for s in b.skips() {
                        if *s != b.replaces {
                            replaced.entry(s.clone()).or_default().push(entry());
                        }
                    }
                    if let Some(Ok(wire)) = base
                        .get(model.bundle_index(b))
                        .map(|r| r.as_deref().map(api::Bundle::decode))
                        && let Ok(wire) = wire
                    {
                        let gvks: BTreeSet<Gvk> = wire
                            .provided_apis
                            .iter()
                            .map(|g| (g.group.clone(), g.version.clone(), g.kind.clone()))
                            .collect();
                        for g in gvks {
                            providers.entry(g).or_default().push((
                                p.name.clone(),
                                c.name.clone(),
                                b.name.clone(),
                            ));
                        }
                    }
                }
            }
        }
        list_order.sort();
        let provide_error = list_order.iter().find_map(|(ch, pkg, name)| {
            let b = index
                .get(pkg)
                .and_then(|p| p.channels.get(ch))
                .and_then(|c| c.bundles.get(name))?;
            match base.get(model.bundle_index(b)) {
                Some(Err(e)) => Some(format!("get bundle {}: {e}", go_quote(name))),
                _ => None,
            }
        });
        model.drop_encoded();
        ServeIndex {
            model,
            base,
            list_order,
            replaced,
            providers,
            provide_error,
        }
    }

    /// The package index (opm's `packageIndex`).
    pub fn index(&self) -> &PackageIndex {
        self.model.index()
    }

    /// The model the index was built from, without what the index holds encoded
    /// ([`ServeModel::drop_encoded`]): its bundles convert no longer.
    pub fn model(&self) -> &ServeModel {
        &self.model
    }

    /// Every (channel, package, bundle) in ListBundles order.
    pub fn list_order(&self) -> &[(String, String, String)] {
        &self.list_order
    }

    /// The GetChannelEntriesThatReplace answer for `name` (empty when nothing replaces it).
    pub fn entries_that_replace(&self, name: &str) -> &[api::ChannelEntry] {
        self.replaced.get(name).map_or(&[], Vec::as_slice)
    }

    /// (package, channel, bundle) of every membership providing `gvk`, in index order; or the
    /// error every provider search gives.
    pub fn providers(&self, gvk: &Gvk) -> Result<&[(String, String, String)], String> {
        if let Some(e) = &self.provide_error {
            return Err(e.clone());
        }
        Ok(self.providers.get(gvk).map_or(&[], Vec::as_slice))
    }

    /// The `api.Bundle` of one membership: with the channel entry's `replaces` and `skips`
    /// when `edges` (ListBundles), blanked otherwise (opm's `getTrimmedBundle`); with
    /// `csvJson` and `object` when `csv`.
    pub fn bundle(
        &self,
        pkg: &CachePackage,
        cb: &CacheBundle,
        edges: bool,
        csv: bool,
    ) -> Result<api::Bundle, String> {
        let bi = self.model.bundle_index(cb);
        let mut b = match self.base.get(bi) {
            Some(Ok(b)) => api::Bundle::decode(&b[..]).map_err(|e| e.to_string())?,
            Some(Err(e)) => return Err(e.clone()),
            None => {
                return Err(format!(
                    "package {}, channel {}, bundle {} not found",
                    go_quote(&cb.package),
                    go_quote(&cb.channel),
                    go_quote(&cb.name)
                ));
            }
        };
        b.channel_name = cb.channel.clone();
        b.skip_range = self.model.skip_range(cb).to_string();
        if edges {
            b.replaces = cb.replaces.clone();
            b.skips = cb.skips().to_vec();
        }
        if csv {
            let (csv_json, object) = self.csv(pkg, bi)?;
            b.csv_json = csv_json;
            b.object = object;
        }
        Ok(b)
    }

    /// `csvJson` and `object` of one membership's bundle.
    pub fn csv_of(
        &self,
        pkg: &CachePackage,
        cb: &CacheBundle,
    ) -> Result<(String, Vec<String>), String> {
        self.csv(pkg, self.model.bundle_index(cb))
    }

    /// `csvJson` and `object` of catalog bundle `bi`.
    fn csv(&self, pkg: &CachePackage, bi: usize) -> Result<(String, Vec<String>), String> {
        self.model.bundle_csv(pkg, bi).map_err(|e| e.to_string())
    }

    /// Looks up a channel of a package.
    pub fn channel(&self, pkg: &str, ch: &str) -> Option<(&CachePackage, &CacheChannel)> {
        let p = self.index().get(pkg)?;
        Some((p, p.channels.get(ch)?))
    }
}
