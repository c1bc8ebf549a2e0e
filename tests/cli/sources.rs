//! Source strings from a new user's point of view (issue 20 items 1 and 5): a mistyped or missing
//! path is named as such, with exit 2, and never becomes a registry lookup; `--offline`
//! opens no socket; an unreachable registry's retries are said on stderr, once per attempt.
//!
//! "No network" is checked, not assumed: every case runs under `strace -f -e trace=socket`, and
//! any `socket(2)` call (a DNS lookup opens one before anything else) fails the test. The
//! binary of the previous release opened AF_INET sockets in three of these cases.

use crate::support::fixtures::valid_basic as testdata_bundle;
use crate::support::proc::Bounded;
use std::path::Path;
use std::process::Command;

/// What one run of the binary gave.
struct Run {
    code: Option<i32>,
    stderr: String,
    sockets: Vec<String>,
}

fn strace() -> &'static str {
    let ok = Command::new("strace")
        .arg("-V")
        .bounded_output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "strace is needed to prove that no socket is opened (apt-get install strace)"
    );
    "strace"
}

/// Runs `olmpack ARGS` in `dir` under strace, recording every `socket(2)` call.
fn run(dir: &Path, args: &[&str]) -> Run {
    let trace = tempfile::NamedTempFile::new().expect("trace file");
    let out = Command::new(strace())
        .args(["-f", "-qq", "-e", "trace=socket", "-o"])
        .arg(trace.path())
        .arg(crate::support::cmd::olmpack_path())
        .args(args)
        .current_dir(dir)
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .bounded_output()
        .expect("strace runs");
    let sockets = std::fs::read_to_string(trace.path())
        .expect("trace readable")
        .lines()
        .filter(|l| l.contains("socket("))
        .map(str::to_string)
        .collect();
    Run {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        sockets,
    }
}

/// A usage error (exit 2), quick, with no socket opened, whose message holds every `want` and
/// none of `never`.
fn refused(dir: &Path, args: &[&str], want: &[&str]) -> String {
    let r = run(dir, args);
    let never = [
        "invalid registry host",
        "docker.io/v2",
        "registry-1",
        "error sending request",
    ];
    assert_eq!(r.code, Some(2), "olmpack {args:?}: {}", r.stderr);
    for w in want {
        assert!(
            r.stderr.contains(w),
            "olmpack {args:?}: want {w:?} in {}",
            r.stderr
        );
    }
    for n in never {
        assert!(
            !r.stderr.contains(n),
            "olmpack {args:?}: {n:?} in {}",
            r.stderr
        );
    }
    assert!(
        r.sockets.is_empty(),
        "olmpack {args:?} opened sockets: {:?}",
        r.sockets
    );
    r.stderr
}

const TEMPLATE: &str = "schema: olm.template.basic\nentries:\n  - schema: olm.package\n    name: kvstore-operator\n  - schema: olm.bundle\n    image: quay.io/example/kvstore-bundle:1.2.0\n";

/// `catalog template --offline --bundle-map MAP TEMPLATE`.
fn offline_template<'a>(map: &'a str, template: &'a str) -> [&'a str; 6] {
    [
        "catalog",
        "template",
        "--offline",
        "--bundle-map",
        map,
        template,
    ]
}

/// A temporary folder holding `t.yaml` ([`TEMPLATE`]) and the bundle map `map` (its folders
/// made) with `text`.
fn template_and_map(map: &str, text: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    std::fs::write(d.join("t.yaml"), TEMPLATE).expect("template");
    let map = d.join(map);
    std::fs::create_dir_all(map.parent().expect("a folder")).expect("mkdir");
    std::fs::write(map, text).expect("map");
    tmp
}

#[test]
fn a_missing_folder_is_named_not_looked_up() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let err = refused(
        d,
        &["catalog", "render", "nosuchdir"],
        &[
            "no such file or folder: nosuchdir",
            "docker.io/library/nosuchdir",
        ],
    );
    assert!(err.contains("names no registry host"), "{err}");
    refused(
        d,
        &["catalog", "render", "./nosuchdir"],
        &["no such file or folder: ./nosuchdir"],
    );
    refused(
        d,
        &["bundle", "validate", "--image", "nosuch/"],
        &["no such file or folder: nosuch/"],
    );
    refused(
        d,
        &["bundle", "inspect", "oci:./nolayout:v1"],
        &["no such file or folder: ./nolayout"],
    );
    refused(
        d,
        &["bundle", "pull", "./nosuchdir", "out"],
        &["no such file or folder: ./nosuchdir"],
    );
    assert!(
        !d.join("out").exists(),
        "pull created its folder for a bad source"
    );
}

#[test]
fn a_folder_where_an_image_is_needed_says_what_to_type() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    std::fs::create_dir_all(d.join("my-bundle/manifests")).expect("mkdir");
    std::fs::create_dir_all(d.join("my-bundle/metadata")).expect("mkdir");
    refused(
        d,
        &["bundle", "inspect", "./my-bundle"],
        &[
            "./my-bundle is a folder, not an image",
            "olmpack bundle validate ./my-bundle",
        ],
    );
    // An OCI layout given without its prefix: the prefix is suggested.
    let layout = d.join("layout");
    Command::new(crate::support::cmd::olmpack_path())
        .args(["bundle", "build"])
        .arg(testdata_bundle())
        .arg("--output")
        .arg(format!("oci:{}:v1", layout.display()))
        .succeeds();
    refused(
        d,
        &["bundle", "validate", "--image", "layout"],
        &["layout is a folder, not an image", "write oci:layout"],
    );
}

#[test]
fn a_bundle_map_naming_a_missing_folder_fails_offline_with_its_line() {
    let tmp = template_and_map(
        "maps/missing.tsv",
        "# published\tlocal\nquay.io/example/kvstore-bundle:1.2.0\tbundles/1.2.0\n",
    );
    let d = tmp.path();
    refused(
        d,
        &offline_template("maps/missing.tsv", "t.yaml"),
        &["maps/missing.tsv:2: no such file or folder: maps/bundles/1.2.0"],
    );
    // The same map without --offline does not go to a registry either.
    refused(
        d,
        &[
            "catalog",
            "template",
            "--bundle-map",
            "maps/missing.tsv",
            "t.yaml",
        ],
        &["maps/missing.tsv:2: no such file or folder"],
    );
}

#[test]
fn a_relative_dotdot_path_in_a_bundle_map_is_a_path() {
    let tmp = template_and_map(
        "a/b/map.tsv",
        "quay.io/example/kvstore-bundle:1.2.0\t../../bundles/kvstore\n",
    );
    let d = tmp.path();
    refused(
        d,
        &offline_template("a/b/map.tsv", "t.yaml"),
        &["a/b/map.tsv:1: no such file or folder: a/b/../../bundles/kvstore"],
    );
    // Once the folder is there, the same map renders it, still without a socket.
    std::fs::create_dir_all(d.join("bundles")).expect("mkdir");
    std::os::unix::fs::symlink(testdata_bundle(), d.join("bundles/kvstore")).expect("link");
    let r = run(d, &offline_template("a/b/map.tsv", "t.yaml"));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.sockets.is_empty(), "{:?}", r.sockets);
}

/// `--offline` opens no socket at all, whether every reference is mapped (success) or one is
/// not (it is refused by name instead of fetched).
#[test]
fn offline_opens_no_socket() {
    let tmp = template_and_map(
        "map.tsv",
        &format!(
            "quay.io/example/kvstore-bundle:1.2.0\t{}\n",
            testdata_bundle().display()
        ),
    );
    let d = tmp.path();
    let ok = run(d, &offline_template("map.tsv", "t.yaml"));
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    assert!(ok.sockets.is_empty(), "{:?}", ok.sockets);
    std::fs::write(
        d.join("t2.yaml"),
        format!(
            "{TEMPLATE}  - schema: olm.bundle\n    image: quay.io/example/kvstore-bundle:9.9.9\n"
        ),
    )
    .expect("template");
    let unmapped = run(d, &offline_template("map.tsv", "t2.yaml"));
    assert_eq!(unmapped.code, Some(1), "{}", unmapped.stderr);
    assert!(
        unmapped
            .stderr
            .contains("kvstore-bundle:9.9.9: not in the bundle map"),
        "{}",
        unmapped.stderr
    );
    assert!(unmapped.sockets.is_empty(), "{:?}", unmapped.sockets);
}

/// The check above can fail: the same trace sees the socket of a command that does go to a
/// registry (a closed loopback port, one attempt).
#[test]
fn the_socket_check_sees_a_registry_lookup() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = crate::support::registry::CLOSED_PORT;
    let r = run(
        tmp.path(),
        &[
            "bundle",
            "inspect",
            "--retries",
            "1",
            &format!("127.0.0.1:{port}/x/y:1"),
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.sockets.iter().any(|s| s.contains("AF_INET")),
        "{:?}",
        r.sockets
    );
}

/// Retries are said on stderr, once per attempt: what, why and when.
#[test]
fn retries_are_said_once_per_attempt() {
    let port = crate::support::registry::CLOSED_PORT;
    let reference = format!("127.0.0.1:{port}/x/y:1");
    let out = Command::new(crate::support::cmd::olmpack_path())
        .args(["bundle", "inspect", "--retries", "3", &reference])
        .bounded_output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("retrying")).collect();
    assert_eq!(lines.len(), 2, "two retries after the first attempt: {err}");
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.contains(&format!("GET http://127.0.0.1:{port}/v2/x/y/manifests/1")),
            "what: {line}"
        );
        assert!(line.to_lowercase().contains("refused"), "why: {line}");
        assert!(line.contains(" s (attempt "), "when: {line}");
        assert!(line.contains(&format!("attempt {} of 3", i + 2)), "{line}");
    }
    // No retry, no word about one.
    let once = Command::new(crate::support::cmd::olmpack_path())
        .args(["bundle", "inspect", "--retries", "1", &reference])
        .bounded_output()
        .expect("runs");
    let once_err = String::from_utf8_lossy(&once.stderr);
    assert_eq!(once.status.code(), Some(2), "{once_err}");
    assert!(once_err.to_lowercase().contains("refused"), "{once_err}");
    assert!(!once_err.contains("retrying"), "{once_err}");
    // --retries stays documented.
    let help = Command::new(crate::support::cmd::olmpack_path())
        .args(["bundle", "inspect", "--help"])
        .bounded_output()
        .expect("runs");
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--retries"));
}
