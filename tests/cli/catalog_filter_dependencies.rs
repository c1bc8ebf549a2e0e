//! `catalog filter` closes dependencies: every `olm.package.required` and `olm.gvk.required` of
//! a kept bundle is met inside the filtered catalog. Real certified catalogs from
//! `../shared/catalogs` (whose requirements name packages that catalog folder lacks) beside
//! small providers we wrote (`testdata/dependencies/providers`), and the result checked by an
//! independent script (`scripts/check-closure.py`, no olmpack code).

use crate::support::cmd::olmpack;
use crate::support::shared::shared_catalogs;
use std::path::{Path, PathBuf};
use std::process::Command;

const USERS: &[&str] = &[
    "alloydb-omni-operator-certified",
    "cpd-platform-operator",
    "edb-hcp-operator",
    "pg4k-pgd",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The certified v4.18 catalog (every package shared holds), with or without our providers.
fn catalog(tmp: &Path, fbc: &Path, providers: bool) -> PathBuf {
    let dir = tmp.join(if providers { "with" } else { "without" });
    copy_dir(&fbc.join("certified-operators/catalogs/v4.18"), &dir);
    if providers {
        copy_dir(&repo().join("testdata/dependencies/providers"), &dir);
    }
    dir
}

fn config(tmp: &Path, packages: &[&str]) -> PathBuf {
    let mut text = String::from(
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n",
    );
    for p in packages {
        text.push_str(&format!("  - name: {p}\n"));
    }
    let path = tmp.join(format!("filter-{}.yaml", packages.len()));
    std::fs::write(&path, text).unwrap();
    path
}

/// scripts/check-closure.py on a filter output: (passed, its report).
fn check(tmp: &Path, stdout: &[u8], packages: &[&str]) -> (bool, String) {
    let out = tmp.join("filtered.json");
    std::fs::write(&out, stdout).unwrap();
    let o = Command::new("python3")
        .arg(repo().join("scripts/check-closure.py"))
        .arg(&out)
        .arg(packages.join(","))
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string(),
    )
}

#[test]
fn requirements_of_real_bundles_are_met_and_nothing_else_is_added() {
    let Some(shared) = shared_catalogs("fbc") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = catalog(tmp.path(), &shared.join("fbc"), true);
    let cfg = config(tmp.path(), USERS);
    let o = olmpack()
        .args(["catalog", "filter"])
        .arg(&dir)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    // What was added, and for whom: cert-manager's head for the cert-manager.io APIs, IBM's
    // common services below its head (<5.0.0), and a real cloud-native-postgresql bundle
    // inside pg4k-pgd's range.
    for added in [
        "added bundle \"cert-manager.v1.14.0\" (package \"cert-manager\", channel \"stable\")",
        "added bundle \"ibm-common-service-operator.v4.6.0\" (package \"ibm-common-service-operator\", channel \"v4\") for bundle \"cpd-platform-operator.",
        "(package \"cloud-native-postgresql\"",
    ] {
        assert!(stderr.contains(added), "{added} not in:\n{stderr}");
    }
    let (ok, report) = check(tmp.path(), &o.stdout, USERS);
    eprintln!("closure: {report}");
    assert!(ok, "{report}");
    assert!(
        report.contains("3 packages added (cert-manager, cloud-native-postgresql, ibm-common-service-operator), 0 failures"),
        "{report}"
    );

    // The independent check fails on the selection alone, as catalog-filter keeps it.
    let bare = olmpack()
        .args(["catalog", "filter"])
        .arg(&dir)
        .arg("--config")
        .arg(&cfg)
        .arg("--no-dependencies")
        .output()
        .unwrap();
    assert!(bare.status.success());
    let (ok, report) = check(tmp.path(), &bare.stdout, USERS);
    assert!(!ok && report.contains("is not met"), "{report}");
}

#[test]
fn requirements_nothing_meets_are_each_named_and_nothing_is_printed() {
    let Some(shared) = shared_catalogs("fbc") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = catalog(tmp.path(), &shared.join("fbc"), false);
    let users = ["edb-hcp-operator", "operator-certification-operator"];
    let o = olmpack()
        .args(["catalog", "filter"])
        .arg(&dir)
        .arg("--config")
        .arg(config(tmp.path(), &users))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(o.stdout.is_empty());
    assert!(
        stderr.contains("of package \"operator-certification-operator\" requires package \"openshift-pipelines-operator-rh\" in range \">=1.5.2\": the catalog has no package \"openshift-pipelines-operator-rh\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("of package \"edb-hcp-operator\" requires API cert-manager.io/v1 Certificate: no bundle in the catalog provides it"),
        "{stderr}"
    );
    assert!(stderr.contains("--no-dependencies"), "{stderr}");
}
