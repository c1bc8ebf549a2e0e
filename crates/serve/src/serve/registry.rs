//! The ten RPCs of `api.Registry` with the semantics of current opm (`pkg/cache/cache.go`,
//! `pkg/cache/pkgs.go`, `pkg/server/server.go`; SERVE.md A.4), over a [`ServeIndex`]: the package
//! index opm keeps in memory, per bundle its indexed `api.Bundle` fields, and the CSV made while
//! the catalog loaded, so no call re-converts a bundle.
//!
//! opm answers every store failure with gRPC code `Unknown` and a plain text; the texts here are
//! opm's, character for character, because clients (and people) match on them.

use super::api;
use super::index::{ChannelRef, Gvk, Membership, ServeIndex};
use crate::gocompat::quote::go_quote;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// `api.Registry` over a [`ServeIndex`]: every point query is a lookup in it, and a bundle's
/// answer a copy of its indexed form (plus its CSV, kept compressed since the catalog loaded).
#[derive(Clone)]
pub struct Registry {
    index: Arc<ServeIndex>,
}

impl Registry {
    /// A registry over `index`.
    pub fn new(index: Arc<ServeIndex>) -> Self {
        Registry { index }
    }

    fn not_found(pkg: &str, ch: &str, name: &str) -> String {
        format!(
            "package {}, channel {}, bundle {} not found",
            go_quote(pkg),
            go_quote(ch),
            go_quote(name)
        )
    }

    /// The stored bundle of (package, channel, name), untrimmed (ListBundles' form, with the
    /// CSV).
    pub fn stored(&self, pkg: &str, ch: &str, name: &str) -> Result<api::Bundle, String> {
        match self.index.channel(pkg, ch).and_then(|c| c.member(name)) {
            Some(m) => self.index.bundle(m, true, true),
            None => Err(Self::not_found(pkg, ch, name)),
        }
    }

    /// opm's `getTrimmedBundle`: the stored bundle without `replaces` and `skips`.
    fn trimmed(&self, m: Membership<'_>) -> Result<api::Bundle, String> {
        self.index.bundle(m, false, true)
    }

    /// `ListPackages`: every package name.
    pub fn list_packages(&self) -> Vec<String> {
        self.index.package_names().map(str::to_string).collect()
    }

    /// `GetPackage`: channels sorted by name, with heads and deprecations.
    pub fn get_package(&self, name: &str) -> Result<api::Package, String> {
        let (pkg, channels) = self
            .index
            .package(name)
            .ok_or_else(|| format!("package {} not found", go_quote(name)))?;
        Ok(api::Package {
            name: pkg.name.clone(),
            channels: channels
                .iter()
                .map(|c| api::Channel {
                    name: c.name().to_string(),
                    csv_name: c.head().to_string(),
                    deprecation: c.deprecation().map(|m| api::Deprecation {
                        message: m.to_string(),
                    }),
                })
                .collect(),
            default_channel_name: pkg.default_channel.clone(),
            deprecation: deprecation(&pkg.deprecation),
        })
    }

    fn channel(&self, pkg: &str, ch: &str) -> Result<ChannelRef<'_>, String> {
        if !self.index.has_package(pkg) {
            return Err(format!("package {} not found", go_quote(pkg)));
        }
        self.index.channel(pkg, ch).ok_or_else(|| {
            format!(
                "package {}, channel {} not found",
                go_quote(pkg),
                go_quote(ch)
            )
        })
    }

    /// `GetBundle`.
    pub fn get_bundle(&self, pkg: &str, ch: &str, csv: &str) -> Result<api::Bundle, String> {
        let c = self.channel(pkg, ch)?;
        let m = c.member(csv).ok_or_else(|| Self::not_found(pkg, ch, csv))?;
        self.trimmed(m)
    }

    /// `GetBundleForChannel`: the channel head.
    pub fn get_bundle_for_channel(&self, pkg: &str, ch: &str) -> Result<api::Bundle, String> {
        let c = self.channel(pkg, ch)?;
        let m = c
            .member(c.head())
            .ok_or_else(|| Self::not_found(&c.package().name, c.name(), c.head()))?;
        self.trimmed(m)
    }

    /// `GetBundleThatReplaces`: the first member of the channel that replaces or skips `name`
    /// (opm iterates a Go map, so its choice among several is arbitrary; ours is by name).
    pub fn get_bundle_that_replaces(
        &self,
        name: &str,
        pkg: &str,
        ch: &str,
    ) -> Result<api::Bundle, String> {
        if !self.index.has_package(pkg) {
            return Err(format!("package {pkg} not found"));
        }
        let c = self.channel(pkg, ch)?;
        for m in c.members() {
            if m.replaces() == name || m.skips().any(|s| s == name) {
                return self.trimmed(m);
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
        let out: Vec<api::ChannelEntry> = self
            .index
            .replacing(name)
            .map(|m| m.entry(m.replaces()))
            .collect();
        if out.is_empty() {
            return Err(format!("no channel entries found that replace {name}"));
        }
        Ok(out)
    }

    /// opm's `channelEntriesForBundle`.
    fn entries_for_bundle(
        m: Membership<'_>,
        ignore_channel: bool,
        out: &mut Vec<api::ChannelEntry>,
    ) {
        let replaces = m.replaces();
        out.push(m.entry(replaces));
        for s in m.skips() {
            if s != replaces && (ignore_channel || m.channel().member(s).is_some()) {
                out.push(m.entry(s));
            }
        }
    }

    /// Every membership providing `gvk`, heads only when `latest`, as opm's loops meet them.
    fn provider_entries(&self, gvk: &Gvk, latest: bool) -> Result<Vec<api::ChannelEntry>, String> {
        let mut out = Vec::new();
        for m in self.index.providers(gvk)? {
            // opm reads `ch.Bundles[ch.Head]` for the latest: a head always is a member.
            if latest && !m.is_head() {
                continue;
            }
            Self::entries_for_bundle(m, !latest, &mut out);
        }
        if out.is_empty() {
            return Err(no_provider("no channel entries found that provide", gvk));
        }
        Ok(out)
    }

    /// `GetChannelEntriesThatProvide`.
    pub fn entries_that_provide(&self, gvk: &Gvk) -> Result<Vec<api::ChannelEntry>, String> {
        self.provider_entries(gvk, false)
    }

    /// `GetLatestChannelEntriesThatProvide`: channel heads only.
    pub fn latest_entries_that_provide(&self, gvk: &Gvk) -> Result<Vec<api::ChannelEntry>, String> {
        self.provider_entries(gvk, true)
    }

    /// `GetDefaultBundleThatProvides`: the first latest entry (by package name) in its
    /// package's default channel, chosen when the index was built.
    pub fn default_bundle_that_provides(&self, gvk: &Gvk) -> Result<api::Bundle, String> {
        match self.index.default_provider(gvk) {
            Ok(Some(m)) => self.trimmed(m),
            Ok(None) => Err(no_provider("no entry found that provides", gvk)),
            Err(e) if e.is_empty() => {
                Err(no_provider("no channel entries found that provide", gvk))
            }
            Err(e) => Err(e),
        }
    }

    /// The ListBundles message at `i` of the index's ListBundles order: with the channel's
    /// edges, and without `csvJson`/`object` when the bundle has an image (so those are not
    /// even looked up).
    fn listed(&self, i: usize) -> Result<api::Bundle, String> {
        let m = self
            .index
            .listed(i)
            .ok_or_else(|| format!("ListBundles: no message {i}"))?;
        let mut out = self.index.bundle(m, true, false)?;
        if out.bundle_path.is_empty() {
            (out.csv_json, out.object) = self.index.csv_of(m)?;
        }
        Ok(out)
    }
}

fn deprecation(d: &Option<super::model::CacheDeprecation>) -> Option<api::Deprecation> {
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

/// A server-streaming response. ListBundles' messages are made one at a time as the stream is
/// polled: HTTP/2 flow control stops the polling when the client does not read, so a slow
/// client holds a few messages, and no thread is spent per stream.
type Stream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

fn unknown(text: String) -> Status {
    Status::unknown(text)
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
impl api::registry_server::Registry for Registry {
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
        self.get_bundle(&r.pkg_name, &r.channel_name, &r.csv_name)
            .map(Response::new)
            .map_err(unknown)
    }

    async fn get_bundle_for_channel(
        &self,
        req: Request<api::GetBundleInChannelRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.into_inner();
        self.get_bundle_for_channel(&r.pkg_name, &r.channel_name)
            .map(Response::new)
            .map_err(unknown)
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
        self.get_bundle_that_replaces(&r.csv_name, &r.pkg_name, &r.channel_name)
            .map(Response::new)
            .map_err(unknown)
    }

    async fn get_channel_entries_that_provide(
        &self,
        req: Request<api::GetAllProvidersRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatProvideStream>, Status> {
        let r = req.into_inner();
        let entries = self.entries_that_provide(&gvk(r.group, r.version, r.kind));
        Ok(Response::new(entries_stream(entries)))
    }

    async fn get_latest_channel_entries_that_provide(
        &self,
        req: Request<api::GetLatestProvidersRequest>,
    ) -> Result<Response<Self::GetLatestChannelEntriesThatProvideStream>, Status> {
        let r = req.into_inner();
        let entries = self.latest_entries_that_provide(&gvk(r.group, r.version, r.kind));
        Ok(Response::new(entries_stream(entries)))
    }

    async fn get_default_bundle_that_provides(
        &self,
        req: Request<api::GetDefaultProviderRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.into_inner();
        self.default_bundle_that_provides(&gvk(r.group, r.version, r.kind))
            .map(Response::new)
            .map_err(unknown)
    }

    async fn list_bundles(
        &self,
        _: Request<api::ListBundlesRequest>,
    ) -> Result<Response<Self::ListBundlesStream>, Status> {
        let me = self.clone();
        let n = me.index.list_len();
        let mut failed = false;
        let messages = (0..n).map_while(move |i| {
            // The stream ends with its first error, as opm's does.
            if failed {
                return None;
            }
            let m = me.listed(i).map_err(unknown);
            failed = m.is_err();
            Some(m)
        });
        Ok(Response::new(Box::pin(tokio_stream::iter(messages))))
    }
}
