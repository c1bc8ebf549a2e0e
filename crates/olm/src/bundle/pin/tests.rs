use super::*;

const CSV: &str = "apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  annotations:
    containerImage: quay.io/org/op:v1 # the operator
  name: op.v1.0.0
spec:
  install:
    spec:
      deployments:
      - name: op
        spec:
          template:
            spec:
              containers:
              - env:
                - name: RELATED_IMAGE_AGENT_X
                  value: \"quay.io/org/agent:v2\"
                - name: OTHER
                  value: quay.io/not/an-image:v0
                image: quay.io/org/op:v1
                name: manager
              initContainers:
              - image: 'docker.io/library/busybox:1'
                name: init
    strategy: deployment
  provider:
    name: me
  version: 1.0.0
";

const D: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

fn root(text: &str) -> Node {
    crate::yaml::parse_stream(text)
        .expect("yaml")
        .remove(0)
        .root
}

fn pinned(image: &str) -> String {
    format!("{}@{D}", image.rsplit_once(':').map_or(image, |(n, _)| n))
}

#[test]
fn sites_are_every_place_the_issue_names() {
    let csv = root(CSV);
    let sites = image_sites(&csv);
    let got: Vec<(SiteKind, &str, &str, usize)> = sites
        .iter()
        .map(|s| (s.kind, s.name.as_str(), s.image.as_str(), s.line))
        .collect();
    assert_eq!(
        got,
        vec![
            (SiteKind::Annotation, "", "quay.io/org/op:v1", 5),
            (SiteKind::Container, "manager", "quay.io/org/op:v1", 21),
            (
                SiteKind::Env,
                "RELATED_IMAGE_AGENT_X",
                "quay.io/org/agent:v2",
                18
            ),
            (
                SiteKind::InitContainer,
                "init",
                "docker.io/library/busybox:1",
                24
            ),
        ]
    );
    assert_eq!(suggested_name(&sites[2]), "agent-x");
}

#[test]
fn rewriting_touches_only_the_scalars_and_adds_related_images_in_key_order() {
    let csv = root(CSV);
    let edits: Vec<Edit> = image_sites(&csv)
        .iter()
        .map(|s| Edit {
            line: s.line,
            col: s.col,
            old: s.image.clone(),
            new: pinned(&s.image),
        })
        .collect();
    let added = vec![NewRelatedImage {
        name: "manager".into(),
        image: pinned("quay.io/org/op:v1"),
    }];
    let out = rewrite(CSV, &csv, &edits, &added).expect("rewrites");
    let want = CSV
        .replace("quay.io/org/op:v1", &pinned("quay.io/org/op:v1"))
        .replace("quay.io/org/agent:v2", &pinned("quay.io/org/agent:v2"))
        .replace(
            "docker.io/library/busybox:1",
            &pinned("docker.io/library/busybox:1"),
        )
        .replace(
            "  version: 1.0.0\n",
            &format!(
                "  relatedImages:\n  - image: {}\n    name: manager\n  version: 1.0.0\n",
                pinned("quay.io/org/op:v1")
            ),
        );
    assert_eq!(out, want);
    assert!(
        out.contains("quay.io/not/an-image:v0"),
        "other env values are left alone"
    );
}

#[test]
fn added_entries_follow_the_existing_entries_style() {
    let text = "kind: ClusterServiceVersion\nspec:\n  relatedImages:\n    -   name: a\n        image: quay.io/a:1\n  version: 1.0.0\n";
    let csv = root(text);
    let added = vec![NewRelatedImage {
        name: "b".into(),
        image: "quay.io/b@x".into(),
    }];
    let out = rewrite(text, &csv, &[], &added).expect("rewrites");
    assert_eq!(
        out,
        "kind: ClusterServiceVersion\nspec:\n  relatedImages:\n    -   name: a\n        image: quay.io/a:1\n    -   name: b\n        image: quay.io/b@x\n  version: 1.0.0\n"
    );
    // CRLF files get CRLF.
    let crlf = text.replace('\n', "\r\n");
    let out = rewrite(&crlf, &root(&crlf), &[], &added).expect("rewrites");
    assert_eq!(out.matches('\n').count(), out.matches("\r\n").count());
}

#[test]
fn what_cannot_be_edited_in_place_is_refused_with_its_line() {
    for (text, says) in [
        (
            "spec:\n  x:\n    image: quay.io/a:1\n      b\n",
            "continues",
        ),
        (
            "spec:\n  x:\n    image: >-\n      quay.io/a:1\n",
            "block scalar",
        ),
        ("spec:\n  x:\n    image: \"quay.io/a\\x3a1\"\n", "escapes"),
    ] {
        let csv = root(text);
        let node = csv.path(&["spec", "x", "image"]).expect("image");
        let e = Edit {
            line: node.line,
            col: node.col,
            old: "quay.io/a:1".into(),
            new: "quay.io/a@x".into(),
        };
        let got = rewrite(text, &csv, &[e], &[]).expect_err(text);
        assert!(got.message.contains(says) && got.line >= 3, "{text}: {got}");
    }
}
