//! `olmpack bundle republish` end to end against a real loopback registry, checked with skopeo:
//! three versions of our bundle (1.1.0, 1.2.0, 1.3.0) are pushed and listed in an
//! `olm.template.substitutes` template with two channels; 1.2.0 is republished (release 1,
//! then bumped to 2 as a chain). The pushed image is skopeo's digest; the CSV differs from the
//! original by the name line and the release line only; the template gained one substitution
//! and nothing else; and `catalog template` renders the republished bundle in its base's place
//! in both channels as opm's substitutes template does (the cases of operator-registry's
//! `substitutes_test.go` that apply: replaces moved to the substitute, skips and skipRange
//! moved, the base skipped, an entry that replaced the base now replacing the substitute, in
//! every channel). Refusals (base already substituted, a cycle, a release that does not order
//! after) and a push that fails half-way through the fault-injecting proxy leave the folder
//! and the template byte-identical and push nothing.

use crate::support::cmd::olmpack;
use crate::support::fs::copy_dir;
use crate::support::mirror::skopeo_digest;
use crate::support::proc::Bounded;
use crate::support::registry::{Fault, Mode, Proxy, Registry};
use crate::support::shared::tool;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CSV: &str = "manifests/kvstore-operator.clusterserviceversion.yaml";
const REPO: &str = "acme/kvstore-bundle";

fn valid_basic() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/bundles/valid-basic")
}

/// A copy of our bundle at `version` (the CSV renamed to match).
fn bundle_at(root: &Path, version: &str) -> PathBuf {
    let dir = root.join(format!("kvstore-{version}"));
    copy_dir(&valid_basic(), &dir);
    let csv = dir.join(CSV);
    let text = std::fs::read_to_string(&csv).expect("csv");
    let text = text
        .replace(
            "  name: kvstore-operator.v1.2.0\n",
            &format!("  name: kvstore-operator.v{version}\n"),
        )
        .replace("\n  version: 1.2.0\n", &format!("\n  version: {version}\n"));
    std::fs::write(&csv, text).expect("write csv");
    dir
}

fn push(dir: &Path, reference: &str) {
    olmpack()
        .args(["bundle", "build"])
        .arg(dir)
        .args(["-t", reference, "--push", "--plain-http"])
        .succeeds();
}

/// The `olm.bundle` blob `catalog render` writes for `reference`, as one YAML list item.
fn rendered_entry(reference: &str) -> String {
    let out = olmpack()
        .args(["catalog", "render", "--plain-http", reference])
        .succeeds();
    let json = String::from_utf8(out.stdout).expect("utf8");
    format!("- {}\n", json.trim_end().replace('\n', "\n  "))
}

fn skopeo_tags(host: &str) -> Vec<String> {
    let out = std::process::Command::new("skopeo")
        .args(["list-tags", "--tls-verify=false"])
        .arg(format!("docker://{host}/{REPO}"))
        .output()
        .expect("skopeo runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut tags: Vec<String> = v["Tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(|t| t.as_str().map(String::from))
        .collect();
    tags.sort();
    tags
}

/// Every file under `dir` with its bytes (a folder left unchanged compares equal).
fn files_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("list") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

fn republish(dir: &Path, to: &str, template: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = olmpack()
        .args(["bundle", "republish"])
        .arg(dir)
        .args(["--to", to, "--plain-http", "--template"])
        .arg(template)
        .args(extra)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The channel entries of a rendered catalog, by channel: (name, replaces, skips, skipRange).
type Entry = (String, String, Vec<String>, String);

fn channels(rendered: &str) -> BTreeMap<String, Vec<Entry>> {
    let mut out = BTreeMap::new();
    for blob in serde_json::Deserializer::from_str(rendered).into_iter::<serde_json::Value>() {
        let blob = blob.expect("json stream");
        if blob["schema"] != "olm.channel" {
            continue;
        }
        let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let entries = blob["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| {
                (
                    s(&e["name"]),
                    s(&e["replaces"]),
                    e["skips"]
                        .as_array()
                        .map(|a| a.iter().map(s).collect())
                        .unwrap_or_default(),
                    s(&e["skipRange"]),
                )
            })
            .collect();
        out.insert(s(&blob["name"]), entries);
    }
    out
}

fn entry(name: &str, replaces: &str, skips: &[&str], range: &str) -> Entry {
    (
        name.into(),
        replaces.into(),
        skips.iter().map(|s| s.to_string()).collect(),
        range.into(),
    )
}

fn render_template(template: &Path) -> String {
    let out = olmpack()
        .args(["catalog", "template", "--plain-http", "-o", "json"])
        .arg(template)
        .succeeds();
    String::from_utf8(out.stdout).expect("utf8")
}

struct Stand {
    _tmp: tempfile::TempDir,
    registry: Registry,
    a: PathBuf,
    b: PathBuf,
    template: PathBuf,
}

/// Three versions pushed, and the template: `stable` A <- B <- C by replaces, `fast` B alone
/// with a skipRange and C skipping B.
fn stand() -> Stand {
    let tmp = tempfile::tempdir().expect("tmp");
    let registry = Registry::start(Mode::Plain);
    let host = registry.host.clone();
    let mut items = String::new();
    let mut dirs = Vec::new();
    for v in ["1.1.0", "1.2.0", "1.3.0"] {
        let dir = bundle_at(tmp.path(), v);
        let reference = format!("{host}/{REPO}:{v}");
        push(&dir, &reference);
        items.push_str(&rendered_entry(&reference));
        dirs.push(dir);
    }
    let template = tmp.path().join("catalog-template.yaml");
    std::fs::write(
        &template,
        format!(
            "schema: olm.template.substitutes\n\
             entries:\n\
             - {{schema: olm.package, name: kvstore-operator, defaultChannel: stable}}\n\
             - schema: olm.channel\n  package: kvstore-operator\n  name: stable\n  entries:\n  \
             - name: kvstore-operator.v1.1.0\n  \
             - {{name: kvstore-operator.v1.2.0, replaces: kvstore-operator.v1.1.0}}\n  \
             - {{name: kvstore-operator.v1.3.0, replaces: kvstore-operator.v1.2.0}}\n\
             - schema: olm.channel\n  package: kvstore-operator\n  name: fast\n  entries:\n  \
             - {{name: kvstore-operator.v1.2.0, skipRange: '>=1.0.0 <1.2.0'}}\n  \
             - {{name: kvstore-operator.v1.3.0, skips: [kvstore-operator.v1.2.0]}}\n\
             {items}\
             substitutions: [] # added by bundle republish\n"
        ),
    )
    .expect("template");
    let b = dirs.swap_remove(1);
    let a = dirs.swap_remove(0);
    Stand {
        _tmp: tmp,
        registry,
        a,
        b,
        template,
    }
}

#[test]
fn republish_pushes_renames_and_substitutes_as_opm_renders_it() {
    if !tool("skopeo", "skopeo") {
        return;
    }
    let s = stand();
    let host = s.registry.host.clone();
    let to = format!("{host}/{REPO}");
    let csv_before = std::fs::read_to_string(s.b.join(CSV)).expect("csv");
    let template_before = std::fs::read_to_string(&s.template).expect("template");
    let others_before: BTreeMap<_, _> = files_of(&s.b)
        .into_iter()
        .filter(|(p, _)| !p.ends_with(CSV))
        .collect();

    let (code, stdout, stderr) = republish(&s.b, &to, &s.template, &[]);
    assert_eq!(code, 0, "{stderr}");
    // stdout: the pushed reference, at skopeo's digest, under the default tag.
    let pushed = stdout.trim();
    let digest = skopeo_digest(&format!("{to}:v1.2.0-1"));
    assert_eq!(pushed, format!("{to}:v1.2.0-1@{digest}"), "{stderr}");

    // The CSV: the name line changed and the release line added, nothing else.
    let csv_after = std::fs::read_to_string(s.b.join(CSV)).expect("csv");
    assert_eq!(
        csv_after,
        csv_before
            .replace(
                "  name: kvstore-operator.v1.2.0\n",
                "  name: kvstore-operator-v1.2.0-1\n"
            )
            .replace(
                "\n  version: 1.2.0\n",
                "\n  version: 1.2.0\n  release: \"1\"\n"
            )
    );
    let others_after: BTreeMap<_, _> = files_of(&s.b)
        .into_iter()
        .filter(|(p, _)| !p.ends_with(CSV))
        .collect();
    assert_eq!(others_after, others_before, "only the CSV changes");
    // The template: one substitution appended in the list's own (flow) style.
    let template_after = std::fs::read_to_string(&s.template).expect("template");
    assert_eq!(
        template_after,
        template_before.replace(
            "substitutions: []",
            &format!(
                "substitutions: [{{\"name\": \"{to}@{digest}\", \"base\": \"kvstore-operator.v1.2.0\"}}]"
            )
        )
    );

    // Rendered: the substitute takes the base's place in both channels (opm's semantics).
    let rendered = render_template(&s.template);
    let b = "kvstore-operator.v1.2.0";
    let b1 = "kvstore-operator-v1.2.0-1";
    let want: BTreeMap<String, Vec<Entry>> = [
        (
            "fast".to_string(),
            vec![
                entry(b, "", &[], ""),
                entry("kvstore-operator.v1.3.0", "", &[b1], ""),
                entry(b1, "", &[b], ">=1.0.0 <1.2.0"),
            ],
        ),
        (
            "stable".to_string(),
            vec![
                entry("kvstore-operator.v1.1.0", "", &[], ""),
                entry(b, "", &[], ""),
                entry("kvstore-operator.v1.3.0", b1, &[b], ""),
                entry(b1, "kvstore-operator.v1.1.0", &[b], ""),
            ],
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(channels(&rendered), want, "{rendered}");
    // The new bundle is the pushed image, with its release in the package property.
    let bundle = serde_json::Deserializer::from_str(&rendered)
        .into_iter::<serde_json::Value>()
        .filter_map(Result::ok)
        .find(|v| v["schema"] == "olm.bundle" && v["name"] == b1)
        .expect("the substitute bundle");
    assert_eq!(bundle["image"], format!("{to}@{digest}"));
    let package = bundle["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["type"] == "olm.package")
        .expect("olm.package");
    assert_eq!(package["value"]["release"], "1");

    // Again: a chain (release 2 substitutes release 1), the block of the template grows by one.
    let (code, stdout, stderr) = republish(&s.b, &to, &s.template, &["--bump"]);
    assert_eq!(code, 0, "{stderr}");
    let digest2 = skopeo_digest(&format!("{to}:v1.2.0-2"));
    assert_eq!(stdout.trim(), format!("{to}:v1.2.0-2@{digest2}"));
    let rendered = render_template(&s.template);
    let stable = &channels(&rendered)["stable"];
    assert!(
        stable.contains(&entry(
            "kvstore-operator-v1.2.0-2",
            "kvstore-operator.v1.1.0",
            &[b, b1],
            ""
        )),
        "{stable:?}"
    );
    assert!(stable.contains(&entry(
        "kvstore-operator.v1.3.0",
        "kvstore-operator-v1.2.0-2",
        &[b, b1],
        ""
    )));

    // Refusals change nothing and push nothing.
    let tags = skopeo_tags(&host);
    let snapshot = |dir: &Path| (files_of(dir), std::fs::read(&s.template).expect("template"));
    // A release that does not order after the current one (2).
    let before = snapshot(&s.b);
    let (code, _, stderr) = republish(&s.b, &to, &s.template, &["--release", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("does not order after the current release 2"),
        "{stderr}"
    );
    assert!(stderr.contains(CSV), "names the CSV: {stderr}");
    // The original bundle again: its base is already substituted.
    let again = s.b.parent().expect("parent").join("again");
    copy_dir(&valid_basic(), &again);
    let before_again = snapshot(&again);
    let (code, _, stderr) = republish(&again, &to, &s.template, &["--release", "7"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("kvstore-operator.v1.2.0 is already substituted"),
        "{stderr}"
    );
    assert!(
        stderr.contains("catalog-template.yaml:"),
        "names the template and line: {stderr}"
    );
    // A cycle: a template (hand-edited, never rendered) in which 1.1.0's image substitutes
    // for kvstore-operator-v1.1.0-1; republishing 1.1.0 as that name would close the circle.
    let cyclic = s.template.with_file_name("cyclic.yaml");
    std::fs::write(
        &cyclic,
        template_before.replace(
            "substitutions: [] # added by bundle republish\n",
            &format!(
                "substitutions:\n- name: {host}/{REPO}:1.1.0\n  base: kvstore-operator-v1.1.0-1\n"
            ),
        ),
    )
    .expect("cyclic template");
    let cyclic_before = std::fs::read(&cyclic).expect("read");
    let before_a = files_of(&s.a);
    let (code, _, stderr) = republish(&s.a, &to, &cyclic, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("refusing a cycle of substitutions: kvstore-operator.v1.1.0 is substituted by kvstore-operator-v1.1.0-1, kvstore-operator-v1.1.0-1 is substituted by kvstore-operator.v1.1.0"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&cyclic).expect("read"), cyclic_before);
    assert_eq!(files_of(&s.a), before_a);
    assert_eq!(snapshot(&s.b), before);
    assert_eq!(snapshot(&again), before_again);
    assert_eq!(skopeo_tags(&host), tags, "nothing pushed");
}

#[test]
fn a_push_that_fails_half_way_leaves_the_folder_and_the_template_as_they_were() {
    if !tool("skopeo", "skopeo") {
        return;
    }
    let s = stand();
    let host = s.registry.host.clone();
    // Through the proxy, the second blob upload is cut off half-way: the push fails after
    // the first blob is in the registry.
    let port = s.registry.port;
    let uploads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = uploads.clone();
    let proxy = Proxy::start(port, move |seen, _| {
        if seen.method == "PUT" && seen.path.contains("/blobs/uploads/") {
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // Every retry of the second upload too.
            if n >= 1 {
                return Fault::Drop;
            }
        }
        Fault::Pass
    });
    let before = (
        files_of(&s.b),
        std::fs::read(&s.template).expect("template"),
    );
    let tags = skopeo_tags(&host);
    let to = format!("{}/{REPO}", proxy.host());
    let (code, stdout, stderr) = republish(&s.b, &to, &s.template, &[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty(), "nothing reported pushed: {stdout}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(
        uploads.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "the push reached the second blob"
    );
    assert_eq!(
        (
            files_of(&s.b),
            std::fs::read(&s.template).expect("template")
        ),
        before,
        "folder and template byte-identical, no staged file left"
    );
    let leftovers: Vec<_> = std::fs::read_dir(s.template.parent().expect("parent"))
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".olmpack-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(skopeo_tags(&host), tags, "no tag was pushed");
}
