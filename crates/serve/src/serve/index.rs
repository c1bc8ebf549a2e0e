//! What `catalog serve` keeps in memory to answer every point query without converting a
//! bundle again: built once at start, in parallel, from the [`ServeModel`].
//!
//! - the package index in compact form: every package, channel and channel membership is a
//!   small record of numbers, and every name (package, channel, bundle, replaced or skipped
//!   name, skip range, API group, version and kind) is stored once in one name table and
//!   referred to by its number. A catalog repeats the same names many times (a bundle's name is
//!   its entry in each channel, the `replaces` of the next entry, a key of the replaced-names
//!   table...), and one allocation per repetition was most of the index's memory;
//! - per catalog bundle, the channel-independent `api.Bundle` without its CSV (name, package,
//!   image, version, provided and required APIs, dependencies, properties, deprecation), already
//!   in wire form, all of them end to end in one buffer: a GetBundle or a ListBundles message
//!   is a copy of it plus the channel entry's fields;
//! - the names each bundle replaces or skips, to the memberships that do
//!   (GetChannelEntriesThatReplace), and each provided API to the memberships that provide it
//!   (the three *Provide* RPCs), in the order opm's loops produce them; GetDefaultBundleThatProvides'
//!   choice is made here once per API;
//! - the CSV current opm synthesizes from `olm.csv.metadata` is made while the catalog loads
//!   and kept compressed without its package's icon ([`super::model::CompactMetadata`]): an
//!   answer with a CSV decompresses it and copies the package's icon in, never synthesizes.
//!
//! docs/design/serving.md has the measurements and the alternatives measured.

use super::api;
use super::model::{CachePackage, PackageIndex, ServeModel};
use super::store::to_wire;
use crate::gocompat::quote::go_quote;
use prost::Message as _;
use std::collections::{BTreeSet, HashMap};

/// (group, version, kind).
pub type Gvk = (String, String, String);

/// A name's number in the [`Names`] table (0 is the empty name).
type Name = u32;

/// Every distinct name once, end to end in one text.
#[derive(Debug, Default)]
struct Names {
    text: String,
    /// Name `n` is `text[ends[n - 1]..ends[n]]` (`ends[0] == 0`: name 0 is empty).
    ends: Vec<u32>,
}

impl Names {
    fn get(&self, n: Name) -> &str {
        let n = n as usize;
        match (
            n.checked_sub(1).and_then(|p| self.ends.get(p)),
            self.ends.get(n),
        ) {
            (Some(&from), Some(&to)) => self.text.get(from as usize..to as usize).unwrap_or(""),
            _ => "",
        }
    }
}

/// Builds a [`Names`] table, one number per distinct text.
struct Interner<'a> {
    names: Names,
    ids: HashMap<&'a str, Name>,
    /// Names not borrowed from the package index (the provided APIs' parts, decoded from
    /// the bundles' encodings): few and distinct.
    owned: HashMap<Box<str>, Name>,
}

impl<'a> Interner<'a> {
    fn new() -> Self {
        Interner {
            names: Names {
                text: String::new(),
                ends: vec![0],
            },
            ids: HashMap::from([("", 0)]),
            owned: HashMap::new(),
        }
    }

    fn push(&mut self, s: &str) -> Name {
        self.names.text.push_str(s);
        let n = to_u32(self.names.ends.len());
        self.names.ends.push(to_u32(self.names.text.len()));
        n
    }

    /// [`Interner::id`] of a text that does not live as long as the interner.
    fn id_owned(&mut self, s: &str) -> Name {
        if let Some(&n) = self.ids.get(s).or_else(|| self.owned.get(s)) {
            return n;
        }
        let n = self.push(s);
        self.owned.insert(s.into(), n);
        n
    }

    fn id(&mut self, s: &'a str) -> Name {
        if let Some(&n) = self.ids.get(s).or_else(|| self.owned.get(s)) {
            return n;
        }
        let n = self.push(s);
        self.ids.insert(s, n);
        n
    }

    fn finish(mut self) -> Names {
        self.names.text.shrink_to_fit();
        self.names.ends.shrink_to_fit();
        self.names
    }
}

/// Indexes and offsets are kept as `u32`: a catalog with 4 billion names or bytes of them is
/// far beyond what a process serves.
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A package: its own fields (for GetPackage and the CSV's icon and description, its channels
/// map left empty) and its channels, a range of [`ServeIndex::channels`].
#[derive(Debug)]
struct Package {
    fields: CachePackage,
    channels: (u32, u32),
}

/// A channel: its name, head (a membership), deprecation and memberships, a range of
/// [`ServeIndex::members`] sorted by bundle name.
#[derive(Debug)]
struct Channel {
    package: u32,
    name: Name,
    head: u32,
    deprecation: Option<Box<str>>,
    members: (u32, u32),
}

/// A channel membership (opm's `cBundle`): the channel's entry for one catalog bundle.
#[derive(Debug)]
struct Member {
    channel: u32,
    /// The catalog bundle (shared by every channel the bundle is in).
    bundle: u32,
    name: Name,
    replaces: Name,
    /// A range of [`ServeIndex::skips`].
    skips: (u32, u32),
    skip_range: Name,
}

/// The serving index of one catalog (see the module documentation).
#[derive(Debug)]
pub struct ServeIndex {
    model: ServeModel,
    names: Names,
    /// By name.
    packages: Vec<Package>,
    /// By package, then name.
    channels: Vec<Channel>,
    /// By channel, then bundle name: (package, channel, bundle) byte order.
    members: Vec<Member>,
    skips: Vec<Name>,
    /// Per catalog bundle: its `api.Bundle` without channel fields and CSV, encoded, as a
    /// range of `base_bytes`; or the text of the error its conversion gives.
    base: Vec<Result<(u32, u32), Box<str>>>,
    base_bytes: Vec<u8>,
    /// Every membership in ListBundles order (current opm's B-tree key: channel, package,
    /// bundle).
    list_order: Vec<u32>,
    /// (replaced or skipped name, range of `replaced_members`), sorted by name: the
    /// memberships of the GetChannelEntriesThatReplace answer, in answer order.
    replaced: Vec<(Name, (u32, u32))>,
    replaced_members: Vec<u32>,
    /// (group, version, kind, range of `provider_members`, GetDefaultBundleThatProvides'
    /// membership), sorted by (group, version, kind): the memberships providing the API in
    /// (package, channel, bundle) order.
    providers: Vec<Provided>,
    provider_members: Vec<u32>,
    /// opm's provider search reads every stored bundle: the first that fails to convert (in
    /// ListBundles order) fails every *Provide* call.
    provide_error: Option<String>,
}

/// One provided API (see [`ServeIndex::providers`]).
#[derive(Debug)]
struct Provided {
    gvk: [Name; 3],
    members: (u32, u32),
    /// The first channel head among the providers whose channel is its package's default.
    default: Option<u32>,
}

fn range<T>(v: &[T], (from, to): (u32, u32)) -> &[T] {
    v.get(from as usize..to as usize).unwrap_or(&[])
}

/// A membership as the index answers about it.
#[derive(Debug, Clone, Copy)]
pub struct Membership<'a> {
    index: &'a ServeIndex,
    id: u32,
    member: &'a Member,
}

impl<'a> Membership<'a> {
    /// The bundle's name.
    pub fn name(&self) -> &'a str {
        self.index.names.get(self.member.name)
    }

    /// The name this entry replaces (empty when none).
    pub fn replaces(&self) -> &'a str {
        self.index.names.get(self.member.replaces)
    }

    /// The names this entry skips.
    pub fn skips(&self) -> impl Iterator<Item = &'a str> + 'a {
        let names = &self.index.names;
        range(&self.index.skips, self.member.skips)
            .iter()
            .map(move |&n| names.get(n))
    }

    /// The channel's name.
    pub fn channel(&self) -> ChannelRef<'a> {
        self.index.channel_ref(self.member.channel)
    }

    /// Whether this is its channel's head.
    pub fn is_head(&self) -> bool {
        self.index
            .channels
            .get(self.member.channel as usize)
            .is_some_and(|c| c.head == self.id)
    }

    /// The ChannelEntry of this membership with `replaces`.
    pub fn entry(&self, replaces: &str) -> api::ChannelEntry {
        let ch = self.channel();
        api::ChannelEntry {
            package_name: ch.package().name.clone(),
            channel_name: ch.name().to_string(),
            bundle_name: self.name().to_string(),
            replaces: replaces.to_string(),
        }
    }
}

/// A channel as the index answers about it.
#[derive(Debug, Clone, Copy)]
pub struct ChannelRef<'a> {
    index: &'a ServeIndex,
    channel: &'a Channel,
}

impl<'a> ChannelRef<'a> {
    /// The channel's name.
    pub fn name(&self) -> &'a str {
        self.index.names.get(self.channel.name)
    }

    /// The package's own fields.
    pub fn package(&self) -> &'a CachePackage {
        self.index
            .packages
            .get(self.channel.package as usize)
            .map(|p| &p.fields)
            .unwrap_or(&EMPTY_PACKAGE)
    }

    /// The channel head's name.
    pub fn head(&self) -> &'a str {
        self.index
            .members
            .get(self.channel.head as usize)
            .map_or("", |m| self.index.names.get(m.name))
    }

    /// The channel's deprecation message.
    pub fn deprecation(&self) -> Option<&'a str> {
        self.channel.deprecation.as_deref()
    }

    /// Every membership of the channel, by bundle name.
    pub fn members(&self) -> impl Iterator<Item = Membership<'a>> + 'a {
        let index = self.index;
        let (from, to) = self.channel.members;
        (from..to).filter_map(move |id| index.membership(id))
    }

    /// The channel's membership of bundle `name`.
    pub fn member(&self, name: &str) -> Option<Membership<'a>> {
        let index = self.index;
        let (from, _) = self.channel.members;
        let members = range(&index.members, self.channel.members);
        let i = members
            .binary_search_by(|m| index.names.get(m.name).cmp(name))
            .ok()?;
        index.membership(from + to_u32(i))
    }
}

static EMPTY_PACKAGE: CachePackage = CachePackage {
    name: String::new(),
    description: String::new(),
    icon: None,
    default_channel: String::new(),
    channels: std::collections::BTreeMap::new(),
    deprecation: None,
};

impl ServeIndex {
    /// Builds the index of `model` (bundles converted on every core). The model keeps only
    /// what the CSV answers read ([`ServeModel::drop_encoded`]).
    pub fn new(mut model: ServeModel) -> ServeIndex {
        let n = model.catalog_bundle_count();
        let encoded = crate::parallel::map_indexed(n, crate::parallel::cores(), None, |bi| {
            model
                .bundle_base(bi)
                .map(|b| to_wire(b).encode_to_vec())
                .map_err(|e| e.to_string())
        });
        let mut base_bytes =
            Vec::with_capacity(encoded.iter().map(|r| r.as_ref().map_or(0, Vec::len)).sum());
        // Each encoding is freed as soon as it is copied into the one buffer.
        let base: Vec<Result<(u32, u32), Box<str>>> = encoded
            .into_iter()
            .map(|r| match r {
                Ok(bytes) => {
                    let from = to_u32(base_bytes.len());
                    base_bytes.extend_from_slice(&bytes);
                    Ok((from, to_u32(base_bytes.len())))
                }
                Err(e) => Err(e.into_boxed_str()),
            })
            .collect();

        let index: PackageIndex = model.take_index();
        let mut names = Interner::new();
        let mut packages = Vec::with_capacity(index.len());
        let mut channels = Vec::new();
        let mut members: Vec<Member> = Vec::with_capacity(model.entry_count());
        let mut skips = Vec::new();
        for p in index.values() {
            let first_channel = to_u32(channels.len());
            for c in p.channels.values() {
                let channel = to_u32(channels.len());
                let first_member = to_u32(members.len());
                let mut head = u32::MAX;
                for b in c.bundles.values() {
                    if b.name == c.head {
                        head = to_u32(members.len());
                    }
                    let first_skip = to_u32(skips.len());
                    skips.extend(b.skips().iter().map(|s| names.id(s)));
                    members.push(Member {
                        channel,
                        bundle: to_u32(model.bundle_index(b)),
                        name: names.id(&b.name),
                        replaces: names.id(&b.replaces),
                        skips: (first_skip, to_u32(skips.len())),
                        skip_range: names.id_owned(model.skip_range(b)),
                    });
                }
                channels.push(Channel {
                    package: to_u32(packages.len()),
                    name: names.id(&c.name),
                    head,
                    deprecation: c
                        .deprecation
                        .as_ref()
                        .map(|d| d.message.clone().into_boxed_str()),
                    members: (first_member, to_u32(members.len())),
                });
            }
            packages.push(Package {
                fields: CachePackage {
                    name: p.name.clone(),
                    description: p.description.clone(),
                    icon: p.icon.clone(),
                    default_channel: p.default_channel.clone(),
                    channels: Default::default(),
                    deprecation: p.deprecation.clone(),
                },
                channels: (first_channel, to_u32(channels.len())),
            });
        }

        // The loaded catalog's channels and what the encodings hold are no longer needed.
        model.drop_encoded();

        // Name replaced or skipped -> memberships, and provided API -> memberships, both in
        // (package, channel, bundle) order.
        let mut replaced_lists: HashMap<Name, Vec<u32>> = HashMap::new();
        let mut provided_lists: HashMap<[Name; 3], Vec<u32>> = HashMap::new();
        for (id, m) in members.iter().enumerate() {
            let id = to_u32(id);
            replaced_lists.entry(m.replaces).or_default().push(id);
            for &s in range(&skips, m.skips) {
                if s != m.replaces {
                    replaced_lists.entry(s).or_default().push(id);
                }
            }
            let Some(Ok(r)) = base.get(m.bundle as usize) else {
                continue;
            };
            let Ok(wire) = api::Bundle::decode(range(&base_bytes, *r)) else {
                continue;
            };
            let gvks: BTreeSet<[Name; 3]> = wire
                .provided_apis
                .iter()
                .map(|g| {
                    [
                        names.id_owned(&g.group),
                        names.id_owned(&g.version),
                        names.id_owned(&g.kind),
                    ]
                })
                .collect();
            for g in gvks {
                provided_lists.entry(g).or_default().push(id);
            }
        }
        let names = names.finish();
        drop(index);

        let mut replaced: Vec<(Name, (u32, u32))> = Vec::with_capacity(replaced_lists.len());
        let mut replaced_members = Vec::new();
        for (name, list) in replaced_lists {
            let from = to_u32(replaced_members.len());
            replaced_members.extend(list);
            replaced.push((name, (from, to_u32(replaced_members.len()))));
        }
        replaced.sort_unstable_by(|a, b| names.get(a.0).cmp(names.get(b.0)));
        replaced_members.shrink_to_fit();

        let mut providers: Vec<Provided> = Vec::with_capacity(provided_lists.len());
        let mut provider_members = Vec::new();
        for (gvk, list) in provided_lists {
            // GetDefaultBundleThatProvides: the latest entries (channel heads) sorted by
            // package name, the first in its package's default channel. The memberships are
            // already in package order.
            let default = list.iter().copied().find(|&id| {
                let Some(c) = members
                    .get(id as usize)
                    .and_then(|m| channels.get(m.channel as usize))
                else {
                    return false;
                };
                c.head == id
                    && packages
                        .get(c.package as usize)
                        .is_some_and(|p| names.get(c.name) == p.fields.default_channel.as_str())
            });
            let from = to_u32(provider_members.len());
            provider_members.extend(list);
            providers.push(Provided {
                gvk,
                members: (from, to_u32(provider_members.len())),
                default,
            });
        }
        let gvk_text = |g: &[Name; 3]| (names.get(g[0]), names.get(g[1]), names.get(g[2]));
        providers.sort_unstable_by(|a, b| gvk_text(&a.gvk).cmp(&gvk_text(&b.gvk)));
        provider_members.shrink_to_fit();

        let list_key = |id: &u32| {
            let m = &members[*id as usize];
            let c = &channels[m.channel as usize];
            (
                names.get(c.name),
                packages[c.package as usize].fields.name.as_str(),
                names.get(m.name),
            )
        };
        let mut list_order: Vec<u32> = (0..to_u32(members.len())).collect();
        list_order.sort_by(|a, b| list_key(a).cmp(&list_key(b)));
        let provide_error = list_order.iter().find_map(|&id| {
            let m = members.get(id as usize)?;
            match base.get(m.bundle as usize) {
                Some(Err(e)) => Some(format!("get bundle {}: {e}", go_quote(names.get(m.name)))),
                _ => None,
            }
        });
        ServeIndex {
            model,
            names,
            packages,
            channels,
            members,
            skips,
            base,
            base_bytes,
            list_order,
            replaced,
            replaced_members,
            providers,
            provider_members,
            provide_error,
        }
    }

    fn membership(&self, id: u32) -> Option<Membership<'_>> {
        Some(Membership {
            index: self,
            id,
            member: self.members.get(id as usize)?,
        })
    }

    fn channel_ref(&self, id: u32) -> ChannelRef<'_> {
        static EMPTY: Channel = Channel {
            package: u32::MAX,
            name: 0,
            head: u32::MAX,
            deprecation: None,
            members: (0, 0),
        };
        ChannelRef {
            index: self,
            channel: self.channels.get(id as usize).unwrap_or(&EMPTY),
        }
    }

    /// The model the index was built from, without what the index holds
    /// ([`ServeModel::drop_encoded`]): its bundles convert no longer.
    pub fn model(&self) -> &ServeModel {
        &self.model
    }

    /// Every package name, sorted.
    pub fn package_names(&self) -> impl Iterator<Item = &str> {
        self.packages.iter().map(|p| p.fields.name.as_str())
    }

    /// A package's own fields and its channels (by name).
    pub fn package(&self, name: &str) -> Option<(&CachePackage, Vec<ChannelRef<'_>>)> {
        let i = self
            .packages
            .binary_search_by(|p| p.fields.name.as_str().cmp(name))
            .ok()?;
        let p = self.packages.get(i)?;
        let (from, to) = p.channels;
        Some((&p.fields, (from..to).map(|c| self.channel_ref(c)).collect()))
    }

    /// Whether package `name` exists.
    pub fn has_package(&self, name: &str) -> bool {
        self.packages
            .binary_search_by(|p| p.fields.name.as_str().cmp(name))
            .is_ok()
    }

    /// Looks up a channel of a package.
    pub fn channel(&self, pkg: &str, ch: &str) -> Option<ChannelRef<'_>> {
        let i = self
            .packages
            .binary_search_by(|p| p.fields.name.as_str().cmp(pkg))
            .ok()?;
        let p = self.packages.get(i)?;
        let (from, _) = p.channels;
        let chans = range(&self.channels, p.channels);
        let j = chans
            .binary_search_by(|c| self.names.get(c.name).cmp(ch))
            .ok()?;
        Some(self.channel_ref(from + to_u32(j)))
    }

    /// How many ListBundles messages there are.
    pub fn list_len(&self) -> usize {
        self.list_order.len()
    }

    /// The membership at `i` of the ListBundles order.
    pub fn listed(&self, i: usize) -> Option<Membership<'_>> {
        self.membership(*self.list_order.get(i)?)
    }

    /// The memberships of the GetChannelEntriesThatReplace answer for `name`, in answer order
    /// (none when nothing replaces it).
    pub fn replacing(&self, name: &str) -> impl Iterator<Item = Membership<'_>> {
        let list = self
            .replaced
            .binary_search_by(|(n, _)| self.names.get(*n).cmp(name))
            .ok()
            .and_then(|i| self.replaced.get(i))
            .map_or(&[][..], |(_, r)| range(&self.replaced_members, *r));
        list.iter().filter_map(|&id| self.membership(id))
    }

    fn provided(&self, (g, v, k): &Gvk) -> Option<&Provided> {
        let key = (g.as_str(), v.as_str(), k.as_str());
        let i = self
            .providers
            .binary_search_by(|p| {
                let t = (
                    self.names.get(p.gvk[0]),
                    self.names.get(p.gvk[1]),
                    self.names.get(p.gvk[2]),
                );
                t.cmp(&key)
            })
            .ok()?;
        self.providers.get(i)
    }

    /// Every membership providing `gvk`, in (package, channel, bundle) order; or the error
    /// every provider search gives.
    pub fn providers(&self, gvk: &Gvk) -> Result<Vec<Membership<'_>>, String> {
        if let Some(e) = &self.provide_error {
            return Err(e.clone());
        }
        let list = self
            .provided(gvk)
            .map_or(&[][..], |p| range(&self.provider_members, p.members));
        Ok(list.iter().filter_map(|&id| self.membership(id)).collect())
    }

    /// GetDefaultBundleThatProvides' membership for `gvk` (chosen when the index was built):
    /// `Ok(None)` when some channel head provides it but none in its package's default
    /// channel; `Err` with an empty text when no channel head provides it, or with the error
    /// every provider search gives.
    pub fn default_provider(&self, gvk: &Gvk) -> Result<Option<Membership<'_>>, String> {
        if let Some(e) = &self.provide_error {
            return Err(e.clone());
        }
        let p = self.provided(gvk);
        let any_head = p.is_some_and(|p| {
            range(&self.provider_members, p.members)
                .iter()
                .any(|&id| self.membership(id).is_some_and(|m| m.is_head()))
        });
        if !any_head {
            return Err(String::new());
        }
        Ok(p.and_then(|p| p.default).and_then(|id| self.membership(id)))
    }

    /// The `api.Bundle` of one membership: with the channel entry's `replaces` and `skips`
    /// when `edges` (ListBundles), blanked otherwise (opm's `getTrimmedBundle`); with
    /// `csvJson` and `object` when `csv`.
    pub fn bundle(&self, m: Membership<'_>, edges: bool, csv: bool) -> Result<api::Bundle, String> {
        let mut b = match self.base.get(m.member.bundle as usize) {
            Some(Ok(r)) => {
                api::Bundle::decode(range(&self.base_bytes, *r)).map_err(|e| e.to_string())?
            }
            Some(Err(e)) => return Err(e.to_string()),
            None => {
                let ch = m.channel();
                return Err(format!(
                    "package {}, channel {}, bundle {} not found",
                    go_quote(&ch.package().name),
                    go_quote(ch.name()),
                    go_quote(m.name())
                ));
            }
        };
        b.channel_name = m.channel().name().to_string();
        b.skip_range = self.names.get(m.member.skip_range).to_string();
        if edges {
            b.replaces = m.replaces().to_string();
            b.skips = m.skips().map(str::to_string).collect();
        }
        if csv {
            let (csv_json, object) = self.csv_of(m)?;
            b.csv_json = csv_json;
            b.object = object;
        }
        Ok(b)
    }

    /// `csvJson` and `object` of one membership's bundle.
    pub fn csv_of(&self, m: Membership<'_>) -> Result<(String, Vec<String>), String> {
        self.model
            .bundle_csv(m.channel().package(), m.member.bundle as usize)
            .map_err(|e| e.to_string())
    }
}

impl PartialEq for Membership<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.index, other.index) && self.id == other.id
    }
}
