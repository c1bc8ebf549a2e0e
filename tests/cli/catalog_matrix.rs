//! `catalog matrix` on a repository we wrote (`testdata/matrix/repo`: one operator, three
//! templates, five OpenShift targets, bundles 1.1.0 named by tag and 1.2.0 by digest): the files
//! it writes equal, byte for byte, `catalog template` run per target as the pipelines run opm
//! (`-o yaml`, `--migrate-level bundle-object-to-csv-metadata` from v4.17, the Makefile's opm),
//! and the checked-in files; each consistency rule fires on a mutation made for it; `--offline`
//! runs without a network namespace; a broken ci.yaml is named with its line and nothing is
//! written. The last test runs the shared real packages (the pipelines' own opm output).

use crate::support::cmd::{olmpack, olmpack_path};
use crate::support::fixtures::testdata;
use crate::support::fs::copy_dir;
use crate::support::proc::{Bounded, can_unshare_network, without_network};
use crate::support::shared;
use std::path::{Path, PathBuf};

const OP: &str = "kvstore-operator";
const DIGEST_REF: &str = "quay.io/example/kvstore-operator-bundle@sha256:1b2c3d4e5f60718293a4b5c6d7e8f9011b2c3d4e5f60718293a4b5c6d7e8f901";
const TAG_REF: &str = "quay.io/example/kvstore-operator-bundle:v1.1.0";
/// (template, target) as ci.yaml maps them.
const TARGETS: &[(&str, &str)] = &[
    ("basic-old.yaml", "v4.15"),
    ("basic-old.yaml", "v4.16"),
    ("basic.yaml", "v4.17"),
    ("basic.yaml", "v4.18"),
    ("semver.yaml", "v4.19"),
];

/// A copy of the crafted repository.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("repo");
    copy_dir(&testdata("matrix/repo"), &root);
    (tmp, root)
}

fn catalog(root: &Path, ocp: &str) -> PathBuf {
    root.join("catalogs")
        .join(ocp)
        .join(OP)
        .join("catalog.yaml")
}

fn run_matrix(root: &Path, extra: &[&str]) -> std::process::Output {
    olmpack()
        .args(["catalog", "matrix", "--offline", "--repo"])
        .arg(root)
        .args(extra)
        .bounded_output()
        .expect("olmpack runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `catalog template` for one target, as the pipelines' render_catalogs.sh runs opm.
fn template_output(root: &Path, template: &str, ocp: &str, compat: &str) -> Vec<u8> {
    let op = root.join("operators").join(OP);
    let map = root.join("bundles.map");
    std::fs::write(
        &map,
        format!(
            "{TAG_REF}\t{}\n{DIGEST_REF}\t{}\n",
            op.join("1.1.0").display(),
            op.join("1.2.0").display()
        ),
    )
    .expect("map");
    let mut cmd = olmpack();
    cmd.args(["catalog", "template", "--offline", "-o", "yaml"])
        .args(["--opm-compat", compat, "--bundle-map"])
        .arg(&map)
        .arg(op.join("catalog-templates").join(template));
    if ocp != "v4.15" && ocp != "v4.16" {
        cmd.args(["--migrate-level", "bundle-object-to-csv-metadata"]);
    }
    let out = cmd.bounded_output().expect("template runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::remove_file(&map).expect("map removed");
    out.stdout
}

#[test]
fn writes_every_target_as_catalog_template_renders_it() {
    let (_tmp, root) = repo();
    let checked_in: Vec<Vec<u8>> = TARGETS
        .iter()
        .map(|(_, ocp)| std::fs::read(catalog(&root, ocp)).expect("checked-in catalog"))
        .collect();
    // Nothing to do on the checked-in repository: every target is reproduced as it is.
    let out = run_matrix(&root, &["--check", OP]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("\tunchanged\t").count(), 5, "{stdout}");
    assert!(stdout.contains("opm 1.46 (pinned at "), "{stdout}");
    assert!(
        text(&out.stderr).contains(
            "kvstore-operator: 5 catalogs (5 unchanged) from 3 template(s), 2 bundles, 0 findings"
        ),
        "{}",
        text(&out.stderr)
    );
    // Remove every catalog but v4.15 (which places the digest reference): the matrix writes
    // them back, each equal to catalog template's output for its target and to the file.
    for (_, ocp) in &TARGETS[1..] {
        std::fs::remove_file(catalog(&root, ocp)).expect("remove");
    }
    let out = run_matrix(&root, &[OP]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (i, (template, ocp)) in TARGETS.iter().enumerate() {
        let written = std::fs::read(catalog(&root, ocp)).expect("written");
        let expected = template_output(&root, template, ocp, "1.46");
        assert!(written == expected, "{ocp}: differs from catalog template");
        assert!(written == checked_in[i], "{ocp}: differs from testdata");
    }
    let v417 = text(&std::fs::read(catalog(&root, "v4.17")).expect("v4.17"));
    assert!(v417.contains("olm.csv.metadata") && !v417.contains("olm.bundle.object"));
    let v416 = text(&std::fs::read(catalog(&root, "v4.16")).expect("v4.16"));
    assert!(v416.contains("olm.bundle.object") && !v416.contains("olm.csv.metadata"));
}

#[test]
fn finds_the_opm_release_that_wrote_each_catalog() {
    let (_tmp, root) = repo();
    // v4.19 checked in as opm 1.71 writes a semver template (package icon and description
    // copied from the head CSV since 1.65): the pipelines' pin, not the Makefile's 1.46.
    let by_171 = template_output(&root, "semver.yaml", "v4.19", "1.71");
    assert!(by_171 != std::fs::read(catalog(&root, "v4.19")).expect("v4.19"));
    std::fs::write(catalog(&root, "v4.19"), &by_171).expect("write");
    let out = run_matrix(&root, &["--check", OP]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("/v4.19/"))
        .unwrap_or_default();
    assert!(
        line.contains("\tunchanged\t") && line.ends_with("opm 1.71 (the pipelines' pin)"),
        "{line}"
    );
    // --opm-compat forces one release: v4.19 then changes.
    let out = run_matrix(&root, &["--check", "--opm-compat", "1.46", OP]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("v4.19/kvstore-operator/catalog.yaml\tchanged"));
}

/// Replaces `from` by `to` in a file of the repository (the test fails if it is not there).
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let p = root.join(rel);
    let t = std::fs::read_to_string(&p).expect("read");
    assert!(t.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&p, t.replacen(from, to, 1)).expect("write");
}

fn findings(root: &Path) -> String {
    let out = run_matrix(root, &["--check", OP]);
    assert!(out.status.code().is_some(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("error[") || l.starts_with("warning["))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_consistency_rule_fires_on_its_mutation() {
    let (_tmp, root) = repo();
    assert_eq!(findings(&root), "", "the crafted repository is consistent");
    let templates = "operators/kvstore-operator/catalog-templates";

    // matrix/image-differs: basic.yaml names 1.2.0 by another reference.
    let (_t1, r) = repo();
    edit(
        &r,
        &format!("{templates}/basic.yaml"),
        DIGEST_REF,
        "quay.io/example/kvstore-operator-bundle:v1.2.0",
    );
    let f = findings(&r);
    assert!(
        f.contains("error[matrix/image-differs] operators/kvstore-operator/catalog-templates/basic.yaml:24: kvstore-operator.v1.2.0 is quay.io/example/kvstore-operator-bundle@sha256:"),
        "{f}"
    );

    // matrix/bundle-missing and matrix/channel-head-differs: v4.16 rendered from a template
    // without 1.2.0, which supports v4.12 and later and ships in v4.15 and v4.17.
    let (_t2, r) = repo();
    let old = std::fs::read_to_string(r.join(templates).join("basic-old.yaml")).expect("read");
    let without: String = old
        .replace(
            "  - name: kvstore-operator.v1.2.0\n    replaces: kvstore-operator.v1.1.0\n",
            "",
        )
        .replace(
            &format!("- schema: olm.bundle\n  image: {DIGEST_REF}\n"),
            "",
        );
    std::fs::write(r.join(templates).join("hole.yaml"), without).expect("write");
    edit(
        &r,
        "operators/kvstore-operator/ci.yaml",
        "catalog_names: [\"v4.15\", \"v4.16\"]\n      type: olm.template.basic",
        "catalog_names: [\"v4.15\"]\n      type: olm.template.basic\n    - template_name: hole.yaml\n      catalog_names: [\"v4.16\"]\n      type: olm.template.basic",
    );
    let f = findings(&r);
    assert!(
        f.contains("warning[matrix/bundle-missing] operators/kvstore-operator/ci.yaml:11: kvstore-operator.v1.2.0 is missing from v4.16 (template hole.yaml)"),
        "{f}"
    );
    assert!(
        f.contains("warning[matrix/channel-head-differs] operators/kvstore-operator/ci.yaml:11: channel stable: head kvstore-operator.v1.2.0 in v4.15"),
        "{f}"
    );
    // The same hole outside the bundle's range is no finding: 1.2.0 supports v4.17 and later.
    edit(
        &r,
        "operators/kvstore-operator/1.2.0/metadata/annotations.yaml",
        "com.redhat.openshift.versions: \"v4.12\"",
        "com.redhat.openshift.versions: \"=v4.15\"",
    );
    let f = findings(&r);
    assert!(!f.contains("matrix/bundle-missing"), "{f}");
    assert!(!f.contains("head kvstore-operator.v1.2.0 in v4.15"), "{f}");

    // matrix/default-channel-differs: basic.yaml defaults to fast; both targets have both.
    let (_t3, r) = repo();
    edit(
        &r,
        &format!("{templates}/basic.yaml"),
        "defaultChannel: stable",
        "defaultChannel: fast",
    );
    let f = findings(&r);
    assert!(
        f.contains("warning[matrix/default-channel-differs] operators/kvstore-operator/catalog-templates/basic.yaml:6: default channel stable in v4.16 (basic-old.yaml) but fast in v4.17 (basic.yaml)"),
        "{f}"
    );

    // matrix/unmapped-catalog: a v4.14 folder no mapping names.
    let (_t4, r) = repo();
    std::fs::create_dir_all(r.join("catalogs/v4.14").join(OP)).expect("mkdir");
    std::fs::copy(catalog(&r, "v4.15"), catalog(&r, "v4.14")).expect("copy");
    let f = findings(&r);
    assert!(
        f.contains("warning[matrix/unmapped-catalog] catalogs/v4.14/kvstore-operator/catalog.yaml: catalogs/v4.14/kvstore-operator is produced by no template"),
        "{f}"
    );
}

#[test]
fn offline_needs_no_network_and_names_what_it_cannot_place() {
    if !can_unshare_network() {
        shared::skip("`unshare -n` does not work here (util-linux, root or user namespaces)");
        return;
    }
    let (_tmp, root) = repo();
    for (_, ocp) in TARGETS {
        std::fs::remove_file(catalog(&root, ocp)).ok();
    }
    // Without the checked-in catalogs the digest cannot be placed; say which, where, and that
    // nothing was written.
    let out = without_network(olmpack_path())
        .args(["catalog", "matrix", "--offline", "--repo"])
        .arg(&root)
        .arg(OP)
        .bounded_output()
        .expect("run");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: operator kvstore-operator: ")
            && err.contains("catalog-templates/basic-old.yaml:23: rendering template: ")
            && err.contains(&format!(
                "{DIGEST_REF}: cannot place it on a bundle folder of operators/kvstore-operator/"
            )),
        "{err}"
    );
    assert!(!catalog(&root, "v4.15").exists() && !catalog(&root, "v4.17").exists());
    // A --bundle-map places it: the whole matrix renders with no network at all.
    let map = root.join("digest.map");
    std::fs::write(&map, format!("{DIGEST_REF}\toperators/{OP}/1.2.0\n")).expect("map");
    let out = without_network(olmpack_path())
        .args(["catalog", "matrix", "--offline", "--bundle-map"])
        .arg(&map)
        .arg("--repo")
        .arg(&root)
        .arg(OP)
        .bounded_output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (_, ocp) in TARGETS {
        let written = std::fs::read(catalog(&root, ocp)).expect("written");
        let expected = std::fs::read(catalog(&testdata("matrix/repo"), ocp)).expect("expected");
        assert!(written == expected, "{ocp} differs");
    }
}

#[test]
fn broken_ci_yaml_is_named_and_nothing_is_written() {
    let (_tmp, root) = repo();
    let before = std::fs::read(catalog(&root, "v4.17")).expect("v4.17");
    std::fs::write(catalog(&root, "v4.17"), b"stale\n").expect("write");
    edit(
        &root,
        "operators/kvstore-operator/ci.yaml",
        "type: olm.semver",
        "type: olm.veneer",
    );
    let out = run_matrix(&root, &[OP]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: operator kvstore-operator: ")
            && err.contains("operators/kvstore-operator/ci.yaml:15: fbc.catalog_mapping[2].type: unknown template type \"olm.veneer\""),
        "{err}"
    );
    assert_eq!(
        std::fs::read(catalog(&root, "v4.17")).expect("v4.17"),
        b"stale\n"
    );
    // A template that fails after others rendered: still nothing of the operator is written.
    edit(
        &root,
        "operators/kvstore-operator/ci.yaml",
        "type: olm.veneer",
        "type: olm.semver",
    );
    edit(
        &root,
        "operators/kvstore-operator/catalog-templates/semver.yaml",
        TAG_REF,
        "quay.io/example/kvstore-operator-bundle:v9.9.9",
    );
    let out = run_matrix(&root, &[OP]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("its tag names version 9.9.9, which no bundle folder holds"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(catalog(&root, "v4.17")).expect("v4.17"),
        b"stale\n"
    );
    assert!(before != b"stale\n");
}

#[test]
fn all_renders_the_others_when_one_ci_yaml_is_broken() {
    let (_tmp, root) = repo();
    std::fs::write(catalog(&root, "v4.17"), b"stale\n").expect("write");
    let broken = root.join("operators/broken-operator");
    std::fs::create_dir_all(&broken).expect("mkdir");
    std::fs::write(
        broken.join("ci.yaml"),
        "fbc:\n  catalog_mapping: {template_name: x}\n",
    )
    .expect("write");
    let out = run_matrix(&root, &["--all"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: operator broken-operator: ")
            && err.contains("operators/broken-operator/ci.yaml:2: fbc.catalog_mapping: expected a list, found mapping"),
        "{err}"
    );
    let expected = std::fs::read(catalog(&testdata("matrix/repo"), "v4.17")).expect("expected");
    assert!(std::fs::read(catalog(&root, "v4.17")).expect("v4.17") == expected);
}

/// The shared real packages (`../shared/catalogs/packages`): every checked-in catalog whose
/// template and bundles are in the data is reproduced byte for byte (34 files, the same as
/// `catalog_template`'s loop); ecr-secret-operator's 7 newer-template files change and
/// kubernaut-operator names a bundle with no folder.
#[test]
fn shared_real_packages_reproduce_their_catalogs() {
    let Some(dir) = shared::shared_catalogs("packages") else {
        return;
    };
    let mut unchanged = 0;
    let mut changed = Vec::new();
    let mut failed = Vec::new();
    for repo in ["community-operators-prod", "certified-operators"] {
        let out = olmpack()
            .args([
                "catalog",
                "matrix",
                "--offline",
                "--check",
                "--all",
                "--repo",
            ])
            .arg(dir.join("packages").join(repo))
            .bounded_output()
            .expect("run");
        for line in text(&out.stdout).lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            match cols.get(1) {
                Some(&"unchanged") => unchanged += 1,
                Some(_) => changed.push(
                    cols[0]
                        .rsplit("/catalogs/")
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                ),
                None => {}
            }
        }
        failed.extend(
            text(&out.stderr)
                .lines()
                .filter(|l| l.contains(": failed, nothing written"))
                .map(|l| l.split(':').next().unwrap_or_default().to_string()),
        );
    }
    changed.sort();
    assert_eq!(failed, ["kubernaut-operator"]);
    assert_eq!(
        changed,
        [
            "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "v4.21", "v4.22"
        ]
        .iter()
        .map(|v| format!("{v}/ecr-secret-operator/catalog.yaml"))
        .collect::<Vec<_>>()
    );
    shared::cases("catalog_matrix real catalogs reproduced", unchanged, 34);
}

#[test]
fn links_out_of_the_checkout_and_paths_in_templates_are_refused() {
    // catalogs/v4.17 links to a folder of the machine: nothing is written there.
    let (tmp, root) = repo();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join(OP)).unwrap();
    let v417 = root.join("catalogs/v4.17");
    std::fs::remove_dir_all(&v417).unwrap();
    std::os::unix::fs::symlink(&outside, &v417).unwrap();
    let out = run_matrix(&root, &[OP]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("links out of itself"), "{stderr}");
    assert!(!outside.join(OP).join("catalog.yaml").exists());

    // A template naming a path of the machine is not read as a bundle (opm reads images); no
    // network is needed to say so.
    if !can_unshare_network() {
        shared::skip("`unshare -n` does not work here (util-linux, root or user namespaces)");
        return;
    }
    let (tmp, root) = repo();
    let bundle = tmp.path().join("host-bundle");
    copy_dir(&testdata("bundles/valid-basic"), &bundle);
    let path = bundle.display().to_string();
    for template in ["basic-old.yaml", "basic.yaml", "semver.yaml"] {
        let file = root.join(format!("operators/{OP}/catalog-templates/{template}"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(
            &file,
            text.replace(TAG_REF, &path).replace(DIGEST_REF, &path),
        )
        .unwrap();
    }
    let out = without_network(olmpack_path())
        .args(["catalog", "matrix", "--repo"])
        .arg(&root)
        .arg(OP)
        .bounded_output()
        .expect("olmpack runs");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&path), "{stderr}");
    assert!(!stderr.contains("kvstore-operator.v1.1.0\""), "{stderr}");
}

#[test]
fn a_stale_catalog_json_beside_the_written_catalog_yaml_is_refused() {
    let (_tmp, root) = repo();
    let target = catalog(&root, "v4.18");
    let before = std::fs::read(&target).unwrap();
    // The template changes, so v4.18 would be written; a catalog.json sits beside it.
    std::fs::write(&target, b"---\nschema: olm.package\nname: stale\n").unwrap();
    let stale = target.with_file_name("catalog.json");
    std::fs::write(&stale, b"{}").unwrap();
    let out = run_matrix(&root, &[OP]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("catalog.json sits beside"), "{stderr}");
    // Nothing written: the operator's files are as they were.
    assert_ne!(std::fs::read(&target).unwrap(), before);
    std::fs::remove_file(&stale).unwrap();
    let out = run_matrix(&root, &[OP]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&target).unwrap(), before);
}

/// skopeo's digest of `reference` (an independent client), with the registry's credentials.
fn skopeo_digest(reg: &crate::support::registry::Registry, reference: &str) -> String {
    use crate::support::registry::{Mode, PASSWORD, USER};
    let creds = format!("{USER}:{PASSWORD}");
    let mut args = vec!["inspect", "--tls-verify=false", "--format", "{{.Digest}}"];
    if reg.mode != Mode::Plain {
        args.extend(["--creds", &creds]);
    }
    let target = format!("docker://{reference}");
    args.push(&target);
    let out = crate::support::proc::tool_ok("skopeo", &args);
    text(&out.stdout).trim().to_string()
}

/// Without `--offline` the bundles are read from their registry: both bundles pushed to a real
/// registry (plain HTTP, then TLS with Basic auth whose credentials are bound to that registry,
/// since the references come from templates, not the command line), the templates pointed at
/// them (1.1.0 by tag, 1.2.0 by the digest skopeo reads), and the matrix written from the
/// registry equals, file for file, the one written offline from the folders through a bundle map
/// (and, with the public names put back, the checked-in catalogs).
#[test]
fn reads_the_bundles_from_their_registry_without_offline() {
    use crate::support::registry::{Mode, PASSWORD, Registry, USER};
    for mode in [Mode::Plain, Mode::TlsBasic] {
        let (tmp, root) = repo();
        let reg = Registry::start(mode);
        let op = root.join("operators").join(OP);
        let mut conn = reg.cli_flags();
        if mode != Mode::Plain {
            // --creds USER:PASSWORD binds to the command line's image; a template's image needs
            // REGISTRY=USER:PASSWORD.
            conn[1] = format!("{}={USER}:{PASSWORD}", reg.host);
        }
        let tagged = reg.reference("example/kvstore-operator-bundle", "v1.1.0");
        let by_tag_12 = reg.reference("example/kvstore-operator-bundle", "v1.2.0");
        for (version, reference) in [("1.1.0", &tagged), ("1.2.0", &by_tag_12)] {
            let folder = op.join(version);
            let mut build = vec![
                "bundle".to_string(),
                "build".to_string(),
                folder.display().to_string(),
                "--push".to_string(),
                "-t".to_string(),
                reference.clone(),
            ];
            build.extend(conn.iter().cloned());
            let out = olmpack().args(&build).bounded_output().expect("build runs");
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
        let digest = skopeo_digest(&reg, &by_tag_12);
        let pinned = format!("{}/example/kvstore-operator-bundle@{digest}", reg.host);
        for template in ["basic-old.yaml", "basic.yaml", "semver.yaml"] {
            let path = op.join("catalog-templates").join(template);
            let body = text(&std::fs::read(&path).expect("template"))
                .replace(TAG_REF, &tagged)
                .replace(DIGEST_REF, &pinned);
            std::fs::write(&path, body).expect("template rewritten");
        }
        // Online: into one output folder.
        let online = tmp.path().join("online");
        let out = olmpack()
            .args(["catalog", "matrix", "--repo"])
            .arg(&root)
            .arg("--output-dir")
            .arg(&online)
            .args(["--opm-compat", "1.46"])
            .args(&conn)
            .arg(OP)
            .bounded_output()
            .expect("matrix runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{mode:?}: {}",
            text(&out.stderr)
        );
        // Offline from the folders, the same references mapped to them.
        let map = tmp.path().join("bundles.map");
        std::fs::write(
            &map,
            format!(
                "{tagged}\t{}\n{pinned}\t{}\n",
                op.join("1.1.0").display(),
                op.join("1.2.0").display()
            ),
        )
        .expect("map");
        let offline = tmp.path().join("offline");
        let out = olmpack()
            .args(["catalog", "matrix", "--offline", "--repo"])
            .arg(&root)
            .arg("--output-dir")
            .arg(&offline)
            .args(["--opm-compat", "1.46", "--bundle-map"])
            .arg(&map)
            .arg(OP)
            .bounded_output()
            .expect("matrix runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{mode:?}: {}",
            text(&out.stderr)
        );
        for (_, ocp) in TARGETS {
            let from_registry = std::fs::read(catalog(&online, ocp)).expect("online catalog");
            let from_folders = std::fs::read(catalog(&offline, ocp)).expect("offline catalog");
            assert!(
                from_registry == from_folders,
                "{mode:?} {ocp}: the registry's render differs from the folders'"
            );
            let public = text(&from_registry)
                .replace(&tagged, TAG_REF)
                .replace(&pinned, DIGEST_REF);
            let checked_in = text(&std::fs::read(catalog(&root, ocp)).expect("checked in"));
            assert_eq!(public, checked_in, "{mode:?} {ocp}: differs from testdata");
        }
    }
}
