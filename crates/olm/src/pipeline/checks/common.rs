//! The `common` suite: every stream runs it (operator-pipelines'
//! `operatorcert/static_tests/common/{operator,bundle,operator_catalogs}.py`).

use super::super::finding::Finding;
use super::super::ocp;
use super::super::repo::{Bundle, Operator, Repo};
use super::{Target, no_csv, py_list, schema};
use crate::catalog::model::property_type;
use crate::yaml::{Node, Value};
use std::collections::BTreeSet;

/// The operator checks, alphabetically.
pub fn operator(t: &Target<'_>, out: &mut Vec<Finding>) {
    check_catalog_usage_ci_config(t.operator, out);
    check_schema_operator_ci_config(t.operator, out);
}

/// The bundle checks, alphabetically.
pub fn bundle(t: &Target<'_>, b: &Bundle, out: &mut Vec<Finding>) {
    check_bundle_release_config(t.operator, b, out);
    check_network_policy_presence(b, out);
    check_operator_name(t.operator, b, out);
    check_operator_version_directory_name(b, out);
    if !t.operator.fbc_enabled() {
        check_replaces_availability(t.repo, t.operator, b, out);
    }
    check_validate_schema_bundle_release_config(b, out);
}

/// The catalog checks, alphabetically.
pub fn catalogs(t: &Target<'_>, out: &mut Vec<Finding>) {
    check_bundle_images_in_fbc(t, out);
    check_olm_bundle_object_in_fbc(t, out);
}

const ID_CATALOG_USAGE: &str = "check_catalog_usage_ci_config";

fn check_catalog_usage_ci_config(op: &Operator, out: &mut Vec<Finding>) {
    let Some(ci) = &op.ci else { return };
    let Some(mapping) = ci.at(&["fbc", "catalog_mapping"]).and_then(Node::as_seq) else {
        return;
    };
    let mut by_catalog: Vec<(String, Vec<String>, usize)> = Vec::new();
    for template in mapping {
        let name = template
            .get("template_name")
            .and_then(Node::scalar_text)
            .map(|s| format!("'{s}'"))
            .unwrap_or_else(|| "None".into());
        for catalog in template
            .get("catalog_names")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            let Some(c) = catalog.scalar_text() else {
                continue;
            };
            match by_catalog.iter_mut().find(|(k, _, _)| k == c) {
                Some(entry) => entry.1.push(name.clone()),
                None => by_catalog.push((c.to_string(), vec![name.clone()], catalog.line)),
            }
        }
    }
    for (catalog, templates, line) in by_catalog {
        if templates.len() > 1 {
            out.push(
                Finding::error(
                    ID_CATALOG_USAGE,
                    format!(
                        "Operator's 'ci.yaml' contains multiple templates '[{}]' for the same catalog '{catalog}'.",
                        templates.join(", ")
                    ),
                )
                .at(&ci.file, Some(line)),
            );
        }
    }
}

const ID_CI_SCHEMA: &str = "check_schema_operator_ci_config";

fn check_schema_operator_ci_config(op: &Operator, out: &mut Vec<Finding>) {
    let Some(ci) = &op.ci else { return };
    let node = match &ci.root {
        Ok(node) => node,
        Err(e) => {
            out.push(
                Finding::error(
                    ID_CI_SCHEMA,
                    format!("Operator's 'ci.yaml' cannot be parsed: {e}"),
                )
                .at(&ci.file, None),
            );
            return;
        }
    };
    for (message, line) in schema::validate(&schema::ci_yaml(), node) {
        out.push(
            Finding::error(
                ID_CI_SCHEMA,
                format!("Operator's 'ci.yaml' contains invalid data which does not comply with the schema: {message}"),
            )
            .at(&ci.file, Some(line)),
        );
    }
}

const ID_RELEASE_CONFIG: &str = "check_bundle_release_config";

fn check_bundle_release_config(op: &Operator, b: &Bundle, out: &mut Vec<Finding>) {
    let Some(rc) = &b.release_config else { return };
    let Some(node) = rc.node().filter(|n| !is_falsy(n)) else {
        return;
    };
    if !op.fbc_enabled() {
        let line = op.ci.as_ref().and_then(|c| c.line_of(&["fbc", "enabled"]));
        out.push(
            Finding::error(
                ID_RELEASE_CONFIG,
                "Bundle's 'release-config.yaml' is used but FBC is not enabled for the operator. Update the 'fbc.enabled' field in the ci.yaml file.",
            )
            .at(&rc.file, Some(node.line).or(line)),
        );
        return;
    }
    let mapping: Vec<&Node> = op
        .ci
        .as_ref()
        .and_then(|c| c.at(&["fbc", "catalog_mapping"]))
        .and_then(Node::as_seq)
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    let Some(templates) = node.get("catalog_templates").and_then(Node::as_seq) else {
        // The schema check reports the missing or malformed list.
        return;
    };
    for template in templates {
        let name = template
            .get("template_name")
            .and_then(Node::scalar_text)
            .unwrap_or("");
        let Some(mapped) = mapping
            .iter()
            .find(|m| m.get("template_name").and_then(Node::scalar_text) == Some(name))
        else {
            out.push(
                Finding::error(
                    ID_RELEASE_CONFIG,
                    format!(
                        "Bundle's 'release-config.yaml' contains a catalog template '{name}' that is not defined in the ci.yaml file under 'catalog_mapping'. Add the template to the 'catalog_mapping."
                    ),
                )
                .at(&rc.file, Some(template.line)),
            );
            continue;
        };
        if mapped.get("type").and_then(Node::scalar_text) != Some("olm.semver") {
            continue;
        }
        let channels: Vec<&str> = template
            .get("channels")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .filter_map(Node::scalar_text)
            .collect();
        let allowed = ["Fast", "Candidate", "Stable"];
        if channels.iter().all(|c| allowed.contains(c)) {
            continue;
        }
        out.push(
            Finding::error(
                ID_RELEASE_CONFIG,
                format!(
                    "Bundle's 'release-config.yaml' contains a semver catalog template '{name}' with invalid channels: {}. Allowed channels are: {}. Follow olm [documentation](https://olm.operatorframework.io/docs/reference/catalog-templates/#specification) to see more details about semver template.",
                    py_list(&channels),
                    py_list(&allowed)
                ),
            )
            .at(&rc.file, template.get("channels").map(|c| c.line)),
        );
    }
}

fn is_falsy(node: &Node) -> bool {
    match &node.value {
        Value::Map(m) => m.is_empty(),
        Value::Seq(s) => s.is_empty(),
        Value::Scalar(t, k) => {
            matches!(
                k,
                crate::yaml::ScalarKind::Null | crate::yaml::ScalarKind::Bool(false)
            ) || t.is_empty()
        }
    }
}

const ID_RELEASE_SCHEMA: &str = "check_validate_schema_bundle_release_config";

fn check_validate_schema_bundle_release_config(b: &Bundle, out: &mut Vec<Finding>) {
    let Some(rc) = &b.release_config else { return };
    let node = match &rc.root {
        Ok(node) if is_falsy(node) => return,
        Ok(node) => node,
        Err(e) => {
            out.push(
                Finding::error(
                    ID_RELEASE_SCHEMA,
                    format!("Bundle's 'release-config.yaml' cannot be parsed: {e}"),
                )
                .at(&rc.file, None),
            );
            return;
        }
    };
    for (message, line) in schema::validate(&schema::release_config(), node) {
        out.push(
            Finding::error(
                ID_RELEASE_SCHEMA,
                format!("Bundle's 'release-config.yaml' contains invalid data which does not comply with the schema: {message}"),
            )
            .at(&rc.file, Some(line)),
        );
    }
}

const ID_NETWORK_POLICY: &str = "check_network_policy_presence";

fn check_network_policy_presence(b: &Bundle, out: &mut Vec<Finding>) {
    for doc in &b.manifests() {
        // The pipeline reads each manifest as exactly one YAML document (`load_yaml`); a file
        // it cannot read that way makes this check fail with the exception's text.
        let unreadable = match (&doc.root, doc.second_document_line) {
            (Err(e), _) => Some((
                format!("{} is not a valid yaml document: {e}", doc.file),
                None,
            )),
            (Ok(_), Some(line)) => Some((
                format!(
                    "{} contains multiple yaml documents: the pipeline reads each manifest file as one document and fails this check on it; put one object per file",
                    doc.file
                ),
                Some(line),
            )),
            (Ok(_), None) => None,
        };
        if let Some((message, line)) = unreadable {
            out.push(Finding::error(ID_NETWORK_POLICY, message).at(&doc.file, line));
        }
        let Some(node) = doc.node() else { continue };
        let kind = node.get("kind").and_then(Node::scalar_text).unwrap_or("");
        let api = node
            .get("apiVersion")
            .and_then(Node::scalar_text)
            .unwrap_or("");
        if kind == "NetworkPolicy" && api.starts_with("networking.k8s.io/") {
            let name = doc.file.rsplit('/').next().unwrap_or(&doc.file);
            out.push(
                Finding::error(
                    ID_NETWORK_POLICY,
                    format!(
                        "Bundle contains a NetworkPolicy in {name}. Network policies are not a supported resource that Operator Lifecycle Manager(OLM) can install and manage."
                    ),
                )
                .at(&doc.file, node.get("kind").map(|k| k.line)),
            );
        }
    }
}

const ID_NAME: &str = "check_operator_name";

fn check_operator_name(op: &Operator, b: &Bundle, out: &mut Vec<Finding>) {
    let ann_file = b.annotations_file();
    let pkg_key = olmpack_ground::bundle_keys::PACKAGE;
    let ann_line = b.annotation_line(pkg_key);
    if b.annotations_invalid() {
        out.push(
            Finding::error(
                ID_NAME,
                format!(
                    "Invalid operator name in annotations.yaml for {}",
                    b.display()
                ),
            )
            .at(&ann_file, None),
        );
        return;
    }
    let my_md = b.metadata_operator_name().unwrap_or_default();
    if my_md.is_empty() {
        out.push(
            Finding::error(
                ID_NAME,
                "Bundle does not define the operator name in annotations.yaml",
            )
            .at(&ann_file, ann_line),
        );
        return;
    }
    let Some((my_csv, _)) = b.csv_full_name() else {
        out.push(
            Finding::error(
                ID_NAME,
                format!("Invalid operator name in CSV for {}", b.display()),
            )
            .at(&b.csv_file(), b.csv_line(&["metadata", "name"])),
        );
        return;
    };
    let all_md: BTreeSet<&str> = op
        .bundles
        .iter()
        .filter_map(Bundle::metadata_operator_name)
        .collect();
    let all_csv: BTreeSet<&str> = op
        .bundles
        .iter()
        .filter_map(|x| x.csv_full_name().map(|(n, _)| n))
        .collect();
    let others: Vec<&Bundle> = op.bundles.iter().filter(|x| x.dir != b.dir).collect();
    let csv_line = b.csv_line(&["metadata", "name"]);
    if !others.is_empty() {
        let other_md: BTreeSet<&str> = others
            .iter()
            .filter_map(|x| x.metadata_operator_name())
            .collect();
        let other_csv: BTreeSet<&str> = others
            .iter()
            .filter_map(|x| x.csv_full_name().map(|(n, _)| n))
            .collect();
        consistency(
            my_md,
            &all_md,
            &other_md,
            "from annotations.yaml",
            (&ann_file, ann_line),
            out,
        );
        consistency(
            my_csv,
            &all_csv,
            &other_csv,
            "from the CSV",
            (&b.csv_file(), csv_line),
            out,
        );
    }
    let soft = |m: String| {
        if others.is_empty() {
            Finding::error(ID_NAME, m)
        } else {
            Finding::warning(ID_NAME, m)
        }
    };
    if my_md != my_csv {
        out.push(soft(format!("Operator name from annotations.yaml ({my_md}) does not match the name defined in the CSV ({my_csv})")).at(&b.csv_file(), csv_line));
    }
    if my_md != b.operator {
        out.push(soft(format!("Operator name from annotations.yaml ({my_md}) does not match the operator's directory name ({})", b.operator)).at(&ann_file, ann_line));
    }
}

fn consistency(
    mine: &str,
    all: &BTreeSet<&str>,
    others: &BTreeSet<&str>,
    what: &str,
    at: (&str, Option<usize>),
    out: &mut Vec<Finding>,
) {
    if others.len() == 1 {
        let common = others.iter().next().copied().unwrap_or_default();
        if common != mine {
            out.push(
                Finding::error(ID_NAME, format!("Operator name {what} ({mine}) does not match the name defined in other bundles ({common})"))
                    .at(at.0, at.1),
            );
        }
    } else {
        let all: Vec<&str> = all.iter().copied().collect();
        out.push(
            Finding::warning(
                ID_NAME,
                format!(
                    "Operator name {what} is not consistent across bundles: {}",
                    py_list(&all)
                ),
            )
            .at(at.0, at.1),
        );
    }
}

const ID_VERSION_DIR: &str = "check_operator_version_directory_name";

fn check_operator_version_directory_name(b: &Bundle, out: &mut Vec<Finding>) {
    if b.csv.as_ref().and_then(|c| c.node()).is_none() {
        out.push(no_csv(ID_VERSION_DIR, b));
        return;
    }
    let version = b.csv_text(&["spec", "version"]).unwrap_or("");
    if version != b.dir {
        out.push(
            Finding::error(
                ID_VERSION_DIR,
                format!(
                    "Bundle directory name '{}/{}' does not match the expected operator CSV version '{version}' from ./{}.",
                    b.operator,
                    b.dir,
                    b.csv_file()
                ),
            )
            .at(&b.csv_file(), b.csv_line(&["spec", "version"])),
        );
    }
}

const ID_REPLACES: &str = "check_replaces_availability";

fn check_replaces_availability(repo: &Repo, op: &Operator, b: &Bundle, out: &mut Vec<Finding>) {
    let Some(replaces) = b.csv_text(&["spec", "replaces"]).filter(|r| !r.is_empty()) else {
        return;
    };
    let file = b.csv_file();
    let line = b.csv_line(&["spec", "replaces"]);
    let delimiter = if replaces.contains(".v") { ".v" } else { "." };
    let Some((_, replaces_version)) = replaces.split_once(delimiter) else {
        // The pipeline fails here with a Python traceback (operator-pipelines #928).
        out.push(
            Finding::error(
                ID_REPLACES,
                format!(
                    "{} has invalid 'replaces' field: '{replaces}': expected <package>.v<version>",
                    b.display()
                ),
            )
            .at(&file, line),
        );
        return;
    };
    let Some((_, my_version)) = b.csv_full_name() else {
        out.push(no_csv(ID_REPLACES, b));
        return;
    };
    if replaces_version == my_version {
        out.push(
            Finding::error(
                ID_REPLACES,
                format!("{} attempts to replace itself. Please set 'spec.replaces' field to a different version in the CSV.", b.display()),
            )
            .at(&file, line),
        );
        return;
    }
    let mut versions: Vec<(&str, &Bundle)> = Vec::new();
    for other in &op.bundles {
        match other.csv_full_name() {
            Some((_, v)) => versions.push((v, other)),
            None => {
                out.push(no_csv(ID_REPLACES, other));
                return;
            }
        }
    }
    let Some((_, replaced)) = versions.iter().rev().find(|(v, _)| *v == replaces_version) else {
        let mut known: Vec<&str> = versions.iter().map(|(v, _)| *v).collect();
        known.sort_unstable();
        known.dedup();
        out.push(
            Finding::error(
                ID_REPLACES,
                format!(
                    "{} attempts to replace version '{replaces_version}' which does not exist in the submitted PR branch. Available versions: {}. If you are submitting multiple versions in sequence, make sure your fork is up to date with origin (rebased) before each submission to include all previously merged versions.",
                    b.display(),
                    py_list(&known)
                ),
            )
            .at(&file, line),
        );
        return;
    };
    let key = "com.redhat.openshift.versions";
    let mine = b.annotation(key);
    let theirs = replaced.annotation(key);
    if mine == theirs {
        return;
    }
    let names = |v: Vec<(u64, u64)>| -> Vec<String> {
        let mut s: Vec<String> = v.into_iter().map(|(a, b)| format!("{a}.{b}")).collect();
        s.sort();
        s
    };
    let indexes = names(ocp::resolve(mine, &repo.ocp_versions));
    let replaced_indexes = names(ocp::resolve(theirs, &repo.ocp_versions));
    if indexes.iter().all(|v| replaced_indexes.contains(v)) {
        return;
    }
    let show = |v: Option<&str>| v.map(str::to_string).unwrap_or_else(|| "None".into());
    out.push(
        Finding::error(
            ID_REPLACES,
            format!(
                "Replaces bundle {} {} does not support the same OCP versions as bundle {} {}. In order to fix this issue, align the OCP version range to match the range of the replaced bundle. This can be done by setting the `com.redhat.openshift.versions` annotation in the `metadata/annotations.yaml` file.\n`{}` - `{}`\n`{}` - `{}`",
                replaced.display(),
                py_list(&replaced_indexes),
                b.display(),
                py_list(&indexes),
                b.display(),
                show(mine),
                replaced.display(),
                show(theirs)
            ),
        )
        .at(&b.annotations_file(), b.annotation_line(key)),
    );
}

const ID_IMAGES: &str = "check_bundle_images_in_fbc";

fn check_bundle_images_in_fbc(t: &Target<'_>, out: &mut Vec<Finding>) {
    let allowed: Vec<&str> = t
        .repo
        .config
        .as_ref()
        .and_then(|c| c.at(&["allowed_bundle_registries"]))
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(Node::scalar_text)
        .collect();
    if allowed.is_empty() {
        return;
    }
    for catalog in t.catalogs {
        let mut invalid = Vec::new();
        let mut first_line = None;
        for blob in catalog.bundles() {
            let Some(image) = blob
                .get("image")
                .and_then(Node::scalar_text)
                .filter(|i| !i.is_empty())
            else {
                continue;
            };
            if !allowed.iter().any(|r| image.starts_with(r)) {
                first_line.get_or_insert(blob.get("image").map(|i| i.line).unwrap_or(blob.line));
                invalid.push(image);
            }
        }
        if !invalid.is_empty() {
            out.push(
                Finding::error(
                    ID_IMAGES,
                    format!(
                        "Invalid bundle image(s) found in OperatorCatalog({}): {}. Only these registries are allowed for bundle images: {}.",
                        catalog.name(),
                        invalid.join(", "),
                        allowed.join(", ")
                    ),
                )
                .at(&catalog.file, first_line),
            );
        }
    }
}

const ID_BUNDLE_OBJECT: &str = "check_olm_bundle_object_in_fbc";

fn check_olm_bundle_object_in_fbc(t: &Target<'_>, out: &mut Vec<Finding>) {
    for catalog in t.catalogs {
        if !crate::catalog::repo_layout::needs_csv_metadata(&catalog.ocp) {
            continue;
        }
        // The pipeline looks at the catalog's first olm.bundle only (its loop breaks after one).
        let Some(blob) = catalog.bundles().next() else {
            continue;
        };
        let object = blob
            .get("properties")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .find(|p| {
                p.get("type").and_then(Node::scalar_text) == Some(property_type::BUNDLE_OBJECT)
            });
        if let Some(prop) = object {
            out.push(
                Finding::error(
                    ID_BUNDLE_OBJECT,
                    format!(
                        "Bundle object found in OperatorCatalog({}) catalog uses 'olm.bundle.object'. This is not allowed for catalogs with version `>= 4.17`. Render catalog again with latest [Makefile](https://redhat-openshift-ecosystem.github.io/operator-pipelines/users/fbc_workflow/#generate-catalogs-using-templates) using `make catalogs`. Bundle object is not supported in FBC.",
                        catalog.name()
                    ),
                )
                .at(&catalog.file, Some(prop.line)),
            );
        }
    }
}
