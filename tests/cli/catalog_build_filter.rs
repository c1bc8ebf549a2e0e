//! `catalog build DIR --filter FILE`: the image is built from the filtered catalog, exactly as
//! if `catalog filter --output-dir` had written it first; its render holds only what the filter
//! kept, and its serve cache (regenerated for the filtered catalog) verifies.

use crate::support::cmd::olmpack;
use std::path::{Path, PathBuf};
use std::process::Command;

const CATALOG: &str = r#"{"schema":"olm.package","name":"op","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"op","entries":[{"name":"op.v1.0.0"},{"name":"op.v1.1.0","replaces":"op.v1.0.0"}]}
{"schema":"olm.bundle","name":"op.v1.0.0","package":"op","image":"quay.io/op/b:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"op.v1.1.0","package":"op","image":"quay.io/op/b:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.1.0"}}]}
{"schema":"olm.package","name":"other","defaultChannel":"alpha"}
{"schema":"olm.channel","name":"alpha","package":"other","entries":[{"name":"other.v0.1.0"}]}
{"schema":"olm.bundle","name":"other.v0.1.0","package":"other","image":"quay.io/other/b:0.1.0","properties":[{"type":"olm.package","value":{"packageName":"other","version":"0.1.0"}}]}
"#;

const FILTER: &str = "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: op\n";

fn umoci(args: &[&str]) {
    let out = Command::new("umoci")
        .args(args)
        .output()
        .expect("run umoci");
    assert!(
        out.status.success(),
        "umoci {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A base made by umoci: one layer with /etc/passwd naming user 1001, run as 1001.
fn base(dir: &Path) -> String {
    let layout = dir.display().to_string();
    let image = format!("{layout}:v1");
    umoci(&["init", "--layout", &layout]);
    umoci(&["new", "--image", &image]);
    let bundle = dir.with_extension("bundle");
    umoci(&["unpack", "--image", &image, bundle.to_str().unwrap()]);
    let etc = bundle.join("rootfs/etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        etc.join("passwd"),
        "root:x:0:0::/root:/bin/sh\nopm:x:1001:0::/:/sbin/nologin\n",
    )
    .unwrap();
    std::fs::write(etc.join("group"), "root:x:0:\n").unwrap();
    umoci(&["repack", "--image", &image, bundle.to_str().unwrap()]);
    umoci(&["config", "--image", &image, "--config.user", "1001"]);
    format!("oci:{image}")
}

fn build(dir: &Path, base: &str, out: &Path, extra: &[&str]) -> (String, String) {
    let o = olmpack()
        .env("SOURCE_DATE_EPOCH", "0")
        .args(["catalog", "build"])
        .arg(dir)
        .args(["--base", base, "--output"])
        .arg(format!("oci:{}:v1", out.display()))
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "catalog build: {stderr}");
    (String::from_utf8_lossy(&o.stdout).to_string(), stderr)
}

#[test]
fn catalog_build_with_filter_builds_the_filtered_catalog_with_its_own_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog: PathBuf = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), CATALOG).unwrap();
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(&cfg, FILTER).unwrap();
    let base = base(&tmp.path().join("base"));

    let out = tmp.path().join("out");
    let (digest, stderr) = build(&catalog, &base, &out, &["--filter", cfg.to_str().unwrap()]);
    assert!(stderr.contains("serve cache:"), "{stderr}");
    // The filter's own check is the validation: what filtering causes by design (the kept head
    // replaces a bundle left out) is not reported, and no temp folder is named.
    assert!(!stderr.contains("replaces-unknown"), "{stderr}");
    assert!(!stderr.contains("olmpack-catalog-"), "{stderr}");

    // Its render holds only the kept package.
    let render = olmpack()
        .args(["catalog", "render"])
        .arg(format!("oci:{}:v1", out.display()))
        .output()
        .unwrap();
    assert!(render.status.success());
    let text = String::from_utf8_lossy(&render.stdout);
    assert!(text.contains("\"op.v1.1.0\""), "{text}");
    assert!(!text.contains("other"), "{text}");

    // The shipped cache is the filtered catalog's: it verifies.
    olmpack()
        .args(["catalog", "cache", "verify"])
        .arg(format!("oci:{}:v1", out.display()))
        .assert()
        .success();

    // The same image as filtering into a folder first, then building that folder.
    let filtered = tmp.path().join("filtered");
    olmpack()
        .args(["catalog", "filter"])
        .arg(&catalog)
        .arg("--config")
        .arg(&cfg)
        .arg("--output-dir")
        .arg(&filtered)
        .assert()
        .success();
    let (again, _) = build(&filtered, &base, &tmp.path().join("out2"), &[]);
    assert_eq!(digest, again);

    // Without the filter the image differs (the other package is in it).
    let (whole, _) = build(&catalog, &base, &tmp.path().join("out3"), &[]);
    assert_ne!(digest, whole);
}

#[test]
fn catalog_build_filter_errors_name_the_problem_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), CATALOG).unwrap();
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: olm.operatorframework.io/filter/mirror/v1alpha1\nkind: FilterConfiguration\npackages:\n  - name: nope\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = olmpack()
        .args(["catalog", "build"])
        .arg(&catalog)
        .arg("--filter")
        .arg(&cfg)
        .arg("--output")
        .arg(format!("oci:{}", out.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(!out.exists());

    // A missing configuration file is named.
    let o = olmpack()
        .args(["catalog", "build"])
        .arg(&catalog)
        .args(["--filter", "/nonexistent/cfg.yaml", "--output"])
        .arg(format!("oci:{}", out.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/cfg.yaml"), "{stderr}");
    assert!(!out.exists());
}
