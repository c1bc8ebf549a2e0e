//! The user's oc-mirror v2 `ImageSetConfiguration` (`mirror.openshift.io/v2alpha1`), read as a
//! whole: every catalog it names with its packages, the `additionalImages`, the
//! `blockedImages` and the platform selection (`mirror.platform.architectures`).
//!
//! Why strict: a user moving from oc-mirror hands over the file they have. A field olmpack
//! does not act on (a release channel, Helm charts, `archiveSize`) would be silently without
//! effect if it were ignored, and the mirror would lack what the user believes it holds; so
//! every field is either acted on or refused by name with its file and line. The packages of
//! each catalog are read by the filter's own reader ([`crate::catalog::filter::config`]), which
//! maps `minVersion`/`maxVersion` to catalog-filter's range as oc-mirror does.

use crate::catalog::filter::config::{self, At, ConfigError, FilterConfig, IMAGESET_KIND};
use crate::image::Platform;
use crate::yaml::{self, Node};
use std::path::{Path, PathBuf};

/// The one `apiVersion` read: oc-mirror v2's.
pub const API_VERSION: &str = "mirror.openshift.io/v2alpha1";

/// The whole configuration, as olmpack acts on it.
#[derive(Debug, Clone)]
pub struct ImageSet {
    /// The file (for messages).
    pub file: PathBuf,
    /// `mirror.operators[]`, in the file's order.
    pub catalogs: Vec<ImageSetCatalog>,
    /// `mirror.additionalImages[].name`.
    pub additional_images: Vec<At<String>>,
    /// `mirror.blockedImages[].name`.
    pub blocked_images: Vec<At<String>>,
    /// `mirror.platform.architectures` as platforms (`None`: every platform, also for `multi`).
    pub platforms: Option<Vec<Platform>>,
}

/// One `mirror.operators[]` entry.
#[derive(Debug, Clone)]
pub struct ImageSetCatalog {
    /// `catalog` as written (what the plan and the report call it).
    pub catalog: At<String>,
    /// The catalog as olmpack's locations spell it (`oci://PATH` becomes `oci:PATH`).
    pub location: String,
    /// Its packages, as the filter reads them (`full`, `skipDependencies` included).
    pub filter: FilterConfig,
    /// `targetCatalog`: the catalog's repository at the target.
    pub target_catalog: Option<At<String>>,
    /// `targetTag`: the catalog's tag at the target.
    pub target_tag: Option<At<String>>,
}

/// Why a field is refused, by where it is: the answer the user reads.
const REFUSED: &[(&str, &str)] = &[
    (
        "archiveSize",
        "olmpack writes one OCI layout folder, not an archive split into parts",
    ),
    (
        "mirror.helm",
        "olmpack mirrors operator catalogs and images, not Helm charts",
    ),
    (
        "mirror.samples",
        "sample images are not implemented by oc-mirror either; list them in additionalImages",
    ),
    (
        "mirror.platform.channels",
        "olmpack does not mirror OpenShift release payloads; mirror them with oc-mirror",
    ),
    (
        "mirror.platform.graph",
        "olmpack does not mirror the OpenShift update graph; mirror it with oc-mirror",
    ),
    (
        "mirror.platform.release",
        "olmpack does not mirror OpenShift release payloads; mirror them with oc-mirror",
    ),
    (
        "mirror.platform.kubeVirtContainer",
        "olmpack does not read OpenShift release payloads; mirror them with oc-mirror",
    ),
    (
        "mirror.operators[].targetCatalogSourceTemplate",
        "olmpack writes its own CatalogSource; edit the one in the results folder",
    ),
];

/// The architectures oc-mirror v2 knows (`multi`: all of them).
const ARCHITECTURES: &[&str] = &["amd64", "arm64", "ppc64le", "s390x", "multi"];

struct Reader<'a> {
    file: &'a Path,
}

impl Reader<'_> {
    fn err(&self, line: usize, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.file, line, message)
    }

    /// Every key of `node` must be in `known`; a known-but-refused one is refused with why.
    fn keys(&self, node: &Node, at: &str, known: &[&str]) -> Result<(), ConfigError> {
        let Some(map) = node.as_map() else {
            return Err(self.err(
                node.line,
                format!("{at} must be a mapping, found {}", node.kind_name()),
            ));
        };
        for (k, _) in map {
            let key = k.text.as_str();
            if known.contains(&key) {
                continue;
            }
            let path = if at.is_empty() {
                key.to_string()
            } else {
                format!("{at}.{key}")
            };
            let why = REFUSED
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, why)| why.to_string())
                .unwrap_or_else(|| {
                    format!(
                        "olmpack does not know it (known here: {})",
                        known.join(", ")
                    )
                });
            return Err(self.err(k.line, format!("field {path} is not supported: {why}")));
        }
        Ok(())
    }

    fn seq<'n>(&self, node: Option<&'n Node>, at: &str) -> Result<&'n [Node], ConfigError> {
        config::list(self.file, node, at)
    }

    fn string(&self, node: &Node, at: &str) -> Result<At<String>, ConfigError> {
        match node.scalar_text() {
            Some(s) if !s.is_empty() => Ok(At {
                value: s.to_string(),
                line: node.line,
            }),
            _ => Err(self.err(node.line, format!("{at} must be a non-empty string"))),
        }
    }

    /// A list of `{name: ...}` (additionalImages, blockedImages).
    fn names(&self, node: Option<&Node>, at: &str) -> Result<Vec<At<String>>, ConfigError> {
        let mut out = Vec::new();
        for item in self.seq(node, at)? {
            let here = format!("{at}[]");
            self.keys(item, &here, &["name"])?;
            let name = item
                .get("name")
                .ok_or_else(|| self.err(item.line, format!("{here} needs a name")))?;
            out.push(self.string(name, &format!("{here}.name"))?);
        }
        Ok(out)
    }
}

/// Reads the configuration file (see the module documentation).
pub fn read(path: &Path) -> Result<ImageSet, ConfigError> {
    use std::io::Read;
    let fail = |message: String| ConfigError::at(path, 0, message);
    let file = std::fs::File::open(path)
        .map_err(|e| fail(format!("cannot read the ImageSetConfiguration: {e}")))?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(format!("cannot read the ImageSetConfiguration: {e}")))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(fail(format!(
            "the ImageSetConfiguration is larger than {MAX_BYTES} bytes"
        )));
    }
    parse(path, &text)
}

/// The largest configuration read (a hand-written file is a few kilobytes).
const MAX_BYTES: u64 = 16 << 20;

/// Parses a configuration's text (`file` names it in messages).
pub fn parse(file: &Path, text: &str) -> Result<ImageSet, ConfigError> {
    let r = Reader { file };
    let docs = yaml::parse_stream(text).map_err(|e| r.err(e.line, e.message.clone()))?;
    let root = match docs.as_slice() {
        [one] => &one.root,
        [] => return Err(r.err(0, "the ImageSetConfiguration is empty")),
        [_, second, ..] => {
            return Err(r.err(
                second.root.line,
                "the file holds several YAML documents; give one ImageSetConfiguration",
            ));
        }
    };
    r.keys(root, "", &["apiVersion", "kind", "mirror"])?;
    // An absent kind or apiVersion reads as empty, named at the document's line.
    let missing = |root: &Node| At {
        value: String::new(),
        line: root.line,
    };
    let kind = root
        .get("kind")
        .map(|k| r.string(k, "kind"))
        .transpose()?
        .unwrap_or_else(|| missing(root));
    if kind.value != IMAGESET_KIND {
        return Err(r.err(
            kind.line,
            format!(
                "kind {:?} is not read by --config: expected {IMAGESET_KIND} (apiVersion {API_VERSION})",
                kind.value
            ),
        ));
    }
    let api = root
        .get("apiVersion")
        .map(|k| r.string(k, "apiVersion"))
        .transpose()?
        .unwrap_or_else(|| missing(root));
    if api.value != API_VERSION {
        return Err(r.err(
            api.line,
            format!(
                "apiVersion {:?} is not read: olmpack reads oc-mirror v2's {API_VERSION}",
                api.value
            ),
        ));
    }
    let mirror = root
        .get("mirror")
        .ok_or_else(|| r.err(root.line, "the ImageSetConfiguration has no mirror section"))?;
    r.keys(
        mirror,
        "mirror",
        &["operators", "additionalImages", "blockedImages", "platform"],
    )?;
    let platforms = match mirror.get("platform") {
        Some(p) => platforms(&r, p)?,
        None => None,
    };
    let ops = r.seq(mirror.get("operators"), "mirror.operators")?;
    // A catalog named twice is refused before any entry is read (the filter reader picks an
    // entry by its catalog).
    let mut first_at: Vec<(&str, usize)> = Vec::new();
    for op in ops {
        let Some(c) = op.get("catalog") else { continue };
        let Some(name) = c.scalar_text() else {
            continue;
        };
        if let Some((_, line)) = first_at.iter().find(|(n, _)| *n == name) {
            return Err(r.err(
                c.line,
                format!(
                    "catalog {name:?} is named twice (first at line {line}): give its packages in one entry"
                ),
            ));
        }
        first_at.push((name, c.line));
    }
    let mut catalogs: Vec<ImageSetCatalog> = Vec::new();
    for op in ops {
        catalogs.push(operator(&r, op, text)?);
    }
    let additional_images = r.names(mirror.get("additionalImages"), "mirror.additionalImages")?;
    let blocked_images = r.names(mirror.get("blockedImages"), "mirror.blockedImages")?;
    if catalogs.is_empty() && additional_images.is_empty() {
        return Err(r.err(
            mirror.line,
            "the ImageSetConfiguration names no catalog (mirror.operators) and no additionalImages: nothing to mirror",
        ));
    }
    Ok(ImageSet {
        file: file.to_path_buf(),
        catalogs,
        additional_images,
        blocked_images,
        platforms,
    })
}

/// `mirror.platform`: only `architectures` is acted on (as `--platform linux/ARCH`).
fn platforms(r: &Reader<'_>, node: &Node) -> Result<Option<Vec<Platform>>, ConfigError> {
    r.keys(node, "mirror.platform", &["architectures"])?;
    let mut out = Vec::new();
    for a in r.seq(node.get("architectures"), "mirror.platform.architectures")? {
        let arch = r.string(a, "mirror.platform.architectures[]")?;
        if !ARCHITECTURES.contains(&arch.value.as_str()) {
            return Err(r.err(
                arch.line,
                format!(
                    "architecture {:?} is not one oc-mirror knows: {}",
                    arch.value,
                    ARCHITECTURES.join(", ")
                ),
            ));
        }
        if arch.value == "multi" {
            return Ok(None);
        }
        let platform = format!("linux/{}", arch.value)
            .parse::<Platform>()
            .map_err(|e| r.err(arch.line, e.to_string()))?;
        out.push(platform);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// One `mirror.operators[]` entry, every key checked, its packages read by the filter's reader.
fn operator(r: &Reader<'_>, op: &Node, text: &str) -> Result<ImageSetCatalog, ConfigError> {
    const AT: &str = "mirror.operators[]";
    r.keys(
        op,
        AT,
        &[
            "catalog",
            "packages",
            "full",
            "skipDependencies",
            "targetCatalog",
            "targetTag",
        ],
    )?;
    let catalog = op
        .get("catalog")
        .ok_or_else(|| r.err(op.line, format!("{AT} needs a catalog")))
        .and_then(|n| r.string(n, &format!("{AT}.catalog")))?;
    for flag in ["full", "skipDependencies"] {
        if let Some(n) = op.get(flag)
            && n.as_bool().is_none()
        {
            return Err(r.err(n.line, format!("{AT}.{flag} must be true or false")));
        }
    }
    for p in r.seq(op.get("packages"), &format!("{AT}.packages"))? {
        let at = format!("{AT}.packages[]");
        r.keys(
            p,
            &at,
            &[
                "name",
                "channels",
                "minVersion",
                "maxVersion",
                "bundles",
                "defaultChannel",
            ],
        )?;
        for c in r.seq(p.get("channels"), &format!("{at}.channels"))? {
            r.keys(
                c,
                &format!("{at}.channels[]"),
                &["name", "minVersion", "maxVersion"],
            )?;
        }
        for b in r.seq(p.get("bundles"), &format!("{at}.bundles"))? {
            r.keys(b, &format!("{at}.bundles[]"), &["name"])?;
        }
    }
    let target_catalog = op
        .get("targetCatalog")
        .map(|n| r.string(n, &format!("{AT}.targetCatalog")))
        .transpose()?;
    if let Some(t) = &target_catalog
        && !valid_target_catalog(&t.value)
    {
        return Err(r.err(
            t.line,
            format!(
                "targetCatalog {:?} is not a repository path (lower-case path components separated by '/', no tag or digest)",
                t.value
            ),
        ));
    }
    let target_tag = op
        .get("targetTag")
        .map(|n| r.string(n, &format!("{AT}.targetTag")))
        .transpose()?;
    let filter = config::parse(r.file, text, Some(&catalog.value))?;
    let location = match catalog.value.strip_prefix("oci://") {
        Some(rest) => format!("oci:{rest}"),
        None => catalog.value.clone(),
    };
    Ok(ImageSetCatalog {
        catalog,
        location,
        filter,
        target_catalog,
        target_tag,
    })
}

/// oc-mirror's rule for `targetCatalog`: path components of `[a-z0-9]` joined by `.`, `_`,
/// `__` or dashes, separated by `/`.
fn valid_target_catalog(s: &str) -> bool {
    s.split('/').all(|part| {
        let bytes = part.as_bytes();
        let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if bytes.is_empty() || !alnum(&bytes[0]) || !alnum(&bytes[bytes.len() - 1]) {
            return false;
        }
        // Separators: one '.', one or two '_', or any run of '-'.
        let mut i = 0;
        while i < bytes.len() {
            if alnum(&bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !alnum(&bytes[i]) {
                i += 1;
            }
            let sep = &part[start..i];
            if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-')) {
                return false;
            }
        }
        true
    })
}

/// Whether `image` is blocked by one of `blocked`: a name with a tag or digest blocks that
/// image; a name without blocks every image of that repository.
pub fn is_blocked(image: &str, blocked: &[At<String>]) -> bool {
    let repo_of = |s: &str| match crate::reference::Reference::parse(s) {
        Ok(r) => Some((
            r.registry.clone(),
            r.repository.clone(),
            r.tag.is_some() || r.digest.is_some(),
        )),
        Err(_) => None,
    };
    let Some((reg, repo, _)) = repo_of(image) else {
        return false;
    };
    blocked.iter().any(|b| match repo_of(&b.value) {
        Some((breg, brepo, pinned)) => {
            breg == reg && brepo == repo && (!pinned || same_image(image, &b.value))
        }
        None => false,
    })
}

/// The same tag or digest (a blocked `repo:tag@digest` blocks the digest).
fn same_image(image: &str, blocked: &str) -> bool {
    let (Ok(i), Ok(b)) = (
        crate::reference::Reference::parse(image),
        crate::reference::Reference::parse(blocked),
    ) else {
        return false;
    };
    match (&b.digest, &b.tag) {
        (Some(d), _) => i.digest.as_ref() == Some(d),
        (None, Some(t)) => i.tag.as_ref() == Some(t),
        (None, None) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<ImageSet, ConfigError> {
        parse(Path::new("isc.yaml"), text)
    }

    const HEAD: &str = "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\n";

    #[test]
    fn reads_catalogs_images_and_architectures() {
        let text = format!(
            "{HEAD}mirror:\n  platform:\n    architectures: [amd64, arm64]\n  operators:\n    - catalog: registry.example/a:v4.18\n      targetCatalog: mirror/redhat\n      targetTag: v18\n      packages:\n        - name: p\n          channels:\n            - name: stable\n              minVersion: 1.0.0\n    - catalog: oci:///data/cat\n      full: true\n  additionalImages:\n    - name: quay.io/x/y:1\n  blockedImages:\n    - name: quay.io/x/z\n"
        );
        let s = p(&text).unwrap();
        assert_eq!(s.catalogs.len(), 2);
        assert_eq!(s.catalogs[0].filter.packages[0].name.value, "p");
        assert_eq!(s.catalogs[0].target_tag.as_ref().unwrap().value, "v18");
        assert_eq!(s.catalogs[1].location, "oci:/data/cat");
        assert!(s.catalogs[1].filter.full);
        assert_eq!(s.additional_images[0].line, 18);
        let platforms: Vec<String> = s
            .platforms
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(platforms, ["linux/amd64", "linux/arm64"]);
        assert!(is_blocked("quay.io/x/z:2", &s.blocked_images));
        assert!(!is_blocked("quay.io/x/y:1", &s.blocked_images));
    }

    #[test]
    fn every_unsupported_field_is_refused_by_name_and_line() {
        let cases = [
            (
                format!("{HEAD}archiveSize: 4\nmirror:\n  operators: []\n"),
                3,
                "archiveSize",
            ),
            (
                format!("{HEAD}mirror:\n  helm:\n    repositories: []\n"),
                4,
                "mirror.helm",
            ),
            (
                format!("{HEAD}mirror:\n  platform:\n    channels:\n      - name: stable-4.18\n"),
                5,
                "mirror.platform.channels",
            ),
            (
                format!("{HEAD}mirror:\n  platform:\n    graph: true\n"),
                5,
                "mirror.platform.graph",
            ),
            (
                format!(
                    "{HEAD}mirror:\n  operators:\n    - catalog: r.example/c:1\n      targetCatalogSourceTemplate: t.yaml\n"
                ),
                6,
                "targetCatalogSourceTemplate",
            ),
            (
                format!(
                    "{HEAD}mirror:\n  operators:\n    - catalog: r.example/c:1\n      packages:\n        - name: p\n          selectedBundles: []\n"
                ),
                8,
                "mirror.operators[].packages[].selectedBundles",
            ),
            (
                format!(
                    "{HEAD}mirror:\n  operators:\n    - catalog: r.example/c:1\n      packages:\n        - name: p\n          channels:\n            - name: s\n              minBundle: x\n"
                ),
                10,
                "minBundle",
            ),
            (
                format!(
                    "{HEAD}mirror:\n  additionalImages:\n    - name: a.example/b:1\n      tag: x\n"
                ),
                6,
                "additionalImages[].tag",
            ),
            (
                format!("{HEAD}mirror:\n  operator: []\n"),
                4,
                "mirror.operator",
            ),
            (
                format!("{HEAD}mirror:\n  samples: []\n"),
                4,
                "mirror.samples",
            ),
        ];
        for (text, line, name) in cases {
            let e = p(&text).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.message.contains(name), "{e}");
            assert!(
                e.to_string().starts_with(&format!("isc.yaml:{line}:")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_list_field_that_is_not_a_list_is_refused_with_its_line() {
        let e = p(&format!(
            "{HEAD}mirror:\n  additionalImages: quay.io/a/b:1\n"
        ))
        .unwrap_err();
        assert!(
            e.message
                .starts_with("mirror.additionalImages must be a list, found "),
            "{e}"
        );
        assert_eq!(e.line, HEAD.lines().count() + 2, "{e}");
    }

    #[test]
    fn wrong_versions_kinds_and_values_are_refused() {
        let e = p(
            "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v1alpha2\nmirror: {}\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        let e = p("kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete: {}\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = p(&format!(
            "{HEAD}mirror:\n  platform:\n    architectures: [x86]\n"
        ))
        .unwrap_err();
        assert!(e.message.contains("x86"), "{e}");
        let e = p(&format!("{HEAD}mirror:\n  operators:\n    - catalog: a.example/c:1\n    - catalog: a.example/c:1\n")).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        let e = p(&format!("{HEAD}mirror:\n  operators:\n    - catalog: a.example/c:1\n      targetCatalog: Bad/Name:1\n")).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        let e = p(&format!(
            "{HEAD}mirror:\n  operators:\n    - catalog: a.example/c:1\n      full: yes-please\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        let e = p(&format!("{HEAD}mirror: {{}}\n")).unwrap_err();
        assert!(e.message.contains("nothing to mirror"), "{e}");
        assert!(valid_target_catalog("a/b-c__d.e"));
        assert!(!valid_target_catalog("a//b"));
    }
}
