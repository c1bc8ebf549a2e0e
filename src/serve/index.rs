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
//! - the one costly conversion, the CSV current opm synthesizes from `olm.csv.metadata`, is made
//!   when a bundle is first asked for and kept, compressed, in a least-recently-used cache within
//!   a memory budget ([`CSV_CACHE_BUDGET`]): OLM's packageserver asks for the same channel heads
//!   on every catalog refresh.
//!
//! Why not precompute every CSV at start: the synthesized CSVs are as large as the metadata
//! they come from, so keeping all of them would double the memory of a catalog whose metadata
//! is already loaded, for calls (GetBundle of a non-head bundle) OLM rarely makes. The README's
//! serving section has the measurements.

use super::api;
use super::model::{CacheBundle, CacheChannel, CachePackage, PackageIndex, ServeModel};
use super::store::to_wire;
use crate::gocompat::quote::go_quote;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// Bytes of synthesized CSVs (compressed) kept between calls: 8 MiB hold about 40 MB of CSVs,
/// every channel head of a catalog of a few hundred packages, so the packageserver's sweep
/// converts each head once.
pub const CSV_CACHE_BUDGET: usize = 8 << 20;

/// (group, version, kind).
pub type Gvk = (String, String, String);

/// The serving index of one catalog (see the module documentation).
#[derive(Debug)]
pub struct ServeIndex {
    model: ServeModel,
    /// Per catalog bundle: its `api.Bundle` without channel fields and CSV, or the text of the
    /// error its conversion gives.
    base: Vec<Result<api::Bundle, String>>,
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
    csv_cache: Mutex<CsvCache>,
}

impl ServeIndex {
    /// Builds the index of `model` (bundles converted on every core).
    pub fn new(model: ServeModel) -> ServeIndex {
        ServeIndex::with_budget(model, CSV_CACHE_BUDGET)
    }

    /// [`ServeIndex::new`] with another CSV cache budget (bytes; 0 keeps none).
    pub fn with_budget(model: ServeModel, csv_budget: usize) -> ServeIndex {
        let n = model.catalog_bundle_count();
        let base = crate::parallel::map_indexed(n, crate::parallel::cores(), None, |bi| {
            model
                .bundle_base(bi)
                .map(to_wire)
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
                    if let Some(Ok(wire)) = base.get(model.bundle_index(b)) {
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
        ServeIndex {
            model,
            base,
            list_order,
            replaced,
            providers,
            provide_error,
            csv_cache: Mutex::new(CsvCache::new(csv_budget)),
        }
    }

    /// The package index (opm's `packageIndex`).
    pub fn index(&self) -> &PackageIndex {
        self.model.index()
    }

    /// The model the index was built from.
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
            Some(Ok(b)) => b.clone(),
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

    /// `csvJson` and `object` of catalog bundle `bi`, a synthesized CSV from the cache when
    /// it is there.
    fn csv(&self, pkg: &CachePackage, bi: usize) -> Result<(String, Vec<String>), String> {
        if !self.model.synthesizes_csv(bi) {
            return self.model.bundle_csv(pkg, bi).map_err(|e| e.to_string());
        }
        let objects = |csv: &str| -> Vec<String> {
            match self.model.config().bundles.get(bi) {
                Some(b) if !b.objects.is_empty() => b.objects.clone(),
                _ => vec![csv.to_string()],
            }
        };
        let hit = self.lock_cache().get(bi);
        if let Some(csv) = hit.as_deref().and_then(inflate) {
            let object = objects(&csv);
            return Ok((csv, object));
        }
        let (csv_json, object) = self.model.bundle_csv(pkg, bi).map_err(|e| e.to_string())?;
        if let Some(packed) = deflate(&csv_json) {
            self.lock_cache().put(bi, packed);
        }
        Ok((csv_json, object))
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, CsvCache> {
        // A panic while holding the lock leaves a consistent cache (every step is complete).
        self.csv_cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Bytes of synthesized CSVs held now (for the benchmark and tests).
    pub fn csv_cache_bytes(&self) -> usize {
        self.lock_cache().used
    }

    /// Looks up a channel of a package.
    pub fn channel(&self, pkg: &str, ch: &str) -> Option<(&CachePackage, &CacheChannel)> {
        let p = self.index().get(pkg)?;
        Some((p, p.channels.get(ch)?))
    }
}

/// Raw deflate at the fastest level: a synthesized CSV in a fifth of its size.
fn deflate(text: &str) -> Option<Arc<[u8]>> {
    use std::io::Write as _;
    let mut z = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(text.len() / 4),
        flate2::Compression::fast(),
    );
    z.write_all(text.as_bytes()).ok()?;
    z.finish().ok().map(Arc::from)
}

fn inflate(packed: &[u8]) -> Option<String> {
    use std::io::Read as _;
    let mut text = String::with_capacity(packed.len() * 6);
    flate2::read::DeflateDecoder::new(packed)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Synthesized CSVs (compressed) by catalog bundle, least recently used first out past the
/// budget.
#[derive(Debug)]
struct CsvCache {
    budget: usize,
    used: usize,
    tick: u64,
    entries: HashMap<usize, (Arc<[u8]>, u64)>,
    /// tick of last use -> bundle.
    recency: BTreeMap<u64, usize>,
}

impl CsvCache {
    fn new(budget: usize) -> CsvCache {
        CsvCache {
            budget,
            used: 0,
            tick: 0,
            entries: HashMap::new(),
            recency: BTreeMap::new(),
        }
    }

    fn get(&mut self, bi: usize) -> Option<Arc<[u8]>> {
        self.tick += 1;
        let tick = self.tick;
        let (csv, last) = self.entries.get_mut(&bi)?;
        self.recency.remove(last);
        *last = tick;
        self.recency.insert(tick, bi);
        Some(csv.clone())
    }

    fn put(&mut self, bi: usize, csv: Arc<[u8]>) {
        if csv.len() > self.budget || self.entries.contains_key(&bi) {
            return;
        }
        self.tick += 1;
        self.used += csv.len();
        self.entries.insert(bi, (csv, self.tick));
        self.recency.insert(self.tick, bi);
        while self.used > self.budget {
            let Some((_, old)) = self.recency.pop_first() else {
                break;
            };
            if let Some((csv, _)) = self.entries.remove(&old) {
                self.used -= csv.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cache_keeps_the_most_recent_within_its_budget() {
        let mut c = CsvCache::new(10);
        let b = |t: &str| -> Arc<[u8]> { Arc::from(t.as_bytes()) };
        c.put(1, b("aaaa"));
        c.put(2, b("bbbb"));
        assert!(c.get(1).is_some()); // 1 is now the most recent
        c.put(3, b("cccc")); // 12 bytes: 2 goes
        assert!(c.get(2).is_none());
        assert_eq!(c.get(1).as_deref(), Some(&b"aaaa"[..]));
        assert_eq!(c.get(3).as_deref(), Some(&b"cccc"[..]));
        assert_eq!(c.used, 8);
        c.put(4, b(&"x".repeat(11))); // larger than the budget: not kept
        assert!(c.get(4).is_none());
        assert_eq!(c.used, 8);
        let csv = "{\"kind\":\"ClusterServiceVersion\"}".repeat(100);
        assert_eq!(deflate(&csv).and_then(|p| inflate(&p)), Some(csv));
    }
}
