//! What opm's serve cache holds, built from a loaded catalog: the package index (opm's `cPkg`,
//! `pkg/cache/pkgs.go`) and, for every (package, channel, bundle), the `api.Bundle` that
//! `api.ConvertModelBundleToAPIBundle` makes (`pkg/api/model_to_api.go`, current opm).
//!
//! Why one model for two users: `catalog build` writes these as opm's JSON cache files (their
//! bytes are covered by the cache digest, so they are Go's `json.Marshal` output exactly, see
//! [`crate::gocompat::json`]), and `catalog serve` answers the gRPC registry API from them. Building the
//! index is one pass over the catalog (cheap enough to start a 141 MB catalog in well under a
//! second); an `api.Bundle` is converted only when asked for ([`ServeModel::bundle`]), because
//! most of a catalog's bytes (CSV metadata, bundle objects) are needed only by the few calls
//! that return whole bundles.
//!
//! Differences from opm that a client cannot see: `"skips": []` in a channel entry is written as
//! `null` in `packages.json` (the loader does not keep the difference; opm reads both as empty).

use super::csv::{self, CsvContext, MetadataError};
use crate::catalog::channel::ChannelGraph;
use crate::catalog::model::property_type;
use crate::catalog::model_check::check_package;
use crate::catalog::model_check::{self, ModelProblem};
use crate::catalog::{DeclarativeConfig, Gvk, Property};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// opm's package index (`packageIndex`): `cache/packages.json` is its Go JSON.
pub type PackageIndex = BTreeMap<String, CachePackage>;

/// A deprecation message as the package index stores it (`model.Deprecation`, always written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheDeprecation {
    /// Shown to users.
    pub message: String,
}

/// A package icon as the index stores it (`model.Icon`): the bytes as standard base64 (`None`
/// is a Go nil slice, written `null`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheIcon {
    /// Standard base64 of the image bytes.
    pub base64data: Option<String>,
    /// e.g. `image/svg+xml`.
    pub mediatype: String,
}

/// One package of the index (opm's `cPkg`); field order and names are opm's JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachePackage {
    /// Package name.
    pub name: String,
    /// Long description (used by the synthesized CSV when the bundle has none).
    pub description: String,
    /// Package icon, `null` when none.
    pub icon: Option<CacheIcon>,
    /// Default channel name.
    #[serde(rename = "defaultChannel")]
    pub default_channel: String,
    /// Channels by name.
    #[serde(rename = "Channels")]
    pub channels: BTreeMap<String, CacheChannel>,
    /// Package deprecation (`olm.deprecations`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<CacheDeprecation>,
}

/// One channel of a package (opm's `cChannel`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheChannel {
    /// Channel name.
    #[serde(rename = "Name")]
    pub name: String,
    /// The channel head (the one bundle nothing replaces or skips): GetPackage's `csvName`.
    #[serde(rename = "Head")]
    pub head: String,
    /// The channel's bundles by name.
    #[serde(rename = "Bundles")]
    pub bundles: BTreeMap<String, CacheBundle>,
    /// Channel deprecation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<CacheDeprecation>,
}

/// One bundle of a channel (opm's `cBundle`): the upgrade edges the Replace/Provide RPCs use.
/// Equality is on opm's fields only (a bundle read back from `packages.json` equals the one
/// built from the catalog).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheBundle {
    /// Package name.
    pub package: String,
    /// Channel name.
    pub channel: String,
    /// Bundle name.
    pub name: String,
    /// The bundle this one replaces in this channel.
    pub replaces: String,
    /// Bundles this one skips (`null` when none, as Go writes a nil slice).
    pub skips: Option<Vec<String>>,
    /// Where the bundle came from in the catalog (not part of opm's JSON).
    #[serde(skip)]
    source: Source,
}

impl PartialEq for CacheBundle {
    fn eq(&self, other: &Self) -> bool {
        self.package == other.package
            && self.channel == other.channel
            && self.name == other.name
            && self.replaces == other.replaces
            && self.skips == other.skips
    }
}

impl Eq for CacheBundle {}

impl CacheBundle {
    /// The skips as a slice (empty when none).
    pub fn skips(&self) -> &[String] {
        self.skips.as_deref().unwrap_or(&[])
    }
}

/// Indexes into the catalog, so a bundle converts without searching.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Source {
    bundle: usize,
    channel: usize,
    entry: usize,
}

/// `api.GroupVersionKind`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// API group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// API version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Plural (opm leaves it empty for FBC).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plural: String,
}

/// `api.Dependency`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Dependency {
    /// `olm.gvk` or `olm.package`.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// JSON text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}

/// `api.Property`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ApiProperty {
    /// Property type.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// The value's JSON text, as the catalog holds it (compact, sorted keys).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}

/// `api.Deprecation`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiDeprecation {
    /// Shown to users.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `api.Bundle` as opm stores it in its cache (`cache/<pkg>_<channel>_<bundle>.json`): field
/// order, names and `omitempty` are those of the Go struct generated from `registry.proto`.
/// The RPCs then trim it (GetBundle blanks `replaces`/`skips`, ListBundles blanks
/// `csvJson`/`object` when `bundlePath` is set): that is the server's business.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiBundle {
    /// Bundle name.
    #[serde(rename = "csvName", default, skip_serializing_if = "String::is_empty")]
    pub csv_name: String,
    /// Package name.
    #[serde(
        rename = "packageName",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub package_name: String,
    /// The channel this copy belongs to.
    #[serde(
        rename = "channelName",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub channel_name: String,
    /// The CSV's JSON: from the bundle objects, or synthesized from `olm.csv.metadata`.
    #[serde(rename = "csvJson", default, skip_serializing_if = "String::is_empty")]
    pub csv_json: String,
    /// Every bundle object's JSON (or the synthesized CSV alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub object: Vec<String>,
    /// The bundle image.
    #[serde(
        rename = "bundlePath",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub bundle_path: String,
    /// From `olm.gvk` properties.
    #[serde(
        rename = "providedApis",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub provided_apis: Vec<GroupVersionKind>,
    /// From `olm.gvk.required` properties.
    #[serde(
        rename = "requiredApis",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub required_apis: Vec<GroupVersionKind>,
    /// The `olm.package` property's version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The channel entry's skipRange.
    #[serde(
        rename = "skipRange",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub skip_range: String,
    /// `olm.gvk.required` and `olm.package.required`, in property order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Dependency>,
    /// Every property but `olm.bundle.object` and `olm.csv.metadata`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<ApiProperty>,
    /// The channel entry's replaces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub replaces: String,
    /// The channel entry's skips.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    /// Bundle deprecation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation: Option<ApiDeprecation>,
}

impl ApiBundle {
    /// Go's `json.Marshal` of the bundle: the exact bytes of opm's cache file.
    pub fn to_go_json(&self) -> Vec<u8> {
        // Serializing plain strings and vectors cannot fail.
        crate::gocompat::json::to_vec(self).unwrap_or_default()
    }
}

/// Go's `json.Marshal` of the package index: the exact bytes of `cache/packages.json`.
pub fn index_to_go_json(index: &PackageIndex) -> Vec<u8> {
    crate::gocompat::json::to_vec(index).unwrap_or_default()
}

/// (package, channel, bundle): how opm keys a stored bundle.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BundleKey {
    /// Package name.
    pub package: String,
    /// Channel name.
    pub channel: String,
    /// Bundle name.
    pub name: String,
}

/// Why a catalog cannot be served, or a bundle not converted.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The catalog folder could not be read.
    #[error(transparent)]
    Load(#[from] crate::catalog::load::LoadError),
    /// The catalog has load errors (opm would refuse it too); the first is named.
    #[error("{path}: {count} load error(s), first: {first}")]
    Unloadable {
        /// The catalog folder.
        path: String,
        /// How many.
        count: usize,
        /// The first, with its file and line.
        first: String,
    },
    /// The catalog loads but is not a valid model: the first problem of opm's model check
    /// ([`crate::catalog::model_check`]), in opm's words.
    #[error(transparent)]
    Invalid(Box<ModelProblem>),
    /// A bundle's properties could not be read as opm reads them.
    #[error("package {package:?}, bundle {bundle:?}: {message}")]
    Bundle {
        /// Package name.
        package: String,
        /// Bundle name.
        bundle: String,
        /// What is wrong.
        message: String,
    },
    /// No such (package, channel, bundle) — opm's GetBundle texts.
    #[error("{0}")]
    NotFound(String),
}

/// Per catalog bundle: what the index pass already parsed.
#[derive(Debug, Clone, Default)]
struct BundleInfo {
    version: String,
    deprecation: Option<String>,
}

/// A catalog ready to serve: the package index plus everything needed to convert any bundle on
/// demand. Immutable after construction, so it can be shared between threads (`Arc`).
#[derive(Debug)]
pub struct ServeModel {
    config: DeclarativeConfig,
    info: Vec<BundleInfo>,
    index: PackageIndex,
    entry_count: usize,
    /// When the catalog was loaded with [`load_compact`]: what became of the
    /// `olm.csv.metadata` values, whose properties in `config` hold only their number here.
    compact: Option<Compact>,
}

/// What a server keeps of each bundle's `olm.csv.metadata` value, swapped out of the bundles
/// while the catalog loads: the CSV current opm synthesizes from it, made right there (on the
/// loading threads) and compressed, without the parts it takes from its package
/// ([`csv::CsvTemplate`]).
///
/// Why: the metadata values are 70-80 % of an OpenShift catalog's bytes and only the CSV
/// synthesis reads them; a synthesized CSV is mostly its package's icon, the same in every
/// bundle. So a server holds each bundle's CSV compressed (a fifth of its size) and the icon
/// once per package, never the whole catalog's metadata at once, even while loading, and an
/// answer with a CSV is a decompression and a copy, not a synthesis.
///
/// The compressed bytes go into one growing buffer rather than one allocation each: the many
/// small blocks, made between the loader's short-lived ones, kept half-empty allocator pages
/// alive (34 MiB resident for 23 MB of compressed CSVs at 305 packages; one buffer: its size).
#[derive(Debug, Default)]
pub struct CompactMetadata {
    store: std::sync::Mutex<Compact>,
}

/// The compressed values, end to end, and what each one is.
#[derive(Debug, Default)]
struct Compact {
    bytes: Vec<u8>,
    values: Vec<Compacted>,
}

impl Compact {
    fn packed(&self, at: usize, len: usize) -> Option<&[u8]> {
        self.bytes.get(at..at.checked_add(len)?)
    }
}

/// One value of a [`CompactMetadata`], by the number left in the bundle's property.
#[derive(Debug)]
enum Compacted {
    /// An `olm.csv.metadata` value, compressed (`at`, `packed` bytes in the buffer): a bundle
    /// whose CSV is not synthesized at load (it has a CSV object, several metadata
    /// properties, or no readable version).
    Metadata { at: usize, packed: usize },
    /// The CSV synthesized at load: the template's text, compressed (`at`, `packed` bytes),
    /// its length and places.
    Csv {
        at: usize,
        packed: usize,
        len: usize,
        description_at: Option<usize>,
        icon_at: usize,
    },
    /// Why synthesizing failed (Go's error text, answered for this bundle).
    Failed(Box<str>),
}

/// Raw deflate at the fastest level (JSON text in about a fifth of its size).
fn pack(text: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write as _;
    let mut z = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(text.len() / 4),
        flate2::Compression::fast(),
    );
    // Writing to a Vec cannot fail.
    z.write_all(text).ok()?;
    z.finish().ok()
}

/// Raw inflate of `packed`, as text.
fn inflate(packed: &[u8], len_hint: usize) -> Option<String> {
    use std::io::Read as _;
    let mut text = String::with_capacity(len_hint);
    flate2::read::DeflateDecoder::new(packed)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

impl CompactMetadata {
    /// Swaps every `olm.csv.metadata` value of `b` for its number in this store: the CSV
    /// synthesized from it when opm would synthesize one (no CSV object, one metadata
    /// property), the value itself otherwise. A bundle whose CSV is made here no longer needs
    /// its related images (only the CSV reads them): they are dropped. `olm.bundle.object`
    /// values (base64, already decoded into the bundle's objects, never sent) are dropped too.
    pub fn shrink(&self, b: &mut crate::catalog::Bundle) {
        for p in b
            .properties
            .iter_mut()
            .filter(|p| p.type_ == property_type::BUNDLE_OBJECT)
        {
            if let Ok(zero) = serde_json::value::RawValue::from_string("0".into()) {
                p.value = zero;
            }
        }
        let metas = b
            .properties
            .iter()
            .filter(|p| p.type_ == property_type::CSV_METADATA)
            .count();
        if metas == 0 {
            return;
        }
        // (compressed bytes, what they are once placed at the offset given)
        type Place = Box<dyn FnOnce(usize) -> Compacted>;
        let mut synthesized: Option<(Vec<u8>, Place)> = None;
        if metas == 1 && b.csv_json.as_deref().unwrap_or("").is_empty() {
            let meta = b
                .properties
                .iter()
                .find(|p| p.type_ == property_type::CSV_METADATA);
            if let (Ok(version), Some(meta)) = (package_version(b), meta) {
                synthesized = match csv::synthesize_template(
                    &meta.value,
                    &b.name,
                    &version,
                    &b.related_images,
                ) {
                    Ok(t) => pack(t.text.as_bytes()).map(|packed| {
                        let n = packed.len();
                        let (len, description_at, icon_at) =
                            (t.text.len(), t.description_at, t.icon_at);
                        let place: Place = Box::new(move |at| Compacted::Csv {
                            at,
                            packed: n,
                            len,
                            description_at,
                            icon_at,
                        });
                        (packed, place)
                    }),
                    Err(e) => {
                        let e = e.to_string().into_boxed_str();
                        let place: Place = Box::new(move |_| Compacted::Failed(e));
                        Some((Vec::new(), place))
                    }
                };
            }
        }
        if synthesized.is_some() {
            b.related_images = Vec::new();
        }
        for p in b
            .properties
            .iter_mut()
            .filter(|p| p.type_ == property_type::CSV_METADATA)
        {
            let (packed, place) = match synthesized.take() {
                Some(v) => v,
                None => match pack(p.value.get().as_bytes()) {
                    Some(packed) => {
                        let n = packed.len();
                        let place: Place =
                            Box::new(move |at| Compacted::Metadata { at, packed: n });
                        (packed, place)
                    }
                    None => continue,
                },
            };
            let mut store = self
                .store
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let at = store.bytes.len();
            store.bytes.extend_from_slice(&packed);
            let id = store.values.len();
            store.values.push(place(at));
            drop(store);
            if let Ok(number) = serde_json::value::RawValue::from_string(id.to_string()) {
                p.value = number;
            }
        }
    }

    /// Bytes held (compressed).
    pub fn bytes(&self) -> usize {
        self.store.lock().map(|s| s.bytes.len()).unwrap_or(0)
    }

    fn into_store(self) -> Compact {
        let mut store = self
            .store
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        store.bytes.shrink_to_fit();
        store.values.shrink_to_fit();
        store
    }
}

/// The value [`CompactMetadata::shrink`] stored as number `id`.
fn compacted<'a>(store: &'a Compact, id: &str) -> Option<&'a Compacted> {
    store.values.get(id.parse::<usize>().ok()?)
}

/// Loads a catalog folder for serving: as [`crate::catalog::load::load_dir`], with every
/// `olm.csv.metadata` value moved into the returned [`CompactMetadata`] as each file is parsed.
/// Give both to [`ServeModel::new_compact`].
pub fn load_compact(
    root: &Path,
    opts: &crate::catalog::load::LoadOptions,
) -> Result<(crate::catalog::load::Loaded, CompactMetadata), crate::catalog::load::LoadError> {
    let store = CompactMetadata::default();
    let loaded = crate::catalog::load::load_dir_shrinking(root, opts, &|b| store.shrink(b))?;
    Ok((loaded, store))
}

impl ServeModel {
    /// Loads a catalog folder (as `opm serve` does) and builds the model. Any load error makes
    /// it fail, naming the first with its file and line.
    pub fn from_dir(root: &Path) -> Result<ServeModel, ModelError> {
        let loaded = crate::catalog::load::load_dir(root)?;
        let errors: Vec<_> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::findings::Severity::Error)
            .collect();
        if let Some(first) = errors.first() {
            let place = match (&first.file, first.line) {
                (Some(f), Some(l)) => format!("{f}:{l}: "),
                (Some(f), None) => format!("{f}: "),
                _ => String::new(),
            };
            return Err(ModelError::Unloadable {
                path: root.display().to_string(),
                count: errors.len(),
                first: format!("{place}{}", first.message),
            });
        }
        ServeModel::new(loaded.config)
    }

    /// Builds the package index in one pass, with opm's `ConvertToModel` checks (their texts)
    /// for what the index needs: known packages, unique names, every entry with its bundle and
    /// every bundle in a channel, one `olm.package` property, one head per channel, a default
    /// channel that exists, deprecations that name something.
    pub fn new(config: DeclarativeConfig) -> Result<ServeModel, ModelError> {
        ServeModel::build(config, true)
    }

    /// [`ServeModel::new`]; without `keep_icons`, each package icon's bytes are dropped from
    /// the catalog as soon as the index has them as base64 (never both forms of every icon).
    fn build(mut config: DeclarativeConfig, keep_icons: bool) -> Result<ServeModel, ModelError> {
        if let Some(found) = model_check::first(&config) {
            return Err(ModelError::Invalid(Box::new(found.problem)));
        }
        let mut index = index_packages(&mut config.packages, keep_icons);
        let entries = index_channels(&config.channels, &mut index);
        let info = index_bundles(&config, &entries, &mut index);
        let entry_count = index_heads(&config, &mut index);
        let mut model = ServeModel {
            config,
            info,
            index,
            entry_count,
            compact: None,
        };
        model.apply_deprecations();
        Ok(model)
    }

    /// [`ServeModel::new`] for a catalog loaded with [`load_compact`]. The package icons' bytes
    /// are dropped from the catalog once the index has them (as base64, what the CSV uses).
    pub fn new_compact(
        config: DeclarativeConfig,
        metadata: CompactMetadata,
    ) -> Result<ServeModel, ModelError> {
        let mut model = ServeModel::build(config, false)?;
        model.compact = Some(metadata.into_store());
        Ok(model)
    }

    /// Puts the deprecations on the index (the model check has refused any that names nothing).
    fn apply_deprecations(&mut self) {
        let mut bundle_msgs: Vec<(String, String, String)> = Vec::new();
        for d in &self.config.deprecations {
            let Some(pkg) = self.index.get_mut(&d.package) else {
                continue;
            };
            for e in &d.entries {
                let r = &e.reference;
                let message = Some(CacheDeprecation {
                    message: e.message.clone(),
                });
                match r.schema.as_str() {
                    crate::catalog::model::SCHEMA_BUNDLE => {
                        bundle_msgs.push((d.package.clone(), r.name.clone(), e.message.clone()));
                    }
                    crate::catalog::model::SCHEMA_CHANNEL => {
                        if let Some(ch) = pkg.channels.get_mut(&r.name) {
                            ch.deprecation = message;
                        }
                    }
                    crate::catalog::model::SCHEMA_PACKAGE => pkg.deprecation = message,
                    _ => {}
                }
            }
        }
        for (package, name, message) in bundle_msgs {
            let source = self.index.get(&package).and_then(|p| {
                p.channels
                    .values()
                    .find_map(|c| c.bundles.get(&name).map(|b| b.source.bundle))
            });
            if let Some(info) = source.and_then(|bi| self.info.get_mut(bi)) {
                info.deprecation = Some(message);
            }
        }
    }

    /// Takes the package index out of the model, for the serving index to hold in its own
    /// form ([`super::index::ServeIndex`]); the model's is empty after this.
    pub(crate) fn take_index(&mut self) -> PackageIndex {
        std::mem::take(&mut self.index)
    }

    /// The package index (opm's `packageIndex`), ordered by name at every level.
    pub fn index(&self) -> &PackageIndex {
        &self.index
    }

    /// The catalog the model was built from.
    pub fn config(&self) -> &DeclarativeConfig {
        &self.config
    }

    /// How many (package, channel, bundle) memberships there are (ListBundles messages).
    pub fn entry_count(&self) -> usize {
        self.entry_count
    }

    /// Every (package, channel, bundle) in (package, channel, bundle) byte order.
    pub fn keys(&self) -> impl Iterator<Item = (&CachePackage, &CacheChannel, &CacheBundle)> {
        self.index.values().flat_map(|p| {
            p.channels
                .values()
                .flat_map(move |c| c.bundles.values().map(move |b| (p, c, b)))
        })
    }

    /// Looks a bundle up, with opm's GetBundle error texts.
    pub fn lookup(
        &self,
        package: &str,
        channel: &str,
        name: &str,
    ) -> Result<(&CachePackage, &CacheChannel, &CacheBundle), ModelError> {
        let pkg = self
            .index
            .get(package)
            .ok_or_else(|| ModelError::NotFound(format!("package {package:?} not found")))?;
        let ch = pkg.channels.get(channel).ok_or_else(|| {
            ModelError::NotFound(format!(
                "package {package:?}, channel {channel:?} not found"
            ))
        })?;
        let b = ch.bundles.get(name).ok_or_else(|| {
            ModelError::NotFound(format!(
                "package {package:?}, channel {channel:?}, bundle {name:?} not found"
            ))
        })?;
        Ok((pkg, ch, b))
    }

    /// Where the bundle blob behind an index entry was read (file and line in the catalog).
    pub fn origin(&self, cb: &CacheBundle) -> Option<&crate::catalog::Origin> {
        self.config.bundles.get(cb.source.bundle).map(|b| &b.origin)
    }

    /// The `api.Bundle` opm stores for (package, channel, bundle), untrimmed.
    pub fn bundle(
        &self,
        package: &str,
        channel: &str,
        name: &str,
    ) -> Result<ApiBundle, ModelError> {
        let (pkg, _, b) = self.lookup(package, channel, name)?;
        self.convert(pkg, b)
    }

    /// [`ServeModel::bundle`] for an entry of the index (no lookup): the bundle's
    /// channel-independent fields ([`ServeModel::bundle_base`]), this channel's entry, and the
    /// CSV ([`ServeModel::bundle_csv`]).
    pub fn convert(&self, pkg: &CachePackage, cb: &CacheBundle) -> Result<ApiBundle, ModelError> {
        self.convert_for(pkg, cb, crate::cache::Semantics::CURRENT)
    }

    /// [`ServeModel::convert`] as the opm of `semantics` stores the bundle in its cache: before
    /// v1.28 `olm.csv.metadata` stays among the properties (in catalog order) and `csvJson` and
    /// `object` are only the bundle's own objects (no CSV synthesized); before v1.32 no
    /// deprecation.
    pub fn convert_for(
        &self,
        pkg: &CachePackage,
        cb: &CacheBundle,
        semantics: crate::cache::Semantics,
    ) -> Result<ApiBundle, ModelError> {
        let src = cb.source;
        let (Some(_), Some(_), Some(entry)) = (
            self.config.bundles.get(src.bundle),
            self.info.get(src.bundle),
            self.entry(cb),
        ) else {
            return Err(ModelError::NotFound(format!(
                "package {:?}, channel {:?}, bundle {:?} not found",
                cb.package, cb.channel, cb.name
            )));
        };
        let mut out = self.bundle_base(src.bundle)?;
        out.channel_name = cb.channel.clone();
        out.skip_range = entry.skip_range.clone();
        out.replaces = entry.replaces.clone();
        out.skips = entry.skips.clone();
        if !semantics.deprecations {
            out.deprecation = None;
        }
        if semantics.csv_from_metadata {
            let (csv_json, object) = self.bundle_csv(pkg, src.bundle)?;
            out.csv_json = csv_json;
            out.object = object;
        } else if let Some(b) = self.config.bundles.get(src.bundle) {
            // opm v1.26-v1.27 (`convertModelPropertiesToAPIProperties`): only olm.bundle.object
            // is left out; the model's CsvJSON and Objects as they are.
            out.properties = b
                .properties
                .iter()
                .filter(|p| p.type_ != property_type::BUNDLE_OBJECT)
                .map(|p| ApiProperty {
                    type_: p.type_.clone(),
                    value: p.value.get().to_string(),
                })
                .collect();
            out.csv_json = b.csv_json.clone().unwrap_or_default();
            out.object = b.objects.clone();
        }
        Ok(out)
    }

    /// The package index as the opm of `semantics` stores it (before v1.32: no deprecations).
    pub fn index_for(
        &self,
        semantics: crate::cache::Semantics,
    ) -> std::borrow::Cow<'_, PackageIndex> {
        if semantics.deprecations {
            return std::borrow::Cow::Borrowed(self.index());
        }
        let mut index = self.index().clone();
        for p in index.values_mut() {
            p.deprecation = None;
            for c in p.channels.values_mut() {
                c.deprecation = None;
            }
        }
        std::borrow::Cow::Owned(index)
    }

    /// The catalog's channel entry behind an index entry.
    fn entry(&self, cb: &CacheBundle) -> Option<&crate::catalog::model::ChannelEntry> {
        self.config
            .channels
            .get(cb.source.channel)
            .and_then(|c| c.entries.as_deref())
            .and_then(|e| e.get(cb.source.entry))
    }

    /// How many `olm.bundle` blobs the catalog has (the range of [`ServeModel::bundle_index`]).
    pub fn catalog_bundle_count(&self) -> usize {
        self.config.bundles.len()
    }

    /// The catalog bundle an index entry stands for: one number per bundle, shared by every
    /// channel it is in, so what does not depend on the channel is computed once.
    pub fn bundle_index(&self, cb: &CacheBundle) -> usize {
        cb.source.bundle
    }

    /// The `skipRange` of an index entry (its channel entry's).
    pub fn skip_range(&self, cb: &CacheBundle) -> &str {
        self.entry(cb).map_or("", |e| e.skip_range.as_str())
    }

    /// The `api.Bundle` fields of catalog bundle `bi` that do not depend on the channel or on
    /// the CSV: name, package, image, version, APIs, dependencies, properties, deprecation.
    /// `channelName`, `skipRange`, `replaces`, `skips`, `csvJson` and `object` are left empty.
    /// Fails as [`ServeModel::convert`] fails on the bundle's properties.
    pub fn bundle_base(&self, bi: usize) -> Result<ApiBundle, ModelError> {
        let (Some(b), Some(info)) = (self.config.bundles.get(bi), self.info.get(bi)) else {
            return Err(ModelError::NotFound(format!("bundle {bi} not found")));
        };
        let fail = |message: String| ModelError::Bundle {
            package: b.package.clone(),
            bundle: b.name.clone(),
            message,
        };
        let mut out = ApiBundle {
            csv_name: b.name.clone(),
            package_name: b.package.clone(),
            bundle_path: b.image.clone(),
            version: info.version.clone(),
            deprecation: info
                .deprecation
                .clone()
                .map(|message| ApiDeprecation { message }),
            ..ApiBundle::default()
        };
        let mut csv_metadata = 0usize;
        for (i, p) in b.properties.iter().enumerate() {
            match p.type_.as_str() {
                property_type::GVK => out.provided_apis.push(gvk(p, i).map_err(&fail)?),
                property_type::GVK_REQUIRED => {
                    out.required_apis.push(gvk(p, i).map_err(&fail)?);
                    out.dependencies.push(Dependency {
                        type_: property_type::GVK.to_string(),
                        value: p.value.get().to_string(),
                    });
                }
                property_type::PACKAGE_REQUIRED => {
                    let f = csv::go_string_fields(
                        &p.value,
                        "property.PackageRequired",
                        &["packageName", "versionRange"],
                    )
                    .map_err(|e| fail(format!("parse property at index {i}: {e}")))?;
                    let mut value = String::from("{\"packageName\":");
                    crate::gocompat::decoded::write_string(&f[0], &mut value);
                    value.push_str(",\"version\":");
                    crate::gocompat::decoded::write_string(&f[1], &mut value);
                    value.push('}');
                    out.dependencies.push(Dependency {
                        type_: property_type::PACKAGE.to_string(),
                        value,
                    });
                }
                property_type::CSV_METADATA => csv_metadata += 1,
                _ => {}
            }
            if p.type_ != property_type::BUNDLE_OBJECT && p.type_ != property_type::CSV_METADATA {
                out.properties.push(ApiProperty {
                    type_: p.type_.clone(),
                    value: p.value.get().to_string(),
                });
            }
        }
        if csv_metadata > 1 {
            return Err(fail(format!(
                "expected at most 1 property of type {:?}, found {csv_metadata}",
                property_type::CSV_METADATA
            )));
        }
        Ok(out)
    }

    /// Drops the catalog's packages, channels and deprecations (the serving index holds what
    /// it needs of them) and from every catalog bundle what [`ServeModel::bundle_base`] reads and
    /// [`ServeModel::bundle_csv`] does not (the image and every property but
    /// `olm.csv.metadata`), once the serving index holds each bundle's base encoded
    /// ([`super::index::ServeIndex`]): a server never needs both forms, and the properties' texts
    /// are most of what a loaded catalog keeps besides its CSVs. After this, `bundle_base` and
    /// `convert` answer without those fields: only the index may call it.
    pub(crate) fn drop_encoded(&mut self) {
        self.config.packages = Vec::new();
        self.config.channels = Vec::new();
        self.config.deprecations = Vec::new();
        for b in &mut self.config.bundles {
            b.properties
                .retain(|p| p.type_ == property_type::CSV_METADATA);
            b.properties.shrink_to_fit();
            b.image = String::new();
        }
    }

    /// Whether [`ServeModel::bundle_csv`] of catalog bundle `bi` synthesizes a CSV from
    /// `olm.csv.metadata` (the one costly step of a conversion) rather than copying the
    /// bundle's objects.
    pub fn synthesizes_csv(&self, bi: usize) -> bool {
        self.config.bundles.get(bi).is_some_and(|b| {
            b.csv_json.as_deref().unwrap_or("").is_empty()
                && b.properties
                    .iter()
                    .any(|p| p.type_ == property_type::CSV_METADATA)
        })
    }

    /// `csvJson` and `object` of catalog bundle `bi` (package `pkg`): the bundle's CSV object
    /// and objects, or, when it has no CSV and one `olm.csv.metadata`, the CSV opm synthesizes
    /// (and `object = [csvJson]` when there are no objects).
    pub fn bundle_csv(
        &self,
        pkg: &CachePackage,
        bi: usize,
    ) -> Result<(String, Vec<String>), ModelError> {
        let (Some(b), Some(info)) = (self.config.bundles.get(bi), self.info.get(bi)) else {
            return Err(ModelError::NotFound(format!("bundle {bi} not found")));
        };
        let mut csv_json = b.csv_json.clone().unwrap_or_default();
        let mut object = b.objects.clone();
        let mut metas = b
            .properties
            .iter()
            .filter(|p| p.type_ == property_type::CSV_METADATA);
        if csv_json.is_empty()
            && let (Some(meta), None) = (metas.next(), metas.next())
        {
            let icon = pkg
                .icon
                .as_ref()
                .map(|i| (i.base64data.as_deref().unwrap_or(""), i.mediatype.as_str()));
            let fail = |message: String| ModelError::Bundle {
                package: b.package.clone(),
                bundle: b.name.clone(),
                message,
            };
            let lost = || {
                fail(format!(
                    "{}: compacted value lost",
                    property_type::CSV_METADATA
                ))
            };
            let synthesize = |meta: &serde_json::value::RawValue| {
                csv::synthesize(
                    meta,
                    CsvContext {
                        name: &b.name,
                        version: &info.version,
                        icon,
                        package_description: &pkg.description,
                        related_images: &b.related_images,
                    },
                )
                .map_err(|e: MetadataError| fail(format!("parse olm.csv.metadata: {e}")))
            };
            csv_json = match &self.compact {
                None => synthesize(&meta.value)?,
                Some(store) => match compacted(store, meta.value.get()).ok_or_else(lost)? {
                    Compacted::Csv {
                        at,
                        packed,
                        len,
                        description_at,
                        icon_at,
                    } => {
                        let packed = store.packed(*at, *packed).ok_or_else(lost)?;
                        let text = inflate(packed, *len).ok_or_else(lost)?;
                        csv::fill_parts(&text, *description_at, *icon_at, icon, &pkg.description)
                            .ok_or_else(lost)?
                    }
                    Compacted::Failed(e) => {
                        return Err(fail(format!("parse olm.csv.metadata: {e}")));
                    }
                    Compacted::Metadata { at, packed } => {
                        let packed = store.packed(*at, *packed).ok_or_else(lost)?;
                        let text = inflate(packed, packed.len() * 6).ok_or_else(lost)?;
                        let raw =
                            serde_json::value::RawValue::from_string(text).map_err(|_| lost())?;
                        synthesize(&raw)?
                    }
                },
            };
            if object.is_empty() {
                object = vec![csv_json.clone()];
            }
        }
        Ok((csv_json, object))
    }
}

/// The version of the bundle's single `olm.package` property: opm's model check of it, its
/// texts (the one check `catalog validate` reports too).
fn package_version(b: &crate::catalog::Bundle) -> Result<String, String> {
    check_package(b)
        .map(|(pp, _)| pp.version)
        .map_err(|e| e.to_string())
}

fn gvk(p: &Property, i: usize) -> Result<GroupVersionKind, String> {
    let g = Gvk::decode(&p.value).map_err(|e| format!("parse property at index {i}: {e}"))?;
    Ok(GroupVersionKind {
        group: g.group,
        version: g.version,
        kind: g.kind,
        plural: String::new(),
    })
}

/// Where each bundle is named in the channels: (package, bundle) -> [(channel, entry)].
type EntryPlaces<'a> = HashMap<(&'a str, &'a str), Vec<(usize, usize)>>;

/// The package index: one package per name (its icon kept as base64; without `keep_icons` the
/// catalog's bytes are dropped as soon as the index has them).
fn index_packages(
    packages: &mut [crate::catalog::model::Package],
    keep_icons: bool,
) -> PackageIndex {
    let mut index: PackageIndex = BTreeMap::new();
    for p in packages {
        let icon = p.icon.as_ref().map(|i| {
            use base64::Engine as _;
            CacheIcon {
                base64data: i
                    .base64data
                    .as_ref()
                    .map(|d| base64::engine::general_purpose::STANDARD.encode(d)),
                mediatype: i.mediatype.clone(),
            }
        });
        if !keep_icons {
            p.icon = None;
        }
        index.entry(p.name.clone()).or_insert_with(|| CachePackage {
            name: p.name.clone(),
            description: p.description.clone(),
            icon,
            default_channel: p.default_channel.clone(),
            channels: BTreeMap::new(),
            deprecation: None,
        });
    }
    index
}

/// The channels of each package, each entry once, and where every bundle is named.
fn index_channels<'a>(
    channels: &'a [crate::catalog::model::Channel],
    index: &mut PackageIndex,
) -> EntryPlaces<'a> {
    // (package, bundle) -> [(channel index, entry index)]
    let mut entries: HashMap<(&str, &str), Vec<(usize, usize)>> = HashMap::new();
    for (ci, c) in channels.iter().enumerate() {
        let Some(pkg) = index.get_mut(&c.package) else {
            continue;
        };
        if pkg.channels.contains_key(&c.name) {
            continue;
        }
        let mut bundles = BTreeMap::new();
        for (ei, e) in c.entries.as_deref().unwrap_or(&[]).iter().enumerate() {
            if bundles.contains_key(&e.name) {
                continue;
            }
            bundles.insert(
                e.name.clone(),
                CacheBundle {
                    package: c.package.clone(),
                    channel: c.name.clone(),
                    name: e.name.clone(),
                    replaces: e.replaces.clone(),
                    skips: (!e.skips.is_empty()).then(|| e.skips.clone()),
                    source: Source {
                        bundle: usize::MAX,
                        channel: ci,
                        entry: ei,
                    },
                },
            );
            entries
                .entry((c.package.as_str(), e.name.as_str()))
                .or_default()
                .push((ci, ei));
        }
        pkg.channels.insert(
            c.name.clone(),
            CacheChannel {
                name: c.name.clone(),
                head: String::new(),
                bundles,
                deprecation: None,
            },
        );
    }
    entries
}

/// Each bundle in every channel entry naming it, with its version.
fn index_bundles(
    config: &DeclarativeConfig,
    entries: &EntryPlaces<'_>,
    index: &mut PackageIndex,
) -> Vec<BundleInfo> {
    let mut info = Vec::with_capacity(config.bundles.len());
    for (bi, b) in config.bundles.iter().enumerate() {
        let version = package_version(b).unwrap_or_default();
        if let (Some(pkg), Some(places)) = (
            index.get_mut(&b.package),
            entries.get(&(b.package.as_str(), b.name.as_str())),
        ) {
            for &(ci, _) in places {
                let ch = &config.channels[ci].name;
                if let Some(cb) = pkg
                    .channels
                    .get_mut(ch)
                    .and_then(|c| c.bundles.get_mut(&b.name))
                {
                    cb.source.bundle = bi;
                }
            }
        }
        info.push(BundleInfo {
            version,
            deprecation: None,
        });
    }
    info
}

/// Each channel's head (opm's `Channel.Head`, from the one channel graph). Returns the number of
/// channel entries.
fn index_heads(config: &DeclarativeConfig, index: &mut PackageIndex) -> usize {
    let mut entry_count = 0;
    for pkg in index.values_mut() {
        for ch in pkg.channels.values_mut() {
            let channel = ch.bundles.values().next().map(|b| b.source.channel);
            if let Some(Ok(head)) = channel
                .and_then(|ci| config.channels.get(ci))
                .map(|c| ChannelGraph::new(c, |_| None).head().map(str::to_string))
            {
                ch.head = head;
            }
            entry_count += ch.bundles.len();
        }
    }
    entry_count
}
