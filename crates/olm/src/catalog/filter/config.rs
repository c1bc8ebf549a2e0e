//! The filter configuration: catalog-filter's `FilterConfiguration`
//! (`olm.operatorframework.io/filter/mirror/v1alpha1`) or oc-mirror's `ImageSetConfiguration`
//! (`mirror.operators[]`), read with every value's line so a mistake is reported where it is.
//!
//! Why both: oc-mirror users already have an `ImageSetConfiguration`; catalog-filter's own type is
//! what oc-mirror maps it to (`minVersion`/`maxVersion` become `>=min <=max`), so both give the
//! same filter.

use crate::gocompat::mmsemver::Constraints;
use crate::yaml::{self, Node};
use std::path::{Path, PathBuf};

/// apiVersion of a `FilterConfiguration`.
pub const FILTER_API_VERSION: &str = "olm.operatorframework.io/filter/mirror/v1alpha1";
/// kind of a `FilterConfiguration`.
pub const FILTER_KIND: &str = "FilterConfiguration";
/// kind of an oc-mirror configuration.
pub const IMAGESET_KIND: &str = "ImageSetConfiguration";

/// A value and the line it was written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At<T> {
    /// The value.
    pub value: T,
    /// 1-based line in the configuration file (0 when made in memory).
    pub line: usize,
}

impl<T> At<T> {
    /// A value made in memory (no line).
    pub fn new(value: T) -> Self {
        At { value, line: 0 }
    }
}

/// A whole filter: the packages to keep and whether to keep them in full.
#[derive(Debug, Clone, Default)]
pub struct FilterConfig {
    /// The file it was read from (for messages), empty when made in memory.
    pub file: PathBuf,
    /// Packages to keep; none means every package.
    pub packages: Vec<PackageFilter>,
    /// Keep every bundle of the selected channels, not only heads (`--full`, oc-mirror `full`).
    pub full: bool,
    /// Notes for the user (keys ignored, as catalog-filter ignores them).
    pub warnings: Vec<String>,
    /// Keep the selection as it is, without the bundles its requirements need
    /// (`--no-dependencies`; catalog-filter's and oc-mirror's behaviour).
    pub no_dependencies: bool,
}

/// One package of the filter.
#[derive(Debug, Clone)]
pub struct PackageFilter {
    /// The package name, where it was written.
    pub name: At<String>,
    /// The default channel the filtered package gets.
    pub default_channel: Option<At<String>>,
    /// A version range over every kept channel (exclusive with channel ranges).
    pub version_range: Option<At<Constraints>>,
    /// Channels to keep; none means every channel.
    pub channels: Vec<ChannelFilter>,
    /// Bundles to keep by name (exclusive with ranges and channels).
    pub bundles: Vec<At<String>>,
}

/// One channel of a package filter.
#[derive(Debug, Clone)]
pub struct ChannelFilter {
    /// The channel name.
    pub name: At<String>,
    /// A version range for this channel.
    pub version_range: Option<At<Constraints>>,
}

/// Why a configuration was refused: the file, the line, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The configuration file.
    pub file: PathBuf,
    /// 1-based line, 0 when the whole file is at fault.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file.display(), self.message),
            n => write!(f, "{}:{n}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// The refusal at `line` of `file` (0: the whole file).
    pub fn at(file: &Path, line: usize, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: file.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// A list field of a configuration file: absent or null reads as empty, anything else but a
/// list is refused with its line. The filter's reader and oc-mirror's ImageSetConfiguration
/// reader (`olmpack-cli`'s `mirror::imageset`) both read their lists through it.
pub fn list<'n>(
    file: &Path,
    node: Option<&'n Node>,
    what: &str,
) -> Result<&'n [Node], ConfigError> {
    match node {
        None => Ok(&[]),
        Some(n) if n.is_null() => Ok(&[]),
        Some(n) => n.as_seq().ok_or_else(|| {
            let found = n.kind_name();
            ConfigError::at(
                file,
                n.line,
                format!("{what} must be a list, found {found}"),
            )
        }),
    }
}

/// Reads a configuration file. `catalog` picks the `mirror.operators[]` entry of an
/// `ImageSetConfiguration` that has several.
pub fn read(path: &Path, catalog: Option<&str>) -> Result<FilterConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::at(
            path,
            0,
            format!("cannot read the filter configuration: {e}"),
        )
    })?;
    parse(path, &text, catalog)
}

struct Ctx<'a> {
    file: &'a Path,
    warnings: Vec<String>,
}

impl Ctx<'_> {
    fn err(&self, line: usize, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.file, line, message)
    }

    /// Keys outside `known` are ignored, as catalog-filter's decoder ignores them, with a
    /// warning so a misspelt key is not silently without effect.
    fn check_keys(&mut self, node: &Node, known: &[&str], what: &str) {
        for (k, _) in node.as_map().unwrap_or(&[]) {
            if !known.contains(&k.text.as_str()) {
                let hint = match k.text.as_str() {
                    "selectedBundles" => " (the key for a bundle selection is `bundles`)",
                    _ => "",
                };
                self.warnings.push(format!(
                    "{}:{}: unknown key {:?} in {what} is ignored, as catalog-filter ignores it{hint}",
                    self.file.display(),
                    k.line,
                    k.text.as_str()
                ));
            }
        }
    }

    fn string(&self, node: &Node, what: &str) -> Result<At<String>, ConfigError> {
        match node.scalar_text() {
            Some(s) => Ok(At {
                value: s.to_string(),
                line: node.line,
            }),
            None if node.is_null() => Ok(At {
                value: String::new(),
                line: node.line,
            }),
            None => Err(self.err(
                node.line,
                format!("{what} must be a string, found {}", node.kind_name()),
            )),
        }
    }

    fn seq<'n>(&self, node: Option<&'n Node>, what: &str) -> Result<&'n [Node], ConfigError> {
        list(self.file, node, what)
    }

    fn range(&self, text: At<String>, what: &str) -> Result<Option<At<Constraints>>, ConfigError> {
        if text.value.is_empty() {
            return Ok(None);
        }
        match Constraints::parse(&text.value) {
            Ok(c) => Ok(Some(At {
                value: c,
                line: text.line,
            })),
            Err(e) => Err(self.err(
                text.line,
                format!("{what} {:?} is not a valid semver range: {e}", text.value),
            )),
        }
    }
}

/// Parses a configuration's text (`file` names it in messages).
pub fn parse(file: &Path, text: &str, catalog: Option<&str>) -> Result<FilterConfig, ConfigError> {
    let mut cx = Ctx {
        file,
        warnings: Vec::new(),
    };
    let docs = yaml::parse_stream(text).map_err(|e| cx.err(e.line, e.message.clone()))?;
    let root = match docs.as_slice() {
        [one] => &one.root,
        [] => return Err(cx.err(0, "the filter configuration is empty")),
        [_, second, ..] => {
            return Err(cx.err(
                second.root.line,
                "the filter configuration holds several YAML documents; give one",
            ));
        }
    };
    if root.as_map().is_none() {
        return Err(cx.err(
            root.line,
            format!("expected a mapping, found {}", root.kind_name()),
        ));
    }
    let kind = root
        .get("kind")
        .map(|k| cx.string(k, "kind"))
        .transpose()?
        .unwrap_or(At::new(String::new()));
    let mut cfg = match kind.value.as_str() {
        FILTER_KIND => filter_configuration(&mut cx, root)?,
        IMAGESET_KIND => imageset_configuration(&mut cx, root, catalog)?,
        other => {
            return Err(cx.err(
                kind.line.max(root.line),
                format!(
                    "unexpected kind {other:?}: expected {FILTER_KIND} (apiVersion {FILTER_API_VERSION}) or oc-mirror's {IMAGESET_KIND}"
                ),
            ));
        }
    };
    cfg.file = file.to_path_buf();
    cfg.warnings = std::mem::take(&mut cx.warnings);
    Ok(cfg)
}

fn filter_configuration(cx: &mut Ctx<'_>, root: &Node) -> Result<FilterConfig, ConfigError> {
    cx.check_keys(
        root,
        &["apiVersion", "kind", "packages"],
        "the configuration",
    );
    let api = root
        .get("apiVersion")
        .map(|k| cx.string(k, "apiVersion"))
        .transpose()?
        .unwrap_or(At {
            value: String::new(),
            line: root.line,
        });
    if api.value != FILTER_API_VERSION {
        return Err(cx.err(
            api.line,
            format!(
                "unexpected API version {:?}: expected {FILTER_API_VERSION}",
                api.value
            ),
        ));
    }
    let mut packages = Vec::new();
    for (i, p) in cx.seq(root.get("packages"), "packages")?.iter().enumerate() {
        packages.push(package(cx, p, i, false)?);
    }
    Ok(FilterConfig {
        packages,
        ..Default::default()
    })
}

/// oc-mirror's `minVersion`/`maxVersion` as the range it hands to catalog-filter.
fn min_max(cx: &Ctx<'_>, node: &Node) -> Result<At<String>, ConfigError> {
    let get = |k: &str| node.get(k).map(|n| cx.string(n, k)).transpose();
    let (min, max) = (get("minVersion")?, get("maxVersion")?);
    let line = min
        .as_ref()
        .or(max.as_ref())
        .map(|a| a.line)
        .unwrap_or(node.line);
    let min = min.map(|a| a.value).filter(|s| !s.is_empty());
    let max = max.map(|a| a.value).filter(|s| !s.is_empty());
    let value = match (min, max) {
        (Some(a), Some(b)) => format!(">={a} <={b}"),
        (Some(a), None) => format!(">={a}"),
        (None, Some(b)) => format!("<={b}"),
        (None, None) => String::new(),
    };
    Ok(At { value, line })
}

fn package(
    cx: &mut Ctx<'_>,
    p: &Node,
    i: usize,
    imageset: bool,
) -> Result<PackageFilter, ConfigError> {
    if p.as_map().is_none() {
        return Err(cx.err(
            p.line,
            format!(
                "package at index [{i}] must be a mapping, found {}",
                p.kind_name()
            ),
        ));
    }
    let known: &[&str] = if imageset {
        &[
            "name",
            "defaultChannel",
            "minVersion",
            "maxVersion",
            "channels",
            "bundles",
        ]
    } else {
        &[
            "name",
            "defaultChannel",
            "versionRange",
            "channels",
            "bundles",
        ]
    };
    cx.check_keys(p, known, "a package");
    let name = match p.get("name") {
        Some(n) => cx.string(n, "name")?,
        None => At {
            value: String::new(),
            line: p.line,
        },
    };
    if name.value.is_empty() {
        return Err(cx.err(
            name.line,
            format!("package at index [{i}] is invalid: name must be specified"),
        ));
    }
    let pkg = name.value.clone();
    let default_channel = p
        .get("defaultChannel")
        .map(|n| cx.string(n, "defaultChannel"))
        .transpose()?
        .filter(|a| !a.value.is_empty());
    let range_text = if imageset {
        min_max(cx, p)?
    } else {
        p.get("versionRange")
            .map(|n| cx.string(n, "versionRange"))
            .transpose()?
            .unwrap_or(At::new(String::new()))
    };
    let version_range = cx.range(range_text, &format!("package {pkg:?}: versionRange"))?;
    let mut channels = Vec::new();
    for (j, c) in cx.seq(p.get("channels"), "channels")?.iter().enumerate() {
        if c.as_map().is_none() {
            return Err(cx.err(
                c.line,
                format!("package {pkg:?}: channel at index [{j}] must be a mapping"),
            ));
        }
        let known: &[&str] = if imageset {
            &["name", "minVersion", "maxVersion"]
        } else {
            &["name", "versionRange"]
        };
        cx.check_keys(c, known, "a channel");
        let cname = match c.get("name") {
            Some(n) => cx.string(n, "name")?,
            None => At {
                value: String::new(),
                line: c.line,
            },
        };
        if cname.value.is_empty() {
            return Err(cx.err(
                cname.line,
                format!(
                    "package {pkg:?}: channel at index [{j}] is invalid: name must be specified"
                ),
            ));
        }
        let text = if imageset {
            min_max(cx, c)?
        } else {
            c.get("versionRange")
                .map(|n| cx.string(n, "versionRange"))
                .transpose()?
                .unwrap_or(At::new(String::new()))
        };
        let range = cx.range(
            text,
            &format!("package {pkg:?} channel {:?}: versionRange", cname.value),
        )?;
        if let (Some(r), Some(_)) = (&range, &version_range) {
            return Err(cx.err(
                r.line,
                format!(
                    "package {pkg:?}: both the package and its channel {:?} give a version range; they are exclusive: give one",
                    cname.value
                ),
            ));
        }
        channels.push(ChannelFilter {
            name: cname,
            version_range: range,
        });
    }
    let mut bundles = Vec::new();
    for b in cx.seq(p.get("bundles"), "bundles")? {
        let n = match b.get("name") {
            Some(n) => cx.string(n, "name")?,
            None => cx.string(b, "bundle")?,
        };
        if n.value.is_empty() {
            return Err(cx.err(b.line, format!("package {pkg:?}: a bundle needs a name")));
        }
        bundles.push(n);
    }
    if let Some(first) = bundles.first()
        && (!channels.is_empty() || version_range.is_some())
    {
        return Err(cx.err(
            first.line,
            format!(
                "package {pkg:?}: mixing both filtering by bundles and filtering by channels or versionRange is not allowed"
            ),
        ));
    }
    Ok(PackageFilter {
        name,
        default_channel,
        version_range,
        channels,
        bundles,
    })
}

fn imageset_configuration(
    cx: &mut Ctx<'_>,
    root: &Node,
    catalog: Option<&str>,
) -> Result<FilterConfig, ConfigError> {
    let ops_node = root.path(&["mirror", "operators"]);
    let ops = cx.seq(ops_node, "mirror.operators")?;
    let pick: Vec<&Node> = ops
        .iter()
        .filter(|o| catalog.is_none_or(|c| o.get("catalog").and_then(Node::scalar_text) == Some(c)))
        .collect();
    let catalogs: Vec<String> = ops
        .iter()
        .filter_map(|o| o.get("catalog").and_then(Node::scalar_text))
        .map(str::to_string)
        .collect();
    let op = match (pick.as_slice(), catalog) {
        ([one], _) => *one,
        ([], None) => {
            return Err(cx.err(
                root.line,
                "the ImageSetConfiguration has no mirror.operators entry",
            ));
        }
        ([], Some(c)) => {
            return Err(cx.err(
                ops_node.map(|n| n.line).unwrap_or(root.line),
                format!(
                    "no mirror.operators entry has catalog {c:?}; its catalogs: {}",
                    catalogs.join(", ")
                ),
            ));
        }
        (_, _) => {
            return Err(cx.err(
                ops_node.map(|n| n.line).unwrap_or(root.line),
                format!(
                    "mirror.operators has {} entries; pick one with --catalog ({})",
                    pick.len(),
                    catalogs.join(", ")
                ),
            ));
        }
    };
    cx.check_keys(
        op,
        &[
            "catalog",
            "full",
            "packages",
            "targetCatalog",
            "targetTag",
            "skipDependencies",
            "originalRef",
        ],
        "a mirror.operators entry",
    );
    let full = op.get("full").and_then(Node::as_bool).unwrap_or(false);
    // oc-mirror's own switch for dependencies: olmpack closes them unless it is set.
    let no_dependencies = op
        .get("skipDependencies")
        .and_then(Node::as_bool)
        .unwrap_or(false);
    let mut packages = Vec::new();
    for (i, p) in cx.seq(op.get("packages"), "packages")?.iter().enumerate() {
        packages.push(package(cx, p, i, true)?);
    }
    Ok(FilterConfig {
        packages,
        full,
        no_dependencies,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<FilterConfig, ConfigError> {
        parse(Path::new("f.yaml"), text, None)
    }

    #[test]
    fn imageset_skip_dependencies_turns_the_closure_off() {
        let text = "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators:\n    - catalog: registry.example/a:v1\n      skipDependencies: true\n      packages:\n        - name: p\n";
        assert!(p(text).unwrap().no_dependencies);
        assert!(!p(&text.replace("true", "false")).unwrap().no_dependencies);
    }

    #[test]
    fn filter_configuration_with_lines() {
        let c = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: a\n    defaultChannel: s\n    channels:\n      - name: s\n        versionRange: \">=1.0.0\"\n").unwrap();
        assert_eq!(c.packages[0].name.line, 4);
        assert_eq!(
            c.packages[0].channels[0]
                .version_range
                .as_ref()
                .unwrap()
                .line,
            8
        );
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn a_list_field_that_is_not_a_list_is_refused_with_its_line() {
        let e = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages: three\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(
            e.message.starts_with("packages must be a list, found "),
            "{e}"
        );
        // Absent and null lists read as empty: the file is then refused for what it lacks, not
        // for the list's shape.
        for text in ["", "packages:\n"] {
            let head = "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\n";
            if let Err(e) = p(&format!("{head}{text}")) {
                assert!(!e.message.contains("must be a list"), "{e}");
            }
        }
    }

    #[test]
    fn config_errors_name_file_and_line() {
        let e = p("apiVersion: x\nkind: FilterConfiguration\n").unwrap_err();
        assert_eq!(
            e.to_string().split(':').take(2).collect::<Vec<_>>(),
            ["f.yaml", "1"]
        );
        let e = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: a\n    versionRange: \">=1\"\n    channels:\n      - name: s\n        versionRange: \">=2\"\n").unwrap_err();
        assert_eq!(e.line, 8);
        assert!(e.message.contains("exclusive"), "{e}");
        let e = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: a\n    channels:\n      - name: s\n        versionRange: \"something-isnt-right\"\n").unwrap_err();
        assert_eq!(e.line, 7);
        let e = p("kind: Other\n").unwrap_err();
        assert!(e.message.contains("unexpected kind"));
        let e = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - defaultChannel: x\n").unwrap_err();
        assert!(e.message.contains("name must be specified"));
        let e = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: a\n    channels:\n      - name: s\n    bundles:\n      - name: b\n").unwrap_err();
        assert_eq!(e.line, 8);
    }

    #[test]
    fn unknown_keys_warn() {
        let c = p("apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: a\n    selectedBundles:\n      - name: b\n").unwrap();
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].starts_with("f.yaml:5:"), "{}", c.warnings[0]);
        assert!(c.packages[0].bundles.is_empty());
    }

    #[test]
    fn imageset_configuration_maps_min_max() {
        let text = "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators:\n    - catalog: registry.example/a:v1\n      full: true\n      packages:\n        - name: p\n          channels:\n            - name: stable\n              minVersion: 1.0.0\n              maxVersion: 1.0.0\n    - catalog: registry.example/b:v1\n      packages:\n        - name: q\n";
        let e = parse(Path::new("i.yaml"), text, None).unwrap_err();
        assert!(e.message.contains("--catalog"), "{e}");
        let c = parse(Path::new("i.yaml"), text, Some("registry.example/a:v1")).unwrap();
        assert!(c.full);
        let r = c.packages[0].channels[0].version_range.as_ref().unwrap();
        assert_eq!(r.value.to_string(), ">=1.0.0 <=1.0.0");
        assert!(r.value.exact().is_some());
        let c = parse(Path::new("i.yaml"), text, Some("registry.example/b:v1")).unwrap();
        assert_eq!(c.packages[0].name.value, "q");
        assert!(parse(Path::new("i.yaml"), text, Some("nope")).is_err());
    }
}
