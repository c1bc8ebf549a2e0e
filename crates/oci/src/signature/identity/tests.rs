//! containers/image's `signature/policy_reference_match_test.go`, ported table for table: the
//! same pairs, the same verdicts, through the same symmetric and asymmetric runs.

use super::*;

const FULL_RHEL: &str = "registry.access.redhat.com/rhel7/rhel:7.2.3";
const UNTAGGED_RHEL: &str = "registry.access.redhat.com/rhel7/rhel";
const D: &str = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const D_OTHER: &str = "@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn s(a: &str, b: &str) -> String {
    format!("{a}{b}")
}

/// `prmExactMatchTestTable`: symmetric.
fn exact_table() -> Vec<(String, String, bool)> {
    let t = |a: &str, b: &str, r: bool| (a.to_string(), b.to_string(), r);
    vec![
        t("busybox:latest", "busybox:latest", true),
        t(FULL_RHEL, FULL_RHEL, true),
        t(&s("busybox", D), &s("busybox", D), true),
        t("library/busybox:latest", "busybox:latest", true),
        t("docker.io/library/busybox:latest", "busybox:latest", true),
        t(&s("library/busybox", D), &s("busybox", D), true),
        t("busybox:latest", "busybox:notlatest", false),
        t("busybox:latest", "notbusybox:latest", false),
        t(
            "busybox:latest",
            "hostname/library/busybox:notlatest",
            false,
        ),
        t(
            "hostname/library/busybox:latest",
            "busybox:notlatest",
            false,
        ),
        t("busybox:latest", FULL_RHEL, false),
        t(&s("busybox", D), &s("notbusybox", D), false),
        t("busybox:latest", &s("busybox", D), false),
        t(&s("busybox", D), &s("busybox", D_OTHER), false),
        t("busybox", "busybox:latest", false),
        t("busybox", &s("busybox", D), false),
        t("busybox", "busybox", false),
        t(&s("busybox:latest", D), &s("busybox:latest", D), true),
        t(
            &s("busybox:latest", D),
            &s("busybox:latest", D_OTHER),
            false,
        ),
        t(&s("busybox:latest", D), &s("busybox:notlatest", D), false),
        t(&s("busybox:latest", D), &s("busybox", D), false),
        t(&s("busybox:latest", D), "busybox:latest", false),
        t(
            "UPPERCASE_IS_INVALID_IN_DOCKER_REFERENCES",
            "busybox:latest",
            false,
        ),
        t("", "UPPERCASE_IS_INVALID_IN_DOCKER_REFERENCES", false),
        t("INVALID", "INVALID", false),
    ]
}

/// `prmRepositoryMatchTestTable`: symmetric.
fn repository_table() -> Vec<(String, String, bool)> {
    let t = |a: &str, b: &str, r: bool| (a.to_string(), b.to_string(), r);
    vec![
        t("busybox:latest", "busybox:latest", true),
        t(FULL_RHEL, FULL_RHEL, true),
        t(&s("busybox", D), &s("busybox", D), true),
        t("library/busybox:latest", "busybox:latest", true),
        t("docker.io/library/busybox:latest", "busybox:latest", true),
        t(&s("library/busybox", D), &s("busybox", D), true),
        t("busybox:latest", "busybox:notlatest", true),
        t(&s(FULL_RHEL, "tagsuffix"), FULL_RHEL, true),
        t("library/busybox:latest", "busybox:notlatest", true),
        t("busybox:latest", "library/busybox:notlatest", true),
        t(
            "docker.io/library/busybox:notlatest",
            "busybox:latest",
            true,
        ),
        t(
            "busybox:notlatest",
            "docker.io/library/busybox:latest",
            true,
        ),
        t("busybox:latest", &s("busybox", D), true),
        t(&s("busybox", D), &s("busybox", D_OTHER), true),
        t("busybox", "busybox:notlatest", true),
        t(FULL_RHEL, UNTAGGED_RHEL, true),
        t("busybox", &s("busybox", D), true),
        t("library/busybox", "busybox", true),
        t("docker.io/library/busybox", "busybox", true),
        t("busybox:latest", "notbusybox:latest", false),
        t(
            "hostname/library/busybox:latest",
            "busybox:notlatest",
            false,
        ),
        t("busybox:latest", FULL_RHEL, false),
        t(&s("busybox", D), &s("notbusybox", D), false),
        t(&s("busybox:latest", D), &s("busybox:latest", D), true),
        t(&s("busybox:latest", D), &s("busybox:latest", D_OTHER), true),
        t(&s("busybox:latest", D), &s("busybox:notlatest", D), true),
        t(&s("busybox:latest", D), &s("busybox", D), true),
        t(&s("busybox:latest", D), "busybox:latest", true),
        t(
            "UPPERCASE_IS_INVALID_IN_DOCKER_REFERENCES",
            "busybox:latest",
            false,
        ),
        t("", "UPPERCASE_IS_INVALID_IN_DOCKER_REFERENCES", false),
        t("INVALID", "INVALID", false),
    ]
}

/// `matchRepoDigestOrExactTestTable`: (image, signature), not symmetric.
fn repo_digest_or_exact_table() -> Vec<(String, String, bool)> {
    let t = |a: &str, b: &str, r: bool| (a.to_string(), b.to_string(), r);
    vec![
        t("busybox:latest", "busybox:notlatest", false),
        t(&s(FULL_RHEL, "tagsuffix"), FULL_RHEL, false),
        t("library/busybox:latest", "busybox:notlatest", false),
        t("busybox:latest", "library/busybox:notlatest", false),
        t(
            "docker.io/library/busybox:notlatest",
            "busybox:latest",
            false,
        ),
        t(
            "busybox:notlatest",
            "docker.io/library/busybox:latest",
            false,
        ),
        t("busybox", "busybox:latest", false),
        t("busybox:latest", "busybox", false),
        t("busybox", &s("busybox", D), false),
        t(&s("busybox", D), "busybox", false),
        t(FULL_RHEL, UNTAGGED_RHEL, false),
        t("busybox", "busybox", false),
        t("busybox:latest", &s("busybox", D), false),
        t(&s("busybox", D), "busybox:latest", true),
        t(&s("busybox", D), &s("busybox", D_OTHER), true),
        t(&s("busybox:latest", D), "busybox:latest", false),
        t(&s("busybox:latest", D), "busybox:notlatest", false),
        t("busybox:latest", &s("busybox:latest", D), false),
        t(
            &s("busybox:latest", D),
            &s("busybox:latest", D_OTHER),
            false,
        ),
        t(
            &s("busybox:latest", D),
            &s("busybox:notlatest", D_OTHER),
            false,
        ),
    ]
}

fn valid(r: &str) -> bool {
    Reference::parse(r).is_ok()
}

/// Runs `rule(image)` on `sig` in both directions for a symmetric table; pairs whose image side
/// does not parse are skipped, as `testPossiblyInvalidImageAndSig` skips them.
fn both_ways(rule: &dyn Fn(&str) -> IdentityRule, a: &str, b: &str, want: bool) -> usize {
    let mut n = 0;
    for (img, sig) in [(a, b), (b, a)] {
        if valid(img) {
            assert_eq!(rule(img).accepts(sig), want, "{img} vs. {sig}");
            n += 1;
        }
    }
    n
}

#[test]
fn match_exact_follows_containers_image() {
    let rule = |i: &str| IdentityRule::MatchExact(i.into());
    let n: usize = exact_table()
        .iter()
        .map(|(a, b, r)| both_ways(&rule, a, b, *r))
        .sum();
    assert!(n > 40);
    // Even signed with an empty string, an image with no identity is refused.
    assert!(!IdentityRule::MatchExact(String::new()).accepts(""));
}

#[test]
fn match_repository_follows_containers_image() {
    let rule = |i: &str| IdentityRule::MatchRepository(i.into());
    for (a, b, r) in repository_table() {
        both_ways(&rule, &a, &b, r);
    }
    assert!(!IdentityRule::MatchRepository(String::new()).accepts(""));
}

#[test]
fn match_repo_digest_or_exact_follows_containers_image() {
    let rule = |i: &str| IdentityRule::MatchRepoDigestOrExact(i.into());
    // It accepts all prmMatchExact accepts…
    for (a, b, r) in exact_table().into_iter().filter(|t| t.2) {
        both_ways(&rule, &a, &b, r);
    }
    // …and refuses all prmMatchRepository refuses.
    for (a, b, r) in repository_table().into_iter().filter(|t| !t.2) {
        both_ways(&rule, &a, &b, r);
    }
    for (img, sig, r) in repo_digest_or_exact_table() {
        assert!(valid(&img), "{img}");
        assert_eq!(rule(&img).accepts(&sig), r, "{img} vs. {sig}");
    }
}

/// The same tables with every digest a sha512 one (references may name sha512, as go-digest
/// and containers/image accept it): the same verdicts, and a sha256 and a sha512 digest are
/// never the same image.
#[test]
fn sha512_digests_are_matched_as_sha256_ones_are() {
    const D512: &str = "@sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const D512_OTHER: &str = "@sha512:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let swap = |t: &str| t.replace(D, D512).replace(D_OTHER, D512_OTHER);
    let exact = |i: &str| IdentityRule::MatchExact(i.into());
    let rde = |i: &str| IdentityRule::MatchRepoDigestOrExact(i.into());
    let mut n = 0;
    for (a, b, r) in exact_table() {
        if a.contains(D) || b.contains(D) || a.contains(D_OTHER) || b.contains(D_OTHER) {
            n += both_ways(&exact, &swap(&a), &swap(&b), r);
        }
    }
    for (img, sig, r) in repo_digest_or_exact_table() {
        assert_eq!(rde(&swap(&img)).accepts(&swap(&sig)), r, "{img} vs. {sig}");
        n += 1;
    }
    assert!(n > 10, "{n}");
    assert!(!exact(&s("busybox", D)).accepts(&s("busybox", D512)));
    assert!(!exact(&s("busybox", D512)).accepts(&s("busybox", D)));
    let reference = IdentityRule::ExactReference(s("quay.io/a/b", D512));
    assert!(reference.accepts(&s("quay.io/a/b", D512)));
    assert!(!reference.accepts(&s("quay.io/a/b", D512_OTHER)));
}

#[test]
fn exact_reference_and_repository_follow_containers_image() {
    // The configured reference need not parse: an invalid one matches nothing.
    for (a, b, r) in exact_table() {
        assert_eq!(
            IdentityRule::ExactReference(a.clone()).accepts(&b),
            r,
            "{a} vs. {b}"
        );
        assert_eq!(
            IdentityRule::ExactReference(b.clone()).accepts(&a),
            r,
            "{b} vs. {a}"
        );
    }
    for (a, b, r) in repository_table() {
        assert_eq!(
            IdentityRule::ExactRepository(a.clone()).accepts(&b),
            r,
            "{a} vs. {b}"
        );
        assert_eq!(
            IdentityRule::ExactRepository(b.clone()).accepts(&a),
            r,
            "{b} vs. {a}"
        );
    }
}

#[test]
fn remap_prefix_matching_follows_containers_image() {
    let cases: &[(&str, &str, bool)] = &[
        ("docker.io/image", "docker.io", true),
        ("docker.io/image", "example.com", false),
        ("example.com:5000/image", "example.com:5000", true),
        ("example.com:50000/image", "example.com:5000", false),
        ("example.com:5000/image", "example.com", false),
        ("example.com/foo", "example.com", true),
        ("example.com/foo/bar", "example.com", true),
        ("example.com/foo/bar:baz", "example.com", true),
        (&s("example.com/foo/bar", D), "example.com", true),
        ("docker.io/ns/image", "docker.io/library", false),
        ("example.com/library", "docker.io/library", false),
        ("docker.io/libraryy/image", "docker.io/library", false),
        ("docker.io/library/busybox", "docker.io/library", true),
        ("example.com/ns/image", "example.com/ns", true),
        ("example.com/ns2/image", "example.com/ns", false),
        ("example.com/n2/image", "example.com/ns", false),
        ("example.com", "example.com/library/busybox", false),
        ("example.com:5000/ns/image", "example.com/ns", false),
        ("example.com/ns/image", "example.com:5000/ns", false),
        (
            "docker.io/library/busybox",
            "docker.io/library/busybox",
            true,
        ),
        (
            "example.com/library/busybox",
            "docker.io/library/busybox",
            false,
        ),
        (
            "docker.io/library/busybox2",
            "docker.io/library/busybox",
            false,
        ),
        ("example.com/ns/image", "example.com/ns/image", true),
        ("example.com/ns/imag2", "example.com/ns/image", false),
        ("example.com/ns/imagee", "example.com/ns/image", false),
        ("example.com:5000/ns/image", "example.com/ns/image", false),
        ("example.com/ns/image", "example.com:5000/ns/image", false),
        ("example.com/ns/image:tag", "example.com/ns/image", true),
        (&s("example.com/ns/image", D), "example.com/ns/image", true),
        (
            &s("example.com/ns/image:tag", D),
            "example.com/ns/image",
            true,
        ),
    ];
    for (r, prefix, want) in cases {
        let name = Reference::parse(r).expect("valid").name();
        assert_eq!(matches_prefix(&name, prefix), *want, "{r} vs. {prefix}");
    }
}

#[test]
fn remap_rewrites_follow_containers_image() {
    let dd = s("vendor.example/image", D);
    let dtd = s("vendor.example/image:tag", D);
    let cases: Vec<(&str, &str, String, &str)> = vec![
        (
            "mirror.example",
            "vendor.example",
            "mirror.example/ns/image:tag".into(),
            "vendor.example/ns/image:tag",
        ),
        (
            "mirror.example",
            "vendor.example",
            "different.com/ns/image:tag".into(),
            "different.com/ns/image:tag",
        ),
        (
            "mirror.example/ns",
            "vendor.example/vendor-ns",
            "mirror.example/different-ns/image:tag".into(),
            "mirror.example/different-ns/image:tag",
        ),
        (
            "docker.io",
            "not-docker-signed.example/ns",
            "busybox".into(),
            "not-docker-signed.example/ns/library/busybox",
        ),
        (
            "example.com/mirror",
            "example.com/vendor",
            "example.com/mirror/image:tag".into(),
            "example.com/vendor/image:tag",
        ),
        (
            "example.com/ns/mirror",
            "example.com/ns/vendor",
            "example.com/ns/mirror:tag".into(),
            "example.com/ns/vendor:tag",
        ),
        (
            "mirror.example",
            "vendor.example",
            "prefixmirror.example/ns/image:tag".into(),
            "prefixmirror.example/ns/image:tag",
        ),
        (
            "docker.io",
            "not-docker-signed.example",
            "busybox".into(),
            "not-docker-signed.example/library/busybox",
        ),
        (
            "docker.io/library",
            "not-docker-signed.example/ns",
            "busybox".into(),
            "not-docker-signed.example/ns/busybox",
        ),
        (
            "docker.io/library/busybox",
            "not-docker-signed.example/ns/notbusybox",
            "busybox".into(),
            "not-docker-signed.example/ns/notbusybox",
        ),
        (
            "mirror.example",
            "vendor.example",
            "mirror.example/image".into(),
            "vendor.example/image",
        ),
        (
            "mirror.example",
            "vendor.example",
            "mirror.example/image:tag".into(),
            "vendor.example/image:tag",
        ),
        (
            "mirror.example",
            "vendor.example",
            s("mirror.example/image", D),
            &dd,
        ),
        (
            "mirror.example",
            "vendor.example",
            s("mirror.example/image:tag", D),
            &dtd,
        ),
        (
            "mirror.example/ns/image",
            "vendor.example:5000",
            "mirror.example/ns/image:tag".into(),
            "",
        ),
        (
            "mirror.example/ns/image",
            "vendor.example:5000",
            s("mirror.example/ns/image", D),
            "",
        ),
        (
            "mirror.example/ns/image",
            "notlocalhost",
            "mirror.example/ns/image:tag".into(),
            "",
        ),
    ];
    for (prefix, signed, r, want) in cases {
        assert!(
            valid_remap_prefix(prefix) && valid_remap_prefix(signed),
            "{prefix} {signed}"
        );
        let got = remap(&Reference::parse(&r).expect("valid"), prefix, signed);
        if want.is_empty() {
            assert!(got.is_err(), "{prefix} {signed} {r}: {got:?}");
        } else {
            assert_eq!(
                got.expect("rewrites").to_string(),
                want,
                "{prefix} {signed} {r}"
            );
        }
    }
}

#[test]
fn remap_identity_matches_follow_containers_image() {
    let rule = |p: &str, sp: &str, i: &str| IdentityRule::RemapIdentity {
        image: i.into(),
        prefix: p.into(),
        signed_prefix: sp.into(),
    };
    let cases = [
        (
            "does-not-match.com",
            "does-not-match.rewritten",
            "busybox:latest",
            "busybox:latest",
            true,
        ),
        (
            "does-not-match.com",
            "does-not-match.rewritten",
            "busybox:latest",
            "notbusybox:latest",
            false,
        ),
        (
            "mirror.example",
            "public.com",
            "mirror.example/busybox:1",
            "public.com/busybox:1",
            true,
        ),
        (
            "mirror.example",
            "public.com",
            "mirror.example/busybox:1",
            "public.com/busybox:not1",
            false,
        ),
        (
            "mirror.example",
            "docker.io/library",
            "mirror.example/busybox:latest",
            "busybox:latest",
            true,
        ),
        (
            "mirror.example",
            "docker.io/library",
            "mirror.example/alpine:latest",
            "busybox:latest",
            false,
        ),
        (
            "docker.io/library",
            "original.com",
            "copied:latest",
            "original.com/copied:latest",
            true,
        ),
        (
            "docker.io/library",
            "original.com",
            "copied:latest",
            "original.com/ns/copied:latest",
            false,
        ),
        (
            "busybox",
            "example.com/busybox",
            "busybox:latest",
            "example.com/busybox:latest",
            false,
        ),
        (
            "docker.io/library/busybox",
            "busybox",
            "docker.io/library/busybox:latest",
            "busybox:latest",
            false,
        ),
        (
            "UPPERCASE",
            "example.com",
            "example.com/foo:latest",
            "example.com/foo:latest",
            true,
        ),
        (
            "example.com",
            "UPPERCASE",
            "example.com/foo:latest",
            "UPPERCASE/foo:latest",
            false,
        ),
    ];
    for (p, sp, img, sig, want) in cases {
        assert_eq!(rule(p, sp, img).accepts(sig), want, "{p} {sp} {img} {sig}");
    }
    assert!(!rule("docker.io", "docker.io", "").accepts(""));
    // Otherwise it behaves as matchRepoDigestOrExact: with a prefix that never matches, and with
    // the image moved to a modified host and remapped back.
    let modified = |host: &str| {
        let mut c: Vec<char> = host.chars().collect();
        c[0] = if c[0] == 'z' {
            'a'
        } else {
            (c[0] as u8 + 1) as char
        };
        c.into_iter().collect::<String>()
    };
    let run = |img: &str, sig: &str, want: bool| {
        let Ok(r) = Reference::parse(img) else { return };
        let never = rule(
            "never-causes-a-rewrite.example",
            "never-causes-a-rewrite.example",
            img,
        );
        assert_eq!(never.accepts(sig), want, "{img} {sig}");
        let host = r.registry.clone();
        let moved = format!("{}{}", modified(&host), &r.to_string()[host.len()..]);
        assert_eq!(
            rule(&modified(&host), &host, &moved).accepts(sig),
            want,
            "{moved} {sig}"
        );
    };
    for (a, b, r) in exact_table().into_iter().filter(|t| t.2) {
        run(&a, &b, r);
        run(&b, &a, r);
    }
    for (a, b, r) in repository_table().into_iter().filter(|t| !t.2) {
        run(&a, &b, r);
        run(&b, &a, r);
    }
    for (a, b, r) in repo_digest_or_exact_table() {
        run(&a, &b, r);
    }
}

#[test]
fn remap_prefixes_are_validated_as_containers_image_does() {
    for ok in [
        "localhost",
        "example.com",
        "example.com:80",
        "example.com/repo",
        "example.com/ns1/ns2/ns3/repo.with.dots-dashes_underscores",
        "example.com:80/ns1/ns2/ns3/repo.with.dots-dashes_underscores",
        "shortname",
        "ns/shortname",
    ] {
        assert!(valid_remap_prefix(ok), "{ok}");
    }
    for bad in [
        "".to_string(),
        "repo_with_underscores".into(),
        "example.com/".into(),
        "example.com/UPPERCASEISINVALID".into(),
        "example.com/repo/".into(),
        "example.com/repo:tag".into(),
        s("example.com/repo", D),
        s("example.com/repo:tag", D),
    ] {
        assert!(!valid_remap_prefix(&bad), "{bad}");
    }
}

#[test]
fn claimed_identity_is_read_from_payloads_and_statements() {
    let d = format!("sha256:{}", "a".repeat(64));
    let p = serde_json::json!({"critical": {"identity": {"docker-reference": "quay.io/a/b:v1"}}});
    assert_eq!(claimed(&p, &d).as_deref(), Some("quay.io/a/b:v1"));
    let empty = serde_json::json!({"critical": {"identity": {"docker-reference": ""}}});
    assert_eq!(claimed(&empty, &d), None);
    let st = serde_json::json!({"subject": [
        {"name": "quay.io/other", "digest": {"sha256": "b".repeat(64)}},
        {"name": "quay.io/a/b", "digest": {"sha256": "a".repeat(64)}}]});
    assert_eq!(claimed(&st, &d).as_deref(), Some("quay.io/a/b"));
    let nameless = serde_json::json!({"subject": [{"digest": {"sha256": "a".repeat(64)}}]});
    assert_eq!(claimed(&nameless, &d), None);
}

#[test]
fn hints_say_how_to_accept_a_copy() {
    // cosign's bare repository: only a repository rule accepts it.
    let h = mismatch_hint("mirror.example:5000/ns/app:v1", "quay.io/org/app").expect("hint");
    assert!(
        h.contains("--identity quay.io/org/app") && h.contains("exactRepository"),
        "{h}"
    );
    // A simple signature's tag: remapIdentity with the prefixes that differ.
    let h = mismatch_hint("mirror.example:5000/ns/org/app:v1", "quay.io/org/app:v1").expect("hint");
    assert!(
        h.contains(r#""prefix": "mirror.example:5000/ns""#)
            && h.contains(r#""signedPrefix": "quay.io""#),
        "{h}"
    );
    assert_eq!(
        mismatch_hint("quay.io/org/app:v1", "quay.io/org/app:v2"),
        None
    );
    let n = mirror_note(
        true,
        Some(("quay.io/org/app@sha256:".to_string() + &"a".repeat(64)).as_str())
            .zip(Some("mirror.example:5000/ns/org/app:v1")),
    )
    .expect("note");
    assert!(
        n.contains("--identity quay.io/org/app@") && n.contains("\"mirror.example:5000/ns\""),
        "{n}"
    );
    assert!(
        mirror_note(false, None)
            .expect("note")
            .contains("--no-signatures")
    );
}
