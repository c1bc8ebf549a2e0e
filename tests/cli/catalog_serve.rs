//! `olmpack catalog serve` checked by clients olmpack did not write: Python grpcio (Debian's
//! `/usr/bin/python3` with python3-grpcio and python3-grpc-tools; stubs generated at test time
//! from `proto/registry.proto`) compared with opm's answers in `../shared/catalogs/serve/`, and
//! `curl` against catalogd's HTTP API. Skips (prints SKIPPED) without the shared data, the
//! Python modules or curl; fails under `OLMPACK_REQUIRE_CORPUS=1`. Speed and memory under load
//! are a benchmark (`just bench-serve-load`, benches/serve_load.rs); the test keeps correctness.

use crate::support::cmd::SERVE_ON_FREE_PORTS;
use crate::support::cmd::olmpack_path as olmpack;
use crate::support::proc::{Bounded, LIMIT, SHORT, spawn_with_stderr_lines};
use crate::support::shared::{self, PYTHON, python_grpc_ready as python_ready};

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn proto() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto/registry.proto")
}

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/serve_client.py")
}

/// Runs the Python client in `mode` and parses its JSON report; the client and the servers it
/// starts are bounded (every server start, call and stop has a deadline in the script, and the
/// client itself is killed at [`LIMIT`]).
fn client(args: &[&str]) -> serde_json::Value {
    let out = Command::new(PYTHON)
        .arg(client_script())
        .args(args)
        .output_within(LIMIT)
        .expect("run python client");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "python client {:?} failed: {}",
        args.first(),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("client prints JSON")
}

fn fbc_folder(catalogs: &Path, repo: &str, pkg: &str) -> PathBuf {
    catalogs
        .join("fbc")
        .join(repo)
        .join("catalogs/v4.18")
        .join(pkg)
}

#[test]
fn python_grpc_client_matches_opm_goldens() {
    let Some(catalogs) = shared::shared_catalogs("serve") else {
        return;
    };
    if !python_ready() {
        return;
    }
    let bin = olmpack();
    let report = client(&[
        "compare",
        bin.to_str().unwrap(),
        catalogs.join("fbc").to_str().unwrap(),
        catalogs.join("serve").to_str().unwrap(),
        proto().to_str().unwrap(),
    ]);
    eprintln!("{}", serde_json::to_string_pretty(&report).unwrap());
    assert_eq!(report["goldens"], 63, "every golden was compared");
    assert_eq!(
        report["matched"], report["goldens"],
        "mismatches: {}",
        report["mismatches"]
    );
    assert_eq!(report["failed_checks"], 0);
    assert_eq!(report["clean_exits"], 63, "every server exits 0 on SIGTERM");
}

#[test]
fn folders_opm_1_26_cannot_read_are_served() {
    let Some(catalogs) = shared::shared_catalogs("serve") else {
        return;
    };
    if !python_ready() {
        return;
    }
    for (repo, pkg) in [
        ("certified-operators", "kubecost-operator"),
        ("community-operators-prod", "alloydb-omni-operator"),
        ("community-operators-prod", "kairos-operator"),
        ("community-operators-prod", "layer7-operator"),
    ] {
        let folder = fbc_folder(&catalogs, repo, pkg);
        let r = client(&[
            "smoke",
            olmpack().to_str().unwrap(),
            folder.to_str().unwrap(),
            proto().to_str().unwrap(),
        ]);
        eprintln!("{repo}/{pkg}: {r}");
        assert_eq!(r["packages"], serde_json::json!([pkg]));
        assert!(r["listBundles"].as_u64().unwrap_or(0) > 0, "{r}");
        assert_eq!(r["failures"], serde_json::json!([]), "{r}");
        for name in ["", "Registry", "api.Registry", "nonsense"] {
            assert_eq!(r["health"][name], "SERVING");
        }
        assert_eq!(r["healthWatch"], "UNIMPLEMENTED");
        let services = serde_json::json!([
            "api.ExperimentalRegistry",
            "api.Registry",
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"
        ]);
        assert_eq!(r["reflectionV1"], services);
        assert_eq!(r["reflectionV1alpha"], services);
        assert_eq!(r["exitAfterSigterm"], 0);
    }
}

/// 32 clients at once get every answer (no failed call) and the server exits cleanly after; how
/// fast and in how much memory is `just bench-serve-load`.
#[test]
fn load_32_clients_listbundles_and_getbundle() {
    let Some(catalogs) = shared::shared_catalogs("serve") else {
        return;
    };
    if !python_ready() {
        return;
    }
    // The largest shared catalog (6 MB of bundles with CSV metadata).
    let folder = fbc_folder(&catalogs, "certified-operators", "cloud-native-postgresql");
    let r = client(&[
        "load",
        olmpack().to_str().unwrap(),
        folder.to_str().unwrap(),
        proto().to_str().unwrap(),
        "32",
        "2",
    ]);
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert_eq!(r["failures"], serde_json::json!([]));
    // Every client streamed ListBundles and called GetBundle at least once.
    assert!(r["listBundles"].as_u64().unwrap() >= 32, "{r}");
    assert!(r["getBundle"].as_u64().unwrap() >= 32, "{r}");
    assert_eq!(
        r["listBundlesMessages"].as_u64().unwrap(),
        r["listBundles"].as_u64().unwrap() * r["bundles"].as_u64().unwrap(),
        "every stream carried every bundle: {r}"
    );
    assert_eq!(r["exitAfterSigterm"], 0);
}

/// `olmpack catalog serve` with `--http`, its addresses read from stderr.
struct HttpServer {
    child: Child,
    http: String,
    base: String,
}

impl HttpServer {
    fn start(folder: &Path, name: Option<&str>) -> HttpServer {
        let mut cmd = Command::new(olmpack());
        cmd.args(["catalog", "serve"])
            .arg(folder)
            .args(SERVE_ON_FREE_PORTS);
        if let Some(n) = name {
            cmd.args(["--catalog-name", n]);
        }
        // Lines are read on a thread and handed over a channel, so the wait for the address has
        // a deadline even when the server prints nothing and never exits.
        let (mut child, rx) = spawn_with_stderr_lines(&mut cmd);
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut http = None;
        while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            if let Some(url) = line.strip_prefix("catalogd HTTP API on ") {
                http = Some(url.trim().to_string());
                break;
            }
        }
        let Some(url) = http else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not print its HTTP address within 120 s");
        };
        let base = url.trim_end_matches("/api/v1/all").to_string();
        let http = base.split("/catalogs/").next().unwrap().to_string();
        HttpServer { child, http, base }
    }

    fn stop(mut self) -> Option<i32> {
        unsafe_sigterm(self.child.id());
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        None
    }
}

fn unsafe_sigterm(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status_within(SHORT);
}

/// `curl -s -D - URL [args]`: (status, headers lowercased, body).
fn curl(url: &str, args: &[&str]) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let headers = dir.path().join("h");
    let out = Command::new("curl")
        .args(["-s", "--max-time", "60", "-D"])
        .arg(&headers)
        .args(args)
        .arg(url)
        .output_within(Duration::from_secs(90))
        .expect("curl");
    assert!(out.status.success(), "curl {url} {args:?}");
    let text = std::fs::read_to_string(&headers).unwrap();
    let mut lines = text.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap();
    let hs = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (status, hs, out.stdout)
}

fn header<'a>(hs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    hs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[test]
fn catalogd_http_api_answers_curl() {
    let Some(catalogs) = shared::shared_catalogs("fbc") else {
        return;
    };
    if !shared::tool("curl", "curl") {
        return;
    }
    let folder = fbc_folder(&catalogs, "community-operators-prod", "shipwright-operator");
    let srv = HttpServer::start(&folder, Some("operatorhubio"));
    let all = format!("{}/api/v1/all", srv.base);

    // Whole catalog: JSON Lines, each line a blob with sorted keys, compact.
    let (code, hs, body) = curl(&all, &[]);
    assert_eq!(code, 200);
    assert_eq!(header(&hs, "content-type"), Some("application/jsonl"));
    let last_modified = header(&hs, "last-modified").unwrap().to_string();
    let text = String::from_utf8(body.clone()).unwrap();
    assert!(text.ends_with('\n'));
    let mut schemas = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        // serde_json's map is sorted: re-encoding a sorted compact line gives it back.
        assert_eq!(serde_json::to_string(&v).unwrap(), line, "sorted, compact");
        schemas.push(v["schema"].as_str().unwrap().to_string());
    }
    assert!(schemas.contains(&"olm.package".to_string()));
    assert!(schemas.contains(&"olm.bundle".to_string()));
    assert_eq!(
        header(&hs, "content-length").map(|l| l.parse::<usize>().unwrap()),
        Some(body.len())
    );

    // If-Modified-Since → 304; an older date → 200.
    let (code, _, body304) = curl(
        &all,
        &["-H", &format!("If-Modified-Since: {last_modified}")],
    );
    assert_eq!(code, 304);
    assert!(body304.is_empty());
    let (code, _, _) = curl(
        &all,
        &["-H", "If-Modified-Since: Mon, 01 Jan 2001 00:00:00 GMT"],
    );
    assert_eq!(code, 200);

    // Range: exactly those bytes, 206 with Content-Range.
    let (code, hs, part) = curl(&all, &["-H", "Range: bytes=100-1099"]);
    assert_eq!(code, 206);
    assert_eq!(part, &body[100..1100]);
    assert_eq!(
        header(&hs, "content-range").unwrap(),
        format!("bytes 100-1099/{}", body.len())
    );
    let (code, _, tail) = curl(&all, &["-H", "Range: bytes=-50"]);
    assert_eq!(code, 206);
    assert_eq!(tail, &body[body.len() - 50..]);
    let (code, _, _) = curl(&all, &["-H", &format!("Range: bytes={}-", body.len())]);
    assert_eq!(code, 416);

    // gzip when asked (curl --compressed decodes it back).
    let (code, hs, gz) = curl(&all, &["-H", "Accept-Encoding: gzip"]);
    assert_eq!(code, 200);
    assert_eq!(header(&hs, "content-encoding"), Some("gzip"));
    assert!(gz.len() < body.len() / 2, "compressed");
    let (_, _, plain) = curl(&all, &["--compressed"]);
    assert_eq!(plain, body);

    // HEAD: headers, no body.
    let (code, hs, head) = curl(&all, &["-I"]);
    assert_eq!(code, 200);
    assert!(head.is_empty() || String::from_utf8_lossy(&head).starts_with("HTTP/"));
    assert_eq!(
        header(&hs, "content-length"),
        Some(body.len().to_string().as_str())
    );

    // metas: filters intersect; blobs in file order, as in /all.
    let metas = format!("{}/api/v1/metas", srv.base);
    let (code, hs, pkg) = curl(&format!("{metas}?schema=olm.package"), &[]);
    assert_eq!(code, 200);
    assert_eq!(header(&hs, "content-type"), Some("application/jsonl"));
    assert_eq!(String::from_utf8(pkg).unwrap().lines().count(), 1);
    let (_, _, bundles) = curl(
        &format!("{metas}?schema=olm.bundle&package=shipwright-operator"),
        &[],
    );
    let want: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"schema\":\"olm.bundle\""))
        .collect();
    let got = String::from_utf8(bundles).unwrap();
    assert_eq!(got.lines().collect::<Vec<_>>(), want);
    let (_, _, one) = curl(
        &format!("{metas}?schema=olm.bundle&name=shipwright-operator.v0.13.0"),
        &[],
    );
    assert_eq!(String::from_utf8(one).unwrap().lines().count(), 1);
    let (_, _, everything) = curl(&metas, &[]);
    assert_eq!(everything, body);

    // catalogd's errors.
    let (code, _, msg) = curl(&format!("{metas}?bogus=1"), &[]);
    assert_eq!((code, msg.as_slice()), (400, &b"400 Bad Request\n"[..]));
    let (code, _, msg) = curl(&format!("{}/catalogs/other/api/v1/all", srv.http), &[]);
    assert_eq!((code, msg.as_slice()), (404, &b"404 Not Found\n"[..]));
    let (code, _, msg) = curl(&format!("{}/catalogs/Bad_Name/api/v1/all", srv.http), &[]);
    assert_eq!(code, 400);
    assert!(
        String::from_utf8_lossy(&msg)
            .starts_with("invalid catalog name: a lowercase RFC 1123 subdomain")
    );
    let (code, _, msg) = curl(&all, &["-X", "POST"]);
    assert_eq!((code, msg.as_slice()), (405, &b"Method Not Allowed\n"[..]));
    let (code, _, _) = curl(&format!("{}/nothing", srv.http), &[]);
    assert_eq!(code, 404);

    assert_eq!(srv.stop(), Some(0), "clean exit on SIGTERM");
}

#[test]
fn mistyped_source_and_busy_port_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("termination-log");
    let out = Command::new(olmpack())
        .args(["catalog", "serve", "./no/such/catalog", "-p", "0", "-t"])
        .arg(&log)
        .bounded_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("./no/such/catalog"), "{stderr}");
    // opm writes its fatal error to the termination log; so do we.
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("./no/such/catalog"), "{written}");

    // A broken catalog never listens.
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(
        bad.join("catalog.json"),
        "{\"schema\": \"olm.package\", \"name\": ",
    )
    .unwrap();
    let out = Command::new(olmpack())
        .args(["catalog", "serve"])
        .arg(&bad)
        .args(["--addr", "127.0.0.1", "-p", "0", "-t"])
        .arg(dir.path().join("t2"))
        .bounded_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("catalog.json"), "{stderr}");

    // A port in use is named.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let good = dir.path().join("good");
    std::fs::create_dir(&good).unwrap();
    std::fs::write(
        good.join("c.yaml"),
        "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\npackage: p\nname: s\nentries:\n- name: p.v1.0.0\n---\nschema: olm.bundle\npackage: p\nname: p.v1.0.0\nimage: example.com/p:v1\nproperties:\n- type: olm.package\n  value:\n    packageName: p\n    version: 1.0.0\n",
    )
    .unwrap();
    let out = Command::new(olmpack())
        .args(["catalog", "serve"])
        .arg(&good)
        .args(["--addr", "127.0.0.1", "-p", &port, "-t"])
        .arg(dir.path().join("t3"))
        .bounded_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
}

/// A catalog that opm's model check refuses is refused at start with opm's text of its first
/// problem, and `catalog validate` reports the same problem under its rule: both read the one
/// model check (`catalog::model_check`). Before it, serve had its own checks and served these.
#[test]
fn refuses_what_opms_model_check_refuses_as_validate_does() {
    let broken = crate::support::fixtures::testdata("catalogs/broken");
    for (fixture, rule, text) in [
        (
            "stranded",
            "catalog/stranded",
            "invalid package \"foo\": invalid channel \"stable\": channel contains one or more stranded bundles: foo.v0.1.0",
        ),
        (
            "skip-range",
            "catalog/skip-range",
            "invalid package \"foo\": invalid channel \"stable\": invalid bundle \"foo.v0.2.0\": invalid skipRange \">=foo\": no version in \">=foo\"",
        ),
        (
            "replaces-cycle",
            "catalog/replaces-cycle",
            "invalid package \"foo\": invalid channel \"stable\": detected cycle in replaces chain of upgrade graph: foo.v0.3.0 -> foo.v0.2.0 -> foo.v0.1.0 -> foo.v0.3.0",
        ),
        (
            "duplicate-version",
            "catalog/duplicate-version",
            "invalid package \"foo\": duplicate versions found in bundles: [{0.1.0: [foo.v0.1.0, foo.v0.2.0]}]",
        ),
        (
            "package-name",
            "catalog/package-name",
            "invalid package name \"Foo_Operator\": [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name')]",
        ),
    ] {
        let dir = broken.join(fixture);
        let out = Command::new(olmpack())
            .args(["catalog", "serve"])
            .arg(&dir)
            .args(["--addr", "127.0.0.1", "-p", "0"])
            .bounded_output()
            .unwrap_or_else(|e| panic!("{fixture}: serve did not refuse it: {e}"));
        assert_eq!(out.status.code(), Some(2), "{fixture}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim_end().ends_with(text), "{fixture}: {stderr}");
        let out = Command::new(olmpack())
            .args(["catalog", "validate", "--color", "never"])
            .arg(&dir)
            .bounded_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{fixture}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("error[{rule}]")),
            "{fixture}: {stdout}"
        );
    }
}

/// Deprecations (no shared catalog has one) reach Package, Channel and Bundle as current opm
/// sends them, and a bundle without an image carries its synthesized CSV in ListBundles too.
/// The imageless bundle has an object (a CRD, as `opm render` of a bundle folder gives): opm's
/// model check refuses a bundle with neither image nor objects (`bundle image must be set`).
#[test]
fn deprecations_and_imageless_bundles() {
    if !python_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("catalog.yaml"),
        r#"schema: olm.package
name: p
defaultChannel: stable
description: the package
---
schema: olm.channel
package: p
name: stable
entries:
- name: p.v1.0.0
- name: p.v1.1.0
  replaces: p.v1.0.0
---
schema: olm.channel
package: p
name: candidate
entries:
- name: p.v1.1.0
---
schema: olm.bundle
package: p
name: p.v1.0.0
image: example.com/p:v1.0.0
properties:
- type: olm.package
  value: {packageName: p, version: 1.0.0}
---
schema: olm.bundle
package: p
name: p.v1.1.0
image: ""
properties:
- type: olm.package
  value: {packageName: p, version: 1.1.0}
- type: olm.bundle.object
  value: {data: eyJhcGlWZXJzaW9uIjoiYXBpZXh0ZW5zaW9ucy5rOHMuaW8vdjEiLCJraW5kIjoiQ3VzdG9tUmVzb3VyY2VEZWZpbml0aW9uIiwibWV0YWRhdGEiOnsibmFtZSI6ImZvb3MuZXhhbXBsZS5jb20ifX0=}
- type: olm.csv.metadata
  value: {displayName: P operator, annotations: {a: b}}
---
schema: olm.deprecations
package: p
entries:
- reference: {schema: olm.package}
  message: p is gone
- reference: {schema: olm.channel, name: candidate}
  message: use stable
- reference: {schema: olm.bundle, name: p.v1.0.0}
  message: v1.0.0 is broken
"#,
    )
    .unwrap();
    let r = client(&[
        "dump",
        olmpack().to_str().unwrap(),
        dir.path().to_str().unwrap(),
        proto().to_str().unwrap(),
    ]);
    let pkg = &r["getPackage"]["p"];
    assert_eq!(pkg["deprecation"]["message"], "p is gone", "{pkg}");
    assert_eq!(pkg["channels"][0]["name"], "candidate", "sorted: {pkg}");
    assert_eq!(pkg["channels"][0]["deprecation"]["message"], "use stable");
    assert!(pkg["channels"][1].get("deprecation").is_none());
    let lb = r["listBundles"].as_array().unwrap();
    let order: Vec<(String, String)> = lb
        .iter()
        .map(|b| {
            (
                b["channelName"].as_str().unwrap().to_string(),
                b["csvName"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("candidate".into(), "p.v1.1.0".into()),
            ("stable".into(), "p.v1.0.0".into()),
            ("stable".into(), "p.v1.1.0".into())
        ]
    );
    // The imageless bundle keeps its synthesized CSV in ListBundles; the other has none.
    let csv: serde_json::Value =
        serde_json::from_str(lb[0]["csvJson"].as_str().expect("csvJson sent")).unwrap();
    assert_eq!(csv["metadata"]["name"], "p.v1.1.0");
    assert_eq!(csv["spec"]["displayName"], "P operator");
    assert_eq!(csv["spec"]["description"], "the package");
    assert!(lb[1].get("csvJson").is_none());
    assert_eq!(lb[1]["deprecation"]["message"], "v1.0.0 is broken");
    // ListBundles carries the channel's replaces; GetBundle blanks it.
    assert_eq!(lb[2]["replaces"], "p.v1.0.0");
    assert!(r["getBundle"][2].get("replaces").is_none());
    assert_eq!(r["exitAfterSigterm"], 0);
}

/// `curl -s -D - URL [args]` that tolerates curl's own failures (a truncated body, an empty
/// reply from a handler that panicked): (curl's exit code, status, headers lowercased, body).
fn curl_any(url: &str, args: &[&str]) -> (i32, u16, Vec<(String, String)>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let headers = dir.path().join("h");
    let out = Command::new("curl")
        .args(["-s", "--max-time", "20", "-D"])
        .arg(&headers)
        .args(args)
        .arg(url)
        .output_within(Duration::from_secs(60))
        .expect("curl");
    let text = std::fs::read_to_string(&headers).unwrap_or_default();
    let mut lines = text.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let hs = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (out.status.code().unwrap_or(-1), status, hs, out.stdout)
}

/// Go's `http.ServeContent` over the same bytes and modification time
/// (`tests/support/gorange/main.go`), stopped when dropped (its standard input closes).
struct GoServer {
    child: Child,
    url: String,
}

impl GoServer {
    fn start(body: &Path, modified: u64, work: &Path) -> GoServer {
        let mut child = crate::support::go::go_run("gorange/main.go", work)
            .arg(body)
            .arg(modified.to_string())
            .spawn()
            .expect("go run");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // Compiling net/http the first time takes a while on a busy machine.
        let Ok(line) = rx.recv_timeout(Duration::from_secs(300)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the Go server did not print its address within 300 s");
        };
        assert!(line.starts_with("http://"), "Go server said {line:?}");
        GoServer {
            child,
            url: line.trim().to_string(),
        }
    }
}

impl Drop for GoServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every form of `Range` gets Go's answer (issue 40.9): a number past `i64::MAX` is a
/// malformed header (416, no `Content-Range`), never an overflow that answered 206 with a
/// content length of 18446744073709551611 and no body (and panicked in a debug build). Checked
/// against the expected table always, and against Go's own `http.ServeContent` over the same
/// bytes where Go is installed.
#[test]
fn range_headers_get_gos_answers() {
    if !shared::tool("curl", "curl") {
        return;
    }
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/valid-basic");
    let srv = HttpServer::start(&folder, Some("basic"));
    let all = format!("{}/api/v1/all", srv.base);
    let (code, hs, body) = curl(&all, &[]);
    assert_eq!(code, 200);
    let n = body.len();
    assert!(n > 200, "a body to cut ranges from");
    let modified = header(&hs, "last-modified").unwrap().to_string();
    let secs = httpdate::parse_http_date(&modified)
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();

    // (Range, If-Range, status, Content-Range, body).
    type Want = (u16, Option<String>, Vec<u8>);
    let cr = |a: usize, b: i64| Some(format!("bytes {a}-{b}/{n}"));
    let last = n as i64 - 1;
    let cases: Vec<(String, Option<&str>, Want)> = vec![
        (
            "bytes=0-9".into(),
            None,
            (206, cr(0, 9), body[..10].to_vec()),
        ),
        (
            "bytes=-10".into(),
            None,
            (206, cr(n - 10, last), body[n - 10..].to_vec()),
        ),
        (
            "bytes=5-".into(),
            None,
            (206, cr(5, last), body[5..].to_vec()),
        ),
        (
            format!("bytes={n}-"),
            None,
            (
                416,
                Some(format!("bytes */{n}")),
                b"invalid range: failed to overlap\n".to_vec(),
            ),
        ),
        (
            "bytes=5-18446744073709551615".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "bytes=5-9223372036854775807".into(),
            None,
            (206, cr(5, last), body[5..].to_vec()),
        ),
        (
            "bytes=5-9223372036854775808".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "bytes=18446744073709551615-".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "bytes=9223372036854775807-".into(),
            None,
            (
                416,
                Some(format!("bytes */{n}")),
                b"invalid range: failed to overlap\n".to_vec(),
            ),
        ),
        (
            "bytes=-18446744073709551615".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "bytes=-9223372036854775807".into(),
            None,
            (206, cr(0, last), body.clone()),
        ),
        ("bytes=-0".into(), None, (206, cr(n, last), Vec::new())),
        (
            "bytes=--5".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "bytes=+5-+9".into(),
            None,
            (206, cr(5, 9), body[5..10].to_vec()),
        ),
        (
            "bytes=9-5".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "bytes=5".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            "items=0-9".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        ("bytes=".into(), None, (200, None, body.clone())),
        (
            "bytes=0-9,x".into(),
            None,
            (416, None, b"invalid range\n".to_vec()),
        ),
        (
            format!("bytes={n}-,0-4"),
            None,
            (206, cr(0, 4), body[..5].to_vec()),
        ),
        (
            format!("bytes={n}-,{}-", n + 5),
            None,
            (
                416,
                Some(format!("bytes */{n}")),
                b"invalid range: failed to overlap\n".to_vec(),
            ),
        ),
        (
            format!("bytes=0-{last},0-{last}"),
            None,
            (200, None, body.clone()),
        ),
        (
            "bytes=0-9".into(),
            Some(modified.as_str()),
            (206, cr(0, 9), body[..10].to_vec()),
        ),
        (
            "bytes=0-9".into(),
            Some("Mon, 01 Jan 2001 00:00:00 GMT"),
            (200, None, body.clone()),
        ),
        (
            "bytes=0-9".into(),
            Some("\"some-etag\""),
            (200, None, body.clone()),
        ),
    ];
    let ask = |url: &str, range: &str, if_range: Option<&str>| {
        let range = format!("Range: {range}");
        let mut args = vec!["-H", range.as_str()];
        let if_range = if_range.map(|v| format!("If-Range: {v}"));
        if let Some(h) = &if_range {
            args.extend(["-H", h.as_str()]);
        }
        curl_any(url, &args)
    };
    for (range, if_range, (status, content_range, want)) in &cases {
        let (exit, got, hs, bytes) = ask(&all, range, *if_range);
        let what = format!("Range: {range} If-Range: {if_range:?}");
        assert_eq!(exit, 0, "{what}: curl failed (truncated or empty reply)");
        assert_eq!(got, *status, "{what}");
        assert_eq!(
            header(&hs, "content-range"),
            content_range.as_deref(),
            "{what}"
        );
        assert_eq!(&bytes, want, "{what}");
        if *status != 416 {
            assert_eq!(
                header(&hs, "content-length"),
                Some(want.len().to_string().as_str()),
                "{what}"
            );
        }
    }
    // The server is still whole after all of them.
    let (code, _, again) = curl(&all, &[]);
    assert_eq!((code, again.len()), (200, n));

    if crate::support::go::go_available() {
        let work = tempfile::tempdir().unwrap();
        let file = work.path().join("all.jsonl");
        std::fs::write(&file, &body).unwrap();
        let go = GoServer::start(&file, secs, work.path());
        for (range, if_range, _) in &cases {
            let ours = ask(&all, range, *if_range);
            let gos = ask(&go.url, range, *if_range);
            let what = format!("Range: {range} If-Range: {if_range:?}");
            assert_eq!(ours.0, gos.0, "{what}: curl exit");
            assert_eq!(ours.1, gos.1, "{what}: status");
            assert_eq!(
                header(&ours.2, "content-range"),
                header(&gos.2, "content-range"),
                "{what}"
            );
            assert_eq!(ours.3, gos.3, "{what}: body");
        }
        // The one deliberate difference: several valid ranges get the whole body (RFC 9110
        // allows it) where Go answers multipart/byteranges.
        let (_, status, _, whole) = ask(&all, "bytes=0-9,20-29", None);
        assert_eq!((status, whole.len()), (200, n));
        let (_, status, hs, _) = ask(&go.url, "bytes=0-9,20-29", None);
        assert_eq!(status, 206);
        assert!(header(&hs, "content-type").is_some_and(|t| t.starts_with("multipart/byteranges")));
    }
    assert_eq!(srv.stop(), Some(0), "clean exit on SIGTERM");
}
