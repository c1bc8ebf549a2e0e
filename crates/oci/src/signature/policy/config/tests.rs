//! containers/image's `policy_config_test.go` and `policy_config_sigstore_test.go`, ported: the
//! fixture policy parses, and every way those tests break a valid object (a missing, wrong,
//! unknown or repeated member, a wrong type, a `null`) refuses the whole file.

use super::*;
use serde_json::{Value, json};

fn parses(v: &Value) -> Result<PolicyFile, String> {
    parse(&serde_json::to_vec(v).expect("json"))
}

/// The policy with `req` as its only default requirement.
fn with_default(req: Value) -> Value {
    json!({"default": [req]})
}

/// `addExtraJSONMember`: the same member once more, at the end of the object's text.
fn duplicated(v: &Value, name: &str) -> String {
    let text = serde_json::to_string(v).expect("json");
    let body = text.strip_suffix('}').expect("object");
    format!("{body},{:?}:{}}}", name, v[name])
}

/// Runs each breaking edit on `valid` (a requirement) and checks that the file is refused;
/// then checks each member listed cannot be repeated.
fn requirement_cases(valid: Value, breaks: &[&dyn Fn(&mut Value)], dups: &[&str]) -> usize {
    assert!(parses(&with_default(valid.clone())).is_ok(), "{valid}");
    let mut n = 0;
    for (i, f) in breaks.iter().enumerate() {
        let mut v = valid.clone();
        f(&mut v);
        let got = parses(&with_default(v.clone()));
        assert!(got.is_err(), "break {i} of {valid}: {v} was accepted");
        n += 1;
    }
    for d in dups {
        let text = format!("{{\"default\": [{}]}}", duplicated(&valid, d));
        assert!(parse(text.as_bytes()).is_err(), "duplicate {d}: {text}");
        n += 1;
    }
    n
}

fn set(k: &'static str, v: Value) -> impl Fn(&mut Value) {
    move |o: &mut Value| {
        o[k] = v.clone();
    }
}

fn del(k: &'static str) -> impl Fn(&mut Value) {
    move |o: &mut Value| {
        o.as_object_mut().expect("object").remove(k);
    }
}

fn both(a: impl Fn(&mut Value), b: impl Fn(&mut Value)) -> impl Fn(&mut Value) {
    move |o: &mut Value| {
        a(o);
        b(o);
    }
}

#[test]
fn containers_image_fixture_parses() {
    let bytes = include_bytes!("../testdata/containers-image-policy.json");
    let p = parse(bytes).expect("the fixture is valid");
    assert_eq!(p.default.0, vec![Requirement::Reject]);
    let docker = &p
        .transports
        .0
        .iter()
        .find(|(t, _)| t == "docker")
        .expect("docker")
        .1;
    assert_eq!(docker.0.len(), 14);
    let scope = |s: &str| &docker.0.iter().find(|(k, _)| k == s).expect(s).1.0;
    assert_eq!(
        scope("private-mirror:5000/vendor-mirror")[0],
        Requirement::SignedBy {
            key_type: "GPGKeys".into(),
            keys: Keys::Paths(vec!["/keys/vendor-gpg-keyring".into()]),
            identity: IdentitySpec::RemapIdentity(
                "private-mirror:5000/vendor-mirror".into(),
                "vendor.example.com".into()
            ),
        }
    );
    assert_eq!(
        scope("bogus/key-data-example")[0],
        Requirement::SignedBy {
            key_type: "signedByGPGKeys".into(),
            keys: Keys::Data(vec![b"nonsense".to_vec()]),
            identity: IdentitySpec::MatchRepoDigestOrExact,
        }
    );
    assert_eq!(
        scope("example.com/hardened")[2],
        Requirement::SignedBaseLayer
    );
    assert_eq!(
        scope("example.com/sigstore/key-path-example")[0],
        Requirement::Sigstore {
            keys: Keys::Paths(vec!["/keys/public-key".into()]),
            identity: IdentitySpec::MatchRepository,
        }
    );
    // NewPolicyFromBytes("") fails.
    assert!(parse(b"").is_err());
}

#[test]
fn policy_objects_are_parsed_paranoidly() {
    let valid = json!({
        "default": [{"type": "signedBy", "keyType": "GPGKeys", "keyData": "YWJj"}],
        "transports": {
            "docker": {"docker.io/library/busybox": [{"type": "signedBy", "keyType": "GPGKeys", "keyData": "ZGVm"}]},
            "atomic": {"registry.access.redhat.com/rhel7": [{"type": "signedBy", "keyType": "signedByGPGKeys", "keyData": "UkhhdG9taWM=", "signedIdentity": {"type": "matchRepository"}}]},
            "unknown": {"registry.access.redhat.com/rhel7": [{"type": "insecureAcceptAnything"}]}
        }
    });
    assert!(parses(&valid).is_ok());
    let breaks: &[&dyn Fn(&mut Value)] = &[
        &del("default"),
        &set("unexpected", json!(1)),
        &set("default", json!(1)),
        &set("default", json!({})),
        &set("default", json!(null)),
        &set("default", json!([])),
        &set("transports", json!(1)),
        &set("transports", json!([])),
        &set("transports", json!(null)),
    ];
    for (i, f) in breaks.iter().enumerate() {
        let mut v = valid.clone();
        f(&mut v);
        assert!(parses(&v).is_err(), "break {i}: {v}");
    }
    for d in ["default", "transports"] {
        assert!(parse(duplicated(&valid, d).as_bytes()).is_err(), "{d}");
    }
    let allowed: [&dyn Fn(&mut Value); 2] = [&del("transports"), &set("transports", json!({}))];
    for ok in allowed {
        let mut v = valid.clone();
        ok(&mut v);
        assert!(parses(&v).is_ok(), "{v}");
    }
}

#[test]
fn transport_scopes_are_parsed_paranoidly() {
    let req = json!([{"type": "insecureAcceptAnything"}]);
    let valid =
        json!({"docker.io/library/busybox": req, "registry.access.redhat.com": req, "": req});
    let wrap =
        |scopes: Value| json!({"default": [{"type": "reject"}], "transports": {"docker": scopes}});
    assert!(parses(&wrap(valid.clone())).is_ok());
    for (k, bad) in [
        ("docker.io/library/busybox", json!(1)),
        ("docker.io/library/busybox", json!({})),
        ("", json!(1)),
        ("", json!({})),
        ("docker.io/library/busybox", json!([])),
        ("", json!([])),
        ("", json!(null)),
    ] {
        let mut v = valid.clone();
        v[k] = bad.clone();
        assert!(parses(&wrap(v)).is_err(), "{k:?}: {bad}");
    }
    for k in ["docker.io/library/busybox", ""] {
        let text = format!(
            "{{\"default\": [{{\"type\": \"reject\"}}], \"transports\": {{\"docker\": {}}}}}",
            duplicated(&valid, k)
        );
        assert!(parse(text.as_bytes()).is_err(), "duplicate scope {k:?}");
    }
    // Docker scopes are relative paths to the dir and oci transports.
    for t in ["dir", "oci", "oci-archive"] {
        let v = json!({"default": [{"type": "reject"}], "transports": {t: valid.clone()}});
        assert!(parses(&v).is_err(), "{t}");
    }
    assert!(parses(&wrap(json!({"docker.io/library/busybox": req}))).is_ok());
    assert!(parses(&wrap(json!({}))).is_ok());
}

#[test]
fn local_scopes_are_checked_as_their_transports_check_them() {
    let req = json!([{"type": "insecureAcceptAnything"}]);
    let one = |t: &str, scope: &str| {
        parses(&json!({"default": [{"type": "reject"}], "transports": {t: {scope: req.clone()}}}))
    };
    for t in ["oci", "oci-archive", "dir"] {
        assert!(one(t, "/var/lib/layouts/app").is_ok(), "{t}");
        assert!(one(t, "").is_ok(), "{t}");
        for bad in [
            "relative/app",
            "/",
            "/var/lib/layouts/app/",
            "/var/lib/../app",
            "/var//app",
            "/var/./app",
        ] {
            let e = one(t, bad).expect_err(bad);
            assert!(e.contains(bad), "{e}");
        }
    }
    assert!(one("docker-archive", "").is_ok());
    let e = one("docker-archive", "/tmp/app.tar").expect_err("docker-archive scope");
    assert!(e.contains("docker-archive supports no scope"), "{e}");
}

#[test]
fn requirement_lists_are_parsed_paranoidly() {
    for bad in [
        json!([]),
        json!([1]),
        json!([{"type": "this is invalid"}]),
        json!([{"type": "signedBy", "keyType": "this is invalid", "keyData": "YWJj"}]),
        json!([{}]),
        json!([{"type": 1}]),
        json!(null),
    ] {
        assert!(parses(&json!({"default": bad})).is_err(), "{bad}");
    }
}

#[test]
fn accept_and_reject_take_no_member() {
    for t in ["insecureAcceptAnything", "reject"] {
        let n = requirement_cases(
            json!({"type": t}),
            &[
                &del("type"),
                &set("type", json!(1)),
                &set("type", json!("this is invalid")),
                &set("unexpected", json!(1)),
            ],
            &["type"],
        );
        assert_eq!(n, 5);
    }
}

#[test]
fn signed_by_is_parsed_paranoidly() {
    let valid = json!({"type": "signedBy", "keyType": "GPGKeys", "keyData": "YWJj",
        "signedIdentity": {"type": "matchRepoDigestOrExact"}});
    requirement_cases(
        valid.clone(),
        &[
            &del("type"),
            &set("type", json!(1)),
            &set("type", json!("this is invalid")),
            &set("unexpected", json!(1)),
            &del("keyType"),
            &set("keyType", json!("this is invalid")),
            &del("keyData"),
            &both(
                set("keyPath", json!("/foo/bar")),
                set("keyPaths", json!(["/1", "/2"])),
            ),
            &both(
                both(
                    set("keyPath", json!("/foo/bar")),
                    set("keyPaths", json!(["/1", "/2"])),
                ),
                del("keyData"),
            ),
            &set("keyPath", json!("/foo/bar")),
            &set("keyPaths", json!(["/1", "/2"])),
            &both(del("keyData"), set("keyPath", json!(1))),
            &both(del("keyData"), set("keyPaths", json!(1))),
            &both(del("keyData"), set("keyPaths", json!([1]))),
            &set("keyData", json!(1)),
            &set("keyData", json!("this is invalid base64")),
            &set("signedIdentity", json!("this is invalid")),
            &set("signedIdentity", json!(null)),
            // The lenient spellings issue 39 found accepted.
            &both(
                del("signedIdentity"),
                set("signedIdentiy", json!({"type": "matchRepository"})),
            ),
            &both(del("keyData"), set("keyPath", json!(null))),
            &both(del("keyData"), set("keyPath", json!(""))),
        ],
        &["type", "keyType", "keyData", "signedIdentity"],
    );
    let by_path = json!({"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/foo/bar"});
    requirement_cases(by_path, &[], &["type", "keyType", "keyPath"]);
    let by_paths = json!({"type": "signedBy", "keyType": "GPGKeys", "keyPaths": ["/1", "/2"]});
    requirement_cases(by_paths, &[], &["type", "keyType", "keyPaths"]);
    // signedIdentity may be left out: matchRepoDigestOrExact.
    let p = parses(&with_default(
        json!({"type": "signedBy", "keyType": "GPGKeys", "keyData": "YWJj"}),
    ))
    .expect("valid");
    assert!(matches!(
        &p.default.0[0],
        Requirement::SignedBy {
            identity: IdentitySpec::MatchRepoDigestOrExact,
            ..
        }
    ));
    for kt in KEY_TYPES {
        assert!(
            parses(&with_default(
                json!({"type": "signedBy", "keyType": kt, "keyData": "YWJj"})
            ))
            .is_ok()
        );
    }
    for kt in ["", "this is invalid"] {
        assert!(
            parses(&with_default(
                json!({"type": "signedBy", "keyType": kt, "keyData": "YWJj"})
            ))
            .is_err()
        );
    }
}

#[test]
fn signed_base_layer_is_parsed_paranoidly() {
    let valid = json!({"type": "signedBaseLayer", "baseLayerIdentity":
        {"type": "exactReference", "dockerReference": "registry.access.redhat.com/rhel7/rhel:7.2.3"}});
    requirement_cases(
        valid,
        &[
            &del("type"),
            &set("type", json!(1)),
            &set("type", json!("this is invalid")),
            &set("unexpected", json!(1)),
            &del("baseLayerIdentity"),
            &set("baseLayerIdentity", json!("this is invalid")),
            &set("baseLayerIdentity", json!(null)),
        ],
        &["type", "baseLayerIdentity"],
    );
}

/// Identity rules, each inside a valid signedBy.
fn identity(v: Value) -> Result<PolicyFile, String> {
    parses(&with_default(
        json!({"type": "signedBy", "keyType": "GPGKeys", "keyData": "YWJj", "signedIdentity": v}),
    ))
}

#[test]
fn identity_rules_are_parsed_paranoidly() {
    for t in ["matchExact", "matchRepoDigestOrExact", "matchRepository"] {
        assert!(identity(json!({"type": t})).is_ok(), "{t}");
        assert!(
            identity(json!({"type": t, "unknown": "foo"})).is_err(),
            "{t}"
        );
        let dup = format!(
            "{{\"default\": [{{\"type\": \"signedBy\", \"keyType\": \"GPGKeys\", \"keyData\": \"YWJj\", \"signedIdentity\": {{\"type\": \"{t}\", \"type\": \"{t}\"}}}}]}}"
        );
        assert!(parse(dup.as_bytes()).is_err(), "{dup}");
    }
    for bad in [
        json!({}),
        json!({"type": 1}),
        json!({"type": "this is invalid"}),
        json!(1),
    ] {
        assert!(identity(bad.clone()).is_err(), "{bad}");
    }
    // exactReference
    assert!(
        identity(json!({"type": "exactReference", "dockerReference": "library/busybox:latest"}))
            .is_ok()
    );
    for bad in [
        json!({"type": "exactReference"}),
        json!({"type": "exactReference", "dockerReference": 1}),
        json!({"type": "exactReference", "dockerReference": "library/busybox"}),
        json!({"type": "exactReference", "dockerReference": "UPPERCASEISINVALID:latest"}),
        json!({"type": "exactReference", "dockerReference": "library/busybox:latest", "unexpected": 1}),
    ] {
        assert!(identity(bad.clone()).is_err(), "{bad}");
    }
    // exactRepository
    assert!(
        identity(json!({"type": "exactRepository", "dockerRepository": "library/busybox:latest"}))
            .is_ok()
    );
    assert!(
        identity(json!({"type": "exactRepository", "dockerRepository": "library/busybox"})).is_ok()
    );
    for bad in [
        json!({"type": "exactRepository"}),
        json!({"type": "exactRepository", "dockerRepository": 1}),
        json!({"type": "exactRepository", "dockerRepository": "UPPERCASEISINVALID"}),
        json!({"type": "exactRepository", "dockerRepository": "library/busybox", "unexpected": 1}),
    ] {
        assert!(identity(bad.clone()).is_err(), "{bad}");
    }
    // remapIdentity
    let remap = json!({"type": "remapIdentity", "prefix": "example.com/docker-library", "signedPrefix": "docker.io/library"});
    assert!(identity(remap.clone()).is_ok());
    for f in [
        &del("type") as &dyn Fn(&mut Value),
        &set("type", json!(1)),
        &set("type", json!("this is invalid")),
        &set("unexpected", json!(1)),
        &del("prefix"),
        &set("prefix", json!(1)),
        &set("prefix", json!("this is invalid")),
        &del("signedPrefix"),
        &set("signedPrefix", json!(1)),
        &set("signedPrefix", json!("this is invalid")),
        &set("prefix", json!("example.com/UPPERCASEISINVALID")),
    ] {
        let mut v = remap.clone();
        f(&mut v);
        assert!(identity(v.clone()).is_err(), "{v}");
    }
}

#[test]
fn sigstore_signed_is_parsed_paranoidly() {
    let valid = json!({"type": "sigstoreSigned", "keyData": "YWJj", "signedIdentity": {"type": "matchRepoDigestOrExact"}});
    let fulcio = json!({"caPath": "/ca", "oidcIssuer": "https://example.com", "subjectEmail": "a@example.com"});
    let pki = json!({"caRootsPath": "/roots", "subjectEmail": "a@example.com"});
    requirement_cases(
        valid,
        &[
            &del("type"),
            &set("type", json!(1)),
            &set("type", json!("this is invalid")),
            &set("unexpected", json!(1)),
            &del("keyData"),
            &set("keyPath", json!("/foo/bar")),
            &set("keyPaths", json!(["/foo/bar", "/foo/baz"])),
            &set("keyDatas", json!(["YWJj", "ZGVm"])),
            &set("fulcio", fulcio.clone()),
            &set("pki", pki.clone()),
            &both(del("keyData"), set("keyPath", json!(1))),
            &both(del("keyData"), set("keyPaths", json!(1))),
            &both(del("keyData"), set("keyPaths", json!({}))),
            &both(del("keyData"), set("keyPaths", json!([]))),
            &set("keyData", json!(1)),
            &set("keyData", json!("this is invalid base64")),
            &both(del("keyData"), set("keyDatas", json!(1))),
            &both(del("keyData"), set("keyDatas", json!({}))),
            &both(del("keyData"), set("keyDatas", json!([]))),
            &both(del("keyData"), set("fulcio", json!(1))),
            &both(del("keyData"), set("fulcio", json!({}))),
            &both(del("keyData"), set("fulcio", json!(null))),
            &both(del("keyData"), set("pki", json!(1))),
            &both(del("keyData"), set("pki", json!({}))),
            &both(del("keyData"), set("pki", json!(null))),
            &both(
                set("rekorPublicKeyPath", json!("/foo/baz")),
                set("rekorPublicKeyData", json!("YWJj")),
            ),
            &set("rekorPublicKeyPath", json!(1)),
            &both(
                set("rekorPublicKeyPath", json!("/foo/baz")),
                set("rekorPublicKeyPaths", json!(["/baz"])),
            ),
            &set("rekorPublicKeyPaths", json!(1)),
            &set("rekorPublicKeyPaths", json!({})),
            &set("rekorPublicKeyPaths", json!([])),
            &set("rekorPublicKeyData", json!(1)),
            &set("rekorPublicKeyData", json!("this is invalid base64")),
            &both(
                set("rekorPublicKeyData", json!("YWJj")),
                set("rekorPublicKeyDatas", json!(["YWJj"])),
            ),
            &set("rekorPublicKeyDatas", json!(1)),
            &set("rekorPublicKeyDatas", json!({})),
            &set("rekorPublicKeyDatas", json!([])),
            &set("signedIdentity", json!("this is invalid")),
            &set("signedIdentity", json!(null)),
            // fulcio without Rekor, pki with Rekor
            &both(del("keyData"), set("fulcio", fulcio.clone())),
            &both(
                both(del("keyData"), set("pki", pki.clone())),
                set("rekorPublicKeyPath", json!("/r")),
            ),
        ],
        &["type", "keyData", "signedIdentity"],
    );
}

/// Fulcio, PKI and Rekor (each form of Rekor key) are valid per containers/image and load,
/// whether the requirement is the default or a scope's (issue 47 item 3; they were refused by
/// name before olmpack could check them, issue 39 item 7).
#[test]
fn fulcio_pki_and_rekor_load_as_containers_image_reads_them() {
    let fulcio = json!({"caData": "YWJj", "oidcIssuer": "https://x", "subjectEmail": "a@b"});
    let cases = [
        json!({"type": "sigstoreSigned", "keyPath": "/k.pub", "rekorPublicKeyPath": "/rekor.pub"}),
        json!({"type": "sigstoreSigned", "keyPath": "/k.pub", "rekorPublicKeyPaths": ["/r1", "/r2"]}),
        json!({"type": "sigstoreSigned", "keyData": "YWJj", "rekorPublicKeyData": "YWJj"}),
        json!({"type": "sigstoreSigned", "keyDatas": ["YWJj"], "rekorPublicKeyDatas": ["YWJj"]}),
        json!({"type": "sigstoreSigned", "fulcio": fulcio, "rekorPublicKeyData": "YWJj"}),
        json!({"type": "sigstoreSigned", "pki": {"caRootsData": "YWJj", "subjectHostname": "x"}}),
        json!({"type": "sigstoreSigned", "pki": {"caRootsPath": "/r.pem", "caIntermediatesData": "YWJj", "subjectEmail": "a@b", "subjectHostname": ""}}),
    ];
    for req in cases {
        for policy in [
            with_default(req.clone()),
            json!({"default": [{"type": "reject"}], "transports": {"docker": {"quay.io/x": [{"type": "insecureAcceptAnything"}, req.clone()]}}}),
        ] {
            let p = parses(&policy).unwrap_or_else(|e| panic!("{policy}: {e}"));
            let reqs = p
                .transports
                .0
                .first()
                .map(|(_, s)| s.0[0].1.0.clone())
                .unwrap_or(p.default.0.clone());
            assert!(
                reqs.iter()
                    .any(|r| matches!(r, Requirement::SigstoreTrust(_))),
                "{policy}"
            );
        }
    }
    // A broken Fulcio block is refused for what is wrong with it.
    let e = parses(&with_default(json!({"type": "sigstoreSigned", "fulcio": {"caData": "YWJj", "oidcIssuer": "https://x"}, "rekorPublicKeyData": "YWJj"}))).unwrap_err();
    assert!(e.contains("subjectEmail"), "{e}");
    // An empty path is no path (Go's omitempty strings), and an empty subject is no subject.
    let e = parses(&with_default(json!({"type": "sigstoreSigned", "fulcio": {"caPath": "", "oidcIssuer": "https://x", "subjectEmail": "a@b"}, "rekorPublicKeyData": "YWJj"}))).unwrap_err();
    assert!(e.contains("caPath"), "{e}");
    let e = parses(&with_default(
        json!({"type": "sigstoreSigned", "pki": {"caRootsData": "YWJj", "subjectEmail": ""}}),
    ))
    .unwrap_err();
    assert!(e.contains("subjectEmail or subjectHostname"), "{e}");
    let p = parses(&with_default(
        json!({"type": "sigstoreSigned", "keyDatas": ["YWJj", "ZGVm"]}),
    ))
    .expect("valid");
    assert!(
        matches!(&p.default.0[0], Requirement::Sigstore { keys: Keys::Data(d), .. } if d.len() == 2)
    );
}

#[test]
fn the_lenient_readings_of_issue_39_are_refused_with_where_and_why() {
    let gpg = json!({"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k.gpg"});
    let cases: Vec<(String, &str)> = vec![
        (json!({"default": [{"type": "reject"}], "transports": {"docker": {"quay.io/x": {"type": "reject"}}}}).to_string(), "transports.docker.quay.io/x"),
        (json!({"default": [{"type": "reject"}], "transport": {"docker": {}}}).to_string(), "unknown field `transport`"),
        (json!({"default": [{"type": "reject"}], "transports": [{"docker": {}}]}).to_string(), "transports"),
        (r#"{"default": [{"type": "reject"}], "transports": {"docker": {"quay.io/x": [{"type": "reject"}], "quay.io/x": [{"type": "insecureAcceptAnything"}]}}}"#.into(), "duplicate key \"quay.io/x\""),
        (r#"{"default": [{"type": "reject"}], "default": [{"type": "insecureAcceptAnything"}]}"#.into(), "duplicate field `default`"),
        (json!({"default": [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k", "signedIdentiy": {"type": "matchRepository"}}]}).to_string(), "signedIdentiy"),
        (json!({"default": [{"type": "signedBy", "keyPath": "/k"}]}).to_string(), "keyType"),
        (json!({"default": [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k", "keyData": "YWJj"}]}).to_string(), "more than one"),
        (json!({"default": [{"type": "sigstoreSigned", "keyPath": "/k", "fulcio": {"caPath": "/c", "oidcIssuer": "https://i", "subjectEmail": "a@b"}, "rekorPublicKeyPath": "/r"}]}).to_string(), "keyPath and fulcio"),
        (json!({"default": [{"type": "reject"}], "transports": {"docker": {"quay.io/x": null}}}).to_string(), "transports.docker.quay.io/x"),
        (json!({"default": [gpg.clone()], "transports": {"docker": {"quay.io/x": [{"type": "signedByy"}]}}}).to_string(), "signedByy"),
    ];
    for (text, want) in cases {
        let e = parse(text.as_bytes()).expect_err(&text);
        assert!(e.contains(want), "{text}\n  gave: {e}\n  want: {want}");
    }
}

#[test]
fn clean_path_is_gos_filepath_clean() {
    for (p, want) in [
        ("/a/b", "/a/b"),
        ("/a/b/", "/a/b"),
        ("/a//b", "/a/b"),
        ("/a/./b", "/a/b"),
        ("/a/../b", "/b"),
        ("/..", "/"),
        ("/", "/"),
    ] {
        assert_eq!(clean_path(p), want, "{p}");
    }
}
