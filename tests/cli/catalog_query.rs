//! `catalog query`: a catalog folder and a running `catalog serve --http` (catalogd's API) give
//! the same answer; `--upgrades-from` puts OLM v1's and OLM v0's next bundle side by side;
//! `--upgrade-report` lists where they differ (testdata/crd-upgrade/v0-v1: a prerelease that
//! OLM v0 upgrades to and OLM v1 never does, as in the real slurm-operator catalog).

use crate::support::cmd::{SERVE_ON_FREE_PORTS, olmpack_path, run};
use crate::support::fixtures::testdata;
use crate::support::proc::spawn_with_stderr_lines;
use serde_json::{Value, json};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn query(args: &[&str]) -> Value {
    let mut all = vec!["catalog", "query"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let out = run(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON answer")
}

#[test]
fn upgrades_from_gives_v1_and_v0_per_channel() {
    let dir = testdata("crd-upgrade/catalog").display().to_string();
    let v = query(&[&dir, "--upgrades-from", "1.0.0"]);
    let pkg = &v["packages"][0];
    assert_eq!(pkg["name"], "kvstore-operator");
    assert_eq!(
        pkg["upgrades"],
        json!([
            {"channel": "stable", "installed": "kvstore-operator.v1.0.0", "version": "1.0.0",
             "v0": "kvstore-operator.v1.2.0", "v1": "kvstore-operator.v1.2.0"},
            {"channel": "fast", "installed": "kvstore-operator.v1.0.0", "version": "1.0.0",
             "v0": "kvstore-operator.v1.1.0", "v1": "kvstore-operator.v1.1.0"}
        ])
    );
    // Every bundle declares olm.gvk.required (its CSV requires a CRD): OLM v1 refuses them.
    assert!(
        pkg["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["olmv1"] == "no")
    );
    let only = query(&[&dir, "--installable", "olmv1"]);
    assert_eq!(only["packages"][0]["bundles"], json!([]));
}

#[test]
fn upgrade_report_names_where_v0_and_v1_differ() {
    let dir = testdata("crd-upgrade/v0-v1").display().to_string();
    let v = query(&[&dir, "--upgrade-report"]);
    assert_eq!(
        v["differences"],
        json!([["relabel", {"channel": "stable", "installed": "relabel.v1.0.1", "version": "1.0.1",
            "v0": "relabel.v1.0.1-1", "v1": null}]])
    );
}

#[test]
fn unknown_package_is_a_usage_error() {
    let dir = testdata("crd-upgrade/catalog").display().to_string();
    let out = run(&["catalog", "query", &dir, "--package", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no package \"nope\""));
    // A version the package does not have is named, not answered with an empty table.
    let out = run(&[
        "catalog",
        "query",
        &dir,
        "--package",
        "kvstore-operator",
        "--upgrades-from",
        "9.9.9",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("has no bundle with version or name \"9.9.9\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `catalog serve --http` on 127.0.0.1, stopped when dropped.
struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &str) -> Server {
    let (child, rx) = spawn_with_stderr_lines(
        Command::new(olmpack_path())
            .args(["catalog", "serve", dir])
            .args(SERVE_ON_FREE_PORTS),
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut server = Server(child, String::new());
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if let Some(url) = line.strip_prefix("catalogd HTTP API on ") {
            server.1 = url.trim().trim_end_matches("/api/v1/all").to_string();
            return server;
        }
    }
    panic!("catalog serve printed no HTTP address within 120 s");
}

#[test]
fn a_catalogd_url_answers_as_the_folder_does() {
    let dir = testdata("crd-upgrade/v0-v1").display().to_string();
    let srv = serve(&dir);
    let from_url = query(&[&srv.1, "--upgrades-from", "1.0.1", "--upgrade-report"]);
    let from_dir = query(&[&dir, "--upgrades-from", "1.0.1", "--upgrade-report"]);
    assert_eq!(from_url, from_dir);
    assert_eq!(
        from_url["packages"][0]["channels"][0]["head"],
        "relabel.v1.1.0"
    );
    // What the URL must be: catalogd's 404 is reported, with the URL. The status is matched
    // with its reason: a bare "404" also matches a port number in the URL (a free port such as
    // 40412 or 34049).
    let out = run(&["catalog", "query", &format!("{}x", srv.1)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}x/api/v1/all: 404 Not Found", srv.1)),
        "{err}"
    );
}

/// A URL's user-info (reqwest sends it as Basic credentials) is never printed, whatever goes
/// wrong: no answer, an HTTP status, no such package. Failures are said in words, as the
/// registry commands say them, not as the HTTP library's chain of internals.
#[test]
fn a_urls_credentials_are_never_printed() {
    const SECRET: &str = "s3cret-pass";
    let refused = format!(
        "http://olmuser:{SECRET}@127.0.0.1:{}/catalogs/x",
        crate::support::registry::CLOSED_PORT
    );
    let dir = testdata("crd-upgrade/v0-v1").display().to_string();
    let srv = serve(&dir);
    let with_creds = srv
        .1
        .replacen("http://", &format!("http://olmuser:{SECRET}@"), 1);
    for args in [
        vec![refused.clone()],
        // The scheme in capitals is a URL too, not an image reference echoed back.
        vec![refused.replacen("http://", "HTTP://", 1)],
        // A raw '/' after the password: no parser can tell where the user-info ends.
        vec![format!("http://olmuser:{SECRET}/x@127.0.0.1:1/catalogs/x")],
        vec![format!("{with_creds}x?token={SECRET}")],
        vec![with_creds.clone(), "--package".into(), "nope".into()],
    ] {
        let mut all = vec!["catalog".to_string(), "query".to_string()];
        all.extend(args.iter().cloned());
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = run(&refs);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            !err.contains(SECRET),
            "{args:?} printed the password: {err}"
        );
        assert!(!err.contains("olmuser"), "{args:?} printed the user: {err}");
    }
    let out = run(&["catalog", "query", &refused]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "connection refused by 127.0.0.1:{}",
            crate::support::registry::CLOSED_PORT
        )),
        "{err}"
    );
    for internal in [
        "error sending request",
        "client error",
        "tcp connect error",
        "os error",
    ] {
        assert!(!err.contains(internal), "{internal}: {err}");
    }
}

/// A catalogd URL over https is checked against the system's roots plus `--ca-file`: a server
/// with a private CA is refused without it, and reached with it (the test registry's own
/// TLS server answers the catalogd path with 404, which shows the handshake passed). Statuses
/// are matched with their reason: the URL in the message carries the registry's free port,
/// which may itself read "404" or "401" (stop 56's CI failed on such a port).
#[test]
fn a_url_over_https_takes_the_ca_file() {
    use crate::support::registry::{Mode, Registry};
    let reg = Registry::start(Mode::TlsBasic);
    let url = format!("https://{}/catalogs/operatorhub", reg.host);
    let without = run(&["catalog", "query", &url]);
    let err = String::from_utf8_lossy(&without.stderr).to_string();
    assert_eq!(without.status.code(), Some(2), "{err}");
    assert!(
        !err.contains("404 Not Found") && !err.contains("401 Unauthorized"),
        "reached the server without its CA: {err}"
    );
    assert!(
        err.contains("certificate"),
        "not a certificate refusal: {err}"
    );
    let ca = reg.ca.clone().expect("ca").display().to_string();
    let with = run(&["catalog", "query", &url, "--ca-file", &ca]);
    let err = String::from_utf8_lossy(&with.stderr).to_string();
    eprintln!("with --ca-file: {err}");
    assert_eq!(with.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/catalogs/operatorhub/api/v1/all: 404 Not Found")
            || err.contains("/catalogs/operatorhub/api/v1/all: 401 Unauthorized"),
        "{err}"
    );
}

/// The upgrade choice of `package` from `from` in its only channel: (v1, v0).
fn choice(package: &str, from: &str) -> (Value, Value) {
    let dir = testdata("olmv1-query/order").display().to_string();
    let v = query(&[&dir, "--package", package, "--upgrades-from", from]);
    let up = &v["packages"][0]["upgrades"];
    assert_eq!(up.as_array().map(Vec::len), Some(1), "{v:#}");
    (up[0]["v1"].clone(), up[0]["v0"].clone())
}

/// OLM v0 (operator-lifecycle-manager's resolver, `sortChannel` and the subscription's
/// candidates) only upgrades to an entry of the channel's replaces chain from its head, skipped
/// entries left out: testdata/olmv1-query/order/docex, the operator-controller upgrade-support
/// document's example made a valid catalog (docex.v2.0.0 skips and skipRange-covers 1.0.0 but
/// is itself skipped by the head). From 1.0.0 OLM v1 takes 2.0.0; OLM v0 finds no upgrade.
#[test]
fn olm_v0_never_upgrades_to_a_skipped_entry() {
    assert_eq!(
        choice("docex", "1.0.0"),
        (json!("docex.v2.0.0"), Value::Null)
    );
    // From 2.0.0 both go to the head, which replaces it.
    assert_eq!(
        choice("docex", "2.0.0"),
        (json!("docex.v3.0.0"), json!("docex.v3.0.0"))
    );
}

/// OLM v1 orders successors as operator-controller's `ByVersionAndRelease`: registry+v1 build
/// metadata is the release when it parses as one (`+1`), and a version without a release
/// (`+01` has a leading zero: no release) orders below one with it, although semver's own
/// build-metadata order puts `+01` above `+1`.
#[test]
fn olm_v1_orders_successors_by_version_and_release() {
    assert_eq!(
        choice("relorder", "0.9.0"),
        (json!("relorder.v1.0.0+1"), json!("relorder.v1.0.0+1"))
    );
}

/// A bundle the catalog knows only through olm.csv.metadata is not judged installable: OLM v1
/// converts the bundle image's manifests (install strategy, webhooks, object kinds), which the
/// metadata does not hold. It is "unknown" (with the alpha-gate note when it lacks
/// AllNamespaces), "no" when the metadata already shows a blocker, and never listed by
/// `--installable olmv1`.
#[test]
fn csv_metadata_only_bundles_are_not_judged_installable() {
    let dir = testdata("olmv1-query/csv-metadata-only")
        .display()
        .to_string();
    let v = query(&[&dir]);
    let bundles = v["packages"][0]["bundles"].as_array().unwrap();
    let verdicts: Vec<(&str, &str)> = bundles
        .iter()
        .map(|b| (b["name"].as_str().unwrap(), b["olmv1"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("metaonly.v1.0.0", "unknown"),
            ("metaonly.v1.1.0", "unknown"),
            ("metaonly.v1.2.0", "no"),
        ]
    );
    let reasons = |i: usize| -> Vec<String> {
        bundles[i]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        reasons(0)
            .last()
            .unwrap()
            .contains("OLM v1 decides on the bundle image's manifests"),
        "{:?}",
        reasons(0)
    );
    assert!(
        reasons(1)
            .iter()
            .any(|r| r.starts_with("olmv1/no-all-namespaces")),
        "{:?}",
        reasons(1)
    );
    assert!(
        reasons(2).iter().any(|r| r.starts_with("olmv1/dependency")),
        "{:?}",
        reasons(2)
    );
    let only = query(&[&dir, "--installable", "olmv1"]);
    assert_eq!(only["packages"][0]["bundles"], json!([]));
}
