//! Every check id of the pipelines with the fix olmpack adds to its findings: a table below both
//! the checks and the finding type, so a finding takes its fix by id without importing the
//! checks that make it (no import circle between `checks/` and `finding.rs`).

/// Every check id with the fix olmpack adds to its findings.
pub const CHECKS: &[(&str, &str)] = &[
    (
        "check_operator_name",
        "use one package name in metadata/annotations.yaml (operators.operatorframework.io.bundle.package.v1), the CSV's metadata.name prefix and the operator folder, in every bundle",
    ),
    (
        "check_bundle_release_config",
        "enable fbc in ci.yaml and list each release-config.yaml template under fbc.catalog_mapping; semver templates take only Fast, Candidate, Stable",
    ),
    (
        "check_validate_schema_bundle_release_config",
        "make release-config.yaml match the schema: catalog_templates: [{template_name, channels: [...]}], optional replaces, skips, skipRange",
    ),
    (
        "check_network_policy_presence",
        "remove the NetworkPolicy from manifests/ (OLM does not install it) and keep one YAML document per manifest file (the pipeline reads no more)",
    ),
    (
        "check_operator_version_directory_name",
        "name the bundle folder after the CSV's spec.version (or set spec.version to the folder name)",
    ),
    (
        "check_replaces_availability",
        "point spec.replaces at a bundle of this operator (not itself) whose com.redhat.openshift.versions covers at least this bundle's OCP versions",
    ),
    (
        "check_schema_operator_ci_config",
        "make ci.yaml match the schema: updateGraph replaces-mode|semver-mode, reviewers a non-empty list, fbc {enabled, catalog_mapping}",
    ),
    (
        "check_catalog_usage_ci_config",
        "map each catalog to one template only in ci.yaml fbc.catalog_mapping",
    ),
    (
        "check_bundle_images_in_fbc",
        "use a bundle image from one of config.yaml's allowed_bundle_registries in the catalog",
    ),
    (
        "check_olm_bundle_object_in_fbc",
        "render the catalog again with --migrate-level bundle-object-to-csv-metadata (make catalogs) for OCP 4.17 and later",
    ),
    (
        "check_required_fields",
        "fill in the CSV field with a valid value (operatorhub's required fields: capabilities, categories, containerImage, createdAt, repository, support, description, displayName, icon, version, maintainers, provider, links, keywords)",
    ),
    (
        "check_dangling_bundles",
        "make every bundle of the channel reachable: the next version replaces, skips or skipRange-covers it",
    ),
    (
        "check_api_version_constraints",
        "align com.redhat.openshift.versions with spec.minKubeVersion: no selected OCP version may run an older Kubernetes",
    ),
    (
        "check_using_fbc",
        "consider moving the operator to file-based catalogs (fbc.enabled in ci.yaml)",
    ),
    (
        "check_operator_name_unique",
        "use one operator name in the metadata.name of every bundle's CSV",
    ),
    (
        "check_ci_upgrade_graph",
        "set updateGraph: replaces-mode or semver-mode in ci.yaml",
    ),
    (
        "check_upgrade_graph_loop",
        "break the loop: a bundle must not replace, skip or skipRange-cover a newer bundle that leads back to it",
    ),
    (
        "check_osdk_bundle_validate_operatorhub",
        "see `olmpack explain RULE` for the rule named in the message",
    ),
    (
        "check_osdk_bundle_validate_operator_framework",
        "see `olmpack explain RULE` for the rule named in the message",
    ),
    (
        "check_pruned_graph",
        "set spec.replaces beside olm.skipRange, or skip the check on the pull request if pruning is intended",
    ),
    (
        "check_marketplace_annotation",
        "set marketplace.openshift.io/remote-workflow and support-workflow to the marketplace URLs of the package",
    ),
    (
        "check_fbc_bundle_metadata",
        "render the catalog with olm.bundle.object below OCP 4.17 and olm.csv.metadata from 4.17 (opm render --migrate-level bundle-object-to-csv-metadata)",
    ),
    (
        "check_fbc_image_digest",
        "reference the bundle image by digest (@sha256:...), not by tag",
    ),
    (
        "check_fbc_allowed_registry",
        "use a bundle image from an allowed registry (--allowed-registry, or config.yaml's allowed_bundle_registries)",
    ),
    (
        "fbc-target-index-pruning-check",
        "keep every channel and entry the released index has (add the bundle back to the channel), or prune only in a dev-preview, pre-ga or candidate channel",
    ),
];

/// The fix for a check id ("" for an unknown one).
pub fn fix_for(check: &str) -> &'static str {
    CHECKS
        .iter()
        .find(|(id, _)| *id == check)
        .map(|(_, fix)| *fix)
        .unwrap_or("")
}
