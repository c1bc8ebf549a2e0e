//! `bundle render` (the objects OLM v1 applies) and the `olmv1` rule group, through the binary:
//! the upstream golden case written with `--output-dir`, stdout forms, refusals with OLM v1's
//! words and exit 1, a mistyped path (exit 2), an `oci:` image and a catalog as sources, the
//! permission summary, and `--select-optional olmv1` for bundles and catalogs.

use crate::support::cmd::run as olmpack;
use crate::support::fixtures::valid_basic;
use crate::support::shared::shared_olmv1;
use std::path::{Path, PathBuf};
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies a bundle folder, replacing `from` by `to` in its CSV.
fn bundle_variant(dir: &Path, from: &str, to: &str) -> PathBuf {
    let out = dir.join("bundle");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(out.join(sub)).unwrap();
        for e in std::fs::read_dir(valid_basic().join(sub)).unwrap() {
            let e = e.unwrap();
            let mut text = std::fs::read_to_string(e.path()).unwrap();
            if e.file_name()
                .to_string_lossy()
                .contains("clusterserviceversion")
            {
                assert!(text.contains(from), "the CSV holds {from:?}");
                text = text.replace(from, to);
            }
            std::fs::write(out.join(sub).join(e.file_name()), text).unwrap();
        }
    }
    out
}

#[test]
fn output_dir_matches_the_upstream_golden_case() {
    let Some(root) = shared_olmv1() else { return };
    let up = root.join("upstream/testdata");
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let o = olmpack(&[
        "bundle",
        "render",
        up.join("bundles/argocd-operator.v0.6.0").to_str().unwrap(),
        "--install-namespace",
        "argocd-system",
        "--output-dir",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want_dir = up.join("expected-manifests/argocd-operator.v0.6.0/all-namespaces");
    let mut names: Vec<String> = std::fs::read_dir(&want_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut got: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    got.sort();
    assert_eq!(got, names);
    for n in &names {
        assert_eq!(
            std::fs::read(out_dir.join(n)).unwrap(),
            std::fs::read(want_dir.join(n)).unwrap(),
            "{n}"
        );
    }
}

#[test]
fn stdout_yaml_and_json_hold_every_object() {
    let dir = valid_basic();
    let o = olmpack(&[
        "bundle",
        "render",
        dir.to_str().unwrap(),
        "--install-namespace",
        "kv",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    // All namespaces: the namespaced permissions are promoted to a second ClusterRole.
    assert_eq!(text.matches("\nkind: ClusterRole\n").count(), 2, "{text}");
    assert!(text.contains("kind: Deployment"));
    assert!(text.contains("olm.targetNamespaces: \"\""));
    assert!(text.contains("cpu: 10m"));
    let o = olmpack(&[
        "bundle",
        "render",
        dir.to_str().unwrap(),
        "--install-namespace",
        "kv",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(list["kind"], "List");
    let kinds: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "ClusterRole",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
            "Deployment",
            "Service",
            "ServiceAccount"
        ]
    );
}

#[test]
fn single_namespace_gives_roles_in_the_watched_namespace() {
    let o = olmpack(&[
        "bundle",
        "render",
        valid_basic().to_str().unwrap(),
        "--install-namespace",
        "kv",
        "--watch-namespace",
        "apps",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("kind: Role\nmetadata:\n  name: kvstore-operator.v-"),
        "{text}"
    );
    assert!(text.contains("  namespace: apps\n"));
    assert!(text.contains("olm.targetNamespaces: apps"));
}

#[test]
fn unsupported_mode_is_refused_in_olm_v1_words() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bundle_variant(
        tmp.path(),
        "    - type: AllNamespaces\n      supported: true",
        "    - type: AllNamespaces\n      supported: false",
    );
    let o = olmpack(&[
        "bundle",
        "render",
        b.to_str().unwrap(),
        "--install-namespace",
        "kv",
    ]);
    // The renderer's default: no AllNamespaces, so no default target.
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("invalid option(s): invalid target namespaces []: exactly one target namespace must be specified"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    // All namespaces asked for explicitly.
    let o = olmpack(&[
        "bundle",
        "render",
        b.to_str().unwrap(),
        "--install-namespace",
        "kv",
        "--watch-namespace",
        "",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("invalid option(s): invalid target namespaces []: supported install modes [OwnNamespace SingleNamespace] do not support targeting all namespaces"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    // The same bundle in the olmv1 group: an error at the installModes line.
    let o = olmpack(&[
        "bundle",
        "validate",
        b.to_str().unwrap(),
        "--select-optional",
        "olmv1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("error[olmv1/no-all-namespaces] manifests/kvstore-operator.clusterserviceversion.yaml:43: unsupported bundle: bundle does not support AllNamespaces install mode"),
        "{text}"
    );
    assert!(text.contains("error[olmv1/dependency]"), "{text}");
}

#[test]
fn a_mistyped_path_is_a_usage_error() {
    let o = olmpack(&[
        "bundle",
        "render",
        "./no-such-bundle",
        "--install-namespace",
        "kv",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no such file or folder"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn permissions_summary_flags_wildcards() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bundle_variant(
        tmp.path(),
        "resources: [statefulsets]",
        "resources: [\"*\"]",
    );
    let o = olmpack(&[
        "bundle",
        "render",
        b.to_str().unwrap(),
        "--install-namespace",
        "kv",
        "--permissions",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("cluster (service accounts: kv/kvstore-operator)\n"),
        "{text}"
    );
    assert!(text.contains("WILDCARD: every resource in apps"), "{text}");
    assert!(text.contains("  kvstore.example.com\n"), "{text}");
    assert!(
        text.contains("    list: configmaps, namespaces, pods, services\n"),
        "{text}"
    );
}

#[test]
fn an_oci_image_and_a_catalog_render_as_the_folder_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = valid_basic();
    let folder = olmpack(&[
        "bundle",
        "render",
        dir.to_str().unwrap(),
        "--install-namespace",
        "kv",
    ]);
    assert_eq!(folder.status.code(), Some(0));
    let layout = tmp.path().join("layout");
    let dest = format!("oci:{}", layout.display());
    let o = olmpack(&[
        "bundle",
        "build",
        dir.to_str().unwrap(),
        "--output",
        &dest,
        "-t",
        "example.com/kv:v1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = olmpack(&["bundle", "render", &dest, "--install-namespace", "kv"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&folder));

    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    let o = olmpack(&[
        "catalog",
        "render",
        dir.to_str().unwrap(),
        "--image",
        "example.com/kv:v1",
        "-o",
        "yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(catalog.join("catalog.yaml"), &o.stdout).unwrap();
    let o = olmpack(&[
        "bundle",
        "render",
        catalog.to_str().unwrap(),
        "--package",
        "kvstore-operator",
        "--install-namespace",
        "kv",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&folder));
    let o = olmpack(&[
        "catalog",
        "validate",
        catalog.to_str().unwrap(),
        "--select-optional",
        "olmv1",
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let report = &v["olmv1"][catalog.to_str().unwrap()][0];
    assert_eq!(report["package"], "kvstore-operator", "{v}");
    assert_eq!(report["bundles"][0]["installable"], false, "{v}");
    assert!(
        report["bundles"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("olmv1/dependency: bundle \"kvstore-operator.v1.2.0\" has a dependency declared via property \"olm."),
        "{v}"
    );
}

#[test]
fn explain_knows_the_olmv1_rules() {
    let o = olmpack(&["explain", "olmv1/dependency"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("olm.package.required"),
        "{}",
        stdout(&o)
    );
}
