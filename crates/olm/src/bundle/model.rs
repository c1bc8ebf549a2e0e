//! The loaded bundle: what the folder holds, typed just enough for the rules, with every value
//! remembering its file and line.

use crate::findings::Diagnostic;
use crate::yaml::Node;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The six annotation keys opm writes, and the CSV annotations OLM reads: defined in the ground
/// crate because the bundle image (labels) uses them too.
pub use olmpack_ground::bundle_keys as keys;

/// One annotation as written in annotations.yaml.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// The key.
    pub key: String,
    /// The value as text (`true` for a boolean, empty for null).
    pub value: String,
    /// 1-based line of the key.
    pub line: usize,
    /// The YAML node of the value (to tell strings from booleans and lists).
    pub node: Node,
}

/// The parsed `annotations:` mapping and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotations {
    /// File relative to the bundle root.
    pub file: String,
    /// 1-based line where the `annotations:` mapping starts (its first entry).
    pub line: usize,
    /// Entries in file order.
    pub entries: Vec<Annotation>,
}

impl Annotations {
    /// Looks up an annotation by key.
    pub fn get(&self, key: &str) -> Option<&Annotation> {
        self.entries.iter().find(|a| a.key == key)
    }

    /// The value of an annotation, trimmed; `None` when absent.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key).map(|a| a.value.trim())
    }

    /// Every annotation as the string map image labels carry.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.entries
            .iter()
            .map(|a| (a.key.clone(), a.value.clone()))
            .collect()
    }

    /// The channel list, split on commas and trimmed (empty names kept so rules can flag them).
    pub fn channels(&self) -> Vec<String> {
        match self.value(keys::CHANNELS) {
            Some(v) if !v.is_empty() => v.split(',').map(|c| c.trim().to_string()).collect(),
            _ => Vec::new(),
        }
    }
}

/// A Kubernetes object from one document of a manifest file.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// File relative to the bundle root.
    pub file: String,
    /// 0-based document index inside the file.
    pub doc: usize,
    /// The whole document.
    pub root: Node,
    /// `apiVersion` as written.
    pub api_version: String,
    /// `kind` as written.
    pub kind: String,
    /// `metadata.name`, when it is a string.
    pub name: Option<String>,
}

impl Object {
    /// Line where the document starts.
    pub fn line(&self) -> usize {
        self.root.line
    }

    /// Line of a field inside the object, or the object's own line when the field is absent.
    pub fn line_of(&self, path: &[&str]) -> usize {
        self.root.path(path).map_or(self.root.line, |n| n.line)
    }

    /// The API group (empty for the core group).
    pub fn group(&self) -> &str {
        match self.api_version.split_once('/') {
            Some((group, _)) => group,
            None => "",
        }
    }

    /// Whether this is the CSV kind (OLM decides by kind alone).
    pub fn is_csv(&self) -> bool {
        self.kind == "ClusterServiceVersion"
    }

    /// Whether this is the CRD kind.
    pub fn is_crd(&self) -> bool {
        self.kind == "CustomResourceDefinition"
    }
}

/// A metadata file that was parsed (dependencies.yaml, properties.yaml).
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataFile {
    /// File relative to the bundle root.
    pub file: String,
    /// Its single document (null when empty).
    pub root: Node,
}

/// A file of the bundle and its size, for the size rules.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    /// Path relative to the bundle root.
    pub file: String,
    /// Size in bytes.
    pub size: u64,
    /// Whether it lives in the manifests folder (what OLM v0 puts in its ConfigMap).
    pub in_manifests: bool,
}

/// A loaded bundle folder.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    /// The folder as given.
    pub root: PathBuf,
    /// The manifests folder name relative to the root (`manifests` unless annotations say
    /// otherwise), when such a folder exists.
    pub manifests_dir: Option<String>,
    /// The metadata folder name relative to the root, when it exists.
    pub metadata_dir: Option<String>,
    /// Parsed annotations, when a file holding them was found and parsed.
    pub annotations: Option<Annotations>,
    /// Whether an annotations file exists but could not be parsed (reported as a YAML error).
    pub annotations_unparsable: bool,
    /// dependencies.yaml, when present and parsed.
    pub dependencies: Option<MetadataFile>,
    /// properties.yaml, when present and parsed.
    pub properties: Option<MetadataFile>,
    /// Every object of every manifest document, in file then document order.
    pub objects: Vec<Object>,
    /// Manifest files that failed to parse, so "no CSV" can say a CSV may be among them.
    pub unparsable_manifests: Vec<String>,
    /// Every regular file read from manifests/ and metadata/.
    pub files: Vec<FileEntry>,
    /// Problems found while loading (syntax errors, odd files); validation reports them first.
    pub load_findings: Vec<Diagnostic>,
}

impl Bundle {
    /// The bundle's one ClusterServiceVersion object, or why there is not exactly one (no CSV,
    /// one that does not parse, several): for the commands that edit the CSV's text (`bundle
    /// pin`, `bundle republish`), which need the one file to edit.
    pub fn one_csv(&self) -> Result<&Object, String> {
        let csvs: Vec<_> = self.objects.iter().filter(|o| o.is_csv()).collect();
        match csvs.as_slice() {
            [one] => Ok(*one),
            [] => Err(match self.unparsable_manifests.first() {
                Some(f) => format!("no ClusterServiceVersion could be read ({f} does not parse)"),
                None => "no ClusterServiceVersion in the bundle".to_string(),
            }),
            more => Err(format!(
                "{} ClusterServiceVersions; a bundle has one",
                more.len()
            )),
        }
    }

    /// The typed view of the one CSV, when there is exactly one.
    pub fn csv_view(&self) -> Option<crate::bundle::Csv<'_>> {
        self.csv().and_then(crate::bundle::Csv::new)
    }

    /// The one CSV, when there is exactly one.
    pub fn csv(&self) -> Option<&Object> {
        let mut csvs = self.objects.iter().filter(|o| o.is_csv());
        match (csvs.next(), csvs.next()) {
            (Some(csv), None) => Some(csv),
            _ => None,
        }
    }

    /// Every CRD object.
    pub fn crds(&self) -> impl Iterator<Item = &Object> {
        self.objects.iter().filter(|o| o.is_crd())
    }

    /// Every annotation as a label map (empty without annotations), for image builders.
    pub fn annotations_labels(&self) -> BTreeMap<String, String> {
        self.annotations
            .as_ref()
            .map(Annotations::labels)
            .unwrap_or_default()
    }

    /// The manifests folder path (`<root>/manifests` when absent, so callers can report it).
    pub fn manifests_path(&self) -> PathBuf {
        self.root
            .join(self.manifests_dir.as_deref().unwrap_or("manifests"))
    }

    /// The metadata folder path (`<root>/metadata` when absent).
    pub fn metadata_path(&self) -> PathBuf {
        self.root
            .join(self.metadata_dir.as_deref().unwrap_or("metadata"))
    }

    /// Every image the bundle needs to run (the CSV's operator images and related images, as
    /// opm's `Bundle.Images` lists them): one list for everything that asks (the SBOM of a
    /// bundle, the package-manifest loader). Empty without exactly one CSV.
    pub fn images(&self) -> std::collections::BTreeSet<String> {
        self.csv()
            .map(|c| crate::bundle::images::images(&c.root))
            .unwrap_or_default()
    }

    /// The CSV's `spec.version`, when there is one CSV and it is set.
    pub fn csv_version(&self) -> Option<&str> {
        use crate::bundle::images::Tree as _;
        self.csv()?
            .root
            .member("spec")?
            .field("version")?
            .text()
            .filter(|v| !v.is_empty())
    }

    /// The package name from the annotations, when set.
    pub fn package(&self) -> Option<&str> {
        self.annotations
            .as_ref()
            .and_then(|a| a.value(keys::PACKAGE))
            .filter(|p| !p.is_empty())
    }
}
