//! One broken bundle per validation rule (and per distinct trigger of a rule), each derived from
//! `testdata/bundles/valid-basic` with exactly one defect. For every case the binary must report
//! the rule with the expected severity at the expected file and line, exit with the documented
//! code (1 for errors; 0 for warnings only, 1 with `--strict`), and fire no *error* rule that is
//! not explained by the defect, so each bundle isolates its rule.
//!
//! Bundles whose defect cannot live in git (a large sparse file, unreadable permissions, symlinks
//! leaving the bundle, binary content, megabytes of random data) are built at run time in a
//! temporary folder from a copy of valid-basic.
//!
//! The coverage test fails when a rule in `Rule::ALL` has no case here, so a new rule cannot be
//! added without a broken bundle showing that it works.

use crate::support::cmd::olmpack_through;
use crate::support::fixtures::{repo_root as root, valid_basic};
use crate::support::fs::copy_dir;
use crate::support::proc::{Bounded, is_root};
use assert_cmd::Command;
use olmpack::validate::{Group, Rule};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const CSV: &str = "manifests/kvstore-operator.clusterserviceversion.yaml";
const CRD: &str = "manifests/kvstore.example.com_kvclusters.yaml";
const ANN: &str = "metadata/annotations.yaml";
const DEPS: &str = "metadata/dependencies.yaml";

/// Folders under `broken/` that reproduce a src problem and have no passing case yet; the
/// coverage test accepts them without a table entry. Remove a name once its case is added.
const PENDING_SRC_FIX: &[&str] = &[];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sev {
    Error,
    Warning,
}

impl Sev {
    fn as_str(self) -> &'static str {
        match self {
            Sev::Error => "error",
            Sev::Warning => "warning",
        }
    }
}

/// Builds a runtime bundle into the given (empty) folder.
type Builder = fn(&Path);

struct Case {
    /// Folder under `testdata/bundles/broken/`, or the name of a runtime case.
    dir: &'static str,
    rule: &'static str,
    severity: Sev,
    file: Option<&'static str>,
    line: Option<u64>,
    /// Extra command-line arguments (e.g. `--k8s-version`).
    args: &'static [&'static str],
    /// Other error rules the defect necessarily triggers.
    also: &'static [&'static str],
    /// Expected exit code when it is not the one implied by the severity.
    exit: Option<i32>,
    /// Runtime bundles: how to build them.
    build: Option<Builder>,
    /// Skips the case (with a message) when the environment cannot produce the defect.
    skip: Option<fn() -> Option<String>>,
    /// A substring the message must contain (for cases whose rule has several messages).
    message: Option<&'static str>,
}

fn case(
    dir: &'static str,
    rule: &'static str,
    severity: Sev,
    file: Option<&'static str>,
    line: Option<u64>,
) -> Case {
    Case {
        dir,
        rule,
        severity,
        file,
        line,
        args: &[],
        also: &[],
        exit: None,
        build: None,
        skip: None,
        message: None,
    }
}

fn err(dir: &'static str, rule: &'static str, file: &'static str, line: u64) -> Case {
    case(dir, rule, Sev::Error, Some(file), Some(line))
}

fn warn(dir: &'static str, rule: &'static str, file: &'static str, line: u64) -> Case {
    case(dir, rule, Sev::Warning, Some(file), Some(line))
}

impl Case {
    fn args(mut self, args: &'static [&'static str]) -> Self {
        self.args = args;
        self
    }
    fn also(mut self, also: &'static [&'static str]) -> Self {
        self.also = also;
        self
    }
    fn exit(mut self, code: i32) -> Self {
        self.exit = Some(code);
        self
    }
    fn build(mut self, build: Builder) -> Self {
        self.build = Some(build);
        self
    }
    fn skip_if(mut self, skip: fn() -> Option<String>) -> Self {
        self.skip = Some(skip);
        self
    }
    fn message(mut self, needle: &'static str) -> Self {
        self.message = Some(needle);
        self
    }
    fn optional(&self) -> bool {
        Rule::from_id(self.rule).is_some_and(|r| r.group() != Group::Default)
    }
}

fn cases() -> Vec<Case> {
    use Sev::{Error, Warning};
    vec![
        // --- loading and YAML ---
        err("yaml__syntax", "yaml/syntax", "manifests/service.yaml", 6),
        err("yaml__syntax__annotations", "yaml/syntax", ANN, 9),
        err("yaml__duplicate-key", "yaml/duplicate-key", CSV, 30),
        err(
            "yaml__duplicate-key__annotations",
            "yaml/duplicate-key",
            ANN,
            9,
        ),
        case(
            "yaml__multi-document",
            "yaml/multi-document",
            Warning,
            Some("manifests/service.yaml"),
            None,
        ),
        // --- issue 8: files other tools read differently ---
        err(
            "yaml__first-document-empty",
            "yaml/first-document-empty",
            CSV,
            2,
        )
        .message("no csv in bundle"),
        err(
            "yaml__first-document-empty__service",
            "yaml/first-document-empty",
            "manifests/kvstore-operator-metrics_v1_service.yaml",
            2,
        )
        .message("opm drops this object"),
        case(
            "metadata__no-content",
            "metadata/no-content",
            Error,
            Some(DEPS),
            None,
        )
        .message("opm alpha bundle validate"),
        case(
            "metadata__no-content__separator",
            "metadata/no-content",
            Error,
            Some(DEPS),
            None,
        )
        .message("operator-sdk bundle validate"),
        // OLM ignores the file, but the reference validators decode it before dependencies.yaml.
        case(
            "metadata__no-content__unknown-file",
            "metadata/no-content",
            Error,
            Some("metadata/annotations.yaml.bak"),
            None,
        ),
        err("object__shape", "object/shape", "manifests/service.yaml", 1)
            .message("'kind' is missing"),
        err(
            "object__shape__not-a-mapping",
            "object/shape",
            "manifests/service.yaml",
            1,
        )
        .message("found a list"),
        err(
            "object__shape__csv-api-version-missing",
            "object/shape",
            CSV,
            1,
        )
        .message("'apiVersion' is missing on this ClusterServiceVersion"),
        // operator-sdk's content check decodes `kind` case-sensitively (issue 41.2).
        err(
            "object__shape__key-case",
            "object/shape",
            "manifests/service.yaml",
            2,
        )
        .message("key \"Kind\" should be \"kind\": operator-sdk bundle validate"),
        // shared/corpus automotive-infra/0.0.3: operator-sdk says "'apiVersion' is missing".
        err("object__shape__csv-api-version-case", "object/shape", CSV, 1)
            .message("key \"ApiVersion\" should be \"apiVersion\": operator-sdk bundle validate decodes it case-sensitively and rejects the bundle (\"'apiVersion' is missing\")"),
        case(
            "object__shape__no-document",
            "object/shape",
            Error,
            Some("manifests/service.yaml"),
            None,
        ),
        case(
            "file__too-large",
            "file/too-large",
            Error,
            Some("manifests/huge.yaml"),
            None,
        )
        .build(build_too_large),
        case(
            "file__unreadable",
            "file/unreadable",
            Error,
            Some("manifests/kvstore-operator-metrics_v1_service.yaml"),
            None,
        )
        .exit(2)
        .build(build_unreadable)
        .skip_if(unreadable_skip_reason),
        err("file__not-text", "file/not-text", "manifests/logo.yaml", 2).build(build_binary),
        case(
            "file__not-text__folder",
            "file/not-text",
            Error,
            Some(ANN),
            None,
        )
        .also(&["format/annotations-missing"])
        .message("is a folder"),
        case(
            "file__symlink",
            "file/symlink",
            Error,
            Some("manifests/outside.yaml"),
            None,
        )
        .build(build_symlink_outside)
        .message("points outside the bundle"),
        case(
            "file__symlink__loop",
            "file/symlink",
            Error,
            Some("manifests/loop.yaml"),
            None,
        )
        .build(build_symlink_loop)
        .message("cannot be followed"),
        case(
            "file__size",
            "file/size",
            Warning,
            Some("manifests/kvstore-defaults_v1_configmap.yaml"),
            None,
        )
        .build(build_large_manifest),
        case(
            "file__hidden",
            "file/hidden",
            Warning,
            Some("manifests/.service.yaml.swp"),
            None,
        ),
        case(
            "file__hidden__whiteout",
            "file/hidden",
            Warning,
            Some("manifests/.wh.old-service.yaml"),
            None,
        )
        .message("whiteout"),
        case(
            "file__subdirectory",
            "file/subdirectory",
            Error,
            Some("manifests/extra"),
            None,
        )
        .message("bundle manifests dir contains directory"),
        case(
            "file__subdirectory__metadata",
            "file/subdirectory",
            Warning,
            Some("metadata/old"),
            None,
        ),
        case(
            "file__extension",
            "file/extension",
            Warning,
            Some("manifests/service.yml.txt"),
            None,
        ),
        case(
            "file__secret",
            "file/secret",
            Warning,
            Some("metadata/auth.json"),
            None,
        ),
        case(
            "metadata__unknown-file",
            "metadata/unknown-file",
            Warning,
            Some("metadata/dependencies.yaml.orig"),
            None,
        )
        .message("did you mean dependencies.yaml?"),
        // --- format ---
        case(
            "format__manifests-missing",
            "format/manifests-missing",
            Error,
            None,
            None,
        ),
        case(
            "format__manifests-empty",
            "format/manifests-empty",
            Error,
            Some("manifests/"),
            None,
        )
        .also(&["csv/missing"]),
        case(
            "format__metadata-missing",
            "format/metadata-missing",
            Error,
            None,
            None,
        ),
        err("csv__field-type", "csv/field-type", CSV, 38),
        case(
            "format__dockerfile-labels",
            "format/dockerfile-labels",
            Warning,
            Some("bundle.Dockerfile"),
            Some(6),
        )
        .message("differs from annotations.yaml"),
        warn(
            "csv__example-missing__empty",
            "csv/example-missing",
            CSV,
            13,
        ),
        warn(
            "crd__api-version__v1beta1-default-scope",
            "crd/api-version",
            CRD,
            1,
        ),
        case(
            "format__annotations-file-name__yml",
            "format/annotations-file-name",
            Warning,
            Some("metadata/annotations.yml"),
            None,
        ),
        case(
            "format__metadata-missing__file",
            "format/metadata-missing",
            Error,
            Some("metadata"),
            None,
        ),
        case(
            "format__annotations-missing",
            "format/annotations-missing",
            Error,
            Some("metadata/"),
            None,
        ),
        err(
            "format__annotations-missing__no-key",
            "format/annotations-missing",
            ANN,
            1,
        ),
        err(
            "format__annotations-missing__list",
            "format/annotations-missing",
            ANN,
            2,
        ),
        case(
            "format__annotations-file-name",
            "format/annotations-file-name",
            Warning,
            Some("metadata/annotation.yaml"),
            None,
        ),
        err(
            "format__annotation-missing",
            "format/annotation-missing",
            ANN,
            2,
        )
        .message("operators.operatorframework.io.bundle.channels.v1"),
        err(
            "format__annotation-empty",
            "format/annotation-empty",
            ANN,
            5,
        ),
        err(
            "format__annotation-empty__default-channel",
            "format/annotation-empty",
            ANN,
            7,
        ),
        warn("format__annotation-type", "format/annotation-type", ANN, 9),
        err(
            "format__annotation-type__list",
            "format/annotation-type",
            ANN,
            8,
        ),
        err("format__media-type", "format/media-type", ANN, 2),
        err("format__manifests-path", "format/manifests-path", ANN, 3),
        err("format__metadata-path", "format/metadata-path", ANN, 4),
        err("format__channel-name", "format/channel-name", ANN, 6),
        warn(
            "format__channel-name__spaces",
            "format/channel-name",
            ANN,
            6,
        ),
        warn("format__channel-name__dash", "format/channel-name", ANN, 6),
        warn("format__default-channel", "format/default-channel", ANN, 7),
        err("format__package-name", "format/package-name", ANN, 5),
        // --- CSV ---
        case(
            "csv__missing",
            "csv/missing",
            Error,
            Some("manifests/"),
            None,
        ),
        err(
            "csv__multiple",
            "csv/multiple",
            "manifests/kvstore-operator.v1.3.0.clusterserviceversion.yaml",
            1,
        ),
        warn("csv__api-version", "csv/api-version", CSV, 1),
        err("csv__required-field", "csv/required-field", CSV, 23).message("spec.displayName"),
        err(
            "csv__required-field__strategy",
            "csv/required-field",
            CSV,
            68,
        )
        .message("spec.install.strategy"),
        err(
            "csv__required-field__spec-not-mapping",
            "csv/required-field",
            CSV,
            1,
        ),
        err("csv__name", "csv/name", CSV, 4),
        err("csv__name__replaces", "csv/name", CSV, 27),
        err("csv__version", "csv/version", CSV, 26),
        warn("csv__version__missing", "csv/version", CSV, 23),
        err("csv__release", "csv/release", CSV, 27).message("leading zero"),
        err("csv__release__name", "csv/release", CSV, 4)
            .message("does not match expected name \"kvstore-operator-v1.2.0-1\""),
        err("csv__release__build-metadata", "csv/release", CSV, 26).message("build metadata"),
        err("csv__release__type", "csv/release", CSV, 27).message("is not a string"),
        err("csv__install-modes", "csv/install-modes", CSV, 23).message("install modes not found"),
        err(
            "csv__install-modes__duplicate",
            "csv/install-modes",
            CSV,
            51,
        )
        .message("duplicate install mode \"OwnNamespace\" (first on line 43)"),
        err(
            "csv__install-modes__none-supported",
            "csv/install-modes",
            CSV,
            43,
        )
        .message("none of the install modes is supported"),
        err("csv__install-modes__not-bool", "csv/install-modes", CSV, 47),
        warn(
            "csv__install-modes__unknown-type",
            "csv/install-modes",
            CSV,
            47,
        )
        .message("did you mean MultiNamespace?"),
        err("csv__deployments", "csv/deployments", CSV, 86),
        err("csv__webhooks", "csv/webhooks", CSV, 107).message("kvstore-webhook"),
        err(
            "csv__webhooks__conversion-install-modes",
            "csv/webhooks",
            CSV,
            43,
        )
        .message("conversion webhooks need AllNamespaces only"),
        err("csv__alm-examples", "csv/alm-examples", CSV, 13).message("not valid JSON"),
        err(
            "csv__alm-examples__not-provided",
            "csv/alm-examples",
            CSV,
            13,
        )
        .message("Kind=KVBackup"),
        warn("csv__example-missing", "csv/example-missing", CSV, 13),
        err("csv__min-kube-version", "csv/min-kube-version", CSV, 28)
            .message("the CSV stays pending"),
        warn(
            "csv__min-kube-version-unset",
            "csv/min-kube-version-unset",
            CSV,
            23,
        ),
        err("csv__annotation-case", "csv/annotation-case", CSV, 11),
        warn(
            "csv__olm-properties-annotation",
            "csv/olm-properties-annotation",
            CSV,
            11,
        ),
        warn("csv__skip-range", "csv/skip-range", CSV, 11).message("opm >= 1.69 rejects it"),
        err(
            "csv__service-account",
            "csv/service-account",
            "manifests/kvstore-operator_v1_serviceaccount.yaml",
            1,
        ),
        err("csv__related-images", "csv/related-images", CSV, 107)
            .message("opm >= 1.64 refuses the whole catalog"),
        err(
            "csv__related-images__scheme",
            "csv/related-images",
            CSV,
            107,
        )
        .message("operator-framework/api >= 0.40"),
        warn("csv__related-images__empty", "csv/related-images", CSV, 107)
            .message("empty image field"),
        // --- CRDs ---
        err("crd__owned-missing", "crd/owned-missing", CSV, 53),
        // gpu-operator-certified, aqua-operator-certified, sap-btp-operator (issue 41.2).
        err("crd__owned-group", "crd/owned-group", CSV, 53)
            .message("owned CRD kvclusters.kvstore.example.com/v1 not found in bundle \"kvstore-operator.v1.2.0\""),
        warn(
            "crd__owned-missing__not-served",
            "crd/owned-missing",
            CSV,
            53,
        )
        .message("is not served"),
        warn(
            "crd__not-owned",
            "crd/not-owned",
            "manifests/kvstore.example.com_kvbackups.yaml",
            1,
        ),
        err(
            "crd__duplicate",
            "crd/duplicate",
            "manifests/kvstore.example.com_kvclusters_copy.yaml",
            1,
        ),
        err("crd__invalid", "crd/invalid", CRD, 12),
        err("crd__invalid__name", "crd/invalid", CRD, 4),
        err("crd__invalid__storage", "crd/invalid", CRD, 14),
        err(
            "crd__preserve-unknown-fields",
            "crd/preserve-unknown-fields",
            CRD,
            13,
        ),
        err(
            "crd__preserve-unknown-fields__v1beta1-default",
            "crd/preserve-unknown-fields",
            CRD,
            6,
        )
        .message("defaults to true"),
        warn("crd__api-version", "crd/api-version", CRD, 1),
        err("crd__api-version", "crd/api-version", CRD, 1).args(&["--k8s-version", "1.22"]),
        err(
            "crd__api-version__min-kube-version",
            "crd/api-version",
            CRD,
            1,
        ),
        err("crd__api-version__unsupported", "crd/api-version", CRD, 1),
        // --- other objects ---
        err(
            "object__kind",
            "object/kind",
            "manifests/kvstore-operator_apps_v1_deployment.yaml",
            2,
        ),
        err(
            "object__namespace",
            "object/namespace",
            "manifests/service.yaml",
            5,
        ),
        err("object__name", "object/name", "manifests/service.yaml", 4),
        warn(
            "object__name__malformed",
            "object/name",
            "manifests/service.yaml",
            4,
        ),
        err(
            "object__metadata",
            "object/metadata",
            "manifests/service.yaml",
            6,
        ),
        err(
            "object__metadata__label-value",
            "object/metadata",
            "manifests/service.yaml",
            6,
        ),
        warn(
            "object__duplicate",
            "object/duplicate",
            "manifests/service-b.yaml",
            1,
        ),
        warn(
            "object__deprecated-api",
            "object/deprecated-api",
            "manifests/kvstore-operator_policy_pdb.yaml",
            1,
        ),
        err(
            "object__deprecated-api",
            "object/deprecated-api",
            "manifests/kvstore-operator_policy_pdb.yaml",
            1,
        )
        .args(&["--k8s-version", "v1.25.0"]),
        err(
            "object__deprecated-api",
            "object/deprecated-api",
            "manifests/kvstore-operator_policy_pdb.yaml",
            1,
        )
        .args(&["--optional-values", "k8s-version=1.25"]),
        err(
            "object__deprecated-api__min-kube-version",
            "object/deprecated-api",
            "manifests/kvstore-operator_policy_pdb.yaml",
            1,
        ),
        // --- metadata files ---
        err("dependencies__invalid", "dependencies/invalid", DEPS, 6),
        err(
            "dependencies__invalid__gvk",
            "dependencies/invalid",
            DEPS,
            4,
        )
        .message("API Kind is empty"),
        err(
            "dependencies__invalid__cel",
            "dependencies/invalid",
            DEPS,
            6,
        )
        .message("Invalid CEL expression"),
        err(
            "dependencies__version-range",
            "dependencies/version-range",
            DEPS,
            5,
        ),
        warn(
            "properties__invalid",
            "properties/invalid",
            "metadata/properties.yaml",
            4,
        ),
        case(
            "bundle__size",
            "bundle/size",
            Error,
            Some("manifests/"),
            None,
        )
        .build(build_bundle_too_big),
        case(
            "bundle__size__nearing",
            "bundle/size",
            Warning,
            Some("manifests/"),
            None,
        )
        .build(build_bundle_nearly_too_big)
        .message("nearing maximum bundle compressed size"),
        // --- further triggers ---
        err("crd__invalid__protected-group", "crd/invalid", CRD, 4)
            .message("api-approved.kubernetes.io"),
        err("crd__invalid__printer-column", "crd/invalid", CRD, 33).message("type \"int\""),
        err("crd__invalid__conversion", "crd/invalid", CRD, 14).message("spec.conversion.webhook"),
        err("crd__invalid__list-kind", "crd/invalid", CRD, 9)
            .message("listKind must not equal kind"),
        err("crd__invalid__short-names", "crd/invalid", CRD, 12).message("shortNames"),
        err("crd__invalid__duplicate-version", "crd/invalid", CRD, 34)
            .message("duplicate version \"v1\""),
        err(
            "crd__invalid__v1beta1-identical-schemas",
            "crd/invalid",
            CRD,
            16,
        )
        .message("per-version schemas may not all be set to identical values"),
        err("csv__deployments__duplicate", "csv/deployments", CSV, 106)
            .message("duplicate install strategy deployment"),
        err(
            "csv__required-field__deployments",
            "csv/required-field",
            CSV,
            70,
        )
        .message("spec.install.spec.deployments"),
        err("csv__webhooks__type", "csv/webhooks", CSV, 107).message("MutatingWebhook"),
        err("csv__webhooks__duplicate", "csv/webhooks", CSV, 112).message("duplicate webhook"),
        err("csv__alm-examples__not-a-list", "csv/alm-examples", CSV, 13)
            .message("must be a JSON list of objects"),
        err(
            "csv__min-kube-version__v-prefix",
            "csv/min-kube-version",
            CSV,
            28,
        )
        .message("operator-sdk >= 1.33"),
        err("csv__name__too-long", "csv/name", CSV, 4).message("no more than 63 characters"),
        err(
            "csv__install-modes__empty-list",
            "csv/install-modes",
            CSV,
            42,
        )
        .message("install modes not found"),
        err(
            "dependencies__invalid__label",
            "dependencies/invalid",
            DEPS,
            4,
        )
        .message("Label information is missing"),
        err(
            "dependencies__invalid__not-a-list",
            "dependencies/invalid",
            DEPS,
            2,
        )
        .message("must be a list"),
        err(
            "dependencies__version-range__constraint",
            "dependencies/version-range",
            DEPS,
            6,
        )
        .message("versionRange"),
        warn(
            "properties__invalid__not-a-list",
            "properties/invalid",
            "metadata/properties.yaml",
            2,
        ),
        warn(
            "properties__invalid__derived",
            "properties/invalid",
            "metadata/properties.yaml",
            2,
        )
        .message("olm.gvk"),
        warn(
            "object__shape__api-version-missing",
            "object/shape",
            "manifests/service.yaml",
            1,
        )
        .message("'apiVersion' is missing on this Service"),
        err(
            "object__metadata__annotation-key",
            "object/metadata",
            "manifests/service.yaml",
            6,
        )
        .message("annotation key"),
        err(
            "yaml__syntax__tab",
            "yaml/syntax",
            "manifests/service.yaml",
            4,
        ),
        err(
            "format__annotations-missing__empty-file",
            "format/annotations-missing",
            ANN,
            1,
        ),
        // --- optional: operatorhub ---
        err("operatorhub__provider", "operatorhub/provider", CSV, 23),
        err(
            "operatorhub__maintainers",
            "operatorhub/maintainers",
            CSV,
            33,
        ),
        err("operatorhub__links", "operatorhub/links", CSV, 36),
        err("operatorhub__icon", "operatorhub/icon", CSV, 40),
        warn("operatorhub__icon__missing", "operatorhub/icon", CSV, 23),
        warn("operatorhub__icon__empty-list", "operatorhub/icon", CSV, 23),
        err(
            "operatorhub__capabilities",
            "operatorhub/capabilities",
            CSV,
            7,
        ),
        err("operatorhub__categories", "operatorhub/categories", CSV, 8)
            .message("\"Key Value Stores\""),
        warn(
            "operatorhub__description",
            "operatorhub/description",
            CSV,
            23,
        ),
        // --- optional: good practices ---
        warn(
            "good-practices__resource-requests",
            "good-practices/resource-requests",
            CSV,
            99,
        ),
        warn(
            "good-practices__crd-description",
            "good-practices/crd-description",
            CSV,
            53,
        ),
        warn(
            "good-practices__channel-naming",
            "good-practices/channel-naming",
            ANN,
            6,
        ),
        warn(
            "good-practices__crd-permission",
            "good-practices/crd-permission",
            CSV,
            76,
        ),
        warn(
            "good-practices__csv-name",
            "good-practices/csv-name",
            CSV,
            4,
        ),
        warn(
            "good-practices__image-digest",
            "good-practices/image-digest",
            CSV,
            100,
        ),
        // --- optional: bundle objects ---
        err(
            "bundle-objects__pod-disruption-budget",
            "bundle-objects/pod-disruption-budget",
            "manifests/kvstore-operator_policy_v1_poddisruptionbudget.yaml",
            6,
        ),
        err(
            "bundle-objects__pod-disruption-budget__min-available",
            "bundle-objects/pod-disruption-budget",
            "manifests/kvstore-operator_policy_v1_poddisruptionbudget.yaml",
            6,
        ),
        err(
            "bundle-objects__priority-class",
            "bundle-objects/priority-class",
            "manifests/kvstore-critical_scheduling_v1_priorityclass.yaml",
            6,
        ),
        err(
            "bundle-objects__rbac",
            "bundle-objects/rbac",
            "manifests/kvstore-scc_rbac_v1_clusterrole.yaml",
            6,
        ),
        warn(
            "bundle-objects__rbac__pdb",
            "bundle-objects/rbac",
            "manifests/kvstore-pdb_rbac_v1_clusterrole.yaml",
            6,
        ),
        // --- olmv1 (every case inherits valid-basic's dependencies, which OLM v1 refuses) ---
        err("olmv1__apiservice", "olmv1/apiservice", CSV, 53).also(&["olmv1/dependency"]),
        err(
            "olmv1__conversion-crd-not-owned",
            "olmv1/conversion-crd-not-owned",
            CSV,
            110,
        )
        .also(&["olmv1/dependency"]),
        err(
            "olmv1__conversion-crd-shared",
            "olmv1/conversion-crd-shared",
            CSV,
            118,
        )
        .also(&["olmv1/dependency"]),
        err(
            "olmv1__conversion-webhook-install-modes",
            "olmv1/conversion-webhook-install-modes",
            CSV,
            110,
        )
        .also(&["olmv1/dependency", "csv/webhooks"]),
        err("olmv1__crd-duplicate", "olmv1/crd-duplicate", CRD, 1)
            .also(&["olmv1/dependency", "crd/duplicate"]),
        err("olmv1__crd-v1beta1", "olmv1/crd-v1beta1", CRD, 1).also(&[
            "olmv1/dependency",
            "crd/api-version",
            "crd/preserve-unknown-fields",
            "crd/invalid",
        ]),
        err(
            "olmv1__dependency",
            "olmv1/dependency",
            "metadata/properties.yaml",
            2,
        )
        .also(&["olmv1/dependency"]),
        err(
            "olmv1__deployment-duplicate",
            "olmv1/deployment-duplicate",
            CSV,
            99,
        )
        .also(&["olmv1/dependency", "csv/deployments"]),
        err("olmv1__deployment-name", "olmv1/deployment-name", CSV, 86)
            .also(&["olmv1/dependency", "csv/deployments"]),
        err(
            "olmv1__multinamespace-only",
            "olmv1/multinamespace-only",
            CSV,
            43,
        )
        .also(&["olmv1/dependency"]),
        err(
            "olmv1__no-all-namespaces",
            "olmv1/no-all-namespaces",
            CSV,
            43,
        )
        .also(&["olmv1/dependency"]),
        err(
            "olmv1__owned-crd-missing",
            "olmv1/owned-crd-missing",
            CSV,
            53,
        )
        .also(&["olmv1/dependency", "crd/owned-missing"]),
        err("olmv1__package-name", "olmv1/package-name", ANN, 2)
            .also(&["olmv1/dependency", "format/annotation-empty"]),
        err("olmv1__render", "olmv1/render", CSV, 1)
            .also(&["olmv1/dependency", "crd/preserve-unknown-fields"]),
        err(
            "olmv1__unsupported-kind",
            "olmv1/unsupported-kind",
            "manifests/kvstore-route.yaml",
            1,
        )
        .also(&["olmv1/dependency", "object/kind"]),
        warn(
            "olmv1__webhook-cert-provider",
            "olmv1/webhook-cert-provider",
            CSV,
            110,
        )
        .also(&["olmv1/dependency"]),
        err(
            "olmv1__webhook-deployment-missing",
            "olmv1/webhook-deployment-missing",
            CSV,
            110,
        )
        .also(&["olmv1/dependency", "csv/webhooks"]),
        err(
            "olmv1__webhook-duplicate",
            "olmv1/webhook-duplicate",
            CSV,
            123,
        )
        .also(&["olmv1/dependency", "csv/webhooks"]),
        err(
            "olmv1__webhook-forbidden-rule",
            "olmv1/webhook-forbidden-rule",
            CSV,
            110,
        )
        .also(&["olmv1/dependency"]),
        err("olmv1__webhook-name", "olmv1/webhook-name", CSV, 110)
            .also(&["olmv1/dependency", "csv/webhooks"]),
    ]
}

// ---------------------------------------------------------------------------------------------
// Paths and runtime bundles

fn broken_dir() -> PathBuf {
    root().join("testdata/bundles/broken")
}

fn build_too_large(dir: &Path) {
    copy_dir(&valid_basic(), dir);
    // Sparse: 200 MB on paper, no blocks on disk.
    let f = fs::File::create(dir.join("manifests/huge.yaml")).expect("create");
    f.set_len(200 * 1024 * 1024).expect("set_len");
}

fn build_unreadable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    copy_dir(&valid_basic(), dir);
    let file = dir.join("manifests/kvstore-operator-metrics_v1_service.yaml");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o000)).expect("chmod 000");
}

fn unreadable_skip_reason() -> Option<String> {
    (is_root() && read_limited_prefix().is_none()).then(|| {
        "file/unreadable: skipped, running as root without setpriv (root reads files whatever their mode)".into()
    })
}

/// As root, permissions do not stop reads: run olmpack through `setpriv` without the
/// capabilities that bypass them. `None` when not root (nothing to drop) or setpriv cannot.
fn read_limited_prefix() -> Option<Vec<&'static str>> {
    crate::support::proc::read_limited_prefix().flatten()
}

fn build_binary(dir: &Path) {
    copy_dir(&valid_basic(), dir);
    // Starts like text, then a PNG signature on line 2.
    let mut bytes = b"# logo\n".to_vec();
    bytes.extend_from_slice(&[
        0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', 0, 0, 0xff,
    ]);
    fs::write(dir.join("manifests/logo.yaml"), bytes).expect("write");
}

fn build_symlink_outside(dir: &Path) {
    copy_dir(&valid_basic(), dir);
    // Points at a real file outside the bundle (the valid bundle's own service manifest).
    let target = valid_basic().join("manifests/kvstore-operator-metrics_v1_service.yaml");
    std::os::unix::fs::symlink(target, dir.join("manifests/outside.yaml")).expect("symlink");
}

fn build_symlink_loop(dir: &Path) {
    copy_dir(&valid_basic(), dir);
    std::os::unix::fs::symlink("loop-b.yaml", dir.join("manifests/loop.yaml")).expect("symlink");
    std::os::unix::fs::symlink("loop.yaml", dir.join("manifests/loop-b.yaml")).expect("symlink");
}

/// A ConfigMap manifest of `size` bytes whose data is `filler`.
fn configmap(name: &str, filler: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  blob: \"{filler}\"\n"
    )
}

fn build_large_manifest(dir: &Path) {
    copy_dir(&valid_basic(), dir);
    // 1.2 MiB, but compresses to almost nothing: only the per-file limit is crossed.
    let text = configmap("kvstore-defaults", &"a".repeat(1200 * 1024));
    fs::write(
        dir.join("manifests/kvstore-defaults_v1_configmap.yaml"),
        text,
    )
    .expect("write");
}

/// Deterministic incompressible text (base64 alphabet), `len` characters.
fn noise(len: usize, seed: u64) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ALPHABET[(state >> 58) as usize] as char
        })
        .collect()
}

/// Two ConfigMaps of random text, each under the 1 MiB per-file warning.
fn build_random_bundle(dir: &Path, per_file: usize) {
    copy_dir(&valid_basic(), dir);
    for (i, seed) in [(1, 0x9e37_79b9_7f4a_7c15_u64), (2, 0xd1b5_4a32_d192_ed03)] {
        let name = format!("kvstore-blob-{i}");
        fs::write(
            dir.join(format!("manifests/{name}_v1_configmap.yaml")),
            configmap(&name, &noise(per_file, seed)),
        )
        .expect("write");
    }
}

fn build_bundle_too_big(dir: &Path) {
    build_random_bundle(dir, 700 * 1024);
}

fn build_bundle_nearly_too_big(dir: &Path) {
    build_random_bundle(dir, 470 * 1024);
}

// ---------------------------------------------------------------------------------------------
// Running the binary

struct Run {
    code: i32,
    json: Value,
    stderr: String,
}

fn validate(dir: &Path, extra: &[&str]) -> Run {
    validate_as(&[], dir, extra)
}

/// Runs `olmpack bundle validate -o json DIR EXTRA...`, through `prefix` when it is not empty.
fn validate_as(prefix: &[&str], dir: &Path, extra: &[&str]) -> Run {
    let out = Command::from_std(olmpack_through(prefix))
        .args(["bundle", "validate", "-o", "json"])
        .arg(dir)
        .args(extra)
        .timeout(Duration::from_secs(30))
        .bounded_output()
        .expect("run olmpack");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "{}: olmpack panicked:\n{stderr}",
        dir.display()
    );
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("{}: olmpack was killed (timeout?)\n{stderr}", dir.display()));
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: stdout is not JSON ({e}):\n{}\n{stderr}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    Run { code, json, stderr }
}

fn outputs(json: &Value) -> &[Value] {
    json["outputs"].as_array().map_or(&[], Vec::as_slice)
}

fn describe(json: &Value) -> String {
    outputs(json)
        .iter()
        .map(|o| {
            format!(
                "  {} {} {}:{} {}",
                o["type"].as_str().unwrap_or("?"),
                o["rule"].as_str().unwrap_or("?"),
                o["file"].as_str().unwrap_or("-"),
                o["line"],
                o["message"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks one case; returns the problems found (empty when the case passes).
fn check(case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let temp;
    let dir = match case.build {
        Some(build) => {
            temp = tempfile::tempdir().expect("temp dir");
            let dir = temp.path().join(case.dir);
            build(&dir);
            dir
        }
        None => broken_dir().join(case.dir),
    };
    let mut args: Vec<&str> = case.args.to_vec();
    if case.optional() {
        // `all` is operator-sdk's optional suites; OLM v1 compatibility is selected by name.
        let group = match Rule::from_id(case.rule).map(Rule::group) {
            Some(Group::Olmv1) => "olmv1",
            _ => "all",
        };
        args.extend(["--select-optional", group]);
    }
    let prefix = if case.rule == "file/unreadable" {
        read_limited_prefix().unwrap_or_default()
    } else {
        Vec::new()
    };
    let run = validate_as(&prefix, &dir, &args);
    let found = outputs(&run.json).iter().any(|o| {
        o["rule"] == case.rule
            && o["type"] == case.severity.as_str()
            && o["file"].as_str() == case.file
            && o["line"].as_u64() == case.line
            && case
                .message
                .is_none_or(|m| o["message"].as_str().is_some_and(|t| t.contains(m)))
    });
    if !found {
        problems.push(format!(
            "expected {}[{}] at {}:{}{}",
            case.severity.as_str(),
            case.rule,
            case.file.unwrap_or("-"),
            case.line.map_or("-".to_string(), |l| l.to_string()),
            case.message
                .map_or(String::new(), |m| format!(" containing {m:?}"))
        ));
    }
    for o in outputs(&run.json) {
        let rule = o["rule"].as_str().unwrap_or("");
        if o["type"] == "error" && rule != case.rule && !case.also.contains(&rule) {
            problems.push(format!("unexpected error rule {rule}"));
        }
        if o["file"]
            .as_str()
            .is_some_and(|f| f.starts_with('/') || f.contains(".."))
        {
            problems.push(format!(
                "file {} is not relative to the bundle root",
                o["file"]
            ));
        }
    }
    let has_errors = outputs(&run.json).iter().any(|o| o["type"] == "error");
    let expected_exit = case.exit.unwrap_or(if has_errors { 1 } else { 0 });
    if case.severity == Sev::Error && !has_errors {
        problems.push("an error case produced no error".into());
    }
    if run.code != expected_exit {
        problems.push(format!("exit code {} (expected {expected_exit})", run.code));
    }
    if run.json["passed"] != (expected_exit == 0) {
        problems.push(format!("\"passed\": {}", run.json["passed"]));
    }
    if case.severity == Sev::Warning && case.exit.is_none() && !has_errors {
        // Warnings only: --strict turns them into a failure.
        let mut strict = args.clone();
        strict.push("--strict");
        let run = validate(&dir, &strict);
        if run.code != 1 || run.json["passed"] != false {
            problems.push(format!(
                "with --strict: exit {} passed {} (expected 1, false)",
                run.code, run.json["passed"]
            ));
        }
    }
    if let Some(group) = Rule::from_id(case.rule)
        .map(Rule::group)
        .filter(|g| *g != Group::Default)
    {
        // Optional groups stay off unless selected, and selecting the group by name is enough.
        let fired = |extra: &[&str]| {
            let mut args = case.args.to_vec();
            args.extend_from_slice(extra);
            let run = validate(&dir, &args);
            outputs(&run.json).iter().any(|o| o["rule"] == case.rule)
        };
        if fired(&[]) {
            problems.push("optional rule fired without --select-optional".into());
        }
        for other in Group::ALL
            .iter()
            .filter(|g| **g != Group::Default && **g != group)
        {
            if fired(&["--select-optional", other.name()]) {
                problems.push(format!(
                    "rule fired with only --select-optional {}",
                    other.name()
                ));
            }
        }
        if !fired(&["--select-optional", group.name()]) {
            problems.push(format!(
                "rule did not fire with --select-optional {}",
                group.name()
            ));
        }
    }
    if !problems.is_empty() {
        problems.push(format!(
            "findings:\n{}\nstderr: {}",
            describe(&run.json),
            run.stderr
        ));
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn every_broken_bundle_reports_its_rule() {
    let mut failures = Vec::new();
    for case in cases() {
        if let Some(reason) = case.skip.and_then(|skip| skip()) {
            // A failure in CI (OLMPACK_REQUIRE_CORPUS=1 / OLMPACK_CI=1), a printed skip elsewhere.
            crate::support::shared::skip(&reason);
            continue;
        }
        let problems = check(&case);
        if !problems.is_empty() {
            failures.push(format!(
                "{} {} {:?}:\n  {}",
                case.dir,
                case.rule,
                case.args,
                problems.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn valid_basic_has_no_findings_even_with_everything_on() {
    let run = validate(&valid_basic(), &["--select-optional", "all", "--strict"]);
    assert_eq!(run.code, 0, "{}", describe(&run.json));
    assert_eq!(run.json["passed"], true);
    assert!(
        outputs(&run.json).is_empty(),
        "findings:\n{}",
        describe(&run.json)
    );
}

/// Every rule has at least one case, every case names a known rule, and every folder under
/// `broken/` is a case (or awaits a src fix).
#[test]
fn every_rule_has_a_broken_bundle() {
    let cases = cases();
    let mut problems = Vec::new();
    // Rules that only fire on images (validate --image) are tested where images are made; the
    // named test file must mention the rule id.
    const COVERED_ELSEWHERE: &[(&str, &str)] = &[
        ("image/labels", "tests/cli/validate_image.rs"),
        ("image/shape", "tests/cli/validate_image.rs"),
        // Need two bundles (an upgrade): tests/cli/crd_upgrade.rs fires each one.
        ("olmv1/crd-upgrade-scope", "tests/cli/crd_upgrade.rs"),
        (
            "olmv1/crd-upgrade-stored-version-removal",
            "tests/cli/crd_upgrade.rs",
        ),
        (
            "olmv1/crd-upgrade-field-removal",
            "tests/cli/crd_upgrade.rs",
        ),
        ("olmv1/crd-upgrade-type", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-enum", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-required", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-default", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-maximum", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-minimum", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-pattern", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-nullable", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-oneof", "tests/cli/crd_upgrade.rs"),
        ("olmv1/crd-upgrade-unhandled", "tests/cli/crd_upgrade.rs"),
        // Only with --target: tests/cli/validate_targets.rs fires it per target.
        ("target/kind", "tests/cli/validate_targets.rs"),
        // Needs an internal failure, made through the debug-only test hook.
        ("internal/error", "tests/cli/isolation.rs"),
    ];
    for (rule, file) in COVERED_ELSEWHERE {
        let text = fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file))
            .unwrap_or_default();
        if !text.contains(&format!("\"{rule}\"")) {
            problems.push(format!(
                "rule {rule} is said to be tested in {file}, which does not mention it"
            ));
        }
    }
    // Catalog rules have their own cases in tests/cli/catalog_validate.rs.
    // Package-manifest rules have their cases in tests/cli/legacy_pm.rs.
    for rule in Rule::ALL
        .iter()
        .filter(|r| r.subject() == olmpack::findings::rules::Subject::Bundle)
    {
        if COVERED_ELSEWHERE.iter().any(|(r, _)| *r == rule.id()) {
            continue;
        }
        if !cases.iter().any(|c| c.rule == rule.id()) {
            problems.push(format!(
                "rule {} has no case in tests/cli/validate_rules.rs (add testdata/bundles/broken/{}/)",
                rule.id(),
                rule.id().replace('/', "__")
            ));
        }
    }
    for case in &cases {
        if Rule::from_id(case.rule).is_none() {
            problems.push(format!(
                "case {} names unknown rule {}",
                case.dir, case.rule
            ));
        }
        let prefix = case.rule.replace('/', "__");
        if case.dir != prefix && !case.dir.starts_with(&format!("{prefix}__")) {
            problems.push(format!(
                "case {} should be named {prefix} or {prefix}__<trigger>",
                case.dir
            ));
        }
        let on_disk = broken_dir().join(case.dir).is_dir();
        match (case.build.is_some(), on_disk) {
            (false, false) => problems.push(format!("folder broken/{} is missing", case.dir)),
            (true, true) => problems.push(format!(
                "runtime case {} also has a folder in broken/",
                case.dir
            )),
            _ => {}
        }
    }
    let used: BTreeSet<&str> = cases.iter().map(|c| c.dir).collect();
    for entry in fs::read_dir(broken_dir()).expect("broken/") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if broken_dir().join(&name).is_dir()
            && !used.contains(name.as_str())
            && !PENDING_SRC_FIX.contains(&name.as_str())
        {
            problems.push(format!("folder broken/{name} is not used by any case"));
        }
    }
    // The CLI lists the same rules as the library.
    let out = crate::support::cmd::olmpack_cmd()
        .args(["bundle", "validate", "--list-rules"])
        .bounded_output()
        .expect("run");
    assert!(out.status.success());
    let listed: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    // bundle validate lists bundle and package-manifest rules (catalog rules are catalog
    // validate's, the matrix/ repository rules catalog matrix's).
    let library: BTreeSet<String> = Rule::ALL
        .iter()
        .filter(|r| {
            use olmpack::findings::rules::Subject;
            matches!(r.subject(), Subject::Bundle | Subject::PackageManifest)
        })
        .map(|r| r.id().to_string())
        .collect();
    if listed != library {
        problems.push(format!(
            "--list-rules and Rule::ALL differ: {:?}",
            listed.symmetric_difference(&library).collect::<Vec<_>>()
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The human output, line for line, for a few representative findings.
#[test]
fn human_output_lines_are_exact() {
    let expect = |dir: &str, lines: &[&str]| {
        let path = format!("testdata/bundles/broken/{dir}");
        let out = crate::support::cmd::olmpack_cmd()
            .current_dir(root())
            .args(["bundle", "validate", "--color", "never", &path])
            .timeout(Duration::from_secs(30))
            .bounded_output()
            .expect("run");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{dir}: exit {:?}",
            out.status.code()
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: Vec<&str> = stdout.lines().collect();
        assert_eq!(got, lines, "{dir}");
    };
    expect(
        "csv__missing",
        &[
            "error[csv/missing] manifests/: no ClusterServiceVersion in manifests/: a registry+v1 bundle needs exactly one",
            "testdata/bundles/broken/csv__missing: invalid (1 error, 0 warnings)",
        ],
    );
    expect(
        "csv__install-modes__duplicate",
        &[
            "error[csv/install-modes] manifests/kvstore-operator.clusterserviceversion.yaml:51: duplicate install mode \"OwnNamespace\" (first on line 43); OLM keeps only one of them",
            "testdata/bundles/broken/csv__install-modes__duplicate: invalid (1 error, 0 warnings)",
        ],
    );
    expect(
        "yaml__duplicate-key",
        &[
            "error[yaml/duplicate-key] manifests/kvstore-operator.clusterserviceversion.yaml:30: duplicate key \"maturity\" at column 3 (first defined on line 24); the later value is used (Kubernetes' strict decoding rejects the file): remove one of them",
            "testdata/bundles/broken/yaml__duplicate-key: invalid (1 error, 0 warnings)",
        ],
    );
    expect(
        "format__default-channel",
        &[
            "warning[format/default-channel] metadata/annotations.yaml:7: default channel \"candidate\" is not among this bundle's channels (stable,fast); fine if another bundle of the package is in it, otherwise OLM cannot resolve the package",
            "testdata/bundles/broken/format__default-channel: valid (0 errors, 1 warning)",
        ],
    );
}

/// `olm.skipRange: ""` (and a bare `olm.skipRange:`) mean "no skip range" to opm, OLM v0 and
/// OLM v1 alike: no finding at all, where a non-empty range that does not parse is a warning.
#[test]
fn an_empty_skip_range_is_accepted_as_absent() {
    for value in ["\"\"", "''", ""] {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().join("bundle");
        copy_dir(&valid_basic(), &dir);
        let csv = dir.join(CSV);
        let text = fs::read_to_string(&csv).expect("read csv");
        let text = text.replacen(
            "  annotations:\n",
            &format!("  annotations:\n    olm.skipRange: {value}\n"),
            1,
        );
        fs::write(&csv, text).expect("write csv");
        let run = validate(&dir, &["--strict"]);
        assert_eq!(run.code, 0, "skipRange {value}: {}", describe(&run.json));
        assert!(outputs(&run.json).is_empty(), "{}", describe(&run.json));
    }
}

/// operator-registry decodes metadata files in name order only until one declares a
/// dependency, so a file without content after that point crashes nothing and is not an error
/// (an unknown file still gets its metadata/unknown-file warning); a zero-byte file never is.
#[test]
fn metadata_without_content_is_an_error_only_where_the_reference_validators_reach_it() {
    for (name, content) in [
        ("properties.yaml", "# nothing yet\n"),
        ("dependencies.yaml.orig", "---\n"),
        ("annotations.yaml.bak", ""),
    ] {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().join("bundle");
        copy_dir(&valid_basic(), &dir);
        fs::write(dir.join("metadata").join(name), content).expect("write");
        let run = validate(&dir, &[]);
        assert!(
            !outputs(&run.json)
                .iter()
                .any(|o| o["rule"] == "metadata/no-content"),
            "{name}: {}",
            describe(&run.json)
        );
        assert_eq!(run.code, 0, "{name}: {}", describe(&run.json));
    }
}
