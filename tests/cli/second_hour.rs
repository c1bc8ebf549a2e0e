//! Issue 26, as a new user meets it in the second hour: outputs checked before a push leaves
//! the machine, optional rule groups that agree with operator-sdk, render flags that are
//! applied, network errors in plain words, Ctrl-C that cleans up, the wrong kind of input named.

use crate::support::cmd::{olmpack, run_in as run, run_ok_in as run_ok};
use crate::support::fixtures::repo_root as root;
use crate::support::registry::{Mode, Registry};
use std::fs;
use std::path::Path;
use std::process::Command;

fn valid_bundle() -> String {
    root()
        .join("testdata/bundles/valid-basic")
        .to_string_lossy()
        .into_owned()
}

/// Names in a folder, sorted (hidden ones included: a leftover `.olmpack-…` must show).
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// The tags the registry holds for `repo` (asked with curl, an independent client).
fn registry_tags(reg: &Registry, repo: &str) -> String {
    let out = Command::new("curl")
        .args(["-s", &format!("http://{}/v2/{repo}/tags/list", reg.host)])
        .output()
        .expect("curl");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Item 1: a local output that cannot be written stops the build before the push, with a
/// message naming the user's path (never an internal temp path), exit 2, no digest file.
#[test]
fn an_unwritable_output_stops_the_build_before_the_push() {
    let reg = Registry::start(Mode::Plain);
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let bundle = valid_bundle();
    let cases: [(&str, Vec<String>, &str); 4] = [
        (
            "x1",
            vec!["--output".into(), "oci:nodir/lay:v1".into()],
            "the folder nodir does not exist",
        ),
        (
            "x2",
            vec!["--output".into(), "oci-archive:nodir/a.tar".into()],
            "the folder nodir does not exist",
        ),
        (
            "x3",
            vec![
                "--output".into(),
                "oci:lay:v1".into(),
                "--digest-file".into(),
                "nodir/d".into(),
            ],
            "the folder nodir does not exist",
        ),
        (
            "x4",
            vec!["--output".into(), "oci:notalayout".into()],
            "not an OCI image layout",
        ),
    ];
    fs::create_dir(t.join("notalayout")).expect("mkdir");
    fs::write(t.join("notalayout/readme"), "mine").expect("write");
    for (repo, extra, said) in &cases {
        let reference = reg.reference(repo, "v-fail");
        let mut args = vec!["bundle", "build", &bundle, "-t", &reference, "--push"];
        args.extend(extra.iter().map(String::as_str));
        if !extra.iter().any(|e| e == "--digest-file") {
            args.extend(["--digest-file", "d"]);
        }
        let (code, out, err) = run(t, &args);
        assert_eq!(code, 2, "{repo}: {err}");
        assert_eq!(out, "", "{repo}: no digest printed");
        assert!(err.contains(said), "{repo}: {err}");
        assert!(err.contains("nothing was pushed"), "{repo}: {err}");
        assert!(!err.contains(".olmpack"), "{repo}: temp path shown: {err}");
        let tags = registry_tags(&reg, repo);
        assert!(!tags.contains("v-fail"), "{repo} was pushed: {tags}");
    }
    assert_eq!(names(t), ["notalayout"], "no digest file, no junk");
    assert_eq!(names(&t.join("notalayout")), ["readme"]);

    // The same build with a good output pushes and writes both.
    let reference = reg.reference("ok", "v1");
    let (out, _) = run_ok(
        t,
        &[
            "bundle",
            "build",
            &bundle,
            "-t",
            &reference,
            "--push",
            "--output",
            "oci:lay:v1",
            "--digest-file",
            "d",
        ],
    );
    let digest = fs::read_to_string(t.join("d")).expect("digest file");
    assert!(out.starts_with(&digest), "{out}");
    assert!(registry_tags(&reg, "ok").contains("v1"));
}

/// Copies `testdata/bundles/valid-basic` into `dest` and edits its CSV with `edit`.
fn edited_bundle(dest: &Path, edit: impl Fn(String) -> String) -> String {
    let src = root().join("testdata/bundles/valid-basic");
    for sub in ["manifests", "metadata"] {
        fs::create_dir_all(dest.join(sub)).expect("mkdir");
        for e in fs::read_dir(src.join(sub)).expect("list") {
            let e = e.expect("entry");
            fs::copy(e.path(), dest.join(sub).join(e.file_name())).expect("copy");
        }
    }
    let csv = dest.join("manifests/kvstore-operator.clusterserviceversion.yaml");
    let text = fs::read_to_string(&csv).expect("csv");
    fs::write(&csv, edit(text)).expect("write csv");
    dest.to_string_lossy().into_owned()
}

/// Item 2: the operatorhub group uses operator-framework/api's current standard categories
/// (with "Streaming & Messaging", without "Drivers and plugins"), trims each value, and takes
/// a custom list from OPERATOR_BUNDLE_CATEGORIES as operator-sdk does.
#[test]
fn operatorhub_categories_are_operator_frameworks() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let with = |cats: &str| {
        let dir = t.join(cats.replace(['/', ' ', '&', ','], "_"));
        edited_bundle(&dir, |csv| {
            csv.replace("categories: Database", &format!("categories: \"{cats}\""))
        })
    };
    let validate = |dir: &str, env: Option<&Path>| {
        let mut cmd = olmpack();
        cmd.args([
            "bundle",
            "validate",
            "--select-optional",
            "operatorhub",
            dir,
        ]);
        cmd.env_remove("OPERATOR_BUNDLE_CATEGORIES");
        if let Some(file) = env {
            cmd.env("OPERATOR_BUNDLE_CATEGORIES", file);
        }
        let out = cmd.output().expect("run");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let streaming = with("Streaming & Messaging, Database");
    let (code, out) = validate(&streaming, None);
    assert!(!out.contains("operatorhub/categories"), "{out}");
    assert_eq!(code, 0, "{out}");

    let drivers = with("Drivers and plugins");
    let (code, out) = validate(&drivers, None);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("operatorhub/categories")
            && out.contains("\"Drivers and plugins\" is not in the set of standard categories"),
        "{out}"
    );

    let custom = t.join("categories.json");
    fs::write(
        &custom,
        r#"{"categories": ["Drivers and plugins", "Cloud Pak"]}"#,
    )
    .expect("w");
    let (code, out) = validate(&drivers, Some(&custom));
    assert_eq!(code, 0, "custom list: {out}");
    let (code, out) = validate(&streaming, Some(&custom));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not in the set of custom categories"), "{out}");
    let (code, out) = validate(&drivers, Some(&t.join("missing.json")));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("OPERATOR_BUNDLE_CATEGORIES") && out.contains("missing.json"),
        "{out}"
    );
}

/// Item 2, the audit: each optional rule decides as operator-framework/api does on the cases
/// where olmpack disagreed (emails and URLs as Go parses them, `requests` present without
/// cpu, the default channel's name, exact RBAC names, string PDB values).
#[test]
fn optional_groups_agree_with_operator_framework_api() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let run_all = |dir: &str| {
        let out = olmpack()
            .args([
                "bundle",
                "validate",
                "--select-optional",
                "all",
                "-o",
                "json",
                dir,
            ])
            .env_remove("OPERATOR_BUNDLE_CATEGORIES")
            .output()
            .expect("run");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["outputs"]
            .as_array()
            .expect("outputs")
            .iter()
            .map(|o| {
                format!(
                    "{} {}",
                    o["rule"].as_str().unwrap_or(""),
                    o["message"].as_str().unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
    };
    // Accepted by Go: a host without a dot, a non-http scheme.
    let lenient = edited_bundle(&t.join("lenient"), |csv| {
        csv.replace("kvstore@example.com", "kvstore@localhost")
            .replace(
                "https://example.com/kvstore/docs",
                "ftp://example.com/kvstore",
            )
    });
    let found = run_all(&lenient);
    assert!(
        !found
            .iter()
            .any(|f| f.starts_with("operatorhub/maintainers") || f.starts_with("operatorhub/links")),
        "{found:#?}"
    );
    // Refused by Go, with Go's reason.
    let strict = edited_bundle(&t.join("strict"), |csv| {
        csv.replace("kvstore@example.com", "kvstore team")
            .replace("https://example.com/kvstore/docs", "example.com/docs")
    });
    let found = run_all(&strict);
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("operatorhub/maintainers") && f.contains("mail: no angle-addr")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("operatorhub/links") && f.contains("invalid URI for request")),
        "{found:#?}"
    );

    // good-practices and bundle-objects: each case decided as operator-framework/api does.
    let objects = edited_bundle(&t.join("objects"), |csv| {
        csv.replace("                        memory: 64Mi\n", "")
    });
    let dir = Path::new(&objects);
    fs::write(
        dir.join("manifests/pdb.yaml"),
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: kvstore\nspec:\n  maxUnavailable: 25%\n",
    )
    .expect("w");
    fs::write(
        dir.join("manifests/role.yaml"),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: kvstore-extra\nrules:\n- apiGroups: [policy]\n  resources: [poddisruptionbudgets]\n  verbs: [delete]\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [update]\n- apiGroups: [\"*\"]\n  resources: [\"*\"]\n  verbs: [\"*\"]\n",
    )
    .expect("w");
    let annotations = dir.join("metadata/annotations.yaml");
    let text = fs::read_to_string(&annotations).expect("annotations");
    fs::write(
        &annotations,
        text.replace(
            "channel.default.v1: \"stable\"",
            "channel.default.v1: \"production\"",
        ),
    )
    .expect("w");
    let found = run_all(&objects);
    let has = |rule: &str, text: &str| {
        found
            .iter()
            .any(|f| f.starts_with(rule) && f.contains(text))
    };
    // A `requests` with cpu only: operator-sdk reads the missing memory as zero and is content.
    assert!(
        !found
            .iter()
            .any(|f| f.starts_with("good-practices/resource-requests")),
        "{found:#?}"
    );
    // The default channel is one of the names checked.
    assert!(
        has("good-practices/channel-naming", "\"production\""),
        "{found:#?}"
    );
    // A percentage maxUnavailable decodes with IntVal 0 there, so it is refused.
    assert!(
        has("bundle-objects/pod-disruption-budget", "maxUnavailable"),
        "{found:#?}"
    );
    // Exact names only: delete on PDBs, an SCC rule without resourceNames, and `*` are not
    // what operator-framework/api flags.
    assert!(
        !found.iter().any(|f| f.starts_with("bundle-objects/rbac")),
        "{found:#?}"
    );
}

/// A package-manifest package of two versions (1.1.0, then 1.2.0 replacing it) made from the
/// valid test bundle's CSV and CRD.
fn package_manifest(dir: &Path) -> String {
    let src = root().join("testdata/bundles/valid-basic/manifests");
    let csv =
        fs::read_to_string(src.join("kvstore-operator.clusterserviceversion.yaml")).expect("csv");
    let crd = fs::read_to_string(src.join("kvstore.example.com_kvclusters.yaml")).expect("crd");
    let old = csv
        .replace("kvstore-operator.v1.2.0", "kvstore-operator.v1.1.0")
        .replace("  version: 1.2.0\n", "  version: 1.1.0\n")
        .replace("  replaces: kvstore-operator.v1.1.0\n", "");
    for (version, text) in [("1.1.0", old.as_str()), ("1.2.0", csv.as_str())] {
        let v = dir.join(version);
        fs::create_dir_all(&v).expect("mkdir");
        fs::write(v.join("kvstore-operator.clusterserviceversion.yaml"), text).expect("w");
        fs::write(v.join("kvstore.example.com_kvclusters.yaml"), &crd).expect("w");
    }
    fs::write(
        dir.join("kvstore-operator.package.yaml"),
        "packageName: kvstore-operator\nchannels:\n- name: stable\n  currentCSV: kvstore-operator.v1.2.0\ndefaultChannel: stable\n",
    )
    .expect("w");
    dir.to_string_lossy().into_owned()
}

/// The `image` of every olm.bundle blob of a JSON render.
fn rendered_images(json: &str) -> Vec<String> {
    serde_json::Deserializer::from_str(json)
        .into_iter::<serde_json::Value>()
        .map(|v| v.expect("json blob"))
        .filter(|v| v["schema"] == "olm.bundle")
        .map(|v| v["image"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Item 3: `--image-template` names the bundles of a package-manifest folder (and of an
/// sqlite database); `--image` names the one bundle without an image, or is refused with the
/// reason when there are several; the warning's advice is never ignored.
#[test]
fn render_applies_image_flags_to_legacy_sources() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let pkg = package_manifest(&t.join("kvstore"));
    let template = "quay.io/x/{{.Package}}:v{{.Version}}";
    let (out, err) = run_ok(
        t,
        &["catalog", "render", &pkg, "--image-template", template],
    );
    assert_eq!(
        rendered_images(&out),
        [
            "quay.io/x/kvstore-operator:v1.1.0",
            "quay.io/x/kvstore-operator:v1.2.0"
        ]
    );
    assert!(!err.contains("empty image"), "{err}");

    let (code, out, err) = run(t, &["catalog", "render", &pkg, "--image", "quay.io/x/b:v1"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("--image gives one reference, but 2 bundles")
            && err.contains("--image-template"),
        "{err}"
    );

    let (out, err) = run_ok(t, &["catalog", "render", &pkg]);
    assert_eq!(rendered_images(&out), ["", ""]);
    assert!(err.contains("--image-template"), "{err}");

    let Some(legacy) = crate::support::shared::shared_legacy("sqlite") else {
        return;
    };
    let db = legacy.join("sqlite/community-operators/apicurito.db");
    let db = db.to_str().expect("utf-8");
    let (out, err) = run_ok(t, &["catalog", "render", db, "--image-template", template]);
    let images = rendered_images(&out);
    assert!(!images.is_empty());
    assert!(
        images
            .iter()
            .all(|i| i.starts_with("quay.io/x/apicurito:v") || !i.is_empty()),
        "{images:?}"
    );
    assert!(!images.iter().any(String::is_empty), "{images:?}");
    assert!(!err.contains("empty image"), "{err}");
}

/// Item 7: SIGINT or SIGTERM while a build waits on a push removes what it staged (the digest
/// file's hidden temporary beside `d.txt`), says `interrupted` and exits 130. The registry is a
/// loopback listener that accepts and never answers, so the signal surely lands mid-push.
#[test]
fn an_interrupted_push_cleans_up_and_exits_130() {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let catalog = root().join("testdata/catalogs/valid-basic");
    let bundle = valid_bundle();
    for (signal, args) in [
        (
            "-INT",
            vec!["catalog", "build", catalog.to_str().expect("utf-8")],
        ),
        ("-TERM", vec!["bundle", "build", bundle.as_str()]),
    ] {
        let tmp = tempfile::tempdir().expect("tmp");
        let t = tmp.path();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let reference = format!("127.0.0.1:{port}/x/y:v1");
        let mut child = Command::new(crate::support::cmd::olmpack_path())
            .current_dir(t)
            .args(&args)
            .args(["-t", &reference, "--push", "--digest-file", "d.txt"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start");
        // Wait (bounded) for the push to reach the silent registry.
        listener.set_nonblocking(true).expect("nonblocking");
        let deadline = Instant::now() + Duration::from_secs(60);
        let _held = loop {
            match listener.accept() {
                Ok((conn, _)) => break conn,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => panic!("the push never connected: {e}"),
            }
        };
        let staged = names(t);
        assert!(
            staged.iter().any(|n| n.starts_with(".olmpack-")),
            "the digest file is staged before the push: {staged:?}"
        );
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "did not stop on {signal}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("read");
        assert_eq!(status.code(), Some(130), "{signal}: {err}");
        assert!(err.contains("interrupted"), "{err}");
        assert!(names(t).is_empty(), "{signal} left {:?}", names(t));
    }
}

/// Item 6: network failures in words. A loopback port nobody listens on is "connection
/// refused by 127.0.0.1:PORT", said once (no retries by default, the retry flag still honoured
/// when given); a missing tag is "tag v9 not found in HOST/REPO". No library internals.
#[test]
fn network_errors_are_said_in_words() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let port = crate::support::registry::CLOSED_PORT;
    let reference = format!("127.0.0.1:{port}/x/y:1");
    let (code, out, err) = run(t, &["bundle", "inspect", &reference]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(&format!("connection refused by 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(!err.contains("retrying"), "not retried by default: {err}");
    for internal in ["os error", "client error", "tcp connect error", "hyper"] {
        assert!(!err.contains(internal), "{internal}: {err}");
    }
    let (code, _, err) = run(t, &["bundle", "inspect", "--retries", "2", &reference]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.matches("retrying").count(), 1, "{err}");

    let reg = Registry::start(Mode::Plain);
    let pushed = reg.reference("x/y", "v1");
    run_ok(
        t,
        &["bundle", "build", &valid_bundle(), "-t", &pushed, "--push"],
    );
    let (code, out, err) = run(t, &["bundle", "inspect", &reg.reference("x/y", "v9")]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(&format!("tag v9 not found in {}/x/y", reg.host)),
        "{err}"
    );
    assert!(!err.contains("MANIFEST_UNKNOWN"), "{err}");
}

/// Copies the valid bundle's `manifests/` (only) into `dir`.
fn manifests_only(dir: &Path) {
    let src = root().join("testdata/bundles/valid-basic/manifests");
    fs::create_dir_all(dir.join("manifests")).expect("mkdir");
    for e in fs::read_dir(src).expect("list") {
        let e = e.expect("entry");
        fs::copy(e.path(), dir.join("manifests").join(e.file_name())).expect("copy");
    }
}

/// Item 4: without --package, `bundle init` reads the package from a bundle.Dockerfile, then a
/// `<package>/<version>/` layout, before the CSV name, and says where it came from.
#[test]
fn init_says_where_the_package_name_came_from() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let package_of = |dir: &Path| {
        fs::read_to_string(dir.join("metadata/annotations.yaml"))
            .expect("annotations")
            .lines()
            .find(|l| l.contains("bundle.package.v1"))
            .map(|l| {
                l.split(':')
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .trim_matches('"')
                    .to_string()
            })
            .expect("package line")
    };
    // A community-operators layout: the folder above the version folder names the package.
    let layout = t.join("kvstore-pkg/1.2.0");
    manifests_only(&layout);
    let (_, err) = run_ok(
        t,
        &[
            "bundle",
            "init",
            layout.to_str().expect("utf-8"),
            "--channels",
            "stable",
        ],
    );
    assert_eq!(package_of(&layout), "kvstore-pkg");
    assert!(
        err.contains("package kvstore-pkg: from the folder"),
        "{err}"
    );

    // A bundle.Dockerfile beside the bundle folder (operator-sdk's place) wins over the CSV.
    let project = t.join("project");
    manifests_only(&project.join("bundle"));
    fs::write(
        project.join("bundle.Dockerfile"),
        "FROM scratch\nLABEL operators.operatorframework.io.bundle.package.v1=kvstore-from-label\n",
    )
    .expect("w");
    let bundle = project.join("bundle");
    let (_, err) = run_ok(
        t,
        &[
            "bundle",
            "init",
            bundle.to_str().expect("utf-8"),
            "--channels",
            "stable",
        ],
    );
    assert_eq!(package_of(&bundle), "kvstore-from-label");
    assert!(err.contains("from the package label of"), "{err}");

    // Nothing else: the CSV name, said as such.
    let plain = t.join("plain");
    manifests_only(&plain);
    let (_, err) = run_ok(
        t,
        &[
            "bundle",
            "init",
            plain.to_str().expect("utf-8"),
            "--channels",
            "stable",
        ],
    );
    assert_eq!(package_of(&plain), "kvstore-operator");
    assert!(
        err.contains("package kvstore-operator: from the CSV name kvstore-operator.v1.2.0"),
        "{err}"
    );
}

/// A one-package FBC catalog: `default` is the default channel; each `(channel, version)` is a
/// channel holding one bundle of that version.
fn channel_catalog(dir: &Path, default: &str, channels: &[(&str, &str)]) -> String {
    fs::create_dir_all(dir).expect("mkdir");
    let mut blobs = vec![serde_json::json!({
        "schema": "olm.package", "name": "p", "defaultChannel": default
    })];
    for (channel, version) in channels {
        let name = format!("p.v{version}");
        blobs.push(serde_json::json!({
            "schema": "olm.channel", "package": "p", "name": channel,
            "entries": [{"name": name}]
        }));
        blobs.push(serde_json::json!({
            "schema": "olm.bundle", "package": "p", "name": name,
            "image": format!("quay.io/x/p-bundle:v{version}"),
            "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": version}}]
        }));
    }
    let text: Vec<String> = blobs.iter().map(|b| b.to_string()).collect();
    fs::write(dir.join("catalog.json"), text.join("\n")).expect("w");
    dir.to_string_lossy().into_owned()
}

/// Item 9: a nightly, candidate or pre-release head ahead of `stable` is no stale default;
/// a GA channel ahead of it still is.
#[test]
fn a_prerelease_channel_ahead_is_not_a_stale_default() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let stale_rule = |dir: &str| {
        let (_, out, _) = run(t, &["catalog", "validate", "-o", "json", dir]);
        out.contains("catalog/default-channel-stale")
    };
    let normal = channel_catalog(
        &t.join("normal"),
        "stable",
        &[
            ("stable", "1.0.0"),
            ("nightly", "2.0.0"),
            ("candidate-v2", "2.1.0"),
            ("v2-beta", "2.2.0"),
            ("fast", "1.5.0-rc.1"),
        ],
    );
    assert!(!stale_rule(&normal));
    let stale = channel_catalog(
        &t.join("stale"),
        "stable",
        &[("stable", "1.0.0"), ("fast", "2.0.0")],
    );
    assert!(
        stale_rule(&stale),
        "the rule still fires on a GA channel ahead"
    );
}

/// Item 8: an image, a package-manifest package or a bundle folder given to `catalog validate`
/// or `catalog graph` is named as what it is, with the command that reads it (exit 2), instead
/// of a raw OS error or a page of missing-schema errors.
#[test]
fn the_wrong_kind_of_input_is_named() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let pkg = package_manifest(&t.join("kvstore"));
    let bundle = valid_bundle();
    let cases = [
        ("oci:some-layout:v1", "names an image"),
        ("quay.io/example/catalog:v1", "names an image"),
        (pkg.as_str(), "is a package-manifest package"),
        (bundle.as_str(), "is a bundle folder"),
    ];
    for (input, said) in cases {
        for command in ["validate", "graph"] {
            let (code, out, err) = run(t, &["catalog", command, input]);
            let all = format!("{out}{err}");
            assert_eq!(code, 2, "{command} {input}: {all}");
            assert!(all.contains(said), "{command} {input}: {all}");
            assert!(!all.contains("os error"), "{command} {input}: {all}");
            assert!(!all.contains("schema"), "{command} {input}: {all}");
        }
    }
}

/// The smaller items: `docker://REF` is a registry reference, the man synopsis names option
/// values, `catalog add` says when the catalog keeps another default channel than the bundle's,
/// and `catalog serve --addr localhost` listens on loopback and counts bundles, not entries.
#[test]
fn smaller_items_of_the_second_hour() {
    use std::time::Duration;
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();

    // docker:// as skopeo spells it: read as a reference (nothing listens there, so the
    // error is the connection's, not a refused reference or a missing path).
    let (code, _, err) = run(t, &["bundle", "inspect", "docker://127.0.0.1:1/x/y:v1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("connection refused by 127.0.0.1:1"), "{err}");

    // Man synopsis with value names.
    run_ok(t, &["man", "--output-dir", "man"]);
    let page = fs::read_to_string(t.join("man/olmpack-catalog-serve.1")).expect("page");
    assert!(
        page.contains("\\-\\-port PORT") || page.contains("--port PORT"),
        "{page}"
    );

    // catalog add: the package keeps its default channel, and says so.
    let catalog = t.join("catalog");
    fs::create_dir_all(&catalog).expect("mkdir");
    fs::write(
        catalog.join("catalog.json"),
        r#"{"schema":"olm.package","name":"kvstore-operator","defaultChannel":"fast"}
{"schema":"olm.channel","package":"kvstore-operator","name":"fast","entries":[{"name":"kvstore-operator.v1.1.0"}]}
{"schema":"olm.bundle","package":"kvstore-operator","name":"kvstore-operator.v1.1.0","image":"quay.io/x/kv:v1.1.0","properties":[{"type":"olm.package","value":{"packageName":"kvstore-operator","version":"1.1.0"}}]}
"#,
    )
    .expect("w");
    let (_, err) = run_ok(
        t,
        &[
            "catalog",
            "add",
            catalog.to_str().expect("utf-8"),
            &valid_bundle(),
            "--image",
            "quay.io/x/kv:v1.2.0",
        ],
    );
    assert!(
        err.contains("keeps its default channel \"fast\"") && err.contains("\"stable\""),
        "{err}"
    );

    // serve --addr localhost: the banner names loopback and counts each bundle once (the
    // bundle of this catalog is in two channels).
    fs::write(
        catalog.join("catalog.json"),
        r#"{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.channel","package":"p","name":"fast","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"quay.io/x/p:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
"#,
    )
    .expect("w");
    // The banner is waited for with a deadline even when the server prints nothing.
    let (mut child, lines) = crate::support::proc::spawn_with_stderr_lines(
        Command::new(crate::support::cmd::olmpack_path())
            .args(["catalog", "serve", "--addr", "localhost", "-p", "0"])
            .arg(&catalog),
    );
    let banner = lines
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(banner.contains("1 packages, 1 bundles"), "{banner}");
    assert!(banner.contains("gRPC on 127.0.0.1:"), "{banner}");
}

/// Item 10: one verdict for one CRD. A v1beta1 CRD that leaves spec.preserveUnknownFields
/// unset is the error `crd/preserve-unknown-fields` in `bundle validate PACKAGE-DIR` as in the
/// bundles `bundle migrate` writes from it (which it still writes), and `explain` describes
/// that case.
#[test]
fn preserve_unknown_fields_is_one_verdict_everywhere() {
    let tmp = tempfile::tempdir().expect("tmp");
    let t = tmp.path();
    let pkg = package_manifest(&t.join("kvstore"));
    let v1beta1 = "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: kvclusters.kvstore.example.com\nspec:\n  group: kvstore.example.com\n  names:\n    kind: KVCluster\n    listKind: KVClusterList\n    plural: kvclusters\n    singular: kvcluster\n  scope: Namespaced\n  version: v1\n  versions:\n  - name: v1\n    served: true\n    storage: true\n";
    for v in ["1.1.0", "1.2.0"] {
        fs::write(
            t.join("kvstore")
                .join(v)
                .join("kvstore.example.com_kvclusters.yaml"),
            v1beta1,
        )
        .expect("w");
    }
    let rule = "crd/preserve-unknown-fields";
    let (code, out, err) = run(t, &["bundle", "validate", &pkg]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.matches(&format!("error[{rule}]")).count(), 2, "{out}");

    let (code, out, err) = run(t, &["bundle", "migrate", &pkg, "--output-dir", "out"]);
    let all = format!("{out}{err}");
    assert!(all.contains("0 of 2 bundles pass"), "{all}");
    assert!(all.contains(rule), "{all}");
    assert!(t.join("out/1.2.0/manifests").is_dir(), "written: {all}");
    assert_eq!(code, 0, "{all}");

    let (code, out, _) = run(t, &["explain", rule]);
    assert_eq!(code, 0);
    assert!(out.contains("v1beta1") && out.contains("unset"), "{out}");
}
