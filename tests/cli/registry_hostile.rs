//! The registry client against hostile registries (issue 40): small Python servers on
//! 127.0.0.1 (`tests/support/hostile_registry.py`) that redirect to a host asking for the
//! user's password, send endless token responses, trickle bodies, put terminal escape sequences
//! in error texts, page tag lists without end, or serve oversize manifests; and the real
//! `docker-registry` next to a recording server for credential binding. Every run is bounded
//! and every server stops by itself.

use crate::support::hostile::Hostile;
use crate::support::proc::Bounded;
use crate::support::registry::{self as support, Mode, PASSWORD, Registry, USER};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn creds() -> String {
    format!("{USER}:{PASSWORD}")
}

/// The binary with an isolated credential environment, bounded.
fn run(home: &Path, args: &[&str]) -> Output {
    let mut c = crate::support::cmd::olmpack_without_credentials(home);
    c.env("NO_COLOR", "1")
        .current_dir(home)
        .args(args)
        .timeout(Duration::from_secs(120));
    c.bounded_output().expect("run olmpack")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the binary under `/usr/bin/time -v`: its output and peak RSS in KiB (`None` without
/// the tool).
fn run_measured(home: &Path, args: &[&str]) -> (Output, Option<u64>) {
    let report = home.join("time.txt");
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-v")
            .arg("-o")
            .arg(&report)
            .arg(crate::support::cmd::olmpack_path());
        c
    } else {
        Command::new(crate::support::cmd::olmpack_path())
    };
    cmd.args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env_remove("DOCKER_CONFIG")
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = crate::support::proc::wait_output(
        cmd.spawn().expect("start olmpack"),
        Duration::from_secs(120),
    );
    let rss = std::fs::read_to_string(&report).ok().and_then(|t| {
        t.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("Maximum resident set size (kbytes): ")
            })
            .and_then(|v| v.trim().parse().ok())
    });
    // `time -v` reports a child killed by a signal in its own exit status.
    (out, rss)
}

/// A registry that redirects blob downloads to a host answering `401 Bearer
/// realm="http://that-host/steal"`: the Basic credentials must never reach that host (neither
/// on the redirected request nor at the hostile realm), and the copy fails saying why.
#[test]
fn a_redirect_target_asking_for_credentials_gets_none() {
    let h = Hostile::start("redirect");
    let home = tempfile::tempdir().expect("tempdir");
    let dest = format!("oci:{}", home.path().join("out").display());
    let src = format!("{}/app/img:v1", h.front);
    let c = creds();
    let out = run(
        home.path(),
        &["copy", &src, &dest, "--src-creds", &c, "--retries", "1"],
    );
    let all = text(&out);
    let seen = h.seen();
    assert!(
        seen.iter().any(|s| s.server == "other"),
        "the redirect was followed: {seen:?}"
    );
    let leaked: Vec<_> = h
        .leaked(USER, PASSWORD)
        .into_iter()
        .filter(|s| s.server == "other")
        .collect();
    assert!(
        leaked.is_empty(),
        "credentials sent to the redirect target: {leaked:?}\n{all}"
    );
    assert!(
        !seen
            .iter()
            .any(|s| s.server == "other" && s.authorization.is_some()),
        "any Authorization to the redirect target: {seen:?}"
    );
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("redirected"), "{all}");
    assert!(!all.contains(PASSWORD), "{all}");
}

/// A registry whose upload `Location` names another host: the upload goes there without the
/// credentials (the same-origin check on absolute URLs).
#[test]
fn an_upload_location_on_another_host_gets_no_credentials() {
    let h = Hostile::start("upload");
    let home = tempfile::tempdir().expect("tempdir");
    let layout = home.path().join("layout");
    let img = home.path().join("img");
    std::fs::create_dir_all(&img).expect("mkdir");
    let image = support::bundle_image(&img, 0, "testop");
    support::write_layout(&image, &layout, "v1");
    let src = format!("oci:{}:v1", layout.display());
    let dst = format!("{}/app/img:v1", h.front);
    let c = creds();
    let out = run(
        home.path(),
        &["copy", &src, &dst, "--dest-creds", &c, "--retries", "1"],
    );
    let seen = h.seen();
    assert!(
        seen.iter()
            .any(|s| s.server == "other" && s.path.starts_with("/upload/")),
        "the upload went to the other host: {seen:?}\n{}",
        text(&out)
    );
    assert!(
        seen.iter()
            .any(|s| s.server == "front" && s.authorization.is_some()),
        "the registry itself got the credentials: {seen:?}"
    );
    let leaked: Vec<_> = seen
        .iter()
        .filter(|s| s.server == "other" && s.authorization.is_some())
        .collect();
    assert!(
        leaked.is_empty(),
        "credentials sent to the upload host: {leaked:?}"
    );
}

/// A catalog in a registry that asks for credentials (the real registry with bearer tokens),
/// whose content names images on a second registry (a recording server asking for a token):
/// `--creds`/`--src-creds` for the first never reach the second, in `catalog mirror
/// --dry-run`, `catalog render` and `copy`; a catalog folder (no registry on the command line)
/// needs `REGISTRY=USER:PASSWORD`, which binds them to that registry alone.
#[test]
fn explicit_creds_go_only_to_the_registry_named() {
    let a = Registry::start(Mode::Token);
    let b = Hostile::start("record");
    let home = tempfile::tempdir().expect("tempdir");
    let d = home.path();
    let pkg = d.join("catalog").join("op");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    let bundle_image = format!("{}/ns/op-bundle:v1", b.other);
    let related = format!("{}/ns/op:v1", b.other);
    let blobs = [
        json!({"schema": "olm.package", "name": "op", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "package": "op", "name": "stable", "entries": [{"name": "op.v1.0.0"}]}),
        json!({"schema": "olm.bundle", "name": "op.v1.0.0", "package": "op", "image": bundle_image,
            "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.0.0"}}],
            "relatedImages": [{"name": "op", "image": related}]}),
    ];
    let text_blobs: String = blobs
        .iter()
        .map(|v| serde_json::to_string(v).expect("json") + "\n")
        .collect();
    std::fs::write(pkg.join("catalog.json"), text_blobs).expect("write catalog");
    let catalog = format!("{}/olm/catalog:v1", a.host);
    let c = creds();
    let dir = d.join("catalog").display().to_string();
    let out = run(
        d,
        &[
            "catalog", "build", &dir, "--push", "-t", &catalog, "--creds", &c,
        ],
    );
    assert!(out.status.success(), "catalog build --push: {}", text(&out));
    let token = a.token.as_ref().expect("token server");
    assert!(
        token.calls().iter().any(|t| t.authorized),
        "the named registry got the credentials"
    );

    let check = |what: &str, out: &Output| {
        let leaked = b.leaked(USER, PASSWORD);
        assert!(
            leaked.is_empty(),
            "{what}: credentials sent to a registry the catalog names: {leaked:?}\n{}",
            text(out)
        );
    };
    let out = run(
        d,
        &[
            "catalog",
            "mirror",
            &catalog,
            "--dry-run",
            "--src-creds",
            &c,
            "--results-dir",
            "r1",
        ],
    );
    assert!(
        b.seen().iter().any(|s| s.server == "other"),
        "the mirror asked the second registry: {}",
        text(&out)
    );
    check("catalog mirror --dry-run", &out);
    let out = run(
        d,
        &["catalog", "render", &catalog, "--creds", &c, "-o", "json"],
    );
    assert!(out.status.success(), "render: {}", text(&out));
    check("catalog render", &out);
    let target = format!("{}/copied/catalog:v1", b.other);
    let out = run(
        d,
        &[
            "copy",
            &catalog,
            &target,
            "--src-creds",
            &c,
            "--retries",
            "1",
        ],
    );
    check("copy", &out);

    // A folder names no registry: plain credentials are refused, bound ones go where bound.
    let seen_before = b.seen().len();
    let dry_run = |creds: &str, results_dir: &str| {
        run(
            d,
            &[
                "catalog",
                "mirror",
                &dir,
                "--dry-run",
                "--src-creds",
                creds,
                "--results-dir",
                results_dir,
            ],
        )
    };
    let out = dry_run(&c, "r2");
    check("catalog mirror FOLDER --dry-run", &out);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--src-creds REGISTRY=USER:PASSWORD"),
        "{}",
        text(&out)
    );
    assert_eq!(
        b.seen().len(),
        seen_before,
        "nothing was sent after the usage error"
    );
    let bound = format!("{}={c}", a.host);
    let out = dry_run(&bound, "r3");
    check("catalog mirror FOLDER --src-creds REGISTRY=…", &out);
    assert!(
        b.seen().len() > seen_before,
        "the second registry was asked: {}",
        text(&out)
    );
}

/// A token service that never stops sending: the token response is cut at 1 MiB, the run
/// fails saying so, and memory stays small.
#[test]
fn an_endless_token_response_is_cut_at_1_mib() {
    let h = Hostile::start("tokenbomb");
    let home = tempfile::tempdir().expect("tempdir");
    let image = format!("{}/app/img:v1", h.front);
    let started = Instant::now();
    let (out, rss) = run_measured(
        home.path(),
        &["bundle", "inspect", &image, "--retries", "1"],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("response larger than 1024 KiB"), "{all}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    if let Some(kib) = rss {
        assert!(kib < 200 * 1024, "peak RSS {kib} KiB");
    }
}

/// Error texts from a registry carrying terminal escape sequences, BEL, CR, BS and a C1 CSI:
/// printed escaped, so none reaches the terminal as a control character.
#[test]
fn registry_error_text_cannot_drive_the_terminal() {
    let h = Hostile::start("escape");
    let home = tempfile::tempdir().expect("tempdir");
    let image = format!("{}/app/img:v1", h.front);
    let out = run(
        home.path(),
        &["bundle", "inspect", &image, "--retries", "1"],
    );
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("DENIED"),
        "the registry's error is shown: {all}"
    );
    assert!(all.contains("\\u{1b}]0;pwned"), "escaped: {all}");
    let bad: Vec<char> = all
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(
        bad.is_empty(),
        "control characters printed: {bad:?} in {all:?}"
    );
}

/// A manifest body sent one byte a second: with `--timeout 3` the request fails within
/// seconds (the deadline covers the body, not each read).
#[test]
fn a_trickling_body_hits_the_request_deadline() {
    let h = Hostile::start("trickle");
    let home = tempfile::tempdir().expect("tempdir");
    let image = format!("{}/app/img:v1", h.front);
    let started = Instant::now();
    let out = run(
        home.path(),
        &[
            "bundle",
            "inspect",
            &image,
            "--retries",
            "1",
            "--timeout",
            "3",
        ],
    );
    let took = started.elapsed();
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {all}");
    assert!(all.to_lowercase().contains("timed out"), "{all}");
}

/// A manifest of 64 MiB (valid JSON, a huge annotation): refused at the 4 MiB cap, not read
/// whole and used.
#[test]
fn an_oversize_manifest_is_refused() {
    let h = Hostile::start("bigmanifest");
    let home = tempfile::tempdir().expect("tempdir");
    let image = format!("{}/app/img:v1", h.front);
    let (out, rss) = run_measured(
        home.path(),
        &["bundle", "inspect", &image, "--retries", "1"],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("is too large: more than 4194304 bytes"),
        "{all}"
    );
    if let Some(kib) = rss {
        assert!(kib < 200 * 1024, "peak RSS {kib} KiB");
    }
}

/// Tag lists in pages: relative `Link` targets resolved against the page's URL (every tag of
/// three pages found), and a list of endless 1 MiB pages stopped at the byte cap after a few
/// pages, not a hundred.
#[test]
fn tag_list_pages_resolve_relative_links_and_stop_at_the_byte_cap() {
    use olmpack::registry::auth::ResolvedCredential;
    use olmpack::registry::client::{Client, ClientOptions};
    let h = Hostile::start("tags");
    let client = Client::new(
        &h.front,
        ResolvedCredential::anonymous(),
        &ClientOptions::default(),
    )
    .expect("client");
    let tags = olmpack::registry::tags::list(&client, "small").expect("small tag list");
    let mut tags: Vec<String> = tags.into_iter().collect();
    tags.sort();
    assert_eq!(
        tags,
        [
            "sha256-1.sig",
            "sha256-2.sig",
            "sha256-3.sig",
            "t1",
            "t2",
            "t3"
        ]
    );
    let err = olmpack::registry::tags::list(&client, "big").expect_err("endless pages");
    assert!(err.to_string().contains("too large"), "{err}");
    let pages = h
        .seen()
        .iter()
        .filter(|s| s.path.starts_with("/v2/big/tags/list"))
        .count();
    assert!(pages <= 20, "{pages} pages read");
}
