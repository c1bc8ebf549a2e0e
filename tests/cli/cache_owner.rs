//! Who owns the serve cache in a catalog image, tested as a cluster runs the image (issue 33):
//! the built image is unpacked by umoci with its owners kept, and the cache is read by a child
//! process running as the image's user (`setpriv --reuid U --regid G --clear-groups`), for bases
//! that run as `1001`, `1001:1001`, a named user with its own group, and no user; and as an
//! arbitrary uid in group 0 (OpenShift's restricted SCC). And `catalog cache verify` on every
//! image olmpack builds, with no extra flag (issue 26 item 5).

use crate::support::cmd::olmpack_reproducible as olmpack;
use crate::support::proc::is_root;
use crate::support::umoci::{base_image, umoci, unpack as umoci_unpack};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn catalog() -> PathBuf {
    crate::support::fixtures::testdata("catalogs/build-small")
}

/// A base image made by umoci: an OCI layout `dir` with tag `v1`, an optional layer holding
/// `/etc/passwd` and `/etc/group`, and an optional config `User`.
fn base(dir: &Path, user: Option<&str>, files: Option<(&str, &str)>) -> String {
    let write_etc = |rootfs: &Path| {
        if let Some((passwd, group)) = files {
            let etc = rootfs.join("etc");
            std::fs::create_dir_all(&etc).unwrap();
            std::fs::write(etc.join("passwd"), passwd).unwrap();
            std::fs::write(etc.join("group"), group).unwrap();
        }
    };
    let config: Vec<&str> = user.map(|u| vec!["--config.user", u]).unwrap_or_default();
    base_image(
        dir,
        files.is_some().then_some(&write_etc as &dyn Fn(&Path)),
        &config,
    )
}

/// Builds the small catalog on `base` (or scratch) into an OCI layout tagged `v1`.
fn build(base: Option<&str>, extra: &[&str], out: &Path) -> std::process::Output {
    let mut args: Vec<String> = vec![
        "catalog".into(),
        "build".into(),
        catalog().display().to_string(),
        "--output".into(),
        format!("oci:{}:v1", out.display()),
    ];
    if let Some(b) = base {
        args.push("--base".into());
        args.push(b.into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let r = olmpack().args(&args).output().unwrap();
    assert!(
        r.status.success(),
        "catalog build {args:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    r
}

/// Unpacks the image with umoci (as root: owners and modes kept); returns its rootfs, made
/// reachable by every user (the cache's own entries keep theirs).
fn unpack(layout: &Path, at: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let rootfs = umoci_unpack(layout, at);
    let mut p = rootfs.clone();
    loop {
        if p == Path::new("/") || p == std::env::temp_dir() {
            break;
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        if !p.pop() {
            break;
        }
    }
    let tmp = rootfs.join("tmp");
    if tmp.is_dir() && std::fs::metadata(&tmp).unwrap().uid() == 0 {
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    rootfs
}

/// (uid, gid) and mode of every entry under `dir` (itself included).
fn owners(dir: &Path) -> Vec<(String, u32, u32, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        out.push((
            p.strip_prefix(dir).unwrap().display().to_string(),
            m.uid(),
            m.gid(),
            m.mode() & 0o7777,
        ));
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out.sort();
    out
}

/// Opens every file of the cache as `uid:gid` with no other group, in a child process.
fn reads_as(uid: u32, gid: u32, cache: &Path) -> bool {
    let out = Command::new("setpriv")
        .args([
            "--reuid",
            &uid.to_string(),
            "--regid",
            &gid.to_string(),
            "--clear-groups",
            "find",
        ])
        .arg(cache)
        .args(["-type", "f", "-exec", "cat", "{}", "+"])
        .output()
        .expect("run setpriv");
    out.status.success() && !out.stdout.is_empty()
}

fn verify(image: &str, extra: &[&str]) -> (Option<i32>, String) {
    let v = olmpack()
        .args(["catalog", "cache", "verify", image])
        .args(extra)
        .output()
        .unwrap();
    (
        v.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        ),
    )
}

const PASSWD: &str = "root:x:0:0:root:/root:/bin/sh\nopm:x:1001:1001::/home/opm:/sbin/nologin\n";
const GROUP: &str = "root:x:0:\nopm:x:1001:\n";

/// An arbitrary uid, as OpenShift gives a pod (group 0).
const ARBITRARY: u32 = 1_000_650_000;

#[test]
fn the_cache_is_owned_and_read_as_the_bases_user() {
    if !is_root() {
        crate::support::shared::skip("cache ownership: not root, so setpriv cannot switch users");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // (case, User, passwd/group layer, owner wanted, (uid, gid) that must read, must not)
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Option<(&'a str, &'a str)>,
        (u32, u32),
        Vec<(u32, u32)>,
        Vec<(u32, u32)>,
    );
    let cases: Vec<Case> = vec![
        (
            "user-1001",
            Some("1001"),
            None,
            (1001, 0),
            vec![(1001, 0), (1001, 1001), (ARBITRARY, 0)],
            vec![(2000, 2000)],
        ),
        (
            "user-1001-1001",
            Some("1001:1001"),
            None,
            (1001, 1001),
            vec![(1001, 1001), (1001, 0)],
            // Docker's rule, kept: a RUN as 1001:1001 gives the group 1001, not 0.
            vec![(ARBITRARY, 0), (2000, 2000)],
        ),
        (
            "named-user",
            Some("opm"),
            Some((PASSWD, GROUP)),
            (1001, 1001),
            vec![(1001, 1001)],
            vec![(ARBITRARY, 0), (2000, 2000)],
        ),
        (
            "numeric-user-listed",
            Some("1001"),
            Some((PASSWD, GROUP)),
            (1001, 1001),
            vec![(1001, 1001)],
            vec![(2000, 2000)],
        ),
        (
            "no-user",
            None,
            None,
            (0, 0),
            vec![(0, 0), (ARBITRARY, 0)],
            vec![(1001, 1001), (2000, 2000)],
        ),
    ];
    let mut digests = Vec::new();
    for (name, user, files, (uid, gid), can, cannot) in &cases {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let base_ref = base(&dir.join("base"), *user, *files);
        let out = dir.join("image");
        let r = build(Some(&base_ref), &[], &out);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(
            stderr.contains(&format!("serve cache owner: {uid}:{gid}, folders 0750")),
            "{name}: {stderr}"
        );
        let rootfs = unpack(&out, &dir.join("unpacked"));
        let cache = rootfs.join("tmp/cache");
        let entries = owners(&cache);
        assert!(entries.len() >= 4, "{name}: {entries:?}");
        for (path, u, g, mode) in &entries {
            assert_eq!((u, g), (uid, gid), "{name}: owner of {path:?}");
            let dir_entry = cache.join(path).is_dir();
            assert_eq!(
                *mode,
                if dir_entry { 0o750 } else { 0o640 },
                "{name}: mode of {path:?}"
            );
        }
        for (u, g) in can {
            assert!(reads_as(*u, *g, &cache), "{name}: {u}:{g} cannot read");
        }
        for (u, g) in cannot {
            assert!(!reads_as(*u, *g, &cache), "{name}: {u}:{g} can read");
        }
        digests.push(std::fs::read_to_string(cache.join("digest")).unwrap());
        // verify: accepted, with the owners and who reads it.
        let (code, text) = verify(&format!("oci:{}:v1", out.display()), &[]);
        assert_eq!(code, Some(0), "{name}: {text}");
        assert!(
            text.contains(&format!(
                "owner:   {uid}:{gid} on all {} entries; folders 0750, files 0640",
                entries.len()
            )),
            "{name}: {text}"
        );
        assert!(!text.contains("only through group 0"), "{name}: {text}");
        let openshift = can.contains(&(ARBITRARY, 0));
        assert_eq!(
            text.contains("an arbitrary uid in group 0 (OpenShift's restricted SCC) reads it"),
            openshift,
            "{name}: {text}"
        );
    }
    // Owners are not in opm's digest: the same cache digest for every base.
    assert_eq!(digests.len(), cases.len());
    assert!(digests.iter().all(|d| d == &digests[0]), "{digests:?}");
}

#[test]
fn verify_warns_on_a_cache_readable_only_through_group_0() {
    // An image as olmpack built it before: the cache owned 0:0, the image running as 1001.
    let tmp = tempfile::tempdir().unwrap();
    let base_ref = base(&tmp.path().join("base"), None, None);
    let out = tmp.path().join("image");
    build(Some(&base_ref), &[], &out);
    let image = format!("{}:v1", out.display());
    umoci(&["config", "--image", &image, "--config.user", "1001"]);
    let (code, text) = verify(&format!("oci:{image}"), &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("owner:   0:0 on all"), "{text}");
    assert!(
        text.contains("warning: the image's user \"1001\" (uid 1001, gid 0) reads the cache only through group 0"),
        "{text}"
    );
    // Running as 1001:1001 it cannot read it at all: opm would exit at start.
    umoci(&["config", "--image", &image, "--config.user", "1001:1001"]);
    let (code, text) = verify(&format!("oci:{image}"), &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("cannot read /tmp/cache") && text.contains("permission denied"),
        "{text}"
    );
    assert!(!text.contains("ok: opm will accept"), "{text}");
}

#[test]
fn a_user_the_base_does_not_list_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let base_ref = base(
        &tmp.path().join("base"),
        Some("ghost"),
        Some((PASSWD, GROUP)),
    );
    let out = tmp.path().join("image");
    let r = olmpack()
        .args(["catalog", "build"])
        .arg(catalog())
        .args(["--base", &base_ref, "--output"])
        .arg(format!("oci:{}", out.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unable to find user ghost: no matching entries in passwd file"),
        "{stderr}"
    );
    assert!(!out.exists());
    // --no-cache needs no owner.
    build(Some(&base_ref), &["--no-cache"], &out);
}

/// Issue 26 item 5: every image olmpack builds verifies with no extra flag.
#[test]
fn every_built_image_verifies_without_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let base_ref = base(&tmp.path().join("base"), Some("1001"), None);
    let image = |name: &str| format!("oci:{}:v1", tmp.path().join(name).display());
    let built = |name: &str, base: Option<&str>, extra: &[&str]| {
        build(base, extra, &tmp.path().join(name));
        image(name)
    };
    // A scratch image with --cache: no CMD, the cache is found where it is.
    for (name, extra, at) in [
        ("scratch-cache", vec!["--cache"], "/tmp/cache"),
        (
            "scratch-cache-dir",
            vec!["--cache", "--cache-dir", "/var/cache/opm"],
            "/var/cache/opm",
        ),
    ] {
        let (code, text) = verify(&built(name, None, &extra), &[]);
        assert_eq!(code, Some(0), "{name}: {text}");
        assert!(
            text.contains("ok: opm will accept this cache"),
            "{name}: {text}"
        );
        assert!(
            text.contains(&format!("the image holds a serve cache at {at}"))
                && text.contains(&format!("extractContent set cacheDir: {at}")),
            "{name}: {text}"
        );
        assert!(text.contains("owner:   0:0 on all"), "{name}: {text}");
    }
    // With a base and a cache: CMD names it.
    let (code, text) = verify(&built("based", Some(&base_ref), &[]), &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("owner:   1001:0 on all"), "{text}");
    // No cache (scratch, or --no-cache on a base): one line, accepted.
    for (name, base, extra) in [
        ("scratch", None, vec![]),
        ("no-cache", Some(base_ref.as_str()), vec!["--no-cache"]),
    ] {
        let (code, text) = verify(&built(name, base, &extra), &[]);
        assert_eq!(code, Some(0), "{name}: {text}");
        assert_eq!(text.lines().count(), 1, "{name}: {text}");
        assert!(
            text.starts_with("no serve cache: opm will build one at start"),
            "{name}: {text}"
        );
    }
    // A cache asked for where there is none: refused, in one line, not one per missing file.
    let (code, text) = verify(&image("no-cache"), &["--cache-dir", "/tmp/cache"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("no JSON serve cache at /tmp/cache"), "{text}");
    assert!(!text.contains("missing:"), "{text}");
}

/// A pogreb cache (what current opm writes) is found and checked as opm checks it (here a
/// damaged one: no index files), instead of being called missing.
#[test]
fn a_pogreb_cache_is_named_not_called_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("image");
    build(None, &[], &out);
    let image = format!("{}:v1", out.display());
    let bundle = tmp.path().join("bundle");
    umoci(&["unpack", "--image", &image, bundle.to_str().unwrap()]);
    let db = bundle.join("rootfs/tmp/cache/pogreb.v1/db");
    std::fs::create_dir_all(&db).unwrap();
    std::fs::write(db.join("00000-1.psg"), b"pogreb\x0e\xfd").unwrap();
    std::fs::write(db.parent().unwrap().join("digest"), b"0123456789abcdef").unwrap();
    umoci(&["repack", "--image", &image, bundle.to_str().unwrap()]);
    let (code, text) = verify(&format!("oci:{image}"), &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("/tmp/cache (pogreb.v1, opm v1.41+)")
            && text.contains("opm cannot open the pogreb database (")
            && text.contains("main.pix")
            && !text.contains("missing:"),
        "{text}"
    );
}
