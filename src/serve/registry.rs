//! The ten RPCs of `api.Registry` with the semantics of current opm (`pkg/cache/cache.go`,
//! `pkg/cache/pkgs.go`, `pkg/server/server.go`; SERVE.md A.4), over any [`Store`]: the package
//! index opm keeps in memory, plus a way to get the `api.Bundle` of one (package, channel,
//! bundle), converted when asked so the server never holds every bundle at once.
//!
//! opm answers every store failure with gRPC code `Unknown` and a plain text; the texts here are
//! opm's, character for character, because clients (and people) match on them.

use super::api;
use super::model::{CacheBundle, CacheChannel, CacheDeprecation, CachePackage, PackageIndex};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;
use tonic::{Request, Response, Status};

/// Where the registry server gets its data: opm's package index, and one bundle at a time.
pub trait Store: Send + Sync + 'static {
    /// The package index (built once at start).
    fn index(&self) -> &PackageIndex;
    /// The full `api.Bundle` of one channel membership, as opm's cache stores it (with that
    /// channel's `replaces`, `skips`, `skipRange`, and `csvJson`/`object`). The error is a
    /// plain text, sent to the client as opm sends a store error.
    fn bundle(&self, package: &CachePackage, bundle: &CacheBundle) -> Result<api::Bundle, String>;
}

/// `api.Registry` over a [`Store`].
pub struct Registry<S: Store> {
    store: Arc<S>,
    /// Every (channel, package, bundle) in ListBundles order (current opm's B-tree key).
    list_order: Arc<Vec<(String, String, String)>>,
    /// Provided (group, version, kind) per (package, channel, bundle), computed on the first
    /// *Provide* call: opm reads every stored bundle for these, and so would we on each call.
    provided: Arc<OnceLock<Result<ProvidedIndex, String>>>,
}

type Gvk = (String, String, String);
type ProvidedIndex = BTreeMap<(String, String, String), Vec<Gvk>>;

impl<S: Store> Registry<S> {
    /// A registry over `store`.
    pub fn new(store: Arc<S>) -> Self {
        let mut order = Vec::new();
        for p in store.index().values() {
            for c in p.channels.values() {
                for b in c.bundles.values() {
                    order.push((c.name.clone(), p.name.clone(), b.name.clone()));
                }
            }
        }
        order.sort();
        Registry {
            store,
            list_order: Arc::new(order),
            provided: Arc::new(OnceLock::new()),
        }
    }

    fn index(&self) -> &PackageIndex {
        self.store.index()
    }

    /// The stored bundle of (package, channel, name), untrimmed.
    fn stored(&self, pkg: &str, ch: &str, name: &str) -> Result<api::Bundle, String> {
        let p = self.index().get(pkg);
        let b = p
            .and_then(|p| p.channels.get(ch))
            .and_then(|c| c.bundles.get(name));
        match (p, b) {
            (Some(p), Some(b)) => self.store.bundle(p, b),
            _ => Err(format!(
                "package {}, channel {}, bundle {} not found",
                go_quote(pkg),
                go_quote(ch),
                go_quote(name)
            )),
        }
    }

    /// opm's `getTrimmedBundle`: the stored bundle without `replaces` and `skips`.
    fn trimmed(&self, pkg: &str, ch: &str, name: &str) -> Result<api::Bundle, String> {
        let mut b = self.stored(pkg, ch, name)?;
        b.replaces = String::new();
        b.skips = Vec::new();
        Ok(b)
    }

    /// `ListPackages`: every package name.
    pub fn list_packages(&self) -> Vec<String> {
        self.index().keys().cloned().collect()
    }

    /// `GetPackage`: channels sorted by name, with heads and deprecations.
    pub fn get_package(&self, name: &str) -> Result<api::Package, String> {
        let pkg = self
            .index()
            .get(name)
            .ok_or_else(|| format!("package {} not found", go_quote(name)))?;
        Ok(api::Package {
            name: pkg.name.clone(),
            channels: pkg
                .channels
                .values()
                .map(|c| api::Channel {
                    name: c.name.clone(),
                    csv_name: c.head.clone(),
                    deprecation: deprecation(&c.deprecation),
                })
                .collect(),
            default_channel_name: pkg.default_channel.clone(),
            deprecation: deprecation(&pkg.deprecation),
        })
    }

    fn channel(&self, pkg: &str, ch: &str) -> Result<(&CachePackage, &CacheChannel), String> {
        let p = self
            .index()
            .get(pkg)
            .ok_or_else(|| format!("package {} not found", go_quote(pkg)))?;
        let c = p.channels.get(ch).ok_or_else(|| {
            format!(
                "package {}, channel {} not found",
                go_quote(pkg),
                go_quote(ch)
            )
        })?;
        Ok((p, c))
    }

    /// `GetBundle`.
    pub fn get_bundle(&self, pkg: &str, ch: &str, csv: &str) -> Result<api::Bundle, String> {
        let (p, c) = self.channel(pkg, ch)?;
        let b = c.bundles.get(csv).ok_or_else(|| {
            format!(
                "package {}, channel {}, bundle {} not found",
                go_quote(pkg),
                go_quote(ch),
                go_quote(csv)
            )
        })?;
        self.trimmed(&p.name, &c.name, &b.name)
    }

    /// `GetBundleForChannel`: the channel head.
    pub fn get_bundle_for_channel(&self, pkg: &str, ch: &str) -> Result<api::Bundle, String> {
        let (p, c) = self.channel(pkg, ch)?;
        self.trimmed(&p.name, &c.name, &c.head)
    }

    /// `GetBundleThatReplaces`: the first member of the channel that replaces or skips `name`
    /// (opm iterates a Go map, so its choice among several is arbitrary; ours is by name).
    pub fn get_bundle_that_replaces(
        &self,
        name: &str,
        pkg: &str,
        ch: &str,
    ) -> Result<api::Bundle, String> {
        let p = self
            .index()
            .get(pkg)
            .ok_or_else(|| format!("package {pkg} not found"))?;
        let c = p.channels.get(ch).ok_or_else(|| {
            format!(
                "package {}, channel {} not found",
                go_quote(pkg),
                go_quote(ch)
            )
        })?;
        for b in c.bundles.values() {
            if b.replaces == name || b.skips().iter().any(|s| s == name) {
                return self.trimmed(&p.name, &c.name, &b.name);
            }
        }
        Err(format!(
            "no entry found for package {}, channel {}",
            go_quote(pkg),
            go_quote(ch)
        ))
    }

    /// `GetChannelEntriesThatReplace`.
    pub fn entries_that_replace(&self, name: &str) -> Result<Vec<api::ChannelEntry>, String> {
        let mut out = Vec::new();
        for p in self.index().values() {
            for c in p.channels.values() {
                for b in c.bundles.values() {
                    let entry = || api::ChannelEntry {
                        package_name: p.name.clone(),
                        channel_name: c.name.clone(),
                        bundle_name: b.name.clone(),
                        replaces: b.replaces.clone(),
                    };
                    if b.replaces == name {
                        out.push(entry());
                    }
                    for s in b.skips() {
                        if s == name && *s != b.replaces {
                            out.push(entry());
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(format!("no channel entries found that replace {name}"));
        }
        Ok(out)
    }

    fn provided_index(&self) -> Result<&ProvidedIndex, String> {
        self.provided
            .get_or_init(|| {
                let mut idx = ProvidedIndex::new();
                for (ch, pkg, name) in self.list_order.iter() {
                    let b = self
                        .stored(pkg, ch, name)
                        .map_err(|e| format!("get bundle {}: {e}", go_quote(name)))?;
                    let gvks = b
                        .provided_apis
                        .into_iter()
                        .map(|g| (g.group, g.version, g.kind))
                        .collect();
                    idx.insert((pkg.clone(), ch.clone(), name.clone()), gvks);
                }
                Ok(idx)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn provides(&self, pkg: &str, ch: &str, name: &str, gvk: &Gvk) -> Result<bool, String> {
        let idx = self.provided_index()?;
        Ok(idx
            .get(&(pkg.to_string(), ch.to_string(), name.to_string()))
            .is_some_and(|v| v.contains(gvk)))
    }

    /// opm's `channelEntriesForBundle`.
    fn entries_for_bundle(
        p: &CachePackage,
        c: &CacheChannel,
        b: &CacheBundle,
        ignore_channel: bool,
        out: &mut Vec<api::ChannelEntry>,
    ) {
        let entry = |replaces: &str| api::ChannelEntry {
            package_name: p.name.clone(),
            channel_name: c.name.clone(),
            bundle_name: b.name.clone(),
            replaces: replaces.to_string(),
        };
        out.push(entry(&b.replaces));
        for s in b.skips() {
            if *s != b.replaces && (ignore_channel || c.bundles.contains_key(s)) {
                out.push(entry(s));
            }
        }
    }

    /// `GetChannelEntriesThatProvide`.
    pub fn entries_that_provide(&self, gvk: &Gvk) -> Result<Vec<api::ChannelEntry>, String> {
        let mut out = Vec::new();
        for p in self.index().values() {
            for c in p.channels.values() {
                for b in c.bundles.values() {
                    if self.provides(&p.name, &c.name, &b.name, gvk)? {
                        Self::entries_for_bundle(p, c, b, true, &mut out);
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(no_provider("no channel entries found that provide", gvk));
        }
        Ok(out)
    }

    /// `GetLatestChannelEntriesThatProvide`: channel heads only.
    pub fn latest_entries_that_provide(&self, gvk: &Gvk) -> Result<Vec<api::ChannelEntry>, String> {
        let mut out = Vec::new();
        for p in self.index().values() {
            for c in p.channels.values() {
                // opm reads `ch.Bundles[ch.Head]`: a head always is a member.
                let Some(b) = c.bundles.get(&c.head) else {
                    continue;
                };
                if self.provides(&p.name, &c.name, &b.name, gvk)? {
                    Self::entries_for_bundle(p, c, b, false, &mut out);
                }
            }
        }
        if out.is_empty() {
            return Err(no_provider("no channel entries found that provide", gvk));
        }
        Ok(out)
    }

    /// `GetDefaultBundleThatProvides`: the first latest entry (by package name) in its
    /// package's default channel.
    pub fn default_bundle_that_provides(&self, gvk: &Gvk) -> Result<api::Bundle, String> {
        let mut latest = self.latest_entries_that_provide(gvk)?;
        latest.sort_by(|a, b| a.package_name.cmp(&b.package_name));
        for e in &latest {
            let Some(p) = self.index().get(&e.package_name) else {
                continue;
            };
            if e.channel_name == p.default_channel {
                return self.get_bundle(&e.package_name, &e.channel_name, &e.bundle_name);
            }
        }
        Err(no_provider("no entry found that provides", gvk))
    }
}

impl<S: Store> Clone for Registry<S> {
    fn clone(&self) -> Self {
        Registry {
            store: self.store.clone(),
            list_order: self.list_order.clone(),
            provided: self.provided.clone(),
        }
    }
}

fn deprecation(d: &Option<CacheDeprecation>) -> Option<api::Deprecation> {
    d.as_ref().map(|d| api::Deprecation {
        message: d.message.clone(),
    })
}

fn no_provider(prefix: &str, (g, v, k): &Gvk) -> String {
    format!(
        "{prefix} group:{} version:{} kind:{}",
        go_quote(g),
        go_quote(v),
        go_quote(k)
    )
}

/// Go's `%q` of a string: double quotes, with `"`, `\` and control or non-printable characters
/// escaped as `strconv.Quote` does.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => {
                let n = c as u32;
                if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A server-streaming response fed by a blocking producer through a small bounded channel, so
/// a slow client holds at most a few converted messages in memory.
type Stream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

/// How many converted messages a stream may hold ahead of its client.
const STREAM_BUFFER: usize = 4;

fn stream_from<T, I, F>(make: F) -> Stream<T>
where
    T: Send + 'static,
    I: Iterator<Item = Result<T, Status>>,
    F: FnOnce() -> I + Send + 'static,
{
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    tokio::task::spawn_blocking(move || {
        for item in make() {
            let stop = item.is_err();
            if tx.blocking_send(item).is_err() || stop {
                // The client went away (or the stream ended in an error): stop converting.
                return;
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

fn unknown(text: String) -> Status {
    Status::unknown(text)
}

/// Runs a blocking store call off the async threads (a bundle conversion may take a while).
async fn blocking<T, F>(f: F) -> Result<T, Status>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, String> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(unknown),
        Err(e) => Err(Status::internal(format!("request failed: {e}"))),
    }
}

/// A whole-list answer sent as a stream, or the error a first receive returns.
fn entries_stream(entries: Result<Vec<api::ChannelEntry>, String>) -> Stream<api::ChannelEntry> {
    let items: Vec<Result<api::ChannelEntry, Status>> = match entries {
        Ok(v) => v.into_iter().map(Ok).collect(),
        Err(e) => vec![Err(unknown(e))],
    };
    Box::pin(tokio_stream::iter(items))
}

fn gvk(group: String, version: String, kind: String) -> Gvk {
    (group, version, kind)
}

#[tonic::async_trait]
impl<S: Store> api::registry_server::Registry for Registry<S> {
    type ListPackagesStream = Stream<api::PackageName>;
    type GetChannelEntriesThatReplaceStream = Stream<api::ChannelEntry>;
    type GetChannelEntriesThatProvideStream = Stream<api::ChannelEntry>;
    type GetLatestChannelEntriesThatProvideStream = Stream<api::ChannelEntry>;
    type ListBundlesStream = Stream<api::Bundle>;

    async fn list_packages(
        &self,
        _: Request<api::ListPackageRequest>,
    ) -> Result<Response<Self::ListPackagesStream>, Status> {
        let names: Vec<Result<api::PackageName, Status>> = self
            .list_packages()
            .into_iter()
            .map(|name| Ok(api::PackageName { name }))
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(names))))
    }

    async fn get_package(
        &self,
        req: Request<api::GetPackageRequest>,
    ) -> Result<Response<api::Package>, Status> {
        self.get_package(&req.get_ref().name)
            .map(Response::new)
            .map_err(unknown)
    }

    async fn get_bundle(
        &self,
        req: Request<api::GetBundleRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.into_inner();
        let me = self.clone();
        blocking(move || me.get_bundle(&r.pkg_name, &r.channel_name, &r.csv_name))
            .await
            .map(Response::new)
    }

    async fn get_bundle_for_channel(
        &self,
        req: Request<api::GetBundleInChannelRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.into_inner();
        let me = self.clone();
        blocking(move || me.get_bundle_for_channel(&r.pkg_name, &r.channel_name))
            .await
            .map(Response::new)
    }

    async fn get_channel_entries_that_replace(
        &self,
        req: Request<api::GetAllReplacementsRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatReplaceStream>, Status> {
        Ok(Response::new(entries_stream(
            self.entries_that_replace(&req.get_ref().csv_name),
        )))
    }

    async fn get_bundle_that_replaces(
        &self,
        req: Request<api::GetReplacementRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.into_inner();
        let me = self.clone();
        blocking(move || me.get_bundle_that_replaces(&r.csv_name, &r.pkg_name, &r.channel_name))
            .await
            .map(Response::new)
    }

    async fn get_channel_entries_that_provide(
        &self,
        req: Request<api::GetAllProvidersRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatProvideStream>, Status> {
        let r = req.into_inner();
        let me = self.clone();
        let entries = tokio::task::spawn_blocking(move || {
            me.entries_that_provide(&gvk(r.group, r.version, r.kind))
        })
        .await
        .map_err(|e| Status::internal(format!("request failed: {e}")))?;
        Ok(Response::new(entries_stream(entries)))
    }

    async fn get_latest_channel_entries_that_provide(
        &self,
        req: Request<api::GetLatestProvidersRequest>,
    ) -> Result<Response<Self::GetLatestChannelEntriesThatProvideStream>, Status> {
        let r = req.into_inner();
        let me = self.clone();
        let entries = tokio::task::spawn_blocking(move || {
            me.latest_entries_that_provide(&gvk(r.group, r.version, r.kind))
        })
        .await
        .map_err(|e| Status::internal(format!("request failed: {e}")))?;
        Ok(Response::new(entries_stream(entries)))
    }

    async fn get_default_bundle_that_provides(
        &self,
        req: Request<api::GetDefaultProviderRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.into_inner();
        let me = self.clone();
        blocking(move || me.default_bundle_that_provides(&gvk(r.group, r.version, r.kind)))
            .await
            .map(Response::new)
    }

    async fn list_bundles(
        &self,
        _: Request<api::ListBundlesRequest>,
    ) -> Result<Response<Self::ListBundlesStream>, Status> {
        let me = self.clone();
        Ok(Response::new(stream_from(move || {
            let me2 = me.clone();
            let n = me2.list_order.len();
            (0..n).map(move |i| {
                let (ch, pkg, name) = &me2.list_order[i];
                let mut b = me2.stored(pkg, ch, name).map_err(unknown)?;
                if !b.bundle_path.is_empty() {
                    b.csv_json = String::new();
                    b.object = Vec::new();
                }
                Ok(b)
            })
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(go_quote("\u{1}"), "\"\\x01\"");
        assert_eq!(go_quote("é"), "\"é\"");
    }
}
