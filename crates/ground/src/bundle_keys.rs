//! The registry+v1 annotation keys opm writes (the first five are required) and the CSV
//! annotations OLM reads. Both the bundle model (annotations.yaml) and the bundle image (its
//! labels) speak them, so they live below both.

/// Media type of the bundle (`registry+v1`).
pub const MEDIATYPE: &str = "operators.operatorframework.io.bundle.mediatype.v1";
/// Folder holding the manifests, as seen in the image (`manifests/`).
pub const MANIFESTS: &str = "operators.operatorframework.io.bundle.manifests.v1";
/// Folder holding the metadata, as seen in the image (`metadata/`).
pub const METADATA: &str = "operators.operatorframework.io.bundle.metadata.v1";
/// Package name.
pub const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
/// Comma-separated channels this bundle belongs to.
pub const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
/// The package's default channel (optional).
pub const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";
/// Scorecard test config folder label, set by operator-sdk when tests/scorecard exists.
pub const TEST_CONFIG: &str = "operators.operatorframework.io.test.config.v1";
/// Prefix shared by the bundle keys that images must repeat as labels.
pub const BUNDLE_PREFIX: &str = "operators.operatorframework.io.bundle.";
/// The core keys in opm's LABEL order (bundle.Dockerfile, FIELD c.1).
pub const CORE_ORDER: [&str; 6] = [
    MEDIATYPE,
    MANIFESTS,
    METADATA,
    PACKAGE,
    CHANNELS,
    DEFAULT_CHANNEL,
];
/// CSV annotation: the namespaces the operator watches, comma-separated (`""` for all);
/// OLM sets it on the CSV and so on every operator pod.
pub const TARGET_NAMESPACES: &str = "olm.targetNamespaces";
/// CSV annotation: the namespace the operator is installed in.
pub const OPERATOR_NAMESPACE: &str = "olm.operatorNamespace";
/// CSV annotation: extra properties (a JSON list) merged with `metadata/properties.yaml`.
pub const OLM_PROPERTIES: &str = "olm.properties";
/// CSV annotation: the range of versions this bundle replaces.
pub const SKIP_RANGE: &str = "olm.skipRange";
