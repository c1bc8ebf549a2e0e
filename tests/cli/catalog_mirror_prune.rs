//! `olmpack catalog mirror prune`: what an earlier mirror run left at the target that the new
//! run no longer uses, listed (dry run, the default) and deleted (`--delete`), against real
//! loopback registries (`docker-registry`, one with deletion switched on), checked with curl
//! (the registry's `_catalog`, tags lists and manifest digests) and skopeo (every image still
//! used pulls after the deletion).
//!
//! The catalog is real: three packages of the community OpenShift 4.18 catalog
//! (`../shared/catalogs/fbc/community-operators-prod/catalogs/v4.18/`). Their images live on
//! public registries, so each is replaced by a small stand-in pushed to a loopback source
//! registry under the same repository path and tag (a digest reference gets the stand-in's
//! digest), and the catalog text rewritten to name them. `shipwright-operator` is the package
//! dropped; it shares `kube-rbac-proxy:v0.8.0` with `ecr-secret-operator`, which stays, so the
//! shared image must not be listed. One dropped image is an index (its children go with it),
//! one is signed (`.sig`), the dropped bundle has an OCI referrer (through the tag fallback),
//! and the shared image is signed too (its signature stays).

use super::copy::{client, sbom_referrer, sig_tag, signature_for, silent, two_platform_index};
use crate::support::cmd::olmpack;
use crate::support::registry::{Mode, Registry, image_from_layers};
use crate::support::shared::{shared_catalogs, tool};
use olmpack::registry::push;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

const KEPT: [&str; 2] = ["ecr-secret-operator", "project-onboarding-operator"];
const DROPPED: &str = "shipwright-operator";

pub(crate) fn run(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = olmpack()
        .args(args)
        .current_dir(cwd)
        .timeout(Duration::from_secs(300))
        .output()
        .expect("run olmpack");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `catalog mirror catalog --to TO --results-dir RESULTS`, run in `d`.
fn mirror(d: &Path, to: &str, results: &str) -> (i32, String, String) {
    run(
        &[
            "catalog",
            "mirror",
            "catalog",
            "--to",
            to,
            "--results-dir",
            results,
        ],
        d,
    )
}

/// `catalog mirror prune --previous PREVIOUS --plan PLAN --to TO` and then `more`, run in `d`.
fn prune(d: &Path, previous: &str, plan: &str, to: &str, more: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "catalog",
        "mirror",
        "prune",
        "--previous",
        previous,
        "--plan",
        plan,
        "--to",
        to,
    ];
    args.extend(more);
    run(&args, d)
}

fn curl(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new("curl")
        .args(args)
        .output()
        .expect("curl");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const ACCEPT: &str = "Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json";

/// The digest the registry serves for `repo` at `reference` (a HEAD with curl), if any.
fn head(host: &str, repo: &str, reference: &str) -> Option<String> {
    let (ok, out) = curl(&[
        "-sf",
        "-I",
        "-H",
        ACCEPT,
        &format!("http://{host}/v2/{repo}/manifests/{reference}"),
    ]);
    if !ok {
        return None;
    }
    out.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("docker-content-digest")
            .then(|| v.trim().to_string())
    })
}

/// Every repository of the registry (`_catalog`) with every tag (`tags/list`) and the digest
/// it points at, asked with curl.
fn state(host: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let (_, body) = curl(&["-sf", &format!("http://{host}/v2/_catalog?n=1000")]);
    let v: Value = serde_json::from_str(&body).expect("catalog json");
    let mut out = BTreeMap::new();
    for repo in v["repositories"].as_array().expect("repositories") {
        let repo = repo.as_str().expect("name");
        let (_, body) = curl(&["-sf", &format!("http://{host}/v2/{repo}/tags/list")]);
        let t: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let mut tags = BTreeMap::new();
        for tag in t["tags"].as_array().into_iter().flatten() {
            let tag = tag.as_str().expect("tag");
            tags.insert(tag.to_string(), head(host, repo, tag).expect("tag digest"));
        }
        out.insert(repo.to_string(), tags);
    }
    out
}

/// Every image reference a catalog.yaml names (`image:` lines), read as text.
fn references(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches("- ");
            l.strip_prefix("image: ")
                .map(|r| r.trim().trim_matches('"').to_string())
        })
        .collect()
}

/// `host/path[:tag][@digest]` → (path, tag, whether by digest).
fn split(reference: &str) -> (String, Option<String>, bool) {
    let (name, digest) = match reference.split_once('@') {
        Some((n, _)) => (n, true),
        None => (reference, false),
    };
    let (_, path) = name.split_once('/').expect("host/path");
    let last_slash = path.rfind('/').map_or(0, |i| i + 1);
    match path[last_slash..].rfind(':') {
        Some(i) => (
            path[..last_slash + i].to_string(),
            Some(path[last_slash + i + 1..].to_string()),
            digest,
        ),
        None => (path.to_string(), None, digest),
    }
}

pub(crate) struct Setup {
    _src: Registry,
    pub(crate) dir: tempfile::TempDir,
    /// Original reference → stand-in reference.
    pub(crate) standins: BTreeMap<String, String>,
    /// The original references of each package.
    pub(crate) by_package: BTreeMap<String, Vec<String>>,
    /// Stand-in reference → its digest.
    pub(crate) digests: BTreeMap<String, String>,
}

/// Real packages of the 4.18 catalog in `DIR/catalog/<package>/`, their images replaced by
/// stand-ins on a loopback source registry.
pub(crate) fn setup(catalogs: &Path, packages: &[&str]) -> Setup {
    let src = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let v418 = catalogs.join("fbc/community-operators-prod/catalogs/v4.18");
    let c = client(&src.host);
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut by_package: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in packages {
        let text =
            std::fs::read_to_string(v418.join(package).join("catalog.yaml")).expect("catalog");
        by_package.insert(package.to_string(), references(&text));
        texts.insert(package.to_string(), text);
    }
    let all: BTreeSet<&String> = by_package.values().flatten().collect();
    let mut standins = BTreeMap::new();
    let mut digests = BTreeMap::new();
    for (n, original) in all.iter().enumerate() {
        let (path, tag, by_digest) = split(original);
        let tags = vec![tag.clone().unwrap_or_else(|| format!("s{n}"))];
        // The dropped operator image 0.9.0 is a two-platform index.
        let digest = if original.contains("operator/operator:0.9.0") {
            let index = two_platform_index(&d.join(format!("i{n}")));
            push::push_index(&c, &index, &path, &tags, &silent()).expect("push index");
            index.index.descriptor.digest.clone()
        } else {
            let sub = d.join(format!("s{n}"));
            std::fs::create_dir_all(&sub).expect("mkdir");
            let own = format!("stand-in for {original}\n");
            let image = image_from_layers(
                &sub,
                &[vec![("own.txt", own.as_bytes())]],
                json!({}),
                json!({}),
            );
            push::push_image(&c, &image, &path, &tags, &silent()).expect("push");
            image.manifest.descriptor.digest.clone()
        };
        let standin = match (by_digest, &tag) {
            (true, Some(t)) => format!("{}/{path}:{t}@{digest}", src.host),
            (true, None) => format!("{}/{path}@{digest}", src.host),
            (false, Some(t)) => format!("{}/{path}:{t}", src.host),
            (false, None) => format!("{}/{path}", src.host),
        };
        // Signed at the source: the dropped operator 0.13.0 and the shared kube-rbac-proxy.
        if original.contains("operator/operator:0.13.0") || original.contains("kube-rbac-proxy") {
            let sig = signature_for(&digest);
            push::push_image(&c, &sig, &path, &[sig_tag(&digest)], &silent()).expect("push sig");
        }
        // An SBOM referrer of the dropped bundle, listed by the referrers tag fallback.
        if original.contains("community-operator-pipeline-prod/shipwright-operator@sha256:f4d3") {
            let subject = olmpack::image::Descriptor {
                media_type: "application/vnd.oci.image.manifest.v1+json".into(),
                digest: digest.clone(),
                size: head_size(&src.host, &path, &digest),
            };
            let referrer = sbom_referrer(&subject);
            push::push_image(&c, &referrer, &path, &[], &silent()).expect("push referrer");
            let mut entry = super::copy::desc(&referrer.manifest.descriptor);
            entry["artifactType"] = json!("application/spdx+json");
            let fallback = serde_json::to_vec(&json!({
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.index.v1+json",
                "manifests": [entry],
            }))
            .expect("json");
            let req = olmpack::registry::client::Request::new(
                reqwest::Method::PUT,
                format!("/v2/{path}/manifests/{}", digest.replacen(':', "-", 1)),
                &[format!("repository:{path}:pull,push")],
            )
            .header("Content-Type", "application/vnd.oci.image.index.v1+json")
            .body(olmpack::registry::client::Body::Bytes(fallback));
            c.expect(&req, &[201]).expect("put fallback index");
        }
        digests.insert(standin.clone(), digest);
        standins.insert(original.to_string(), standin);
    }
    // Longest first, so no reference is replaced inside a longer one.
    let mut order: Vec<(&String, &String)> = standins.iter().collect();
    order.sort_by_key(|(o, _)| std::cmp::Reverse(o.len()));
    for (package, text) in &texts {
        let mut text = text.clone();
        for (original, standin) in &order {
            text = text.replace(original.as_str(), standin);
        }
        let dir = d.join("catalog").join(package);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("catalog.yaml"), text).expect("write");
    }
    Setup {
        _src: src,
        dir,
        standins,
        by_package,
        digests,
    }
}

fn head_size(host: &str, repo: &str, digest: &str) -> u64 {
    let (_, body) = curl(&[
        "-sf",
        "-H",
        ACCEPT,
        &format!("http://{host}/v2/{repo}/manifests/{digest}"),
    ]);
    body.len() as u64
}

fn report(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report")).expect("json")
}

/// `(repository below the registry, digest)` of every image a report lists.
fn at_target(report: &Value, host: &str) -> BTreeMap<(String, String), String> {
    report["images"]
        .as_array()
        .expect("images")
        .iter()
        .map(|i| {
            let target = i["target"].as_str().expect("target");
            let repo = target
                .strip_prefix(&format!("{host}/"))
                .expect("below the host");
            let repo = repo.rsplit_once(':').map_or(repo, |(r, _)| r);
            (
                (
                    repo.to_string(),
                    i["digest"].as_str().expect("digest").to_string(),
                ),
                i["source"].as_str().expect("source").to_string(),
            )
        })
        .collect()
}

/// The real catalog minus one package: the listing names only the dropped package's images
/// (and the catalog image the new run replaced), with their index children, signature and
/// referrer, never the image the kept package shares; the registry is unchanged by the dry
/// run; `--delete` removes exactly those manifests and their tags, and every image the new
/// run mirrored still pulls.
#[test]
fn dropping_a_real_package_lists_only_its_images_then_deletes_them() {
    let Some(catalogs) = shared_catalogs("fbc") else {
        return;
    };
    if !tool("skopeo", "skopeo") || !tool("curl", "curl") {
        return;
    }
    let mut packages = KEPT.to_vec();
    packages.push(DROPPED);
    let s = setup(&catalogs, &packages);
    let d = s.dir.path();
    let kept_refs: BTreeSet<&String> = KEPT.iter().flat_map(|p| &s.by_package[*p]).collect();
    let dropped: BTreeSet<String> = s.by_package[DROPPED]
        .iter()
        .filter(|r| !kept_refs.contains(r))
        .map(|r| s.standins[r].clone())
        .collect();
    let dst = Registry::start_deleting(Mode::Plain);
    let to = format!("{}/mirror", dst.host);
    let (code, _, err) = mirror(d, &to, "r1");
    assert_eq!(code, 0, "first mirror: {err}");
    std::fs::remove_dir_all(d.join("catalog").join(DROPPED)).expect("drop the package");
    let (code, _, err) = mirror(d, &to, "r2");
    assert_eq!(code, 0, "second mirror: {err}");
    let before = state(&dst.host);

    let (code, out, err) = prune(d, "r1", "r2", &to, &["--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("nothing deleted (--delete removes them)"),
        "{err}"
    );
    let listing: Value = serde_json::from_str(&out).expect("json listing");
    assert_eq!(state(&dst.host), before, "a dry run changes nothing");
    // The same listing as text, grouped by repository (printed for the record).
    let (code, text, err) = prune(d, "r1", "r2", &to, &[]);
    assert_eq!(code, 0, "{err}");
    eprintln!("{text}{err}");
    for r in listing["repositories"].as_array().expect("repositories") {
        let name = r["repository"].as_str().expect("repository");
        assert!(
            text.lines().any(|l| l == name),
            "{name} not a heading:\n{text}"
        );
    }

    // What the two reports say, computed here: the previous run's images the new run does not
    // have at the same repository and digest.
    let old = at_target(&report(&d.join("r1")), &dst.host);
    let new = at_target(&report(&d.join("r2")), &dst.host);
    let expected: BTreeMap<(String, String), String> = old
        .iter()
        .filter(|(k, _)| !new.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let dropped_sources: BTreeSet<&String> = expected
        .values()
        .filter(|s| !s.starts_with("catalog"))
        .collect();
    assert_eq!(
        dropped_sources,
        dropped.iter().collect::<BTreeSet<_>>(),
        "only the dropped package's images (and the old catalog image)"
    );
    let shared = s
        .standins
        .iter()
        .find(|(o, _)| o.contains("kube-rbac-proxy"))
        .map(|(_, n)| n.clone())
        .expect("the shared image");
    assert!(!dropped.contains(&shared));

    let index_digest = s
        .standins
        .iter()
        .find(|(o, _)| o.contains("operator/operator:0.9.0"))
        .map(|(_, n)| s.digests[n].clone())
        .expect("the index");
    let mut images = BTreeMap::new();
    let mut listed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut attached = Vec::new();
    let mut children = 0;
    for r in listing["repositories"].as_array().expect("repositories") {
        let repo = r["repository"]
            .as_str()
            .expect("repository")
            .strip_prefix(&format!("{}/", dst.host))
            .expect("at the target")
            .to_string();
        // Every repository listed is one the registry has.
        assert!(before.contains_key(&repo), "{repo} not in _catalog");
        for del in r["deletions"].as_array().expect("deletions") {
            let digest = del["digest"].as_str().expect("digest").to_string();
            assert!(
                listed.insert((repo.clone(), digest.clone())),
                "listed twice: {repo} {digest}"
            );
            assert_eq!(
                head(&dst.host, &repo, &digest).as_deref(),
                Some(digest.as_str())
            );
            match del["what"].as_str() {
                Some("image") => {
                    // Its tags are the registry's tags pointing at it.
                    let tags: BTreeSet<String> = before[&repo]
                        .iter()
                        .filter(|(_, dg)| **dg == digest)
                        .map(|(t, _)| t.clone())
                        .collect();
                    let said: BTreeSet<String> = del["tags"]
                        .as_array()
                        .expect("tags")
                        .iter()
                        .map(|t| t.as_str().expect("tag").to_string())
                        .collect();
                    assert_eq!(said, tags, "{repo}@{digest}");
                    images.insert((repo.clone(), digest), del["sources"].clone());
                }
                Some("attached") => attached.push((repo.clone(), del.clone())),
                Some("child") => {
                    if del["of"].as_str() == Some(index_digest.as_str()) {
                        children += 1;
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(
        images.keys().cloned().collect::<BTreeSet<_>>(),
        expected.keys().cloned().collect::<BTreeSet<_>>(),
        "the images listed are the dropped ones"
    );
    assert_eq!(children, 2, "the dropped index's two platform manifests");
    // The dropped operator's .sig, the bundle's referrer and its fallback index; not the
    // shared image's signature.
    let shared_digest = &s.digests[&shared];
    assert!(
        attached
            .iter()
            .all(|(_, a)| a["of"].as_str() != Some(shared_digest.as_str())),
        "{attached:?}"
    );
    let tags: Vec<&str> = attached
        .iter()
        .filter_map(|(_, a)| a["tag"].as_str())
        .collect();
    assert_eq!(
        tags.iter().filter(|t| t.ends_with(".sig")).count(),
        1,
        "{tags:?}"
    );
    assert_eq!(
        tags.iter().filter(|t| !t.ends_with(".sig")).count(),
        1,
        "the referrers fallback tag: {tags:?}"
    );
    assert_eq!(
        attached
            .iter()
            .filter(|(_, a)| a.get("tag").is_none())
            .count(),
        1,
        "the referrer found by its subject: {attached:?}"
    );

    // --delete: exactly the tags pointing at listed manifests go; everything else stays.
    let (code, out, err) = prune(d, "r1", "r2", &to, &["--delete"]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(
        err.contains(&format!("deleted {} of {}", listed.len(), listed.len())),
        "{err}"
    );
    let after = state(&dst.host);
    for (repo, tags) in &before {
        let kept: BTreeMap<String, String> = tags
            .iter()
            .filter(|(_, dg)| !listed.contains(&(repo.clone(), (*dg).clone())))
            .map(|(t, dg)| (t.clone(), dg.clone()))
            .collect();
        let now = after.get(repo).cloned().unwrap_or_default();
        assert_eq!(now, kept, "{repo}");
    }
    for (repo, digest) in &listed {
        assert_eq!(
            head(&dst.host, repo, digest),
            None,
            "{repo}@{digest} is gone"
        );
    }
    // Every image the new run mirrored pulls, blobs and all.
    let pulled = tempfile::tempdir().expect("tmp");
    for (n, (repo, digest)) in new.keys().enumerate() {
        let out = std::process::Command::new("skopeo")
            .args([
                "copy",
                "--src-tls-verify=false",
                "--all",
                &format!("docker://{}/{repo}@{digest}", dst.host),
                &format!("oci:{}:x{n}", pulled.path().join(format!("p{n}")).display()),
            ])
            .output()
            .expect("skopeo");
        assert!(
            out.status.success(),
            "{repo}@{digest}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A second listing finds nothing left.
    let (code, out, err) = prune(d, "r1", "r2", &to, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with("0 manifest(s)"), "{err}\n{out}");
}

/// A registry with deletion switched off answers 405: the run stops at the first refusal and
/// says what to switch on; a record of another target, and a mistyped record path, are
/// refused by name before the registry is asked anything.
#[test]
fn refusals_are_named() {
    if !tool("skopeo", "skopeo") {
        return;
    }
    let src = Registry::start(Mode::Plain);
    let dst = Registry::start(Mode::Plain);
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let c = client(&src.host);
    let mut refs = Vec::new();
    for name in ["a", "b"] {
        let sub = d.join(name);
        std::fs::create_dir_all(&sub).expect("mkdir");
        let image = image_from_layers(&sub, &[vec![("f", name.as_bytes())]], json!({}), json!({}));
        push::push_image(
            &c,
            &image,
            &format!("img/{name}"),
            &["v1".into()],
            &silent(),
        )
        .expect("push");
        refs.push(format!("{}/img/{name}:v1", src.host));
    }
    let write = |packages: &[usize]| {
        let cat = d.join("catalog");
        let _ = std::fs::remove_dir_all(&cat);
        for &i in packages {
            let p = ["a", "b"][i];
            let pdir = cat.join(p);
            std::fs::create_dir_all(&pdir).expect("mkdir");
            let blobs = [
                json!({"schema": "olm.package", "name": p, "defaultChannel": "stable"}),
                json!({"schema": "olm.channel", "package": p, "name": "stable", "entries": [{"name": format!("{p}.v1.0.0")}]}),
                json!({"schema": "olm.bundle", "name": format!("{p}.v1.0.0"), "package": p, "image": refs[i],
                    "properties": [{"type": "olm.package", "value": {"packageName": p, "version": "1.0.0"}}]}),
            ];
            let text: String = blobs.iter().map(|b| b.to_string() + "\n").collect();
            std::fs::write(pdir.join("catalog.json"), text).expect("write");
        }
    };
    let to = format!("{}/mirror", dst.host);
    write(&[0, 1]);
    let (code, _, err) = mirror(d, &to, "r1");
    assert_eq!(code, 0, "{err}");
    write(&[0]);
    let (code, _, err) = mirror(d, &to, "r2");
    assert_eq!(code, 0, "{err}");
    let b = head(&dst.host, "mirror/img/b", "v1").expect("b mirrored");

    let (code, out, err) = prune(d, "r1", "r2", &to, &["--delete"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("does not allow deleting manifests"), "{err}");
    assert!(
        err.contains("REGISTRY_STORAGE_DELETE_ENABLED=true"),
        "{err}"
    );
    assert_eq!(
        head(&dst.host, "mirror/img/b", "v1"),
        Some(b),
        "nothing deleted"
    );

    // A new run whose copy of `a` failed after its tag moved at the source: its report names
    // a digest the target does not have, and the target's tag still points at the old one,
    // which is held, not listed (the new plan's tag uses it).
    let a = head(&dst.host, "mirror/img/a", "v1").expect("a mirrored");
    let mut r3 = report(&d.join("r2"));
    for image in r3["images"].as_array_mut().expect("images") {
        if image["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("/img/a:v1"))
        {
            image["digest"] = json!(format!("sha256:{}", "0".repeat(64)));
            image["source_digest"] = image["digest"].clone();
            image["status"] = json!("failed");
        }
    }
    std::fs::create_dir_all(d.join("r3")).expect("mkdir");
    std::fs::write(d.join("r3/report.json"), r3.to_string()).expect("write r3");
    let (code, out, err) = prune(d, "r1", "r3", &to, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("  {a}\tkept: a tag of the new plan points at it")),
        "{out}"
    );
    assert!(!out.contains(&format!("  {a}\tbundle")), "{out}");

    let other = format!("{}/elsewhere", dst.host);
    let (code, _, err) = prune(d, "r1", "r2", &other, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("r1/report.json")
            && err.contains(&format!("mirrored to {to}, not to {other}")),
        "{err}"
    );
    let (code, _, err) = prune(d, "r0", "r2", &to, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read r0"), "{err}");
}
