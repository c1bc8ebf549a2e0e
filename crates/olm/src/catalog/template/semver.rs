//! The `olm.semver` template (opm `alpha/template/semver/semver.go`), with the edge rules of
//! each opm era.
//!
//! Why every era: opm changed how semver channels are linked twice (v1.57.0 stopped skipping the
//! bundle a head replaces, v1.61.0 went back from per-channel to per-edge linking) and v1.65.0
//! started copying the package description and icon from the default channel's head. Pipelines
//! pin different releases, and the checked-in catalogs show each era's edges.

use super::{BundleRenderer, Located, OpmCompat, TemplateOptions, json_kind, render_all};
use crate::catalog::bundle_facts::{PackageProperty, PropertyValue};
use crate::catalog::model::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, Origin, Package, SCHEMA_CHANNEL,
    SCHEMA_PACKAGE, property_type,
};
use crate::yaml::{Node, ScalarKind, Value};
use semver::Version;
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet};

/// `schema` of a semver template.
pub const SCHEMA: &str = "olm.semver";

/// Channel archetypes in ascending stability (opm's `channelPriorities`).
const ARCHETYPES: [&str; 3] = ["candidate", "fast", "stable"];

/// Major or minor channels; the derived order is opm's `streamTypePriorities` (minor preferred).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Unset,
    Major,
    Minor,
}

/// One `{image}` of a channel's `bundles`, with its line.
#[derive(Debug, Clone)]
struct BundleRef {
    image: String,
    line: usize,
}

/// The parsed template (opm's `SemverTemplateData`).
#[derive(Debug, Default)]
struct Data {
    schema: String,
    major: bool,
    minor: bool,
    preference: Option<Kind>,
    preference_text: String,
    preference_line: usize,
    archetypes: [Vec<BundleRef>; 3],
}

/// Renders a semver template whose first document is `root`.
pub(crate) fn render(
    root: Option<&Node>,
    options: &TemplateOptions,
    renderer: &dyn BundleRenderer,
) -> Result<DeclarativeConfig, Located> {
    let compat = options.compat;
    let data = read(root, compat).map_err(|l| {
        Located::new(
            l.line,
            format!("render: unable to read file: {}", l.message),
        )
    })?;

    // Unique references in template order (candidate, fast, stable), each rendered once.
    let mut refs: Vec<String> = Vec::new();
    let mut ref_line: HashMap<String, usize> = HashMap::new();
    for entry in data.archetypes.iter().flatten() {
        if !ref_line.contains_key(&entry.image) {
            ref_line.insert(entry.image.clone(), entry.line);
            refs.push(entry.image.clone());
        }
    }
    let results = render_all(&refs, renderer, options.jobs);
    let mut bundles: Vec<Bundle> = Vec::new();
    let mut rendered_image: HashMap<&str, String> = HashMap::new();
    for (reference, result) in refs.iter().zip(results) {
        let line = ref_line.get(reference).copied().unwrap_or(0);
        let rendered = result.map_err(|e| Located::new(line, e.message))?;
        if compat.at_least(1, 48) && rendered.len() != 1 {
            return Err(Located::new(
                line,
                format!(
                    "bundle reference {reference:?} resulted in {} bundles, expected 1",
                    rendered.len()
                ),
            ));
        }
        let image = rendered
            .first()
            .map_or_else(|| reference.clone(), |b| b.image.clone());
        rendered_image.insert(reference.as_str(), image);
        bundles.extend(rendered);
    }
    if bundles.is_empty() {
        return Err(Located::new(
            0,
            "render: no bundles specified or no bundles could be rendered",
        ));
    }

    let mut package = String::new();
    let mut versions: Vec<Vec<(String, Version)>> = Vec::new();
    for entries in &data.archetypes {
        let found = versions_of(entries, &bundles, &rendered_image, &mut package)
            .and_then(|v| validate_versions(&v).map(|()| v))
            .map_err(|l| {
                Located::new(
                    l.line,
                    format!("render: unable to post-process bundle info: {}", l.message),
                )
            })?;
        versions.push(found);
    }

    let (channels, default_channel) = generate_channels(&data, &package, &versions, compat);
    let mut pkg = Package {
        schema: SCHEMA_PACKAGE.to_string(),
        name: package,
        default_channel,
        icon: None,
        description: String::new(),
        properties: Vec::new(),
        origin: Origin::default(),
    };
    if compat.at_least(1, 65) {
        populate_package_metadata(&mut pkg, &channels, &bundles);
    }
    Ok(DeclarativeConfig {
        packages: vec![pkg],
        channels,
        bundles,
        deprecations: Vec::new(),
        others: Vec::new(),
    })
}

/// `yaml.UnmarshalStrict` into opm's struct: keys matched case-insensitively, unknown keys and
/// wrong types refused (the first problem in document order), then opm's defaults and checks.
fn read(root: Option<&Node>, compat: OpmCompat) -> Result<Data, Located> {
    let type_name = if compat.at_least(1, 62) {
        ("SemverTemplateData", "channelBundles", "bundleEntry")
    } else {
        (
            "semverTemplate",
            "semverTemplateChannelBundles",
            "semverTemplateBundleEntry",
        )
    };
    let strict = |line: usize, message: String| {
        Located::new(
            line,
            format!("error unmarshaling JSON: while decoding JSON: json: {message}"),
        )
    };
    let mismatch = |node: &Node, path: &str, go_type: &str| {
        strict(
            node.line,
            format!(
                "cannot unmarshal {} into Go struct field {}.{path} of type {go_type}",
                json_kind(node),
                type_name.0
            ),
        )
    };
    let mut data = Data::default();
    if let Some(root) = root {
        let entries = match &root.value {
            Value::Map(entries) => entries,
            Value::Scalar(_, ScalarKind::Null) => &Vec::new(),
            _ => {
                return Err(strict(
                    root.line,
                    format!(
                        "cannot unmarshal {} into Go value of type semver.{}",
                        json_kind(root),
                        type_name.0
                    ),
                ));
            }
        };
        for (key, value) in entries {
            let field = key.text.to_ascii_lowercase();
            match field.as_str() {
                "schema" => {
                    if let Some(s) =
                        string_of(value).map_err(|()| mismatch(value, "schema", "string"))?
                    {
                        data.schema = s;
                    }
                }
                "generatemajorchannels" => {
                    if let Some(b) = bool_of(value)
                        .map_err(|()| mismatch(value, "generateMajorChannels", "bool"))?
                    {
                        data.major = b;
                    }
                }
                "generateminorchannels" => {
                    if let Some(b) = bool_of(value)
                        .map_err(|()| mismatch(value, "generateMinorChannels", "bool"))?
                    {
                        data.minor = b;
                    }
                }
                "defaultchanneltypepreference" => {
                    if let Some(s) = string_of(value).map_err(|()| {
                        mismatch(value, "defaultChannelTypePreference", "semver.StreamType")
                    })? {
                        data.preference_text = s;
                        data.preference_line = value.line;
                    }
                }
                "candidate" | "fast" | "stable" => {
                    let index = match field.as_str() {
                        "candidate" => 0,
                        "fast" => 1,
                        _ => 2,
                    };
                    let json_name = ARCHETYPES.get(index).copied().unwrap_or_default();
                    let bundles = read_channel(value, json_name, type_name, &mismatch, &strict)?;
                    if let (Some(bundles), Some(slot)) = (bundles, data.archetypes.get_mut(index)) {
                        *slot = bundles;
                    }
                }
                _ => return Err(strict(key.line, format!("unknown field {:?}", key.text))),
            }
        }
    }

    if data.schema != SCHEMA {
        return Err(Located::new(
            root.map_or(0, |r| r.line),
            format!("readFile: input file has unknown schema, should be {SCHEMA:?}"),
        ));
    }
    if !data.major && !data.minor {
        data.minor = true;
    }
    let line = match data.preference_line {
        0 => root.map_or(0, |r| r.line),
        l => l,
    };
    data.preference = Some(match data.preference_text.as_str() {
        "" => {
            if data.minor {
                Kind::Minor
            } else {
                Kind::Major
            }
        }
        "minor" if !data.minor => {
            return Err(Located::new(
                line,
                "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels",
            ));
        }
        "major" if !data.major => {
            return Err(Located::new(
                line,
                "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels",
            ));
        }
        "minor" => Kind::Minor,
        "major" => Kind::Major,
        other => {
            return Err(Located::new(
                line,
                format!(
                    "unknown DefaultChannelTypePreference: {other:?}\nValid values are 'major' or 'minor'"
                ),
            ));
        }
    });
    Ok(data)
}

type Mismatch<'a> = dyn Fn(&Node, &str, &str) -> Located + 'a;
type Strict<'a> = dyn Fn(usize, String) -> Located + 'a;

/// One archetype's `{bundles: [{image}]}`; `None` when the value is null (field left as is).
fn read_channel(
    value: &Node,
    json_name: &str,
    type_name: (&str, &str, &str),
    mismatch: &Mismatch<'_>,
    strict: &Strict<'_>,
) -> Result<Option<Vec<BundleRef>>, Located> {
    let entries = match &value.value {
        Value::Scalar(_, ScalarKind::Null) => return Ok(None),
        Value::Map(entries) => entries,
        _ => {
            return Err(mismatch(
                value,
                json_name,
                &format!("semver.{}", type_name.1),
            ));
        }
    };
    let mut out = Vec::new();
    for (key, list) in entries {
        if !key.text.eq_ignore_ascii_case("bundles") {
            return Err(strict(key.line, format!("unknown field {:?}", key.text)));
        }
        let path = format!("{json_name}.bundles");
        let items = match &list.value {
            Value::Scalar(_, ScalarKind::Null) => {
                out.clear();
                continue;
            }
            Value::Seq(items) => items,
            _ => return Err(mismatch(list, &path, &format!("[]semver.{}", type_name.2))),
        };
        out.clear();
        for item in items {
            let mut image = BundleRef {
                image: String::new(),
                line: item.line,
            };
            match &item.value {
                Value::Scalar(_, ScalarKind::Null) => {}
                Value::Map(fields) => {
                    for (k, v) in fields {
                        if !k.text.eq_ignore_ascii_case("image") {
                            return Err(strict(k.line, format!("unknown field {:?}", k.text)));
                        }
                        let image_path = format!("{path}.image");
                        if let Some(s) =
                            string_of(v).map_err(|()| mismatch(v, &image_path, "string"))?
                        {
                            image.image = s;
                            image.line = v.line;
                        }
                    }
                }
                _ => return Err(mismatch(item, &path, &format!("semver.{}", type_name.2))),
            }
            out.push(image);
        }
    }
    Ok(Some(out))
}

fn string_of(node: &Node) -> Result<Option<String>, ()> {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => Ok(None),
        Value::Scalar(s, ScalarKind::Str) => Ok(Some(s.to_string())),
        _ => Err(()),
    }
}

fn bool_of(node: &Node) -> Result<Option<bool>, ()> {
    match &node.value {
        Value::Scalar(_, ScalarKind::Null) => Ok(None),
        Value::Scalar(_, ScalarKind::Bool(b)) => Ok(Some(*b)),
        _ => Err(()),
    }
}

/// The `olm.package` property of a rendered bundle: (package name, version text); a field
/// that is not a string reads as empty here, as before (opm's template reads the model).
pub(crate) fn package_property(bundle: &Bundle) -> Result<(String, String), String> {
    let mut found = Vec::new();
    for (_, p) in bundle.properties_of(property_type::PACKAGE) {
        let value = PropertyValue::decode(&p.value, PackageProperty::GO_TYPE).ok();
        let field = |name: &str| -> String {
            value
                .as_ref()
                .and_then(|v| v.string(name).ok())
                .unwrap_or_default()
        };
        found.push((field("packageName"), field("version")));
    }
    match found.pop() {
        Some(one) if found.is_empty() => Ok(one),
        _ => Err(format!(
            "bundle {:?} has multiple {:?} properties, expected exactly 1",
            bundle.name,
            property_type::PACKAGE
        )),
    }
}

/// opm's `getVersionsFromChannel`: each listed image's rendered bundle, its version, the package
/// check (the first bundle names the package) and the duplicate check.
fn versions_of(
    entries: &[BundleRef],
    bundles: &[Bundle],
    rendered_image: &HashMap<&str, String>,
    package: &mut String,
) -> Result<Vec<(String, Version)>, Located> {
    let mut out: Vec<(String, Version)> = Vec::new();
    for entry in entries {
        let wanted = rendered_image
            .get(entry.image.as_str())
            .map_or(entry.image.as_str(), String::as_str);
        let Some(bundle) = bundles.iter().find(|b| b.image == wanted) else {
            return Err(Located::new(
                entry.line,
                format!(
                    "supplied bundle image name {:?} not found in rendered bundle images",
                    entry.image
                ),
            ));
        };
        let (package_name, version_text) =
            package_property(bundle).map_err(|m| Located::new(entry.line, m))?;
        let version = Version::parse(&version_text).map_err(|e| {
            Located::new(
                entry.line,
                format!(
                    "bundle {:?} has invalid version {version_text:?}: {e}",
                    bundle.name
                ),
            )
        })?;
        if package.is_empty() {
            *package = package_name;
        } else if package_name != *package {
            return Err(Located::new(
                entry.line,
                format!("bundle {package_name:?} does not belong to this package: {package:?}"),
            ));
        }
        if out.iter().any(|(n, _)| *n == bundle.name) {
            return Err(Located::new(
                entry.line,
                format!("duplicate bundle name {:?}", bundle.name),
            ));
        }
        out.push((bundle.name.clone(), version));
    }
    Ok(out)
}

/// opm's `withoutBuildMetadataConflict`: versions equal but for build metadata cannot be ordered.
fn validate_versions(versions: &[(String, Version)]) -> Result<(), Located> {
    let mut seen = HashSet::new();
    let mut errs = Vec::new();
    for (_, v) in versions {
        let mut stripped = v.clone();
        stripped.build = semver::BuildMetadata::EMPTY;
        let stripped = stripped.to_string();
        if !seen.insert(stripped.clone()) {
            errs.push(format!(
                "bundle version {:?} cannot be compared to {stripped:?}",
                v.to_string()
            ));
        }
    }
    if errs.is_empty() {
        return Ok(());
    }
    Err(Located::new(
        0,
        format!(
            "encountered bundle versions which differ only by build metadata, which cannot be ordered: {}",
            aggregate(&errs)
        ),
    ))
}

/// k8s `errors.NewAggregate(...).Error()`: one message alone, several deduplicated in brackets.
fn aggregate(errs: &[String]) -> String {
    if let [one] = errs {
        return one.clone();
    }
    let mut seen: Vec<&str> = Vec::new();
    for e in errs {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// blang/semver comparison: precedence, build metadata ignored.
fn cmp_versions(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

/// The "high-water" channel that becomes the package's default channel.
#[derive(Debug, Clone)]
struct HighWater {
    archetype: usize,
    kind: Kind,
    version: Version,
    name: String,
}

impl HighWater {
    fn gt(&self, other: &HighWater, preference: Kind) -> bool {
        if self.archetype != other.archetype {
            return self.archetype > other.archetype;
        }
        match cmp_versions(&self.version, &other.version) {
            Ordering::Greater => return true,
            Ordering::Less => return false,
            Ordering::Equal => {}
        }
        if self.kind != other.kind {
            if self.kind == preference {
                return true;
            }
            if other.kind == preference {
                return false;
            }
            return self.kind > other.kind;
        }
        false
    }
}

/// One channel entry before linking (opm's `entryTuple`).
#[derive(Debug, Clone)]
struct Tuple {
    archetype: usize,
    kind: Kind,
    channel: usize,
    name: String,
    version: Version,
    index: usize,
}

/// opm's `generateChannels` + `linkChannels`: the channels sorted by name and the default channel.
fn generate_channels(
    data: &Data,
    package: &str,
    versions: &[Vec<(String, Version)>],
    compat: OpmCompat,
) -> (Vec<Channel>, String) {
    let preference = data.preference.unwrap_or(Kind::Minor);
    let mut hwc = HighWater {
        archetype: 0,
        kind: Kind::Unset,
        version: Version::new(0, 0, 0),
        name: String::new(),
    };
    let mut channels: Vec<Channel> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut tuples: Vec<Tuple> = Vec::new();
    for (archetype, bundles) in versions.iter().enumerate() {
        let arch_name = ARCHETYPES.get(archetype).copied().unwrap_or_default();
        let mut sorted: Vec<&(String, Version)> = bundles.iter().collect();
        sorted.sort_by(|a, b| cmp_versions(&a.1, &b.1).then_with(|| a.0.cmp(&b.0)));
        for (name, version) in sorted {
            let mut kinds = Vec::new();
            if data.major {
                kinds.push((Kind::Major, format!("{arch_name}-v{}", version.major)));
            }
            if data.minor {
                kinds.push((
                    Kind::Minor,
                    format!("{arch_name}-v{}.{}", version.major, version.minor),
                ));
            }
            for (kind, channel_name) in kinds {
                let index = match by_name.get(&channel_name) {
                    Some(i) => *i,
                    None => {
                        channels.push(Channel {
                            schema: SCHEMA_CHANNEL.to_string(),
                            name: channel_name.clone(),
                            package: package.to_string(),
                            entries: Some(Vec::new()),
                            properties: Vec::new(),
                            origin: Origin::default(),
                        });
                        let i = channels.len() - 1;
                        by_name.insert(channel_name.clone(), i);
                        let candidate = HighWater {
                            archetype,
                            kind,
                            version: version.clone(),
                            name: channel_name.clone(),
                        };
                        if candidate.gt(&hwc, preference) {
                            hwc = candidate;
                        }
                        i
                    }
                };
                if let Some(entries) = channels.get_mut(index).and_then(|c| c.entries.as_mut()) {
                    entries.push(ChannelEntry {
                        name: name.clone(),
                        ..ChannelEntry::default()
                    });
                    tuples.push(Tuple {
                        archetype,
                        kind,
                        channel: index,
                        name: name.clone(),
                        version: version.clone(),
                        index: entries.len() - 1,
                    });
                }
            }
        }
    }
    if compat.at_least(1, 61) {
        link_edge_scoped(&mut channels, tuples);
    } else {
        let all: HashMap<&str, &Version> = versions
            .iter()
            .flatten()
            .map(|(n, v)| (n.as_str(), v))
            .collect();
        for channel in &mut channels {
            link_inchworm(channel, &all, compat.at_least(1, 57));
        }
    }
    channels.sort_by(|a, b| a.name.cmp(&b.name));
    (channels, hwc.name)
}

fn entry_mut(channels: &mut [Channel], channel: usize, index: usize) -> Option<&mut ChannelEntry> {
    channels
        .get_mut(channel)
        .and_then(|c| c.entries.as_mut())
        .and_then(|e| e.get_mut(index))
}

/// opm ≥ v1.61.0 (`linkChannels`, OR #1813): edges computed over all entries sorted by
/// (archetype, kind, version); see CATALOG.md E.2.
fn link_edge_scoped(channels: &mut [Channel], mut entries: Vec<Tuple>) {
    entries.sort_by(|a, b| {
        a.archetype
            .cmp(&b.archetype)
            .then(a.kind.cmp(&b.kind))
            .then_with(|| cmp_versions(&a.version, &b.version))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut prev_zmax = String::new();
    let mut cur_skips: BTreeSet<String> = BTreeSet::new();
    let set_edges =
        |channels: &mut [Channel], t: &Tuple, replaces: &str, skips: &BTreeSet<String>| {
            if let Some(entry) = entry_mut(channels, t.channel, t.index) {
                entry.replaces = replaces.to_string();
                let list: Vec<String> = skips.iter().filter(|s| *s != replaces).cloned().collect();
                if !list.is_empty() {
                    entry.skips = list;
                }
            }
        };
    for pair in entries.windows(2) {
        let [prev, cur] = pair else { continue };
        let arch_change = prev.archetype != cur.archetype;
        let kind_change = prev.kind != cur.kind;
        let x_change = prev.version.major != cur.version.major;
        let y_change = x_change || prev.version.minor != cur.version.minor;
        if arch_change || kind_change || x_change || y_change {
            set_edges(channels, prev, &prev_zmax, &cur_skips);
        }
        if arch_change || kind_change || x_change {
            cur_skips.clear();
            prev_zmax.clear();
        } else {
            if y_change {
                prev_zmax = prev.name.clone();
            }
            cur_skips.insert(prev.name.clone());
        }
    }
    if let [.., penultimate, last] = entries.as_slice()
        && penultimate.archetype == last.archetype
        && penultimate.kind == last.kind
        && penultimate.version.major == last.version.major
    {
        set_edges(channels, last, &prev_zmax, &cur_skips);
    }
}

/// opm v1.27 – v1.60 (`linkChannels`, per channel, the "inchworm"). Before v1.57.0 (OR #1749) the
/// head of a Y-stream also skips the bundle it replaces.
fn link_inchworm(
    channel: &mut Channel,
    versions: &HashMap<&str, &Version>,
    no_skip_replaced: bool,
) {
    let Some(entries) = channel.entries.as_mut() else {
        return;
    };
    let zero = Version::new(0, 0, 0);
    let version_of = |name: &str| -> Version {
        versions
            .get(name)
            .map_or_else(|| zero.clone(), |v| (*v).clone())
    };
    entries.sort_by(|a, b| {
        cmp_versions(&version_of(&a.name), &version_of(&b.name)).then_with(|| a.name.cmp(&b.name))
    });
    let count = entries.len();
    let mut cur_edge = 0usize;
    let mut y_probe = 0usize;
    let mut zmax_queue = String::new();
    let minor_of = |v: &Version| (v.major, v.minor);
    while cur_edge < count {
        while y_probe < count {
            let cur = entries
                .get(cur_edge)
                .map(|e| version_of(&e.name))
                .unwrap_or_else(|| zero.clone());
            let probe = entries
                .get(y_probe)
                .map(|e| version_of(&e.name))
                .unwrap_or_else(|| zero.clone());
            if minor_of(&probe) == minor_of(&cur) {
                y_probe += 1;
            } else {
                break;
            }
        }
        let pre = y_probe.saturating_sub(1);
        if cur_edge != y_probe {
            if !zmax_queue.is_empty()
                && let Some(e) = entries.get_mut(pre)
            {
                if !no_skip_replaced {
                    e.skips.push(zmax_queue.clone());
                }
                e.replaces = zmax_queue.clone();
            }
            zmax_queue = entries.get(pre).map(|e| e.name.clone()).unwrap_or_default();
        }
        while cur_edge < pre {
            let skipped = entries
                .get(cur_edge)
                .map(|e| e.name.clone())
                .unwrap_or_default();
            if let Some(e) = entries.get_mut(pre)
                && (!no_skip_replaced || e.replaces != skipped)
            {
                e.skips.push(skipped);
            }
            cur_edge += 1;
        }
        cur_edge += 1;
        y_probe = cur_edge + 1;
    }
    if count > 1 {
        let penultimate = entries
            .get(count - 2)
            .map(|e| (e.name.clone(), version_of(&e.name)));
        let last_version = entries.get(count - 1).map(|e| version_of(&e.name));
        if let (Some((pname, pver)), Some(lver)) = (penultimate, last_version)
            && lver.minor != pver.minor
            && let Some(last) = entries.get_mut(count - 1)
        {
            last.replaces = pname;
        }
    }
}

/// opm ≥ v1.65.0 (OR #1933): the package's description and icon come from the CSV of the head
/// (last entry) of the default channel, when the CSV has them.
fn populate_package_metadata(pkg: &mut Package, channels: &[Channel], bundles: &[Bundle]) {
    let Some(head) = channels
        .iter()
        .find(|c| c.name == pkg.default_channel)
        .and_then(|c| c.entries.as_ref())
        .and_then(|e| e.last())
    else {
        return;
    };
    let Some(csv) = bundles
        .iter()
        .find(|b| b.name == head.name)
        .and_then(|b| b.csv_json.as_deref())
        .filter(|c| !c.is_empty())
    else {
        return;
    };
    let Ok(serde_json::Value::Object(csv)) = serde_json::from_str::<serde_json::Value>(csv) else {
        return;
    };
    let Some(serde_json::Value::Object(spec)) = csv
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("spec"))
        .map(|(_, v)| v)
        .next_back()
    else {
        return;
    };
    if let Some(serde_json::Value::String(desc)) = spec.get("description")
        && !desc.is_empty()
    {
        pkg.description = desc.clone();
    }
    if let Some(serde_json::Value::Array(icons)) = spec.get("icon")
        && let Some(icons) = icons.iter().map(go_icon).collect::<Option<Vec<Icon>>>()
        && let Some(first) = icons.into_iter().next()
    {
        pkg.icon = Some(first);
    }
}

/// Go's decoding of `{base64data: []byte, mediatype: string}`: `None` when Go would fail.
fn go_icon(value: &serde_json::Value) -> Option<Icon> {
    use base64::Engine as _;
    let map = match value {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => {
            return Some(Icon {
                base64data: None,
                mediatype: String::new(),
            });
        }
        _ => return None,
    };
    let mut icon = Icon {
        base64data: None,
        mediatype: String::new(),
    };
    for (k, v) in map {
        if k.eq_ignore_ascii_case("base64data") {
            icon.base64data = match v {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => {
                    let cleaned: String = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
                    Some(
                        base64::engine::general_purpose::STANDARD
                            .decode(cleaned)
                            .ok()?,
                    )
                }
                _ => return None,
            };
        } else if k.eq_ignore_ascii_case("mediatype") {
            icon.mediatype = match v {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                _ => return None,
            };
        }
    }
    Some(icon)
}

/// The kind of channel a name would be (for `catalog add --mode semver`): exposed to reuse the
/// naming rule.
pub fn channel_name(archetype: &str, version: &Version, major: bool) -> String {
    if major {
        format!("{archetype}-v{}", version.major)
    } else {
        format!("{archetype}-v{}.{}", version.major, version.minor)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::model::{Property, SCHEMA_BUNDLE};
    use crate::yaml::parse_stream;

    /// A rendered bundle for tests.
    pub(crate) fn bundle(name: &str, package: &str, version: &str, image: &str) -> Bundle {
        Bundle {
            schema: SCHEMA_BUNDLE.to_string(),
            name: name.to_string(),
            package: package.to_string(),
            image: image.to_string(),
            properties: vec![
                Property::new(
                    property_type::PACKAGE,
                    format!(r#"{{"packageName":"{package}","version":"{version}"}}"#),
                )
                .unwrap_or_else(|_| panic!("test property")),
            ],
            related_images: Vec::new(),
            objects: Vec::new(),
            csv_json: None,
            origin: Origin::default(),
        }
    }

    /// Images named `pkg:VERSION` render to bundle `pkg.vVERSION`.
    pub(crate) fn fake(image: &str) -> Result<Vec<Bundle>, super::super::BundleRenderError> {
        let (pkg, version) = image
            .rsplit_once(':')
            .ok_or_else(|| super::super::BundleRenderError::new(format!("cannot pull {image}")))?;
        let pkg = pkg.rsplit('/').next().unwrap_or(pkg);
        Ok(vec![bundle(
            &format!("{pkg}.v{version}"),
            pkg,
            version,
            image,
        )])
    }

    fn run(text: &str, compat: OpmCompat) -> Result<DeclarativeConfig, Located> {
        let docs = parse_stream(text).map_err(|e| Located::new(e.line, e.message))?;
        let options = TemplateOptions {
            template_type: None,
            compat,
            jobs: 2,
        };
        render(docs.first().map(|d| &d.root), &options, &fake)
    }

    fn edges(cfg: &DeclarativeConfig) -> Vec<String> {
        let mut out = Vec::new();
        for c in &cfg.channels {
            for e in c.entries.iter().flatten() {
                out.push(format!(
                    "{} {} r={} s={}",
                    c.name,
                    e.name,
                    e.replaces,
                    e.skips.join(",")
                ));
            }
        }
        out
    }

    const MINOR: &str = "schema: olm.semver\nstable:\n  bundles:\n  - image: op:1.0.0\n  - image: op:1.0.1\n  - image: op:1.1.0\n  - image: op:1.1.1\n  - image: op:2.0.0\n";

    /// MINOR's edges, one line a bundle; only op.v1.1.1's (`v111`) differs between opm's
    /// generations.
    fn minor_edges(v111: &str) -> Vec<String> {
        let lines = [
            "stable-v1.0 op.v1.0.0 r= s=",
            "stable-v1.0 op.v1.0.1 r= s=op.v1.0.0",
            "stable-v1.1 op.v1.1.0 r= s=",
            v111,
            "stable-v2.0 op.v2.0.0 r= s=",
        ];
        lines.map(String::from).to_vec()
    }

    #[test]
    fn minor_channels_newest_edges() {
        let cfg = run(MINOR, OpmCompat::NEWEST).unwrap_or_default();
        assert_eq!(
            cfg.packages.first().map(|p| p.default_channel.as_str()),
            Some("stable-v2.0")
        );
        assert_eq!(
            edges(&cfg),
            minor_edges("stable-v1.1 op.v1.1.1 r=op.v1.0.1 s=op.v1.0.0,op.v1.1.0")
        );
    }

    #[test]
    fn minor_channels_v146_edges() {
        let cfg = run(MINOR, OpmCompat::new(1, 46)).unwrap_or_default();
        assert_eq!(
            edges(&cfg),
            minor_edges("stable-v1.1 op.v1.1.1 r= s=op.v1.1.0")
        );
    }

    #[test]
    fn major_channels_per_era() {
        let t = MINOR.replace(
            "schema: olm.semver\n",
            "Schema: olm.semver\nGenerateMajorChannels: true\nGenerateMinorChannels: false\n",
        );
        let old = run(&t, OpmCompat::new(1, 46)).unwrap_or_default();
        assert_eq!(
            edges(&old),
            vec![
                "stable-v1 op.v1.0.0 r= s=",
                "stable-v1 op.v1.0.1 r= s=op.v1.0.0",
                "stable-v1 op.v1.1.0 r= s=",
                "stable-v1 op.v1.1.1 r=op.v1.0.1 s=op.v1.0.1,op.v1.1.0",
                "stable-v2 op.v2.0.0 r= s=",
            ]
        );
        let fixed = run(&t, OpmCompat::new(1, 57)).unwrap_or_default();
        assert_eq!(
            edges(&fixed).get(3).map(String::as_str),
            Some("stable-v1 op.v1.1.1 r=op.v1.0.1 s=op.v1.1.0")
        );
        let new = run(&t, OpmCompat::NEWEST).unwrap_or_default();
        assert_eq!(
            edges(&new).get(3).map(String::as_str),
            Some("stable-v1 op.v1.1.1 r=op.v1.0.1 s=op.v1.0.0,op.v1.1.0")
        );
        assert_eq!(
            new.packages.first().map(|p| p.default_channel.as_str()),
            Some("stable-v2")
        );
    }

    #[test]
    fn errors_are_opms() {
        let msg = |t: &str| {
            run(t, OpmCompat::NEWEST)
                .err()
                .map(|e| e.message)
                .unwrap_or_default()
        };
        assert_eq!(
            msg("schema: olm.semver\nfoo: 1\n"),
            "render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field \"foo\""
        );
        assert_eq!(
            msg("schema: olm.semverx\n"),
            "render: unable to read file: readFile: input file has unknown schema, should be \"olm.semver\""
        );
        assert!(msg("schema: olm.semver\ngenerateMinorChannels: false\ngenerateMajorChannels: true\ndefaultChannelTypePreference: minor\n").contains("DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels"));
        assert!(msg("schema: olm.semver\ndefaultChannelTypePreference: patch\n").ends_with("unknown DefaultChannelTypePreference: \"patch\"\nValid values are 'major' or 'minor'"));
        assert_eq!(
            msg("schema: olm.semver\n"),
            "render: no bundles specified or no bundles could be rendered"
        );
        assert_eq!(
            msg(
                "schema: olm.semver\nstable:\n  bundles:\n  - image: op:1.0.0+a\n  - image: op:1.0.0+b\n"
            ),
            "render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version \"1.0.0+b\" cannot be compared to \"1.0.0\""
        );
        assert_eq!(
            msg(
                "schema: olm.semver\nstable:\n  bundles:\n  - image: op:1.0.0\n  - image: other:1.0.1\n"
            ),
            "render: unable to post-process bundle info: bundle \"other\" does not belong to this package: \"op\""
        );
        assert_eq!(
            msg(
                "schema: olm.semver\nstable:\n  bundles:\n  - image: op:1.0.0\n  - image: x/op:1.0.0\n"
            ),
            "render: unable to post-process bundle info: duplicate bundle name \"op.v1.0.0\""
        );
    }
}
