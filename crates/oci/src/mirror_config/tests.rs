use super::*;

fn config(files: &[(&str, &str)]) -> Result<MirrorConfig, MirrorConfigError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut paths = Vec::new();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        paths.push(p);
    }
    MirrorConfig::load(&paths)
}

fn sources(c: &MirrorConfig, r: &str) -> Vec<String> {
    c.pull_sources(&Reference::parse(r).expect("ref"))
        .expect("sources")
        .into_iter()
        .map(|s| s.reference.to_string())
        .collect()
}

const D: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";

const IDMS: &str = "apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: m
spec:
  imageDigestMirrors:
  - source: quay.io/org
    mirrors:
    - mirror.local:5000/one
    - mirror.local:5000/two
  - source: quay.io/org/special
    mirrors:
    - other.local/special
    mirrorSourcePolicy: NeverContactSource
";

#[test]
fn containers_image_prefix_matching_table() {
    // containers/image TestRefMatchingPrefix.
    for (ref_, prefix, want) in [
        ("docker.io", "docker.io", Some(9)),
        ("docker.io", "example.com", None),
        ("example.com:5000", "example.com", Some(11)),
        ("example.com:50000", "example.com:5000", None),
        ("example.com/foo", "example.com", Some(11)),
        ("example.com/foo/bar", "example.com/foo", Some(15)),
        ("example.com/foo/bar:baz", "example.com/foo/bar", Some(19)),
        (
            "example.com/foo/bar@sha256:x",
            "example.com/foo/bar",
            Some(19),
        ),
        ("example.com/foo-bar", "example.com/foo", None),
        ("sub.example.com/foo", "*.example.com", Some(15)),
        ("example.com/foo", "*.example.com", None),
        ("a.b.example.com/foo", "*.example.com", Some(15)),
        ("other.com/sub.example.com", "*.example.com", None),
    ] {
        assert_eq!(matching_prefix(ref_, prefix), want, "{ref_} ~ {prefix}");
    }
}

#[test]
fn idms_mirrors_serve_digests_only_in_order_then_the_source() {
    let c = config(&[("idms.yaml", IDMS)]).expect("loads");
    assert_eq!(
        sources(&c, &format!("quay.io/org/op@{D}")),
        vec![
            format!("mirror.local:5000/one/op@{D}"),
            format!("mirror.local:5000/two/op@{D}"),
            format!("quay.io/org/op@{D}"),
        ]
    );
    // A tag is read from the source only: IDMS mirrors are digest-only.
    assert_eq!(sources(&c, "quay.io/org/op:v1"), vec!["quay.io/org/op:v1"]);
    // The longest prefix wins, and NeverContactSource leaves the source out.
    assert_eq!(
        sources(&c, &format!("quay.io/org/special/x@{D}")),
        vec![format!("other.local/special/x@{D}")]
    );
    assert!(sources(&c, "quay.io/org/special/x:v1").is_empty());
    // No rule: the reference itself.
    assert_eq!(
        sources(&c, "docker.io/library/busybox:1"),
        vec!["docker.io/library/busybox:1"]
    );
}

#[test]
fn an_itms_and_an_idms_for_one_source_merge() {
    let itms = IDMS
        .replace("ImageDigestMirrorSet", "ImageTagMirrorSet")
        .replace("imageDigestMirrors", "imageTagMirrors");
    let c = config(&[("idms.yaml", IDMS), ("itms.yaml", &itms)]).expect("loads");
    assert_eq!(
        sources(&c, "quay.io/org/op:v1"),
        vec![
            "mirror.local:5000/one/op:v1",
            "mirror.local:5000/two/op:v1",
            "quay.io/org/op:v1"
        ]
    );
    assert_eq!(
        sources(&c, "quay.io/org/special/x:v1"),
        vec!["other.local/special/x:v1"]
    );
}

#[test]
fn registries_conf_pull_from_mirror_and_blocked() {
    let conf = r#"
unqualified-search-registries = ["docker.io"]
[[registry]]
prefix = "quay.io/org"
location = "quay.io/org"
blocked = true
[[registry.mirror]]
location = "m1.local/org"
pull-from-mirror = "tag-only"
[[registry.mirror]]
location = "m2.local/org"
insecure = true
[[registry]]
location = "registry.example.com"
mirror-by-digest-only = true
[[registry.mirror]]
location = "m3.local"
"#;
    let c = config(&[("registries.conf", conf)]).expect("loads");
    assert_eq!(
        sources(&c, "quay.io/org/op:v1"),
        vec!["m1.local/org/op:v1", "m2.local/org/op:v1"]
    );
    assert_eq!(
        sources(&c, &format!("quay.io/org/op@{D}")),
        vec![format!("m2.local/org/op@{D}")]
    );
    let insecure: Vec<bool> = c
        .pull_sources(&Reference::parse("quay.io/org/op:v1").expect("ref"))
        .expect("sources")
        .iter()
        .map(|s| s.insecure)
        .collect();
    assert_eq!(insecure, vec![false, true]);
    assert_eq!(
        sources(&c, "registry.example.com/a/b:v1"),
        vec!["registry.example.com/a/b:v1"]
    );
    assert_eq!(
        sources(&c, &format!("registry.example.com/a/b@{D}")),
        vec![
            format!("m3.local/a/b@{D}"),
            format!("registry.example.com/a/b@{D}")
        ]
    );
}

#[test]
fn what_is_not_understood_is_refused_by_name() {
    for (name, text, says) in [
        (
            "a.conf",
            "[[registry]]\nlocation = \"a.io\"\nfoo = 1\n",
            "foo",
        ),
        (
            "b.conf",
            "[registries.search]\nregistries = [\"a.io\"]\n",
            "registries",
        ),
        (
            "c.conf",
            "[[registry]]\nlocation = \"a.io\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"b.io\"\npull-from-mirror = \"all\"\n",
            "at the same time",
        ),
        (
            "d.conf",
            "[[registry]]\nlocation = \"https://a.io\"\n",
            "URI schemes",
        ),
        ("e.yaml", "kind: ConfigMap\n", "ConfigMap"),
        (
            "f.yaml",
            "kind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n  - source: a.io/x\n    mirrors: [b.io/x]\n    mirrorSourcePolicy: Sometimes\n",
            "Sometimes",
        ),
        (
            "g.yaml",
            "kind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n  - source: a.io/x\n    mirror: [b.io/x]\n",
            "\"mirror\"",
        ),
    ] {
        let err = config(&[(name, text)]).expect_err(name).to_string();
        assert!(err.contains(name) && err.contains(says), "{name}: {err}");
    }
}

#[test]
fn a_list_of_mirror_sets_is_read() {
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n- {}",
        IDMS.trim_end().replace('\n', "\n  ")
    );
    let c = config(&[("list.yaml", &list)]).expect("loads");
    assert_eq!(c.rules.len(), 2);
}
