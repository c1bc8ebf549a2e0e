//! The tables of an index database, row by row (`package`, `channel`, `channel_entry`,
//! `operatorbundle`, `properties`, `dependencies`, `related_image`, `api*`): what both producers
//! fill and the conversion reads.

/// Property type that hides a bundle from the catalog (`registry.DeprecatedType`).
pub const DEPRECATED_PROPERTY: &str = "olm.deprecated";

/// A row of `package`: opm's package with its default channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageRow {
    /// `name`, the primary key.
    pub name: String,
    /// `default_channel` (`NULL` reads as `""`, which names no channel).
    pub default_channel: String,
}

/// A row of `channel`: a channel of a package and its head bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelRow {
    /// `name`.
    pub name: String,
    /// `package_name`.
    pub package_name: String,
    /// `head_operatorbundle_name`: the channel's `currentCSV`.
    pub head_operatorbundle_name: String,
}

/// A row of `channel_entry`: one bundle's place in one channel. The loader writes one per
/// version on the `replaces` chain from the head, plus, for each name in a bundle's `skips`, a
/// dummy entry for the skipped name and a synthesized entry for the skipping bundle that
/// `replaces` it; the conversion tells the two kinds apart by reachability from the heads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelEntryRow {
    /// `entry_id`, the integer primary key (insertion order in the loader).
    pub entry_id: i64,
    /// `channel_name`.
    pub channel_name: Option<String>,
    /// `package_name`.
    pub package_name: Option<String>,
    /// `operatorbundle_name`.
    pub operatorbundle_name: Option<String>,
    /// `replaces`: the `entry_id` of the entry this one replaces.
    pub replaces: Option<i64>,
    /// `depth`: 0 for channel heads, growing along the walk.
    pub depth: Option<i64>,
}

/// A row of `operatorbundle`: one bundle (CSV) with its manifests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorBundleRow {
    /// `name`: the CSV's `metadata.name`, the primary key.
    pub name: String,
    /// `csv`: the CSV as JSON (read for the package icon).
    pub csv: Option<String>,
    /// `bundle`: every manifest of the bundle as concatenated JSON objects, CSV included.
    pub bundle: Option<String>,
    /// `bundlepath`: the bundle image (`""` for bundles loaded from folders). `None` (no
    /// column before schema 2, or `NULL`) hides the bundle, as in opm.
    pub bundlepath: Option<String>,
    /// `skiprange`: the `olm.skipRange` annotation.
    pub skiprange: Option<String>,
    /// `version`: the CSV's `spec.version`. `None` hides the bundle, as in opm.
    pub version: Option<String>,
    /// `replaces` (schema 7+): the CSV's `spec.replaces` (not used by the conversion: edges
    /// come from `channel_entry`).
    pub replaces: Option<String>,
    /// `skips` (schema 7+): the CSV's `spec.skips`, comma-separated (informational too).
    pub skips: Option<String>,
    /// `substitutesfor` (schema 11+).
    pub substitutesfor: Option<String>,
}

/// A row of `properties` or `dependencies` (schema 8/9+): a typed JSON value attached to a
/// bundle by name, version and path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundleValueRow {
    /// `type`, e.g. `olm.gvk`, `olm.package`.
    pub type_: Option<String>,
    /// `value`: JSON text.
    pub value: Option<String>,
    /// `operatorbundle_name` (the only key the conversion joins on).
    pub operatorbundle_name: Option<String>,
    /// `operatorbundle_version`.
    pub operatorbundle_version: Option<String>,
    /// `operatorbundle_path`.
    pub operatorbundle_path: Option<String>,
}

/// Which of the two tables of [`BundleValueRow`]s a value goes into: a bundle's properties or
/// its dependencies (`properties` and `dependencies`, one shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueTable {
    /// `properties`.
    Properties,
    /// `dependencies`.
    Dependencies,
}

/// A row of `related_image` (schema 1+).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelatedImageRow {
    /// `image`.
    pub image: Option<String>,
    /// `operatorbundle_name`.
    pub operatorbundle_name: Option<String>,
}

/// A row of `api` (the API catalogue; kept for completeness, not read by the conversion).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiRow {
    /// `group_name`.
    pub group_name: String,
    /// `version`.
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `plural`.
    pub plural: String,
}

/// A row of `api_provider` or `api_requirer` in their schema-6 form (per bundle). Kept for
/// completeness: since schema 9 the same facts live in `properties`/`dependencies`, which are
/// what the conversion reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiBundleRow {
    /// `group_name`.
    pub group_name: String,
    /// `version`.
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `operatorbundle_name`.
    pub operatorbundle_name: String,
    /// `operatorbundle_version`.
    pub operatorbundle_version: Option<String>,
    /// `operatorbundle_path`.
    pub operatorbundle_path: Option<String>,
}

/// Everything an index database holds, table by table, in row order.
#[derive(Debug, Clone, Default)]
pub struct IndexDb {
    /// `schema_migrations.version` of the source (13 for databases of opm v1.17 and later;
    /// the model itself always has the newest shape).
    pub schema_version: i64,
    /// `package`.
    pub packages: Vec<PackageRow>,
    /// `channel`.
    pub channels: Vec<ChannelRow>,
    /// `channel_entry`.
    pub channel_entries: Vec<ChannelEntryRow>,
    /// `operatorbundle`.
    pub bundles: Vec<OperatorBundleRow>,
    /// `properties`.
    pub properties: Vec<BundleValueRow>,
    /// `dependencies`.
    pub dependencies: Vec<BundleValueRow>,
    /// `related_image`.
    pub related_images: Vec<RelatedImageRow>,
    /// `deprecated.operatorbundle_name`.
    pub deprecated: Vec<String>,
    /// `api`.
    pub apis: Vec<ApiRow>,
    /// `api_provider`.
    pub api_providers: Vec<ApiBundleRow>,
    /// `api_requirer`.
    pub api_requirers: Vec<ApiBundleRow>,
}
