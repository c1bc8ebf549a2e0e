//! Ctrl-C (SIGINT) in the middle of commands that write (issue 41 items 3 and 4), sent at
//! several points of real runs: the run ends with exit 130 and the one line `interrupted`
//! (no error quoting a temporary path), leaves no temporary folder in `$TMPDIR` (a test
//! folder here, listed after each run) and no output; a mirror archive never holds staging
//! folders or partial blobs, and a run after a killed one (SIGKILL: nothing could clean up)
//! removes what that run left staged.

use crate::support::cmd::olmpack_path;
use crate::support::proc::wait_output;
use crate::support::registry::{Mode, Registry, sha256};
use crate::support::shared;
use olmpack::image::{Blob, BlobSource, Descriptor, Image};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How many interrupts each test sends (one run each).
const POINTS: u32 = 6;

fn start(args: &[&str], tmpdir: &Path, cwd: &Path) -> Child {
    Command::new(olmpack_path())
        .args(args)
        .env("TMPDIR", tmpdir)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start olmpack")
}

fn signal(child: &Child, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status();
}

/// Runs `args` to the end and returns how long it took (the interrupts are spread over it).
fn timed(args: &[&str], tmpdir: &Path, cwd: &Path) -> Duration {
    let t = Instant::now();
    let o = wait_output(start(args, tmpdir, cwd), Duration::from_secs(600));
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    t.elapsed()
}

/// Runs `args`, waits until `ready` says the run is under way (or it ended), then `after`
/// more, sends SIGINT, and returns the output. Tied to the run's progress, not to a share of
/// a timed run: on a loaded machine two runs of the same command differ several times over.
fn interrupted(
    args: &[&str],
    tmpdir: &Path,
    cwd: &Path,
    ready: &dyn Fn() -> bool,
    after: Duration,
) -> Output {
    let mut child = start(args, tmpdir, cwd);
    let deadline = Instant::now() + Duration::from_secs(300);
    while !ready() && Instant::now() < deadline && child.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(after);
    signal(&child, "-INT");
    wait_output(child, Duration::from_secs(120))
}

/// The points the interrupts are sent at, after the run is under way.
const AFTER_MS: [u64; POINTS as usize] = [0, 50, 250, 1000, 2000, 4000];

fn listing(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Files and folders under `dir`, at any depth.
fn count_entries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    1 + if e.file_type().is_ok_and(|t| t.is_dir()) {
                        count_entries(&e.path())
                    } else {
                        0
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// The bytes of the files under `dir`.
fn tree_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                tree_size(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

/// An interrupted run: exit 130, stderr ending in the one line `interrupted` with nothing
/// that reads as an error, no temporary path quoted.
fn assert_interrupted(what: &str, o: &Output, tmpdir: &Path) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{what}: {:?}: {err}", o.status);
    assert_eq!(err.lines().last(), Some("interrupted"), "{what}: {err}");
    assert_eq!(
        err.matches("interrupted").count(),
        1,
        "{what}: one line: {err}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("error")) && !err.contains("internal error"),
        "{what}: a false error: {err}"
    );
    assert!(
        !err.contains(tmpdir.to_str().unwrap()),
        "{what}: a temporary path: {err}"
    );
}

#[test]
fn ctrl_c_during_catalog_build_leaves_nothing() {
    let Some(catalogs) = shared::shared_catalogs("fbc") else {
        return;
    };
    // The smallest packages of a real catalog, about 1 MB of it (a debug build of the whole
    // catalog takes minutes on a loaded machine).
    let whole = catalogs.join("fbc/certified-operators/catalogs/v4.18");
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    let mut packages: Vec<(u64, PathBuf)> = std::fs::read_dir(&whole)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| (tree_size(&e.path()), e.path()))
        .collect();
    packages.sort();
    let mut total = 0;
    for (size, package) in packages {
        if total + size > 1 << 20 {
            break;
        }
        total += size;
        crate::support::fs::copy_dir(&package, &catalog.join(package.file_name().unwrap()));
    }
    shared::cases(
        "interrupted catalog build packages",
        listing(&catalog).len(),
        8,
    );
    let tmpdir = tmp.path().join("tmpdir");
    let outs = tmp.path().join("outs");
    std::fs::create_dir_all(&tmpdir).unwrap();
    std::fs::create_dir_all(&outs).unwrap();
    let args = |out: &str| -> Vec<String> {
        vec![
            "catalog".into(),
            "build".into(),
            catalog.display().to_string(),
            "--cache".into(),
            "--output".into(),
            format!("oci:{}", outs.join(out).display()),
        ]
    };
    // The points, by the run's progress: its temporary folder appears (then and a second
    // later), the serve cache is being written into it (10, then 50 files: threads writing
    // while the folder is removed), the output layout is being staged beside the output.
    let files = |n: usize| {
        let tmpdir = tmpdir.clone();
        move || count_entries(&tmpdir) >= n
    };
    let staging = || listing(&outs).iter().any(|n| n.starts_with(".olmpack-"));
    type Ready<'a> = Box<dyn Fn() -> bool + 'a>;
    let points: [(&str, Ready<'_>, u64); POINTS as usize] = [
        ("its temporary folder appeared", Box::new(files(1)), 0),
        ("its temporary folder appeared", Box::new(files(1)), 1000),
        (
            "10 files were in its temporary folder",
            Box::new(files(10)),
            0,
        ),
        (
            "50 files were in its temporary folder",
            Box::new(files(50)),
            0,
        ),
        ("the output was being staged", Box::new(staging), 0),
        ("the output was being staged", Box::new(staging), 300),
    ];
    let mut stopped = 0;
    for (i, (when, ready, ms)) in points.iter().enumerate() {
        let after = Duration::from_millis(*ms);
        let name = format!("out{i}");
        let a = args(&name);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = interrupted(&a, &tmpdir, tmp.path(), ready.as_ref(), after);
        let what = format!("SIGINT {after:?} after {when}");
        if o.status.success() {
            // Finished before the signal: a complete output, nothing else.
            assert_eq!(listing(&outs), vec![name.clone()], "{what}");
            std::fs::remove_dir_all(outs.join(&name)).unwrap();
        } else {
            assert_interrupted(&what, &o, &tmpdir);
            assert_eq!(listing(&outs), Vec::<String>::new(), "{what}: an output");
            stopped += 1;
        }
        assert_eq!(
            listing(&tmpdir),
            Vec::<String>::new(),
            "{what}: left in TMPDIR"
        );
    }
    // An optimized build finishes this catalog quickly, so the later points may come after
    // the run ended (each such run is checked as a complete output above); at least two runs
    // must have been interrupted for the test to have tested anything.
    assert!(stopped >= 2, "only {stopped} runs were interrupted");
}

/// Incompressible bytes (xorshift), so blobs take their full size on the wire and on disk.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// An image with one large layer (its bytes are never unpacked: a mirror copies blobs).
fn big_image(seed: u64, mib: usize) -> Image {
    let blob = |media: &str, bytes: Vec<u8>| Blob {
        descriptor: Descriptor {
            media_type: media.into(),
            digest: sha256(&bytes),
            size: bytes.len() as u64,
        },
        source: BlobSource::Memory(bytes),
    };
    let layer = blob(
        "application/vnd.oci.image.layer.v1.tar+gzip",
        noise(seed, mib << 20),
    );
    let config = serde_json::json!({
        "architecture": "amd64",
        "os": "linux",
        "config": {},
        "rootfs": {"type": "layers", "diff_ids": [layer.descriptor.digest]},
    });
    let config = blob(
        "application/vnd.oci.image.config.v1+json",
        serde_json::to_vec(&config).unwrap(),
    );
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config.descriptor.media_type, "digest": config.descriptor.digest, "size": config.descriptor.size},
        "layers": [{"mediaType": layer.descriptor.media_type, "digest": layer.descriptor.digest, "size": layer.descriptor.size}],
    });
    Image {
        manifest: blob(
            "application/vnd.oci.image.manifest.v1+json",
            serde_json::to_vec(&manifest).unwrap(),
        ),
        config,
        layers: vec![layer],
    }
}

/// Whether a `.olmpack-…` entry (staging) is under `dir` (a copy is writing).
fn has_staging(dir: &Path) -> bool {
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(".olmpack-") {
                return true;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            }
        }
    }
    false
}

/// Every `.olmpack-…` entry (staging) under `dir`, the layout locks aside, and every blob
/// whose bytes do not hash to its name (a partial blob).
fn staging_and_partial_blobs(dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if name.starts_with(".olmpack-") {
                bad.push(format!("staging {}", path.display()));
            }
            if e.file_type().unwrap().is_dir() {
                todo.push(path);
            } else if d.ends_with("blobs/sha256") && !name.starts_with('.') {
                let bytes = std::fs::read(&path).unwrap();
                if sha256(&bytes) != format!("sha256:{name}") {
                    bad.push(format!("partial blob {}", path.display()));
                }
            }
        }
    }
    bad.sort();
    bad
}

#[test]
fn ctrl_c_during_mirror_to_archive_leaves_no_staging_and_a_rerun_cleans_a_killed_one() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let tmpdir = d.join("tmpdir");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let reg = Registry::start(Mode::Plain);
    let c = super::copy::client(&reg.host);
    // A catalog folder whose bundle and related images are large images on the registry.
    let mut related = Vec::new();
    for (i, repo) in ["big/bundle", "big/a", "big/b", "big/c", "big/d"]
        .iter()
        .enumerate()
    {
        let image = big_image(i as u64 + 1, 6);
        olmpack::registry::push::push_image(
            &c,
            &image,
            repo,
            &["v1".to_string()],
            &super::copy::silent(),
        )
        .expect("push");
        related.push(format!("{}/{repo}:v1", reg.host));
    }
    let catalog = d.join("catalog");
    std::fs::create_dir_all(catalog.join("big")).unwrap();
    let blobs = [
        serde_json::json!({"schema": "olm.package", "name": "big", "defaultChannel": "stable"}),
        serde_json::json!({"schema": "olm.channel", "name": "stable", "package": "big", "entries": [{"name": "big.v1.0.0"}]}),
        serde_json::json!({
            "schema": "olm.bundle", "name": "big.v1.0.0", "package": "big", "image": related[0],
            "properties": [{"type": "olm.package", "value": {"packageName": "big", "version": "1.0.0"}}],
            "relatedImages": related.iter().enumerate().map(|(i, r)| serde_json::json!({"name": format!("r{i}"), "image": r})).collect::<Vec<_>>(),
        }),
    ];
    let text: String = blobs
        .iter()
        .map(|b| format!("{}\n", serde_json::to_string(b).unwrap()))
        .collect();
    std::fs::write(catalog.join("big/catalog.json"), text).unwrap();
    let archive = |n: &str| d.join(n);
    let args = |dir: &PathBuf| -> Vec<String> {
        vec![
            "catalog".into(),
            "mirror".into(),
            catalog.display().to_string(),
            "--to-archive".into(),
            dir.display().to_string(),
        ]
    };
    // The uninterrupted run's length, the faster of two: one run slowed by a load that has
    // passed would stretch every share below past the end of the later, faster runs.
    let whole = archive("whole");
    let mut full = Duration::MAX;
    for name in ["whole", "whole2"] {
        let whole = archive(name);
        let a = args(&whole);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        full = full.min(timed(&a, &tmpdir, d));
        assert_eq!(staging_and_partial_blobs(&whole), Vec::<String>::new());
        assert_eq!(listing(&tmpdir), Vec::<String>::new());
    }

    // SIGINT at several points of the copies (under way: a blob is being written).
    let mut stopped = 0;
    // Each point is its fixed delay, or a share of the uninterrupted run when that is shorter:
    // on a quiet machine an optimized mirror of these 30 MB ends within a second, past the
    // late fixed delays; on a loaded one the fixed delays keep the points apart.
    const SHARE: [f64; POINTS as usize] = [0.0, 0.05, 0.15, 0.3, 0.45, 0.6];
    for (i, ms) in AFTER_MS.iter().enumerate() {
        let after = Duration::from_millis(*ms).min(full.mul_f64(SHARE[i]));
        let dir = archive(&format!("arch{i}"));
        let a = args(&dir);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let writing = || has_staging(&dir);
        let o = interrupted(&a, &tmpdir, d, &writing, after);
        let what = format!("SIGINT {after:?} after a blob was being written");
        if !o.status.success() {
            assert_interrupted(&what, &o, &tmpdir);
            stopped += 1;
        }
        assert_eq!(
            staging_and_partial_blobs(&dir),
            Vec::<String>::new(),
            "{what}"
        );
        assert_eq!(
            listing(&tmpdir),
            Vec::<String>::new(),
            "{what}: left in TMPDIR"
        );
    }
    assert!(stopped >= 3, "only {stopped} runs were interrupted");

    // SIGKILL (nothing can clean up), then a re-run: the archive it leaves is clean and whole.
    let dir = archive("killed");
    let a = args(&dir);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut child = start(&a, &tmpdir, d);
    let deadline = Instant::now() + Duration::from_secs(300);
    while !has_staging(&dir)
        && Instant::now() < deadline
        && child.try_wait().ok().flatten().is_none()
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "-KILL");
    let _ = wait_output(child, Duration::from_secs(60));
    let left = staging_and_partial_blobs(&dir);
    eprintln!("left by the killed run: {left:?}");
    let o = wait_output(start(&a, &tmpdir, d), Duration::from_secs(600));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(staging_and_partial_blobs(&dir), Vec::<String>::new());
    assert_eq!(
        listing(&dir.join("oci/blobs/sha256")),
        listing(&whole.join("oci/blobs/sha256")),
        "the same blobs as an uninterrupted run"
    );
}
