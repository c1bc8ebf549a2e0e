//! The layout of an operator repository as the public pipelines lay it out
//! (community-operators-prod, certified-operators): `config.yaml` at the root,
//! `operators/<package>/{ci.yaml, Makefile, catalog-templates/, <version>/}` and
//! `catalogs/<ocp>/<package>/catalog.yaml`.
//!
//! Why one module: `catalog matrix` (which renders every template for every OpenShift version)
//! and the repository checks both read this layout; the paths, `ci.yaml`'s `fbc` section and the
//! per-version rules are written once here so the two agree on what a repository says. Nothing
//! here renders or judges: it reads and names files, and every error names the operator, the
//! file and the line.

use crate::catalog::compat::OpmCompat;
use crate::yaml::{self, Node};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// A repository checkout laid out as the pipelines expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoLayout {
    root: PathBuf,
}

/// What in a repository could not be read or is not what the pipelines accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LayoutError {
    /// The operator (package folder) concerned, when there is one.
    pub operator: Option<String>,
    /// The file concerned.
    pub file: PathBuf,
    /// 1-based line, 0 when the error concerns the whole file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(op) = &self.operator {
            write!(f, "operator {op}: ")?;
        }
        match self.line {
            0 => write!(f, "{}: {}", self.file.display(), self.message),
            l => write!(f, "{}:{l}: {}", self.file.display(), self.message),
        }
    }
}

/// The template kinds a `catalog_mapping` row names (its `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MappingType {
    /// `olm.template.basic`.
    Basic,
    /// `olm.semver`.
    Semver,
    /// `olm.template.substitutes` (opm v1.62+; not in the pipelines' schema yet).
    Substitutes,
}

impl MappingType {
    /// The `type` value in `ci.yaml`.
    pub fn schema(self) -> &'static str {
        match self {
            MappingType::Basic => "olm.template.basic",
            MappingType::Semver => "olm.semver",
            MappingType::Substitutes => "olm.template.substitutes",
        }
    }
}

/// One row of `fbc.catalog_mapping`: a template and the catalogs rendered from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogMapping {
    /// `template_name`: a file under `operators/<package>/catalog-templates/`.
    pub template_name: String,
    /// `catalog_names`: OpenShift catalog folders (`v4.17`), each a single path element.
    pub catalog_names: Vec<String>,
    /// `type`.
    pub template_type: MappingType,
    /// Line of the row in `ci.yaml`.
    pub line: usize,
    /// Line of each catalog name, in the order of [`CatalogMapping::catalog_names`].
    pub catalog_lines: Vec<usize>,
}

/// What an operator's `ci.yaml` says about file-based catalogs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiConfig {
    /// The operator (package folder name).
    pub operator: String,
    /// The `ci.yaml` file.
    pub file: PathBuf,
    /// `fbc.enabled`.
    pub fbc_enabled: bool,
    /// `fbc.catalog_mapping`, in file order.
    pub mappings: Vec<CatalogMapping>,
}

/// An OpenShift catalog name read as a version, `v4.17` as 4.17.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OcpVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl OcpVersion {
    /// Parses a catalog name the way the pipelines' Python does (`^v\d+\.\d+$`); `None` for any
    /// other name.
    pub fn parse(name: &str) -> Option<OcpVersion> {
        let (major, minor) = name.strip_prefix('v')?.split_once('.')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(major) || !digits(minor) {
            return None;
        }
        Some(OcpVersion {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }

    /// Parses a version as `com.redhat.openshift.versions` writes it (`v4.12`, `4.12`).
    pub fn parse_loose(text: &str) -> Option<OcpVersion> {
        let t = text.trim();
        OcpVersion::parse(t).or_else(|| OcpVersion::parse(&format!("v{t}")))
    }
}

impl fmt::Display for OcpVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}", self.major, self.minor)
    }
}

/// Whether the pipelines render this catalog with `--migrate-level
/// bundle-object-to-csv-metadata`: OpenShift 4.17 and later (`render_catalogs.sh`'s
/// `requires_migrate_level`, `utils.is_catalog_v4_17_plus`); a name that is not `vX.Y` never is.
pub fn needs_csv_metadata(catalog_name: &str) -> bool {
    OcpVersion::parse(catalog_name).is_some_and(|v| (v.major, v.minor) >= (4, 17))
}

/// The opm release the pipelines' own `fbc/Makefile` (and their image, which the release
/// automation runs) pins: v1.71.0 at operator-pipelines 422dfd6e.
pub const PIPELINES_OPM: OpmCompat = OpmCompat::new(1, 71);

/// An `OPM_VERSION` pin read from an operator's Makefile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpmPin {
    /// The value as written (`v1.46.0`).
    pub text: String,
    /// The release, when olmpack reproduces it.
    pub compat: Option<OpmCompat>,
    /// The Makefile.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
}

/// Whether `name` is one plain path element (no separator, not `.` or `..`, not empty): what
/// `ci.yaml` may use as a catalog folder or template file name without reaching outside the
/// repository.
pub fn is_plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
        && !name.contains('/')
        && !name.contains('\\')
}

impl RepoLayout {
    /// A repository rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> RepoLayout {
        RepoLayout { root: root.into() }
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `config.yaml`.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.yaml")
    }

    /// `operators/`.
    pub fn operators_dir(&self) -> PathBuf {
        self.root.join("operators")
    }

    /// `operators/<package>/`.
    pub fn operator_dir(&self, operator: &str) -> PathBuf {
        self.operators_dir().join(operator)
    }

    /// `operators/<package>/ci.yaml`.
    pub fn ci_file(&self, operator: &str) -> PathBuf {
        self.operator_dir(operator).join("ci.yaml")
    }

    /// `operators/<package>/Makefile`.
    pub fn makefile(&self, operator: &str) -> PathBuf {
        self.operator_dir(operator).join("Makefile")
    }

    /// `operators/<package>/catalog-templates/<template>`.
    pub fn template_file(&self, operator: &str, template: &str) -> PathBuf {
        self.operator_dir(operator)
            .join("catalog-templates")
            .join(template)
    }

    /// `catalogs/`.
    pub fn catalogs_dir(&self) -> PathBuf {
        self.root.join("catalogs")
    }

    /// `catalogs/<ocp>/<package>/catalog.yaml`.
    pub fn catalog_file(&self, ocp: &str, operator: &str) -> PathBuf {
        self.catalogs_dir()
            .join(ocp)
            .join(operator)
            .join("catalog.yaml")
    }

    /// The operators with a `ci.yaml`, sorted by name.
    pub fn operators(&self) -> Result<Vec<String>, LayoutError> {
        let dir = self.operators_dir();
        let mut out: Vec<String> = sorted_dir_names(&dir)
            .map_err(|message| LayoutError {
                operator: None,
                file: dir.clone(),
                line: 0,
                message,
            })?
            .into_iter()
            .filter(|name| self.ci_file(name).is_file())
            .collect();
        out.sort();
        Ok(out)
    }

    /// The operators whose `ci.yaml` has a non-empty `fbc.catalog_mapping`, with their
    /// configuration; a `ci.yaml` that cannot be read is an error naming it.
    pub fn fbc_operators(&self) -> Result<Vec<CiConfig>, LayoutError> {
        let mut out = Vec::new();
        for op in self.operators()? {
            let ci = self.read_ci(&op)?;
            if !ci.mappings.is_empty() {
                out.push(ci);
            }
        }
        Ok(out)
    }

    /// The catalog folders (`catalogs/<ocp>/`), sorted by version then name.
    pub fn catalog_names(&self) -> Vec<String> {
        let mut names = sorted_dir_names(&self.catalogs_dir()).unwrap_or_default();
        names.sort_by_key(|n| (OcpVersion::parse(n), n.clone()));
        names
    }

    /// The catalog folders that hold a folder for `operator` (`catalogs/<ocp>/<operator>/`).
    pub fn catalog_folders_of(&self, operator: &str) -> Vec<String> {
        self.catalog_names()
            .into_iter()
            .filter(|ocp| self.catalogs_dir().join(ocp).join(operator).is_dir())
            .collect()
    }

    /// The bundle folders of an operator (`operators/<package>/<version>/` holding `manifests/`),
    /// sorted by name.
    pub fn bundle_dirs(&self, operator: &str) -> Vec<(String, PathBuf)> {
        let dir = self.operator_dir(operator);
        sorted_dir_names(&dir)
            .unwrap_or_default()
            .into_iter()
            .map(|n| {
                let p = dir.join(&n);
                (n, p)
            })
            .filter(|(_, p)| p.join("manifests").is_dir())
            .collect()
    }

    /// The `OPM_VERSION` an operator's Makefile pins (`OPM_VERSION ?= v1.46.0`), if it has one.
    pub fn makefile_opm_pin(&self, operator: &str) -> Option<OpmPin> {
        let file = self.makefile(operator);
        let text = std::fs::read_to_string(&file).ok()?;
        opm_pin_in(&text).map(|(line, value)| OpmPin {
            compat: value.parse().ok(),
            text: value,
            file,
            line,
        })
    }

    /// Reads `operators/<operator>/ci.yaml`.
    pub fn read_ci(&self, operator: &str) -> Result<CiConfig, LayoutError> {
        let file = self.ci_file(operator);
        let fail = |line: usize, message: String| LayoutError {
            operator: Some(operator.to_string()),
            file: file.clone(),
            line,
            message,
        };
        let text = match std::fs::read(&file) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| fail(0, "not UTF-8 text".into()))?,
            Err(e) => return Err(fail(0, format!("cannot read: {e}"))),
        };
        parse_ci(operator, &file, &text)
    }
}

/// Parses a `ci.yaml` (`text`, read from `file`) for `operator`: the `fbc` section, checked
/// against the pipelines' schema (`operatorcert/schemas/ci-schema.json`) plus what olmpack
/// needs to write safely (names that stay inside the repository).
pub fn parse_ci(operator: &str, file: &Path, text: &str) -> Result<CiConfig, LayoutError> {
    let fail = |line: usize, message: String| LayoutError {
        operator: Some(operator.to_string()),
        file: file.to_path_buf(),
        line,
        message,
    };
    let docs = yaml::parse_stream(text).map_err(|e| fail(e.line, e.message))?;
    let mut ci = CiConfig {
        operator: operator.to_string(),
        file: file.to_path_buf(),
        fbc_enabled: false,
        mappings: Vec::new(),
    };
    let Some(root) = docs.first().map(|d| &d.root) else {
        return Ok(ci);
    };
    if root.is_null() {
        return Ok(ci);
    }
    if root.as_map().is_none() {
        return Err(fail(
            root.line,
            format!("expected a mapping, found {}", root.kind_name()),
        ));
    }
    let Some(fbc) = root.get("fbc").filter(|n| !n.is_null()) else {
        return Ok(ci);
    };
    if fbc.as_map().is_none() {
        return Err(fail(
            fbc.line,
            format!("fbc: expected a mapping, found {}", fbc.kind_name()),
        ));
    }
    if let Some(enabled) = fbc.get("enabled").filter(|n| !n.is_null()) {
        ci.fbc_enabled = enabled.as_bool().ok_or_else(|| {
            fail(
                enabled.line,
                format!(
                    "fbc.enabled: expected true or false, found {}",
                    show(enabled)
                ),
            )
        })?;
    }
    let Some(rows) = fbc.get("catalog_mapping").filter(|n| !n.is_null()) else {
        return Ok(ci);
    };
    let rows = rows.as_seq().ok_or_else(|| {
        fail(
            rows.line,
            format!(
                "fbc.catalog_mapping: expected a list, found {}",
                rows.kind_name()
            ),
        )
    })?;
    for (i, row) in rows.iter().enumerate() {
        ci.mappings.push(parse_row(row, i, &fail)?);
    }
    Ok(ci)
}

fn parse_row(
    row: &Node,
    i: usize,
    fail: &dyn Fn(usize, String) -> LayoutError,
) -> Result<CatalogMapping, LayoutError> {
    let at = format!("fbc.catalog_mapping[{i}]");
    if row.as_map().is_none() {
        return Err(fail(
            row.line,
            format!("{at}: expected a mapping, found {}", row.kind_name()),
        ));
    }
    let string = |key: &str| -> Result<(String, usize), LayoutError> {
        match row.get(key) {
            None => Err(fail(row.line, format!("{at}.{key}: missing"))),
            Some(n) => match n.as_str() {
                Some(s) if !s.is_empty() => Ok((s.to_string(), n.line)),
                _ => Err(fail(
                    n.line,
                    format!("{at}.{key}: expected a string, found {}", show(n)),
                )),
            },
        }
    };
    let (template_name, tline) = string("template_name")?;
    if !is_plain_name(&template_name) {
        return Err(fail(
            tline,
            format!(
                "{at}.template_name: {template_name:?} must be a file name inside catalog-templates/"
            ),
        ));
    }
    let (type_name, yline) = string("type")?;
    let template_type = match type_name.as_str() {
        "olm.template.basic" => MappingType::Basic,
        "olm.semver" => MappingType::Semver,
        "olm.template.substitutes" => MappingType::Substitutes,
        other => {
            return Err(fail(
                yline,
                format!(
                    "{at}.type: unknown template type {other:?} (olm.template.basic, olm.semver or olm.template.substitutes)"
                ),
            ));
        }
    };
    let names = row
        .get("catalog_names")
        .ok_or_else(|| fail(row.line, format!("{at}.catalog_names: missing")))?;
    let list = names.as_seq().ok_or_else(|| {
        fail(
            names.line,
            format!("{at}.catalog_names: expected a list, found {}", show(names)),
        )
    })?;
    if list.is_empty() {
        return Err(fail(
            names.line,
            format!("{at}.catalog_names: must name at least one catalog"),
        ));
    }
    let mut catalog_names: Vec<String> = Vec::new();
    let mut catalog_lines = Vec::new();
    for (j, n) in list.iter().enumerate() {
        let name = match (&n.value, n.scalar_text()) {
            (yaml::Value::Scalar(..), Some(t)) => t.to_string(),
            _ => {
                return Err(fail(
                    n.line,
                    format!(
                        "{at}.catalog_names[{j}]: expected a catalog name, found {}",
                        show(n)
                    ),
                ));
            }
        };
        if !is_plain_name(&name) {
            return Err(fail(
                n.line,
                format!("{at}.catalog_names[{j}]: {name:?} must be a folder name under catalogs/"),
            ));
        }
        if catalog_names.contains(&name) {
            return Err(fail(
                n.line,
                format!("{at}.catalog_names[{j}]: {name} is listed twice"),
            ));
        }
        catalog_names.push(name);
        catalog_lines.push(n.line);
    }
    Ok(CatalogMapping {
        template_name,
        catalog_names,
        template_type,
        line: row.line,
        catalog_lines,
    })
}

/// A value as an error shows it: a scalar's text, else its kind.
fn show(node: &Node) -> String {
    match node.scalar_text() {
        Some(t) => format!("{t:?}"),
        None => node.kind_name().to_string(),
    }
}

/// The first `OPM_VERSION ?= vX.Y.Z` (or `=`, `:=`) assignment of a Makefile, with its line.
pub fn opm_pin_in(makefile: &str) -> Option<(usize, String)> {
    for (i, line) in makefile.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("OPM_VERSION") else {
            continue;
        };
        let rest = rest.trim_start();
        let value = ["?=", ":=", "="]
            .iter()
            .find_map(|op| rest.strip_prefix(op))
            .map(|v| v.split('#').next().unwrap_or_default().trim());
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            return Some((i + 1, v.to_string()));
        }
    }
    None
}

/// The names of the folders in `dir`, sorted; the error text when it cannot be listed.
fn sorted_dir_names(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list: {e}"))?;
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| !n.starts_with('.'))
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mapping_and_names_bad_rows() {
        let ok = "fbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: basic.yaml\n    catalog_names: [\"v4.16\", v4.17]\n    type: olm.template.basic\n";
        let ci = parse_ci("op", Path::new("ci.yaml"), ok).unwrap_or_else(|e| panic!("{e}"));
        assert!(ci.fbc_enabled);
        assert_eq!(ci.mappings.len(), 1);
        assert_eq!(ci.mappings[0].catalog_names, ["v4.16", "v4.17"]);
        assert_eq!(ci.mappings[0].line, 4);
        let bad = |text: &str| {
            parse_ci("op", Path::new("ci.yaml"), text)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let e = bad(
            "fbc:\n  catalog_mapping:\n  - template_name: ../x.yaml\n    catalog_names: [v4.16]\n    type: olm.semver\n",
        );
        assert!(e.starts_with("operator op: ci.yaml:3: "), "{e}");
        let e = bad(
            "fbc:\n  catalog_mapping:\n  - template_name: x.yaml\n    catalog_names: [../v4.16]\n    type: olm.semver\n",
        );
        assert!(
            e.contains("ci.yaml:4: fbc.catalog_mapping[0].catalog_names[0]"),
            "{e}"
        );
        let e = bad(
            "fbc:\n  catalog_mapping:\n  - template_name: x.yaml\n    catalog_names: [v4.16]\n    type: olm.veneer\n",
        );
        assert!(e.contains("ci.yaml:5: ") && e.contains("olm.veneer"), "{e}");
        let e = bad("fbc:\n  catalog_mapping:\n  - template_name: x.yaml\n    type: olm.semver\n");
        assert!(e.contains("catalog_names: missing"), "{e}");
        let e = bad("fbc: [\n");
        assert!(e.starts_with("operator op: ci.yaml:"), "{e}");
    }

    #[test]
    fn versions_and_pins() {
        assert!(needs_csv_metadata("v4.17") && needs_csv_metadata("v5.0"));
        assert!(!needs_csv_metadata("v4.16") && !needs_csv_metadata("v4.17-x"));
        assert_eq!(
            OcpVersion::parse_loose("4.12"),
            Some(OcpVersion {
                major: 4,
                minor: 12
            })
        );
        assert_eq!(
            opm_pin_in("X=1\nOPM_VERSION ?= v1.46.0\n"),
            Some((2, "v1.46.0".to_string()))
        );
        assert_eq!(opm_pin_in("OPM_VERSION_X = 1\n"), None);
        assert!(is_plain_name("v4.17") && !is_plain_name("..") && !is_plain_name("a/b"));
    }
}
