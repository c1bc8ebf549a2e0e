//! `catalog serve IMAGE --cache-dir PATH` (issue 41 item 1): the serve cache inside a catalog
//! image olmpack built is checked with the modes the image's layers give it (what opm hashes
//! in a container), not with the modes the unpacker wrote, so an image `catalog cache verify`
//! accepts starts, from a registry and from an OCI layout, and answers a gRPC client olmpack
//! did not write (Python grpcio, tests/support/serve_client.py), also as uid 1001 (the opm
//! image's user). A refused cache is a short message naming places as the image does, never
//! a temporary folder.

use crate::support::cmd::{olmpack, olmpack_path};
use crate::support::proc::{Bounded, LIMIT, as_user, can_switch_user, open_up};
use crate::support::registry::{Mode, Registry};
use crate::support::shared::{self, PYTHON, python_grpc_ready};
use std::path::{Path, PathBuf};
use std::process::Command;

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An empty base image (umoci), so the build puts its cache at /tmp/cache and names it in CMD
/// as `opm generate dockerfile` does.
fn base_image(dir: &Path) -> Option<String> {
    if !shared::tool("umoci", "umoci") {
        return None;
    }
    let base = dir.join("base");
    for args in [
        vec![
            "init".to_string(),
            "--layout".into(),
            base.display().to_string(),
        ],
        vec![
            "new".into(),
            "--image".into(),
            format!("{}:v1", base.display()),
        ],
    ] {
        let st = Command::new("umoci").args(&args).bounded_status().unwrap();
        assert!(st.success(), "umoci {args:?}");
    }
    Some(format!("oci:{}:v1", base.display()))
}

/// The Python client's `smoke` run (every RPC, health, reflection) on `source` served with
/// `--cache-dir /tmp/cache`, as `user` 1001 when asked (and possible).
fn smoke(source: &str, as_1001: bool) -> serde_json::Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = if as_1001 {
        // A home of its own: root's is not readable by uid 1001 (no credentials are needed).
        let mut c = as_user(PYTHON);
        c.env("HOME", "/nonexistent");
        c
    } else {
        Command::new(PYTHON)
    };
    let out = cmd
        .arg(root.join("tests/support/serve_client.py"))
        .args(["smoke"])
        .arg(olmpack_path())
        .arg(source)
        .arg(root.join("proto/registry.proto"))
        .args(["--cache-dir", "/tmp/cache"])
        .output_within(LIMIT)
        .expect("run python client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "serving {source} --cache-dir /tmp/cache (as 1001: {as_1001}) failed:\n{stderr}"
    );
    serde_json::from_slice(&out.stdout).expect("client prints JSON")
}

#[test]
fn an_image_cache_verify_accepts_is_served_from_registry_and_layout() {
    if !python_grpc_ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(base) = base_image(tmp.path()) else {
        return;
    };
    let catalog = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/catalogs/build-small");
    let reg = Registry::start(Mode::Plain);
    let pushed = reg.reference("olm/catalog", "v1");
    let layout = tmp.path().join("layout");
    let build = |extra: &[&str]| {
        let o = olmpack()
            .args(["catalog", "build"])
            .arg(&catalog)
            .args(["--base", &base])
            .args(extra)
            .bounded_output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    };
    build(&["-t", &pushed, "--push"]);
    build(&["--output", &format!("oci:{}:v1", layout.display())]);
    open_up(&layout);
    for entry in walk(&layout) {
        open_up(&entry);
    }
    let sources = [pushed.clone(), format!("oci:{}:v1", layout.display())];
    for source in &sources {
        // The reference verdict: `catalog cache verify` accepts the image's cache.
        let v = olmpack()
            .args(["catalog", "cache", "verify", source])
            .bounded_output()
            .unwrap();
        assert_eq!(v.status.code(), Some(0), "{}", text(&v));
        for as_1001 in [false, true] {
            if as_1001 && !can_switch_user() {
                continue;
            }
            let r = smoke(source, as_1001);
            assert_eq!(
                r["packages"],
                serde_json::json!(["build-demo", "build-other"]),
                "{r}"
            );
            assert_eq!(r["listBundles"], 3, "{r}");
            // Every call answered (these small bundles carry no CSV, so csvJson is empty).
            let failures = r["failures"].as_array().unwrap();
            assert!(failures.iter().all(|f| f["error"].is_null()), "{r}");
            assert_eq!(r["health"][""], "SERVING", "{r}");
            assert_eq!(r["exitAfterSigterm"], 0, "{r}");
        }
    }
    // The acceptance is said on stderr (the client above only sees answers).
    let said = start_lines(&sources[1]);
    assert!(
        said.iter()
            .any(|l| l.starts_with("serve cache /tmp/cache: digest") && l.contains("matches")),
        "{said:?}"
    );
    // A folder that is no serve cache: refused (exit 1) in a few lines naming the image's
    // paths, never the temporary folder the image was unpacked into.
    let scratch = tmp.path().join("tmpdir");
    std::fs::create_dir_all(&scratch).unwrap();
    for source in &sources {
        let o = olmpack()
            .env("TMPDIR", &scratch)
            .args(["catalog", "serve", source, "-p", "0", "--addr", "127.0.0.1"])
            .args(["--cache-dir", "/configs"])
            .bounded_output()
            .unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            t.contains("opm would not start on the serve cache at /configs"),
            "{t}"
        );
        assert!(
            !t.contains(scratch.to_str().unwrap()),
            "a temporary path: {t}"
        );
        assert!(!t.contains("olmpack-image-"), "a temporary path: {t}");
        assert!(t.lines().count() <= 20, "{} lines: {t}", t.lines().count());
    }
}

/// Every folder under `dir` (for [`open_up`]).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
                out.push(e.path());
            }
        }
    }
    out
}

/// The stderr lines of `catalog serve SOURCE --cache-dir /tmp/cache` until it serves (it is
/// stopped then), read on a thread so the wait has a deadline.
fn start_lines(source: &str) -> Vec<String> {
    use std::io::BufRead as _;
    let mut child = Command::new(olmpack_path())
        .args(["catalog", "serve", source, "-p", "0", "--addr", "127.0.0.1"])
        .args(["--cache-dir", "/tmp/cache"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while let Ok(line) =
        rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
    {
        let serving = line.contains(" gRPC on ");
        lines.push(line);
        if serving {
            break;
        }
    }
    crate::support::proc::stop(&mut child);
    lines
}
