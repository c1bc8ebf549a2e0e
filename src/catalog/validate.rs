//! The catalog rules: every check of current `opm validate` (CATALOG.md C: `ConvertToModel`,
//! `model.Validate`, deprecations and the checks added after v1.26), and a few beyond opm as
//! warnings. Unlike opm, which stops at the first structural error and prints the rest in map
//! order, every problem is reported, each at the file and line of the blob at fault, in a
//! deterministic order.
//!
//! opm's checks are errors (opm fails the catalog); the extra checks are warnings, so the verdict
//! without `--strict` is opm's verdict.

use super::load::{self, LoadError, LoadOptions, Loaded};
use super::model::{
    self, Bundle, Channel, ChannelEntry, DeclarativeConfig, Origin, Package, Property,
    property_type,
};
use crate::findings::{Diagnostic, Report, Rule};
use crate::reference;
use crate::semver_range;
use serde_json::Value as J;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Since which opm release a catalog rule is checked by `opm validate`, or `None` when only
/// olmpack checks it. Shown by `catalog validate --list-rules`.
pub fn opm_since(rule: Rule) -> Option<&'static str> {
    use Rule::*;
    Some(match rule {
        CatalogDuplicateKey => "v1.28.0",
        CatalogPackageName => "v1.41.0 (DNS-1123; empty name always)",
        CatalogDuplicateVersion => "v1.47.0",
        CatalogStranded => "always (v1.58.0 walk)",
        CatalogBundleName => "always (normalized name v1.62.0)",
        CatalogVersion => "always (release v1.62.0)",
        CatalogImageReference => "v1.64.0",
        CatalogSkipRange => "v1.69.0",
        CatalogDeprecation => "v1.32.0",
        CatalogYamlDuplicateKey
        | CatalogHeadNotHighest
        | CatalogUnreachable
        | CatalogReplacesUnknown
        | CatalogSkipsUnknown
        | CatalogDefaultChannelStale
        | CatalogCsvFields
        | CatalogCsvInstallModes
        | CatalogCsvMinKubeVersion
        | CatalogCsvAlmExamples
        | CatalogEmpty => return None,
        r if r.is_catalog() => "always",
        _ => return None,
    })
}

/// Loads and validates one catalog folder. `Err` only when the folder itself cannot be read.
pub fn validate_dir(root: &Path, opts: &LoadOptions) -> Result<Report, LoadError> {
    let loaded = load::load_dir_with(root, opts)?;
    Ok(report_for(root.display().to_string(), loaded))
}

/// Loads and validates one catalog folder, isolated: a bug hit on it becomes an `internal/error`
/// finding of this catalog (naming the file being read, relative to the folder when inside it),
/// so the other catalogs of a run keep their reports and the user's files are not blamed.
pub fn validate_dir_isolated(root: &Path, opts: &LoadOptions) -> Result<Report, LoadError> {
    crate::guard::catch(|| {
        let _reading = crate::guard::reading(root);
        validate_dir(root, opts)
    })
    .unwrap_or_else(|failure| Ok(internal_error_report(root, &failure)))
}

/// The report of a catalog on which olmpack failed internally: one `internal/error` finding.
fn internal_error_report(root: &Path, failure: &crate::guard::InternalFailure) -> Report {
    let mut diagnostic = Diagnostic::new(Rule::InternalError, failure.describe());
    let rel = failure
        .file
        .as_deref()
        .and_then(|file| file.strip_prefix(root).ok())
        .filter(|rel| !rel.as_os_str().is_empty());
    if let Some(rel) = rel {
        diagnostic = diagnostic.in_file(rel.to_string_lossy().replace('\\', "/"));
    }
    Report {
        bundle: root.display().to_string(),
        diagnostics: vec![diagnostic],
    }
}

/// Validates several folders, in parallel over folders, results in the order given. Each folder
/// is isolated ([`validate_dir_isolated`]): one that olmpack fails on costs no other its report.
pub fn validate_dirs(dirs: &[PathBuf], jobs: Option<usize>) -> Vec<Result<Report, LoadError>> {
    let jobs = jobs.unwrap_or_else(crate::parallel::cores).max(1);
    if dirs.len() <= 1 || jobs == 1 {
        let opts = LoadOptions {
            jobs: Some(if dirs.len() <= 1 { jobs } else { 1 }),
        };
        return dirs
            .iter()
            .map(|d| validate_dir_isolated(d, &opts))
            .collect();
    }
    // Largest folders first, so no worker is left with a big one at the end; the reports keep
    // the order given.
    let sizes: Vec<u64> = dirs.iter().map(|d| size_hint(d)).collect();
    let opts = LoadOptions { jobs: Some(1) };
    crate::parallel::map_indexed(dirs.len(), jobs, Some(&sizes), |i| match dirs.get(i) {
        Some(dir) => validate_dir_isolated(dir, &opts),
        None => Ok(Report::default()),
    })
}

/// Bytes in the files directly inside `dir` (0 when unreadable): enough to schedule the usual
/// one-file package folders, and cheap.
fn size_hint(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
            .sum()
    })
}

/// The sorted report for a loaded catalog: load problems plus every rule.
pub fn report_for(name: String, loaded: Loaded) -> Report {
    let mut diagnostics = loaded.diagnostics;
    diagnostics.extend(validate(&loaded.config));
    // Only when nothing failed to load: a file that does not parse is the root cause then.
    if !loaded.config.has_olm_blobs()
        && !diagnostics
            .iter()
            .any(|d| d.severity == crate::findings::Severity::Error)
    {
        diagnostics.push(Diagnostic::new(
            Rule::CatalogEmpty,
            crate::catalog::model::EMPTY_CATALOG.to_string(),
        ));
    }
    let mut report = Report {
        bundle: name,
        diagnostics,
    };
    report.sort();
    report
}

fn at(rule: Rule, origin: &Origin, message: String) -> Diagnostic {
    let d = Diagnostic::new(rule, message);
    if origin.file.is_empty() {
        d
    } else {
        d.at(origin.file.clone(), origin.line.max(1))
    }
}

/// A bundle's parsed `olm.package` property.
#[derive(Debug, Clone)]
struct PkgProp {
    package_name: String,
    version: String,
    release: String,
}

/// What the rules know about one bundle after its properties are parsed.
struct BundleInfo<'a> {
    bundle: &'a Bundle,
    packages: Vec<PkgProp>,
    version: Option<semver::Version>,
    /// `version[-release]`, opm's duplicate-version key.
    version_key: Option<String>,
    gvk_kinds: BTreeSet<String>,
    /// The `olm.csv.metadata` object, its members left as raw text: only the few that the
    /// checks read are parsed (the description, CRD descriptors and icons never are).
    csv_metadata: Option<CsvMetadata<'a>>,
}

/// A type-checked `olm.csv.metadata` value.
struct CsvMetadata<'a> {
    /// Its members, unparsed.
    members: RawObject<'a>,
    /// Members the type check already parsed (exact key), so the checks do not parse them again.
    parsed: BTreeMap<&'static str, J>,
    /// `annotations["alm-examples"]` when it is a string (read during the type check).
    alm_examples: Option<String>,
}

impl CsvMetadata<'_> {
    /// The member `key` (exact case) as a tree.
    fn member(&self, key: &'static str) -> Option<std::borrow::Cow<'_, J>> {
        match self.parsed.get(key) {
            Some(v) => Some(std::borrow::Cow::Borrowed(v)),
            None => parse_member(&self.members, key).map(std::borrow::Cow::Owned),
        }
    }
}

/// A JSON object's members, unparsed; sorted and last-one-wins like `serde_json::Map`.
type RawObject<'a> = BTreeMap<String, &'a RawValue>;

/// Parses a raw object member into a tree (`None` when absent or not JSON).
fn parse_member(obj: &RawObject, key: &str) -> Option<J> {
    obj.get(key)
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
}

/// Go's JSON kind of a raw value, from its first byte (the text is valid JSON).
fn raw_kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "bool",
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b'{') => "object",
        _ => "number",
    }
}

/// Runs every rule on a loaded catalog.
pub fn validate(cfg: &DeclarativeConfig) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // --- packages ---
    let mut packages: BTreeMap<&str, &Package> = BTreeMap::new();
    for p in &cfg.packages {
        if p.name.is_empty() {
            out.push(at(
                Rule::CatalogPackageName,
                &p.origin,
                "config contains package with no name: set `name`".into(),
            ));
            continue;
        }
        if let Some(first) = packages.get(p.name.as_str()) {
            out.push(at(
                Rule::CatalogPackageDuplicate,
                &p.origin,
                format!(
                    "duplicate package {:?} (first declared at {}:{}): keep one olm.package blob",
                    p.name, first.origin.file, first.origin.line
                ),
            ));
            continue;
        }
        if let Err(reason) = reference::dns1123_label(&p.name) {
            let reason = if !p.name.contains('.') || p.name.len() > 63 {
                reason
            } else if reference::dns1123_subdomain(&p.name).is_ok() {
                "must not contain dots".to_string()
            } else {
                reason
            };
            out.push(at(
                Rule::CatalogPackageName,
                &p.origin,
                format!(
                    "invalid package name {:?}: [{reason}]: use lowercase letters, digits and '-'",
                    p.name
                ),
            ));
        }
        packages.insert(&p.name, p);
    }

    // --- channels ---
    let mut channels: BTreeMap<(&str, &str), &Channel> = BTreeMap::new();
    for c in &cfg.channels {
        if !packages.contains_key(c.package.as_str()) {
            out.push(at(
                Rule::CatalogPackageUnknown,
                &c.origin,
                format!(
                    "unknown package {:?} for channel {:?}: add an olm.package blob for it or fix `package`",
                    c.package, c.name
                ),
            ));
            continue;
        }
        if c.name.is_empty() {
            out.push(at(
                Rule::CatalogChannelName,
                &c.origin,
                format!(
                    "package {:?} contains channel with no name: set `name`",
                    c.package
                ),
            ));
            continue;
        }
        if let Some(first) = channels.get(&(c.package.as_str(), c.name.as_str())) {
            out.push(at(
                Rule::CatalogChannelDuplicate,
                &c.origin,
                format!(
                    "package {:?} has duplicate channel {:?} (first at {}:{}): merge their entries into one blob",
                    c.package, c.name, first.origin.file, first.origin.line
                ),
            ));
            continue;
        }
        let mut seen = HashSet::new();
        for e in entries(c) {
            if !seen.insert(e.name.as_str()) {
                out.push(at(
                    Rule::CatalogEntryDuplicate,
                    &e.origin,
                    format!(
                        "invalid package {:?}, channel {:?}: duplicate entry {:?}: list each bundle once",
                        c.package, c.name, e.name
                    ),
                ));
            }
        }
        channels.insert((c.package.as_str(), c.name.as_str()), c);
    }

    // --- bundles ---
    let mut bundles: BTreeMap<(&str, &str), BundleInfo> = BTreeMap::new();
    for b in &cfg.bundles {
        if b.package.is_empty() {
            out.push(at(
                Rule::CatalogBundlePackage,
                &b.origin,
                format!(
                    "package name must be set for bundle {:?}: set `package`",
                    b.name
                ),
            ));
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            out.push(at(
                Rule::CatalogPackageUnknown,
                &b.origin,
                format!(
                    "unknown package {:?} for bundle {:?}: add an olm.package blob for it or fix `package`",
                    b.package, b.name
                ),
            ));
            continue;
        }
        if b.name.is_empty() {
            out.push(at(
                Rule::CatalogBundleName,
                &b.origin,
                format!("bundle of package {:?}: name must be set", b.package),
            ));
            continue;
        }
        if let Some(first) = bundles.get(&(b.package.as_str(), b.name.as_str())) {
            out.push(at(
                Rule::CatalogBundleDuplicate,
                &b.origin,
                format!(
                    "package {:?} has duplicate bundle {:?} (first at {}:{}): keep one",
                    b.package, b.name, first.bundle.origin.file, first.bundle.origin.line
                ),
            ));
            continue;
        }
        let info = bundle_info(b, &mut out);
        bundles.insert((b.package.as_str(), b.name.as_str()), info);
    }

    // Entries of every channel, per package, for membership checks.
    let mut in_channels: HashMap<&str, HashSet<&str>> = HashMap::new();
    for ((pkg, _), c) in &channels {
        let set = in_channels.entry(pkg).or_default();
        for e in entries(c) {
            set.insert(e.name.as_str());
        }
    }
    for ((pkg, name), info) in &bundles {
        if !in_channels.get(pkg).is_some_and(|s| s.contains(name)) {
            out.push(at(
                Rule::CatalogBundleNotInChannel,
                &info.bundle.origin,
                format!(
                    "package {pkg:?}, bundle {name:?} not found in any channel entries: add it to a channel or remove the bundle"
                ),
            ));
        }
    }
    for ((pkg, chname), c) in &channels {
        for e in entries(c) {
            if e.name.is_empty() {
                out.push(at(
                    Rule::CatalogBundleName,
                    &e.origin,
                    format!("channel {chname:?} of package {pkg:?} has an entry with no name: set `name`"),
                ));
            } else if !bundles.contains_key(&(pkg, e.name.as_str())) {
                out.push(at(
                    Rule::CatalogEntryMissingBundle,
                    &e.origin,
                    format!(
                        "no olm.bundle blobs found in package {pkg:?} for olm.channel entries [{}] (channel {chname:?}): add the bundle or remove the entry",
                        e.name
                    ),
                ));
            }
        }
    }

    // --- deprecations ---
    deprecations(cfg, &packages, &channels, &bundles, &mut out);

    // --- per package: default channel, channels, graph, versions ---
    for (name, p) in &packages {
        let pkg_channels: Vec<&Channel> = channels
            .range((*name, "")..)
            .take_while(|((pk, _), _)| pk == name)
            .map(|(_, c)| *c)
            .collect();
        if p.default_channel.is_empty() {
            out.push(at(
                Rule::CatalogDefaultChannel,
                &p.origin,
                format!("invalid package {name:?}: default channel must be set: set `defaultChannel` to one of its channels"),
            ));
        } else if !pkg_channels.iter().any(|c| c.name == p.default_channel) {
            out.push(at(
                Rule::CatalogDefaultChannel,
                &p.origin,
                format!(
                    "invalid package {name:?}: default channel {:?} has no olm.channel blob (opm: channel must contain at least one bundle): add the channel or fix `defaultChannel`",
                    p.default_channel
                ),
            ));
        }
        if pkg_channels.is_empty() && p.default_channel.is_empty() {
            out.push(at(
                Rule::CatalogPackageNoChannels,
                &p.origin,
                format!("invalid package {name:?}: package must contain at least one channel"),
            ));
        }
        let mut heads: Vec<(&Channel, Option<&semver::Version>)> = Vec::new();
        for c in &pkg_channels {
            let head = channel_graph(p, c, &bundles, &in_channels, &mut out);
            heads.push((
                c,
                head.and_then(|h| bundles.get(&(name, h)).and_then(|i| i.version.as_ref())),
            ));
        }
        // Beyond opm: the default channel's head is older than another channel's head.
        if let Some((dc, Some(dv))) = heads.iter().find(|(c, _)| c.name == p.default_channel)
            && let Some((other, Some(ov))) = heads
                .iter()
                .filter(|(c, v)| c.name != dc.name && v.is_some())
                .max_by(|a, b| a.1.cmp(&b.1))
            && ov > dv
        {
            out.push(at(
                Rule::CatalogDefaultChannelStale,
                &p.origin,
                format!(
                    "default channel {:?} leads to {dv}, but channel {:?} leads to {ov}: users installing without a channel get the older one; check `defaultChannel`",
                    dc.name, other.name
                ),
            ));
        }
        // Duplicate versions (v1.47.0), over bundles that are in a channel.
        let mut by_version: BTreeMap<&str, Vec<&BundleInfo>> = BTreeMap::new();
        for ((_, bname), info) in bundles
            .range((*name, "")..)
            .take_while(|((pk, _), _)| pk == name)
        {
            if !in_channels.get(name).is_some_and(|s| s.contains(bname)) {
                continue;
            }
            if let Some(key) = &info.version_key {
                by_version.entry(key.as_str()).or_default().push(info);
            }
        }
        for (version, infos) in by_version {
            if infos.len() > 1 {
                let names: Vec<&str> = infos.iter().map(|i| i.bundle.name.as_str()).collect();
                for info in &infos[1..] {
                    out.push(at(
                        Rule::CatalogDuplicateVersion,
                        &info.bundle.origin,
                        format!(
                            "invalid package {name:?}: duplicate versions found in bundles: [{{{version}: [{}]}}]: give each bundle its own version",
                            names.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    // Bundle metadata, beyond opm.
    for info in bundles.values() {
        csv_checks(info, &mut out);
    }
    out
}

fn entries(c: &Channel) -> &[ChannelEntry] {
    c.entries.as_deref().unwrap_or(&[])
}

fn str_field(obj: &serde_json::Map<String, J>, name: &str) -> Result<String, String> {
    let mut out = String::new();
    for (k, v) in obj {
        if k.eq_ignore_ascii_case(name) {
            match v {
                J::String(s) => out.clone_from(s),
                J::Null => {}
                other => {
                    return Err(format!(
                        "json: cannot unmarshal {} into Go struct field .{name} of type string",
                        kind(other)
                    ));
                }
            }
        }
    }
    Ok(out)
}

fn kind(v: &J) -> &'static str {
    match v {
        J::Null => "null",
        J::Bool(_) => "bool",
        J::Number(_) => "number",
        J::String(_) => "string",
        J::Array(_) => "array",
        J::Object(_) => "object",
    }
}

/// Type-checks a property value the way opm's `property.Parse` decodes it.
fn check_property(type_: &str, value: &J) -> Result<(), String> {
    let strings = |fields: &[&str]| -> Result<(), String> {
        match value {
            J::Null => Ok(()),
            J::Object(m) => fields.iter().try_for_each(|f| str_field(m, f).map(|_| ())),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type property.{}",
                kind(other),
                type_
            )),
        }
    };
    match type_ {
        property_type::PACKAGE => strings(&["packageName", "version", "release"]),
        property_type::PACKAGE_REQUIRED => strings(&["packageName", "versionRange"]),
        property_type::GVK | property_type::GVK_REQUIRED => strings(&["group", "kind", "version"]),
        property_type::BUNDLE_OBJECT => strings(&[]),
        property_type::CHANNEL => {
            strings(&["channelName"])?;
            if let J::Object(m) = value {
                for (k, v) in m {
                    if k.eq_ignore_ascii_case("priority") && !(v.is_i64() || v.is_null()) {
                        return Err(format!(
                            "json: cannot unmarshal {} into Go struct field Channel.priority of type int",
                            kind(v)
                        ));
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The typed fields of opm's `property.CSVMetadata`, checked on the raw members (in key order,
/// the first wrong one reported); only the members with nested typed fields are parsed.
fn csv_metadata_types(
    m: &RawObject,
    parsed: &mut BTreeMap<&'static str, J>,
    alm: &mut Option<String>,
) -> Result<(), MetadataError> {
    let err = |field: &str, kind: &str, ty: &str| {
        Err(MetadataError::Type(format!(
            "json: cannot unmarshal {kind} into Go struct field CSVMetadata.{field} of type {ty}"
        )))
    };
    for (k, raw) in m {
        let raw_kind = raw_kind(raw);
        if raw_kind == "null" {
            continue;
        }
        let lower = k.to_ascii_lowercase();
        match lower.as_str() {
            "description" | "displayname" | "maturity" | "minkubeversion"
                if raw_kind != "string" =>
            {
                return err(k, raw_kind, "string");
            }
            "provider" | "apiservicedefinitions" | "crddescriptions" if raw_kind != "object" => {
                return err(k, raw_kind, "struct");
            }
            "annotations" | "labels" => {
                // Read in one pass: the map can hold large texts (alm-examples, descriptions).
                match serde_json::from_str::<shapes::StringMap>(raw.get())
                    .map_err(MetadataError::Json)?
                {
                    shapes::StringMap::Object { bad, alm_examples } => {
                        if let Some(bad) = bad {
                            return err(k, bad, "string");
                        }
                        // The checks read alm-examples (exact key).
                        if k == "annotations" {
                            *alm = alm_examples;
                        }
                    }
                    shapes::StringMap::Other(kind) => return err(k, kind, "map[string]string"),
                }
            }
            "keywords" | "installmodes" | "links" | "maintainers" | "nativeapis" => {
                let v: J = serde_json::from_str(raw.get()).map_err(MetadataError::Json)?;
                csv_metadata_nested(k, &lower, &v).map_err(MetadataError::Type)?;
                // The checks read this one (exact key): keep the tree.
                if k == "installModes" {
                    parsed.insert("installModes", v);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Why an `olm.csv.metadata` value was refused.
enum MetadataError {
    /// Not JSON that serde_json can hold (only a number out of `f64` range can get here).
    Json(serde_json::Error),
    /// A member of the wrong type, worded as Go's `UnmarshalTypeError`.
    Type(String),
}

/// The `olm.csv.metadata` property at `i` as a raw object (`None` for `null`), reporting what
/// opm's `property.Parse` would refuse with the same messages as the other property types.
fn csv_metadata_property<'a>(
    b: &Bundle,
    i: usize,
    p: &'a Property,
    out: &mut Vec<Diagnostic>,
) -> Result<Option<CsvMetadata<'a>>, ()> {
    let not_json = |e: serde_json::Error, out: &mut Vec<Diagnostic>| {
        out.push(at(
            Rule::CatalogPropertyInvalid,
            &b.origin,
            format!(
                "parse properties for bundle {:?}: property[{i}] value is not valid json: {e}",
                b.name
            ),
        ));
    };
    let wrong_type = |e: String, out: &mut Vec<Diagnostic>| {
        out.push(at(
            Rule::CatalogPropertyInvalid,
            &b.origin,
            format!(
                "parse properties for bundle {:?}: parse property[{i}] of type {:?}: {e}: fix the value's shape",
                b.name, p.type_
            ),
        ));
    };
    let raw: &RawValue = &p.value;
    match raw_kind(raw) {
        "null" => return Ok(None),
        "object" => {}
        other => {
            wrong_type(
                format!(
                    "json: cannot unmarshal {other} into Go value of type property.CSVMetadata"
                ),
                out,
            );
            return Err(());
        }
    }
    let m: RawObject = match serde_json::from_str(raw.get()) {
        Ok(m) => m,
        Err(e) => {
            not_json(e, out);
            return Err(());
        }
    };
    let mut parsed = BTreeMap::new();
    let mut alm_examples = None;
    match csv_metadata_types(&m, &mut parsed, &mut alm_examples) {
        Ok(()) => Ok(Some(CsvMetadata {
            members: m,
            parsed,
            alm_examples,
        })),
        Err(MetadataError::Json(e)) => {
            not_json(e, out);
            Err(())
        }
        Err(MetadataError::Type(e)) => {
            wrong_type(e, out);
            Err(())
        }
    }
}

/// The members of `property.CSVMetadata` with typed elements (maps, lists, lists of structs).
fn csv_metadata_nested(k: &str, lower: &str, v: &J) -> Result<(), String> {
    let err = |field: &str, v: &J, ty: &str| {
        Err(format!(
            "json: cannot unmarshal {} into Go struct field CSVMetadata.{field} of type {ty}",
            kind(v)
        ))
    };
    match lower {
        "annotations" | "labels" => match v {
            J::Object(map) => {
                if let Some(bad) = map.values().find(|x| !x.is_string() && !x.is_null()) {
                    return err(k, bad, "string");
                }
            }
            _ => return err(k, v, "map[string]string"),
        },
        "keywords" => match v {
            J::Array(items) => {
                if let Some(bad) = items.iter().find(|x| !x.is_string() && !x.is_null()) {
                    return err(k, bad, "string");
                }
            }
            _ => return err(k, v, "[]string"),
        },
        "installmodes" | "links" | "maintainers" | "nativeapis" => match v {
            J::Array(items) => {
                for item in items {
                    match item {
                        J::Object(o) => {
                            for (ik, iv) in o {
                                let bad = match ik.to_ascii_lowercase().as_str() {
                                    "supported" => !(iv.is_boolean() || iv.is_null()),
                                    _ => !(iv.is_string() || iv.is_null()),
                                };
                                if bad {
                                    return err(&format!("{k}.{ik}"), iv, "string");
                                }
                            }
                        }
                        J::Null => {}
                        other => return err(k, other, "struct"),
                    }
                }
            }
            _ => return err(k, v, "[]struct"),
        },
        _ => {}
    }
    Ok(())
}

fn bundle_info<'a>(b: &'a Bundle, out: &mut Vec<Diagnostic>) -> BundleInfo<'a> {
    let mut info = BundleInfo {
        bundle: b,
        packages: Vec::new(),
        version: None,
        version_key: None,
        gvk_kinds: BTreeSet::new(),
        csv_metadata: None,
    };
    let mut parse_failed = false;
    for (i, p) in b.properties.iter().enumerate() {
        if p.type_ == property_type::CSV_METADATA {
            match csv_metadata_property(b, i, p, out) {
                Ok(Some(m)) => info.csv_metadata = Some(m),
                Ok(None) => {}
                Err(()) => parse_failed = true,
            }
            continue;
        }
        let value: J = match serde_json::from_str(p.value.get()) {
            Ok(v) => v,
            Err(e) => {
                out.push(at(
                    Rule::CatalogPropertyInvalid,
                    &b.origin,
                    format!("parse properties for bundle {:?}: property[{i}] value is not valid json: {e}", b.name),
                ));
                parse_failed = true;
                continue;
            }
        };
        if p.type_.is_empty() {
            out.push(at(
                Rule::CatalogPropertyInvalid,
                &b.origin,
                format!("bundle {:?} property[{i}]: type must be set", b.name),
            ));
        }
        if let Err(e) = check_property(&p.type_, &value) {
            out.push(at(
                Rule::CatalogPropertyInvalid,
                &b.origin,
                format!(
                    "parse properties for bundle {:?}: parse property[{i}] of type {:?}: {e}: fix the value's shape",
                    b.name, p.type_
                ),
            ));
            parse_failed = true;
            continue;
        }
        let J::Object(m) = &value else { continue };
        match p.type_.as_str() {
            property_type::PACKAGE => info.packages.push(PkgProp {
                package_name: str_field(m, "packageName").unwrap_or_default(),
                version: str_field(m, "version").unwrap_or_default(),
                release: str_field(m, "release").unwrap_or_default(),
            }),
            property_type::GVK => {
                let k = str_field(m, "kind").unwrap_or_default();
                if !k.is_empty() {
                    info.gvk_kinds.insert(k);
                }
            }
            _ => {}
        }
    }
    if parse_failed {
        return info;
    }
    if info.packages.len() != 1 {
        out.push(at(
            Rule::CatalogPackageProperty,
            &b.origin,
            format!(
                "package {:?} bundle {:?} must have exactly 1 \"olm.package\" property, found {}",
                b.package,
                b.name,
                info.packages.len()
            ),
        ));
        return info;
    }
    let pp = info.packages[0].clone();
    if pp.package_name != b.package {
        out.push(at(
            Rule::CatalogBundlePackage,
            &b.origin,
            format!(
                "package {:?} does not match \"olm.package\" property {:?}: make them equal",
                b.package, pp.package_name
            ),
        ));
    }
    if !b.image.is_empty()
        && let Err(e) = reference::image_pullspec(&b.image)
    {
        out.push(at(
            Rule::CatalogImageReference,
            &b.origin,
            format!(
                "package {:?} bundle {:?} image: invalid image pull spec {:?}: {e}",
                b.package, b.name, b.image
            ),
        ));
    }
    for (i, r) in b.related_images.iter().enumerate() {
        if !r.image.is_empty()
            && let Err(e) = reference::image_pullspec(&r.image)
        {
            out.push(at(
                Rule::CatalogImageReference,
                &b.origin,
                format!(
                    "package {:?} bundle {:?} relatedImages[{i}].image: invalid image pull spec {:?}: {e}",
                    b.package, b.name, r.image
                ),
            ));
        }
    }
    if b.image.is_empty() && b.objects.is_empty() {
        out.push(at(
            Rule::CatalogBundleImage,
            &b.origin,
            format!(
                "invalid bundle {:?}: bundle image must be set (a bundle without olm.bundle.object properties is pulled by its image)",
                b.name
            ),
        ));
    }
    match reference::semver(&pp.version) {
        Ok(v) => info.version = Some(v),
        Err(e) => out.push(at(
            Rule::CatalogVersion,
            &b.origin,
            format!(
                "error parsing bundle {:?} version {:?}: {e}: use a strict semantic version such as 1.2.3",
                b.name, pp.version
            ),
        )),
    }
    let mut release_ok = true;
    if !pp.release.is_empty() {
        if pp.release.len() > 20 {
            release_ok = false;
            out.push(at(
                Rule::CatalogVersion,
                &b.origin,
                format!(
                    "error parsing bundle {:?} release version {:?}: invalid release {:?}: exceeds maximum length of 20 characters",
                    b.name, pp.release, pp.release
                ),
            ));
        } else if let Err(e) = semver::Prerelease::new(&pp.release) {
            release_ok = false;
            out.push(at(
                Rule::CatalogVersion,
                &b.origin,
                format!(
                    "error parsing bundle {:?} release version {:?}: {e}: use dot-separated alphanumeric identifiers",
                    b.name, pp.release
                ),
            ));
        }
    }
    if let Some(v) = &info.version {
        let base = v.to_string();
        if !pp.release.is_empty() && release_ok {
            if !v.build.is_empty() {
                out.push(at(
                    Rule::CatalogVersion,
                    &b.origin,
                    format!(
                        "invalid bundle {:?}: cannot use build metadata in version with a release version",
                        b.name
                    ),
                ));
            }
            let expected = format!("{}-v{}-{}", b.package, v, pp.release);
            if b.name != expected {
                out.push(at(
                    Rule::CatalogBundleName,
                    &b.origin,
                    format!(
                        "invalid bundle {:?}: name {:?} does not match normalized name {expected:?}: rename the bundle",
                        b.name, b.name
                    ),
                ));
            }
            info.version_key = Some(format!("{base}-{}", pp.release));
        } else {
            info.version_key = Some(base);
        }
    }
    info
}

/// opm's replaces-chain validation of one channel, plus entry checks and the warnings beyond
/// opm. Returns the head's name when there is exactly one.
fn channel_graph<'c>(
    p: &Package,
    c: &'c Channel,
    bundles: &BTreeMap<(&str, &str), BundleInfo>,
    in_channels: &HashMap<&str, HashSet<&str>>,
    out: &mut Vec<Diagnostic>,
) -> Option<&'c str> {
    let es = entries(c);
    if es.is_empty() {
        out.push(at(
            Rule::CatalogChannelEmpty,
            &c.origin,
            format!(
                "invalid channel {:?} of package {:?}: channel must contain at least one bundle: add an entry or remove the channel",
                c.name, p.name
            ),
        ));
        return None;
    }
    // Entry-level checks.
    let known_in_package = in_channels.get(p.name.as_str());
    for e in es {
        for (i, s) in e.skips.iter().enumerate() {
            if s.is_empty() {
                out.push(at(
                    Rule::CatalogSkipEmpty,
                    &e.origin,
                    format!(
                        "invalid bundle {:?} in channel {:?}: skip[{i}] is empty: remove it",
                        e.name, c.name
                    ),
                ));
            } else if !known_in_package.is_some_and(|k| k.contains(s.as_str()))
                && !bundles.contains_key(&(p.name.as_str(), s.as_str()))
            {
                out.push(at(
                    Rule::CatalogSkipsUnknown,
                    &e.origin,
                    format!(
                        "entry {:?} of channel {:?} skips {s:?}, which is no bundle of package {:?}: check the name",
                        e.name, c.name, p.name
                    ),
                ));
            }
        }
        if !e.skip_range.is_empty()
            && let Err(err) = semver_range::parse(&e.skip_range)
        {
            out.push(at(
                Rule::CatalogSkipRange,
                &e.origin,
                format!(
                    "invalid bundle {:?} in channel {:?}: invalid skipRange {:?}: {err}",
                    e.name, c.name, e.skip_range
                ),
            ));
        }
        if !e.replaces.is_empty()
            && !known_in_package.is_some_and(|k| k.contains(e.replaces.as_str()))
        {
            out.push(at(
                Rule::CatalogReplacesUnknown,
                &e.origin,
                format!(
                    "entry {:?} of channel {:?} replaces {:?}, which is in no channel of package {:?}: users of it get no upgrade; check the name",
                    e.name, c.name, e.replaces, p.name
                ),
            ));
        }
    }
    // Head: the entries no replaces or skips point at.
    let by_name: HashMap<&str, &ChannelEntry> = es.iter().map(|e| (e.name.as_str(), e)).collect();
    let mut incoming: HashSet<&str> = HashSet::new();
    let mut skipped: HashSet<&str> = HashSet::new();
    for e in es {
        if !e.replaces.is_empty() {
            incoming.insert(&e.replaces);
        }
        for s in &e.skips {
            incoming.insert(s);
            skipped.insert(s);
        }
    }
    let mut heads: Vec<&str> = by_name
        .keys()
        .copied()
        .filter(|n| !incoming.contains(n))
        .collect();
    heads.sort_unstable();
    let head = match heads.as_slice() {
        [] => {
            out.push(at(
                Rule::CatalogChannelHead,
                &c.origin,
                format!(
                    "invalid channel {:?} of package {:?}: no channel head found in graph: every entry is replaced or skipped, so the graph loops; break the loop",
                    c.name, p.name
                ),
            ));
            return None;
        }
        [one] => *one,
        many => {
            out.push(at(
                Rule::CatalogChannelHead,
                &c.origin,
                format!(
                    "invalid channel {:?} of package {:?}: multiple channel heads found in graph: {}: make the newest replace or skip the others",
                    c.name,
                    p.name,
                    many.join(", ")
                ),
            ));
            return None;
        }
    };
    // Replaces chain from the head (opm v1.58: stop at a skipped target).
    let mut chain: Vec<&str> = vec![head];
    let mut on_chain: HashSet<&str> = HashSet::from([head]);
    let mut cur = by_name.get(head).copied();
    while let Some(e) = cur {
        let next = e.replaces.as_str();
        if next.is_empty() {
            break;
        }
        if on_chain.contains(next) {
            let start = chain.iter().position(|n| *n == next).unwrap_or(0);
            let mut path: Vec<&str> = chain.get(start..).map(<[&str]>::to_vec).unwrap_or_default();
            path.push(next);
            out.push(at(
                Rule::CatalogReplacesCycle,
                &e.origin,
                format!(
                    "invalid channel {:?} of package {:?}: detected cycle in replaces chain of upgrade graph: {}: break the loop",
                    c.name,
                    p.name,
                    path.join(" -> ")
                ),
            ));
            return None;
        }
        chain.push(next);
        on_chain.insert(next);
        if skipped.contains(next) {
            break;
        }
        cur = by_name.get(next).copied();
    }
    let mut stranded: Vec<&ChannelEntry> = es
        .iter()
        .filter(|e| !on_chain.contains(e.name.as_str()) && !skipped.contains(e.name.as_str()))
        .collect();
    stranded.sort_by(|a, b| a.name.cmp(&b.name));
    stranded.dedup_by(|a, b| a.name == b.name);
    if !stranded.is_empty() {
        let names: Vec<&str> = stranded.iter().map(|e| e.name.as_str()).collect();
        for e in &stranded {
            out.push(at(
                Rule::CatalogStranded,
                &e.origin,
                format!(
                    "invalid channel {:?} of package {:?}: channel contains one or more stranded bundles: {}: entry {:?} is neither on the replaces chain from head {head:?} nor skipped; make a later entry replace or skip it",
                    c.name,
                    p.name,
                    names.join(", "),
                    e.name
                ),
            ));
        }
    }
    // Beyond opm: reachability over replaces, skips and skipRange from the head.
    let versions: HashMap<&str, &semver::Version> = es
        .iter()
        .filter_map(|e| {
            bundles
                .get(&(p.name.as_str(), e.name.as_str()))
                .and_then(|i| i.version.as_ref())
                .map(|v| (e.name.as_str(), v))
        })
        .collect();
    let version_of = |n: &str| versions.get(n).copied();
    let mut reached: HashSet<&str> = HashSet::from([head]);
    let mut queue = vec![head];
    while let Some(n) = queue.pop() {
        let Some(e) = by_name.get(n) else { continue };
        let mut next: Vec<&str> = Vec::new();
        if !e.replaces.is_empty() {
            next.push(&e.replaces);
        }
        next.extend(e.skips.iter().map(String::as_str));
        if !e.skip_range.is_empty()
            && let Ok(range) = semver_range::parse(&e.skip_range)
        {
            for other in es {
                if version_of(&other.name).is_some_and(|v| range.matches(v)) {
                    next.push(&other.name);
                }
            }
        }
        for m in next {
            if by_name.contains_key(m) && reached.insert(m) {
                queue.push(m);
            }
        }
    }
    for e in es {
        if !reached.contains(e.name.as_str()) && !stranded.iter().any(|s| s.name == e.name) {
            out.push(at(
                Rule::CatalogUnreachable,
                &e.origin,
                format!(
                    "entry {:?} of channel {:?} has no upgrade path to the head {head:?}: add it to a later entry's replaces, skips or skipRange",
                    e.name, c.name
                ),
            ));
        }
    }
    // Beyond opm: the head should be the highest version.
    if let Some(hv) = version_of(head)
        && let Some((top, tv)) = es
            .iter()
            .filter_map(|e| version_of(&e.name).map(|v| (e, v)))
            .max_by(|a, b| a.1.cmp(b.1))
        && tv > hv
    {
        out.push(at(
            Rule::CatalogHeadNotHighest,
            &c.origin,
            format!(
                "channel {:?} of package {:?} leads to {head:?} ({hv}) but also holds {:?} ({tv}): users never get the higher version; make it the head",
                c.name, p.name, top.name
            ),
        ));
    }
    Some(head)
}

fn deprecations(
    cfg: &DeclarativeConfig,
    packages: &BTreeMap<&str, &Package>,
    channels: &BTreeMap<(&str, &str), &Channel>,
    bundles: &BTreeMap<(&str, &str), BundleInfo>,
    out: &mut Vec<Diagnostic>,
) {
    let mut seen_pkg: HashMap<&str, &Origin> = HashMap::new();
    for d in &cfg.deprecations {
        let o = &d.origin;
        if d.package.is_empty() {
            out.push(at(
                Rule::CatalogDeprecation,
                o,
                "package name must be set for deprecation item: set `package`".into(),
            ));
            continue;
        }
        if !packages.contains_key(d.package.as_str()) {
            out.push(at(
                Rule::CatalogPackageUnknown,
                o,
                format!(
                    "cannot apply deprecations to an unknown package {:?}: fix `package` or add the package",
                    d.package
                ),
            ));
            continue;
        }
        if let Some(first) = seen_pkg.get(d.package.as_str()) {
            out.push(at(
                Rule::CatalogDeprecation,
                o,
                format!(
                    "expected a maximum of one deprecation per package: {:?} (first at {}:{}): merge the entries",
                    d.package, first.file, first.line
                ),
            ));
            continue;
        }
        seen_pkg.insert(&d.package, o);
        let mut refs: HashSet<(&str, &str)> = HashSet::new();
        for (j, e) in d.entries.iter().enumerate() {
            let (schema, name) = (e.reference.schema.as_str(), e.reference.name.as_str());
            let problem = match schema {
                model::SCHEMA_BUNDLE if !bundles.contains_key(&(d.package.as_str(), name)) => {
                    Some(format!(
                        "cannot deprecate bundle {name:?} for package {:?}: bundle not found",
                        d.package
                    ))
                }
                model::SCHEMA_CHANNEL if !channels.contains_key(&(d.package.as_str(), name)) => {
                    Some(format!(
                        "cannot deprecate channel {name:?} for package {:?}: channel not found",
                        d.package
                    ))
                }
                model::SCHEMA_PACKAGE if !name.is_empty() => Some(format!(
                    "package name must be empty for deprecated package {:?} (specified {name:?})",
                    d.package
                )),
                "" => Some(format!(
                    "schema must be set for deprecation entry [{j}] for package {:?}",
                    d.package
                )),
                model::SCHEMA_BUNDLE | model::SCHEMA_CHANNEL | model::SCHEMA_PACKAGE => None,
                other => Some(format!(
                    "cannot deprecate object declcfg.PackageScopedReference{{Schema:{other:?}, Name:{name:?}}} referenced by entry {j} for package {:?}: object schema unknown",
                    d.package
                )),
            };
            if let Some(problem) = problem {
                out.push(at(Rule::CatalogDeprecation, o, problem));
            }
            if !refs.insert((schema, name)) {
                out.push(at(
                    Rule::CatalogDeprecation,
                    o,
                    format!(
                        "duplicate deprecation entry declcfg.PackageScopedReference{{Schema:{schema:?}, Name:{name:?}}} for package {:?}",
                        d.package
                    ),
                ));
            }
            if e.message.is_empty() {
                out.push(at(
                    Rule::CatalogDeprecation,
                    o,
                    format!(
                        "deprecation entry [{j}] for package {:?}: invalid deprecation: message must be set",
                        d.package
                    ),
                ));
            }
        }
    }
}

/// install modes, minKubeVersion, displayName, annotations, owned CRD kinds.
type CsvView<'a> = (
    Option<&'a J>,
    Option<&'a J>,
    Option<&'a J>,
    Option<&'a str>,
    BTreeSet<String>,
);

/// Beyond opm: the bundle metadata OLM shows and installs by, from `olm.csv.metadata` or from
/// the ClusterServiceVersion among the bundle objects.
fn csv_checks(info: &BundleInfo, out: &mut Vec<Diagnostic>) {
    let b = info.bundle;
    // Parsed only when read: the metadata's few members, or else the whole CSV.
    let fields: [Option<std::borrow::Cow<J>>; 3];
    let csv_value: Option<J>;
    // (install modes, minKubeVersion, displayName, alm-examples, owned CRD kinds)
    let (modes, min_kube, display, alm_examples, mut owned): CsvView =
        if let Some(m) = &info.csv_metadata {
            fields = [
                m.member("installModes"),
                m.member("minKubeVersion"),
                m.member("displayName"),
            ];
            let [modes, min_kube, display] = &fields;
            (
                modes.as_deref(),
                min_kube.as_deref(),
                display.as_deref(),
                m.alm_examples.as_deref(),
                raw_owned_kinds(m.members.get("crdDescriptions").copied()),
            )
        } else if let Some(csv) = {
            csv_value = b
                .csv_json
                .as_deref()
                .and_then(|t| serde_json::from_str::<J>(t).ok());
            &csv_value
        } {
            let spec = csv.get("spec");
            if let Some(s) = spec
                && !s.is_object()
            {
                out.push(at(
                    Rule::CatalogCsvFields,
                    &b.origin,
                    format!("bundle {:?}: the CSV's spec is not a mapping", b.name),
                ));
                return;
            }
            (
                spec.and_then(|s| s.get("installModes")),
                spec.and_then(|s| s.get("minKubeVersion")),
                spec.and_then(|s| s.get("displayName")),
                csv.get("metadata")
                    .and_then(|m| m.get("annotations"))
                    .and_then(|a| a.get("alm-examples"))
                    .and_then(J::as_str),
                owned_kinds(spec.and_then(|s| s.get("customresourcedefinitions"))),
            )
        } else {
            return;
        };
    let name = &b.name;
    if display.and_then(J::as_str).is_none_or(str::is_empty) {
        out.push(at(
            Rule::CatalogCsvFields,
            &b.origin,
            format!("bundle {name:?}: the CSV has no displayName: OperatorHub and the console list it by that name"),
        ));
    }
    match modes.and_then(J::as_array) {
        None => out.push(at(
            Rule::CatalogCsvInstallModes,
            &b.origin,
            format!("bundle {name:?}: the CSV has no installModes: OLM cannot install it; list the four modes with `supported`"),
        )),
        Some(list) => {
            let mut seen = HashSet::new();
            let mut any = false;
            for m in list {
                let t = m.get("type").and_then(J::as_str).unwrap_or("");
                if !matches!(t, "OwnNamespace" | "SingleNamespace" | "MultiNamespace" | "AllNamespaces") {
                    out.push(at(
                        Rule::CatalogCsvInstallModes,
                        &b.origin,
                        format!("bundle {name:?}: unknown install mode type {t:?}: use OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces"),
                    ));
                } else if !seen.insert(t) {
                    out.push(at(
                        Rule::CatalogCsvInstallModes,
                        &b.origin,
                        format!("bundle {name:?}: install mode {t:?} is listed twice"),
                    ));
                }
                any |= m.get("supported").and_then(J::as_bool).unwrap_or(false);
            }
            if !any {
                out.push(at(
                    Rule::CatalogCsvInstallModes,
                    &b.origin,
                    format!("bundle {name:?}: no install mode is supported: OLM cannot install it"),
                ));
            }
        }
    }
    if let Some(v) = min_kube.and_then(J::as_str)
        && !v.is_empty()
    {
        let t = v.trim().trim_start_matches('v');
        let padded = match t.matches('.').count() {
            0 => format!("{t}.0.0"),
            1 => format!("{t}.0"),
            _ => t.to_string(),
        };
        if semver::Version::parse(&padded).is_err() {
            out.push(at(
                Rule::CatalogCsvMinKubeVersion,
                &b.origin,
                format!(
                    "bundle {name:?}: minKubeVersion {v:?} is not a semantic version (e.g. 1.25.0)"
                ),
            ));
        }
    }
    owned.extend(info.gvk_kinds.iter().cloned());
    if let Some(text) = alm_examples
        && !text.trim().is_empty()
    {
        // Only each entry's kind is read: a one-pass reader, not a tree of the examples.
        match serde_json::from_str::<shapes::AlmExamples>(text) {
            Ok(shapes::AlmExamples(Some(kinds))) => {
                for kind in kinds {
                    match kind.as_deref() {
                        Some(k) if owned.contains(k) || owned.is_empty() => {}
                        Some(k) => out.push(at(
                            Rule::CatalogCsvAlmExamples,
                            &b.origin,
                            format!("bundle {name:?}: alm-examples has an example of kind {k:?}, which the bundle does not provide"),
                        )),
                        None => out.push(at(
                            Rule::CatalogCsvAlmExamples,
                            &b.origin,
                            format!("bundle {name:?}: an alm-examples entry has no kind"),
                        )),
                    }
                }
            }
            Ok(_) => out.push(at(
                Rule::CatalogCsvAlmExamples,
                &b.origin,
                format!("bundle {name:?}: alm-examples must be a JSON list of objects"),
            )),
            Err(e) => out.push(at(
                Rule::CatalogCsvAlmExamples,
                &b.origin,
                format!("bundle {name:?}: alm-examples is not valid JSON: {e}"),
            )),
        }
    }
}

/// [`owned_kinds`] of a raw `crdDescriptions`, in one pass that skips everything but the
/// `kind` of each `owned` entry.
fn raw_owned_kinds(crds: Option<&RawValue>) -> BTreeSet<String> {
    crds.and_then(|c| serde_json::from_str::<kinds::OwnedKinds>(c.get()).ok())
        .map(|k| k.0)
        .unwrap_or_default()
}

/// Visitors reading `owned[].kind` as `serde_json::Value::get` would find it: keys matched
/// exactly, the last of repeated keys wins, anything of another shape reads as absent.
mod kinds {
    use serde::Deserializer;
    use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::collections::BTreeSet;
    use std::fmt;

    /// The visitor methods for the scalar values (booleans, numbers, null) that a visitor reads
    /// as absent: `$value` for each.
    macro_rules! other_values_are {
        ($ty:ty, $value:expr) => {
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_unit<E: de::Error>(self) -> Result<$ty, E> {
                Ok($value)
            }
        };
    }

    /// The kinds of `owned` (empty unless `crdDescriptions` is an object with a list there).
    pub struct OwnedKinds(pub BTreeSet<String>);

    impl<'de> de::Deserialize<'de> for OwnedKinds {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = OwnedKinds;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OwnedKinds, A::Error> {
                    let mut owned = Vec::new();
                    while let Some(key) = map.next_key::<Key<OWNED>>()? {
                        if key.0 {
                            owned = map.next_value::<List>()?.0;
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(OwnedKinds(owned.into_iter().flatten().collect()))
                }
            }
            d.deserialize_map(V)
        }
    }

    const OWNED: u8 = 0;
    const KIND: u8 = 1;

    /// Whether a key is the one looked for: `owned` (crdDescriptions) or `kind` (an entry).
    struct Key<const WHICH: u8>(bool);

    impl<'de, const WHICH: u8> de::Deserialize<'de> for Key<WHICH> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<const WHICH: u8>;
            impl<const WHICH: u8> Visitor<'_> for V<WHICH> {
                type Value = Key<WHICH>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<WHICH>, E> {
                    let wanted = if WHICH == OWNED { "owned" } else { "kind" };
                    Ok(Key(v == wanted))
                }
            }
            d.deserialize_str(V::<WHICH>)
        }
    }

    /// `owned`: each entry's `kind` when it is a string; empty when not a list.
    struct List(Vec<Option<String>>);

    impl<'de> de::Deserialize<'de> for List {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = List;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List, A::Error> {
                    let mut out = Vec::new();
                    while let Some(Entry(kind)) = seq.next_element::<Entry>()? {
                        out.push(kind);
                    }
                    Ok(List(out))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<List, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(List(Vec::new()))
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<List, E> {
                    Ok(List(Vec::new()))
                }
                other_values_are!(List, List(Vec::new()));
            }
            d.deserialize_any(V)
        }
    }

    /// One `owned` entry: its `kind` when it is an object whose `kind` is a string.
    struct Entry(Option<String>);

    impl<'de> de::Deserialize<'de> for Entry {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Entry;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                    let mut kind = None;
                    while let Some(key) = map.next_key::<Key<KIND>>()? {
                        if key.0 {
                            kind = map.next_value::<Scalar>()?.0;
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(Entry(kind))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entry, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Entry(None))
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                other_values_are!(Entry, Entry(None));
            }
            d.deserialize_any(V)
        }
    }

    /// A `kind` value: the string, or `None` for any other value (skipped).
    struct Scalar(Option<String>);

    impl<'de> de::Deserialize<'de> for Scalar {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Scalar;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v.to_string())))
                }
                fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
                    Ok(Scalar(Some(v)))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Scalar(None))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Scalar(None))
                }
                other_values_are!(Scalar, Scalar(None));
            }
            d.deserialize_any(V)
        }
    }
}

/// Typed one-pass readers for the two large JSON values the checks look into (an
/// `annotations` map and the `alm-examples` text): they accept and refuse exactly what parsing
/// into a `serde_json::Value` accepts and refuses (every value goes through `deserialize_any`,
/// so the same strings, numbers and nesting depth are checked and the same errors come out),
/// but keep only what the checks read instead of building the tree.
mod shapes {
    use serde::Deserializer;
    use serde::de::{self, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    /// Any JSON value, checked as `serde_json::Value` reads it.
    pub struct Checked;

    impl<'de> de::Deserialize<'de> for Checked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Checked;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any valid JSON value")
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
                    Ok(Checked)
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
                    Ok(Checked)
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
                    Ok(Checked)
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
                    Ok(Checked)
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
                    Ok(Checked)
                }
                fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
                    Ok(Checked)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                    while seq.next_element::<Checked>()?.is_some() {}
                    Ok(Checked)
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                    while map.next_key::<Checked>()?.is_some() {
                        map.next_value::<Checked>()?;
                    }
                    Ok(Checked)
                }
            }
            d.deserialize_any(V)
        }
    }

    /// A value's Go kind, and its text when it is a string and the caller wants it.
    struct Member<const KEEP: bool>(&'static str, Option<String>);

    impl<'de, const KEEP: bool> de::Deserialize<'de> for Member<KEEP> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<const KEEP: bool>;
            impl<'de, const KEEP: bool> Visitor<'de> for V<KEEP> {
                type Value = Member<KEEP>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any valid JSON value")
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<Member<KEEP>, E> {
                    Ok(Member("bool", None))
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Member<KEEP>, E> {
                    Ok(Member("number", None))
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Member<KEEP>, E> {
                    Ok(Member("number", None))
                }
                fn visit_f64<E: de::Error>(self, f: f64) -> Result<Member<KEEP>, E> {
                    Ok(Member(if f.is_finite() { "number" } else { "null" }, None))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Member<KEEP>, E> {
                    Ok(Member("string", KEEP.then(|| v.to_string())))
                }
                fn visit_string<E: de::Error>(self, v: String) -> Result<Member<KEEP>, E> {
                    Ok(Member("string", KEEP.then_some(v)))
                }
                fn visit_unit<E: de::Error>(self) -> Result<Member<KEEP>, E> {
                    Ok(Member("null", None))
                }
                fn visit_seq<A: SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Member<KEEP>, A::Error> {
                    while seq.next_element::<Checked>()?.is_some() {}
                    Ok(Member("array", None))
                }
                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Member<KEEP>, A::Error> {
                    while map.next_key::<Checked>()?.is_some() {
                        map.next_value::<Checked>()?;
                    }
                    Ok(Member("object", None))
                }
            }
            d.deserialize_any(V::<KEEP>)
        }
    }

    /// A key as text.
    struct Key(String);

    impl<'de> de::Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                    Ok(Key(v.to_string()))
                }
                fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
                    Ok(Key(v))
                }
            }
            d.deserialize_str(V)
        }
    }

    /// A Go `map[string]string` member (`annotations`, `labels`) as the checks read it.
    pub enum StringMap {
        /// An object: the kind of its first value that is neither a string nor null, in the
        /// order of a `serde_json::Map` (keys sorted, the last of a repeated key kept), and the
        /// `alm-examples` string.
        Object {
            /// Kind of the first wrongly typed value.
            bad: Option<&'static str>,
            /// `alm-examples` when it is a string.
            alm_examples: Option<String>,
        },
        /// Not an object: its kind.
        Other(&'static str),
    }

    impl<'de> de::Deserialize<'de> for StringMap {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = StringMap;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any valid JSON value")
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<StringMap, E> {
                    Ok(StringMap::Other("bool"))
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<StringMap, E> {
                    Ok(StringMap::Other("number"))
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<StringMap, E> {
                    Ok(StringMap::Other("number"))
                }
                fn visit_f64<E: de::Error>(self, f: f64) -> Result<StringMap, E> {
                    Ok(StringMap::Other(if f.is_finite() {
                        "number"
                    } else {
                        "null"
                    }))
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<StringMap, E> {
                    Ok(StringMap::Other("string"))
                }
                fn visit_unit<E: de::Error>(self) -> Result<StringMap, E> {
                    Ok(StringMap::Other("null"))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringMap, A::Error> {
                    while seq.next_element::<Checked>()?.is_some() {}
                    Ok(StringMap::Other("array"))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringMap, A::Error> {
                    // (key, kind, alm-examples text)
                    let mut members: Vec<(String, &'static str, Option<String>)> = Vec::new();
                    while let Some(Key(k)) = map.next_key::<Key>()? {
                        let Member(kind, text) = if k == "alm-examples" {
                            let Member(kind, text) = map.next_value::<Member<true>>()?;
                            Member::<false>(kind, text)
                        } else {
                            map.next_value::<Member<false>>()?
                        };
                        members.push((k, kind, text));
                    }
                    // `serde_json::Map`: sorted by key, the last of a repeated key kept.
                    members.sort_by(|a, b| a.0.cmp(&b.0));
                    members.dedup_by(|later, kept| {
                        if later.0 == kept.0 {
                            std::mem::swap(later, kept);
                            true
                        } else {
                            false
                        }
                    });
                    let bad = members
                        .iter()
                        .map(|m| m.1)
                        .find(|kind| !matches!(*kind, "string" | "null"));
                    let alm_examples = members
                        .into_iter()
                        .find(|m| m.0 == "alm-examples")
                        .and_then(|m| m.2);
                    Ok(StringMap::Object { bad, alm_examples })
                }
            }
            d.deserialize_any(V)
        }
    }

    /// `alm-examples` as the check reads it: a list, with the `kind` of each entry when that
    /// entry is an object whose `kind` is a string; `None` when not a list.
    pub struct AlmExamples(pub Option<Vec<Option<String>>>);

    impl<'de> de::Deserialize<'de> for AlmExamples {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = AlmExamples;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any valid JSON value")
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<AlmExamples, E> {
                    Ok(AlmExamples(None))
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<AlmExamples, E> {
                    Ok(AlmExamples(None))
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<AlmExamples, E> {
                    Ok(AlmExamples(None))
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<AlmExamples, E> {
                    Ok(AlmExamples(None))
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<AlmExamples, E> {
                    Ok(AlmExamples(None))
                }
                fn visit_unit<E: de::Error>(self) -> Result<AlmExamples, E> {
                    Ok(AlmExamples(None))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AlmExamples, A::Error> {
                    while map.next_key::<Checked>()?.is_some() {
                        map.next_value::<Checked>()?;
                    }
                    Ok(AlmExamples(None))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AlmExamples, A::Error> {
                    let mut kinds = Vec::new();
                    while let Some(Example(kind)) = seq.next_element::<Example>()? {
                        kinds.push(kind);
                    }
                    Ok(AlmExamples(Some(kinds)))
                }
            }
            d.deserialize_any(V)
        }
    }

    /// One example: its `kind` when it is an object whose (last) `kind` is a string.
    struct Example(Option<String>);

    impl<'de> de::Deserialize<'de> for Example {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Example;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any valid JSON value")
                }
                fn visit_bool<E: de::Error>(self, _: bool) -> Result<Example, E> {
                    Ok(Example(None))
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Example, E> {
                    Ok(Example(None))
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Example, E> {
                    Ok(Example(None))
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<Example, E> {
                    Ok(Example(None))
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<Example, E> {
                    Ok(Example(None))
                }
                fn visit_unit<E: de::Error>(self) -> Result<Example, E> {
                    Ok(Example(None))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Example, A::Error> {
                    while seq.next_element::<Checked>()?.is_some() {}
                    Ok(Example(None))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Example, A::Error> {
                    let mut kind = None;
                    while let Some(Key(k)) = map.next_key::<Key>()? {
                        if k == "kind" {
                            kind = map.next_value::<Member<true>>()?.1;
                        } else {
                            map.next_value::<Checked>()?;
                        }
                    }
                    Ok(Example(kind))
                }
            }
            d.deserialize_any(V)
        }
    }
}

fn owned_kinds(crds: Option<&J>) -> BTreeSet<String> {
    crds.and_then(|c| c.get("owned"))
        .and_then(J::as_array)
        .map(|owned| {
            owned
                .iter()
                .filter_map(|o| o.get("kind").and_then(J::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod owned_kinds_tests {
    use super::*;

    /// The one-pass readers of `annotations` and `alm-examples` must read exactly what the parsed
    /// value gives, and fail exactly where parsing it fails, with the same message.
    #[test]
    fn one_pass_readers_agree_with_the_parsed_value() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let alm_cases = [
            r#"[{"kind":"A"},{"kind":5},{"Kind":"B"},[],"x",null,{"kind":"A","kind":"C"}]"#,
            r#"[{"kind":"A","kind":null},{"spec":{"kind":"B"}},{"kind":{"a":1}}]"#,
            r#"{"kind":"A"}"#,
            "12",
            r#""s""#,
            "null",
            "[1e400]",
            r#"["\ud800"]"#,
            r#"[{"k\ud800":1}]"#,
            "[1,]",
            "[",
            r#"[{"a":"b"}] x"#,
            "[\"a\u{1}\"]",
            deep.as_str(),
            "[-0.0, 18446744073709551616, true, false]",
        ];
        for case in alm_cases {
            let want = serde_json::from_str::<J>(case)
                .map(|v| match v {
                    J::Array(items) => Some(
                        items
                            .iter()
                            .map(|i| i.get("kind").and_then(J::as_str).map(str::to_string))
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
                .map_err(|e| e.to_string());
            let got = serde_json::from_str::<shapes::AlmExamples>(case)
                .map(|a| a.0)
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "{case}");
        }
        let deep_map = format!("{{\"a\":{deep}}}");
        let map_cases = [
            r#"{"a":"x","b":1,"a":2}"#,
            r#"{"b":true,"a":[1]}"#,
            r#"{"b":"x","a":"y","b":null,"c":{}}"#,
            r#"{"alm-examples":"[]","x":null}"#,
            r#"{"alm-examples":"[1]","alm-examples":"[2]"}"#,
            r#"{"alm-examples":5,"z":"q"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":"\ud800"}"#,
            "[1]",
            "\"s\"",
            "3",
            "false",
            "{",
            deep_map.as_str(),
        ];
        for case in map_cases {
            let want = serde_json::from_str::<J>(case)
                .map(|v| match &v {
                    J::Object(map) => (
                        map.values()
                            .find(|x| !x.is_string() && !x.is_null())
                            .map(kind),
                        map.get("alm-examples")
                            .and_then(J::as_str)
                            .map(str::to_string),
                        "object",
                    ),
                    other => (None, None, kind(other)),
                })
                .map_err(|e| e.to_string());
            let got = serde_json::from_str::<shapes::StringMap>(case)
                .map(|m| match m {
                    shapes::StringMap::Object { bad, alm_examples } => {
                        (bad, alm_examples, "object")
                    }
                    shapes::StringMap::Other(k) => (None, None, k),
                })
                .map_err(|e| e.to_string());
            assert_eq!(got, want, "{case}");
        }
    }

    /// The one-pass reader of raw `crdDescriptions` must find exactly what reading the parsed
    /// value finds, whatever the shapes around `owned[].kind`.
    #[test]
    fn raw_and_parsed_readers_agree_on_every_shape() {
        let cases = [
            r#"{"owned":[{"kind":"A"},{"kind":"B","name":"b"}]}"#,
            r#"{"owned":[{"kind":"A","kind":"B"}]}"#,
            r#"{"owned":[{"Kind":"A"},{"kind":5},{"kind":null},{"kind":["A"]},{"kind":{"x":1}}]}"#,
            r#"{"owned":[1,true,null,"A",1.5,[],{}]}"#,
            r#"{"owned":{"kind":"A"}}"#,
            r#"{"owned":"A"}"#,
            r#"{"owned":null}"#,
            r#"{"owned":7,"required":[{"kind":"R"}]}"#,
            r#"{"owned":[{"kind":"A"}],"owned":[{"kind":"B"}]}"#,
            r#"[{"kind":"A"}]"#,
            r#""text""#,
            r#"12"#,
            r#"false"#,
            r#"null"#,
            r#"{}"#,
        ];
        for case in cases {
            let raw: Box<RawValue> = serde_json::from_str(case).expect("raw");
            let value: J = serde_json::from_str(case).expect("value");
            assert_eq!(
                raw_owned_kinds(Some(&raw)),
                owned_kinds(Some(&value)),
                "{case}"
            );
        }
    }
}
