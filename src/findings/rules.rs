//! The rule registry: every rule's stable id, default severity, group and one-line summary in one
//! table (the cargo-deny / ruff pattern). Ids are part of the public interface — CI configs and
//! JSON consumers key on them — so a test pins the whole list.

use super::diagnostic::Severity;
use std::fmt;

/// Which set a rule belongs to. Only `Default` runs unless the user selects more
/// (like operator-sdk's `--select-optional`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Always on: the registry+v1 format and content rules.
    Default,
    /// OperatorHub listing requirements (operator-sdk's operatorhub/v2, capabilities, categories).
    OperatorHub,
    /// Recommendations from operator-framework's good-practices validator.
    GoodPractices,
    /// Checks of the non-CSV objects shipped in the bundle (PDBs, priority classes, RBAC).
    BundleObjects,
}

impl Group {
    /// Every group, in help order.
    pub const ALL: &'static [Group] = &[
        Group::Default,
        Group::OperatorHub,
        Group::GoodPractices,
        Group::BundleObjects,
    ];

    /// The name users pass to `--select-optional`.
    pub fn name(self) -> &'static str {
        match self {
            Group::Default => "default",
            Group::OperatorHub => "operatorhub",
            Group::GoodPractices => "good-practices",
            Group::BundleObjects => "bundle-objects",
        }
    }

    /// Parses a group name, accepting operator-sdk's spellings (`name=operatorhub`,
    /// `operatorhubv2`, `suite=operatorframework` selects all optional groups).
    pub fn parse_selection(text: &str) -> Result<Vec<Group>, String> {
        let value = text.trim();
        let value = value
            .strip_prefix("name=")
            .or_else(|| value.strip_prefix("suite="))
            .unwrap_or(value);
        match value {
            "operatorhub"
            | "operatorhubv2"
            | "operatorhub/v2"
            | "capabilities"
            | "categories"
            | "standardcapabilities"
            | "standardcategories" => Ok(vec![Group::OperatorHub]),
            "good-practices" | "goodpractices" | "good_practices" => Ok(vec![Group::GoodPractices]),
            "bundle-objects" | "objects" => Ok(vec![Group::BundleObjects]),
            "all" | "operatorframework" => Ok(vec![
                Group::OperatorHub,
                Group::GoodPractices,
                Group::BundleObjects,
            ]),
            other => Err(format!(
                "unknown optional rule group \"{other}\": choose from operatorhub, good-practices, bundle-objects, all"
            )),
        }
    }
}

macro_rules! rules {
    ($( $variant:ident => $id:literal, $sev:ident, $group:ident, $summary:literal; )*) => {
        /// A validation rule. The variant names are for code; the ids (`Rule::id`) are for users.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule { $( #[doc = $summary] $variant, )* }

        impl Rule {
            /// Every rule, in documentation order.
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// The stable id shown in output and accepted in configuration.
            pub fn id(self) -> &'static str {
                match self { $( Rule::$variant => $id, )* }
            }

            /// Severity when nothing raises it.
            pub fn default_severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$sev, )* }
            }

            /// The group that enables the rule.
            pub fn group(self) -> Group {
                match self { $( Rule::$variant => Group::$group, )* }
            }

            /// One line saying what the rule checks.
            pub fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )* }
            }

            /// Looks a rule up by id.
            pub fn from_id(id: &str) -> Option<Rule> {
                Rule::ALL.iter().copied().find(|r| r.id() == id)
            }
        }
    };
}

rules! {
    // --- loading and YAML ---
    YamlSyntax => "yaml/syntax", Error, Default, "Every manifest and metadata file must be valid YAML or JSON.";
    YamlDuplicateKey => "yaml/duplicate-key", Error, Default, "A mapping must not repeat a key (Kubernetes' strict decoding rejects it; lenient decoders silently keep the last value).";
    YamlMultiDocument => "yaml/multi-document", Warning, Default, "A manifest file holds several YAML documents; OLM v0 and opm read only the first.";
    ObjectShape => "object/shape", Error, Default, "A manifest document must be a Kubernetes object with apiVersion, kind and metadata.name.";
    FileTooLarge => "file/too-large", Error, Default, "A file is larger than olmpack reads (far above any real bundle).";
    FileUnreadable => "file/unreadable", Error, Default, "A file or folder could not be read (permissions, I/O error): the command exits 2.";
    FileNotText => "file/not-text", Error, Default, "A manifest or metadata file is not UTF-8 text, or a YAML file is a folder.";
    FileSymlink => "file/symlink", Error, Default, "A symlink leaves the bundle or cannot be followed; images cannot carry it.";
    FileNearConfigMapLimit => "file/size", Warning, Default, "A single manifest above 1 MiB cannot be stored uncompressed in the ConfigMap OLM v0 unpacks bundles into.";
    FileHidden => "file/hidden", Warning, Default, "Hidden files (and OCI whiteouts) in manifests/ or metadata/ are skipped by opm but copied into images by docker builds.";
    FileSubdirectory => "file/subdirectory", Error, Default, "manifests/ holds a subfolder: operator-framework/api and opm alpha bundle validate reject it, opm render loses its files, OLM v0's unpack job and OLM v1 fail (a subfolder of metadata/ is a warning).";
    FileExtension => "file/extension", Warning, Default, "A manifest file does not end in .yaml, .yml or .json; OLM reads it anyway.";
    FileSecret => "file/secret", Warning, Default, "A file looks like a registry credential (auth.json, .dockerconfigjson): it would be published inside the image.";
    MetadataUnknownFile => "metadata/unknown-file", Warning, Default, "metadata/ holds a file OLM does not read (a misspelled dependencies.yaml, a backup).";
    // --- format: folders and annotations ---
    ManifestsMissing => "format/manifests-missing", Error, Default, "The bundle must have a manifests/ folder.";
    ManifestsEmpty => "format/manifests-empty", Error, Default, "manifests/ must contain at least one YAML file.";
    MetadataMissing => "format/metadata-missing", Error, Default, "The bundle must have a metadata/ folder.";
    AnnotationsMissing => "format/annotations-missing", Error, Default, "metadata/annotations.yaml must exist and hold an `annotations` mapping.";
    AnnotationsFallback => "format/annotations-file-name", Warning, Default, "The annotations were found in a file other than metadata/annotations.yaml; OLM v1 reads only that name.";
    AnnotationMissing => "format/annotation-missing", Error, Default, "A required annotation (media type, manifests, metadata, package, channels) is missing.";
    AnnotationEmpty => "format/annotation-empty", Error, Default, "A required annotation (or a present default channel) has an empty value.";
    AnnotationNotString => "format/annotation-type", Warning, Default, "An annotation value is not a string; image labels are strings, so quote it.";
    MediaType => "format/media-type", Error, Default, "The media type annotation must be registry+v1 and match the content (a CSV is present).";
    ManifestsPath => "format/manifests-path", Error, Default, "The manifests.v1 annotation must name the bundle's manifests folder.";
    MetadataPath => "format/metadata-path", Error, Default, "The metadata.v1 annotation must name the bundle's metadata folder.";
    ChannelName => "format/channel-name", Error, Default, "Channel names must be non-empty; a name with spaces or a leading dash is almost always a mistake.";
    DefaultChannelOutside => "format/default-channel", Warning, Default, "The default channel is not one of this bundle's channels (legal when another bundle of the package carries it).";
    DockerfileLabels => "format/dockerfile-labels", Warning, Default, "bundle.Dockerfile LABELs must equal the bundle annotations (annotations.yaml wins on the cluster).";
    ImageLabels => "image/labels", Error, Default, "An image's bundle labels must equal its metadata/annotations.yaml (missing on either side or different).";
    ImageShape => "image/shape", Warning, Default, "A bundle image should be a single-platform manifest with only /manifests, /metadata and /tests, and nothing to run.";
    PackageName => "format/package-name", Error, Default, "The package name must be a DNS-1123 label, the rule catalogs enforce (catalog/package-name; opm 1.41 and later refuse others).";
    // --- CSV ---
    CsvMissing => "csv/missing", Error, Default, "The bundle must contain exactly one ClusterServiceVersion; it has none.";
    CsvMultiple => "csv/multiple", Error, Default, "The bundle must contain exactly one ClusterServiceVersion; it has several.";
    CsvApiVersion => "csv/api-version", Warning, Default, "A ClusterServiceVersion should use apiVersion operators.coreos.com/v1alpha1.";
    CsvFieldType => "csv/field-type", Error, Default, "CSV fields must have the type OLM decodes them into (a list, a mapping, a string, a boolean).";
    CsvRequiredField => "csv/required-field", Error, Default, "A field the CSV schema requires is missing or has the wrong type.";
    CsvName => "csv/name", Error, Default, "metadata.name and spec.replaces must be DNS-1123 subdomains.";
    CsvVersion => "csv/version", Error, Default, "spec.version must be a semantic version.";
    CsvInstallModes => "csv/install-modes", Error, Default, "Install modes must be present, of known types, not duplicated, and at least one supported.";
    CsvDeployments => "csv/deployments", Error, Default, "Install-strategy deployments need unique DNS-1123 names.";
    CsvWebhooks => "csv/webhooks", Error, Default, "Webhook definitions must reference existing deployments, be unique, and conversion webhooks need AllNamespaces only.";
    CsvExamples => "csv/alm-examples", Error, Default, "alm-examples must be a JSON list of objects whose kinds the CSV provides.";
    CsvExampleMissing => "csv/example-missing", Warning, Default, "Each owned API should have an example in alm-examples.";
    CsvMinKubeVersion => "csv/min-kube-version", Error, Default, "spec.minKubeVersion must be a semantic version without a leading v (operator-sdk >= 1.33 rejects one); not three numbers leaves the CSV pending in OLM v0.";
    CsvMinKubeVersionUnset => "csv/min-kube-version-unset", Warning, Default, "spec.minKubeVersion is not set, so the operator claims to run on every Kubernetes version.";
    CsvAnnotationCase => "csv/annotation-case", Error, Default, "OLM annotation keys are case-sensitive (olm.skipRange, not olm.skiprange).";
    CsvPropertiesAnnotation => "csv/olm-properties-annotation", Warning, Default, "Properties should live in metadata/properties.yaml, not the olm.properties annotation.";
    CsvSkipRange => "csv/skip-range", Warning, Default, "A non-empty olm.skipRange must be a valid semver range: OLM ignores one that is not (its upgrade edges are lost) and opm >= 1.69 rejects it in a catalog. An empty one means none.";
    ServiceAccountClash => "csv/service-account", Error, Default, "A ServiceAccount manifest must not duplicate one the CSV's deployments use: OLM creates that one.";
    RelatedImages => "csv/related-images", Error, Default, "relatedImages entries need a valid image pull spec: opm >= 1.64 refuses the whole catalog and operator-framework/api >= 0.40 errors (an empty image is a warning).";
    // --- CRDs ---
    CrdOwnedMissing => "crd/owned-missing", Error, Default, "Every CRD the CSV owns must be in the bundle, with the owned version served.";
    CrdNotOwned => "crd/not-owned", Warning, Default, "A CRD in the bundle is not owned by the CSV (opm warns; operator-sdk errors; --strict fails).";
    CrdDuplicate => "crd/duplicate", Error, Default, "The same CRD must not appear twice.";
    CrdInvalid => "crd/invalid", Error, Default, "The CRD fails Kubernetes' apiextensions validation (names, versions, scope, conversion, approval).";
    CrdPreserveUnknownFields => "crd/preserve-unknown-fields", Error, Default, "apiextensions.k8s.io/v1 CRDs cannot set spec.preserveUnknownFields: true.";
    CrdApiVersion => "crd/api-version", Error, Default, "CRDs must be apiextensions.k8s.io/v1 (v1beta1 is removed in Kubernetes 1.22: a warning unless the target version is newer).";
    // --- other objects ---
    KindUnsupported => "object/kind", Error, Default, "Only the kinds OLM's registry+v1 format installs may be in manifests/.";
    ObjectNamespace => "object/namespace", Error, Default, "Bundle objects must not set metadata.namespace: OLM chooses the namespace at install time.";
    ObjectName => "object/name", Error, Default, "Bundle objects need a metadata.name (a malformed one is a warning).";
    ObjectMetadata => "object/metadata", Error, Default, "Labels and annotations must be valid Kubernetes keys and values.";
    ObjectDuplicate => "object/duplicate", Warning, Default, "Two objects share kind and name; one silently replaces the other at install time.";
    DeprecatedApi => "object/deprecated-api", Warning, Default, "An object uses an API removed in a Kubernetes version (an error when --k8s-version or minKubeVersion reaches it).";
    // --- metadata files ---
    Dependencies => "dependencies/invalid", Error, Default, "dependencies.yaml entries must have a known type and a complete value.";
    DependencyRange => "dependencies/version-range", Error, Default, "olm.package dependency versions must be valid blang semver ranges.";
    Properties => "properties/invalid", Warning, Default, "properties.yaml must be a list of {type, value} entries.";
    BundleSize => "bundle/size", Error, Default, "The gzip+base64 size of manifests/ must stay below OLM's 1 MiB ConfigMap limit (a warning above 85 %).";
    // --- robustness and tool fidelity (issue 8: isolated runs, files other tools mis-read) ---
    InternalError => "internal/error", Error, Default, "olmpack itself failed while handling this bundle (a bug: please report it); the other bundles of the run are still checked and the run exits 2.";
    YamlFirstDocumentEmpty => "yaml/first-document-empty", Error, Default, "A manifest's first YAML document is empty (only comments) and its object is in a later one: opm and OLM v0 read only the first document, so they find nothing.";
    MetadataNoContent => "metadata/no-content", Error, Default, "A metadata file holds only comments or `---`: operator-sdk bundle validate and opm alpha bundle validate crash on it (nil-pointer panic).";
    // --- optional: operatorhub ---
    HubProvider => "operatorhub/provider", Error, OperatorHub, "spec.provider.name must be set.";
    HubMaintainers => "operatorhub/maintainers", Error, OperatorHub, "Maintainers need a name and a valid email.";
    HubLinks => "operatorhub/links", Error, OperatorHub, "Links need a name and a valid URL.";
    HubIcon => "operatorhub/icon", Error, OperatorHub, "One icon with base64 data and an image media type.";
    HubCapabilities => "operatorhub/capabilities", Error, OperatorHub, "The capabilities annotation must be one of the five capability levels.";
    HubCategories => "operatorhub/categories", Error, OperatorHub, "The categories annotation must use the standard categories.";
    HubDescription => "operatorhub/description", Warning, OperatorHub, "The CSV needs a description, display name and keywords for the listing.";
    // --- optional: good practices ---
    PracticeResources => "good-practices/resource-requests", Warning, GoodPractices, "Containers should request CPU and memory.";
    PracticeCrdDescription => "good-practices/crd-description", Warning, GoodPractices, "Owned and required CRDs should have a description.";
    PracticeChannelNaming => "good-practices/channel-naming", Warning, GoodPractices, "Channel names should follow the candidate/fast/stable convention.";
    PracticeCrdPermission => "good-practices/crd-permission", Warning, GoodPractices, "An operator should not have permission to create CRDs.";
    PracticeCsvName => "good-practices/csv-name", Warning, GoodPractices, "The CSV name should be <package>.v<semver>.";
    PracticeImageDigest => "good-practices/image-digest", Warning, GoodPractices, "Images should be pinned by digest for reproducible, disconnected installs.";
    // --- optional: bundle objects ---
    ObjectsPdb => "bundle-objects/pod-disruption-budget", Error, BundleObjects, "A PodDisruptionBudget must not block all evictions.";
    ObjectsPriorityClass => "bundle-objects/priority-class", Error, BundleObjects, "A PriorityClass must not be the global default.";
    ObjectsRbac => "bundle-objects/rbac", Error, BundleObjects, "RBAC must not modify default SecurityContextConstraints (PDB permissions are a warning).";
    // --- catalogs (file-based catalogs: loading, opm validate, and checks beyond opm) ---
    CatalogUnreadable => "catalog/unreadable", Error, Default, "Every file and folder under the catalog must be readable (opm reads every file, whatever its name).";
    CatalogSyntax => "catalog/syntax", Error, Default, "Every file must be a JSON stream or multi-document YAML, with `---` separators followed only by a comment.";
    CatalogBlobShape => "catalog/blob-shape", Error, Default, "Every document must be a mapping whose values JSON can hold.";
    CatalogDuplicateKey => "catalog/duplicate-key", Error, Default, "A blob must not have keys that differ only in case (opm matches keys case-insensitively).";
    CatalogYamlDuplicateKey => "catalog/yaml-duplicate-key", Warning, Default, "A YAML mapping repeats a key; opm silently keeps the last value.";
    CatalogMissingSchema => "catalog/missing-schema", Error, Default, "Every blob needs a `schema` key.";
    CatalogMetaType => "catalog/meta-type", Error, Default, "`schema`, `package` and `name` must be strings.";
    CatalogFieldType => "catalog/field-type", Error, Default, "Fields of olm.package, olm.channel, olm.bundle and olm.deprecations blobs must have the JSON type opm decodes them into.";
    CatalogBundleObject => "catalog/bundle-object", Error, Default, "olm.bundle.object properties must hold base64 of a JSON or YAML manifest (or, as in opm 1.26, a ref to a file inside the catalog).";
    CatalogPackageName => "catalog/package-name", Error, Default, "A package needs a name that is a DNS-1123 label.";
    CatalogPackageDuplicate => "catalog/package-duplicate", Error, Default, "A package must be declared by exactly one olm.package blob.";
    CatalogPackageUnknown => "catalog/package-unknown", Error, Default, "Channels, bundles and deprecations must name a package declared by an olm.package blob.";
    CatalogChannelName => "catalog/channel-name", Error, Default, "A channel needs a name.";
    CatalogChannelDuplicate => "catalog/channel-duplicate", Error, Default, "A package must not declare the same channel twice.";
    CatalogEntryDuplicate => "catalog/entry-duplicate", Error, Default, "A channel must not list the same bundle twice.";
    CatalogBundleDuplicate => "catalog/bundle-duplicate", Error, Default, "A package must not declare the same bundle twice.";
    CatalogBundleName => "catalog/bundle-name", Error, Default, "A bundle needs a name; with a release it must be <package>-v<version>-<release>.";
    CatalogBundlePackage => "catalog/bundle-package", Error, Default, "A bundle needs a package, equal to its olm.package property's packageName.";
    CatalogPropertyInvalid => "catalog/property-invalid", Error, Default, "Known property types (olm.package, olm.gvk, olm.csv.metadata, …) must have values of their shape.";
    CatalogPackageProperty => "catalog/package-property", Error, Default, "A bundle needs exactly one olm.package property.";
    CatalogImageReference => "catalog/image-reference", Error, Default, "image and relatedImages[].image, when set, must be valid image pull specs.";
    CatalogBundleImage => "catalog/bundle-image", Error, Default, "A bundle without olm.bundle.object properties needs an image.";
    CatalogVersion => "catalog/version", Error, Default, "The olm.package version must be strict semver; a release must be a valid pre-release of at most 20 characters, with no build metadata in the version.";
    CatalogBundleNotInChannel => "catalog/bundle-not-in-channel", Error, Default, "Every bundle must be an entry of at least one channel.";
    CatalogEntryMissingBundle => "catalog/entry-missing-bundle", Error, Default, "Every channel entry must name an olm.bundle blob of the package.";
    CatalogDefaultChannel => "catalog/default-channel", Error, Default, "A package needs a defaultChannel naming one of its channels.";
    CatalogPackageNoChannels => "catalog/package-no-channels", Error, Default, "A package needs at least one channel.";
    CatalogChannelEmpty => "catalog/channel-empty", Error, Default, "A channel needs at least one entry.";
    CatalogChannelHead => "catalog/channel-head", Error, Default, "A channel needs exactly one head: one entry that no replaces or skips points at.";
    CatalogReplacesCycle => "catalog/replaces-cycle", Error, Default, "The replaces chain from the head must not loop.";
    CatalogStranded => "catalog/stranded", Error, Default, "Every entry must be on the replaces chain from the head or be skipped (opm 1.58 walk).";
    CatalogDuplicateVersion => "catalog/duplicate-version", Error, Default, "Two bundles of a package must not have the same version (and release).";
    CatalogSkipEmpty => "catalog/skip-empty", Error, Default, "A channel entry's skips must not contain an empty name.";
    CatalogSkipRange => "catalog/skip-range", Error, Default, "A channel entry's skipRange must be a valid semver range.";
    CatalogDeprecation => "catalog/deprecation", Error, Default, "olm.deprecations blobs: one per known package, entries with a schema, a message and an existing target, no duplicates.";
    CatalogHeadNotHighest => "catalog/head-not-highest", Warning, Default, "A channel's head is not its highest version: users are led to an older bundle.";
    CatalogUnreachable => "catalog/unreachable", Warning, Default, "An entry has no upgrade path to the channel head (not reached by replaces, skips or skipRange from the head).";
    CatalogReplacesUnknown => "catalog/replaces-unknown", Warning, Default, "replaces names a bundle that is in no channel of the package.";
    CatalogSkipsUnknown => "catalog/skips-unknown", Warning, Default, "skips names a bundle the catalog does not know.";
    CatalogDefaultChannelStale => "catalog/default-channel-stale", Warning, Default, "The default channel's head is older than another channel's head.";
    CatalogCsvFields => "catalog/csv-fields", Warning, Default, "Bundle metadata (olm.csv.metadata or the CSV object) has fields of the wrong type or missing ones OLM shows.";
    CatalogCsvInstallModes => "catalog/csv-install-modes", Warning, Default, "Bundle metadata install modes must be known, unique and support at least one mode.";
    CatalogCsvMinKubeVersion => "catalog/csv-min-kube-version", Warning, Default, "Bundle metadata minKubeVersion must be a semantic version when set.";
    CatalogCsvAlmExamples => "catalog/csv-alm-examples", Warning, Default, "The CSV's alm-examples annotation must be a JSON list of objects of kinds the bundle provides.";
    CatalogEmpty => "catalog/empty", Error, Default, "A catalog folder must hold at least one olm.* blob: an empty one is usually a wrong path (--allow-empty accepts it).";
}

impl Rule {
    /// Whether the rule judges file-based catalogs (`catalog validate`) rather than bundles.
    pub fn is_catalog(self) -> bool {
        self.id().starts_with("catalog/")
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for rule in Rule::ALL {
            assert!(seen.insert(rule.id()), "duplicate id {}", rule.id());
            let (prefix, name) = rule.id().split_once('/').expect("group/name");
            assert!(!prefix.is_empty() && !name.is_empty());
            assert!(
                rule.id()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c == '/'),
                "{}",
                rule.id()
            );
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
        }
    }

    #[test]
    fn optional_groups_parse_like_operator_sdk() {
        assert_eq!(
            Group::parse_selection("name=operatorhub"),
            Ok(vec![Group::OperatorHub])
        );
        assert_eq!(
            Group::parse_selection("good-practices"),
            Ok(vec![Group::GoodPractices])
        );
        assert!(Group::parse_selection("nope").is_err());
    }
}
