//! The declarative-config (FBC) model: opm's `declcfg` types, field for field.
//!
//! Why these shapes: `opm render -o json` writes these structs with Go's `encoding/json`, so the
//! serialized field order, the fields that are always written (`defaultChannel`, `image`,
//! `entries`) and the ones dropped when empty (`name`/`package` of a bundle) are part of the
//! output contract (CATALOG.md B). `Serialize` here reproduces that order and those omissions;
//! the writers in this module's siblings turn the compact JSON into opm's exact bytes.
//!
//! Loading is not derived: opm matches keys case-insensitively and keeps raw property values, so
//! the loader fills these structs by hand and records each blob's [`Origin`] for diagnostics.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// `schema` of a package blob.
pub const SCHEMA_PACKAGE: &str = "olm.package";
/// `schema` of a channel blob.
pub const SCHEMA_CHANNEL: &str = "olm.channel";
/// `schema` of a bundle blob.
pub const SCHEMA_BUNDLE: &str = "olm.bundle";
/// `schema` of a deprecations blob (opm v1.32.0 and later).
pub const SCHEMA_DEPRECATIONS: &str = "olm.deprecations";

/// Property types opm knows by name (CATALOG.md B, property table).
pub mod property_type {
    /// The bundle's own package and version; exactly one per bundle.
    pub const PACKAGE: &str = "olm.package";
    /// A dependency on another package within a version range.
    pub const PACKAGE_REQUIRED: &str = "olm.package.required";
    /// An API the bundle provides.
    pub const GVK: &str = "olm.gvk";
    /// An API the bundle requires.
    pub const GVK_REQUIRED: &str = "olm.gvk.required";
    /// One manifest of the bundle, base64 of its compact JSON.
    pub const BUNDLE_OBJECT: &str = "olm.bundle.object";
    /// The CSV's metadata in place of the bundle objects (smaller catalogs).
    pub const CSV_METADATA: &str = "olm.csv.metadata";
    /// A generic constraint (CEL, package, GVK, all/any/not).
    pub const CONSTRAINT: &str = "olm.constraint";
    /// Internal channel priority.
    pub const CHANNEL: &str = "olm.channel";
}

/// Where a blob (or a part of one) was read: the file relative to the catalog root, with `/`
/// separators, and the 1-based line and column of its first byte. Empty for blobs made in
/// memory (rendered from a bundle, produced by a template).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// File relative to the catalog root (or the path given by the user for a single file).
    pub file: String,
    /// 1-based line, 0 when unknown.
    pub line: usize,
    /// 1-based column, 0 when unknown.
    pub col: usize,
}

/// Why an empty catalog is refused, for every command that reads one (`validate`, `render`,
/// `build`, `graph`): a wrong path must not give a "valid" catalog or publish an empty image.
pub const EMPTY_CATALOG: &str = "no olm.package, olm.channel, olm.bundle or olm.deprecations blob found: an empty catalog is usually a wrong path (pass --allow-empty if it is intended)";

/// A whole catalog: every blob of every file, in a deterministic order (file order, then order
/// within the file), whatever order the files were parsed in.
#[derive(Debug, Clone, Default)]
pub struct DeclarativeConfig {
    /// `olm.package` blobs.
    pub packages: Vec<Package>,
    /// `olm.channel` blobs.
    pub channels: Vec<Channel>,
    /// `olm.bundle` blobs.
    pub bundles: Vec<Bundle>,
    /// `olm.deprecations` blobs.
    pub deprecations: Vec<Deprecation>,
    /// Blobs of any other schema, passed through by render and ignored by validation.
    pub others: Vec<Meta>,
}

impl DeclarativeConfig {
    /// Whether the catalog holds anything OLM reads (a package, channel, bundle or deprecation
    /// blob); blobs of other schemas alone are no catalog ([`EMPTY_CATALOG`]).
    pub fn has_olm_blobs(&self) -> bool {
        !(self.packages.is_empty()
            && self.channels.is_empty()
            && self.bundles.is_empty()
            && self.deprecations.is_empty())
    }
}

/// `olm.package`.
#[derive(Debug, Clone, Serialize)]
pub struct Package {
    /// Always `olm.package`.
    pub schema: String,
    /// The package name (a DNS-1123 label for validation to pass).
    pub name: String,
    /// Written even when empty, as opm does.
    #[serde(rename = "defaultChannel")]
    pub default_channel: String,
    /// The package icon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<Icon>,
    /// Long description (markdown).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Free-form properties.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    /// Where it was read.
    #[serde(skip)]
    pub origin: Origin,
}

/// A package icon: raw bytes (written as standard base64) and a media type.
#[derive(Debug, Clone, Serialize)]
pub struct Icon {
    /// The decoded image bytes; `None` is written as `null` (a Go nil `[]byte`).
    #[serde(serialize_with = "serialize_base64")]
    pub base64data: Option<Vec<u8>>,
    /// e.g. `image/png`, `image/svg+xml`.
    pub mediatype: String,
}

fn serialize_base64<S: Serializer>(data: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
    use base64::Engine as _;
    match data {
        Some(bytes) => s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes)),
        None => s.serialize_none(),
    }
}

/// `olm.channel`.
#[derive(Debug, Clone, Serialize)]
pub struct Channel {
    /// Always `olm.channel`.
    pub schema: String,
    /// Channel name.
    pub name: String,
    /// Owning package.
    pub package: String,
    /// Upgrade entries; `None` (a Go nil slice) is written as `null`, `Some(vec![])` as `[]`.
    pub entries: Option<Vec<ChannelEntry>>,
    /// Only opm's internal channel priority in practice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    /// Where it was read.
    #[serde(skip)]
    pub origin: Origin,
}

/// One entry of a channel: a bundle name and the edges that lead to it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChannelEntry {
    /// Bundle name.
    pub name: String,
    /// The bundle this one replaces.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub replaces: String,
    /// Bundles this one skips.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    /// A semver range of versions this one skips.
    #[serde(rename = "skipRange", skip_serializing_if = "String::is_empty")]
    pub skip_range: String,
    /// Where the entry was read (its first key), for diagnostics.
    #[serde(skip)]
    pub origin: Origin,
}

/// `olm.bundle`.
#[derive(Debug, Clone, Serialize)]
pub struct Bundle {
    /// Always `olm.bundle`.
    pub schema: String,
    /// Bundle (CSV) name; omitted when empty, as opm does (validation still requires it).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Owning package; omitted when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub package: String,
    /// Bundle image pull spec; written even when empty.
    pub image: String,
    /// Properties in the order they will be written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    /// Images the bundle uses.
    #[serde(rename = "relatedImages", skip_serializing_if = "Vec::is_empty")]
    pub related_images: Vec<RelatedImage>,
    /// The decoded `olm.bundle.object` manifests (compact JSON), never serialized (opm's
    /// `Objects`): filled when loading and when rendering a bundle.
    #[serde(skip)]
    pub objects: Vec<String>,
    /// The first object whose kind is ClusterServiceVersion (opm's `CsvJSON`).
    #[serde(skip)]
    pub csv_json: Option<String>,
    /// Where it was read.
    #[serde(skip)]
    pub origin: Origin,
}

/// One related image; `name` is always written, even when empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelatedImage {
    /// Name from the CSV, or `""` for the bundle image and deployment images.
    pub name: String,
    /// Pull spec.
    pub image: String,
}

/// A typed property whose value is kept as compact raw JSON, so the key order it was built or
/// read with survives to the JSON output (opm keeps `json.RawMessage`).
#[derive(Debug, Clone, Serialize)]
pub struct Property {
    /// e.g. `olm.gvk`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Compact JSON.
    pub value: Box<RawValue>,
}

impl Property {
    /// A property from a type and compact JSON text. Fails only when `json` is not JSON.
    pub fn new(type_: impl Into<String>, json: String) -> Result<Property, serde_json::Error> {
        Ok(Property {
            type_: type_.into(),
            value: RawValue::from_string(json)?,
        })
    }
}

/// `olm.deprecations`.
#[derive(Debug, Clone, Serialize)]
pub struct Deprecation {
    /// Always `olm.deprecations`.
    pub schema: String,
    /// The package the entries apply to.
    pub package: String,
    /// What is deprecated.
    pub entries: Vec<DeprecationEntry>,
    /// Where it was read.
    #[serde(skip)]
    pub origin: Origin,
}

/// One deprecation: a reference to a package, channel or bundle, and a message.
#[derive(Debug, Clone, Serialize)]
pub struct DeprecationEntry {
    /// What is deprecated.
    pub reference: PackageScopedReference,
    /// Shown to users.
    pub message: String,
}

/// A reference within one package: `schema` (`olm.package`, `olm.channel`, `olm.bundle`) and a
/// name (empty for the package itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageScopedReference {
    /// Schema of the referenced blob.
    pub schema: String,
    /// Name of the referenced blob.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// A blob of any other schema: kept verbatim as opm's `Meta.Blob` (keys sorted, compact).
#[derive(Debug, Clone)]
pub struct Meta {
    /// Its `schema`.
    pub schema: String,
    /// Its `package`, or empty.
    pub package: String,
    /// Its `name`, or empty.
    pub name: String,
    /// The whole blob, compact JSON with sorted keys.
    pub blob: Box<RawValue>,
    /// Where it was read.
    pub origin: Origin,
}

impl Serialize for Meta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.blob.serialize(s)
    }
}
