//! Scope lookup and refusals that need no registry: which scope an image falls under, whatever
//! spelling of its path is given.

use super::*;

#[test]
fn docker_scopes_go_from_specific_to_general() {
    let loc = Location::parse("registry.example.com:5000/ns/sub/app:v1").unwrap();
    let (t, s) = scopes::of(&loc).unwrap();
    assert_eq!(t, "docker");
    assert_eq!(
        s,
        vec![
            "registry.example.com:5000/ns/sub/app:v1",
            "registry.example.com:5000/ns/sub/app",
            "registry.example.com:5000/ns/sub",
            "registry.example.com:5000/ns",
            "registry.example.com:5000",
            "*.example.com",
            "*.com",
        ]
    );
}

/// A layout folder `real/app` (with the files a layout has), a link `link` → `real`, and the
/// canonical path of the layout.
fn layout() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let app = d.path().join("real/app");
    std::fs::create_dir_all(app.join("blobs/sha256")).unwrap();
    std::fs::write(app.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        app.join("index.json"),
        br#"{"schemaVersion":2,"manifests":[]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(d.path().join("real/other")).unwrap();
    std::os::unix::fs::symlink(d.path().join("real"), d.path().join("link")).unwrap();
    let canon = std::fs::canonicalize(&app).unwrap();
    (d, canon)
}

#[test]
fn every_spelling_of_a_layout_path_has_the_same_scopes() {
    let (d, canon) = layout();
    let root = d.path().display().to_string();
    let spellings = [
        format!("oci:{root}/real/app:v1"),
        format!("oci:{root}/real/app/:v1"),
        format!("oci:{root}/real/other/../app:v1"),
        format!("oci:{root}/link/app:v1"),
        format!("oci:{root}/real/./app"),
    ];
    for s in &spellings {
        let loc = Location::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let (t, scopes) = scopes::of(&loc).unwrap();
        assert_eq!(t, "oci");
        assert_eq!(scopes[0], canon.display().to_string(), "{s}");
        assert_eq!(
            scopes[1],
            canon.parent().unwrap().display().to_string(),
            "{s}"
        );
        assert!(!scopes.contains(&"/".to_string()), "{s}");
    }
}

fn write_policy(dir: &Path, v: serde_json::Value) -> Policy {
    let p = dir.join("policy.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    Policy::load(&p).unwrap()
}

#[test]
fn a_layout_scope_is_not_bypassed_by_a_slash_dots_or_a_link() {
    let (d, canon) = layout();
    let root = d.path().display().to_string();
    let policy = write_policy(
        d.path(),
        serde_json::json!({
            "default": [{"type": "insecureAcceptAnything"}],
            "transports": {"oci": {canon.display().to_string(): [{"type": "reject"}]}}
        }),
    );
    for s in [
        format!("oci:{root}/real/app:v1"),
        format!("oci:{root}/real/app/:v1"),
        format!("oci:{root}/real/other/../app:v1"),
        format!("oci:{root}/link/app:v1"),
    ] {
        let loc = Location::parse(&s).unwrap();
        let got = policy.check(&loc, &RegistryOptions::default(), &RegistriesD::default());
        match got {
            Err(PolicyError::Refused(r)) => {
                assert_eq!(r.rule, "reject", "{s}");
                assert!(
                    r.scope.contains(&canon.display().to_string()),
                    "{s}: {}",
                    r.scope
                );
            }
            other => panic!("{s}: {other:?}"),
        }
    }
}

#[test]
fn an_oci_archive_scope_applies_to_its_resolved_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("real")).unwrap();
    let tar = d.path().join("real/app.tar");
    std::fs::write(&tar, b"").unwrap();
    std::os::unix::fs::symlink(d.path().join("real"), d.path().join("link")).unwrap();
    let canon = std::fs::canonicalize(&tar).unwrap();
    let policy = write_policy(
        d.path(),
        serde_json::json!({
            "default": [{"type": "insecureAcceptAnything"}],
            "transports": {"oci-archive": {canon.parent().unwrap().display().to_string(): [{"type": "reject"}]}}
        }),
    );
    let loc = Location::parse(&format!("oci-archive:{}/link/app.tar", d.path().display())).unwrap();
    let got = policy.check(&loc, &RegistryOptions::default(), &RegistriesD::default());
    assert!(
        matches!(got, Err(PolicyError::Refused(ref r)) if r.rule == "reject"),
        "{got:?}"
    );
}

#[test]
fn unsupported_requirements_refuse_by_name() {
    let d = tempfile::tempdir().unwrap();
    for (req, rule, word) in [
        (
            serde_json::json!({"type": "signedBaseLayer", "baseLayerIdentity": {"type": "matchRepository"}}),
            "signedBaseLayer",
            "not supported",
        ),
        (
            serde_json::json!({"type": "signedBy", "keyType": "X509Certificates", "keyPath": "/k"}),
            "signedBy",
            "X509Certificates",
        ),
    ] {
        let policy = write_policy(d.path(), serde_json::json!({"default": [req]}));
        let loc = Location::parse("127.0.0.1:1/x/y:v1").unwrap();
        match policy.check(&loc, &RegistryOptions::default(), &RegistriesD::default()) {
            Err(PolicyError::Refused(r)) => {
                assert_eq!(r.rule, rule);
                assert!(r.reason.contains(word), "{}", r.reason);
            }
            other => panic!("{rule}: {other:?}"),
        }
    }
}

#[test]
fn image_relative_rules_need_a_registry_reference() {
    let (_d, canon) = layout();
    let loc = Location::parse(&format!("oci:{}:v1", canon.display())).unwrap();
    for spec in [
        IdentitySpec::MatchRepoDigestOrExact,
        IdentitySpec::MatchExact,
        IdentitySpec::MatchRepository,
        IdentitySpec::RemapIdentity("a.example".into(), "b.example".into()),
    ] {
        let e = bind(&spec, &loc).expect_err(spec.name());
        assert!(e.contains("exactReference"), "{e}");
    }
    assert_eq!(
        bind(&IdentitySpec::ExactRepository("quay.io/a/b".into()), &loc).unwrap(),
        IdentityRule::ExactRepository("quay.io/a/b".into())
    );
    let reg = Location::parse("quay.io/a/b").unwrap();
    assert_eq!(
        bind(&IdentitySpec::MatchRepoDigestOrExact, &reg).unwrap(),
        IdentityRule::MatchRepoDigestOrExact("quay.io/a/b:latest".into())
    );
}
